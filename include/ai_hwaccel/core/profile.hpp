// ai-hwaccel core: accelerator_profile, one device as the library knows it.
//
// Every measurable value is a `sourced<T>`: the value plus where it came from (a tool's
// report, a kernel file, the device catalogue, or an estimate). A value nobody supplied
// has origin `none`, so "unknown" is never confused with zero and an estimate is never
// shown as a measurement. The profile is a literal type (names live in inplace_string),
// so registries known at compile time can be built and planned over in constant
// expressions.
#pragma once

#include "ai_hwaccel/config.hpp"
#include "ai_hwaccel/core/backend.hpp"
#include "ai_hwaccel/core/device_spec.hpp"
#include "ai_hwaccel/core/inplace_string.hpp"
#include "ai_hwaccel/core/pci.hpp"
#include "ai_hwaccel/core/taxonomy.hpp"

#include <cstdint>
#include <optional>
#include <string_view>

AI_HWACCEL_NAMESPACE_BEGIN

/// Where a value came from. Ordered by trust: a reading beats a lookup beats a guess.
enum class origin : std::uint8_t {
    none,      ///< no value
    estimated, ///< derived by a model (e.g. bandwidth from clocks and bus width)
    catalogue, ///< looked up in the device catalogue
    measured,  ///< measured by the library on request (measure_memory_bandwidth)
    user,      ///< supplied by the caller (what-if registries, --device on the CLI)
    sysfs,     ///< read from a kernel interface (/sys, /proc, /dev)
    tool,      ///< reported by a vendor tool or runtime library
};
constexpr std::string_view to_string(origin o) noexcept {
    switch (o) {
    case origin::none: return "none";
    case origin::estimated: return "estimated";
    case origin::catalogue: return "catalogue";
    case origin::measured: return "measured";
    case origin::user: return "user";
    case origin::sysfs: return "sysfs";
    case origin::tool: return "tool";
    }
    return "none";
}
constexpr std::optional<origin> parse_origin(std::string_view s) noexcept {
    for (auto o : {origin::none, origin::estimated, origin::catalogue, origin::measured, origin::user, origin::sysfs,
                   origin::tool})
        if (to_string(o) == s) return o;
    return std::nullopt;
}

/// A value and its origin. Empty when `from == origin::none`.
template <class T>
struct sourced {
    T value{};
    origin from = origin::none;

    constexpr sourced() noexcept = default;
    constexpr sourced(T v, origin o) noexcept : value(v), from(o) {}

    constexpr bool has_value() const noexcept { return from != origin::none; }
    constexpr explicit operator bool() const noexcept { return has_value(); }
    constexpr const T& operator*() const noexcept { return value; }
    constexpr const T* operator->() const noexcept { return &value; }
    constexpr T value_or(T fallback) const noexcept { return has_value() ? value : fallback; }
    /// Replaces the value only if `o` is at least as trustworthy as the current origin.
    constexpr bool offer(T v, origin o) noexcept {
        if (o == origin::none || o < from) return false;
        value = v;
        from = o;
        return true;
    }
    constexpr void reset() noexcept { *this = sourced{}; }
    friend constexpr bool operator==(const sourced&, const sourced&) noexcept = default;
};

/// One device. Fields mirror what backends can learn; all are optional but `kind`.
struct accelerator_profile {
    device_kind kind = device_kind::cpu;
    /// The backend's own index for the device (nvidia-smi index, DRM card number, …).
    std::uint32_t index = 0;
    /// False when the device was seen but cannot be used (driver error, hidden by a
    /// *_VISIBLE_DEVICES mask, in a bad state).
    bool available = true;
    /// A software implementation (llvmpipe, lavapipe, SwiftShader, WARP): listed so the
    /// user sees it, never counted as an accelerator.
    bool software = false;
    /// The device shares the host's memory (Apple Silicon, integrated GPUs, NPUs, GH200's
    /// coherent LPDDR): its memory is not added on top of the host's in totals.
    bool unified_memory = false;
    vendor maker = vendor::unknown;

    inplace_string<63> name;
    inplace_string<63> uuid;
    std::optional<pci_address> pci;
    /// Which stack of a multi-stack card this device is, where runtimes show each stack as a
    /// device of its own (a Max 1550 under Level Zero's FLAT hierarchy, device_spec::stacks):
    /// the card's stacks share its PCI function. Empty for a whole device.
    std::optional<std::uint8_t> stack;
    std::uint16_t pci_device_id = 0; ///< PCI device id when known (0 otherwise)
    inplace_string<15> arch;         ///< compute capability "9.0", gfx target "gfx942", …
    inplace_string<31> driver_version;

    sourced<std::uint64_t> memory_bytes;
    sourced<std::uint64_t> memory_used_bytes;
    sourced<std::uint64_t> memory_free_bytes;
    sourced<double> memory_bandwidth_gbps;
    /// Peak dense throughput per data type, from the catalogue unless a backend knows.
    peak_throughput peak{};
    origin peak_from = origin::none;
    sourced<std::uint32_t> compute_units; ///< SMs, CUs, cores as the vendor counts them
    sourced<std::uint32_t> chips;         ///< chips behind one device (TPU hosts, Neuron)

    sourced<pcie_link> pcie_current;
    sourced<pcie_link> pcie_max;
    sourced<std::int32_t> numa_node;

    sourced<double> temperature_c;
    sourced<double> power_draw_watts;
    sourced<double> power_limit_watts;
    sourced<double> utilization_percent;

    /// The catalogue row this device was matched to, if any.
    const device_spec* spec = nullptr;

    constexpr family device_family() const noexcept { return family_of(kind); }
    constexpr bool is_cpu() const noexcept { return kind == device_kind::cpu; }
    /// Usable as an AI accelerator: available, not the CPU, not a software renderer.
    constexpr bool is_accelerator() const noexcept { return available && !is_cpu() && !software; }
    constexpr std::optional<backend_id> backend() const noexcept { return backend_for(kind); }

    /// Host-link bandwidth in GB/s, one direction: the maximum link the device and slot
    /// support when known (a link idles at a low generation to save power; probe_pci caps
    /// the device's own maximum by the ports above it), else the current one; 0 when unknown.
    constexpr double pcie_bandwidth_gbps() const noexcept {
        if (pcie_max && pcie_max->known()) return pcie_max->bandwidth_gbps();
        if (pcie_current && pcie_current->known()) return pcie_current->bandwidth_gbps();
        return 0;
    }
    /// Whether the device computes natively in `d` (known from the catalogue or a tool).
    constexpr bool supports(dtype d) const noexcept { return peak.supports(d); }

    /// Fills every value still unknown from a catalogue row, marked origin::catalogue.
    constexpr void apply_spec(const device_spec& s) noexcept {
        spec = &s;
        if (maker == vendor::unknown) maker = s.maker;
        if (s.memory_bytes != 0 && !memory_bytes) memory_bytes = {reported_memory_bytes(s), origin::catalogue};
        if (s.memory_bandwidth_gbps > 0 && !memory_bandwidth_gbps)
            memory_bandwidth_gbps = {s.memory_bandwidth_gbps, origin::catalogue};
        if (peak_from == origin::none && s.peak.any()) { // a row with no figures says nothing
            peak = s.peak;
            peak_from = origin::catalogue;
        }
        if (s.compute_units != 0 && !compute_units) compute_units = {s.compute_units, origin::catalogue};
        if (arch.empty()) arch = s.arch;
        if (s.power_watts > 0 && !power_limit_watts) power_limit_watts = {s.power_watts, origin::catalogue};
        if (s.memory == memory_type::unified || s.shared_with_host) unified_memory = true;
    }
};

/// A profile describing a catalogue device as if present ("what if I had an H100?").
constexpr accelerator_profile profile_from_spec(const device_spec& s, std::uint32_t index = 0) noexcept {
    accelerator_profile p;
    p.kind = s.kind;
    p.index = index;
    p.name = s.name;
    p.pci_device_id = s.pci_device_ids.empty() ? std::uint16_t{0} : s.pci_device_ids[0];
    p.apply_spec(s);
    if (s.pcie_generation != 0) p.pcie_max = {pcie_link{s.pcie_generation, s.pcie_lanes}, origin::catalogue};
    return p;
}

AI_HWACCEL_NAMESPACE_END
