// ai-hwaccel detect: the node's network fabric (InfiniBand and RoCE ports).
//
// A host probe, like those of detect/topology.hpp: it belongs to no backend and is always
// compiled. It lists every port of every RDMA device under /sys/class/infiniband and turns
// each into an `interconnect` that leaves the node (scope inter_node; the links between
// GPUs inside the node come from the GPU backends). The same ports can be read from the
// text of `ibstat` and `ibstatus` (infiniband-diags), for captures sent in bug reports.
//
// What the kernel prints (drivers/infiniband/core/sysfs.c): a port's `state` is
// "<n>: <NAME>" (NOP, DOWN, INIT, ARMED, ACTIVE, ACTIVE_DEFER), `phys_state` "<n>: <Name>"
// (LinkUp, Polling, Disabled, …), `rate` "<Gb/s>[.5] Gb/sec (<width>X <speed>)" with the
// speed's name (SDR … NDR, XDR), `link_layer` "InfiniBand", "Ethernet" or "Unknown"; a
// device's `node_type` is "<n>: CA" (or RNIC, usNIC, usNIC UDP, switch, router,
// unspecified), and each GID's `gid_attrs/types/<i>` "IB/RoCE v1" or "RoCE v2".
//
// Bandwidth. `rate` is the link's rate in one direction, in Gb/s as the IBTA names it
// ("400 Gb/sec (4X NDR)"); `interconnect::bandwidth_gbps` is decimal GB/s summed over both
// directions, as vendors quote NVLink. So a 400 Gb/s port is 400 × 2 / 8 = 100 GB/s. The
// rate is the one the kernel prints, before line coding (QDR's 40 Gb/s carries 32 Gb/s of
// data); it is not corrected here.
//
// Ports that are not ACTIVE (down, polling, initialising, armed) are listed, with their
// state, but their bandwidth stays unknown: a port that carries no traffic adds none, and
// the rate a down port prints is not a negotiated one.
#pragma once

#include "ai_hwaccel/config.hpp"
#include "ai_hwaccel/core/pci.hpp"
#include "ai_hwaccel/core/profile.hpp"
#include "ai_hwaccel/core/system_io.hpp"
#include "ai_hwaccel/core/taxonomy.hpp"
#include "ai_hwaccel/core/text.hpp"
#include "ai_hwaccel/core/warning.hpp"
#include "ai_hwaccel/detect/capture.hpp"
#include "ai_hwaccel/detect/system.hpp"
#include "ai_hwaccel/detect/sysfs.hpp"
#include "ai_hwaccel/detect/topology.hpp"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

AI_HWACCEL_NAMESPACE_BEGIN

/// One port of an RDMA device, with what the interconnect record has no room for.
struct fabric_port {
    std::string device;       ///< RDMA device name: "mlx5_0", "mlx5_bond_0"
    std::uint32_t port = 0;   ///< 1-based port number
    std::string hca_type;     ///< "MT4129" (sysfs hca_type, ibstat "CA type"); empty if unknown
    std::string firmware;     ///< "28.41.1000"; empty if unknown
    std::string board_id;     ///< "MT_0000000838"; empty if unknown
    std::string node_type;    ///< "CA", "RNIC", …; empty if unknown
    std::string link_layer;   ///< "InfiniBand", "Ethernet" as printed; empty if unknown
    std::string state;        ///< logical state as the source prints it: "ACTIVE", "Active", "DOWN"
    std::string phys_state;   ///< physical state: "LinkUp", "Polling", "Disabled"
    std::string rate_text;    ///< the rate as printed: "400 Gb/sec (4X NDR)", "200"
    sourced<double> rate_gbit; ///< Gb/s in one direction, as printed
    bool active = false;       ///< logical state ACTIVE: the port carries traffic
    interconnect_kind kind = interconnect_kind::none;
    std::optional<pci_address> pci; ///< the PCI function behind the device, when sysfs says
    std::int32_t numa_node = -1;    ///< that function's NUMA node; -1 when unknown
    friend bool operator==(const fabric_port&, const fabric_port&) = default;
};

/// What a fabric parser read: the ports, the same as interconnects, and problems.
struct fabric_result {
    std::vector<fabric_port> ports;
    std::vector<interconnect> links;
    std::vector<parse_problem> problems;
};

namespace detail::fabric {

// Ports per device beyond this are garbage (HCAs have one or two; a switch ASIC 64+1).
inline constexpr std::size_t max_ports_per_device = 256;
// RDMA devices per node beyond this are garbage (the largest nodes have a few dozen).
inline constexpr std::size_t max_devices = 256;

/// "4: ACTIVE" → "ACTIVE"; "Active" stays "Active". The number is the kernel's and says
/// nothing the name does not.
constexpr std::string_view state_name(std::string_view s) noexcept {
    s = trim(s);
    const auto colon = s.find(':');
    if (colon != std::string_view::npos) {
        bool digits = colon > 0;
        for (std::size_t i = 0; i < colon; ++i)
            if (s[i] < '0' || s[i] > '9') digits = false;
        if (digits) s = trim(s.substr(colon + 1));
    }
    return s;
}

/// Whether a logical state means the port passes traffic: the kernel's "ACTIVE" (4), or
/// ibstat's "Active". ACTIVE_DEFER is a transition and is not counted.
constexpr bool is_active_state(std::string_view s) noexcept { return iequals(state_name(s), "ACTIVE"sv); }

/// A port rate → Gb/s in one direction: "400 Gb/sec (4X NDR)" (sysfs, ibstatus),
/// "2.5 Gb/sec (1X SDR)", the bare "400" of ibstat, or its "40 (FDR10)" (the one rate it
/// names). nullopt for anything else.
inline std::optional<double> parse_rate(std::string_view s) noexcept {
    s = trim(s);
    std::size_t i = 0;
    while (i < s.size() && ((s[i] >= '0' && s[i] <= '9') || s[i] == '.')) ++i;
    if (i == 0 || i > 12) return std::nullopt;
    const auto v = parsing::parse_real(s.substr(0, i));
    if (!v || *v <= 0 || *v > 1e6) return std::nullopt;
    const std::string_view rest = trim(s.substr(i));
    return rest.empty() || rest.starts_with("Gb/sec") || rest.starts_with('(') ? v : std::nullopt;
}

/// Decimal GB/s both directions from Gb/s in one: × 2 directions ÷ 8 bits.
constexpr double both_directions_gbytes(double gbit_one_way) noexcept { return gbit_one_way * 2.0 / 8.0; }

/// The kind of a port from its link layer and its device's node type: InfiniBand is
/// InfiniBand; Ethernet on a channel adapter is RoCE (the version unknown until the GID
/// table says), on an iWARP RNIC or a usNIC it is RDMA over Ethernet but not RoCE.
inline interconnect_kind kind_of(std::string_view link_layer, std::string_view node_type) noexcept {
    link_layer = trim(link_layer);
    if (iequals(link_layer, "InfiniBand"sv)) return interconnect_kind::infiniband;
    if (iequals(link_layer, "Ethernet"sv)) {
        const auto n = state_name(node_type);
        if (iequals(n, "RNIC"sv) || n.starts_with("usNIC")) return interconnect_kind::ethernet;
        return interconnect_kind::roce;
    }
    return interconnect_kind::none;
}

inline std::string clean(std::string_view s, bool& changed) {
    return parsing::printable(trim(s), changed, 128);
}

} // namespace detail::fabric

/// The interconnect record of a port: name "<device> port <n>", the state as printed,
/// bandwidth only for an active port (see the header's comment), no devices.
inline interconnect to_interconnect(const fabric_port& p, origin from) {
    interconnect l{};
    l.kind = p.kind;
    l.scope = link_scope::inter_node;
    l.name = detail::concat({p.device, " port "sv, detail::to_decimal(p.port)});
    l.state = p.state;
    if (p.active && p.rate_gbit) l.bandwidth_gbps = {detail::fabric::both_directions_gbytes(*p.rate_gbit), from};
    return l;
}

namespace detail::fabric {

inline void finish(fabric_result& r, origin from) {
    r.links.clear();
    for (const auto& p : r.ports) r.links.push_back(to_interconnect(p, from));
}

// Keys of the text formats. Each parser fills one port at a time.
struct text_port_builder {
    fabric_result& r;
    parsing::problem_sink& problems;
    std::optional<fabric_port> current;
    bool too_many = false;

    void flush(std::size_t line) {
        if (!current) return;
        auto& p = *current;
        if (!p.link_layer.empty()) p.kind = kind_of(p.link_layer, p.node_type);
        p.active = is_active_state(p.state);
        if (p.state.empty()) problems.add(line, p.device + " port " + detail::to_decimal(p.port) + ": no state");
        r.ports.push_back(std::move(p));
        current.reset();
    }
    bool start(fabric_port p, std::size_t line) {
        flush(line);
        if (r.ports.size() >= parsing::max_rows) {
            if (!too_many)
                problems.add(line, "more than " + std::to_string(parsing::max_rows) + " ports; the rest ignored");
            too_many = true;
            return false;
        }
        current = std::move(p);
        return true;
    }
    // One "key: value" of the current port; false when the key is not a port's.
    bool apply(std::string_view key, std::string_view value, std::size_t line) {
        if (!current) return false;
        auto& p = *current;
        bool changed = false;
        auto text = [&](std::string& field) {
            field = clean(value, changed);
            if (changed) problems.add(line, std::string(key) + " not printable: " + parsing::quote_value(value));
        };
        if (iequals(key, "state")) {
            text(p.state);
            p.state = std::string(state_name(p.state));
        } else if (iequals(key, "phys state") || iequals(key, "Physical state")) {
            text(p.phys_state);
            p.phys_state = std::string(state_name(p.phys_state));
        } else if (iequals(key, "rate")) {
            text(p.rate_text);
            if (const auto g = parse_rate(value)) p.rate_gbit = {*g, origin::tool};
            else problems.add(line, "not a rate: " + parsing::quote_value(value));
        } else if (iequals(key, "link_layer") || iequals(key, "Link layer")) {
            text(p.link_layer);
            if (kind_of(p.link_layer, {}) == interconnect_kind::none)
                problems.add(line, "unknown link layer: " + parsing::quote_value(value));
        } else {
            return false;
        }
        return true;
    }
};

// "'name'" → name, or nullopt.
constexpr std::optional<std::string_view> quoted(std::string_view s) noexcept {
    if (s.size() < 2 || s.front() != '\'') return std::nullopt;
    const auto close = s.find('\'', 1);
    if (close == std::string_view::npos || close == 1) return std::nullopt;
    return s.substr(1, close - 1);
}

// ibstat's header line of one device: "CA 'mlx5_0'", "Switch 'sw0'" or "Router 'r0'" (its
// node types), or "CA: 'mlx5_0'" when one port is asked for (`ibstat mlx5_0 1`).
struct ibstat_header {
    std::string_view type, name;
};
constexpr std::optional<ibstat_header> ibstat_device_line(std::string_view line) noexcept {
    line = trim(line);
    for (const std::string_view type : {"CA"sv, "Switch"sv, "Router"sv}) {
        if (!line.starts_with(type)) continue;
        std::string_view rest = line.substr(type.size());
        if (rest.starts_with(':')) rest.remove_prefix(1);
        if (!rest.starts_with(' ') || rest.back() != '\'') return std::nullopt;
        const auto name = quoted(trim(rest));
        if (!name) return std::nullopt;
        return ibstat_header{type, *name};
    }
    return std::nullopt;
}

// ibstatus's header line of one port: "Infiniband device 'mlx5_0' port 1 status:".
struct ibstatus_header {
    std::string_view device;
    std::optional<std::uint64_t> port;
};
constexpr std::optional<ibstatus_header> ibstatus_port_line(std::string_view line) noexcept {
    line = trim(line);
    constexpr std::string_view lead = "Infiniband device '";
    if (!line.starts_with(lead) || !line.ends_with(" status:")) return std::nullopt;
    const auto name = quoted(line.substr(lead.size() - 1));
    if (!name) return std::nullopt;
    std::string_view rest = line.substr(lead.size() + name->size() + 1);
    constexpr std::string_view tail = " status:";
    if (!rest.ends_with(tail)) return std::nullopt;
    rest.remove_suffix(tail.size());
    rest = trim(rest);
    if (!rest.starts_with("port ")) return ibstatus_header{*name, std::nullopt};
    return ibstatus_header{*name, parse_u64(trim(rest.substr(5)))};
}

} // namespace detail::fabric

/// Reads `ibstat` (infiniband-diags): "CA '<name>'" blocks (a switch's "Switch '<name>'",
/// with its port 0) with "CA type", "Firmware version" and "Port <n>:" sections holding
/// "State", "Physical state", "Rate" (Gb/s) and "Link layer". Values origin::tool; lines it
/// does not know are ignored when they look like "key: value", reported otherwise.
inline fabric_result parse_ibstat(std::string_view text) {
    using namespace detail::fabric;
    fabric_result r;
    detail::parsing::problem_sink problems{r.problems};
    text_port_builder b{r, problems, std::nullopt};
    std::optional<fabric_port> ca; // the adapter's fields, copied into each port
    std::size_t number = 0;
    bool stop = false;
    detail::formats::each_line(text, [&](std::string_view raw) {
        ++number;
        const auto line = detail::trim(raw);
        if (line.empty()) return true;
        if (const auto h = ibstat_device_line(line)) {
            b.flush(number);
            bool changed = false;
            ca = fabric_port{};
            ca->device = clean(h->name, changed);
            ca->node_type = std::string(h->type);
            if (changed) problems.add(number, "adapter name not printable: " + detail::parsing::quote_value(h->name));
            return true;
        }
        const auto colon = line.find(':');
        if (colon == std::string_view::npos) {
            problems.add(number, "not understood: " + detail::parsing::quote_value(line));
            return true;
        }
        const auto key = detail::trim(line.substr(0, colon));
        const auto value = detail::trim(line.substr(colon + 1));
        if (!ca) {
            problems.add(number, "line before any CA line: " + detail::parsing::quote_value(line));
            return true;
        }
        if (key.starts_with("Port ") && value.empty()) {
            const auto n = detail::parse_u64(detail::trim(key.substr(5)));
            // A switch's management port is port 0; an adapter numbers its ports from 1.
            if (!n || (*n == 0 && ca->node_type != "Switch"sv) || *n > detail::fabric::max_ports_per_device) {
                problems.add(number, "not a port number: " + detail::parsing::quote_value(key));
                b.flush(number);
                return true;
            }
            fabric_port p = *ca;
            p.port = static_cast<std::uint32_t>(*n);
            if (!b.start(std::move(p), number)) stop = true;
            return !stop;
        }
        bool changed = false;
        if (key == "CA type"sv) ca->hca_type = clean(value, changed);
        else if (key == "Firmware version"sv) ca->firmware = clean(value, changed);
        else b.apply(key, value, number);
        if (changed) problems.add(number, std::string(key) + " not printable: " + detail::parsing::quote_value(value));
        return true;
    });
    b.flush(number);
    problems.finish();
    finish(r, origin::tool);
    return r;
}

/// Reads `ibstatus` (infiniband-diags): "Infiniband device '<name>' port <n> status:"
/// blocks holding "state: 4: ACTIVE", "phys state: 5: LinkUp", "rate: 200 Gb/sec (4X
/// HDR)" and "link_layer: InfiniBand". States are kept by name ("ACTIVE").
inline fabric_result parse_ibstatus(std::string_view text) {
    using namespace detail::fabric;
    fabric_result r;
    detail::parsing::problem_sink problems{r.problems};
    text_port_builder b{r, problems, std::nullopt};
    std::size_t number = 0;
    detail::formats::each_line(text, [&](std::string_view raw) {
        ++number;
        const auto line = detail::trim(raw);
        if (line.empty()) return true;
        if (const auto h = ibstatus_port_line(line)) {
            if (!h->port || *h->port == 0 || *h->port > max_ports_per_device) {
                problems.add(number, "not a port header: " + detail::parsing::quote_value(line));
                b.flush(number);
                return true;
            }
            fabric_port p;
            bool changed = false;
            p.device = clean(h->device, changed);
            if (changed) problems.add(number, "device name not printable: " + detail::parsing::quote_value(h->device));
            p.port = static_cast<std::uint32_t>(*h->port);
            return b.start(std::move(p), number);
        }
        const auto colon = line.find(':');
        if (colon == std::string_view::npos) {
            problems.add(number, "not understood: " + detail::parsing::quote_value(line));
            return true;
        }
        if (!b.current) {
            problems.add(number, "line before any port header: " + detail::parsing::quote_value(line));
            return true;
        }
        b.apply(detail::trim(line.substr(0, colon)), detail::trim(line.substr(colon + 1)), number);
        return true;
    });
    b.flush(number);
    problems.finish();
    finish(r, origin::tool);
    return r;
}

// ---------------------------------------------------------------------------------------
// sysfs

namespace detail::fabric {

// "mlx5_10" after "mlx5_9": names compare by their stem, then by their trailing number.
inline bool natural_less(const std::string& a, const std::string& b) {
    auto split = [](std::string_view s) {
        std::size_t i = s.size();
        while (i > 0 && s[i - 1] >= '0' && s[i - 1] <= '9') --i;
        const auto n = i < s.size() && s.size() - i <= 18 ? parse_u64(s.substr(i)) : std::nullopt;
        return std::pair{s.substr(0, n ? i : s.size()), n.value_or(0)};
    };
    const auto [sa, na] = split(a);
    const auto [sb, nb] = split(b);
    if (sa != sb) return sa < sb;
    if (na != nb) return na < nb;
    return a < b;
}

// The attribute `name` of the sysfs folder `dir`, as printable text ("" when missing).
template <system_view S>
std::string read_attr(const S& sys, const std::string& dir, const char* name, std::vector<warning>& warnings) {
    const std::string path = concat({dir, "/"sv, name});
    const auto text = read_optional_file(sys, path, sysfs_attribute_cap, warnings);
    if (!text) return {};
    bool changed = false;
    std::string s = clean(*text, changed);
    if (changed) add_warning(warnings, warning_kind::parse_error, path, "not printable text; kept with '?'");
    return s;
}

// A state attribute of `dir` by its name alone ("4: ACTIVE" → "ACTIVE", see state_name).
template <system_view S>
std::string read_state(const S& sys, const std::string& dir, const char* name, std::vector<warning>& warnings) {
    return std::string(state_name(read_attr(sys, dir, name, warnings)));
}

// The PCI function behind an RDMA device directory: its `device` link, else (a captured
// tree that kept the real path but not the link) the function the directory sits in,
// "<pci function>/infiniband/<name>".
template <system_view S>
std::optional<std::string> pci_function_dir(const S& sys, const std::string& dir) {
    if (auto target = resolve_sysfs_link(sys, dir + "/device"))
        if (parse_pci_address(base_name(*target))) return target;
    const std::string parent = join_path(dir, ".."sv);
    if (base_name(parent) != "infiniband"sv) return std::nullopt;
    std::string function = join_path(parent, ".."sv);
    if (!parse_pci_address(base_name(function))) return std::nullopt;
    return function;
}

// Whether the port's GID table holds a RoCE v2 entry. Empty entries read as an error
// (the kernel returns EINVAL for them); only the first few are looked at, which is where
// the kernel puts the default GIDs of each type.
template <system_view S>
bool has_roce_v2_gid(const S& sys, const std::string& port_dir) {
    for (std::uint64_t i = 0; i < 8; ++i) {
        const auto r = sys.read_file(concat({port_dir, "/gid_attrs/types/"sv, to_decimal(i)}), 64);
        if (r.status == read_status::ok && trim(r.data) == "RoCE v2"sv) return true;
    }
    return false;
}

/// read_fabric_ports' walk, handing each port to `take` as it is read: probe_fabric turns
/// them into interconnects on the way, with no list of ports in between. The port handed
/// over is one object refilled for each port of a device (what the device has in common is
/// read once), so `take` copies what it keeps.
template <system_view S, class F>
void for_each_port(const S& sys, std::vector<warning>& warnings, F&& take) {
    auto names = sys.list_dir("/sys/class/infiniband"sv);
    if (!names) return;
    detail::sort_names(*names, natural_less);
    if (names->size() > max_devices) {
        detail::add_warning(warnings, warning_kind::value_out_of_range, "/sys/class/infiniband"sv,
                            detail::with_numbers("{} devices; the first {} read"sv, {names->size(), max_devices}));
        names->erase(names->begin() + max_devices, names->end()); // not resize(), which could also grow
    }
    for (const auto& name : *names) {
        std::string class_path = "/sys/class/infiniband/";
        class_path += name;
        // A live link resolves to /sys/devices/…/infiniband/<name>; a captured tree may
        // hold the link as a file naming its target, or a plain folder.
        const std::string dir = detail::resolve_sysfs_link(sys, class_path).value_or(class_path);
        if (!sys.exists(dir)) {
            std::string message = "links to ";
            message += dir;
            message += ", which does not exist; device skipped";
            detail::add_warning(warnings, warning_kind::read_error, class_path, std::move(message));
            continue;
        }
        auto port_names = sys.list_dir(dir + "/ports");
        if (!port_names) continue;
        fabric_port p{};
        bool changed = false;
        p.device = clean(name, changed);
        p.hca_type = read_attr(sys, dir, "hca_type", warnings);
        p.firmware = read_attr(sys, dir, "fw_ver", warnings);
        p.board_id = read_attr(sys, dir, "board_id", warnings);
        p.node_type = read_state(sys, dir, "node_type", warnings);
        if (const auto fn = pci_function_dir(sys, dir)) {
            p.pci = parse_pci_address(detail::base_name(*fn));
            p.numa_node = detail::read_numa_node(sys, *fn, warnings);
        }
        std::vector<std::uint64_t> numbers; // as cpulist_ranges keeps its ranges: one sort for both
        for (const auto& pn : *port_names) {
            const auto n = detail::parse_u64(pn);
            if (!n || *n > 0xffff) continue; // not a port
            numbers.push_back(*n);
        }
        detail::sort_numbers(numbers);
        if (numbers.size() > max_ports_per_device) numbers.erase(numbers.begin() + max_ports_per_device, numbers.end());
        for (const auto n : numbers) {
            const std::string pdir = concat({dir, "/ports/"sv, to_decimal(n)});
            p.port = static_cast<std::uint32_t>(n);
            p.state = read_state(sys, pdir, "state", warnings);
            p.phys_state = read_state(sys, pdir, "phys_state", warnings);
            p.link_layer = read_attr(sys, pdir, "link_layer", warnings);
            p.rate_text = read_attr(sys, pdir, "rate", warnings);
            p.active = is_active_state(p.state);
            p.rate_gbit = {};
            if (!p.rate_text.empty()) {
                if (const auto g = parse_rate(p.rate_text)) p.rate_gbit = {*g, origin::sysfs};
                else
                    detail::add_value_warning(warnings, warning_kind::parse_error, pdir + "/rate", "not a port rate:"sv,
                                              p.rate_text);
            }
            p.kind = kind_of(p.link_layer, p.node_type);
            if (p.kind == interconnect_kind::roce && has_roce_v2_gid(sys, pdir)) p.kind = interconnect_kind::roce_v2;
            if (p.kind == interconnect_kind::none && !p.link_layer.empty() && p.link_layer != "Unknown"sv)
                detail::add_value_warning(warnings, warning_kind::parse_error, pdir + "/link_layer",
                                          "unknown link layer"sv, p.link_layer);
            take(std::as_const(p));
        }
    }
}
} // namespace detail::fabric

/// Every port of every RDMA device under /sys/class/infiniband, devices in natural order
/// ("mlx5_2" before "mlx5_10"), ports by number. A machine without RDMA devices gives an
/// empty list and no warning; a device whose directory is missing (a dangling link) is
/// skipped with a warning; one without a ports folder is skipped silently. Values are
/// origin::sysfs.
template <system_view S>
std::vector<fabric_port> read_fabric_ports(const S& sys, std::vector<warning>& warnings) {
    std::vector<fabric_port> ports;
    detail::fabric::for_each_port(sys, warnings, [&](const fabric_port& p) { ports.push_back(p); });
    return ports;
}

/// The fabric ports of the node as interconnects (see `to_interconnect`), origin::sysfs.
template <system_view S>
std::vector<interconnect> probe_fabric(const S& sys, std::vector<warning>& warnings) {
    std::vector<interconnect> links;
    detail::fabric::for_each_port(sys, warnings,
                                  [&](const fabric_port& p) { links.push_back(to_interconnect(p, origin::sysfs)); });

    return links;
}

// ---------------------------------------------------------------------------------------
// Capture formats

namespace detail::formats {

// ibstat --------------------------------------------------------------------------------
inline int sniff_ibstat(std::string_view t) noexcept {
    if (!fabric::ibstat_device_line(first_non_blank_line(t))) return 0;
    bool typed = false;
    each_line(t, [&](std::string_view line) {
        line = trim(line);
        typed = line.starts_with("CA type:") || line.starts_with("Number of ports:");
        return !typed;
    });
    return typed ? 90 : 0;
}
inline void parse_ibstat_capture(std::string_view t, capture_parse& out) {
    auto r = parse_ibstat(t);
    parsing::problems_to_warnings(r.problems, std::nullopt, out.format, out.warnings);
    if (r.links.empty() && r.problems.empty()) nothing_found(out, "ports");
    system_io io;
    io.interconnects = std::move(r.links);
    out.system = std::move(io);
}

// ibstatus ------------------------------------------------------------------------------
inline int sniff_ibstatus(std::string_view t) noexcept {
    return fabric::ibstatus_port_line(first_non_blank_line(t)) ? 90 : 0;
}
inline void parse_ibstatus_capture(std::string_view t, capture_parse& out) {
    auto r = parse_ibstatus(t);
    parsing::problems_to_warnings(r.problems, std::nullopt, out.format, out.warnings);
    if (r.links.empty() && r.problems.empty()) nothing_found(out, "ports");
    system_io io;
    io.interconnects = std::move(r.links);
    out.system = std::move(io);
}

} // namespace detail::formats

AI_HWACCEL_NAMESPACE_END
