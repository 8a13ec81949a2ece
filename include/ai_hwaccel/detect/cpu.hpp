// ai-hwaccel detect: the host's CPU and memory.
//
// Pure parsers for /proc/cpuinfo, `lscpu`, /proc/meminfo and cgroup memory and CPU limits
// (string_view in, data out, never throw), and the probe that feeds them from a
// system_view. /proc/cpuinfo differs by architecture: x86 prints "model name", "flags",
// "physical id", "core id"; arm64 prints "Features", "CPU implementer" and usually no
// model name at all. The kernel's cpulist format is parsed by parse_cpulist
// (detect/sysfs.hpp) and the NUMA nodes are read by probe_numa (detect/topology.hpp).
#pragma once

#include "ai_hwaccel/config.hpp"
#include "ai_hwaccel/core/profile.hpp"
#include "ai_hwaccel/core/system_io.hpp"
#include "ai_hwaccel/core/taxonomy.hpp"
#include "ai_hwaccel/core/text.hpp"
#include "ai_hwaccel/core/units.hpp"
#include "ai_hwaccel/core/warning.hpp"
#include "ai_hwaccel/detect/system.hpp"
#include "ai_hwaccel/detect/sysfs.hpp"
#include "ai_hwaccel/detect/topology.hpp"

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

AI_HWACCEL_NAMESPACE_BEGIN

namespace detail {
/// The features named in a flags line (x86's "fpu vme … avx2 …" when `arm` is false,
/// Arm's "fp asimd …" when true); whole space-separated words only.
constexpr cpu_features cpu_features_from_flags(std::string_view flags, bool arm) noexcept {
    cpu_features features;
    while (!flags.empty()) {
        const auto sp = flags.find_first_of(" \t");
        const std::string_view word = trim(flags.substr(0, sp));
        flags = sp == std::string_view::npos ? std::string_view{} : flags.substr(sp + 1);
        if (word.empty()) continue;
        for (std::size_t i = 0; i < cpu_feature_count; ++i)
            if (((cpu_arm_features >> i) & 1u) == (arm ? 1u : 0u) && word == cpu_proc_flags[i])
                features.set(static_cast<cpu_feature>(i));
        if (arm && word == "neon") features.set(cpu_feature::neon); // 32-bit Arm's name for it
    }
    return features;
}
} // namespace detail

/// /proc/meminfo → total and available bytes (values are in kB, meaning KiB).
/// A missing MemTotal leaves total empty; the caller decides what to warn.
inline memory_info parse_meminfo(std::string_view text) {
    using namespace std::string_view_literals; // "..."sv: no length counted at run time
    memory_info m;
    detail::for_each_key_value(text, [&](std::string_view key, std::string_view value, bool) {
        if (key != "MemTotal"sv && key != "MemAvailable"sv) return;
        const auto sp = value.find(' ');
        const std::string_view number = value.substr(0, sp);
        const std::string_view unit = sp == std::string_view::npos ? "" : detail::trim(value.substr(sp));
        const auto n = detail::parse_u64(number);
        if (!n) return;
        std::uint64_t mul = 1;
        if (unit == "kB"sv) mul = units::kib;
        else if (!unit.empty()) return;
        if (*n > UINT64_MAX / mul) return;
        if (key == "MemTotal"sv) m.total_bytes = {*n * mul, origin::sysfs};
        else m.available_bytes = {*n * mul, origin::sysfs};
    });
    return m;
}

/// A cgroup memory limit file: v2 memory.max ("max" = none) or v1 memory.limit_in_bytes
/// (a page-rounded huge number = none). Returns the limit in bytes, if there is one.
inline std::optional<std::uint64_t> parse_cgroup_memory_limit(std::string_view text) noexcept {
    text = detail::trim(text);
    if (text == "max") return std::nullopt;
    const auto n = detail::parse_u64(text);
    // cgroup v1 reports "no limit" as PAGE_COUNTER_MAX pages, about 2^63 bytes.
    if (!n || *n >= (std::uint64_t{1} << 62)) return std::nullopt;
    return n;
}

/// /proc/cpuinfo → model, vendor, topology and the ISA features that matter for inference.
inline cpu_info parse_cpuinfo(std::string_view text) {
    using namespace std::string_view_literals; // "..."sv: no length counted at run time
    cpu_info c;
    std::vector<std::string> packages;
    std::vector<std::string> cores; // package and core id, a line break between (no value holds one)
    std::uint32_t processors = 0;
    std::string current_package;
    std::string_view flags;
    bool arm_flags = false;
    detail::for_each_key_value(text, [&](std::string_view key, std::string_view value, bool has_colon) {
        if (!has_colon) return;
        if (key == "processor"sv) {
            ++processors;
            current_package.clear();
        } else if ((key == "model name"sv || key == "Model Name"sv || key == "cpu model"sv) && c.model.empty()) {
            c.model = std::string(value);
        } else if (key == "vendor_id"sv && c.maker == vendor::unknown) {
            if (value == "GenuineIntel"sv) c.maker = vendor::intel;
            else if (value == "AuthenticAMD"sv) c.maker = vendor::amd;
        } else if (key == "CPU implementer"sv && c.maker == vendor::unknown) {
            // The implementer code names the licensee (0x41 Arm, 0x48 HiSilicon, 0x51
            // Qualcomm…); only Arm's own cores are attributed, the rest stay unknown.
            if (value == "0x41"sv) c.maker = vendor::arm;
            else if (value == "0x51"sv) c.maker = vendor::qualcomm;
        } else if (key == "physical id"sv) {
            current_package = std::string(value);
            packages.push_back(current_package);
        } else if (key == "core id"sv) {
            cores.push_back(current_package + '\n' + std::string(value));
        } else if (key == "flags"sv && flags.empty()) {
            flags = value;
            c.arch = cpu_arch::x86_64; // "flags" is x86's spelling; 32-bit x86 is not a target
        } else if (key == "Features"sv && flags.empty()) {
            flags = value;
            arm_flags = true;
        } else if (key == "CPU architecture"sv && c.arch == cpu_arch::unknown) {
            // 8 and later are AArch64 cores; /proc/cpuinfo of a 32-bit kernel says 7.
            const auto v = detail::parse_u64(value);
            if (v) c.arch = *v >= 8 ? cpu_arch::aarch64 : cpu_arch::arm;
        }
    });
    c.threads = processors;
    c.sockets =
        packages.empty() ? (processors ? 1u : 0u) : static_cast<std::uint32_t>(detail::count_distinct(packages));
    c.cores = cores.empty() ? processors : static_cast<std::uint32_t>(detail::count_distinct(cores));
    c.features = detail::cpu_features_from_flags(flags, arm_flags);
    return c;
}

// ---------------------------------------------------------------------------------------
// lscpu

/// What `lscpu` prints that cpu_info does not hold, and cpu_info itself.
struct lscpu_info {
    cpu_info cpu; ///< model, vendor, architecture, sockets, cores, threads (online), features
    std::uint32_t threads_per_core = 0;
    std::uint32_t cores_per_socket = 0; ///< of the first CPU type listed (hybrid parts list several)
    std::uint32_t numa_node_count = 0;  ///< "NUMA node(s)"
    /// From the "NUMA nodeN CPU(s)" lines: ids and cpulists; lscpu prints no memory sizes.
    std::vector<numa_node> numa;
    std::string hypervisor_vendor; ///< "Hypervisor vendor" ("KVM", "Microsoft"), empty on bare metal
    friend bool operator==(const lscpu_info&, const lscpu_info&) = default;
};

namespace detail {
constexpr cpu_arch parse_cpu_arch(std::string_view s) noexcept {
    if (s == "x86_64" || s == "amd64") return cpu_arch::x86_64;
    if (s == "aarch64" || s == "arm64") return cpu_arch::aarch64;
    if (s == "riscv64") return cpu_arch::riscv64;
    if (s == "ppc64le") return cpu_arch::ppc64le;
    if (s == "s390x") return cpu_arch::s390x;
    if (s.starts_with("arm")) return cpu_arch::arm; // armv7l, armv6l, armv8l (32-bit)
    return cpu_arch::unknown;
}

/// lscpu's "Vendor ID": the x86 CPUID vendor string, or on Arm the implementer's name.
constexpr vendor cpu_vendor_from_id(std::string_view s) noexcept {
    if (s == "GenuineIntel") return vendor::intel;
    if (s == "AuthenticAMD") return vendor::amd;
    if (s == "ARM") return vendor::arm;
    if (s == "Qualcomm") return vendor::qualcomm;
    if (s == "Apple") return vendor::apple;
    if (s == "NVIDIA") return vendor::nvidia;
    if (s == "Samsung") return vendor::samsung;
    return vendor::unknown;
}

/// A count as lscpu prints it; "-" (unknown, new util-linux on Arm), garbage and counts
/// beyond any machine (more than cpulist_max_cpus) are nullopt.
constexpr std::optional<std::uint32_t> parse_count(std::string_view s) noexcept {
    const auto n = parse_u64(s);
    if (!n || *n > cpulist_max_cpus) return std::nullopt;
    return static_cast<std::uint32_t>(*n);
}
} // namespace detail

/// `lscpu` output → CPU description. Both layouts: the flat one of older util-linux
/// (topology lines may come before "Model name") and the newer one, indented and grouped,
/// with one "Model name" block per CPU type on hybrid Arm parts and "Core(s) per cluster"
/// / "Socket(s): -" where the firmware names no sockets. CRLF line ends are tolerated.
/// Cores are the sum over CPU types of cores per socket (or cluster) × sockets (or
/// clusters); threads are the online CPUs (or "CPU(s)" when no online list is printed).
inline lscpu_info parse_lscpu(std::string_view text) {
    struct block {
        bool has_model = false;
        std::optional<std::uint32_t> threads_per_core, cores_per_unit, sockets, clusters;
    };
    lscpu_info out;
    std::vector<block> blocks;
    std::optional<std::uint32_t> cpus_total, cpus_online;
    bool seen_flags = false;
    auto current = [&]() -> block& {
        if (blocks.empty()) blocks.emplace_back();
        return blocks.back();
    };
    detail::for_each_key_value(text, [&](std::string_view key, std::string_view value, bool has_colon) {
        if (!has_colon) return;
        if (key == "Architecture") {
            out.cpu.arch = detail::parse_cpu_arch(value);
        } else if (key == "CPU(s)") {
            cpus_total = detail::parse_count(value);
        } else if (key == "On-line CPU(s) list") {
            cpus_online = cpulist_count(value);
        } else if (key == "Vendor ID") {
            if (out.cpu.maker == vendor::unknown) out.cpu.maker = detail::cpu_vendor_from_id(value);
        } else if (key == "Model name") {
            if (blocks.empty() || blocks.back().has_model) blocks.emplace_back();
            blocks.back().has_model = true;
            if (out.cpu.model.empty()) out.cpu.model = std::string(value);
        } else if (key == "Thread(s) per core") {
            current().threads_per_core = detail::parse_count(value);
        } else if (key == "Core(s) per socket" || key == "Core(s) per cluster") {
            current().cores_per_unit = detail::parse_count(value);
        } else if (key == "Socket(s)") {
            current().sockets = detail::parse_count(value);
        } else if (key == "Cluster(s)") {
            current().clusters = detail::parse_count(value);
        } else if (key == "NUMA node(s)") {
            out.numa_node_count = detail::parse_count(value).value_or(0);
        } else if (key.starts_with("NUMA node") && key.size() > 16 && key.ends_with(" CPU(s)")) {
            const auto id = detail::parse_count(key.substr(9, key.size() - 16));
            if (id && parse_cpulist(value)) out.numa.push_back(numa_node{*id, 0, std::string(value)});
        } else if (key == "Flags") {
            // Hybrid parts print one line per CPU type: keep what every type has.
            // lscpu prints "Architecture" first; Arm kernels also say "aarch64"/"armv7l".
            const bool arm = out.cpu.arch == cpu_arch::aarch64 || out.cpu.arch == cpu_arch::arm;
            const auto f = detail::cpu_features_from_flags(value, arm);
            out.cpu.features.bits = seen_flags ? (out.cpu.features.bits & f.bits) : f.bits;
            seen_flags = true;
        } else if (key == "Hypervisor vendor") {
            out.hypervisor_vendor = std::string(value);
        }
    });
    std::uint64_t cores = 0;
    std::uint32_t sockets = 0;
    for (const auto& b : blocks) {
        const std::uint32_t units = b.sockets ? *b.sockets : b.clusters.value_or(1);
        if (b.cores_per_unit) cores += std::uint64_t{*b.cores_per_unit} * units;
        if (b.sockets && *b.sockets > sockets) sockets = *b.sockets;
    }
    if (!blocks.empty()) {
        out.threads_per_core = blocks.front().threads_per_core.value_or(0);
        out.cores_per_socket = blocks.front().cores_per_unit.value_or(0);
    }
    out.cpu.threads = cpus_online ? *cpus_online : cpus_total.value_or(0);
    out.cpu.cores = cores <= UINT32_MAX ? static_cast<std::uint32_t>(cores) : 0;
    out.cpu.sockets = sockets != 0 ? sockets : (out.cpu.threads != 0 ? 1u : 0u);
    return out;
}

// ---------------------------------------------------------------------------------------
// cgroup CPU limits

namespace detail {
/// quota/period in CPUs, or nullopt when either is not a positive number or the ratio is
/// beyond any machine.
constexpr std::optional<double> cpu_quota_ratio(std::uint64_t quota, std::uint64_t period) noexcept {
    if (quota == 0 || period == 0) return std::nullopt;
    const double cpus = static_cast<double>(quota) / static_cast<double>(period);
    if (cpus > static_cast<double>(cpulist_max_cpus)) return std::nullopt;
    return cpus;
}
} // namespace detail

/// cgroup v2 `cpu.max` → the quota in CPUs: "max 100000" → 0 (no quota), "250000 100000"
/// → 2.5. nullopt when the text is neither.
constexpr std::optional<double> parse_cgroup_cpu_max(std::string_view text) noexcept {
    text = detail::trim(text);
    const auto sp = text.find(' ');
    const std::string_view quota = text.substr(0, sp);
    const std::string_view period = sp == std::string_view::npos ? std::string_view{} : detail::trim(text.substr(sp));
    if (quota == "max") {
        if (!period.empty() && !detail::parse_u64(period)) return std::nullopt;
        return 0.0;
    }
    const auto q = detail::parse_u64(quota);
    const auto p = detail::parse_u64(period);
    if (!q || !p) return std::nullopt;
    return detail::cpu_quota_ratio(*q, *p);
}

/// cgroup v1 `cpu.cfs_quota_us` and `cpu.cfs_period_us` → the quota in CPUs: quota "-1"
/// → 0 (no quota), 250000 / 100000 → 2.5. nullopt when either is not a number.
constexpr std::optional<double> parse_cgroup_cfs_quota(std::string_view quota, std::string_view period) noexcept {
    const auto q = detail::parse_i64(detail::trim(quota));
    const auto p = detail::parse_u64(detail::trim(period));
    if (!q || !p) return std::nullopt;
    if (*q == -1) return 0.0;
    if (*q < 0) return std::nullopt;
    return detail::cpu_quota_ratio(static_cast<std::uint64_t>(*q), *p);
}

static_assert(parse_cgroup_cpu_max("max 100000\n") == 0.0);
static_assert(parse_cgroup_cpu_max("250000 100000\n") == 2.5);
static_assert(parse_cgroup_cfs_quota("-1\n", "100000\n") == 0.0);

namespace detail {
/// This process's cgroup path from /proc/self/cgroup: the v2 line ("0::/path") when
/// `controller` is empty, else the v1 line whose controller list names `controller`.
inline std::optional<std::string> own_cgroup_path(std::string_view proc_cgroup, std::string_view controller) {
    while (!proc_cgroup.empty()) {
        const auto nl = proc_cgroup.find('\n');
        const std::string_view line = trim(proc_cgroup.substr(0, nl));
        proc_cgroup = nl == std::string_view::npos ? std::string_view{} : proc_cgroup.substr(nl + 1);
        const auto c1 = line.find(':');
        const auto c2 = c1 == std::string_view::npos ? c1 : line.find(':', c1 + 1);
        if (c2 == std::string_view::npos) continue;
        std::string_view controllers = line.substr(c1 + 1, c2 - c1 - 1);
        const std::string_view path = line.substr(c2 + 1);
        if (path.empty() || path.front() != '/') continue;
        if (controller.empty()) {
            if (line.substr(0, c1) == "0" && controllers.empty()) return std::string(path);
            continue;
        }
        while (!controllers.empty()) {
            const auto comma = controllers.find(',');
            if (controllers.substr(0, comma) == controller) return std::string(path);
            controllers = comma == std::string_view::npos ? std::string_view{} : controllers.substr(comma + 1);
        }
    }
    return std::nullopt;
}

/// `mount` + `path`, then each parent of `path` up to `mount` itself: where a cgroup's
/// limits and its ancestors' are, whether or not the process sees a cgroup namespace.
inline std::vector<std::string> cgroup_dirs(std::string_view mount, std::string_view path) {
    std::vector<std::string> dirs;
    std::string p = join_path("/", path);
    for (int depth = 0; depth < 64; ++depth) {
        dirs.push_back(p == "/" ? std::string(mount) : std::string(mount) + p);
        if (p == "/") break;
        p = join_path(p, "..");
    }
    return dirs;
}

/// The CPU quota this process runs under, in CPUs (0 = none): the smallest quota set on
/// its cgroup or any ancestor, cgroup v2 first, then v1's cpu controller.
template <system_view S>
double probe_cpu_quota(const S& sys, std::vector<warning>& warnings) {
    const auto self = read_optional_file(sys, "/proc/self/cgroup", 64 * 1024, warnings);
    double best = 0;
    auto offer = [&](double q) {
        if (q > 0 && (best == 0 || q < best)) best = q;
    };
    bool v2 = false;
    const auto v2_path = self ? own_cgroup_path(*self, "") : std::nullopt;
    for (const auto& dir : cgroup_dirs("/sys/fs/cgroup", v2_path.value_or("/"))) {
        const std::string path = dir + "/cpu.max";
        const auto text = read_optional_file(sys, path, 256, warnings);
        if (!text) continue;
        v2 = true;
        if (auto q = parse_cgroup_cpu_max(*text)) offer(*q);
        else add_warning(warnings, warning_kind::parse_error, path, "not 'max <period>' or '<quota> <period>'");
    }
    if (v2) return best;
    const auto v1_path = self ? own_cgroup_path(*self, "cpu") : std::nullopt;
    // Distributions mount the v1 controller as cpu,cpuacct and link cpu to it (or the reverse).
    for (std::string_view mount : {"/sys/fs/cgroup/cpu,cpuacct", "/sys/fs/cgroup/cpu"}) {
        bool seen = false;
        for (const auto& dir : cgroup_dirs(mount, v1_path.value_or("/"))) {
            const std::string quota_path = dir + "/cpu.cfs_quota_us";
            const auto quota = read_optional_file(sys, quota_path, 256, warnings);
            if (!quota) continue;
            seen = true;
            const auto period = read_optional_file(sys, dir + "/cpu.cfs_period_us", 256, warnings);
            if (!period) continue;
            if (auto q = parse_cgroup_cfs_quota(*quota, *period)) offer(*q);
            else
                add_warning(warnings, warning_kind::parse_error, quota_path, "not a quota and period in microseconds");
        }
        if (seen) break;
    }
    return best;
}
} // namespace detail

// ---------------------------------------------------------------------------------------
// The probe

/// Reads the host's CPU (online and usable threads, CPU quota), memory, cgroup limits and
/// NUMA nodes through `sys`, adding warnings for what could not be read. Returns the host
/// description and the CPU's profile.
/// Sockets and physical cores from each online CPU's sysfs topology
/// (/sys/devices/system/cpu/cpuN/topology/{physical_package_id,core_id}): the kernel's own
/// view, and the only one on Arm, whose /proc/cpuinfo names neither. Used only when every
/// online CPU has both files; x86's /proc/cpuinfo prints the same ids, so a difference
/// there is reported.
template <system_view S>
void probe_cpu_topology(const S& sys, std::string_view online_list, cpu_info& cpu, std::vector<warning>& warnings) {
    const auto cpus = parse_cpulist(online_list);
    if (!cpus || cpus->empty()) return;
    std::vector<std::string> packages; // ids as text, counted as parse_cpuinfo counts its own
    std::vector<std::string> cores;    // "package core"
    for (const auto n : *cpus) {
        std::string dir = "/sys/devices/system/cpu/cpu";
        dir += detail::to_decimal(n);
        dir += "/topology/";
        const auto pkg = sys.read_file(dir + "physical_package_id", 64);
        const auto core = sys.read_file(dir + "core_id", 64);
        if (!pkg.ok() || !core.ok()) return; // no topology (old kernel, captured tree without it)
        const auto p = detail::parse_i64(detail::trim(pkg.data));
        const auto c = detail::parse_i64(detail::trim(core.data));
        if (!p || !c) {
            detail::add_warning(warnings, warning_kind::parse_error, dir, "topology ids are not numbers");
            return;
        }
        packages.push_back(std::to_string(*p));
        cores.push_back(packages.back() + ' ' + std::to_string(*c));
    }
    const auto sockets = static_cast<std::uint32_t>(detail::count_distinct(packages));
    const auto physical = static_cast<std::uint32_t>(detail::count_distinct(cores));
    const bool cpuinfo_knows = cpu.arch == cpu_arch::x86_64 && cpu.sockets != 0;
    if (cpuinfo_knows && (cpu.sockets != sockets || cpu.cores != physical)) {
        std::string message = "/proc/cpuinfo counts ";
        message += detail::to_decimal(cpu.sockets);
        message += " socket(s) and ";
        message += detail::to_decimal(cpu.cores);
        message += " core(s), the sysfs topology ";
        message += detail::to_decimal(sockets);
        message += " and ";
        message += detail::to_decimal(physical);
        message += "; using sysfs, which describes the online CPUs";
        detail::add_warning(warnings, warning_kind::disagreement, "/sys/devices/system/cpu", std::move(message));
    }
    cpu.sockets = sockets;
    cpu.cores = physical;
}

template <system_view S>
std::pair<host_info, accelerator_profile> probe_host(const S& sys, std::vector<warning>& warnings) {
    host_info host;
    auto note = [&](warning_kind k, std::string_view path, std::string_view msg) {
        detail::add_warning(warnings, k, path, std::string(msg));
    };
    auto read_reporting = [&](std::string_view path) -> std::optional<std::string> {
        auto r = sys.read_file(path, default_read_cap);
        if (r.status == read_status::truncated)
            note(warning_kind::output_truncated, path, "file larger than the read cap; parsed its start");
        if (r.ok()) return std::move(r.data);
        if (r.status == read_status::permission_denied)
            note(warning_kind::permission_denied, path, "not readable");
        else
            note(warning_kind::read_error, path, r.status == read_status::not_found ? "missing" : "unreadable");
        return std::nullopt;
    };

    if (auto text = read_reporting("/proc/cpuinfo")) {
        host.cpu = parse_cpuinfo(*text);
        // Every architecture's kernel writes a "processor" entry per CPU (s390x: "processor 0:");
        // a file without the word is empty or not /proc/cpuinfo at all.
        if (host.cpu.threads == 0 && text->find("processor") == std::string::npos)
            note(warning_kind::parse_error, "/proc/cpuinfo", "no processor entries");
    }
    // The kernel's online mask is the authority on how many CPUs run; /proc/cpuinfo can be
    // virtualised (LXCFS shows the container's share) or cut short.
    constexpr std::string_view online_path = "/sys/devices/system/cpu/online";
    if (auto text = detail::read_optional_file(sys, online_path, 64 * 1024, warnings)) {
        const auto online = cpulist_count(*text);
        if (!online || *online == 0) {
            note(warning_kind::parse_error, online_path, "not a cpulist");
        } else {
            if (host.cpu.threads != 0 && host.cpu.threads != *online) {
                std::string message = "/proc/cpuinfo lists ";
                message += detail::to_decimal(host.cpu.threads);
                message += " processors, the online mask ";
                message += detail::to_decimal(*online);
                message += "; using ";
                message += detail::to_decimal(*online);
                message += " from sysfs, the kernel's own count (cpuinfo may be virtualised or cut short)";
                detail::add_warning(warnings, warning_kind::disagreement, online_path, std::move(message));
            }
            host.cpu.threads = *online;
            probe_cpu_topology(sys, *text, host.cpu, warnings);
        }
    }
    // What this process may run on: its affinity mask, which cgroup cpusets narrow.
    constexpr std::string_view status_path = "/proc/self/status";
    if (auto text = detail::read_optional_file(sys, status_path, 64 * 1024, warnings)) {
        detail::for_each_key_value(*text, [&](std::string_view key, std::string_view value, bool has_colon) {
            if (!has_colon || key != "Cpus_allowed_list") return;
            if (auto n = cpulist_count(value); n && *n != 0) host.cpu.usable_threads = *n;
            else note(warning_kind::parse_error, status_path, "Cpus_allowed_list is not a cpulist");
        });
    }
    host.cpu.cpu_quota = detail::probe_cpu_quota(sys, warnings);

    if (auto text = read_reporting("/proc/meminfo")) {
        host.memory = parse_meminfo(*text);
        if (!host.memory.total_bytes) note(warning_kind::parse_error, "/proc/meminfo", "no MemTotal line");
    }
    // cgroup v2 unified hierarchy first, then v1's memory controller.
    for (std::string_view path : {"/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes"}) {
        auto r = sys.read_file(path, 64);
        if (!r.ok()) continue;
        if (auto limit = parse_cgroup_memory_limit(r.data)) host.memory.cgroup_limit_bytes = {*limit, origin::sysfs};
        break;
    }
    const std::size_t warnings_before_numa = warnings.size();
    host.numa = probe_numa(sys, warnings);
    // The nodes' sizes add up to MemTotal on a plain kernel; a gap means one of the two was
    // virtualised (LXCFS rewrites /proc/meminfo in containers) or cut. Both stay as read.
    if (!host.numa.empty() && host.memory.total_bytes && warnings.size() == warnings_before_numa) {
        std::uint64_t nodes = 0;
        for (const auto& n : host.numa) nodes += n.memory_bytes;
        const std::uint64_t total = *host.memory.total_bytes;
        const std::uint64_t gap = nodes > total ? nodes - total : total - nodes;
        if (gap > total / 100) {
            std::string message = "the NUMA nodes hold ";
            message += detail::to_decimal(nodes);
            message += " bytes, /proc/meminfo's MemTotal says ";
            message += detail::to_decimal(total);
            message += "; the memory total stays MemTotal, the memory the kernel manages (a gap means memory "
                       "outside the nodes, e.g. hot-plugged or ballooned, or a /proc/meminfo virtualised by LXCFS)";
            detail::add_warning(warnings, warning_kind::disagreement, "/sys/devices/system/node", std::move(message));
        }
    }

    accelerator_profile cpu;
    cpu.kind = device_kind::cpu;
    cpu.maker = host.cpu.maker;
    cpu.name = host.cpu.model.empty() ? std::string_view("CPU") : std::string_view(host.cpu.model);
    if (const auto usable = host.memory.usable_bytes(); usable != 0)
        cpu.memory_bytes = {usable, origin::sysfs};
    if (host.memory.available_bytes) cpu.memory_free_bytes = host.memory.available_bytes;
    if (host.cpu.cores != 0) cpu.compute_units = {host.cpu.cores, origin::sysfs};
    return {std::move(host), cpu};
}

AI_HWACCEL_NAMESPACE_END
