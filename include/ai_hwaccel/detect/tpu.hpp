// ai-hwaccel detect: Google Cloud TPU chips.
//
// Where the facts come from (all public):
// - A TPU chip is a PCI function of vendor 0x1ae0 (Google) whose device id names the
//   generation: 0x0027 v2/v3 (told apart by subsystem_device 0x004e / 0x004f), 0x0056 (no
//   public name), 0x005e v4, 0x0062 v5p, 0x0063 v5e, 0x006f v6e, 0x0076 TPU7x. JAX counts
//   chips this way (jax/_src/hardware_utils.py, num_available_tpu_chips_and_device_id) and
//   so does tpu-info (tpu_info/device.py, get_local_chips / TpuChip.from_pci_device_id).
//   Google's other PCI functions on a VM (gVNIC, NVMe) share the vendor id, so the device
//   id is what decides.
// - How user space reaches a chip: tpu-info's chip_path() gives "/dev/vfio/<n>" for v5e,
//   v5p, v6e and 7x and "/dev/accel<n>" for the older generations, and the real captures
//   show both (/dev/accel0..3 on a v4 VM, /dev/vfio/0..3 on a v6e VM). A chip bound to
//   vfio-pci is reached through its IOMMU group: the kernel's VFIO documentation
//   (Documentation/driver-api/vfio.rst) reads the group from the
//   /sys/bus/pci/devices/<addr>/iommu_group link and opens /dev/vfio/<group>. The older
//   chips are driven through Google's accel class driver (drivers/accel/accel.c,
//   "Google Accelerator Class driver"): class "accel", devices named "accel%d" whose parent
//   is the PCI device, so /sys/class/accel/accel<N>/device leads back to the chip and the
//   node is /dev/accel<N> (the upstream DRM accel subsystem names it /dev/accel/accel<N>;
//   both are accepted).
// - Per-chip figures (HBM, peak, ICI bandwidth) are the catalogue's (core/catalogue/asic.inc).
//
// `tpu-info` (AI-Hypercomputer/cloud-accelerator-diagnostics), when installed, adds what
// sysfs cannot say: HBM in use, duty cycle, the libtpu version. Its output has two looks:
// the first releases drew rich box tables ("┃ Device ┃ Type ┃ Cores ┃ PID ┃"), later ones
// print markdown-like tables ("| Chip | Type | Devices | PID |"); both are read.
//
// TPU_VISIBLE_CHIPS is applied by detect/merge.hpp, not here.
#pragma once

#include "ai_hwaccel/config.hpp"

#if AI_HWACCEL_BACKEND_TPU

#include "ai_hwaccel/core/catalogue.hpp"
#include "ai_hwaccel/core/pci.hpp"
#include "ai_hwaccel/core/profile.hpp"
#include "ai_hwaccel/core/system_io.hpp"
#include "ai_hwaccel/core/taxonomy.hpp"
#include "ai_hwaccel/core/text.hpp"
#include "ai_hwaccel/core/warning.hpp"
#include "ai_hwaccel/detect/capture.hpp"
#include "ai_hwaccel/detect/probe.hpp"
#include "ai_hwaccel/detect/process.hpp"
#include "ai_hwaccel/detect/sysfs.hpp"
#include "ai_hwaccel/detect/system.hpp"
#include "ai_hwaccel/detect/topology.hpp"

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

AI_HWACCEL_NAMESPACE_BEGIN

/// The problems of the TPU parsers are the shared kind (detect/capture.hpp).
using tpu_parse_problem = parse_problem;

/// Google's PCI vendor id, which TPU chips carry.
inline constexpr std::uint16_t google_pci_vendor_id = 0x1ae0;

/// What tpu-info says about one chip beyond the profile's fields.
struct tpu_chip_info {
    std::string device_path;                       ///< "/dev/vfio/0", "/dev/accel3"; empty if not shown
    /// The processes holding the chip: one, or on chips of two cores (TPU7x) one per core
    /// that has a holder ("1234, 1235"); empty for "None" and "N/A".
    std::vector<std::uint32_t> pids;
    std::optional<std::uint32_t> devices_per_chip; ///< "Cores" / "Devices" column (JAX devices per chip)
    std::string process_name;                      ///< from `tpu-info --process`
    friend bool operator==(const tpu_chip_info&, const tpu_chip_info&) = default;
};

/// What `parse_tpu_info` read: one device per chip, `chips` in the same order.
struct tpu_info_result {
    std::vector<accelerator_profile> devices;
    std::vector<tpu_chip_info> chips;
    std::string libtpu_version;   ///< "Libtpu version: …" line, empty when absent
    std::string accelerator_type; ///< "Accelerator type: v6e" line, empty when absent
    std::vector<tpu_parse_problem> problems;
};

/// What `tpu-info --version` printed.
struct tpu_info_version_result {
    std::string tpu_info_version;
    std::string libtpu_version;
    std::string accelerator_type;
    std::vector<tpu_parse_problem> problems;
};

/// What a `ls -l /dev/vfio` + IOMMU-group vendor/device transcript showed.
struct tpu_vfio_transcript_result {
    /// TPU chips found in the IOMMU groups, by PCI address; `available` when their group's
    /// node is in the /dev/vfio listing (always, when the listing is absent).
    std::vector<accelerator_profile> devices;
    /// Each device's group, in the order of `devices` (a chip of two cores: its first core's).
    std::vector<std::uint32_t> iommu_groups;
    std::vector<std::uint32_t> vfio_nodes;   ///< numbered nodes of the /dev/vfio listing, sorted
    bool vfio_control_node = false;          ///< /dev/vfio/vfio was listed
    std::vector<tpu_parse_problem> problems;
};

namespace detail::tpu {

using detail::parsing::max_rows;
using detail::parsing::parse_real;
using detail::parsing::parse_uint;
using detail::parsing::printable;
using detail::parsing::problem_sink;
using detail::parsing::quote_value;

/// One known TPU PCI device id (JAX hardware_utils.py, tpu-info device.py).
struct tpu_pci_id {
    std::uint16_t device_id;
    std::string_view name; ///< used when the catalogue has no single row for the id
};
inline constexpr std::array<tpu_pci_id, 7> tpu_pci_ids{{
    {0x0027, "Google TPU v2/v3"},
    {0x0056, "Google TPU (device 0x0056)"}, // JAX: "No public name (plc)"
    {0x005e, "Google TPU v4"},
    {0x0062, "Google TPU v5p"},
    {0x0063, "Google TPU v5e"},
    {0x006f, "Google TPU v6e"},
    {0x0076, "Google TPU7x"},
}};

constexpr bool is_tpu_device_id(std::uint16_t id) noexcept {
    for (const auto& t : tpu_pci_ids)
        if (t.device_id == id) return true;
    return false;
}

/// The name tpu-info gives a chip with this id (and subsystem, for the shared v2/v3 id).
constexpr std::string_view table_name(std::uint16_t device_id, std::uint16_t subsystem_device) noexcept {
    if (device_id == 0x0027) {
        if (subsystem_device == 0x004e) return "Google TPU v2";
        if (subsystem_device == 0x004f) return "Google TPU v3";
    }
    for (const auto& t : tpu_pci_ids)
        if (t.device_id == device_id) return t.name;
    return "Google TPU";
}

inline accelerator_profile blank_chip(std::uint32_t index) {
    accelerator_profile p;
    p.kind = device_kind::tpu;
    p.maker = vendor::google;
    p.index = index;
    return p;
}

/// The catalogue row for a chip with a known PCI id: applied, and the name taken from it
/// (or from the id table where the catalogue has none).
inline void apply_pci_identity(accelerator_profile& p, std::uint16_t device_id, std::uint16_t subsystem_device) {
    p.pci_device_id = device_id;
    const auto rows = find_devices_by_pci(google_pci_vendor_id, device_id);
    const device_spec* spec = rows.size() == 1 && rows[0]->kind == device_kind::tpu ? rows[0] : nullptr;
    if (spec) {
        if (p.name.empty()) p.name = spec->name;
        p.apply_spec(*spec);
    } else if (p.name.empty()) {
        p.name = table_name(device_id, subsystem_device);
    }
}

/// Whether PCI function `a` (device id `id`) is another core of chip `p`: a chip of two
/// cores (TPU7x) shows one function per core at one domain:bus:device; tpu-info groups them
/// so (device.py, get_actual_chips).
inline bool same_chip(const accelerator_profile& p, const pci_address& a, std::uint16_t id) noexcept {
    return p.pci && p.pci->domain == a.domain && p.pci->bus == a.bus && p.pci->device == a.device &&
           p.pci_device_id == id;
}

/// A chip named by tpu-info ("TPU v4 chip", "TPU7x chip") matched to the catalogue.
inline void match_catalogue_by_name(accelerator_profile& p, std::string_view type) {
    if (p.spec || type.empty()) return;
    const device_spec* spec = find_device(type);
    if (spec && spec->kind == device_kind::tpu) p.apply_spec(*spec);
}

// ---------------------------------------------------------------------------------------
// Tables as tpu-info prints them.

// A box-drawing character (U+2500..U+257F) at `i`: its UTF-8 length, else 0.
constexpr std::size_t box_char_at(std::string_view s, std::size_t i) noexcept {
    if (i + 3 > s.size()) return 0;
    const auto b0 = static_cast<unsigned char>(s[i]);
    const auto b1 = static_cast<unsigned char>(s[i + 1]);
    const auto b2 = static_cast<unsigned char>(s[i + 2]);
    if (b0 == 0xE2 && (b1 == 0x94 || b1 == 0x95) && (b2 & 0xC0u) == 0x80u) return 3;
    return 0;
}
// A column separator at `i`: '|', "│" (U+2502) or "┃" (U+2503); its length, else 0.
constexpr std::size_t separator_at(std::string_view s, std::size_t i) noexcept {
    if (s[i] == '|') return 1;
    if (box_char_at(s, i) == 3) {
        const auto b1 = static_cast<unsigned char>(s[i + 1]);
        const auto b2 = static_cast<unsigned char>(s[i + 2]);
        if (b1 == 0x94 && (b2 == 0x82 || b2 == 0x83)) return 3;
    }
    return 0;
}

// A line drawn only with table rules: '-', '|', ':', '+', '=', blanks and box characters
// (the borders of rich tables, the "|----|" line under a markdown header).
constexpr bool is_rule_line(std::string_view line) noexcept {
    line = trim(line);
    if (line.empty()) return false;
    for (std::size_t i = 0; i < line.size();) {
        const char c = line[i];
        if (c == '-' || c == '|' || c == ':' || c == '+' || c == '=' || c == ' ' || c == '\t') {
            ++i;
            continue;
        }
        const auto n = box_char_at(line, i);
        if (n == 0) return false;
        i += n;
    }
    return true;
}

inline constexpr std::size_t max_cells = 16;

// The cells of a table row ("| a | b |", "│ a │ b │"), trimmed; nullopt when the line is
// not one (it must open and close with a separator).
inline std::optional<std::vector<std::string_view>> row_cells(std::string_view line) {
    line = trim(line);
    if (line.empty() || separator_at(line, 0) == 0) return std::nullopt;
    std::vector<std::string_view> cells;
    std::size_t i = separator_at(line, 0), start = i;
    bool closed = false;
    while (i < line.size()) {
        const auto n = separator_at(line, i);
        if (n == 0) {
            ++i;
            closed = false;
            continue;
        }
        if (cells.size() >= max_cells) return std::nullopt;
        cells.push_back(trim(line.substr(start, i - start)));
        i += n;
        start = i;
        closed = true;
    }
    if (!closed || cells.empty()) return std::nullopt;
    return cells;
}

enum class table : std::uint8_t { none, other, chips, usage, process };

struct columns {
    table kind = table::none;
    std::optional<std::size_t> path, type, per_chip, pid, name, index, memory, duty;
};

// What a header row announces.
inline columns read_header(const std::vector<std::string_view>& cells) {
    columns c;
    c.kind = table::other;
    for (std::size_t k = 0; k < cells.size(); ++k) {
        const auto h = cells[k];
        if (k == 0 && (h == "Device"sv || h == "Chip"sv)) c.path = k; // a path or a number
        if (k == 0 && (h == "Core ID"sv || h == "Chip"sv || h == "Device"sv)) c.index = k;
        if (h == "Type"sv) c.type = k;
        if (h == "Cores"sv || h == "Devices"sv) c.per_chip = k;
        if (h == "PID"sv) c.pid = k;
        if (h == "Process Name"sv) c.name = k;
        if (h == "Memory usage"sv || h.starts_with("HBM Usage")) c.memory = k;
        if (h == "Duty cycle"sv) c.duty = k;
    }
    if (c.path && c.type) c.kind = table::chips;
    else if (c.index && c.memory) c.kind = table::usage;
    else if (c.path && c.pid && c.name) c.kind = table::process;
    return c;
}

// "/dev/vfio/3" → 3, "/dev/accel12" → 12; nullopt for anything else.
constexpr std::optional<std::uint32_t> chip_number(std::string_view path) noexcept {
    std::string_view rest;
    if (path.starts_with("/dev/vfio/")) rest = path.substr(10);
    else if (path.starts_with("/dev/accel/accel")) rest = path.substr(16);
    else if (path.starts_with("/dev/accel")) rest = path.substr(10);
    else return std::nullopt;
    if (rest.empty() || rest.size() > 6) return std::nullopt;
    std::uint32_t n = 0;
    for (char c : rest) {
        if (c < '0' || c > '9') return std::nullopt;
        n = n * 10 + static_cast<std::uint32_t>(c - '0');
    }
    return n;
}

// "18.45 GiB" → bytes; nullopt for anything else (other units, negative, absurd).
inline std::optional<std::uint64_t> gib_bytes(std::string_view s) {
    s = trim(s);
    if (!s.ends_with("GiB")) return std::nullopt;
    const auto x = parse_real(trim(s.substr(0, s.size() - 3)));
    if (!x || *x < 0 || *x > 16384) return std::nullopt; // 16 TiB: more than any chip has
    return static_cast<std::uint64_t>(std::llround(*x * 1073741824.0));
}

// "100.00%" → 100.
inline std::optional<double> percent(std::string_view s) {
    s = trim(s);
    if (!s.ends_with('%')) return std::nullopt;
    const auto x = parse_real(trim(s.substr(0, s.size() - 1)));
    if (!x || *x < 0 || *x > 100) return std::nullopt;
    return x;
}

// "Key: value" where the key matches exactly (tpu-info pads these lines with blanks).
constexpr std::optional<std::string_view> key_value(std::string_view line, std::string_view key) noexcept {
    line = trim(line);
    if (!line.starts_with(key)) return std::nullopt;
    line.remove_prefix(key.size());
    if (line.empty() || line.front() != ':') return std::nullopt;
    return trim(line.substr(1));
}

inline std::string bounded_text(std::string_view v, std::size_t line, std::string_view what, problem_sink& problems) {
    bool changed = false;
    std::string s = printable(v, changed, 120);
    if (changed) problems.add(line, std::string(what) + ": not printable UTF-8, replaced by " + quote_value(s));
    else if (v.size() > 120) problems.add(line, std::string(what) + ": too long, cut");
    return s;
}

// The PID cell: "1234", or on chips of two cores "1234, 1235" (tpu-info joins the holders of
// the chip's cores). Every entry must read; otherwise none is kept.
inline void read_pids(std::string_view cell, std::size_t line, std::vector<std::uint32_t>& into,
                      problem_sink& problems) {
    constexpr std::size_t most = 16; // a chip has at most two cores; a longer list is garbage
    std::vector<std::uint32_t> pids;
    bool ok = true;
    for (std::string_view rest = cell; ok;) {
        const auto comma = rest.find(',');
        const auto v = parse_uint(trim(rest.substr(0, comma)));
        if (!v || *v > UINT32_MAX || pids.size() == most) ok = false;
        else pids.push_back(static_cast<std::uint32_t>(*v));
        if (comma == std::string_view::npos) break;
        rest.remove_prefix(comma + 1);
    }
    if (ok) into = std::move(pids);
    else problems.add(line, "PID: cannot read " + quote_value(cell));
}

} // namespace detail::tpu

/// Reads what `tpu-info` prints: the "TPU Chips" table (device path, chip type, devices
/// per chip, PID), the utilization table ("Memory usage" / "HBM Usage (GiB)" as
/// "<used> GiB / <total> GiB", "Duty cycle" in %), the "TPU Process Info" table of
/// `tpu-info --process`, and the "Libtpu version:" / "Accelerator type:" lines. Other
/// tables (TensorCore utilization, latencies) are skipped. One device per chip, named by
/// tpu-info's type without " chip" ("TPU v6e"); memory total/used/free and the duty cycle
/// (as utilization) origin::tool; the libtpu version as driver_version; then the catalogue
/// row matched by type fills the rest (origin::catalogue). Utilization rows are matched to
/// chips by their number and only when there is one row per chip.
inline tpu_info_result parse_tpu_info(std::string_view text) {
    using namespace detail::tpu;
    tpu_info_result r;
    problem_sink problems{r.problems};
    columns cols;            // the table being read
    bool in_table = false;   // a header row has been seen since the last text line
    std::vector<std::string> types;
    struct usage_row {
        std::size_t line;
        std::uint32_t number;
        std::optional<std::uint64_t> used, total;
        std::optional<double> duty;
    };
    std::vector<usage_row> usage;
    std::size_t number = 0;
    std::size_t rows_seen = 0;

    auto new_chip = [&](std::uint32_t index) -> std::size_t {
        r.devices.push_back(blank_chip(index));
        r.chips.emplace_back();
        types.emplace_back();
        return r.devices.size() - 1;
    };

    detail::formats::each_line(text, [&](std::string_view raw) {
        ++number;
        const auto line = detail::trim(raw);
        if (is_rule_line(line)) return true;
        const auto cells = row_cells(line);
        if (!cells) {
            in_table = false;
            if (const auto v = key_value(line, "Libtpu version"))
                r.libtpu_version = bounded_text(*v, number, "libtpu version", problems);
            else if (const auto t = key_value(line, "Accelerator type"))
                r.accelerator_type = bounded_text(*t, number, "accelerator type", problems);
            return true;
        }
        if (!in_table) {
            in_table = true;
            cols = read_header(*cells);
            return true;
        }
        if (cols.kind == table::other || cols.kind == table::none) return true;
        if (++rows_seen > max_rows) {
            problems.add(number, "more than " + std::to_string(max_rows) + " table rows; the rest ignored");
            return false;
        }
        const auto cell = [&](const std::optional<std::size_t>& k) -> std::string_view {
            return k && *k < cells->size() ? (*cells)[*k] : std::string_view{};
        };
        if (cols.kind == table::chips || cols.kind == table::process) {
            const auto path = cell(cols.path);
            const auto n = chip_number(path);
            if (!n) {
                problems.add(number, "not a TPU device path: " + quote_value(path));
                return true;
            }
            // The process table of the same run names the chips the chip table did.
            std::size_t at = r.devices.size();
            for (std::size_t k = 0; k < r.chips.size(); ++k)
                if (r.chips[k].device_path == path) at = k;
            if (at == r.devices.size()) {
                at = new_chip(*n);
                r.chips[at].device_path = std::string(path);
            }
            auto& chip = r.chips[at];
            if (const auto pid = cell(cols.pid); !pid.empty() && pid != "None"sv && pid != "N/A"sv)
                read_pids(pid, number, chip.pids, problems);
            if (cols.kind == table::process) {
                if (const auto name = cell(cols.name); !name.empty() && name != "None"sv)
                    chip.process_name = bounded_text(name, number, "process name", problems);
                return true;
            }
            if (const auto per = cell(cols.per_chip); !per.empty()) {
                const auto v = parse_uint(per);
                if (!v || *v == 0 || *v > 64) problems.add(number, "devices per chip: cannot read " + quote_value(per));
                else chip.devices_per_chip = static_cast<std::uint32_t>(*v);
            }
            const auto type = cell(cols.type);
            auto& p = r.devices[at];
            std::string_view name = type;
            if (name.ends_with(" chip")) name.remove_suffix(5);
            bool changed = false;
            const std::string shown = printable(name, changed);
            if (changed || !p.name.assign(shown)) problems.add(number, "chip type not printable or too long: " + quote_value(type));
            types[at] = std::string(type);
            p.chips = {1, origin::tool};
            return true;
        }
        // Utilization: "<n> | <used> GiB / <total> GiB | <duty>%".
        const auto id = cell(cols.index);
        const auto n = parse_uint(id);
        if (!n || *n >= max_rows) {
            problems.add(number, "not a chip number: " + quote_value(id));
            return true;
        }
        usage_row u{number, static_cast<std::uint32_t>(*n), {}, {}, {}};
        if (const auto m = cell(cols.memory); !m.empty() && m != "N/A"sv) {
            const auto slash = m.find('/');
            if (slash != std::string_view::npos) {
                u.used = gib_bytes(m.substr(0, slash));
                u.total = gib_bytes(m.substr(slash + 1));
            }
            if (!u.used || !u.total || *u.used > *u.total) {
                problems.add(number, "memory usage: cannot read " + quote_value(m));
                u.used.reset();
                u.total.reset();
            }
        }
        if (const auto d = cell(cols.duty); !d.empty() && d != "N/A"sv) {
            u.duty = percent(d);
            if (!u.duty) problems.add(number, "duty cycle: cannot read " + quote_value(d));
        }
        usage.push_back(u);
        return true;
    });

    // Utilization rows to chips: by number, one row per chip. Without a chip table, the
    // rows are the chips: each number makes one, whatever it starts from.
    const bool from_rows = r.devices.empty();
    if (from_rows)
        for (const auto& u : usage) {
            bool listed = false;
            for (const auto& d : r.devices) listed = listed || d.index == u.number;
            if (!listed) new_chip(u.number);
        }
    if (!usage.empty() && usage.size() != r.devices.size()) {
        problems.add(0, std::to_string(usage.size()) + " utilization rows for " + std::to_string(r.devices.size()) +
                            " chips; usage not assigned");
    } else {
        std::vector<bool> assigned(r.devices.size(), false);
        for (const auto& u : usage) {
            std::size_t at = u.number; // the chip table's chips in its order
            if (from_rows)
                for (std::size_t k = 0; k < r.devices.size(); ++k)
                    if (r.devices[k].index == u.number) at = k;
            if (at >= r.devices.size()) {
                problems.add(u.line, "utilization row for chip " + std::to_string(u.number) + ", which is not listed");
                continue;
            }
            if (assigned[at]) {
                problems.add(u.line, "a second utilization row for chip " + std::to_string(u.number) + "; ignored");
                continue;
            }
            assigned[at] = true;
            auto& p = r.devices[at];
            if (u.total) {
                p.memory_bytes = {*u.total, origin::tool};
                p.memory_used_bytes = {*u.used, origin::tool};
                p.memory_free_bytes = {*u.total - *u.used, origin::tool};
            }
            if (u.duty) p.utilization_percent = {*u.duty, origin::tool};
        }
    }
    for (std::size_t k = 0; k < r.devices.size(); ++k) {
        auto& p = r.devices[k];
        if (!r.libtpu_version.empty()) p.driver_version.assign(r.libtpu_version);
        match_catalogue_by_name(p, types[k]);
        if (!p.spec) match_catalogue_by_name(p, r.accelerator_type);
    }
    problems.finish();
    return r;
}

/// Reads `tpu-info --version`: "- tpu-info version: 0.8.0", "- libtpu version: 0.0.18",
/// "- accelerator type: v6e". Lines it does not know are problems.
inline tpu_info_version_result parse_tpu_info_version(std::string_view text) {
    using namespace detail::tpu;
    tpu_info_version_result r;
    problem_sink problems{r.problems};
    std::size_t number = 0;
    detail::formats::each_line(text, [&](std::string_view raw) {
        ++number;
        auto line = detail::trim(raw);
        if (line.empty()) return true;
        if (number > 64) {
            problems.add(number, "more lines than tpu-info --version prints; the rest ignored");
            return false;
        }
        if (line.starts_with("- ")) line = detail::trim(line.substr(2));
        if (const auto v = key_value(line, "tpu-info version"))
            r.tpu_info_version = bounded_text(*v, number, "tpu-info version", problems);
        else if (const auto l = key_value(line, "libtpu version"))
            r.libtpu_version = bounded_text(*l, number, "libtpu version", problems);
        else if (const auto a = key_value(line, "accelerator type"))
            r.accelerator_type = bounded_text(*a, number, "accelerator type", problems);
        else
            problems.add(number, "not understood: " + quote_value(line));
        return true;
    });
    problems.finish();
    return r;
}

/// Reads the transcript of `ls -l /dev/vfio` followed by, for every device of every IOMMU
/// group, "<group path>/devices/<addr> -> vendor: 0x1ae0" and "  device: 0x006f" (the
/// shape of the ray-project/ray capture). Every Google device with a TPU id becomes a chip
/// (catalogue by PCI id), indexed in PCI-address order; other devices are skipped.
inline tpu_vfio_transcript_result parse_tpu_vfio_transcript(std::string_view text) {
    using namespace detail::tpu;
    tpu_vfio_transcript_result r;
    problem_sink problems{r.problems};
    struct entry {
        pci_address address;
        std::uint32_t group;
        std::optional<std::uint16_t> vendor_id, device_id;
        std::size_t line;
    };
    std::vector<entry> entries;
    enum class part : std::uint8_t { none, listing, groups } where = part::none;
    bool listing_seen = false;
    std::size_t number = 0;
    auto hex16 = [](std::string_view v) -> std::optional<std::uint16_t> {
        const auto x = detail::parse_hex_attribute(detail::trim(v));
        if (!x || *x > 0xffff || !detail::trim(v).starts_with("0x")) return std::nullopt;
        return static_cast<std::uint16_t>(*x);
    };
    auto read_device = [&](entry& e, std::string_view rest, std::size_t line) {
        const auto v = hex16(rest);
        if (!v) problems.add(line, "device id: cannot read " + quote_value(rest));
        else e.device_id = v;
    };
    detail::formats::each_line(text, [&](std::string_view raw) {
        ++number;
        const auto line = detail::trim(raw);
        if (line.empty()) return true;
        if (entries.size() >= max_rows || r.vfio_nodes.size() >= max_rows) {
            problems.add(number, "more than " + std::to_string(max_rows) + " entries; the rest ignored");
            return false;
        }
        if (line.starts_with("---")) {
            if (line.find("/dev/vfio") != std::string_view::npos) {
                where = part::listing;
                listing_seen = true;
            } else {
                where = part::groups;
            }
            return true;
        }
        if (line.starts_with("/sys/kernel/iommu_groups/")) {
            where = part::groups;
            // /sys/kernel/iommu_groups/<g>/devices/<addr> -> vendor: 0x1ae0 [device: 0x006f]
            std::string_view rest = line.substr(25);
            const auto slash = rest.find('/');
            const auto group = parse_uint(rest.substr(0, slash));
            const auto arrow = rest.find(" -> vendor:");
            const std::string_view path = arrow == std::string_view::npos ? rest : rest.substr(0, arrow);
            const auto dev = path.find("/devices/");
            const auto address = dev == std::string_view::npos ? std::nullopt : parse_pci_address(path.substr(dev + 9));
            if (!group || *group > UINT32_MAX || !address || arrow == std::string_view::npos) {
                problems.add(number, "not an IOMMU group device line: " + quote_value(line));
                return true;
            }
            entry e{*address, static_cast<std::uint32_t>(*group), {}, {}, number};
            std::string_view values = rest.substr(arrow + 11);
            const auto dpos = values.find("device:");
            const auto vendor_text = dpos == std::string_view::npos ? values : values.substr(0, dpos);
            e.vendor_id = hex16(vendor_text);
            if (!e.vendor_id) problems.add(number, "vendor id: cannot read " + quote_value(vendor_text));
            if (dpos != std::string_view::npos) read_device(e, values.substr(dpos + 7), number);
            entries.push_back(e);
            return true;
        }
        if (line.starts_with("device:")) {
            if (entries.empty() || entries.back().device_id) {
                problems.add(number, "device line without its IOMMU group line");
                return true;
            }
            read_device(entries.back(), line.substr(7), number);
            return true;
        }
        if (where == part::listing) {
            if (line.starts_with("total ")) return true;
            // "crw-rw-rw- 1 root root 245,   2 Jul 29 18:29 0": the name is the last word.
            if (line.front() != 'c') {
                problems.add(number, "not a character device in the /dev/vfio listing: " + quote_value(line));
                return true;
            }
            const auto sp = line.find_last_of(" \t");
            const std::string_view name = sp == std::string_view::npos ? line : line.substr(sp + 1);
            if (name == "vfio"sv) r.vfio_control_node = true;
            else if (const auto g = parse_uint(name); g && *g <= UINT32_MAX)
                r.vfio_nodes.push_back(static_cast<std::uint32_t>(*g));
            else problems.add(number, "not a VFIO group node: " + quote_value(name));
            return true;
        }
        problems.add(number, "not understood: " + quote_value(line));
        return true;
    });
    std::sort(r.vfio_nodes.begin(), r.vfio_nodes.end());
    std::sort(entries.begin(), entries.end(), [](const entry& a, const entry& b) { return a.address < b.address; });
    for (const auto& e : entries) {
        if (e.vendor_id && *e.vendor_id == google_pci_vendor_id && !e.device_id)
            problems.add(e.line, "no device id for " + std::string(e.address.text().data()));
        if (!e.vendor_id || *e.vendor_id != google_pci_vendor_id || !e.device_id || !is_tpu_device_id(*e.device_id))
            continue;
        const bool node = std::binary_search(r.vfio_nodes.begin(), r.vfio_nodes.end(), e.group);
        // The second core's function of a TPU7x chip (sorted next to the first): the same chip.
        if (!r.devices.empty() && same_chip(r.devices.back(), e.address, *e.device_id)) {
            r.devices.back().available = r.devices.back().available || (listing_seen && node);
            continue;
        }
        accelerator_profile p = blank_chip(static_cast<std::uint32_t>(r.devices.size()));
        p.pci = e.address;
        apply_pci_identity(p, *e.device_id, 0);
        if (listing_seen) p.available = node;
        r.devices.push_back(p);
        r.iommu_groups.push_back(e.group);
    }
    problems.finish();
    return r;
}

/// The one tpu-info run the probe makes (static mode: every table once, then exit). It
/// starts a process to load libtpu and asks the runtime over gRPC, hence the long limit.
inline tool_request tpu_info_request() {
    using namespace std::chrono_literals;
    return tool_request{{"tpu-info"}, 30s};
}

namespace detail::tpu {

/// A TPU chip on the PCI bus, and how user space reaches it.
struct pci_chip {
    pci_device dev;
    std::string node; ///< "/dev/vfio/3", "/dev/accel0" when found, else empty
};

// The /dev node of a chip: its VFIO group's node when bound to vfio-pci, its accel class
// device's node when bound to another driver; empty when none exists.
template <system_view S>
std::string device_node(const S& sys, const pci_device& d, std::size_t position,
                        const std::optional<std::vector<std::string>>& accel_class) {
    const std::string dir = "/sys/bus/pci/devices/" + std::string(d.address.text().data());
    if (d.driver.empty()) return {};
    if (d.driver == "vfio-pci"sv) {
        const auto target = detail::resolve_sysfs_link(sys, dir + "/iommu_group");
        if (!target) return {};
        const std::string node = "/dev/vfio/" + std::string(detail::base_name(*target));
        return sys.exists(node) ? node : std::string();
    }
    if (accel_class) {
        for (const auto& name : *accel_class) {
            if (!name.starts_with("accel")) continue;
            const auto target = detail::resolve_sysfs_link(sys, "/sys/class/accel/" + name + "/device");
            if (!target || detail::base_name(*target) != std::string_view(d.address.text().data())) continue;
            for (const auto& node : {"/dev/" + name, "/dev/accel/" + name})
                if (sys.exists(node)) return node;
            return {};
        }
    }
    // No class entry names the chip: tpu-info's own convention, /dev/accel<position>.
    const std::string node = "/dev/accel" + std::to_string(position);
    return sys.exists(node) ? node : std::string();
}

inline interconnect ici_of(const std::vector<accelerator_profile>& chips) {
    interconnect l;
    l.kind = interconnect_kind::ici;
    l.scope = link_scope::intra_node;
    l.name = "ICI";
    l.state = std::to_string(chips.size()) + " chips";
    double gbps = 0;
    bool same = true;
    for (const auto& c : chips) {
        l.devices.push_back(c.index);
        const double g = c.spec && c.spec->link == interconnect_kind::ici ? c.spec->link_bandwidth_gbps : 0;
        if (&c != &chips.front() && g != gbps) same = false;
        gbps = g;
    }
    if (same && gbps > 0) l.bandwidth_gbps = {gbps, origin::catalogue};
    return l;
}

} // namespace detail::tpu

/// TPU chips from PCI sysfs, enriched by tpu-info.
struct tpu_probe {
    static constexpr backend_id backend = backend_id::tpu;
    /// Whether to run tpu-info for memory use and duty cycle.
    bool use_tpu_info = true;

    template <system_view S>
    probe_output probe(const S& sys) const {
        probe_output out;
        std::vector<warning> ignored; // the host probes report the PCI bus's own problems
        const auto accel_class = sys.list_dir("/sys/class/accel");
        for (const auto& d : probe_pci(sys, ignored)) {
            if (d.vendor_id != google_pci_vendor_id || !detail::tpu::is_tpu_device_id(d.device_id)) continue;
            // A chip of two cores (TPU7x) is two PCI functions of one domain:bus:device, as
            // tpu-info groups them: one device, usable when either function's node is there.
            const auto chip = std::ranges::find_if(out.devices, [&](const accelerator_profile& c) {
                return detail::tpu::same_chip(c, d.address, d.device_id);
            });
            if (chip != out.devices.end()) {
                chip->available = chip->available || !detail::tpu::device_node(sys, d, chip->index, accel_class).empty();
                continue;
            }
            const auto position = out.devices.size();
            accelerator_profile p = detail::tpu::blank_chip(static_cast<std::uint32_t>(position));
            p.pci = d.address;
            detail::tpu::apply_pci_identity(p, d.device_id, d.subsystem_device_id);
            p.chips = {1, origin::sysfs};
            if (d.numa_node >= 0) p.numa_node = {d.numa_node, origin::sysfs};
            if (d.link_current && d.link_current->known()) p.pcie_current = d.link_current;
            if (d.link_max && d.link_max->known()) p.pcie_max = d.link_max;
            p.available = !detail::tpu::device_node(sys, d, position, accel_class).empty();
            out.devices.push_back(p);
        }
        if (out.devices.empty()) return out;
        if (out.devices.size() >= 2) out.links.push_back(detail::tpu::ici_of(out.devices));
        if (use_tpu_info) enrich(sys, out);
        return out;
    }

private:
    template <system_view S>
    static void enrich(const S& sys, probe_output& out) {
        const tool_request request = tpu_info_request();
        tool_result r = sys.run(request);
        if (tool_missing(r, out.warnings)) {
            out.warnings.push_back(warning{warning_kind::tool_not_found, backend, "tpu-info",
                                           std::to_string(out.devices.size()) +
                                               " TPU chip(s) on the PCI bus but tpu-info is not installed in any "
                                               "trusted folder; HBM use and duty cycle unknown",
                                           0});
            return;
        }
        if (!report_tool_result(request, r, backend, out.warnings)) return;
        // It runs because chips are on the bus: printing nothing, or no table, is a fault.
        if (report_empty_output(request, r, backend, out.warnings)) return;
        const auto info = parse_tpu_info(r.out);
        detail::parsing::problems_to_warnings(info.problems, backend, "tpu-info", out.warnings);
        if (info.devices.empty() && info.problems.empty())
            out.warnings.push_back(warning{warning_kind::parse_error, backend, "tpu-info",
                                           "no chip table in its output; HBM use and duty cycle unknown", 0});
        if (info.devices.empty()) return;
        if (info.devices.size() != out.devices.size()) {
            out.warnings.push_back(warning{warning_kind::disagreement, backend, "tpu-info",
                                           "lists " + std::to_string(info.devices.size()) + " chips, the PCI bus " +
                                               std::to_string(out.devices.size()) + "; its figures are not used",
                                           0});
            return;
        }
        for (std::size_t k = 0; k < info.devices.size(); ++k) {
            const auto& t = info.devices[k];
            auto& p = out.devices[k];
            if (t.spec && p.spec && t.spec != p.spec) {
                out.warnings.push_back(warning{warning_kind::disagreement, backend, "tpu-info",
                                               "calls chip " + std::to_string(k) + " a " + std::string(t.name.view()) +
                                                   ", its PCI id a " + std::string(p.spec->name) +
                                                   "; the PCI id is used",
                                               0});
                continue;
            }
            if (t.memory_bytes) p.memory_bytes.offer(*t.memory_bytes, origin::tool);
            if (t.memory_used_bytes) p.memory_used_bytes.offer(*t.memory_used_bytes, origin::tool);
            if (t.memory_free_bytes) p.memory_free_bytes.offer(*t.memory_free_bytes, origin::tool);
            if (t.utilization_percent) p.utilization_percent.offer(*t.utilization_percent, origin::tool);
            if (p.driver_version.empty()) p.driver_version = t.driver_version;
        }
    }
};
#if AI_HWACCEL_OS_LINUX || AI_HWACCEL_OS_MACOS
static_assert(backend_probe<tpu_probe, host_system>);
#endif

// ---------------------------------------------------------------------------------------
// Capture formats

namespace detail::formats {

inline void tpu_problems_to_warnings(const std::vector<parse_problem>& problems, std::string_view subject,
                                     std::vector<warning>& out) {
    detail::parsing::problems_to_warnings(problems, backend_id::tpu, subject, out);
}

// A table header row of tpu-info naming these cells first, in order.
inline bool has_tpu_header(std::string_view t, std::initializer_list<std::string_view> first_cells) {
    bool found = false;
    each_line(t, [&](std::string_view line) {
        const auto cells = detail::tpu::row_cells(line);
        if (!cells || cells->size() < first_cells.size()) return true;
        std::size_t k = 0;
        bool all = true;
        for (auto c : first_cells) all = all && (*cells)[k++] == c;
        found = all;
        return !found;
    });
    return found;
}
inline bool has_trimmed_line(std::string_view t, std::string_view wanted) {
    bool found = false;
    each_line(t, [&](std::string_view line) {
        found = trim(line) == wanted;
        return !found;
    });
    return found;
}

// tpu-info (both looks) -------------------------------------------------------------------
// The two sniffers below build a few short strings; out of memory means "not this format"
// where exceptions exist.
template <class F>
int sniff_guarded(F&& f) noexcept {
#if AI_HWACCEL_EXCEPTIONS
    try {
        return f();
    } catch (...) { // bad_alloc only
        return 0;
    }
#else
    return f();
#endif
}
inline int sniff_tpu_info(std::string_view t) noexcept {
    return sniff_guarded([&] {
        if (!has_trimmed_line(t, "TPU Chips")) return 0;
        const bool old_look = has_tpu_header(t, {"Device", "Type"});
        const bool new_look = has_tpu_header(t, {"Chip", "Type"});
        return old_look || new_look ? 90 : 0;
    });
}
inline void parse_tpu_info_capture(std::string_view t, capture_parse& out) {
    auto r = parse_tpu_info(t);
    tpu_problems_to_warnings(r.problems, out.format, out.warnings);
    if (r.devices.empty() && r.problems.empty()) nothing_found(out, "TPU chips");
    out.devices = std::move(r.devices);
}

// tpu-info --process ------------------------------------------------------------------------
inline int sniff_tpu_info_process(std::string_view t) noexcept {
    return sniff_guarded([&] {
        if (first_non_blank_line(t) != "TPU Process Info"sv) return 0;
        return has_tpu_header(t, {"Chip", "PID", "Process Name"}) ? 90 : 0;
    });
}
inline void parse_tpu_info_process_capture(std::string_view t, capture_parse& out) {
    auto r = parse_tpu_info(t);
    tpu_problems_to_warnings(r.problems, out.format, out.warnings);
    if (r.devices.empty() && r.problems.empty()) nothing_found(out, "TPU chips");
    out.devices = std::move(r.devices);
}

// tpu-info --version --------------------------------------------------------------------------
inline int sniff_tpu_info_version(std::string_view t) noexcept {
    const auto first = first_non_blank_line(t);
    return first.starts_with("- tpu-info version:") || (first.starts_with("- libtpu version:") &&
                                                        t.find("- tpu-info version:") != std::string_view::npos)
               ? 90
               : 0;
}
inline void parse_tpu_info_version_capture(std::string_view t, capture_parse& out) {
    const auto r = parse_tpu_info_version(t);
    tpu_problems_to_warnings(r.problems, out.format, out.warnings);
    // A version report names no chip: nothing to list, and nothing missing when it read.
    if (r.tpu_info_version.empty() && r.problems.empty()) nothing_found(out, "tpu-info version line");
}

// ls -l /dev/vfio + IOMMU groups' vendor/device ----------------------------------------------
inline int sniff_tpu_vfio_transcript(std::string_view t) noexcept {
    bool group_line = false;
    each_line(t, [&](std::string_view line) {
        line = trim(line);
        group_line = line.starts_with("/sys/kernel/iommu_groups/") && line.find(" -> vendor: 0x") != std::string_view::npos;
        return !group_line;
    });
    return group_line ? 90 : 0;
}
inline void parse_tpu_vfio_transcript_capture(std::string_view t, capture_parse& out) {
    auto r = parse_tpu_vfio_transcript(t);
    tpu_problems_to_warnings(r.problems, out.format, out.warnings);
    if (r.devices.empty() && r.problems.empty()) nothing_found(out, "TPU chips");
    out.devices = std::move(r.devices);
}

} // namespace detail::formats

AI_HWACCEL_NAMESPACE_END

#endif // AI_HWACCEL_BACKEND_TPU
