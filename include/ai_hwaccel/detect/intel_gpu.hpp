// ai-hwaccel detect: Intel GPUs through the i915/xe kernel drivers and xpu-smi.
//
// Parsers for the four shapes `xpu-smi discovery` prints (the bordered list, the bordered
// per-device detail of `-d`, the `-j` JSON and the `--dump <ids>` CSV), the sysfs reader
// for Intel cards bound to i915 or xe, and the probe that joins them: sysfs first, then
// xpu-smi to name the cards and fill what the kernel does not publish. Memory comes only
// from fields that are memory: "Memory Physical Size" (dump id 16, JSON
// memory_physical_size_byte), xe's per-tile physical_vram_size_bytes and the backported
// i915's lmem_total_bytes. "Memory Bus Width" (dump id 18) is a width in bits and is
// never read as a size. An integrated GPU shares the host's memory: it is marked
// unified_memory and given the host's (MemTotal; Intel's compute runtime sizes such a GPU
// from the host's pages too, less a share it keeps back). The whole header is empty unless
// the Intel GPU backend is compiled in.
#pragma once

#include "ai_hwaccel/config.hpp"

#if AI_HWACCEL_BACKEND_INTEL_GPU

#include "ai_hwaccel/core/catalogue.hpp"
#include "ai_hwaccel/core/pci.hpp"
#include "ai_hwaccel/core/profile.hpp"
#include "ai_hwaccel/core/system_io.hpp"
#include "ai_hwaccel/core/text.hpp"
#include "ai_hwaccel/core/warning.hpp"
#include "ai_hwaccel/detect/capture.hpp"
#include "ai_hwaccel/detect/cpu.hpp"
#include "ai_hwaccel/detect/probe.hpp"
#include "ai_hwaccel/detect/sysfs.hpp"
#include "ai_hwaccel/detect/system.hpp"
#include "ai_hwaccel/detect/topology.hpp"

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#if AI_HWACCEL_JSON
#include <nlohmann/json.hpp>
#endif

AI_HWACCEL_NAMESPACE_BEGIN

/// What an xpu-smi parser read.
struct xpu_smi_result {
    std::vector<accelerator_profile> devices;
    /// "Number of Tiles" per device, in the order of `devices` (a Max 1550 is one device
    /// of two tiles, each of which Level Zero also exposes as a sub-device); unknown where
    /// the output does not say. The profile has no field for it.
    std::vector<sourced<std::uint32_t>> tiles;
    std::vector<parse_problem> problems;
};

namespace detail::intel_gpu {

using detail::parsing::max_rows;
using detail::parsing::parse_real;
using detail::parsing::parse_uint;
using detail::parsing::printable;
using detail::parsing::problem_sink;
using detail::parsing::quote_value;
using detail::parsing::value_problem;

enum class field : std::uint8_t {
    ignored,
    index,
    device_type,
    name,
    uuid,
    bdf,
    pci_device_id,
    pci_vendor_id,
    driver_version,
    pcie_generation,
    pcie_width,
    memory_mib,   // "32768.00 MiB", as the tables and the dump print it
    memory_bytes, // the JSON's memory_physical_size_byte
    tiles,
};

struct field_info {
    std::string_view label; ///< as the tables and the dump header print it
    std::string_view key;   ///< as the JSON names it
    field id;
};

// Labels and JSON keys from xpumanager's cli/src/comlet_discovery.cpp (the table layouts
// and the --dump id list; dump ids in the comments).
inline constexpr field_info field_table[] = {
    {"Device ID", "device_id", field::index},                          // 1
    {"Device Type", "device_type", field::device_type},
    {"Device Name", "device_name", field::name},                       // 2
    {"Vendor Name", "vendor_name", field::ignored},                    // 3
    {"UUID", "uuid", field::uuid},                                     // 4
    {"SOC UUID", "", field::uuid},                                     // 4 in some versions' help
    {"Serial Number", "serial_number", field::ignored},                // 5
    {"Core Clock Rate", "core_clock_rate_mhz", field::ignored},        // 6
    {"Stepping", "device_stepping", field::ignored},                   // 7
    {"Driver Version", "driver_version", field::driver_version},       // 8
    {"GFX Firmware Version", "gfx_firmware_version", field::ignored},  // 9
    {"GFX Data Firmware Version", "gfx_data_firmware_version", field::ignored}, // 10
    {"PCI BDF Address", "pci_bdf_address", field::bdf},                // 11
    {"PCI Slot", "pci_slot", field::ignored},                          // 12
    {"PCIe Generation", "pcie_generation", field::pcie_generation},    // 13
    {"PCIe Max Link Width", "pcie_max_link_width", field::pcie_width}, // 14
    {"OAM Socket ID", "oam_socket_id", field::ignored},                // 15
    {"Memory Physical Size", "", field::memory_mib},                   // 16
    {"", "memory_physical_size_byte", field::memory_bytes},
    {"Number of Memory Channels", "number_of_memory_channels", field::ignored}, // 17
    {"Memory Bus Width", "memory_bus_width", field::ignored},          // 18: bits, not a size
    {"Number of EUs", "number_of_eus", field::ignored},                // 19
    {"Number of Media Engines", "number_of_media_engines", field::ignored},     // 20
    {"Number of Media Enhancement Engines", "number_of_media_enh_engines", field::ignored}, // 21
    {"GFX Firmware Status", "gfx_firmware_status", field::ignored},    // 22
    {"PCI Vendor ID", "pci_vendor_id", field::pci_vendor_id},          // 23
    {"PCI Device ID", "pci_device_id", field::pci_device_id},          // 24
    {"Number of Tiles", "number_of_tiles", field::tiles},
};

constexpr const field_info* find_label(std::string_view label) noexcept {
    if (label.empty()) return nullptr;
    for (const auto& f : field_table)
        if (f.label == label) return &f;
    return nullptr;
}
constexpr const field_info* find_key(std::string_view key) noexcept {
    if (key.empty()) return nullptr;
    for (const auto& f : field_table)
        if (f.key == key) return &f;
    return nullptr;
}

// "unknown", "N/A", "": the tool's ways of saying it does not know.
constexpr bool is_unavailable(std::string_view v) noexcept {
    return v.empty() || iequals(v, "unknown") || iequals(v, "N/A");
}

// "0x20a", "0x56C0" -> the id; nullopt for anything else than 1..4 hex digits after 0x.
constexpr std::optional<std::uint16_t> parse_hex_id(std::string_view v) noexcept {
    if (v.size() < 3 || v.size() > 6 || v[0] != '0' || (v[1] != 'x' && v[1] != 'X')) return std::nullopt;
    const auto id = parse_hex32(v.substr(2));
    if (!id) return std::nullopt;
    return static_cast<std::uint16_t>(*id);
}

// "Intel(R) Graphics [0x56c0]": xpu-smi's name for a device it has no marketing name for
// carries the PCI device id in brackets.
constexpr std::optional<std::uint16_t> id_in_name(std::string_view name) noexcept {
    const auto open = name.rfind('[');
    if (open == std::string_view::npos || name.back() != ']') return std::nullopt;
    return parse_hex_id(name.substr(open + 1, name.size() - open - 2));
}

struct row {
    accelerator_profile profile;
    sourced<std::uint32_t> tiles;
};

// Fills the row from one value; returns the problem, or an empty one when the value is fine.
inline value_problem apply(const field_info& f, std::string_view v, row& r) {
    v = trim(v);
    if (f.id == field::ignored || is_unavailable(v)) return {};
    accelerator_profile& p = r.profile;
    const std::string what = std::string(f.label.empty() ? f.key : f.label);
    const auto out_of_range = [&] {
        return value_problem(what + ": " + quote_value(v) + " is out of range", warning_kind::value_out_of_range);
    };
    // A number the parsers refuse although it is written as one is past what its type holds.
    const auto bad = [&] { return looks_decimal(v) ? out_of_range() : value_problem(what + ": cannot read " + quote_value(v)); };
    switch (f.id) {
    case field::ignored: return {};
    case field::index: {
        const auto x = parse_uint(v);
        if (!x) return bad();
        if (*x > 0xffff) return out_of_range();
        p.index = static_cast<std::uint32_t>(*x);
        return {};
    }
    case field::device_type:
        if (v != "GPU"sv) return what + ": " + quote_value(v) + " is not a GPU";
        return {};
    case field::name:
    case field::uuid:
    case field::driver_version: {
        bool changed = false;
        const std::string text = printable(v, changed);
        const bool fits = f.id == field::name ? p.name.assign(text)
                          : f.id == field::uuid ? p.uuid.assign(text)
                                                : p.driver_version.assign(text);
        if (changed) return what + ": not printable UTF-8, replaced by " + quote_value(text);
        if (!fits) return what + ": longer than the profile keeps, cut";
        return {};
    }
    case field::bdf: {
        const auto a = parse_pci_address(v);
        if (!a) return bad();
        p.pci = *a;
        return {};
    }
    case field::pci_device_id: {
        const auto id = parse_hex_id(v);
        if (!id) return bad();
        p.pci_device_id = *id;
        return {};
    }
    case field::pci_vendor_id: {
        const auto id = parse_hex_id(v);
        if (!id) return bad();
        if (*id != info(vendor::intel).vendor_id) return what + ": " + quote_value(v) + " is not Intel's";
        return {};
    }
    case field::pcie_generation:
    case field::pcie_width: {
        const auto x = parse_uint(v);
        if (!x) return bad();
        const bool gen = f.id == field::pcie_generation;
        if (*x == 0 || *x > (gen ? 16u : 64u)) return out_of_range();
        pcie_link l = p.pcie_max.value;
        (gen ? l.generation : l.width) = static_cast<std::uint8_t>(*x);
        p.pcie_max = {l, origin::tool};
        return {};
    }
    case field::memory_mib: {
        // "32768.00 MiB"; xpu-smi divides the byte count by 2^20 and keeps two decimals.
        const auto sp = v.rfind(' ');
        if (sp == std::string_view::npos || v.substr(sp + 1) != "MiB"sv) return what + ": no MiB unit in " + quote_value(v);
        const auto x = parse_real(trim(v.substr(0, sp)));
        if (!x) return looks_decimal(trim(v.substr(0, sp))) ? out_of_range() : bad();
        constexpr double max_mib = 16.0 * 1024 * 1024; // 16 TiB: more than any device has
        if (*x < 0 || *x > max_mib) return out_of_range();
        p.memory_bytes = {static_cast<std::uint64_t>(*x * 1048576.0 + 0.5), origin::tool};
        return {};
    }
    case field::memory_bytes: {
        const auto x = parse_uint(v);
        if (!x) return bad();
        if (*x > 16 * units::tib) return out_of_range();
        p.memory_bytes = {*x, origin::tool};
        return {};
    }
    case field::tiles: {
        const auto x = parse_uint(v);
        if (!x) return bad();
        if (*x == 0 || *x > 64) return out_of_range();
        r.tiles = {static_cast<std::uint32_t>(*x), origin::tool};
        return {};
    }
    }
    return {};
}

// "Intel(R) Data Center GPU Max 1550" -> "Intel Data Center GPU Max 1550": Intel's names
// carry trademark marks the catalogue does not.
inline std::string without_marks(std::string_view name) {
    std::string out;
    out.reserve(name.size());
    for (std::size_t i = 0; i < name.size();) {
        bool mark = false;
        for (std::string_view m : {"(R)", "(TM)", "(r)", "(tm)"})
            if (name.substr(i, m.size()) == m) {
                i += m.size();
                mark = true;
                break;
            }
        if (!mark) out += name[i++];
    }
    return out;
}

// The catalogue row for a device: by PCI id when that names one row (several rows share an
// id only for memory variants: the one whose size is within an eighth of the known memory),
// else by name.
inline const device_spec* match_spec(std::uint16_t device_id, std::string_view name,
                                     const sourced<std::uint64_t>& memory) {
    const auto by_id = find_devices_by_pci(info(vendor::intel).vendor_id, device_id);
    const device_spec* spec = nullptr;
    if (by_id.count == 1) spec = by_id[0];
    else if (by_id.count > 1 && memory)
        for (const device_spec* s : by_id) {
            const auto m = static_cast<double>(s->memory_bytes), have = static_cast<double>(*memory);
            if (m > 0 && have > m * 0.875 && have < m * 1.125) spec = s;
        }
    if (!spec && !name.empty()) spec = find_device(without_marks(name));
    return spec && spec->kind == device_kind::intel_gpu ? spec : nullptr;
}

inline void finish(row& r) {
    accelerator_profile& p = r.profile;
    if (p.pci_device_id == 0)
        if (const auto id = id_in_name(p.name.view())) p.pci_device_id = *id;
    if (const device_spec* s = match_spec(p.pci_device_id, p.name.view(), p.memory_bytes)) p.apply_spec(*s);
}

inline row blank_row(std::uint32_t index) {
    row r;
    r.profile.kind = device_kind::intel_gpu;
    r.profile.maker = vendor::intel;
    r.profile.index = index;
    return r;
}

inline void push(xpu_smi_result& out, row& r) {
    finish(r);
    out.devices.push_back(r.profile);
    out.tiles.push_back(r.tiles);
}

// A table label: a capital letter, then letters, digits, blanks and / ( ) . -, at most 48.
constexpr bool looks_like_label(std::string_view s) noexcept {
    if (s.empty() || s.size() > 48 || !(s.front() >= 'A' && s.front() <= 'Z')) return false;
    for (char c : s)
        if (!(ascii_alnum(c) || c == ' ' || c == '/' || c == '(' || c == ')' || c == '.' || c == '-')) return false;
    return true;
}

// "| 0         | Device Name: …   |" -> the two cells, trimmed; nullopt for other lines.
struct table_line {
    std::string_view id;
    std::string_view info;
};
constexpr std::optional<table_line> split_table_line(std::string_view line) noexcept {
    line = trim(line);
    if (line.size() < 3 || line.front() != '|' || line.back() != '|') return std::nullopt;
    line = line.substr(1, line.size() - 2);
    const auto bar = line.find('|');
    if (bar == std::string_view::npos) return std::nullopt;
    return table_line{trim(line.substr(0, bar)), trim(line.substr(bar + 1))};
}

constexpr bool is_border(std::string_view line) noexcept {
    line = trim(line);
    if (line.size() < 3 || line.front() != '+') return false;
    for (char c : line)
        if (c != '+' && c != '-' && c != '=') return false;
    return true;
}

// One CSV line of the dump: cells are bare or double-quoted (xpu-smi writes strings as
// JSON strings, so a quote inside one is escaped with a backslash). f(cell) for each.
template <class F>
bool each_csv_cell(std::string_view line, F&& f) {
    std::string cell;
    std::size_t i = 0;
    for (;;) {
        cell.clear();
        while (i < line.size() && line[i] == ' ') ++i;
        if (i < line.size() && line[i] == '"') {
            ++i;
            bool closed = false;
            while (i < line.size()) {
                const char c = line[i++];
                if (c == '\\' && i < line.size()) {
                    cell += line[i++];
                } else if (c == '"') {
                    closed = true;
                    break;
                } else {
                    cell += c;
                }
            }
            if (!closed) return false;
            while (i < line.size() && line[i] == ' ') ++i;
            if (i < line.size() && line[i] != ',') return false;
        } else {
            const auto comma = line.find(',', i);
            const auto end = comma == std::string_view::npos ? line.size() : comma;
            cell.assign(line.substr(i, end - i));
            i = end;
        }
        f(std::string_view(cell));
        if (i >= line.size()) return true;
        ++i; // the comma
    }
}

} // namespace detail::intel_gpu

/// Reads the bordered tables of `xpu-smi discovery` (one block of "Key: value" rows per
/// device) and `xpu-smi discovery -d <id>` (the same shape with many more rows). A value
/// that wraps onto the next line of its cell is joined to it. Devices are Intel GPUs,
/// values origin::tool, completed from the catalogue by PCI id (from "PCI Device ID" or
/// the "[0x…]" in xpu-smi's generic name) then by name.
inline xpu_smi_result parse_xpu_smi_discovery_table(std::string_view text) {
    using namespace detail::intel_gpu;
    xpu_smi_result r;
    problem_sink problems{r.problems};
    std::optional<row> current;
    const field_info* last = nullptr;
    std::string last_value;
    std::size_t last_line = 0;
    auto flush_value = [&] {
        if (current && last) {
            auto msg = apply(*last, last_value, *current);
            if (!msg.empty()) problems.add_problem(last_line, std::move(msg));
        }
        last = nullptr;
        last_value.clear();
    };
    auto flush_row = [&] {
        flush_value();
        if (current) push(r, *current);
        current.reset();
    };
    std::size_t number = 0;
    bool stop = false;
    detail::formats::each_line(text, [&](std::string_view line) {
        ++number;
        if (detail::trim(line).empty() || is_border(line)) return true;
        const auto cells = split_table_line(line);
        if (!cells) {
            const auto t = detail::trim(line);
            if (t == "No device discovered"sv) return true;
            problems.add(number, "not a table row: " + quote_value(t));
            return true;
        }
        if (cells->id == "Device ID"sv) return true; // the header row
        if (!cells->id.empty()) {
            flush_row();
            if (r.devices.size() >= max_rows) {
                problems.add(number, "more than " + std::to_string(max_rows) + " devices; the rest ignored");
                stop = true;
                return false;
            }
            const auto id = parse_uint(cells->id);
            if (!id || *id > 0xffff) problems.add(number, "device id " + quote_value(cells->id) + " is not a number");
            current = blank_row(id && *id <= 0xffff ? static_cast<std::uint32_t>(*id)
                                                    : static_cast<std::uint32_t>(r.devices.size()));
        }
        if (!current) {
            problems.add(number, "a device row before any device id");
            return true;
        }
        const std::string_view info = cells->info;
        if (info.empty()) return true; // the blank separator rows of -d
        const auto colon = info.find(": ");
        const std::string_view label = colon == std::string_view::npos ? std::string_view{} : info.substr(0, colon);
        const bool ends_with_colon = info.back() == ':' && looks_like_label(info.substr(0, info.size() - 1));
        if (looks_like_label(label) || ends_with_colon) {
            flush_value();
            const std::string_view key = ends_with_colon ? info.substr(0, info.size() - 1) : label;
            last = find_label(key);
            last_line = number;
            if (last && !ends_with_colon) last_value.assign(detail::trim(info.substr(colon + 2)));
            return true;
        }
        // A wrapped value: the rest of the previous row's value.
        if (last && last_value.size() < 4096) {
            if (!last_value.empty()) last_value += ' ';
            last_value.append(info);
        }
        return true;
    });
    if (!stop) flush_row();
    problems.finish();
    return r;
}

/// Reads `xpu-smi discovery --dump <ids>`: a header line of property labels, then one
/// line per device. Columns are matched by their label, never by position, so any id
/// list reads; labels the library does not map are ignored. "No device discovered" is no
/// device and no problem.
inline xpu_smi_result parse_xpu_smi_dump_csv(std::string_view text) {
    using namespace detail::intel_gpu;
    xpu_smi_result r;
    problem_sink problems{r.problems};
    std::vector<const field_info*> columns;
    bool have_header = false;
    std::size_t number = 0;
    detail::formats::each_line(text, [&](std::string_view line) {
        ++number;
        if (detail::trim(line).empty()) return true;
        if (!have_header) {
            if (detail::trim(line) == "No device discovered"sv) return false;
            have_header = true;
            bool labels = true;
            std::size_t known = 0;
            const bool ok = each_csv_cell(line, [&](std::string_view cell) {
                cell = detail::trim(cell);
                if (!looks_like_label(cell)) labels = false;
                const field_info* f = find_label(cell);
                if (f) ++known;
                static constexpr field_info unmapped{"", "", field::ignored};
                columns.push_back(f ? f : &unmapped);
            });
            if (!ok || !labels || known == 0) {
                problems.add(number, "not a header of property names: " + quote_value(line));
                return false;
            }
            return true;
        }
        if (r.devices.size() >= max_rows) {
            problems.add(number, "more than " + std::to_string(max_rows) + " rows; the rest ignored");
            return false;
        }
        std::vector<std::string> cells;
        const bool ok = each_csv_cell(line, [&](std::string_view cell) {
            if (cells.size() <= columns.size()) cells.emplace_back(cell);
        });
        if (!ok || cells.size() != columns.size()) {
            problems.add(number, (ok ? std::to_string(cells.size()) + " values for " + std::to_string(columns.size()) +
                                           " columns"
                                     : std::string("an unterminated quoted value")) +
                                     "; row skipped");
            return true;
        }
        row dev = blank_row(static_cast<std::uint32_t>(r.devices.size()));
        for (std::size_t i = 0; i < cells.size(); ++i) {
            auto msg = apply(*columns[i], cells[i], dev);
            if (!msg.empty()) problems.add_problem(number, std::move(msg));
        }
        push(r, dev);
        return true;
    });
    problems.finish();
    return r;
}

#if AI_HWACCEL_JSON
namespace detail::intel_gpu {
// One device object of the JSON: every key the library maps, strings and whole numbers
// alike (xpu-smi prints ids as numbers and sizes as strings, depending on the version).
inline void apply_json_device(const nlohmann::json& j, row& r, problem_sink& problems) {
    for (auto it = j.begin(); it != j.end(); ++it) {
        const field_info* f = find_key(it.key());
        if (!f) continue;
        std::string value;
        const auto& v = it.value();
        if (v.is_string()) value = v.get<std::string>();
        else if (v.is_number_unsigned()) value = std::to_string(v.get<std::uint64_t>());
        else if (v.is_null()) continue;
        else {
            problems.add(0, it.key() + ": not a string or a whole number");
            continue;
        }
        auto msg = apply(*f, value, r);
        if (!msg.empty()) problems.add_problem(0, std::move(msg));
    }
}
} // namespace detail::intel_gpu

/// Reads `xpu-smi discovery -j` ({"device_list": [{…}, …]}) and `xpu-smi discovery -d <id>
/// -j` (one device object, with memory_physical_size_byte). Problems carry line 0.
inline xpu_smi_result parse_xpu_smi_discovery_json(std::string_view text) {
    using namespace detail::intel_gpu;
    xpu_smi_result r;
    problem_sink problems{r.problems};
    const auto doc = nlohmann::json::parse(text.begin(), text.end(), nullptr, /*allow_exceptions=*/false);
    if (doc.is_discarded() || !doc.is_object()) {
        problems.add(0, "not a JSON object");
        problems.finish();
        return r;
    }
    auto one = [&](const nlohmann::json& d, std::uint32_t index) {
        if (!d.is_object()) {
            problems.add(0, "a device entry that is not an object");
            return;
        }
        row dev = blank_row(index);
        apply_json_device(d, dev, problems);
        push(r, dev);
    };
    if (const auto it = doc.find("device_list"); it != doc.end()) {
        // xpumanager builds the list by appending to a default (null) json value, so with
        // no device (or only virtual functions) it prints {"device_list": null}.
        if (it->is_array()) {
            for (const auto& d : *it) {
                if (r.devices.size() >= max_rows) {
                    problems.add(0, "more than " + std::to_string(max_rows) + " devices; the rest ignored");
                    break;
                }
                one(d, static_cast<std::uint32_t>(r.devices.size()));
            }
        } else if (!it->is_null()) {
            problems.add(0, "device_list is not an array");
        }
    } else if (doc.contains("device_id")) {
        one(doc, 0);
    } else if (const auto e = doc.find("error"); e != doc.end() && e->is_string()) {
        problems.add(0, "xpu-smi reported: " + quote_value(e->get<std::string>()));
    } else {
        problems.add(0, "neither a device_list nor a device object");
    }
    problems.finish();
    return r;
}
#endif // AI_HWACCEL_JSON

// ---------------------------------------------------------------------------------------
// sysfs

/// One Intel GPU as the kernel shows it.
struct intel_gpu_card {
    accelerator_profile profile;
    std::string card;   ///< "card1"
    std::string driver; ///< "i915" or "xe"
    /// Device-local memory was found (a discrete card); false for integrated graphics and
    /// for discrete cards whose kernel does not publish its size.
    bool local_memory = false;
    /// Discrete: local memory, a catalogue row (every Intel GPU row is a discrete board), an
    /// id of a discrete family (detail::intel_gpu::discrete_family), or a function off the
    /// root bus (integrated graphics sit on bus 0; so do cards passed through to a VM
    /// without PCIe root ports, QEMU's i440fx, which the first three catch).
    bool discrete = false;
    /// The tiles (stacks) xe lists under the card's PCI function (<pci device>/tile<N>); 0
    /// under i915, which lists none.
    std::uint32_t tiles = 0;
};

namespace detail::intel_gpu {

// The PCI device ids of Intel's discrete GPU families, as the kernel's
// include/drm/intel/pciids.h lists them: DG1 (0x4905-0x4909), DG2 (Arc A-series) and
// ATS-M (Flex) (0x5690-0x56ff), Ponte Vecchio (Max: 0x0b69, 0x0b6e, 0x0bd0-0x0bef) and
// Battlemage (Arc B-series: 0xe200-0xe2ff). No integrated part uses these ranges.
constexpr bool discrete_family(std::uint16_t id) noexcept {
    return (id >= 0x4905 && id <= 0x4909) || (id >= 0x5690 && id <= 0x56ff) || id == 0x0b69 || id == 0x0b6e ||
           (id >= 0x0bd0 && id <= 0x0bef) || (id >= 0xe200 && id <= 0xe2ff);
}

template <system_view S>
std::optional<std::uint64_t> read_bytes(const S& sys, const std::string& path, std::vector<warning>& warnings) {
    const auto text = detail::read_optional_file(sys, path, detail::sysfs_attribute_cap, warnings);
    if (!text) return std::nullopt;
    const auto v = detail::parse_u64(detail::trim(*text));
    if (!v) {
        detail::add_warning(warnings, warning_kind::parse_error, path, "not a byte count");
        return std::nullopt;
    }
    if (*v > 16 * units::tib) {
        detail::add_warning(warnings, warning_kind::value_out_of_range, path, "more memory than any device has");
        return std::nullopt;
    }
    return v;
}

// Device-local memory in bytes, nullopt where the driver does not publish it.
//  - xe: <pci device>/tile<N>/physical_vram_size_bytes, one per tile, summed. Created by
//    drivers/gpu/drm/xe/xe_tile_sysfs.c (Linux 6.8) for discrete parts other than DG1;
//    later kernels dropped the file, so its absence says nothing.
//  - i915: /sys/class/drm/card<N>/lmem_total_bytes, the local memory regions' total. It is
//    not in mainline i915: Intel's out-of-tree intel-gpu-i915-backports adds it to the DRM
//    minor (drivers/gpu/drm/i915/i915_sysfs.c there).
template <system_view S>
std::optional<std::uint64_t> local_memory(const S& sys, const std::string& card, const std::string& pci_dir,
                                          std::string_view driver, std::vector<warning>& warnings) {
    if (driver == "xe"sv) {
        const auto names = sys.list_dir(pci_dir);
        if (!names) return std::nullopt;
        std::optional<std::uint64_t> total;
        for (const auto& n : *names) {
            if (!n.starts_with("tile") || !detail::parse_u64(std::string_view(n).substr(4))) continue;
            if (const auto b = read_bytes(sys, pci_dir + "/" + n + "/physical_vram_size_bytes", warnings))
                total = total.value_or(0) + *b;
        }
        return total;
    }
    return read_bytes(sys, "/sys/class/drm/" + card + "/lmem_total_bytes", warnings);
}

// xe's tile<N> folders under the PCI function, one per tile (drivers/gpu/drm/xe/xe_tile_sysfs.c
// adds one for every tile, stack, of the device).
template <system_view S>
std::uint32_t xe_tiles(const S& sys, const std::string& pci_dir) {
    const auto names = sys.list_dir(pci_dir);
    if (!names) return 0;
    std::uint32_t n = 0;
    for (const auto& name : *names)
        if (name.starts_with("tile") && detail::parse_u64(std::string_view(name).substr(4))) ++n;
    return n;
}

/// Whether runtimes show each stack of a multi-stack card as a device of its own. Level
/// Zero reads ZE_FLAT_DEVICE_HIERARCHY: FLAT (the default when unset, since Intel's 2023
/// drivers) and COMBINED make every stack a root device with its own memory; COMPOSITE
/// keeps the card one device, whose stacks are sub-devices.
constexpr bool stacks_are_devices(const std::optional<std::string>& hierarchy) noexcept {
    return !hierarchy || trim(*hierarchy) != "COMPOSITE"sv;
}

/// Stack `k` of `n` of `card`: the card's PCI function with `stack` = k, an n-th of its
/// memory, bandwidth, peak rates, compute units and power limit (the stacks are alike), and
/// none of the card's UUID, memory in use, power draw or utilisation, which are the
/// card's and no stack's.
constexpr accelerator_profile stack_of(const accelerator_profile& card, std::uint32_t k, std::uint32_t n) noexcept {
    accelerator_profile p = card;
    p.stack = static_cast<std::uint8_t>(k);
    p.uuid.assign({});
    const double share = 1.0 / static_cast<double>(n);
    if (p.memory_bytes) p.memory_bytes = {*p.memory_bytes / n, p.memory_bytes.from};
    if (p.memory_bandwidth_gbps)
        p.memory_bandwidth_gbps = {*p.memory_bandwidth_gbps * share, p.memory_bandwidth_gbps.from};
    if (p.compute_units) p.compute_units = {*p.compute_units / n, p.compute_units.from};
    if (p.power_limit_watts) p.power_limit_watts = {*p.power_limit_watts * share, p.power_limit_watts.from};
    p.peak = p.peak.scaled(share);
    p.memory_used_bytes.reset();
    p.memory_free_bytes.reset();
    p.power_draw_watts.reset();
    p.utilization_percent.reset();
    return p;
}

/// Replaces each discrete card of several stacks (xe's tile count, else its catalogue row's
/// device_spec::stacks) by its stacks, where `hierarchy` (ZE_FLAT_DEVICE_HIERARCHY) makes
/// them devices. `tiles` gives xe's count per PCI function.
inline void expose_stacks(std::vector<accelerator_profile>& devices,
                          const std::vector<std::pair<pci_address, std::uint32_t>>& tiles,
                          const std::optional<std::string>& hierarchy) {
    if (!stacks_are_devices(hierarchy)) return;
    std::vector<accelerator_profile> out;
    out.reserve(devices.size());
    for (const auto& d : devices) {
        std::uint32_t n = d.spec ? d.spec->stacks : 0;
        for (const auto& [address, count] : tiles)
            if (d.pci && *d.pci == address && count > 0) n = count;
        if (d.unified_memory || d.stack || n < 2 || n > 16) {
            out.push_back(d);
            continue;
        }
        for (std::uint32_t k = 0; k < n; ++k) out.push_back(stack_of(d, k, n));
    }
    devices = std::move(out);
}

} // namespace detail::intel_gpu

/// Intel display/3D controllers bound to i915 or xe, from /sys/class/drm/card<N>: the
/// card's PCI function (ids, link, NUMA node, driver), device-local memory where the
/// driver publishes it, and the catalogue row its PCI id names. Integrated graphics are
/// marked unified_memory with memory unknown (the probe sizes them). Sorted by card number.
template <system_view S>
std::vector<intel_gpu_card> read_intel_gpu_sysfs(const S& sys, std::vector<warning>& warnings) {
    using namespace detail::intel_gpu;
    std::vector<intel_gpu_card> cards;
    const auto names = detail::list_optional_dir(sys, "/sys/class/drm", warnings);
    if (!names) return cards;
    for (const auto& name : *names) {
        const auto number = detail::drm_card_number(name);
        if (!number || cards.size() >= max_rows) continue;
        const auto target = detail::resolve_sysfs_link(sys, "/sys/class/drm/" + name + "/device");
        if (!target) continue;
        const auto address = parse_pci_address(detail::base_name(*target));
        if (!address) continue; // a platform device (an SoC's display), not a PCI card
        const std::string pci_dir = std::string("/sys/bus/pci/devices/") + address->text().data();
        const auto dev = read_pci_device(sys, pci_dir, warnings);
        if (!dev || dev->vendor_id != info(vendor::intel).vendor_id || (dev->class_code >> 16) != 0x03) continue;
        if (dev->driver != "i915"sv && dev->driver != "xe"sv) continue;
        intel_gpu_card c;
        c.card = name;
        c.driver = dev->driver;
        accelerator_profile& p = c.profile;
        p.kind = device_kind::intel_gpu;
        p.maker = vendor::intel;
        p.index = *number;
        p.pci = dev->address;
        p.pci_device_id = dev->device_id;
        p.pcie_current = dev->link_current;
        p.pcie_max = dev->link_max;
        if (dev->numa_node >= 0) p.numa_node = {dev->numa_node, origin::sysfs};
        if (c.driver == "xe"sv) c.tiles = xe_tiles(sys, pci_dir);
        if (const auto mem = local_memory(sys, name, pci_dir, c.driver, warnings)) {
            p.memory_bytes = {*mem, origin::sysfs};
            c.local_memory = true;
        }
        const device_spec* spec = match_spec(p.pci_device_id, {}, p.memory_bytes);
        c.discrete = c.local_memory || spec != nullptr ||
                     !find_devices_by_pci(info(vendor::intel).vendor_id, p.pci_device_id).empty() ||
                     discrete_family(p.pci_device_id) || dev->address.bus != 0;
        // An Arc card's GPU sits behind a PCIe switch on the card, and its own function
        // reports the switch's internal link, 2.5 GT/s x1 (nvtop works round the same): the
        // card's link to the slot is the switch's upstream port's, two folders up the path.
        if (const auto path = c.discrete && dev->link_max && *dev->link_max == pcie_link{1, 1}
                                  ? detail::resolve_sysfs_link(sys, pci_dir) // /sys/devices/pci…/<address>
                                  : std::nullopt) {
            std::string_view up = *path;
            for (int i = 0; i < 2 && up.rfind('/') != std::string_view::npos; ++i) up = up.substr(0, up.rfind('/'));
            if (parse_pci_address(detail::base_name(up))) {
                pcie_link link;
                if (detail::read_pcie_link(sys, std::string(up), "current", link, warnings) && link.known())
                    p.pcie_current = {link, origin::sysfs};
                link = {};
                if (detail::read_pcie_link(sys, std::string(up), "max", link, warnings) && link.known())
                    p.pcie_max = {link, origin::sysfs};
            }
        }
        if (spec) {
            p.name = spec->name;
            p.apply_spec(*spec);
        } else {
            p.name.assign(detail::unknown_device_name("Intel Graphics", p.pci_device_id));
        }
        if (!c.discrete) p.unified_memory = true; // shares the host's memory; its size is the host's
        cards.push_back(std::move(c));
    }
    std::sort(cards.begin(), cards.end(),
              [](const intel_gpu_card& a, const intel_gpu_card& b) { return a.profile.index < b.profile.index; });
    return cards;
}

// ---------------------------------------------------------------------------------------
// The probe

/// The xpu-smi run the probe makes: the CSV dump of the properties it reads (ids from
/// `xpu-smi discovery -h`: 1 device id, 2 name, 4 UUID, 8 driver version, 11 PCI BDF
/// address, 13 PCIe generation, 14 PCIe width, 16 memory physical size, 24 PCI device id).
/// Unlike the list (`discovery`, `-j`), the dump carries the memory size, which a card
/// whose id names several catalogue rows (the A770's 8 and 16 GB) needs and which
/// current kernels do not publish; it reads without JSON support too.
inline tool_request xpu_smi_discovery_request() {
    using namespace std::chrono_literals;
    return tool_request{{"xpu-smi", "discovery", "--dump", "1,2,4,8,11,13,14,16,24"}, 10s};
}

namespace detail::intel_gpu {
inline xpu_smi_result parse_probe_output(std::string_view text) { return parse_xpu_smi_dump_csv(text); }

// Adds what xpu-smi knows and sysfs does not: the UUID, the driver version, the memory and
// the PCIe link where unknown, and where sysfs found no catalogue row, the tool's (its
// memory tells the rows of one id apart) and its name, else the tool's name.
inline void enrich(accelerator_profile& p, const accelerator_profile& t) {
    if (!p.spec && t.spec) p.name = t.spec->name;
    else if (!p.spec && !t.name.empty()) p.name = t.name;
    if (p.uuid.empty()) p.uuid = t.uuid;
    if (p.driver_version.empty()) p.driver_version = t.driver_version;
    if (!p.memory_bytes || p.memory_bytes.from == origin::catalogue) {
        if (t.memory_bytes.from == origin::tool) {
            p.memory_bytes = t.memory_bytes;
            p.unified_memory = false;
        }
    }
    if (!p.pcie_max && t.pcie_max) p.pcie_max = t.pcie_max;
    if (!p.spec && t.spec) p.apply_spec(*t.spec);
}
} // namespace detail::intel_gpu

/// Intel GPUs: sysfs first (i915/xe cards), then `xpu-smi discovery` to enrich them and to
/// list devices sysfs could not see (a container without /sys). xpu-smi is run only where
/// there is a discrete Intel card, or where /sys/class/drm cannot be listed; its absence
/// is a warning only when a discrete card is present. Integrated graphics never warrant one.
struct intel_gpu_probe {
    static constexpr backend_id backend = backend_id::intel_gpu;

    template <system_view S>
    probe_output probe(const S& sys) const {
        std::vector<intel_gpu_card> cards;
        probe_output out = find(sys, cards);
        detail::size_shared_memory(sys, out.devices); // integrated graphics
        std::vector<std::pair<pci_address, std::uint32_t>> tiles;
        for (const auto& c : cards)
            if (c.profile.pci) tiles.emplace_back(*c.profile.pci, c.tiles);
        detail::intel_gpu::expose_stacks(out.devices, tiles, sys.env("ZE_FLAT_DEVICE_HIERARCHY"));
        return out;
    }

private:
    template <system_view S>
    probe_output find(const S& sys, std::vector<intel_gpu_card>& cards) const {
        probe_output out;
        cards = read_intel_gpu_sysfs(sys, out.warnings);
        const bool drm_listed = sys.list_dir("/sys/class/drm").has_value();
        std::string discrete;
        for (const auto& c : cards)
            if (c.discrete) {
                if (!discrete.empty()) discrete += ", ";
                discrete += c.profile.pci ? c.profile.pci->text().data() : c.card;
            }
        for (const auto& c : cards) out.devices.push_back(c.profile);
        if (drm_listed && discrete.empty()) return out;

        const tool_request request = xpu_smi_discovery_request();
        tool_result r = sys.run(request);
        if (tool_missing(r, out.warnings)) {
            if (!discrete.empty())
                out.warnings.push_back(warning{warning_kind::tool_not_found, backend, "xpu-smi",
                                               "discrete Intel GPU(s) (" + discrete +
                                                   ") but xpu-smi is not installed in any trusted folder; "
                                                   "names and memory come from sysfs and the catalogue only",
                                               0});
            return out;
        }
        if (!report_tool_result(request, r, backend, out.warnings)) return out;
        auto parsed = detail::intel_gpu::parse_probe_output(r.out);
        detail::parsing::problems_to_warnings(parsed.problems, backend, "xpu-smi", out.warnings);
        for (const auto& t : parsed.devices) {
            auto same = std::find_if(out.devices.begin(), out.devices.end(), [&](const accelerator_profile& p) {
                return p.pci && t.pci && *p.pci == *t.pci;
            });
            if (same != out.devices.end()) detail::intel_gpu::enrich(*same, t);
            else out.devices.push_back(t);
        }
        return out;
    }
};
#if AI_HWACCEL_OS_LINUX || AI_HWACCEL_OS_MACOS
static_assert(backend_probe<intel_gpu_probe, host_system>);
#endif

// ---------------------------------------------------------------------------------------
// Capture formats

namespace detail::formats {

namespace intel_gpu_sniff {
// The bordered xpu-smi table: a border first, then the "Device ID | Device Information" header.
constexpr bool is_discovery_table(std::string_view t) noexcept {
    if (!detail::intel_gpu::is_border(first_non_blank_line(t))) return false;
    bool header = false;
    int seen = 0;
    each_line(t, [&](std::string_view line) {
        if (++seen > 4) return false;
        const auto cells = detail::intel_gpu::split_table_line(line);
        if (cells && cells->id == "Device ID"sv && cells->info == "Device Information"sv) header = true;
        return !header;
    });
    return header;
}
// Rows only the -d detail prints.
constexpr bool has_detail_rows(std::string_view t) noexcept {
    bool found = false;
    each_line(t, [&](std::string_view line) {
        const auto cells = detail::intel_gpu::split_table_line(line);
        if (cells && (cells->info.starts_with("Device Type:") || cells->info.starts_with("Memory Physical Size:") ||
                      cells->info.starts_with("Number of EUs:")))
            found = true;
        return !found;
    });
    return found;
}
} // namespace intel_gpu_sniff

// xpu-smi discovery ---------------------------------------------------------------------------
inline int sniff_xpu_smi_discovery(std::string_view t) noexcept {
    return intel_gpu_sniff::is_discovery_table(t) && !intel_gpu_sniff::has_detail_rows(t) ? 90 : 0;
}
// xpu-smi discovery -d <id> -------------------------------------------------------------------
inline int sniff_xpu_smi_discovery_detail(std::string_view t) noexcept {
    return intel_gpu_sniff::is_discovery_table(t) && intel_gpu_sniff::has_detail_rows(t) ? 90 : 0;
}
inline void parse_xpu_smi_discovery_capture(std::string_view t, capture_parse& out) {
    auto r = parse_xpu_smi_discovery_table(t);
    parsing::problems_to_warnings(r.problems, backend_id::intel_gpu, out.format, out.warnings);
    if (r.devices.empty() && r.problems.empty()) nothing_found(out, "xpu-smi devices");
    out.devices = std::move(r.devices);
}

// xpu-smi discovery --dump <ids> ---------------------------------------------------------------
inline int sniff_xpu_smi_dump(std::string_view t) noexcept {
    const auto first = first_non_blank_line(t);
    // Every header cell a dump label, the first one of them too (cells are never quoted).
    if (first.empty() || first.find('"') != std::string_view::npos) return 0;
    bool all = true;
    std::size_t cells = 0;
    std::string_view rest = first;
    for (;;) {
        const auto comma = rest.find(',');
        const auto cell = trim(rest.substr(0, comma));
        ++cells;
        const auto* f = detail::intel_gpu::find_label(cell);
        if (!f) all = false;
        if (comma == std::string_view::npos) break;
        rest.remove_prefix(comma + 1);
    }
    return all && cells >= 1 ? 90 : 0;
}
inline void parse_xpu_smi_dump_capture(std::string_view t, capture_parse& out) {
    auto r = parse_xpu_smi_dump_csv(t);
    parsing::problems_to_warnings(r.problems, backend_id::intel_gpu, out.format, out.warnings);
    if (r.devices.empty() && r.problems.empty()) nothing_found(out, "xpu-smi dump rows");
    out.devices = std::move(r.devices);
}

#if AI_HWACCEL_JSON
// xpu-smi discovery -j --------------------------------------------------------------------------
inline int sniff_xpu_smi_json(std::string_view t) noexcept {
    const auto first = first_non_blank_line(t);
    if (!first.starts_with("{")) return 0;
    const bool list = t.find("\"device_list\"") != std::string_view::npos;
    const bool xpu_keys = t.find("\"pci_bdf_address\"") != std::string_view::npos ||
                          t.find("\"memory_physical_size_byte\"") != std::string_view::npos;
    return list && xpu_keys ? 90 : (xpu_keys && t.find("\"device_id\"") != std::string_view::npos ? 80 : 0);
}
inline void parse_xpu_smi_json_capture(std::string_view t, capture_parse& out) {
    auto r = parse_xpu_smi_discovery_json(t);
    parsing::problems_to_warnings(r.problems, backend_id::intel_gpu, out.format, out.warnings);
    if (r.devices.empty() && r.problems.empty()) nothing_found(out, "xpu-smi devices");
    out.devices = std::move(r.devices);
}
#endif

} // namespace detail::formats

AI_HWACCEL_NAMESPACE_END

#endif // AI_HWACCEL_BACKEND_INTEL_GPU
