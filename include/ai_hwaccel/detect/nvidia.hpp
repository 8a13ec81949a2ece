// ai-hwaccel detect: NVIDIA GPUs through nvidia-smi.
//
// Two pure parsers (`nvidia-smi --query-gpu=… --format=csv[,noheader][,nounits]` and
// `nvidia-smi -L`), the request the CUDA probe (detect/cuda.hpp) makes, and the capture
// formats for both outputs. The parsers take text and never throw for any input: what
// they cannot read becomes a problem in their result, never a guess, and a value the tool
// marks as unavailable ("[N/A]", "[Not Supported]") stays unknown rather than zero. The
// whole header is empty unless the CUDA backend is compiled in, so a build without it
// carries no trace of the vendor.
#pragma once

#include "ai_hwaccel/config.hpp"

#if AI_HWACCEL_BACKEND_CUDA

#include "ai_hwaccel/core/catalogue.hpp"
#include "ai_hwaccel/core/pci.hpp"
#include "ai_hwaccel/core/profile.hpp"
#include "ai_hwaccel/core/text.hpp"
#include "ai_hwaccel/core/warning.hpp"
#include "ai_hwaccel/detect/capture.hpp"
#include "ai_hwaccel/detect/probe.hpp"
#include "ai_hwaccel/detect/system.hpp"
#include "ai_hwaccel/detect/topology.hpp"

#include <array>
#include <charconv>
#include <chrono>
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

/// The problems of the NVIDIA parsers are the shared kind (detect/capture.hpp).
using nvidia_parse_problem = parse_problem;

/// What `parse_nvidia_smi_query_csv` read.
struct nvidia_query_result {
    std::vector<accelerator_profile> devices;
    /// clocks.max.memory per device, in the order of `devices` (the profile has no field
    /// for it); unknown where not queried or not reported.
    std::vector<sourced<std::uint32_t>> max_memory_clock_mhz;
    /// mig.mode.current per device: true for "Enabled", false for "Disabled", nullopt
    /// where not queried or not supported.
    std::vector<std::optional<bool>> mig_enabled;
    /// Why a device cannot be used, in the order of `devices`; empty for one that can. A
    /// row with "[GPU requires reset]", "[GPU is lost]" or "[Unknown Error]" in a field, and
    /// a GPU nvidia-smi could not open ("Unable to determine the device handle for GPU…",
    /// printed in place of its row: a device with only its PCI address), are listed
    /// unavailable with the reason here rather than as a parse problem.
    std::vector<std::string> device_errors;
    std::vector<nvidia_parse_problem> problems;
};

/// One MIG instance from `nvidia-smi -L`.
struct nvidia_mig_instance {
    std::uint32_t parent_index = 0; ///< index of the GPU it is carved from
    std::uint32_t device_index = 0; ///< "Device  N" within that GPU
    std::string profile;            ///< "3g.40gb"
    std::string uuid;               ///< "MIG-…" (older drivers: "MIG-GPU-…/gi/ci")
    friend bool operator==(const nvidia_mig_instance&, const nvidia_mig_instance&) = default;
};

/// What `parse_nvidia_smi_list` read.
struct nvidia_list_result {
    std::vector<accelerator_profile> gpus;
    std::vector<nvidia_mig_instance> mig;
    std::vector<nvidia_parse_problem> problems;
};

/// The --query-gpu fields the library maps, in the order the CUDA probe asks for them.
inline constexpr std::array<std::string_view, 20> nvidia_smi_query_fields{
    "index",           "uuid",
    "name",            "pci.bus_id",
    "pci.device_id",   "memory.total",
    "memory.used",     "memory.free",
    "compute_cap",     "driver_version",
    "power.limit",     "power.draw",
    "temperature.gpu", "utilization.gpu",
    "clocks.max.memory", "pcie.link.gen.current",
    "pcie.link.gen.max", "pcie.link.width.current",
    "pcie.link.width.max", "mig.mode.current",
};

namespace detail::nvidia {

enum class field : std::uint8_t {
    ignored, // a field nvidia-smi knows that the library does not map (fan.speed, pstate, …)
    index,
    uuid,
    name,
    bus_id,
    device_id,
    memory_total,
    memory_used,
    memory_free,
    compute_cap,
    driver_version,
    power_limit,
    power_draw,
    temperature,
    utilization,
    max_memory_clock,
    mig_mode,
    pcie_gen_current,
    pcie_gen_max,
    pcie_width_current,
    pcie_width_max,
};

// A mapped field; its unit is what `--format=csv` without nounits appends ("" for none).
using field_info = detail::parsing::query_field<field>;

// Every spelling nvidia-smi accepts for a mapped field (see `nvidia-smi --help-query-gpu`).
inline constexpr field_info field_table[] = {
    {"index", field::index, ""},
    {"uuid", field::uuid, ""},
    {"gpu_uuid", field::uuid, ""},
    {"name", field::name, ""},
    {"gpu_name", field::name, ""},
    {"pci.bus_id", field::bus_id, ""},
    {"gpu_bus_id", field::bus_id, ""},
    {"pci.device_id", field::device_id, ""},
    {"memory.total", field::memory_total, "MiB"},
    {"memory.used", field::memory_used, "MiB"},
    {"memory.free", field::memory_free, "MiB"},
    {"compute_cap", field::compute_cap, ""},
    {"driver_version", field::driver_version, ""},
    {"power.limit", field::power_limit, "W"},
    {"power.draw", field::power_draw, "W"},
    {"temperature.gpu", field::temperature, "C"},
    {"utilization.gpu", field::utilization, "%"},
    {"clocks.max.memory", field::max_memory_clock, "MHz"},
    {"clocks.max.mem", field::max_memory_clock, "MHz"},
    {"mig.mode.current", field::mig_mode, ""},
    {"pcie.link.gen.current", field::pcie_gen_current, ""},
    {"pcie.link.gen.gpucurrent", field::pcie_gen_current, ""},
    {"pcie.link.gen.max", field::pcie_gen_max, ""},
    // Not pcie.link.gen.gpumax: the GPU's own ceiling, above the link's where the host's
    // port is older (an RTX 4090's 4 in a Gen3 slot, whose link maximum is 3).
    {"pcie.link.width.current", field::pcie_width_current, ""},
    {"pcie.link.width.max", field::pcie_width_max, ""},
};

constexpr const field_info* find_field(std::string_view name) noexcept {
    return detail::parsing::find_query_field(field_table, name);
}

static_assert(detail::parsing::fields_are_mapped(nvidia_smi_query_fields, field_table),
              "nvidia_smi_query_fields: a field the parser does not map");

using detail::parsing::each_cell;
using detail::parsing::header_name;

// nvidia-smi's field names are lowercase letters, digits, '.' and '_'.
inline constexpr std::string_view field_name_punctuation = "._";

// The header line of `--format=csv` (detail::parsing::is_query_header).
constexpr bool is_header_line(std::string_view line) noexcept {
    return detail::parsing::is_query_header(line, field_table, field_name_punctuation);
}

// "[N/A]", "[Not Supported]", "N/A", …: the tool's way of saying "unknown".
constexpr bool is_unavailable(std::string_view v) noexcept {
    return v.empty() || v == "N/A"sv || v == "Not Supported"sv || (v.front() == '[' && v.back() == ']');
}
// Bracketed values that mean the device is in trouble, not merely that a value is missing.
constexpr bool is_device_error(std::string_view v) noexcept {
    return v == "[Unknown Error]"sv || v == "[GPU is lost]"sv || v == "[GPU requires reset]"sv;
}

// A value without its unit ("81559 MiB" -> "81559"); nullopt when it carries another unit.
constexpr std::optional<std::string_view> strip_unit(std::string_view v, std::string_view unit) noexcept {
    const auto sp = v.rfind(' ');
    if (sp == std::string_view::npos) return v;
    const std::string_view suffix = v.substr(sp + 1);
    if (!unit.empty() && suffix == unit) return trim(v.substr(0, sp));
    return std::nullopt;
}

using detail::parsing::max_problems;
using detail::parsing::max_rows;
using detail::parsing::parse_real;
using detail::parsing::parse_uint;
using detail::parsing::printable;
using detail::parsing::problem_sink;
using detail::parsing::value_problem;
using detail::parsing::quote_value;

// What a row says that the profile has no field for.
struct row_extras {
    sourced<std::uint32_t> mem_clock;
    std::optional<bool> mig;
    std::string error; ///< the first value that says the device is in trouble
};

/// A GPU nvidia-smi could not open: "Unable to determine the device handle for
/// GPU0000:4C:00.0: Unknown Error" (older drivers: "for GPU 0000:0B:00.0: …"), printed in
/// place of its row or its report when the GPU has fallen off the bus or needs a reset.
struct unopened_gpu {
    std::optional<pci_address> pci;
    std::string_view reason; ///< "Unknown Error"
};
inline std::optional<unopened_gpu> parse_unopened_gpu(std::string_view line) {
    static constexpr std::string_view prefix = "Unable to determine the device handle for GPU";
    line = trim(line);
    if (!line.starts_with(prefix)) return std::nullopt;
    std::string_view rest = trim(line.substr(prefix.size()));
    unopened_gpu u;
    const auto colon = rest.find(": "); // the address has colons, but none followed by a space
    u.pci = parse_pci_address(trim(rest.substr(0, colon)));
    if (colon != std::string_view::npos) u.reason = trim(rest.substr(colon + 2));
    return u;
}

// Fills the profile from one cell; returns the problem, or an empty one when the cell is
// fine. A value that says the device is in trouble goes to extras.error instead.
inline value_problem apply_cell(const field_info& f, std::string_view v, accelerator_profile& p,
                                row_extras& extras) {
    const std::string name(f.name);
    if (f.id == field::ignored) return {};
    if (is_unavailable(v)) {
        if (is_device_error(v) && extras.error.empty()) extras.error = name + " reported " + quote_value(v);
        return {};
    }
    const auto bad = [&] { return name + ": cannot read " + quote_value(v); };
    const auto out_of_range = [&] {
        return value_problem(name + ": " + quote_value(v) + " is out of range", warning_kind::value_out_of_range);
    };

    switch (f.id) {
    case field::ignored: return {};
    case field::name:
    case field::uuid:
    case field::driver_version: {
        bool changed = false;
        const std::string text = printable(v, changed);
        bool fits = true;
        if (f.id == field::name) fits = p.name.assign(text);
        else if (f.id == field::uuid) fits = p.uuid.assign(text);
        else fits = p.driver_version.assign(text);
        if (changed) return name + ": not printable UTF-8, replaced by " + quote_value(text);
        if (!fits) return name + ": longer than the profile keeps, cut";
        return {};
    }
    case field::bus_id: {
        const auto a = parse_pci_address(v);
        if (!a) return bad();
        p.pci = *a;
        return {};
    }
    case field::device_id: {
        // "0x233010DE": device id in the upper half, vendor id in the lower.
        if (!(v.starts_with("0x") || v.starts_with("0X"))) return bad();
        const auto id = parse_hex32(v.substr(2));
        if (!id || v.size() != 10) return bad();
        if ((*id & 0xffffu) != 0x10deu) return name + ": vendor id in " + quote_value(v) + " is not NVIDIA's";
        p.pci_device_id = static_cast<std::uint16_t>(*id >> 16);
        return {};
    }
    case field::mig_mode: {
        if (v == "Enabled"sv) extras.mig = true;
        else if (v == "Disabled"sv) extras.mig = false;
        else return bad();
        return {};
    }
    case field::compute_cap: {
        // "9.0", "12.0": digits, one dot, digits.
        const auto dot = v.find('.');
        if (dot == std::string_view::npos || !parse_uint(v.substr(0, dot)) || !parse_uint(v.substr(dot + 1)) ||
            v.size() > decltype(p.arch)::capacity())
            return bad();
        p.arch = v;
        return {};
    }
    default: break;
    }

    // Numbers, with or without their unit.
    const auto number = strip_unit(v, f.unit);
    if (!number) return name + ": unexpected unit in " + quote_value(v);
    const std::string_view n = *number;
    if (!n.empty() && n.front() == '-') return out_of_range();
    // A number the parsers refuse is past what its type holds.
    // A fraction in a whole-number field ("1.5") is malformed, not out of range.
    const auto bad_number = [&] {
        return looks_decimal(n) && n.find('.') == std::string_view::npos ? out_of_range() : value_problem(bad());
    };
    switch (f.id) {
    case field::index: {
        const auto x = parse_uint(n);
        if (!x) return bad_number();
        if (*x > 0xffff) return out_of_range();
        p.index = static_cast<std::uint32_t>(*x);
        return {};
    }
    case field::memory_total:
    case field::memory_used:
    case field::memory_free: {
        const auto x = parse_real(n); // whole MiB in practice; tolerate "81559.0"
        if (!x) return bad_number(); // from_chars refuses 10^30 as out of range
        constexpr double max_mib = 16.0 * 1024 * 1024; // 16 TiB: more than any device has
        if (*x > max_mib) return out_of_range();
        const sourced<std::uint64_t> bytes{static_cast<std::uint64_t>(*x * 1048576.0), origin::tool};
        (f.id == field::memory_total ? p.memory_bytes : f.id == field::memory_used ? p.memory_used_bytes
                                                                                   : p.memory_free_bytes) = bytes;
        return {};
    }
    case field::power_limit:
    case field::power_draw: {
        const auto x = parse_real(n);
        if (!x) return bad_number();
        if (*x > 100'000) return out_of_range();
        (f.id == field::power_limit ? p.power_limit_watts : p.power_draw_watts) = {*x, origin::tool};
        return {};
    }
    case field::temperature: {
        const auto x = parse_real(n);
        if (!x) return bad_number();
        if (*x > 500) return out_of_range();
        p.temperature_c = {*x, origin::tool};
        return {};
    }
    case field::utilization: {
        const auto x = parse_real(n);
        if (!x) return bad_number();
        if (*x > 100) return out_of_range();
        p.utilization_percent = {*x, origin::tool};
        return {};
    }
    case field::max_memory_clock: {
        const auto x = parse_uint(n);
        if (!x) return bad_number();
        if (*x > 1'000'000) return out_of_range();
        extras.mem_clock = {static_cast<std::uint32_t>(*x), origin::tool};
        return {};
    }
    case field::pcie_gen_current:
    case field::pcie_gen_max:
    case field::pcie_width_current:
    case field::pcie_width_max: {
        const auto x = parse_uint(n);
        if (!x) return bad_number();
        const bool gen = f.id == field::pcie_gen_current || f.id == field::pcie_gen_max;
        if (*x == 0 || *x > (gen ? 16u : 64u)) return out_of_range();
        auto& link = f.id == field::pcie_gen_current || f.id == field::pcie_width_current ? p.pcie_current : p.pcie_max;
        pcie_link l = link.value;
        (gen ? l.generation : l.width) = static_cast<std::uint8_t>(*x);
        link = {l, origin::tool};
        return {};
    }
    default: return {};
    }
}

// The name a Jetson's GPU goes by, one for every module of its chip: nvgpu, the Orin
// modules' GPU driver, names it "<chip> (nvgpu)" ("Orin (nvgpu)"); on the Thor modules
// nvidia-smi and NVML say "NVIDIA Thor".
constexpr bool names_jetson_chip(std::string_view name) noexcept {
    return name.ends_with("(nvgpu)") || name == "NVIDIA Thor"sv || name == "Thor"sv;
}

// The catalogue row for a GPU: by PCI id when that names one row, else by name.
inline void match_catalogue(accelerator_profile& p) {
    const device_spec* spec = nullptr;
    const auto by_id = find_devices_by_pci(info(vendor::nvidia).vendor_id, p.pci_device_id);
    if (by_id.size() == 1) spec = by_id[0];
    if (!spec && !p.name.empty()) spec = find_device(p.name);
    if (spec && spec->kind == device_kind::cuda_gpu) {
        p.apply_spec(*spec);
    } else if (!spec && names_jetson_chip(p.name.view())) {
        // A Jetson's GPU, named after its chip and without memory of its own: it shares the
        // module's. The name matches no row (the modules differ in clocks, SMs and memory);
        // the sharing is known, and with it the memory. cuda.hpp's identify_jetson finds the
        // module's row in the device tree.
        p.unified_memory = true;
    }
}

inline accelerator_profile blank_gpu(std::uint32_t index) {
    accelerator_profile p;
    p.kind = device_kind::cuda_gpu;
    p.maker = vendor::nvidia;
    p.index = index;
    return p;
}

// The GPU a "GPU <n>: <name> (UUID: <uuid>)" line names (`uuid` empty where the line has
// none), matched to the catalogue; `bad` names the field that had to be cut or cleaned.
inline accelerator_profile listed_gpu(std::uint32_t index, std::string_view name, std::string_view uuid,
                                      std::string& bad) {
    accelerator_profile p = blank_gpu(index);
    bool changed = false;
    if (!p.name.assign(printable(name, changed)) || changed) bad = "name";
    if (!uuid.empty() && (!p.uuid.assign(printable(uuid, changed)) || changed)) bad = "uuid";
    match_catalogue(p);
    return p;
}

// Lists in `r` the GPU an "Unable to determine the device handle" `line` names (read as
// `u`): unavailable, numbered `index`, with its PCI address where the line gives one.
inline void add_unopened(nvidia_query_result& r, const unopened_gpu& u, std::uint32_t index, std::string_view line) {
    accelerator_profile p = blank_gpu(index);
    if (u.pci) p.pci = *u.pci;
    p.available = false;
    r.devices.push_back(p);
    r.max_memory_clock_mhz.emplace_back();
    r.mig_enabled.emplace_back();
    r.device_errors.push_back("nvidia-smi cannot open it: " + quote_value(u.reason.empty() ? trim(line) : u.reason));
}

} // namespace detail::nvidia

/// Reads `nvidia-smi --query-gpu=<fields> --format=csv[,noheader][,nounits]`. `fields` is
/// the comma-separated list given to --query-gpu; it may be empty when the output has its
/// header line, which then names the columns (a header wins over `fields`). Values may
/// carry units or not. Rows whose number of values differs from the number of fields are
/// skipped with a problem: columns cannot be matched safely. Devices are NVIDIA CUDA GPUs,
/// every value origin::tool, then completed from the catalogue (origin::catalogue).
inline nvidia_query_result parse_nvidia_smi_query_csv(std::string_view text, std::string_view fields = {}) {
    using namespace detail::nvidia;
    nvidia_query_result r;
    problem_sink problems{r.problems};
    auto add_row = [&](std::string_view line, std::size_t number, const auto& columns) {
        accelerator_profile p = blank_gpu(static_cast<std::uint32_t>(r.devices.size()));
        row_extras extras;
        std::size_t col = 0;
        each_cell(line, [&](std::string_view cell) {
            auto problem = apply_cell(*columns[col++], cell, p, extras);
            if (!problem.empty()) problems.add_problem(number, std::move(problem));
        });
        match_catalogue(p);
        if (!extras.error.empty()) p.available = false;
        r.devices.push_back(p);
        r.max_memory_clock_mhz.push_back(extras.mem_clock);
        r.mig_enabled.push_back(extras.mig);
        r.device_errors.push_back(std::move(extras.error));
    };
    auto unopened = [&](std::string_view line, std::size_t) {
        const auto u = parse_unopened_gpu(line);
        if (u) add_unopened(r, *u, static_cast<std::uint32_t>(r.devices.size()), line);
        return u.has_value();
    };
    detail::parsing::read_query_csv(text, fields, field_table, field_name_punctuation, problems, add_row, unopened);
    problems.finish();
    return r;
}

/// Reads `nvidia-smi -L`: "GPU 0: NVIDIA A100 80GB PCIe (UUID: GPU-…)" lines, each
/// possibly followed by indented "MIG 3g.40gb Device 0: (UUID: MIG-…)" lines. GPUs are
/// completed from the catalogue by name; MIG instances are listed apart.
inline nvidia_list_result parse_nvidia_smi_list(std::string_view text) {
    using namespace detail::nvidia;
    nvidia_list_result r;
    problem_sink problems{r.problems};
    std::optional<std::uint32_t> parent;
    std::size_t number = 0;
    // "<n>: … (UUID: <id>)" -> n, the text before the parenthesis, id.
    struct entry {
        std::uint32_t n;
        std::string_view label;
        std::string_view uuid;
    };
    auto split = [](std::string_view s) -> std::optional<entry> {
        const auto colon = s.find(':');
        if (colon == std::string_view::npos) return std::nullopt;
        const auto n = parse_uint(detail::trim(s.substr(0, colon)));
        const auto open = s.rfind("(UUID: ");
        if (!n || *n > 0xffff || open == std::string_view::npos || open < colon || s.back() != ')') return std::nullopt;
        const auto uuid = detail::trim(s.substr(open + 7, s.size() - open - 8));
        if (uuid.empty()) return std::nullopt;
        return entry{static_cast<std::uint32_t>(*n), detail::trim(s.substr(colon + 1, open - colon - 1)), uuid};
    };
    detail::formats::each_line(text, [&](std::string_view raw) {
        ++number;
        const auto line = detail::trim(raw);
        if (line.empty()) return true;
        if (line.starts_with("No devices")) return true; // "No devices were found": nothing to list
        if (r.gpus.size() + r.mig.size() >= max_rows) {
            problems.add(number, "more than " + std::to_string(max_rows) + " entries; the rest ignored");
            return false;
        }
        if (line.starts_with("GPU ")) {
            const auto e = split(line.substr(4));
            if (!e || e->label.empty()) {
                problems.add(number, "not a GPU line: " + quote_value(line));
                parent.reset(); // its MIG lines below belong to no GPU read
                return true;
            }
            std::string warn;
            r.gpus.push_back(listed_gpu(e->n, e->label, e->uuid, warn));
            if (!warn.empty()) problems.add(number, warn + " not printable or too long: " + quote_value(line));
            parent = e->n;
            return true;
        }
        if (line.starts_with("MIG ")) {
            std::string_view rest = detail::trim(line.substr(4));
            const auto sp = rest.find(' ');
            const std::string_view profile = rest.substr(0, sp);
            rest = sp == std::string_view::npos ? std::string_view{} : detail::trim(rest.substr(sp));
            const auto e = rest.starts_with("Device ") ? split(rest.substr(7)) : std::nullopt;
            if (!e || profile.empty()) {
                problems.add(number, "not a MIG line: " + quote_value(line));
                return true;
            }
            if (!parent) {
                problems.add(number, "MIG line before any GPU line");
                return true;
            }
            bool c1 = false, c2 = false;
            nvidia_mig_instance m{*parent, e->n, printable(profile, c1), printable(e->uuid, c2)};
            if (c1 || c2) problems.add(number, "MIG line not printable: " + quote_value(line));
            r.mig.push_back(std::move(m));
            return true;
        }
        problems.add(number, "not understood: " + quote_value(line));
        return true;
    });
    problems.finish();
    return r;
}

namespace detail::nvidia {
// The query's fields joined; `without` left out (nvidia-smi before R510 knows no compute_cap).
inline std::string query_argument(std::string_view without = {}) {
    std::string arg = "--query-gpu=";
    bool first = true;
    for (const auto f : nvidia_smi_query_fields) {
        if (f == without) continue;
        if (!first) arg += ',';
        arg += f;
        first = false;
    }
    return arg;
}
inline std::string query_field_list() { return query_argument().substr(std::string_view("--query-gpu=").size()); }

// A row of the CUDA probe's own query (nvidia_smi_query_fields, `noheader`): one cell per
// field, an index, then a GPU UUID. What a machine tree's nvidia-smi-query.csv holds.
constexpr bool is_own_query_row(std::string_view line) noexcept {
    std::size_t cells = 0;
    bool index = false, uuid = false;
    each_cell(line, [&](std::string_view cell) {
        if (cells == 0)
            index = !cell.empty() && cell.find_first_not_of("0123456789") == std::string_view::npos;
        else if (cells == 1)
            uuid = cell.starts_with("GPU-");
        ++cells;
    });
    return cells == nvidia_smi_query_fields.size() && index && uuid;
}

inline void problems_to_warnings(const std::vector<parse_problem>& problems, std::string_view subject,
                                 std::vector<warning>& out) {
    detail::parsing::problems_to_warnings(problems, backend_id::cuda, subject, out);
}

/// A probe_failed warning about `subject` for each device `r` lists in trouble: "GPU 2
/// (0000:4c:00.0): <why>; listed, not used".
inline void device_errors_to_warnings(const nvidia_query_result& r, std::string_view subject,
                                      std::vector<warning>& out) {
    for (std::size_t i = 0; i < r.devices.size() && i < r.device_errors.size(); ++i) {
        if (r.device_errors[i].empty()) continue;
        const auto& p = r.devices[i];
        out.push_back(warning{warning_kind::probe_failed, backend_id::cuda, std::string(subject),
                              "GPU " + std::to_string(p.index) +
                                  (p.pci ? std::string(" (") + p.pci->text().data() + ")" : std::string()) + ": " +
                                  r.device_errors[i] + "; listed, not used",
                              0});
    }
}
} // namespace detail::nvidia

/// The catalogue row of the GPU of the Jetson module a device tree's root `compatible`
/// names: NUL-separated strings, the board's first ("nvidia,p3768-0000+p3767-0005": carrier
/// board + module), then the module's and the chip's ("nvidia,p3767-0005",
/// "nvidia,tegra234"). Module part numbers as NVIDIA's board support package names them:
/// p3701-0004 and -0005 the Jetson AGX Orin 32GB and 64GB; p3767-0000 and -0001 the Orin NX
/// 16GB and 8GB; p3767-0003 and -0004 the Orin Nano 8GB and 4GB, -0005 the Nano 8GB of the
/// developer kit; p3834-0000 and -0008 the Thor modules T4000 and T5000 (the AGX Thor
/// developer kit's is "nvidia,p4071-0000+p3834-0008"). An Orin Nano 8GB whose device tree
/// `model` ends in "Super" (JetPack 6.2's Super flash: "NVIDIA Jetson Orin Nano Engineering
/// Reference Developer Kit Super") gets the row of its Super modes. nullptr for anything
/// else (another board, or a module with no row).
constexpr const device_spec* jetson_module_gpu(std::string_view compatible, std::string_view model = {}) noexcept {
    constexpr std::pair<std::string_view, std::string_view> modules[] = {
        {"p3701-0004", "NVIDIA Jetson AGX Orin 32GB"}, {"p3701-0005", "NVIDIA Jetson AGX Orin 64GB"},
        {"p3767-0000", "NVIDIA Jetson Orin NX 16GB"},  {"p3767-0001", "NVIDIA Jetson Orin NX 8GB"},
        {"p3767-0003", "NVIDIA Jetson Orin Nano 8GB"}, {"p3767-0004", "NVIDIA Jetson Orin Nano 4GB"},
        {"p3767-0005", "NVIDIA Jetson Orin Nano 8GB"}, {"p3834-0000", "NVIDIA Jetson T4000"},
        {"p3834-0008", "NVIDIA Jetson T5000"},
    };
    while (!compatible.empty()) {
        const auto nul = compatible.find('\0');
        std::string_view entry = compatible.substr(0, nul);
        compatible = nul == std::string_view::npos ? std::string_view{} : compatible.substr(nul + 1);
        if (!entry.starts_with("nvidia,")) continue;
        entry.remove_prefix(7);
        while (!entry.empty()) { // carrier+module: each part
            const auto plus = entry.find('+');
            const auto part = entry.substr(0, plus);
            entry = plus == std::string_view::npos ? std::string_view{} : entry.substr(plus + 1);
            for (const auto& [number, row] : modules) {
                if (part != number) continue;
                while (!model.empty() && (model.back() == '\0' || model.back() == '\n')) model.remove_suffix(1);
                if (row == "NVIDIA Jetson Orin Nano 8GB"sv && model.ends_with(" Super"))
                    return find_device("NVIDIA Jetson Orin Nano 8GB Super");
                return find_device(row);
            }
        }
    }
    return nullptr;
}

/// The nvidia-smi run the CUDA probe makes; `without` names a field to leave out (its
/// second run, where an older nvidia-smi refused one).
inline tool_request nvidia_smi_query_request(std::string_view without = {}) {
    using namespace std::chrono_literals;
    return tool_request{{"nvidia-smi", detail::nvidia::query_argument(without), "--format=csv,noheader,nounits"}, 10s};
}

/// The PCI addresses of NVIDIA display/3D controllers (vendor 0x10de, class 0x03xxxx),
/// comma-separated; empty when there are none.
template <system_view S>
std::string nvidia_gpus_on_pci_bus(const S& sys) {
    std::vector<warning> ignored; // the host probes report the PCI bus's own problems
    std::string found;
    for (const auto& d : probe_pci(sys, ignored)) {
        if (vendor_from_id(d.vendor_id) != vendor::nvidia || (d.class_code >> 16) != 0x03) continue;
        if (!found.empty()) found += ", ";
        found += d.address.text().data();
    }
    return found;
}

namespace detail::formats {

// nvidia-smi --query-gpu=… --format=csv: with its header line, or without it in the columns
// the CUDA probe asks for (a machine tree's capture) ----------------------------------------
inline int sniff_nvidia_csv(std::string_view t) noexcept {
    const auto first = first_non_blank_line(t);
    if (!nvidia::is_header_line(first)) return nvidia::is_own_query_row(first) ? 80 : 0;
    const auto comma = first.find(',');
    const bool known_first = nvidia::find_field(nvidia::header_name(first.substr(0, comma))) != nullptr;
    return first.find("[MiB]") != std::string_view::npos || known_first ? 90 : 0;
}
inline void parse_nvidia_csv_capture(std::string_view t, capture_parse& out) {
    // Without a header line the columns can only be the probe's own: nothing else names them.
    auto r = nvidia::is_header_line(first_non_blank_line(t)) ? parse_nvidia_smi_query_csv(t)
                                                               : parse_nvidia_smi_query_csv(t, nvidia::query_field_list());
    nvidia::problems_to_warnings(r.problems, out.format, out.warnings);
    nvidia::device_errors_to_warnings(r, out.format, out.warnings);
    if (r.devices.empty() && r.problems.empty()) nothing_found(out, "GPU rows");
    out.devices = std::move(r.devices);
}

// nvidia-smi -L -----------------------------------------------------------------------------
// "GPU <n>: <name> (UUID: GPU-…)", the line `nvidia-smi -L` and `nvlink -s` open with.
constexpr bool is_gpu_uuid_line(std::string_view line) noexcept {
    if (!line.starts_with("GPU ")) return false;
    std::size_t i = 4;
    while (i < line.size() && line[i] >= '0' && line[i] <= '9') ++i;
    if (i == 4 || i >= line.size() || line[i] != ':') return false;
    return line.find("(UUID: GPU-") != std::string_view::npos;
}
inline int sniff_nvidia_list(std::string_view t) noexcept {
    if (!is_gpu_uuid_line(first_non_blank_line(t))) return 0;
    // `nvidia-smi nvlink -s` opens with the same line, then lists "Link N: …" under it.
    bool links = false;
    each_line(t, [&](std::string_view line) {
        links = trim(line).starts_with("Link ");
        return !links;
    });
    return links ? 0 : 90;
}
inline void parse_nvidia_list_capture(std::string_view t, capture_parse& out) {
    auto r = parse_nvidia_smi_list(t);
    nvidia::problems_to_warnings(r.problems, out.format, out.warnings);
    if (r.gpus.empty() && r.problems.empty()) nothing_found(out, "GPU lines");
    out.devices = std::move(r.gpus);
}

} // namespace detail::formats

AI_HWACCEL_NAMESPACE_END

#endif // AI_HWACCEL_BACKEND_CUDA
