// ai-hwaccel detect: the host memory's read bandwidth, measured on request.
//
// Decode is bound by memory bandwidth, and nothing a process can read says what the CPU's
// is: the CPU has no row in the device catalogue (its bandwidth depends on how many memory
// channels are populated and at what speed, which only SMBIOS records, readable by root
// alone), so a plan on the CPU has no decode rate. `measure_memory_bandwidth` finds out by
// reading. Each of `threads` threads fills its own slice of one buffer (so that the pages
// lie on that thread's NUMA node), then all of them read their slices at once, `passes`
// times; the fastest pass gives the figure, in decimal GB/s. It is what this process reads
// with the CPUs it may use, inside its cgroup, beside whatever else runs: a measurement
// (origin::measured), not the memory's rated peak.
//
// It is never part of detect(): it takes the buffer (by default 2 GiB, or four times the
// CPUs' last-level caches together where that is more, as STREAM asks of its arrays, so
// that the caches hold a small part of it: two EPYC 9684X hold 2.25 GiB of L3; at most a
// quarter of the memory available to the process, a container's limit included when the
// caller passes the detected host memory through bandwidth_options_for; never less than
// 64 MiB), every usable CPU for about a second, and it changes nothing but its own buffer.
// A buffer the caches could hold much of is said in `note`: the figure is then partly the
// caches'. It does not throw. A buffer that cannot be allocated is reported in
// `error`, and so is a thread that cannot be started where exceptions are on (std::thread
// reports it by throwing; built without exceptions, the standard library aborts). The
// reading is the C library's memchr (vector loads, tuned per CPU), so the figure does not
// depend on how this header was compiled.
#pragma once

#include "ai_hwaccel/config.hpp"
#include "ai_hwaccel/core/profile.hpp"
#include "ai_hwaccel/core/system_io.hpp"
#include "ai_hwaccel/core/text.hpp"
#include "ai_hwaccel/core/units.hpp"
#include "ai_hwaccel/detect/sysfs.hpp"
#include "ai_hwaccel/detect/system.hpp"
#include "ai_hwaccel/registry.hpp"

#include <algorithm>
#include <atomic>
#include <barrier>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <exception>
#include <latch>
#include <memory>
#include <new>
#include <span>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#if AI_HWACCEL_OS_LINUX
#include <sched.h>
#include <sys/mman.h>
#endif
#if AI_HWACCEL_OS_LINUX || AI_HWACCEL_OS_MACOS
#include <unistd.h>
#endif

AI_HWACCEL_NAMESPACE_BEGIN

/// What measure_memory_bandwidth reads, and with how many threads.
struct bandwidth_options {
    /// Bytes of the buffer (rounded down to whole 8-byte words per thread); 0: 2 GiB or four
    /// times `cache_bytes` where that is more, at most a quarter of `memory_available`, at
    /// least 64 MiB.
    std::uint64_t buffer_bytes = 0;
    /// Bytes of the CPUs' last-level caches together; 0: read from the machine
    /// (last_level_cache_bytes), which knows nothing where the OS does not say.
    std::uint64_t cache_bytes = 0;
    /// Bytes this process may still take: a buffer larger than this is refused, and the
    /// default one is at most a quarter of it. 0: the memory the OS reports free, which
    /// knows nothing of a container's limit; bandwidth_options_for(host memory) sets it
    /// from MemAvailable and the cgroup limit.
    std::uint64_t memory_available = 0;
    /// Threads reading at once; 0: one per CPU this process may run on (at most 1024).
    std::uint32_t threads = 0;
    /// Timed read passes over the whole buffer, after the one that fills it (1 to 1000).
    std::uint32_t passes = 5;
};

/// The outcome of measure_memory_bandwidth.
struct bandwidth_measurement {
    double gbps = 0; ///< decimal GB/s of the fastest pass; 0 when nothing was measured
    std::uint64_t bytes_per_pass = 0;
    std::uint32_t threads = 0;
    std::uint32_t passes = 0;      ///< read passes timed
    double fastest_seconds = 0;    ///< the pass the figure comes from
    double slowest_seconds = 0;    ///< how far the others strayed
    std::uint64_t cache_bytes = 0; ///< the last-level caches the buffer was sized against; 0 unknown
    std::string note;              ///< a reason to doubt the figure (a buffer the caches hold much of)
    std::string error;             ///< why there is no figure; empty when gbps > 0
    bool ok() const noexcept { return gbps > 0; }
};

namespace detail::membw {
constexpr std::uint64_t smaller_known(std::uint64_t a, std::uint64_t b) noexcept {
    if (a == 0) return b;
    if (b == 0) return a;
    return a < b ? a : b;
}

inline constexpr std::uint64_t default_buffer = 2 * units::gib;
inline constexpr std::uint64_t smallest_default_buffer = 64 * units::mib;
inline constexpr std::uint32_t most_threads = 1024;
inline constexpr std::uint32_t most_passes = 1000;

/// CPUs in this process's affinity mask (what a cgroup cpuset leaves it), else the
/// hardware's count, else 1.
inline std::uint32_t usable_cpus() noexcept {
#if AI_HWACCEL_OS_LINUX
    cpu_set_t set;
    CPU_ZERO(&set);
    if (::sched_getaffinity(0, sizeof set, &set) == 0) {
        const int n = CPU_COUNT(&set);
        if (n > 0) return static_cast<std::uint32_t>(n);
    }
#endif
    const unsigned n = std::thread::hardware_concurrency();
    return n ? n : 1;
}

#if AI_HWACCEL_OS_LINUX || AI_HWACCEL_OS_MACOS
/// sysconf's count of pages `name` in bytes, 0 when unknown.
inline std::uint64_t pages_in_bytes(int name) noexcept {
    const long pages = ::sysconf(name);
    const long page = ::sysconf(_SC_PAGESIZE);
    if (pages > 0 && page > 0) return static_cast<std::uint64_t>(pages) * static_cast<std::uint64_t>(page);
    return 0;
}
#endif

/// Bytes of memory free now (no cache to drop counted), 0 when unknown.
inline std::uint64_t free_memory() noexcept {
#if (AI_HWACCEL_OS_LINUX || AI_HWACCEL_OS_MACOS) && defined(_SC_AVPHYS_PAGES)
    return pages_in_bytes(_SC_AVPHYS_PAGES);
#else
    return 0;
#endif
}

/// Bytes of physical memory, 0 when unknown.
inline std::uint64_t physical_memory() noexcept {
#if (AI_HWACCEL_OS_LINUX || AI_HWACCEL_OS_MACOS) && defined(_SC_PHYS_PAGES)
    return pages_in_bytes(_SC_PHYS_PAGES);
#else
    return 0;
#endif
}

constexpr std::uint64_t default_buffer_bytes(std::uint64_t free, std::uint64_t caches = 0) noexcept {
    std::uint64_t b = default_buffer;
    if (caches <= ~std::uint64_t{0} / 4 && caches * 4 > b) b = caches * 4;
    if (free != 0 && free / 4 < b) b = free / 4;
    return b < smallest_default_buffer ? smallest_default_buffer : b;
}
static_assert(default_buffer_bytes(0) == default_buffer && default_buffer_bytes(0, 2304 * units::mib) == 9 * units::gib);
static_assert(default_buffer_bytes(8 * units::gib, 2304 * units::mib) == 2 * units::gib);

/// The buffer: aligned to 2 MiB and, on Linux, offered transparent huge pages, so that
/// filling it takes one page fault per 2 MiB rather than per 4 KiB.
struct buffer_deleter {
    void operator()(std::uint64_t* p) const noexcept { ::operator delete(p, std::align_val_t{huge_page}); }
    static constexpr std::size_t huge_page = 2 * units::mib;
};
using buffer_ptr = std::unique_ptr<std::uint64_t, buffer_deleter>;
inline buffer_ptr allocate_buffer(std::size_t words) noexcept {
    const std::size_t bytes = words * sizeof(std::uint64_t);
    void* p = ::operator new(bytes, std::align_val_t{buffer_deleter::huge_page}, std::nothrow);
    if (p == nullptr) return nullptr;
#if AI_HWACCEL_OS_LINUX && defined(MADV_HUGEPAGE)
    ::madvise(p, bytes, MADV_HUGEPAGE); // advice: refused where THP is off, and then ignored
#endif
    return buffer_ptr(static_cast<std::uint64_t*>(p));
}

/// Reads `bytes` bytes at `p` as fast as the C library can: memchr for a byte the buffer
/// does not hold (it is filled with zeros) reads all of it with the widest vector loads
/// the CPU has, whatever this file was compiled with. Returns 1 if the byte was found.
inline std::uint64_t read_all(const void* p, std::size_t bytes) noexcept {
    return std::memchr(p, 1, bytes) != nullptr ? 1 : 0;
}

/// A cache `size` as sysfs prints it ("32768K"; the kernel writes KiB) in bytes; 0 when not.
constexpr std::uint64_t cache_size_bytes(std::string_view text) noexcept {
    text = trim(text);
    std::uint64_t unit = 1;
    if (text.ends_with('K')) unit = units::kib;
    else if (text.ends_with('M')) unit = units::mib;
    if (unit != 1) text.remove_suffix(1);
    const auto n = parse_u64(text);
    return n && *n <= (std::uint64_t{1} << 40) ? *n * unit : 0;
}
static_assert(cache_size_bytes("32768K\n") == 32 * units::mib && cache_size_bytes("2M") == 2 * units::mib &&
              cache_size_bytes("lots") == 0 && cache_size_bytes("") == 0);

inline constexpr std::size_t most_cpus_read = 16384;

} // namespace detail::membw

/// The bytes of the CPUs' last-level caches, each counted once: for every CPU the cache of
/// the highest `level` under /sys/devices/system/cpu/cpu<N>/cache/index<i>, told apart from
/// the other CPUs' by its shared_cpu_list (an EPYC's L3 per chiplet, a Xeon's per socket).
/// 0 when the machine does not say (no sysfs, or no CPU with a cache folder).
template <system_view S>
std::uint64_t last_level_cache_bytes(const S& sys) {
    using namespace detail::membw;
    constexpr std::string_view cpus = "/sys/devices/system/cpu";
    const auto names = sys.list_dir(cpus);
    if (!names) return 0;
    std::vector<std::string> seen; // shared_cpu_list of each cache counted
    std::uint64_t total = 0;
    std::size_t read = 0;
    for (const auto& name : *names) {
        if (!name.starts_with("cpu") || !detail::parse_u64(std::string_view(name).substr(3)) || ++read > most_cpus_read) continue;
        const std::string dir = std::string(cpus) + "/" + name + "/cache";
        const auto indexes = sys.list_dir(dir);
        if (!indexes) continue;
        std::uint64_t level = 0, size = 0;
        std::string shared;
        for (const auto& index : *indexes) {
            if (!index.starts_with("index")) continue;
            const std::string at = dir + "/" + index + "/";
            const auto l = sys.read_file(at + "level", 64);
            const auto n = l.ok() ? detail::parse_u64(detail::trim(l.data)) : std::nullopt;
            if (!n || *n <= level) continue;
            const auto z = sys.read_file(at + "size", 64);
            const auto list = sys.read_file(at + "shared_cpu_list", 4096);
            if (!z.ok() || !list.ok()) continue;
            level = *n;
            size = cache_size_bytes(z.data);
            shared = std::string(detail::trim(list.data));
        }
        if (size == 0 || std::find(seen.begin(), seen.end(), shared) != seen.end()) continue;
        seen.push_back(std::move(shared));
        total = total + size < total ? ~std::uint64_t{0} : total + size;
    }
    return total;
}

/// Options whose memory_available is what `m` (the registry's host().memory) leaves this
/// process: MemAvailable, or the container's limit or the room left under it when lower
/// (no room at all counts as one byte, less than any buffer: measure_memory_bandwidth then
/// refuses, rather than take memory the container does not have).
constexpr bandwidth_options bandwidth_options_for(const memory_info& m, bandwidth_options o = {}) noexcept {
    using detail::membw::smaller_known;
    const std::uint64_t room = m.cgroup_free_bytes ? (*m.cgroup_free_bytes ? *m.cgroup_free_bytes : 1) : 0;
    o.memory_available = smaller_known(
        smaller_known(m.available_bytes.value_or(0), m.cgroup_limit_bytes.value_or(0)), room);
    return o;
}

/// The same from the whole host: the memory as above, and, where `o` leaves the threads to
/// the machine, no more of them than the container's CPU quota rounded up. More threads
/// than the quota allows use it up early in each period and are held for the rest of it:
/// the passes would read slower, not faster.
constexpr bandwidth_options bandwidth_options_for(const host_info& h, bandwidth_options o = {}) noexcept {
    o = bandwidth_options_for(h.memory, o);
    const double quota = h.cpu.cpu_quota;
    if (o.threads == 0 && quota > 0 && quota < detail::membw::most_threads) {
        auto n = static_cast<std::uint32_t>(quota);
        if (static_cast<double>(n) < quota) ++n;
        if (h.cpu.usable_threads == 0 || n < h.cpu.usable_threads) o.threads = n;
    }
    return o;
}

/// Measures how fast this process reads memory (see the header comment). Blocks for the
/// fill and the passes.
inline bandwidth_measurement measure_memory_bandwidth(const bandwidth_options& options = {}) noexcept {
    using namespace detail::membw;
    using clock = std::chrono::steady_clock;
    bandwidth_measurement out;
    if (options.passes == 0 || options.passes > most_passes) {
        out.error = "passes must be 1 to " + std::to_string(most_passes);
        return out;
    }
    if (options.threads > most_threads) {
        out.error = "threads must be 0 (one per usable CPU) to " + std::to_string(most_threads);
        return out;
    }
    const std::uint32_t cpus = usable_cpus();
    const std::uint32_t threads = options.threads ? options.threads : cpus < most_threads ? cpus : most_threads;
    const std::uint64_t available = options.memory_available ? options.memory_available : free_memory();
    out.cache_bytes = options.cache_bytes ? options.cache_bytes : last_level_cache_bytes(host_system{});
    const std::uint64_t bytes =
        options.buffer_bytes ? options.buffer_bytes : default_buffer_bytes(available, out.cache_bytes);
    if (const auto physical = physical_memory(); physical != 0 && bytes > physical) {
        out.error = "a buffer of " + std::to_string(bytes) + " bytes is more than the machine's memory (" +
                    std::to_string(physical) + " bytes)";
        return out;
    }
    if (options.memory_available != 0 && bytes > options.memory_available) {
        out.error = "a buffer of " + std::to_string(bytes) + " bytes is more than the memory available (" +
                    std::to_string(options.memory_available) + " bytes)";
        return out;
    }
    const std::uint64_t per_thread = bytes / 8 / threads; // words
    if (per_thread == 0) {
        out.error = "a buffer of " + std::to_string(bytes) + " bytes gives " + std::to_string(threads) +
                    " threads nothing to read";
        return out;
    }
    if (per_thread > SIZE_MAX / threads) {
        out.error = "a buffer of " + std::to_string(bytes) + " bytes cannot be addressed";
        return out;
    }
    const std::size_t words = static_cast<std::size_t>(per_thread) * threads;
    const auto buffer = allocate_buffer(words);
    if (!buffer) {
        out.error = "cannot allocate " + std::to_string(words * 8) + " bytes to read";
        return out;
    }
    const std::uint32_t passes = options.passes;
    // The barrier's completion runs once per phase, after every thread arrived and before
    // any leaves: stamp[0] ends the fill, stamp[k] the k-th read pass.
    std::vector<clock::time_point> stamp(passes + 1);
    std::size_t phase = 0;
    const auto completion = [&stamp, &phase]() noexcept {
        if (phase < stamp.size()) stamp[phase++] = clock::now();
    };
    std::barrier sync(static_cast<std::ptrdiff_t>(threads), completion);
    std::atomic<std::uint64_t> sink{0}; // keeps the reads from being optimised away
    std::latch go(1);
    std::atomic<bool> abandon{false};
    const auto work = [&](std::uint32_t t) noexcept {
        std::uint64_t* slice = buffer.get() + static_cast<std::size_t>(per_thread) * t;
        const auto n = static_cast<std::size_t>(per_thread) * sizeof(std::uint64_t);
        std::memset(slice, 0, n); // first touch: the pages lie on this thread's node
        sync.arrive_and_wait();
        for (std::uint32_t k = 0; k < passes; ++k) {
            sink.fetch_add(read_all(slice, n), std::memory_order_relaxed);
            sync.arrive_and_wait();
        }
    };
    std::vector<std::jthread> pool;
    pool.reserve(threads - 1);
    for (std::uint32_t t = 1; t < threads; ++t) {
        const auto body = [&, t] {
            go.wait();
            if (!abandon.load()) work(t);
        };
#if AI_HWACCEL_EXCEPTIONS
        try {
            pool.emplace_back(body);
        } catch (const std::exception& e) {
            out.error = "cannot start thread " + std::to_string(t + 1) + " of " + std::to_string(threads) + ": " +
                        e.what();
            abandon.store(true);
            break;
        }
#else
        pool.emplace_back(body); // built without exceptions: a thread that cannot start aborts
#endif
    }
    go.count_down();
    if (abandon.load()) {
        pool.clear(); // joins: each saw `abandon` and returned before the barrier
        return out;
    }
    work(0);
    pool.clear();
    double fastest = 0, slowest = 0;
    for (std::uint32_t k = 1; k <= passes; ++k) {
        const double s = std::chrono::duration<double>(stamp[k] - stamp[k - 1]).count();
        if (k == 1 || s < fastest) fastest = s;
        if (s > slowest) slowest = s;
    }
    out.bytes_per_pass = static_cast<std::uint64_t>(words) * 8;
    out.threads = threads;
    out.passes = passes;
    out.fastest_seconds = fastest;
    out.slowest_seconds = slowest;
    if (!(fastest > 0)) {
        out.error = "the clock did not advance over a pass";
        return out;
    }
    out.gbps = static_cast<double>(out.bytes_per_pass) / fastest / 1e9;
    if (out.cache_bytes != 0 && out.bytes_per_pass / 4 < out.cache_bytes)
        out.note = "the buffer (" + std::to_string(out.bytes_per_pass) + " bytes) is under four times the CPUs' " +
                   "last-level caches (" + std::to_string(out.cache_bytes) + " bytes): the figure is partly theirs";
    return out;
}

/// Gives every CPU profile among `devices` the measured bandwidth (origin::measured); a
/// value the caller set (origin::user) or a tool reported stays. Returns how many took it.
inline std::size_t apply_cpu_bandwidth(std::span<accelerator_profile> devices,
                                       const bandwidth_measurement& m) noexcept {
    if (!m.ok()) return 0;
    std::size_t n = 0;
    for (auto& d : devices)
        if (d.is_cpu() && d.memory_bandwidth_gbps.offer(m.gbps, origin::measured)) ++n;
    return n;
}

/// `registry` with apply_cpu_bandwidth done on its profiles (a registry does not change:
/// this is a copy, host, links and warnings kept). A measurement that failed gives an
/// equal copy.
inline accelerator_registry apply_cpu_bandwidth(const accelerator_registry& registry,
                                                const bandwidth_measurement& m) {
    if (!m.ok()) return registry;
    std::vector<accelerator_profile> profiles(registry.all().begin(), registry.all().end());
    apply_cpu_bandwidth(profiles, m);
    return registry.what_if_replace(std::move(profiles));
}

AI_HWACCEL_NAMESPACE_END
