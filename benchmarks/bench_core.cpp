// Micro-benchmarks of the core and the registry. Run: ./build/benchmarks/bench_core
#include <ai_hwaccel/ai_hwaccel.hpp>

#include <benchmark/benchmark.h>

#include <string>
#include <vector>

namespace ah = ai_hwaccel;

namespace {

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

ah::accelerator_registry registry_of(std::size_t gpus) {
    std::vector<ah::accelerator_profile> profiles(1);
    const char* kinds[] = {"H100 SXM", "RTX 4090", "MI300X", "TPU v5p"};
    for (std::size_t i = 0; i < gpus; ++i)
        profiles.push_back(ah::profile_from_spec(*ah::find_device(kinds[i % 4]), static_cast<std::uint32_t>(i)));
    return ah::accelerator_registry(std::move(profiles));
}

void registry_best_available(benchmark::State& state) {
    const auto reg = registry_of(static_cast<std::size_t>(state.range(0)));
    for (auto _ : state) benchmark::DoNotOptimize(reg.best_available());
}
BENCHMARK(registry_best_available)->Arg(12)->Arg(128);

void registry_total_memory(benchmark::State& state) {
    const auto reg = registry_of(static_cast<std::size_t>(state.range(0)));
    for (auto _ : state) benchmark::DoNotOptimize(reg.total_memory());
}
BENCHMARK(registry_total_memory)->Arg(12)->Arg(128);

void registry_count_satisfying(benchmark::State& state) {
    const auto reg = registry_of(static_cast<std::size_t>(state.range(0)));
    const auto req = ah::requirement::gpu().with_memory(40 * ah::units::gib);
    for (auto _ : state) benchmark::DoNotOptimize(reg.count(req));
}
BENCHMARK(registry_count_satisfying)->Arg(12)->Arg(128);

} // namespace

BENCHMARK_MAIN();
