// ai-hwaccel core: what surrounds the devices.
//
// The host (CPU model and ISA features, memory with container limits, NUMA nodes), the
// links between devices and between machines, storage, and the runtime environment
// (container, Kubernetes, cloud). These types carry data only; detect/ fills them.
#pragma once

#include "ai_hwaccel/config.hpp"
#include "ai_hwaccel/core/pci.hpp"
#include "ai_hwaccel/core/profile.hpp"
#include "ai_hwaccel/core/taxonomy.hpp"

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

AI_HWACCEL_NAMESPACE_BEGIN

// ---------------------------------------------------------------------------------------
// CPU

/// Instruction-set features that change how fast a CPU runs inference.
enum class cpu_feature : std::uint8_t {
    avx2,
    fma,
    f16c,
    avx_vnni,
    avx512f,
    avx512bw,
    avx512_vnni,
    avx512_bf16,
    avx512_fp16,
    amx_tile,
    amx_bf16,
    amx_int8,
    neon,
    asimd_dotprod,
    asimd_fp16,
    i8mm,
    arm_bf16,
    sve,
    sve2,
    sme,
};
inline constexpr std::size_t cpu_feature_count = 20;

struct cpu_feature_info {
    cpu_feature id;
    std::string_view name; ///< our name (stable, JSON)
    /// The flag as Linux prints it in /proc/cpuinfo ("flags" on x86, "Features" on Arm).
    std::string_view proc_flag;
    /// An Arm feature (read from "Features"), else x86 (read from "flags"). The two
    /// vocabularies overlap: x86's "sme" is AMD Secure Memory Encryption, Arm's is the
    /// Scalable Matrix Extension.
    bool arm;
};
inline constexpr std::array<cpu_feature_info, cpu_feature_count> cpu_feature_table{{
    {cpu_feature::avx2, "avx2", "avx2", false},
    {cpu_feature::fma, "fma", "fma", false},
    {cpu_feature::f16c, "f16c", "f16c", false},
    {cpu_feature::avx_vnni, "avx_vnni", "avx_vnni", false},
    {cpu_feature::avx512f, "avx512f", "avx512f", false},
    {cpu_feature::avx512bw, "avx512bw", "avx512bw", false},
    {cpu_feature::avx512_vnni, "avx512_vnni", "avx512_vnni", false},
    {cpu_feature::avx512_bf16, "avx512_bf16", "avx512_bf16", false},
    {cpu_feature::avx512_fp16, "avx512_fp16", "avx512_fp16", false},
    {cpu_feature::amx_tile, "amx_tile", "amx_tile", false},
    {cpu_feature::amx_bf16, "amx_bf16", "amx_bf16", false},
    {cpu_feature::amx_int8, "amx_int8", "amx_int8", false},
    {cpu_feature::neon, "neon", "asimd", true},
    {cpu_feature::asimd_dotprod, "asimd_dotprod", "asimddp", true},
    {cpu_feature::asimd_fp16, "asimd_fp16", "asimdhp", true},
    {cpu_feature::i8mm, "i8mm", "i8mm", true},
    {cpu_feature::arm_bf16, "arm_bf16", "bf16", true},
    {cpu_feature::sve, "sve", "sve", true},
    {cpu_feature::sve2, "sve2", "sve2", true},
    {cpu_feature::sme, "sme", "sme", true},
}};
static_assert(detail::table_is_indexed_and_unique(cpu_feature_table));
static_assert(cpu_feature_count <= 32, "cpu_features is a 32-bit set");

constexpr std::string_view to_string(cpu_feature f) noexcept {
    return cpu_feature_table[static_cast<std::size_t>(f)].name;
}

namespace detail {
/// cpu_feature_table's proc_flag column, packed (the table's rows are in cpu_feature
/// order), and its arm column as a bit per feature: what reading /proc/cpuinfo needs.
inline constexpr auto cpu_proc_flags =
    pack_column<column_chars(cpu_feature_table, [](const cpu_feature_info& r) { return r.proc_flag; })>(
        cpu_feature_table, [](const cpu_feature_info& r) { return r.proc_flag; });
inline constexpr std::uint32_t cpu_arm_features = [] {
    std::uint32_t bits = 0;
    for (const auto& row : cpu_feature_table)
        if (row.arm) bits |= std::uint32_t{1} << static_cast<unsigned>(row.id);
    return bits;
}();
} // namespace detail

/// A set of cpu_feature values.
struct cpu_features {
    std::uint32_t bits = 0;
    constexpr bool has(cpu_feature f) const noexcept {
        return (bits >> static_cast<unsigned>(f)) & 1u;
    }
    constexpr void set(cpu_feature f) noexcept { bits |= 1u << static_cast<unsigned>(f); }
    friend constexpr bool operator==(cpu_features, cpu_features) noexcept = default;
};

enum class cpu_arch : std::uint8_t { unknown, x86_64, aarch64, arm, riscv64, ppc64le, s390x };
constexpr std::string_view to_string(cpu_arch a) noexcept {
    switch (a) {
    case cpu_arch::unknown: return "unknown";
    case cpu_arch::x86_64: return "x86_64";
    case cpu_arch::aarch64: return "aarch64";
    case cpu_arch::arm: return "arm";
    case cpu_arch::riscv64: return "riscv64";
    case cpu_arch::ppc64le: return "ppc64le";
    case cpu_arch::s390x: return "s390x";
    }
    return "unknown";
}

struct cpu_info {
    std::string model;
    vendor maker = vendor::unknown;
    cpu_arch arch = cpu_arch::unknown;
    std::uint32_t sockets = 0;
    std::uint32_t cores = 0;   ///< physical cores, all sockets
    std::uint32_t threads = 0; ///< logical CPUs online
    /// Online CPUs this process may run on (affinity mask / cgroup cpuset), 0 when unknown.
    std::uint32_t usable_threads = 0;
    /// The container's CPU quota in CPUs (cgroup v2 cpu.max, v1 cfs_quota_us/period_us;
    /// 2.5 = 250 ms of CPU time per 100 ms), 0 when there is none.
    double cpu_quota = 0;
    cpu_features features;
    friend bool operator==(const cpu_info&, const cpu_info&) = default;
};

// ---------------------------------------------------------------------------------------
// Memory and NUMA

struct memory_info {
    sourced<std::uint64_t> total_bytes;     ///< physical RAM (MemTotal)
    sourced<std::uint64_t> available_bytes; ///< MemAvailable
    /// The cgroup memory limit (v2 memory.max, v1 memory.limit_in_bytes): the smallest set
    /// on the process's cgroup or an ancestor, the container's or the service's. Planning
    /// uses min(total, limit).
    sourced<std::uint64_t> cgroup_limit_bytes;
    /// The room left under those limits: at each cgroup with a limit, the limit less the
    /// cgroup's working set (its usage less the inactive page cache the kernel reclaims
    /// first, as the kubelet counts it); the least of them. What this process can still
    /// allocate, where it is less than MemAvailable.
    sourced<std::uint64_t> cgroup_free_bytes;
    constexpr std::uint64_t usable_bytes() const noexcept {
        const auto total = total_bytes.value_or(0);
        if (cgroup_limit_bytes && (total == 0 || *cgroup_limit_bytes < total)) return *cgroup_limit_bytes;
        return total;
    }
    friend bool operator==(const memory_info&, const memory_info&) = default;
};

struct numa_node {
    std::uint32_t id = 0;
    /// The node's `MemTotal` (sysfs `nodeN/meminfo`); 0 when unread. A machine's only
    /// node counting less than /proc/meminfo's `MemTotal` (pages the kernel has yet to
    /// initialise) is given that whole total.
    std::uint64_t memory_bytes = 0;
    std::string cpus; ///< kernel cpulist syntax, "0-15,32-47"
    friend bool operator==(const numa_node&, const numa_node&) = default;
};

struct host_info {
    cpu_info cpu;
    memory_info memory;
    std::vector<numa_node> numa;
    friend bool operator==(const host_info&, const host_info&) = default;
};

// ---------------------------------------------------------------------------------------
// Links, storage, environment

/// One PCI function as /sys/bus/pci/devices/<address>/ describes it.
struct pci_device {
    pci_address address;
    std::uint32_t class_code = 0; ///< 24-bit class/subclass/prog-if, 0x030000 = VGA
    std::uint16_t vendor_id = 0;
    std::uint16_t device_id = 0;
    std::uint16_t subsystem_vendor_id = 0;
    std::uint16_t subsystem_device_id = 0;
    sourced<pcie_link> link_current;
    sourced<pcie_link> link_max;
    std::int32_t numa_node = -1; ///< -1: the kernel does not know (single node, or no SRAT)
    std::string driver;          ///< bound driver's name ("nvidia", "amdgpu"), empty if none
    friend bool operator==(const pci_device&, const pci_device&) = default;
};

struct interconnect {
    interconnect_kind kind = interconnect_kind::none;
    link_scope scope = link_scope::intra_node;
    std::string name;  ///< "mlx5_0 port 1", "NVLink GPU0", "XGMI hive 0x1234"
    std::string state; ///< as the source prints it ("ACTIVE", "4 links up")
    /// Total bandwidth in decimal GB/s (both directions, as vendors quote it).
    sourced<double> bandwidth_gbps;
    /// Indices (accelerator_profile::index) of the devices it joins; empty for NICs.
    std::vector<std::uint32_t> devices;
    friend bool operator==(const interconnect&, const interconnect&) = default;
};

/// Whether a network port passes traffic: its state is unknown (empty) or names ACTIVE
/// ("4: ACTIVE" from sysfs, "Active" from ibstat, "up", "LinkUp"); DOWN, INIT, ARMED,
/// POLLING and ACTIVE_DEFER do not.
constexpr bool port_active(std::string_view state) noexcept {
    state = detail::trim(state);
    if (state.empty()) return true;
    const auto colon = state.find(':');
    if (colon != std::string_view::npos) state = detail::trim(state.substr(colon + 1));
    return detail::iequals(state, "ACTIVE") || detail::iequals(state, "up") || detail::iequals(state, "LinkUp");
}

/// The links that `count` devices of one catalogue row, indexed 0 to count - 1, have among
/// themselves as that device is built into machines: the row's own link joining
/// consecutive indices in groups of its `link_domain` (one group of them all where the
/// domain is not known), a last group of a single device joined by none. Empty where the
/// row has no link faster than PCIe, which is what the planner assumes between devices no
/// link lists.
inline std::vector<interconnect> catalogue_links(const device_spec& spec, std::uint32_t count) {
    std::vector<interconnect> out;
    if (spec.link == interconnect_kind::none || spec.link == interconnect_kind::pcie) return out;
    const std::uint64_t group = spec.link_domain != 0 ? spec.link_domain : count;
    for (std::uint64_t first = 0; first + 1 < count; first += group) {
        const std::uint64_t last = first + group < count ? first + group : count; // one past
        interconnect l;
        l.kind = spec.link;
        l.scope = link_scope::intra_node;
        l.name = "catalogue link";
        if (last - first < count)
            l.name += ", devices " + std::to_string(first) + "-" + std::to_string(last - 1);
        if (spec.link_bandwidth_gbps > 0) l.bandwidth_gbps = {spec.link_bandwidth_gbps, origin::catalogue};
        for (auto i = first; i < last; ++i) l.devices.push_back(static_cast<std::uint32_t>(i));
        out.push_back(std::move(l));
    }
    return out;
}

enum class storage_kind : std::uint8_t { unknown, nvme, sata_ssd, hdd, virtual_disk, network, ram };
constexpr std::string_view to_string(storage_kind k) noexcept {
    switch (k) {
    case storage_kind::unknown: return "unknown";
    case storage_kind::nvme: return "nvme";
    case storage_kind::sata_ssd: return "sata_ssd";
    case storage_kind::hdd: return "hdd";
    case storage_kind::virtual_disk: return "virtual_disk";
    case storage_kind::network: return "network";
    case storage_kind::ram: return "ram";
    }
    return "unknown";
}

struct storage_device {
    std::string name; ///< kernel name: nvme0n1, sda, vda
    std::string model;
    storage_kind kind = storage_kind::unknown;
    std::uint64_t size_bytes = 0;
    sourced<double> read_bandwidth_gbps;
    friend bool operator==(const storage_device&, const storage_device&) = default;
};

enum class container_runtime : std::uint8_t { none, docker, podman, containerd, lxc, other };
constexpr std::string_view to_string(container_runtime c) noexcept {
    switch (c) {
    case container_runtime::none: return "none";
    case container_runtime::docker: return "docker";
    case container_runtime::podman: return "podman";
    case container_runtime::containerd: return "containerd";
    case container_runtime::lxc: return "lxc";
    case container_runtime::other: return "other";
    }
    return "none";
}

enum class cloud_provider : std::uint8_t { none, aws, gcp, azure, oracle, other };
constexpr std::string_view to_string(cloud_provider c) noexcept {
    switch (c) {
    case cloud_provider::none: return "none";
    case cloud_provider::aws: return "aws";
    case cloud_provider::gcp: return "gcp";
    case cloud_provider::azure: return "azure";
    case cloud_provider::oracle: return "oracle";
    case cloud_provider::other: return "other";
    }
    return "none";
}

struct runtime_environment {
    container_runtime container = container_runtime::none;
    bool kubernetes = false;
    std::string kubernetes_namespace;
    bool wsl = false;
    std::string hypervisor; ///< "KVM", "Microsoft", … from DMI, /sys/hypervisor or kvm-clock; empty on bare metal
    cloud_provider cloud = cloud_provider::none;
    std::string instance_type;
    std::string region;
    std::string zone;
    friend bool operator==(const runtime_environment&, const runtime_environment&) = default;
};

struct system_io {
    std::vector<pci_device> pci_devices;
    std::vector<interconnect> interconnects;
    std::vector<storage_device> storage;
    runtime_environment environment;

    bool has_interconnect(link_scope s) const noexcept {
        for (const auto& l : interconnects)
            if (l.scope == s) return true;
        return false;
    }
    friend bool operator==(const system_io&, const system_io&) = default;
};

AI_HWACCEL_NAMESPACE_END
