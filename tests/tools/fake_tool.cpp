// A misbehaving "vendor tool" for the runner's fault tests. The first argument chooses
// the misbehaviour; tests copy or link this program under vendor tool names.
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
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <string>
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
} // namespace

int main(int argc, char** argv) {
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
    return 64;
}
