// ai-hwaccel detect: Qualcomm Cloud AI accelerators (AI 100, AI 080) through the qaic
// driver and `qaic-util -q`.
//
// The Linux `qaic` driver (drivers/accel/qaic/) binds PCI functions 0x17cb:0xa100
// (Cloud AI 100) and 0x17cb:0xa080 (Cloud AI 080) and gives each SoC an accel class node;
// a Cloud AI 100 Ultra card carries four SoCs and the host sees four functions. The
// probe finds the SoCs on the PCI bus, then asks `qaic-util -q` (the Platform SDK's tool,
// /opt/qti-aic/tools) how each one is doing.
//
// `qaic-util -q` prints, per SoC, a "QID <n>" line and then tab-indented "Key:value"
// lines (format from QUtil.cpp of quic/software-kit-for-qualcomm-cloud-ai-100, and the
// Cloud AI SDK's System Management page): Status (Ready, Error, Initializing), PCI
// Address, the PCIe link, and for a Ready SoC its DRAM ("Dram Total:<n> MB"), NSP cores,
// and the SoC temperature. A SoC not Ready is listed but not available. Serial numbers
// are never copied. Board power and TDP are the card's, shared by the SoCs of an Ultra
// card, so they are not given to a SoC.
//
// The SKU (Standard, Pro, Ultra) is not in the PCI id nor in qaic-util's output, so a SoC
// is matched to a catalogue row only where one row answers for its PCI id; today three
// rows share 0xa100 and memory comes from qaic-util alone. "MB" is read as MiB.
#pragma once

#include "ai_hwaccel/config.hpp"

#if AI_HWACCEL_BACKEND_QUALCOMM

#include "ai_hwaccel/core/catalogue.hpp"
#include "ai_hwaccel/core/pci.hpp"
#include "ai_hwaccel/core/profile.hpp"
#include "ai_hwaccel/core/text.hpp"
#include "ai_hwaccel/core/warning.hpp"
#include "ai_hwaccel/detect/capture.hpp"
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

AI_HWACCEL_NAMESPACE_BEGIN

/// What `parse_qaic_util_query` read: one device per QID, in the order printed.
struct qaic_util_result {
    std::vector<accelerator_profile> devices;
    /// The Status line of each device as printed ("Ready", "Error", "Initializing"); empty
    /// where the device had none (a filtered capture, a truncated output).
    std::vector<std::string> status;
    std::vector<parse_problem> problems;
};

/// PCI device ids the qaic driver binds (vendor 0x17cb).
inline constexpr std::uint16_t qaic_pci_aic100 = 0xa100;
inline constexpr std::uint16_t qaic_pci_aic080 = 0xa080;

namespace detail::qualcomm {

using detail::parsing::max_rows;
using detail::parsing::parse_real;
using detail::parsing::parse_uint;
using detail::parsing::printable;
using detail::parsing::problem_sink;
using detail::parsing::quote_value;
using detail::parsing::value_problem;

inline constexpr std::uint32_t vendor_id = 0x17cb;

constexpr std::string_view product_name(std::uint16_t device_id) noexcept {
    return device_id == qaic_pci_aic080 ? "Qualcomm Cloud AI 080" : "Qualcomm Cloud AI 100";
}

inline accelerator_profile blank_soc(std::uint32_t index, std::uint16_t device_id = qaic_pci_aic100) {
    accelerator_profile p;
    p.kind = device_kind::qualcomm_ai100;
    p.maker = vendor::qualcomm;
    p.index = index;
    p.name = product_name(device_id);
    return p;
}

// A catalogue row only where the PCI id names exactly one.
inline void match_catalogue(accelerator_profile& p) {
    const auto rows = find_devices_by_pci(vendor_id, p.pci_device_id);
    if (rows.size() == 1 && rows[0]->kind == device_kind::qualcomm_ai100) p.apply_spec(*rows[0]);
}

// "QID 3" -> 3.
constexpr std::optional<std::uint32_t> qid_line(std::string_view line) noexcept {
    if (!line.starts_with("QID ")) return std::nullopt;
    const auto n = parse_u64(trim(line.substr(4)));
    if (!n || *n > 0xffff) return std::nullopt;
    return static_cast<std::uint32_t>(*n);
}

// A whole number followed by " MB" -> bytes (MiB); nullopt for anything else.
inline std::optional<std::uint64_t> megabytes(std::string_view v) {
    if (!v.ends_with(" MB")) return std::nullopt;
    const auto n = parse_uint(trim(v.substr(0, v.size() - 3)));
    if (!n || *n > 16u * 1024 * 1024) return std::nullopt; // 16 TiB: more than any SoC has
    return *n * 1024 * 1024;
}

// Fills the profile from one "Key:value" line; returns a problem, or nothing when fine.
// A number no SoC reports (past 2^64, 16 TiB, 1024 NSPs) is out of range, not unreadable.
inline value_problem apply_field(std::string_view key, std::string_view value, accelerator_profile& p,
                                 std::string& status) {
    const auto bad = [&] { return value_problem(std::string(key) + ": cannot read " + quote_value(value)); };
    const auto bad_number = [&](std::string_view n) {
        return looks_decimal(n) ? value_problem(std::string(key) + ": " + quote_value(value) + " is out of range",
                                                warning_kind::value_out_of_range)
                                : bad();
    };
    if (key == "Status"sv) {
        // QUtil's states; Unknown is printed for a state it has no name for.
        if (value != "Ready"sv && value != "Error"sv && value != "Initializing"sv && value != "Unknown"sv)
            return bad();
        status = std::string(value);
        p.available = value == "Ready"sv;
        return {};
    }
    if (key == "PCI Address"sv) {
        const auto a = parse_pci_address(value);
        if (!a) return bad();
        p.pci = *a;
        return {};
    }
    if (key == "Max Link Speed"sv || key == "Current Link Speed"sv || key == "Max Link Width"sv ||
        key == "Current Link Width"sv) {
        const bool speed = key.ends_with("Speed");
        if (speed && value == "Unknown"sv) return {};
        const auto x = speed ? parse_pcie_link_speed(value) : parse_pcie_link_width(value);
        if (x == 0) return bad();
        auto& link = key.starts_with("Max") ? p.pcie_max : p.pcie_current;
        pcie_link l = link.value;
        (speed ? l.generation : l.width) = x;
        link = {l, origin::tool};
        return {};
    }
    if (key == "Dram Total"sv || key == "Dram Free"sv) {
        const auto b = megabytes(value);
        if (!b) return value.ends_with(" MB") ? bad_number(trim(value.substr(0, value.size() - 3))) : bad();
        (key == "Dram Total"sv ? p.memory_bytes : p.memory_free_bytes) = {*b, origin::tool};
        return {};
    }
    if (key == "Nsp Total"sv) {
        const auto n = parse_uint(value);
        if (!n || *n > 1024) return bad_number(value);
        p.compute_units = {static_cast<std::uint32_t>(*n), origin::tool};
        return {};
    }
    if (key == "SoC temperature(degree C)"sv) {
        const auto t = parse_real(value);
        if (!t || *t < -100 || *t > 500) return bad_number(value);
        p.temperature_c = {*t, origin::tool};
        return {};
    }
    return {}; // firmware versions, serials, queues, clocks: not mapped
}

// The lines the full `qaic-util -q` prints before its first QID: the runtime's image
// ("LRT QC_IMAGE_VERSION:...", "LRT IMAGE_VARIANT:...") and "Number of devices: <n>".
constexpr bool preamble_line(std::string_view line) noexcept {
    return (line.starts_with("LRT ") && line.find(':') != std::string_view::npos) ||
           line.starts_with("Number of devices:");
}

} // namespace detail::qualcomm

/// Reads `qaic-util -q` (also its `| grep` excerpts): a "QID <n>" line per SoC, then
/// indented "Key:value" lines. Devices are Qualcomm Cloud AI SoCs indexed by QID; a SoC
/// whose Status is not Ready is kept, unavailable. A QID listed twice is reported and its
/// second block left out. Values origin::tool.
inline qaic_util_result parse_qaic_util_query(std::string_view text) {
    using namespace detail::qualcomm;
    qaic_util_result r;
    problem_sink problems{r.problems};
    std::size_t number = 0;
    bool current = false;
    bool skipping = false; // inside the block of a QID listed before
    std::optional<std::uint64_t> declared; // "Number of devices:", on line declared_at
    std::size_t declared_at = 0;
    auto finish = [&] {
        if (!current) return;
        auto& p = r.devices.back();
        if (p.memory_bytes && p.memory_free_bytes && *p.memory_free_bytes <= *p.memory_bytes)
            p.memory_used_bytes = {*p.memory_bytes - *p.memory_free_bytes, origin::tool};
        match_catalogue(p);
    };
    detail::formats::each_line(text, [&](std::string_view raw) {
        ++number;
        const auto line = detail::trim(raw);
        if (line.empty()) return true;
        if (const auto qid = qid_line(line)) {
            finish();
            current = false;
            skipping = std::ranges::any_of(r.devices, [&](const accelerator_profile& d) { return d.index == *qid; });
            if (skipping) {
                problems.add(number, "QID " + std::to_string(*qid) + " listed twice; the second block ignored");
                return true;
            }
            if (r.devices.size() >= max_rows) {
                problems.add(number, "more than " + std::to_string(max_rows) + " devices; the rest ignored");
                return false;
            }
            r.devices.push_back(blank_soc(*qid));
            r.status.emplace_back();
            current = true;
            return true;
        }
        if (skipping) return true;
        if (line.starts_with("Failed to query Device ID")) {
            problems.add(number, "qaic-util: " + quote_value(line));
            return true;
        }
        const auto colon = line.find(':');
        if (colon == std::string_view::npos || colon == 0) {
            problems.add(number, "not understood: " + quote_value(line));
            return true;
        }
        if (!current) {
            if (r.devices.empty() && preamble_line(line)) {
                if (line.starts_with("Number of devices:")) {
                    declared = parse_uint(detail::trim(line.substr(colon + 1)));
                    declared_at = number;
                    if (!declared) problems.add(number, "device count: cannot read " + quote_value(line));
                }
                return true;
            }
            problems.add(number, "value before any QID line: " + quote_value(line));
            return true;
        }
        const auto key = detail::trim(line.substr(0, colon));
        const auto value = detail::trim(line.substr(colon + 1));
        if (value.empty()) return true;
        if (auto p = apply_field(key, value, r.devices.back(), r.status.back()); !p.empty())
            problems.add_problem(number, std::move(p));
        return true;
    });
    finish();
    if (declared && *declared != r.devices.size() && r.devices.size() < max_rows)
        problems.add(declared_at,
                     "says " + std::to_string(*declared) + " device(s) and lists " + std::to_string(r.devices.size()),
                     warning_kind::disagreement);
    problems.finish();
    return r;
}

/// The one qaic-util run the probe makes. Querying every SoC can take a few seconds.
inline tool_request qaic_util_query_request() {
    using namespace std::chrono_literals;
    return tool_request{{"qaic-util", "-q"}, 30s};
}

/// Qualcomm Cloud AI SoCs: the PCI functions the qaic driver handles, then `qaic-util -q`.
struct qualcomm_probe {
    static constexpr backend_id backend = backend_id::qualcomm;

    template <system_view S>
    probe_output probe(const S& sys) const {
        using namespace detail::qualcomm;
        probe_output out;
        std::vector<warning> bus_warnings; // the host probes report the PCI bus's own problems
        for (const auto& d : probe_pci(sys, bus_warnings)) {
            const bool ours = d.vendor_id == vendor_id &&
                              (d.device_id == qaic_pci_aic100 || d.device_id == qaic_pci_aic080);
            if (!ours && d.driver != "qaic"sv) continue;
            auto p = blank_soc(static_cast<std::uint32_t>(out.devices.size()), d.device_id);
            p.pci = d.address;
            p.pci_device_id = d.device_id;
            p.pcie_current = d.link_current;
            p.pcie_max = d.link_max;
            if (d.numa_node >= 0) p.numa_node = {d.numa_node, origin::sysfs};
            // Without the driver the SoC cannot be used.
            p.available = !d.driver.empty() && d.driver != "vfio-pci"sv;
            match_catalogue(p);
            out.devices.push_back(p);
        }

        const tool_request request = qaic_util_query_request();
        tool_result r = sys.run(request);
        if (tool_missing(r, out.warnings)) {
            if (!out.devices.empty())
                out.warnings.push_back(warning{warning_kind::tool_not_found, backend, "qaic-util",
                                               std::to_string(out.devices.size()) +
                                                   " Qualcomm Cloud AI SoC(s) on the PCI bus but qaic-util is not "
                                                   "installed in any trusted folder; health and memory unknown",
                                               0});
            return out;
        }
        if (!report_tool_result(request, r, backend, out.warnings)) return out;
        // With SoCs on the bus a clean run describes them; nothing at all is a fault.
        if (!out.devices.empty() && report_empty_output(request, r, backend, out.warnings)) return out;
        auto parsed = parse_qaic_util_query(r.out);
        detail::parsing::problems_to_warnings(parsed.problems, backend, "qaic-util -q", out.warnings);
        merge(out, parsed);
        return out;
    }

private:
    // The tool's SoCs onto the bus's, by PCI address; the tool's alone are added. qaic-util
    // says Status:Error for a SoC in error and for every SoC when it runs without root
    // (Qualcomm's system management guide: "card is in error condition or user lacks
    // permissions"). Where every SoC it lists says Error, that is taken for the missing
    // permission: the bus's availability stands, with a warning.
    static void merge(probe_output& out, const qaic_util_result& parsed) {
        const std::size_t on_bus = out.devices.size();
        const bool all_error = !parsed.status.empty() && std::ranges::all_of(parsed.status, [](const std::string& s) {
            return s == "Error"sv;
        });
        if (all_error && on_bus != 0)
            out.warnings.push_back(warning{warning_kind::permission_denied, backend, "qaic-util",
                                           "every SoC reports Status:Error, as qaic-util does without root; "
                                           "availability is the PCI bus's (run as root for each SoC's state)",
                                           0});
        std::vector<bool> named(on_bus); // given its QID
        for (std::size_t i = 0; i < parsed.devices.size(); ++i) {
            const auto& t = parsed.devices[i];
            accelerator_profile* match = nullptr;
            for (std::size_t k = 0; k < on_bus && t.pci; ++k)
                if (out.devices[k].pci == t.pci && !named[k]) {
                    match = &out.devices[k];
                    named[k] = true;
                    break;
                }
            if (!match) {
                out.devices.push_back(t);
                continue;
            }
            accelerator_profile& d = *match;
            d.index = t.index; // the QID is what the SDK's tools and runtime call it
            if (!parsed.status[i].empty() && !all_error) d.available = d.available && t.available;
            for (auto f : {&accelerator_profile::memory_bytes, &accelerator_profile::memory_free_bytes,
                            &accelerator_profile::memory_used_bytes})
                if ((t.*f).has_value()) d.*f = t.*f;
            if (t.compute_units) d.compute_units = t.compute_units;
            if (t.temperature_c) d.temperature_c = t.temperature_c;
            if (t.pcie_current) d.pcie_current.offer(*t.pcie_current, origin::tool);
            if (t.pcie_max) d.pcie_max.offer(*t.pcie_max, origin::tool);
        }
        // A SoC the tool did not list (no driver, or left out) kept its place on the bus as
        // its number, which a listed SoC's QID may now hold: it takes the lowest free one.
        if (parsed.devices.empty()) return;
        const auto taken = [&](std::uint32_t n) {
            for (std::size_t k = 0; k < out.devices.size(); ++k)
                if ((k >= on_bus || named[k]) && out.devices[k].index == n) return true;
            return false;
        };
        std::uint32_t n = 0;
        for (std::size_t k = 0; k < on_bus; ++k) {
            if (named[k]) continue;
            while (taken(n)) ++n;
            out.devices[k].index = n++;
        }
    }
};
#if AI_HWACCEL_OS_LINUX || AI_HWACCEL_OS_MACOS
static_assert(backend_probe<qualcomm_probe, host_system>);
#endif

namespace detail::formats {

// qaic-util -q (and its `grep -e Status -e QID` excerpts) ----------------------------------
inline int sniff_qaic_util(std::string_view t) noexcept {
    bool qid_first = false;
    each_line(t, [&](std::string_view line) {
        const auto l = trim(line);
        if (l.empty() || qualcomm::preamble_line(l)) return true;
        qid_first = qualcomm::qid_line(l).has_value();
        return false;
    });
    if (!qid_first) return 0;
    bool status = false;
    each_line(t, [&](std::string_view line) {
        const auto l = trim(line);
        status = l.starts_with("Status:") && line.size() > l.size(); // indented under its QID
        return !status;
    });
    return status ? 90 : 0;
}
inline void parse_qaic_util_capture(std::string_view t, capture_parse& out) {
    auto r = parse_qaic_util_query(t);
    detail::parsing::problems_to_warnings(r.problems, backend_id::qualcomm, out.format, out.warnings);
    if (r.devices.empty() && r.problems.empty()) nothing_found(out, "QID blocks");
    out.devices = std::move(r.devices);
}

} // namespace detail::formats

AI_HWACCEL_NAMESPACE_END

#endif // AI_HWACCEL_BACKEND_QUALCOMM
