// ai-hwaccel detect: nvidia-smi's reports for people.
//
// Three pure parsers for what nvidia-smi prints when asked for a report rather than for
// chosen fields: `nvidia-smi -q` (indented "Key : value" sections, one per GPU),
// `nvidia-smi -q -x` (the same report as XML) and plain `nvidia-smi` (the boxed table,
// Linux and Windows layouts). People paste these into bug reports and forums, so the
// library reads them too. Each returns the `nvidia_query_result` of detect/nvidia.hpp and
// shares its rules: values go through the same cell reader, "N/A" stays unknown, what
// cannot be read is a problem, and every GPU is completed from the catalogue. The XML is
// read by a small scanner made for this one document shape: no recursion, a depth cap,
// comments, processing instructions and the DOCTYPE skipped, the five predefined entities
// and character references decoded, no other entity ever expanded. The capture formats for
// the three outputs are at the end. Empty unless the CUDA backend is compiled in.
#pragma once

#include "ai_hwaccel/config.hpp"

#if AI_HWACCEL_BACKEND_CUDA

#include "ai_hwaccel/core/pci.hpp"
#include "ai_hwaccel/core/profile.hpp"
#include "ai_hwaccel/core/text.hpp"
#include "ai_hwaccel/detect/capture.hpp"
#include "ai_hwaccel/detect/nvidia.hpp"

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

AI_HWACCEL_NAMESPACE_BEGIN

namespace detail::nvidia_reports {

using detail::parsing::max_rows;
using detail::parsing::parse_uint;
using detail::parsing::problem_sink;
using detail::parsing::quote_value;

// Adds the problem make() describes, building the message only while the list has room:
// a flood of the same fault then costs a count, not a string each.
template <class F>
void add_problem(problem_sink& sink, std::size_t line, F&& make) {
    if (sink.out.size() >= detail::parsing::max_problems) ++sink.dropped;
    else sink.add(line, make());
}

// How a report's value differs from what the query CSV cell reader expects.
enum class shape : std::uint8_t {
    plain,    // "81559 MiB", "43.89 W", "0x233010DE": as the CSV prints them
    width,    // "16x": a link width with its "x"
    bare_hex, // "233010DE": the XML's device id, without "0x"
};

// Collects the GPUs of one report: one profile per GPU section, the driver version read
// once in the header for all of them, catalogue matching at the end.
struct report_builder {
    nvidia_query_result& r;
    problem_sink problems{r.problems};
    accelerator_profile header;             // holds the driver version of the report's header
    std::vector<nvidia::row_extras> extras; // per device: memory clock, MIG mode
    std::vector<char> matchable;            // per device: may be matched to the catalogue by name
    bool active = false;                    // values go to r.devices.back()
    bool full = false;                      // max_rows GPUs read; the rest are ignored

    explicit report_builder(nvidia_query_result& out) : r(out) {}

    bool begin_gpu(std::size_t line) {
        active = false;
        if (r.devices.size() >= max_rows) {
            if (!full) problems.add(line, "more than " + std::to_string(max_rows) + " GPUs; the rest ignored");
            full = true;
            return false;
        }
        r.devices.push_back(nvidia::blank_gpu(static_cast<std::uint32_t>(r.devices.size())));
        extras.emplace_back();
        matchable.push_back(1);
        active = true;
        return true;
    }
    void end_gpu() noexcept { active = false; }

    static void apply(std::string_view field, shape s, std::string_view value, accelerator_profile& p,
                      nvidia::row_extras& more, problem_sink& sink, std::size_t line) {
        const auto* f = nvidia::find_field(field);
        if (!f) return;
        value = trim(value);
        std::string prefixed;
        if (s == shape::width && value.size() > 1 && value.back() == 'x') value.remove_suffix(1);
        if (s == shape::bare_hex && value.size() <= 16 && !value.starts_with("0x") && !value.starts_with("0X") &&
            !nvidia::is_unavailable(value)) {
            prefixed = "0x";
            prefixed += value;
            value = prefixed;
        }
        auto msg = nvidia::apply_cell(*f, value, p, more);
        if (!msg.empty()) sink.add_problem(line, std::move(msg));
    }
    // A value of the current GPU; dropped when there is none (values outside a GPU section).
    void set(std::string_view field, shape s, std::string_view value, std::size_t line) {
        if (!active) return;
        apply(field, s, value, r.devices.back(), extras.back(), problems, line);
    }
    void set_driver(std::string_view value, std::size_t line) {
        nvidia::row_extras unused;
        apply("driver_version", shape::plain, value, header, unused, problems, line);
    }
    void finish() {
        r.max_memory_clock_mhz.clear();
        r.mig_enabled.clear();
        r.device_errors.clear();
        for (const auto& e : extras) {
            r.max_memory_clock_mhz.push_back(e.mem_clock);
            r.mig_enabled.push_back(e.mig);
            r.device_errors.push_back(e.error);
        }
        for (std::size_t i = 0; i < r.devices.size(); ++i) {
            auto& p = r.devices[i];
            if (i < extras.size() && !extras[i].error.empty()) p.available = false;
            if (p.driver_version.empty()) p.driver_version = header.driver_version;
            if (matchable[i]) {
                nvidia::match_catalogue(p);
            } else {
                // A cut name cannot be looked up; the PCI id still can.
                const std::string keep(p.name.view());
                p.name.assign("");
                nvidia::match_catalogue(p);
                p.name.assign(keep);
            }
        }
        problems.finish();
    }
};

// Up to four path segments: the sections above a value, then its key.
using key_path = std::array<std::string_view, 4>;

struct mapped_key {
    key_path path;
    std::string_view field; // a name of detail::nvidia::field_table
    shape how;
};

constexpr std::size_t path_length(const key_path& p) noexcept {
    std::size_t n = 0;
    while (n < p.size() && !p[n].empty()) ++n;
    return n;
}

// The entry whose path is exactly `segments`, or nullptr.
template <std::size_t N>
constexpr const mapped_key* find_key(const mapped_key (&table)[N], const std::string_view* segments,
                                     std::size_t count) noexcept {
    for (const auto& k : table) {
        if (path_length(k.path) != count) continue;
        bool same = true;
        for (std::size_t i = 0; same && i < count; ++i) same = k.path[i] == segments[i];
        if (same) return &k;
    }
    return nullptr;
}

// `nvidia-smi -q`: sections and keys below "GPU <bus id>". The power limit is "Power
// Limit" under "Power Readings" in older drivers, "Current Power Limit" under "GPU Power
// Readings" from 535 on; "Module Power Readings" (Grace boards) is a different quantity.
// Newer drivers (580 on an H200) print "Average Power Draw", the one-second average that
// --query-gpu's power.draw gives on Ampere and later, and "GPU" under "Utilization".
inline constexpr mapped_key q_keys[] = {
    {{"Product Name"}, "name", shape::plain},
    {{"GPU UUID"}, "uuid", shape::plain},
    {{"PCI", "Bus Id"}, "pci.bus_id", shape::plain},
    {{"PCI", "Device Id"}, "pci.device_id", shape::plain},
    {{"PCI", "GPU Link Info", "PCIe Generation", "Max"}, "pcie.link.gen.max", shape::plain},
    {{"PCI", "GPU Link Info", "PCIe Generation", "Current"}, "pcie.link.gen.current", shape::plain},
    {{"PCI", "GPU Link Info", "Link Width", "Max"}, "pcie.link.width.max", shape::width},
    {{"PCI", "GPU Link Info", "Link Width", "Current"}, "pcie.link.width.current", shape::width},
    {{"FB Memory Usage", "Total"}, "memory.total", shape::plain},
    {{"FB Memory Usage", "Used"}, "memory.used", shape::plain},
    {{"FB Memory Usage", "Free"}, "memory.free", shape::plain},
    {{"Temperature", "GPU Current Temp"}, "temperature.gpu", shape::plain},
    {{"Power Readings", "Power Draw"}, "power.draw", shape::plain},
    {{"Power Readings", "Power Limit"}, "power.limit", shape::plain},
    {{"GPU Power Readings", "Power Draw"}, "power.draw", shape::plain},
    {{"GPU Power Readings", "Current Power Limit"}, "power.limit", shape::plain},
    {{"GPU Power Readings", "Average Power Draw"}, "power.draw", shape::plain},
    {{"Utilization", "Gpu"}, "utilization.gpu", shape::plain},
    {{"Utilization", "GPU"}, "utilization.gpu", shape::plain},
    {{"Max Clocks", "Memory"}, "clocks.max.memory", shape::plain},
    {{"MIG Mode", "Current"}, "mig.mode.current", shape::plain},
};

// `nvidia-smi -q -x`: elements below <gpu>. Driver 535 renamed <power_readings> to
// <gpu_power_readings> and <power_limit> to <current_power_limit>; newer ones (580) give
// <average_power_draw> and <instant_power_draw> instead of <power_draw>.
inline constexpr mapped_key xml_keys[] = {
    {{"product_name"}, "name", shape::plain},
    {{"uuid"}, "uuid", shape::plain},
    {{"pci", "pci_bus_id"}, "pci.bus_id", shape::plain},
    {{"pci", "pci_device_id"}, "pci.device_id", shape::bare_hex},
    {{"pci", "pci_gpu_link_info", "pcie_gen", "max_link_gen"}, "pcie.link.gen.max", shape::plain},
    {{"pci", "pci_gpu_link_info", "pcie_gen", "current_link_gen"}, "pcie.link.gen.current", shape::plain},
    {{"pci", "pci_gpu_link_info", "link_widths", "max_link_width"}, "pcie.link.width.max", shape::width},
    {{"pci", "pci_gpu_link_info", "link_widths", "current_link_width"}, "pcie.link.width.current", shape::width},
    {{"fb_memory_usage", "total"}, "memory.total", shape::plain},
    {{"fb_memory_usage", "used"}, "memory.used", shape::plain},
    {{"fb_memory_usage", "free"}, "memory.free", shape::plain},
    {{"temperature", "gpu_temp"}, "temperature.gpu", shape::plain},
    {{"power_readings", "power_draw"}, "power.draw", shape::plain},
    {{"power_readings", "power_limit"}, "power.limit", shape::plain},
    {{"power_readings", "current_power_limit"}, "power.limit", shape::plain},
    {{"gpu_power_readings", "power_draw"}, "power.draw", shape::plain},
    {{"gpu_power_readings", "current_power_limit"}, "power.limit", shape::plain},
    {{"gpu_power_readings", "average_power_draw"}, "power.draw", shape::plain},
    {{"utilization", "gpu_util"}, "utilization.gpu", shape::plain},
    {{"max_clocks", "mem_clock"}, "clocks.max.memory", shape::plain},
    {{"mig_mode", "current_mig"}, "mig.mode.current", shape::plain},
};

// (Compares names rather than testing find_field's pointer, which GCC's sanitizers do
// not accept in a constant expression.)
constexpr bool is_field_name(std::string_view name) noexcept {
    for (const auto& f : nvidia::field_table)
        if (f.name == name) return true;
    return false;
}
constexpr bool keys_are_mapped() noexcept {
    for (const auto& k : q_keys)
        if (!is_field_name(k.field)) return false;
    for (const auto& k : xml_keys)
        if (!is_field_name(k.field)) return false;
    return true;
}
static_assert(keys_are_mapped(), "nvidia reports: a key maps to a field the cell reader does not know");

// Sections nested deeper than this in `-q` text are not followed (nvidia-smi uses four).
inline constexpr std::size_t max_q_depth = 16;
// Elements nested deeper than this end the XML scan (nvidia-smi uses six).
inline constexpr std::size_t max_xml_depth = 32;
// Text kept per XML element; longer text is cut (values are a few dozen characters).
inline constexpr std::size_t max_xml_text = 4096;

// ---- a small XML scanner ---------------------------------------------------------------

constexpr bool xml_name_char(char c) noexcept {
    return ascii_alnum(c) || c == '_' || c == '-' || c == '.' || c == ':' || static_cast<unsigned char>(c) >= 0x80;
}

// Appends code point `cp` as UTF-8.
inline void append_utf8(std::uint32_t cp, std::string& out) {
    if (cp < 0x80) {
        out += static_cast<char>(cp);
    } else if (cp < 0x800) {
        out += static_cast<char>(0xc0 | (cp >> 6));
        out += static_cast<char>(0x80 | (cp & 0x3f));
    } else if (cp < 0x10000) {
        out += static_cast<char>(0xe0 | (cp >> 12));
        out += static_cast<char>(0x80 | ((cp >> 6) & 0x3f));
        out += static_cast<char>(0x80 | (cp & 0x3f));
    } else {
        out += static_cast<char>(0xf0 | (cp >> 18));
        out += static_cast<char>(0x80 | ((cp >> 12) & 0x3f));
        out += static_cast<char>(0x80 | ((cp >> 6) & 0x3f));
        out += static_cast<char>(0x80 | (cp & 0x3f));
    }
}

// The character an entity or character reference stands for ("amp", "#62", "#x3E"), or
// nullopt: declared entities are never expanded, so a DTD cannot make text grow.
constexpr std::optional<std::uint32_t> xml_entity(std::string_view name) noexcept {
    if (name == "lt"sv) return '<';
    if (name == "gt"sv) return '>';
    if (name == "amp"sv) return '&';
    if (name == "quot"sv) return '"';
    if (name == "apos"sv) return '\'';
    if (name.size() < 2 || name.front() != '#') return std::nullopt;
    std::optional<std::uint32_t> cp;
    if (name[1] == 'x' || name[1] == 'X') {
        cp = detail::parse_hex32(name.substr(2));
    } else {
        const auto d = parse_uint(name.substr(1));
        if (d && *d <= 0x10ffff) cp = static_cast<std::uint32_t>(*d);
    }
    if (!cp || *cp == 0 || *cp > 0x10ffff || (*cp >= 0xd800 && *cp <= 0xdfff)) return std::nullopt;
    return cp;
}

// Appends `raw` with its references decoded, keeping `out` within max_xml_text; `cut` is
// set when something did not fit. An unknown reference is kept as written.
inline void xml_append_text(std::string_view raw, bool decode, std::string& out, bool& cut) {
    for (std::size_t i = 0; i < raw.size(); ++i) {
        if (out.size() >= max_xml_text) {
            cut = true;
            return;
        }
        if (decode && raw[i] == '&') {
            const auto semi = raw.substr(i + 1, 12).find(';');
            if (semi != std::string_view::npos) {
                if (const auto cp = xml_entity(raw.substr(i + 1, semi))) {
                    append_utf8(*cp, out);
                    i += semi + 1;
                    continue;
                }
            }
        }
        out += raw[i];
    }
}

// Reads `doc` once from start to end, calling on_start(path, attributes, line) when an
// element opens and on_end(path, text, cut, line) when it closes, `path` being the names
// of the open elements, innermost last, and `text` the element's own decoded text (after
// its last child). Either callback returns false to stop. Malformed input is reported and
// ends the scan; returns whether the document was read to its end with every element
// closed.
template <class Start, class End>
bool scan_xml(std::string_view doc, problem_sink& problems, Start&& on_start, End&& on_end) {
    std::vector<std::string_view> path;
    std::string text;
    bool cut = false;
    // Line numbers for problems, counted forward as the scan moves forward.
    std::size_t counted_to = 0, line = 1;
    auto line_at = [&](std::size_t pos) {
        for (; counted_to < pos && counted_to < doc.size(); ++counted_to)
            if (doc[counted_to] == '\n') ++line;
        return line;
    };
    auto fail = [&](std::size_t pos, std::string msg) {
        problems.add(line_at(pos), std::move(msg));
        return false;
    };
    bool stray_text = false;
    std::size_t i = 0;
    while (i < doc.size()) {
        if (doc[i] != '<') {
            auto lt = doc.find('<', i);
            if (lt == std::string_view::npos) lt = doc.size();
            const auto run = doc.substr(i, lt - i);
            if (!path.empty()) xml_append_text(run, true, text, cut);
            else if (!trim(run).empty() && !stray_text) {
                // Text outside the root element: not XML, but nothing to stop for.
                stray_text = true;
                problems.add(line_at(i), "text outside any element: " + quote_value(trim(run)));
            }
            i = lt;
            continue;
        }
        const std::string_view rest = doc.substr(i);
        if (rest.starts_with("<?")) {
            const auto e = doc.find("?>", i + 2);
            if (e == std::string_view::npos) return fail(i, "unterminated <? ... ?>");
            i = e + 2;
            continue;
        }
        if (rest.starts_with("<!--")) {
            const auto e = doc.find("-->", i + 4);
            if (e == std::string_view::npos) return fail(i, "unterminated comment");
            i = e + 3;
            continue;
        }
        if (rest.starts_with("<![CDATA[")) {
            const auto e = doc.find("]]>", i + 9);
            if (e == std::string_view::npos) return fail(i, "unterminated CDATA section");
            if (!path.empty()) xml_append_text(doc.substr(i + 9, e - i - 9), false, text, cut);
            i = e + 3;
            continue;
        }
        if (rest.starts_with("<!")) {
            // <!DOCTYPE …> and other declarations, with an internal subset in brackets
            // whose declarations are skipped, never acted on.
            std::size_t j = i + 2, brackets = 0;
            char quote = 0;
            for (; j < doc.size(); ++j) {
                const char c = doc[j];
                if (quote) {
                    if (c == quote) quote = 0;
                } else if (c == '"' || c == '\'') {
                    quote = c;
                } else if (c == '[') {
                    ++brackets;
                } else if (c == ']') {
                    if (brackets) --brackets;
                } else if (c == '>' && brackets == 0) {
                    break;
                }
            }
            if (j >= doc.size()) return fail(i, "unterminated <! declaration");
            i = j + 1;
            continue;
        }
        if (rest.starts_with("</")) {
            const auto gt = doc.find('>', i + 2);
            if (gt == std::string_view::npos) return fail(i, "unterminated end tag");
            const auto name = trim(doc.substr(i + 2, gt - i - 2));
            const std::size_t at = line_at(i);
            i = gt + 1;
            if (!path.empty() && path.back() == name) {
                if (!on_end(std::as_const(path), std::string_view(text), cut, at)) return false;
                path.pop_back();
                text.clear();
                cut = false;
                continue;
            }
            // Mismatched: close up to the named element if it is open, else ignore the tag.
            std::size_t open = path.size();
            while (open > 0 && path[open - 1] != name) --open;
            add_problem(problems, at, [&] {
                return "end tag " + quote_value(name) +
                       (path.empty() ? std::string(" with no open element")
                                     : " does not close " + quote_value(path.back()));
            });
            if (open > 0) path.resize(open - 1);
            text.clear();
            cut = false;
            continue;
        }
        // A start tag: its name, then attributes up to '>' outside quotes.
        std::size_t j = i + 1;
        while (j < doc.size() && xml_name_char(doc[j])) ++j;
        const std::string_view name = doc.substr(i + 1, j - i - 1);
        if (name.empty()) return fail(i, "'<' that opens no tag");
        const std::size_t attr_begin = j;
        char quote = 0;
        for (; j < doc.size(); ++j) {
            const char c = doc[j];
            if (quote) {
                if (c == quote) quote = 0;
            } else if (c == '"' || c == '\'') {
                quote = c;
            } else if (c == '>') {
                break;
            }
        }
        if (j >= doc.size()) return fail(i, "unterminated tag " + quote_value(name));
        std::string_view attrs = doc.substr(attr_begin, j - attr_begin);
        const bool empty_element = !attrs.empty() && attrs.back() == '/';
        if (empty_element) attrs.remove_suffix(1);
        const std::size_t at = line_at(i);
        i = j + 1;
        if (path.size() >= max_xml_depth) {
            problems.add(at, "elements nested deeper than " + std::to_string(max_xml_depth));
            return false;
        }
        path.push_back(name);
        text.clear();
        cut = false;
        if (!on_start(std::as_const(path), attrs, at)) return false;
        if (empty_element) {
            if (!on_end(std::as_const(path), std::string_view{}, false, at)) return false;
            path.pop_back();
        }
    }
    if (!path.empty()) return fail(doc.size(), "the document ends inside " + quote_value(path.back()));
    return true;
}

// The raw value of attribute `name` in a start tag's attribute text, or nullopt.
constexpr std::optional<std::string_view> xml_attribute(std::string_view attrs, std::string_view name) noexcept {
    std::size_t i = 0;
    while (i < attrs.size()) {
        while (i < attrs.size() && ascii_space(attrs[i])) ++i;
        const std::size_t n0 = i;
        while (i < attrs.size() && xml_name_char(attrs[i])) ++i;
        const std::string_view n = attrs.substr(n0, i - n0);
        while (i < attrs.size() && ascii_space(attrs[i])) ++i;
        if (n.empty() || i >= attrs.size() || attrs[i] != '=') return std::nullopt;
        ++i;
        while (i < attrs.size() && ascii_space(attrs[i])) ++i;
        if (i >= attrs.size() || (attrs[i] != '"' && attrs[i] != '\'')) return std::nullopt;
        const char q = attrs[i++];
        const auto close = attrs.find(q, i);
        if (close == std::string_view::npos) return std::nullopt;
        if (n == name) return attrs.substr(i, close - i);
        i = close + 1;
    }
    return std::nullopt;
}

// ---- the default table -------------------------------------------------------------------

// The cells of a "|…|…|…|" row: up to four, `count` says how many there were (5 = more).
struct table_cells {
    std::array<std::string_view, 4> cell{};
    std::size_t count = 0;
};
constexpr table_cells split_row(std::string_view line) noexcept {
    table_cells t;
    line = trim(line);
    if (line.size() < 2 || line.front() != '|' || line.back() != '|') return t;
    line = line.substr(1, line.size() - 2);
    for (;;) {
        const auto bar = line.find('|');
        if (t.count < t.cell.size()) t.cell[t.count] = line.substr(0, bar);
        ++t.count;
        if (t.count > t.cell.size() || bar == std::string_view::npos) break;
        line.remove_prefix(bar + 1);
    }
    return t;
}

// The blank-separated words of a cell, up to eight.
struct words {
    std::array<std::string_view, 8> w{};
    std::size_t count = 0;
};
constexpr words split_words(std::string_view s) noexcept {
    words out;
    for (;;) {
        s = trim(s);
        if (s.empty() || out.count == out.w.size()) return out;
        std::size_t e = 0;
        while (e < s.size() && !ascii_space(s[e])) ++e;
        out.w[out.count++] = s.substr(0, e);
        s.remove_prefix(e);
    }
}

// "72W" -> "72" when it ends with `unit`; "N/A" and anything else as written, so the cell
// reader keeps N/A unknown and reports the rest.
constexpr std::string_view without_suffix(std::string_view v, std::string_view unit) noexcept {
    return v.size() > unit.size() && v.ends_with(unit) ? v.substr(0, v.size() - unit.size()) : v;
}

} // namespace detail::nvidia_reports

/// Reads `nvidia-smi -q`: a "Driver Version" in the header, then one "GPU <bus id>" section
/// per GPU whose keys are indented under their sections. Mapped: Product Name, GPU UUID,
/// PCI Bus Id and Device Id, PCIe generation and width (max and current), FB memory
/// total/used/free, GPU Current Temp, power draw and limit (before and after the driver-535
/// layout), Gpu utilization, the maximum memory clock and the current MIG mode (into
/// `mig_enabled`). Other keys, the Processes sections among them, are skipped. Devices are
/// indexed in report order (which is nvidia-smi's index order). A count in "Attached GPUs"
/// that differs from the sections found is a problem (a cut report). Linear in the input.
inline nvidia_query_result parse_nvidia_smi_q(std::string_view text) {
    using namespace detail::nvidia_reports;
    nvidia_query_result r;
    report_builder b{r};
    struct section {
        std::size_t indent;
        std::string_view name;
    };
    std::vector<section> stack; // the GPU's header first, then its open sections
    std::array<std::string_view, max_q_depth + 1> segments{};
    std::optional<std::uint64_t> announced;
    bool banner = false, any_gpu = false, content = false;
    std::size_t number = 0;
    detail::formats::each_line(text, [&](std::string_view raw) {
        ++number;
        std::size_t indent = 0;
        while (indent < raw.size() && (raw[indent] == ' ' || raw[indent] == '\t')) ++indent;
        const std::string_view line = detail::trim(raw.substr(indent));
        if (line.empty()) return true;
        content = true;
        while (!stack.empty() && stack.back().indent >= indent) stack.pop_back();

        // "Key<blanks>: value" (the value may be empty); anything else opens a section.
        auto sep = line.find(" :");
        if (sep != std::string_view::npos && sep + 2 < line.size() && line[sep + 2] != ' ')
            sep = std::string_view::npos;
        if (sep == std::string_view::npos) {
            if (indent == 0) {
                b.end_gpu();
                if (line.find("NVSMI LOG") != std::string_view::npos) banner = true;
                if (line.starts_with("GPU ")) {
                    const auto address = parse_pci_address(line.substr(4));
                    if (!address) {
                        add_problem(b.problems, number,
                                    [&] { return "GPU section without a PCI address: " + quote_value(line); });
                        return true;
                    }
                    any_gpu = true;
                    if (b.begin_gpu(number)) {
                        r.devices.back().pci = *address;
                        stack.push_back({0, line});
                    }
                }
                return true;
            }
            if (!stack.empty() && stack.size() <= max_q_depth) stack.push_back({indent, line});
            return true;
        }
        const std::string_view key = detail::trim(line.substr(0, sep));
        const std::string_view value = detail::trim(line.substr(sep + 2));
        if (indent == 0) {
            if (key == "Driver Version"sv) b.set_driver(value, number);
            else if (key == "Attached GPUs"sv) announced = parse_uint(value);
            return true;
        }
        if (stack.empty() || !b.active) return true;
        std::size_t n = 0;
        for (std::size_t s = 1; s < stack.size() && n < max_q_depth; ++s) segments[n++] = stack[s].name;
        segments[n++] = key;
        if (const auto* k = find_key(q_keys, segments.data(), n)) b.set(k->field, k->how, value, number);
        return true;
    });
    if (content && !banner && !any_gpu)
        b.problems.add(0, "not nvidia-smi -q output: no NVSMI LOG banner and no GPU section");
    // Fewer sections than attached GPUs is what `nvidia-smi -q -i 0` prints (the count is
    // of every GPU, the sections of those selected): a problem only where the text stops
    // mid-line, as a cut report does. More sections than GPUs is never right.
    const bool mid_line = !text.empty() && text.back() != '\n';
    if (announced && !b.full &&
        (*announced < r.devices.size() || (*announced > r.devices.size() && mid_line)))
        b.problems.add(0, "the report announces " + std::to_string(*announced) + " GPUs but has " +
                              std::to_string(r.devices.size()) + " GPU sections" +
                              (mid_line ? " (cut short: it ends mid-line)" : ""));
    b.finish();
    return r;
}

/// Reads `nvidia-smi -q -x`: <nvidia_smi_log> with <driver_version> and one <gpu> element
/// per GPU, the same values as parse_nvidia_smi_q under their XML names (the 510/515 and
/// 535 schemas both). The XML is scanned once, without recursion; malformed XML ends the
/// scan with a problem, keeping the GPUs read so far.
inline nvidia_query_result parse_nvidia_smi_xml(std::string_view text) {
    using namespace detail::nvidia_reports;
    nvidia_query_result r;
    report_builder b{r};
    std::optional<std::uint64_t> announced;
    bool rooted = false;
    if (text.starts_with("\xEF\xBB\xBF")) text.remove_prefix(3); // a byte-order mark
    const bool complete = scan_xml(
        text, b.problems,
        [&](const std::vector<std::string_view>& path, std::string_view attrs, std::size_t line) {
            if (path.size() == 1) {
                if (path[0] != "nvidia_smi_log"sv) {
                    b.problems.add(line, "the root element is " + quote_value(path[0]) + ", not nvidia_smi_log");
                    return false;
                }
                rooted = true;
            }
            if (path.size() == 2 && path[1] == "gpu"sv && b.begin_gpu(line)) {
                // <gpu id="00000000:01:00.0">: the bus id, until <pci_bus_id> says it again.
                if (const auto id = xml_attribute(attrs, "id")) {
                    if (const auto a = parse_pci_address(*id)) r.devices.back().pci = *a;
                }
            }
            return true;
        },
        [&](const std::vector<std::string_view>& path, std::string_view value, bool cut, std::size_t line) {
            if (path.size() == 2) {
                if (path[1] == "gpu"sv) b.end_gpu();
                else if (path[1] == "driver_version"sv) b.set_driver(value, line);
                else if (path[1] == "attached_gpus"sv) announced = parse_uint(detail::trim(value));
                return true;
            }
            if (path.size() < 3 || path[1] != "gpu"sv || !b.active) return true;
            const auto* k = find_key(xml_keys, path.data() + 2, path.size() - 2);
            if (!k) return true;
            if (cut) {
                b.problems.add(line, std::string(path.back()) + ": value longer than " +
                                         std::to_string(max_xml_text) + " characters, ignored");
                return true;
            }
            b.set(k->field, k->how, value, line);
            return true;
        });
    if (!rooted && !detail::trim(text).empty() && r.problems.empty())
        b.problems.add(0, "no <nvidia_smi_log> element: not nvidia-smi -q -x output");
    // A whole document with fewer <gpu> elements than attached GPUs is `-q -x -i 0`.
    if (complete && announced && *announced < r.devices.size() && !b.full)
        b.problems.add(0, "the report announces " + std::to_string(*announced) + " GPUs but has " +
                              std::to_string(r.devices.size()) + " <gpu> elements");
    b.finish();
    return r;
}

/// Reads the table plain `nvidia-smi` prints: the driver version from its header, then per
/// GPU a first row (index, name, persistence mode or Windows driver model, bus id), a
/// second (fan, temperature, performance state, power draw / cap, memory used / total,
/// utilization) and, in newer layouts, a third with the MIG mode alone. The table cuts long
/// names with "...": such a name is kept as printed but never looked up in the catalogue.
/// The MIG devices and Processes tables that follow are not read. Linux and Windows
/// (WDDM/TCC) layouts, old and new column widths.
inline nvidia_query_result parse_nvidia_smi_table(std::string_view text) {
    using namespace detail::nvidia_reports;
    nvidia_query_result r;
    report_builder b{r};
    bool header = false, done = false, second_row_due = false, third_row_due = false, content = false;
    std::size_t number = 0;
    auto set = [&](std::string_view field, std::string_view value) {
        if (value == "ERR!"sv) b.problems.add(number, std::string(field) + " reported ERR!");
        else b.set(field, shape::plain, value, number);
    };
    detail::formats::each_line(text, [&](std::string_view raw) {
        ++number;
        const std::string_view line = detail::trim(raw);
        if (line.empty()) return true;
        content = true;
        if (line.find("Processes:") != std::string_view::npos || line.find("MIG devices:") != std::string_view::npos) {
            done = true;
            return false;
        }
        if (const auto dv = line.find("Driver Version:"); dv != std::string_view::npos && line.front() == '|') {
            header = true;
            const auto w = split_words(line.substr(dv + 15));
            if (w.count > 0) b.set_driver(w.w[0], number);
            return true;
        }
        const auto row = split_row(line);
        if (row.count != 3) return true; // rules, column titles, anything not a GPU row
        if (third_row_due) {
            third_row_due = false;
            // "|                 |              |   Disabled |": the MIG mode, under "MIG M."
            if (detail::trim(row.cell[0]).empty() && detail::trim(row.cell[1]).empty()) {
                set("mig.mode.current", detail::trim(row.cell[2]));
                return true;
            }
        }
        if (second_row_due) {
            second_row_due = false;
            // Fan  Temp  Perf  Pwr:Usage/Cap | Memory-Usage | GPU-Util  Compute M.
            const auto a = split_words(row.cell[0]);
            const auto m = split_words(row.cell[1]);
            const auto u = split_words(row.cell[2]);
            if (a.count >= 2 && m.count == 3 && m.w[1] == "/"sv) {
                set("temperature.gpu", without_suffix(a.w[1], "C"));
                for (std::size_t k = 1; k + 1 < a.count; ++k) {
                    if (a.w[k] != "/"sv) continue;
                    set("power.draw", without_suffix(a.w[k - 1], "W"));
                    set("power.limit", without_suffix(a.w[k + 1], "W"));
                    break;
                }
                set("memory.used", without_suffix(m.w[0], "MiB"));
                set("memory.total", without_suffix(m.w[2], "MiB"));
                if (u.count > 0) set("utilization.gpu", without_suffix(u.w[0], "%"));
                third_row_due = true;
                return true;
            }
            // Missing: say so, and see whether the row starts the next GPU.
            b.problems.add(number, "GPU " + std::to_string(r.devices.back().index) + ": its second row is missing");
        }
        // First row: "<index>  <name>  <On|Off|WDDM|TCC>" | "<bus id> <Disp.A>" | ECC
        const std::string_view first = detail::trim(row.cell[0]);
        std::size_t sp = 0;
        while (sp < first.size() && !detail::ascii_space(first[sp])) ++sp;
        const auto index = parse_uint(first.substr(0, sp));
        const auto bus = split_words(row.cell[1]);
        const auto address = bus.count > 0 ? parse_pci_address(bus.w[0]) : std::nullopt;
        if (!index || !address) return true; // a row of another table
        if (*index > 0xffff) {
            add_problem(b.problems, number,
                        [&] { return "GPU index out of range: " + quote_value(first.substr(0, sp)); });
            return true;
        }
        if (!b.begin_gpu(number)) return false;
        second_row_due = true;
        auto& p = r.devices.back();
        p.index = static_cast<std::uint32_t>(*index);
        p.pci = *address;
        // The mode column is set off from the name by blanks; the name fills the rest.
        std::string_view name = detail::trim(first.substr(sp));
        if (const auto gap = name.rfind("  "); gap != std::string_view::npos) {
            name = detail::trim(name.substr(0, gap));
        } else if (const auto last = name.rfind(' '); last != std::string_view::npos) {
            const auto mode = name.substr(last + 1);
            if (mode == "On"sv || mode == "Off"sv || mode == "WDDM"sv || mode == "TCC"sv)
                name = detail::trim(name.substr(0, last));
        }
        if (name.ends_with("...")) b.matchable.back() = 0;
        b.set("name", shape::plain, name, number);
        return true;
    });
    if (second_row_due && !done) b.problems.add(number, "the table ends before the last GPU's second row");
    if (content && !header && r.devices.empty())
        b.problems.add(0, "not the nvidia-smi table: no \"Driver Version:\" header and no GPU row");
    b.finish();
    return r;
}

namespace detail::formats {

// nvidia-smi -q ------------------------------------------------------------------------------
inline int sniff_nvidia_smi_q(std::string_view t) noexcept {
    const auto first = first_non_blank_line(t);
    return first.starts_with("==") && first.find("NVSMI LOG") != std::string_view::npos ? 90 : 0;
}
inline void parse_nvidia_smi_q_capture(std::string_view t, capture_parse& out) {
    auto r = parse_nvidia_smi_q(t);
    nvidia::problems_to_warnings(r.problems, out.format, out.warnings);
    nvidia::device_errors_to_warnings(r, out.format, out.warnings);
    if (r.devices.empty() && r.problems.empty()) nothing_found(out, "GPU sections");
    out.devices = std::move(r.devices);
}

// nvidia-smi -q -x ---------------------------------------------------------------------------
inline int sniff_nvidia_smi_xml(std::string_view t) noexcept {
    if (t.starts_with("\xEF\xBB\xBF")) t.remove_prefix(3);
    t = trim(t.substr(0, 1024));
    if (!t.starts_with('<')) return 0;
    return t.find("<nvidia_smi_log>") != std::string_view::npos ||
                   t.find("<!DOCTYPE nvidia_smi_log") != std::string_view::npos
               ? 90
               : 0;
}
inline void parse_nvidia_smi_xml_capture(std::string_view t, capture_parse& out) {
    auto r = parse_nvidia_smi_xml(t);
    nvidia::problems_to_warnings(r.problems, out.format, out.warnings);
    nvidia::device_errors_to_warnings(r, out.format, out.warnings);
    if (r.devices.empty() && r.problems.empty()) nothing_found(out, "<gpu> elements");
    out.devices = std::move(r.devices);
}

// nvidia-smi (the default table) -------------------------------------------------------------
inline int sniff_nvidia_smi_table(std::string_view t) noexcept {
    int seen = 0, score = 0;
    each_line(t, [&](std::string_view line) {
        line = trim(line);
        if (line.empty()) return true;
        if (line.front() == '|' && line.find("NVIDIA-SMI ") != std::string_view::npos &&
            line.find("Driver Version:") != std::string_view::npos)
            score = 90;
        return score == 0 && ++seen < 4; // a timestamp line and the top rule may come first
    });
    return score;
}
inline void parse_nvidia_smi_table_capture(std::string_view t, capture_parse& out) {
    auto r = parse_nvidia_smi_table(t);
    nvidia::problems_to_warnings(r.problems, out.format, out.warnings);
    nvidia::device_errors_to_warnings(r, out.format, out.warnings);
    if (r.devices.empty() && r.problems.empty()) nothing_found(out, "GPU rows");
    out.devices = std::move(r.devices);
}

} // namespace detail::formats

AI_HWACCEL_NAMESPACE_END

#endif // AI_HWACCEL_BACKEND_CUDA
