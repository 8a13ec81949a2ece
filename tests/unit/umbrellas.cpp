// The two umbrellas: core.hpp (constexpr vocabulary, no range-v3) and ai_hwaccel.hpp.
#include "ai_hwaccel/core.hpp"

#include <doctest/doctest.h>

#if !defined(AI_HWACCEL_TEST_SINGLE_HEADER) && defined(RANGES_V3_DETAIL_CONFIG_HPP)
#error "core.hpp must not pull in range-v3"
#endif

#include "ai_hwaccel/ai_hwaccel.hpp"

namespace ah = ai_hwaccel;

TEST_CASE("core.hpp") {
    static_assert(ah::find_device("H100 SXM")->memory_bytes == 80 * ah::units::gib); // (no pointer comparison: GCC's sanitizers make those non-constant)
    static_assert(ah::bits_per_weight(ah::quant_format::q4_0) == 4.5);
    CHECK(ah::backend_table.size() == ah::backend_count);
}

TEST_CASE("ai_hwaccel.hpp") {
    const auto reg = ah::detect();
    CHECK(reg.size() >= 1);
}
