// ai-hwaccel detect: the shape of a captured output once read.
//
// `capture_parse` is what reading one captured tool output or system file yields;
// `capture_format` is one row of the table of formats (detect/formats.hpp) that
// `ai-hwaccel parse` consults. Backend headers include this to offer their own rows, and
// the helpers below are shared by their sniffers.
#pragma once

#include "ai_hwaccel/config.hpp"
#include "ai_hwaccel/core/profile.hpp"
#include "ai_hwaccel/core/system_io.hpp"
#include "ai_hwaccel/core/text.hpp"
#include "ai_hwaccel/core/warning.hpp"

#include <charconv>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <system_error>
#include <utility>
#include <vector>

AI_HWACCEL_NAMESPACE_BEGIN

/// Something a tool-output parser could not read: the 1-based line (0 for the input as a
/// whole), what was wrong, for people, and the warning it becomes (`value_out_of_range`
/// for a number no device reports, as one past 2^64; `parse_error` otherwise). Every
/// backend's parsers report these.
struct parse_problem {
    std::size_t line = 0;
    std::string message;
    warning_kind kind = warning_kind::parse_error;
    friend bool operator==(const parse_problem&, const parse_problem&) = default;
};

/// What one captured output said.
struct capture_parse {
    std::string_view format; ///< the row's name
    std::vector<accelerator_profile> devices;
    std::optional<host_info> host;   ///< set when the input describes the host
    std::optional<system_io> system; ///< set when it describes storage, links, environment
    /// The driver version the input gives for the whole machine (rocm-smi's system row),
    /// also where it lists no device to carry it; empty when it gives none.
    std::string driver_version;
    std::vector<warning> warnings;
};

struct capture_format {
    std::string_view name;    ///< stable, for --format ("proc-cpuinfo")
    std::string_view command; ///< how the capture is made ("cat /proc/cpuinfo")
    int (*sniff)(std::string_view text) noexcept;
    void (*parse)(std::string_view text, capture_parse& out);
};

namespace detail::parsing {

// The building blocks every tool-output parser shares: strict numbers, printable text,
// and a bounded list of problems.

inline std::optional<std::uint64_t> parse_uint(std::string_view s) noexcept {
    std::uint64_t v = 0;
    const auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    if (ec != std::errc{} || p != s.data() + s.size() || s.empty()) return std::nullopt;
    return v;
}

inline std::optional<double> parse_real(std::string_view s) noexcept {
    if (s.empty() || !((s.front() >= '0' && s.front() <= '9') || s.front() == '-')) return std::nullopt;
    double v = 0;
    const auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    if (ec != std::errc{} || p != s.data() + s.size() || !std::isfinite(v)) return std::nullopt;
    return v;
}

// `s` without its terminal escape sequences (escape_length): some tools underline or
// colour their tables even when their output goes to a pipe.
inline std::string without_escapes(std::string_view s) {
    std::string out;
    out.reserve(s.size());
    for (std::size_t i = 0; i < s.size();) {
        if (const std::size_t n = escape_length(s.substr(i))) {
            i += n;
            continue;
        }
        out += s[i++];
    }
    return out;
}

// Printable UTF-8 or a question mark where it is not (a control byte, or a byte that
// starts no well-formed character: utf8_length_at): names and versions end up in JSON
// and terminals. With `cap`, at most its first `cap` bytes (utf8_prefix: a character the
// cut would split is left out, not made a '?').
inline std::string printable(std::string_view s, bool& changed, std::size_t cap = std::string_view::npos) {
    s = utf8_prefix(s, cap);
    std::string out;
    out.reserve(s.size());
    changed = false;
    for (std::size_t i = 0; i < s.size();) {
        const auto c = static_cast<unsigned char>(s[i]);
        const std::size_t n = utf8_length_at(s, i);
        if (n == 0 || (n == 1 && (c < 0x20 || c == 0x7f))) {
            out += '?';
            changed = true;
            ++i;
            continue;
        }
        out.append(s.substr(i, n));
        i += n;
    }
    return out;
}

// Problems are capped so that a megabyte of garbage does not become a megabyte of
// warnings; the last entry says how many more there were.
inline constexpr std::size_t max_problems = 16;
// No machine has more GPUs than this; anything beyond is garbage.
inline constexpr std::size_t max_rows = 1024;

/// What a parser says of one value: nothing (an empty message) when the value is fine.
/// Built from a message alone it is a parse error.
struct value_problem {
    std::string message;
    warning_kind kind = warning_kind::parse_error;

    value_problem() = default;
    value_problem(std::string m, warning_kind k = warning_kind::parse_error) // NOLINT: a message is a problem
        : message(std::move(m)), kind(k) {}
    value_problem(const char* m) : message(m) {} // NOLINT: as the string
    bool empty() const noexcept { return message.empty(); }
};

struct problem_sink {
    std::vector<parse_problem>& out;
    std::size_t dropped = 0;
    void add(std::size_t line, std::string msg, warning_kind kind = warning_kind::parse_error) {
        if (out.size() < max_problems) out.push_back({line, std::move(msg), kind});
        else ++dropped;
    }
    void add_problem(std::size_t line, value_problem p) { add(line, std::move(p.message), p.kind); }
    void finish() {
        if (dropped) out.push_back({0, std::to_string(dropped) + " more problems not listed"});
    }
};

inline std::string quote_value(std::string_view v) {
    bool changed = false;
    std::string s = printable(v, changed, 40);
    return "\"" + s + (v.size() > 40 ? "...\"" : "\"");
}

// Parse problems as warnings of `backend` about `subject` ("nvidia-smi", "rocm-smi").
inline void problems_to_warnings(const std::vector<parse_problem>& problems, std::optional<backend_id> backend,
                                 std::string_view subject, std::vector<warning>& out) {
    for (const auto& pr : problems)
        out.push_back(warning{pr.kind, backend, std::string(subject),
                              pr.line ? "line " + std::to_string(pr.line) + ": " + pr.message : pr.message, 0});
}

} // namespace detail::parsing

namespace detail::formats {

// Calls f(line) for each line (without its end of line) until f returns false.
template <class F>
constexpr void each_line(std::string_view text, F&& f) {
    while (!text.empty()) {
        const auto nl = text.find('\n');
        std::string_view line = text.substr(0, nl);
        if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
        if (!f(line)) return;
        if (nl == std::string_view::npos) return;
        text.remove_prefix(nl + 1);
    }
}

// "key<blanks>: value" with exactly this key.
constexpr bool has_key_line(std::string_view text, std::string_view key) noexcept {
    bool found = false;
    each_line(text, [&](std::string_view line) {
        if (line.starts_with(key)) {
            std::string_view rest = line.substr(key.size());
            while (!rest.empty() && (rest.front() == ' ' || rest.front() == '\t')) rest.remove_prefix(1);
            if (!rest.empty() && rest.front() == ':') found = true;
        }
        return !found;
    });
    return found;
}

constexpr std::string_view first_non_blank_line(std::string_view text) noexcept {
    std::string_view first;
    each_line(text, [&](std::string_view line) {
        if (trim(line).empty()) return true;
        first = trim(line);
        return false;
    });
    return first;
}

inline void nothing_found(capture_parse& out, std::string_view what) {
    out.warnings.push_back(warning{warning_kind::parse_error, std::nullopt, std::string(out.format),
                                   std::string("no ") + std::string(what) + " found in the input", 0});
}

} // namespace detail::formats

namespace detail::parsing {

// The CSV of a vendor tool's query mode (`nvidia-smi --query-gpu=… --format=csv`,
// `hl-smi -Q … -f csv`): one line per device, comma-separated values, optionally under a
// header line naming the fields, each with its unit in brackets ("memory.used [MiB]").
// What differs between tools (the fields they know, the characters of their field names,
// their markers for a missing value, how a cell becomes a profile) stays with the backend.

// One field a reader maps: its name as the tool spells it, the reader's own id for it
// (an enum whose `ignored` stands for a field it does not map), and the unit the tool
// appends to its values unless told `nounits` ("" for none).
template <class Field>
struct query_field {
    std::string_view name;
    Field id;
    std::string_view unit;
};

template <class Field, std::size_t N>
constexpr const query_field<Field>* find_query_field(const query_field<Field> (&table)[N],
                                                     std::string_view name) noexcept {
    for (const auto& f : table)
        if (f.name == name) return &f;
    return nullptr;
}

// Whether `table` maps every name of `fields` (what a probe asks for). Compares names, not
// the pointer find_query_field returns: GCC's sanitizers make a pointer test non-constant.
template <class Names, class Field, std::size_t N>
constexpr bool fields_are_mapped(const Names& fields, const query_field<Field> (&table)[N]) noexcept {
    for (std::string_view f : fields) {
        bool mapped = false;
        for (const auto& row : table) mapped = mapped || row.name == f;
        if (!mapped) return false;
    }
    return true;
}

// A header cell without its unit: "memory.total [MiB]" -> "memory.total".
constexpr std::string_view header_name(std::string_view cell) noexcept {
    cell = trim(cell);
    if (const auto b = cell.find(" ["); b != std::string_view::npos && !cell.empty() && cell.back() == ']')
        cell = trim(cell.substr(0, b));
    return cell;
}

// A cell that can be a field name: lowercase letters, digits and the tool's own
// `punctuation` ("._" for nvidia-smi), from a letter.
constexpr bool looks_like_field_name(std::string_view s, std::string_view punctuation) noexcept {
    if (s.empty() || !(s.front() >= 'a' && s.front() <= 'z')) return false;
    for (char c : s)
        if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || punctuation.find(c) != std::string_view::npos))
            return false;
    return true;
}

// Calls f(cell) for each comma-separated cell of `line`, trimmed.
template <class F>
constexpr void each_cell(std::string_view line, F&& f) {
    for (;;) {
        const auto comma = line.find(',');
        f(trim(line.substr(0, comma)));
        if (comma == std::string_view::npos) return;
        line.remove_prefix(comma + 1);
    }
}

// The header line of a query CSV: every cell a field name (units in brackets allowed), and
// at least one a unit or a field of `table`, so a data row of lowercase words is not taken
// for one.
template <class Field, std::size_t N>
constexpr bool is_query_header(std::string_view line, const query_field<Field> (&table)[N],
                               std::string_view punctuation) noexcept {
    bool all_names = true, anchored = false;
    each_cell(line, [&](std::string_view cell) {
        const auto n = header_name(cell);
        if (!looks_like_field_name(n, punctuation)) all_names = false;
        if (n.size() != cell.size() || find_query_field(table, n)) anchored = true;
    });
    return all_names && anchored;
}

// What every query CSV reader does around its rows: names the columns from `fields` (the
// list given to the tool) or from a header line on the first non-blank line (which wins),
// skips rows whose number of values is not the number of columns, stops after max_rows
// rows, and reports all of it to `problems`. Each row that is kept goes to
// row(line, number, columns), `columns` holding the field of each cell in order (an
// `ignored` one for a name the table lacks). A line that is not a header goes first to
// other(line, number), which takes it (returns true: it counts as a row) or leaves it.
struct no_other_lines {
    constexpr bool operator()(std::string_view, std::size_t) const noexcept { return false; }
};
template <class Field, std::size_t N, class Row, class Other = no_other_lines>
void read_query_csv(std::string_view text, std::string_view fields, const query_field<Field> (&table)[N],
                    std::string_view punctuation, problem_sink& problems, Row&& row, Other&& other = Other{}) {
    std::vector<const query_field<Field>*> columns;
    auto set_columns = [&](std::string_view list, std::size_t line) {
        columns.clear();
        each_cell(list, [&](std::string_view cell) {
            static constexpr query_field<Field> unmapped{"", Field::ignored, ""};
            const auto n = header_name(cell);
            const query_field<Field>* f = find_query_field(table, n);
            if (!f) {
                if (!looks_like_field_name(n, punctuation)) problems.add(line, "not a field name: " + quote_value(n));
                f = &unmapped;
            }
            columns.push_back(f);
        });
    };
    if (!trim(fields).empty()) set_columns(fields, 0);

    std::size_t number = 0, rows = 0;
    bool first = true;
    detail::formats::each_line(text, [&](std::string_view line) {
        ++number;
        line = trim(line);
        if (line.empty()) return true;
        if (first) {
            first = false;
            if (is_query_header(line, table, punctuation)) {
                const auto given = columns.size();
                set_columns(line, number);
                if (given != 0 && given != columns.size())
                    problems.add(number, "the header names " + std::to_string(columns.size()) +
                                             " fields, the query " + std::to_string(given) + "; the header is used");
                return true;
            }
        }
        if (columns.empty()) {
            problems.add(0, "no header line and no field list: the columns cannot be named");
            return false;
        }
        if (rows >= max_rows) {
            problems.add(number, "more than " + std::to_string(max_rows) + " rows; the rest ignored");
            return false;
        }
        if (other(line, number)) {
            ++rows;
            return true;
        }
        std::size_t cells = 0;
        each_cell(line, [&](std::string_view) { ++cells; });
        if (cells != columns.size()) {
            problems.add(number, std::to_string(cells) + " values for " + std::to_string(columns.size()) +
                                     " fields; row skipped");
            return true;
        }
        ++rows;
        row(line, number, columns);
        return true;
    });
}

} // namespace detail::parsing

AI_HWACCEL_NAMESPACE_END
