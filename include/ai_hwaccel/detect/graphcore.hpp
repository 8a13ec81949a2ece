// ai-hwaccel detect: Graphcore IPUs through `gc-info -l` and `gc-monitor`.
//
// In an IPU-POD the IPUs sit in IPU-Machines (IPU-M2000, Bow-2000) reached over the
// network (IPU-over-Fabric); the host running the job sees no PCI function for them,
// only what the Poplar SDK's tools report. `gc-info -l` (--list-devices) lists the
// active partition: one "-+- Id: [n], target: [Fabric], IPU-M host: [...], IPU#: [k]"
// line per IPU, then "Multi IPU" devices made of several of them (their members on
// " |--- " lines). `gc-monitor` prints a box table with one row per IPU whose "Type"
// column is the machine type (M2000), which is how an IPU is matched to the catalogue.
// Formats from Graphcore's command-line tools documentation (gc-info, gc-monitor) and
// the captures. Board serial numbers are never copied. PCIe cards (C2, C600) are listed
// as Graphcore's TensorFlow documentation (IPUConfig.select_ipus) prints them: the key
// is "type" rather than "target", brackets are padded ("Id:  [0], type:      [PCIe],
// PCI Domain: [0000:1a:00.0]"), and a Multi IPU device's members are "|--- PCIe Id:
// [5], DNC Id: [0], ..." lines. A bracketed PCI address is taken wherever it appears.
//
// The probe runs `gc-info -l`, then `gc-monitor` for the types; a missing gc-info says
// nothing (IPUs over fabric leave no trace on the host to say they exist).
#pragma once

#include "ai_hwaccel/config.hpp"

#if AI_HWACCEL_BACKEND_GRAPHCORE

#include "ai_hwaccel/core/catalogue.hpp"
#include "ai_hwaccel/core/pci.hpp"
#include "ai_hwaccel/core/profile.hpp"
#include "ai_hwaccel/core/text.hpp"
#include "ai_hwaccel/core/warning.hpp"
#include "ai_hwaccel/detect/capture.hpp"
#include "ai_hwaccel/detect/probe.hpp"
#include "ai_hwaccel/detect/sysfs.hpp"
#include "ai_hwaccel/detect/system.hpp"

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

AI_HWACCEL_NAMESPACE_BEGIN

/// One IPU line of `gc-info -l`.
struct graphcore_ipu_entry {
    std::uint32_t id = 0;
    std::string target;     ///< "Fabric", "PCIe"
    std::string ipum_host;  ///< the IPU-Machine's address (Fabric targets)
    std::optional<std::uint32_t> ipu_number; ///< "IPU#": the IPU's place in its machine
    friend bool operator==(const graphcore_ipu_entry&, const graphcore_ipu_entry&) = default;
};

/// A "Multi IPU" device of `gc-info -l`: its id and the ids of the IPUs it is made of.
struct graphcore_multi_ipu {
    std::uint32_t id = 0;
    std::vector<std::uint32_t> members;
    friend bool operator==(const graphcore_multi_ipu&, const graphcore_multi_ipu&) = default;
};

/// What `parse_gc_info_list` read.
struct gc_info_list_result {
    std::vector<accelerator_profile> devices; ///< one per single IPU, in listing order
    std::vector<graphcore_ipu_entry> ipus;    ///< the same IPUs' listing details
    std::vector<graphcore_multi_ipu> groups;
    std::string partition; ///< the active partition's name
    std::vector<parse_problem> problems;
};

/// What `parse_gc_monitor` read.
struct gc_monitor_result {
    std::vector<accelerator_profile> devices; ///< one per IPU row, named by its Type
    std::string partition;
    std::vector<parse_problem> problems;
};

namespace detail::graphcore {

using detail::parsing::max_rows;
using detail::parsing::parse_uint;
using detail::parsing::printable;
using detail::parsing::problem_sink;
using detail::parsing::quote_value;

inline accelerator_profile blank_ipu(std::uint32_t id) {
    accelerator_profile p;
    p.kind = device_kind::graphcore_ipu;
    p.maker = vendor::graphcore;
    p.index = id;
    return p;
}

// Names the IPU after the machine or chip type its tool printed, and matches the catalogue.
inline bool apply_type(accelerator_profile& p, std::string_view type) {
    bool changed = false;
    const auto text = printable(type, changed);
    p.name = std::string_view(text).substr(0, decltype(p.name)::capacity());
    if (const auto* spec = find_device(text); spec && spec->kind == device_kind::graphcore_ipu) p.apply_spec(*spec);
    return !changed;
}

struct field {
    std::string_view key;
    std::string_view value;
};

// "Id: [0], target: [Fabric], IPU#: [3]" or "Id:  [0], type:      [PCIe]" -> its fields
// (blanks may pad the brackets); nullopt when it is not that shape.
inline std::optional<std::vector<field>> bracket_fields(std::string_view s) {
    std::vector<field> out;
    s = trim(s);
    while (!s.empty()) {
        const auto open = s.find('[');
        if (open == std::string_view::npos) return std::nullopt;
        const auto key = trim(s.substr(0, open));
        if (key.size() < 2 || key.back() != ':') return std::nullopt;
        const auto close = s.find(']', open + 1);
        if (close == std::string_view::npos) return std::nullopt;
        out.push_back({trim(key.substr(0, key.size() - 1)), trim(s.substr(open + 1, close - open - 1))});
        s = trim(s.substr(close + 1));
        if (s.empty()) break;
        if (s.front() != ',') return std::nullopt;
        s = trim(s.substr(1));
        if (out.size() > 64) return std::nullopt;
    }
    if (out.empty()) return std::nullopt;
    return out;
}

constexpr std::optional<std::uint32_t> small_number(std::string_view v) noexcept {
    const auto n = parse_u64(v);
    if (!n || *n > 0xffff) return std::nullopt;
    return static_cast<std::uint32_t>(*n);
}

// Cells of a "|a|b|c|" table row, trimmed; empty when the line is not one.
inline std::vector<std::string_view> table_cells(std::string_view line) {
    std::vector<std::string_view> cells;
    line = trim(line);
    if (line.size() < 2 || line.front() != '|' || line.back() != '|') return cells;
    line = line.substr(1, line.size() - 2);
    for (;;) {
        const auto bar = line.find('|');
        cells.push_back(trim(line.substr(0, bar)));
        if (bar == std::string_view::npos || cells.size() > 64) break;
        line.remove_prefix(bar + 1);
    }
    return cells;
}

constexpr bool is_border(std::string_view line) noexcept {
    line = trim(line);
    if (line.size() < 2 || line.front() != '+') return false;
    for (char c : line)
        if (c != '+' && c != '-') return false;
    return true;
}

// "Partition: ipuof [active]" (gc-info) or "Partition: ipuof [active] has 4 ..." (gc-monitor).
inline std::optional<std::pair<std::string, bool>> partition_line(std::string_view s) {
    s = trim(s);
    if (!s.starts_with("Partition:")) return std::nullopt;
    s = trim(s.substr(10));
    const auto sp = s.find(' ');
    const std::string_view name = s.substr(0, sp);
    if (name.empty()) return std::nullopt;
    bool changed = false;
    return std::pair{printable(name, changed, 64),
                     sp != std::string_view::npos && trim(s.substr(sp)).starts_with("[active]")};
}

} // namespace detail::graphcore

/// Reads `gc-info -l` (--list-devices). Single IPUs become devices (kind graphcore_ipu,
/// index = the listing's Id, unnamed: the listing does not say the type); Multi IPU
/// devices are listed apart. IPUs of a partition not marked active (--all-partitions)
/// are unavailable. An Id listed twice in one partition is reported, and its second
/// listing (with a Multi IPU device's members) left out.
inline gc_info_list_result parse_gc_info_list(std::string_view text) {
    using namespace detail::graphcore;
    gc_info_list_result r;
    problem_sink problems{r.problems};
    std::size_t number = 0;
    bool active = true;
    graphcore_multi_ipu* group = nullptr; // the last Multi IPU device, re-taken after each push_back
    bool skipping = false;                // inside a Multi IPU device listed twice
    std::vector<std::uint32_t> ids;       // the Ids of this partition so far
    detail::formats::each_line(text, [&](std::string_view raw) {
        ++number;
        const auto line = detail::trim(raw);
        if (line.empty() || line == "Graphcore device listing:"sv) return true;
        if (auto part = partition_line(line)) {
            active = part->second;
            if (active && r.partition.empty()) r.partition = std::move(part->first);
            group = nullptr;
            skipping = false;
            ids.clear();
            return true;
        }
        const bool top = line.starts_with("-+-");
        const bool member = line.starts_with("|---");
        const auto fields = top || member ? bracket_fields(line.substr(top ? 3 : 4)) : std::nullopt;
        // A member is "Id" over fabric, "PCIe Id" on PCIe cards.
        const bool id_key = fields && (fields->front().key == "Id"sv || (member && fields->front().key == "PCIe Id"sv));
        if (!id_key || !small_number(fields->front().value)) {
            problems.add(number, "not understood: " + quote_value(line));
            return true;
        }
        if (r.ipus.size() + r.groups.size() >= max_rows) {
            problems.add(number, "more than " + std::to_string(max_rows) + " devices; the rest ignored");
            return false;
        }
        const std::uint32_t id = *small_number(fields->front().value);
        if (member) {
            if (skipping) return true;
            if (!group) problems.add(number, "a Multi IPU member before any Multi IPU device");
            else if (group->members.size() < 1024) group->members.push_back(id);
            return true;
        }
        group = nullptr;
        skipping = std::find(ids.begin(), ids.end(), id) != ids.end();
        if (skipping) {
            problems.add(number, "Id " + std::to_string(id) + " listed twice; the second listing ignored");
            return true;
        }
        ids.push_back(id);
        std::string_view target; // "target" over fabric, "type" on PCIe cards
        for (const auto& f : *fields)
            if (f.key == "target"sv || f.key == "type"sv) target = f.value;
        if (target == "Multi IPU"sv) {
            r.groups.push_back({id, {}});
            group = &r.groups.back();
            return true;
        }
        bool changed = false;
        graphcore_ipu_entry e;
        e.id = id;
        e.target = printable(target, changed, 32);
        accelerator_profile p = blank_ipu(id);
        p.available = active;
        for (const auto& f : *fields) {
            if (f.key == "IPU-M host"sv) e.ipum_host = printable(f.value, changed, 64);
            else if (f.key == "IPU#"sv) {
                e.ipu_number = small_number(f.value);
                if (!e.ipu_number) problems.add(number, "IPU#: cannot read " + quote_value(f.value));
            } else if (const auto a = parse_pci_address(f.value); a && f.value.size() >= 12)
                p.pci = *a;
        }
        if (changed) problems.add(number, "not printable UTF-8, replaced: " + quote_value(line));
        r.ipus.push_back(std::move(e));
        r.devices.push_back(p);
        return true;
    });
    problems.finish();
    return r;
}

/// Reads `gc-monitor`'s device table: the header row names the columns ("ID", "Type",
/// "IPU#", …); each row below is one IPU, index = ID, named by its Type and matched to
/// the catalogue by it. A border between rows separates one IPU-Machine's IPUs from the
/// next one's; the table ends at the first row after a border that does not have the
/// header's cells (the attached-processes box). Rows of that box are not devices. A
/// second row for an ID is reported and left out.
inline gc_monitor_result parse_gc_monitor(std::string_view text) {
    using namespace detail::graphcore;
    gc_monitor_result r;
    problem_sink problems{r.problems};
    std::size_t number = 0;
    std::vector<std::string_view> header;
    std::size_t id_col = 0, type_col = 0;
    bool in_rows = false, after_border = false;
    detail::formats::each_line(text, [&](std::string_view raw) {
        ++number;
        const auto line = detail::trim(raw);
        if (line.empty()) return true;
        if (is_border(line)) {
            after_border = in_rows; // between two machines' rows, or after the table
            return true;
        }
        const auto cells = table_cells(line);
        if (after_border && cells.size() != header.size()) return false; // the next box
        after_border = false;
        if (cells.empty()) {
            problems.add(number, "not a table row: " + quote_value(line));
            return true;
        }
        if (header.empty()) {
            if (cells.size() >= 2 && cells[0] == "gc-monitor"sv) {
                if (auto part = partition_line(cells[1])) r.partition = std::move(part->first);
                return true;
            }
            bool has_id = false, has_type = false;
            for (std::size_t i = 0; i < cells.size(); ++i) {
                if (cells[i] == "ID"sv) id_col = i, has_id = true;
                if (cells[i] == "Type"sv) type_col = i, has_type = true;
            }
            if (has_id && has_type) header = cells;
            return true; // other boxes before the table
        }
        if (cells.size() != header.size()) {
            problems.add(number, std::to_string(cells.size()) + " cells for " + std::to_string(header.size()) +
                                     " columns; row skipped");
            return true;
        }
        in_rows = true;
        const auto id = small_number(cells[id_col]);
        if (!id) {
            problems.add(number, "ID: cannot read " + quote_value(cells[id_col]));
            return true;
        }
        if (r.devices.size() >= max_rows) {
            problems.add(number, "more than " + std::to_string(max_rows) + " rows; the rest ignored");
            return false;
        }
        if (std::ranges::any_of(r.devices, [&](const accelerator_profile& d) { return d.index == *id; })) {
            problems.add(number, "ID " + std::to_string(*id) + " listed twice; the second row ignored");
            return true;
        }
        accelerator_profile p = blank_ipu(*id);
        if (!cells[type_col].empty() && !apply_type(p, cells[type_col]))
            problems.add(number, "Type not printable: " + quote_value(cells[type_col]));
        for (const auto c : cells)
            if (const auto a = parse_pci_address(c); a && c.size() >= 12) p.pci = *a;
        r.devices.push_back(p);
        return true;
    });
    if (header.empty() && !text.empty() && r.problems.empty())
        problems.add(0, "no device table (a header row with ID and Type)");
    problems.finish();
    return r;
}

/// The runs the probe makes.
inline tool_request gc_info_list_request() {
    using namespace std::chrono_literals;
    return tool_request{{"gc-info", "-l"}, 20s};
}
inline tool_request gc_monitor_request() {
    using namespace std::chrono_literals;
    return tool_request{{"gc-monitor"}, 20s};
}

/// Graphcore IPUs of the active partition, named and matched by gc-monitor's Type.
struct graphcore_probe {
    static constexpr backend_id backend = backend_id::graphcore;

    template <system_view S>
    probe_output probe(const S& sys) const {
        probe_output out;
        const tool_request list = gc_info_list_request();
        tool_result r = sys.run(list);
        if (tool_missing(r, out.warnings)) return out;
        if (!report_tool_result(list, r, backend, out.warnings)) return out;
        auto parsed = parse_gc_info_list(r.out);
        detail::parsing::problems_to_warnings(parsed.problems, backend, "gc-info -l", out.warnings);
        out.devices = std::move(parsed.devices);
        if (out.devices.empty()) return out;

        const tool_request monitor = gc_monitor_request();
        tool_result m = sys.run(monitor);
        if (tool_missing(m, out.warnings)) return out; // types stay unknown
        if (!report_tool_result(monitor, m, backend, out.warnings)) return out;
        // gc-info listed IPUs: gc-monitor's table of them printing nothing is a fault.
        if (report_empty_output(monitor, m, backend, out.warnings)) return out;
        const auto typed = parse_gc_monitor(m.out);
        detail::parsing::problems_to_warnings(typed.problems, backend, "gc-monitor", out.warnings);
        for (auto& d : out.devices)
            for (const auto& t : typed.devices)
                if (t.index == d.index && d.name.empty() && !t.name.empty()) {
                    d.name = t.name;
                    if (t.spec) d.apply_spec(*t.spec);
                }
        return out;
    }
};
#if AI_HWACCEL_OS_LINUX || AI_HWACCEL_OS_MACOS
static_assert(backend_probe<graphcore_probe, host_system>);
#endif

namespace detail::formats {

// gc-info -l ----------------------------------------------------------------------------------
inline int sniff_gc_info_list(std::string_view t) noexcept {
    return first_non_blank_line(t) == "Graphcore device listing:"sv ? 95 : 0;
}
inline void parse_gc_info_list_capture(std::string_view t, capture_parse& out) {
    auto r = parse_gc_info_list(t);
    detail::parsing::problems_to_warnings(r.problems, backend_id::graphcore, out.format, out.warnings);
    if (r.devices.empty() && r.problems.empty()) nothing_found(out, "IPU lines");
    out.devices = std::move(r.devices);
}

// gc-monitor ----------------------------------------------------------------------------------
inline int sniff_gc_monitor(std::string_view t) noexcept {
    if (!graphcore::is_border(first_non_blank_line(t))) return 0;
    bool title = false;
    each_line(t, [&](std::string_view line) {
        line = trim(line);
        if (line.starts_with("|")) {
            line.remove_prefix(1);
            title = trim(line.substr(0, line.find('|'))) == "gc-monitor"sv;
            return false;
        }
        return true;
    });
    return title ? 95 : 0;
}
inline void parse_gc_monitor_capture(std::string_view t, capture_parse& out) {
    auto r = parse_gc_monitor(t);
    detail::parsing::problems_to_warnings(r.problems, backend_id::graphcore, out.format, out.warnings);
    if (r.devices.empty() && r.problems.empty()) nothing_found(out, "IPU rows");
    out.devices = std::move(r.devices);
}

} // namespace detail::formats

AI_HWACCEL_NAMESPACE_END

#endif // AI_HWACCEL_BACKEND_GRAPHCORE
