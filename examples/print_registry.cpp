// Detects this machine and prints its registry: every device, the host, the warnings.
#include <ai_hwaccel/ai_hwaccel.hpp>

#include <cstdio>

int main() {
    namespace ah = ai_hwaccel;
    const ah::accelerator_registry reg = ah::detect();
    for (const ah::accelerator_profile& p : reg.all()) {
        std::printf("%-12s %-44s", std::string(ah::to_string(p.kind)).c_str(), p.name.c_str());
        if (p.memory_bytes)
            std::printf(" %8.1f GiB (%s)", ah::units::to_gib(*p.memory_bytes),
                        std::string(ah::to_string(p.memory_bytes.from)).c_str());
        std::printf("\n");
    }
    const auto& cpu = reg.host().cpu;
    std::printf("host: %u socket(s), %u core(s), %u thread(s)\n", cpu.sockets, cpu.cores, cpu.threads);
    std::printf("accelerators: %s\n", reg.has_accelerator() ? "yes" : "none");
    for (const ah::warning& w : reg.warnings()) std::printf("warning: %s\n", ah::to_string(w).c_str());
    return 0;
}
