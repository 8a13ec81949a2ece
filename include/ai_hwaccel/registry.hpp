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
// A profile is several hundred bytes, and most queries read two or three fields of it. So
// the registry keeps a small index beside the profiles (position, kind and family of each
// available device and accelerator, the memory totals, the best device), rebuilt by every
// member that changes the profiles. Queries walk that index and touch a profile only to
// hand it out. Nothing is filled in lazily: a const registry can be read from several
// threads at once.
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

#include <array>
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
/// unknown bandwidth is scored at a nominal 1 GB/s, so it ranks low, but not below every
/// device whose bandwidth is known: 80 GiB at an unknown rate outscores 1 GiB at 50 GB/s.
/// A device of unknown memory scores 0, as does one whose figures are not numbers. Not a
/// throughput estimate: use plan/ for that.
constexpr double capability_score(const accelerator_profile& p) noexcept {
    const double mem_gib = units::to_gib(p.memory_bytes.value_or(0));
    const double bw = p.memory_bandwidth_gbps.value_or(1.0);
    double f16 = p.peak.bf16 > p.peak.fp16 ? p.peak.bf16 : p.peak.fp16;
    if (!(f16 > 0)) f16 = 0; // NaN too
    const double x = mem_gib * bw;
    if (!(x > 0)) return 0; // NaN too: a score that compares false would never be chosen
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
    accelerator_registry(const accelerator_registry&) = default;
    accelerator_registry(accelerator_registry&&) = default;
    // Copy and swap: a failed copy leaves *this as it was (a member-wise copy could leave
    // the old index over the new profiles).
    accelerator_registry& operator=(const accelerator_registry& other) {
        if (this != &other) *this = accelerator_registry(other);
        return *this;
    }
    accelerator_registry& operator=(accelerator_registry&&) = default;
    ~accelerator_registry() = default;
    explicit accelerator_registry(std::vector<accelerator_profile> profiles,
                                  std::vector<warning> warnings = {}, host_info host = {},
                                  system_io io = {})
        : profiles_(std::move(profiles)), warnings_(std::move(warnings)), host_(std::move(host)),
          io_(std::move(io)) {
        index_into(index_); // empty until now: built in place
    }

    // --- Contents -----------------------------------------------------------------------
    /// Every profile, available or not, in detection order.
    std::span<const accelerator_profile> all() const noexcept { return profiles_; }
    std::span<const warning> warnings() const noexcept { return warnings_; }
    const host_info& host() const noexcept { return host_; }
    const system_io& system() const noexcept { return io_; }
    std::size_t size() const noexcept { return profiles_.size(); }
    bool empty() const noexcept { return profiles_.empty(); }

    void add(accelerator_profile p) {
        // Room first, so that an allocation failure cannot leave a profile the index lacks.
        make_room(profiles_);
        index_.append(p, profiles_.size());
        profiles_.push_back(std::move(p)); // cannot throw: there is room, and moving a profile cannot
    }
    void add(warning w) { warnings_.push_back(std::move(w)); }
    void add(interconnect link) { io_.interconnects.push_back(std::move(link)); }
    host_info& host() noexcept { return host_; }
    system_io& system() noexcept { return io_; }

    // --- Queries (lazy views borrowing from *this) --------------------------------------
    /// Available profiles, the CPU included. Sized: `ranges::distance` does not walk it.
    auto available() const {
        return ranges::views::all(index_.available) |
               ranges::views::transform(profile_at{profiles_.data()});
    }
    /// Available accelerators: not the CPU, not software renderers. Sized.
    auto accelerators() const {
        return ranges::views::all(index_.accelerators) |
               ranges::views::transform(profile_at{profiles_.data()});
    }
    /// Available profiles of one family. Sized.
    auto by_family(family f) const {
        return family_slots(f) | ranges::views::transform(profile_at{profiles_.data()});
    }
    auto by_kind(device_kind k) const {
        return ranges::views::all(index_.available) |
               ranges::views::filter([k](const slot& s) { return s.kind == k; }) |
               ranges::views::transform(profile_at{profiles_.data()});
    }
    auto satisfying(requirement r) const {
        return ranges::views::all(profiles_) | ranges::views::filter(r);
    }

    // --- Answers (values) ---------------------------------------------------------------
    bool has_accelerator() const noexcept { return !index_.accelerators.empty(); }

    /// The most capable available device by capability_score: accelerators first, the CPU
    /// only when there is no accelerator. Ties keep detection order. Empty registry: none.
    std::optional<accelerator_profile> best_available() const {
        const auto at = best_available_position();
        if (!at) return std::nullopt;
        return profiles_[*at];
    }

    /// Where best_available's device is in all(), without copying it. Empty registry: none.
    std::optional<std::size_t> best_available_position() const noexcept {
        const best_pick& pick =
            index_.best_accelerator.found() ? index_.best_accelerator : index_.best_available;
        if (!pick.found()) return std::nullopt;
        return static_cast<std::size_t>(pick.at);
    }

    /// Memory of every available device, shared pools counted once (bytes).
    std::uint64_t total_memory() const noexcept { return index_.available_memory.value(); }
    /// Memory of available accelerators only, shared pools counted once (bytes).
    std::uint64_t total_accelerator_memory() const noexcept { return index_.accelerator_memory.value(); }

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
        for (const auto& p : extra) r.add(p);
        for (const auto& l : links) r.io_.interconnects.push_back(l);
        return r;
    }
    /// Drops every profile for which `pred` is true. Nothing is re-detected.
    template <class Pred>
    accelerator_registry what_if_remove(Pred pred) const {
        accelerator_registry r = *this;
        std::erase_if(r.profiles_, pred);
        r.reindex();
        return r;
    }
    /// Replaces all profiles, keeping host, links and environment.
    accelerator_registry what_if_replace(std::vector<accelerator_profile> profiles) const {
        accelerator_registry r = *this;
        r.profiles_ = std::move(profiles);
        r.reindex();
        return r;
    }

    friend bool operator==(const accelerator_registry& a, const accelerator_registry& b) {
        if (a.profiles_.size() != b.profiles_.size()) return false;
        for (std::size_t i = 0; i < a.profiles_.size(); ++i)
            if (!same_profile(a.profiles_[i], b.profiles_[i])) return false;
        return a.warnings_ == b.warnings_ && a.host_ == b.host_ && a.io_ == b.io_;
    }

private:
    // --- The index: what hot queries need, derived from profiles_ ------------------------
    // One available device: 8 bytes, so a walk over 129 of them stays in a few cache lines.
    struct slot {
        std::uint32_t at; // position in profiles_
        device_kind kind;
        family fam;
    };

    // Discrete memory adds up; unified memory is the host's, counted once at its largest
    // view. A unified device on a NUMA node of its own has that node's share of it (each
    // of four MI300A APUs its socket's HBM): the largest view on each node adds up (past
    // node 7, every view: no machine has that many), and the host's memory is the larger of
    // that and the largest view of no known node (the CPU, whose memory is every node's; an
    // Apple GPU). Sums saturate at UINT64_MAX (a registry read from JSON may claim
    // anything), as the planner's do.
    struct memory_total {
        static constexpr std::size_t max_nodes = 8; // nodes 0 to 7 kept apart; past them, summed
        std::uint64_t discrete = 0;
        std::uint64_t pool = 0; // the largest unified view of no known NUMA node
        std::array<std::uint64_t, max_nodes + 1> on_node{}; // the largest view on each; the last: past them
        static constexpr std::uint64_t sum(std::uint64_t a, std::uint64_t b) noexcept {
            return a > UINT64_MAX - b ? UINT64_MAX : a + b;
        }
        void add(const accelerator_profile& p) noexcept {
            const std::uint64_t bytes = p.memory_bytes.value_or(0);
            if (!p.unified_memory && !p.is_cpu()) {
                discrete = sum(discrete, bytes);
                return;
            }
            const std::int32_t node = p.is_cpu() ? -1 : p.numa_node.value_or(-1);
            if (node < 0) pool = bytes > pool ? bytes : pool;
            else if (static_cast<std::size_t>(node) >= max_nodes) on_node[max_nodes] = sum(on_node[max_nodes], bytes);
            else if (bytes > on_node[static_cast<std::size_t>(node)]) on_node[static_cast<std::size_t>(node)] = bytes;
        }
        std::uint64_t value() const noexcept {
            std::uint64_t nodes = 0;
            for (const auto b : on_node) nodes = sum(nodes, b);
            return sum(discrete, nodes > pool ? nodes : pool);
        }
    };

    // The first profile with the highest capability_score seen so far.
    struct best_pick {
        static constexpr std::uint32_t none = UINT32_MAX;
        std::uint32_t at = none;
        double score = -1;
        bool found() const noexcept { return at != none; }
        void offer(std::uint32_t i, double s) noexcept {
            if (s > score) { // strictly: ties keep detection order
                at = i;
                score = s;
            }
        }
    };

    struct profile_index {
        std::vector<slot> available;
        std::vector<slot> accelerators;
        std::array<std::vector<slot>, family_count> families; // the available ones, by family
        memory_total available_memory;
        memory_total accelerator_memory;
        best_pick best_available;
        best_pick best_accelerator;

        profile_index() = default;
        profile_index(const profile_index&) = default;
        profile_index& operator=(const profile_index&) = default;
        // A moved-from registry has no profiles (a moved-from std::vector is empty), so its
        // index is left empty too rather than describing profiles it no longer holds.
        profile_index(profile_index&& o) noexcept
            : available(std::exchange(o.available, {})), accelerators(std::exchange(o.accelerators, {})),
              families(std::exchange(o.families, {})),
              available_memory(std::exchange(o.available_memory, {})),
              accelerator_memory(std::exchange(o.accelerator_memory, {})),
              best_available(std::exchange(o.best_available, {})),
              best_accelerator(std::exchange(o.best_accelerator, {})) {}
        profile_index& operator=(profile_index&& o) noexcept {
            if (this != &o) {
                available = std::exchange(o.available, {});
                accelerators = std::exchange(o.accelerators, {});
                families = std::exchange(o.families, {});
                available_memory = std::exchange(o.available_memory, {});
                accelerator_memory = std::exchange(o.accelerator_memory, {});
                best_available = std::exchange(o.best_available, {});
                best_accelerator = std::exchange(o.best_accelerator, {});
            }
            return *this;
        }

        // Indexes p as profiles_[position], after every profile indexed so far. Allocates
        // before it changes anything: if that fails, the index is as it was.
        void append(const accelerator_profile& p, std::size_t position) {
            if (!p.available) return;
            const slot s{static_cast<std::uint32_t>(position), p.kind, p.device_family()};
            const auto f = static_cast<std::size_t>(s.fam);
            const bool accelerator = p.is_accelerator();
            make_room(available);
            if (f < family_count) make_room(families[f]);
            if (accelerator) make_room(accelerators);

            const double score = capability_score(p);
            available.push_back(s);
            if (f < family_count) families[f].push_back(s);
            available_memory.add(p);
            best_available.offer(s.at, score);
            if (accelerator) {
                accelerators.push_back(s);
                accelerator_memory.add(p);
                best_accelerator.offer(s.at, score);
            }
        }
    };

    // Makes the next push_back unable to fail, growing geometrically as push_back would.
    template <class T>
    static void make_room(std::vector<T>& v) {
        if (v.size() == v.capacity()) v.reserve(v.empty() ? 4 : 2 * v.size());
    }
    static_assert(std::is_nothrow_move_constructible_v<accelerator_profile>);

    // Called by every member that changes profiles_ other than by appending one.
    void reindex() {
        profile_index fresh;
        index_into(fresh);
        index_ = std::move(fresh);
    }
    void index_into(profile_index& index) const {
        index.available.reserve(profiles_.size());
        for (std::size_t i = 0; i < profiles_.size(); ++i) index.append(profiles_[i], i);
    }

    std::span<const slot> family_slots(family f) const noexcept {
        const auto i = static_cast<std::size_t>(f);
        if (i >= family_count) return {}; // not a family: nothing, as a filter would give
        return index_.families[i];
    }

    // Turns a slot back into its profile. Holds the profiles' address, not the registry's:
    // views are invalidated by modification either way.
    struct profile_at {
        const accelerator_profile* all;
        const accelerator_profile& operator()(const slot& s) const noexcept { return all[s.at]; }
    };

    static bool same_profile(const accelerator_profile& a, const accelerator_profile& b) {
        return a.kind == b.kind && a.index == b.index && a.available == b.available &&
               a.software == b.software && a.unified_memory == b.unified_memory &&
               a.maker == b.maker && a.name == b.name && a.uuid == b.uuid && a.pci == b.pci &&
               a.stack == b.stack && a.pci_device_id == b.pci_device_id && a.arch == b.arch &&
               a.driver_version == b.driver_version && a.memory_bytes == b.memory_bytes &&
               a.memory_used_bytes == b.memory_used_bytes &&
               a.memory_free_bytes == b.memory_free_bytes &&
               a.memory_bandwidth_gbps == b.memory_bandwidth_gbps && a.peak == b.peak && a.peak_from == b.peak_from &&
               a.compute_units == b.compute_units && a.chips == b.chips &&
               a.pcie_current == b.pcie_current && a.pcie_max == b.pcie_max &&
               a.numa_node == b.numa_node && a.temperature_c == b.temperature_c &&
               a.power_draw_watts == b.power_draw_watts && a.power_limit_watts == b.power_limit_watts &&
               a.utilization_percent == b.utilization_percent && a.spec == b.spec;
    }

    std::vector<accelerator_profile> profiles_;
    std::vector<warning> warnings_;
    host_info host_;
    system_io io_;
    profile_index index_{};
};

/// A registry of hardware that is not there ("what if I had 16 H100s?"): `count` copies of
/// `device` (a catalogue profile, `profile_from_spec`, perhaps with its memory or bandwidth
/// set by hand) indexed 0 to count - 1, joined as the device is built into machines:
/// `catalogue_links` of its catalogue row (none without one), PCIe between the groups. An
/// APU whose row shares the host's memory (MI300A) is one a socket: each copy that names
/// no NUMA node gets one of its own, so that each counts its own memory.
inline accelerator_registry described_registry(const accelerator_profile& device, std::uint32_t count) {
    std::vector<accelerator_profile> devices(count, device);
    const bool socket_each = device.spec && device.spec->shared_with_host && !device.numa_node;
    for (std::uint32_t i = 0; i < count; ++i) {
        devices[i].index = i;
        if (socket_each && i <= INT32_MAX) devices[i].numa_node = {static_cast<std::int32_t>(i), origin::catalogue};
    }
    accelerator_registry reg(std::move(devices));
    if (device.spec)
        for (auto& l : catalogue_links(*device.spec, count)) reg.add(std::move(l));
    return reg;
}

AI_HWACCEL_NAMESPACE_END
