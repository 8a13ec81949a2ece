#include "ai_hwaccel/plan/cluster.hpp"

#include "ai_hwaccel/core/catalogue.hpp"
#include "ai_hwaccel/plan/models.hpp"

#include "fixtures.hpp"

#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <filesystem>
#include <set>
#include <string>
#include <vector>

namespace ah = ai_hwaccel;
using ah::quant_format;

namespace {

ah::interconnect link(ah::interconnect_kind kind, ah::link_scope scope, double gbps,
                      std::vector<std::uint32_t> devices, std::string name = {}, std::string state = "ACTIVE") {
    ah::interconnect l;
    l.kind = kind;
    l.scope = scope;
    l.name = name.empty() ? std::string(ah::to_string(kind)) : std::move(name);
    l.state = std::move(state);
    l.bandwidth_gbps = {gbps, ah::origin::user};
    l.devices = std::move(devices);
    return l;
}

// An 8 x H100 SXM node joined by NVSwitch (900 GB/s both directions, the catalogue's
// figure) with `ports` InfiniBand ports of `ib_gbps` both directions each (400 Gb/s one
// way = 50 GB/s one way = 100 GB/s both: core/system_io.hpp's convention).
ah::cluster_node h100_node(std::string name, std::uint32_t ports = 8, double ib_gbps = 100.0) {
    const auto* spec = ah::find_device("H100 SXM");
    REQUIRE(spec != nullptr);
    ah::accelerator_registry r;
    std::vector<std::uint32_t> all;
    for (std::uint32_t i = 0; i < 8; ++i) {
        r.add(ah::profile_from_spec(*spec, i));
        all.push_back(i);
    }
    r.add(link(ah::interconnect_kind::nvswitch, ah::link_scope::intra_node, 900.0, all, "NVSwitch fabric"));
    for (std::uint32_t p = 0; p < ports; ++p)
        r.add(link(ah::interconnect_kind::infiniband, ah::link_scope::inter_node, ib_gbps, {},
                   "mlx5_" + std::to_string(p) + " port 1"));
    return {std::move(name), std::move(r)};
}

std::vector<ah::cluster_node> h100_cluster(std::size_t n, double ib_gbps = 100.0) {
    std::vector<ah::cluster_node> v;
    for (std::size_t i = 0; i < n; ++i) v.push_back(h100_node("node-" + std::to_string(i), 8, ib_gbps));
    return v;
}

const ah::model_spec& model(std::string_view id) {
    const auto* m = ah::find_model(id);
    REQUIRE(m != nullptr);
    return *m;
}

ah::cluster_options spread() {
    ah::cluster_options o;
    o.plan.spread = true;
    return o;
}

// Every replica covers [0, layers) exactly once, stage after stage; a stage's devices
// share its range and sit on one node; every device fits.
void check_layout(const ah::cluster_view& c, const ah::cluster_plan& cp, std::uint32_t layers) {
    REQUIRE(cp.fits);
    const auto& p = cp.plan;
    for (std::uint32_t r = 0; r < p.replicas; ++r) {
        std::vector<std::uint32_t> counts(layers, 0);
        std::uint32_t stages = 0;
        for (const auto& d : p.devices) {
            if (d.replica != r) continue;
            CHECK(d.fits);
            CHECK(d.total_bytes() <= d.usable_bytes);
            if (d.stage + 1u > stages) stages = d.stage + 1u;
            if (d.tensor_rank == 0)
                for (auto l = d.first_layer; l < d.last_layer; ++l) ++counts[l];
            for (const auto& e : p.devices)
                if (e.replica == r && e.stage == d.stage) {
                    CHECK(e.first_layer == d.first_layer);
                    CHECK(e.last_layer == d.last_layer);
                    CHECK(c.node_of(e.device) == c.node_of(d.device));
                }
        }
        for (std::uint32_t l = 0; l < layers; ++l) CHECK(counts[l] == 1);
    }
}

} // namespace

TEST_CASE("make_cluster") {
    const auto nodes = h100_cluster(4);
    const auto c = ah::make_cluster(nodes);
    REQUIRE(c.nodes.size() == 4);
    REQUIRE(c.devices.size() == 32);
    REQUIRE(c.homes.size() == 32);
    for (std::size_t i = 0; i < c.devices.size(); ++i) {
        CHECK(c.devices[i].index == i); // renumbered: every node has a GPU 0
        CHECK(c.node_of(i) == i / 8);
        CHECK(c.homes[i].local_index == i % 8);
        CHECK(c.homes[i].position == i % 8);
    }
    // One NVSwitch per node, naming that node's GPUs in the flat numbering.
    REQUIRE(c.links.size() == 4);
    for (std::uint32_t n = 0; n < 4; ++n) {
        CHECK(c.link_nodes[n] == n);
        CHECK(c.links[n].kind == ah::interconnect_kind::nvswitch);
        REQUIRE(c.links[n].devices.size() == 8);
        for (std::uint32_t k = 0; k < 8; ++k) CHECK(c.links[n].devices[k] == n * 8 + k);
        CHECK(c.fabric[n].ports.size() == 8);
        CHECK(c.fabric[n].infiniband);
        CHECK_FALSE(c.fabric[n].ethernet);
        CHECK(c.fabric[n].infiniband_gbps == doctest::Approx(100.0));
    }
    CHECK(c.uniform_fabric);
    CHECK(c.fabric_notes.empty());
    const auto lk = ah::link_between(c, 0, 3);
    CHECK(lk.kind == ah::interconnect_kind::infiniband);
    CHECK(lk.gbps == doctest::Approx(100.0));
    CHECK_FALSE(lk.assumed);

    SUBCASE("fabric differences are reported") {
        auto v = h100_cluster(2);
        v.push_back(h100_node("bare", 0));
        v.push_back(h100_node("slow", 8, 50.0));
        const auto d = ah::make_cluster(v);
        CHECK_FALSE(d.uniform_fabric);
        REQUIRE(d.fabric_notes.size() == 2);
        CHECK(d.fabric_notes[0].find("bare: no active inter-node port") != std::string::npos);
        CHECK(d.fabric_notes[1].find("slow: InfiniBand 50 GB/s") != std::string::npos);
        CHECK_FALSE(ah::link_between(d, 0, 2).joined());
        CHECK(ah::link_between(d, 0, 3).gbps == doctest::Approx(50.0)); // the slower end
        ah::cluster_options o;
        o.fallback_network_gbps = 6.25;
        const auto f = ah::link_between(d, 0, 2, o);
        CHECK(f.joined());
        CHECK(f.assumed);
        CHECK(f.kind == ah::interconnect_kind::ethernet);
    }
    SUBCASE("ports that are down do not join") {
        auto v = h100_cluster(1);
        ah::accelerator_registry r;
        r.add(ah::profile_from_spec(*ah::find_device("H100 SXM"), 0));
        r.add(link(ah::interconnect_kind::infiniband, ah::link_scope::inter_node, 100.0, {}, "mlx5_0 port 1",
                   "1: DOWN"));
        v.push_back({"down", r});
        const auto d = ah::make_cluster(v);
        CHECK_FALSE(d.fabric[1].infiniband);
        CHECK_FALSE(ah::link_between(d, 0, 1).joined());
    }
    SUBCASE("RoCE and Ethernet reach each other, not InfiniBand") {
        ah::accelerator_registry a, b;
        a.add(link(ah::interconnect_kind::roce, ah::link_scope::inter_node, 50.0, {}));
        a.add(link(ah::interconnect_kind::infiniband, ah::link_scope::inter_node, 100.0, {}));
        b.add(link(ah::interconnect_kind::ethernet, ah::link_scope::inter_node, 25.0, {}));
        const std::vector<ah::cluster_node> v{{"a", a}, {"b", b}};
        const auto d = ah::make_cluster(v);
        const auto el = ah::link_between(d, 0, 1);
        CHECK(el.joined());
        CHECK(ah::network_of(el.kind) == ah::network_class::ethernet);
        CHECK(el.gbps == doctest::Approx(25.0));
    }
    SUBCASE("names and device lists are checked") {
        auto v = h100_cluster(2);
        v[1].name = v[0].name;
        v[1].registry.add(link(ah::interconnect_kind::nvlink, ah::link_scope::intra_node, 50.0, {0, 9}, "NVLink"));
        const auto d = ah::make_cluster(v);
        REQUIRE(d.fabric_notes.size() == 2);
        CHECK(d.fabric_notes[0].find("names device 9") != std::string::npos);
        CHECK(d.fabric_notes[1].find("two nodes are named") != std::string::npos);
        REQUIRE(d.links.size() == 3);
        CHECK(d.links[2].devices == std::vector<std::uint32_t>{8}); // node 1's GPU 0
    }
}

TEST_CASE("plan_cluster") {
    const auto& m = model("llama-3.1-405b");
    REQUIRE(m.layers == 126);
    const auto nodes = h100_cluster(4);
    const auto c = ah::make_cluster(nodes);

    SUBCASE("four 8xH100 nodes, 405B bf16: tensor parallel inside nodes, pipeline across them") {
        const auto o = spread();
        const auto cp = ah::plan_cluster(c, m, quant_format::bf16, {}, o);
        REQUIRE(cp.fits);
        CHECK(cp.joined);
        CHECK(cp.nodes_left_out.empty());
        const auto& p = cp.plan;
        CHECK(p.strategy == ah::shard_strategy::tensor_pipeline);
        CHECK(p.tensor_parallel == 8);
        CHECK(p.stages == 4);
        CHECK(p.replicas == 1);
        CHECK(p.devices.size() == 32);
        CHECK(p.tensor_link.kind == ah::interconnect_kind::nvswitch);
        check_layout(c, cp, m.layers);
        // Each stage on its own node.
        std::set<std::uint32_t> stage_nodes;
        for (const auto& d : p.devices) stage_nodes.insert(c.node_of(d.device) * 100 + d.stage);
        CHECK(stage_nodes.size() == 4);
        CHECK(cp.nodes_per_replica == 4);
        // Per-node memory within each node's capacity.
        REQUIRE(cp.per_node.size() == 4);
        for (const auto& u : cp.per_node) {
            CHECK(u.fits);
            CHECK(u.devices == 8);
            CHECK(u.devices_used == 8);
            CHECK(u.planned_bytes > 0);
            CHECK(u.planned_bytes <= u.usable_bytes);
            CHECK(u.usable_bytes <= u.capacity_bytes);
        }
        // Three hops between nodes, over InfiniBand at 50 GB/s one way (below H100's PCIe 5.0 x16).
        CHECK(cp.inter_node_hops == 3);
        CHECK(cp.inter_node_link.kind == ah::interconnect_kind::infiniband);
        CHECK(cp.inter_node_link.gbps == doctest::Approx(50.0));
        CHECK(p.pipeline_link.kind == ah::interconnect_kind::infiniband);
        const double act = m.hidden_size * o.plan.activation_bytes;
        CHECK(cp.decode_inter_node_seconds ==
              doctest::Approx(3 * (act / 50e9 + o.link_latency_s + o.plan.pipeline_hop_latency_s)));

        // The same layout with an infinitely fast, latency-free inter-node link is faster,
        // by exactly the transfer and link latency of the three hops (the PCIe bound stays:
        // a GPU reaches its NIC over PCIe).
        auto fast_nodes = h100_cluster(4, 1e12);
        auto fo = o;
        fo.link_latency_s = 0;
        const auto fast = ah::plan_cluster(ah::make_cluster(fast_nodes), m, quant_format::bf16, {}, fo);
        REQUIRE(fast.fits);
        CHECK(fast.plan.stages == 4);
        const double pcie = nodes[0].registry.all()[0].pcie_bandwidth_gbps();
        CHECK(pcie > 50.0);
        CHECK(fast.inter_node_link.gbps == doctest::Approx(pcie));
        CHECK_FALSE(fast.inter_node_link_assumed);
        CHECK_FALSE(cp.inter_node_link_assumed);
        // Ports that report no speed: the hop is priced at the PCIe bound, and the plan says
        // that figure is assumed (before, it read as an InfiniBand link faster than any port).
        const auto unknown = ah::plan_cluster(ah::make_cluster(h100_cluster(4, 0.0)), m, quant_format::bf16, {}, o);
        REQUIRE(unknown.fits);
        REQUIRE(unknown.inter_node_hops > 0);
        CHECK(unknown.inter_node_link.kind == ah::interconnect_kind::infiniband);
        CHECK(unknown.inter_node_link.gbps == doctest::Approx(pcie));
        CHECK(unknown.inter_node_link_assumed);
        CHECK(p.decode_tokens_per_second < fast.plan.decode_tokens_per_second);
        CHECK(1 / p.decode_tokens_per_second - 1 / fast.plan.decode_tokens_per_second ==
              doctest::Approx(3 * (act / 50e9 - act / (pcie * 1e9) + o.link_latency_s)));
        CHECK(p.prefill_tokens_per_second < fast.plan.prefill_tokens_per_second);
        // Sane bounds: no faster than every weight read once per token at the memory
        // bandwidth of the eight GPUs of a stage, the stages one after another (the
        // roofline); no slower than a quarter of it; the network costs under 5% at batch 1.
        const double weights = static_cast<double>(p.memory.weights_bytes);
        const double roofline = 8 * *nodes[0].registry.all()[0].memory_bandwidth_gbps * 1e9 / weights;
        MESSAGE("405B bf16 on 4x8 H100: " << p.decode_tokens_per_second << " tok/s, roofline " << roofline
                                          << ", inter-node " << cp.decode_inter_node_seconds * 1e3 << " ms/token");
        CHECK(p.decode_tokens_per_second < roofline);
        CHECK(p.decode_tokens_per_second > roofline / 4);
        CHECK(fast.plan.decode_tokens_per_second / p.decode_tokens_per_second < 1.05);

        // At batch 64 the activations are 64 times larger and the network counts more.
        ah::inference_shape big;
        big.batch = 64;
        const auto b = ah::plan_cluster(c, m, quant_format::bf16, big, o);
        const auto bf = ah::plan_cluster(ah::make_cluster(fast_nodes), m, quant_format::bf16, big, fo);
        REQUIRE(b.fits);
        REQUIRE(bf.fits);
        CHECK(bf.plan.decode_tokens_per_second / b.plan.decode_tokens_per_second >
              fast.plan.decode_tokens_per_second / p.decode_tokens_per_second);
    }

    SUBCASE("the planner on the flat view, with the ports, prices a uniform cluster the same") {
        // shard.hpp's planner, given every node's ports, each listing its node's devices,
        // charges each hop at min(port, PCIe) + hop latency: on identical nodes that is
        // plan_cluster's figure without the link latency.
        auto links = c.links;
        for (std::size_t n = 0; n < c.fabric.size(); ++n)
            for (auto port : c.fabric[n].ports) {
                for (std::size_t i = 0; i < c.devices.size(); ++i)
                    if (c.node_of(i) == n) port.devices.push_back(static_cast<std::uint32_t>(i));
                links.push_back(port);
            }
        auto o = spread();
        const auto flat = ah::plan_sharding(c.devices, links, m, quant_format::bf16, {}, o.plan);
        o.link_latency_s = 0;
        const auto cp = ah::plan_cluster(c, m, quant_format::bf16, {}, o);
        REQUIRE(flat.fits);
        REQUIRE(cp.fits);
        CHECK(flat.stages == cp.plan.stages);
        CHECK(flat.decode_pipeline_seconds == doctest::Approx(cp.plan.decode_pipeline_seconds));
        CHECK(flat.decode_tokens_per_second == doctest::Approx(cp.plan.decode_tokens_per_second));
        CHECK(flat.pipeline_link.gbps == doctest::Approx(cp.plan.pipeline_link.gbps));
        // A prompt of one micro-batch prefills the same. A longer one (the default: the
        // whole context) overlaps the stages, hops included, in the planner, where
        // plan_cluster adds its re-priced hop whole: no faster, and within 1 %.
        const ah::inference_shape one{.prompt = 512};
        CHECK(ah::plan_sharding(c.devices, links, m, quant_format::bf16, one, o.plan).prefill_tokens_per_second ==
              doctest::Approx(ah::plan_cluster(c, m, quant_format::bf16, one, o).plan.prefill_tokens_per_second));
        CHECK(cp.plan.prefill_tokens_per_second <= flat.prefill_tokens_per_second * (1 + 1e-9));
        CHECK(cp.plan.prefill_tokens_per_second == doctest::Approx(flat.prefill_tokens_per_second).epsilon(0.01));
    }

    SUBCASE("default options: the fewest nodes that hold it, replicated (data parallel across pairs)") {
        const auto cp = ah::plan_cluster(c, m, quant_format::bf16);
        REQUIRE(cp.fits);
        const auto& p = cp.plan;
        CHECK(p.strategy == ah::shard_strategy::tensor_pipeline);
        CHECK(p.stages == 2);
        CHECK(p.replicas == 2);
        CHECK(cp.nodes_per_replica == 2);
        CHECK(cp.inter_node_hops == 1);
        check_layout(c, cp, m.layers);
        CHECK(p.aggregate_decode_tokens_per_second == doctest::Approx(2 * p.decode_tokens_per_second));
        // The layout is plan_sharding's own on the flat view.
        const auto flat = ah::plan_sharding(c.devices, c.links, m, quant_format::bf16);
        REQUIRE(flat.replicas == p.replicas);
        REQUIRE(flat.devices.size() == p.devices.size());
        for (std::size_t i = 0; i < p.devices.size(); ++i) {
            CHECK(flat.devices[i].device == p.devices[i].device);
            CHECK(flat.devices[i].replica == p.devices[i].replica);
            CHECK(flat.devices[i].first_layer == p.devices[i].first_layer);
        }
    }

    SUBCASE("a model that fits one node stays inside nodes") {
        const auto cp = ah::plan_cluster(c, model("llama-3.1-70b"), quant_format::bf16);
        REQUIRE(cp.fits);
        CHECK(cp.nodes_per_replica == 1);
        CHECK(cp.inter_node_hops == 0);
        CHECK(cp.decode_inter_node_seconds == 0);
        CHECK(cp.plan.replicas > 4);
    }

    SUBCASE("nodes of different speeds: the slower end sets the hop") {
        std::vector<ah::cluster_node> v{h100_node("fast"), h100_node("slow", 8, 50.0)};
        const auto cp = ah::plan_cluster(ah::make_cluster(v), m, quant_format::bf16);
        REQUIRE(cp.fits);
        CHECK(cp.inter_node_hops == 1);
        CHECK(cp.inter_node_link.gbps == doctest::Approx(25.0));
    }

    SUBCASE("two nodes, one without a fabric: not joined unless a network is assumed") {
        std::vector<ah::cluster_node> v{h100_node("ib-node"), h100_node("bare-node", 0)};
        const auto d = ah::make_cluster(v);
        const auto cp = ah::plan_cluster(d, m, quant_format::bf16);
        CHECK_FALSE(cp.fits);
        CHECK_FALSE(cp.joined);
        CHECK(cp.plan.outcome == ah::plan_outcome::too_large);
        REQUIRE(cp.nodes_considered.size() == 1);
        REQUIRE(cp.nodes_left_out.size() == 1);
        CHECK(cp.reason.find("cannot be joined") != std::string::npos);
        CHECK(cp.reason.find(v[cp.nodes_left_out[0]].name) != std::string::npos);
        // The same two nodes, both with InfiniBand, hold it: joining was the obstacle.
        std::vector<ah::cluster_node> both{h100_node("a"), h100_node("b")};
        const auto ib = ah::plan_cluster(both, m, quant_format::bf16);
        REQUIRE(ib.fits);

        // The slower path, when the caller states it: 25 GbE between the nodes.
        ah::cluster_options o;
        o.fallback_network_gbps = 6.25;
        const auto slow = ah::plan_cluster(d, m, quant_format::bf16, {}, o);
        REQUIRE(slow.fits);
        CHECK(slow.joined);
        CHECK(slow.inter_node_link.kind == ah::interconnect_kind::ethernet);
        CHECK(slow.inter_node_link.gbps == doctest::Approx(3.125));
        CHECK(slow.inter_node_link_assumed); // the caller's figure, not a detected port (before: false)
        CHECK_FALSE(ib.inter_node_link_assumed);
        CHECK(slow.plan.decode_tokens_per_second < ib.plan.decode_tokens_per_second);
        check_layout(d, slow, m.layers);

        // A model one node holds is planned on the joined node; the other is listed.
        const auto small = ah::plan_cluster(d, model("llama-3.1-70b"), quant_format::bf16);
        CHECK(small.fits);
        CHECK_FALSE(small.joined);
        CHECK(small.nodes_left_out.size() == 1);
        for (const auto& dv : small.plan.devices) CHECK(d.node_of(dv.device) == small.nodes_considered[0]);
    }

    SUBCASE("joined pairwise: no hop between two nodes that share no network") {
        // a has InfiniBand only, c RoCE only, b both: a and c reach b but not each other.
        auto a = h100_node("a");
        auto cn = h100_node("c", 0);
        cn.registry.add(link(ah::interconnect_kind::roce_v2, ah::link_scope::inter_node, 50.0, {}, "eth0"));
        auto b = h100_node("b");
        b.registry.add(link(ah::interconnect_kind::roce_v2, ah::link_scope::inter_node, 50.0, {}, "eth0"));
        std::vector<ah::cluster_node> v{a, cn, b};
        const auto d = ah::make_cluster(v);
        CHECK_FALSE(ah::link_between(d, 0, 1).joined());
        for (const auto& o : {ah::cluster_options{}, spread()}) {
            const auto cp = ah::plan_cluster(d, m, quant_format::bf16, {}, o);
            REQUIRE(cp.fits);
            CHECK_FALSE(cp.joined);
            CHECK(cp.nodes_considered == std::vector<std::uint32_t>{0, 2});
            CHECK(cp.nodes_left_out == std::vector<std::uint32_t>{1});
            CHECK(cp.reason.find(" c") != std::string::npos);
            for (const auto& dv : cp.plan.devices) CHECK(d.node_of(dv.device) != 1);
            CHECK(cp.inter_node_link.kind == ah::interconnect_kind::infiniband);
            check_layout(d, cp, m.layers);
        }
        // With a network assumed between any two, all three are joined.
        ah::cluster_options assumed;
        assumed.fallback_network_gbps = 6.25;
        CHECK(ah::plan_cluster(d, m, quant_format::bf16, {}, assumed).joined);
    }

    SUBCASE("32 nodes with their CPUs: the planner's 256 devices are all GPUs") {
        std::vector<ah::cluster_node> v;
        ah::accelerator_profile cpu;
        cpu.kind = ah::device_kind::cpu;
        cpu.memory_bytes = {512ull << 30, ah::origin::sysfs};
        for (int i = 0; i < 32; ++i) {
            auto n = h100_node("node-" + std::to_string(i));
            n.registry.add(cpu);
            v.push_back(std::move(n));
        }
        const auto d = ah::make_cluster(v);
        REQUIRE(d.devices.size() == 32 * 9);
        const auto cp = ah::plan_cluster(d, m, quant_format::bf16);
        REQUIRE(cp.fits);
        CHECK(cp.plan.replicas == 16); // two nodes each, every node used
        CHECK_FALSE(cp.plan.truncated);
        CHECK(cp.plan.cpu_excluded);
        check_layout(d, cp, m.layers);
        std::set<std::uint32_t> used;
        for (const auto& dv : cp.plan.devices) {
            CHECK(d.devices[dv.device].kind == ah::device_kind::cuda_gpu);
            used.insert(d.node_of(dv.device));
        }
        CHECK(used.size() == 32);
        for (const auto& u : cp.per_node) CHECK(u.devices_used == 8);

        const auto one = ah::plan_cluster(d, m, quant_format::bf16, {}, spread());
        REQUIRE(one.fits);
        CHECK(one.plan.stages == 32);
        CHECK(one.nodes_per_replica == 32);
        CHECK(one.inter_node_hops == 31);

        // A 33rd node is past the planner's 256: said, not hidden.
        v.push_back(h100_node("node-32"));
        const auto more = ah::plan_cluster(ah::make_cluster(v), m, quant_format::bf16);
        CHECK(more.plan.truncated);
        CHECK(more.plan.replicas == 16);
    }

    SUBCASE("a device of unknown speed leaves the decode rate unknown") {
        auto slow = h100_node("unknown");
        ah::accelerator_registry r;
        for (auto p : slow.registry.all()) {
            p.memory_bandwidth_gbps = {};
            r.add(p);
        }
        for (const auto& l : slow.registry.system().interconnects) r.add(l);
        std::vector<ah::cluster_node> v{h100_node("known"), {"unknown", r}};
        const auto d = ah::make_cluster(v);
        const auto cp = ah::plan_cluster(d, m, quant_format::bf16);
        REQUIRE(cp.fits);
        CHECK(cp.nodes_per_replica == 2);
        const auto flat = ah::plan_sharding(d.devices, d.links, m, quant_format::bf16);
        CHECK(flat.decode_tokens_per_second == 0);
        CHECK(cp.plan.decode_tokens_per_second == 0);
        CHECK(cp.plan.aggregate_decode_tokens_per_second == 0);
    }

    SUBCASE("no nodes") {
        const auto cp = ah::plan_cluster(ah::cluster_view{}, m, quant_format::bf16);
        CHECK_FALSE(cp.fits);
        CHECK(cp.plan.outcome == ah::plan_outcome::no_devices);
    }
}

TEST_CASE("plan_cluster: each node's unified memory is its own pool") {
    // Two DGX Sparks (a GB10 each: 128 GB shared with the CPU) joined by their ConnectX-7
    // ports, as NVIDIA's guides join them. One node's pool is counted once, but two nodes
    // have two: Llama 3.1 70B in bf16 (141 GB of weights) fits over both, not on one.
    const auto* spec = ah::find_device("GB10");
    REQUIRE(spec != nullptr);
    std::vector<ah::cluster_node> sparks;
    for (std::uint32_t n = 0; n < 2; ++n) {
        ah::accelerator_registry r;
        auto gpu = ah::profile_from_spec(*spec, 0);
        gpu.memory_bytes = {128ull << 30, ah::origin::tool};
        gpu.unified_memory = true;
        r.add(gpu);
        r.add(link(ah::interconnect_kind::roce, ah::link_scope::inter_node, 50.0, {}, "rocep1s0f0 port 1"));
        sparks.push_back({"spark-" + std::to_string(n), std::move(r)});
    }
    const auto c = ah::make_cluster(sparks);
    const auto& m = model("llama-3.1-70b");
    const auto cp = ah::plan_cluster(c, m, quant_format::bf16, {}, spread());
    REQUIRE(cp.fits);
    CHECK(cp.plan.candidate_devices == 2);
    CHECK(cp.plan.stages == 2);
    CHECK(cp.nodes_per_replica == 2);
    check_layout(c, cp, m.layers);
    // The best format over both is bf16 itself.
    const auto best = ah::plan_cluster_best_format(c, m, {}, spread());
    CHECK(best.choice.format == quant_format::bf16);
    CHECK(best.plan.fits);
    // On one machine the two would share one pool: one device, and 70B bf16 does not fit.
    std::vector<ah::accelerator_profile> one_host{sparks[0].registry.all()[0], sparks[1].registry.all()[0]};
    one_host[1].index = 1;
    const auto single = ah::plan_sharding(one_host, {}, m, quant_format::bf16, {}, spread().plan);
    CHECK_FALSE(single.fits);
    CHECK(single.candidate_devices == 1);
}

TEST_CASE("plan_cluster_best_format") {
    const auto& m = model("llama-3.1-405b");
    // 405B in bf16 is about 756 GiB of weights: more than one node's eight 80 GiB H100s
    // hold after the 10% headroom (576 GiB), less than two nodes' (1152 GiB).
    const auto bf16 = ah::estimate_memory(m, quant_format::bf16);
    const auto node_usable = 8 * ah::usable_memory(ah::profile_from_spec(*ah::find_device("H100 SXM"), 0));
    REQUIRE(bf16.total_bytes() > node_usable);
    REQUIRE(bf16.total_bytes() < 2 * node_usable);

    SUBCASE("two joined nodes hold bf16, planned across them") {
        const auto nodes = h100_cluster(2);
        const auto c = ah::make_cluster(nodes);
        const auto best = ah::plan_cluster_best_format(c, m);
        REQUIRE(best.plan.fits);
        CHECK(best.choice.fits);
        CHECK(best.choice.format == quant_format::bf16);
        CHECK(best.plan.plan.quant == quant_format::bf16);
        CHECK(best.plan.nodes_per_replica == 2);
        CHECK(best.plan.inter_node_hops == 1);
        CHECK(best.plan.inter_node_link.kind == ah::interconnect_kind::infiniband);
        check_layout(c, best.plan, m.layers);
        // The plan is plan_cluster's in that format, re-priced hops included.
        const auto same = ah::plan_cluster(c, m, quant_format::bf16);
        CHECK(best.plan.plan.decode_tokens_per_second == same.plan.decode_tokens_per_second);
        CHECK(best.plan.plan.devices.size() == same.plan.devices.size());
    }

    SUBCASE("a node that cannot be joined does not count: a smaller format on the other") {
        std::vector<ah::cluster_node> v{h100_node("ib-node"), h100_node("bare-node", 0)};
        const auto c = ah::make_cluster(v);
        const auto best = ah::plan_cluster_best_format(c, m);
        REQUIRE(best.plan.fits);
        CHECK_FALSE(best.plan.joined);
        CHECK(best.plan.nodes_left_out.size() == 1);
        const auto q = best.plan.plan.quant;
        CHECK(ah::bits_per_weight(q) < 16);
        CHECK(best.plan.plan.memory.total_bytes() <= node_usable);
        CHECK(best.plan.nodes_per_replica == 1);
        for (const auto& d : best.plan.plan.devices) CHECK(c.node_of(d.device) == best.plan.nodes_considered[0]);
        // No format of more bits fits that one node.
        for (const auto& row : ah::quant_table)
            if (row.bits_per_weight > ah::bits_per_weight(q) && row.bits_per_weight <= 16)
                CHECK_FALSE(ah::plan_cluster(c, m, row.id).fits);
        // Assuming a network between them joins them, and bf16 fits again.
        ah::cluster_options o;
        o.fallback_network_gbps = 6.25;
        const auto joined = ah::plan_cluster_best_format(c, m, {}, o);
        REQUIRE(joined.plan.fits);
        CHECK(joined.plan.joined);
        CHECK(joined.plan.plan.quant == quant_format::bf16);
    }

    SUBCASE("nothing fits: the smallest format, and why") {
        // 16 sequences of 128k tokens: 405B's KV cache alone (126 layers x 8 KV heads x 128
        // x 2 x 2 bytes a token, about 1 TiB) is more than a node holds, in any format.
        std::vector<ah::cluster_node> v{h100_node("only")};
        const ah::inference_shape shape{.context = 131072, .batch = 16};
        REQUIRE(ah::estimate_memory(m, quant_format::q2_k, shape).kv_cache_bytes > node_usable);
        const auto best = ah::plan_cluster_best_format(ah::make_cluster(v), m, shape);
        REQUIRE_FALSE(best.plan.fits);
        CHECK_FALSE(best.choice.fits);
        CHECK(best.choice.outcome == ah::plan_outcome::too_large);
        CHECK(best.plan.plan.quant == best.choice.format);
    }

    SUBCASE("no nodes") {
        const auto best = ah::plan_cluster_best_format(ah::cluster_view{}, m);
        CHECK_FALSE(best.plan.fits);
        CHECK(best.plan.plan.outcome == ah::plan_outcome::no_devices);
    }
}

TEST_CASE("plan_deployment") {
    const auto& m = model("llama-3.1-405b");
    const auto nodes = h100_cluster(2);
    const auto c = ah::make_cluster(nodes);
    const auto& one = nodes[0].registry;
    const auto links = std::span<const ah::interconnect>(one.system().interconnects);
    // One machine: plan_sharding with a format, plan_best_format without.
    const auto given = ah::plan_deployment(nullptr, one.all(), links, m, quant_format::fp8_e4m3);
    CHECK_FALSE(given.choice.has_value());
    CHECK_FALSE(given.cluster.has_value());
    const auto direct = ah::plan_sharding(one.all(), links, m, quant_format::fp8_e4m3);
    CHECK(given.plan.fits == direct.fits);
    CHECK(given.plan.decode_tokens_per_second == direct.decode_tokens_per_second);
    const auto automatic = ah::plan_deployment(nullptr, one.all(), links, m, std::nullopt);
    const auto best = ah::plan_best_format(one.all(), links, m);
    REQUIRE(automatic.choice.has_value());
    CHECK(automatic.choice->format == best.choice.format);
    CHECK(automatic.plan.quant == best.plan.quant);
    CHECK(automatic.plan.devices.size() == best.plan.devices.size());
    // A cluster: plan_cluster with a format, plan_cluster_best_format without; `plan` is
    // the cluster plan's.
    const auto cg = ah::plan_deployment(&c, {}, {}, m, quant_format::bf16);
    REQUIRE(cg.cluster.has_value());
    CHECK_FALSE(cg.choice.has_value());
    CHECK(cg.plan.fits);
    CHECK(cg.cluster->nodes_per_replica == 2);
    CHECK(cg.plan.decode_tokens_per_second == cg.cluster->plan.decode_tokens_per_second);
    const auto ca = ah::plan_deployment(&c, {}, {}, m, std::nullopt);
    REQUIRE(ca.cluster.has_value());
    REQUIRE(ca.choice.has_value());
    CHECK(ca.plan.quant == ah::plan_cluster_best_format(c, m).plan.plan.quant);
}

#if AI_HWACCEL_JSON
TEST_CASE("cluster_node_from_json") {
    const auto path = std::filesystem::path(AI_HWACCEL_MACHINES_DIR) / "handmade-ib-cluster-node-8gpu" / "expected.json";
    const auto text = test::read_file(path);
    REQUIRE(text.has_value());
    std::vector<ah::cluster_node> nodes;
    for (int i = 0; i < 4; ++i) {
        auto r = ah::cluster_node_from_json("gpu-node-" + std::to_string(i), *text);
        REQUIRE_MESSAGE(r.ok(), r.error);
        nodes.push_back(std::move(*r.node));
    }
    const auto c = ah::make_cluster(nodes);
    const auto per_node = nodes[0].registry.size();
    REQUIRE(c.devices.size() == 4 * per_node);
    CHECK(c.uniform_fabric);
    CHECK(c.fabric[3].infiniband);
    CHECK(c.fabric[3].ethernet); // the RoCE bond
    const auto lk = ah::link_between(c, 1, 2);
    CHECK(lk.kind == ah::interconnect_kind::infiniband); // the faster of the two networks
    CHECK(lk.gbps == doctest::Approx(100.0));

    const auto& m = model("llama-3.1-405b");
    const auto cp = ah::plan_cluster(c, m, quant_format::bf16, {}, spread());
    REQUIRE(cp.fits);
    CHECK(cp.plan.kind == ah::device_kind::cuda_gpu);
    CHECK(cp.plan.tensor_parallel == 8);
    CHECK(cp.plan.stages == 4);
    CHECK(cp.inter_node_hops == 3);
    CHECK(cp.inter_node_link.kind == ah::interconnect_kind::infiniband);
    check_layout(c, cp, m.layers);
    for (const auto& u : cp.per_node) CHECK(u.planned_bytes <= u.capacity_bytes);

    auto bad = ah::cluster_node_from_json("broken", "{");
    CHECK_FALSE(bad.ok());
    CHECK(bad.error.rfind("broken: ", 0) == 0);
}
#endif
