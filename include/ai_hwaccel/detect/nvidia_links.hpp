// ai-hwaccel detect: how NVIDIA GPUs are wired, and NVIDIA GPUs without nvidia-smi.
//
// Pure parsers for `nvidia-smi topo -m` (and the P2P status matrices of `topo -p2p …`,
// which share its layout), `nvidia-smi nvlink -s`, and the driver's per-GPU
// `/proc/driver/nvidia/gpus/<bus id>/information` file; the MIG instances of `nvidia-smi
// -L` as devices; and `nvidia_gpus_from_driver`, which lists NVIDIA GPUs from the kernel
// driver's files and PCI sysfs alone, for machines where nvidia-smi is missing. Like the
// parsers of detect/nvidia.hpp they never throw for any input, report what they cannot
// read as problems, and leave unknown what the text does not say.
#pragma once

#include "ai_hwaccel/config.hpp"

#if AI_HWACCEL_BACKEND_CUDA

#include "ai_hwaccel/core/catalogue.hpp"
#include "ai_hwaccel/core/pci.hpp"
#include "ai_hwaccel/core/profile.hpp"
#include "ai_hwaccel/core/system_io.hpp"
#include "ai_hwaccel/core/taxonomy.hpp"
#include "ai_hwaccel/core/text.hpp"
#include "ai_hwaccel/core/warning.hpp"
#include "ai_hwaccel/detect/capture.hpp"
#include "ai_hwaccel/detect/nvidia.hpp"
#include "ai_hwaccel/detect/process.hpp"
#include "ai_hwaccel/detect/sysfs.hpp"
#include "ai_hwaccel/detect/system.hpp"
#include "ai_hwaccel/detect/topology.hpp"

#include <algorithm>
#include <array>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

AI_HWACCEL_NAMESPACE_BEGIN

// ---------------------------------------------------------------------------------------
// nvidia-smi topo -m / topo -p2p <r|w|rw|n|a|p>

/// One GPU row of a topology matrix.
struct nvidia_topo_gpu {
    std::uint32_t index = 0; ///< N of "GPUN" (nvidia-smi's index)
    /// "CPU Affinity" as printed ("48-95,144-191"); empty when absent or "N/A".
    std::string cpu_affinity;
    /// "NUMA Affinity" as printed ("1", "0-1"); empty when absent or "N/A".
    std::string numa_affinity;
    /// The NUMA affinity when it is one node; unknown when it is a list, "N/A" or absent.
    sourced<std::int32_t> numa_node;
    /// "GPU NUMA ID": the NUMA node of the GPU's own memory when the driver onlines it as
    /// one (coherent systems); unknown for "N/A" and when absent.
    sourced<std::int32_t> gpu_numa_id;
    /// The path to each NIC, in the order of `nvidia_topo_result::nics` ("PIX", "SYS").
    std::vector<std::string> nic_paths;
    friend bool operator==(const nvidia_topo_gpu&, const nvidia_topo_gpu&) = default;
};

/// The cell between two GPUs, `a < b`.
struct nvidia_topo_pair {
    std::uint32_t a = 0;
    std::uint32_t b = 0;
    /// As printed: "NV12", "SYS", "NODE", "PHB", "PXB", "PIX", "SOC" in a path matrix;
    /// "OK", "CNS", "GNS", "TNS", "NS", "DR", "U" in a P2P matrix.
    std::string connection;
    std::uint32_t nvlinks = 0; ///< n of "NV<n>": NVLinks bonded between the two; 0 otherwise
    friend bool operator==(const nvidia_topo_pair&, const nvidia_topo_pair&) = default;
};

/// What `parse_nvidia_smi_topo` read.
struct nvidia_topo_result {
    /// True for a P2P status matrix (`topo -p2p …`: cells OK/CNS/GNS/…), false for the path
    /// matrix of `topo -m`.
    bool p2p = false;
    std::vector<nvidia_topo_gpu> gpus;
    std::vector<nvidia_topo_pair> pairs;
    /// The NIC columns, named through the "NIC Legend" where there is one ("NIC0: mlx5_0"
    /// gives "mlx5_0"); older drivers print the RDMA device name as the column itself.
    /// Names only: the matrix does not say whether a port runs InfiniBand or Ethernet.
    std::vector<std::string> nics;
    /// The legend as printed: code and meaning ("PHB", "Connection traversing …").
    std::vector<std::pair<std::string, std::string>> legend;
    /// One NVLink interconnect per GPU pair joined by NV<n> (see parse_nvidia_smi_topo).
    std::vector<interconnect> links;
    /// True when some GPU shows more NVLinks to its peers, summed, than any NVIDIA GPU has
    /// (see `nvidia_max_nvlinks_per_gpu`): the links cannot all be direct, so they go
    /// through a switch. No NVSwitch interconnect is made from this: the matrix never names
    /// the switch, how many there are, or their bandwidth.
    bool nvlink_switched = false;
    std::vector<parse_problem> problems;
};

/// The most NVLinks one NVIDIA GPU has had: 6 (Volta), 12 (Ampere), 18 (Hopper and
/// Blackwell), per NVIDIA's NVLink generation tables.
inline constexpr std::uint32_t nvidia_max_nvlinks_per_gpu = 18;

namespace detail::nvidia_links {

using detail::parsing::max_problems;
using detail::parsing::max_rows;
using detail::parsing::parse_uint;
using detail::parsing::printable;
using detail::parsing::problem_sink;
using detail::parsing::quote_value;

// Columns beyond this are garbage: the largest nodes print a few dozen (8 GPUs, ~20 NICs).
inline constexpr std::size_t max_topo_columns = 256;
// Tokens read per line; a line with more is reported and cut.
inline constexpr std::size_t max_tokens = max_topo_columns + 8;

constexpr bool is_blank(char c) noexcept { return c == ' ' || c == '\t'; }

// The whitespace-separated words of a line, at most `cap` (sets `cut` when there were more).
inline std::vector<std::string_view> words(std::string_view line, std::size_t cap, bool& cut) {
    std::vector<std::string_view> out;
    cut = false;
    std::size_t i = 0;
    while (i < line.size()) {
        while (i < line.size() && is_blank(line[i])) ++i;
        if (i >= line.size()) break;
        const std::size_t start = i;
        while (i < line.size() && !is_blank(line[i])) ++i;
        if (out.size() == cap) {
            cut = true;
            break;
        }
        out.push_back(line.substr(start, i - start));
    }
    return out;
}

// "GPU12" -> 12.
inline std::optional<std::uint32_t> gpu_label(std::string_view s) noexcept {
    if (!s.starts_with("GPU") || s.size() < 4 || s.size() > 8) return std::nullopt;
    const auto n = parse_uint(s.substr(3));
    if (!n || *n > 0xffff) return std::nullopt;
    return static_cast<std::uint32_t>(*n);
}

// "NV12" -> 12; nullopt for anything else.
constexpr std::optional<std::uint32_t> nv_count(std::string_view s) noexcept {
    if (!s.starts_with("NV") || s.size() < 3 || s.size() > 5) return std::nullopt;
    std::uint32_t n = 0;
    for (char c : s.substr(2)) {
        if (c < '0' || c > '9') return std::nullopt;
        n = n * 10 + static_cast<std::uint32_t>(c - '0');
    }
    if (n == 0) return std::nullopt;
    return n;
}

// The path codes of `topo -m` (SOC on drivers before NODE/SYS were split out).
constexpr bool is_path_code(std::string_view s) noexcept {
    return s == "SYS"sv || s == "NODE"sv || s == "PHB"sv || s == "PXB"sv || s == "PIX"sv || s == "SOC"sv || nv_count(s);
}
// The status codes of `topo -p2p …`.
constexpr bool is_p2p_code(std::string_view s) noexcept {
    return s == "OK"sv || s == "CNS"sv || s == "GNS"sv || s == "TNS"sv || s == "NS"sv || s == "DR"sv || s == "U"sv;
}

enum class attribute : std::uint8_t { cpu_affinity, numa_affinity, gpu_numa_id };

// The attribute values of a matrix row whose label and `devices` cells are `w`'s first
// words (at most three: the header's attributes). nvidia-smi parts its cells with one tab
// each, writes a value it does not know as nothing ("NODE\t\t0\t\tN/A": no CPU affinity,
// NUMA node 0), and puts a second tab before "GPU NUMA ID"'s value ("0-63\t0\t\tN/A"):
// with tabs, the cells after the device cells are split at each tab and that extra empty
// cell dropped, so an empty value keeps its column. Without tabs (a copy whose tabs became
// spaces) the words are all there is.
struct attribute_cells {
    std::array<std::string_view, 4> v{};
    std::size_t n = 0;
};
inline attribute_cells attribute_values(std::string_view line, const std::vector<std::string_view>& w,
                                        std::size_t devices, const std::vector<attribute>& attributes) {
    attribute_cells out;
    const std::size_t n = attributes.size();
    if (line.find('\t') != std::string_view::npos && n < out.v.size()) {
        std::size_t pos = 0;
        for (std::size_t k = 0; k < 1 + devices && pos != std::string_view::npos; ++k) {
            const auto tab = line.find('\t', pos);
            pos = tab == std::string_view::npos ? tab : tab + 1;
        }
        attribute_cells cells;
        while (pos != std::string_view::npos && cells.n <= n) {
            const auto tab = line.find('\t', pos);
            cells.v[cells.n++] = line.substr(pos, tab == std::string_view::npos ? tab : tab - pos);
            pos = tab == std::string_view::npos ? tab : tab + 1;
        }
        if (cells.n == n + 1 && n > 0 && attributes.back() == attribute::gpu_numa_id &&
            detail::trim(cells.v[n - 1]).empty() && pos == std::string_view::npos) {
            cells.v[n - 1] = cells.v[n];
            --cells.n;
        }
        if (cells.n <= n && pos == std::string_view::npos) return cells;
    }
    for (std::size_t k = 1 + devices; k < w.size() && out.n < out.v.size(); ++k) out.v[out.n++] = w[k];
    return out;
}

// The header line: device columns, then the attribute columns whose names are several
// words. nullopt when the line does not start with "GPU0".
struct header {
    std::vector<std::string> columns; ///< "GPU0", "NIC0", "mlx5_0"
    std::vector<attribute> attributes;
};
inline std::optional<header> read_header(const std::vector<std::string_view>& w) {
    if (w.empty() || w.front() != "GPU0"sv) return std::nullopt;
    header h;
    std::size_t i = 0;
    for (; i < w.size(); ++i) {
        if (w[i] == "CPU"sv || w[i] == "NUMA"sv || (w[i] == "GPU"sv && i + 1 < w.size() && w[i + 1] == "NUMA"sv)) break;
        h.columns.emplace_back(w[i]);
    }
    while (i < w.size()) {
        if (i + 1 < w.size() && w[i] == "CPU"sv && w[i + 1] == "Affinity"sv) {
            h.attributes.push_back(attribute::cpu_affinity);
            i += 2;
        } else if (i + 1 < w.size() && w[i] == "NUMA"sv && w[i + 1] == "Affinity"sv) {
            h.attributes.push_back(attribute::numa_affinity);
            i += 2;
        } else if (i + 2 < w.size() && w[i] == "GPU"sv && w[i + 1] == "NUMA"sv && w[i + 2] == "ID"sv) {
            h.attributes.push_back(attribute::gpu_numa_id);
            i += 3;
        } else {
            return std::nullopt; // an attribute this parser does not know: columns unknowable
        }
    }
    return h;
}

inline bool unavailable(std::string_view v) noexcept { return v.empty() || v == "N/A"sv; }

// A NUMA node number as printed (0..65535); nullopt otherwise.
inline std::optional<std::int32_t> node_number(std::string_view v) noexcept {
    const auto n = parse_uint(v);
    if (!n || *n > 0xffff) return std::nullopt;
    return static_cast<std::int32_t>(*n);
}

// Keeps text short and printable for the result; reports when it changed it.
inline std::string clean(std::string_view v, std::size_t cap, bool& changed) {
    std::string s = printable(v, changed, cap);
    if (v.size() > cap) changed = true;
    return s;
}

} // namespace detail::nvidia_links

/// Reads `nvidia-smi topo -m` (or a `topo -p2p …` status matrix: same layout, other
/// codes). Columns are found by name in the header line, so the optional "NUMA Affinity"
/// and "GPU NUMA ID" columns of newer drivers, NIC columns named "NIC<n>" (resolved
/// through the "NIC Legend") or by their RDMA name (older drivers), blank-padded cells and
/// tabs or spaces as separators, and the terminal escapes that underline the header (into
/// a pipe too), are all read the same way.
///
/// Every GPU pair shown as NV<n> becomes one interconnect: kind nvlink, scope intra_node,
/// name "NVLink GPU<a>-GPU<b>", state "<n> links", devices {a, b}. Its bandwidth is
/// unknown unless the caller gives `per_link_gbps`, the figure `nvidia-smi nvlink -s`
/// prints for one link (one direction; 25 GB/s on A100): then it is n × that × 2, both
/// directions as `interconnect::bandwidth_gbps` counts them, with the origin the caller
/// gives. The per-link rate depends on the NVLink generation, which the matrix does not
/// say. NICs stay names (see `nvidia_topo_result::nics`).
///
/// NVSwitch: the matrix shows a switched system exactly like a directly wired one, as
/// NV<n> between the GPUs (NV18 between every pair on HGX H100, NV12 on HGX A100). What
/// gives a switch away is arithmetic: a GPU with NV18 to seven peers would need 126 links.
/// `nvlink_switched` says so; no switch is invented.
inline nvidia_topo_result parse_nvidia_smi_topo(std::string_view text, sourced<double> per_link_gbps = {}) {
    using namespace detail::nvidia_links;
    nvidia_topo_result r;
    // nvidia-smi underlines the header line with terminal escapes, into a pipe too (seen
    // on driver 580): read the text without them.
    std::string unescaped;
    if (text.find('\x1b') != std::string_view::npos) {
        unescaped = detail::parsing::without_escapes(text);
        text = unescaped;
    }
    problem_sink problems{r.problems};
    std::optional<header> head;
    enum class section : std::uint8_t { matrix, legend, nic_legend, after } where = section::matrix;
    std::vector<std::optional<std::uint32_t>> column_gpu; // GPU index per device column
    std::vector<std::size_t> nic_slot;                    // for NIC columns: place in r.nics
    std::vector<std::string> nic_labels;                  // "NIC0" or "mlx5_0", as in the header
    std::vector<std::vector<std::string>> cells;          // GPU row position x GPU column position
    std::vector<bool> row_seen;
    std::size_t gpu_columns = 0;
    bool any_path = false, any_p2p = false, legend_p2p = false;
    std::size_t number = 0;

    detail::formats::each_line(text, [&](std::string_view raw) {
        ++number;
        const auto line = detail::trim(raw);
        if (line.empty()) return true;
        if (line == "Legend:"sv) {
            where = section::legend;
            return true;
        }
        if (line == "NIC Legend:"sv) {
            where = section::nic_legend;
            return true;
        }
        bool cut = false;
        const auto w = words(line, max_tokens, cut);
        if (where == section::legend || where == section::nic_legend) {
            if (where == section::nic_legend) {
                // "NIC0: mlx5_0"
                const auto colon = line.find(':');
                const std::string_view label = detail::trim(line.substr(0, colon));
                const std::string_view name =
                    colon == std::string_view::npos ? std::string_view{} : detail::trim(line.substr(colon + 1));
                bool found = false;
                for (std::size_t i = 0; i < nic_labels.size(); ++i) {
                    if (nic_labels[i] != label || name.empty()) continue;
                    bool changed = false;
                    r.nics[i] = clean(name, 64, changed);
                    if (changed) problems.add(number, "NIC name not printable or too long: " + quote_value(name));
                    found = true;
                }
                if (!found) problems.add(number, "not a NIC of the matrix: " + quote_value(line));
                return true;
            }
            // "SYS  = Connection traversing …"
            const auto eq = line.find('=');
            if (eq == std::string_view::npos) {
                problems.add(number, "not a legend line: " + quote_value(line));
                return true;
            }
            if (r.legend.size() >= 32) {
                problems.add(number, "legend too long; the rest ignored");
                where = section::after;
                return true;
            }
            bool c1 = false, c2 = false;
            const auto code = detail::trim(line.substr(0, eq));
            if (code == "OK"sv) legend_p2p = true;
            r.legend.emplace_back(clean(code, 16, c1), clean(detail::trim(line.substr(eq + 1)), 200, c2));
            if (c1 || c2) problems.add(number, "legend line not printable or too long: " + quote_value(line));
            return true;
        }
        if (where == section::after) return true;
        if (!head) {
            head = read_header(w);
            if (!head) return number < 64; // text before the matrix ("NVIDIA Topology:"): skipped
            if (cut || head->columns.size() > max_topo_columns) {
                problems.add(number, "more than " + std::to_string(max_topo_columns) + " columns; not read");
                head.reset();
                return false;
            }
            for (const auto& c : head->columns) {
                const auto g = gpu_label(c);
                column_gpu.push_back(g);
                nic_slot.push_back(g ? 0 : r.nics.size());
                if (g) {
                    nvidia_topo_gpu gpu;
                    gpu.index = *g;
                    r.gpus.push_back(std::move(gpu));
                    ++gpu_columns;
                } else {
                    bool changed = false;
                    nic_labels.push_back(c);
                    r.nics.push_back(clean(c, 64, changed));
                    if (changed) problems.add(number, "column name not printable or too long: " + quote_value(c));
                }
            }
            for (std::size_t i = 0; i < r.gpus.size(); ++i)
                for (std::size_t j = 0; j < i; ++j)
                    if (r.gpus[i].index == r.gpus[j].index) {
                        problems.add(number, "GPU" + std::to_string(r.gpus[i].index) + " named twice; not read");
                        r.gpus.clear();
                        r.nics.clear();
                        head.reset();
                        return false;
                    }
            cells.assign(gpu_columns, std::vector<std::string>(gpu_columns));
            row_seen.assign(head->columns.size(), false);
            return true;
        }
        // A matrix row: its label, one cell per device column, then (GPU rows) attributes.
        std::size_t col = head->columns.size();
        for (std::size_t i = 0; i < head->columns.size(); ++i)
            if (head->columns[i] == w.front()) col = i;
        if (col == head->columns.size()) {
            problems.add(number, "not a row of the matrix: " + quote_value(line));
            return true;
        }
        if (row_seen[col]) {
            problems.add(number, quote_value(w.front()) + " has a second row; ignored");
            return true;
        }
        row_seen[col] = true;
        const std::size_t devices = head->columns.size();
        const bool gpu_row = column_gpu[col].has_value();
        const std::size_t want = devices + (gpu_row ? head->attributes.size() : 0);
        if (w.size() - 1 < devices || (gpu_row && w.size() - 1 > want) || cut) {
            problems.add(number, std::to_string(w.size() - 1) + " values where " + std::to_string(want) +
                                     " were expected; row skipped");
            return true;
        }
        // Position of this row among the GPUs (for `cells`).
        std::size_t row_pos = 0;
        for (std::size_t i = 0; i < col; ++i) row_pos += column_gpu[i].has_value();
        std::size_t gpu_pos = 0;
        for (std::size_t i = 0; i < devices; ++i) {
            const std::string_view cell = w[1 + i];
            const bool self = i == col;
            if (self) {
                if (cell != "X"sv) problems.add(number, "expected X on the diagonal, found " + quote_value(cell));
            } else if (is_path_code(cell)) {
                any_path = true;
            } else if (is_p2p_code(cell)) {
                any_p2p = true;
            } else {
                problems.add(number, "unknown connection " + quote_value(cell));
            }
            bool changed = false;
            std::string value = clean(cell, 16, changed);
            if (column_gpu[i] && gpu_row) cells[row_pos][gpu_pos] = std::move(value);
            else if (gpu_row && !self) r.gpus[row_pos].nic_paths.push_back(std::move(value));
            gpu_pos += column_gpu[i].has_value();
        }
        if (gpu_row) {
            auto& g = r.gpus[row_pos];
            const auto values = attribute_values(line, w, devices, head->attributes);
            for (std::size_t k = 0; k < head->attributes.size() && k < values.n; ++k) {
                const std::string_view v = detail::trim(values.v[k]);
                if (v.empty() || unavailable(v)) continue;
                bool changed = false;
                switch (head->attributes[k]) {
                case attribute::cpu_affinity:
                    g.cpu_affinity = clean(v, 256, changed);
                    if (!parse_cpulist(v)) problems.add(number, "CPU affinity is not a CPU list: " + quote_value(v));
                    break;
                case attribute::numa_affinity:
                    g.numa_affinity = clean(v, 64, changed);
                    if (const auto n = node_number(v)) g.numa_node = {*n, origin::tool};
                    else if (!parse_cpulist(v)) problems.add(number, "NUMA affinity not understood: " + quote_value(v));
                    break;
                case attribute::gpu_numa_id:
                    if (const auto n = node_number(v)) g.gpu_numa_id = {*n, origin::tool};
                    else problems.add(number, "GPU NUMA ID not understood: " + quote_value(v));
                    break;
                }
                if (changed) problems.add(number, "value not printable or too long: " + quote_value(v));
            }
        }
        return true;
    });

    if (!head) {
        if (r.problems.empty() && !detail::trim(text).empty())
            problems.add(0, "no topology matrix found");
        problems.finish();
        return r;
    }
    r.p2p = legend_p2p || (any_p2p && !any_path);
    if (any_p2p && any_path) problems.add(0, "path codes and P2P status codes in one matrix");
    for (std::size_t i = 0; i < head->columns.size(); ++i)
        if (column_gpu[i] && !row_seen[i]) problems.add(0, head->columns[i] + " has no row");

    // Pairs, from the upper triangle; the lower one must agree.
    std::vector<std::uint32_t> nv_total(r.gpus.size(), 0);
    for (std::size_t i = 0; i < r.gpus.size(); ++i) {
        for (std::size_t j = i + 1; j < r.gpus.size(); ++j) {
            const std::string& up = cells[i][j];
            const std::string& down = cells[j][i];
            if (up.empty() && down.empty()) continue;
            if (!up.empty() && !down.empty() && up != down)
                problems.add(0, "GPU" + std::to_string(r.gpus[i].index) + " and GPU" +
                                    std::to_string(r.gpus[j].index) + " disagree: " + quote_value(up) + " and " +
                                    quote_value(down) + "; the first kept");
            nvidia_topo_pair p;
            p.a = std::min(r.gpus[i].index, r.gpus[j].index);
            p.b = std::max(r.gpus[i].index, r.gpus[j].index);
            p.connection = up.empty() ? down : up;
            if (!r.p2p)
                if (const auto n = nv_count(p.connection)) {
                    p.nvlinks = *n;
                    nv_total[i] += *n;
                    nv_total[j] += *n;
                    interconnect l;
                    l.kind = interconnect_kind::nvlink;
                    l.scope = link_scope::intra_node;
                    l.name = "NVLink GPU" + std::to_string(p.a) + "-GPU" + std::to_string(p.b);
                    l.state = std::to_string(*n) + (*n == 1 ? " link" : " links");
                    if (per_link_gbps && *per_link_gbps > 0)
                        l.bandwidth_gbps = {2.0 * *n * *per_link_gbps, per_link_gbps.from};
                    l.devices = {p.a, p.b};
                    r.links.push_back(std::move(l));
                }
            r.pairs.push_back(std::move(p));
        }
    }
    for (auto t : nv_total)
        if (t > nvidia_max_nvlinks_per_gpu) r.nvlink_switched = true;
    problems.finish();
    return r;
}

// ---------------------------------------------------------------------------------------
// nvidia-smi nvlink -s / --status

/// One GPU of `nvidia-smi nvlink -s`.
struct nvidia_nvlink_gpu {
    std::uint32_t index = 0;
    std::uint32_t links_listed = 0; ///< "Link N:" lines
    std::uint32_t links_active = 0; ///< those with a speed (not "<inactive>")
    /// nvidia-smi printed "NVML: Unable to retrieve NVLink information as all links are
    /// inActive" for this GPU instead of its links (a fault on NVLink hardware).
    bool all_links_inactive = false;
    /// Sum of the printed speeds of the active links. nvidia-smi prints each link's rate
    /// in one direction (A100: 12 × 25 GB/s = 300 GB/s; NVIDIA quotes 600 GB/s for A100,
    /// both directions added), so this is one direction.
    double gbps_one_direction = 0;
    friend bool operator==(const nvidia_nvlink_gpu&, const nvidia_nvlink_gpu&) = default;
};

/// What `parse_nvidia_smi_nvlink_status` read.
struct nvidia_nvlink_result {
    std::vector<nvidia_nvlink_gpu> gpus;
    /// The GPUs as the header lines name them (name, UUID; completed from the catalogue).
    std::vector<accelerator_profile> devices;
    /// One nvlink interconnect per GPU with an active link (see the parser).
    std::vector<interconnect> links;
    std::vector<parse_problem> problems;
};

namespace detail::formats {
// "NVML: Unable to retrieve NVLink information as all links are inActive" (nvidia-smi on
// a GPU whose links are all down; NVIDIA's spelling and spacing vary between drivers).
constexpr bool is_all_links_inactive_line(std::string_view line) noexcept {
    return line.starts_with("NVML") && icontains(line, "unable to retrieve nvlink information");
}
} // namespace detail::formats

/// Reads `nvidia-smi nvlink -s` ("GPU 0: NVIDIA A100-SXM4-80GB (UUID: GPU-…)" followed
/// by "Link 0: 25 GB/s" or "Link 3: <inactive>" lines, or by "NVML: Unable to retrieve
/// NVLink information as all links are inActive"; a GPU line without "(UUID: …)", as some
/// published captures show, is read too). Link lines under a GPU line that could not be
/// read are left out with it, never credited to the GPU before. Each GPU with an active link gives
/// one interconnect: kind nvlink, scope intra_node, name "NVLink GPU<n>", state "<k> links
/// up", devices {n}, bandwidth the printed per-link speeds summed and doubled (nvidia-smi
/// prints one direction, `interconnect::bandwidth_gbps` counts both), origin::tool. The
/// output does not say where the links go; `nvidia-smi topo -m` does.
inline nvidia_nvlink_result parse_nvidia_smi_nvlink_status(std::string_view text) {
    using namespace detail::nvidia_links;
    nvidia_nvlink_result r;
    problem_sink problems{r.problems};
    std::size_t number = 0;
    std::size_t link_lines = 0;
    bool in_gpu = false; // the lines below belong to the last GPU read (false after one refused)
    detail::formats::each_line(text, [&](std::string_view raw) {
        ++number;
        const auto line = detail::trim(raw);
        if (line.empty()) return true;
        if (line.starts_with("GPU ")) {
            in_gpu = false;
            if (r.gpus.size() >= max_rows) {
                problems.add(number, "more than " + std::to_string(max_rows) + " GPUs; the rest ignored");
                return false;
            }
            // The GPU line has the layout of `nvidia-smi -L`: read it with that parser.
            auto listed = parse_nvidia_smi_list(line);
            if ((listed.gpus.size() != 1 || !listed.mig.empty()) && line.find("(UUID:") == std::string_view::npos) {
                // "GPU 0: Tesla V100-SXM2-32GB": the name alone.
                const auto colon = line.find(':');
                const auto n = colon == std::string_view::npos ? std::nullopt
                                                               : parse_uint(detail::trim(line.substr(4, colon - 4)));
                const auto label =
                    colon == std::string_view::npos ? std::string_view{} : detail::trim(line.substr(colon + 1));
                if (n && *n <= 0xffff && !label.empty()) {
                    listed = {};
                    std::string bad;
                    listed.gpus.push_back(detail::nvidia::listed_gpu(static_cast<std::uint32_t>(*n), label, {}, bad));
                    if (!bad.empty()) problems.add(number, bad + " not printable or too long: " + quote_value(line));
                }
            }
            if (listed.gpus.size() != 1 || !listed.mig.empty()) {
                problems.add(number, "not a GPU line: " + quote_value(line) + " (its link lines are left out)");
                return true;
            }
            for (auto& p : listed.problems) problems.add(number, std::move(p.message));
            nvidia_nvlink_gpu g;
            g.index = listed.gpus[0].index;
            for (const auto& other : r.gpus)
                if (other.index == g.index) {
                    problems.add(number, "GPU " + std::to_string(g.index) +
                                             " listed twice; the second and its links ignored");
                    return true;
                }
            r.gpus.push_back(g);
            r.devices.push_back(listed.gpus[0]);
            in_gpu = true;
            return true;
        }
        if (detail::formats::is_all_links_inactive_line(line)) {
            if (in_gpu) r.gpus.back().all_links_inactive = true;
            else if (r.gpus.empty()) problems.add(number, "NVLink message before any GPU line");
            return true;
        }
        if (line.starts_with("Link ")) {
            const auto colon = line.find(':');
            const auto n = colon == std::string_view::npos ? std::nullopt : parse_uint(line.substr(5, colon - 5));
            if (!n || *n > 1023) {
                problems.add(number, "not a link line: " + quote_value(line));
                return true;
            }
            if (r.gpus.empty()) {
                problems.add(number, "link line before any GPU line");
                return true;
            }
            if (!in_gpu) return true; // under a GPU line refused above, which said so
            if (++link_lines > 64 * max_rows) {
                problems.add(number, "too many link lines; the rest ignored");
                return false;
            }
            auto& g = r.gpus.back();
            ++g.links_listed;
            const auto value = detail::trim(line.substr(colon + 1));
            if (value == "<inactive>"sv) return true;
            // "25 GB/s", "26.562 GB/s"
            const auto sp = value.find(' ');
            const auto speed =
                sp == std::string_view::npos ? std::nullopt : detail::parsing::parse_real(value.substr(0, sp));
            if (!speed || detail::trim(value.substr(sp)) != "GB/s"sv) {
                problems.add(number, "link speed not understood: " + quote_value(value));
                return true;
            }
            if (*speed < 0 || *speed > 10'000) {
                problems.add(number, "link speed out of range: " + quote_value(value));
                return true;
            }
            ++g.links_active;
            g.gbps_one_direction += *speed;
            return true;
        }
        problems.add(number, "not understood: " + quote_value(line));
        return true;
    });
    for (const auto& g : r.gpus) {
        if (g.links_active == 0) continue;
        interconnect l;
        l.kind = interconnect_kind::nvlink;
        l.scope = link_scope::intra_node;
        l.name = "NVLink GPU" + std::to_string(g.index);
        l.state = std::to_string(g.links_active) + (g.links_active == 1 ? " link up" : " links up");
        l.bandwidth_gbps = {2.0 * g.gbps_one_direction, origin::tool};
        l.devices = {g.index};
        r.links.push_back(std::move(l));
    }
    problems.finish();
    return r;
}

// ---------------------------------------------------------------------------------------
// /proc/driver/nvidia/gpus/<bus id>/information

/// The driver's per-GPU information file, as the NVIDIA kernel module writes it
/// (nv-procfs.c of NVIDIA's open-gpu-kernel-modules: "Key: \t value" lines). Fields the
/// file lacks stay empty/unknown; "GPU UUID" and "GPU Firmware" are only printed when the
/// driver has them.
struct nvidia_proc_information {
    std::string model;                        ///< "Model:" (the driver's name for the board)
    std::optional<std::uint32_t> irq;         ///< "IRQ:"
    std::string uuid;                         ///< "GPU UUID:" ("GPU-…")
    std::string video_bios;                   ///< "Video BIOS:" ("92.00.45.00.08")
    std::string bus_type;                     ///< "Bus Type:" ("PCIe" or "PCI")
    std::optional<std::uint32_t> dma_bits;    ///< "DMA Size:" ("47 bits")
    std::optional<std::uint64_t> dma_mask;    ///< "DMA Mask:" ("0x7fffffffffff")
    std::optional<pci_address> bus_location;  ///< "Bus Location:" ("0000:07:00.0")
    std::optional<std::uint32_t> device_minor; ///< "Device Minor:": N of /dev/nvidiaN
    std::string firmware;                     ///< "GPU Firmware:" (GSP firmware version)
    std::optional<bool> excluded;             ///< "GPU Excluded:" Yes/No
    std::vector<parse_problem> problems;
};

/// Reads one `/proc/driver/nvidia/gpus/<bus id>/information` file.
inline nvidia_proc_information parse_nvidia_proc_information(std::string_view text) {
    using namespace detail::nvidia_links;
    nvidia_proc_information r;
    problem_sink problems{r.problems};
    std::size_t number = 0;
    std::size_t known = 0;
    detail::formats::each_line(text, [&](std::string_view line) {
        ++number;
        if (number > 256) {
            problems.add(number, "more lines than the file has; the rest ignored");
            return false;
        }
        if (detail::trim(line).empty()) return true;
        const auto colon = line.find(':');
        if (colon == std::string_view::npos) {
            problems.add(number, "not a \"key: value\" line: " + quote_value(line));
            return true;
        }
        const auto key = detail::trim(line.substr(0, colon));
        const auto value = detail::trim(line.substr(colon + 1));
        auto text_field = [&](std::string& field, std::size_t cap) {
            bool changed = false;
            field = clean(value, cap, changed);
            if (changed) problems.add(number, std::string(key) + ": not printable or too long");
        };
        auto number_field = [&](std::optional<std::uint32_t>& field, std::string_view v) {
            const auto n = parse_uint(v);
            if (!n || *n > 0xffffffffu) problems.add(number, std::string(key) + ": cannot read " + quote_value(value));
            else field = static_cast<std::uint32_t>(*n);
        };
        ++known;
        if (key == "Model"sv) text_field(r.model, 128);
        else if (key == "IRQ"sv) number_field(r.irq, value);
        else if (key == "GPU UUID"sv) text_field(r.uuid, 64);
        else if (key == "Video BIOS"sv) text_field(r.video_bios, 64);
        else if (key == "Bus Type"sv) {
            if (value != "PCIe"sv && value != "PCI"sv) problems.add(number, "Bus Type: unexpected " + quote_value(value));
            text_field(r.bus_type, 8);
        } else if (key == "DMA Size"sv) {
            if (!value.ends_with(" bits")) problems.add(number, "DMA Size: cannot read " + quote_value(value));
            else number_field(r.dma_bits, detail::trim(value.substr(0, value.size() - 5)));
        } else if (key == "DMA Mask"sv) {
            std::string_view hex = value;
            std::optional<std::uint64_t> mask;
            if (hex.starts_with("0x") && hex.size() > 2 && hex.size() <= 18) {
                std::uint64_t v = 0;
                bool ok = true;
                for (char c : hex.substr(2)) {
                    const int h = detail::hex_value(c);
                    if (h < 0) ok = false;
                    else v = (v << 4) | static_cast<std::uint64_t>(h);
                }
                if (ok) mask = v;
            }
            if (!mask) problems.add(number, "DMA Mask: cannot read " + quote_value(value));
            r.dma_mask = mask;
        } else if (key == "Bus Location"sv) {
            r.bus_location = parse_pci_address(value);
            if (!r.bus_location) problems.add(number, "Bus Location: not a PCI address: " + quote_value(value));
        } else if (key == "Device Minor"sv) number_field(r.device_minor, value);
        else if (key == "GPU Firmware"sv) text_field(r.firmware, 64);
        else if (key == "GPU Excluded"sv) {
            if (value == "Yes"sv) r.excluded = true;
            else if (value == "No"sv) r.excluded = false;
            else problems.add(number, "GPU Excluded: expected Yes or No, found " + quote_value(value));
        } else if (key.starts_with("BAR")) {
            // Debug builds of the driver list the BARs; nothing the library keeps.
        } else {
            --known;
            problems.add(number, "unknown key " + quote_value(key));
        }
        return true;
    });
    if (known == 0 && r.problems.empty() && !detail::trim(text).empty()) problems.add(0, "no known key found");
    problems.finish();
    return r;
}

// ---------------------------------------------------------------------------------------
// NVIDIA GPUs from the kernel driver and PCI sysfs (no nvidia-smi needed)

namespace detail::nvidia_links {

inline constexpr std::string_view proc_gpus_dir = "/proc/driver/nvidia/gpus";

// Ids, link and NUMA node of the PCI function, all read from sysfs.
inline void apply_pci(accelerator_profile& p, const pci_device& d) {
    p.pci = d.address;
    if (d.vendor_id == info(vendor::nvidia).vendor_id) p.pci_device_id = d.device_id;
    if (d.link_current && d.link_current->known()) p.pcie_current = d.link_current;
    if (d.link_max && d.link_max->known()) p.pcie_max = d.link_max;
    if (d.numa_node >= 0) p.numa_node = {d.numa_node, origin::sysfs};
}

// The catalogue's name for a GPU known only by its PCI id.
inline void name_from_catalogue(accelerator_profile& p) {
    if (p.name.empty() && p.spec) p.name.assign(p.spec->name);
}

} // namespace detail::nvidia_links

/// NVIDIA GPUs as the kernel driver lists them, for machines without nvidia-smi. Each
/// directory of /proc/driver/nvidia/gpus (named by PCI address) gives a cuda_gpu: name
/// from "Model", UUID, availability ("GPU Excluded: Yes" makes it unavailable), index the
/// device minor (the N of /dev/nvidiaN, which need not be nvidia-smi's index) where
/// printed, else the order of PCI addresses. PCI sysfs adds the device id, the PCIe link
/// and the NUMA node (origin::sysfs), and the device is matched to the catalogue by PCI id,
/// else by name. Where /proc/driver/nvidia is absent (a container that does not mount it),
/// NVIDIA display/3D controllers (class 0x03xxxx) bound to the "nvidia" driver are listed
/// from PCI sysfs alone, named by the catalogue row their PCI id matches (unnamed when it
/// matches none or several). Problems become warnings; nothing throws.
template <system_view S>
std::vector<accelerator_profile> nvidia_gpus_from_driver(const S& sys, std::vector<warning>& warnings) {
    using namespace detail::nvidia_links;
    std::vector<accelerator_profile> out;
    auto names = sys.list_dir(proc_gpus_dir);
    if (names) {
        std::vector<pci_address> addresses;
        for (const auto& name : *names) {
            const auto a = parse_pci_address(name);
            if (!a) {
                detail::add_warning(warnings, warning_kind::parse_error, std::string(proc_gpus_dir) + "/" + name,
                                    "not a PCI address; skipped");
                continue;
            }
            addresses.push_back(*a);
        }
        std::sort(addresses.begin(), addresses.end());
        addresses.erase(std::unique(addresses.begin(), addresses.end()), addresses.end());
        if (addresses.size() > max_rows) addresses.resize(max_rows);
        for (const auto& a : addresses) {
            const std::string dir = std::string(proc_gpus_dir) + "/" + a.text().data();
            const std::string path = dir + "/information";
            accelerator_profile p = detail::nvidia::blank_gpu(static_cast<std::uint32_t>(out.size()));
            p.pci = a;
            if (auto text = detail::read_optional_file(sys, path, 64 * 1024, warnings)) {
                const auto info_file = parse_nvidia_proc_information(*text);
                detail::parsing::problems_to_warnings(info_file.problems, backend_id::cuda, path, warnings);
                p.name.assign(info_file.model);
                p.uuid.assign(info_file.uuid);
                if (info_file.device_minor && *info_file.device_minor <= 0xffff) p.index = *info_file.device_minor;
                if (info_file.excluded.value_or(false)) p.available = false;
                if (info_file.bus_location && *info_file.bus_location != a)
                    warnings.push_back(warning{warning_kind::disagreement, backend_id::cuda, path,
                                               "Bus Location differs from the directory's name; the name is kept", 0});
            }
            const std::string sysfs = std::string("/sys/bus/pci/devices/") + a.text().data();
            if (const auto d = read_pci_device(sys, sysfs, warnings)) detail::nvidia_links::apply_pci(p, *d);
            detail::nvidia::match_catalogue(p);
            out.push_back(p);
        }
        return out;
    }
    if (sys.exists("/proc/driver/nvidia")) return out; // the driver is loaded and lists no GPU
    for (const auto& d : probe_pci(sys, warnings)) {
        if (vendor_from_id(d.vendor_id) != vendor::nvidia || (d.class_code >> 16) != 0x03 || d.driver != "nvidia"sv)
            continue;
        if (out.size() >= max_rows) break;
        accelerator_profile p = detail::nvidia::blank_gpu(static_cast<std::uint32_t>(out.size()));
        detail::nvidia_links::apply_pci(p, d);
        detail::nvidia::match_catalogue(p);
        name_from_catalogue(p);
        out.push_back(p);
    }
    return out;
}

// ---------------------------------------------------------------------------------------
// MIG instances as devices

/// The MIG instances of `nvidia-smi -L` as devices: kind cuda_gpu, maker NVIDIA, name
/// "<parent name> MIG <profile>", UUID the instance's, arch and driver version the
/// parent's (a slice runs on the parent's SMs), index the instance's place in the list.
/// Memory stays unknown: the profile's "…gb" is a rounded product size (a 1g.10gb slice
/// of an A100 80GB has less than 10 GB usable), and peaks stay unknown rather than scaled
/// from the parent's. No PCI address and no catalogue row: those describe the whole GPU,
/// and a shared address would make the slices merge into their parent.
inline std::vector<accelerator_profile> mig_devices(const nvidia_list_result& list) {
    std::vector<accelerator_profile> out;
    for (const auto& m : list.mig) {
        if (out.size() >= detail::parsing::max_rows) break;
        const accelerator_profile* parent = nullptr;
        for (const auto& g : list.gpus)
            if (g.index == m.parent_index) parent = &g;
        accelerator_profile p = detail::nvidia::blank_gpu(static_cast<std::uint32_t>(out.size()));
        std::string name = parent && !parent->name.empty() ? std::string(parent->name.view()) : std::string("NVIDIA GPU");
        name += " MIG ";
        name += m.profile;
        p.name.assign(name);
        p.uuid.assign(m.uuid);
        if (parent) {
            p.arch = parent->arch;
            p.driver_version = parent->driver_version;
        }
        out.push_back(p);
    }
    return out;
}

// ---------------------------------------------------------------------------------------
// Requests

/// `nvidia-smi topo -m`.
inline tool_request nvidia_smi_topo_request() {
    using namespace std::chrono_literals;
    return tool_request{{"nvidia-smi", "topo", "-m"}, 10s};
}
/// `nvidia-smi nvlink -s`.
inline tool_request nvidia_smi_nvlink_status_request() {
    using namespace std::chrono_literals;
    return tool_request{{"nvidia-smi", "nvlink", "-s"}, 10s};
}

// ---------------------------------------------------------------------------------------
// Capture formats

namespace detail::formats {

namespace nvidia_links_sniff {
// Calls f(word) for each word of `line` until f returns false. Blanks and terminal escape
// sequences separate words (nvidia-smi underlines the header line even into a pipe).
template <class F>
constexpr void each_word(std::string_view line, F&& f) {
    const auto gap = [&](std::size_t i) -> std::size_t {
        return line[i] == ' ' || line[i] == '\t' ? 1 : escape_length(line.substr(i));
    };
    std::size_t i = 0;
    while (i < line.size()) {
        for (std::size_t g = 0; i < line.size() && (g = gap(i)) != 0;) i += g;
        if (i >= line.size()) return;
        const std::size_t start = i;
        while (i < line.size() && gap(i) == 0) ++i;
        if (!f(line.substr(start, i - start))) return;
    }
}
// What the opening of a topology matrix shows; `matrix` is false when the text does not
// open with a "GPU0 …" header followed by a GPU0 row. Reads without allocating.
struct opening {
    bool matrix = false;
    bool affinity = false;   ///< the header names CPU/NUMA affinity columns
    bool path = false;       ///< a GPU0 cell is a path code (SYS, PHB, NV12, …)
    bool p2p = false;        ///< a GPU0 cell is a P2P status code (OK, GNS, …)
    bool p2p_legend = false; ///< the legend has "OK = …"
};
constexpr opening read_opening(std::string_view t) noexcept {
    opening o;
    bool header = false, row = false, bad = false;
    std::size_t columns = 0, lines = 0;
    each_line(t, [&](std::string_view raw) {
        if (++lines > 4096) return false;
        const auto line = trim(raw);
        if (line.empty()) return true;
        if (!header) {
            // "GPU0 GPU1 … [CPU Affinity] [NUMA Affinity] [GPU NUMA ID]"
            std::size_t n = 0;
            bool attributes = false;
            std::string_view previous;
            each_word(line, [&](std::string_view w) {
                if (n++ == 0 && w != "GPU0"sv) {
                    bad = true;
                    return false;
                }
                if (w == "CPU"sv || w == "NUMA"sv) attributes = true;
                if (!attributes) ++columns;
                if (w == "Affinity"sv && (previous == "CPU"sv || previous == "NUMA"sv)) o.affinity = true;
                previous = w;
                return true;
            });
            if (bad) return false;
            if (n == 0) return true; // escape sequences alone
            // "GPU NUMA ID" alone: its "GPU" was counted as a column.
            if (!o.affinity && previous == "ID"sv && columns > 0) --columns;
            header = true;
            return true;
        }
        if (!row) {
            std::size_t n = 0;
            each_word(line, [&](std::string_view w) {
                if (n == 0 && w != "GPU0"sv) {
                    bad = true;
                    return false;
                }
                if (n > 0 && n <= columns) {
                    if (nvidia_links::is_path_code(w)) o.path = true;
                    if (nvidia_links::is_p2p_code(w)) o.p2p = true;
                }
                ++n;
                return true;
            });
            if (bad) return false;
            row = true;
            return true;
        }
        if (line.starts_with("OK") && line.find('=') != std::string_view::npos) o.p2p_legend = true;
        return true;
    });
    o.matrix = header && row && !bad;
    return o;
}
} // namespace nvidia_links_sniff

// nvidia-smi topo -m -----------------------------------------------------------------------
inline int sniff_nvidia_topo(std::string_view t) noexcept {
    const auto o = nvidia_links_sniff::read_opening(t);
    if (!o.matrix || o.p2p_legend || o.p2p) return 0;
    return o.path || o.affinity ? 90 : 0;
}
inline void parse_nvidia_topo_capture(std::string_view t, capture_parse& out) {
    auto r = parse_nvidia_smi_topo(t);
    nvidia::problems_to_warnings(r.problems, out.format, out.warnings);
    if (r.gpus.empty() && r.problems.empty()) nothing_found(out, "GPU rows");
    system_io s;
    s.interconnects = std::move(r.links);
    out.system = std::move(s);
}

// nvidia-smi topo -p2p <r|w|rw|n|a|p> ----------------------------------------------------------
inline int sniff_nvidia_topo_p2p(std::string_view t) noexcept {
    const auto o = nvidia_links_sniff::read_opening(t);
    if (!o.matrix || o.affinity || o.path) return 0;
    return o.p2p_legend || o.p2p ? 90 : 0;
}
inline void parse_nvidia_topo_p2p_capture(std::string_view t, capture_parse& out) {
    auto r = parse_nvidia_smi_topo(t);
    nvidia::problems_to_warnings(r.problems, out.format, out.warnings);
    if (r.gpus.empty() && r.problems.empty()) nothing_found(out, "GPU rows");
    // P2P support is not a link: nothing for devices or interconnects.
}

// nvidia-smi nvlink -s ---------------------------------------------------------------------
// "Link <n>: …", as `nvlink -s` prints it (`nvlink -c` prints "Link 0, P2P is supported: true").
constexpr bool is_link_status_line(std::string_view line) noexcept {
    if (!line.starts_with("Link ")) return false;
    std::size_t i = 5;
    while (i < line.size() && line[i] >= '0' && line[i] <= '9') ++i;
    return i > 5 && i < line.size() && line[i] == ':';
}
// Scores above sniff_nvidia_list: the first line is a `nvidia-smi -L` GPU line, and the
// first 64 lines hold only GPU lines, link lines and NVML's "all links are inActive"
// message, with at least one of the last two.
inline int sniff_nvidia_nvlink_status(std::string_view t) noexcept {
    if (!is_gpu_uuid_line(first_non_blank_line(t))) return 0;
    bool link = false, other = false;
    std::size_t lines = 0;
    each_line(t, [&](std::string_view raw) {
        if (++lines > 64) return false;
        const auto line = trim(raw);
        if (line.empty() || line.starts_with("GPU ")) return true;
        if (is_link_status_line(line) || is_all_links_inactive_line(line)) link = true;
        else other = true;
        return !other;
    });
    return link && !other ? 95 : 0;
}
inline void parse_nvidia_nvlink_status_capture(std::string_view t, capture_parse& out) {
    auto r = parse_nvidia_smi_nvlink_status(t);
    nvidia::problems_to_warnings(r.problems, out.format, out.warnings);
    if (r.gpus.empty() && r.problems.empty()) nothing_found(out, "GPU lines");
    out.devices = std::move(r.devices);
    system_io s;
    s.interconnects = std::move(r.links);
    out.system = std::move(s);
}

} // namespace detail::formats

AI_HWACCEL_NAMESPACE_END

#endif // AI_HWACCEL_BACKEND_CUDA
