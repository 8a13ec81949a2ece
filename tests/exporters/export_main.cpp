// The exporters as a program, for the tests in tests/exporters.cmake (the CLI's
// `export` command is wired separately): detects from a captured machine tree and prints
// or writes the Prometheus exposition or the NFD feature file.
//
//   export_main prometheus|nfd [--root DIR] [--output FILE] [--prefix P] [--expiry-seconds N]
//   export_main nfd-names [--prefix P]      every label name `nfd` can write
//
// Exit codes: 0 done, 1 the output file could not be written, 2 bad usage.
#include "ai_hwaccel/detect/detect.hpp"
#include "ai_hwaccel/io/nfd.hpp"
#include "ai_hwaccel/io/prometheus.hpp"

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

namespace ah = ai_hwaccel;

namespace {
int usage(const char* why) {
    std::fprintf(stderr,
                 "export_main: %s\nusage: export_main prometheus|nfd|nfd-names [--root DIR] [--output FILE] "
                 "[--prefix P] [--expiry-seconds N]\n",
                 why);
    return 2;
}
} // namespace

int main(int argc, char** argv) {
    if (argc < 2) return usage("which format?");
    const std::string_view format = argv[1];
    if (format != "prometheus" && format != "nfd" && format != "nfd-names") return usage("unknown format");
    std::string root, output;
    ah::nfd_options nfd;
    for (int i = 2; i < argc; ++i) {
        const std::string_view a = argv[i];
        if (i + 1 >= argc) return usage("an option needs a value");
        const char* v = argv[++i];
        if (a == "--root") root = v;
        else if (a == "--output") output = v;
        else if (a == "--prefix") nfd.prefix = v;
        else if (a == "--expiry-seconds") {
            char* end = nullptr;
            const long long n = std::strtoll(v, &end, 10);
            if (end == v || *end != '\0' || n <= 0) return usage("--expiry-seconds takes a positive number");
            nfd.expiry_time = std::chrono::floor<std::chrono::seconds>(std::chrono::system_clock::now()) +
                              std::chrono::seconds(n);
        } else
            return usage("unknown option");
    }
    std::string text;
    if (format == "nfd-names") {
        for (const auto& n : ah::nfd_label_names(nfd)) text += n + "\n";
    } else {
        const auto reg = ah::detect(ah::host_system(root));
        text = format == "prometheus" ? ah::to_prometheus(reg) : ah::to_nfd_features(reg, nfd);
    }
    if (output.empty()) {
        std::fwrite(text.data(), 1, text.size(), stdout);
        return 0;
    }
    if (const auto r = ah::write_file_atomically(output, text); !r) {
        std::fprintf(stderr, "export_main: %s\n", r.message.c_str());
        return 1;
    }
    return 0;
}
