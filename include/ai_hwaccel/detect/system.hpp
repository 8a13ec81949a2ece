// ai-hwaccel detect: the system a probe reads, and the real one.
//
// Probes never open files themselves: they ask a `system_view`, which can be the live
// machine (`host_system`, optionally rooted at a directory that is laid out like a
// machine's root, for captured trees and tests) or anything else that models the concept.
// Every read is bounded: a file larger than the cap is cut and says so.
//
// This header covers files, directories, links and the environment. Running tools (with
// timeouts, output caps and no shell) joins the concept with the detection engine.
#pragma once

#include "ai_hwaccel/config.hpp"

#include <concepts>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
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
/// decides what they resolve to.
template <class S>
concept system_view = requires(const S& s, std::string_view path, std::size_t cap) {
    { s.read_file(path, cap) } -> std::same_as<file_read>;
    { s.list_dir(path) } -> std::same_as<std::optional<std::vector<std::string>>>;
    { s.read_link(path) } -> std::same_as<std::optional<std::string>>;
    { s.exists(path) } -> std::same_as<bool>;
    { s.env(path) } -> std::same_as<std::optional<std::string>>;
};

/// Default cap for one file: sysfs values are a page at most; /proc/cpuinfo on a
/// 256-thread server is ~400 KiB.
inline constexpr std::size_t default_read_cap = 4u << 20;

#if AI_HWACCEL_OS_LINUX || AI_HWACCEL_OS_MACOS
/// The live machine, seen through an optional root prefix ("" or "/" is the real root).
/// Environment variables always come from this process.
class host_system {
public:
    host_system() = default;
    explicit host_system(std::string root) : root_(std::move(root)) {
        while (!root_.empty() && root_.back() == '/') root_.pop_back();
    }
    const std::string& root() const noexcept { return root_; }

    file_read read_file(std::string_view path, std::size_t cap = default_read_cap) const {
        file_read r;
        const std::string full = resolve(path);
        const int fd = ::open(full.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
        if (fd < 0) {
            r.status = status_from_errno(errno);
            return r;
        }
        // Only regular files and kernel attribute files; never block on a FIFO or device.
        struct stat st {};
        if (::fstat(fd, &st) != 0 || !(S_ISREG(st.st_mode))) {
            ::close(fd);
            r.status = read_status::error;
            return r;
        }
        char buf[8192];
        r.status = read_status::ok;
        for (;;) {
            const std::size_t want = cap - r.data.size() + 1 < sizeof buf ? cap - r.data.size() + 1 : sizeof buf;
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
        }
        ::close(fd);
        return r;
    }

    std::optional<std::vector<std::string>> list_dir(std::string_view path) const {
        const std::string full = resolve(path);
        DIR* d = ::opendir(full.c_str());
        if (!d) return std::nullopt;
        std::vector<std::string> names;
        while (const dirent* e = ::readdir(d)) {
            const std::string_view n = e->d_name;
            if (n != "." && n != "..") names.emplace_back(n);
        }
        ::closedir(d);
        return names;
    }

    std::optional<std::string> read_link(std::string_view path) const {
        const std::string full = resolve(path);
        char buf[4096];
        const ::ssize_t n = ::readlink(full.c_str(), buf, sizeof buf);
        if (n < 0 || static_cast<std::size_t>(n) >= sizeof buf) return std::nullopt;
        return std::string(buf, static_cast<std::size_t>(n));
    }

    bool exists(std::string_view path) const {
        struct stat st {};
        return ::stat(resolve(path).c_str(), &st) == 0;
    }

    std::optional<std::string> env(std::string_view name) const {
        const std::string n(name);
        if (const char* v = std::getenv(n.c_str())) return std::string(v);
        return std::nullopt;
    }

private:
    std::string resolve(std::string_view path) const {
        std::string full = root_;
        if (path.empty() || path.front() != '/') full += '/';
        full += path;
        return full;
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
};
static_assert(system_view<host_system>);
#endif

AI_HWACCEL_NAMESPACE_END
