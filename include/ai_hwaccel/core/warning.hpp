// ai-hwaccel core: typed warnings.
//
// Detection never fails: whatever goes wrong (a tool missing, hanging, crashing, printing
// garbage; a file unreadable) becomes a warning in the registry, with a kind a program
// can switch on and a message a person can read.
#pragma once

#include "ai_hwaccel/config.hpp"
#include "ai_hwaccel/core/backend.hpp"
#include "ai_hwaccel/core/taxonomy.hpp"

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

AI_HWACCEL_NAMESPACE_BEGIN

enum class warning_kind : std::uint8_t {
    tool_not_found,      ///< the tool is not installed in any trusted folder
    tool_not_executable, ///< found, but not a regular executable file
    tool_timed_out,      ///< killed after its time limit (the whole process group)
    tool_failed,         ///< exited with a non-zero status (`code`)
    tool_signalled,      ///< killed by a signal (`code` is the signal number)
    output_truncated,    ///< output exceeded the byte cap and was cut
    parse_error,         ///< output or file content not understood
    permission_denied,   ///< a file or device was not readable by this user
    read_error,          ///< any other I/O failure
    unsafe_path_ignored, ///< a relative or empty PATH entry, or a folder anyone may write in, was skipped
    value_out_of_range,  ///< a number outside what any real device reports
    not_compiled,        ///< asked for a backend this build does not contain
    disagreement,        ///< two sources disagree; the message says which was chosen
    cache_invalid,       ///< a cache file was corrupt, foreign or newer; re-detected
    hidden_by_mask,      ///< a *_VISIBLE_DEVICES-style variable hides the device
    probe_failed,        ///< a probe stopped on an internal error (out of memory, …)
};
inline constexpr std::size_t warning_kind_count = 16;

struct warning_kind_info {
    warning_kind id;
    std::string_view name;
};
inline constexpr std::array<warning_kind_info, warning_kind_count> warning_kind_table{{
    {warning_kind::tool_not_found, "tool_not_found"},
    {warning_kind::tool_not_executable, "tool_not_executable"},
    {warning_kind::tool_timed_out, "tool_timed_out"},
    {warning_kind::tool_failed, "tool_failed"},
    {warning_kind::tool_signalled, "tool_signalled"},
    {warning_kind::output_truncated, "output_truncated"},
    {warning_kind::parse_error, "parse_error"},
    {warning_kind::permission_denied, "permission_denied"},
    {warning_kind::read_error, "read_error"},
    {warning_kind::unsafe_path_ignored, "unsafe_path_ignored"},
    {warning_kind::value_out_of_range, "value_out_of_range"},
    {warning_kind::not_compiled, "not_compiled"},
    {warning_kind::disagreement, "disagreement"},
    {warning_kind::cache_invalid, "cache_invalid"},
    {warning_kind::hidden_by_mask, "hidden_by_mask"},
    {warning_kind::probe_failed, "probe_failed"},
}};
static_assert(detail::table_is_indexed_and_unique(warning_kind_table));

constexpr std::string_view to_string(warning_kind k) noexcept {
    return warning_kind_table[static_cast<std::size_t>(k)].name;
}
constexpr std::optional<warning_kind> parse_warning_kind(std::string_view s) noexcept {
    return detail::parse_by_name<warning_kind>(warning_kind_table, s);
}

struct warning {
    warning_kind kind = warning_kind::read_error;
    std::optional<backend_id> backend; ///< empty for host-level probes (CPU, memory, …)
    std::string subject;               ///< the tool or path concerned
    std::string message;               ///< for people; never parsed
    std::int32_t code = 0;             ///< exit status or signal number where relevant

    friend bool operator==(const warning&, const warning&) = default;
};

/// "cuda: nvidia-smi: tool_timed_out: killed after 5 s".
inline std::string to_string(const warning& w) {
    std::string s;
    if (w.backend) {
        s += to_string(*w.backend);
        s += ": ";
    }
    if (!w.subject.empty()) {
        s += w.subject;
        s += ": ";
    }
    s += to_string(w.kind);
    if (!w.message.empty()) {
        s += ": ";
        s += w.message;
    }
    return s;
}

AI_HWACCEL_NAMESPACE_END
