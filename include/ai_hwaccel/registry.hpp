// ai-hwaccel: the accelerator registry.
//
// A registry is what detection returns: the devices (profiles), the warnings collected
// while looking for them, the host (CPU, memory, NUMA) and the system around them (links,
// storage, environment). Queries are range-v3 pipelines over the profiles. Filtering
// queries (`available`, `by_family`, `satisfying`) return lazy views that borrow from the
// registry: they stay valid while the registry lives and is not modified, and can be
// materialised with `ranges::to<std::vector>()` (range/v3/range/conversion.hpp). Everything
// else returns values.
//
// Memory totals count shared memory once: on Apple Silicon the Metal GPU, the Neural
// Engine and the CPU all draw from one unified pool, which is added once, not three times.
#pragma once

#include "ai_hwaccel/config.hpp"
#include "ai_hwaccel/core/profile.hpp"
#include "ai_hwaccel/core/requirement.hpp"
#include "ai_hwaccel/core/system_io.hpp"
#include "ai_hwaccel/core/warning.hpp"

#include <range/v3/algorithm/find_if.hpp>
#include <range/v3/numeric/accumulate.hpp>
#include <range/v3/iterator/operations.hpp>
#include <range/v3/range/primitives.hpp>
#include <range/v3/view/filter.hpp>
#include <range/v3/view/transform.hpp>

#include <cmath>
#include <cstdint>
#include <optional>
#include <type_traits>
#include <span>
#include <string_view>
#include <utility>
#include <vector>

AI_HWACCEL_NAMESPACE_BEGIN

/// How much a device can do for model inference, as one number for ranking: the
/// geometric mean of memory capacity (GiB, what fits) and memory bandwidth (GB/s, how
/// fast it decodes), nudged by peak 16-bit compute (how fast it prefills). A device with
/// unknown bandwidth scores on capacity alone at a nominal 1 GB/s, so it ranks below any
/// device whose bandwidth is known. Not a throughput estimate: use plan/ for that.
constexpr double capability_score(const accelerator_profile& p) noexcept {
    const double mem_gib = units::to_gib(p.memory_bytes.value_or(0));
    const double bw = p.memory_bandwidth_gbps.value_or(1.0);
    const double f16 = p.peak.bf16 > p.peak.fp16 ? p.peak.bf16 : p.peak.fp16;
    const double x = mem_gib * bw;
    if (x <= 0) return 0;
    double r;
    if (std::is_constant_evaluated()) {
        // std::sqrt is not constexpr in C++20: Newton's iteration converges from above.
        r = x > 1 ? x : 1;
        for (int i = 0; i < 64; ++i) r = 0.5 * (r + x / r);
    } else {
        r = std::sqrt(x);
    }
    return r * (1.0 + f16 / 10'000.0);
}

class accelerator_registry {
public:
    /// Version of the registry's serialized shape (io/json); bumped on incompatible change.
    static constexpr int schema_version = 1;

    accelerator_registry() = default;
    explicit accelerator_registry(std::vector<accelerator_profile> profiles,
                                  std::vector<warning> warnings = {}, host_info host = {},
                                  system_io io = {})
        : profiles_(std::move(profiles)), warnings_(std::move(warnings)), host_(std::move(host)),
          io_(std::move(io)) {}

    // --- Contents -----------------------------------------------------------------------
    /// Every profile, available or not, in detection order.
    std::span<const accelerator_profile> all() const noexcept { return profiles_; }
    std::span<const warning> warnings() const noexcept { return warnings_; }
    const host_info& host() const noexcept { return host_; }
    const system_io& system() const noexcept { return io_; }
    std::size_t size() const noexcept { return profiles_.size(); }
    bool empty() const noexcept { return profiles_.empty(); }

    void add(accelerator_profile p) { profiles_.push_back(std::move(p)); }
    void add(warning w) { warnings_.push_back(std::move(w)); }
    void add(interconnect link) { io_.interconnects.push_back(std::move(link)); }
    host_info& host() noexcept { return host_; }
    system_io& system() noexcept { return io_; }

    // --- Queries (lazy views borrowing from *this) --------------------------------------
    /// Available profiles, the CPU included.
    auto available() const {
        return ranges::views::all(profiles_) |
               ranges::views::filter([](const accelerator_profile& p) { return p.available; });
    }
    /// Available accelerators: not the CPU, not software renderers.
    auto accelerators() const {
        return ranges::views::all(profiles_) | ranges::views::filter([](const accelerator_profile& p) {
                   return p.is_accelerator();
               });
    }
    auto by_family(family f) const {
        return available() |
               ranges::views::filter([f](const accelerator_profile& p) { return p.device_family() == f; });
    }
    auto by_kind(device_kind k) const {
        return available() |
               ranges::views::filter([k](const accelerator_profile& p) { return p.kind == k; });
    }
    auto satisfying(requirement r) const {
        return ranges::views::all(profiles_) | ranges::views::filter(r);
    }

    // --- Answers (values) ---------------------------------------------------------------
    bool has_accelerator() const { return !ranges::empty(accelerators()); }

    /// The most capable available device by capability_score: accelerators first, the CPU
    /// only when there is no accelerator. Ties keep detection order. Empty registry: none.
    std::optional<accelerator_profile> best_available() const {
        if (const auto* p = best_of(accelerators())) return *p;
        if (const auto* p = best_of(available())) return *p;
        return std::nullopt;
    }

    /// Memory of every available device, shared pools counted once (bytes).
    std::uint64_t total_memory() const { return total_of(available()); }
    /// Memory of available accelerators only, shared pools counted once (bytes).
    std::uint64_t total_accelerator_memory() const { return total_of(accelerators()); }

    std::size_t count(requirement r) const {
        return static_cast<std::size_t>(ranges::distance(satisfying(r)));
    }

    /// The profile with this UUID or PCI address, if any.
    std::optional<accelerator_profile> find_uuid(std::string_view uuid) const {
        auto it = ranges::find_if(profiles_, [&](const accelerator_profile& p) {
            return !p.uuid.empty() && p.uuid.view() == uuid;
        });
        if (it == profiles_.end()) return std::nullopt;
        return *it;
    }
    std::optional<accelerator_profile> find_pci(const pci_address& a) const {
        auto it = ranges::find_if(profiles_, [&](const accelerator_profile& p) { return p.pci == a; });
        if (it == profiles_.end()) return std::nullopt;
        return *it;
    }

    // --- What-if (new registries; this one is unchanged) --------------------------------
    /// Adds devices and, optionally, the links that join them (hypothetical devices get no
    /// links unless given: adding two H100s does not invent an NVLink). Warnings are kept:
    /// they describe the real part of the machine.
    accelerator_registry what_if_add(std::span<const accelerator_profile> extra,
                                     std::span<const interconnect> links = {}) const {
        accelerator_registry r = *this;
        for (const auto& p : extra) r.profiles_.push_back(p);
        for (const auto& l : links) r.io_.interconnects.push_back(l);
        return r;
    }
    /// Drops every profile for which `pred` is true. Nothing is re-detected.
    template <class Pred>
    accelerator_registry what_if_remove(Pred pred) const {
        accelerator_registry r = *this;
        std::erase_if(r.profiles_, pred);
        return r;
    }
    /// Replaces all profiles, keeping host, links and environment.
    accelerator_registry what_if_replace(std::vector<accelerator_profile> profiles) const {
        accelerator_registry r = *this;
        r.profiles_ = std::move(profiles);
        return r;
    }

    friend bool operator==(const accelerator_registry& a, const accelerator_registry& b) {
        if (a.profiles_.size() != b.profiles_.size()) return false;
        for (std::size_t i = 0; i < a.profiles_.size(); ++i)
            if (!same_profile(a.profiles_[i], b.profiles_[i])) return false;
        return a.warnings_ == b.warnings_ && a.host_ == b.host_ && a.io_ == b.io_;
    }

private:
    // First profile with the highest capability_score, each score computed once.
    template <class Rng>
    static const accelerator_profile* best_of(Rng&& rng) {
        const accelerator_profile* best = nullptr;
        double best_score = -1;
        for (const accelerator_profile& p : rng) {
            const double score = capability_score(p);
            if (score > best_score) {
                best = &p;
                best_score = score;
            }
        }
        return best;
    }

    static bool same_profile(const accelerator_profile& a, const accelerator_profile& b) {
        return a.kind == b.kind && a.index == b.index && a.available == b.available &&
               a.software == b.software && a.unified_memory == b.unified_memory &&
               a.maker == b.maker && a.name == b.name && a.uuid == b.uuid && a.pci == b.pci &&
               a.pci_device_id == b.pci_device_id && a.arch == b.arch &&
               a.driver_version == b.driver_version && a.memory_bytes == b.memory_bytes &&
               a.memory_used_bytes == b.memory_used_bytes &&
               a.memory_free_bytes == b.memory_free_bytes &&
               a.memory_bandwidth_gbps == b.memory_bandwidth_gbps && a.peak_from == b.peak_from &&
               a.compute_units == b.compute_units && a.chips == b.chips &&
               a.pcie_current == b.pcie_current && a.pcie_max == b.pcie_max &&
               a.numa_node == b.numa_node && a.temperature_c == b.temperature_c &&
               a.power_draw_watts == b.power_draw_watts && a.power_limit_watts == b.power_limit_watts &&
               a.utilization_percent == b.utilization_percent && a.spec == b.spec;
    }

    // Discrete memory adds up; unified memory is one pool, counted once at its largest view.
    // One pass: the query is on hot paths (planning loops call it per candidate).
    template <class Rng>
    static std::uint64_t total_of(Rng&& rng) {
        std::uint64_t discrete = 0, pool = 0;
        for (const accelerator_profile& p : rng) {
            const std::uint64_t bytes = p.memory_bytes.value_or(0);
            if (p.unified_memory || p.is_cpu()) pool = bytes > pool ? bytes : pool;
            else discrete += bytes;
        }
        return discrete + pool;
    }

    std::vector<accelerator_profile> profiles_;
    std::vector<warning> warnings_;
    host_info host_;
    system_io io_;
};

AI_HWACCEL_NAMESPACE_END
