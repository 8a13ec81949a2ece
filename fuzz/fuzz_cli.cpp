// Fuzz target: the command-line tool's argument handling (tools/cli/main.cpp), compiled
// into this target with its `main` renamed `cli_main`.
//
// Input: the arguments, separated by NUL bytes (at most 24 of them; argv[0] is
// "ai-hwaccel"). The tool may print and may refuse; it must not crash, leak, or trip a
// sanitizer. Its standard output goes to /dev/null and its standard input is /dev/null
// (so `parse -` never waits); run with -close_fd_mask=2 to hide its messages as well.
// Commands that detect look at this machine (or at a --root the input names): read only.
// Inputs naming gather, watch or --output are rejected (they write files or loop), and so
// are those that ask to measure the memory bandwidth (a buffer of up to 2 GiB and every
// CPU for a second, each time: past the fuzzer's memory limit, and no parsing to test).
#define main cli_main
#include "../tools/cli/main.cpp"
#undef main

#include "fuzz_common.hpp"

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

extern "C" int LLVMFuzzerInitialize(int*, char***) {
    if (!std::freopen("/dev/null", "w", stdout)) return 0;
    if (!std::freopen("/dev/null", "r", stdin)) return 0;
    return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    constexpr std::size_t max_args = 24;
    std::vector<std::string> args{"ai-hwaccel"};
    std::string_view rest = fuzz::as_text(data, size);
    while (!rest.empty() && args.size() <= max_args) {
        const auto [arg, tail] = fuzz::split_nul(rest);
        args.emplace_back(arg);
        if (tail.data() == nullptr || arg.size() == rest.size()) break;
        rest = tail;
    }
    // Commands that write (gather, export --output) or never end (watch) are left out:
    // the fuzzer must not litter the file system or hang on a valid command line. The
    // bandwidth measurement is left out for its memory and time.
    for (const auto& a : args)
        if (a == "gather" || a == "watch" || a.starts_with("--output") || a.starts_with("--measure")) return -1;
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    fuzz::consume(cli_main(static_cast<int>(args.size()), argv.data()));
    std::fflush(stdout);
    return 0;
}
