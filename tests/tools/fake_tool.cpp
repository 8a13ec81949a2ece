// A misbehaving "vendor tool" for the runner's fault tests. The first argument chooses
// the misbehaviour; tests copy or link this program under vendor tool names.
//
// Standing in for a real tool (nvidia-smi, hl-smi, …), whose arguments the probe chooses,
// it takes its misbehaviour from AI_HWACCEL_FAKE_TOOL_MODE instead, when that is set: a
// mode, then optionally one space and its argument ("signal 9", "cat /tmp/x/out"); its
// own arguments are then ignored. The runner passes the caller's environment on.
//
//   exit N [TEXT]        print TEXT (or "ok") and exit with status N
//   args ARG...          print each argument on its own line, untouched
//   env                  print LC_ALL, LANG and PATH as the tool sees them
//   sleep-forever        print the pid, then sleep and ignore SIGTERM/SIGINT/SIGHUP
//   spew BYTES           write BYTES bytes of 'x' to stdout, then exit 0
//   spew-forever         write to stdout until killed
//   stderr-first BYTES   write BYTES to stderr, then "done" to stdout (pipes drained together?)
//   signal N             print the pid, then kill itself with signal N
//   grandchild           fork a child that prints its pid and sleeps holding the pipes; exit 0
//   close-and-linger     close stdout and stderr, then sleep forever
//   touch PATH           create PATH (proves the tool ran)
//   empty                exit 0 having printed nothing
//   cat PATH             copy PATH's bytes to stdout untouched (any bytes: NULs, invalid
//                        UTF-8), then exit 0
//   garbage BYTES        write BYTES bytes of a fixed pseudo-random sequence, then exit 0
//   fds                  print each open descriptor above 2 (what the tool inherited), one a line
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstdint>
#include <cstring>
#include <fcntl.h>
#include <string>
#include <vector>
#include <sys/resource.h>
#include <unistd.h>

namespace {
void sleep_forever() {
    std::signal(SIGTERM, SIG_IGN);
    std::signal(SIGINT, SIG_IGN);
    std::signal(SIGHUP, SIG_IGN);
    for (;;) ::pause();
}
void write_all(int fd, const char* data, std::size_t n) {
    while (n > 0) {
        const ::ssize_t w = ::write(fd, data, n);
        if (w <= 0) std::_Exit(3);
        data += w;
        n -= static_cast<std::size_t>(w);
    }
}
void write_bytes(int fd, unsigned long long n) {
    static char block[65536];
    std::memset(block, 'x', sizeof block);
    while (n > 0) {
        const std::size_t k = n < sizeof block ? static_cast<std::size_t>(n) : sizeof block;
        write_all(fd, block, k);
        n -= k;
    }
}
void copy_file_out(const char* path) {
    const int fd = ::open(path, O_RDONLY);
    if (fd < 0) std::_Exit(4);
    char buf[65536];
    for (;;) {
        const ::ssize_t n = ::read(fd, buf, sizeof buf);
        if (n < 0) std::_Exit(4);
        if (n == 0) break;
        write_all(1, buf, static_cast<std::size_t>(n));
    }
    ::close(fd);
}
void write_garbage(unsigned long long n) {
    std::uint32_t x = 2463534242u; // xorshift32: the same bytes every run
    char block[4096];
    while (n > 0) {
        const std::size_t k = n < sizeof block ? static_cast<std::size_t>(n) : sizeof block;
        for (std::size_t i = 0; i < k; ++i) {
            x ^= x << 13;
            x ^= x >> 17;
            x ^= x << 5;
            block[i] = static_cast<char>(x & 0xff);
        }
        write_all(1, block, k);
        n -= k;
    }
}
} // namespace

int main(int argc, char** argv) {
    // The mode from the environment replaces the arguments (see the top of this file).
    std::vector<std::string> from_env;
    std::vector<char*> env_argv;
    if (const char* m = std::getenv("AI_HWACCEL_FAKE_TOOL_MODE"); m && *m) {
        const std::string spec = m;
        const auto space = spec.find(' ');
        from_env.push_back(argc > 0 ? argv[0] : "fake-tool");
        from_env.push_back(spec.substr(0, space));
        if (space != std::string::npos) from_env.push_back(spec.substr(space + 1));
        for (auto& a : from_env) env_argv.push_back(a.data());
        env_argv.push_back(nullptr);
        argc = static_cast<int>(from_env.size());
        argv = env_argv.data();
    }
    if (argc < 2) return 64;
    const std::string mode = argv[1];
    if (mode == "exit" && argc >= 3) {
        std::printf("%s\n", argc >= 4 ? argv[3] : "ok");
        return std::atoi(argv[2]);
    }
    if (mode == "args") {
        for (int i = 2; i < argc; ++i) std::printf("%s\n", argv[i]);
        return 0;
    }
    if (mode == "env") {
        for (const char* v : {"LC_ALL", "LANG", "PATH"}) {
            const char* x = std::getenv(v);
            std::printf("%s=%s\n", v, x ? x : "(unset)");
        }
        return 0;
    }
    if (mode == "sleep-forever") {
        std::printf("%ld\n", static_cast<long>(::getpid()));
        std::fflush(stdout);
        sleep_forever();
    }
    if (mode == "spew" && argc >= 3) {
        write_bytes(1, std::strtoull(argv[2], nullptr, 10));
        return 0;
    }
    if (mode == "spew-forever") {
        for (;;) write_bytes(1, 1 << 20);
    }
    if (mode == "stderr-first" && argc >= 3) {
        write_bytes(2, std::strtoull(argv[2], nullptr, 10));
        write_all(1, "done\n", 5);
        return 0;
    }
    if (mode == "stderr-between" && argc >= 3) { // a row, a flood of diagnostics, a row
        write_all(1, "first\n", 6);
        write_bytes(2, std::strtoull(argv[2], nullptr, 10));
        write_all(1, "second\n", 7);
        return 0;
    }
    if (mode == "signal" && argc >= 3) {
        const rlimit no_core{0, 0};
        ::setrlimit(RLIMIT_CORE, &no_core);
        std::printf("%ld\n", static_cast<long>(::getpid()));
        std::fflush(stdout);
        std::signal(std::atoi(argv[2]), SIG_DFL);
        ::kill(::getpid(), std::atoi(argv[2]));
        sleep_forever();
    }
    if (mode == "grandchild") {
        const ::pid_t child = ::fork();
        if (child == 0) {
            std::printf("%ld\n", static_cast<long>(::getpid()));
            std::fflush(stdout);
            sleep_forever();
        }
        return child > 0 ? 0 : 1;
    }
    if (mode == "close-and-linger") {
        ::close(1);
        ::close(2);
        sleep_forever();
    }
    if (mode == "touch" && argc >= 3) {
        const int fd = ::open(argv[2], O_CREAT | O_WRONLY, 0600);
        return fd >= 0 ? 0 : 1;
    }
    if (mode == "empty") return 0;
    if (mode == "fds") {
        for (int fd = 3; fd < 1024; ++fd)
            if (::fcntl(fd, F_GETFD) != -1) std::printf("%d\n", fd);
        return 0;
    }
    if (mode == "cat" && argc >= 3) {
        copy_file_out(argv[2]);
        return 0;
    }
    if (mode == "garbage" && argc >= 3) {
        write_garbage(std::strtoull(argv[2], nullptr, 10));
        return 0;
    }
    return 64;
}
