// ai-hwaccel detect: one device, one profile; and the devices a process may use.
//
// Several backends can see the same card: nvidia-smi and vulkaninfo both list an RTX 4090,
// amd-smi and the KFD topology both list an MI300X. `merge_duplicates` folds profiles that
// share a PCI address or a UUID into the first one seen, keeping for each value the most
// trustworthy source.
//
// `apply_visibility` honours the variables runtimes use to restrict a process to some
// devices (CUDA_VISIBLE_DEVICES, ROCR_VISIBLE_DEVICES then HIP_VISIBLE_DEVICES,
// HABANA_VISIBLE_DEVICES, NEURON_RT_VISIBLE_CORES, TPU_VISIBLE_CHIPS, ZE_AFFINITY_MASK).
// A hidden device stays in the registry, marked unavailable, with a `hidden_by_mask`
// warning: the user sees it and learns why it is not used.
#pragma once

#include "ai_hwaccel/config.hpp"
#include "ai_hwaccel/core/backend.hpp"
#include "ai_hwaccel/core/pci.hpp"
#include "ai_hwaccel/core/profile.hpp"
#include "ai_hwaccel/core/text.hpp"
#include "ai_hwaccel/core/warning.hpp"
#include "ai_hwaccel/detect/sysfs.hpp"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

AI_HWACCEL_NAMESPACE_BEGIN

namespace detail {

/// A UUID's identity: hexadecimal digits only, lower case, without the "GPU-"/"MIG-"
/// prefixes and dashes, so nvidia-smi's "GPU-5a7c…" and Vulkan's "5a7c…" compare equal, and
/// without the "0x" of rocm-smi's unique ids ("0x67c6…", which amdgpu's `unique_id` and
/// rocminfo's "GPU-67c6…" print without). `min_digits` below 8 is for matching a prefix the
/// user typed ("GPU-5a7c"). Older drivers' MIG UUIDs keep their instance: "MIG-GPU-5a7c…/1/0"
/// gives "5a7c…/1/0".
inline std::string uuid_key(std::string_view u, std::size_t min_digits = 8) {
    // In this order: older drivers' MIG UUIDs are "MIG-GPU-<uuid>/<gi>/<ci>".
    for (std::string_view prefix : {"MIG-", "mig-", "GPU-", "gpu-", "0x", "0X"})
        if (u.starts_with(prefix)) u.remove_prefix(prefix.size());
    std::string key;
    for (char c : u) {
        if (c == '-' || c == '{' || c == '}') continue;
        if (hex_value(c) < 0 && c != '/') return {}; // not a UUID at all ('/' parts a MIG instance's)
        key += ascii_lower(c);
    }
    // All zeros is what some tools print when they do not know.
    if (key.size() < min_digits || key.find_first_not_of('0') == std::string::npos) return {};
    return key;
}

template <class T>
constexpr void take_better(sourced<T>& keep, const sourced<T>& other) noexcept {
    if (other.has_value() && other.from > keep.from) keep = other;
}

template <std::size_t N>
constexpr void take_if_empty(inplace_string<N>& keep, const inplace_string<N>& other) noexcept {
    if (keep.empty() && !other.empty()) keep = other;
}

/// A graphics API's view of a card (Vulkan, DXGI), whose memory is what its driver offers
/// to allocate (a heap), not what the card has.
constexpr bool api_view(const accelerator_profile& p) noexcept {
    return p.kind == device_kind::vulkan_gpu || p.kind == device_kind::dxgi_gpu;
}

} // namespace detail

/// Folds `other` (another backend's view of the same device) into `keep`: every value
/// that `other` knows from a more trustworthy source replaces `keep`'s, except that a
/// graphics API's memory (a Vulkan or DXGI heap) only fills in for a vendor view that
/// knows none: RADV's heap of a 4 GiB card is 16 MiB short of amdgpu's VRAM total, and an
/// integrated GPU's heap is a part of the host memory the vendor view gives it.
constexpr void absorb(accelerator_profile& keep, const accelerator_profile& other) noexcept {
    detail::take_if_empty(keep.name, other.name);
    detail::take_if_empty(keep.uuid, other.uuid);
    detail::take_if_empty(keep.arch, other.arch);
    detail::take_if_empty(keep.driver_version, other.driver_version);
    if (!keep.pci) keep.pci = other.pci;
    if (keep.pci_device_id == 0) keep.pci_device_id = other.pci_device_id;
    if (keep.maker == vendor::unknown) keep.maker = other.maker;
    keep.unified_memory = keep.unified_memory || other.unified_memory;
    if (!keep.memory_bytes || !detail::api_view(other) || detail::api_view(keep))
        detail::take_better(keep.memory_bytes, other.memory_bytes);
    detail::take_better(keep.memory_used_bytes, other.memory_used_bytes);
    detail::take_better(keep.memory_free_bytes, other.memory_free_bytes);
    // Free memory is a part of the total it was reported against. Totals from two views can
    // differ (a Vulkan heap is smaller than the host's memory whose MemAvailable an
    // integrated GPU was given): then no more than the whole of the total kept is free.
    if (keep.memory_bytes && keep.memory_free_bytes && *keep.memory_free_bytes > *keep.memory_bytes)
        keep.memory_free_bytes = {*keep.memory_bytes, keep.memory_free_bytes.from};
    detail::take_better(keep.memory_bandwidth_gbps, other.memory_bandwidth_gbps);
    detail::take_better(keep.compute_units, other.compute_units);
    detail::take_better(keep.chips, other.chips);
    detail::take_better(keep.pcie_current, other.pcie_current);
    detail::take_better(keep.pcie_max, other.pcie_max);
    detail::take_better(keep.numa_node, other.numa_node);
    detail::take_better(keep.temperature_c, other.temperature_c);
    detail::take_better(keep.power_draw_watts, other.power_draw_watts);
    detail::take_better(keep.power_limit_watts, other.power_limit_watts);
    detail::take_better(keep.utilization_percent, other.utilization_percent);
    if (other.peak_from > keep.peak_from) {
        keep.peak = other.peak;
        keep.peak_from = other.peak_from;
    }
    if (!keep.spec) keep.spec = other.spec;
}

/// Whether two profiles describe the same device: same PCI address (and the same stack of
/// it, accelerator_profile::stack) unless both name UUIDs and they differ (compute
/// partitions may share a function), or same UUID. A Vulkan view's UUID is its driver's
/// (Mesa's and AMD's drivers write the PCI address into it, which no other tool prints as
/// a UUID): with a PCI address, the address decides. The CPU is never merged.
inline bool same_device(const accelerator_profile& a, const accelerator_profile& b) {
    if (a.is_cpu() || b.is_cpu()) return false;
    const auto ka = detail::uuid_key(a.uuid.view()), kb = detail::uuid_key(b.uuid.view());
    if (a.pci && b.pci)
        return *a.pci == *b.pci && a.stack == b.stack &&
               (ka.empty() || kb.empty() || ka == kb || a.kind == device_kind::vulkan_gpu ||
                b.kind == device_kind::vulkan_gpu);
    return !ka.empty() && ka == kb;
}

namespace detail {

/// Folds the views a layer gives of cards without naming their PCI address (`layered`)
/// into other views of the same cards (`same_card`, true of a layered view and itself).
/// Where the layered views and the other views of one card are as many, they pair in
/// order and each layered view folds into its partner, which keeps its place and kind
/// (identical cards are interchangeable, and absorb only fills what the partner lacks or
/// knows less well); the layered view's UUID is its layer's, not the card's. Counts that
/// differ pair nothing. Returns how many were folded.
inline std::size_t fold_layered(std::vector<accelerator_profile>& profiles,
                                bool (*layered)(const accelerator_profile&),
                                bool (*same_card)(const accelerator_profile&, const accelerator_profile&)) {
    std::size_t folded = 0;
    for (std::size_t first = 0; first < profiles.size(); ++first) {
        if (!layered(profiles[first])) continue;
        std::vector<std::size_t> layers, views;
        for (std::size_t j = 0; j < profiles.size(); ++j) {
            const auto& p = profiles[j];
            if (p.software || p.is_cpu() || !same_card(profiles[first], p)) continue;
            (layered(p) ? layers : views).push_back(j);
        }
        if (layers.front() != first || layers.size() != views.size()) continue; // done, or no pairing
        for (std::size_t k = 0; k < layers.size(); ++k) {
            accelerator_profile a = profiles[layers[k]];
            a.uuid.assign({});
            absorb(profiles[views[k]], a);
        }
        for (auto j = layers.rbegin(); j != layers.rend(); ++j)
            profiles.erase(profiles.begin() + static_cast<std::ptrdiff_t>(*j));
        folded += layers.size();
        first = static_cast<std::size_t>(-1); // start again: positions moved
    }
    return folded;
}

#if AI_HWACCEL_BACKEND_WINDOWS
/// DXGI's adapters (Windows) carry no PCI address, and their LUID is no UUID another tool
/// prints: an adapter is matched to the other backends' views by maker and PCI device id.
inline std::size_t merge_dxgi(std::vector<accelerator_profile>& profiles) {
    return fold_layered(
        profiles,
        [](const accelerator_profile& p) {
            return p.kind == device_kind::dxgi_gpu && !p.software && !p.pci && p.pci_device_id != 0;
        },
        [](const accelerator_profile& a, const accelerator_profile& p) {
            return p.maker == a.maker && p.pci_device_id == a.pci_device_id;
        });
}
#endif

#if AI_HWACCEL_BACKEND_VULKAN
/// The card a device of Mesa's Dozen (Vulkan over Direct3D 12: WSL, Windows on Arm) wraps:
/// dzn_device.c names it "Microsoft Direct3D12 (<the adapter's description>)". Empty for
/// any other device.
constexpr std::string_view dozen_card(const accelerator_profile& p) noexcept {
    constexpr std::string_view prefix = "Microsoft Direct3D12 (";
    const std::string_view n = p.name.view();
    if (p.kind != device_kind::vulkan_gpu || p.pci || !n.starts_with(prefix) || !n.ends_with(')')) return {};
    return n.substr(prefix.size(), n.size() - prefix.size() - 1);
}

/// Dozen's devices, which name no PCI address, folded into the card's own view (nvidia-smi
/// in WSL, the vendor's Vulkan driver or a DXGI adapter on Windows) by maker and PCI device
/// id, or by the name Dozen wraps where the vendor has no PCI id (Qualcomm's Adreno).
inline std::size_t merge_dozen(std::vector<accelerator_profile>& profiles) {
    return fold_layered(
        profiles, [](const accelerator_profile& p) { return !p.software && !dozen_card(p).empty(); },
        [](const accelerator_profile& a, const accelerator_profile& p) {
            if (p.maker != a.maker) return false;
            if (a.pci_device_id != 0) return p.pci_device_id == a.pci_device_id;
            const std::string_view card = dozen_card(a), other = dozen_card(p);
            return (other.empty() ? p.name.view() : other) == card;
        });
}
#endif

} // namespace detail

/// Merges profiles of the same device, keeping the first one's place and kind (probes run
/// vendor backends before Vulkan, so the vendor's view leads; DXGI's adapters and Dozen's
/// devices, which name no PCI address, are matched as detail::merge_dxgi and
/// detail::merge_dozen say). Returns how many were folded.
inline std::size_t merge_duplicates(std::vector<accelerator_profile>& profiles) {
    std::size_t folded = 0;
    for (std::size_t i = 0; i < profiles.size(); ++i) {
        for (std::size_t j = i + 1; j < profiles.size();) {
            if (same_device(profiles[i], profiles[j])) {
                absorb(profiles[i], profiles[j]);
                profiles.erase(profiles.begin() + static_cast<std::ptrdiff_t>(j));
                ++folded;
                j = i + 1; // what it took (a PCI address, a UUID) may match one passed over
            } else {
                ++j;
            }
        }
    }
#if AI_HWACCEL_BACKEND_WINDOWS
    folded += detail::merge_dxgi(profiles);
#endif
#if AI_HWACCEL_BACKEND_VULKAN
    folded += detail::merge_dozen(profiles);
#endif
    return folded;
}

// ---------------------------------------------------------------------------------------
// Visibility masks

/// How a variable's value names devices.
enum class mask_syntax : std::uint8_t {
    /// Comma-separated indices or UUID prefixes; parsing stops at the first entry that
    /// names no device, and the rest is ignored (CUDA's documented behaviour).
    cuda,
    /// Comma-separated indices or UUIDs (ROCm, Level Zero "0.1" sub-devices by their
    /// parent); an entry naming no device is skipped.
    indices_or_uuids,
    /// Comma-separated indices, or "all".
    indices_or_all,
    /// NeuronCore numbers and ranges ("0-3,8"); a device is visible when any of its
    /// cores is (cores per device = its compute_units).
    neuron_cores,
};

struct visibility_rule {
    backend_id backend;
    std::string_view variable;
    mask_syntax syntax;
    /// Indices count among the devices the previous rule of the same backend left visible
    /// (HIP_VISIBLE_DEVICES applies on top of ROCR_VISIBLE_DEVICES).
    bool relative;
};

/// The variables honoured, in the order they apply. A compiled-out backend has none.
inline constexpr fixed_list<visibility_rule, 8> visibility_rules{
#if AI_HWACCEL_BACKEND_CUDA
    // CUDA numbers the devices it can use: not a MIG-enabled GPU (its instances instead), a
    // GPU the driver excludes, or one it cannot open.
    visibility_rule{backend_id::cuda, "CUDA_VISIBLE_DEVICES", mask_syntax::cuda, true},
#endif
#if AI_HWACCEL_BACKEND_ROCM
    visibility_rule{backend_id::rocm, "ROCR_VISIBLE_DEVICES", mask_syntax::indices_or_uuids, false},
    visibility_rule{backend_id::rocm, "HIP_VISIBLE_DEVICES", mask_syntax::indices_or_uuids, true},
#endif
#if AI_HWACCEL_BACKEND_GAUDI
    visibility_rule{backend_id::gaudi, "HABANA_VISIBLE_DEVICES", mask_syntax::indices_or_all, false},
#endif
#if AI_HWACCEL_BACKEND_NEURON
    visibility_rule{backend_id::neuron, "NEURON_RT_VISIBLE_CORES", mask_syntax::neuron_cores, false},
#endif
#if AI_HWACCEL_BACKEND_TPU
    visibility_rule{backend_id::tpu, "TPU_VISIBLE_CHIPS", mask_syntax::indices_or_all, false},
#endif
#if AI_HWACCEL_BACKEND_INTEL_GPU
    visibility_rule{backend_id::intel_gpu, "ZE_AFFINITY_MASK", mask_syntax::indices_or_uuids, false},
#endif
};

namespace detail {

// Whether a mask names some device by index (an entry of digits alone), not by UUID.
inline bool names_an_index(std::string_view value) {
    while (true) {
        const auto comma = value.find(',');
        const auto entry = trim(value.substr(0, comma));
        if (!entry.empty() && entry.find_first_not_of("0123456789") == std::string_view::npos) return true;
        if (comma == std::string_view::npos) return false;
        value.remove_prefix(comma + 1);
    }
}

inline std::optional<std::uint32_t> small_index(std::string_view s) {
    const auto v = parse_u64(trim(s));
    if (!v || *v > UINT32_MAX) return std::nullopt;
    return static_cast<std::uint32_t>(*v);
}

// Marks as visible (in `keep`) the devices `value` names among `candidates` (positions
// into `profiles`, in index order).
inline void select_visible(std::string_view value, mask_syntax syntax, const std::vector<std::size_t>& candidates,
                           const std::vector<accelerator_profile>& profiles, std::vector<bool>& keep) {
    const std::string_view all_value = trim(value);
    if (syntax == mask_syntax::indices_or_all && (all_value == "all"sv || all_value == "ALL"sv)) {
        for (auto c : candidates) keep[c] = true;
        return;
    }
    while (!value.empty()) {
        const auto comma = value.find(',');
        std::string_view entry = trim(value.substr(0, comma));
        value = comma == std::string_view::npos ? std::string_view{} : value.substr(comma + 1);
        bool named = false;
        if (syntax == mask_syntax::neuron_cores) {
            // "a" or "a-b"
            const auto dash = entry.find('-');
            const auto lo = small_index(entry.substr(0, dash));
            const auto hi = dash == std::string_view::npos ? lo : small_index(entry.substr(dash + 1));
            if (lo && hi && *lo <= *hi) {
                for (auto c : candidates) {
                    const auto cores = profiles[c].compute_units.value_or(0);
                    if (cores == 0) continue;
                    const std::uint64_t first = std::uint64_t{profiles[c].index} * cores;
                    const std::uint64_t last = first + cores - 1;
                    if (*lo <= last && *hi >= first) {
                        keep[c] = true;
                        named = true;
                    }
                }
            }
        } else {
            // Level Zero's "1.0" names sub-device 0 of device 1: the device is visible.
            std::string_view head = entry;
            if (syntax == mask_syntax::indices_or_uuids)
                if (const auto dot = head.find('.'); dot != std::string_view::npos) head = head.substr(0, dot);
            if (const auto i = small_index(head)) {
                if (*i < candidates.size()) {
                    keep[candidates[*i]] = true;
                    named = true;
                }
            } else if (syntax != mask_syntax::indices_or_all &&
                       (entry.starts_with("GPU-") || entry.starts_with("MIG-"))) {
                // Both CUDA and ROCm spell UUIDs with these prefixes.
                const std::string key = uuid_key(entry, syntax == mask_syntax::cuda ? 1 : 8);
                if (!key.empty()) {
                    // A unique prefix is enough for CUDA; the others need all of it.
                    std::size_t matches = 0, match = 0;
                    for (auto c : candidates) {
                        const std::string k = uuid_key(profiles[c].uuid.view());
                        const bool hit = syntax == mask_syntax::cuda ? k.starts_with(key) : k == key;
                        if (!k.empty() && hit) {
                            ++matches;
                            match = c;
                        }
                    }
                    if (matches == 1) {
                        keep[match] = true;
                        named = true;
                    }
                }
            }
        }
        if (!named && syntax == mask_syntax::cuda) return;
    }
}

} // namespace detail

/// Applies the visibility variables that `env(name)` returns (an optional<string>) to
/// `profiles`: devices a variable hides get `available = false` and a warning.
template <class Env>
void apply_visibility(std::vector<accelerator_profile>& profiles, Env&& env, std::vector<warning>& warnings) {
    for (const visibility_rule& rule : visibility_rules) {
        const std::optional<std::string> value = env(rule.variable);
        if (!value) continue;
        // This backend's devices, in index order; relative rules see only those still
        // available.
        std::vector<std::size_t> candidates;
        for (std::size_t i = 0; i < profiles.size(); ++i)
            if (profiles[i].backend() == rule.backend && (!rule.relative || profiles[i].available))
                candidates.push_back(i);
        std::stable_sort(candidates.begin(), candidates.end(),
                         [&](std::size_t a, std::size_t b) { return profiles[a].index < profiles[b].index; });
        std::vector<bool> keep(profiles.size(), false);
        detail::select_visible(*value, rule.syntax, candidates, profiles, keep);
#if AI_HWACCEL_BACKEND_CUDA
        // CUDA numbers its devices fastest first (a heuristic of its own) unless
        // CUDA_DEVICE_ORDER=PCI_BUS_ID; indices here are nvidia-smi's, in PCI order. The two
        // agree where the GPUs are alike; where they differ, say which order was assumed.
        // (Only with the CUDA backend: a CPU-only program names no vendor tool.)
        if (rule.syntax == mask_syntax::cuda && detail::names_an_index(*value) &&
            env("CUDA_DEVICE_ORDER") != std::optional<std::string>("PCI_BUS_ID") &&
            std::ranges::any_of(candidates, [&](std::size_t c) { return profiles[c].name != profiles[candidates[0]].name; }))
            warnings.push_back(warning{warning_kind::disagreement, rule.backend, std::string(rule.variable),
                                       "CUDA numbers unlike GPUs fastest first unless CUDA_DEVICE_ORDER=PCI_BUS_ID; "
                                       "its indices were read in nvidia-smi's (PCI bus) order: set that variable "
                                       "or give UUIDs to be sure",
                                       0});
#endif
        for (auto c : candidates) {
            auto& p = profiles[c];
            if (keep[c] || !p.available) continue;
            p.available = false;
            std::string msg = "device ";
            msg += std::to_string(p.index);
            // A stack of a multi-stack card shares the card's index: name the stack.
            if (p.stack) {
                msg += " stack ";
                msg += std::to_string(*p.stack);
            }
            if (!p.name.empty() || p.pci) {
                msg += " (";
                if (!p.name.empty()) msg += p.name.view();
                if (!p.name.empty() && p.pci) msg += ", ";
                if (p.pci) msg += p.pci->text().data();
                msg += ')';
            }
            msg += " hidden by ";
            msg += rule.variable;
            msg += "=\"";
            msg += value->size() > 200 ? value->substr(0, 200) + "…" : *value;
            msg += '"';
            warnings.push_back(warning{warning_kind::hidden_by_mask, rule.backend, std::string(rule.variable),
                                       std::move(msg), 0});
        }
    }
}

AI_HWACCEL_NAMESPACE_END
