// ai-hwaccel detect: the CUDA probe, which puts the NVIDIA sources together.
//
// The GPUs, in order of preference: NVML, loaded at run time (detect/nvml.hpp), on the
// live machine; else one `nvidia-smi --query-gpu` run (detect/nvidia.hpp), which is also
// what a machine tree replays; else the driver's own files and PCI sysfs
// (detect/nvidia_links.hpp), which name the cards but cannot say how much memory is in
// use. A failed NVML is reported and the probe falls back; an absent NVML is normal and
// says nothing. A missing nvidia-smi is only worth a warning where an NVIDIA GPU sits on
// the PCI bus.
//
// Then, with MIG enabled, `nvidia-smi -L` lists the instances (CUDA sees only those, so
// the whole GPU is marked unavailable); and with two GPUs or more, `nvidia-smi topo -m`
// says which are joined by NVLink and `nvidia-smi nvlink -s` how fast the links run.
#pragma once

#include "ai_hwaccel/config.hpp"

#if AI_HWACCEL_BACKEND_CUDA

#include "ai_hwaccel/core/warning.hpp"
#include "ai_hwaccel/detect/cpu.hpp"
#include "ai_hwaccel/detect/nvidia.hpp"
#include "ai_hwaccel/detect/nvidia_links.hpp"
#include "ai_hwaccel/detect/nvml.hpp"
#include "ai_hwaccel/detect/probe.hpp"
#include "ai_hwaccel/detect/system.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <optional>
#include <stop_token>
#include <string>
#include <utility>
#include <vector>

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
    case nvml_status::cancelled:
    case nvml_status::init_failed: k = warning_kind::tool_failed; break;
    }
    return warning{k, backend_id::cuda, "NVML", r.detail + "; using nvidia-smi instead", 0};
}
#endif

// Runs one nvidia-smi subcommand; its output, or nullopt (a missing tool says nothing: the
// main query already said whether nvidia-smi is there). Each subcommand asked here prints
// a line per GPU when it succeeds, so an empty output is a broken tool, and said.
template <system_view S>
std::optional<std::string> run_quietly(const S& sys, const tool_request& request, std::vector<warning>& warnings) {
    tool_result r = sys.run(request);
    if (tool_missing(r, warnings)) return std::nullopt;
    if (!report_tool_result(request, r, backend_id::cuda, warnings)) return std::nullopt;
    if (report_empty_output(request, r, backend_id::cuda, warnings)) return std::nullopt;
    return std::move(r.out);
}

// A Jetson's GPU is named after its chip ("Orin (nvgpu)", "NVIDIA Thor"), the same for
// every module of it: the module, and so the catalogue row, is the one the device tree's
// root `compatible` (and `model`) name (jetson_module_gpu), read only when such a GPU is
// found.
template <system_view S>
void identify_jetson(const S& sys, probe_output& out) {
    std::optional<const device_spec*> spec; // looked up for the first such GPU
    for (auto& d : out.devices) {
        if (d.spec || !names_jetson_chip(d.name.view())) continue;
        if (!spec) {
            spec = nullptr;
            for (std::string_view root : {"/sys/firmware/devicetree/base/", "/proc/device-tree/"}) {
                const file_read compatible = sys.read_file(std::string(root) + "compatible", 4096);
                if (!compatible.ok()) continue;
                const file_read model = sys.read_file(std::string(root) + "model", 4096);
                spec = jetson_module_gpu(compatible.data, model.ok() ? std::string_view(model.data) : "");
                break;
            }
        }
        if (*spec) d.apply_spec(**spec);
    }
}

// A Jetson whose software has no nvidia-smi (JetPack 5 and earlier): its GPU is a platform
// device, gpu.0, that nvgpu drives, never a PCI function. An Orin's (device-tree compatible
// "nvidia,ga10b") is listed as nvidia-smi would name it; identify_jetson and
// size_shared_memory then give it its module's row and the memory. Nothing to warn about:
// nvidia-smi is absent on such systems by design, and the GPU is found without it.
template <system_view S>
void add_jetson_gpu(const S& sys, probe_output& out) {
    const file_read r = sys.read_file("/sys/devices/platform/gpu.0/of_node/compatible", 4096);
    if (!r.ok() || std::string_view(r.data).substr(0, r.data.find('\0')) != "nvidia,ga10b"sv) return;
    accelerator_profile p = blank_gpu(0);
    p.name = "Orin (nvgpu)";
    p.unified_memory = true;
    out.devices.push_back(p);
}

// MIG: the instances become the devices CUDA sees; their parents stay listed, unavailable.
template <system_view S>
void add_mig_instances(const S& sys, probe_output& out) {
    const tool_request request{{"nvidia-smi", "-L"}, std::chrono::seconds(10)};
    const auto text = run_quietly(sys, request, out.warnings);
    if (!text) return;
    const auto list = parse_nvidia_smi_list(*text);
    problems_to_warnings(list.problems, "nvidia-smi -L", out.warnings);
    if (list.mig.empty()) return;
    nvidia_list_result named = list;
    for (auto& g : named.gpus) // the query's names and arch are the better ones
        for (const auto& d : out.devices)
            if (d.index == g.index) g = d;
    for (const auto& m : list.mig)
        for (auto& d : out.devices)
            if (d.index == m.parent_index) d.available = false;
    auto instances = mig_devices(named);
    out.devices.insert(out.devices.end(), instances.begin(), instances.end());
}

// NVLink between the GPUs, and each GPU's NUMA node where the probe had none.
template <system_view S>
void add_topology(const S& sys, probe_output& out) {
    std::size_t gpus = 0;
    for (const auto& d : out.devices) gpus += d.pci ? 1 : 0;
    if (gpus < 2) return;
    const auto text = run_quietly(sys, nvidia_smi_topo_request(), out.warnings);
    if (!text) return;
    auto topo = parse_nvidia_smi_topo(*text);
    problems_to_warnings(topo.problems, "nvidia-smi topo -m", out.warnings);
    for (const auto& g : topo.gpus)
        for (auto& d : out.devices)
            if (d.pci && d.index == g.index && !d.numa_node && g.numa_node) d.numa_node = g.numa_node;
    if (topo.links.empty()) return;

    // Link speeds as the driver reports them: one direction per link.
    std::optional<double> per_link;
    bool agree = true;
    std::vector<std::pair<std::uint32_t, double>> per_gpu; // index, both directions in total
    if (const auto status = run_quietly(sys, nvidia_smi_nvlink_status_request(), out.warnings)) {
        const auto nv = parse_nvidia_smi_nvlink_status(*status);
        problems_to_warnings(nv.problems, "nvidia-smi nvlink -s", out.warnings);
        for (const auto& g : nv.gpus) {
            if (g.links_active == 0) continue;
            const double each = g.gbps_one_direction / g.links_active;
            if (per_link && std::abs(*per_link - each) > 1e-6) agree = false;
            per_link = each;
            per_gpu.emplace_back(g.index, 2 * g.gbps_one_direction);
        }
    }
    if (!topo.nvlink_switched) {
        if (per_link && agree) topo = parse_nvidia_smi_topo(*text, sourced<double>{*per_link, origin::tool});
        out.links.insert(out.links.end(), topo.links.begin(), topo.links.end());
        return;
    }
    // Through NVSwitch every GPU reaches every other at its own full NVLink bandwidth;
    // pairwise links would count the same lanes many times over. One fabric instead.
    interconnect fabric;
    fabric.kind = interconnect_kind::nvswitch;
    fabric.scope = link_scope::intra_node;
    fabric.name = "NVSwitch fabric";
    for (const auto& g : topo.gpus) fabric.devices.push_back(g.index);
    fabric.state = std::to_string(fabric.devices.size()) + " GPUs";
    if (!per_gpu.empty() && agree && per_gpu.size() == fabric.devices.size()) {
        fabric.bandwidth_gbps = {per_gpu.front().second, origin::tool};
    } else {
        // The catalogue's per-GPU NVLink figure, when every GPU has the same one.
        double gbps = 0;
        bool same = true;
        for (const auto& d : out.devices) {
            if (!d.pci) continue;
            const double g = d.spec ? d.spec->link_bandwidth_gbps : 0;
            if (gbps != 0 && g != gbps) same = false;
            gbps = g;
        }
        if (same && gbps > 0) fabric.bandwidth_gbps = {gbps, origin::catalogue};
    }
    out.links.push_back(std::move(fabric));
}

// Whether a failed nvidia-smi failed on some GPUs only: it names one it could not open or
// that is in trouble (in its rows or on stderr), and printed a row for one it could.
inline bool partial_failure(const tool_result& run, const nvidia_query_result& r) {
    bool usable = false, named = false;
    for (std::size_t i = 0; i < r.devices.size(); ++i) {
        const bool failed = i < r.device_errors.size() && !r.device_errors[i].empty();
        usable = usable || !failed;
        named = named || failed;
    }
    detail::formats::each_line(run.err, [&](std::string_view line) {
        named = named || parse_unopened_gpu(line).has_value();
        return !named;
    });
    return usable && named;
}

// report_tool_result quoted the first line of stderr, or of stdout where stderr is empty,
// which after a partial failure is a good GPU's row: say which GPU failed instead.
inline void explain_partial_failure(const tool_result& r, std::vector<warning>& warnings, std::size_t from) {
    std::string why;
    for (std::string_view text : {std::string_view(r.err), std::string_view(r.out)}) {
        detail::formats::each_line(text, [&](std::string_view line) {
            if (!parse_unopened_gpu(line)) return true;
            bool changed = false; // the tool's own text: control bytes and broken UTF-8 made '?'
            why = detail::parsing::printable(trim(line), changed, 200);
            return false;
        });
        if (!why.empty()) break;
    }
    for (std::size_t i = from; i < warnings.size(); ++i) {
        if (warnings[i].kind != warning_kind::tool_failed) continue;
        warnings[i].message = "exited with status " + std::to_string(r.exit_code) +
                              (why.empty() ? std::string() : ": " + why) +
                              "; the rows it printed are kept";
    }
}

// GPUs nvidia-smi could not open, named on stderr rather than in place of their rows:
// added (unavailable) unless a row has their PCI address, with the smallest index no row
// has (nvidia-smi numbers GPUs in PCI order, so a lost GPU leaves a gap).
inline void add_unopened_from(std::string_view err, nvidia_query_result& r) {
    std::uint32_t index = 0; // each GPU added takes a larger one than the last: no rescan from 0
    detail::formats::each_line(err, [&](std::string_view line) {
        const auto u = parse_unopened_gpu(line);
        if (!u || r.devices.size() >= detail::parsing::max_rows) return true;
        const auto has = [&](auto&& same) { return std::ranges::any_of(r.devices, same); };
        if (u->pci && has([&](const accelerator_profile& d) { return d.pci == u->pci; })) return true;
        while (has([&](const accelerator_profile& d) { return d.index == index; })) ++index;
        add_unopened(r, *u, index++, line);
        return true;
    });
}

// A warning for each GPU nvidia-smi reports in trouble (listed, unavailable). One known only
// by its PCI address takes its name and catalogue row from the driver's files.
template <system_view S>
void report_device_errors(const S& sys, nvidia_query_result& r, std::vector<warning>& warnings) {
    std::optional<std::vector<accelerator_profile>> from_driver;
    for (std::size_t i = 0; i < r.devices.size() && i < r.device_errors.size(); ++i) {
        auto& p = r.devices[i];
        if (!r.device_errors[i].empty() && p.name.empty() && p.pci) {
            std::vector<warning> ignored; // the driver's files are read again only for names
            if (!from_driver) from_driver = nvidia_gpus_from_driver(sys, ignored);
            for (const auto& d : *from_driver)
                if (d.pci && *d.pci == *p.pci) {
                    const auto index = p.index;
                    p = d;
                    p.index = index;
                    p.available = false;
                    break;
                }
        }
    }
    device_errors_to_warnings(r, "nvidia-smi", warnings);
}

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
    /// Try NVML only where an NVIDIA driver shows: its /proc entry or control device (a
    /// GPU container has both) or WSL's GPU device. Without a driver NVML cannot start,
    /// and looking for the library (a loader search, on its own thread) is most of what
    /// a detection costs on a machine with no NVIDIA GPU (about 1 ms).
    bool nvml_needs_driver = true;

    template <system_view S>
    probe_output probe(const S& sys) const {
        probe_output out;
#if AI_HWACCEL_OS_LINUX
        // Only a live view can load a library; a machine tree describes another machine.
        if constexpr (requires { sys.replays_tools(); }) {
            if (use_nvml && !sys.replays_tools() && (!nvml_needs_driver || driver_shows(sys))) {
                std::stop_token stop; // a background detection's (async.hpp)
                if constexpr (requires { sys.stop_token(); }) stop = sys.stop_token();
                nvml_result r = query_nvml(nvml, stop);
                if (r.status == nvml_status::ok && !r.mig_enabled) {
                    out.devices = std::move(r.devices);
                    out.warnings = std::move(r.warnings);
                    detail::nvidia::identify_jetson(sys, out);
                    detail::size_shared_memory(sys, out.devices);
                    detail::nvidia::add_topology(sys, out);
                    return out;
                }
                if (auto w = detail::nvidia::nvml_warning(r)) out.warnings.push_back(std::move(*w));
            }
        }
#endif
        bool mig = false;
        const bool listed = query_nvidia_smi(sys, out, mig);
        detail::nvidia::identify_jetson(sys, out);
        detail::size_shared_memory(sys, out.devices);
        if (!listed) return out;
        if (mig) detail::nvidia::add_mig_instances(sys, out);
        detail::nvidia::add_topology(sys, out);
        return out;
    }

private:
    template <system_view S>
    static bool driver_shows(const S& sys) {
        return sys.exists("/proc/driver/nvidia") || sys.exists("/dev/nvidiactl") || sys.exists("/dev/dxg");
    }

    // The GPUs from nvidia-smi, or from the driver's files without it. False when there is
    // nothing more to ask nvidia-smi.
    template <system_view S>
    bool query_nvidia_smi(const S& sys, probe_output& out, bool& mig) const {
        tool_request request = nvidia_smi_query_request();
        tool_result r = sys.run(request);
        // nvidia-smi before R510 knows no compute_cap and refuses the whole query (status 2,
        // 'Field "compute_cap" is not a valid field to query.' on stdout): asked again
        // without it, the catalogue gives the architecture.
        std::string_view without;
        if (r.status == tool_status::exited && r.exit_code == 2 &&
            r.out.find("\"compute_cap\" is not a valid field") != std::string::npos) {
            without = "compute_cap";
            request = nvidia_smi_query_request(without);
            r = sys.run(request);
        }
        if (tool_missing(r, out.warnings)) {
            auto cards = nvidia_gpus_from_driver(sys, out.warnings);
            const auto on_bus = nvidia_gpus_on_pci_bus(sys);
            if (!on_bus.empty() || !cards.empty())
                out.warnings.push_back(warning{
                    warning_kind::tool_not_found, backend, "nvidia-smi",
                    "NVIDIA GPU(s) on the PCI bus (" + (on_bus.empty() ? std::string("per the driver") : on_bus) +
                        ") but nvidia-smi is not installed in any trusted folder" +
                        (cards.empty() ? std::string() : "; listed from the driver's files, memory use unknown"),
                    0});
            out.devices = std::move(cards);
            if (out.devices.empty()) detail::nvidia::add_jetson_gpu(sys, out);
            return false;
        }
        const auto fields = detail::nvidia::query_argument(without).substr(std::string_view("--query-gpu=").size());
        const std::size_t before = out.warnings.size();
        std::optional<nvidia_query_result> parsed;
        if (!report_tool_result(request, r, backend, out.warnings)) {
            // nvidia-smi that cannot open a GPU (fallen off the bus, waiting for a reset)
            // still prints the other GPUs' rows, and exits with an error: when it names the
            // GPU it failed on, the other rows are kept.
            if (r.status == tool_status::exited && r.exit_code != 0) {
                parsed = parse_nvidia_smi_query_csv(r.out, fields);
                if (!detail::nvidia::partial_failure(r, *parsed)) parsed.reset();
            }
            if (!parsed) {
                // What the driver's files list stands where nvidia-smi cannot say (a driver
                // and library that do not match, an nvidia-smi that refuses the query).
                out.devices = nvidia_gpus_from_driver(sys, out.warnings);
                return false;
            }
            detail::nvidia::explain_partial_failure(r, out.warnings, before);
        }
        // With no GPU to list nvidia-smi fails (status 6, 9 or 255); success lists one or more.
        if (!parsed && report_empty_output(request, r, backend, out.warnings)) return false;
        if (!parsed) parsed = parse_nvidia_smi_query_csv(r.out, fields);
        detail::nvidia::add_unopened_from(r.err, *parsed);
        detail::nvidia::problems_to_warnings(parsed->problems, "nvidia-smi", out.warnings);
        detail::nvidia::report_device_errors(sys, *parsed, out.warnings);
        out.devices = std::move(parsed->devices);
        // A GPU in MIG mode runs nothing as a whole: CUDA sees its instances (listed by
        // add_mig_instances from nvidia-smi -L), or nothing when it has none.
        mig = false;
        for (std::size_t k = 0; k < parsed->mig_enabled.size() && k < out.devices.size(); ++k)
            if (parsed->mig_enabled[k].value_or(false)) {
                out.devices[k].available = false;
                mig = true;
            }
        return true;
    }
};
#if AI_HWACCEL_OS_LINUX || AI_HWACCEL_OS_MACOS
static_assert(backend_probe<cuda_probe, host_system>);
#endif

AI_HWACCEL_NAMESPACE_END

#endif // AI_HWACCEL_BACKEND_CUDA
