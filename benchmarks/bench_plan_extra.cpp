// Planner cases beyond bench_core's H100 cluster: clusters without links (pipelines
// over single devices), islands of mixed cards, two device kinds, one replica spread over
// every card, suggest_quantization walking far down the format table, and the reference
// peer's own planning registries.
//   ./build/benchmarks/bench_plan_extra
#include <ai_hwaccel/ai_hwaccel.hpp>

#include <benchmark/benchmark.h>

#include "planning_fixtures.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace ah = ai_hwaccel;

namespace {

struct cluster {
    std::vector<ah::accelerator_profile> devices;
    std::vector<ah::interconnect> links;
};

using bench::link;

ah::accelerator_profile card(const char* name, std::uint32_t index) {
    return ah::profile_from_spec(*ah::find_device(name), index);
}

// `n` cards named in turn from `names`, joined `island` at a time by `kind` (none: PCIe
// only), InfiniBand between the islands.
cluster make(std::vector<const char*> names, std::uint32_t n, std::uint32_t island, ah::interconnect_kind kind,
             double gbps) {
    cluster c;
    for (std::uint32_t i = 0; i < n; ++i) c.devices.push_back(card(names[i % names.size()], i));
    for (std::uint32_t first = 0; island != 0 && first < n; first += island) {
        std::vector<std::uint32_t> members;
        for (std::uint32_t i = first; i < n && i < first + island; ++i) members.push_back(i);
        c.links.push_back(link(kind, ah::link_scope::intra_node, gbps, std::move(members)));
    }
    if (island != 0 && n > island) { // listing the devices it serves: a NIC that lists none joins no hop
        std::vector<std::uint32_t> all(n);
        for (std::uint32_t i = 0; i < n; ++i) all[i] = i;
        c.links.push_back(link(ah::interconnect_kind::infiniband, ah::link_scope::inter_node, 100, std::move(all)));
    }
    return c;
}

const ah::model_spec& model(const char* id) { return *ah::find_model(id); }

void label(benchmark::State& state, const ah::shard_plan& p) {
    state.SetLabel(std::string(ah::to_string(p.strategy)) + " tp=" + std::to_string(p.tensor_parallel) +
                   " stages=" + std::to_string(p.stages) + " replicas=" + std::to_string(p.replicas));
}

void run_plan(benchmark::State& state, const cluster& c, const ah::model_spec& m, ah::quant_format q,
              const ah::plan_options& o = {}) {
    for (auto _ : state) benchmark::DoNotOptimize(ah::plan_sharding(c.devices, c.links, m, q, {}, o));
    label(state, ah::plan_sharding(c.devices, c.links, m, q, {}, o));
}

// H100 SXM over PCIe only: every replica a pipeline of single cards.
void plan_pcie_h100(benchmark::State& state, const char* id) {
    const auto c = make({"H100 SXM"}, static_cast<std::uint32_t>(state.range(0)), 0, ah::interconnect_kind::none, 0);
    run_plan(state, c, model(id), ah::quant_format::bf16);
}

// H100 SXM and H200 in turn inside NVSwitch nodes of 8: islands of unequal cards.
void plan_mixed_nodes(benchmark::State& state, const char* id) {
    const auto c = make({"H100 SXM", "NVIDIA H200"}, static_cast<std::uint32_t>(state.range(0)), 8,
                        ah::interconnect_kind::nvswitch, 900);
    run_plan(state, c, model(id), ah::quant_format::fp8_e4m3);
}

// RTX 3060 / 4090 / 3090 in turn over PCIe: a workstation farm of three card sizes.
void plan_consumer_mix(benchmark::State& state, const char* id) {
    const auto c = make({"RTX 3060", "RTX 4090", "RTX 3090"}, static_cast<std::uint32_t>(state.range(0)), 0,
                        ah::interconnect_kind::none, 0);
    run_plan(state, c, model(id), ah::quant_format::q4_k_m);
}

// MI300X (XGMI per 8) and H100 PCIe in turn: two kinds, one plan each, the faster kept.
void plan_two_kinds(benchmark::State& state, const char* id) {
    const auto c = make({"MI300X", "NVIDIA H100 PCIe"}, static_cast<std::uint32_t>(state.range(0)), 0,
                        ah::interconnect_kind::none, 0);
    run_plan(state, c, model(id), ah::quant_format::bf16);
}

// One replica over every card of the benchmark cluster.
void plan_spread(benchmark::State& state, const char* id) {
    const auto c = make({"H100 SXM"}, static_cast<std::uint32_t>(state.range(0)), 8, ah::interconnect_kind::nvswitch,
                        900);
    ah::plan_options o;
    o.spread = true;
    run_plan(state, c, model(id), ah::quant_format::bf16, o);
}

// suggest_quantization on cards too small for most formats: it walks the table down.
void suggest_small_cards(benchmark::State& state, const char* id) {
    const auto c = make({"RTX 3060"}, static_cast<std::uint32_t>(state.range(0)), 0, ah::interconnect_kind::none, 0);
    const auto& m = model(id);
    for (auto _ : state) benchmark::DoNotOptimize(ah::suggest_quantization(c.devices, m));
    const auto q = ah::suggest_quantization(c.devices, m);
    state.SetLabel(q.fits ? std::string(ah::to_string(q.format)) + " on " + std::to_string(q.devices) : "fits nowhere");
}

// The registries of the reference peer's planning benchmarks (its benches/plan.rs): a CPU
// of 64 GiB and four 80 GiB NVIDIA GPUs ("4 GPU"), and a CPU of 512 GiB, eight such GPUs,
// four TPU v5p and one Gaudi 3 ("13 devices"); no interconnects. The peer's GPU profile
// names no model (H100 SXM is an 80 GiB one) and its TPU profile stands for four chips
// (here each of the four is one chip, so that the registry keeps its 13 profiles).
cluster peer_registry(std::int64_t size) {
    cluster c;
    ah::accelerator_profile cpu;
    cpu.kind = ah::device_kind::cpu;
    cpu.name = "host CPU";
    cpu.memory_bytes = {(size == 4 ? 64 : 512) * ah::units::gib, ah::origin::user};
    c.devices.push_back(cpu);
    for (std::uint32_t i = 0; i < (size == 4 ? 4u : 8u); ++i) c.devices.push_back(card("H100 SXM", i));
    if (size != 4) {
        for (std::uint32_t i = 0; i < 4; ++i) c.devices.push_back(card("TPU v5p", i));
        c.devices.push_back(card("Gaudi 3 OAM", 0));
    }
    return c;
}

// The peer's model is a bare count of 70 billion parameters; Llama 3.1 70B is ours.
void peer_registry_plan(benchmark::State& state) {
    const auto c = peer_registry(state.range(0));
    const auto& m = model("llama-3.1-70b");
    run_plan(state, c, m, ah::quant_format::bf16);
    const auto p = ah::plan_sharding(c.devices, c.links, m, ah::quant_format::bf16);
    state.SetLabel(std::string(ah::to_string(p.kind)) + " " + std::string(ah::to_string(p.strategy)) +
                   " stages=" + std::to_string(p.stages) + " replicas=" + std::to_string(p.replicas));
}

void peer_registry_suggest(benchmark::State& state) {
    const auto c = peer_registry(state.range(0));
    const auto& m = model("llama-3.1-70b");
    for (auto _ : state) benchmark::DoNotOptimize(ah::suggest_quantization(c.devices, m));
    const auto q = ah::suggest_quantization(c.devices, m);
    state.SetLabel(q.fits ? std::string(ah::to_string(q.format)) + " on " + std::to_string(q.devices) + " " +
                                std::string(ah::to_string(q.kind))
                          : "fits nowhere");
}

BENCHMARK_CAPTURE(plan_pcie_h100, llama_3_1_405b_bf16, "llama-3.1-405b")->Arg(16)->Arg(128);
BENCHMARK_CAPTURE(plan_mixed_nodes, llama_3_1_405b_fp8, "llama-3.1-405b")->Arg(16)->Arg(128);
BENCHMARK_CAPTURE(plan_consumer_mix, llama_3_1_70b_q4_k_m, "llama-3.1-70b")->Arg(12)->Arg(128);
BENCHMARK_CAPTURE(plan_two_kinds, llama_3_1_70b_bf16, "llama-3.1-70b")->Arg(16)->Arg(128);
BENCHMARK_CAPTURE(plan_spread, llama_3_1_70b_bf16, "llama-3.1-70b")->Arg(16)->Arg(128);
BENCHMARK_CAPTURE(suggest_small_cards, llama_3_1_405b, "llama-3.1-405b")->Arg(4)->Arg(128);
BENCHMARK(peer_registry_plan)->Arg(4)->Arg(13);
BENCHMARK(peer_registry_suggest)->Arg(4)->Arg(13);

} // namespace

BENCHMARK_MAIN();
