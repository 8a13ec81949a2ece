// ai-hwaccel detect: AMD GPUs as AMD's management tools print them.
//
// Pure parsers for `rocm-smi` (its `GPU[n] : key: value` text, the concise table that
// `rocm-smi` prints without arguments, `--csv` and `--json`) and for `amd-smi` (`list`,
// `static`, `topology`, `xgmi` and the default dashboard), plus the capture formats for
// each. Every parser takes text and never throws for any input (bad_alloc aside): what it
// cannot read becomes a problem, a value the tool marks unavailable ("N/A",
// "Unsupported") stays unknown, and no number is made up where the tool printed nonsense
// (amd-smi xgmi prints 65535/4294967295 "Gb/s" on GPUs without XGMI; those are never read
// as bandwidth). Devices are ROCm GPUs made by AMD, indexed by the tool's GPU number, with
// values origin::tool, then completed from the catalogue (origin::catalogue). The whole
// header is empty unless the ROCm backend is compiled in; the JSON reader also needs
// AI_HWACCEL_JSON.
#pragma once

#include "ai_hwaccel/config.hpp"

#if AI_HWACCEL_BACKEND_ROCM

#include "ai_hwaccel/core/catalogue.hpp"
#include "ai_hwaccel/core/pci.hpp"
#include "ai_hwaccel/core/profile.hpp"
#include "ai_hwaccel/core/system_io.hpp"
#include "ai_hwaccel/core/text.hpp"
#include "ai_hwaccel/core/warning.hpp"
#include "ai_hwaccel/detect/capture.hpp"

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#if AI_HWACCEL_JSON
#include <nlohmann/json.hpp>
#endif

AI_HWACCEL_NAMESPACE_BEGIN

/// What one of the AMD tool parsers read.
struct amd_tool_result {
    /// One entry per GPU the output names, in the order the output first names them.
    std::vector<accelerator_profile> devices;
    /// XGMI links between GPUs (amd-smi topology); never invented for PCIe paths.
    std::vector<interconnect> links;
    std::vector<parse_problem> problems;
    /// The system-wide driver version when the output carries one (rocm-smi
    /// --showdriverversion, the amd-smi dashboard header); also copied to every device
    /// that has no version of its own.
    std::string driver_version;
};

namespace detail::amd_smi {

using detail::parsing::max_problems;
using detail::parsing::max_rows;
using detail::parsing::parse_real;
using detail::parsing::parse_uint;
using detail::parsing::printable;
using detail::parsing::problem_sink;
using detail::parsing::quote_value;

// What the tools print for "no value".
constexpr bool is_unavailable(std::string_view v) noexcept {
    v = trim(v);
    return v.empty() || iequals(v, "N/A") || iequals(v, "NA") || iequals(v, "Unsupported") ||
           iequals(v, "Not supported") || iequals(v, "unknown");
}

// "0x67c63ac3c3c637f9": 1 to 16 hex digits after "0x".
constexpr bool is_hex_u64(std::string_view v) noexcept {
    if (!(v.starts_with("0x") || v.starts_with("0X")) || v.size() < 3 || v.size() > 18) return false;
    for (char c : v.substr(2))
        if (hex_value(c) < 0) return false;
    return true;
}

// rocm-smi's unique id as the kernel's sysfs file has it, "%016llx": 16 hex digits, no "0x".
constexpr bool is_bare_hex_u64(std::string_view v) noexcept {
    if (v.size() != 16) return false;
    for (char c : v)
        if (hex_value(c) < 0) return false;
    return true;
}

constexpr bool starts_with_digit(std::string_view s) noexcept { return !s.empty() && s.front() >= '0' && s.front() <= '9'; }

/// A gfx target as rocminfo and the kernel spell it: major in decimal, minor and stepping
/// one hex digit each ("gfx90a"). rocm-smi prints the stepping in decimal ("gfx9010" for
/// gfx90a, KFD's 90010; "gfx9012" for gfx90c), so a name of decimal digits only is read as
/// major (two digits from 10 on, as gfx10 to gfx12), minor (one digit) and stepping (the
/// rest) and spelt again. A name with a hex letter is kept; "" when `v` is no gfx name.
inline std::string gfx_target_spelling(std::string_view v) {
    if (!v.starts_with("gfx") || v.size() < 6 || v.size() > 9) return {};
    const std::string_view digits = v.substr(3);
    bool decimal = true;
    for (char c : digits) {
        if (c >= '0' && c <= '9') continue;
        if (!((c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F'))) return {};
        decimal = false;
    }
    if (!decimal) return std::string(v);
    const std::size_t major_digits = digits[0] == '1' ? 2 : 1;
    const std::string_view stepping_text = digits.substr(major_digits + 1);
    if (stepping_text.empty() || stepping_text.size() > 2) return {};
    const auto number = [](std::string_view t) {
        unsigned n = 0;
        for (char c : t) n = n * 10 + static_cast<unsigned>(c - '0');
        return n;
    };
    const unsigned stepping = number(stepping_text);
    if (stepping > 15) return {};
    constexpr char hex[] = "0123456789abcdef";
    std::string out = "gfx" + std::string(digits.substr(0, major_digits));
    out += digits[major_digits];
    out += hex[stepping];
    return out;
}

/// A compute partition's share of its catalogue row. An MI300X in CPX mode is eight
/// logical GPUs of 38 of its 304 compute units, and rocminfo, KFD and rocm-smi each list
/// all eight: the row's memory, bandwidth, peak rates and board power are the whole GPU's,
/// so a device with fewer compute units than its row (as a tool or the kernel counted
/// them) keeps its share of each. Figures a tool or the kernel gave stay as they are.
constexpr void scale_to_partition(accelerator_profile& p) noexcept {
    if (!p.spec || !p.compute_units || p.compute_units.from == origin::catalogue) return;
    const std::uint32_t whole = p.spec->compute_units, part = *p.compute_units;
    if (whole == 0 || part == 0 || part >= whole) return;
    const double share = static_cast<double>(part) / static_cast<double>(whole);
    if (p.memory_bytes && p.memory_bytes.from == origin::catalogue)
        p.memory_bytes = {static_cast<std::uint64_t>(static_cast<double>(*p.memory_bytes) * share), origin::catalogue};
    if (p.memory_bandwidth_gbps && p.memory_bandwidth_gbps.from == origin::catalogue)
        p.memory_bandwidth_gbps = {*p.memory_bandwidth_gbps * share, origin::catalogue};
    if (p.power_limit_watts && p.power_limit_watts.from == origin::catalogue)
        p.power_limit_watts = {*p.power_limit_watts * share, origin::catalogue};
    if (p.peak_from == origin::catalogue) p.peak = p.peak.scaled(share);
}

// "0x740f" -> 0x740f; nullopt for anything else (also for ids past 16 bits).
constexpr std::optional<std::uint16_t> parse_hex16(std::string_view v) noexcept {
    v = trim(v);
    if (!(v.starts_with("0x") || v.starts_with("0X"))) return std::nullopt;
    const auto x = parse_hex32(v.substr(2));
    if (!x || *x > 0xffffu || v.size() > 6) return std::nullopt;
    return static_cast<std::uint16_t>(*x);
}

// A value and its unit: "64289 MB" -> {"64289", "MB"}; "39.0W" -> {"39.0", "W"}.
struct number_unit {
    std::string_view number;
    std::string_view unit;
};
constexpr number_unit split_unit(std::string_view v) noexcept {
    v = trim(v);
    std::size_t i = 0;
    while (i < v.size() && ((v[i] >= '0' && v[i] <= '9') || v[i] == '.' || v[i] == '-')) ++i;
    return {v.substr(0, i), trim(v.substr(i))};
}

// Whole bytes from a decimal count of `unit_bytes`; a message when it cannot be read.
inline std::string read_bytes(std::string_view n, std::uint64_t unit_bytes, sourced<std::uint64_t>& out,
                              std::string_view what) {
    n = trim(n);
    const auto x = parse_uint(n);
    if (!x) {
        bool digits = !n.empty();
        for (char c : n) digits = digits && c >= '0' && c <= '9';
        return std::string(what) + ": " + quote_value(n) + (digits ? " is out of range" : ": cannot read");
    }
    if (*x > (std::uint64_t{1} << 50) / unit_bytes) // 1 PiB: more than any device has
        return std::string(what) + ": " + quote_value(n) + " is out of range";
    out = {*x * unit_bytes, origin::tool};
    return {};
}

// A bounded real with a problem message when it is not one.
inline std::string read_real(std::string_view n, double max, sourced<double>& out, std::string_view what) {
    const auto x = parse_real(trim(n));
    if (!x) return std::string(what) + ": cannot read " + quote_value(n);
    if (*x < 0 || *x > max) return std::string(what) + ": " + quote_value(n) + " is out of range";
    out = {*x, origin::tool};
    return {};
}

template <std::size_t N>
std::string assign_text(inplace_string<N>& field, std::string_view v, std::string_view what) {
    bool changed = false;
    const std::string text = printable(trim(v), changed);
    const bool fits = field.assign(text);
    if (changed) return std::string(what) + ": not printable UTF-8, replaced by " + quote_value(text);
    if (!fits) return std::string(what) + ": longer than the profile keeps, cut";
    return {};
}

// amdgpu built into the kernel reports the kernel's banner as its version, and amd-smi
// strips its blanks: "Linuxversion6.19.11(nixbld@localhost)(gcc…" -> "6.19.11".
constexpr std::string_view driver_version_text(std::string_view v) noexcept {
    v = trim(v);
    constexpr std::string_view banner = "Linuxversion";
    if (v.starts_with(banner)) {
        v.remove_prefix(banner.size());
        std::size_t i = 0;
        while (i < v.size() && v[i] != '(' && v[i] != ' ') ++i;
        return v.substr(0, i);
    }
    return v;
}

inline accelerator_profile blank_gpu(std::uint32_t index) {
    accelerator_profile p;
    p.kind = device_kind::rocm_gpu;
    p.maker = vendor::amd;
    p.index = index;
    return p;
}

// The device with the tool's number `index`, added when new; nullptr past max_rows.
inline accelerator_profile* device_for(amd_tool_result& r, std::uint32_t index) {
    for (auto& d : r.devices)
        if (d.index == index) return &d;
    if (r.devices.size() >= max_rows) return nullptr;
    r.devices.push_back(blank_gpu(index));
    return &r.devices.back();
}

// "GPU[12]" / "card12" / "GPU0" -> 12 after the prefix, nothing else after the digits.
constexpr std::optional<std::uint32_t> index_after(std::string_view s, std::string_view prefix,
                                                   std::string_view suffix = {}) noexcept {
    if (!s.starts_with(prefix)) return std::nullopt;
    s.remove_prefix(prefix.size());
    if (!suffix.empty()) {
        if (!s.ends_with(suffix)) return std::nullopt;
        s.remove_suffix(suffix.size());
    }
    if (s.empty() || s.size() > 5) return std::nullopt;
    std::uint32_t v = 0;
    for (char c : s) {
        if (c < '0' || c > '9') return std::nullopt;
        v = v * 10 + static_cast<std::uint32_t>(c - '0');
    }
    return v <= 0xffff ? std::optional<std::uint32_t>(v) : std::nullopt;
}

// Names the catalogue may know a device by besides its PCI id, best first.
struct name_hints {
    std::string model;   ///< rocm-smi "Card model" when it is a name, not an id
    std::string product; ///< amd-smi BOARD PRODUCT_NAME
};

// Among catalogue rows sharing one PCI id, the only one whose compute-unit count and
// memory (within an eighth) agree with the device's, as far as the device's are known (RX
// 7600 and 7600 XT share id and CUs: 8 and 16 GiB tell them apart); none when that leaves
// several or nothing is known.
inline const device_spec* pick_by_shape(std::span<const device_spec* const> rows, const accelerator_profile& p) {
    if (rows.size() < 2 || (!p.compute_units && !p.memory_bytes)) return nullptr;
    const device_spec* only = nullptr;
    std::size_t n = 0;
    for (const device_spec* s : rows) {
        if (p.compute_units && s->compute_units != *p.compute_units) continue;
        if (const auto have = static_cast<double>(p.memory_bytes.value_or(0)), m = static_cast<double>(s->memory_bytes);
            have > 0 && m > 0 && !(have > m * 0.875 && have < m * 1.125))
            continue;
        only = s;
        ++n;
    }
    return n == 1 ? only : nullptr;
}

// The catalogue row for an AMD GPU, from sysfs or a tool: by PCI id when exactly one row
// answers; else by the names it was given (the printed name, the part of it in brackets,
// the other names); else, among the rows sharing its id, by its shape (pick_by_shape).
// A partition keeps its share of the row's figures.
inline void match_catalogue(accelerator_profile& p, const name_hints& hints = {}) {
    const device_spec* spec = nullptr;
    const auto by_id = find_devices_by_pci(info(vendor::amd).vendor_id, p.pci_device_id);
    if (by_id.size() == 1) spec = by_id[0];
    auto try_name = [&](std::string_view n) {
        if (spec || trim(n).empty()) return;
        const device_spec* s = find_device(n);
        if (s && s->kind == device_kind::rocm_gpu) spec = s;
    };
    const std::string_view name = p.name.view();
    try_name(name);
    if (const auto open = name.rfind('['); open != std::string_view::npos && name.back() == ']')
        try_name(name.substr(open + 1, name.size() - open - 2));
    try_name(hints.model);
    try_name(hints.product);
    if (!spec) spec = pick_by_shape(by_id, p);
    if (spec && spec->kind == device_kind::rocm_gpu) {
        p.apply_spec(*spec);
        scale_to_partition(p);
        // A tool that printed no name (rocminfo's blank Marketing Name on LUMI's MI250X):
        // the row's.
        if (p.name.empty()) p.name = spec->name;
    }
}

// Catalogue matching and the system driver version for every device, once all is read.
inline void finish(amd_tool_result& r, const std::vector<name_hints>* hints = nullptr) {
    for (std::size_t i = 0; i < r.devices.size(); ++i) {
        auto& d = r.devices[i];
        if (d.driver_version.empty() && !r.driver_version.empty()) d.driver_version.assign(r.driver_version);
        match_catalogue(d, hints && i < hints->size() ? (*hints)[i] : name_hints{});
    }
}

// Whitespace-separated tokens of a line.
inline std::vector<std::string_view> tokens(std::string_view line, std::size_t cap = 256) {
    std::vector<std::string_view> out;
    std::size_t i = 0;
    while (i < line.size() && out.size() < cap) {
        while (i < line.size() && (line[i] == ' ' || line[i] == '\t')) ++i;
        const std::size_t b = i;
        while (i < line.size() && line[i] != ' ' && line[i] != '\t') ++i;
        if (i > b) out.push_back(line.substr(b, i - b));
    }
    return out;
}

// ----------------------------------------------------------------------------- rocm-smi

// One "key: value" the tool printed for a card (or for the system), kept until the whole
// output is read: some fields only make sense next to others (see "Card model").
struct field {
    std::string key;
    std::string value;
    std::size_t line = 0;
};
struct rocm_card {
    std::uint32_t index = 0;
    std::vector<field> fields;
};
struct rocm_fields {
    std::vector<rocm_card> cards;
    std::vector<field> system;
    std::size_t count = 0;
    bool add(std::uint32_t index, std::string_view key, std::string_view value, std::size_t line) {
        if (++count > max_rows * 64) return false; // no real output has this many values
        for (auto& c : cards)
            if (c.index == index) {
                c.fields.push_back({std::string(trim(key)), std::string(trim(value)), line});
                return true;
            }
        if (cards.size() >= max_rows) return false;
        cards.push_back({index, {{std::string(trim(key)), std::string(trim(value)), line}}});
        return true;
    }
    void add_system(std::string_view key, std::string_view value, std::size_t line) {
        if (++count > max_rows * 64) return;
        system.push_back({std::string(trim(key)), std::string(trim(value)), line});
    }
};

// Applies what rocm-smi said about one card. Keys are compared ignoring case: rocm-smi
// has printed "Card series" and "Card Series" in different releases.
inline void apply_rocm_card(const rocm_card& c, amd_tool_result& r, name_hints& hints, problem_sink& problems) {
    accelerator_profile* p = device_for(r, c.index);
    if (!p) return;
    // Older rocm-smi printed the subsystem's name (or its id) as "Card model"; releases
    // that also print "Subsystem ID" print the PCI device id there.
    bool has_subsystem = false;
    for (const auto& f : c.fields) has_subsystem = has_subsystem || iequals(f.key, "Subsystem ID");
    for (const auto& f : c.fields) {
        const std::string_view k = f.key, v = f.value;
        auto report = [&](std::string msg) {
            if (!msg.empty()) problems.add(f.line, std::move(msg));
        };
        if (is_unavailable(v)) continue;
        if (iequals(k, "Card series") || iequals(k, "Device Name")) {
            if (p->name.empty()) report(assign_text(p->name, v, k));
        } else if (iequals(k, "Card model")) {
            if (const auto id = parse_hex16(v); id && has_subsystem) {
                if (p->pci_device_id == 0) p->pci_device_id = *id;
            } else if (!parse_hex16(v)) {
                bool changed = false;
                hints.model = printable(v, changed, 128);
            }
        } else if (iequals(k, "Device ID")) {
            const auto id = parse_hex16(v);
            if (!id) report(std::string(k) + ": cannot read " + quote_value(v));
            else p->pci_device_id = *id;
        } else if (iequals(k, "GFX Version")) {
            const auto gfx = gfx_target_spelling(v);
            if (gfx.empty() || gfx.size() > decltype(p->arch)::capacity())
                report(std::string(k) + ": cannot read " + quote_value(v));
            else report(assign_text(p->arch, gfx, k));
        } else if (iequals(k, "VRAM Total Memory (B)")) {
            report(read_bytes(v, 1, p->memory_bytes, k));
        } else if (iequals(k, "VRAM Total Used Memory (B)")) {
            report(read_bytes(v, 1, p->memory_used_bytes, k));
        } else if (iequals(k, "Unique ID")) {
            if (!is_hex_u64(v) && !is_bare_hex_u64(v)) report(std::string(k) + ": cannot read " + quote_value(v));
            else report(assign_text(p->uuid, v, k));
        } else if (iequals(k, "PCI Bus")) {
            if (const auto a = parse_pci_address(v)) p->pci = *a;
            else report(std::string(k) + ": cannot read " + quote_value(v));
        } else if (iequals(k, "GPU use (%)")) {
            report(read_real(v, 100, p->utilization_percent, k));
        } else if (iequals(k, "Temperature (Sensor edge) (C)")) {
            report(read_real(v, 500, p->temperature_c, k));
        } else if (iequals(k, "Average Graphics Package Power (W)") ||
                   iequals(k, "Current Socket Graphics Package Power (W)")) {
            report(read_real(v, 100'000, p->power_draw_watts, k));
        } else if (iequals(k, "Max Graphics Package Power (W)")) {
            report(read_real(v, 100'000, p->power_limit_watts, k));
        }
    }
}

inline void apply_rocm_system(const std::vector<field>& system, amd_tool_result& r, problem_sink& problems) {
    for (const auto& f : system) {
        if (!iequals(f.key, "Driver version") || is_unavailable(f.value)) continue;
        bool changed = false;
        r.driver_version = printable(driver_version_text(f.value), changed, 31);
        if (changed) problems.add(f.line, "Driver version: not printable UTF-8, replaced by " + quote_value(r.driver_version));
    }
}

inline void build_rocm(const rocm_fields& fs, amd_tool_result& r, problem_sink& problems) {
    apply_rocm_system(fs.system, r, problems);
    std::vector<name_hints> hints;
    for (const auto& c : fs.cards) {
        name_hints h;
        apply_rocm_card(c, r, h, problems);
        // Hints go to the device's position (the concise table may have listed it first).
        hints.resize(r.devices.size());
        for (std::size_t i = 0; i < r.devices.size(); ++i)
            if (r.devices[i].index == c.index && hints[i].model.empty()) hints[i].model = std::move(h.model);
    }
    finish(r, &hints);
}

// The concise table (`rocm-smi` without arguments, `amd-smi --rocm-smi`): the header names
// the columns; a cell ending with ',' continues into the next token ("0x740f,   22303",
// "N/A, N/A, 0") and bracketed cells are one ("[0x74a1 : 0x00]").
inline std::vector<std::string_view> concise_cells(std::string_view line) {
    std::vector<std::string_view> out;
    const auto t = tokens(line);
    for (std::size_t i = 0; i < t.size(); ++i) {
        const char* begin = t[i].data();
        std::size_t j = i;
        if (t[i].starts_with('[')) {
            while (j + 1 < t.size() && !t[j].ends_with(']')) ++j;
        } else {
            while (j + 1 < t.size() && t[j].ends_with(',')) ++j;
        }
        const char* end = t[j].data() + t[j].size();
        out.emplace_back(begin, static_cast<std::size_t>(end - begin));
        i = j;
    }
    return out;
}

// Header cells, with "(…)" qualifiers ("Temp (DieEdge)") folded into the cell before.
inline std::vector<std::string_view> concise_header(std::string_view line) {
    std::vector<std::string_view> out;
    for (auto c : concise_cells(line)) {
        if (c.starts_with('(') && !out.empty()) continue;
        out.push_back(c);
    }
    return out;
}

// Where each header cell starts, in code points from the line's start: rocm-smi pads the
// table by characters, and a "°C" holds a two-byte one.
inline std::vector<std::size_t> concise_starts(std::string_view raw) {
    std::vector<std::size_t> out;
    for (const auto c : concise_header(raw)) {
        std::size_t points = 0;
        for (const char* b = raw.data(); b < c.data(); ++b)
            if (!utf8_continuation(*b)) ++points;
        out.push_back(points);
    }
    return out;
}

// A row's cells cut where the header's columns start (concise_starts): for a row whose
// tokens do not group into cells, as when the "[Model : Revision]" cell holds a name cut
// to its width ("[Radeon Pro Duo : 0x"), never closing its bracket.
inline std::vector<std::string_view> concise_cells_at(std::string_view raw, const std::vector<std::size_t>& starts) {
    std::vector<std::size_t> at; // byte offsets of the starts
    std::size_t points = 0;
    for (std::size_t b = 0; b <= raw.size() && at.size() < starts.size(); ++b) {
        if (b < raw.size() && utf8_continuation(raw[b])) continue;
        while (at.size() < starts.size() && starts[at.size()] <= points) at.push_back(b);
        ++points;
    }
    std::vector<std::string_view> out;
    for (std::size_t k = 0; k < at.size(); ++k) {
        const std::size_t end = k + 1 < at.size() ? at[k + 1] : raw.size();
        out.push_back(trim(raw.substr(at[k], end - at[k])));
    }
    return out;
}

constexpr bool is_concise_header(std::string_view line) noexcept {
    line = trim(line);
    return (line.starts_with("Device ") || line.starts_with("GPU ")) && line.find("VRAM%") != std::string_view::npos;
}

// One concise row into the device it names.
inline void apply_concise_row(const std::vector<std::string_view>& header, const std::vector<std::string_view>& cells,
                              std::size_t line, amd_tool_result& r, problem_sink& problems) {
    const auto index = parse_uint(cells[0]);
    if (!index || *index > 0xffff) {
        problems.add(line, "not a device number: " + quote_value(cells[0]));
        return;
    }
    accelerator_profile* p = device_for(r, static_cast<std::uint32_t>(*index));
    if (!p) return;
    for (std::size_t i = 1; i < cells.size() && i < header.size(); ++i) {
        const std::string_view h = header[i], v = cells[i];
        if (is_unavailable(v)) continue;
        auto report = [&](std::string msg) {
            if (!msg.empty()) problems.add(line, std::move(msg));
        };
        if (h == "IDs"sv) { // "0x740f,   22303": device id, KFD GUID
            const auto id = parse_hex16(v.substr(0, v.find(',')));
            if (id) p->pci_device_id = *id;
            else if (!is_unavailable(trim(v.substr(0, v.find(','))))) report("IDs: cannot read " + quote_value(v));
        } else if (h.starts_with("[Model")) {
            // "[0x0c34 : 0x02]": the board's subsystem id and revision, as the CSV's "Card
            // model" (an MI210's device is 0x740f), or a name cut to the cell: no device id.
            continue;
        } else if (h == "Temp"sv) {
            auto [n, unit] = split_unit(v);
            if (unit == "\xC2\xB0" "C" || unit == "c"sv || unit == "C"sv) report(read_real(n, 500, p->temperature_c, "Temp"));
            else report("Temp: cannot read " + quote_value(v));
        } else if (h == "Power"sv || h == "AvgPwr"sv) {
            auto [n, unit] = split_unit(v);
            if (unit == "W"sv) report(read_real(n, 100'000, p->power_draw_watts, "Power"));
            else report("Power: cannot read " + quote_value(v));
        } else if (h == "PwrCap"sv) {
            auto [n, unit] = split_unit(v);
            if (unit == "W"sv) report(read_real(n, 100'000, p->power_limit_watts, "PwrCap"));
            else report("PwrCap: cannot read " + quote_value(v));
        } else if (h == "GPU%"sv) {
            auto [n, unit] = split_unit(v);
            if (unit == "%"sv) report(read_real(n, 100, p->utilization_percent, "GPU%"));
            else report("GPU%: cannot read " + quote_value(v));
        }
    }
}

// rocm-smi's text: banners, "GPU[n] : key: value" lines, "key: value" system lines and
// the concise table. Returns false when nothing in it was rocm-smi's.
inline bool read_rocm_text(std::string_view text, rocm_fields& fs, amd_tool_result& r, problem_sink& problems) {
    std::size_t number = 0;
    bool recognized = false;
    std::vector<std::string_view> header;
    std::vector<std::size_t> header_starts;
    accelerator_profile* last_row = nullptr;
    detail::formats::each_line(text, [&](std::string_view raw) {
        ++number;
        const std::string_view line = trim(raw);
        if (line.empty()) return true;
        if (line.starts_with("===")) {
            recognized = recognized || line.find("ROCm System Management Interface") != std::string_view::npos ||
                         line.find("End of ROCm SMI Log") != std::string_view::npos;
            if (!header.empty() && line.find_first_not_of('=') == std::string_view::npos && last_row) header.clear();
            last_row = nullptr;
            return true;
        }
        if (is_concise_header(line)) {
            header = concise_header(line);
            header_starts = concise_starts(raw);
            recognized = true;
            last_row = nullptr;
            return true;
        }
        if (!header.empty()) {
            if (line.starts_with('(')) return true; // the header's second line
            if (last_row && (raw.starts_with(' ') || raw.starts_with('\t'))) {
                // The name line under a "[Model : Revision]" row, indented (it may start
                // with a digit: "0x744c" where the tool has no name, which is none).
                const bool bare_id = line.starts_with("0x") && parse_hex16(line).has_value();
                if (last_row->name.empty() && !bare_id) {
                    auto msg = assign_text(last_row->name, line, "Name");
                    if (!msg.empty()) problems.add(number, std::move(msg));
                }
                last_row = nullptr;
                return true;
            }
            if (starts_with_digit(line)) {
                auto cells = concise_cells(line);
                if (cells.size() != header.size() && header_starts.size() == header.size()) {
                    auto at = concise_cells_at(raw, header_starts);
                    if (at.size() == header.size() && parse_uint(at[0])) cells = std::move(at);
                }
                if (cells.size() != header.size()) {
                    problems.add(number, std::to_string(cells.size()) + " cells for " + std::to_string(header.size()) +
                                             " columns; row skipped");
                    last_row = nullptr;
                    return true;
                }
                apply_concise_row(header, cells, number, r, problems);
                last_row = nullptr;
                if (const auto idx = parse_uint(cells[0]))
                    for (auto& d : r.devices)
                        if (d.index == *idx) last_row = &d;
                return true;
            }
        }
        if (line.starts_with("GPU[")) {
            const auto close = line.find(']');
            const auto idx = close == std::string_view::npos ? std::nullopt
                                                               : index_after(line.substr(0, close + 1), "GPU[", "]");
            std::string_view rest = close == std::string_view::npos ? std::string_view{} : trim(line.substr(close + 1));
            if (!idx || !rest.starts_with(':')) {
                problems.add(number, "not a GPU line: " + quote_value(line));
                return true;
            }
            recognized = true;
            rest = trim(rest.substr(1));
            const auto colon = rest.find(':');
            if (colon == std::string_view::npos) return true; // a message about the GPU, not a value
            if (!fs.add(*idx, rest.substr(0, colon), rest.substr(colon + 1), number)) {
                problems.add(number, "too many values; the rest ignored");
                return false;
            }
            return true;
        }
        if (const auto colon = line.find(':'); colon != std::string_view::npos && iequals(trim(line.substr(0, colon)), "Driver version")) {
            recognized = true;
            fs.add_system("Driver version", line.substr(colon + 1), number);
            return true;
        }
        return true; // free text (warnings, notes): not a value
    });
    return recognized;
}

// Splits one CSV line of rocm-smi (it removes commas from values, so no quoting beyond
// the system form's "\"name\", \"value\"").
inline std::vector<std::string_view> csv_cells(std::string_view line, std::size_t cap = 4096) {
    std::vector<std::string_view> out;
    for (;;) {
        const auto comma = line.find(',');
        std::string_view cell = trim(line.substr(0, comma));
        if (cell.size() >= 2 && cell.front() == '"' && cell.back() == '"') cell = cell.substr(1, cell.size() - 2);
        if (out.size() >= cap) return out;
        out.push_back(cell);
        if (comma == std::string_view::npos) return out;
        line.remove_prefix(comma + 1);
    }
}

inline void read_rocm_csv(std::string_view text, rocm_fields& fs, problem_sink& problems) {
    std::vector<std::string> header;
    bool name_value = false;
    std::size_t number = 0;
    detail::formats::each_line(text, [&](std::string_view line) {
        ++number;
        if (trim(line).empty()) return true;
        auto cells = csv_cells(line);
        if (header.empty()) {
            for (auto c : cells) header.emplace_back(c);
            name_value = header.size() == 2 && header[0] == "name"sv && header[1] == "value"sv;
            if (header[0] != "device"sv && header[0] != "system"sv && !name_value) {
                problems.add(number, "not a rocm-smi CSV header: " + quote_value(line));
                return false;
            }
            return true;
        }
        if (name_value) { // newer system form: "Driver version", "6.7.0"
            if (cells.size() != 2) problems.add(number, "expected a name and a value; row skipped");
            else fs.add_system(cells[0], cells[1], number);
            return true;
        }
        if (cells.size() != header.size()) {
            problems.add(number, std::to_string(cells.size()) + " values for " + std::to_string(header.size()) +
                                     " columns; row skipped");
            return true;
        }
        const std::string_view who = cells[0];
        if (who == "system"sv || who == "cardsystem"sv) {
            for (std::size_t i = 1; i < cells.size(); ++i) fs.add_system(header[i], cells[i], number);
            return true;
        }
        const auto idx = index_after(who, "card");
        if (!idx) {
            problems.add(number, "not a card: " + quote_value(who));
            return true;
        }
        for (std::size_t i = 1; i < cells.size(); ++i)
            if (!fs.add(*idx, header[i], cells[i], number)) {
                problems.add(number, "too many values; the rest ignored");
                return false;
            }
        return true;
    });
}

#if AI_HWACCEL_JSON
// nlohmann's parser does not recurse, but refusing absurd nesting first keeps the cost of
// hostile input bounded and the document small.
constexpr bool json_nesting_within(std::string_view text, int limit) noexcept {
    int depth = 0;
    bool in_string = false, escaped = false;
    for (char c : text) {
        if (in_string) {
            if (escaped) escaped = false;
            else if (c == '\\') escaped = true;
            else if (c == '"') in_string = false;
            continue;
        }
        if (c == '"') in_string = true;
        else if (c == '{' || c == '[') {
            if (++depth > limit) return false;
        } else if ((c == '}' || c == ']') && depth > 0)
            --depth;
    }
    return true;
}

inline std::optional<std::string> json_scalar(const nlohmann::json& v) {
    if (v.is_string()) return v.get<std::string>();
    if (v.is_number_unsigned()) return std::to_string(v.get<std::uint64_t>());
    if (v.is_number_integer()) return std::to_string(v.get<std::int64_t>());
    if (v.is_number_float()) return std::to_string(v.get<double>());
    return std::nullopt;
}

inline void read_rocm_json(std::string_view text, rocm_fields& fs, problem_sink& problems) {
    if (!json_nesting_within(text, 32)) {
        problems.add(0, "JSON nested too deeply");
        return;
    }
    const auto j = nlohmann::json::parse(text.begin(), text.end(), nullptr, /*allow_exceptions=*/false);
    if (j.is_discarded()) {
        problems.add(0, "not valid JSON");
        return;
    }
    if (!j.is_object()) {
        problems.add(0, "JSON is not an object of cards");
        return;
    }
    for (const auto& [key, value] : j.items()) {
        const bool system = key == "system"sv;
        const auto idx = index_after(key, "card");
        if (!system && !idx) continue; // other top-level entries carry nothing mapped
        if (!value.is_object()) {
            problems.add(0, quote_value(key) + " is not an object");
            continue;
        }
        for (const auto& [k, v] : value.items()) {
            const auto s = json_scalar(v);
            if (!s) {
                problems.add(0, quote_value(key) + "." + quote_value(k) + " is not a string or a number");
                continue;
            }
            if (system) fs.add_system(k, *s, 0);
            else if (!fs.add(*idx, k, *s, 0)) {
                problems.add(0, "too many values; the rest ignored");
                return;
            }
        }
    }
}
#endif

// ------------------------------------------------------------------------------ amd-smi

constexpr std::size_t indent_of(std::string_view raw) noexcept {
    std::size_t n = 0;
    for (char c : raw) {
        if (c == ' ') ++n;
        else if (c == '\t') n += 4;
        else break;
    }
    return n;
}

// PCIe generation from "Gen 5" or "32 GT/s"; 0 when neither.
constexpr std::uint8_t pcie_generation_of(std::string_view v) noexcept {
    v = trim(v);
    if (v.starts_with("Gen ") || v.starts_with("Gen")) {
        const auto n = parse_uint(trim(v.substr(3)));
        return n && *n >= 1 && *n <= 16 ? static_cast<std::uint8_t>(*n) : std::uint8_t{0};
    }
    const auto [n, unit] = split_unit(v);
    if (unit != "GT/s"sv) return 0;
    const auto x = parse_real(n);
    if (!x) return 0;
    constexpr double rates[] = {2.5, 5, 8, 16, 32, 64, 128};
    for (std::size_t i = 0; i < std::size(rates); ++i)
        if (*x == rates[i]) return static_cast<std::uint8_t>(i + 1);
    return 0;
}

// `amd-smi list` and `amd-smi static [--driver|--asic|…]`: "GPU: n" blocks of indented
// "KEY: value" lines, sections being keys without a value.
inline void read_amd_smi_blocks(std::string_view text, amd_tool_result& r, std::vector<name_hints>& hints,
                                problem_sink& problems) {
    struct section {
        std::size_t indent;
        std::string_view name;
    };
    std::vector<section> path;
    accelerator_profile* gpu = nullptr;
    std::size_t gpu_slot = 0;
    bool in_block = false; // inside a CPU: or other top-level block that is not a GPU
    sourced<double> max_power;
    auto close_gpu = [&] {
        if (gpu && !gpu->power_limit_watts && max_power) gpu->power_limit_watts = max_power;
        gpu = nullptr;
        max_power = {};
    };
    std::size_t number = 0;
    detail::formats::each_line(text, [&](std::string_view raw) {
        ++number;
        const std::string_view line = trim(raw);
        if (line.empty()) return true;
        const std::size_t indent = indent_of(raw);
        const auto colon = line.find(':');
        if (colon == std::string_view::npos) {
            problems.add(number, "not a \"KEY: value\" line: " + quote_value(line));
            return true;
        }
        const std::string_view key = trim(line.substr(0, colon)), value = trim(line.substr(colon + 1));
        if (indent == 0 && gpu && value.empty() && key != "GPU"sv && key != "CPU"sv) {
            // A section flush left under its "GPU: n" line, as AMD's documentation of
            // amd-smi 23.x prints "ASIC:", "BUS:", "VRAM:": the section of the open GPU.
            path.clear();
            path.push_back({0, key});
            return true;
        }
        if (indent == 0) {
            close_gpu();
            path.clear();
            in_block = true;
            if (key == "GPU"sv) {
                const auto idx = parse_uint(value);
                if (!idx || *idx > 0xffff) {
                    problems.add(number, "not a GPU number: " + quote_value(value));
                    return true;
                }
                const auto before = r.devices.size();
                gpu = device_for(r, static_cast<std::uint32_t>(*idx));
                if (!gpu) {
                    problems.add(number, "more than " + std::to_string(max_rows) + " GPUs; the rest ignored");
                    return false;
                }
                if (r.devices.size() > before) hints.emplace_back();
                gpu_slot = static_cast<std::size_t>(gpu - r.devices.data());
            }
            return true;
        }
        if (!in_block) {
            problems.add(number, "value outside any GPU block: " + quote_value(line));
            return true;
        }
        while (!path.empty() && path.back().indent >= indent) path.pop_back();
        if (value.empty()) {
            if (path.size() < 16) path.push_back({indent, key});
            return true;
        }
        if (!gpu || is_unavailable(value)) return true;
        const std::string_view sec = path.empty() ? std::string_view{} : path.front().name;
        const std::string_view sub = path.size() > 1 ? path[1].name : std::string_view{};
        accelerator_profile& p = *gpu;
        auto report = [&](std::string msg) {
            if (!msg.empty()) problems.add(number, std::move(msg));
        };
        auto bad = [&] { report(std::string(key) + ": cannot read " + quote_value(value)); };
        if (sec.empty() || sec == "BUS"sv) {
            if (key == "BDF"sv) {
                if (const auto a = parse_pci_address(value)) p.pci = *a;
                else bad();
            } else if (key == "UUID"sv && sec.empty()) {
                report(assign_text(p.uuid, value, key));
            } else if (key == "MAX_PCIE_WIDTH"sv || key == "MAX_PCIE_LANES"sv) {
                const auto w = parse_uint(value);
                if (!w || *w == 0 || *w > 64) return bad(), true;
                pcie_link l = p.pcie_max.value;
                l.width = static_cast<std::uint8_t>(*w);
                p.pcie_max = {l, origin::tool};
            } else if (key == "MAX_PCIE_SPEED"sv || key == "PCIE_INTERFACE_VERSION"sv) {
                const auto g = pcie_generation_of(value);
                if (g == 0) return bad(), true;
                pcie_link l = p.pcie_max.value;
                if (l.generation == 0 || key == "PCIE_INTERFACE_VERSION"sv) l.generation = g;
                p.pcie_max = {l, origin::tool};
            }
        } else if (sec == "ASIC"sv) {
            if (key == "MARKET_NAME"sv) report(assign_text(p.name, value, key));
            else if (key == "DEVICE_ID"sv) {
                const auto id = parse_hex16(value);
                if (!id) bad();
                else p.pci_device_id = *id;
            } else if (key == "VENDOR_ID"sv) {
                const auto id = parse_hex16(value);
                if (!id) bad();
                else if (*id != info(vendor::amd).vendor_id) report("VENDOR_ID " + quote_value(value) + " is not AMD's");
            } else if (key == "NUM_COMPUTE_UNITS"sv) {
                const auto n = parse_uint(value);
                if (!n || *n == 0 || *n > 1'000'000) bad();
                else p.compute_units = {static_cast<std::uint32_t>(*n), origin::tool};
            } else if (key == "TARGET_GRAPHICS_VERSION"sv) {
                const auto gfx = gfx_target_spelling(value);
                if (gfx.empty() || gfx.size() > decltype(p.arch)::capacity()) bad();
                else report(assign_text(p.arch, gfx, key));
            }
        } else if (sec == "DRIVER"sv) {
            if (key == "VERSION"sv || key == "DRIVER_VERSION"sv)
                report(assign_text(p.driver_version, driver_version_text(value), key));
        } else if (sec == "BOARD"sv) {
            if (key == "PRODUCT_NAME"sv && gpu_slot < hints.size()) {
                bool changed = false;
                hints[gpu_slot].product = printable(value, changed, 128);
            }
        } else if (sec == "NUMA"sv) {
            if (key == "NODE"sv) {
                const auto n = parse_uint(value);
                if (!n || *n > 4096) bad();
                else p.numa_node = {static_cast<std::int32_t>(*n), origin::tool};
            }
        } else if (sec == "VRAM"sv) {
            if (key == "SIZE"sv || key == "VRAM_SIZE_MB"sv) {
                // amd-smi divides the byte count by 1024*1024 and calls the result "MB".
                const auto [n, unit] = split_unit(value);
                if (unit != "MB"sv) bad();
                else report(read_bytes(n, 1024 * 1024, p.memory_bytes, "VRAM SIZE"));
            }
        } else if (sec == "LIMIT"sv) {
            // 6.2-era tools: LIMIT/SOCKET_POWER, LIMIT/MAX_POWER; newer: LIMIT/PPT0/…_LIMIT.
            const bool socket = key == "SOCKET_POWER"sv || (sub == "PPT0"sv && key == "SOCKET_POWER_LIMIT"sv);
            const bool maximum = key == "MAX_POWER"sv || (sub == "PPT0"sv && key == "MAX_POWER_LIMIT"sv);
            if (socket || maximum) {
                const auto [n, unit] = split_unit(value);
                if (unit != "W"sv) return bad(), true;
                report(read_real(n, 100'000, socket ? p.power_limit_watts : max_power, key));
            }
        }
        return true;
    });
    close_gpu();
}

// A table of amd-smi topology: "NAME TABLE:", a header of BDFs, rows "BDF cell cell…".
struct topo_table {
    std::string_view name;
    std::vector<pci_address> columns;
    std::vector<std::vector<std::string_view>> rows; // cells by the row's column; empty where missing
};

inline std::vector<topo_table> read_topology_tables(std::string_view text, problem_sink& problems) {
    std::vector<topo_table> tables;
    topo_table* cur = nullptr;
    bool want_header = false;
    std::size_t number = 0;
    detail::formats::each_line(text, [&](std::string_view raw) {
        ++number;
        const std::string_view line = trim(raw);
        if (line.empty()) {
            cur = nullptr;
            return true;
        }
        if (line.ends_with(" TABLE:")) {
            if (tables.size() >= 64) return false;
            tables.push_back({line.substr(0, line.size() - 7), {}, {}});
            cur = &tables.back();
            want_header = true;
            return true;
        }
        if (!cur) return true; // legend and other prose
        const auto t = tokens(line, max_rows + 2);
        if (want_header) {
            want_header = false;
            for (auto c : t) {
                const auto a = parse_pci_address(c);
                if (!a) {
                    problems.add(number, std::string(cur->name) + ": not a BDF in the header: " + quote_value(c));
                    cur->columns.clear();
                    cur = nullptr;
                    return true;
                }
                cur->columns.push_back(*a);
            }
            return true;
        }
        const auto a = t.empty() ? std::nullopt : parse_pci_address(t[0]);
        if (!a || t.size() != cur->columns.size() + 1) {
            problems.add(number, std::string(cur->name) + ": row not understood: " + quote_value(line));
            return true;
        }
        std::size_t at = 0;
        while (at < cur->columns.size() && cur->columns[at] != *a) ++at;
        if (at == cur->columns.size()) {
            problems.add(number, std::string(cur->name) + ": a row for a BDF the header does not name");
            return true;
        }
        cur->rows.resize(cur->columns.size());
        cur->rows[at].assign(t.begin() + 1, t.end());
        return true;
    });
    return tables;
}

// The dashboard's "| left | right |" cells.
inline std::vector<std::string_view> bar_cells(std::string_view line) {
    std::vector<std::string_view> out;
    line = trim(line);
    if (!line.starts_with('|')) return out;
    line.remove_prefix(1);
    while (!line.empty() && out.size() < 8) {
        const auto bar = line.find('|');
        out.push_back(trim(line.substr(0, bar)));
        if (bar == std::string_view::npos) break;
        line.remove_prefix(bar + 1);
    }
    if (!out.empty() && out.back().empty()) out.pop_back();
    return out;
}

} // namespace detail::amd_smi

/// Reads rocm-smi output in any of the forms it prints, telling them apart by themselves:
/// `--json` (an object of "cardN" objects and "system"), `--csv` (a "device,…" header and
/// "cardN" rows, or the system forms "device,Driver version / cardsystem,…" and "name,
/// value"), and text: "GPU[n] : key: value" lines (--showproductname, --showmeminfo vram,
/// --showuniqueid, --showid, --showbus, --showuse, …), "Driver version: …" and the concise
/// table of `rocm-smi` with no arguments (also with the ROCm 6.3 Partitions column, and
/// the "[Model : Revision]" layout with the name on the line below). Several flags in one
/// run merge into one device per GPU number.
///
/// Mapped keys (case ignored): Card series / Device Name → name; Card model → PCI device
/// id only where the same card also has "Subsystem ID" (releases that print that field
/// print the device id as "Card model"; older ones print the subsystem there, which is
/// then used only as a name for the catalogue); Device ID; GFX Version → arch; VRAM Total
/// (Used) Memory (B) → bytes; Unique ID → uuid (as printed, "0x…"); PCI Bus; GPU use (%);
/// Temperature (Sensor edge) (C); Average / Current Socket Graphics Package Power (W);
/// Max Graphics Package Power (W) → power limit; system "Driver version".
inline amd_tool_result parse_rocm_smi(std::string_view text) {
    using namespace detail::amd_smi;
    using detail::trim;
    amd_tool_result r;
    problem_sink problems{r.problems};
    rocm_fields fs;
    const auto first = detail::formats::first_non_blank_line(text);
    if (first.starts_with('{')) {
#if AI_HWACCEL_JSON
        read_rocm_json(text, fs, problems);
#else
        problems.add(0, "rocm-smi JSON: this build has no JSON support (AI_HWACCEL_JSON=0)");
#endif
    } else if (first.starts_with("device,") || first.starts_with("system,") || first == "name, value"sv ||
               first == "name,value"sv) {
        read_rocm_csv(text, fs, problems);
    } else if (!first.empty()) {
        if (!read_rocm_text(text, fs, r, problems) && r.problems.empty())
            problems.add(0, "not rocm-smi output: " + quote_value(first));
    }
    build_rocm(fs, r, problems);
    problems.finish();
    return r;
}

/// Reads `amd-smi list` and `amd-smi static` (all or some sections): "GPU: n" blocks; CPU
/// and other top-level blocks are skipped. Mapped: BDF, UUID (list); ASIC MARKET_NAME →
/// name, DEVICE_ID, VENDOR_ID (checked), NUM_COMPUTE_UNITS, TARGET_GRAPHICS_VERSION → arch;
/// BUS MAX_PCIE_WIDTH, MAX_PCIE_SPEED / PCIE_INTERFACE_VERSION → pcie_max; LIMIT
/// SOCKET_POWER (or PPT0 SOCKET_POWER_LIMIT; MAX_POWER as a fallback) → power limit;
/// DRIVER VERSION (the kernel version when amd-smi prints the in-kernel driver's banner);
/// NUMA NODE; VRAM SIZE ("MB" = MiB: amd-smi divides bytes by 1024²); BOARD PRODUCT_NAME
/// as a name for the catalogue.
inline amd_tool_result parse_amd_smi_static(std::string_view text) {
    using namespace detail::amd_smi;
    using detail::trim;
    amd_tool_result r;
    problem_sink problems{r.problems};
    std::vector<name_hints> hints;
    read_amd_smi_blocks(text, r, hints, problems);
    finish(r, &hints);
    problems.finish();
    return r;
}

/// Reads `amd-smi topology`: one device per BDF of the tables' header (the tool's GPU
/// order), and one xgmi link per pair of GPUs whose LINK TYPE cell says XGMI (state from
/// the ACCESS TABLE when present). PCIe paths and unknown bandwidths add nothing.
inline amd_tool_result parse_amd_smi_topology(std::string_view text) {
    using namespace detail::amd_smi;
    using detail::trim;
    amd_tool_result r;
    problem_sink problems{r.problems};
    const auto tables = read_topology_tables(text, problems);
    const topo_table* types = nullptr;
    const topo_table* access = nullptr;
    for (const auto& t : tables) {
        if (t.name == "LINK TYPE"sv) types = &t;
        if (t.name == "ACCESS"sv) access = &t;
        if (r.devices.empty())
            for (std::size_t i = 0; i < t.columns.size() && i < max_rows; ++i) {
                auto p = blank_gpu(static_cast<std::uint32_t>(i));
                p.pci = t.columns[i];
                r.devices.push_back(p);
            }
    }
    if (types) {
        auto cell = [](const topo_table& tb, std::size_t i, std::size_t j) {
            return i < tb.rows.size() && j < tb.rows[i].size() ? tb.rows[i][j] : std::string_view{};
        };
        for (std::size_t i = 0; i < types->columns.size(); ++i)
            for (std::size_t j = i + 1; j < types->columns.size(); ++j) {
                const bool xgmi = cell(*types, i, j) == "XGMI"sv || cell(*types, j, i) == "XGMI"sv;
                if (!xgmi) continue;
                interconnect l;
                l.kind = interconnect_kind::xgmi;
                l.scope = link_scope::intra_node;
                l.name = std::string("XGMI ") + types->columns[i].text().data() + " - " + types->columns[j].text().data();
                if (access && access->columns == types->columns) l.state = std::string(cell(*access, i, j));
                l.devices = {static_cast<std::uint32_t>(i), static_cast<std::uint32_t>(j)};
                if (r.links.size() < max_rows) r.links.push_back(std::move(l));
            }
    } else if (!text.empty() && !tables.empty()) {
        problems.add(0, "no LINK TYPE TABLE: link types unknown");
    }
    if (tables.empty() && !detail::formats::first_non_blank_line(text).empty())
        problems.add(0, "no topology table found");
    finish(r);
    problems.finish();
    return r;
}

/// Reads `amd-smi xgmi`: one device per "GPUn  BDF" row of the LINK METRIC TABLE and the
/// XGMI LINK STATUS table. When two or more GPUs report the link type XGMI they form one
/// xgmi link (a hive), bandwidth unknown: the bit_rate/max_bandwidth columns are left
/// unread, since GPUs without XGMI print placeholders there (65535, 4294967295).
inline amd_tool_result parse_amd_smi_xgmi(std::string_view text) {
    using namespace detail::amd_smi;
    using detail::trim;
    amd_tool_result r;
    problem_sink problems{r.problems};
    std::vector<std::uint32_t> xgmi_gpus;
    std::string_view table;
    std::size_t number = 0;
    bool seen_table = false;
    detail::formats::each_line(text, [&](std::string_view raw) {
        ++number;
        const std::string_view line = trim(raw);
        if (line.empty()) return true;
        if (line.ends_with(":") && line.find(' ') != std::string_view::npos && line == raw) {
            table = line;
            seen_table = true;
            return true;
        }
        if (table != "LINK METRIC TABLE:"sv && table != "XGMI LINK STATUS:"sv && table != "GPU LINK PORT STATUS:"sv)
            return true;
        const auto t = tokens(line, 8);
        if (t.size() < 2 || !t[0].starts_with("GPU")) return true; // headers, Read/Write rows
        const auto idx = index_after(t[0], "GPU");
        const auto a = parse_pci_address(t[1]);
        if (!idx || !a) {
            problems.add(number, "not a GPU row: " + quote_value(line));
            return true;
        }
        accelerator_profile* p = device_for(r, *idx);
        if (!p) return false;
        p->pci = *a;
        if (table == "LINK METRIC TABLE:"sv) {
            // The link type follows the two bandwidth columns, possibly run together with
            // them ("…Gb/sXGMI"); only its presence is read.
            const auto rest = line.substr(static_cast<std::size_t>(t[1].data() + t[1].size() - line.data()));
            const auto at = rest.find("XGMI");
            if (at != std::string_view::npos && (at == 0 || rest[at - 1] == ' ' || rest[at - 1] == 's'))
                xgmi_gpus.push_back(*idx);
        }
        return true;
    });
    if (!seen_table && !detail::formats::first_non_blank_line(text).empty())
        problems.add(0, "no amd-smi xgmi table found");
    if (xgmi_gpus.size() >= 2) {
        interconnect l;
        l.kind = interconnect_kind::xgmi;
        l.scope = link_scope::intra_node;
        l.name = "XGMI";
        l.devices = xgmi_gpus;
        r.links.push_back(std::move(l));
    }
    finish(r);
    problems.finish();
    return r;
}

/// Reads the dashboard `amd-smi` prints without arguments: the driver version from the
/// header ("amdgpu version: …", unknown when it is a cut kernel banner), and per GPU its
/// BDF and name, GPU number, GFX utilization, temperature, power draw/limit ("280/327 W")
/// and memory used/total ("7608/24560 MB", MiB as amd-smi counts).
inline amd_tool_result parse_amd_smi_dashboard(std::string_view text) {
    using namespace detail::amd_smi;
    using detail::trim;
    amd_tool_result r;
    problem_sink problems{r.problems};
    enum class at { header, gpus, done } where = at::header;
    std::optional<pci_address> pending_bdf;
    std::string pending_name;
    std::string_view pending_right;
    std::size_t pending_line = 0;
    bool any = false;
    std::size_t number = 0;
    auto fraction = [](std::string_view v) -> std::optional<std::pair<std::string_view, std::string_view>> {
        const auto slash = v.find('/');
        if (slash == std::string_view::npos) return std::nullopt;
        return std::pair{v.substr(0, slash), v.substr(slash + 1)};
    };
    detail::formats::each_line(text, [&](std::string_view raw) {
        ++number;
        const std::string_view line = trim(raw);
        if (line.empty() || where == at::done) return true;
        if (line.starts_with("+") && where == at::gpus) {
            where = at::done;
            return true;
        }
        const auto cells = bar_cells(line);
        if (cells.empty()) return true;
        if (where == at::header) {
            any = any || cells[0].starts_with("AMD-SMI");
            for (auto cell : cells) {
                const auto k = cell.find("amdgpu version:") != std::string_view::npos ? cell.find("amdgpu version:")
                                                                                      : cell.find("amdgpu Version:");
                if (k == std::string_view::npos) continue;
                const auto t = tokens(cell.substr(k + 15), 1);
                if (!t.empty() && starts_with_digit(t[0]) && !is_unavailable(t[0])) {
                    bool changed = false;
                    r.driver_version = printable(t[0], changed, 31);
                }
            }
            if (cells[0].starts_with("==")) where = at::gpus;
            return true;
        }
        if (cells.size() != 2 || cells[0].starts_with("--") || cells[0].starts_with("==")) return true;
        const auto left = tokens(cells[0], 64);
        if (left.empty()) return true;
        if (const auto a = parse_pci_address(left[0])) { // first line of a GPU
            pending_bdf = *a;
            pending_name = std::string(trim(cells[0].substr(left[0].size())));
            pending_right = cells[1];
            pending_line = number;
            return true;
        }
        const auto idx = parse_uint(left[0]);
        if (!pending_bdf || !idx || *idx > 0xffff) {
            problems.add(number, "GPU row not understood: " + quote_value(line));
            pending_bdf.reset();
            return true;
        }
        accelerator_profile* p = device_for(r, static_cast<std::uint32_t>(*idx));
        if (!p) return false;
        p->pci = *pending_bdf;
        auto report = [&](std::size_t ln, std::string msg) {
            if (!msg.empty()) problems.add(ln, std::move(msg));
        };
        if (!is_unavailable(pending_name)) report(pending_line, assign_text(p->name, pending_name, "GPU-Name"));
        // First right cell: "Mem-Uti Temp UEC Power-Usage": "29 %  93 °C  0  280/327 W".
        const auto r1 = tokens(pending_right, 16);
        for (std::size_t i = 0; i + 1 < r1.size(); ++i) {
            if (r1[i + 1] == "\xC2\xB0" "C" && starts_with_digit(r1[i]))
                report(pending_line, read_real(r1[i], 500, p->temperature_c, "Temp"));
            if (r1[i + 1] == "W"sv)
                if (const auto f = fraction(r1[i])) {
                    if (!is_unavailable(f->first)) report(pending_line, read_real(f->first, 100'000, p->power_draw_watts, "Power-Usage"));
                    if (!is_unavailable(f->second)) report(pending_line, read_real(f->second, 100'000, p->power_limit_watts, "Power-Usage"));
                }
        }
        // Second: "GFX-Uti Fan Mem-Usage": "100 %  51.76  7608/24560 MB".
        const auto r2 = tokens(cells[1], 16);
        if (r2.size() >= 2 && r2[1] == "%"sv && starts_with_digit(r2[0]))
            report(number, read_real(r2[0], 100, p->utilization_percent, "GFX-Uti"));
        if (r2.size() >= 2 && r2.back() == "MB"sv)
            if (const auto f = fraction(r2[r2.size() - 2])) {
                if (!is_unavailable(f->first)) report(number, read_bytes(f->first, 1024 * 1024, p->memory_used_bytes, "Mem-Usage"));
                if (!is_unavailable(f->second)) report(number, read_bytes(f->second, 1024 * 1024, p->memory_bytes, "Mem-Usage"));
            }
        pending_bdf.reset();
        return true;
    });
    if (!any && !detail::formats::first_non_blank_line(text).empty()) problems.add(0, "not the amd-smi dashboard");
    finish(r);
    problems.finish();
    return r;
}

namespace detail::formats {

namespace amd_sniff {
// True when some line (first `limit` lines) satisfies `f`.
template <class F>
constexpr bool any_line(std::string_view t, std::size_t limit, F&& f) noexcept {
    bool found = false;
    std::size_t n = 0;
    each_line(t, [&](std::string_view line) {
        if (f(line)) found = true;
        return !found && ++n < limit;
    });
    return found;
}
constexpr bool is_gpu_kv_line(std::string_view line) noexcept {
    // "GPU[0]\t\t: …" / "GPU[0]          : …"
    if (!line.starts_with("GPU[")) return false;
    const auto close = line.find(']');
    if (close == std::string_view::npos || close == 4) return false;
    for (std::size_t i = 4; i < close; ++i)
        if (line[i] < '0' || line[i] > '9') return false;
    return trim(line.substr(close + 1)).starts_with(':');
}
constexpr bool is_block_start(std::string_view line, std::string_view what) noexcept {
    if (!line.starts_with(what) || !line.substr(what.size()).starts_with(": ")) return false;
    const auto n = line.substr(what.size() + 2);
    if (n.empty()) return false;
    for (char c : n)
        if (c < '0' || c > '9') return false;
    return true;
}
} // namespace amd_sniff

inline void amd_result_to_capture(amd_tool_result&& r, capture_parse& out, std::string_view what) {
    detail::parsing::problems_to_warnings(r.problems, backend_id::rocm, out.format, out.warnings);
    if (r.devices.empty() && r.problems.empty() && r.driver_version.empty()) nothing_found(out, what);
    out.devices = std::move(r.devices);
    out.driver_version = std::move(r.driver_version);
    if (!r.links.empty()) {
        out.system.emplace();
        out.system->interconnects = std::move(r.links);
    }
}

// rocm-smi text: banners, "GPU[n] : …" lines, the concise table ----------------------------
inline int sniff_rocm_smi(std::string_view t) noexcept {
    const auto first = first_non_blank_line(t);
    if (first.starts_with("===") && first.find("ROCm System Management Interface") != std::string_view::npos) return 90;
    return amd_sniff::is_gpu_kv_line(first) ? 90 : 0;
}
inline void parse_rocm_smi_capture(std::string_view t, capture_parse& out) {
    amd_result_to_capture(parse_rocm_smi(t), out, "GPU lines");
}

// rocm-smi --csv ----------------------------------------------------------------------------
inline int sniff_rocm_smi_csv(std::string_view t) noexcept {
    const auto first = first_non_blank_line(t);
    if (first == "name, value"sv) return t.find("\"Driver version\"") != std::string_view::npos ? 90 : 0;
    if (!first.starts_with("device,")) return 0;
    // the second line names a card: "card0,…" or the system row "cardsystem,…"
    std::string_view second;
    bool past_first = false;
    each_line(t, [&](std::string_view line) {
        if (trim(line).empty()) return true;
        if (!past_first) {
            past_first = true;
            return true;
        }
        second = line;
        return false;
    });
    return second.starts_with("card") && second.find(',') != std::string_view::npos ? 90 : 0;
}
inline void parse_rocm_smi_csv_capture(std::string_view t, capture_parse& out) {
    amd_result_to_capture(parse_rocm_smi(t), out, "card rows");
}

// rocm-smi --json ---------------------------------------------------------------------------
inline int sniff_rocm_smi_json(std::string_view t) noexcept {
    const auto first = first_non_blank_line(t);
    if (!first.starts_with('{')) return 0;
    std::string_view rest = trim(t.substr(static_cast<std::size_t>(first.data() - t.data()) + 1));
    if (!rest.starts_with("\"card") && !rest.starts_with("\"system\"")) return 0;
    rest.remove_prefix(1);
    if (rest.starts_with("card")) {
        std::size_t i = 4;
        while (i < rest.size() && rest[i] >= '0' && rest[i] <= '9') ++i;
        if (i == 4 || i >= rest.size() || rest[i] != '"') return 0;
    }
    return 90;
}
inline void parse_rocm_smi_json_capture(std::string_view t, capture_parse& out) {
    amd_result_to_capture(parse_rocm_smi(t), out, "cards");
}

// amd-smi list / static ---------------------------------------------------------------------
inline int sniff_amd_smi_static(std::string_view t) noexcept {
    const auto first = first_non_blank_line(t);
    if (!amd_sniff::is_block_start(first, "GPU") && !amd_sniff::is_block_start(first, "CPU")) return 0;
    const bool ours = amd_sniff::any_line(t, 64, [](std::string_view line) {
        const auto l = trim(line);
        return l.starts_with("BDF: ") || l == "ASIC:"sv || l == "DRIVER:"sv || l == "SMU:"sv || l == "BUS:"sv;
    });
    return ours ? 90 : 0;
}
inline void parse_amd_smi_static_capture(std::string_view t, capture_parse& out) {
    amd_result_to_capture(parse_amd_smi_static(t), out, "GPU blocks");
}

// amd-smi topology --------------------------------------------------------------------------
inline int sniff_amd_smi_topology(std::string_view t) noexcept {
    const auto first = first_non_blank_line(t);
    if (first != "ACCESS TABLE:"sv && first != "WEIGHT TABLE:"sv && first != "LINK TYPE TABLE:"sv) return 0;
    return amd_sniff::any_line(t, 1024, [](std::string_view l) { return trim(l) == "LINK TYPE TABLE:"sv; }) ? 90 : 0;
}
inline void parse_amd_smi_topology_capture(std::string_view t, capture_parse& out) {
    amd_result_to_capture(parse_amd_smi_topology(t), out, "GPUs");
}

// amd-smi xgmi ------------------------------------------------------------------------------
inline int sniff_amd_smi_xgmi(std::string_view t) noexcept {
    const auto first = first_non_blank_line(t);
    if (first != "LINK METRIC TABLE:"sv && first != "XGMI LINK STATUS:"sv) return 0;
    return 90;
}
inline void parse_amd_smi_xgmi_capture(std::string_view t, capture_parse& out) {
    amd_result_to_capture(parse_amd_smi_xgmi(t), out, "GPU rows");
}

// amd-smi (dashboard) -----------------------------------------------------------------------
inline int sniff_amd_smi_dashboard(std::string_view t) noexcept {
    const auto first = first_non_blank_line(t);
    if (!first.starts_with("+---")) return 0;
    return amd_sniff::any_line(t, 4, [](std::string_view l) { return trim(l).starts_with("| AMD-SMI "); }) ? 90 : 0;
}
inline void parse_amd_smi_dashboard_capture(std::string_view t, capture_parse& out) {
    amd_result_to_capture(parse_amd_smi_dashboard(t), out, "GPU rows");
}

} // namespace detail::formats

AI_HWACCEL_NAMESPACE_END

#endif // AI_HWACCEL_BACKEND_ROCM
