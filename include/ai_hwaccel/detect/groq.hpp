// ai-hwaccel detect: Groq GroqCard accelerators through their device nodes.
//
// What public sources say, and all this probe relies on: a GroqCard is a PCIe Gen4 x16
// card with a single GroqChip processor and 230 MB of on-chip SRAM (Argonne ALCF's
// AI-testbed notes on its GroqRack, which holds 8 GroqCards per GroqNode), and the
// GroqWare runtime opens each card through a device node named /dev/groqA<N>.pci, older
// releases /dev/groq<N>.pci (GroqFlow install notes for the same systems: "replace
// /dev/groq[0-7].pci with /dev/groqA[0-7].pci"; a runtime example opening
// "/dev/groqA5.pci"). One such node is counted as one card, named "Groq LPU" and matched
// to the catalogue's GroqChip row.
//
// Not found in any public source, so not used: Groq's PCI vendor and device ids, the
// kernel driver's name and its sysfs attributes, and the output format of the runtime's
// `tsp-ctl status`. Memory in use, health and the PCIe link therefore stay unknown.
#pragma once

#include "ai_hwaccel/config.hpp"

#if AI_HWACCEL_BACKEND_GROQ

#include "ai_hwaccel/core/catalogue.hpp"
#include "ai_hwaccel/core/profile.hpp"
#include "ai_hwaccel/core/text.hpp"
#include "ai_hwaccel/detect/probe.hpp"
#include "ai_hwaccel/detect/sysfs.hpp"
#include "ai_hwaccel/detect/system.hpp"

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

AI_HWACCEL_NAMESPACE_BEGIN

namespace detail::groq {
/// "groqA3.pci" or "groq3.pci" -> 3; nullopt for every other name in /dev.
constexpr std::optional<std::uint32_t> device_node_number(std::string_view name) noexcept {
    if (!name.starts_with("groq") || !name.ends_with(".pci")) return std::nullopt;
    name = name.substr(4, name.size() - 8);
    if (name.starts_with("A")) name.remove_prefix(1);
    if (name.empty() || name.size() > 4) return std::nullopt;
    const auto n = parse_u64(name);
    if (!n) return std::nullopt;
    return static_cast<std::uint32_t>(*n);
}
static_assert(device_node_number("groqA5.pci") == 5u);
static_assert(device_node_number("groq0.pci") == 0u);
static_assert(!device_node_number("groqA.pci"));
static_assert(!device_node_number("groqA1.pcie"));
static_assert(!device_node_number("groq-dev"));
} // namespace detail::groq

/// GroqCards, one per /dev/groqA<N>.pci (or /dev/groq<N>.pci) node, index N.
struct groq_probe {
    static constexpr backend_id backend = backend_id::groq;

    template <system_view S>
    probe_output probe(const S& sys) const {
        probe_output out;
        const auto names = sys.list_dir("/dev");
        if (!names) return out;
        std::vector<std::uint32_t> numbers;
        for (const auto& n : *names)
            if (const auto k = detail::groq::device_node_number(n)) numbers.push_back(*k);
        std::sort(numbers.begin(), numbers.end());
        numbers.erase(std::unique(numbers.begin(), numbers.end()), numbers.end());
        for (const auto k : numbers) {
            accelerator_profile p;
            p.kind = device_kind::groq_lpu;
            p.maker = vendor::groq;
            p.index = k;
            p.name = "Groq LPU";
            if (const auto* spec = find_device("Groq LPU"); spec && spec->kind == device_kind::groq_lpu)
                p.apply_spec(*spec);
            out.devices.push_back(p);
        }
        return out;
    }
};
#if AI_HWACCEL_OS_LINUX || AI_HWACCEL_OS_MACOS
static_assert(backend_probe<groq_probe, host_system>);
#endif

AI_HWACCEL_NAMESPACE_END

#endif // AI_HWACCEL_BACKEND_GROQ
