// ai-hwaccel detect: what a backend probe is.
//
// A probe is a small type that names its backend and, given a system_view, returns what
// it found: device profiles, the links between them, and warnings. It never throws for
// anything the machine does (a missing tool, a hung driver, garbage output all become
// warnings) and reads the machine only through the view, so the same probe runs against
// the live host, a captured machine tree, or a test double.
//
//     struct my_probe {
//         static constexpr backend_id backend = backend_id::cuda;
//         template <system_view S> probe_output probe(const S& sys) const;
//     };
//     static_assert(backend_probe<my_probe, host_system>);
//
// The probe's descriptor is its row of the backend table (`descriptor_of<P>()`): the
// tools it runs, the libraries it loads, the paths it reads.
#pragma once

#include "ai_hwaccel/config.hpp"
#include "ai_hwaccel/core/backend.hpp"
#include "ai_hwaccel/core/profile.hpp"
#include "ai_hwaccel/core/system_io.hpp"
#include "ai_hwaccel/core/warning.hpp"
#include "ai_hwaccel/detect/process.hpp"
#include "ai_hwaccel/detect/system.hpp"

#include <chrono>
#include <concepts>
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

AI_HWACCEL_NAMESPACE_BEGIN

/// What one probe found.
struct probe_output {
    std::vector<accelerator_profile> devices;
    std::vector<interconnect> links;
    std::vector<warning> warnings;
};

template <class P, class S>
concept backend_probe = system_view<S> && requires(const P& p, const S& sys) {
    { P::backend } -> std::convertible_to<backend_id>;
    { p.probe(sys) } -> std::same_as<probe_output>;
};

/// The backend-table row describing probe type P.
template <class P>
constexpr const backend_info& descriptor_of() noexcept {
    return backend_table[static_cast<std::size_t>(P::backend)];
}

namespace detail {
inline std::string describe_duration(std::chrono::milliseconds ms) {
    if (ms.count() % 1000 == 0) return std::to_string(ms.count() / 1000) + " s";
    return std::to_string(ms.count()) + " ms";
}
} // namespace detail

/// The PATH entries the lookup of `r`'s tool skipped, as warnings: reported once per entry
/// whatever the tool (the orchestrator drops repeats), found or not.
inline void report_search_path(const tool_result& r, std::vector<warning>& warnings) {
    for (const auto& entry : r.unsafe_path_entries)
        warnings.push_back(warning{warning_kind::unsafe_path_ignored, std::nullopt, "PATH",
                                   entry.empty()          ? std::string("empty entry (the current folder) not searched")
                                   : entry.front() != '/' ? "relative entry \"" + entry + "\" not searched"
                                                          : "folder \"" + entry +
                                                                "\" not searched: anyone may write in it",
                                   0});
}

/// Whether `r`'s tool is not installed: the quiet case of an optional tool. The PATH
/// entries its lookup skipped are reported all the same.
inline bool tool_missing(const tool_result& r, std::vector<warning>& warnings) {
    if (r.status != tool_status::not_found) return false;
    report_search_path(r, warnings);
    return true;
}

/// Turns a tool run that did not go cleanly into warnings; returns whether its stdout is
/// worth parsing (a clean run, or one cut at the cap).
inline bool report_tool_result(const tool_request& request, const tool_result& r,
                               std::optional<backend_id> backend, std::vector<warning>& warnings) {
    const std::string tool = request.argv.empty() ? std::string() : request.argv.front();
    auto add = [&](warning_kind k, std::string msg, std::int32_t code = 0) {
        warnings.push_back(warning{k, backend, tool, std::move(msg), code});
    };
    report_search_path(r, warnings);
    switch (r.status) {
    case tool_status::exited:
        if (r.exit_code != 0) {
            std::string msg = "exited with status " + std::to_string(r.exit_code);
            // The first line of stderr usually says why; some tools say it on stdout instead
            // (nvidia-smi: "NVIDIA-SMI has failed because…", "No devices were found").
            const auto first_line = [](std::string_view text) {
                while (!text.empty()) {
                    const auto end = text.find('\n');
                    const auto line = detail::trim(text.substr(0, end));
                    if (!line.empty() || end == std::string_view::npos) return line;
                    text.remove_prefix(end + 1);
                }
                return std::string_view{};
            };
            auto first = first_line(r.err);
            if (first.empty()) first = first_line(r.out);
            if (!first.empty()) {
                msg += ": ";
                msg += first.substr(0, 200);
            }
            add(warning_kind::tool_failed, std::move(msg), r.exit_code);
            return false;
        }
        if (r.exit_unknown)
            add(warning_kind::read_error, "its exit status was lost (this program ignores SIGCHLD, so the kernel "
                                          "reaped the tool); its output is parsed as it stands");
        return true;
    case tool_status::signalled:
        add(warning_kind::tool_signalled, "killed by signal " + std::to_string(r.signal), r.signal);
        return false;
    case tool_status::timed_out:
        add(warning_kind::tool_timed_out,
            "no answer within " + detail::describe_duration(request.timeout) + "; its process group was killed" +
                (r.abandoned ? " but it did not exit (stuck in the kernel) and was left behind" : ""));
        return false;
    case tool_status::truncated:
        add(warning_kind::output_truncated, "printed more than " + std::to_string(request.stdout_cap) +
                                                " bytes; stopped, and the start of its output parsed");
        return true;
    case tool_status::not_found: add(warning_kind::tool_not_found, "not installed in any trusted folder"); return false;
    case tool_status::not_executable:
        add(warning_kind::tool_not_executable, r.path.empty() ? std::string("cannot be run") : r.path + " cannot be run");
        return false;
    case tool_status::spawn_failed: add(warning_kind::tool_failed, "could not be started"); return false;
    case tool_status::cancelled:
        add(warning_kind::tool_failed, "cancelled before it finished (the detection was abandoned); its process "
                                       "group was killed");
        return false;
    }
    return false;
}

/// For a tool that prints something whenever it succeeds (a header, a line per device):
/// a clean run with nothing but blanks on stdout is a broken tool, not an empty machine.
/// Reports it as a parse error and returns true; false when there is output to parse.
inline bool report_empty_output(const tool_request& request, const tool_result& r, std::optional<backend_id> backend,
                                std::vector<warning>& warnings) {
    if (!detail::trim(r.out).empty()) return false;
    warnings.push_back(warning{warning_kind::parse_error, backend,
                               request.argv.empty() ? std::string() : request.argv.front(),
                               "exited with status 0 but printed nothing", 0});
    return true;
}

/// Runs a tool through `sys` and reports what went wrong; returns its stdout when there
/// is something to parse.
template <system_view S>
std::optional<std::string> run_reporting(const S& sys, tool_request request, std::optional<backend_id> backend,
                                         std::vector<warning>& warnings) {
    tool_result r = sys.run(request);
    if (!report_tool_result(request, r, backend, warnings)) return std::nullopt;
    return std::move(r.out);
}

AI_HWACCEL_NAMESPACE_END
