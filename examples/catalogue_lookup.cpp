// Looks devices up in the catalogue as people write their names, and asks compile-time
// questions of it. The output is deterministic and checked by the tests.
#include <ai_hwaccel/core.hpp>

#include <cstdio>

namespace ah = ai_hwaccel;

// Known at compile time: an embedded build can check its hardware assumptions.
static_assert(ah::find_device("RTX 4090")->memory_bytes == 24 * ah::units::gib);

int main() {
    for (const char* name : {"H100 SXM", "mi300x", "Apple M2 Ultra 76-core", "TPU v5e", "Gaudi 3 OAM"}) {
        const ah::device_spec* d = ah::find_device(name);
        if (!d) {
            std::printf("%-24s not in the catalogue\n", name);
            continue;
        }
        std::printf("%-24s -> %.*s: %.0f GB/s, bf16 %.1f TFLOPS, ", name, static_cast<int>(d->name.size()),
                    d->name.data(), d->memory_bandwidth_gbps, d->peak.bf16);
        if (d->memory_bytes != 0)
            std::printf("%llu GiB\n", static_cast<unsigned long long>(d->memory_bytes / ah::units::gib));
        else
            std::printf("unified memory\n");
    }
    for (const char* q : {"Q4_K_M", "q8_0", "MXFP4", "bf16", "int4"}) {
        const auto f = ah::parse_quant_format(q);
        const std::string_view canonical = ah::to_string(*f);
        std::printf("%-8s -> %-8.*s %.4f bits per weight\n", q, static_cast<int>(canonical.size()), canonical.data(),
                    ah::bits_per_weight(*f));
    }
    return 0;
}
