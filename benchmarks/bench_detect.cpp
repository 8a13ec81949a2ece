// Detection benchmarks: the live host in-process, the orchestrator's overhead, and the
// point of running probes in parallel (several slow tools cost the slowest, not the sum).
#include "ai_hwaccel/detect/detect.hpp"

#include <benchmark/benchmark.h>

#include <chrono>
#include <string>

namespace ah = ai_hwaccel;

namespace {

// A probe whose tool takes `seconds` to answer (coreutils `sleep`, found in /usr/bin or /bin).
template <ah::backend_id B>
struct slow_tool_probe {
    static constexpr ah::backend_id backend = B;
    std::string seconds;
    template <ah::system_view S>
    ah::probe_output probe(const S& sys) const {
        ah::probe_output out;
        ah::tool_request rq{{"sleep", seconds}, std::chrono::seconds(5)};
        ah::run_reporting(sys, rq, B, out.warnings);
        return out;
    }
};

} // namespace

// detect() on this machine: every compiled backend and the host probes.
static void detect_live(benchmark::State& state) {
    for (auto _ : state) benchmark::DoNotOptimize(ah::detect());
}
BENCHMARK(detect_live)->Unit(benchmark::kMicrosecond);

// The host probes alone (CPU, memory, NUMA, PCI, storage, environment).
static void detect_host_only(benchmark::State& state) {
    const auto d = ah::detector::none().with_host();
    const ah::host_system sys;
    for (auto _ : state) benchmark::DoNotOptimize(d.run(sys));
}
BENCHMARK(detect_host_only)->Unit(benchmark::kMicrosecond);

// Four probes, each waiting 200 ms on its tool: in parallel about 200 ms, in series 800 ms.
static void detect_four_slow_tools(benchmark::State& state) {
    const bool parallel = state.range(0) != 0;
    const auto d = ah::detector::all().with_host(false).parallel(parallel);
    const ah::host_system sys;
    slow_tool_probe<ah::backend_id::cuda> a{"0.2"};
    slow_tool_probe<ah::backend_id::rocm> b{"0.2"};
    slow_tool_probe<ah::backend_id::gaudi> c{"0.2"};
    slow_tool_probe<ah::backend_id::neuron> e{"0.2"};
    for (auto _ : state) benchmark::DoNotOptimize(d.run_timed_with(sys, a, b, c, e));
    state.SetLabel(parallel ? "parallel" : "serial");
}
BENCHMARK(detect_four_slow_tools)->Arg(1)->Arg(0)->Unit(benchmark::kMillisecond)->Iterations(5)->UseRealTime();

// One clean tool run end to end (posix_spawn, pipes, reaping): the runner's own cost.
static void run_tool_true(benchmark::State& state) {
    const ah::tool_request rq{{"true"}};
    for (auto _ : state) benchmark::DoNotOptimize(ah::run_tool(rq));
}
BENCHMARK(run_tool_true)->Unit(benchmark::kMicrosecond)->UseRealTime();

// One sysfs attribute read through host_system, as detection reads a hundred or so: the
// cost of the machine's path lookups, which sets what the host probes take (on some virtual
// machines a lookup costs several microseconds).
static void read_sysfs_attribute(benchmark::State& state) {
    const ah::host_system sys;
    for (auto _ : state) benchmark::DoNotOptimize(sys.read_file("/sys/devices/system/cpu/online", 4096));
}
BENCHMARK(read_sysfs_attribute)->Unit(benchmark::kMicrosecond);
BENCHMARK_MAIN();
