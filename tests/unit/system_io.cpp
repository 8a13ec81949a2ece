#include "ai_hwaccel/core/system_io.hpp"
#include "ai_hwaccel/core/catalogue.hpp"

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

namespace {

// Each link's devices, in order: the groups catalogue_links made.
std::vector<std::vector<std::uint32_t>> groups_of(const std::vector<ah::interconnect>& links) {
    std::vector<std::vector<std::uint32_t>> out;
    for (const auto& l : links) out.push_back(l.devices);
    return out;
}

} // namespace

TEST_CASE("catalogue_links") {
    using groups = std::vector<std::vector<std::uint32_t>>;
    const auto& h100 = *ah::find_device("H100 SXM");
    REQUIRE(h100.link_domain == 8);

    SUBCASE("an HGX part: boards of eight, each its own NVSwitch") {
        const auto links = ah::catalogue_links(h100, 16);
        CHECK(groups_of(links) == groups{{0, 1, 2, 3, 4, 5, 6, 7}, {8, 9, 10, 11, 12, 13, 14, 15}});
        for (const auto& l : links) {
            CHECK(l.kind == ah::interconnect_kind::nvlink);
            CHECK(l.scope == ah::link_scope::intra_node);
            CHECK(l.bandwidth_gbps.value_or(0) == 900);
            CHECK(l.bandwidth_gbps.from == ah::origin::catalogue);
        }
        CHECK(links[0].name == "catalogue link, devices 0-7");
        CHECK(links[1].name == "catalogue link, devices 8-15");
        // Fewer than a board: one link over them all, named without a range.
        const auto four = ah::catalogue_links(h100, 4);
        CHECK(groups_of(four) == groups{{0, 1, 2, 3}});
        CHECK(four[0].name == "catalogue link");
        CHECK(groups_of(ah::catalogue_links(h100, 8)) == groups{{0, 1, 2, 3, 4, 5, 6, 7}});
        CHECK(groups_of(ah::catalogue_links(h100, 10)) == groups{{0, 1, 2, 3, 4, 5, 6, 7}, {8, 9}});
    }
    SUBCASE("bridged cards: pairs, and an odd card joined by none") {
        const auto& rtx3090 = *ah::find_device("RTX 3090");
        CHECK(rtx3090.link_domain == 2);
        CHECK(groups_of(ah::catalogue_links(rtx3090, 4)) == groups{{0, 1}, {2, 3}});
        CHECK(groups_of(ah::catalogue_links(rtx3090, 3)) == groups{{0, 1}});
        CHECK(ah::catalogue_links(rtx3090, 1).empty());
        CHECK(ah::catalogue_links(rtx3090, 0).empty());
    }
    SUBCASE("a full mesh: the domain is the peers and the device itself") {
        const auto& mi300x = *ah::find_device("MI300X");
        CHECK(mi300x.link_domain == mi300x.link_peers + 1);
        CHECK(ah::catalogue_links(mi300x, 12).size() == 2);
    }
    SUBCASE("no link faster than PCIe: none listed") {
        CHECK(ah::catalogue_links(*ah::find_device("RTX 4090"), 4).empty());
        CHECK(ah::catalogue_links(*ah::find_device("L4"), 8).empty());
    }
    SUBCASE("a domain not known: one link over every device") {
        auto spec = h100;
        spec.link_domain = 0;
        const auto links = ah::catalogue_links(spec, 40);
        REQUIRE(links.size() == 1);
        CHECK(links[0].devices.size() == 40);
        CHECK(links[0].name == "catalogue link");
    }
    SUBCASE("every catalogue row: groups of its domain, covering all but a lone last device") {
        for (const auto& row : ah::device_catalogue) {
            for (std::uint32_t n : {0u, 1u, 2u, 3u, 7u, 9u, 16u, 73u, 256u}) {
                const auto links = ah::catalogue_links(row, n);
                std::uint32_t next = 0;
                for (const auto& l : links) {
                    REQUIRE(l.devices.size() >= 2);
                    if (row.link_domain != 0) CHECK(l.devices.size() <= row.link_domain);
                    for (auto d : l.devices) CHECK(d == next++);
                }
                const bool linked = row.link != ah::interconnect_kind::none && row.link != ah::interconnect_kind::pcie;
                const bool lone_last = row.link_domain != 0 && n % row.link_domain == 1;
                CHECK(next == (!linked || n < 2 ? 0 : lone_last ? n - 1 : n));
            }
        }
    }
}
