// Micro-benchmarks of the catalogue, the registry's queries and the planner.
//   ./build/benchmarks/bench_core
// Registries hold one CPU plus N devices (N = 12 and 128: 13 and 129 profiles, the sizes
// the reference peer's registry benchmarks use). Planning runs on N H100 SXM cards joined
// by NVSwitch inside 8-GPU nodes and by InfiniBand across nodes.
#include <ai_hwaccel/ai_hwaccel.hpp>

#include <benchmark/benchmark.h>

#include "planning_fixtures.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace ah = ai_hwaccel;

namespace {

// --- Catalogue ----------------------------------------------------------------------------

void find_device_by_alias(benchmark::State& state) {
    const std::vector<std::string> names{"H100 SXM", "NVIDIA GeForce RTX 4090", "mi300x", "TPU v5e", "nope"};
    std::size_t i = 0;
    for (auto _ : state) benchmark::DoNotOptimize(ah::find_device(names[i++ % names.size()]));
}
BENCHMARK(find_device_by_alias);

void parse_quant_format(benchmark::State& state) {
    const std::vector<std::string> names{"Q4_K_M", "bf16", "MXFP4", "int4", "nonsense"};
    std::size_t i = 0;
    for (auto _ : state) benchmark::DoNotOptimize(ah::parse_quant_format(names[i++ % names.size()]));
}
BENCHMARK(parse_quant_format);

// --- Registry queries ---------------------------------------------------------------------

// One CPU (profile 0) and `gpus` devices of four kinds in turn.
ah::accelerator_registry registry_of(std::size_t gpus) {
    std::vector<ah::accelerator_profile> profiles(1);
    const char* kinds[] = {"H100 SXM", "RTX 4090", "MI300X", "TPU v5p"};
    for (std::size_t i = 0; i < gpus; ++i)
        profiles.push_back(ah::profile_from_spec(*ah::find_device(kinds[i % 4]), static_cast<std::uint32_t>(i)));
    return ah::accelerator_registry(std::move(profiles));
}

void label_size(benchmark::State& state, const ah::accelerator_registry& reg) {
    state.SetLabel(std::to_string(reg.size()) + " profiles");
}

void registry_best_available(benchmark::State& state) {
    const auto reg = registry_of(static_cast<std::size_t>(state.range(0)));
    for (auto _ : state) benchmark::DoNotOptimize(reg.best_available());
    label_size(state, reg);
}
BENCHMARK(registry_best_available)->Arg(12)->Arg(128);

void registry_total_memory(benchmark::State& state) {
    const auto reg = registry_of(static_cast<std::size_t>(state.range(0)));
    for (auto _ : state) benchmark::DoNotOptimize(reg.total_memory());
    label_size(state, reg);
}
BENCHMARK(registry_total_memory)->Arg(12)->Arg(128);

// Walks the lazy view to its end, as `for (auto& p : reg.by_family(gpu))` does.
void registry_by_family_gpu_count(benchmark::State& state) {
    const auto reg = registry_of(static_cast<std::size_t>(state.range(0)));
    for (auto _ : state) {
        std::size_t n = 0;
        for (const auto& p : reg.by_family(ah::family::gpu)) {
            benchmark::DoNotOptimize(&p);
            ++n;
        }
        benchmark::DoNotOptimize(n);
    }
    label_size(state, reg);
}
BENCHMARK(registry_by_family_gpu_count)->Arg(12)->Arg(128);

void registry_available_count(benchmark::State& state) {
    const auto reg = registry_of(static_cast<std::size_t>(state.range(0)));
    for (auto _ : state) benchmark::DoNotOptimize(ranges::distance(reg.available()));
    label_size(state, reg);
}
BENCHMARK(registry_available_count)->Arg(12)->Arg(128);

// Copies every available profile into a vector (the peer's available_collect).
void registry_available_collect(benchmark::State& state) {
    const auto reg = registry_of(static_cast<std::size_t>(state.range(0)));
    for (auto _ : state) {
        std::vector<ah::accelerator_profile> v;
        for (const auto& p : reg.available()) v.push_back(p);
        benchmark::DoNotOptimize(v.data());
    }
    label_size(state, reg);
}
BENCHMARK(registry_available_collect)->Arg(12)->Arg(128);

// Collects pointers instead (what a caller keeping the registry alive needs).
void registry_available_collect_pointers(benchmark::State& state) {
    const auto reg = registry_of(static_cast<std::size_t>(state.range(0)));
    for (auto _ : state) {
        std::vector<const ah::accelerator_profile*> v;
        for (const auto& p : reg.available()) v.push_back(&p);
        benchmark::DoNotOptimize(v.data());
    }
    label_size(state, reg);
}
BENCHMARK(registry_available_collect_pointers)->Arg(12)->Arg(128);

void registry_count_satisfying(benchmark::State& state) {
    const auto reg = registry_of(static_cast<std::size_t>(state.range(0)));
    const auto req = ah::requirement::gpu().with_memory(40 * ah::units::gib);
    for (auto _ : state) benchmark::DoNotOptimize(reg.count(req));
    label_size(state, reg);
}
BENCHMARK(registry_count_satisfying)->Arg(12)->Arg(128);

// --- Planning -----------------------------------------------------------------------------

struct cluster {
    std::vector<ah::accelerator_profile> gpus;
    std::vector<ah::interconnect> links;
};

using bench::link;

// `n` H100 SXM: one NVSwitch per 8 GPUs (or per node of fewer), InfiniBand between nodes.
cluster h100_cluster(std::uint32_t n) {
    cluster c;
    const auto* spec = ah::find_device("H100 SXM");
    for (std::uint32_t i = 0; i < n; ++i) c.gpus.push_back(ah::profile_from_spec(*spec, i));
    for (std::uint32_t first = 0; first < n; first += 8) {
        std::vector<std::uint32_t> members;
        for (std::uint32_t i = first; i < n && i < first + 8; ++i) members.push_back(i);
        c.links.push_back(link(ah::interconnect_kind::nvswitch, ah::link_scope::intra_node, 900, std::move(members)));
    }
    if (n > 8) { // the nodes' InfiniBand, listing the GPUs it serves (a NIC that lists none joins no hop)
        std::vector<std::uint32_t> all(n);
        for (std::uint32_t i = 0; i < n; ++i) all[i] = i;
        c.links.push_back(link(ah::interconnect_kind::infiniband, ah::link_scope::inter_node, 100, std::move(all)));
    }
    return c;
}

const ah::model_spec& model(const char* id) { return *ah::find_model(id); }

void suggest_quantization(benchmark::State& state, const char* id) {
    const auto c = h100_cluster(static_cast<std::uint32_t>(state.range(0)));
    const auto& m = model(id);
    for (auto _ : state) benchmark::DoNotOptimize(ah::suggest_quantization(c.gpus, m));
    const auto q = ah::suggest_quantization(c.gpus, m);
    state.SetLabel(q.fits ? std::string(ah::to_string(q.format)) + " on " + std::to_string(q.devices) : "fits nowhere");
}

void plan_sharding(benchmark::State& state, const char* id) {
    const auto c = h100_cluster(static_cast<std::uint32_t>(state.range(0)));
    const auto& m = model(id);
    for (auto _ : state) benchmark::DoNotOptimize(ah::plan_sharding(c.gpus, c.links, m, ah::quant_format::bf16));
    const auto p = ah::plan_sharding(c.gpus, c.links, m, ah::quant_format::bf16);
    state.SetLabel(std::string(ah::to_string(p.strategy)) + " tp=" + std::to_string(p.tensor_parallel) +
                   " stages=" + std::to_string(p.stages) + " replicas=" + std::to_string(p.replicas));
}

// The format the planner itself fits, with the links: one suggestion, then one plan per
// format tried (one when the suggestion plans and nothing of more bits does).
void plan_best_format(benchmark::State& state, const char* id) {
    const auto c = h100_cluster(static_cast<std::uint32_t>(state.range(0)));
    const auto& m = model(id);
    for (auto _ : state) benchmark::DoNotOptimize(ah::plan_best_format(c.gpus, c.links, m));
    const auto b = ah::plan_best_format(c.gpus, c.links, m);
    state.SetLabel(b.choice.fits ? std::string(ah::to_string(b.choice.format)) + " tp=" +
                                       std::to_string(b.plan.tensor_parallel)
                                 : "fits nowhere");
}

BENCHMARK_CAPTURE(suggest_quantization, llama_3_1_70b, "llama-3.1-70b")->Arg(4)->Arg(8)->Arg(128);
BENCHMARK_CAPTURE(suggest_quantization, llama_3_1_405b, "llama-3.1-405b")->Arg(4)->Arg(8)->Arg(128);
BENCHMARK_CAPTURE(plan_sharding, llama_3_1_70b_bf16, "llama-3.1-70b")->Arg(4)->Arg(8)->Arg(128);
BENCHMARK_CAPTURE(plan_sharding, llama_3_1_405b_bf16, "llama-3.1-405b")->Arg(4)->Arg(8)->Arg(128);
BENCHMARK_CAPTURE(plan_best_format, llama_3_1_70b, "llama-3.1-70b")->Arg(4)->Arg(8)->Arg(128);
BENCHMARK_CAPTURE(plan_best_format, llama_3_1_405b, "llama-3.1-405b")->Arg(4)->Arg(8)->Arg(128);

} // namespace

BENCHMARK_MAIN();
