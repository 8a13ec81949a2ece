// The tool runner against real, misbehaving processes (tests/tools/fake_tool.cpp).
#include "ai_hwaccel/detect/probe.hpp"
#include "ai_hwaccel/detect/process.hpp"

#include "fixtures.hpp"

#include <doctest/doctest.h>

#include <fcntl.h>

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <string>
#include <sys/resource.h>
#include <sys/wait.h>
#include <stop_token>
#include <thread>
#include <unistd.h>

namespace ah = ai_hwaccel;
namespace fs = std::filesystem;
using namespace std::chrono_literals;

namespace {

// A folder holding the fake tool under `name`; searched as the only PATH entry.
struct tool_dir {
    test::scratch_dir dir;
    explicit tool_dir(const std::string& name = "fake-tool") { install(name); }
    void install(const std::string& name) const {
        fs::copy_file(AI_HWACCEL_FAKE_TOOL, dir.path() / name, fs::copy_options::overwrite_existing);
    }
    ah::tool_search search() const { return ah::tool_search{dir.path().string(), false}; }
    ah::tool_result run(std::vector<std::string> args, std::chrono::milliseconds timeout = 10s,
                        std::size_t cap = std::size_t{16} << 20) const {
        args.insert(args.begin(), "fake-tool");
        ah::tool_request rq{std::move(args), timeout, cap, std::size_t{64} << 10};
        return ah::run_tool(rq, search());
    }
};

// Dead: gone, or a zombie waiting for its new parent to reap it.
bool process_is_dead(long pid) {
    for (int i = 0; i < 100; ++i) {
        if (::kill(static_cast<pid_t>(pid), 0) != 0 && errno == ESRCH) return true;
        std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
        std::string pid_s, comm, state;
        if (stat >> pid_s >> comm >> state && state == "Z") return true;
        std::this_thread::sleep_for(10ms);
    }
    return false;
}

long max_rss_kib() {
    rusage u{};
    ::getrusage(RUSAGE_SELF, &u);
    return u.ru_maxrss;
}

} // namespace

TEST_CASE("run_tool: a clean run, arguments passed untouched, C locale, trusted PATH") {
    const tool_dir t;
    auto r = t.run({"exit", "0", "hello"});
    CHECK(r.succeeded());
    CHECK(r.out == "hello\n");
    CHECK(r.path == (t.dir.path() / "fake-tool").string());

    // No shell: metacharacters arrive as the bytes they are, nothing is expanded or run.
    const std::string marker = (t.dir.path() / "pwned").string();
    r = t.run({"args", "$(touch " + marker + ")", "a b", "*", ";", "'\"", "`id`"});
    CHECK(r.succeeded());
    CHECK(r.out == "$(touch " + marker + ")\na b\n*\n;\n'\"\n`id`\n");
    CHECK_FALSE(fs::exists(marker));

    r = t.run({"env"});
    CHECK(r.out == "LC_ALL=C\nLANG=C\nPATH=" + t.dir.path().string() + "\n");
}

#if defined(__GLIBC__) && (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 34))
TEST_CASE("run_tool: the caller's descriptors without close-on-exec stay out of the tool") {
    // A file the caller opened as many programs do, without O_CLOEXEC: before, the tool
    // inherited it (and could read it, or hold a pipe's end open).
    const tool_dir t;
    const int leaked = ::open("/dev/null", O_RDONLY);
    REQUIRE(leaked >= 3);
    const auto r = t.run({"fds"});
    ::close(leaked);
    CHECK(r.succeeded());
    CHECK(r.out.empty());
}
#endif

TEST_CASE("run_tool reaps the tools it gave up on once they end") {
    // A tool stuck in the kernel past its SIGKILL is left behind (result.abandoned) and its
    // pid kept; the next run_tool reaps it when it has ended, so that it does not stay a
    // zombie for the caller's life. Stood in for here by a child that has already ended.
    const ::pid_t child = ::fork();
    REQUIRE(child >= 0);
    if (child == 0) ::_exit(0);
    auto& left = ah::detail::abandoned_children::instance();
    left.add(child);
    // Until it is reaped it is this process's zombie (its /proc entry stays).
    for (int i = 0; i < 200; ++i) {
        std::ifstream stat("/proc/" + std::to_string(child) + "/stat");
        std::string line;
        if (std::getline(stat, line) && line.find(") Z ") != std::string::npos) break;
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    (void)ah::run_tool(ah::tool_request{{"true"}});
    CHECK(left.reap() == 0);
    CHECK_FALSE(std::filesystem::exists("/proc/" + std::to_string(child)));
    errno = 0;
    const ::pid_t again = ::waitpid(child, nullptr, WNOHANG);
    const int why = errno; // before a CHECK's reporting can change it
    CHECK(again == -1); // already reaped: no such child
    CHECK(why == ECHILD);
}

TEST_CASE("run_tool: exit status and signal are reported") {
    const tool_dir t;
    auto r = t.run({"exit", "3"});
    CHECK(r.status == ah::tool_status::exited);
    CHECK(r.exit_code == 3);
    CHECK_FALSE(r.succeeded());

    r = t.run({"signal", std::to_string(SIGTERM)});
    CHECK(r.status == ah::tool_status::signalled);
    CHECK(r.signal == SIGTERM);
    r = t.run({"signal", std::to_string(SIGSEGV)});
    CHECK(r.status == ah::tool_status::signalled);
    CHECK(r.signal == SIGSEGV);
}

TEST_CASE("run_tool: a stop request kills the running tool and its process group") {
    const tool_dir t;
    std::stop_source stop;
    ah::tool_request rq{{"fake-tool", "sleep-forever"}, 60s};
    rq.stop = stop.get_token();
    std::thread canceller([&] {
        std::this_thread::sleep_for(200ms);
        stop.request_stop();
    });
    const auto r = ah::run_tool(rq, t.search());
    canceller.join();
    CHECK(r.status == ah::tool_status::cancelled); // not timed_out: the 60 s never passed
    REQUIRE_FALSE(r.out.empty());
    CHECK(process_is_dead(std::stol(r.out)));
    std::vector<ah::warning> w;
    CHECK_FALSE(ah::report_tool_result(rq, r, ah::backend_id::cuda, w));
    REQUIRE(w.size() == 1);
    CHECK(w[0].message.find("cancelled") != std::string::npos);

    // Requested before the run: the tool is stopped at its first look.
    const auto again = ah::run_tool(rq, t.search());
    CHECK(again.status == ah::tool_status::cancelled);
}

TEST_CASE("run_tool: a stop request reaches a tool that has closed its pipes") {
    // The runner no longer polls the pipes then, only waits for the exit: the stop must
    // still end the wait (not the 60 s timeout).
    const tool_dir t;
    std::stop_source stop;
    ah::tool_request rq{{"fake-tool", "close-and-linger"}, 60s};
    rq.stop = stop.get_token();
    std::thread canceller([&] {
        std::this_thread::sleep_for(200ms);
        stop.request_stop();
    });
    const auto r = ah::run_tool(rq, t.search());
    canceller.join();
    CHECK(r.status == ah::tool_status::cancelled);
    CHECK(r.elapsed < 30s);
}

TEST_CASE("run_tool: a timeout past the clock's range is no limit, not an overflow") {
    const tool_dir t;
    auto r = t.run({"exit", "0"}, std::chrono::milliseconds::max());
    CHECK(r.succeeded());
    r = t.run({"exit", "0"}, std::chrono::hours(24 * 365 * 300));
    CHECK(r.succeeded());
    r = t.run({"exit", "0"}, std::chrono::milliseconds(-5)); // no time at all
    CHECK(r.status == ah::tool_status::timed_out);
}

TEST_CASE("run_tool: a caller that ignores SIGCHLD loses the exit status, and is told so") {
    // With SIGCHLD ignored the kernel reaps children itself (waitpid: ECHILD), so a
    // failing tool cannot be told from a clean one; the result says the status was lost.
    const tool_dir t;
    struct sigaction ignore {}, old{};
    ignore.sa_handler = SIG_IGN;
    ::sigemptyset(&ignore.sa_mask);
    REQUIRE(::sigaction(SIGCHLD, &ignore, &old) == 0);
    const auto r = t.run({"exit", "9", "partial"});
    ::sigaction(SIGCHLD, &old, nullptr);
    CHECK(r.status == ah::tool_status::exited);
    CHECK(r.exit_unknown);
    CHECK(r.out == "partial\n");
    std::vector<ah::warning> w;
    ah::tool_request rq{{"fake-tool"}};
    CHECK(ah::report_tool_result(rq, r, ah::backend_id::cuda, w));
    REQUIRE(w.size() == 1);
    CHECK(w[0].kind == ah::warning_kind::read_error);
    CHECK(w[0].message.find("SIGCHLD") != std::string::npos);
    // With the default disposition the status is had as ever.
    const auto clean = t.run({"exit", "9"});
    CHECK_FALSE(clean.exit_unknown);
    CHECK(clean.exit_code == 9);
}

TEST_CASE("run_tool: a tool that never ends is killed at its timeout with its process group") {
    const tool_dir t;
    auto r = t.run({"sleep-forever"}, 300ms);
    CHECK(r.status == ah::tool_status::timed_out);
    CHECK_FALSE(r.abandoned);
    // Bounded by the timeout plus a margin for a loaded machine, not by the tool.
    CHECK(r.elapsed >= 300ms);
    CHECK(r.elapsed < 300ms + 5s);
    REQUIRE_FALSE(r.out.empty());
    CHECK(process_is_dead(std::stol(r.out)));

    // It closed its pipes but keeps running: still bounded by the timeout.
    r = t.run({"close-and-linger"}, 300ms);
    CHECK(r.status == ah::tool_status::timed_out);
    CHECK(r.elapsed < 300ms + 5s);
}

TEST_CASE("run_tool: a grandchild holding the pipes does not stall the caller") {
    const tool_dir t;
    const auto r = t.run({"grandchild"}, 20s);
    CHECK(r.status == ah::tool_status::exited);
    CHECK(r.exit_code == 0);
    CHECK(r.elapsed < 10s); // the tool exited at once; the grace period is 250 ms
    REQUIRE_FALSE(r.out.empty());
    CHECK(process_is_dead(std::stol(r.out))); // killed with the group
}

TEST_CASE("run_tool: 100 MB of output is cut at the cap without being buffered") {
    const tool_dir t;
    const long before = max_rss_kib();
    constexpr std::size_t cap = std::size_t{1} << 20;
    auto r = t.run({"spew", std::to_string(100'000'000)}, 60s, cap);
    CHECK(r.status == ah::tool_status::truncated);
    CHECK(r.out_truncated);
    CHECK(r.out.size() == cap);
    CHECK(r.out.find_first_not_of('x') == std::string::npos);
    // Peak memory of this whole process grew by far less than the 100 MB printed.
    CHECK(max_rss_kib() - before < 32 * 1024);

    r = t.run({"spew-forever"}, 60s, cap);
    CHECK(r.status == ah::tool_status::truncated);
    CHECK(r.out.size() == cap);

    // Output under the cap is kept whole.
    r = t.run({"spew", "1000000"}, 60s, cap);
    CHECK(r.succeeded());
    CHECK(r.out.size() == 1000000);
}

TEST_CASE("run_tool: both pipes are drained together") {
    // 1 MB on stderr before a word on stdout: a runner reading only stdout would
    // deadlock once the stderr pipe (64 KiB) is full.
    const tool_dir t;
    ah::tool_request rq{{"fake-tool", "stderr-first", "1000000"}, 20s, 1 << 20, 2 << 20};
    const auto r = ah::run_tool(rq, t.search());
    CHECK(r.succeeded());
    CHECK(r.out == "done\n");
    CHECK(r.err.size() == 1000000);
}

TEST_CASE("run_tool: stderr past its cap is dropped, and the tool runs to its end") {
    // A tool that warns a lot between two rows: stopping it at the stderr cap would lose
    // the second row.
    const tool_dir t;
    ah::tool_request rq{{"fake-tool", "stderr-between", "1000000"}, 20s, 1 << 20, 64 << 10};
    const auto r = ah::run_tool(rq, t.search());
    CHECK(r.succeeded());
    CHECK(r.out == "first\nsecond\n");
    CHECK(r.err_truncated);
    CHECK(r.err.size() == std::size_t{64} << 10);
    std::vector<ah::warning> w;
    CHECK(ah::report_tool_result(rq, r, ah::backend_id::cuda, w));
    CHECK(w.empty());
}

TEST_CASE("find_tool and run_tool: what is not run") {
    const tool_dir t;
    SUBCASE("a missing tool") {
        ah::tool_request rq{{"no-such-tool-ai-hwaccel"}};
        const auto r = ah::run_tool(rq, t.search());
        CHECK(r.status == ah::tool_status::not_found);
        CHECK(r.path.empty());
    }
    SUBCASE("a file without execute permission") {
        t.dir.write("noexec-tool", "#!/bin/sh\necho hi\n");
        fs::permissions(t.dir.path() / "noexec-tool", fs::perms::owner_read | fs::perms::owner_write);
        ah::tool_request rq{{"noexec-tool"}};
        const auto r = ah::run_tool(rq, t.search());
        CHECK(r.status == ah::tool_status::not_executable);
    }
    SUBCASE("an executable file that is not a program") {
        t.dir.write("garbage-tool", std::string("\x7f\x45\x4c\x46garbage\x00\x01", 13));
        fs::permissions(t.dir.path() / "garbage-tool", fs::perms::owner_all);
        ah::tool_request rq{{"garbage-tool"}};
        const auto r = ah::run_tool(rq, t.search());
        CHECK(r.status == ah::tool_status::not_executable);
    }
    SUBCASE("a folder named like the tool") {
        fs::create_directory(t.dir.path() / "dir-tool");
        ah::tool_request rq{{"dir-tool"}};
        CHECK(ah::run_tool(rq, t.search()).status == ah::tool_status::not_executable);
    }
    SUBCASE("relative and empty PATH entries are skipped, a planted tool never runs") {
        // A planted "vendor tool" in a relative folder, reachable from the cwd.
        const test::scratch_dir cwd;
        fs::create_directories(cwd.path() / "bin");
        fs::copy_file(AI_HWACCEL_FAKE_TOOL, cwd.path() / "bin" / "planted-smi");
        fs::copy_file(AI_HWACCEL_FAKE_TOOL, cwd.path() / "planted-smi");
        const auto old = fs::current_path();
        fs::current_path(cwd.path());
        const std::string marker = (cwd.path() / "ran").string();
        ah::tool_request rq{{"planted-smi", "touch", marker}};
        const auto r = ah::run_tool(rq, ah::tool_search{"bin::.:" + t.dir.path().string(), false});
        fs::current_path(old);
        CHECK(r.status == ah::tool_status::not_found);
        CHECK_FALSE(fs::exists(marker));
        REQUIRE(r.unsafe_path_entries.size() == 3);
        CHECK(r.unsafe_path_entries[0] == "bin");
        CHECK(r.unsafe_path_entries[1].empty());
        CHECK(r.unsafe_path_entries[2] == ".");
        // A relative path as the tool's name is refused too.
        ah::tool_request rel{{"./planted-smi", "touch", marker}};
        fs::current_path(cwd.path());
        CHECK(ah::run_tool(rel, t.search()).status == ah::tool_status::not_found);
        fs::current_path(old);
        CHECK_FALSE(fs::exists(marker));
    }
    SUBCASE("a folder anyone may write in is skipped, through a link too, and reported") {
        const test::scratch_dir base;
        fs::create_directories(base.path() / "open");
        fs::copy_file(AI_HWACCEL_FAKE_TOOL, base.path() / "open" / "planted-smi");
        fs::permissions(base.path() / "open", fs::perms::all); // 0777, as /tmp less its sticky bit
        fs::create_directory_symlink(base.path() / "open", base.path() / "link");
        const std::string marker = (base.path() / "ran").string();
        for (const auto& dir : {base.path() / "open", base.path() / "link"}) {
            CAPTURE(dir.string());
            ah::tool_request rq{{"planted-smi", "touch", marker}};
            const auto r = ah::run_tool(rq, ah::tool_search{dir.string() + ":" + t.dir.path().string(), false});
            CHECK(r.status == ah::tool_status::not_found);
            CHECK(r.unsafe_path_entries == std::vector<std::string>{dir.string()});
            std::vector<ah::warning> w;
            CHECK(ah::tool_missing(r, w));
            REQUIRE(w.size() == 1);
            CHECK(w[0].kind == ah::warning_kind::unsafe_path_ignored);
            CHECK(w[0].message.find("anyone may write in it") != std::string::npos);
        }
        CHECK_FALSE(fs::exists(marker));
        // The same folder closed to others is searched.
        fs::permissions(base.path() / "open", fs::perms::owner_all);
        ah::tool_request rq{{"planted-smi", "exit", "0"}};
        const auto r = ah::run_tool(rq, ah::tool_search{(base.path() / "open").string(), false});
        CHECK(r.succeeded());
        CHECK(r.unsafe_path_entries.empty());
    }
    SUBCASE("an absolute path is run as given") {
        ah::tool_request rq{{(t.dir.path() / "fake-tool").string(), "exit", "0"}};
        CHECK(ah::run_tool(rq, ah::tool_search{"", false}).succeeded());
    }
    SUBCASE("arguments with NUL bytes cannot be passed, and are not") {
        ah::tool_request rq{{"fake-tool", std::string("a\0b", 3)}};
        CHECK(ah::run_tool(rq, t.search()).status == ah::tool_status::not_found);
    }
}

TEST_CASE("find_tool: an unset PATH is no empty entry") {
    const char* saved = std::getenv("PATH");
    const std::string keep = saved ? saved : "";
    ::unsetenv("PATH");
    const auto unset = ah::find_tool("sh");
    if (saved) ::setenv("PATH", keep.c_str(), 1);
    CHECK(unset.unsafe_path_entries.empty());
    CHECK(unset.status == ah::tool_status::exited); // found in the trusted folders
    // A set but empty PATH is one empty entry: the current folder, refused and reported.
    const auto empty = ah::find_tool("sh", ah::tool_search{std::string(), true});
    CHECK(empty.unsafe_path_entries == std::vector<std::string>{""});
}

TEST_CASE("find_tool: search order and the trusted folders") {
    const tool_dir first, second;
    const auto l = ah::find_tool("fake-tool", ah::tool_search{first.dir.path().string() + ":" + second.dir.path().string(), true});
    CHECK(l.status == ah::tool_status::exited);
    CHECK(l.path == (first.dir.path() / "fake-tool").string());
    CHECK(l.dirs.front() == first.dir.path().string());
    // The system and vendor folders follow PATH, each once.
    CHECK(std::find(l.dirs.begin(), l.dirs.end(), "/usr/bin") != l.dirs.end());
    CHECK(std::count(l.dirs.begin(), l.dirs.end(), "/usr/bin") == 1);
    // Without PATH, a system tool is still found in the trusted folders.
    CHECK(ah::find_tool("sh", ah::tool_search{"", true}).status == ah::tool_status::exited);
    CHECK(ah::find_tool("sh", ah::tool_search{"", false}).status == ah::tool_status::not_found);
}

TEST_CASE("run_tool: many runs in parallel stay independent") {
    // Pipes are close-on-exec: a tool never inherits another run's pipe, which would
    // keep that run waiting for end of file.
    const tool_dir t;
    std::vector<std::thread> threads;
    std::vector<ah::tool_result> results(8);
    for (std::size_t i = 0; i < results.size(); ++i)
        threads.emplace_back([&, i] { results[i] = t.run({"exit", std::to_string(i), "x"}); });
    for (auto& th : threads) th.join();
    for (std::size_t i = 0; i < results.size(); ++i) {
        CHECK(results[i].status == ah::tool_status::exited);
        CHECK(results[i].exit_code == static_cast<int>(i));
        CHECK(results[i].out == "x\n");
        CHECK(results[i].elapsed < 10s);
    }
}
