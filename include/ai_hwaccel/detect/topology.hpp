// ai-hwaccel detect: NUMA nodes and PCI functions.
//
// NUMA nodes come from /sys/devices/system/node/node<N>/{cpulist,meminfo}; a node may
// have memory and no CPUs (the memory of a coherently attached GPU on IBM AC922 or
// Grace Hopper is one) and is kept. PCI functions come from /sys/bus/pci/devices/<addr>/:
// ids, class, NUMA node, bound driver and the current and maximum PCIe link. The link
// attributes print "16.0 GT/s PCIe" on current kernels and "8 GT/s" on older ones.
#pragma once

#include "ai_hwaccel/config.hpp"
#include "ai_hwaccel/core/pci.hpp"
#include "ai_hwaccel/core/profile.hpp"
#include "ai_hwaccel/core/system_io.hpp"
#include "ai_hwaccel/core/text.hpp"
#include "ai_hwaccel/core/units.hpp"
#include "ai_hwaccel/core/warning.hpp"
#include "ai_hwaccel/detect/system.hpp"
#include "ai_hwaccel/detect/sysfs.hpp"

#include <algorithm>
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

AI_HWACCEL_NAMESPACE_BEGIN

// ---------------------------------------------------------------------------------------
// NUMA

namespace detail {
/// A node's id and MemTotal in bytes, as parse_node_meminfo reads them.
struct node_memory {
    std::uint32_t id = 0;
    std::uint64_t bytes = 0;
};
inline std::optional<node_memory> read_node_meminfo(std::string_view text) {
    std::optional<std::uint32_t> id;
    std::optional<std::uint64_t> total;
    bool consistent = true;
    detail::for_each_key_value(text, [&](std::string_view key, std::string_view value, bool has_colon) {
        if (!has_colon || !key.starts_with("Node ")) return;
        key.remove_prefix(5);
        const auto sp = key.find(' ');
        if (sp == std::string_view::npos) return;
        const auto n = detail::parse_u64(key.substr(0, sp));
        if (!n || *n > UINT32_MAX) return;
        if (id && *id != *n) consistent = false;
        id = static_cast<std::uint32_t>(*n);
        if (detail::trim(key.substr(sp)) != "MemTotal"sv) return;
        const auto vsp = value.find(' ');
        const auto kib = detail::parse_u64(value.substr(0, vsp));
        const std::string_view unit = vsp == std::string_view::npos ? ""sv : detail::trim(value.substr(vsp));
        if (!kib || unit != "kB"sv || *kib > UINT64_MAX / units::kib) return;
        total = *kib * units::kib;
    });
    if (!consistent || !id || !total) return std::nullopt;
    return node_memory{*id, *total};
}
} // namespace detail

/// A node's meminfo ("Node 250 MemTotal:       15728640 kB" and more lines like it) →
/// the node's id and MemTotal in bytes (cpus left empty). nullopt without a MemTotal line
/// or when lines name different nodes.
inline std::optional<numa_node> parse_node_meminfo(std::string_view text) {
    const auto m = detail::read_node_meminfo(text);
    if (!m) return std::nullopt;
    numa_node node;
    node.id = m->id;
    node.memory_bytes = m->bytes;
    return node;
}

namespace detail {
/// "node12" → 12; nullopt for the other entries of /sys/devices/system/node.
constexpr std::optional<std::uint32_t> numa_dir_id(std::string_view name) noexcept {
    if (!name.starts_with("node")) return std::nullopt;
    const auto n = parse_u64(name.substr(4));
    if (!n || *n > UINT32_MAX) return std::nullopt;
    return static_cast<std::uint32_t>(*n);
}

/// Orders the entries of /sys/devices/system/node by node id (the other entries first).
inline bool numa_dir_less(const std::string& a, const std::string& b) { return numa_dir_id(a) < numa_dir_id(b); }
} // namespace detail

/// The NUMA nodes, by id. A kernel without NUMA (no /sys/devices/system/node) gives an
/// empty list and no warning.
template <system_view S>
std::vector<numa_node> probe_numa(const S& sys, std::vector<warning>& warnings) {
    std::vector<numa_node> nodes;
    auto names = detail::list_optional_dir(sys, "/sys/devices/system/node"sv, warnings);
    if (!names) return nodes;
    detail::sort_names(*names, detail::numa_dir_less); // nodes come out by id
    for (const auto& name : *names) {
        const auto id = detail::numa_dir_id(name);
        if (!id) continue;
        std::string dir = "/sys/devices/system/node/";
        dir += name;
        numa_node node;
        node.id = *id;
        const std::string cpulist_path = dir + "/cpulist";
        if (auto text = detail::read_optional_file(sys, cpulist_path, 64 * 1024, warnings)) {
            if (cpulist_count(*text)) node.cpus = std::string(detail::trim(*text));
            else detail::add_warning(warnings, warning_kind::parse_error, cpulist_path, "not a cpulist");
        }
        const std::string meminfo_path = dir + "/meminfo";
        if (auto text = detail::read_optional_file(sys, meminfo_path, 64 * 1024, warnings)) {
            const auto mem = detail::read_node_meminfo(*text);
            if (!mem)
                detail::add_warning(warnings, warning_kind::parse_error, meminfo_path, "no Node MemTotal line");
            else if (mem->id != node.id) {
                detail::add_warning(warnings, warning_kind::disagreement, meminfo_path,
                                    detail::with_numbers("describes node {}; its size is not used for node {}"sv,
                                                         {mem->id, node.id}));

            } else
                node.memory_bytes = mem->bytes;
        }
        nodes.push_back(std::move(node));
    }
    return nodes;
}

// ---------------------------------------------------------------------------------------
// PCI

/// A PCIe link speed attribute → the generation: "2.5 GT/s" 1, "5.0 GT/s PCIe" 2, 8 → 3,
/// 16 → 4, 32 → 5, 64 → 6, 128 → 7. 0 for "Unknown", PCI-X speeds and anything else.
constexpr std::uint8_t parse_pcie_link_speed(std::string_view s) noexcept {
    s = detail::trim(s);
    // Rate in tenths of GT/s, from at most 4 integer digits and a fraction whose digits
    // after the first are zeros.
    std::uint32_t tenths = 0;
    std::size_t i = 0, int_digits = 0;
    while (i < s.size() && s[i] >= '0' && s[i] <= '9') {
        if (++int_digits > 4) return 0;
        tenths = tenths * 10 + static_cast<std::uint32_t>(s[i++] - '0');
    }
    if (int_digits == 0) return 0;
    tenths *= 10;
    if (i < s.size() && s[i] == '.') {
        ++i;
        std::size_t frac_digits = 0;
        while (i < s.size() && s[i] >= '0' && s[i] <= '9') {
            if (frac_digits == 0) tenths += static_cast<std::uint32_t>(s[i] - '0');
            else if (s[i] != '0') return 0;
            ++frac_digits;
            ++i;
        }
        if (frac_digits == 0) return 0;
    }
    while (i < s.size() && s[i] == ' ') ++i;
    const std::string_view unit = s.substr(i);
    if (!unit.starts_with("GT/s") || (unit.size() > 4 && unit[4] != ' ')) return 0;
    switch (tenths) {
    case 25: return 1;
    case 50: return 2;
    case 80: return 3;
    case 160: return 4;
    case 320: return 5;
    case 640: return 6;
    case 1280: return 7;
    default: return 0;
    }
}

/// A PCIe link width attribute ("16", or "x16" as some tools print it) → lanes, 1..32;
/// 0 for a link that is down ("0") and for anything else.
constexpr std::uint8_t parse_pcie_link_width(std::string_view s) noexcept {
    s = detail::trim(s);
    if (!s.empty() && (s.front() == 'x' || s.front() == 'X')) s.remove_prefix(1);
    if (s.size() > 2) return 0;
    const auto n = detail::parse_u64(s);
    if (!n || *n > 32) return 0;
    return static_cast<std::uint8_t>(*n);
}

static_assert(parse_pcie_link_speed("16.0 GT/s PCIe") == 4);
static_assert(parse_pcie_link_speed("8 GT/s") == 3);
static_assert(parse_pcie_link_speed("2.5 GT/s\n") == 1);
static_assert(parse_pcie_link_speed("Unknown") == 0);
static_assert(parse_pcie_link_width("x16") == 16);

namespace detail {
inline constexpr std::size_t sysfs_attribute_cap = 4096;

/// Reads one of a PCI function's link attributes pair into `link`; false when neither
/// file exists (no PCIe capability: host bridges, conventional PCI).
template <system_view S>
bool read_pcie_link(const S& sys, const std::string& dir, std::string_view which, pcie_link& link,
                    std::vector<warning>& warnings) {
    std::string prefix = dir;
    prefix += '/';
    prefix += which;
    const std::string speed_path = prefix + "_link_speed";
    const std::string width_path = prefix + "_link_width";
    const auto speed = read_optional_file(sys, speed_path, sysfs_attribute_cap, warnings);
    const auto width = read_optional_file(sys, width_path, sysfs_attribute_cap, warnings);
    if (speed) {
        link.generation = parse_pcie_link_speed(*speed);
        // "Unknown" (older kernels: "Unknown speed") is the kernel saying so, not garbage.
        if (link.generation == 0 && !trim(*speed).starts_with("Unknown"))
            add_value_warning(warnings, warning_kind::parse_error, speed_path, "not a PCIe link speed:"sv, trim(*speed));
    }
    if (width) {
        link.width = parse_pcie_link_width(*width);
        // 0 and 255 are what the kernel prints for a function with no PCIe link of its
        // own (integrated NPUs and GPUs): unknown, not garbage.
        if (link.width == 0 && trim(*width) != "0"sv && trim(*width) != "255"sv)
            add_value_warning(warnings, warning_kind::parse_error, width_path, "not a PCIe link width:"sv, trim(*width));
    }
    return speed.has_value() || width.has_value();
}

/// Reads a hexadecimal id attribute no wider than `max`.
template <system_view S>
std::optional<std::uint32_t> read_pci_id(const S& sys, const std::string& path, std::uint32_t max,
                                         std::vector<warning>& warnings) {
    const auto text = read_optional_file(sys, path, sysfs_attribute_cap, warnings);
    if (!text) return std::nullopt;
    const auto v = parse_hex_attribute(*text);
    if (!v) {
        add_warning(warnings, warning_kind::parse_error, path, "not a hexadecimal id");
        return std::nullopt;
    }
    if (*v > max) {
        add_warning(warnings, warning_kind::value_out_of_range, path, "wider than the field it fills");
        return std::nullopt;
    }
    return v;
}

/// Orders the entries of /sys/bus/pci/devices by PCI address (names that are none first).
inline bool pci_dir_less(const std::string& a, const std::string& b) {
    return parse_pci_address(a) < parse_pci_address(b);
}
} // namespace detail

/// What a PCI function's `uevent` attribute says. For every function the kernel writes
/// PCI_CLASS (the 24-bit class code in hexadecimal without "0x": "30200"), PCI_ID and
/// PCI_SUBSYS_ID ("10DE:2330"), PCI_SLOT_NAME and MODALIAS (pci_uevent, drivers/pci), and
/// the driver core adds DRIVER=<name> while a driver is bound. One read gives what the
/// class, vendor, device and subsystem attributes and the driver link give one by one.
/// Lines of other keys are skipped; a value not understood leaves its fields empty, and
/// the first such line is kept in `bad`.
struct pci_uevent {
    std::optional<std::uint32_t> class_code;
    std::optional<std::uint16_t> vendor_id, device_id;
    std::optional<std::uint16_t> subsystem_vendor_id, subsystem_device_id;
    std::optional<pci_address> slot;
    std::optional<std::string_view> driver; ///< into the text parsed
    std::string_view bad;                   ///< "PCI_ID=10DE:12345"
    /// The kernel's whole record (class, ids, subsystem ids): then a missing DRIVER line
    /// means that no driver is bound. A hand-made file may hold less.
    constexpr bool complete() const noexcept { return class_code && vendor_id && subsystem_vendor_id; }
};

constexpr pci_uevent parse_pci_uevent(std::string_view text) noexcept {
    pci_uevent u;
    // "VVVV:DDDD", each part at most 16 bits.
    auto pair = [](std::string_view v, std::optional<std::uint16_t>& a, std::optional<std::uint16_t>& b) {
        const auto colon = v.find(':');
        const auto x = colon == std::string_view::npos ? std::nullopt : detail::parse_hex32(v.substr(0, colon));
        const auto y = colon == std::string_view::npos ? std::nullopt : detail::parse_hex32(v.substr(colon + 1));
        if (!x || !y || *x > 0xffffu || *y > 0xffffu) return false;
        a = static_cast<std::uint16_t>(*x);
        b = static_cast<std::uint16_t>(*y);
        return true;
    };
    while (!text.empty()) {
        const auto nl = text.find('\n');
        const auto line = detail::trim(text.substr(0, nl));
        text = nl == std::string_view::npos ? std::string_view{} : text.substr(nl + 1);
        const auto eq = line.find('=');
        if (eq == std::string_view::npos) continue;
        const auto key = line.substr(0, eq), v = line.substr(eq + 1);
        bool ok = true;
        if (key == "PCI_CLASS"sv) {
            const auto c = detail::parse_hex32(v);
            ok = c && *c <= 0xffffffu;
            if (ok) u.class_code = *c;
        } else if (key == "PCI_ID"sv) {
            ok = pair(v, u.vendor_id, u.device_id);
        } else if (key == "PCI_SUBSYS_ID"sv) {
            ok = pair(v, u.subsystem_vendor_id, u.subsystem_device_id);
        } else if (key == "PCI_SLOT_NAME"sv) {
            u.slot = parse_pci_address(v);
            ok = u.slot.has_value();
        } else if (key == "DRIVER"sv) {
            ok = !v.empty();
            if (ok) u.driver = v;
        }
        if (!ok && u.bad.empty()) u.bad = line;
    }
    return u;
}
static_assert(parse_pci_uevent("DRIVER=nvidia\nPCI_CLASS=30200\nPCI_ID=10DE:2330\nPCI_SUBSYS_ID=10DE:16C1\n"
                               "PCI_SLOT_NAME=0000:01:00.0\nMODALIAS=pci:v000010DEd00002330sv000010DEsd000016C1bc03sc02i00\n")
                  .complete());
static_assert(*parse_pci_uevent("PCI_CLASS=30200").class_code == 0x030200u);
static_assert(!parse_pci_uevent("PCI_ID=10DE:12345\n").vendor_id &&
              parse_pci_uevent("PCI_ID=10DE:12345\n").bad == "PCI_ID=10DE:12345"sv);

/// One PCI function from its sysfs directory (`/sys/bus/pci/devices/0000:65:00.0`, or the
/// `/sys/devices/pci…/…/0000:65:00.0` it links to; the directory's name is the address).
/// Attributes that are missing are left at their defaults without a warning; nullopt when
/// the name is not a PCI address or the directory does not exist.
template <system_view S>
std::optional<pci_device> read_pci_device(const S& sys, std::string_view dir, std::vector<warning>& warnings);

namespace detail {
/// The NUMA node of the PCI function in folder `dir` (its numa_node attribute); -1 where
/// the kernel does not know, the file is missing, or its value is not a node's.
template <system_view S>
std::int32_t read_numa_node(const S& sys, std::string_view dir, std::vector<warning>& warnings) {
    std::string path(dir);
    path += "/numa_node";
    const auto text = read_optional_file(sys, path, sysfs_attribute_cap, warnings);
    if (!text) return -1;
    const auto n = parse_i64(trim(*text));
    if (!n)
        add_warning(warnings, unparsed_number(*text), path, "not a node number");
    else if (*n < -1 || *n >= (std::int64_t{1} << 16))
        add_warning(warnings, warning_kind::value_out_of_range, path,
                    "node " + std::string(trim(*text)) + " is not one a kernel can have");
    else
        return static_cast<std::int32_t>(*n);
    return -1;
}

/// read_pci_device for a folder known to exist (probe_pci has just looked).
template <system_view S>
pci_device read_pci_device_at(const S& sys, std::string_view dir, pci_address address, std::vector<warning>& warnings) {
    const std::string d(dir);
    pci_device p;
    p.address = address;
    // The uevent first: one read where the kernel wrote it whole; the attribute files where
    // it is missing or partial (captured and hand-made trees).
    const std::string uevent_path = d + "/uevent";
    const auto uevent_text = detail::read_optional_file(sys, uevent_path, detail::sysfs_attribute_cap, warnings);
    pci_uevent ue;
    if (uevent_text) {
        ue = parse_pci_uevent(*uevent_text);
        if (!ue.bad.empty())
            detail::add_value_warning(warnings, warning_kind::parse_error, uevent_path, "a line not understood:"sv, ue.bad);
    }
    if (ue.complete()) {
        p.class_code = *ue.class_code;
        p.vendor_id = *ue.vendor_id;
        p.device_id = *ue.device_id;
        p.subsystem_vendor_id = *ue.subsystem_vendor_id;
        p.subsystem_device_id = *ue.subsystem_device_id;
    } else {
        auto id16 = [&](const char* file, std::uint16_t& field) {
            if (auto v = detail::read_pci_id(sys, d + "/" + file, 0xffffu, warnings))
                field = static_cast<std::uint16_t>(*v);
        };
        if (auto v = detail::read_pci_id(sys, d + "/class", 0xffffffu, warnings)) p.class_code = *v;
        id16("vendor", p.vendor_id);
        id16("device", p.device_id);
        id16("subsystem_vendor", p.subsystem_vendor_id);
        id16("subsystem_device", p.subsystem_device_id);
    }
    pcie_link link;
    // The kernel gives a function the four link attributes together or not at all (only
    // PCI Express functions have them): where the current pair is missing, so is the
    // maximum, and a function that is not PCIe costs two lookups, not four.
    if (detail::read_pcie_link(sys, d, "current"sv, link, warnings)) {
        p.link_current = {link, origin::sysfs};
        link = {};
        if (detail::read_pcie_link(sys, d, "max"sv, link, warnings)) p.link_max = {link, origin::sysfs};
    }
    p.numa_node = detail::read_numa_node(sys, d, warnings);
    if (ue.driver) p.driver = std::string(*ue.driver);
    else if (!ue.complete()) // the kernel's whole uevent without DRIVER: none is bound
        if (auto target = detail::resolve_sysfs_link(sys, d + "/driver"))
            p.driver = std::string(detail::base_name(*target));
    return p;
}
} // namespace detail

template <system_view S>
std::optional<pci_device> read_pci_device(const S& sys, std::string_view dir, std::vector<warning>& warnings) {
    const auto address = parse_pci_address(detail::base_name(dir));
    if (!address || !sys.exists(dir)) return std::nullopt;
    return detail::read_pci_device_at(sys, dir, *address, warnings);
}

namespace detail {
/// What the probes of one detection scan alike, scanned by the first probe that asks and
/// handed to the others (host_system::sharing, detector::run_timed_with): the PCI bus,
/// which the host probes and five backends (CUDA, TPU, Gaudi, Neuron, Qualcomm) walk for
/// their vendors' functions. Safe to share among the detector's parallel probes.
struct shared_scans {
    std::once_flag pci_once;
    std::vector<pci_device> pci;
    std::vector<warning> pci_warnings;
};

/// A function's max_link_* is its own capability (the kernel reads its Link Capabilities
/// register), not the slot's: a Gen5 x16 card in a Gen4 x8 slot says Gen5 x16. Each port
/// on its path to the root (the folders above it under /sys/devices, which the bus's walk
/// has read too) caps that maximum, as the kernel's pcie_bandwidth_available walks them.
/// A port claiming less than the link below it is running at now is no real limit and is
/// skipped: virtual machines' emulated ports (QEMU's 2.5 GT/s x1) describe no physical
/// link. `devices` is sorted by address. One link read per function with a known maximum.
template <system_view S>
void cap_links_by_ports(const S& sys, std::vector<pci_device>& devices) {
    for (auto& d : devices) {
        if (!d.link_max || !d.link_max->known() || !d.link_current || !d.link_current->known()) continue;
        const auto path = resolve_sysfs_link(sys, join_path("/sys/bus/pci/devices"sv, d.address.text().data()));

        if (!path) continue;
        pcie_link below = *d.link_current; // what the link under the next port up runs at
        pcie_link cap = *d.link_max;
        std::string_view up = *path;
        for (int depth = 0; depth < 16; ++depth) { // PCIe allows no deeper tree that matters here
            const auto slash = up.rfind('/');
            if (slash == std::string_view::npos) break;
            up = up.substr(0, slash);
            const auto a = parse_pci_address(base_name(up));
            if (!a) break; // "pci0000:00": the root complex
            const auto port = std::ranges::lower_bound(devices, *a, {}, &pci_device::address);
            if (port == devices.end() || port->address != *a) continue;
            const pcie_link p = port->link_max.value_or(pcie_link{});
            if (p.known() && p.generation >= below.generation && p.width >= below.width) // else emulated
                cap = {std::min(cap.generation, p.generation), std::min(cap.width, p.width)};
            if (port->link_current && port->link_current->known()) below = *port->link_current;
        }
        if (cap != *d.link_max) d.link_max = sourced<pcie_link>{cap, d.link_max.from};
    }
}

/// probe_pci's walk of the bus.
template <system_view S>
std::vector<pci_device> scan_pci_bus(const S& sys, std::vector<warning>& warnings) {
    std::vector<pci_device> devices;
    auto names = list_optional_dir(sys, "/sys/bus/pci/devices"sv, warnings);
    if (!names) return devices;
    sort_names(*names, pci_dir_less); // devices come out by address
    for (const auto& name : *names) {
        std::string dir = "/sys/bus/pci/devices/";
        dir += name;
        const auto address = parse_pci_address(name);
        if (!address) {
            add_warning(warnings, warning_kind::parse_error, dir, "not a PCI address; skipped");
            continue;
        }
        if (!sys.exists(dir)) {
            // Listed, yet not there: a link that dangles or loops back on itself.
            add_warning(warnings, warning_kind::read_error, dir, "listed but cannot be opened (a broken link)");
            continue;
        }
        devices.push_back(read_pci_device_at(sys, dir, *address, warnings));
    }
    cap_links_by_ports(sys, devices);
    return devices;
}
} // namespace detail

/// Every PCI function under /sys/bus/pci/devices, by address. A machine without a PCI
/// bus (or a container without /sys) gives an empty list and no warning. Through a view
/// that shares its scans (host_system::sharing) the bus is walked once, by the first
/// caller; every caller gets the functions and the walk's warnings.
template <system_view S>
std::vector<pci_device> probe_pci(const S& sys, std::vector<warning>& warnings) {
    // A build without backends has the host's walk alone: nothing to share.
    if constexpr (compiled_backend_mask != 0 && requires {
                      { sys.scans() } -> std::same_as<detail::shared_scans*>;
                  }) {
        if (detail::shared_scans* shared = sys.scans()) {
            std::call_once(shared->pci_once, [&] { shared->pci = detail::scan_pci_bus(sys, shared->pci_warnings); });
            warnings.insert(warnings.end(), shared->pci_warnings.begin(), shared->pci_warnings.end());
            return shared->pci;
        }
    }
    return detail::scan_pci_bus(sys, warnings);
}

AI_HWACCEL_NAMESPACE_END
