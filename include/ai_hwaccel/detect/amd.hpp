// ai-hwaccel detect: AMD GPUs through the kernel (amdgpu, KFD) and rocminfo.
//
// Pure parsers for what the amdgpu and amdkfd drivers publish in sysfs (a KFD topology
// node's `properties`, the `pp_dpm_*` clock and link level tables, the one-number
// `mem_info_*` files) and for `rocminfo`'s text; a reader for shell transcripts of such
// files as people paste them; the ROCm probe, which walks /sys/class/drm and the KFD
// topology without running any tool; and the capture formats for all of these. Parsers
// take text and never throw for any input: what they cannot read becomes a problem in
// their result, never a guess. The whole header is empty unless the ROCm backend is
// compiled in.
#pragma once

#include "ai_hwaccel/config.hpp"

#if AI_HWACCEL_BACKEND_ROCM

#include "ai_hwaccel/core/catalogue.hpp"
#include "ai_hwaccel/core/pci.hpp"
#include "ai_hwaccel/core/profile.hpp"
#include "ai_hwaccel/core/system_io.hpp"
#include "ai_hwaccel/core/text.hpp"
#include "ai_hwaccel/core/warning.hpp"
#include "ai_hwaccel/detect/amd_smi.hpp"
#include "ai_hwaccel/detect/capture.hpp"
#include "ai_hwaccel/detect/probe.hpp"
#include "ai_hwaccel/detect/sysfs.hpp"
#include "ai_hwaccel/detect/system.hpp"
#include "ai_hwaccel/detect/topology.hpp"

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

AI_HWACCEL_NAMESPACE_BEGIN

/// The problems of the AMD parsers are the shared kind (detect/capture.hpp).
using amd_parse_problem = parse_problem;

// ---------------------------------------------------------------------------------------
// KFD topology nodes

/// One node of /sys/class/kfd/kfd/topology/nodes/<N>/properties ("key value" lines, as
/// amdkfd's kfd_topology.c prints them). Every field is unknown until its line is read.
/// CPU nodes have simd_count 0; GPU nodes have simd_count > 0.
struct kfd_node_properties {
    std::optional<std::uint64_t> cpu_cores_count;
    std::optional<std::uint64_t> simd_count;
    std::optional<std::uint64_t> simd_per_cu;
    std::optional<std::uint64_t> array_count;
    std::optional<std::uint64_t> cu_per_simd_array;
    std::optional<std::uint64_t> wave_front_size;
    /// major * 10000 + minor * 100 + stepping ("gfx90a" is 90010).
    std::optional<std::uint64_t> gfx_target_version;
    std::optional<std::uint64_t> vendor_id; ///< PCI vendor, decimal (4098 = 0x1002)
    std::optional<std::uint64_t> device_id; ///< PCI device, decimal
    /// The kernel's pci_dev_id(): bus << 8 | device << 3 | function. On a GPU split into
    /// compute partitions, recent kernels put the partition number in bits 31..28.
    std::optional<std::uint64_t> location_id;
    std::optional<std::uint64_t> domain; ///< PCI domain
    std::optional<std::int64_t> drm_render_minor;
    std::optional<std::uint64_t> hive_id; ///< XGMI hive, 0 when none
    std::optional<std::uint64_t> unique_id;
    std::optional<std::uint64_t> num_xcc;
    std::optional<std::uint64_t> num_sdma_engines;
    std::optional<std::uint64_t> num_sdma_xgmi_engines;
    std::optional<std::uint64_t> max_engine_clk_fcompute; ///< MHz
    std::optional<std::uint64_t> local_mem_size;          ///< bytes; 0 on kernels that hide it

    bool is_gpu() const noexcept { return simd_count.value_or(0) > 0; }
    /// simd_count / simd_per_cu; nullopt when either is unknown or simd_per_cu is 0.
    std::optional<std::uint32_t> compute_units() const noexcept {
        if (!simd_count || !simd_per_cu || *simd_per_cu == 0) return std::nullopt;
        const auto cu = *simd_count / *simd_per_cu;
        if (cu > UINT32_MAX) return std::nullopt;
        return static_cast<std::uint32_t>(cu);
    }
    /// The PCI function, from domain and location_id (partition bits dropped).
    std::optional<pci_address> pci() const noexcept {
        if (!location_id || !domain || *domain > UINT32_MAX) return std::nullopt;
        const auto bdf = *location_id & 0xffffu;
        return pci_address{static_cast<std::uint32_t>(*domain), static_cast<std::uint8_t>(bdf >> 8),
                           static_cast<std::uint8_t>((bdf >> 3) & 0x1fu), static_cast<std::uint8_t>(bdf & 0x7u)};
    }
    friend bool operator==(const kfd_node_properties&, const kfd_node_properties&) = default;
};

/// What `parse_kfd_node_properties` read: the node, and for a GPU node its profile.
struct kfd_node_result {
    kfd_node_properties node;
    std::vector<accelerator_profile> devices; ///< one for a GPU node, none for a CPU node
    std::vector<amd_parse_problem> problems;
};

namespace detail::amd {

using detail::parsing::max_problems;
using detail::parsing::max_rows;
using detail::parsing::printable;
using detail::parsing::problem_sink;
using detail::parsing::value_problem;
using detail::parsing::quote_value;

inline constexpr std::uint32_t pci_vendor_amd = 0x1002;

/// gfx_target_version → "gfx906": major in decimal, minor and stepping one hex digit
/// each (90010 → "gfx90a", 110501 → "gfx1151"). "" for 0 and for values no gfx name has.
inline std::string gfx_target_name(std::uint64_t v) {
    const auto major = v / 10000, minor = (v / 100) % 100, stepping = v % 100;
    if (major == 0 || major > 99 || minor > 15 || stepping > 15) return {};
    constexpr char hex[] = "0123456789abcdef";
    std::string s = "gfx" + std::to_string(major);
    s += hex[minor];
    s += hex[stepping];
    return s;
}

using amd_smi::match_catalogue;

inline accelerator_profile blank_gpu(std::uint32_t index) {
    accelerator_profile p;
    p.kind = device_kind::rocm_gpu;
    p.maker = vendor::amd;
    p.index = index;
    return p;
}

inline bool set_text(auto& field, std::string_view v) {
    bool changed = false;
    const bool fits = field.assign(printable(v, changed));
    return fits && !changed;
}

} // namespace detail::amd

/// Reads one KFD topology node's `properties` file. Unknown keys are skipped (the kernel
/// adds keys over time); a known key whose value is not a whole number is a problem. A
/// GPU node (simd_count > 0) also yields a profile: gfx target, compute units, PCI
/// address and id, values origin::sysfs, completed from the catalogue.
inline kfd_node_result parse_kfd_node_properties(std::string_view text) {
    using namespace detail::amd;
    kfd_node_result r;
    problem_sink problems{r.problems};
    auto& n = r.node;
    struct key_slot {
        std::string_view key;
        std::optional<std::uint64_t> kfd_node_properties::*field;
    };
    static constexpr key_slot slots[] = {
        {"cpu_cores_count", &kfd_node_properties::cpu_cores_count},
        {"simd_count", &kfd_node_properties::simd_count},
        {"simd_per_cu", &kfd_node_properties::simd_per_cu},
        {"array_count", &kfd_node_properties::array_count},
        {"cu_per_simd_array", &kfd_node_properties::cu_per_simd_array},
        {"wave_front_size", &kfd_node_properties::wave_front_size},
        {"gfx_target_version", &kfd_node_properties::gfx_target_version},
        {"vendor_id", &kfd_node_properties::vendor_id},
        {"device_id", &kfd_node_properties::device_id},
        {"location_id", &kfd_node_properties::location_id},
        {"domain", &kfd_node_properties::domain},
        {"hive_id", &kfd_node_properties::hive_id},
        {"unique_id", &kfd_node_properties::unique_id},
        {"num_xcc", &kfd_node_properties::num_xcc},
        {"num_sdma_engines", &kfd_node_properties::num_sdma_engines},
        {"num_sdma_xgmi_engines", &kfd_node_properties::num_sdma_xgmi_engines},
        {"max_engine_clk_fcompute", &kfd_node_properties::max_engine_clk_fcompute},
        {"local_mem_size", &kfd_node_properties::local_mem_size},
    };
    std::size_t number = 0, lines = 0;
    detail::formats::each_line(text, [&](std::string_view raw) {
        ++number;
        const auto line = detail::trim(raw);
        if (line.empty()) return true;
        if (++lines > 4 * max_rows) {
            problems.add(number, "more lines than a properties file has; the rest ignored");
            return false;
        }
        const auto sp = line.find_first_of(" \t");
        if (sp == std::string_view::npos) {
            problems.add(number, "not a \"key value\" line: " + quote_value(line));
            return true;
        }
        const auto key = line.substr(0, sp);
        const auto value = detail::trim(line.substr(sp));
        if (key == "drm_render_minor"sv) {
            if (const auto v = detail::parse_i64(value)) n.drm_render_minor = *v;
            else problems.add(number, "drm_render_minor: cannot read " + quote_value(value));
            return true;
        }
        for (const auto& s : slots) {
            if (s.key != key) continue;
            if (const auto v = detail::parse_u64(value)) n.*(s.field) = *v;
            else problems.add(number, std::string(key) + ": cannot read " + quote_value(value));
            return true;
        }
        return true;
    });
    if (n.is_gpu()) {
        accelerator_profile p = blank_gpu(0);
        if (n.vendor_id && *n.vendor_id != pci_vendor_amd)
            problems.add(0, "vendor_id " + std::to_string(*n.vendor_id) + " is not AMD's (4098)");
        if (n.device_id) {
            if (*n.device_id <= 0xffff) p.pci_device_id = static_cast<std::uint16_t>(*n.device_id);
            else problems.add(0, "device_id " + std::to_string(*n.device_id) + " is wider than a PCI id");
        }
        if (n.gfx_target_version) {
            const auto name = gfx_target_name(*n.gfx_target_version);
            if (name.empty())
                problems.add(0, "gfx_target_version " + std::to_string(*n.gfx_target_version) +
                                    " does not spell a gfx target");
            else
                p.arch.assign(name);
        }
        if (const auto cu = n.compute_units()) p.compute_units = {*cu, origin::sysfs};
        // KFD prints the id in decimal; amdgpu's own unique_id file, which is the UUID the
        // live probe reads, prints it as 16 hex digits ("%016llx"): the same text here.
        if (n.unique_id && *n.unique_id != 0) {
            char hex[16];
            for (int i = 0; i < 16; ++i) hex[i] = "0123456789abcdef"[(*n.unique_id >> (60 - 4 * i)) & 0xfu];
            p.uuid.assign(std::string_view(hex, 16));
        }
        if (n.location_id && *n.location_id > UINT32_MAX)
            problems.add(0, "location_id " + std::to_string(*n.location_id) + " is wider than 32 bits");
        else if (const auto a = n.pci())
            p.pci = *a;
        // The node's own memory: a whole GPU's, or a partition's share of it.
        if (n.local_mem_size && *n.local_mem_size > 0) p.memory_bytes = {*n.local_mem_size, origin::sysfs};
        match_catalogue(p);
        r.devices.push_back(p);
    }
    problems.finish();
    return r;
}

// ---------------------------------------------------------------------------------------
// pp_dpm_* level tables and mem_info_* files

/// One level of a pp_dpm_* table ("1: 16.0GT/s, x8 1143Mhz *").
struct dpm_level {
    std::string label;          ///< "0", "1", … ("S" is the deep-sleep level of some GPUs)
    std::uint32_t mhz = 0;      ///< 0 when the level prints no clock
    pcie_link link;             ///< pp_dpm_pcie only; zeros elsewhere
    bool active = false;        ///< marked with '*'
    friend bool operator==(const dpm_level&, const dpm_level&) = default;
};

/// What `parse_pp_dpm_levels` read.
struct dpm_levels_result {
    std::vector<dpm_level> levels;
    std::optional<std::size_t> active; ///< index into `levels` of the '*' level
    std::uint32_t max_mhz = 0;         ///< the highest clock of any level, 0 when none
    pcie_link max_link;                ///< the highest generation and width of any level
    std::vector<amd_parse_problem> problems;
};

/// Reads pp_dpm_sclk / pp_dpm_mclk / pp_dpm_fclk / pp_dpm_socclk / pp_dpm_pcie:
/// "<label>: [<rate>GT/s, x<width>] [<clock>Mhz] [*]" per line.
inline dpm_levels_result parse_pp_dpm_levels(std::string_view text) {
    using namespace detail::amd;
    dpm_levels_result r;
    problem_sink problems{r.problems};
    std::size_t number = 0;
    detail::formats::each_line(text, [&](std::string_view raw) {
        ++number;
        std::string_view line = detail::trim(raw);
        if (line.empty()) return true;
        if (r.levels.size() >= 64) {
            problems.add(number, "more levels than any GPU has; the rest ignored");
            return false;
        }
        const auto colon = line.find(':');
        const auto label = colon == std::string_view::npos ? std::string_view{} : detail::trim(line.substr(0, colon));
        const bool label_ok = !label.empty() && label.size() <= 3 &&
                              (label == "S"sv || detail::parse_u64(label).has_value());
        if (!label_ok) {
            problems.add(number, "not a level line: " + quote_value(line));
            return true;
        }
        dpm_level level;
        level.label = std::string(label);
        std::string_view rest = detail::trim(line.substr(colon + 1));
        if (!rest.empty() && rest.back() == '*') {
            level.active = true;
            rest = detail::trim(rest.substr(0, rest.size() - 1));
        }
        bool ok = !rest.empty();
        while (ok && !rest.empty()) {
            const auto sp = rest.find(' ');
            std::string_view tok = rest.substr(0, sp);
            rest = sp == std::string_view::npos ? std::string_view{} : detail::trim(rest.substr(sp));
            if (!tok.empty() && tok.back() == ',') tok.remove_suffix(1);
            if (tok.size() > 3 && detail::iequals(tok.substr(tok.size() - 3), "mhz")) {
                const auto v = detail::parse_u64(tok.substr(0, tok.size() - 3));
                if (!v || *v > 1'000'000) ok = false;
                else level.mhz = static_cast<std::uint32_t>(*v);
            } else if (tok.ends_with("GT/s")) {
                level.link.generation = parse_pcie_link_speed(tok);
                ok = level.link.generation != 0;
            } else if (tok.size() > 1 && (tok.front() == 'x' || tok.front() == 'X')) {
                level.link.width = parse_pcie_link_width(tok);
                ok = level.link.width != 0;
            } else {
                ok = false;
            }
        }
        if (!ok) {
            problems.add(number, "level not understood: " + quote_value(line));
            return true;
        }
        if (level.active) {
            // On a host whose platform cannot switch the link (Intel's, to amdgpu), the
            // kernel gives every PCIe level the same link and marks each one that matches
            // the link in use: several marks of one link are that link.
            const bool same_link = r.active && level.link.known() && level.link == r.levels[*r.active].link;
            if (r.active && !same_link) problems.add(number, "a second level marked active");
            else r.active = r.levels.size();
        }
        r.max_mhz = std::max(r.max_mhz, level.mhz);
        r.max_link.generation = std::max(r.max_link.generation, level.link.generation);
        r.max_link.width = std::max(r.max_link.width, level.link.width);
        r.levels.push_back(std::move(level));
        return true;
    });
    problems.finish();
    return r;
}

/// More memory than any one GPU's mem_info_* file can hold (16 TiB): garbage, or a tree
/// someone wrote by hand. Keeps sums such as carve-out + GTT far from overflowing.
inline constexpr std::uint64_t max_amdgpu_mem_info = std::uint64_t{16} << 40;

/// One amdgpu mem_info_* file (mem_info_vram_total, _vram_used, _vis_vram_total,
/// _gtt_total, _gtt_used): a whole number of bytes, at most max_amdgpu_mem_info. nullopt
/// for anything else.
constexpr std::optional<std::uint64_t> parse_amdgpu_mem_info(std::string_view text) noexcept {
    const auto v = detail::parse_u64(detail::trim(text));
    if (!v || *v > max_amdgpu_mem_info) return std::nullopt;
    return v;
}

// ---------------------------------------------------------------------------------------
// Shell transcripts of sysfs files

/// One file's content as a transcript shows it.
struct sysfs_transcript_file {
    std::string path;  ///< as written in the transcript ("/sys/class/drm/card1/device/mem_info_gtt_total")
    std::string value; ///< its lines, blank lines dropped, joined by '\n'
    std::size_t line = 0;
    friend bool operator==(const sysfs_transcript_file&, const sysfs_transcript_file&) = default;
};

struct sysfs_transcript_result {
    std::vector<sysfs_transcript_file> files;
    std::vector<amd_parse_problem> problems;
};

namespace detail::amd {
// "[root@host:~]# cat /sys/…", "$ cat /sys/…", "> tail -v …": the command after the
// prompt, or nullopt when the line is not a prompt line.
constexpr std::optional<std::string_view> prompt_command(std::string_view line) noexcept {
    line = trim(line);
    if (line.starts_with("cat ")) return line;
    // A prompt with nothing typed after it (trimmed of its space): an empty command.
    if (line == "$" || line == "#" || line == ">" ||
        (line.starts_with('[') && (line.ends_with("]#") || line.ends_with("]$"))))
        return std::string_view{};
    for (std::string_view mark : {"]# ", "]$ ", "$ ", "# ", "> "}) {
        const auto at = line.find(mark);
        if (at == std::string_view::npos) continue;
        if (mark.size() == 2 && at != 0) continue; // bare prompts only at the start of the line
        return trim(line.substr(at + mark.size()));
    }
    return std::nullopt;
}
} // namespace detail::amd

/// Reads what people paste when they show sysfs files: `cat <file>` after a shell prompt
/// followed by its output, `tail -v`/`head -v` blocks ("==> <file> <=="), and
/// `grep . <files>` lines ("<file>:<value>"). Only commands naming one file are kept;
/// a prompt whose command is anything else ends the previous file.
inline sysfs_transcript_result parse_sysfs_transcript(std::string_view text) {
    using namespace detail::amd;
    sysfs_transcript_result r;
    problem_sink problems{r.problems};
    std::optional<sysfs_transcript_file> current;
    auto flush = [&] {
        if (current && !current->value.empty()) r.files.push_back(std::move(*current));
        else if (current) problems.add(current->line, "no output shown for " + quote_value(current->path));
        current.reset();
    };
    std::size_t number = 0;
    detail::formats::each_line(text, [&](std::string_view raw) {
        ++number;
        const auto line = detail::trim(raw);
        if (r.files.size() >= max_rows) {
            problems.add(number, "more files than a transcript shows; the rest ignored");
            return false;
        }
        if (line.empty()) return true;
        if (line.starts_with("==> ") && line.ends_with(" <==") && line.size() > 8) {
            flush();
            current = sysfs_transcript_file{std::string(detail::trim(line.substr(4, line.size() - 8))), {}, number};
            return true;
        }
        if (const auto cmd = prompt_command(line)) {
            flush();
            if (cmd->starts_with("cat ")) {
                const auto arg = detail::trim(cmd->substr(4));
                if (arg.starts_with("/") && arg.find(' ') == std::string_view::npos)
                    current = sysfs_transcript_file{std::string(arg), {}, number};
            }
            return true;
        }
        if (line.starts_with("/sys/")) {
            // grep output: "<path>:<value>". Folder names may hold ':' (PCI addresses);
            // the separator is the first ':' not followed by a folder name, that is not
            // followed by a '/' before any blank.
            auto colon = line.find(':');
            while (colon != std::string_view::npos) {
                const auto rest = line.substr(colon + 1);
                const auto slash = rest.find('/');
                if (slash == std::string_view::npos || rest.substr(0, slash).find_first_of(" \t") != std::string_view::npos)
                    break;
                colon = line.find(':', colon + 1);
            }
            if (colon != std::string_view::npos) {
                flush();
                r.files.push_back({std::string(line.substr(0, colon)), std::string(detail::trim(line.substr(colon + 1))),
                                   number});
                return true;
            }
        }
        if (!current) {
            problems.add(number, "output outside any file: " + quote_value(line));
            return true;
        }
        bool changed = false;
        if (!current->value.empty()) current->value += '\n';
        current->value += printable(line, changed, 4096);
        return true;
    });
    flush();
    problems.finish();
    return r;
}

namespace detail::amd {
// Folds one amdgpu/PCI device file into a profile; returns the problem, or an empty one.
inline value_problem apply_device_file(std::string_view name, std::string_view value, accelerator_profile& p) {
    // A number past what its type holds is out of range; anything else unreadable.
    auto unparsed = [&](const char* what) {
        const auto kind = detail::unparsed_number(value);
        return value_problem(std::string(name) + (kind == warning_kind::value_out_of_range ? ": past 2^64: " : what) +
                                 quote_value(value),
                             kind);
    };
    auto bytes = [&](sourced<std::uint64_t>* field) -> value_problem {
        const auto v = parse_amdgpu_mem_info(value);
        if (v) {
            if (field) *field = {*v, origin::sysfs};
            return {};
        }
        if (detail::parse_u64(detail::trim(value)))
            return {std::string(name) + ": more than 16 TiB: " + quote_value(value), warning_kind::value_out_of_range};
        return unparsed(": not a number of bytes: ");
    };
    auto link_part = [&](sourced<pcie_link>& field, bool speed) -> value_problem {
        pcie_link l = field.value;
        const auto v = speed ? parse_pcie_link_speed(value) : parse_pcie_link_width(value);
        if (v == 0) return std::string(name) + ": not understood: " + quote_value(value);
        (speed ? l.generation : l.width) = v;
        field = {l, origin::sysfs};
        return {};
    };
    if (name == "mem_info_vram_total"sv) return bytes(&p.memory_bytes);
    if (name == "mem_info_vram_used"sv) return bytes(&p.memory_used_bytes);
    if (name == "current_link_speed"sv) return link_part(p.pcie_current, true);
    if (name == "current_link_width"sv) return link_part(p.pcie_current, false);
    if (name == "max_link_speed"sv) return link_part(p.pcie_max, true);
    if (name == "max_link_width"sv) return link_part(p.pcie_max, false);
    if (name == "numa_node"sv) {
        const auto v = detail::parse_i64(detail::trim(value));
        if (!v && detail::unparsed_number(value) == warning_kind::parse_error)
            return "numa_node: not a node: " + quote_value(value);
        if (!v || *v < -1 || *v >= (1 << 16))
            return {"numa_node: no kernel has node " + quote_value(value), warning_kind::value_out_of_range};
        if (*v >= 0) p.numa_node = {static_cast<std::int32_t>(*v), origin::sysfs};
        return {};
    }
    if (name == "pp_dpm_pcie"sv) {
        // amdgpu's PCIe levels are the links the card may train to with the platform (the
        // highest is the best the slot allows) and the active one is the link in use.
        const auto levels = parse_pp_dpm_levels(value);
        if (!levels.problems.empty()) return "pp_dpm_pcie: " + levels.problems.front().message;
        if (levels.active && levels.levels[*levels.active].link.known())
            p.pcie_current = {levels.levels[*levels.active].link, origin::sysfs};
        if (levels.max_link.known()) p.pcie_max = {levels.max_link, origin::sysfs};
        return {};
    }
    if (name == "mem_info_gtt_total"sv || name == "mem_info_vis_vram_total"sv || name == "mem_info_gtt_used"sv)
        return bytes(nullptr);
    return {};
}

// "/sys/class/drm/card1/device/mem_info_gtt_total" → the device folder and the file.
inline std::pair<std::string_view, std::string_view> split_path(std::string_view path) noexcept {
    const auto slash = path.rfind('/');
    if (slash == std::string_view::npos) return {std::string_view{}, path};
    return {path.substr(0, slash), path.substr(slash + 1)};
}
} // namespace detail::amd

// ---------------------------------------------------------------------------------------
// rocminfo

/// What rocminfo says of a GPU agent beyond the profile.
struct rocminfo_gpu {
    std::uint32_t node = 0;           ///< "Node:", the KFD topology node
    std::optional<std::uint32_t> bdfid; ///< "BDFID:", bus << 8 | device << 3 | function (no domain)
    std::uint32_t max_clock_mhz = 0;  ///< "Max Clock Freq. (MHz):", 0 when not shown
    friend bool operator==(const rocminfo_gpu&, const rocminfo_gpu&) = default;
};

/// What `parse_rocminfo` read.
struct rocminfo_result {
    std::vector<accelerator_profile> devices; ///< GPU agents in order; CPU agents skipped
    std::vector<rocminfo_gpu> gpus;           ///< in the order of `devices`
    std::vector<amd_parse_problem> problems;
};

namespace detail::amd {
// "29877(0x74b5)" → 29877; "25149440(0x17fc000) KB" → 25149440 with unit "KB".
inline std::optional<std::uint64_t> rocminfo_number(std::string_view v, std::string_view unit = {}) {
    v = trim(v);
    if (!unit.empty()) {
        if (!v.ends_with(unit)) return std::nullopt;
        v = trim(v.substr(0, v.size() - unit.size()));
    }
    const auto paren = v.find('(');
    if (paren != std::string_view::npos) {
        if (v.back() != ')') return std::nullopt;
        v = v.substr(0, paren);
    }
    return parse_u64(trim(v));
}
} // namespace detail::amd

/// Reads `rocminfo` (and `rocminfo --support`): each "Agent N" block's agent-level keys
/// (two-space indent) and, for GPUs, its first GLOBAL coarse-grained memory pool, which
/// is the device's own memory as the runtime offers it. GPU names come from "Marketing
/// Name", the gfx target from "Name", the PCI id from "Chip ID". rocminfo prints no PCI
/// domain, so the profile's PCI address stays unknown; the bus/device/function is kept in
/// `gpus`. "GPU-XX" (no unique id) leaves the uuid unknown.
inline rocminfo_result parse_rocminfo(std::string_view text) {
    using namespace detail::amd;
    rocminfo_result r;
    problem_sink problems{r.problems};

    struct agent {
        std::size_t line = 0;
        std::string name, marketing, vendor_name, type, uuid;
        std::optional<std::uint64_t> chip, bdfid, cus, node, clock, pool_kb;
        bool bad_pool = false;
    };
    std::optional<agent> a;
    std::string pool_segment;
    bool in_pool_section = false, in_isa = false, saw_agents = false;

    auto finish_agent = [&] {
        if (!a) return;
        agent g = std::move(*a);
        a.reset();
        if (g.type.empty()) {
            problems.add(g.line, "agent without a Device Type; skipped");
            return;
        }
        if (g.type != "GPU"sv) return; // CPU and DSP agents are not this backend's
        if (r.devices.size() >= max_rows) {
            problems.add(g.line, "more than " + std::to_string(max_rows) + " GPU agents; the rest ignored");
            return;
        }
        accelerator_profile p = blank_gpu(static_cast<std::uint32_t>(r.devices.size()));
        rocminfo_gpu extra;
        if (!g.marketing.empty() && !set_text(p.name, g.marketing))
            problems.add(g.line, "Marketing Name not printable or too long: " + quote_value(g.marketing));
        const bool gfx = g.name.starts_with("gfx") && g.name.size() <= decltype(p.arch)::capacity();
        if (!gfx || !set_text(p.arch, g.name)) problems.add(g.line, "Name is not a gfx target: " + quote_value(g.name));
        if (!g.uuid.empty() && g.uuid != "GPU-XX"sv && !set_text(p.uuid, g.uuid))
            problems.add(g.line, "Uuid not printable or too long: " + quote_value(g.uuid));
        if (g.chip) {
            if (*g.chip <= 0xffff) p.pci_device_id = static_cast<std::uint16_t>(*g.chip);
            else problems.add(g.line, "Chip ID " + std::to_string(*g.chip) + " is wider than a PCI id");
        }
        if (g.cus) {
            if (*g.cus <= 100'000) p.compute_units = {static_cast<std::uint32_t>(*g.cus), origin::tool};
            else problems.add(g.line, "Compute Unit " + std::to_string(*g.cus) + " is out of range");
        }
        if (g.node && *g.node <= UINT32_MAX) extra.node = static_cast<std::uint32_t>(*g.node);
        if (g.bdfid) {
            if (*g.bdfid <= 0xffff) extra.bdfid = static_cast<std::uint32_t>(*g.bdfid);
            else problems.add(g.line, "BDFID " + std::to_string(*g.bdfid) + " is wider than bus/device/function");
        }
        if (g.clock && *g.clock <= 1'000'000) extra.max_clock_mhz = static_cast<std::uint32_t>(*g.clock);
        if (g.pool_kb) {
            constexpr std::uint64_t max_kb = 16ull << 30; // 16 TiB in KiB: more than any device has
            if (*g.pool_kb <= max_kb) p.memory_bytes = {*g.pool_kb * 1024, origin::tool};
            else problems.add(g.line, "memory pool of " + std::to_string(*g.pool_kb) + " KB is out of range");
        }
        if (g.bad_pool) problems.add(g.line, "a memory pool size not understood");
        match_catalogue(p);
        r.devices.push_back(p);
        r.gpus.push_back(extra);
    };

    std::size_t number = 0;
    detail::formats::each_line(text, [&](std::string_view raw) {
        ++number;
        const auto line = detail::trim(raw);
        if (line.empty() || line.starts_with("****") || line.starts_with("====")) return true;
        if (line.starts_with("Agent ")) {
            const auto n = detail::parse_u64(detail::trim(line.substr(6)));
            if (n) {
                finish_agent();
                a = agent{};
                a->line = number;
                saw_agents = true;
                pool_segment.clear();
                in_pool_section = in_isa = false;
                return true;
            }
        }
        if (line == "*** Done ***"sv) {
            finish_agent();
            return false;
        }
        if (!a) return true; // the "HSA System Attributes" block and anything before agents
        std::size_t indent = 0;
        while (indent < raw.size() && raw[indent] == ' ') ++indent;
        const auto colon = line.find(':');
        if (colon == std::string_view::npos) return true; // "Pool 1", "ISA 1", "x  1024(0x400)"
        const auto key = detail::trim(line.substr(0, colon));
        const auto value = detail::trim(line.substr(colon + 1));
        if (indent <= 2) {
            in_pool_section = key == "Pool Info"sv;
            in_isa = key == "ISA Info"sv;
            auto number_of = [&](std::optional<std::uint64_t>& out) {
                out = rocminfo_number(value);
                if (!out) problems.add(number, std::string(key) + ": cannot read " + quote_value(value));
            };
            if (key == "Name"sv) a->name = std::string(value.substr(0, 256));
            else if (key == "Marketing Name"sv) a->marketing = std::string(value.substr(0, 256));
            else if (key == "Vendor Name"sv) a->vendor_name = std::string(value.substr(0, 256));
            else if (key == "Device Type"sv) a->type = std::string(value.substr(0, 64));
            else if (key == "Uuid"sv) a->uuid = std::string(value.substr(0, 256));
            else if (key == "Chip ID"sv) number_of(a->chip);
            else if (key == "BDFID"sv) number_of(a->bdfid);
            else if (key == "Compute Unit"sv) number_of(a->cus);
            else if (key == "Node"sv) number_of(a->node);
            else if (key == "Max Clock Freq. (MHz)"sv) number_of(a->clock);
            return true;
        }
        if (!in_pool_section || in_isa) return true;
        if (key == "Segment"sv) {
            pool_segment = std::string(value.substr(0, 128));
        } else if (key == "Size"sv && !a->pool_kb && pool_segment.starts_with("GLOBAL") &&
                   pool_segment.find("COARSE GRAINED") != std::string::npos) {
            a->pool_kb = rocminfo_number(value, "KB");
            if (!a->pool_kb) a->bad_pool = true;
        }
        return true;
    });
    finish_agent();
    if (!saw_agents && !detail::trim(text).empty()) problems.add(0, "no \"Agent N\" block found");
    problems.finish();
    return r;
}

// ---------------------------------------------------------------------------------------
// The probe

/// One amdgpu card as sysfs and the KFD topology describe it.
struct amdgpu_card {
    accelerator_profile profile;
    std::string card;                        ///< "card1"
    std::uint64_t gtt_total_bytes = 0;       ///< mem_info_gtt_total, 0 when absent
    std::uint64_t visible_vram_bytes = 0;    ///< mem_info_vis_vram_total (CPU-visible BAR), 0 when absent
    std::uint32_t max_memory_clock_mhz = 0;  ///< highest pp_dpm_mclk level, 0 when absent
    std::uint64_t xgmi_hive_id = 0;          ///< 0: not in a hive
    std::optional<std::uint64_t> xgmi_device_id;
    std::uint32_t kfd_nodes = 0;             ///< KFD compute nodes on this card (> 1: partitioned)
    bool virtual_function = false;           ///< an SR-IOV VF
};

namespace detail::amd {

inline constexpr std::string_view drm_dir = "/sys/class/drm";
inline constexpr std::string_view kfd_nodes_dir = "/sys/class/kfd/kfd/topology/nodes";
inline constexpr std::size_t attr_cap = 64 * 1024;


// A whole number from a file; with `bytes`, a mem_info_* size (at most max_amdgpu_mem_info).
template <system_view S>
std::optional<std::uint64_t> read_number(const S& sys, const std::string& path, std::vector<warning>& warnings,
                                         bool bytes = false) {
    const auto text = detail::read_optional_file(sys, path, attr_cap, warnings);
    if (!text) return std::nullopt;
    const auto v = detail::parse_u64(detail::trim(*text));
    if (v && bytes && *v > max_amdgpu_mem_info) {
        detail::add_warning(warnings, warning_kind::value_out_of_range, path, "more than 16 TiB");
        return std::nullopt;
    }
    if (!v) {
        const auto kind = detail::unparsed_number(*text);
        detail::add_warning(warnings, kind, path,
                            kind == warning_kind::value_out_of_range ? "a number past 2^64" : "not a whole number");
    }
    return v;
}

struct kfd_gpu_node {
    std::uint32_t id = 0;
    kfd_node_properties props;
};

template <system_view S>
std::vector<kfd_gpu_node> read_kfd_nodes(const S& sys, std::vector<warning>& warnings) {
    std::vector<kfd_gpu_node> out;
    const auto names = sys.list_dir(kfd_nodes_dir);
    if (!names) return out;
    for (const auto& name : *names) {
        const auto id = detail::parse_u64(name);
        if (!id || *id > UINT32_MAX) continue;
        const std::string path = std::string(kfd_nodes_dir) + "/" + name + "/properties";
        const auto text = detail::read_optional_file(sys, path, attr_cap, warnings);
        if (!text) continue;
        auto parsed = parse_kfd_node_properties(*text);
        detail::parsing::problems_to_warnings(parsed.problems, backend_id::rocm, path, warnings);
        if (!parsed.node.is_gpu()) continue;
        out.push_back({static_cast<std::uint32_t>(*id), std::move(parsed.node)});
        if (out.size() >= max_rows) break;
    }
    std::sort(out.begin(), out.end(), [](const kfd_gpu_node& a, const kfd_gpu_node& b) { return a.id < b.id; });
    return out;
}

// The render node minor of a card: /sys/class/drm/cardN/device/drm/renderD<minor>.
template <system_view S>
std::optional<std::int64_t> render_minor(const S& sys, const std::string& device) {
    const auto names = sys.list_dir(device + "/drm");
    if (!names) return std::nullopt;
    for (const auto& n : *names)
        if (n.starts_with("renderD"))
            if (const auto v = detail::parse_u64(std::string_view(n).substr(7)); v && *v < (1u << 20))
                return static_cast<std::int64_t>(*v);
    return std::nullopt;
}

// The card's PCI address: the name its `device` link points to, else PCI_SLOT_NAME from
// the device's uevent (trees where links were copied as folders).
template <system_view S>
std::optional<pci_address> card_pci_address(const S& sys, const std::string& device, std::vector<warning>& warnings) {
    if (const auto target = detail::resolve_sysfs_link(sys, device))
        if (const auto a = parse_pci_address(detail::base_name(*target))) return a;
    const auto uevent = detail::read_optional_file(sys, device + "/uevent", attr_cap, warnings);
    if (!uevent) return std::nullopt;
    return parse_pci_uevent(*uevent).slot;
}

} // namespace detail::amd

/// Reads one /sys/class/drm/cardN whose device is an AMD PCI function bound to amdgpu;
/// nullopt for any other card (another vendor's, or one bound to another driver such as
/// vfio-pci). `kfd` are the GPU nodes of the KFD topology, joined by PCI address (or by
/// render minor where the node has no address).
///
/// Memory: a discrete GPU reports mem_info_vram_total. A GPU that shares the host's memory
/// (APUs: MI300A, whose VRAM size the kernel sets to 0, Strix Halo, Phoenix, …) is marked
/// unified_memory and reports VRAM carve-out + GTT (mem_info_gtt_total): the memory the
/// GPU can allocate from. It counts as an APU when its VRAM is 0, when a KFD node puts CPU
/// cores and SIMDs together, when amdgpu offers a UMA carve-out choice (`uma/carveout`),
/// or when the catalogue row says so; amdgpu's `board_info` file, which the kernel hides
/// on APUs, marks a discrete GPU for sure. An APU none of these mark (an older kernel, no
/// carve-out choice) is reported as discrete with its carve-out as memory.
template <system_view S>
std::optional<amdgpu_card> read_amdgpu_card(const S& sys, std::string_view card_name,
                                            const std::vector<detail::amd::kfd_gpu_node>& kfd,
                                            std::vector<warning>& warnings) {
    using namespace detail::amd;
    const std::string card = std::string(drm_dir) + "/" + std::string(card_name);
    const std::string dev = card + "/device";
    const auto vendor_id = detail::read_pci_id(sys, dev + "/vendor", 0xffffu, warnings);
    if (!vendor_id || *vendor_id != pci_vendor_amd) return std::nullopt;
    const auto driver = detail::resolve_sysfs_link(sys, dev + "/driver");
    if (!driver || detail::base_name(*driver) != "amdgpu"sv) return std::nullopt;

    amdgpu_card c;
    c.card = std::string(card_name);
    accelerator_profile& p = c.profile;
    p = blank_gpu(detail::drm_card_number(card_name).value_or(0));
    if (const auto id = detail::read_pci_id(sys, dev + "/device", 0xffffu, warnings))
        p.pci_device_id = static_cast<std::uint16_t>(*id);
    p.pci = card_pci_address(sys, dev, warnings);

    auto file = [&](std::string_view name) { return detail::read_optional_file(sys, dev + "/" + std::string(name), attr_cap, warnings); };
    if (const auto t = file("product_name")) {
        const auto name = detail::trim(*t);
        if (!name.empty() && !set_text(p.name, name))
            detail::add_warning(warnings, warning_kind::parse_error, dev + "/product_name", "not printable or too long");
    }
    if (const auto t = file("unique_id")) {
        const auto id = detail::trim(*t);
        if (!id.empty() && !set_text(p.uuid, id))
            detail::add_warning(warnings, warning_kind::parse_error, dev + "/unique_id", "not printable or too long");
    }
    // pp_dpm_pcie after the link attributes, which it overrides: a Radeon since Navi sits
    // behind a PCIe switch on its own board, and its function's attributes describe the
    // link to that switch (32 GT/s x16 on a card in a 16 GT/s x8 slot), not the slot's.
    for (std::string_view f : {"current_link_speed", "current_link_width", "max_link_speed", "max_link_width",
                               "pp_dpm_pcie", "numa_node", "mem_info_vram_total", "mem_info_vram_used"}) {
        const auto t = file(f);
        if (!t) continue;
        // "Unknown" link speeds and widths 0 and 255 (a link the kernel cannot read) are not
        // garbage.
        if (detail::trim(*t).starts_with("Unknown") ||
            (f.ends_with("width") && (detail::trim(*t) == "0"sv || detail::trim(*t) == "255"sv)))
            continue;
        auto problem = apply_device_file(f, *t, p);
        if (!problem.empty()) detail::add_warning(warnings, problem.kind, dev + "/" + std::string(f), problem.message);
    }
    c.gtt_total_bytes = read_number(sys, dev + "/mem_info_gtt_total", warnings, true).value_or(0);
    c.visible_vram_bytes = read_number(sys, dev + "/mem_info_vis_vram_total", warnings, true).value_or(0);
    std::optional<std::uint64_t> gtt_used = read_number(sys, dev + "/mem_info_gtt_used", warnings, true);
    if (const auto t = file("pp_dpm_mclk")) {
        const auto levels = parse_pp_dpm_levels(*t);
        detail::parsing::problems_to_warnings(levels.problems, backend_id::rocm, dev + "/pp_dpm_mclk", warnings);
        c.max_memory_clock_mhz = levels.max_mhz;
    }

    // XGMI: the hive folder sits under the hive's first device; the others link to it.
    if (const auto hive = read_number(sys, dev + "/xgmi_hive_info/xgmi_hive_id", warnings)) c.xgmi_hive_id = *hive;
    c.xgmi_device_id = read_number(sys, dev + "/xgmi_device_id", warnings);

    // SR-IOV: a VF on the host has a `physfn` link to its physical function.
    c.virtual_function = detail::resolve_sysfs_link(sys, dev + "/physfn").has_value();

    // KFD nodes on this card: by PCI address, else by render minor.
    const auto minor = render_minor(sys, dev);
    bool combined_node = false;
    std::uint32_t cus = 0;
    bool cus_known = false;
    for (const auto& n : kfd) {
        const auto a = n.props.pci();
        const bool same = a ? (p.pci && *a == *p.pci)
                            : (minor && n.props.drm_render_minor && *n.props.drm_render_minor == *minor);
        if (!same) continue;
        ++c.kfd_nodes;
        if (p.arch.empty() && n.props.gfx_target_version) set_text(p.arch, gfx_target_name(*n.props.gfx_target_version));
        if (const auto cu = n.props.compute_units()) {
            cus += *cu; // a partitioned GPU: its compute units are split over its nodes
            cus_known = true;
        }
        if (c.xgmi_hive_id == 0 && n.props.hive_id) c.xgmi_hive_id = *n.props.hive_id;
        if (n.props.cpu_cores_count.value_or(0) > 0) combined_node = true;
        if (p.pci_device_id == 0 && n.props.device_id && *n.props.device_id <= 0xffff)
            p.pci_device_id = static_cast<std::uint16_t>(*n.props.device_id);
    }
    if (cus_known) p.compute_units = {cus, origin::sysfs};

    const bool board_info = sys.exists(dev + "/board_info");
    const auto vram = p.memory_bytes;
    // uma/carveout: the carve-out size choice amdgpu offers on APUs whose firmware has one.
    bool apu = !board_info && ((vram && *vram == 0) || combined_node || sys.exists(dev + "/uma/carveout"));
    // Catalogue after the kernel's facts; a name the kernel did not give comes from the row.
    match_catalogue(p);
    if (p.spec && (p.spec->memory == memory_type::unified || p.spec->shared_with_host) && !board_info) apu = true;
    if (apu) {
        p.unified_memory = true;
        if (c.gtt_total_bytes != 0 || (vram && vram.from == origin::sysfs)) {
            const std::uint64_t carve = vram.from == origin::sysfs ? *vram : 0;
            p.memory_bytes = {carve + c.gtt_total_bytes, origin::sysfs};
            if (p.memory_used_bytes && gtt_used) p.memory_used_bytes = {*p.memory_used_bytes + *gtt_used, origin::sysfs};
        }
    }
    if (p.spec && p.name.empty()) p.name = p.spec->name;
    if (!c.virtual_function && p.name.view().ends_with(" VF")) c.virtual_function = true;
    // A VF holds a share of the board; the board's catalogue memory would overstate it.
    if (c.virtual_function && p.memory_bytes.from == origin::catalogue) p.memory_bytes.reset();
    if (p.memory_bytes && p.memory_used_bytes && *p.memory_used_bytes <= *p.memory_bytes &&
        p.memory_bytes.from == origin::sysfs)
        p.memory_free_bytes = {*p.memory_bytes - *p.memory_used_bytes, origin::sysfs};
    return c;
}

/// Every amdgpu card of the machine, by card number.
template <system_view S>
std::vector<amdgpu_card> probe_amdgpu_cards(const S& sys, std::vector<warning>& warnings) {
    std::vector<amdgpu_card> cards;
    const auto names = detail::list_optional_dir(sys, detail::amd::drm_dir, warnings);
    if (!names) return cards;
    std::vector<std::pair<std::uint64_t, std::string>> order;
    for (const auto& n : *names)
        if (const auto number = detail::drm_card_number(n)) order.emplace_back(*number, n);
    std::sort(order.begin(), order.end());
    if (order.empty()) return cards;
    const auto kfd = detail::amd::read_kfd_nodes(sys, warnings);
    for (const auto& [number, name] : order) {
        if (cards.size() >= detail::parsing::max_rows) break;
        if (auto c = read_amdgpu_card(sys, name, kfd, warnings)) cards.push_back(std::move(*c));
    }
    return cards;
}

/// One XGMI interconnect per hive, joining the cards (by profile index) that share it.
inline std::vector<interconnect> xgmi_hives(const std::vector<amdgpu_card>& cards) {
    std::map<std::uint64_t, std::vector<std::uint32_t>> hives;
    for (const auto& c : cards)
        if (c.xgmi_hive_id != 0) hives[c.xgmi_hive_id].push_back(c.profile.index);
    std::vector<interconnect> out;
    for (auto& [id, members] : hives) {
        interconnect l;
        l.kind = interconnect_kind::xgmi;
        l.scope = link_scope::intra_node;
        constexpr char hex[] = "0123456789abcdef";
        std::string h;
        for (std::uint64_t v = id; v != 0; v >>= 4) h.insert(h.begin(), hex[v & 0xf]);
        l.name = "XGMI hive 0x" + h;
        l.state = std::to_string(members.size()) + (members.size() == 1 ? " device" : " devices");
        l.devices = std::move(members);
        out.push_back(std::move(l));
    }
    return out;
}

/// AMD GPUs as the amdgpu and amdkfd drivers describe them in sysfs; runs no tool.
/// The rocm-smi run that names cards the kernel leaves unnamed (no `product_name`, as on
/// most consumer boards): product names with the PCI bus to match them by.
inline tool_request rocm_smi_names_request() {
    using namespace std::chrono_literals;
#if AI_HWACCEL_JSON
    return tool_request{{"rocm-smi", "--showproductname", "--showbus", "--json"}, 10s};
#else
    return tool_request{{"rocm-smi", "--showproductname", "--showbus", "--csv"}, 10s};
#endif
}

/// AMD GPUs from amdgpu sysfs and the KFD topology, XGMI hives from the kernel's files,
/// and, only where the kernel gives a card no name, rocm-smi's product name for it.
struct rocm_probe {
    static constexpr backend_id backend = backend_id::rocm;

    template <system_view S>
    probe_output probe(const S& sys) const {
        probe_output out;
        auto cards = probe_amdgpu_cards(sys, out.warnings);
        for (auto& w : out.warnings)
            if (!w.backend) w.backend = backend;
        out.links = xgmi_hives(cards);
        for (auto& c : cards) out.devices.push_back(c.profile);
        name_from_rocm_smi(sys, out);
        // Neither the kernel, the catalogue nor rocm-smi named it: its PCI id does.
        for (auto& d : out.devices)
            if (d.name.empty() && d.pci_device_id != 0) d.name.assign(detail::unknown_device_name("AMD GPU", d.pci_device_id));
        return out;
    }

private:
    template <system_view S>
    static void name_from_rocm_smi(const S& sys, probe_output& out) {
        const bool unnamed = std::any_of(out.devices.begin(), out.devices.end(),
                                         [](const accelerator_profile& d) { return d.name.empty() && d.pci; });
        if (!unnamed) return;
        const tool_request request = rocm_smi_names_request();
        tool_result r = sys.run(request);
        if (tool_missing(r, out.warnings)) return; // optional: sysfs already found the cards
        if (!report_tool_result(request, r, backend, out.warnings)) return;
        if (report_empty_output(request, r, backend, out.warnings)) return; // it prints JSON when it works
        const auto named = parse_rocm_smi(r.out);
        detail::parsing::problems_to_warnings(named.problems, backend, "rocm-smi", out.warnings);
        for (auto& d : out.devices) {
            if (!d.name.empty() || !d.pci) continue;
            for (const auto& t : named.devices)
                if (t.pci == d.pci && !t.name.empty()) {
                    d.name = t.name;
                    if (!d.spec && t.spec) d.apply_spec(*t.spec);
                }
        }
    }
};
#if AI_HWACCEL_OS_LINUX || AI_HWACCEL_OS_MACOS
static_assert(backend_probe<rocm_probe, host_system>);
#endif

// ---------------------------------------------------------------------------------------
// Capture formats

namespace detail::formats {

inline void amd_problems_to_warnings(const std::vector<parse_problem>& problems, std::string_view subject,
                                     std::vector<warning>& out) {
    detail::parsing::problems_to_warnings(problems, backend_id::rocm, subject, out);
}

// rocminfo ---------------------------------------------------------------------------------
inline int sniff_rocminfo(std::string_view t) noexcept {
    const bool agents = t.find("HSA Agents") != std::string_view::npos;
    const bool system = t.find("HSA System Attributes") != std::string_view::npos;
    if (!agents || !system) return 0;
    return first_non_blank_line(t).starts_with("ROCk module") ? 95 : 90;
}
inline void parse_rocminfo_capture(std::string_view t, capture_parse& out) {
    auto r = parse_rocminfo(t);
    amd_problems_to_warnings(r.problems, out.format, out.warnings);
    if (r.devices.empty() && r.problems.empty()) nothing_found(out, "GPU agents");
    out.devices = std::move(r.devices);
}

// /sys/class/kfd/kfd/topology/nodes/<N>/properties -----------------------------------------
inline int sniff_kfd_properties(std::string_view t) noexcept {
    bool all = true, any = false, simd = false, gfx = false;
    each_line(t, [&](std::string_view raw) {
        const auto line = trim(raw);
        if (line.empty()) return true;
        const auto sp = line.find(' ');
        if (sp == std::string_view::npos) {
            all = false;
            return false;
        }
        const auto key = line.substr(0, sp);
        for (char c : key)
            if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_')) all = false;
        if (!parse_i64(trim(line.substr(sp)))) all = false;
        simd = simd || key == "simd_count"sv;
        gfx = gfx || key == "gfx_target_version"sv || key == "cpu_cores_count"sv;
        any = true;
        return all;
    });
    return all && any && simd && gfx ? 90 : 0;
}
inline void parse_kfd_properties_capture(std::string_view t, capture_parse& out) {
    auto r = parse_kfd_node_properties(t);
    amd_problems_to_warnings(r.problems, out.format, out.warnings);
    if (!r.node.simd_count && r.problems.empty()) nothing_found(out, "simd_count line");
    out.devices = std::move(r.devices);
}

// pp_dpm_* ----------------------------------------------------------------------------------
inline int sniff_pp_dpm(std::string_view t) noexcept {
    bool all = true, any = false, star = false;
    each_line(t, [&](std::string_view raw) {
        const auto line = trim(raw);
        if (line.empty()) return true;
        const auto colon = line.find(':');
        const auto label = colon == std::string_view::npos ? std::string_view{} : line.substr(0, colon);
        const bool label_ok = label == "S"sv || (label.size() <= 2 && parse_u64(label).has_value());
        const auto rest = colon == std::string_view::npos ? std::string_view{} : line.substr(colon + 1);
        const bool unit = icontains(rest, "mhz") || rest.find("GT/s") != std::string_view::npos;
        if (!label_ok || !unit) all = false;
        star = star || line.back() == '*';
        any = true;
        return all;
    });
    return all && any && star ? 85 : 0;
}
inline void parse_pp_dpm_capture(std::string_view t, capture_parse& out) {
    auto r = parse_pp_dpm_levels(t);
    amd_problems_to_warnings(r.problems, out.format, out.warnings);
    if (r.levels.empty()) {
        if (r.problems.empty()) nothing_found(out, "DPM levels");
        return;
    }
    // A PCIe table describes a GPU's link; a clock table alone fills no profile field.
    if (r.max_link.generation == 0) return;
    accelerator_profile p = amd::blank_gpu(0);
    if (r.active && r.levels[*r.active].link.known()) p.pcie_current = {r.levels[*r.active].link, origin::sysfs};
    if (r.max_link.known()) p.pcie_max = {r.max_link, origin::sysfs};
    out.devices.push_back(p);
}

// Shell transcripts of amdgpu sysfs files ----------------------------------------------------
inline int sniff_amdgpu_transcript(std::string_view t) noexcept {
    bool amdgpu_file = false, prompt = false;
    each_line(t, [&](std::string_view raw) {
        const auto line = trim(raw);
        const auto cmd = amd::prompt_command(line);
        if (cmd && cmd->starts_with("cat /sys/")) {
            prompt = true;
            amdgpu_file = amdgpu_file || cmd->find("/mem_info_") != std::string_view::npos ||
                          cmd->find("/pp_dpm_") != std::string_view::npos;
        }
        return true;
    });
    return prompt && amdgpu_file ? 80 : 0;
}
inline void parse_amdgpu_transcript_capture(std::string_view t, capture_parse& out) {
    auto r = parse_sysfs_transcript(t);
    amd_problems_to_warnings(r.problems, out.format, out.warnings);
    // One profile per device folder, in the order the folders first appear.
    std::vector<std::pair<std::string, accelerator_profile>> devices;
    for (const auto& f : r.files) {
        const auto parts = amd::split_path(f.path);
        const std::string_view dir = parts.first, name = parts.second;
        auto it = std::find_if(devices.begin(), devices.end(), [&](const auto& d) { return d.first == dir; });
        if (it == devices.end()) {
            if (devices.size() >= detail::parsing::max_rows) continue;
            devices.emplace_back(std::string(dir), amd::blank_gpu(static_cast<std::uint32_t>(devices.size())));
            it = devices.end() - 1;
        }
        auto problem = amd::apply_device_file(name, f.value, it->second);
        if (!problem.empty())
            out.warnings.push_back(warning{problem.kind, backend_id::rocm, std::string(out.format),
                                           "line " + std::to_string(f.line) + ": " + problem.message, 0});
    }
    if (devices.empty() && r.problems.empty()) nothing_found(out, "sysfs files");
    for (auto& [dir, p] : devices) {
        if (p.memory_bytes && p.memory_used_bytes && *p.memory_used_bytes <= *p.memory_bytes)
            p.memory_free_bytes = {*p.memory_bytes - *p.memory_used_bytes, origin::sysfs};
        out.devices.push_back(p);
    }
}

} // namespace detail::formats

AI_HWACCEL_NAMESPACE_END

#endif // AI_HWACCEL_BACKEND_ROCM
