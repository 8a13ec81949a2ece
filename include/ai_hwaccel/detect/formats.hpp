// ai-hwaccel detect: reading one captured output, whatever produced it.
//
// Fleet tools collect tool outputs and system files centrally; bug reports carry them.
// `capture_formats` is the table of everything the library can read on its own: each row
// names a format, says how to recognise it (`sniff`: 0 = not this, higher = more certain)
// and how to read it into devices, host facts and system facts. `recognise_format` picks
// the most certain row; `parse_capture` runs one. The `ai-hwaccel parse` command is a thin
// layer over these three.
//
// This header holds the formats of the machine itself; each backend adds the rows of its
// tools under its own AI_HWACCEL_BACKEND_<NAME> switch.
#pragma once

#include "ai_hwaccel/config.hpp"
#include "ai_hwaccel/core/profile.hpp"
#include "ai_hwaccel/core/system_io.hpp"
#include "ai_hwaccel/core/text.hpp"
#include "ai_hwaccel/core/warning.hpp"
#include "ai_hwaccel/detect/capture.hpp"
#include "ai_hwaccel/detect/cpu.hpp"
#include "ai_hwaccel/detect/fabric.hpp"
#include "ai_hwaccel/detect/storage.hpp"
#include "ai_hwaccel/detect/topology.hpp"
// Backend headers are empty unless their switch is on.
#include "ai_hwaccel/detect/amd.hpp"
#include "ai_hwaccel/detect/amd_smi.hpp"
#include "ai_hwaccel/detect/apple.hpp"
#include "ai_hwaccel/detect/intel_gpu.hpp"
#include "ai_hwaccel/detect/nvidia.hpp"
#include "ai_hwaccel/detect/nvidia_links.hpp"
#include "ai_hwaccel/detect/nvidia_reports.hpp"
#include "ai_hwaccel/detect/vulkan.hpp"
#include "ai_hwaccel/detect/tpu.hpp"
#include "ai_hwaccel/detect/gaudi.hpp"
#include "ai_hwaccel/detect/npu.hpp"
#include "ai_hwaccel/detect/neuron.hpp"
#include "ai_hwaccel/detect/qualcomm.hpp"
#include "ai_hwaccel/detect/graphcore.hpp"

#include <array>
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

AI_HWACCEL_NAMESPACE_BEGIN

namespace detail::formats {

// /proc/cpuinfo -------------------------------------------------------------------------
inline int sniff_cpuinfo(std::string_view t) noexcept {
    // s390x numbers its lines ("processor 0: version = …"); POWER names its core under
    // "cpu", RISC-V under "isa" and "uarch".
    const bool processor =
        has_key_line(t, "processor") || has_key_line(t, "Processor") || has_key_line(t, "processor 0");
    const bool detail = has_key_line(t, "flags") || has_key_line(t, "Features") || has_key_line(t, "model name") ||
                        has_key_line(t, "BogoMIPS") || has_key_line(t, "CPU implementer") ||
                        has_key_line(t, "vendor_id") || has_key_line(t, "cpu") || has_key_line(t, "isa");
    return processor && detail ? 80 : 0;
}
inline void parse_cpuinfo_capture(std::string_view t, capture_parse& out) {
    host_info h;
    h.cpu = parse_cpuinfo(t);
    if (h.cpu.threads == 0) nothing_found(out, "processor entries");
    out.host = std::move(h);
}

// /proc/meminfo -------------------------------------------------------------------------
inline int sniff_meminfo(std::string_view t) noexcept {
    if (first_non_blank_line(t).starts_with("MemTotal:")) return 90;
    return has_key_line(t, "MemTotal") && has_key_line(t, "MemFree") ? 70 : 0;
}
inline void parse_meminfo_capture(std::string_view t, capture_parse& out) {
    host_info h;
    h.memory = parse_meminfo(t);
    if (!h.memory.total_bytes) nothing_found(out, "MemTotal line");
    out.host = std::move(h);
}

// lscpu ---------------------------------------------------------------------------------
inline int sniff_lscpu(std::string_view t) noexcept {
    return has_key_line(t, "Architecture") && has_key_line(t, "CPU(s)") ? 90 : 0;
}
inline void parse_lscpu_capture(std::string_view t, capture_parse& out) {
    lscpu_info l = parse_lscpu(t);
    if (l.cpu.threads == 0 && l.cpu.model.empty()) nothing_found(out, "CPU description");
    host_info h;
    h.cpu = std::move(l.cpu);
    h.numa = std::move(l.numa);
    out.host = std::move(h);
    if (!l.hypervisor_vendor.empty()) {
        system_io io;
        io.environment.hypervisor = std::move(l.hypervisor_vendor);
        out.system = std::move(io);
    }
}

// NUMA node meminfo ---------------------------------------------------------------------
inline int sniff_node_meminfo(std::string_view t) noexcept {
    const auto first = first_non_blank_line(t);
    return first.starts_with("Node ") && first.find("MemTotal:") != std::string_view::npos ? 90 : 0;
}
inline void parse_node_meminfo_capture(std::string_view t, capture_parse& out) {
    host_info h;
    if (auto node = parse_node_meminfo(t)) h.numa.push_back(std::move(*node));
    else nothing_found(out, "node MemTotal line");
    out.host = std::move(h);
}

#if AI_HWACCEL_JSON
// lsblk --json --------------------------------------------------------------------------
inline int sniff_lsblk(std::string_view t) noexcept {
    const auto first = first_non_blank_line(t);
    return first.starts_with("{") && t.find("\"blockdevices\"") != std::string_view::npos ? 95 : 0;
}
inline void parse_lsblk_capture(std::string_view t, capture_parse& out) {
    system_io io;
    if (auto disks = parse_lsblk_json(t)) io.storage = std::move(*disks);
    else nothing_found(out, "lsblk device list");
    out.system = std::move(io);
}
#endif

} // namespace detail::formats

/// Every format this build reads, most specific first.
inline constexpr capture_format capture_formats[] = {
    {"proc-meminfo", "cat /proc/meminfo", detail::formats::sniff_meminfo, detail::formats::parse_meminfo_capture},
    {"node-meminfo", "cat /sys/devices/system/node/node<N>/meminfo", detail::formats::sniff_node_meminfo,
     detail::formats::parse_node_meminfo_capture},
    {"proc-cpuinfo", "cat /proc/cpuinfo", detail::formats::sniff_cpuinfo, detail::formats::parse_cpuinfo_capture},
    {"lscpu", "lscpu", detail::formats::sniff_lscpu, detail::formats::parse_lscpu_capture},
#if AI_HWACCEL_JSON
    {"lsblk-json", "lsblk --json [--bytes] [--output …]", detail::formats::sniff_lsblk,
     detail::formats::parse_lsblk_capture},
#endif
    {"ibstat", "ibstat", detail::formats::sniff_ibstat, detail::formats::parse_ibstat_capture},
    {"ibstatus", "ibstatus", detail::formats::sniff_ibstatus, detail::formats::parse_ibstatus_capture},
#if AI_HWACCEL_BACKEND_CUDA
    {"nvidia-smi-query-csv",
     "nvidia-smi --query-gpu=… --format=csv[,nounits] (with its header line, or without it in the CUDA probe's own "
     "columns)",
     detail::formats::sniff_nvidia_csv, detail::formats::parse_nvidia_csv_capture},
    {"nvidia-smi-list", "nvidia-smi -L", detail::formats::sniff_nvidia_list, detail::formats::parse_nvidia_list_capture},
    {"nvidia-smi-q", "nvidia-smi -q", detail::formats::sniff_nvidia_smi_q, detail::formats::parse_nvidia_smi_q_capture},
    {"nvidia-smi-q-xml", "nvidia-smi -q -x", detail::formats::sniff_nvidia_smi_xml,
     detail::formats::parse_nvidia_smi_xml_capture},
    {"nvidia-smi-table", "nvidia-smi", detail::formats::sniff_nvidia_smi_table,
     detail::formats::parse_nvidia_smi_table_capture},
    {"nvidia-smi-topo", "nvidia-smi topo -m", detail::formats::sniff_nvidia_topo, detail::formats::parse_nvidia_topo_capture},
    {"nvidia-smi-topo-p2p", "nvidia-smi topo -p2p <r|w|rw|n|a|p>", detail::formats::sniff_nvidia_topo_p2p,
     detail::formats::parse_nvidia_topo_p2p_capture},
    {"nvidia-smi-nvlink-status", "nvidia-smi nvlink -s", detail::formats::sniff_nvidia_nvlink_status,
     detail::formats::parse_nvidia_nvlink_status_capture},
#endif
#if AI_HWACCEL_BACKEND_ROCM
    {"rocminfo", "rocminfo", detail::formats::sniff_rocminfo, detail::formats::parse_rocminfo_capture},
    {"kfd-node-properties", "cat /sys/class/kfd/kfd/topology/nodes/<N>/properties",
     detail::formats::sniff_kfd_properties, detail::formats::parse_kfd_properties_capture},
    {"amdgpu-pp-dpm", "cat /sys/class/drm/card<N>/device/pp_dpm_{pcie,sclk,mclk}", detail::formats::sniff_pp_dpm,
     detail::formats::parse_pp_dpm_capture},
    {"rocm-smi", "rocm-smi [--showproductname|--showmeminfo vram|--showuniqueid|…]", detail::formats::sniff_rocm_smi,
     detail::formats::parse_rocm_smi_capture},
    {"rocm-smi-csv", "rocm-smi … --csv", detail::formats::sniff_rocm_smi_csv, detail::formats::parse_rocm_smi_csv_capture},
    {"rocm-smi-json", "rocm-smi … --json", detail::formats::sniff_rocm_smi_json,
     detail::formats::parse_rocm_smi_json_capture},
    {"amd-smi-static", "amd-smi static | amd-smi list", detail::formats::sniff_amd_smi_static,
     detail::formats::parse_amd_smi_static_capture},
    {"amd-smi-topology", "amd-smi topology", detail::formats::sniff_amd_smi_topology,
     detail::formats::parse_amd_smi_topology_capture},
    {"amd-smi-xgmi", "amd-smi xgmi", detail::formats::sniff_amd_smi_xgmi, detail::formats::parse_amd_smi_xgmi_capture},
    {"amd-smi-dashboard", "amd-smi", detail::formats::sniff_amd_smi_dashboard,
     detail::formats::parse_amd_smi_dashboard_capture},
    {"amdgpu-sysfs-transcript", "shell transcript: cat /sys/class/drm/card<N>/device/mem_info_* | pp_dpm_*",
     detail::formats::sniff_amdgpu_transcript, detail::formats::parse_amdgpu_transcript_capture},
#endif
#if AI_HWACCEL_BACKEND_INTEL_GPU
    {"xpu-smi-discovery", "xpu-smi discovery", detail::formats::sniff_xpu_smi_discovery,
     detail::formats::parse_xpu_smi_discovery_capture},
    {"xpu-smi-discovery-detail", "xpu-smi discovery -d <id>", detail::formats::sniff_xpu_smi_discovery_detail,
     detail::formats::parse_xpu_smi_discovery_capture},
#if AI_HWACCEL_JSON
    {"xpu-smi-discovery-json", "xpu-smi discovery -j", detail::formats::sniff_xpu_smi_json,
     detail::formats::parse_xpu_smi_json_capture},
#endif
    {"xpu-smi-dump", "xpu-smi discovery --dump <ids>", detail::formats::sniff_xpu_smi_dump,
     detail::formats::parse_xpu_smi_dump_capture},
#endif
#if AI_HWACCEL_BACKEND_APPLE
#if AI_HWACCEL_JSON
    {"system-profiler-json", "system_profiler -json SPDisplaysDataType SPHardwareDataType",
     detail::formats::sniff_system_profiler_json, detail::formats::parse_system_profiler_json_capture},
#endif
    {"system-profiler", "system_profiler SPDisplaysDataType SPHardwareDataType [-detailLevel mini]",
     detail::formats::sniff_system_profiler_text, detail::formats::parse_system_profiler_text_capture},
    {"sysctl", "sysctl hw.memsize machdep.cpu.brand_string | sysctl machdep.cpu", detail::formats::sniff_sysctl,
     detail::formats::parse_sysctl_capture},
    {"sysctl-brand-string", "sysctl -n machdep.cpu.brand_string", detail::formats::sniff_sysctl_brand_string,
     detail::formats::parse_sysctl_brand_string_capture},
#endif
#if AI_HWACCEL_BACKEND_VULKAN
    {"vulkaninfo-summary", "vulkaninfo --summary", detail::formats::sniff_vulkaninfo_summary,
     detail::formats::parse_vulkaninfo_summary_capture},
    {"vulkaninfo-text", "vulkaninfo", detail::formats::sniff_vulkaninfo_text,
     detail::formats::parse_vulkaninfo_text_capture},
#if AI_HWACCEL_JSON
    {"vulkaninfo-json", "vulkaninfo --json (the VP_VULKANINFO_*.json file it writes)",
     detail::formats::sniff_vulkaninfo_json, detail::formats::parse_vulkaninfo_json_capture},
#endif
#endif
#if AI_HWACCEL_BACKEND_TPU
    {"tpu-info", "tpu-info", detail::formats::sniff_tpu_info, detail::formats::parse_tpu_info_capture},
    {"tpu-info-process", "tpu-info --process", detail::formats::sniff_tpu_info_process,
     detail::formats::parse_tpu_info_process_capture},
    {"tpu-info-version", "tpu-info --version", detail::formats::sniff_tpu_info_version,
     detail::formats::parse_tpu_info_version_capture},
    {"tpu-vfio-transcript", "ls -l /dev/vfio; cat /sys/kernel/iommu_groups/*/devices/*/{vendor,device}",
     detail::formats::sniff_tpu_vfio_transcript, detail::formats::parse_tpu_vfio_transcript_capture},
#endif
#if AI_HWACCEL_BACKEND_GAUDI
    {"hl-smi-query-csv", "hl-smi -Q <fields> -f csv[,nounits] (with its header line)", detail::formats::sniff_hl_smi_csv,
     detail::formats::parse_hl_smi_csv_capture},
    {"hl-smi-table", "hl-smi", detail::formats::sniff_hl_smi_table, detail::formats::parse_hl_smi_table_capture},
    {"hl-smi-log", "hl-smi -q | hl-smi -L [-i <bus>]", detail::formats::sniff_hl_smi_log,
     detail::formats::parse_hl_smi_log_capture},
#endif
#if AI_HWACCEL_BACKEND_NEURON
    {"neuron-ls", "neuron-ls", detail::formats::sniff_neuron_ls, detail::formats::parse_neuron_ls_capture},
    {"neuron-ls-wide", "neuron-ls --wide", detail::formats::sniff_neuron_ls_wide,
     detail::formats::parse_neuron_ls_wide_capture},
    {"neuron-ls-topology", "neuron-ls --topology", detail::formats::sniff_neuron_ls_topology,
     detail::formats::parse_neuron_ls_topology_capture},
#if AI_HWACCEL_JSON
    {"neuron-ls-json", "neuron-ls --json-output", detail::formats::sniff_neuron_ls_json,
     detail::formats::parse_neuron_ls_json_capture},
#endif
#endif
#if AI_HWACCEL_BACKEND_INTEL_NPU || AI_HWACCEL_BACKEND_AMD_XDNA
    {"accel-class-listing", "ls -la /sys/class/accel", detail::formats::sniff_accel_class_listing,
     detail::formats::parse_accel_class_listing_capture},
    {"accel-sysfs-transcript", "cat /sys/class/accel/accel<N>/device/<attribute> (shell transcript)",
     detail::formats::sniff_accel_transcript, detail::formats::parse_accel_transcript_capture},
#endif
#if AI_HWACCEL_BACKEND_QUALCOMM
    {"qaic-util-query", "qaic-util -q", detail::formats::sniff_qaic_util, detail::formats::parse_qaic_util_capture},
#endif
#if AI_HWACCEL_BACKEND_GRAPHCORE
    {"gc-info-list", "gc-info -l", detail::formats::sniff_gc_info_list, detail::formats::parse_gc_info_list_capture},
    {"gc-monitor", "gc-monitor", detail::formats::sniff_gc_monitor, detail::formats::parse_gc_monitor_capture},
#endif
};

/// The row named `name` (exactly, or loosely: "proc_cpuinfo", "LSCPU"), if any.
inline const capture_format* find_capture_format(std::string_view name) noexcept {
    for (const auto& f : capture_formats)
        if (f.name == name) return &f;
    for (const auto& f : capture_formats)
        if (detail::loose_equals(f.name, name)) return &f;
    return nullptr;
}

/// The row most certain it can read `text`, or nullptr when none recognises it.
inline const capture_format* recognise_format(std::string_view text) noexcept {
    const capture_format* best = nullptr;
    int best_score = 0;
    for (const auto& f : capture_formats) {
        const int s = f.sniff(text);
        if (s > best_score) {
            best = &f;
            best_score = s;
        }
    }
    return best;
}

/// Reads `text` as format `f`. Never throws for any input (std::bad_alloc aside).
inline capture_parse parse_capture(std::string_view text, const capture_format& f) {
    capture_parse out;
    out.format = f.name;
    f.parse(text, out);
    return out;
}

AI_HWACCEL_NAMESPACE_END
