// The core in a build without exceptions or RTTI, as embedded users compile it. Uses the
// tables, profiles, requirements and the host probe, and checks their answers.
#include "ai_hwaccel/core.hpp"

#include <cstdio>

namespace ah = ai_hwaccel;

// The same facts, proven at compile time in this configuration.
static_assert(ah::bits_per_weight(ah::quant_format::q4_0) == 4.5);
static_assert(ah::find_device("RTX 4090")->memory_bytes == 24 * ah::units::gib);
static_assert(ah::requirement::gpu().satisfied_by(ah::profile_from_spec(*ah::find_device("MI300X"))));

int main(int argc, char**) {
    int failures = 0;
    auto check = [&](bool ok, const char* what) {
        if (!ok) {
            std::printf("FAILED: %s\n", what);
            ++failures;
        }
    };
    // Run-time lookups with a run-time input, so the work is not folded away.
    const char* names[] = {"H100 SXM", "rtx-4090", "Apple M2 Ultra 76-core"};
    const auto* dev = ah::find_device(names[argc % 3]);
    check(dev != nullptr, "find_device at run time");
    const auto q = ah::parse_quant_format(argc > 5 ? "nonsense" : "Q4_K_M");
    check(q.has_value() && *q == ah::quant_format::q4_k_m, "parse_quant_format at run time");
    const auto p = ah::profile_from_spec(*dev);
    check(ah::requirement::gpu().satisfied_by(p), "requirement at run time");
    if (failures == 0) std::puts("core works with -fno-exceptions -fno-rtti");
    return failures;
}
