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
#include "ai_hwaccel/detect/storage.hpp"
#include "ai_hwaccel/detect/topology.hpp"
#if AI_HWACCEL_BACKEND_CUDA
#include "ai_hwaccel/detect/nvidia.hpp"
#endif

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
    const bool processor = has_key_line(t, "processor") || has_key_line(t, "Processor");
    const bool detail = has_key_line(t, "flags") || has_key_line(t, "Features") || has_key_line(t, "model name") ||
                        has_key_line(t, "BogoMIPS") || has_key_line(t, "CPU implementer") ||
                        has_key_line(t, "vendor_id");
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
#if AI_HWACCEL_BACKEND_CUDA
    {"nvidia-smi-query-csv", "nvidia-smi --query-gpu=… --format=csv[,nounits] (with its header line)",
     detail::formats::sniff_nvidia_csv, detail::formats::parse_nvidia_csv_capture},
    {"nvidia-smi-list", "nvidia-smi -L", detail::formats::sniff_nvidia_list, detail::formats::parse_nvidia_list_capture},
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
