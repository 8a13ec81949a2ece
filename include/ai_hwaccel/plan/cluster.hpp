// ai-hwaccel plan: several machines as one cluster, and a model planned across them.
//
// `make_cluster` merges registries detected on several nodes (`ai-hwaccel detect --json`
// on each, read back with registry_from_json) into a `cluster_view`: one flat list of
// devices, renumbered 0…n-1 because a device's index is only unique on its own node
// (every node has a GPU 0), each remembering its node and its index there; the nodes'
// intra-node links (NVLink, NVSwitch, XGMI, …) with their `devices` lists rewritten to
// the flat numbers; and each node's inter-node fabric (InfiniBand, RoCE, Ethernet ports,
// `link_scope::inter_node`). Nodes whose fabric differs from the others' (one has
// InfiniBand, another nothing, or slower ports) are reported in `fabric_notes`.
//
// Two nodes are joined when each has an active port of the same network: InfiniBand
// reaches InfiniBand, RoCE/RoCE v2/Ethernet reach each other (they are all Ethernet).
// The link between them is the slower of the two nodes' fastest ports of that network
// (the faster network when they share two). Nothing is invented: two nodes without a
// common network are not joined, unless `cluster_options::fallback_network_gbps` says
// what network to assume between them (the slower path, a stated assumption).
//
// `plan_cluster` lays a model out with plan_sharding (plan/shard.hpp) over the flat view
// of the nodes it can join: a node's NVLink/NVSwitch island is one tensor-parallel group
// (intra-node links never join devices of two nodes), consecutive layer ranges go to
// groups one after another (pipeline parallel, across nodes when one node cannot hold the
// model), and copies of the smallest layout that fits fill the devices left (data
// parallel); `plan_options::spread` instead lays one copy over every node. The planner is
// given the intra-node links only, so it prices every hop between two nodes as a PCIe hop
// (its formula for stages without a link, see shard.hpp); plan_cluster then re-prices each
// hop that crosses nodes on the link joining them:
//
//   hop (seconds) = hidden x activation_bytes x batch / B + link_latency_s + pipeline_hop_latency_s
//
// B = min(the nodes' link one way, i.e. its both-directions bandwidth / 2, PCIe of the two
// GPUs that send and receive: GPUDirect RDMA crosses the host link), in decimal bytes/s;
// a port of unknown speed counts as the PCIe bound. Prefill re-prices the bandwidth term
// per token (shard.hpp's convention: latencies are paid per micro-batch), adding the
// difference whole, as though it did not overlap with the other stages' micro-batches
// (pipelined_prefill_seconds): at most a slight underestimate of a long prompt's rate,
// the term being about a microsecond per token (8192 fp16 values at 100 Gb/s). The
// plan's decode and prefill rates, its pipeline seconds and the aggregate over replicas
// are corrected; the compute and tensor-parallel terms are the planner's unchanged.
//
// `plan_cluster_best_format` picks the format as plan_best_format does on one machine (the
// highest quality that fits, shard.hpp's candidates and rules) over the joined group, then
// plans it with plan_cluster.
//
// A joined group is one in which every two nodes share a network (a pipeline hop never
// relies on a third node to forward it). Nodes outside the joined group with the most
// usable accelerator memory are left out, listed with the reason; if the model then fits
// nowhere, `fits == false` and `joined == false` say that the nodes could not be joined.
// Everything is an estimate. Not constexpr (names and registries are heap values); the
// planning itself is plan_sharding's.
#pragma once

#include "ai_hwaccel/config.hpp"
#include "ai_hwaccel/core/profile.hpp"
#include "ai_hwaccel/core/system_io.hpp"
#include "ai_hwaccel/core/taxonomy.hpp"
#include "ai_hwaccel/core/text.hpp"
#include "ai_hwaccel/plan/model.hpp"
#include "ai_hwaccel/plan/shard.hpp"
#include "ai_hwaccel/registry.hpp"

#if AI_HWACCEL_JSON
#include "ai_hwaccel/io/json.hpp"
#endif

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

AI_HWACCEL_NAMESPACE_BEGIN

/// One machine of a cluster: a name for people (host name) and what was detected there.
struct cluster_node {
    std::string name;
    accelerator_registry registry;
};

/// Where a device of the flat view comes from.
struct cluster_device {
    std::uint32_t node = 0;        ///< position in cluster_view::nodes
    std::uint32_t local_index = 0; ///< its accelerator_profile::index on that node
    std::uint32_t position = 0;    ///< its position in that node's registry.all()
};

/// Networks whose ports can reach each other.
enum class network_class : std::uint8_t {
    none,
    infiniband, ///< InfiniBand ports
    ethernet,   ///< RoCE, RoCE v2, plain Ethernet and Gaudi's RoCE ports
};
constexpr std::string_view to_string(network_class c) noexcept {
    switch (c) {
    case network_class::none: return "none";
    case network_class::infiniband: return "infiniband";
    case network_class::ethernet: return "ethernet";
    }
    return "none";
}
/// The network an inter-node link kind belongs to (none for intra-node kinds).
constexpr network_class network_of(interconnect_kind k) noexcept {
    switch (k) {
    case interconnect_kind::infiniband: return network_class::infiniband;
    case interconnect_kind::roce:
    case interconnect_kind::roce_v2:
    case interconnect_kind::ethernet:
    case interconnect_kind::gaudi_roce: return network_class::ethernet;
    default: return network_class::none;
    }
}

/// One node's way out: its inter-node ports and, per network, its fastest active one.
struct node_fabric {
    /// The node's inter_node interconnects as detected; `devices` rewritten to flat
    /// positions (usually empty: a NIC lists no device).
    std::vector<interconnect> ports;
    bool infiniband = false;     ///< has an active InfiniBand port
    bool ethernet = false;       ///< has an active RoCE/Ethernet port
    double infiniband_gbps = 0;  ///< fastest active one, both directions, decimal GB/s (0: unknown)
    double ethernet_gbps = 0;
    interconnect_kind infiniband_kind = interconnect_kind::none;
    interconnect_kind ethernet_kind = interconnect_kind::none;
    bool any() const noexcept { return infiniband || ethernet; }
};

/// Several nodes seen as one.
struct cluster_view {
    std::vector<cluster_node> nodes;
    /// Every profile of every node, node by node in detection order; `devices[i].index == i`.
    std::vector<accelerator_profile> devices;
    /// Parallel to `devices`: where each one comes from.
    std::vector<cluster_device> homes;
    /// Every node's intra-node links, `devices` rewritten to flat positions (a local index
    /// names every device of that node with that index, as the planner reads it on one node).
    std::vector<interconnect> links;
    /// Parallel to `links`: the node each belongs to.
    std::vector<std::uint32_t> link_nodes;
    /// One per node: its inter-node ports.
    std::vector<node_fabric> fabric;
    /// For people: nodes whose fabric differs from the others', duplicate names, links
    /// naming devices a node does not have. Empty when the nodes agree.
    std::vector<std::string> fabric_notes;
    /// Every node has the same networks at the same fastest speeds.
    bool uniform_fabric = true;

    std::uint32_t node_of(std::size_t device) const noexcept { return homes[device].node; }
};

/// The link two nodes would use: the network they share (the faster when two), at the
/// slower of their fastest ports. `kind == none`: not joined.
struct node_link {
    interconnect_kind kind = interconnect_kind::none;
    double gbps = 0;      ///< both directions, decimal GB/s; 0: unknown speed
    bool assumed = false; ///< cluster_options::fallback_network_gbps, not a detected port
    bool joined() const noexcept { return kind != interconnect_kind::none; }
};

struct cluster_options {
    /// Passed to plan_sharding (headroom, spread, data parallel, hop latency, …).
    plan_options plan{};
    /// Fixed cost of one message between nodes, seconds, added to each inter-node hop on
    /// top of plan.pipeline_hop_latency_s. Assumed, not fitted (the calibration data hold
    /// no multi-node measurement): order of magnitude of a small RDMA send over
    /// InfiniBand or RoCE through a switch, a few microseconds.
    double link_latency_s = 5e-6;
    /// Both-directions GB/s of a network assumed between nodes that share no detected one
    /// (e.g. 6.25 for 25 GbE). 0: such nodes are not joined.
    double fallback_network_gbps = 0;
};

/// What a plan puts on one node.
struct node_usage {
    std::uint32_t node = 0;
    std::uint32_t devices = 0;        ///< devices of the plan's kind on the node
    std::uint32_t devices_used = 0;
    std::uint64_t planned_bytes = 0;  ///< weights + KV cache + overhead of its devices
    std::uint64_t usable_bytes = 0;   ///< usable memory of the devices used
    std::uint64_t capacity_bytes = 0; ///< usable memory of every device of the kind there
    bool fits = true;                 ///< every device's share fits it
};

/// A plan over a cluster.
struct cluster_plan {
    bool fits = false;
    /// Every node given could be joined to the others (false: some were left out).
    bool joined = true;
    /// The layout on the flat view (device positions index cluster_view::devices), its
    /// throughput re-priced for the inter-node links.
    shard_plan plan{};
    std::vector<std::uint32_t> nodes_considered; ///< the joined group planned over
    std::vector<std::uint32_t> nodes_left_out;   ///< not joined to that group
    std::vector<node_usage> per_node;            ///< one per node considered
    std::uint32_t nodes_per_replica = 0;         ///< nodes replica 0 spans
    std::uint32_t inter_node_hops = 0;           ///< replica 0's hops between nodes
    plan_link inter_node_link{};                 ///< replica 0's slowest, one direction, as used
    /// That link was not measured by a detected port: its speed is not known (a port that
    /// reports none: the hop was priced at the PCIe bound of the devices on either side,
    /// which inter_node_link then shows), or it is cluster_options::fallback_network_gbps.
    bool inter_node_link_assumed = false;
    double decode_inter_node_seconds = 0;        ///< replica 0: those hops' cost per decode step
    std::string reason;                          ///< for people, when it does not fit or nodes were left out
};

namespace detail::cluster {


inline void note_fabric(node_fabric& f, const interconnect& l) {
    if (!port_active(l.state)) return;
    const double bw = l.bandwidth_gbps.value_or(0);
    switch (network_of(l.kind)) {
    case network_class::infiniband:
        f.infiniband = true;
        if (bw > f.infiniband_gbps || f.infiniband_kind == interconnect_kind::none) {
            if (bw > f.infiniband_gbps) f.infiniband_gbps = bw;
            f.infiniband_kind = l.kind;
        }
        break;
    case network_class::ethernet:
        f.ethernet = true;
        if (bw > f.ethernet_gbps || f.ethernet_kind == interconnect_kind::none) {
            if (bw > f.ethernet_gbps) f.ethernet_gbps = bw;
            f.ethernet_kind = l.kind;
        }
        break;
    case network_class::none: break;
    }
}

inline std::string describe_fabric(const node_fabric& f) {
    if (!f.any()) return "no active inter-node port";
    std::string s;
    const auto add = [&](std::string_view what, double gbps) {
        if (!s.empty()) s += ", ";
        s += what;
        s += gbps > 0 ? " " + std::to_string(static_cast<long long>(gbps + 0.5)) + " GB/s" : " (speed unknown)";
    };
    if (f.infiniband) add("InfiniBand", f.infiniband_gbps);
    if (f.ethernet) add("RoCE/Ethernet", f.ethernet_gbps);
    return s;
}

constexpr double slower(double a, double b) noexcept {
    if (!(a > 0)) return 0; // unknown on either side: unknown
    if (!(b > 0)) return 0;
    return a < b ? a : b;
}

} // namespace detail::cluster

/// The link nodes `a` and `b` of `c` would use (see the header comment); fallback only
/// when they share no network.
inline node_link link_between(const cluster_view& c, std::size_t a, std::size_t b,
                              const cluster_options& o = {}) noexcept {
    const auto& fa = c.fabric[a];
    const auto& fb = c.fabric[b];
    node_link best;
    if (fa.infiniband && fb.infiniband)
        best = {fa.infiniband_gbps <= fb.infiniband_gbps ? fa.infiniband_kind : fb.infiniband_kind,
                detail::cluster::slower(fa.infiniband_gbps, fb.infiniband_gbps), false};
    if (fa.ethernet && fb.ethernet) {
        const node_link e{fa.ethernet_gbps <= fb.ethernet_gbps ? fa.ethernet_kind : fb.ethernet_kind,
                          detail::cluster::slower(fa.ethernet_gbps, fb.ethernet_gbps), false};
        if (!best.joined() || (best.gbps > 0 && e.gbps > best.gbps)) best = e;
    }
    if (!best.joined() && o.fallback_network_gbps > 0)
        best = {interconnect_kind::ethernet, o.fallback_network_gbps, true};
    return best;
}

/// Merges the nodes' registries (see the header comment). Never throws but for allocation.
inline cluster_view make_cluster(std::span<const cluster_node> nodes) {
    cluster_view c;
    c.nodes.assign(nodes.begin(), nodes.end());
    c.fabric.resize(nodes.size());
    for (std::size_t n = 0; n < nodes.size(); ++n) {
        const auto node = static_cast<std::uint32_t>(n);
        const auto all = nodes[n].registry.all();
        const auto base = c.devices.size();
        for (std::size_t i = 0; i < all.size(); ++i) {
            accelerator_profile p = all[i];
            c.homes.push_back({node, p.index, static_cast<std::uint32_t>(i)});
            p.index = static_cast<std::uint32_t>(c.devices.size());
            c.devices.push_back(p);
        }
        // A local index names every device of this node that has it: (index, position)
        // pairs sorted once, each listed index found by a binary search (a link may list
        // every one of tens of thousands of devices).
        std::vector<std::pair<std::uint32_t, std::uint32_t>> by_index(all.size());
        for (std::size_t i = 0; i < all.size(); ++i) by_index[i] = {all[i].index, static_cast<std::uint32_t>(i)};
        std::sort(by_index.begin(), by_index.end());
        const auto remap = [&](const interconnect& l) {
            interconnect out = l;
            out.devices.clear();
            for (auto idx : l.devices) {
                auto it = std::lower_bound(by_index.begin(), by_index.end(),
                                           std::pair<std::uint32_t, std::uint32_t>{idx, 0});
                const bool found = it != by_index.end() && it->first == idx;
                for (; it != by_index.end() && it->first == idx; ++it)
                    out.devices.push_back(static_cast<std::uint32_t>(base + it->second));
                if (!found)
                    c.fabric_notes.push_back(nodes[n].name + ": link \"" + l.name + "\" names device " +
                                             std::to_string(idx) + ", which the node does not have");
            }
            return out;
        };
        for (const auto& l : nodes[n].registry.system().interconnects) {
            if (l.scope == link_scope::inter_node) {
                c.fabric[n].ports.push_back(remap(l));
                detail::cluster::note_fabric(c.fabric[n], l);
            } else {
                c.links.push_back(remap(l));
                c.link_nodes.push_back(node);
            }
        }
        for (std::size_t m = 0; m < n; ++m)
            if (nodes[m].name == nodes[n].name)
                c.fabric_notes.push_back("two nodes are named \"" + nodes[n].name + "\"");
    }
    // Fabric differences, against the first node.
    for (std::size_t n = 1; n < nodes.size(); ++n) {
        const auto& f0 = c.fabric[0];
        const auto& f = c.fabric[n];
        const bool same = f.infiniband == f0.infiniband && f.ethernet == f0.ethernet &&
                          f.infiniband_gbps == f0.infiniband_gbps && f.ethernet_gbps == f0.ethernet_gbps;
        if (same) continue;
        c.uniform_fabric = false;
        c.fabric_notes.push_back(nodes[n].name + ": " + detail::cluster::describe_fabric(f) + "; " +
                                 nodes[0].name + ": " + detail::cluster::describe_fabric(f0));
    }
    return c;
}

namespace detail::cluster {

/// Node `start` and, in order, each node joined directly to every node already taken: a
/// group in which any two nodes share a network (a hop between two nodes never relies on a
/// third to forward it; RDMA hosts do not).
inline std::vector<bool> clique_from(const cluster_view& c, std::size_t start, const cluster_options& o) {
    std::vector<bool> in(c.nodes.size(), false);
    std::vector<std::size_t> taken{start};
    in[start] = true;
    for (std::size_t b = 0; b < c.nodes.size(); ++b) {
        if (in[b]) continue;
        bool all = true;
        for (auto a : taken) all = all && link_between(c, a, b, o).joined();
        if (!all) continue;
        in[b] = true;
        taken.push_back(b);
    }
    return in;
}

inline std::uint64_t node_accelerator_bytes(const cluster_view& c, std::size_t n, const plan_options& o) {
    std::uint64_t sum = 0;
    for (std::size_t i = 0; i < c.devices.size(); ++i)
        if (c.homes[i].node == n && c.devices[i].is_accelerator())
            sum = detail::sat_add(sum, detail::shard::usable(c.devices[i], o));
    return sum;
}

/// The stage heads (tensor rank 0) of one replica, in stage order, by flat position (a
/// flat-view profile's index is its position).
inline std::vector<std::size_t> stage_heads(const shard_plan& p, std::uint32_t replica) {
    std::vector<std::size_t> heads;
    for (const auto& d : p.devices)
        if (d.replica == replica && d.tensor_rank == 0) {
            if (heads.size() <= d.stage) heads.resize(std::size_t{d.stage} + 1, ~std::size_t{0});
            heads[d.stage] = d.index;
        }
    return heads;
}

struct repriced {
    double decode_delta = 0;  ///< seconds added to one decode step
    double prefill_delta = 0; ///< seconds added per prefill token
    double inter_node_s = 0;  ///< the cross-node hops' cost as re-priced
    std::uint32_t hops = 0;
    plan_link slowest{};
    bool slowest_assumed = false; ///< its link's speed unknown (priced at PCIe) or the fallback network
};

/// Re-prices the hops of `replica` that cross nodes (see the header comment).
inline repriced reprice(const cluster_view& c, const shard_plan& p, std::uint32_t replica,
                        const model_spec& m, const inference_shape& s, const cluster_options& o) {
    repriced r;
    const double batch = s.batch ? static_cast<double>(s.batch) : 1.0;
    const double act = static_cast<double>(m.hidden_size) * o.plan.activation_bytes * batch;
    const auto heads = stage_heads(p, replica);
    for (std::size_t j = 0; j + 1 < heads.size(); ++j) {
        const auto a = heads[j], b = heads[j + 1];
        if (a >= c.devices.size() || b >= c.devices.size()) continue;
        const auto na = c.homes[a].node, nb = c.homes[b].node;
        if (na == nb) continue;
        // What plan_sharding charged: a PCIe hop (it was given no inter-node link).
        const double pa = detail::shard::pcie_gbps(c.devices[a], o.plan);
        const double pb = detail::shard::pcie_gbps(c.devices[b], o.plan);
        const double pcie = pa < pb ? pa : pb;
        const auto lk = link_between(c, na, nb, o);
        double bw = lk.gbps > 0 ? lk.gbps / 2 : pcie;
        if (bw > pcie) bw = pcie;
        const double old_t = act / (pcie * 1e9);
        const double new_t = act / (bw * 1e9);
        const double hop = new_t + o.link_latency_s + o.plan.pipeline_hop_latency_s;
        r.decode_delta += new_t - old_t + o.link_latency_s;
        r.prefill_delta += (new_t - old_t) / batch;
        r.inter_node_s += hop;
        ++r.hops;
        if (r.slowest.kind == interconnect_kind::none || bw < r.slowest.gbps) {
            r.slowest = {lk.kind, bw};
            r.slowest_assumed = lk.assumed || !(lk.gbps > 0); // the fallback network, or no speed known
        }
    }
    return r;
}

/// The joined group (clique_from each node in turn) with the most usable accelerator
/// memory, the first of equals, by node.
inline std::vector<bool> joined_group(const cluster_view& c, const cluster_options& o) {
    std::vector<std::uint64_t> node_bytes(c.nodes.size());
    for (std::size_t n = 0; n < c.nodes.size(); ++n) node_bytes[n] = node_accelerator_bytes(c, n, o.plan);
    std::vector<bool> chosen;
    std::uint64_t chosen_bytes = 0;
    for (std::size_t n = 0; n < c.nodes.size(); ++n) {
        if (!chosen.empty() && chosen[n]) continue; // its group is the one chosen
        auto group = clique_from(c, n, o);
        std::uint64_t bytes = 0;
        for (std::size_t k = 0; k < group.size(); ++k)
            if (group[k]) bytes = detail::sat_add(bytes, node_bytes[k]);
        if (chosen.empty() || bytes > chosen_bytes) {
            chosen = std::move(group);
            chosen_bytes = bytes;
        }
    }
    return chosen;
}

/// What the planner is given: the devices of the chosen nodes it may use (CPUs only with
/// plan_options::allow_cpu), in flat order, each keeping its flat position as its index (the
/// links name devices by it); `flat[i]` is the flat position of `devices[i]`. Leaving the
/// rest out keeps the planner's max_plan_devices for devices that can take a share.
/// Devices past flat position 65535 (device_shard::device's range), or past the planner's
/// max_plan_devices, are not given (`truncated`).
struct planner_input {
    std::vector<accelerator_profile> devices;
    std::vector<std::size_t> flat;
    /// Parallel to `devices`: the node of each, for plan_options::hosts (each node's unified
    /// memory is its own pool).
    std::vector<std::uint32_t> hosts;
    bool truncated = false;
    bool cpu_excluded = false; ///< a chosen node has a CPU the options do not allow
};
inline planner_input devices_of(const cluster_view& c, const std::vector<bool>& chosen, const plan_options& o) {
    planner_input in;
    for (std::size_t i = 0; i < c.devices.size(); ++i) {
        const auto& d = c.devices[i];
        if (!chosen[c.homes[i].node]) continue;
        if (d.is_cpu() && d.available && !o.allow_cpu) in.cpu_excluded = true;
        if (!detail::shard::usable_device(d, o)) continue;
        if (i > UINT16_MAX || in.devices.size() == max_plan_devices) {
            in.truncated = true;
            break;
        }
        in.devices.push_back(c.devices[i]);
        in.flat.push_back(i);
        in.hosts.push_back(c.homes[i].node);
    }
    return in;
}

} // namespace detail::cluster

/// Plans `m` in format `q` over the cluster (see the header comment).
inline cluster_plan plan_cluster(const cluster_view& c, const model_spec& m, quant_format q,
                                 const inference_shape& shape = {}, const cluster_options& options = {}) {
    using namespace detail::cluster;
    cluster_plan out;
    out.plan.quant = q;
    if (c.nodes.empty()) {
        out.plan = plan_sharding({}, {}, m, q, shape, options.plan);
        out.reason = "no nodes";
        return out;
    }
    const std::vector<bool> chosen = joined_group(c, options);
    for (std::size_t n = 0; n < c.nodes.size(); ++n)
        (chosen[n] ? out.nodes_considered : out.nodes_left_out).push_back(static_cast<std::uint32_t>(n));
    out.joined = out.nodes_left_out.empty();
    if (!out.joined) {
        out.reason = "not joined (no inter-node network in common):";
        for (auto n : out.nodes_left_out) out.reason += " " + c.nodes[n].name;
    }

    // The chosen nodes' devices, and one replica at a time, so each replica's hops can be
    // re-priced. Device positions are the planner's until the end, then flat ones.
    planner_input in = devices_of(c, chosen, options.plan);
    auto& devs = in.devices;
    plan_options one = options.plan;
    one.data_parallel = false;
    one.hosts = in.hosts;
    shard_plan p = plan_sharding(devs, c.links, m, q, shape, one);
    out.fits = p.fits;
    if (p.fits) {
        auto rp = reprice(c, p, 0, m, shape, options);
        std::vector<bool> node_used(c.nodes.size(), false);
        for (const auto& d : p.devices) node_used[c.homes[in.flat[d.device]].node] = true;
        for (bool u : node_used) out.nodes_per_replica += u ? 1u : 0u;
        out.inter_node_hops = rp.hops;
        out.inter_node_link = rp.slowest;
        out.inter_node_link_assumed = rp.slowest_assumed;
        out.decode_inter_node_seconds = rp.inter_node_s;
        const double batch = shape.batch ? static_cast<double>(shape.batch) : 1.0;
        const auto correct = [&](shard_plan& x, const repriced& r) {
            x.decode_pipeline_seconds += r.decode_delta;
            const double step = x.decode_compute_seconds + x.decode_tensor_seconds + x.decode_pipeline_seconds;
            // A rate the planner left unknown (a device of unknown speed) stays unknown.
            if (x.decode_tokens_per_second > 0) x.decode_tokens_per_second = step > 0 ? 1.0 / step : 0;
            if (x.prefill_tokens_per_second > 0)
                x.prefill_tokens_per_second = 1.0 / (1.0 / x.prefill_tokens_per_second + r.prefill_delta);
            x.aggregate_decode_tokens_per_second = x.decode_tokens_per_second * batch;
            if (r.hops > 0) x.pipeline_link = r.slowest;
        };
        correct(p, rp);
        // Further replicas on the devices left, same kind, as plan_sharding would add them.
        if (options.plan.data_parallel && !options.plan.spread) {
            for (auto& d : devs)
                if (d.kind != p.kind) d.available = false;
            for (std::uint32_t replica = 1; replica < max_plan_devices; ++replica) {
                for (const auto& d : p.devices) devs[d.device].available = false;
                shard_plan more = plan_sharding(devs, c.links, m, q, shape, one);
                if (!more.fits || more.kind != p.kind) break;
                correct(more, reprice(c, more, 0, m, shape, options));
                bool room = true;
                for (auto d : more.devices) {
                    d.replica = static_cast<std::uint16_t>(replica);
                    if (!p.devices.push_back(d)) {
                        room = false;
                        break;
                    }
                }
                p.aggregate_decode_tokens_per_second += more.decode_tokens_per_second * batch;
                ++p.replicas;
                if (!room) break;
            }
        }
    } else if (!out.joined) {
        out.reason = "the nodes cannot be joined and the joined ones cannot hold the model: " +
                     std::string(describe(p.outcome)) + "; " + out.reason;
    } else {
        out.reason = std::string(describe(p.outcome));
    }
    p.truncated = p.truncated || in.truncated;
    p.cpu_excluded = p.cpu_excluded || in.cpu_excluded;
    for (std::size_t i = 0; i < p.devices.size(); ++i)
        p.devices[i].device = static_cast<std::uint16_t>(in.flat[p.devices[i].device]);
    out.plan = p;

    // Per node: what the plan puts there against what the node offers.
    for (auto n : out.nodes_considered) {
        node_usage u;
        u.node = n;
        for (std::size_t i = 0; i < c.devices.size(); ++i) {
            if (c.homes[i].node != n || c.devices[i].kind != p.kind || !c.devices[i].is_accelerator())
                continue;
            ++u.devices;
            u.capacity_bytes = detail::sat_add(u.capacity_bytes, detail::shard::usable(c.devices[i], options.plan));
        }
        for (const auto& d : p.devices) {
            if (c.homes[d.device].node != n) continue;
            ++u.devices_used;
            u.planned_bytes = detail::sat_add(u.planned_bytes, d.total_bytes());
            u.usable_bytes = detail::sat_add(u.usable_bytes, d.usable_bytes);
            if (!d.fits) u.fits = false;
        }
        out.per_node.push_back(u);
    }
    return out;
}

/// The same, from the nodes' registries.
inline cluster_plan plan_cluster(std::span<const cluster_node> nodes, const model_spec& m, quant_format q,
                                 const inference_shape& shape = {}, const cluster_options& options = {}) {
    return plan_cluster(make_cluster(nodes), m, q, shape, options);
}

/// The format plan_cluster_best_format chose, and its plan over the cluster.
struct cluster_format_plan {
    /// plan_best_format's choice on the joined group: the format, and why nothing fits
    /// when nothing does.
    quantization_choice choice{};
    /// plan_cluster's plan in the format chosen (when nothing fits, in the format the
    /// choice describes).
    cluster_plan plan{};
};

/// The format of highest quality that fits the cluster, and its plan: plan_best_format
/// (plan/shard.hpp: its candidates, order and rules) over the devices of the joined group
/// plan_cluster plans on, with the nodes' intra-node links, then plan_cluster in that
/// format. Whether a format fits depends on memory alone, which the re-pricing of the
/// inter-node hops leaves as it is, so the format is the one plan_cluster fits.
inline cluster_format_plan plan_cluster_best_format(const cluster_view& c, const model_spec& m,
                                                    const inference_shape& shape = {},
                                                    const cluster_options& options = {}) {
    using namespace detail::cluster;
    cluster_format_plan out;
    if (c.nodes.empty()) {
        out.choice = suggest_quantization({}, m, shape, options.plan);
        out.plan = plan_cluster(c, m, out.choice.format, shape, options);
        return out;
    }
    const auto in = devices_of(c, joined_group(c, options), options.plan);
    plan_options one = options.plan;
    one.data_parallel = false; // the format only: replicas are plan_cluster's
    one.hosts = in.hosts;
    const auto best = plan_best_format(in.devices, c.links, m, shape, one);
    out.choice = best.choice;
    out.choice.cpu_excluded = out.choice.cpu_excluded || in.cpu_excluded;
    out.plan = plan_cluster(c, m, best.plan.quant, shape, options);
    return out;
}

/// A plan as the Python and C front ends give it: on one machine's devices or on a cluster,
/// in a given format or the best that fits.
struct deployment_plan {
    /// The format chosen and why nothing fits when nothing does; empty when the format was given.
    std::optional<quantization_choice> choice;
    shard_plan plan{};
    /// Over a cluster: the whole cluster plan (`plan` is its `plan`); empty on one machine.
    std::optional<cluster_plan> cluster;
};

/// Plans `m` over `cluster` when it is given (plan_cluster; plan_cluster_best_format without
/// a format), else over `devices` and `links` (plan_sharding; plan_best_format without a
/// format). `options.plan` are the planner's options either way; the rest of `options`
/// concerns clusters only.
inline deployment_plan plan_deployment(const cluster_view* cluster, std::span<const accelerator_profile> devices,
                                       std::span<const interconnect> links, const model_spec& m,
                                       std::optional<quant_format> q, const inference_shape& shape = {},
                                       const cluster_options& options = {}) {
    deployment_plan r;
    if (cluster) {
        if (q) {
            r.cluster = plan_cluster(*cluster, m, *q, shape, options);
        } else {
            auto best = plan_cluster_best_format(*cluster, m, shape, options);
            r.choice = best.choice;
            r.cluster = std::move(best.plan);
        }
        r.plan = r.cluster->plan;
    } else if (q) {
        r.plan = plan_sharding(devices, links, m, *q, shape, options.plan);
    } else {
        auto best = plan_best_format(devices, links, m, shape, options.plan);
        r.choice = best.choice;
        r.plan = best.plan;
    }
    return r;
}

#if AI_HWACCEL_JSON
/// A node read from `ai-hwaccel detect --json` output, or why it could not be read.
struct cluster_node_result {
    std::optional<cluster_node> node;
    std::string error; ///< "<name>: <registry_from_json's message>"
    bool ok() const noexcept { return node.has_value(); }
    explicit operator bool() const noexcept { return ok(); }
};
inline cluster_node_result cluster_node_from_json(std::string name, std::string_view json_text) {
    cluster_node_result out;
    auto r = registry_from_json(json_text);
    if (!r.ok()) {
        out.error = name + ": " + r.error;
        return out;
    }
    out.node = cluster_node{std::move(name), std::move(*r.registry)};
    return out;
}
#endif

AI_HWACCEL_NAMESPACE_END
