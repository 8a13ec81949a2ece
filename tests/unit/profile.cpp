#include "ai_hwaccel/core/profile.hpp"
#include "ai_hwaccel/core/catalogue.hpp"

#include <doctest/doctest.h>

#include <array>

namespace ah = ai_hwaccel;

TEST_CASE("sourced") {
    ah::sourced<double> v;
    CHECK_FALSE(v.has_value());
    CHECK(v.value_or(7.0) == 7.0);
    CHECK(v.offer(1.0, ah::origin::catalogue));
    CHECK(v.offer(2.0, ah::origin::tool));            // a reading beats a lookup
    CHECK_FALSE(v.offer(3.0, ah::origin::estimated)); // a guess never replaces a reading
    CHECK(*v == 2.0);
    CHECK(v.from == ah::origin::tool);
    CHECK_FALSE(v.offer(4.0, ah::origin::none));
    v.reset();
    CHECK_FALSE(v);
}

TEST_CASE("origin") {
    for (auto o : {ah::origin::none, ah::origin::estimated, ah::origin::catalogue, ah::origin::measured,
                   ah::origin::user, ah::origin::sysfs, ah::origin::tool})
        CHECK(ah::parse_origin(ah::to_string(o)) == o);
    CHECK_FALSE(ah::parse_origin("measured-ish").has_value());
}

TEST_CASE("profile_from_spec") {
    const auto* spec = ah::find_device("H100 SXM");
    const auto p = ah::profile_from_spec(*spec, 3);
    CHECK(p.kind == ah::device_kind::cuda_gpu);
    CHECK(p.index == 3);
    CHECK(p.name.view() == spec->name);
    CHECK(p.memory_bytes.from == ah::origin::catalogue);
    CHECK(*p.memory_bytes == 81559 * ah::units::mib); // what nvidia-smi reports of its 80 GiB
    CHECK(p.memory_bandwidth_gbps.from == ah::origin::catalogue);
    CHECK(p.supports(ah::dtype::fp8));
    CHECK_FALSE(p.supports(ah::dtype::fp4));
    CHECK(p.pcie_bandwidth_gbps() == doctest::Approx(63.0).epsilon(0.01)); // PCIe 5.0 x16
    CHECK(p.spec == spec);
    CHECK(p.is_accelerator());
    CHECK(p.backend() == ah::backend_id::cuda);
}

TEST_CASE("accelerator_profile::apply_spec") {
    // What a tool measured is kept; only gaps are filled, and marked as catalogue values.
    ah::accelerator_profile p;
    p.kind = ah::device_kind::cuda_gpu;
    p.memory_bytes = {81559ull * ah::units::mib, ah::origin::tool};
    p.apply_spec(*ah::find_device("H100 SXM"));
    CHECK(*p.memory_bytes == 81559ull * ah::units::mib);
    CHECK(p.memory_bytes.from == ah::origin::tool);
    CHECK(p.memory_bandwidth_gbps.from == ah::origin::catalogue);
    CHECK(p.maker == ah::vendor::nvidia);
    CHECK(p.arch.view() == "9.0");
}

TEST_CASE("accelerator_profile in constant expressions") {
    constexpr std::array<ah::accelerator_profile, 2> fleet{
        ah::profile_from_spec(*ah::find_device("H100 SXM"), 0),
        ah::profile_from_spec(*ah::find_device("H100 SXM"), 1)};
    constexpr auto total = fleet[0].memory_bytes.value + fleet[1].memory_bytes.value;
    static_assert(total == 2 * 81559 * ah::units::mib);
    CHECK(fleet[1].index == 1);
}

TEST_CASE("accelerator_profile defaults") {
    const ah::accelerator_profile cpu;
    CHECK(cpu.is_cpu());
    CHECK_FALSE(cpu.is_accelerator());
    CHECK_FALSE(cpu.memory_bytes.has_value());
    CHECK(cpu.pcie_bandwidth_gbps() == 0);
    ah::accelerator_profile llvmpipe;
    llvmpipe.kind = ah::device_kind::vulkan_gpu;
    llvmpipe.software = true;
    CHECK_FALSE(llvmpipe.is_accelerator());
}
