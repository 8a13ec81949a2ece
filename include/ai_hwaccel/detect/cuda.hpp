// ai-hwaccel detect: the CUDA probe, which puts the NVIDIA sources together.
//
// In order of preference: NVML, loaded at run time (detect/nvml.hpp), on the live
// machine; else one `nvidia-smi --query-gpu` run (detect/nvidia.hpp), which is also what
// a machine tree replays. A failed NVML is reported and the probe falls back to
// nvidia-smi; an absent NVML is normal and says nothing. A missing nvidia-smi is only
// worth a warning where an NVIDIA GPU sits on the PCI bus.
#pragma once

#include "ai_hwaccel/config.hpp"

#if AI_HWACCEL_BACKEND_CUDA

#include "ai_hwaccel/core/warning.hpp"
#include "ai_hwaccel/detect/nvidia.hpp"
#include "ai_hwaccel/detect/nvml.hpp"
#include "ai_hwaccel/detect/probe.hpp"
#include "ai_hwaccel/detect/system.hpp"

#include <optional>
#include <string>
#include <utility>

AI_HWACCEL_NAMESPACE_BEGIN

namespace detail::nvidia {
#if AI_HWACCEL_OS_LINUX
// An NVML failure as a warning; nullopt when there is nothing to say.
inline std::optional<warning> nvml_warning(const nvml_result& r) {
    warning_kind k{};
    switch (r.status) {
    case nvml_status::ok:
    case nvml_status::library_not_found: return std::nullopt;
    case nvml_status::unsafe_search_path: k = warning_kind::unsafe_path_ignored; break;
    case nvml_status::timed_out: k = warning_kind::tool_timed_out; break;
    case nvml_status::missing_symbol:
    case nvml_status::init_failed: k = warning_kind::tool_failed; break;
    }
    return warning{k, backend_id::cuda, "NVML", r.detail + "; using nvidia-smi instead", 0};
}
#endif
} // namespace detail::nvidia

/// NVIDIA GPUs: NVML when the live machine has it, nvidia-smi otherwise.
struct cuda_probe {
    static constexpr backend_id backend = backend_id::cuda;

#if AI_HWACCEL_OS_LINUX
    /// Where NVML is looked for and how long it may take.
    nvml_options nvml{};
#endif
    /// Whether to try NVML before nvidia-smi on the live machine.
    bool use_nvml = true;

    template <system_view S>
    probe_output probe(const S& sys) const {
        probe_output out;
#if AI_HWACCEL_OS_LINUX
        // Only a live view can load a library; a machine tree describes another machine.
        if constexpr (requires { sys.replays_tools(); }) {
            if (use_nvml && !sys.replays_tools()) {
                nvml_result r = query_nvml(nvml);
                if (r.status == nvml_status::ok) {
                    out.devices = std::move(r.devices);
                    out.warnings = std::move(r.warnings);
                    return out;
                }
                if (auto w = detail::nvidia::nvml_warning(r)) out.warnings.push_back(std::move(*w));
            }
        }
#endif
        const tool_request request = nvidia_smi_query_request();
        tool_result r = sys.run(request);
        if (r.status == tool_status::not_found) {
            const auto cards = nvidia_gpus_on_pci_bus(sys);
            if (!cards.empty())
                out.warnings.push_back(warning{warning_kind::tool_not_found, backend, "nvidia-smi",
                                               "NVIDIA GPU(s) on the PCI bus (" + cards +
                                                   ") but nvidia-smi is not installed in any trusted folder",
                                               0});
            return out;
        }
        if (!report_tool_result(request, r, backend, out.warnings)) return out;
        auto parsed = parse_nvidia_smi_query_csv(r.out, detail::nvidia::query_field_list());
        out.devices = std::move(parsed.devices);
        detail::nvidia::problems_to_warnings(parsed.problems, "nvidia-smi", out.warnings);
        return out;
    }
};
#if AI_HWACCEL_OS_LINUX || AI_HWACCEL_OS_MACOS
static_assert(backend_probe<cuda_probe, host_system>);
#endif

AI_HWACCEL_NAMESPACE_END

#endif // AI_HWACCEL_BACKEND_CUDA
