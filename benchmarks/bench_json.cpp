// JSON benchmarks: a registry written to text and read back (io/json.hpp).
//   ./build/benchmarks/bench_json
// Registries hold one CPU plus 12 or 128 devices (13 and 129 profiles), with a host
// description and, for the larger one, NVSwitch and InfiniBand links, so that every part
// of the document is exercised.
#include <ai_hwaccel/ai_hwaccel.hpp>
#include <ai_hwaccel/io/json.hpp>

#include <benchmark/benchmark.h>

#include <cstdint>
#include <string>
#include <vector>

namespace ah = ai_hwaccel;

namespace {

ah::accelerator_registry registry_of(std::size_t gpus) {
    std::vector<ah::accelerator_profile> profiles(1);
    const char* kinds[] = {"H100 SXM", "RTX 4090", "MI300X", "TPU v5p"};
    for (std::size_t i = 0; i < gpus; ++i)
        profiles.push_back(ah::profile_from_spec(*ah::find_device(kinds[i % 4]), static_cast<std::uint32_t>(i)));
    ah::accelerator_registry reg(std::move(profiles));
    for (std::uint32_t first = 0; first + 8 <= gpus; first += 8) {
        ah::interconnect l;
        l.kind = ah::interconnect_kind::nvswitch;
        l.name = "NVSwitch";
        l.state = "8 GPUs";
        l.bandwidth_gbps = {900.0, ah::origin::user};
        for (std::uint32_t i = first; i < first + 8; ++i) l.devices.push_back(i);
        reg.add(std::move(l));
    }
    return reg;
}

void json_write(benchmark::State& state) {
    const auto reg = registry_of(static_cast<std::size_t>(state.range(0)));
    std::size_t bytes = 0;
    for (auto _ : state) {
        const auto text = ah::to_json_string(reg, -1);
        bytes = text.size();
        benchmark::DoNotOptimize(text.data());
    }
    state.SetLabel(std::to_string(reg.size()) + " profiles, " + std::to_string(bytes) + " bytes");
}
BENCHMARK(json_write)->Arg(12)->Arg(128)->Unit(benchmark::kMicrosecond);

void json_read(benchmark::State& state) {
    const auto reg = registry_of(static_cast<std::size_t>(state.range(0)));
    const auto text = ah::to_json_string(reg, -1);
    if (!ah::registry_from_json(text)) {
        state.SkipWithError("the written registry does not read back");
        return;
    }
    for (auto _ : state) benchmark::DoNotOptimize(ah::registry_from_json(text));
    state.SetLabel(std::to_string(reg.size()) + " profiles, " + std::to_string(text.size()) + " bytes");
}
BENCHMARK(json_read)->Arg(12)->Arg(128)->Unit(benchmark::kMicrosecond);

} // namespace

BENCHMARK_MAIN();
