// The smallest useful program: detect this host (CPU, memory, NUMA, PCI, storage,
// environment) and print how many devices it has and the best one. benchmarks/binary_size.sh
// builds it CPU-only (AI_HWACCEL_BACKENDS_NONE=1), without JSON (AI_HWACCEL_JSON=0), at
// -Os, and reports its stripped size.
#include <ai_hwaccel/detect/detect.hpp>

#include <cstdio>

int main() {
    namespace ah = ai_hwaccel;
    const auto reg = ah::detect();
    std::printf("%zu device(s)\n", reg.size());
    if (const auto best = reg.best_available())
        std::printf("best: %s\n", best->name.c_str());
    return 0;
}
