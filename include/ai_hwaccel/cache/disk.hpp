// ai-hwaccel cache: the last detection on disk, private to the user, safe to share
// between processes.
//
//     ai_hwaccel::disk_cache cache;   // $XDG_CACHE_HOME/ai-hwaccel/registry.json
//     auto reg = cache.get_or_detect([] { return ai_hwaccel::detect(); });
//
// The file is the registry's JSON (io/json.hpp) inside a small envelope:
//
//     {"format": "ai-hwaccel-registry-cache", "format_version": 2,
//      "library_version": "1.0.0", "backends": <compiled_backend_mask>,
//      "hostname": "...", "boot_id": "...", "process": "<16 hex digits>",
//      "written_at": <Unix seconds>, "registry": {...}}
//
// A file written by another machine or a previous boot (hostname, boot id), in another
// format, or that is corrupt, too large or not a regular file is *invalid*: `get_or_detect` detects again,
// replaces the file, and adds a `cache_invalid` warning to the registry it returns. A file
// older than `max_age` (or dated in the future) is simply *expired*: it is re-detected and
// replaced without a warning, since expiry is the cache's ordinary life, not a fault.
// So is a file written by another process of this boot that sees the machine otherwise
// (`process`: its device visibility variables, tool search path, CPUs or control groups
// differ, as between the ranks of a distributed job) or by a program built against another
// release or backend set of the library (library_version, backends): *other_process*,
// detected again and replaced without a warning. (Programs that take turns with one file
// replace each other's; `disk_cache_options::file_name` keeps them apart.)
//
// Safety. The folder is `$XDG_CACHE_HOME/ai-hwaccel` when that variable holds an absolute
// path, else `$HOME/.cache/ai-hwaccel`; never /tmp or any other shared folder (with
// neither variable set there is no cache). It is created with mode 0700 (never inside a
// folder of another user) and used only when it is a real directory (not a symlink) owned
// by this user and writable by no one else. Every file operation is relative to that
// opened directory: reads use O_NOFOLLOW and a size cap; writes go to a fresh temporary
// file in the same folder (O_CREAT|O_EXCL|O_NOFOLLOW, mode 0600), are fsync'd, and are
// renamed over the cache file, so readers in other processes see the old file or the new
// one, never half of one, and a symlink planted at the cache path is replaced, never
// followed; temporary files left by killed writers are removed after 10 minutes. A folder that cannot be
// created or written (read-only, full, refused) means "no cache": the registry is still
// detected and returned, with a warning, and nothing throws.
//
// Only on Linux and macOS, and only with JSON support (AI_HWACCEL_JSON=1, i.e.
// <nlohmann/json.hpp> available): without it this header declares nothing, and
// `AI_HWACCEL_HAS_DISK_CACHE` is 0 so code can check.
#pragma once

#include "ai_hwaccel/config.hpp"
#include "ai_hwaccel/io/json.hpp"

#if AI_HWACCEL_JSON && (AI_HWACCEL_OS_LINUX || AI_HWACCEL_OS_MACOS)
#define AI_HWACCEL_HAS_DISK_CACHE 1
#else
#define AI_HWACCEL_HAS_DISK_CACHE 0
#endif

#if AI_HWACCEL_HAS_DISK_CACHE

#include "ai_hwaccel/core/warning.hpp"
#include "ai_hwaccel/detect/merge.hpp"
#include "ai_hwaccel/registry.hpp"

#include <nlohmann/json.hpp>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

AI_HWACCEL_NAMESPACE_BEGIN

/// The envelope's own version; bumped when its shape changes incompatibly (2: the
/// `process` key).
inline constexpr int disk_cache_format_version = 2;
inline constexpr std::string_view disk_cache_format_name = "ai-hwaccel-registry-cache";

/// What makes a cache file this machine's, this boot's, and this kind of process's.
struct host_identity {
    std::string hostname;
    std::string boot_id; ///< /proc/sys/kernel/random/boot_id; empty where the OS has none
    /// A digest of what detection reads of the calling process rather than of the machine
    /// (process_fingerprint): two processes of one boot may see different devices.
    std::string process;

    friend bool operator==(const host_identity&, const host_identity&) = default;
};

/// The environment variables detection reads: the device visibility masks
/// (visibility_rules, for every backend), and the others the probes consult: the
/// tool search path and NVML's library path, the device order and hierarchy settings of
/// CUDA, Level Zero and Neuron, and the container markers; and those the tools it runs
/// obey (they inherit the environment): the Vulkan loader's driver selection, which
/// decides what vulkaninfo lists.
inline constexpr std::string_view detection_environment[] = {
    "CUDA_VISIBLE_DEVICES",     "ROCR_VISIBLE_DEVICES",     "HIP_VISIBLE_DEVICES",
    "HABANA_VISIBLE_DEVICES",   "NEURON_RT_VISIBLE_CORES",  "TPU_VISIBLE_CHIPS",
    "ZE_AFFINITY_MASK",         "CUDA_DEVICE_ORDER",        "ZE_FLAT_DEVICE_HIERARCHY",
    "NEURON_LOGICAL_NC_CONFIG", "PATH",                     "LD_LIBRARY_PATH",
    "container",                "KUBERNETES_SERVICE_HOST",  "VK_DRIVER_FILES",
    "VK_ICD_FILENAMES",         "VK_ADD_DRIVER_FILES",      "VK_LOADER_DRIVERS_SELECT",
    "VK_LOADER_DRIVERS_DISABLE",
};

namespace detail {
constexpr bool names_every_visibility_variable() noexcept {
    for (const auto& rule : visibility_rules) {
        bool named = false;
        for (const auto v : detection_environment) named = named || v == rule.variable;
        if (!named) return false;
    }
    return true;
}
static_assert(names_every_visibility_variable(), "detection_environment: a visibility variable is missing");

/// The first `cap` bytes of the file at `path` (more only by the last read's size), or ""
/// when it cannot be opened; never follows a symbolic link at `path`.
inline std::string read_capped_file(const char* path, std::size_t cap) {
    std::string s;
    const int fd = ::open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NOCTTY);
    if (fd < 0) return s;
    char buf[4096];
    for (;;) {
        const ::ssize_t n = ::read(fd, buf, sizeof buf);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) break;
        s.append(buf, static_cast<std::size_t>(n));
        if (s.size() > cap) break;
    }
    ::close(fd);
    return s;
}

inline std::string read_small_file(const char* path) {
    std::string s = read_capped_file(path, 4096);
    while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) s.pop_back();
    return s;
}

/// The line of /proc/self/status that starts with `key` (its value), or "".
inline std::string status_line(std::string_view key) {
    const std::string s = read_capped_file("/proc/self/status", 64u << 10);
    for (std::size_t at = 0; at < s.size();) {
        std::size_t end = s.find('\n', at);
        if (end == std::string::npos) end = s.size();
        const std::string_view line(s.data() + at, end - at);
        if (line.starts_with(key)) return std::string(line.substr(key.size()));
        at = end + 1;
    }
    return {};
}
} // namespace detail

/// A digest (64-bit FNV-1a, in hex) of what detection reads of the calling process: the
/// detection_environment variables, set or not; the CPUs it may run on
/// (Cpus_allowed_list, which gives the usable threads); its control groups
/// (/proc/self/cgroup, which give the memory limit); and its mount namespace (a
/// container's own /dev and /sys). Processes of one boot that differ in
/// any of these (the ranks of a distributed job, each with its own CUDA_VISIBLE_DEVICES and
/// CPUs) do not share a cached detection.
inline std::string process_fingerprint() {
    std::uint64_t h = 0xcbf29ce484222325ull;
    const auto mix = [&h](std::string_view text) {
        for (const char c : text) {
            h ^= static_cast<unsigned char>(c);
            h *= 0x100000001b3ull;
        }
        h ^= 0xff; // a separator no text holds, so ("ab","c") and ("a","bc") differ
        h *= 0x100000001b3ull;
    };
    for (const std::string_view name : detection_environment) {
        mix(name);
        // getenv is read-only here, as in default_disk_cache_folder.
        const char* v = std::getenv(std::string(name).c_str());
        mix(v ? std::string_view("=") : std::string_view("unset"));
        mix(v ? std::string_view(v) : std::string_view());
    }
    mix(detail::status_line("Cpus_allowed_list:"));
    mix(detail::read_capped_file("/proc/self/cgroup", 64u << 10));
    // The mount namespace ("mnt:[4026531840]"): containers that share a cache folder, a
    // host name and a private cgroup namespace ("0::/" in each) still see other devices.
    char ns[64] = {};
    const ::ssize_t n = ::readlink("/proc/self/ns/mnt", ns, sizeof ns - 1);
    mix(n > 0 ? std::string_view(ns, static_cast<std::size_t>(n)) : std::string_view());
    char hex[17];
    std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(h));
    return hex;
}

/// This machine, boot and process, as the disk cache records them.
inline host_identity current_host_identity() {
    host_identity id;
    char name[256] = {};
    if (::gethostname(name, sizeof name - 1) == 0) id.hostname = name;
    id.boot_id = detail::read_small_file("/proc/sys/kernel/random/boot_id");
    id.process = process_fingerprint();
    return id;
}

/// The default cache folder: `$XDG_CACHE_HOME/ai-hwaccel` when XDG_CACHE_HOME is an
/// absolute path (the XDG spec says relative values are to be ignored), else
/// `$HOME/.cache/ai-hwaccel` when HOME is absolute; empty (no cache) otherwise.
inline std::string default_disk_cache_folder() {
    // getenv is read-only here; callers that modify the environment concurrently are
    // already outside what POSIX allows.
    const char* xdg = std::getenv("XDG_CACHE_HOME");
    if (xdg && xdg[0] == '/') return std::string(xdg) + "/ai-hwaccel";
    const char* home = std::getenv("HOME");
    if (home && home[0] == '/' && home[1] != '\0') return std::string(home) + "/.cache/ai-hwaccel";
    return {};
}

struct disk_cache_options {
    /// The folder; empty means default_disk_cache_folder().
    std::string folder;
    /// The file's name inside it (a plain name: no '/'); distinct callers that detect
    /// different things (another backend mask, a machine tree) should use distinct names.
    std::string file_name = "registry.json";
    /// How long a stored detection stays usable.
    std::chrono::seconds max_age{std::chrono::minutes(5)};
    /// Files larger than this are refused unread (a registry of hundreds of devices is
    /// well under 1 MiB).
    std::size_t max_bytes = std::size_t{8} << 20;
    /// The identity files must carry; empty means current_host_identity(), taken anew by
    /// each load, store and get_or_detect: detection reads the environment when it runs,
    /// so a mask set after the cache was made is the caller's then.
    std::optional<host_identity> identity;
    /// The wall clock (tests set their own); empty means std::chrono::system_clock.
    std::function<std::chrono::system_clock::time_point()> now;
};

/// Why a load did not give a registry.
enum class disk_cache_status : std::uint8_t {
    hit,         ///< a valid, fresh registry was read
    missing,     ///< no file yet
    expired,     ///< a valid file, too old (or dated in the future)
    /// A valid file of this boot, written by a process that sees the machine otherwise
    /// (host_identity::process differs: its visibility variables, tool path, CPUs or
    /// control groups) or by a program built against another release or backend set of
    /// the library: detected again and replaced, without a warning.
    other_process,
    invalid,     ///< corrupt, foreign, newer, too large, not a regular file
    unavailable, ///< no usable folder (unsafe, unset, unreadable)
};

constexpr std::string_view to_string(disk_cache_status s) noexcept {
    switch (s) {
    case disk_cache_status::hit: return "hit";
    case disk_cache_status::missing: return "missing";
    case disk_cache_status::expired: return "expired";
    case disk_cache_status::other_process: return "other_process";
    case disk_cache_status::invalid: return "invalid";
    case disk_cache_status::unavailable: return "unavailable";
    }
    return "invalid";
}

struct disk_cache_load {
    disk_cache_status status = disk_cache_status::missing;
    std::optional<accelerator_registry> registry; ///< set on a hit
    std::vector<warning> warnings;                ///< why it was invalid or unavailable
};

class disk_cache {
public:
    disk_cache() : disk_cache(disk_cache_options{}) {}
    explicit disk_cache(disk_cache_options options) : options_(std::move(options)) {
        if (options_.folder.empty()) options_.folder = default_disk_cache_folder();
        if (!options_.now) options_.now = [] { return std::chrono::system_clock::now(); };
    }

    const std::string& folder() const noexcept { return options_.folder; }
    /// The cache file's full path (for messages; never opened by path).
    std::string path() const { return options_.folder + "/" + options_.file_name; }
    const disk_cache_options& options() const noexcept { return options_; }

    /// The identity this cache's files carry now (disk_cache_options::identity).
    host_identity identity() const { return options_.identity ? *options_.identity : current_host_identity(); }

    /// Reads the cache file. Never throws (except std::bad_alloc), never follows a symlink.
    disk_cache_load load() const { return load(identity()); }

    /// Writes `reg` atomically. Returns the warnings of a write that did not happen (empty
    /// on success). Never throws (except std::bad_alloc).
    std::vector<warning> store(const accelerator_registry& reg) const { return store(reg, identity()); }

    /// The cached registry when there is a valid, fresh one; otherwise `detect()`'s,
    /// stored for next time, carrying a `cache_invalid` (or I/O) warning when the file was
    /// invalid or the cache unusable. The file never holds those cache warnings. The
    /// identity is taken once, before `detect()` runs, for the load and the store.
    template <class Detect>
    accelerator_registry get_or_detect(Detect&& detect) const {
        const host_identity id = identity();
        disk_cache_load loaded = load(id);
        if (loaded.status == disk_cache_status::hit) return std::move(*loaded.registry);
        accelerator_registry fresh = std::forward<Detect>(detect)();
        std::vector<warning> extra = std::move(loaded.warnings);
        if (loaded.status != disk_cache_status::unavailable) {
            auto w = store(fresh, id);
            for (auto& x : w) extra.push_back(std::move(x));
        }
        for (auto& w : extra) fresh.add(std::move(w));
        return fresh;
    }

    /// Removes the cache file (not the folder); true when there is none afterwards.
    bool clear() const {
        std::vector<warning> ignored;
        dir_handle dir = open_folder(false, ignored);
        if (!dir) return true;
        return ::unlinkat(dir.fd, options_.file_name.c_str(), 0) == 0 || errno == ENOENT;
    }

private:
    disk_cache_load load(const host_identity& id) const {
        disk_cache_load out;
        dir_handle dir = open_folder(false, out.warnings);
        if (!dir) {
            // No folder yet is an empty cache; a refused one is no cache.
            out.status = out.warnings.empty() ? disk_cache_status::missing : disk_cache_status::unavailable;
            return out;
        }
        const int fd = ::openat(dir.fd, options_.file_name.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NOCTTY | O_NONBLOCK);
        if (fd < 0) {
            const int e = errno;
            if (e == ENOENT) out.status = disk_cache_status::missing;
            else if (e == ELOOP) invalid(out, "is a symbolic link; not followed");
            // Unreadable (mode 0000) in our own private folder: replaced like a corrupt
            // file, the rename over it needing only the folder, not reported on every call.
            else invalid(out, "cannot be opened: " + errno_text(e));
            return out;
        }
        fd_closer closer{fd};
        struct stat st {};
        if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) return invalid(out, "is not a regular file");
        if (static_cast<std::uint64_t>(st.st_size) > options_.max_bytes)
            return invalid(out, "is larger than " + std::to_string(options_.max_bytes) + " bytes");
        std::string text;
        if (!read_capped(fd, text)) return invalid(out, "could not be read completely");
        return parse(text, id, out);
    }

    std::vector<warning> store(const accelerator_registry& reg, const host_identity& id) const {
        std::vector<warning> warnings;
        dir_handle dir = open_folder(true, warnings);
        if (!dir) return warnings;
        const std::string text = envelope(reg, id);

        static std::atomic<std::uint64_t> counter{0};
        int fd = -1;
        std::string temp;
        for (int attempt = 0; attempt < 16 && fd < 0; ++attempt) {
            const auto ticks = std::chrono::steady_clock::now().time_since_epoch().count();
            temp = temporary_prefix() + std::to_string(::getpid()) + "." +
                   std::to_string(counter.fetch_add(1, std::memory_order_relaxed)) + "." +
                   std::to_string(static_cast<std::uint64_t>(ticks) & 0xffffff) + ".tmp";
            fd = ::openat(dir.fd, temp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY, 0600);
            if (fd < 0 && errno != EEXIST) break;
        }
        if (fd < 0) {
            const int e = errno;
            warnings.push_back(warn(e == EACCES || e == EPERM || e == EROFS ? warning_kind::permission_denied
                                                                            : warning_kind::read_error,
                                    "not written (no cache): cannot create a file in " + options_.folder + ": " +
                                        errno_text(e)));
            return warnings;
        }
        bool ok = true;
        int error = 0;
        {
            fd_closer closer{fd};
            // O_CREAT's mode is filtered by the umask; make it exactly 0600 either way.
            if (::fchmod(fd, 0600) != 0) ok = false;
            std::size_t done = 0;
            while (ok && done < text.size()) {
                const ::ssize_t n = ::write(fd, text.data() + done, text.size() - done);
                if (n < 0) {
                    if (errno == EINTR) continue;
                    ok = false;
                    break;
                }
                done += static_cast<std::size_t>(n);
            }
            if (ok && ::fsync(fd) != 0) ok = false;
            if (!ok) error = errno;
        }
        if (ok && ::renameat(dir.fd, temp.c_str(), dir.fd, options_.file_name.c_str()) != 0) {
            error = errno;
            // A folder at the cache file's name (an invalid cache): an empty one is removed
            // and the rename tried again; one with something in it stays, and says so.
            if ((error == EISDIR || error == ENOTEMPTY || error == EEXIST) &&
                ::unlinkat(dir.fd, options_.file_name.c_str(), AT_REMOVEDIR) == 0 &&
                ::renameat(dir.fd, temp.c_str(), dir.fd, options_.file_name.c_str()) == 0)
                error = 0;
            ok = error == 0;
        }
        if (!ok) {
            ::unlinkat(dir.fd, temp.c_str(), 0);
            warnings.push_back(warn(warning_kind::read_error, "not written: " + errno_text(error)));
            return warnings;
        }
        ::fsync(dir.fd); // make the rename itself durable; a failure here loses nothing
        sweep_stale_temporaries(dir.fd);
        return warnings;
    }

    struct fd_closer {
        int fd;
        explicit fd_closer(int f) noexcept : fd(f) {}
        fd_closer(const fd_closer&) = delete;
        fd_closer& operator=(const fd_closer&) = delete;
        ~fd_closer() {
            if (fd >= 0) ::close(fd);
        }
    };
    struct dir_handle {
        int fd = -1;
        dir_handle() = default;
        explicit dir_handle(int f) : fd(f) {}
        dir_handle(dir_handle&& o) noexcept : fd(std::exchange(o.fd, -1)) {}
        dir_handle& operator=(dir_handle&&) = delete;
        ~dir_handle() {
            if (fd >= 0) ::close(fd);
        }
        explicit operator bool() const noexcept { return fd >= 0; }
    };

    static std::string errno_text(int e) {
        // strerror is not thread-safe and strerror_r has two incompatible signatures:
        // describe the cases a cache meets, and give the number for the rest.
        switch (e) {
        case EACCES: return "permission denied";
        case EPERM: return "operation not permitted";
        case EROFS: return "read-only file system";
        case ENOSPC: return "no space left on device";
        case ENOENT: return "no such file or directory";
        case ENOTDIR: return "not a directory";
        case ELOOP: return "symbolic link";
        case EDQUOT: return "disk quota exceeded";
        default: break;
        }
        return "errno " + std::to_string(e);
    }

    warning warn(warning_kind kind, std::string message) const {
        return warning{kind, std::nullopt, path(), std::move(message), 0};
    }

    disk_cache_load& invalid(disk_cache_load& out, std::string why) const {
        out.status = disk_cache_status::invalid;
        out.registry.reset();
        out.warnings.push_back(warn(warning_kind::cache_invalid, std::move(why) + "; detected again"));
        return out;
    }

    /// Opens (and with `create`, makes) the folder and checks it is private; the fd is
    /// what every later operation goes through, so the checked folder is the used one.
    dir_handle open_folder(bool create, std::vector<warning>& warnings) const {
        // Trailing slashes go: with one, the kernel follows a symbolic link in the last
        // component before O_NOFOLLOW is looked at ("…/link/" opens the link's target).
        std::string dir = options_.folder;
        while (dir.size() > 1 && dir.back() == '/') dir.pop_back();
        auto refuse = [&](warning_kind kind, std::string why) {
            warnings.push_back(warning{kind, std::nullopt, options_.folder,
                                       "cache folder " + std::move(why) + "; no cache used", 0});
            return dir_handle{};
        };
        if (dir.empty() || dir.front() != '/')
            return refuse(warning_kind::read_error, "unknown (neither XDG_CACHE_HOME nor HOME is an absolute path)");
        // "…/link/." and "…/link/.." name a folder through the link: the folder must be
        // named by its own last component.
        if (const auto last = std::string_view(dir).substr(dir.rfind('/') + 1); last == "."sv || last == ".."sv)
            return refuse(warning_kind::read_error, "path ends in \"" + std::string(last) + "\"; name the folder itself");
        if (options_.file_name.empty() || options_.file_name.find('/') != std::string::npos ||
            options_.file_name == "."sv || options_.file_name == ".."sv)
            return refuse(warning_kind::read_error, "file name \"" + options_.file_name + "\" is not a plain name");
        if (create) {
            // The folder and its missing parents (e.g. ~/.cache), 0700 as the XDG spec
            // wants them; never inside a folder of another user: root running with a
            // user's HOME (sudo keeping it) would leave that user a ~/.cache of root's that
            // they cannot write (pip refuses the same way). Root's own folders (/, /home)
            // are fine parents.
            const auto me = ::geteuid();
            uid_t owner = 0; // of the last folder on the way that exists: "/" is root's
            std::string above = "/";
            for (std::size_t i = dir.find('/', 1);; i = dir.find('/', i + 1)) {
                const std::string part = i == std::string::npos ? dir : dir.substr(0, i);
                struct stat pst {};
                if (::stat(part.c_str(), &pst) == 0) {
                    owner = pst.st_uid;
                    above = part;
                } else if (errno == ENOENT) {
                    if (owner != me && owner != 0)
                        return refuse(warning_kind::permission_denied,
                                      "would be made in " + above + ", which belongs to uid " + std::to_string(owner) +
                                          ", not this user (uid " + std::to_string(me) +
                                          "; root with another user's HOME?); not created");
                    if (::mkdir(part.c_str(), 0700) != 0 && errno != EEXIST) {
                        const int e = errno;
                        return refuse(e == EACCES || e == EPERM || e == EROFS ? warning_kind::permission_denied
                                                                              : warning_kind::read_error,
                                      "cannot be created (" + part + "): " + errno_text(e));
                    }
                    owner = me;
                    above = part;
                } else {
                    break; // unreadable on the way: the open below reports it
                }
                if (i == std::string::npos) break;
            }
        }
        const int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (fd < 0) {
            const int e = errno;
            if (e == ENOENT && !create) return dir_handle{}; // nothing cached yet: not a fault
            if (e == ELOOP || e == ENOTDIR) {
                // ELOOP: the last component is a symlink. ENOTDIR: a file, or a symlink to one.
                struct stat lst {};
                if (::lstat(dir.c_str(), &lst) == 0 && S_ISLNK(lst.st_mode))
                    return refuse(warning_kind::cache_invalid, "is a symbolic link, not followed");
                return refuse(warning_kind::cache_invalid, "is not a directory");
            }
            return refuse(e == EACCES || e == EPERM ? warning_kind::permission_denied : warning_kind::read_error,
                          "cannot be opened: " + errno_text(e));
        }
        dir_handle h(fd);
        struct stat st {};
        if (::fstat(fd, &st) != 0 || !S_ISDIR(st.st_mode)) return refuse(warning_kind::cache_invalid, "is not a directory");
        if (st.st_uid != ::geteuid())
            return refuse(warning_kind::cache_invalid, "is owned by uid " + std::to_string(st.st_uid) + ", not this user");
        if ((st.st_mode & (S_IWGRP | S_IWOTH)) != 0)
            return refuse(warning_kind::cache_invalid, "is writable by other users (mode " + octal(st.st_mode & 07777) + ")");
        return h;
    }

    /// How old another writer's temporary file must be before a store removes it: a write
    /// takes milliseconds, so one this old was left by a writer killed between creating and
    /// renaming it (pids are not checked: a folder shared across containers sees others').
    static constexpr std::chrono::minutes stale_temporary_age{10};

    // Removes this cache's temporary files (".<file>.<pid>.<n>.<ticks>.tmp", regular files)
    // older than stale_temporary_age; nothing else in the folder is touched.
    void sweep_stale_temporaries(int dir_fd) const {
        const int copy = ::openat(dir_fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (copy < 0) return;
        DIR* d = ::fdopendir(copy);
        if (!d) {
            ::close(copy);
            return;
        }
        const std::string prefix = temporary_prefix();
        const auto now = std::chrono::system_clock::now();
        std::vector<std::string> stale;
        while (const dirent* e = ::readdir(d)) {
            const std::string_view n = e->d_name;
            if (!n.starts_with(prefix) || !n.ends_with(".tmp")) continue;
            struct stat st {};
            if (::fstatat(dir_fd, e->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISREG(st.st_mode)) continue;
            const auto modified = std::chrono::system_clock::from_time_t(st.st_mtime);
            if (now - modified > stale_temporary_age) stale.emplace_back(n);
        }
        ::closedir(d);
        for (const auto& n : stale) ::unlinkat(dir_fd, n.c_str(), 0);
    }

    /// How this cache's temporary files start: "." and the file name, cut to 200 bytes so
    /// that the pid, counter and ticks after it stay inside the 255-byte limit of a name.
    std::string temporary_prefix() const { return "." + options_.file_name.substr(0, 200) + "."; }

    static std::string octal(unsigned long mode) {
        char buf[16];
        std::snprintf(buf, sizeof buf, "%04lo", mode);
        return buf;
    }

    bool read_capped(int fd, std::string& text) const {
        char buf[16384];
        for (;;) {
            const ::ssize_t n = ::read(fd, buf, sizeof buf);
            if (n < 0) {
                if (errno == EINTR) continue;
                return false;
            }
            if (n == 0) return true;
            text.append(buf, static_cast<std::size_t>(n));
            if (text.size() > options_.max_bytes) return false; // grew while we read
        }
    }

    std::string envelope(const accelerator_registry& reg, const host_identity& id) const {
        nlohmann::json j;
        j["format"] = disk_cache_format_name;
        j["format_version"] = disk_cache_format_version;
        j["library_version"] = version.text;
        j["backends"] = compiled_backend_mask;
        j["hostname"] = id.hostname;
        j["boot_id"] = id.boot_id;
        j["process"] = id.process;
        j["written_at"] =
            std::chrono::duration_cast<std::chrono::seconds>(options_.now().time_since_epoch()).count();
        j["registry"] = reg;
        return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
    }

    // A string as envelope() stores it: invalid UTF-8 replaced by U+FFFD.
    static std::string as_written(const std::string& s) {
        const auto stored = nlohmann::json(s).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
        return nlohmann::json::parse(stored, nullptr, false).get<std::string>();
    }

    disk_cache_load& parse(const std::string& text, const host_identity& id, disk_cache_load& out) const {
        if (text.find('\0') != std::string::npos) return invalid(out, "is corrupt (NUL byte)");
        std::string duplicate;
        const auto j = detail::json_io::parse_unique_keys(text.data(), text.data() + text.size(), duplicate);
        if (!duplicate.empty()) return invalid(out, "is corrupt (" + detail::json_io::duplicate_key_message(duplicate) + ")");
        if (j.is_discarded() || !j.is_object()) return invalid(out, "is corrupt (not a JSON object)");
        auto str = [&](const char* key) -> std::optional<std::string> {
            const auto it = j.find(key);
            if (it == j.end() || !it->is_string()) return std::nullopt;
            return it->get<std::string>();
        };
        auto integer = [&](const char* key) -> std::optional<std::int64_t> {
            const auto it = j.find(key);
            if (it == j.end() || !it->is_number_integer()) return std::nullopt;
            if (it->is_number_unsigned() && it->get<std::uint64_t>() > static_cast<std::uint64_t>(INT64_MAX))
                return std::nullopt;
            return it->get<std::int64_t>();
        };
        if (str("format") != std::string(disk_cache_format_name)) return invalid(out, "is not an ai-hwaccel cache file");
        const auto fv = integer("format_version");
        if (!fv) return invalid(out, "is corrupt (no format_version)");
        if (*fv > disk_cache_format_version)
            return invalid(out, "was written in a newer cache format (" + std::to_string(*fv) + " > " +
                                    std::to_string(disk_cache_format_version) + ")");
        // An older release's file (programs built against other headers share the default
        // file): that program's, replaced without a fault, as another version's below.
        if (*fv < disk_cache_format_version) {
            out.status = disk_cache_status::other_process;
            return out;
        }
        // The machine first: a file from another machine or boot is stale whichever
        // library wrote it.
        const auto host = str("hostname");
        const auto boot = str("boot_id");
        if (!host || !boot) return invalid(out, "is corrupt (no host identity)");
        // Compared as they were written: text that is not UTF-8 went in with U+FFFD for
        // each bad byte (envelope), and must not make every later load a miss.
        if (*host != as_written(id.hostname))
            return invalid(out, "belongs to another machine (" + *host + ")");
        if (*boot != as_written(id.boot_id)) return invalid(out, "was written before the last reboot");
        const auto lib = str("library_version");
        if (!lib) return invalid(out, "is corrupt (no library_version)");
        const auto backends = integer("backends");
        if (!backends) return invalid(out, "is corrupt (no backends)");
        // Another release or build of the library: that program's file, replaced without
        // a fault.
        if (*lib != version.text || *backends != static_cast<std::int64_t>(compiled_backend_mask)) {
            out.status = disk_cache_status::other_process;
            return out;
        }
        const auto process = str("process");
        if (!process) return invalid(out, "is corrupt (no process)");
        const auto written = integer("written_at");
        if (!written) return invalid(out, "is corrupt (no written_at)");
        const auto it = j.find("registry");
        if (it == j.end()) return invalid(out, "is corrupt (no registry)");
        auto reg = registry_from_json(*it);
        if (!reg) return invalid(out, "holds a registry that does not read: " + reg.error);

        const auto now = std::chrono::duration_cast<std::chrono::seconds>(options_.now().time_since_epoch()).count();
        // A date in the future means the clock moved back (and one before 1970 is no
        // date): the file's age is unknown. Otherwise the difference cannot overflow.
        if (*written < 0 || *written > now || now - *written >= options_.max_age.count()) {
            out.status = disk_cache_status::expired;
            return out;
        }
        if (*process != as_written(id.process)) {
            out.status = disk_cache_status::other_process;
            return out;
        }
        out.status = disk_cache_status::hit;
        out.registry = std::move(reg.registry);
        return out;
    }

    disk_cache_options options_;
};

AI_HWACCEL_NAMESPACE_END

#endif // AI_HWACCEL_HAS_DISK_CACHE
