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

#include <optional>
#include <string>
#include <string_view>
#include <vector>

AI_HWACCEL_NAMESPACE_BEGIN

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
