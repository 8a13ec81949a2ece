#include "ai_hwaccel/core/system_io.hpp"

#include <doctest/doctest.h>

namespace ah = ai_hwaccel;
using namespace ah::literals;

TEST_CASE("memory_info::usable_bytes") {
    ah::memory_info m;
    CHECK(m.usable_bytes() == 0);
    m.total_bytes = {64_GiB, ah::origin::sysfs};
    CHECK(m.usable_bytes() == 64_GiB);
    m.cgroup_limit_bytes = {8_GiB, ah::origin::sysfs}; // a container's limit wins
    CHECK(m.usable_bytes() == 8_GiB);
    m.cgroup_limit_bytes = {128_GiB, ah::origin::sysfs}; // a limit above RAM changes nothing
    CHECK(m.usable_bytes() == 64_GiB);
}

TEST_CASE("cpu_features") {
    ah::cpu_features f;
    CHECK_FALSE(f.has(ah::cpu_feature::avx2));
    f.set(ah::cpu_feature::avx2);
    f.set(ah::cpu_feature::sme);
    CHECK(f.has(ah::cpu_feature::avx2));
    CHECK(f.has(ah::cpu_feature::sme));
    CHECK_FALSE(f.has(ah::cpu_feature::amx_int8));
}

TEST_CASE("system_io") {
    ah::system_io io;
    CHECK_FALSE(io.has_interconnect(ah::link_scope::inter_node));
    io.interconnects.push_back({ah::interconnect_kind::infiniband, ah::link_scope::inter_node, "mlx5_0 port 1",
                                "ACTIVE", {50.0, ah::origin::sysfs}, {}});
    CHECK(io.has_interconnect(ah::link_scope::inter_node));
    CHECK_FALSE(io.has_interconnect(ah::link_scope::intra_node));
    CHECK(ah::to_string(ah::storage_kind::nvme) == "nvme");
    CHECK(ah::to_string(ah::container_runtime::podman) == "podman");
    CHECK(ah::to_string(ah::cloud_provider::gcp) == "gcp");
}

// What /proc/cpuinfo parsing reads: the table's proc_flag and arm columns, packed.
static_assert([] {
    for (std::size_t i = 0; i < ah::cpu_feature_count; ++i) {
        const auto& row = ah::cpu_feature_table[i];
        if (ah::detail::cpu_proc_flags[i] != row.proc_flag) return false;
        if (((ah::detail::cpu_arm_features >> i) & 1u) != (row.arm ? 1u : 0u)) return false;
    }
    return true;
}());
