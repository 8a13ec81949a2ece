#include "ai_hwaccel/core/units.hpp"

#include <doctest/doctest.h>

namespace ah = ai_hwaccel;
using namespace ah::literals;

TEST_CASE("units") {
    static_assert(80_GiB == 85'899'345'920ull);
    static_assert(80_GB == 80'000'000'000ull);
    CHECK(ah::units::to_gib(24_GiB) == doctest::Approx(24.0));
    CHECK(ah::units::to_gb(24_GiB) == doctest::Approx(25.769803776));
    CHECK(ah::units::mebibytes(1.5) == 1'572'864);
}

TEST_CASE("pcie_bandwidth_gbps") {
    // PCIe 4.0 x16: 16 GT/s × 16 lanes × 128/130 / 8 = 31.5 GB/s each way.
    CHECK(ah::units::pcie_bandwidth_gbps_for_generation(4, 16) == doctest::Approx(31.5077).epsilon(1e-4));
    // PCIe 1.0 x1: 2.5 GT/s with 8b/10b = 0.25 GB/s.
    CHECK(ah::units::pcie_bandwidth_gbps_for_generation(1, 1) == doctest::Approx(0.25));
    CHECK(ah::units::pcie_bandwidth_gbps_for_generation(0, 16) == 0.0);
    CHECK(ah::units::pcie_bandwidth_gbps_for_generation(5, 0) == 0.0);
    CHECK(ah::units::pcie_bandwidth_gbps_for_generation(9, 16) == 0.0);
}

TEST_CASE("gbit_to_gbyte") {
    CHECK(ah::units::gbit_to_gbyte(200.0) == doctest::Approx(25.0)); // HDR InfiniBand
}
