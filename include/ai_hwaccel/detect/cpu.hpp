// ai-hwaccel detect: the host's CPU and memory.
//
// Pure parsers for /proc/cpuinfo, /proc/meminfo and cgroup memory limits (string_view in,
// data out, never throw), and the probe that feeds them from a system_view. /proc/cpuinfo
// differs by architecture: x86 prints "model name", "flags", "physical id", "core id";
// arm64 prints "Features", "CPU implementer" and usually no model name at all.
#pragma once

#include "ai_hwaccel/config.hpp"
#include "ai_hwaccel/core/profile.hpp"
#include "ai_hwaccel/core/system_io.hpp"
#include "ai_hwaccel/core/text.hpp"
#include "ai_hwaccel/core/units.hpp"
#include "ai_hwaccel/core/warning.hpp"
#include "ai_hwaccel/detect/system.hpp"

#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

AI_HWACCEL_NAMESPACE_BEGIN

namespace detail {
/// Parses a whole decimal unsigned number (no sign, no blanks); nullopt on overflow.
constexpr std::optional<std::uint64_t> parse_u64(std::string_view s) noexcept {
    if (s.empty() || s.size() > 20) return std::nullopt;
    std::uint64_t v = 0;
    for (char c : s) {
        if (c < '0' || c > '9') return std::nullopt;
        const auto d = static_cast<std::uint64_t>(c - '0');
        if (v > (UINT64_MAX - d) / 10) return std::nullopt;
        v = v * 10 + d;
    }
    return v;
}

/// Calls f(key, value) for every "key : value" line (blanks around both trimmed).
template <class F>
constexpr void for_each_key_value(std::string_view text, F&& f) {
    while (!text.empty()) {
        const auto nl = text.find('\n');
        const std::string_view line = text.substr(0, nl);
        text = nl == std::string_view::npos ? std::string_view{} : text.substr(nl + 1);
        const auto colon = line.find(':');
        if (colon == std::string_view::npos) {
            f(trim(line), std::string_view{}, false);
            continue;
        }
        f(trim(line.substr(0, colon)), trim(line.substr(colon + 1)), true);
    }
}
} // namespace detail

/// /proc/meminfo → total and available bytes (values are in kB, meaning KiB).
/// A missing MemTotal leaves total empty; the caller decides what to warn.
inline memory_info parse_meminfo(std::string_view text) {
    memory_info m;
    detail::for_each_key_value(text, [&](std::string_view key, std::string_view value, bool) {
        if (key != "MemTotal" && key != "MemAvailable") return;
        const auto sp = value.find(' ');
        const std::string_view number = value.substr(0, sp);
        const std::string_view unit = sp == std::string_view::npos ? "" : detail::trim(value.substr(sp));
        const auto n = detail::parse_u64(number);
        if (!n) return;
        std::uint64_t mul = 1;
        if (unit == "kB") mul = units::kib;
        else if (!unit.empty()) return;
        if (*n > UINT64_MAX / mul) return;
        if (key == "MemTotal") m.total_bytes = {*n * mul, origin::sysfs};
        else m.available_bytes = {*n * mul, origin::sysfs};
    });
    return m;
}

/// A cgroup memory limit file: v2 memory.max ("max" = none) or v1 memory.limit_in_bytes
/// (a page-rounded huge number = none). Returns the limit in bytes, if there is one.
inline std::optional<std::uint64_t> parse_cgroup_memory_limit(std::string_view text) noexcept {
    text = detail::trim(text);
    if (text == "max") return std::nullopt;
    const auto n = detail::parse_u64(text);
    // cgroup v1 reports "no limit" as PAGE_COUNTER_MAX pages, about 2^63 bytes.
    if (!n || *n >= (std::uint64_t{1} << 62)) return std::nullopt;
    return n;
}

/// /proc/cpuinfo → model, vendor, topology and the ISA features that matter for inference.
inline cpu_info parse_cpuinfo(std::string_view text) {
    cpu_info c;
    std::set<std::string> packages;
    std::set<std::pair<std::string, std::string>> cores;
    std::uint32_t processors = 0;
    std::string current_package;
    std::string_view flags;
    detail::for_each_key_value(text, [&](std::string_view key, std::string_view value, bool has_colon) {
        if (!has_colon) return;
        if (key == "processor") {
            ++processors;
            current_package.clear();
        } else if ((key == "model name" || key == "Model Name" || key == "cpu model") && c.model.empty()) {
            c.model = std::string(value);
        } else if (key == "vendor_id" && c.maker == vendor::unknown) {
            if (value == "GenuineIntel") c.maker = vendor::intel;
            else if (value == "AuthenticAMD") c.maker = vendor::amd;
        } else if (key == "CPU implementer" && c.maker == vendor::unknown) {
            // The implementer code names the licensee (0x41 Arm, 0x48 HiSilicon, 0x51
            // Qualcomm…); only Arm's own cores are attributed, the rest stay unknown.
            if (value == "0x41") c.maker = vendor::arm;
            else if (value == "0x51") c.maker = vendor::qualcomm;
        } else if (key == "physical id") {
            current_package = std::string(value);
            packages.insert(current_package);
        } else if (key == "core id") {
            cores.emplace(current_package, std::string(value));
        } else if (key == "flags" && flags.empty()) {
            flags = value;
            c.arch = cpu_arch::x86_64; // "flags" is x86's spelling; 32-bit x86 is not a target
        } else if (key == "Features" && flags.empty()) {
            flags = value;
        } else if (key == "CPU architecture" && c.arch == cpu_arch::unknown) {
            // 8 and later are AArch64 cores; /proc/cpuinfo of a 32-bit kernel says 7.
            const auto v = detail::parse_u64(value);
            if (v) c.arch = *v >= 8 ? cpu_arch::aarch64 : cpu_arch::arm;
        }
    });
    c.threads = processors;
    c.sockets = packages.empty() ? (processors ? 1u : 0u) : static_cast<std::uint32_t>(packages.size());
    c.cores = cores.empty() ? processors : static_cast<std::uint32_t>(cores.size());
    // Flags are space-separated words; match whole words only.
    while (!flags.empty()) {
        const auto sp = flags.find(' ');
        const std::string_view word = flags.substr(0, sp);
        flags = sp == std::string_view::npos ? std::string_view{} : flags.substr(sp + 1);
        if (word.empty()) continue;
        for (const auto& f : cpu_feature_table)
            if (word == f.proc_flag) c.features.set(f.id);
        if (word == "neon") c.features.set(cpu_feature::neon); // 32-bit Arm's name for it
    }
    return c;
}

/// Reads the host's CPU, memory and cgroup limit through `sys`, adding warnings for what
/// could not be read. Returns the host description and the CPU's profile.
template <system_view S>
std::pair<host_info, accelerator_profile> probe_host(const S& sys, std::vector<warning>& warnings) {
    host_info host;
    auto note = [&](warning_kind k, std::string_view path, std::string msg) {
        warnings.push_back(warning{k, std::nullopt, std::string(path), std::move(msg), 0});
    };
    auto read_reporting = [&](std::string_view path) -> std::optional<std::string> {
        auto r = sys.read_file(path, default_read_cap);
        if (r.status == read_status::truncated)
            note(warning_kind::output_truncated, path, "file larger than the read cap; parsed its start");
        if (r.ok()) return std::move(r.data);
        if (r.status == read_status::permission_denied)
            note(warning_kind::permission_denied, path, "not readable");
        else
            note(warning_kind::read_error, path, r.status == read_status::not_found ? "missing" : "unreadable");
        return std::nullopt;
    };

    if (auto text = read_reporting("/proc/cpuinfo")) host.cpu = parse_cpuinfo(*text);
    if (auto text = read_reporting("/proc/meminfo")) {
        host.memory = parse_meminfo(*text);
        if (!host.memory.total_bytes) note(warning_kind::parse_error, "/proc/meminfo", "no MemTotal line");
    }
    // cgroup v2 unified hierarchy first, then v1's memory controller.
    for (std::string_view path : {"/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes"}) {
        auto r = sys.read_file(path, 64);
        if (!r.ok()) continue;
        if (auto limit = parse_cgroup_memory_limit(r.data)) host.memory.cgroup_limit_bytes = {*limit, origin::sysfs};
        break;
    }

    accelerator_profile cpu;
    cpu.kind = device_kind::cpu;
    cpu.maker = host.cpu.maker;
    cpu.name = host.cpu.model.empty() ? std::string_view("CPU") : std::string_view(host.cpu.model);
    if (const auto usable = host.memory.usable_bytes(); usable != 0)
        cpu.memory_bytes = {usable, origin::sysfs};
    if (host.memory.available_bytes) cpu.memory_free_bytes = host.memory.available_bytes;
    if (host.cpu.cores != 0) cpu.compute_units = {host.cpu.cores, origin::sysfs};
    return {std::move(host), cpu};
}

AI_HWACCEL_NAMESPACE_END
