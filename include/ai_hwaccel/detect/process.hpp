// ai-hwaccel detect: running a tool safely.
//
// Vendor tools (nvidia-smi, rocm-smi, hl-smi, …) are the only way to learn some facts,
// and they misbehave in every way a program can: they hang in the driver, print megabytes,
// crash, or are replaced by something planted in a writable folder. The runner here
// treats each run as hostile:
//
//   - no shell: an argument vector goes to posix_spawn, so nothing is ever interpreted;
//   - the tool is looked up only in absolute PATH entries and the vendors' usual install
//     folders; relative and empty PATH entries (which mean "the current directory") and
//     folders any user may write in (mode o+w, /tmp among them) are skipped and reported,
//     and a name containing '/' must be an absolute path;
//   - the child gets LC_ALL=C (numbers and messages in one known format), stdin from
//     /dev/null, and the trusted PATH;
//   - stdout and stderr are drained together with poll(), each into a buffer with a byte
//     cap; a tool whose stdout goes past its cap is stopped and its output kept up to the
//     cap; stderr past its cap is read and dropped, and the tool runs on;
//   - the child leads its own process group, and on timeout the whole group is killed
//     (SIGKILL) and reaped, so grandchildren holding the pipes cannot stall the caller;
//   - the outcome says how the tool ended: exit status, signal, timeout, cap.
//
// Nothing here throws except std::bad_alloc from the buffers (bounded by the caps).
#pragma once

#include "ai_hwaccel/config.hpp"

#include <algorithm>
#include <array>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <stop_token>
#include <string_view>
#include <vector>

#if AI_HWACCEL_OS_LINUX || AI_HWACCEL_OS_MACOS
#include <cerrno>
#include <csignal>
#include <cstring>
#include <fcntl.h>
#include <mutex>
#include <poll.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

extern "C" char** environ; // POSIX: the process environment (declared by no header)
#endif

AI_HWACCEL_NAMESPACE_BEGIN

/// One tool run to perform.
struct tool_request {
    /// argv[0] is the tool's file name ("nvidia-smi", looked up in trusted folders) or an
    /// absolute path; the rest are its arguments, passed as they are.
    std::vector<std::string> argv;
    std::chrono::milliseconds timeout{5000}; ///< at most 0: times out at once; past the clock's range: no limit
    std::size_t stdout_cap = std::size_t{16} << 20;
    std::size_t stderr_cap = std::size_t{64} << 10;
    /// When stop is requested while the tool runs, its process group is killed at once
    /// and the run ends as `cancelled` (asynchronous detection abandoned by its caller).
    std::stop_token stop{};
};

/// How a run ended.
enum class tool_status : std::uint8_t {
    exited,         ///< ran to the end; `exit_code` says how (0 = success)
    signalled,      ///< killed by a signal it did not ask for (`signal`)
    timed_out,      ///< still running at the deadline; its process group was killed
    truncated,      ///< printed more than the stdout cap; stopped, output kept up to the cap
    not_found,      ///< no such tool in any trusted folder (or no capture of it)
    not_executable, ///< found, but not an executable regular file, or exec refused it
    spawn_failed,   ///< the system could not start it (no memory, no pipes, …)
    cancelled,      ///< stopped through the request's stop token; its process group was killed
};

constexpr std::string_view to_string(tool_status s) noexcept {
    switch (s) {
    case tool_status::exited: return "exited";
    case tool_status::signalled: return "signalled";
    case tool_status::timed_out: return "timed_out";
    case tool_status::cancelled: return "cancelled";
    case tool_status::truncated: return "truncated";
    case tool_status::not_found: return "not_found";
    case tool_status::not_executable: return "not_executable";
    case tool_status::spawn_failed: return "spawn_failed";
    }
    return "spawn_failed";
}

struct tool_result {
    tool_status status = tool_status::not_found;
    int exit_code = 0; ///< for `exited`
    int signal = 0;    ///< for `signalled`
    std::string out;   ///< stdout, at most the request's cap
    std::string err;   ///< stderr, at most the request's cap
    bool out_truncated = false;
    bool err_truncated = false;
    std::string path; ///< the file that was run (or the capture replayed), when found
    std::chrono::microseconds elapsed{0};
    /// PATH entries skipped because they were not absolute ("", ".", "bin", …) or any user
    /// may write in them; and trusted folders skipped for the latter.
    std::vector<std::string> unsafe_path_entries;
    /// Set when the tool could not be killed and reaped (stuck in the kernel): it is left
    /// behind rather than blocking detection, and a later run_tool reaps it once it ends.
    bool abandoned = false;
    /// Set when the tool ended but its wait status was lost: the calling program ignores
    /// SIGCHLD, so the kernel reaps its children itself. `exited` with `exit_code` 0 then
    /// means "ended, how is unknown".
    bool exit_unknown = false;

    /// Ran to the end with status 0.
    bool succeeded() const noexcept { return status == tool_status::exited && exit_code == 0; }
    /// There is output worth parsing: a clean run, or one cut at a cap.
    bool has_output() const noexcept { return succeeded() || status == tool_status::truncated; }
};

/// The folders searched after the absolute PATH entries: the system's, then each
/// compiled-in vendor's usual install folder (a compiled-out backend leaves none).
inline constexpr std::string_view trusted_tool_dirs[] = {
    "/usr/local/sbin", "/usr/local/bin", "/usr/sbin", "/usr/bin", "/sbin", "/bin",
#if AI_HWACCEL_BACKEND_CUDA
    "/usr/local/nvidia/bin", "/usr/local/cuda/bin",
#endif
#if AI_HWACCEL_BACKEND_ROCM
    "/opt/rocm/bin",
#endif
#if AI_HWACCEL_BACKEND_NEURON
    "/opt/aws/neuron/bin",
#endif
#if AI_HWACCEL_BACKEND_GAUDI
    "/opt/habanalabs/bin",
#endif
#if AI_HWACCEL_BACKEND_QUALCOMM
    "/opt/qti-aic/tools",
#endif
#if AI_HWACCEL_BACKEND_INTEL_GPU || AI_HWACCEL_BACKEND_INTEL_NPU
    "/opt/intel/oneapi/bin",
#endif
};

/// Where and how tools are looked up.
struct tool_search {
    /// The PATH to search; nullopt = this process's PATH.
    std::optional<std::string> path;
    /// Also search trusted_tool_dirs after PATH.
    bool vendor_dirs = true;
};

/// Result of looking a tool up.
struct tool_lookup {
    tool_status status = tool_status::not_found; ///< exited (= found), not_found, not_executable
    std::string path;                            ///< absolute path of what was found
    std::vector<std::string> unsafe_path_entries;
    std::vector<std::string> dirs; ///< every folder searched, in order (becomes the child's PATH)
};

#if AI_HWACCEL_OS_LINUX || AI_HWACCEL_OS_MACOS

namespace detail {

inline bool is_executable_file(const std::string& p, bool& exists) {
    struct stat st {};
    exists = ::stat(p.c_str(), &st) == 0;
    return exists && S_ISREG(st.st_mode) && ::access(p.c_str(), X_OK) == 0;
}

// A folder any user may write in (mode o+w, sticky or not: /tmp is one): a program found
// there may have been put there by anyone, so it is not searched.
inline bool writable_by_anyone(std::string_view dir) {
    struct stat st {};
    return ::stat(std::string(dir).c_str(), &st) == 0 && S_ISDIR(st.st_mode) && (st.st_mode & S_IWOTH) != 0;
}

inline void add_dir(std::vector<std::string>& dirs, std::string_view d) {
    while (d.size() > 1 && d.back() == '/') d.remove_suffix(1);
    for (const auto& x : dirs)
        if (x == d) return;
    dirs.emplace_back(d);
}

// The vendors' usual folders after PATH; one any user may write in is skipped and noted.
inline void add_trusted_dirs(std::vector<std::string>& dirs, std::vector<std::string>& skipped) {
    for (auto d : trusted_tool_dirs) {
        if (writable_by_anyone(d)) skipped.emplace_back(d);
        else add_dir(dirs, d);
    }
}

} // namespace detail

/// Finds `name` in the absolute entries of the search PATH, then the trusted folders.
inline tool_lookup find_tool(std::string_view name, const tool_search& search = {}) {
    tool_lookup r;
    if (name.empty() || name.find('\0') != std::string_view::npos) return r;
    if (name.find('/') != std::string_view::npos) {
        // A path: only an absolute one is trusted.
        if (name.front() != '/') return r;
        bool exists = false;
        r.path = std::string(name);
        r.status = detail::is_executable_file(r.path, exists) ? tool_status::exited
                   : exists                                     ? tool_status::not_executable
                                                                : tool_status::not_found;
        if (r.status == tool_status::not_found) r.path.clear();
        detail::add_trusted_dirs(r.dirs, r.unsafe_path_entries);
        return r;
    }
    std::string path_value;
    bool has_path = true; // an unset PATH has no entries; a set, empty one has one empty entry
    if (search.path) path_value = *search.path;
    else if (const char* p = std::getenv("PATH")) path_value = p;
    else has_path = false;
    std::string_view rest = path_value;
    while (has_path) {
        const auto colon = rest.find(':');
        const std::string_view entry = rest.substr(0, colon);
        if (entry.empty() || entry.front() != '/' || detail::writable_by_anyone(entry))
            r.unsafe_path_entries.emplace_back(entry);
        else detail::add_dir(r.dirs, entry);
        if (colon == std::string_view::npos) break;
        rest.remove_prefix(colon + 1);
    }
    if (search.vendor_dirs) detail::add_trusted_dirs(r.dirs, r.unsafe_path_entries);
    std::string first_unusable;
    for (const auto& d : r.dirs) {
        std::string candidate = d == "/" ? "/" : d + "/";

        candidate += name;
        bool exists = false;
        if (detail::is_executable_file(candidate, exists)) {
            r.status = tool_status::exited;
            r.path = std::move(candidate);
            return r;
        }
        if (exists && first_unusable.empty()) first_unusable = std::move(candidate);
    }
    if (!first_unusable.empty()) {
        r.status = tool_status::not_executable;
        r.path = std::move(first_unusable);
    }
    return r;
}

namespace detail {

// Reads what is available on `fd` into `buf`, up to `cap` bytes; sets `over` when there
// was more. Returns false at end of file or on an error. Past the cap the rest is read
// and dropped when `discard_excess` (stderr: a chatty tool is not stopped for its
// diagnostics), else reading stops there (returns false).
inline bool drain_into(int fd, std::string& buf, std::size_t cap, bool& over, bool discard_excess = false) {
    char chunk[65536];
    for (;;) {
        const ::ssize_t n = ::read(fd, chunk, sizeof chunk);
        if (n > 0) {
            const auto got = static_cast<std::size_t>(n);
            const std::size_t room = cap > buf.size() ? cap - buf.size() : 0;
            buf.append(chunk, got < room ? got : room);
            if (got > room) {
                over = true;
                if (!discard_excess) return false;
            }
            continue;
        }
        if (n == 0) return false;
        if (errno == EINTR) continue;
        return errno == EAGAIN || errno == EWOULDBLOCK;
    }
}

struct spawn_plan {
    std::vector<std::string> env_storage;
    std::vector<char*> envp;
    std::vector<char*> argvp;
};

// The child's environment: this process's, with the locale forced to C and PATH set to
// the folders that were searched.
inline void build_env(spawn_plan& plan, const std::vector<std::string>& dirs) {
    std::string path = "PATH=";
    for (std::size_t i = 0; i < dirs.size(); ++i) {
        if (i) path += ':';
        path += dirs[i];
    }
    plan.env_storage.push_back(std::move(path));
    plan.env_storage.emplace_back("LC_ALL=C");
    plan.env_storage.emplace_back("LANG=C");
    for (char** e = environ; e && *e; ++e) {
        const std::string_view v = *e;
        if (v.starts_with("PATH=") || v.starts_with("LC_") || v.starts_with("LANG=") ||
            v.starts_with("LANGUAGE="))
            continue;
        plan.env_storage.emplace_back(v);
    }
    for (auto& s : plan.env_storage) plan.envp.push_back(s.data());
    plan.envp.push_back(nullptr);
}

// Owns one file descriptor (also used by detect/record.hpp's tree writer).
class fd_guard {
public:
    explicit fd_guard(int fd = -1) noexcept : fd_(fd) {}
    ~fd_guard() { reset(); }
    fd_guard(const fd_guard&) = delete;
    fd_guard& operator=(const fd_guard&) = delete;
    fd_guard(fd_guard&& o) noexcept : fd_(o.fd_) { o.fd_ = -1; }
    fd_guard& operator=(fd_guard&& o) noexcept {
        if (this != &o) {
            reset();
            fd_ = o.fd_;
            o.fd_ = -1;
        }
        return *this;
    }
    int get() const noexcept { return fd_; }
    void reset() noexcept {
        if (fd_ >= 0) ::close(fd_);
        fd_ = -1;
    }

private:
    int fd_;
};

inline bool make_pipe(int fds[2]) {
#if AI_HWACCEL_OS_LINUX
    return ::pipe2(fds, O_CLOEXEC | O_NONBLOCK) == 0;
#else
    // Not atomic with respect to a concurrent fork in another thread; acceptable where
    // pipe2 does not exist.
    if (::pipe(fds) != 0) return false;
    for (int i = 0; i < 2; ++i) {
        ::fcntl(fds[i], F_SETFD, FD_CLOEXEC);
        ::fcntl(fds[i], F_SETFL, O_NONBLOCK);
    }
    return true;
#endif
}

// Waits for `pid` until `deadline` or a stop request; returns true and the status once
// it is reaped. `lost` is set when the status cannot be had (ECHILD: the caller ignores
// SIGCHLD and the kernel reaped the child).
inline bool reap_until(::pid_t pid, std::chrono::steady_clock::time_point deadline, int& status, bool& lost,
                       const std::stop_token& stop = {}) {
    auto pause = std::chrono::microseconds(200);
    for (;;) {
        const ::pid_t w = ::waitpid(pid, &status, WNOHANG);
        if (w == pid) return true;
        if (w < 0 && errno != EINTR) {
            status = 0;
            lost = true;
            return true;
        }
        if (std::chrono::steady_clock::now() >= deadline || stop.stop_requested()) return false;
        std::this_thread::sleep_for(pause);
        if (pause < std::chrono::milliseconds(20)) pause *= 2;
    }
}

// Tools given up on (a SIGKILL the kernel has not delivered after two seconds: a process
// stuck in a driver) stay this process's children: their pids are kept here and reaped,
// without waiting, at each later tool run, so that a long-running caller (an exporter
// detecting every minute on a node with a wedged driver) does not gather zombies. A fixed
// list: nothing is allocated; past 64 at once the oldest are left to the kernel's init
// at this process's exit.
struct abandoned_children {
    std::mutex m;
    std::array<::pid_t, 64> pids{};
    std::size_t count = 0;

    static abandoned_children& instance() noexcept {
        static abandoned_children a;
        return a;
    }
    void add(::pid_t pid) noexcept {
        std::lock_guard lock(m);
        if (count == pids.size()) { // full: the oldest makes room
            std::copy(pids.begin() + 1, pids.end(), pids.begin());
            --count;
        }
        pids[count++] = pid;
    }
    /// Reaps those that have ended; returns how many are still waited for.
    std::size_t reap() noexcept {
        std::lock_guard lock(m);
        std::size_t kept = 0;
        for (std::size_t i = 0; i < count; ++i) {
            int status = 0;
            const ::pid_t w = ::waitpid(pids[i], &status, WNOHANG);
            if (w == 0 || (w < 0 && errno == EINTR)) pids[kept++] = pids[i];
        }
        count = kept;
        return kept;
    }
};

} // namespace detail

/// Runs one tool as described at the top of this header. Never throws for a failing tool.
inline tool_result run_tool(const tool_request& request, const tool_search& search = {}) {
    using clock = std::chrono::steady_clock;
    const auto start = clock::now();
    detail::abandoned_children::instance().reap();
    tool_result r;
    auto finish = [&]() -> tool_result {
        r.elapsed = std::chrono::duration_cast<std::chrono::microseconds>(clock::now() - start);
        return std::move(r);
    };
    if (request.argv.empty()) return finish();
    for (const auto& a : request.argv)
        if (a.find('\0') != std::string::npos) return finish(); // cannot be passed to exec

    tool_lookup found = find_tool(request.argv.front(), search);
    r.unsafe_path_entries = std::move(found.unsafe_path_entries);
    r.path = found.path;
    if (found.status != tool_status::exited) {
        r.status = found.status;
        return finish();
    }

    detail::spawn_plan plan;
    detail::build_env(plan, found.dirs);
    std::vector<std::string> args = request.argv;
    for (auto& a : args) plan.argvp.push_back(a.data());
    plan.argvp.push_back(nullptr);

    int out_fds[2], err_fds[2];
    r.status = tool_status::spawn_failed;
    if (!detail::make_pipe(out_fds)) return finish();
    detail::fd_guard out_read(out_fds[0]), out_write(out_fds[1]);
    if (!detail::make_pipe(err_fds)) return finish();
    detail::fd_guard err_read(err_fds[0]), err_write(err_fds[1]);
    // The child's ends must block like ordinary pipes.
    ::fcntl(out_write.get(), F_SETFL, 0);
    ::fcntl(err_write.get(), F_SETFL, 0);

    ::posix_spawn_file_actions_t actions;
    ::posix_spawnattr_t attr;
    if (::posix_spawn_file_actions_init(&actions) != 0) return finish();
    if (::posix_spawnattr_init(&attr) != 0) {
        ::posix_spawn_file_actions_destroy(&actions);
        return finish();
    }
    ::posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
    ::posix_spawn_file_actions_adddup2(&actions, out_write.get(), 1);
    ::posix_spawn_file_actions_adddup2(&actions, err_write.get(), 2);
#if defined(__GLIBC__) && (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 34))
    // The caller's descriptors opened without close-on-exec stay out of the tool (its
    // files, a parent's pipes whose end-of-file the tool would otherwise hold back).
    ::posix_spawn_file_actions_addclosefrom_np(&actions, 3);
#endif
    // Own process group (so a timeout kills the tool's children too), default signal
    // dispositions and an empty mask whatever the caller has set.
    ::sigset_t none, all;
    ::sigemptyset(&none);
    ::sigfillset(&all);
    ::posix_spawnattr_setsigmask(&attr, &none);
    ::posix_spawnattr_setsigdefault(&attr, &all);
    ::posix_spawnattr_setpgroup(&attr, 0);
    ::posix_spawnattr_setflags(&attr, static_cast<short>(POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK |
                                                         POSIX_SPAWN_SETSIGDEF));
    ::pid_t pid = -1;
    const int rc = ::posix_spawn(&pid, found.path.c_str(), &actions, &attr, plan.argvp.data(),
                                 plan.envp.data());
    ::posix_spawn_file_actions_destroy(&actions);
    ::posix_spawnattr_destroy(&attr);
    out_write.reset();
    err_write.reset();
    if (rc != 0) {
        // glibc reports the exec's own failure here: ENOEXEC (not a program), EACCES.
        r.status = (rc == ENOEXEC || rc == EACCES || rc == EPERM || rc == EISDIR) ? tool_status::not_executable
                                                                                  : tool_status::spawn_failed;
        return finish();
    }
    // It runs: `exited` until a timeout or a cap says otherwise; the wait status then
    // tells an exit from a signal.
    r.status = tool_status::exited;

    // A timeout past what the clock can hold (milliseconds::max()) is as good as none;
    // compared in its own unit, so that nothing overflows on the way.
    const auto room = std::chrono::floor<std::chrono::milliseconds>(clock::time_point::max() - start);
    const auto deadline = request.timeout <= std::chrono::milliseconds::zero() ? start
                          : request.timeout >= room                             ? clock::time_point::max()
                                                                                : start + request.timeout;
    bool out_open = true, err_open = true, reaped = false, killed = false, lost = false;
    int wait_status = 0;
    clock::time_point reaped_at{};
    auto kill_group = [&] {
        // The group outlives its leader while any member is alive, and its number is not
        // handed to a new process meanwhile; the leader's own pid is signalled only before
        // it is reaped (after, the number may be another process's).
        ::kill(-pid, SIGKILL);
        if (!reaped) ::kill(pid, SIGKILL); // in case the group could not be created
        killed = true;
    };

    while (out_open || err_open) {
        const auto now = clock::now();
        if (now >= deadline) {
            // A tool that has exited did not time out; what its children still held is cut.
            if (!reaped) r.status = tool_status::timed_out;
            break;
        }
        if (request.stop.stop_requested()) { // checked at least every 100 ms
            r.status = tool_status::cancelled;
            break;
        }
        // After the tool itself has exited, its children may still hold the pipes; give
        // them a moment to finish writing, then stop.
        constexpr auto grace = std::chrono::milliseconds(250);
        if (reaped && now >= reaped_at + grace) break;
        auto wait = std::chrono::milliseconds(100);
        if (deadline - now < wait) wait = std::chrono::ceil<std::chrono::milliseconds>(deadline - now);
        if (reaped && reaped_at + grace - now < wait)
            wait = std::chrono::ceil<std::chrono::milliseconds>(reaped_at + grace - now);
        ::pollfd fds[2];
        ::nfds_t n = 0;
        if (out_open) fds[n++] = {out_read.get(), POLLIN, 0};
        if (err_open) fds[n++] = {err_read.get(), POLLIN, 0};
        const int ready = ::poll(fds, n, static_cast<int>(wait.count()));
        if (ready < 0 && errno != EINTR) break;
        for (::nfds_t i = 0; ready > 0 && i < n; ++i) {
            if (!(fds[i].revents & (POLLIN | POLLHUP | POLLERR | POLLNVAL))) continue;
            const bool is_out = fds[i].fd == out_read.get();
            bool over = false;
            const bool open = is_out ? detail::drain_into(fds[i].fd, r.out, request.stdout_cap, over)
                                     : detail::drain_into(fds[i].fd, r.err, request.stderr_cap, over, true);
            if (over) (is_out ? r.out_truncated : r.err_truncated) = true;
            if (!open) (is_out ? out_open : err_open) = false;
        }
        if (r.out_truncated) break; // stderr past its cap is dropped, and the tool runs on
        if (!reaped) {
            const ::pid_t w = ::waitpid(pid, &wait_status, WNOHANG);
            if (w == pid || (w < 0 && errno == ECHILD)) {
                reaped = true;
                reaped_at = clock::now();
                if (w < 0) {
                    wait_status = 0;
                    lost = true;
                }
            }
        }
    }
    if (r.status == tool_status::exited && r.out_truncated) r.status = tool_status::truncated;

    // Stop whatever is left of the group: the tool on timeout or cap, stray children
    // holding the pipes after it exited.
    if (r.status == tool_status::timed_out || r.status == tool_status::truncated ||
        r.status == tool_status::cancelled)
        kill_group();
    else if (reaped && (out_open || err_open)) ::kill(-pid, SIGKILL);
    if (!reaped) {
        // Not yet exited (its pipes closed): wait for it within the deadline; kill it when
        // the deadline passes or a stop is asked for.
        if (!killed && !detail::reap_until(pid, deadline, wait_status, lost, request.stop)) {
            r.status = request.stop.stop_requested() ? tool_status::cancelled : tool_status::timed_out;
            kill_group();
        }
        if (killed) {
            // SIGKILL cannot be refused, but a process stuck in the kernel dies only when
            // the kernel lets it; do not wait for that forever.
            if (!detail::reap_until(pid, clock::now() + std::chrono::seconds(2), wait_status, lost)) {
                r.abandoned = true;
                detail::abandoned_children::instance().add(pid); // reaped by a later run
            }
        }
    }
    r.exit_unknown = lost && r.status == tool_status::exited;
    if (r.status == tool_status::exited) {
        if (WIFSIGNALED(wait_status)) {
            r.status = tool_status::signalled;
            r.signal = WTERMSIG(wait_status);
        } else {
            r.status = tool_status::exited;
            r.exit_code = WIFEXITED(wait_status) ? WEXITSTATUS(wait_status) : 0;
        }
    }
    return finish();
}

#endif // AI_HWACCEL_OS_LINUX || AI_HWACCEL_OS_MACOS

AI_HWACCEL_NAMESPACE_END
