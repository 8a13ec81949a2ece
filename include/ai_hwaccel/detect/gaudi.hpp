// ai-hwaccel detect: Intel Gaudi accelerators (Habana Labs, PCI vendor 0x1da3).
//
// Three pure parsers for what `hl-smi` prints: its default table (which imitates
// nvidia-smi's), the detailed log of `hl-smi -q` / `hl-smi -L [-i <bus>]`, and the CSV of
// `hl-smi -Q <fields> -f csv[,noheader][,nounits]`. Then the probe: the habanalabs driver
// names each device in sysfs (/sys/class/accel/accel<N>/device/… on current drivers,
// /sys/class/habanalabs/hl<N>/… on drivers from before the accel subsystem), and one
// hl-smi query adds memory in use, power, temperature and load. Without hl-smi the devices
// still come from sysfs, with their memory from the catalogue.
//
// The driver's attributes are those of its sysfs ABI (Documentation/ABI/testing/
// sysfs-driver-habanalabs and drivers/accel/habanalabs/common/sysfs.c): `device_type`
// ("GAUDI2", "GAUDI3", …), `status` ("Operational", "In reset", "Disabled", "Needs
// reset", …), `module_id` (the card's slot on the baseboard), `pci_addr`, and `max_power`
// (milliwatts). The driver gives no memory size in sysfs.
//
// hl-smi's -Q field names are those its documentation lists (Intel Gaudi docs, "System
// Management Interface Tool (hl-smi)"): index, module_id, name, bus_id, uuid, serial,
// driver_version, memory.total/used/free (MiB), power.draw (W), temperature.aip (C),
// utilization.aip (%), timestamp, ecc.*, stats.*. With a header line, hl-smi names each
// column as nvidia-smi does ("memory.used [MiB]"); values carry their unit unless
// `nounits` is given ("672 MiB", "226 W", "36 C", "0 %").
//
// Links: Intel documents the 8-card HLS-2 and HLS-3 systems as joining their OAM Gaudis
// all to all with the integrated RoCE ports (21 scale-up ports each, 3 to each of the 7
// others; docs.habana.ai, "Intel Gaudi Network Configuration"). Where the catalogue gives
// a device a RoCE link figure (the OAM parts; the PCIe card has none), the node's Gaudis
// of that one model are reported as one `gaudi_roce` fabric.
#pragma once

#include "ai_hwaccel/config.hpp"

#if AI_HWACCEL_BACKEND_GAUDI

#include "ai_hwaccel/core/catalogue.hpp"
#include "ai_hwaccel/core/pci.hpp"
#include "ai_hwaccel/core/profile.hpp"
#include "ai_hwaccel/core/system_io.hpp"
#include "ai_hwaccel/core/text.hpp"
#include "ai_hwaccel/core/warning.hpp"
#include "ai_hwaccel/detect/capture.hpp"
#include "ai_hwaccel/detect/probe.hpp"
#include "ai_hwaccel/detect/process.hpp"
#include "ai_hwaccel/detect/sysfs.hpp"
#include "ai_hwaccel/detect/system.hpp"
#include "ai_hwaccel/detect/topology.hpp"

#include <algorithm>
#include <array>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

AI_HWACCEL_NAMESPACE_BEGIN

/// What one of the hl-smi parsers read. `module_ids` runs beside `devices`: the card's
/// module (baseboard slot) id, nullopt where the output does not say.
struct hl_smi_result {
    std::vector<accelerator_profile> devices;
    std::vector<std::optional<std::uint32_t>> module_ids;
    std::string hl_smi_version; ///< "hl-1.21.1-fw-59.2.3.0" (table and log forms)
    std::vector<parse_problem> problems;
};

/// The -Q fields the probe asks for, in order: all from hl-smi's documented list.
inline constexpr std::array<std::string_view, 12> hl_smi_query_fields{
    "index",       "module_id",   "name",        "bus_id",     "uuid",            "driver_version",
    "memory.total", "memory.used", "memory.free", "power.draw", "temperature.aip", "utilization.aip",
};

/// PCI vendor id of Habana Labs.
inline constexpr std::uint16_t pci_vendor_habana = 0x1da3;

namespace detail::gaudi {

using detail::parsing::max_problems;
using detail::parsing::max_rows;
using detail::parsing::parse_real;
using detail::parsing::parse_uint;
using detail::parsing::printable;
using detail::parsing::problem_sink;
using detail::parsing::value_problem;
using detail::parsing::quote_value;

enum class field : std::uint8_t {
    ignored, // a field hl-smi knows that the library does not map (serial, ecc.*, …)
    index,
    module_id,
    name,
    bus_id,
    uuid,
    driver_version,
    memory_total,
    memory_used,
    memory_free,
    power_draw,
    power_max,
    temperature,
    utilization,
};

// A mapped field; its unit is what hl-smi appends without `nounits` ("" for none).
using field_info = detail::parsing::query_field<field>;

// The documented -Q fields the library maps, and power.max, which hl-smi also accepts
// (all-smi's Gaudi collector queries it; `hl-smi -q` prints it as "Power Max").
inline constexpr field_info field_table[] = {
    {"index", field::index, ""},
    {"module_id", field::module_id, ""},
    {"name", field::name, ""},
    {"bus_id", field::bus_id, ""},
    {"uuid", field::uuid, ""},
    {"driver_version", field::driver_version, ""},
    {"memory.total", field::memory_total, "MiB"},
    {"memory.used", field::memory_used, "MiB"},
    {"memory.free", field::memory_free, "MiB"},
    {"power.draw", field::power_draw, "W"},
    {"power.max", field::power_max, "W"},
    {"temperature.aip", field::temperature, "C"},
    {"utilization.aip", field::utilization, "%"},
};

constexpr const field_info* find_field(std::string_view name) noexcept {
    return detail::parsing::find_query_field(field_table, name);
}

static_assert(detail::parsing::fields_are_mapped(hl_smi_query_fields, field_table),
              "hl_smi_query_fields: a field the parser does not map");

using detail::parsing::each_cell;
using detail::parsing::header_name;

// hl-smi's field names are lowercase letters, digits, '.', '_' and '-'
// (ecc.errors.dram-corrected…).
inline constexpr std::string_view field_name_punctuation = "._-";

// A field only hl-smi has: nvidia-smi's names end in ".gpu", never ".aip", and it has no
// module_id.
constexpr bool is_hl_smi_only(std::string_view n) noexcept {
    return n == "module_id"sv || n.ends_with(".aip");
}

// The header line of `-f csv` (detail::parsing::is_query_header).
constexpr bool is_header_line(std::string_view line) noexcept {
    return detail::parsing::is_query_header(line, field_table, field_name_punctuation);
}

constexpr bool is_unavailable(std::string_view v) noexcept {
    return v.empty() || v == "N/A"sv || v == "NA"sv || v == "Not Supported"sv || (v.front() == '[' && v.back() == ']');
}

// "672 MiB" -> "672"; also "672MiB" as the table writes it. nullopt for another unit.
constexpr std::optional<std::string_view> strip_unit(std::string_view v, std::string_view unit) noexcept {
    v = trim(v);
    if (!unit.empty() && v.size() > unit.size() && v.ends_with(unit)) return trim(v.substr(0, v.size() - unit.size()));
    for (char c : v)
        if (!((c >= '0' && c <= '9') || c == '.' || c == '-')) return std::nullopt;
    return v;
}

inline bool set_text(auto& field, std::string_view v) {
    bool changed = false;
    const bool fits = field.assign(printable(v, changed));
    return fits && !changed;
}

inline accelerator_profile blank_gaudi(std::uint32_t index) {
    accelerator_profile p;
    p.kind = device_kind::gaudi;
    p.maker = vendor::habana;
    p.index = index;
    return p;
}

// The catalogue row: by PCI id when that names one row, else by name.
inline void match_catalogue(accelerator_profile& p) {
    const device_spec* spec = nullptr;
    const auto by_id = find_devices_by_pci(pci_vendor_habana, p.pci_device_id);
    if (by_id.size() == 1) spec = by_id[0];
    if (!spec && !p.name.empty()) spec = find_device(p.name);
    if (spec && spec->kind == device_kind::gaudi) p.apply_spec(*spec);
}

// A memory amount in MiB (hl-smi's "MB" in the log form is MiB too: the same HL-225 that
// the table shows as 98304MiB shows 98304 MB there).
inline value_problem out_of_range(std::string_view n) {
    return {quote_value(n) + " is out of range", warning_kind::value_out_of_range};
}
// A number parse_real refuses although it is written as one is past what a double holds.
inline value_problem unreadable(std::string_view n) {
    return looks_decimal(n) ? out_of_range(n) : value_problem("cannot read " + quote_value(n));
}

inline value_problem set_mib(std::string_view n, sourced<std::uint64_t>& out) {
    const auto x = parse_real(n);
    if (!x) return unreadable(n);
    constexpr double max_mib = 16.0 * 1024 * 1024; // 16 TiB: more than any device has
    if (*x < 0 || *x > max_mib) return out_of_range(n);
    out = {static_cast<std::uint64_t>(*x * 1048576.0), origin::tool};
    return {};
}

inline value_problem set_real(std::string_view n, double max, sourced<double>& out) {
    const auto x = parse_real(n);
    if (!x) return unreadable(n);
    if (*x < 0 || *x > max) return out_of_range(n);
    out = {*x, origin::tool};
    return {};
}

// Fills the profile from one CSV cell; returns the problem, or an empty one.
inline value_problem apply_cell(const field_info& f, std::string_view v, accelerator_profile& p,
                                std::optional<std::uint32_t>& module_id) {
    if (f.id == field::ignored || is_unavailable(v)) return {};
    const std::string name(f.name);
    switch (f.id) {
    case field::name:
        if (!set_text(p.name, v)) return name + ": not printable or too long: " + quote_value(v);
        return {};
    case field::uuid:
        if (!set_text(p.uuid, v)) return name + ": not printable or too long: " + quote_value(v);
        return {};
    case field::driver_version:
        if (!set_text(p.driver_version, v)) return name + ": not printable or too long: " + quote_value(v);
        return {};
    case field::bus_id: {
        const auto a = parse_pci_address(v);
        if (!a) return name + ": cannot read " + quote_value(v);
        p.pci = *a;
        return {};
    }
    default: break;
    }
    const auto number = strip_unit(v, f.unit);
    if (!number) return name + ": unexpected unit in " + quote_value(v);
    const std::string_view n = *number;
    value_problem msg;
    switch (f.id) {
    case field::index:
    case field::module_id: {
        const auto x = parse_uint(n);
        if (!x || *x > 0xffff) msg = x ? out_of_range(v) : unreadable(n);
        if (!msg.empty()) break;
        if (f.id == field::index) p.index = static_cast<std::uint32_t>(*x);
        else module_id = static_cast<std::uint32_t>(*x);
        return {};
    }
    case field::memory_total: msg = set_mib(n, p.memory_bytes); break;
    case field::memory_used: msg = set_mib(n, p.memory_used_bytes); break;
    case field::memory_free: msg = set_mib(n, p.memory_free_bytes); break;
    case field::power_draw: msg = set_real(n, 100'000, p.power_draw_watts); break;
    case field::power_max: msg = set_real(n, 100'000, p.power_limit_watts); break;
    case field::temperature: msg = set_real(n, 500, p.temperature_c); break;
    case field::utilization: msg = set_real(n, 100, p.utilization_percent); break;
    default: break;
    }
    if (!msg.empty()) msg.message = name + ": " + msg.message;
    return msg;
}

// Leading blanks, a tab counting as 8.
constexpr std::size_t indent_of(std::string_view line) noexcept {
    std::size_t n = 0;
    for (char c : line) {
        if (c == ' ') ++n;
        else if (c == '\t') n += 8;
        else break;
        if (n > 4096) break;
    }
    return n;
}

// "35C" -> 35; "525W" -> 525; "94963MiB" -> 94963: the number in front of a unit.
constexpr std::optional<std::string_view> before_unit(std::string_view token, std::string_view unit) noexcept {
    if (token.size() <= unit.size() || !token.ends_with(unit)) return std::nullopt;
    return token.substr(0, token.size() - unit.size());
}

// Splits on blanks.
inline std::vector<std::string_view> tokens(std::string_view s) {
    std::vector<std::string_view> out;
    std::size_t i = 0;
    while (i < s.size() && out.size() < 64) {
        while (i < s.size() && (s[i] == ' ' || s[i] == '\t')) ++i;
        const std::size_t start = i;
        while (i < s.size() && s[i] != ' ' && s[i] != '\t') ++i;
        if (i > start) out.push_back(s.substr(start, i - start));
    }
    return out;
}

// The cells between the '|' of a table line.
inline std::vector<std::string_view> table_cells(std::string_view line) {
    std::vector<std::string_view> cells;
    line = trim(line);
    if (line.size() < 2 || line.front() != '|' || line.back() != '|') return cells;
    line = line.substr(1, line.size() - 2);
    for (;;) {
        const auto bar = line.find('|');
        cells.push_back(line.substr(0, bar));
        if (bar == std::string_view::npos || cells.size() > 16) break;
        line.remove_prefix(bar + 1);
    }
    return cells;
}

// "| HL-SMI Version:   hl-1.21.1-fw-59.2.3.0   |" -> the value after `key`.
inline std::optional<std::string_view> banner_value(std::string_view line, std::string_view key) {
    const auto cells = table_cells(line);
    if (cells.size() != 1) return std::nullopt;
    const auto c = trim(cells[0]);
    if (!c.starts_with(key)) return std::nullopt;
    return trim(c.substr(key.size()));
}

} // namespace detail::gaudi

/// Reads `hl-smi -Q <fields> -f csv[,noheader][,nounits]`. `fields` is the list given to
/// -Q; it may be empty when the output has its header line, which then names the columns
/// (a header wins over `fields`). Values may carry units or not. Rows whose number of
/// values differs from the number of fields are skipped with a problem. Devices are
/// Gaudis, values origin::tool, completed from the catalogue (origin::catalogue).
inline hl_smi_result parse_hl_smi_query_csv(std::string_view text, std::string_view fields = {}) {
    using namespace detail::gaudi;
    hl_smi_result r;
    problem_sink problems{r.problems};
    auto add_row = [&](std::string_view line, std::size_t number, const auto& columns) {
        accelerator_profile p = blank_gaudi(static_cast<std::uint32_t>(r.devices.size()));
        std::optional<std::uint32_t> module;
        std::size_t col = 0;
        each_cell(line, [&](std::string_view cell) {
            auto problem = apply_cell(*columns[col++], cell, p, module);
            if (!problem.empty()) problems.add_problem(number, std::move(problem));
        });
        match_catalogue(p);
        r.devices.push_back(p);
        r.module_ids.push_back(module);
    };
    detail::parsing::read_query_csv(text, fields, field_table, field_name_punctuation, problems, add_row);
    problems.finish();
    return r;
}

/// Reads hl-smi's default table (`hl-smi` without arguments), every layout seen from
/// SynapseAI 1.17 to 1.21: the version banner (with or without "Nic Driver Version"), then
/// two lines per device, "AIP Name Persistence-M | Bus-Id Disp.A | Volatile Uncor-Events"
/// and "Fan Temp Perf Pwr:Usage/Cap | Memory-Usage | AIP-Util Compute M.", then the process
/// list, which is not read. Memory is in MiB, power in W, temperature in °C.
inline hl_smi_result parse_hl_smi_table(std::string_view text) {
    using namespace detail::gaudi;
    hl_smi_result r;
    problem_sink problems{r.problems};
    std::string driver;
    bool in_devices = false, done = false, pending_second = false;
    std::size_t number = 0;
    detail::formats::each_line(text, [&](std::string_view raw) {
        ++number;
        const auto line = detail::trim(raw);
        if (line.empty()) return true;
        if (line.front() == '+' || (line.size() > 1 && line[1] == '-')) return true; // rules
        if (const auto v = banner_value(line, "HL-SMI Version:")) {
            bool changed = false;
            r.hl_smi_version = printable(*v, changed, 64);
            return true;
        }
        if (const auto v = banner_value(line, "Driver Version:")) {
            bool changed = false;
            driver = printable(*v, changed, 64);
            return true;
        }
        if (line.starts_with("|=")) {
            if (!in_devices && !done) in_devices = true;
            else in_devices = false;
            return true;
        }
        const auto cells = table_cells(line);
        if (cells.size() == 1) {
            if (detail::trim(cells[0]).starts_with("Compute Processes")) {
                in_devices = false;
                done = true;
            }
            return true; // banner lines the library does not read, process list
        }
        if (!in_devices) return true; // the column headers
        if (cells.size() != 3) {
            problems.add(number, "not a device line: " + quote_value(line));
            return true;
        }
        const auto first = tokens(cells[0]);
        if (!pending_second) {
            // "0  HL-225  N/A" | "0000:33:00.0  N/A" | "21"
            if (r.devices.size() >= max_rows) {
                problems.add(number, "more than " + std::to_string(max_rows) + " devices; the rest ignored");
                return false;
            }
            const auto index = first.empty() ? std::nullopt : parse_uint(first[0]);
            if (!index || *index > 0xffff || first.size() < 2) {
                problems.add(number, "not a device line: " + quote_value(line));
                return true;
            }
            accelerator_profile p = blank_gaudi(static_cast<std::uint32_t>(*index));
            // The name is what lies between the index and the persistence mode.
            const auto name_end = first.size() >= 3 ? first.size() - 1 : first.size();
            const auto from = first[1].data() - cells[0].data();
            const auto to = first[name_end - 1].data() + first[name_end - 1].size() - cells[0].data();
            const auto name = cells[0].substr(static_cast<std::size_t>(from), static_cast<std::size_t>(to - from));
            if (!set_text(p.name, name)) problems.add(number, "name not printable or too long: " + quote_value(name));
            const auto bus = tokens(cells[1]);
            if (!bus.empty() && !is_unavailable(bus[0])) {
                if (const auto a = parse_pci_address(bus[0])) p.pci = *a;
                else problems.add(number, "Bus-Id: cannot read " + quote_value(bus[0]));
            }
            r.devices.push_back(p);
            r.module_ids.emplace_back();
            pending_second = true;
            return true;
        }
        // "N/A  35C  P0  525W / 600W" | "94963MiB / 98304MiB" | "88%  96%"
        pending_second = false;
        accelerator_profile& p = r.devices.back();
        auto report = [&](value_problem m) {
            if (!m.empty()) problems.add_problem(number, std::move(m));
        };
        if (first.size() >= 2 && !is_unavailable(first[1])) {
            if (const auto t = before_unit(first[1], "C")) report(set_real(*t, 500, p.temperature_c));
            else report("Temp: cannot read " + quote_value(first[1]));
        }
        // Power: the last three tokens are "<draw>W / <cap>W".
        if (first.size() >= 6 && first[first.size() - 2] == "/"sv) {
            const auto draw = first[first.size() - 3], cap = first[first.size() - 1];
            if (!is_unavailable(draw)) {
                if (const auto w = before_unit(draw, "W")) report(set_real(*w, 100'000, p.power_draw_watts));
                else report("power draw: cannot read " + quote_value(draw));
            }
            if (!is_unavailable(cap)) {
                if (const auto w = before_unit(cap, "W")) report(set_real(*w, 100'000, p.power_limit_watts));
                else report("power cap: cannot read " + quote_value(cap));
            }
        }
        const auto mem = tokens(cells[1]);
        if (mem.size() == 3 && mem[1] == "/"sv) {
            const auto used = before_unit(mem[0], "MiB"), total = before_unit(mem[2], "MiB");
            if (used) report(set_mib(*used, p.memory_used_bytes));
            if (total) report(set_mib(*total, p.memory_bytes));
            if (!used || !total) report("Memory-Usage: cannot read " + quote_value(cells[1]));
            if (p.memory_bytes && p.memory_used_bytes && *p.memory_used_bytes <= *p.memory_bytes)
                p.memory_free_bytes = {*p.memory_bytes - *p.memory_used_bytes, origin::tool};
        } else if (!mem.empty() && !is_unavailable(mem[0])) {
            report("Memory-Usage: cannot read " + quote_value(cells[1]));
        }
        const auto util = tokens(cells[2]);
        if (!util.empty() && !is_unavailable(util[0])) {
            if (const auto u = before_unit(util[0], "%")) report(set_real(*u, 100, p.utilization_percent));
            else report("AIP-Util: cannot read " + quote_value(util[0]));
        }
        return true;
    });
    if (pending_second) problems.add(number, "the last device's second line is missing");
    for (auto& p : r.devices) {
        if (!driver.empty() && !set_text(p.driver_version, driver))
            problems.add(0, "Driver Version not printable or too long");
        detail::gaudi::match_catalogue(p);
    }
    problems.finish();
    return r;
}

/// Reads the detailed log `hl-smi -q` prints (also `hl-smi -L`, `hl-smi -L -i <bus>`): the
/// "HL-SMI LOG" banner, "Driver Version", then one "[N] AIP (accelN) <bus>" section per
/// device with indented groups. Read: Product Name, Module ID, AIP UUID, the PCI group
/// (Bus Id, Device Id as "0x<vendor><device>", link speed and width), Memory Usage (MB,
/// which hl-smi means as MiB), the hottest "On Chip" temperature, and the first Power
/// Readings group (the main supply: Power Draw, Power Limit).
inline hl_smi_result parse_hl_smi_log(std::string_view text) {
    using namespace detail::gaudi;
    hl_smi_result r;
    problem_sink problems{r.problems};
    std::string driver;
    // The section headers above the current line: indent and name.
    std::vector<std::pair<std::size_t, std::string_view>> stack;
    pcie_link link_max, link_cur;
    auto finish_links = [&] {
        if (r.devices.empty()) return;
        auto& p = r.devices.back();
        if (link_max.known()) p.pcie_max = {link_max, origin::tool};
        if (link_cur.known()) p.pcie_current = {link_cur, origin::tool};
        link_max = link_cur = {};
    };
    std::size_t number = 0;
    detail::formats::each_line(text, [&](std::string_view raw) {
        ++number;
        const auto line = detail::trim(raw);
        if (line.empty() || line.starts_with("====")) return true;
        const std::size_t indent = indent_of(raw);
        while (!stack.empty() && stack.back().first >= indent) stack.pop_back();
        if (indent == 0 && line.starts_with('[')) {
            // "[0] AIP (accel0) 0000:43:00.0"
            finish_links();
            if (r.devices.size() >= max_rows) {
                problems.add(number, "more than " + std::to_string(max_rows) + " devices; the rest ignored");
                return false;
            }
            const auto close = line.find(']');
            const auto index = close == std::string_view::npos ? std::nullopt : parse_uint(detail::trim(line.substr(1, close - 1)));
            if (!index || *index > 0xffff) {
                problems.add(number, "not a device line: " + quote_value(line));
                return true;
            }
            accelerator_profile p = blank_gaudi(static_cast<std::uint32_t>(*index));
            const auto words = tokens(line.substr(close + 1));
            if (!words.empty())
                if (const auto a = parse_pci_address(words.back())) p.pci = *a;
            r.devices.push_back(p);
            r.module_ids.emplace_back();
            stack.clear();
            return true;
        }
        const auto colon = line.find(':');
        // A header line: no colon, or a colon only inside "[ 1] On Chip 0"-style names.
        if (colon == std::string_view::npos) {
            stack.emplace_back(indent, line);
            return true;
        }
        const auto key = detail::trim(line.substr(0, colon));
        const auto value = detail::trim(line.substr(colon + 1));
        if (key.empty()) return true; // ": N/A" under a header: a value the library does not read
        if (r.devices.empty()) {
            if (key == "Driver Version"sv) {
                bool changed = false;
                driver = printable(value, changed, 64);
            } else if (key == "HL-SMI Version"sv) {
                bool changed = false;
                r.hl_smi_version = printable(value, changed, 80);
            }
            return true;
        }
        auto& p = r.devices.back();
        const std::string_view group = stack.empty() ? std::string_view{} : stack.front().second;
        const std::string_view sub = stack.empty() ? std::string_view{} : stack.back().second;
        auto report = [&](value_problem m) {
            if (!m.empty()) problems.add(number, std::string(key) + ": " + m.message, m.kind);
        };
        if (is_unavailable(value)) return true;
        if (stack.empty()) {
            if (key == "Product Name"sv) {
                if (!set_text(p.name, value)) report("not printable or too long");
            } else if (key == "AIP UUID"sv) {
                if (!set_text(p.uuid, value)) report("not printable or too long");
            } else if (key == "Module ID"sv) {
                const auto id = parse_uint(value);
                if (!id || *id > 0xffff) report("cannot read " + quote_value(value));
                else r.module_ids.back() = static_cast<std::uint32_t>(*id);
            } else if (key == "Module status"sv) {
                // The driver's status, as sysfs `status` gives it: a module in reset,
                // disabled or needing a reset is no device to plan on.
                if (value != "Operational"sv) p.available = false;
            }
            return true;
        }
        if (group == "PCI"sv) {
            if (key == "Bus Id"sv) {
                if (const auto a = parse_pci_address(value)) p.pci = *a;
                else report("cannot read " + quote_value(value));
            } else if (key == "Device Id"sv) {
                // "0x1da31020": vendor id in the upper half, device id in the lower.
                const auto id = value.size() == 10 && value.starts_with("0x") ? detail::parse_hex32(value.substr(2)) : std::nullopt;
                if (!id) report("cannot read " + quote_value(value));
                else if ((*id >> 16) != pci_vendor_habana) report("vendor id in " + quote_value(value) + " is not Habana's");
                else p.pci_device_id = static_cast<std::uint16_t>(*id & 0xffffu);
            } else if (key == "Max"sv || key == "Current"sv) {
                auto& l = key == "Max"sv ? link_max : link_cur;
                if (sub == "Link Speed"sv) {
                    l.generation = parse_pcie_link_speed(value);
                    if (l.generation == 0) report("not a PCIe link speed: " + quote_value(value));
                } else if (sub == "Link Width"sv) {
                    l.width = parse_pcie_link_width(value);
                    if (l.width == 0) report("not a PCIe link width: " + quote_value(value));
                }
            }
        } else if (group == "Memory Usage"sv) {
            if (key == "Total"sv || key == "Used"sv || key == "Free"sv) {
                const auto mb = before_unit(value, " MB");
                auto& out = key == "Total"sv ? p.memory_bytes : key == "Used"sv ? p.memory_used_bytes : p.memory_free_bytes;
                if (!mb) report("cannot read " + quote_value(value));
                else report(set_mib(*mb, out));
            }
        } else if (group == "Temperature"sv) {
            // "[ 1] On Chip 0 :  29 C": the key keeps its bracketed number.
            const auto close = key.find(']');
            const auto sensor = close == std::string_view::npos ? key : detail::trim(key.substr(close + 1));
            if (sensor.starts_with("On Chip ") && !sensor.starts_with("On Chip TD")) {
                sourced<double> t;
                const auto c = before_unit(value, " C");
                if (!c) report("cannot read " + quote_value(value));
                else if (auto m = set_real(detail::trim(*c), 500, t); !m.empty()) report(std::move(m));
                else if (!p.temperature_c || *t > *p.temperature_c) p.temperature_c = t;
            }
        } else if (group.starts_with("Power Readings")) {
            // One group a supply ("54V PSU", "12V PSU" on an HL-225): the card draws from
            // both, and hl-smi's table prints the sums (50 + 31 W of 550 + 50 W: "81W / 600W").
            if (key == "Power Draw"sv || key == "Power Limit"sv) {
                auto& total = key == "Power Draw"sv ? p.power_draw_watts : p.power_limit_watts;
                sourced<double> w;
                const auto n = before_unit(value, " W");
                if (!n) report("cannot read " + quote_value(value));
                else if (auto m = set_real(*n, 100'000, w); !m.empty()) report(std::move(m));
                else total = total ? sourced<double>{*total + *w, w.from} : w;
            }
        }
        return true;
    });
    finish_links();
    for (auto& p : r.devices) {
        if (!driver.empty() && !set_text(p.driver_version, driver))
            problems.add(0, "Driver Version not printable or too long");
        detail::gaudi::match_catalogue(p);
    }
    problems.finish();
    return r;
}

namespace detail::gaudi {

inline std::string query_field_list() {
    std::string s;
    for (std::size_t i = 0; i < hl_smi_query_fields.size(); ++i) {
        if (i) s += ',';
        s += hl_smi_query_fields[i];
    }
    return s;
}

inline void problems_to_warnings(const std::vector<parse_problem>& problems, std::string_view subject,
                                 std::vector<warning>& out) {
    detail::parsing::problems_to_warnings(problems, backend_id::gaudi, subject, out);
}

inline constexpr std::string_view accel_class_dir = "/sys/class/accel";
inline constexpr std::string_view habanalabs_class_dir = "/sys/class/habanalabs";
inline constexpr std::size_t attr_cap = 4096;

} // namespace detail::gaudi

/// The hl-smi run the probe makes: the documented fields, with the header line so the
/// columns are named by hl-smi itself, values without units.
inline tool_request hl_smi_query_request() {
    using namespace std::chrono_literals;
    return tool_request{{"hl-smi", "-Q", detail::gaudi::query_field_list(), "-f", "csv,nounits"}, 10s};
}
/// The run the probe falls back on when the query fails (an hl-smi that refuses a field).
inline tool_request hl_smi_table_request() {
    using namespace std::chrono_literals;
    return tool_request{{"hl-smi"}, 10s};
}

/// One Gaudi as the habanalabs driver describes it in sysfs.
struct gaudi_card {
    accelerator_profile profile;
    std::string node;        ///< "accel0" or, on older drivers, "hl0"
    std::string device_type; ///< "GAUDI2", "GAUDI3", … (empty if unreadable)
    std::string status;      ///< "Operational", "In reset", "Disabled", … (empty if unreadable)
    std::optional<std::uint32_t> module_id;
};

namespace detail::gaudi {

// "accel12" / "hl3" -> 12 / 3.
constexpr std::optional<std::uint32_t> node_number(std::string_view name, std::string_view prefix) noexcept {
    if (!name.starts_with(prefix)) return std::nullopt;
    const auto n = parse_u64(name.substr(prefix.size()));
    if (!n || *n > 0xffff) return std::nullopt;
    return static_cast<std::uint32_t>(*n);
}

// One device: `attrs` is the folder with the driver's attributes, `pci_dir` the PCI
// function's folder (the same on current drivers).
template <system_view S>
std::optional<gaudi_card> read_card(const S& sys, std::string node, std::uint32_t number, const std::string& attrs,
                                    const std::string& pci_dir, std::vector<warning>& warnings) {
    const auto vendor_id = detail::read_pci_id(sys, pci_dir + "/vendor", 0xffffu, warnings);
    if (!vendor_id || *vendor_id != pci_vendor_habana) return std::nullopt;
    const auto driver = detail::resolve_sysfs_link(sys, pci_dir + "/driver");
    if (driver && detail::base_name(*driver) != "habanalabs"sv) return std::nullopt;

    gaudi_card c;
    c.node = std::move(node);
    accelerator_profile& p = c.profile;
    p = blank_gaudi(number);
    if (const auto id = detail::read_pci_id(sys, pci_dir + "/device", 0xffffu, warnings))
        p.pci_device_id = static_cast<std::uint16_t>(*id);
    auto file = [&](std::string_view name) {
        return detail::read_optional_file(sys, attrs + "/" + std::string(name), attr_cap, warnings);
    };
    auto text = [&](std::string_view name, std::string& out) {
        if (const auto t = file(name)) {
            bool changed = false;
            out = printable(detail::trim(*t), changed, 64);
            if (changed) detail::add_warning(warnings, warning_kind::parse_error, attrs + "/" + std::string(name), "not printable");
        }
    };
    text("device_type", c.device_type);
    text("status", c.status);
    if (const auto t = file("module_id")) {
        const auto v = detail::parse_u64(detail::trim(*t));
        if (v && *v <= 0xffff) c.module_id = static_cast<std::uint32_t>(*v);
        else detail::add_warning(warnings, warning_kind::parse_error, attrs + "/module_id", "not a module number");
    }
    // The PCI address: the folder's own name when it is a link, else the driver's pci_addr.
    if (const auto target = detail::resolve_sysfs_link(sys, pci_dir)) p.pci = parse_pci_address(detail::base_name(*target));
    if (!p.pci)
        if (const auto t = file("pci_addr")) p.pci = parse_pci_address(detail::trim(*t));
    if (const auto t = file("max_power")) {
        // Milliwatts (the ABI's words); an unreadable file (a device not operational) says nothing.
        const auto mw = detail::parse_u64(detail::trim(*t));
        if (mw && *mw <= 100'000'000) p.power_limit_watts = {static_cast<double>(*mw) / 1000.0, origin::sysfs};
        else detail::add_warning(warnings, warning_kind::parse_error, attrs + "/max_power", "not a number of milliwatts");
    }
    pcie_link link;
    if (detail::read_pcie_link(sys, pci_dir, "current", link, warnings) && link.known()) p.pcie_current = {link, origin::sysfs};
    link = {};
    if (detail::read_pcie_link(sys, pci_dir, "max", link, warnings) && link.known()) p.pcie_max = {link, origin::sysfs};
    if (const auto t = detail::read_optional_file(sys, pci_dir + "/numa_node", attr_cap, warnings))
        if (const auto n = detail::parse_i64(detail::trim(*t)); n && *n >= 0 && *n < (1 << 16))
            p.numa_node = {static_cast<std::int32_t>(*n), origin::sysfs};
    // Not usable until the driver says it is ("In reset", "Needs reset", "Disabled", …).
    if (!c.status.empty() && c.status != "Operational"sv) p.available = false;
    match_catalogue(p);
    if (p.spec && p.name.empty()) p.name = p.spec->name;
    if (!p.spec && p.arch.empty() && !c.device_type.empty()) p.arch.assign(c.device_type);
    return c;
}

} // namespace detail::gaudi

/// Every Gaudi the habanalabs driver has bound, by device number: /sys/class/accel/accel<N>
/// whose PCI function is Habana's and bound to habanalabs, else (older drivers)
/// /sys/class/habanalabs/hl<N>.
template <system_view S>
std::vector<gaudi_card> probe_gaudi_sysfs(const S& sys, std::vector<warning>& warnings) {
    using namespace detail::gaudi;
    std::vector<gaudi_card> cards;
    // The accel class (kernels from 6.2), else the older habanalabs class: also where the
    // accel class holds only other drivers' devices (an Intel NPU's accel0).
    for (const bool accel : {true, false}) {
        std::vector<std::pair<std::uint32_t, std::string>> order;
        if (const auto names = sys.list_dir(accel ? accel_class_dir : habanalabs_class_dir))
            for (const auto& n : *names)
                if (const auto k = node_number(n, accel ? "accel" : "hl")) order.emplace_back(*k, n);
        std::sort(order.begin(), order.end());
        for (const auto& [number, name] : order) {
            if (cards.size() >= max_rows) break;
            const std::string dir = std::string(accel ? accel_class_dir : habanalabs_class_dir) + "/" + name;
            const std::string dev = dir + "/device";
            auto c = read_card(sys, name, number, accel ? dev : dir, dev, warnings);
            if (c) cards.push_back(std::move(*c));
        }
        if (!cards.empty()) break;
    }
    return cards;
}

/// The PCI addresses of Habana functions on the bus, comma-separated; empty when none.
template <system_view S>
std::string gaudis_on_pci_bus(const S& sys) {
    std::vector<warning> ignored; // the host probes report the PCI bus's own problems
    std::string found;
    for (const auto& d : probe_pci(sys, ignored)) {
        if (d.vendor_id != pci_vendor_habana) continue;
        if (!found.empty()) found += ", ";
        found += d.address.text().data();
    }
    return found;
}

/// One `gaudi_roce` fabric over the devices that share a catalogue row with a RoCE link
/// figure (the OAM parts of HLS-2/HLS-3-style 8-card systems, joined all to all), when
/// there are two or more of them; the bandwidth is the row's, marked origin::catalogue.
inline std::vector<interconnect> gaudi_scale_up_links(const std::vector<accelerator_profile>& devices) {
    std::vector<interconnect> out;
    std::vector<const device_spec*> models;
    for (const auto& d : devices)
        if (d.spec && d.spec->link == interconnect_kind::gaudi_roce && d.spec->link_bandwidth_gbps > 0 &&
            std::find(models.begin(), models.end(), d.spec) == models.end())
            models.push_back(d.spec);
    for (const auto* m : models) {
        interconnect l;
        l.kind = interconnect_kind::gaudi_roce;
        l.scope = link_scope::intra_node;
        for (const auto& d : devices)
            if (d.spec == m) l.devices.push_back(d.index);
        if (l.devices.size() < 2) continue;
        l.name = "Gaudi RoCE scale-up (" + std::string(m->name) + ", all to all)";
        l.state = std::to_string(l.devices.size()) + " devices";
        // The catalogue's figure counts all 24 RoCE ports; inside an HLS box 21 of them join
        // the eight cards all to all and 3 go out of the node (Intel Gaudi "Network
        // Configuration" documentation), so the scale-up share is 21/24 of it: derived
        // from the catalogue, hence an estimate.
        l.bandwidth_gbps = {m->link_bandwidth_gbps * 21.0 / 24.0, origin::estimated};
        out.push_back(std::move(l));
    }
    return out;
}

namespace detail::gaudi {

// Lays what hl-smi says over what sysfs said: the same device by PCI address, else by
// index; devices only hl-smi knows are added.
inline void merge_tool(std::vector<accelerator_profile>& devices, const std::vector<accelerator_profile>& tool) {
    for (const auto& t : tool) {
        auto it = std::find_if(devices.begin(), devices.end(), [&](const accelerator_profile& d) {
            return d.pci && t.pci ? *d.pci == *t.pci : d.index == t.index;
        });
        if (it == devices.end()) {
            if (devices.size() < max_rows) devices.push_back(t);
            continue;
        }
        auto& d = *it;
        if (!t.name.empty()) d.name = t.name;
        if (!t.uuid.empty()) d.uuid = t.uuid;
        if (!t.driver_version.empty()) d.driver_version = t.driver_version;
        if (!d.pci) d.pci = t.pci;
        if (d.pci_device_id == 0) d.pci_device_id = t.pci_device_id;
        auto take = [](auto& into, const auto& from) {
            if (from) into.offer(*from, from.from);
        };
        take(d.memory_bytes, t.memory_bytes);
        take(d.memory_used_bytes, t.memory_used_bytes);
        take(d.memory_free_bytes, t.memory_free_bytes);
        take(d.power_draw_watts, t.power_draw_watts);
        take(d.power_limit_watts, t.power_limit_watts);
        take(d.temperature_c, t.temperature_c);
        take(d.utilization_percent, t.utilization_percent);
        take(d.pcie_current, t.pcie_current);
        take(d.pcie_max, t.pcie_max);
        if (!d.spec && t.spec) d.apply_spec(*t.spec);
    }
}

} // namespace detail::gaudi

/// Intel Gaudi: the devices from the habanalabs driver's sysfs, memory in use, power,
/// temperature and load from one hl-smi query (its table if the query is refused), and
/// the all-to-all RoCE fabric of OAM systems.
struct gaudi_probe {
    static constexpr backend_id backend = backend_id::gaudi;

    template <system_view S>
    probe_output probe(const S& sys) const {
        using namespace detail::gaudi;
        probe_output out;
        auto cards = probe_gaudi_sysfs(sys, out.warnings);
        for (auto& w : out.warnings)
            if (!w.backend) w.backend = backend;
        for (auto& c : cards) out.devices.push_back(c.profile);
        // In a container given some of the cards, sysfs (not namespaced) still shows them
        // all; only those granted have their node, /dev/accel/accel<N> (/dev/hl<N> under the
        // older class). A /dev that can be listed decides.
        if (const auto dev = sys.list_dir("/dev")) {
            const auto accel_nodes = sys.list_dir("/dev/accel");
            const auto has = [](const auto& names, const std::string& n) {
                return names && std::find(names->begin(), names->end(), n) != names->end();
            };
            for (std::size_t k = 0; k < cards.size(); ++k)
                if (!has(cards[k].node.starts_with("accel") ? accel_nodes : dev, cards[k].node))
                    out.devices[k].available = false;
        }

        const tool_request request = hl_smi_query_request();
        tool_result r = sys.run(request);
        if (tool_missing(r, out.warnings)) {
            const auto on_bus = gaudis_on_pci_bus(sys);
            if (!on_bus.empty() || !cards.empty())
                out.warnings.push_back(warning{
                    warning_kind::tool_not_found, backend, "hl-smi",
                    "Gaudi device(s) on the PCI bus (" + (on_bus.empty() ? std::string("per the driver") : on_bus) +
                        ") but hl-smi is not installed in any trusted folder; memory in use unknown",
                    0});
        } else if (report_tool_result(request, r, backend, out.warnings)) {
            // Its CSV starts with a header line, even for no devices.
            if (!report_empty_output(request, r, backend, out.warnings)) {
                const auto parsed = parse_hl_smi_query_csv(r.out, query_field_list());
                problems_to_warnings(parsed.problems, "hl-smi", out.warnings);
                merge_tool(out.devices, parsed.devices);
            }
        } else if (r.status == tool_status::exited) {
            // An hl-smi too old for one of the fields: its table says most of the same.
            const tool_request table = hl_smi_table_request();
            tool_result t = sys.run(table);
            if (report_tool_result(table, t, backend, out.warnings)) {
                const auto parsed = parse_hl_smi_table(t.out);
                problems_to_warnings(parsed.problems, "hl-smi", out.warnings);
                merge_tool(out.devices, parsed.devices);
            }
        }
        for (auto& d : out.devices) {
            if (!d.spec) match_catalogue(d);
            if (d.memory_bytes && d.memory_used_bytes && !d.memory_free_bytes &&
                *d.memory_used_bytes <= *d.memory_bytes)
                d.memory_free_bytes = {*d.memory_bytes - *d.memory_used_bytes, d.memory_used_bytes.from};
        }
        out.links = gaudi_scale_up_links(out.devices);
        return out;
    }
};
#if AI_HWACCEL_OS_LINUX || AI_HWACCEL_OS_MACOS
static_assert(backend_probe<gaudi_probe, host_system>);
#endif

// ---------------------------------------------------------------------------------------
// Capture formats

namespace detail::formats {

// hl-smi -Q … -f csv (with its header line) ------------------------------------------------
inline int sniff_hl_smi_csv(std::string_view t) noexcept {
    const auto first = first_non_blank_line(t);
    if (!gaudi::is_header_line(first)) return 0;
    bool own = false;
    gaudi::each_cell(first, [&](std::string_view cell) { own = own || gaudi::is_hl_smi_only(gaudi::header_name(cell)); });
    // Above nvidia-smi's 90: both tools share "index", "name", "memory.total [MiB]".
    return own ? 95 : 0;
}
inline void parse_hl_smi_csv_capture(std::string_view t, capture_parse& out) {
    auto r = parse_hl_smi_query_csv(t);
    gaudi::problems_to_warnings(r.problems, out.format, out.warnings);
    if (r.devices.empty() && r.problems.empty()) nothing_found(out, "AIP rows");
    out.devices = std::move(r.devices);
}

// hl-smi (the default table) ---------------------------------------------------------------
inline int sniff_hl_smi_table(std::string_view t) noexcept {
    int seen = 0, score = 0;
    each_line(t, [&](std::string_view line) {
        line = trim(line);
        if (line.empty()) return true;
        if (line.front() == '|' && line.find("HL-SMI Version:") != std::string_view::npos) score = 90;
        return score == 0 && ++seen < 4;
    });
    return score;
}
inline void parse_hl_smi_table_capture(std::string_view t, capture_parse& out) {
    auto r = parse_hl_smi_table(t);
    gaudi::problems_to_warnings(r.problems, out.format, out.warnings);
    if (r.devices.empty() && r.problems.empty()) nothing_found(out, "AIP rows");
    out.devices = std::move(r.devices);
}

// hl-smi -q / -L [-i <bus>] ---------------------------------------------------------------
inline int sniff_hl_smi_log(std::string_view t) noexcept {
    const auto first = first_non_blank_line(t);
    return first.starts_with("==") && first.find("HL-SMI LOG") != std::string_view::npos ? 90 : 0;
}
inline void parse_hl_smi_log_capture(std::string_view t, capture_parse& out) {
    auto r = parse_hl_smi_log(t);
    gaudi::problems_to_warnings(r.problems, out.format, out.warnings);
    if (r.devices.empty() && r.problems.empty()) nothing_found(out, "AIP sections");
    out.devices = std::move(r.devices);
}

} // namespace detail::formats

AI_HWACCEL_NAMESPACE_END

#endif // AI_HWACCEL_BACKEND_GAUDI
