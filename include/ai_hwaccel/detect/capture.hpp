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
/// whole) and what was wrong, for people. Every backend's parsers report these.
struct parse_problem {
    std::size_t line = 0;
    std::string message;
    friend bool operator==(const parse_problem&, const parse_problem&) = default;
};

/// What one captured output said.
struct capture_parse {
    std::string_view format; ///< the row's name
    std::vector<accelerator_profile> devices;
    std::optional<host_info> host;   ///< set when the input describes the host
    std::optional<system_io> system; ///< set when it describes storage, links, environment
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

// Printable UTF-8 or a question mark where it is not: names and versions end up in JSON
// and terminals.
inline std::string printable(std::string_view s, bool& changed) {
    std::string out;
    out.reserve(s.size());
    changed = false;
    for (std::size_t i = 0; i < s.size();) {
        const auto c = static_cast<unsigned char>(s[i]);
        std::size_t n = c < 0x80 ? 1 : (c >> 5) == 0x6 ? 2 : (c >> 4) == 0xe ? 3 : (c >> 3) == 0x1e ? 4 : 0;
        bool ok = n != 0 && i + n <= s.size() && !(n == 1 && (c < 0x20 || c == 0x7f));
        for (std::size_t k = 1; ok && k < n; ++k)
            ok = (static_cast<unsigned char>(s[i + k]) & 0xC0u) == 0x80u;
        if (!ok) {
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

struct problem_sink {
    std::vector<parse_problem>& out;
    std::size_t dropped = 0;
    void add(std::size_t line, std::string msg) {
        if (out.size() < max_problems) out.push_back({line, std::move(msg)});
        else ++dropped;
    }
    void finish() {
        if (dropped) out.push_back({0, std::to_string(dropped) + " more problems not listed"});
    }
};

inline std::string quote_value(std::string_view v) {
    bool changed = false;
    std::string s = printable(v.substr(0, 40), changed);
    return "\"" + s + (v.size() > 40 ? "...\"" : "\"");
}

// Parse problems as warnings of `backend` about `subject` ("nvidia-smi", "rocm-smi").
inline void problems_to_warnings(const std::vector<parse_problem>& problems, std::optional<backend_id> backend,
                                 std::string_view subject, std::vector<warning>& out) {
    for (const auto& pr : problems)
        out.push_back(warning{warning_kind::parse_error, backend, std::string(subject),
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

AI_HWACCEL_NAMESPACE_END
