// Parsing benchmarks: vendor tool output in, profiles out.
//   ./build/benchmarks/bench_parse
// The 8-GPU `nvidia-smi -q` text is a real capture (8 x H100 80GB HBM3, driver 535.161.08,
// from the shared fixtures); the query CSV is the form the CUDA probe asks for (20 fields,
// noheader, nounits), for the same eight GPUs, from tests/machines. Both paths come from
// CMake (AI_HWACCEL_BENCH_NVIDIA_Q, AI_HWACCEL_BENCH_NVIDIA_CSV); a missing file skips
// the benchmark with a message.
#include "ai_hwaccel/detect/nvidia.hpp"
#include "ai_hwaccel/detect/nvidia_reports.hpp"

#include <benchmark/benchmark.h>

#include <cstdint>
#include <fstream>
#include <iterator>
#include <optional>
#include <sstream>
#include <string>

namespace ah = ai_hwaccel;

#ifndef AI_HWACCEL_BENCH_NVIDIA_Q
#define AI_HWACCEL_BENCH_NVIDIA_Q ""
#endif
#ifndef AI_HWACCEL_BENCH_NVIDIA_CSV
#define AI_HWACCEL_BENCH_NVIDIA_CSV ""
#endif

namespace {

std::optional<std::string> slurp(const char* path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) return std::nullopt;
    std::ostringstream s;
    s << in.rdbuf();
    return s.str();
}

void label(benchmark::State& state, const ah::nvidia_query_result& r, std::size_t bytes) {
    state.SetLabel(std::to_string(r.devices.size()) + " GPUs, " + std::to_string(r.problems.size()) +
                   " problems, " + std::to_string(bytes) + " bytes");
    state.SetBytesProcessed(state.iterations() * static_cast<std::int64_t>(bytes));
}

void parse_nvidia_smi_q_8gpu(benchmark::State& state) {
    const auto text = slurp(AI_HWACCEL_BENCH_NVIDIA_Q);
    if (!text) {
        state.SkipWithError("capture not found: " AI_HWACCEL_BENCH_NVIDIA_Q);
        return;
    }
    for (auto _ : state) benchmark::DoNotOptimize(ah::parse_nvidia_smi_q(*text));
    label(state, ah::parse_nvidia_smi_q(*text), text->size());
}
BENCHMARK(parse_nvidia_smi_q_8gpu)->Unit(benchmark::kMicrosecond);

void parse_nvidia_smi_query_csv_8gpu(benchmark::State& state) {
    const auto text = slurp(AI_HWACCEL_BENCH_NVIDIA_CSV);
    if (!text) {
        state.SkipWithError("capture not found: " AI_HWACCEL_BENCH_NVIDIA_CSV);
        return;
    }
    const std::string fields = ah::detail::nvidia::query_field_list();
    for (auto _ : state) benchmark::DoNotOptimize(ah::parse_nvidia_smi_query_csv(*text, fields));
    label(state, ah::parse_nvidia_smi_query_csv(*text, fields), text->size());
}
BENCHMARK(parse_nvidia_smi_query_csv_8gpu)->Unit(benchmark::kMicrosecond);

} // namespace

BENCHMARK_MAIN();
