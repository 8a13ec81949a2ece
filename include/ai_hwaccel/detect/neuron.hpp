// ai-hwaccel detect: AWS Neuron devices (Inferentia, Inferentia2, Trainium, Trainium2).
//
// Pure parsers for what `neuron-ls` prints: its table in every layout the tool has had
// (the default view, `--wide` and `--show-all-procs` with processes, the older layout with
// a LOGICAL NC column, and Inf1's layout with two memory channels), the `--topology`
// diagram that follows the table, and `--json-output`. Then the Neuron probe, which puts
// the PCI bus (Amazon's vendor id 0x1d0f with the device ids of aws-neuron-driver's
// neuron_device.h), the driver's sysfs files under /sys/devices/virtual/neuron_device
// (core_count, connected_devices, info/architecture/device_name; see neuron_cdev.c and
// neuron_sysfs_metrics.c in aws-neuron/aws-neuron-driver and the Neuron Sysfs User Guide)
// and one neuron-ls run together. Device memory is what neuron-ls reports ("32 GB" is
// 32 GiB: its JSON says 34359738368 for the same device), else the catalogue's per-chip
// figure; it is never derived from a per-core guess. NeuronCores are the runtime's count
// (logical cores where a logical-NeuronCore setting groups them), which is what
// NEURON_RT_VISIBLE_CORES numbers (see detect/merge.hpp). NeuronLink comes out as one
// interconnect per connected pair of devices. The whole header is empty unless the Neuron
// backend is compiled in.
#pragma once

#include "ai_hwaccel/config.hpp"

#if AI_HWACCEL_BACKEND_NEURON

#include "ai_hwaccel/core/catalogue.hpp"
#include "ai_hwaccel/core/pci.hpp"
#include "ai_hwaccel/core/profile.hpp"
#include "ai_hwaccel/core/system_io.hpp"
#include "ai_hwaccel/core/text.hpp"
#include "ai_hwaccel/core/units.hpp"
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

#if AI_HWACCEL_JSON
#include <nlohmann/json.hpp>
#endif

AI_HWACCEL_NAMESPACE_BEGIN

/// The problems of the Neuron parsers are the shared kind (detect/capture.hpp).
using neuron_parse_problem = parse_problem;

/// What neuron-ls says about one device beyond its profile.
struct neuron_ls_device {
    std::vector<std::uint32_t> connected; ///< CONNECTED DEVICES / connected_to, as printed
    std::string cpu_affinity;             ///< "48-95,144-191"; empty when not printed
    std::vector<std::uint64_t> pids;      ///< processes using the device (wide views, JSON)
    friend bool operator==(const neuron_ls_device&, const neuron_ls_device&) = default;
};

/// What `parse_neuron_ls` or `parse_neuron_ls_json` read.
struct neuron_ls_result {
    std::vector<accelerator_profile> devices;
    std::vector<neuron_ls_device> details; ///< in the order of `devices`
    /// NeuronLink, one interconnect per connected pair (both devices listed).
    std::vector<interconnect> links;
    std::string instance_type; ///< "trn1.32xlarge"; empty when not printed
    std::string instance_id;
    std::optional<std::uint32_t> logical_nc_config; ///< logical-neuroncore-config
    std::vector<neuron_parse_problem> problems;
};

/// What `parse_neuron_ls_topology` read from the `--topology` diagram.
struct neuron_topology_result {
    std::vector<std::uint32_t> devices;                            ///< every device drawn, sorted
    std::vector<std::pair<std::uint32_t, std::uint32_t>> pairs;    ///< connected, first < second, sorted
    std::vector<neuron_parse_problem> problems;
};

namespace detail::neuron {

using detail::parsing::max_problems;
using detail::parsing::max_rows;
using detail::parsing::parse_real;
using detail::parsing::parse_uint;
using detail::parsing::printable;
using detail::parsing::problem_sink;
using detail::parsing::quote_value;

inline constexpr std::uint16_t pci_vendor_amazon = 0x1d0f;
/// The PCI driver's name (neuron_pci.c: `.name = "neuron-driver"`), as
/// /sys/bus/pci/drivers/<name> shows it.
inline constexpr std::string_view pci_driver_name = "neuron-driver";
/// The driver's class folder (neuron_cdev.c creates class "neuron_device", devices without
/// a parent, so they sit under /sys/devices/virtual).
inline constexpr std::string_view sysfs_dir = "/sys/devices/virtual/neuron_device";
/// A device index above this is garbage (the driver allows 64 devices per host).
inline constexpr std::uint64_t max_device_index = 1023;

constexpr bool is_neuron_kind(device_kind k) noexcept {
    return k == device_kind::aws_inferentia || k == device_kind::aws_trainium;
}

/// The catalogue row of a Neuron PCI device id; nullptr for other ids (an EC2 host also
/// carries Amazon's ENA NICs and EBS NVMe controllers under the same vendor id).
inline const device_spec* chip_by_pci_id(std::uint16_t device_id) noexcept {
    const auto rows = find_devices_by_pci(pci_vendor_amazon, device_id);
    if (rows.size() != 1 || !is_neuron_kind(rows[0]->kind)) return nullptr;
    return rows[0];
}

/// The chip an EC2 instance type carries: "trn1.32xlarge" → "trn1", "inf2.xlarge" →
/// "inf2", "trn2n.48xlarge" → "trn2" (letters after the generation are variants of the
/// same chip). The catalogue knows these as aliases. Empty when it is no Neuron family.
constexpr std::string_view chip_family(std::string_view instance_type) noexcept {
    instance_type = trim(instance_type);
    const bool inf = instance_type.size() >= 4 && iequals(instance_type.substr(0, 3), "inf");
    const bool trn = instance_type.size() >= 4 && iequals(instance_type.substr(0, 3), "trn");
    if (!inf && !trn) return {};
    std::size_t i = 3;
    while (i < instance_type.size() && instance_type[i] >= '0' && instance_type[i] <= '9') ++i;
    if (i == 3) return {};
    return instance_type.substr(0, i);
}
static_assert(chip_family("trn2n.48xlarge") == "trn2" && chip_family("inf2.xlarge") == "inf2" &&
              chip_family("trn1.32xlarge") == "trn1"sv && chip_family("p5.48xlarge").empty());

/// Kind of a family with no catalogue row ("trn3"): by its prefix.
constexpr std::optional<device_kind> kind_of_family(std::string_view family) noexcept {
    if (family.size() < 3) return std::nullopt;
    if (iequals(family.substr(0, 3), "trn")) return device_kind::aws_trainium;
    if (iequals(family.substr(0, 3), "inf")) return device_kind::aws_inferentia;
    return std::nullopt;
}

/// Kind of a chip the driver names ("Trainium3", "Inferentia2"), for a chip with no
/// catalogue row: by the name's start.
constexpr std::optional<device_kind> kind_of_device_name(std::string_view name) noexcept {
    name = trim(name);
    if (name.size() >= 8 && iequals(name.substr(0, 8), "trainium")) return device_kind::aws_trainium;
    if (name.size() >= 10 && iequals(name.substr(0, 10), "inferentia")) return device_kind::aws_inferentia;
    return std::nullopt;
}

/// Whether the runtime counts a chip's NeuronCores in logical cores of several physical
/// ones: Trainium2 and later (NeuronCore-v3), whose "Logical NeuronCore configuration"
/// (AWS's Neuron documentation) is 2 by default and NEURON_LOGICAL_NC_CONFIG=1 undoes.
/// `name` is the catalogue's ("AWS Trainium2") or the driver's ("Trainium3").
constexpr bool groups_logical_cores(std::string_view name) noexcept {
    name = trim(name);
    if (name.starts_with("AWS ")) name.remove_prefix(4);
    if (kind_of_device_name(name) != device_kind::aws_trainium) return false;
    std::uint32_t generation = 0;
    for (const char c : name.substr(8)) {
        if (c < '0' || c > '9' || generation > 1000) return false;
        generation = generation * 10 + static_cast<std::uint32_t>(c - '0');
    }
    return generation >= 2;
}
static_assert(groups_logical_cores("AWS Trainium2") && groups_logical_cores("Trainium3") &&
              !groups_logical_cores("Trainium1") && !groups_logical_cores("AWS Trainium") &&
              !groups_logical_cores("Inferentia2") && !groups_logical_cores("Trainium2x"));

/// Physical NeuronCores per logical one from NEURON_LOGICAL_NC_CONFIG: 1 or 2, else 2 (the
/// default where cores are grouped).
constexpr std::uint32_t logical_nc_config(const std::optional<std::string>& value) noexcept {
    if (value && trim(*value) == "1"sv) return 1;
    return 2;
}

inline const device_spec* chip_by_name(std::string_view name) noexcept {
    const device_spec* s = find_device(name);
    return s && is_neuron_kind(s->kind) ? s : nullptr;
}

inline accelerator_profile blank_device(std::uint32_t index) {
    accelerator_profile p;
    p.kind = device_kind::aws_inferentia; // replaced once the chip is known
    p.maker = vendor::amazon;
    p.index = index;
    return p;
}

// Sets kind, name and catalogue values from the chip's row.
inline void apply_chip(accelerator_profile& p, const device_spec& s) {
    p.kind = s.kind;
    if (p.name.empty()) p.name = s.name;
    p.apply_spec(s);
}

// How the parsers learn the chip: the caller's (the probe's, from PCI ids) first, then the
// instance type; problem text when neither names it.
struct chip_choice {
    const device_spec* spec = nullptr;
    std::optional<device_kind> kind;
};
inline chip_choice choose_chip(const device_spec* hint, std::string_view instance_type) {
    if (hint) return {hint, hint->kind};
    const auto family = chip_family(instance_type);
    if (family.empty()) return {};
    return {chip_by_name(family), kind_of_family(family)};
}
inline void finish_devices(std::vector<accelerator_profile>& devices, const chip_choice& chip,
                           problem_sink& problems) {
    if (devices.empty()) return;
    if (!chip.kind)
        problems.add(0, "the chip generation is not named (no instance type); reported as AWS Inferentia, "
                        "memory and peak unknown unless printed");
    for (auto& p : devices) {
        if (chip.spec) apply_chip(p, *chip.spec);
        else if (chip.kind) p.kind = *chip.kind;
    }
}

/// The NeuronLink pairs (first < second, sorted, each once) of devices' connected lists;
/// pairs naming a device not listed are left out.
inline std::vector<std::pair<std::uint32_t, std::uint32_t>>
pairs_from_connected(const std::vector<accelerator_profile>& devices, const std::vector<neuron_ls_device>& details) {
    std::vector<std::uint32_t> listed;
    for (const auto& d : devices) listed.push_back(d.index);
    std::sort(listed.begin(), listed.end());
    std::vector<std::pair<std::uint32_t, std::uint32_t>> pairs;
    for (std::size_t i = 0; i < devices.size() && i < details.size(); ++i)
        for (auto c : details[i].connected) {
            const auto a = devices[i].index;
            if (c == a || !std::binary_search(listed.begin(), listed.end(), c)) continue;
            pairs.emplace_back(std::min(a, c), std::max(a, c));
        }
    std::sort(pairs.begin(), pairs.end());
    pairs.erase(std::unique(pairs.begin(), pairs.end()), pairs.end());
    return pairs;
}

} // namespace detail::neuron

/// NeuronLink interconnects, one per connected pair of device indices. Bandwidth stays
/// unknown: AWS publishes a per-chip total, not a per-link figure.
inline std::vector<interconnect> neuronlink_pairs(const std::vector<std::pair<std::uint32_t, std::uint32_t>>& pairs) {
    std::vector<interconnect> out;
    out.reserve(pairs.size());
    for (const auto& [a, b] : pairs) {
        interconnect l;
        l.kind = interconnect_kind::neuronlink;
        l.scope = link_scope::intra_node;
        l.name = "NeuronLink " + std::to_string(a) + "-" + std::to_string(b);
        l.state = "connected";
        l.devices = {a, b};
        out.push_back(std::move(l));
    }
    return out;
}

namespace detail::neuron {

// ---------------------------------------------------------------------------------------
// The table

enum class column : std::uint8_t {
    ignored,
    device,       // NEURON DEVICE; Inf1's LOGICAL ID
    cores,        // NEURON CORES
    logical_nc,   // LOGICAL NC (Trn2 in some versions)
    memory,       // NEURON MEMORY
    memory_channel, // Inf1: MEMORY CHANNEL 0 / 1, summed
    connected,    // CONNECTED DEVICES
    bdf,          // PCI BDF
    cpu_affinity, // CPU AFFINITY
    numa,         // NUMA NODE
    pid,          // PID
};

inline column column_of(std::string_view name) noexcept {
    struct entry {
        std::string_view name;
        column c;
    };
    static constexpr entry table[] = {
        {"NEURON DEVICE", column::device},      {"LOGICAL ID", column::device},
        {"NEURON CORES", column::cores},        {"LOGICAL NC", column::logical_nc},
        {"NEURON MEMORY", column::memory},      {"MEMORY CHANNEL 0", column::memory_channel},
        {"MEMORY CHANNEL 1", column::memory_channel}, {"CONNECTED DEVICES", column::connected},
        {"PCI BDF", column::bdf},               {"CPU AFFINITY", column::cpu_affinity},
        {"NUMA NODE", column::numa},            {"PID", column::pid},
    };
    for (const auto& e : table)
        if (e.name == name) return e.c;
    return column::ignored;
}

// Cells of a "| a | b |" row; nullopt when it is not one.
inline std::optional<std::vector<std::string_view>> row_cells(std::string_view line) {
    line = trim(line);
    if (line.size() < 2 || line.front() != '|' || line.back() != '|') return std::nullopt;
    line = line.substr(1, line.size() - 2);
    std::vector<std::string_view> cells;
    for (;;) {
        const auto bar = line.find('|');
        cells.push_back(trim(line.substr(0, bar)));
        if (bar == std::string_view::npos) break;
        line.remove_prefix(bar + 1);
        if (cells.size() > 64) return std::nullopt; // no neuron-ls table is this wide
    }
    return cells;
}

constexpr bool is_border(std::string_view line) noexcept {
    line = trim(line);
    if (line.size() < 3 || line.front() != '+' || line.back() != '+') return false;
    for (char c : line)
        if (c != '+' && c != '-') return false;
    return true;
}

constexpr bool is_unavailable(std::string_view v) noexcept {
    return v.empty() || v == "N/A"sv || v == "NA"sv || v == "-"sv;
}

// "96 GB", "4096 MB": neuron-ls's sizes are binary (its JSON gives 103079215104 for "96 GB").
inline std::optional<std::uint64_t> parse_size(std::string_view v) {
    const auto sp = v.find(' ');
    if (sp == std::string_view::npos) return std::nullopt;
    const auto n = parse_real(trim(v.substr(0, sp)));
    const std::string_view unit = trim(v.substr(sp + 1));
    double scale = 0;
    if (unit == "KB"sv) scale = static_cast<double>(units::kib);
    else if (unit == "MB"sv) scale = static_cast<double>(units::mib);
    else if (unit == "GB"sv) scale = static_cast<double>(units::gib);
    else if (unit == "TB"sv) scale = static_cast<double>(units::gib) * 1024.0;
    if (!n || scale == 0 || *n < 0 || *n * scale > 1e15) return std::nullopt; // 1 PB: no device has it
    return static_cast<std::uint64_t>(*n * scale);
}

// "12, 3, 4, 1" → {12, 3, 4, 1}; nullopt on anything else.
inline std::optional<std::vector<std::uint32_t>> parse_index_list(std::string_view v) {
    std::vector<std::uint32_t> out;
    v = trim(v);
    if (v.empty()) return out;
    for (;;) {
        const auto comma = v.find(',');
        const auto n = parse_uint(trim(v.substr(0, comma)));
        if (!n || *n > max_device_index) return std::nullopt;
        out.push_back(static_cast<std::uint32_t>(*n));
        if (out.size() > 64) return std::nullopt;
        if (comma == std::string_view::npos) break;
        v.remove_prefix(comma + 1);
    }
    return out;
}

// A "key: value" line of the header neuron-ls prints above its table.
inline bool read_header_line(std::string_view line, neuron_ls_result& r, std::size_t number, problem_sink& problems) {
    const auto colon = line.find(':');
    if (colon == std::string_view::npos) return false;
    const std::string_view key = trim(line.substr(0, colon));
    const std::string_view value = trim(line.substr(colon + 1));
    bool changed = false;
    if (key == "instance-type"sv) {
        r.instance_type = printable(value, changed, 64);
    } else if (key == "instance-id"sv) {
        r.instance_id = printable(value, changed, 64);
    } else if (key == "logical-neuroncore-config"sv) {
        const auto n = parse_uint(value);
        if (!n || *n == 0 || *n > 64) problems.add(number, "logical-neuroncore-config: cannot read " + quote_value(value));
        else r.logical_nc_config = static_cast<std::uint32_t>(*n);
        return true;
    } else {
        return false;
    }
    if (changed || value.size() > 64) problems.add(number, std::string(key) + ": not printable or too long");
    return true;
}

} // namespace detail::neuron

/// Reads the `--topology` diagram (after the "Neuron Device Topology" line when there is
/// one): devices drawn as "[ n ]", "◄––►" between neighbours in a row, "│ ▲ ▼" between rows,
/// and "*––►" / "◄––*" (rows) or "*" above the first and below the last row (columns) for
/// the wrap-around links of a torus. Columns are counted in characters, not bytes.
inline neuron_topology_result parse_neuron_ls_topology(std::string_view text) {
    using namespace detail::neuron;
    neuron_topology_result r;
    problem_sink problems{r.problems};
    if (const auto title = text.find("Neuron Device Topology"); title != std::string_view::npos) {
        const auto nl = text.find('\n', title);
        text = nl == std::string_view::npos ? std::string_view{} : text.substr(nl + 1);
    }
    // Lines as characters (invalid UTF-8 bytes become '?'), up to the legend.
    constexpr std::size_t max_width = 4096, max_lines = 4096;
    std::vector<std::u32string> lines;
    std::size_t number = 0;
    detail::formats::each_line(text, [&](std::string_view raw) {
        ++number;
        if (detail::trim(raw).starts_with("Legend")) return false;
        if (lines.size() >= max_lines) {
            problems.add(number, "more than " + std::to_string(max_lines) + " diagram lines; the rest ignored");
            return false;
        }
        std::u32string chars;
        for (std::size_t i = 0; i < raw.size() && chars.size() <= max_width;) {
            const auto c = static_cast<unsigned char>(raw[i]);
            std::size_t n = c < 0x80 ? 1 : (c >> 5) == 0x6 ? 2 : (c >> 4) == 0xe ? 3 : (c >> 3) == 0x1e ? 4 : 0;
            bool ok = n != 0 && i + n <= raw.size();
            char32_t cp = n == 1 ? c : n == 2 ? (c & 0x1fu) : n == 3 ? (c & 0x0fu) : (c & 0x07u);
            for (std::size_t k = 1; ok && k < n; ++k) {
                const auto cc = static_cast<unsigned char>(raw[i + k]);
                ok = (cc & 0xC0u) == 0x80u;
                cp = (cp << 6) | (cc & 0x3fu);
            }
            if (!ok) {
                chars += U'?';
                ++i;
                continue;
            }
            chars += cp;
            i += n;
        }
        if (chars.size() > max_width) {
            problems.add(number, "diagram line wider than " + std::to_string(max_width) + " characters; ignored");
            chars.clear();
        }
        lines.push_back(std::move(chars));
        return true;
    });

    struct node {
        std::uint32_t index;
        std::size_t open, close; // columns of '[' and ']'
    };
    struct row {
        std::size_t line;
        std::vector<node> nodes;
    };
    std::vector<row> rows;
    for (std::size_t li = 0; li < lines.size(); ++li) {
        const auto& s = lines[li];
        row rw{li, {}};
        for (std::size_t i = 0; i < s.size(); ++i) {
            if (s[i] != U'[') continue;
            std::size_t j = i + 1;
            while (j < s.size() && s[j] == U' ') ++j;
            std::uint64_t v = 0;
            std::size_t digits = 0;
            while (j < s.size() && s[j] >= U'0' && s[j] <= U'9' && digits < 6) {
                v = v * 10 + static_cast<std::uint64_t>(s[j] - U'0');
                ++j;
                ++digits;
            }
            while (j < s.size() && s[j] == U' ') ++j;
            if (digits == 0 || j >= s.size() || s[j] != U']') continue;
            if (v > max_device_index) {
                problems.add(li + 1, "device number out of range");
                continue;
            }
            rw.nodes.push_back({static_cast<std::uint32_t>(v), i, j});
            i = j;
        }
        if (!rw.nodes.empty()) rows.push_back(std::move(rw));
        if (rows.size() > max_rows) break;
    }
    auto at = [&](std::size_t li, std::size_t c) -> char32_t { return c < lines[li].size() ? lines[li][c] : U' '; };
    auto vertical = [](char32_t c) { return c == U'\u2502' || c == U'\u25B2' || c == U'\u25BC' || c == U'|'; };
    auto horizontal = [](std::u32string_view between) {
        while (!between.empty() && between.front() == U' ') between.remove_prefix(1);
        while (!between.empty() && between.back() == U' ') between.remove_suffix(1);
        bool dash = false;
        for (char32_t c : between) {
            if (c == U'\u2013' || c == U'-' || c == U'\u2014' || c == U'\u2500') dash = true;
            else if (c != U'\u25C4' && c != U'\u25BA' && c != U'<' && c != U'>') return false;
        }
        return dash;
    };
    auto add = [&](std::uint32_t a, std::uint32_t b) {
        if (a != b) r.pairs.emplace_back(std::min(a, b), std::max(a, b));
    };
    // Vertical chain from line `from` (exclusive) stepping `step` until a line that is not a
    // vertical stroke at column c; returns that line, or nullopt when it ran off the text.
    auto chain_end = [&](std::size_t from, int step, std::size_t c) -> std::optional<std::size_t> {
        std::size_t li = from;
        bool any = false;
        for (;;) {
            if (step < 0 && li == 0) return std::nullopt;
            li = step < 0 ? li - 1 : li + 1;
            if (li >= lines.size()) return std::nullopt;
            if (!vertical(at(li, c))) return any ? std::optional<std::size_t>(li) : std::nullopt;
            any = true;
        }
    };
    for (std::size_t k = 0; k < rows.size(); ++k) {
        const auto& rw = rows[k];
        const std::u32string_view s = lines[rw.line];
        for (const auto& n : rw.nodes) r.devices.push_back(n.index);
        for (std::size_t i = 0; i + 1 < rw.nodes.size(); ++i)
            if (horizontal(s.substr(rw.nodes[i].close + 1, rw.nodes[i + 1].open - rw.nodes[i].close - 1)))
                add(rw.nodes[i].index, rw.nodes[i + 1].index);
        // Row wrap-around: "*––►" before the first device and "◄––*" after the last.
        const auto before = s.substr(0, rw.nodes.front().open);
        const auto after = s.substr(rw.nodes.back().close + 1);
        if (before.find(U'*') != std::u32string_view::npos && after.find(U'*') != std::u32string_view::npos &&
            rw.nodes.size() > 1)
            add(rw.nodes.front().index, rw.nodes.back().index);
        // Down to the next row.
        for (const auto& n : rw.nodes)
            for (std::size_t c = n.open; c <= n.close; ++c) {
                const auto end = chain_end(rw.line, 1, c);
                if (!end) continue;
                if (k + 1 < rows.size() && *end == rows[k + 1].line) {
                    for (const auto& m : rows[k + 1].nodes)
                        if (m.open <= c && c <= m.close) add(n.index, m.index);
                } else if (k + 1 == rows.size() && at(*end, c) == U'*') {
                    // Column wrap-around: '*' below the last row and above the first.
                    const auto top = chain_end(rows.front().line, -1, c);
                    if (top && at(*top, c) == U'*')
                        for (const auto& m : rows.front().nodes)
                            if (m.open <= c && c <= m.close) add(n.index, m.index);
                }
                break;
            }
    }
    std::sort(r.devices.begin(), r.devices.end());
    if (std::adjacent_find(r.devices.begin(), r.devices.end()) != r.devices.end())
        problems.add(0, "a device is drawn more than once");
    r.devices.erase(std::unique(r.devices.begin(), r.devices.end()), r.devices.end());
    std::sort(r.pairs.begin(), r.pairs.end());
    r.pairs.erase(std::unique(r.pairs.begin(), r.pairs.end()), r.pairs.end());
    problems.finish();
    return r;
}

/// Reads neuron-ls's text: the optional "instance-type:", "instance-id:" and
/// "logical-neuroncore-config:" lines, the table (any of its layouts; columns are found by
/// their header names, unknown columns ignored; rows with an empty device cell are further
/// processes of the device above), and a `--topology` diagram when one follows. `chip` is
/// the chip when the caller knows it (the probe, from PCI ids); otherwise the instance type
/// names it. Values printed are origin::tool; the rest comes from the catalogue.
inline neuron_ls_result parse_neuron_ls(std::string_view text, const device_spec* chip = nullptr) {
    using namespace detail::neuron;
    neuron_ls_result r;
    problem_sink problems{r.problems};
    enum class state { before, header, rows, after } st = state::before;
    std::vector<std::string> names; // header cells joined per column
    std::vector<column> columns;
    std::size_t command_col = 0; // the COMMAND column's position; columns.size() when none
    std::size_t number = 0;
    std::size_t diagram_at = std::string_view::npos;
    std::size_t offset = 0;
    bool closed = false; // the last table line seen was a border
    detail::formats::each_line(text, [&](std::string_view raw) {
        ++number;
        const std::size_t line_start = offset;
        offset += raw.size() + 1;
        const std::string_view line = detail::trim(raw);
        if (line.empty()) return true;
        if (line.starts_with("Neuron Device Topology")) {
            diagram_at = line_start;
            return false;
        }
        closed = is_border(line);
        if (closed) {
            if (st == state::before) st = state::header;
            else if (st == state::header) {
                columns.clear();
                for (const auto& n : names) columns.push_back(column_of(n));
                command_col = static_cast<std::size_t>(std::find(names.begin(), names.end(), "COMMAND") -
                                                       names.begin());
                if (std::find(columns.begin(), columns.end(), column::device) == columns.end()) {
                    problems.add(number, "the table has no NEURON DEVICE column");
                    st = state::after;
                } else {
                    st = state::rows;
                }
            }
            return true; // borders inside the rows separate devices (--show-all-procs)
        }
        if (st == state::before) {
            if (!read_header_line(line, r, number, problems)) problems.add(number, "not understood: " + quote_value(line));
            return true;
        }
        if (st == state::after) {
            problems.add(number, "not understood: " + quote_value(line));
            return true;
        }
        auto cells = row_cells(line);
        if (!cells) {
            problems.add(number, "not a table row: " + quote_value(line));
            return true;
        }
        if (st == state::header) {
            if (names.empty()) names.resize(cells->size());
            if (cells->size() != names.size()) {
                problems.add(number, "header rows of different widths");
                st = state::after;
                return true;
            }
            for (std::size_t i = 0; i < cells->size(); ++i) {
                if ((*cells)[i].empty()) continue;
                if (!names[i].empty()) names[i] += ' ';
                names[i] += std::string((*cells)[i].substr(0, 64));
            }
            return true;
        }
        // A device row, or a further process of the device above. The COMMAND cell is the
        // process's command line, which may hold a '|' of its own: extra cells go back into it.
        if (cells->size() > columns.size() && command_col < columns.size()) {
            const std::size_t extra = cells->size() - columns.size();
            const std::string_view first = (*cells)[command_col], last = (*cells)[command_col + extra];
            (*cells)[command_col] = std::string_view(first.data(), static_cast<std::size_t>(
                                                                     last.data() + last.size() - first.data()));
            cells->erase(cells->begin() + static_cast<std::ptrdiff_t>(command_col) + 1,
                         cells->begin() + static_cast<std::ptrdiff_t>(command_col + extra) + 1);
        }
        if (cells->size() != columns.size()) {
            problems.add(number, std::to_string(cells->size()) + " cells for " + std::to_string(columns.size()) +
                                     " columns; row skipped");
            return true;
        }
        std::size_t device_col = 0;
        while (columns[device_col] != column::device) ++device_col;
        if ((*cells)[device_col].empty()) {
            if (r.devices.empty()) {
                problems.add(number, "a process row before any device row");
                return true;
            }
            for (std::size_t i = 0; i < columns.size(); ++i)
                if (columns[i] == column::pid && !is_unavailable((*cells)[i])) {
                    if (const auto pid = parse_uint((*cells)[i])) r.details.back().pids.push_back(*pid);
                    else problems.add(number, "PID: cannot read " + quote_value((*cells)[i]));
                }
            return true;
        }
        if (r.devices.size() >= max_rows) {
            problems.add(number, "more than " + std::to_string(max_rows) + " devices; the rest ignored");
            return false;
        }
        const auto index = parse_uint((*cells)[device_col]);
        if (!index || *index > max_device_index) {
            problems.add(number, "device number: cannot read " + quote_value((*cells)[device_col]));
            return true;
        }
        accelerator_profile p = blank_device(static_cast<std::uint32_t>(*index));
        neuron_ls_device extra;
        std::optional<std::uint64_t> channels;
        bool channel_bad = false;
        for (std::size_t i = 0; i < columns.size(); ++i) {
            const std::string_view v = (*cells)[i];
            const auto bad = [&] { problems.add(number, names[i] + ": cannot read " + quote_value(v)); };
            if (columns[i] == column::ignored || columns[i] == column::device || is_unavailable(v)) continue;
            switch (columns[i]) {
            case column::cores:
            case column::logical_nc: {
                const auto n = parse_uint(v);
                if (!n || *n == 0 || *n > 1024) {
                    bad();
                    break;
                }
                // The runtime numbers logical cores where a LOGICAL NC column gives them.
                if (columns[i] == column::logical_nc || !p.compute_units)
                    p.compute_units = {static_cast<std::uint32_t>(*n), origin::tool};
                break;
            }
            case column::memory:
                if (const auto b = parse_size(v)) p.memory_bytes = {*b, origin::tool};
                else bad();
                break;
            case column::memory_channel:
                if (const auto b = parse_size(v)) channels = channels.value_or(0) + *b;
                else {
                    channel_bad = true;
                    bad();
                }
                break;
            case column::connected:
                if (const auto l = parse_index_list(v)) extra.connected = *l;
                else bad();
                break;
            case column::bdf:
                if (const auto a = parse_pci_address(v)) p.pci = *a;
                else bad();
                break;
            case column::cpu_affinity:
                if (parse_cpulist(v)) extra.cpu_affinity = std::string(v);
                else bad();
                break;
            case column::numa: {
                const auto n = detail::parse_i64(v);
                if (!n || *n < -1 || *n >= (1 << 16)) bad();
                else if (*n >= 0) p.numa_node = {static_cast<std::int32_t>(*n), origin::tool};
                break;
            }
            case column::pid:
                if (const auto pid = parse_uint(v)) extra.pids.push_back(*pid);
                else bad();
                break;
            case column::ignored:
            case column::device: break;
            }
        }
        if (channels && !channel_bad) p.memory_bytes = {*channels, origin::tool};
        r.devices.push_back(p);
        r.details.push_back(std::move(extra));
        return true;
    });
    if (st == state::header) problems.add(0, "the table's header is not closed");
    if (st == state::rows && !closed) problems.add(0, "the table is not closed: the output may be cut short");
    detail::neuron::finish_devices(r.devices, choose_chip(chip, r.instance_type), problems);
    auto pairs = pairs_from_connected(r.devices, r.details);
    if (diagram_at != std::string_view::npos) {
        auto topo = parse_neuron_ls_topology(text.substr(diagram_at));
        for (auto& pr : topo.problems) problems.add(pr.line, "topology: " + pr.message);
        if (!r.devices.empty() && topo.pairs != pairs)
            problems.add(0, "the topology diagram and the CONNECTED DEVICES column disagree; both used");
        std::vector<std::uint32_t> listed;
        for (const auto& d : r.devices) listed.push_back(d.index);
        std::sort(listed.begin(), listed.end());
        for (const auto& pr : topo.pairs)
            if (r.devices.empty() || (std::binary_search(listed.begin(), listed.end(), pr.first) &&
                                      std::binary_search(listed.begin(), listed.end(), pr.second)))
                pairs.push_back(pr);
        std::sort(pairs.begin(), pairs.end());
        pairs.erase(std::unique(pairs.begin(), pairs.end()), pairs.end());
    }
    r.links = neuronlink_pairs(pairs);
    problems.finish();
    return r;
}

#if AI_HWACCEL_JSON
namespace detail::neuron {
// A JSON value as a whole number: an unsigned integer, or a string holding one (numa_node
// is printed as a string, "-1" for none).
inline std::optional<std::int64_t> json_int(const nlohmann::json& v) {
    if (v.is_number_unsigned()) {
        const auto u = v.get<std::uint64_t>();
        if (u > static_cast<std::uint64_t>(INT64_MAX)) return std::nullopt;
        return static_cast<std::int64_t>(u);
    }
    if (v.is_number_integer()) return v.get<std::int64_t>();
    if (v.is_string()) return detail::parse_i64(trim(v.get_ref<const std::string&>()));
    return std::nullopt;
}
} // namespace detail::neuron

/// Reads `neuron-ls --json-output`: an array with one object per device, keys
/// neuron_device, bdf, cpu_affinity, numa_node (a string), connected_to (null or an
/// array), nc_count, logical_neuroncore_config, memory_size (bytes), neuroncore_ids,
/// neuron_processes, and in newer versions instance_type and instance_id. Unknown keys are
/// ignored. `chip` as for parse_neuron_ls.
inline neuron_ls_result parse_neuron_ls_json(std::string_view text, const device_spec* chip = nullptr) {
    using namespace detail::neuron;
    neuron_ls_result r;
    problem_sink problems{r.problems};
    if (detail::trim(text).empty()) {
        problems.finish();
        return r;
    }
    const auto j = nlohmann::json::parse(text.begin(), text.end(), nullptr, /*allow_exceptions=*/false);
    if (j.is_discarded() || !(j.is_array() || j.is_object())) {
        problems.add(0, j.is_discarded() ? "not valid JSON" : "JSON is not an array of devices");
        problems.finish();
        return r;
    }
    const nlohmann::json one = j.is_object() ? nlohmann::json::array({j}) : nlohmann::json::array();
    const nlohmann::json& list = j.is_object() ? one : j;
    std::size_t n = 0;
    for (const auto& e : list) {
        ++n;
        const std::string where = "device entry " + std::to_string(n);
        if (r.devices.size() >= max_rows) {
            problems.add(0, "more than " + std::to_string(max_rows) + " devices; the rest ignored");
            break;
        }
        if (!e.is_object()) {
            problems.add(0, where + " is not an object");
            continue;
        }
        const auto get = [&](const char* key) -> const nlohmann::json* {
            const auto it = e.find(key);
            return it == e.end() || it->is_null() ? nullptr : &*it;
        };
        const auto bad = [&](const char* key) { problems.add(0, where + ": " + key + " cannot be read"); };
        const auto* idx = get("neuron_device");
        const auto index = idx ? json_int(*idx) : std::nullopt;
        if (!index || *index < 0 || static_cast<std::uint64_t>(*index) > max_device_index) {
            problems.add(0, where + ": no usable neuron_device; skipped");
            continue;
        }
        accelerator_profile p = blank_device(static_cast<std::uint32_t>(*index));
        neuron_ls_device extra;
        bool changed = false;
        for (const char* key : {"instance_type", "instance_id"}) {
            const auto* v = get(key);
            if (!v) continue;
            if (!v->is_string()) {
                bad(key);
                continue;
            }
            const auto s = printable(v->get_ref<const std::string&>(), changed, 64);
            (std::string_view(key) == "instance_type"sv ? r.instance_type : r.instance_id) = s;
        }
        if (const auto* v = get("bdf")) {
            const auto a = v->is_string() ? parse_pci_address(v->get_ref<const std::string&>()) : std::nullopt;
            if (a) p.pci = *a;
            else bad("bdf");
        }
        if (const auto* v = get("cpu_affinity")) {
            if (v->is_string() && parse_cpulist(v->get_ref<const std::string&>()))
                extra.cpu_affinity = v->get<std::string>();
            else bad("cpu_affinity");
        }
        if (const auto* v = get("numa_node")) {
            const auto node = json_int(*v);
            if (!node || *node < -1 || *node >= (1 << 16)) bad("numa_node");
            else if (*node >= 0) p.numa_node = {static_cast<std::int32_t>(*node), origin::tool};
        }
        if (const auto* v = get("connected_to")) {
            if (!v->is_array() || v->size() > 64) bad("connected_to");
            else
                for (const auto& c : *v) {
                    const auto d = json_int(c);
                    if (!d || *d < 0 || static_cast<std::uint64_t>(*d) > max_device_index) {
                        bad("connected_to");
                        break;
                    }
                    extra.connected.push_back(static_cast<std::uint32_t>(*d));
                }
        }
        if (const auto* v = get("nc_count")) {
            const auto c = json_int(*v);
            if (!c || *c <= 0 || *c > 1024) bad("nc_count");
            else p.compute_units = {static_cast<std::uint32_t>(*c), origin::tool};
        }
        if (const auto* v = get("logical_neuroncore_config")) {
            const auto c = json_int(*v);
            if (!c || *c <= 0 || *c > 64) bad("logical_neuroncore_config");
            else r.logical_nc_config = static_cast<std::uint32_t>(*c);
        }
        if (const auto* v = get("memory_size")) {
            if (v->is_number_unsigned() && v->get<std::uint64_t>() <= (std::uint64_t{1} << 50))
                p.memory_bytes = {v->get<std::uint64_t>(), origin::tool};
            else bad("memory_size");
        }
        if (const auto* v = get("neuron_processes")) {
            if (!v->is_array()) bad("neuron_processes");
            else
                for (const auto& proc : *v) {
                    if (!proc.is_object()) continue;
                    const auto it = proc.find("pid");
                    if (it != proc.end() && it->is_number_unsigned()) extra.pids.push_back(it->get<std::uint64_t>());
                    if (extra.pids.size() >= 1024) break;
                }
        }
        if (changed) problems.add(0, where + ": instance type or id not printable");
        r.devices.push_back(p);
        r.details.push_back(std::move(extra));
    }
    finish_devices(r.devices, choose_chip(chip, r.instance_type), problems);
    r.links = neuronlink_pairs(pairs_from_connected(r.devices, r.details));
    problems.finish();
    return r;
}
#endif // AI_HWACCEL_JSON

// ---------------------------------------------------------------------------------------
// The probe

/// One device as the driver's sysfs folder /sys/devices/virtual/neuron_device/neuron<N>
/// describes it (or only its /dev/neuron<N> node, where sysfs is not mounted).
struct neuron_sysfs_device {
    std::uint32_t index = 0;
    std::optional<std::uint32_t> core_count;  ///< core_count: NeuronCores per device (physical)
    std::vector<std::uint32_t> connected;     ///< connected_devices
    std::string device_name;                  ///< info/architecture/device_name ("Trainium1")
    friend bool operator==(const neuron_sysfs_device&, const neuron_sysfs_device&) = default;
};

/// The driver's files are one line each: connected_devices "12, 3, 4, 1\n" (or "\n"),
/// core_count "2" (no newline).
inline std::optional<std::vector<std::uint32_t>> parse_neuron_connected_devices(std::string_view text) {
    return detail::neuron::parse_index_list(detail::trim(text));
}

namespace detail::neuron {

// "neuron12" → 12; nullopt for other names.
constexpr std::optional<std::uint32_t> node_index(std::string_view name) noexcept {
    if (!name.starts_with("neuron") || name.size() > 10) return std::nullopt;
    const auto n = detail::parse_u64(name.substr(6));
    if (!n || *n > max_device_index) return std::nullopt;
    return static_cast<std::uint32_t>(*n);
}
static_assert(node_index("neuron0") == 0u && node_index("neuron15") == 15u && !node_index("neuron_core0") &&
              !node_index("neuron"));

// A file the driver makes readable by root only (core_count, connected_devices are
// S_IRUSR): unreadable as a user is the normal case and says nothing.
template <system_view S>
std::optional<std::string> read_quietly(const S& sys, const std::string& path, std::vector<warning>& warnings) {
    auto r = sys.read_file(path, 4096);
    if (r.status == read_status::ok) return std::move(r.data);
    if (r.status == read_status::truncated)
        detail::add_warning(warnings, warning_kind::output_truncated, path, "longer than the driver writes; ignored");
    return std::nullopt;
}

} // namespace detail::neuron

/// The Neuron devices the driver lists: folders neuron<N> under its sysfs class folder,
/// and /dev/neuron<N> nodes, by index.
template <system_view S>
std::vector<neuron_sysfs_device> probe_neuron_sysfs(const S& sys, std::vector<warning>& warnings) {
    using namespace detail::neuron;
    std::vector<std::uint32_t> indices;
    const auto dirs = sys.list_dir(sysfs_dir);
    if (dirs)
        for (const auto& n : *dirs)
            if (const auto i = node_index(n)) indices.push_back(*i);
    if (const auto dev = sys.list_dir("/dev"))
        for (const auto& n : *dev)
            if (const auto i = node_index(n)) indices.push_back(*i);
    std::sort(indices.begin(), indices.end());
    indices.erase(std::unique(indices.begin(), indices.end()), indices.end());
    std::vector<neuron_sysfs_device> out;
    for (auto i : indices) {
        if (out.size() >= max_rows) break;
        neuron_sysfs_device d;
        d.index = i;
        const std::string dir = std::string(sysfs_dir) + "/neuron" + std::to_string(i);
        if (const auto t = read_quietly(sys, dir + "/core_count", warnings)) {
            const auto n = detail::parse_u64(detail::trim(*t));
            if (n && *n > 0 && *n <= 1024) d.core_count = static_cast<std::uint32_t>(*n);
            else detail::add_warning(warnings, warning_kind::parse_error, dir + "/core_count", "not a core count");
        }
        if (const auto t = read_quietly(sys, dir + "/connected_devices", warnings)) {
            if (const auto l = parse_neuron_connected_devices(*t)) d.connected = *l;
            else detail::add_warning(warnings, warning_kind::parse_error, dir + "/connected_devices",
                                     "not a list of device numbers");
        }
        if (const auto t = read_quietly(sys, dir + "/info/architecture/device_name", warnings)) {
            bool changed = false;
            d.device_name = printable(detail::trim(*t), changed, 32);
            if (changed) {
                detail::add_warning(warnings, warning_kind::parse_error, dir + "/info/architecture/device_name",
                                    "not printable");
                d.device_name.clear();
            }
        }
        out.push_back(std::move(d));
    }
    return out;
}

/// The Neuron PCI functions (Amazon's vendor id with a Neuron device id of the catalogue),
/// by address; functions bound to another driver (vfio-pci: passed to a VM) are left out.
template <system_view S>
std::vector<pci_device> neuron_pci_functions(const S& sys) {
    std::vector<warning> ignored; // the host probes report the PCI bus's own problems
    std::vector<pci_device> out;
    for (auto& d : probe_pci(sys, ignored)) {
        if (d.vendor_id != detail::neuron::pci_vendor_amazon || !detail::neuron::chip_by_pci_id(d.device_id)) continue;
        if (!d.driver.empty() && d.driver != detail::neuron::pci_driver_name) continue;
        out.push_back(std::move(d));
    }
    return out;
}

/// The neuron-ls run of the probe: JSON where the build reads JSON, else the table.
inline tool_request neuron_ls_request(bool json = AI_HWACCEL_JSON) {
    using namespace std::chrono_literals;
    if (json) return tool_request{{"neuron-ls", "--json-output"}, 10s};
    return tool_request{{"neuron-ls"}, 10s};
}

/// AWS Neuron devices: neuron-ls when it is installed, the driver's sysfs files and the PCI
/// bus otherwise (and for what neuron-ls leaves out: the chip from the PCI device id, PCIe
/// links and NUMA nodes from PCI sysfs). A missing neuron-ls is a warning only where Neuron
/// devices are present.
struct neuron_probe {
    static constexpr backend_id backend = backend_id::neuron;

    template <system_view S>
    probe_output probe(const S& sys) const {
        using namespace detail::neuron;
        probe_output out;
        const auto pci = neuron_pci_functions(sys);
        auto nodes = probe_neuron_sysfs(sys, out.warnings);
        for (auto& w : out.warnings)
            if (!w.backend) w.backend = backend;

        // The chip, when the machine has only one kind (every instance type does).
        const device_spec* chip = nullptr;
        bool mixed = false;
        for (const auto& f : pci) {
            const auto* s = chip_by_pci_id(f.device_id);
            if (chip && s != chip) mixed = true;
            chip = s;
        }
        if (!chip)
            for (const auto& n : nodes)
                if (const auto* s = chip_by_name(n.device_name)) {
                    if (chip && s != chip) mixed = true;
                    chip = s;
                }
        if (mixed) chip = nullptr;

        const bool present = !pci.empty() || !nodes.empty();
        auto listed = run_neuron_ls(sys, chip, present, out);
        if (listed && listed->devices.empty() && present) {
            // neuron-ls sees none where the driver or the bus shows some: theirs are kept.
            out.warnings.push_back(warning{warning_kind::disagreement, backend, "neuron-ls",
                                           "lists no device, the driver's sysfs files or the PCI bus " +
                                               std::to_string(std::max(pci.size(), nodes.size())) +
                                               "; those are reported",
                                           0});
            listed.reset();
        }
        if (listed) {
            out.devices = std::move(listed->devices);
            out.links = std::move(listed->links);
        } else {
            from_sysfs(nodes, pci, chip, logical_nc_config(sys.env("NEURON_LOGICAL_NC_CONFIG")), out);
        }
        // In a container given some of the devices, sysfs (not namespaced) still shows them
        // all; only those granted have their /dev/neuron<N>. A /dev that can be listed decides.
        if (const auto dev = sys.list_dir("/dev"))
            for (auto& d : out.devices)
                if (std::find(dev->begin(), dev->end(), "neuron" + std::to_string(d.index)) == dev->end())
                    d.available = false;
        // Per-device chip from its own PCI function where the machine mixes kinds, and the
        // PCI function's link and NUMA node.
        for (auto& d : out.devices) {
            if (!d.pci) continue;
            for (const auto& f : pci) {
                if (f.address != *d.pci) continue;
                if (!d.spec)
                    if (const auto* s = chip_by_pci_id(f.device_id)) apply_chip(d, *s);
                d.pci_device_id = f.device_id;
                if (f.link_current) d.pcie_current = f.link_current;
                if (f.link_max) d.pcie_max = f.link_max;
                if (!d.numa_node && f.numa_node >= 0) d.numa_node = {f.numa_node, origin::sysfs};
            }
        }
        return out;
    }

private:
    template <system_view S>
    static std::optional<neuron_ls_result> run_neuron_ls(const S& sys, const device_spec* chip, bool present,
                                                         probe_output& out) {
        std::vector<warning> first;
#if AI_HWACCEL_JSON
        {
            const tool_request request = neuron_ls_request(true);
            tool_result r = sys.run(request);
            if (tool_missing(r, out.warnings)) return missing(present, out);
            // Nothing printed is not "no devices": it would hide what sysfs found.
            if (report_tool_result(request, r, backend, first) && !report_empty_output(request, r, backend, first)) {
                auto parsed = parse_neuron_ls_json(r.out, chip);
                if (!parsed.devices.empty() || parsed.problems.empty()) {
                    out.warnings.insert(out.warnings.end(), first.begin(), first.end());
                    detail::parsing::problems_to_warnings(parsed.problems, backend, "neuron-ls --json-output",
                                                          out.warnings);
                    return parsed;
                }
                detail::parsing::problems_to_warnings(parsed.problems, backend, "neuron-ls --json-output", first);
            }
            // A tool that hung, was killed or cannot be run would do the same again: no
            // second try, which would double the wait.
            if (r.status != tool_status::exited && r.status != tool_status::truncated) {
                out.warnings.insert(out.warnings.end(), first.begin(), first.end());
                return std::nullopt;
            }
            // Neuron 2.34 dropped --json-output; the table has the same facts.
        }
#endif
        const tool_request request = neuron_ls_request(false);
        tool_result r = sys.run(request);
        if (tool_missing(r, out.warnings)) return missing(present, out);
        if (!report_tool_result(request, r, backend, out.warnings) ||
            report_empty_output(request, r, backend, out.warnings)) {
            out.warnings.insert(out.warnings.end(), first.begin(), first.end());
            return std::nullopt;
        }
        auto parsed = parse_neuron_ls(r.out, chip);
        detail::parsing::problems_to_warnings(parsed.problems, backend, "neuron-ls", out.warnings);
        return parsed;
    }

    static std::optional<neuron_ls_result> missing(bool present, probe_output& out) {
        if (present)
            out.warnings.push_back(warning{warning_kind::tool_not_found, backend, "neuron-ls",
                                           "Neuron device(s) present but neuron-ls is not installed in any trusted "
                                           "folder; listed from the driver's sysfs files and the PCI bus",
                                           0});
        return std::nullopt;
    }

    // The driver's core_count is physical; the runtime, and NEURON_RT_VISIBLE_CORES, count
    // logical cores of `logical_nc` physical ones on the chips that group them. A chip with
    // no catalogue row gets its kind and name from the driver's device_name. Without the
    // driver's devices (the driver not loaded yet), each Neuron PCI function is a device,
    // its chip told by its PCI id.
    static void from_sysfs(const std::vector<neuron_sysfs_device>& nodes, const std::vector<pci_device>& pci,
                           const device_spec* chip, std::uint32_t logical_nc, probe_output& out) {
        using namespace detail::neuron;
        if (nodes.empty()) {
            std::uint32_t index = 0;
            for (const auto& f : pci) {
                accelerator_profile p = blank_device(index++);
                const device_spec* s = chip_by_pci_id(f.device_id);
                if (s) apply_chip(p, *s);
                p.pci = f.address;
                out.devices.push_back(p);
            }
            return;
        }
        std::vector<neuron_ls_device> details;
        bool unnamed = false;
        for (const auto& n : nodes) {
            accelerator_profile p = blank_device(n.index);
            const device_spec* s = chip_by_name(n.device_name);
            if (!s) s = chip;
            if (n.core_count) p.compute_units = {*n.core_count, origin::sysfs};
            if (s) {
                apply_chip(p, *s);
            } else if (const auto kind = kind_of_device_name(n.device_name)) {
                p.kind = *kind;
                p.name.assign("AWS " + n.device_name);
            } else {
                unnamed = true;
            }
            if (auto& cores = p.compute_units; cores && groups_logical_cores(s ? s->name : std::string_view(n.device_name)))
                cores = {*cores / logical_nc > 0 ? *cores / logical_nc : 1, cores.from};
            // The driver's devices have no parent in sysfs, so which PCI function is which
            // is only sure when there is one of each.
            if (nodes.size() == 1 && pci.size() == 1) p.pci = pci.front().address;
            out.devices.push_back(p);
            details.push_back({n.connected, {}, {}});
        }
        out.links = neuronlink_pairs(pairs_from_connected(out.devices, details));
        if (unnamed)
            out.warnings.push_back(warning{warning_kind::parse_error, backend, "/sys/devices/virtual/neuron_device",
                                           "the chip generation is not named (no device_name the driver gives, no "
                                           "PCI id that tells): reported as Inferentia",
                                           0});
    }
};
#if AI_HWACCEL_OS_LINUX || AI_HWACCEL_OS_MACOS
static_assert(backend_probe<neuron_probe, host_system>);
#endif

// ---------------------------------------------------------------------------------------
// Capture formats

namespace detail::formats {

namespace neuron_sniff {
// The table's first header row: "| NEURON | NEURON | …", or Inf1's "| PCI BDF | LOGICAL |".
constexpr bool has_neuron_header(std::string_view t) noexcept {
    bool found = false;
    each_line(t, [&](std::string_view line) {
        line = trim(line);
        if (line.starts_with("| NEURON ") && line.find("| NEURON ", 1) != std::string_view::npos) found = true;
        if (line.starts_with("|   PCI BDF") && line.find("LOGICAL") != std::string_view::npos) found = true;
        return !found;
    });
    return found && t.find("+--------+") != std::string_view::npos;
}
// A header row with a cell reading "PID" (--wide, --show-all-procs, newer default views).
constexpr bool has_pid_column(std::string_view t) noexcept {
    bool found = false;
    each_line(t, [&](std::string_view line) {
        line = trim(line);
        if (!line.starts_with("| NEURON ")) return true;
        while (!line.empty() && !found) {
            const auto bar = line.find('|');
            found = trim(line.substr(0, bar)) == "PID"sv;
            line = bar == std::string_view::npos ? std::string_view{} : line.substr(bar + 1);
        }
        return !found;
    });
    return found;
}
constexpr bool has_diagram(std::string_view t) noexcept {
    return t.find("Neuron Device Topology") != std::string_view::npos;
}
} // namespace neuron_sniff

inline void neuron_problems_to_warnings(const std::vector<parse_problem>& problems, std::string_view subject,
                                        std::vector<warning>& out) {
    detail::parsing::problems_to_warnings(problems, backend_id::neuron, subject, out);
}

inline void parse_neuron_ls_text_capture(std::string_view t, capture_parse& out) {
    auto r = parse_neuron_ls(t);
    neuron_problems_to_warnings(r.problems, out.format, out.warnings);
    if (r.devices.empty() && r.problems.empty()) nothing_found(out, "Neuron device rows");
    out.devices = std::move(r.devices);
    if (!r.links.empty()) {
        system_io io;
        io.interconnects = std::move(r.links);
        out.system = std::move(io);
    }
}

// neuron-ls (default table) --------------------------------------------------------------
inline int sniff_neuron_ls(std::string_view t) noexcept {
    using namespace neuron_sniff;
    return has_neuron_header(t) && !has_pid_column(t) && !has_diagram(t) ? 90 : 0;
}
inline void parse_neuron_ls_capture(std::string_view t, capture_parse& out) { parse_neuron_ls_text_capture(t, out); }

// neuron-ls --wide / --show-all-procs (process columns) -----------------------------------
inline int sniff_neuron_ls_wide(std::string_view t) noexcept {
    using namespace neuron_sniff;
    return has_neuron_header(t) && has_pid_column(t) && !has_diagram(t) ? 90 : 0;
}
inline void parse_neuron_ls_wide_capture(std::string_view t, capture_parse& out) {
    parse_neuron_ls_text_capture(t, out);
}

// neuron-ls --topology (table and diagram) ------------------------------------------------
inline int sniff_neuron_ls_topology(std::string_view t) noexcept {
    using namespace neuron_sniff;
    return has_diagram(t) && (has_neuron_header(t) || t.find("[ 0 ]") != std::string_view::npos) ? 90 : 0;
}
inline void parse_neuron_ls_topology_capture(std::string_view t, capture_parse& out) {
    parse_neuron_ls_text_capture(t, out);
}

#if AI_HWACCEL_JSON
// neuron-ls --json-output ------------------------------------------------------------------
inline int sniff_neuron_ls_json(std::string_view t) noexcept {
    const auto first = first_non_blank_line(t);
    if (!(first.starts_with("[") || first.starts_with("{"))) return 0;
    const bool device = t.find("\"neuron_device\"") != std::string_view::npos;
    const bool cores = t.find("\"nc_count\"") != std::string_view::npos ||
                       t.find("\"neuroncore_ids\"") != std::string_view::npos;
    return device && cores ? 90 : 0;
}
inline void parse_neuron_ls_json_capture(std::string_view t, capture_parse& out) {
    auto r = parse_neuron_ls_json(t);
    neuron_problems_to_warnings(r.problems, out.format, out.warnings);
    if (r.devices.empty() && r.problems.empty()) nothing_found(out, "Neuron devices");
    out.devices = std::move(r.devices);
    if (!r.links.empty()) {
        system_io io;
        io.interconnects = std::move(r.links);
        out.system = std::move(io);
    }
}
#endif

} // namespace detail::formats

AI_HWACCEL_NAMESPACE_END

#endif // AI_HWACCEL_BACKEND_NEURON
