// ai-hwaccel detect: the system a probe reads, and the real one.
//
// Probes never open files themselves: they ask a `system_view`, which can be the live
// machine (`host_system`, optionally rooted at a directory that is laid out like a
// machine's root, for captured trees and tests) or anything else that models the concept.
// Every read is bounded: a file larger than the cap is cut and says so.
//
// Tools are run through the view too: the live host runs them with detect/process.hpp's
// runner (no shell, timeouts, byte caps); a rooted host never runs anything and replays
// captured outputs instead, from a folder inside the tree (see `capture_index_path`).
#pragma once

#include "ai_hwaccel/config.hpp"
#include "ai_hwaccel/core/text.hpp"
#include "ai_hwaccel/detect/process.hpp"

#include <algorithm>
#include <charconv>
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#if AI_HWACCEL_OS_LINUX || AI_HWACCEL_OS_MACOS
#include <cerrno>
#include <cstdlib>
#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#endif

AI_HWACCEL_NAMESPACE_BEGIN

/// Outcome of reading a file.
enum class read_status : std::uint8_t { ok, truncated, not_found, permission_denied, error };

struct file_read {
    read_status status = read_status::error;
    std::string data; ///< what was read (also for `truncated`: the first `cap` bytes)
    bool ok() const noexcept { return status == read_status::ok || status == read_status::truncated; }
};

/// What a probe may ask of the machine. Paths are absolute ("/proc/meminfo"); a view
/// decides what they resolve to. Beyond the concept a view may say whether it replays
/// captured tools (`replays_tools()`, before a probe loads a library) and may share scans
/// among the probes of one detection (`sharing(s)` returning the same view type, and
/// `scans()`; host_system has both).
template <class S>
concept system_view = requires(const S& s, std::string_view path, std::size_t cap) {
    { s.read_file(path, cap) } -> std::same_as<file_read>;
    { s.list_dir(path) } -> std::same_as<std::optional<std::vector<std::string>>>;
    { s.read_link(path) } -> std::same_as<std::optional<std::string>>;
    { s.exists(path) } -> std::same_as<bool>;
    { s.env(path) } -> std::same_as<std::optional<std::string>>;
    { s.run(std::declval<const tool_request&>()) } -> std::same_as<tool_result>;
};

/// Default cap for one file: sysfs values are a page at most; /proc/cpuinfo on a
/// 256-thread server is ~400 KiB.
inline constexpr std::size_t default_read_cap = 4u << 20;

// ---------------------------------------------------------------------------------------
// Captured tool outputs

/// Where a machine tree keeps its captured tool outputs, relative to its root. The folder
/// holds the outputs and an index, one line per captured run:
///
///     # comment
///     <outcome> TAB <stdout file> TAB <command line>
///
/// `outcome` is the exit status ("0"), "timeout", "signal:<N>" or "not-executable"; the
/// stdout file is a plain name inside the folder ("-" for none); the command line is the
/// argument vector joined by single spaces, the tool by its file name ("nvidia-smi -L").
/// A tool with no line is "not found" on that machine.
inline constexpr std::string_view capture_index_path = "/ai-hwaccel-tools/index";
inline constexpr std::string_view capture_dir_path = "/ai-hwaccel-tools";

struct capture_entry {
    std::string command_line;
    std::string stdout_file; ///< empty for "-"
    tool_status status = tool_status::exited;
    int exit_code = 0;
    int signal = 0;
    friend bool operator==(const capture_entry&, const capture_entry&) = default;
};

struct capture_index {
    std::vector<capture_entry> entries;
    std::vector<std::size_t> bad_lines; ///< 1-based numbers of lines not understood

    const capture_entry* find(std::string_view command_line) const noexcept {
        for (const auto& e : entries)
            if (e.command_line == command_line) return &e;
        return nullptr;
    }
};

/// The command line a request is keyed by: the tool's file name, then its arguments.
inline std::string command_line_of(const std::vector<std::string>& argv) {
    std::string line;
    for (std::size_t i = 0; i < argv.size(); ++i) {
        std::string_view a = argv[i];
        if (i == 0)
            if (const auto slash = a.rfind('/'); slash != std::string_view::npos) a.remove_prefix(slash + 1);
        if (i) line += ' ';
        line += a;
    }
    return line;
}

/// Parses a capture index. Lines it cannot read are listed, never fatal.
inline capture_index parse_capture_index(std::string_view text) {
    capture_index idx;
    std::size_t number = 0;
    while (!text.empty()) {
        ++number;
        const auto nl = text.find('\n');
        std::string_view line = text.substr(0, nl);
        text = nl == std::string_view::npos ? std::string_view{} : text.substr(nl + 1);
        if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
        if (detail::trim(line).empty() || detail::trim(line).front() == '#') continue;
        const auto t1 = line.find('\t');
        const auto t2 = t1 == std::string_view::npos ? t1 : line.find('\t', t1 + 1);
        if (t2 == std::string_view::npos) {
            idx.bad_lines.push_back(number);
            continue;
        }
        const std::string_view outcome = line.substr(0, t1);
        const std::string_view file = line.substr(t1 + 1, t2 - t1 - 1);
        const std::string_view command = detail::trim(line.substr(t2 + 1));
        capture_entry e;
        bool ok = !command.empty() && !file.empty();
        // A plain file name: no folders, no way out of the capture folder.
        if (file == "."sv || file == ".."sv || file.find('/') != std::string_view::npos ||
            file.find('\0') != std::string_view::npos)
            ok = false;
        auto number_of = [](std::string_view s, int& v) {
            const auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
            return ec == std::errc{} && p == s.data() + s.size();
        };
        if (outcome == "timeout"sv) e.status = tool_status::timed_out;
        else if (outcome == "not-executable"sv) e.status = tool_status::not_executable;
        else if (outcome.starts_with("signal:")) {
            e.status = tool_status::signalled;
            ok = ok && number_of(outcome.substr(7), e.signal) && e.signal > 0 && e.signal < 128;
        } else
            ok = ok && number_of(outcome, e.exit_code) && e.exit_code >= 0 && e.exit_code < 256;
        if (!ok) {
            idx.bad_lines.push_back(number);
            continue;
        }
        e.command_line = std::string(command);
        if (file != "-"sv) e.stdout_file = std::string(file);
        idx.entries.push_back(std::move(e));
    }
    return idx;
}

/// Sees every answer a host_system gives its callers (detect/record.hpp records them for
/// `ai-hwaccel gather`). Set with `host_system::observed_by`; the host calls it after each
/// call, from the detector's parallel probes, so an observer synchronises itself. The
/// host's own inner reads (a replayed tool's index and output, the captured environment)
/// are not reported: only what a probe asked and what it was told.
class system_observer {
public:
    virtual void on_read(std::string_view path, const file_read& r) = 0;
    virtual void on_list(std::string_view path, const std::optional<std::vector<std::string>>& r) = 0;
    virtual void on_link(std::string_view path, const std::optional<std::string>& r) = 0;
    virtual void on_exists(std::string_view path, bool r) = 0;
    virtual void on_env(std::string_view name, const std::optional<std::string>& r) = 0;
    virtual void on_run(const tool_request& request, const tool_result& r) = 0;

protected:
    system_observer() = default;
    system_observer(const system_observer&) = default;
    system_observer& operator=(const system_observer&) = default;
    ~system_observer() = default;
};

namespace detail {
struct shared_scans; // detect/topology.hpp
} // namespace detail

#if AI_HWACCEL_OS_LINUX || AI_HWACCEL_OS_MACOS
/// The live machine, seen through an optional root prefix ("" or "/" is the real root).
/// Environment variables always come from this process.
class host_system {
public:
    host_system() = default;
    /// A machine tree at `root`: files are read below it, and tools are replayed from its
    /// captures instead of run. "" and "/" mean the live machine.
    explicit host_system(std::string root, tool_search search = {})
        : root_(std::move(root)), search_(std::move(search)) {
        while (!root_.empty() && root_.back() == '/') root_.pop_back();
    }
    const std::string& root() const noexcept { return root_; }
    /// True when tools are replayed from captures rather than run.
    bool replays_tools() const noexcept { return !root_.empty(); }
    /// The same view, reporting every answer to `o` (which must outlive the copy).
    host_system observed_by(system_observer& o) const {
        host_system h = *this;
        h.observer_ = &o;
        return h;
    }
    /// The same view, sharing `s` (which must outlive the copy) among the probes of one
    /// detection: what several of them scan alike, the PCI bus, is scanned once
    /// (detector::run_timed_with makes one for each detection).
    host_system sharing(detail::shared_scans& s) const {
        host_system h = *this;
        h.scans_ = &s;
        return h;
    }
    /// The scans this view shares, or nullptr.
    detail::shared_scans* scans() const noexcept { return scans_; }

    file_read read_file(std::string_view path, std::size_t cap = default_read_cap) const {
        file_read r = read_file_quietly(path, cap);
        if (observer_) observer_->on_read(path, r);
        return r;
    }
    std::optional<std::vector<std::string>> list_dir(std::string_view path) const {
        auto r = list_dir_quietly(path);
        if (observer_) observer_->on_list(path, r);
        return r;
    }
    std::optional<std::string> read_link(std::string_view path) const {
        auto r = read_link_quietly(path);
        if (observer_) observer_->on_link(path, r);
        return r;
    }
    bool exists(std::string_view path) const {
        const bool r = exists_quietly(path);
        if (observer_) observer_->on_exists(path, r);
        return r;
    }
    /// The live host: this process's environment. A machine tree: the captured process's,
    /// from `<root>/proc/self/environ` (NUL-separated as the kernel writes it, or one
    /// NAME=value per line as `env` prints it), and none at all without that file; the
    /// caller's own variables never leak into another machine's detection.
    std::optional<std::string> env(std::string_view name) const {
        auto r = env_quietly(name);
        if (observer_) observer_->on_env(name, r);
        return r;
    }
    /// Runs a tool on the live machine; replays its capture in a machine tree.
    tool_result run(const tool_request& request) const {
        tool_result r = replays_tools() ? replay(request) : run_tool(request, search_);
        if (observer_) observer_->on_run(request, r);
        return r;
    }

    // The same answers, never reported to an observer (an observer asking for itself).
    file_read read_file_quietly(std::string_view path, std::size_t cap = default_read_cap) const {
        file_read r;
        const auto full = resolve(path, true);
        if (!full) {
            r.status = read_status::error; // too many links, as the kernel's ELOOP
            return r;
        }
        // Detection reads a few hundred files, and on some virtual machines each system
        // call costs microseconds, so this machine's own /proc and /sys go without two of
        // them: the check below, since those hold only kernel files, never a FIFO or a
        // device; and the read that finds the end of a sysfs attribute, which gives all
        // it has (at most a page) to the first read, so a first read shorter than a page
        // is the whole file. (Larger binary attributes come a page per read: read on.)
        const bool live_kernel_file = root_.empty() && (path.starts_with("/sys/") || path.starts_with("/proc/"));
        const bool live_sysfs = live_kernel_file && path.starts_with("/sys/");
        // Otherwise only regular files, checked before the open: opening a FIFO wakes its
        // writer and opening a device runs its driver (a tree someone sent may hold both).
        if (!live_kernel_file) {
            struct stat st {};
            const int failed = ::stat(full->c_str(), &st) != 0 ? errno : 0;
            if (failed != 0 || !S_ISREG(st.st_mode)) {
                r.status = failed != 0 ? status_from_errno(failed) : read_status::error;
                return r;
            }
        }
        const int fd = ::open(full->c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
        if (fd < 0) {
            r.status = status_from_errno(errno);
            return r;
        }
        char buf[8192];
        r.status = read_status::ok;
        for (bool first = true;; first = false) {
            // One byte past the cap tells a file of exactly `cap` bytes from a longer one
            // (the left count is compared before adding it: a cap of SIZE_MAX would wrap).
            const std::size_t left = cap - r.data.size();
            const std::size_t want = left < sizeof buf - 1 ? left + 1 : sizeof buf;
            const ::ssize_t n = ::read(fd, buf, want);
            if (n < 0) {
                if (errno == EINTR) continue;
                r.status = status_from_errno(errno);
                break;
            }
            if (n == 0) break;
            r.data.append(buf, static_cast<std::size_t>(n));
            if (r.data.size() > cap) {
                r.data.resize(cap);
                r.status = read_status::truncated;
                break;
            }
            if (live_sysfs && first && static_cast<std::size_t>(n) < want && n < 4096) break;
        }
        ::close(fd);
        return r;
    }

    std::optional<std::vector<std::string>> list_dir_quietly(std::string_view path) const {
        const auto full = resolve(path, true);
        if (!full) return std::nullopt;
        DIR* d = ::opendir(full->c_str());
        if (!d) return std::nullopt;
        std::vector<std::string> names;
        while (const dirent* e = ::readdir(d)) {
            const std::string_view n = e->d_name;
            if (n != "."sv && n != ".."sv) names.push_back(std::string(n));
        }
        ::closedir(d);
        return names;
    }

    std::optional<std::string> read_link_quietly(std::string_view path) const {
        const auto full = resolve(path, false);
        if (!full) return std::nullopt;
        char buf[4096];
        const ::ssize_t n = ::readlink(full->c_str(), buf, sizeof buf);
        if (n < 0 || static_cast<std::size_t>(n) >= sizeof buf) return std::nullopt;
        return std::string(buf, static_cast<std::size_t>(n));
    }

    bool exists_quietly(std::string_view path) const {
        struct stat st {};
        const auto full = resolve(path, true);
        return full && ::stat(full->c_str(), &st) == 0;
    }

    std::optional<std::string> env_quietly(std::string_view name) const {
        if (replays_tools()) return captured_env(name);
        const std::string n(name);
        if (const char* v = std::getenv(n.c_str())) return std::string(v);
        return std::nullopt;
    }

private:
    tool_result replay(const tool_request& request) const {
        tool_result r;
        if (request.argv.empty()) return r;
        auto index_file = read_file_quietly(capture_index_path, 1u << 20);
        if (!index_file.ok()) return r; // no captures: every tool is absent
        // An index cut at the cap ends in part of a line, which could name another command.
        if (index_file.status == read_status::truncated) index_file.data.erase(index_file.data.rfind('\n') + 1);
        const capture_index idx = parse_capture_index(index_file.data);
        const capture_entry* e = idx.find(command_line_of(request.argv));
        if (!e) return r;
        r.status = e->status;
        r.exit_code = e->exit_code;
        r.signal = e->signal;
        if (!e->stdout_file.empty()) {
            std::string path(capture_dir_path);
            path += '/';
            path += e->stdout_file;
            r.path = root_ + path;
            auto out = read_file_quietly(path, request.stdout_cap);
            if (!out.ok()) {
                // An index that names a missing file is a broken capture, reported as a
                // tool that could not be run.
                r.status = tool_status::not_executable;
                return r;
            }
            r.out = std::move(out.data);
            if (out.status == read_status::truncated) {
                r.out_truncated = true;
                if (r.status == tool_status::exited) r.status = tool_status::truncated;
            }
        }
        return r;
    }

    std::optional<std::string> captured_env(std::string_view name) const {
        if (name.empty() || name.find('=') != std::string_view::npos) return std::nullopt;
        const auto r = read_file_quietly("/proc/self/environ"sv, 1u << 20);
        if (!r.ok()) return std::nullopt;
        const std::string_view text = r.data;
        const char sep = text.find('\0') != std::string_view::npos ? '\0' : '\n';
        std::size_t pos = 0;
        while (pos < text.size()) {
            auto end = text.find(sep, pos);
            if (end == std::string_view::npos) end = text.size();
            std::string_view entry = text.substr(pos, end - pos);
            if (sep == '\n' && !entry.empty() && entry.back() == '\r') entry.remove_suffix(1);
            if (entry.size() > name.size() && entry.starts_with(name) && entry[name.size()] == '=')
                return std::string(entry.substr(name.size() + 1));
            pos = end + 1;
        }
        return std::nullopt;
    }

    // The host path for `path`. Inside a machine tree a path means what it would mean to a
    // process chrooted at the tree's root: links are followed here, one component at a
    // time, an absolute target starting again at the root and ".." stopping at it, so a
    // tree someone else wrote cannot make detection (or `gather`, copying it) read the
    // host's own files. What comes back holds no link the kernel would follow, up to the
    // last component when `follow_last` is false (read_link reads that one). nullopt for
    // more than 40 links on the way (the kernel's ELOOP). Someone changing the tree while
    // it is read could still swap a folder for a link between these checks and the open:
    // trees are read as they were given, not defended against a concurrent writer.
    std::optional<std::string> resolve(std::string_view path, bool follow_last) const {
        if (root_.empty()) {
            if (!path.empty() && path.front() == '/') return std::string(path);
            std::string out = "/";
            out += path;
            return out;
        }
        std::string rest(path); // what is left to walk; a link's text replaces the part walked
        std::size_t pos = 0;
        std::string done = root_; // root_ itself is the host's, taken as it is
        int hops = 0;
        for (;;) {
            while (pos < rest.size() && rest[pos] == '/') ++pos;
            if (pos == rest.size()) break;
            const std::size_t end = std::min(rest.find('/', pos), rest.size());
            const std::string_view c(rest.data() + pos, end - pos);
            pos = end;
            if (c == "."sv) continue;
            if (c == ".."sv) {
                if (done.size() > root_.size()) done.resize(done.rfind('/'));
                continue;
            }
            const std::size_t before = done.size();
            done += '/';
            done += c;
            const bool last = rest.find_first_not_of('/', pos) == std::string::npos;
            if (last && !follow_last) break;
            struct stat st {};
            // Missing (or unreadable), or a file with more after it (the kernel's ENOTDIR,
            // not a ".." past it): the kernel answers for the rest as it is.
            if (::lstat(done.c_str(), &st) != 0 || (!S_ISLNK(st.st_mode) && !S_ISDIR(st.st_mode) && !last)) {
                done.append(rest, pos);
                break;
            }
            if (!S_ISLNK(st.st_mode)) continue;
            if (++hops > 40) return std::nullopt;
            char buf[4096];
            const ::ssize_t n = ::readlink(done.c_str(), buf, sizeof buf);
            if (n <= 0 || static_cast<std::size_t>(n) >= sizeof buf) return std::nullopt;
            done.resize(before);
            if (buf[0] == '/') done.resize(root_.size());
            rest.replace(0, pos, buf, static_cast<std::size_t>(n));
            pos = 0;
        }
        return done;
    }
    static read_status status_from_errno(int e) noexcept {
        switch (e) {
        case ENOENT:
        case ENOTDIR: return read_status::not_found;
        case EACCES:
        case EPERM: return read_status::permission_denied;
        default: return read_status::error;
        }
    }

    std::string root_;
    tool_search search_;
    system_observer* observer_ = nullptr;
    detail::shared_scans* scans_ = nullptr;
};
static_assert(system_view<host_system>);
#endif

AI_HWACCEL_NAMESPACE_END
