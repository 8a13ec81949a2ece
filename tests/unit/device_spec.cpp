#include "ai_hwaccel/core/device_spec.hpp"

#include <doctest/doctest.h>

namespace ah = ai_hwaccel;

TEST_CASE("peak_throughput") {
    constexpr ah::peak_throughput p{.fp32 = 67, .bf16 = 989.4, .fp8 = 1978.9};
    static_assert(p[ah::dtype::bf16] == 989.4);
    static_assert(p.supports(ah::dtype::fp8) && !p.supports(ah::dtype::fp4));
    CHECK(p[ah::dtype::int4] == 0);
}

TEST_CASE("device_spec") {
    constexpr ah::device_spec s{.name = "Example", .aliases = {"ex"}, .maker = ah::vendor::nvidia,
                                .kind = ah::device_kind::cuda_gpu, .pci_device_ids = {0x1234},
                                .memory_bytes = 16 * ah::units::gib,
                                .source = "https://example.invalid/spec"};
    static_assert(s.aliases.size() == 1 && s.pci_device_ids.contains(0x1234));
    CHECK(s.link == ah::interconnect_kind::none);
    CHECK(s.memory_bandwidth_gbps == 0); // unset means unknown, never a guess
}
