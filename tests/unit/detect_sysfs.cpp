#include "ai_hwaccel/detect/sysfs.hpp"

#include "fixtures.hpp"

#include <doctest/doctest.h>

#include <filesystem>
#include <set>
#include <string>
#include <vector>

namespace ah = ai_hwaccel;
using cpus = std::vector<std::uint32_t>;

namespace {
using test::denying_view;
static_assert(ah::system_view<denying_view>);
} // namespace

TEST_CASE("parse_cpulist") {
    CHECK(ah::parse_cpulist("0-3,8,10-11\n") == cpus{0, 1, 2, 3, 8, 10, 11});
    CHECK(ah::parse_cpulist("0") == cpus{0});
    CHECK(ah::parse_cpulist("5,1-2") == cpus{1, 2, 5});       // sorted
    CHECK(ah::parse_cpulist("0-3,2-5") == cpus{0, 1, 2, 3, 4, 5}); // each CPU once
    CHECK(ah::parse_cpulist("") == cpus{});                    // a CPU-less NUMA node
    CHECK(ah::parse_cpulist("\n") == cpus{});
    const auto big = ah::parse_cpulist("0-15,32-47");
    REQUIRE(big);
    CHECK(big->size() == 32);
    CHECK(big->front() == 0);
    CHECK(big->back() == 47);
}

TEST_CASE("parse_cpulist hostile input") {
    for (const char* bad : {"garbage", "0-", "-3", "3-1", "0,,1", "0,", ",0", "0-3 ,4", "1 2", "0x3", "+1", "0-3:2/4",
                            "4294967296", "99999999999999999999999999999", "\xff\xfe", "0-1\n2"}) {
        CAPTURE(bad);
        CHECK_FALSE(ah::parse_cpulist(bad).has_value());
        CHECK_FALSE(ah::cpulist_count(bad).has_value());
    }
    // Huge ranges are refused, not allocated.
    CHECK_FALSE(ah::parse_cpulist("0-4294967295").has_value());
    CHECK_FALSE(ah::parse_cpulist("0-18446744073709551615").has_value());
    CHECK_FALSE(ah::parse_cpulist("65536").has_value());
    CHECK(ah::parse_cpulist("65535").value_or(cpus{}) == cpus{65535});
    CHECK(ah::parse_cpulist("0-65535")->size() == 65536);
    CHECK(ah::parse_cpulist("0-7", 8).has_value());
    CHECK_FALSE(ah::parse_cpulist("0-8", 8).has_value());
    // Many items: bounded by the cap too.
    std::string many;
    for (int i = 0; i < 70000; ++i) many += "1,";
    many += "1";
    CHECK_FALSE(ah::parse_cpulist(many).has_value());
}

TEST_CASE("cpulist_count") {
    CHECK(ah::cpulist_count("0-127\n") == 128u);
    CHECK(ah::cpulist_count("0-15,32-47") == 32u);
    CHECK(ah::cpulist_count("0-3,2-5") == 6u);
    CHECK(ah::cpulist_count("") == 0u);
    CHECK(ah::cpulist_count("0-65535") == 65536u);
}

TEST_CASE("detail::parse_u64 and parse_i64") {
    CHECK(ah::detail::parse_u64("18446744073709551615") == UINT64_MAX);
    CHECK_FALSE(ah::detail::parse_u64("18446744073709551616").has_value());
    CHECK_FALSE(ah::detail::parse_u64("1000000000000000000000000000000").has_value()); // 10^30
    CHECK_FALSE(ah::detail::parse_u64("-1").has_value());
    CHECK_FALSE(ah::detail::parse_u64(" 1").has_value());
    CHECK(ah::detail::parse_i64("-1") == -1);
    CHECK(ah::detail::parse_i64("9223372036854775807") == INT64_MAX);
    CHECK_FALSE(ah::detail::parse_i64("9223372036854775808").has_value());
    CHECK_FALSE(ah::detail::parse_i64("-").has_value());
    CHECK(ah::detail::parse_hex_attribute("0x030000\n") == 0x030000u);
    CHECK(ah::detail::parse_hex_attribute("10de") == 0x10deu);
    CHECK_FALSE(ah::detail::parse_hex_attribute("0x").has_value());
    CHECK_FALSE(ah::detail::parse_hex_attribute("0x123456789").has_value());
}

TEST_CASE("detail::join_path") {
    using ah::detail::join_path;
    CHECK(join_path("/sys/block", "../devices/pci0000:00/0000:00:1f.2/block/sda") ==
          "/sys/devices/pci0000:00/0000:00:1f.2/block/sda");
    CHECK(join_path("/sys/devices/pci0000:00/0000:00:01.0/0000:01:00.0", "../../../../bus/pci/drivers/nvidia") ==
          "/sys/bus/pci/drivers/nvidia");
    CHECK(join_path("/sys", "../../../../../etc") == "/etc"); // never above the root
    CHECK(join_path("/a/b", "/c/./d/") == "/c/d");
    CHECK(join_path("/a/b", "..") == "/a");
    CHECK(join_path("/", "") == "/");
}

TEST_CASE("detail::count_distinct") {
    std::vector<std::string> keys{"1 0", "0 1", "1 0", "0 0", "0 1"};
    CHECK(ah::detail::count_distinct(keys) == 3);
    std::vector<std::string> none;
    CHECK(ah::detail::count_distinct(none) == 0);
}

TEST_CASE("detail::resolve_sysfs_link") {
    test::scratch_dir dir;
    dir.write("sys/devices/pci0000:00/0000:00:02.0/block/nvme0n1/queue/rotational", "0\n");
    std::filesystem::create_directories(dir.path() / "sys/block");
    std::filesystem::create_symlink("../devices/pci0000:00/0000:00:02.0/block/nvme0n1", dir.path() / "sys/block/nvme0n1");
    // What git stores for a link where it cannot make one: a file holding the target.
    dir.write("sys/block/sda", "../devices/pci0000:00/0000:00:1f.2/host4/target4:0:0/4:0:0:0/block/sda");
    dir.write("sys/block/notalink", "hello\n");
    const ah::host_system sys(dir.path().string());
    CHECK(ah::detail::resolve_sysfs_link(sys, "/sys/block/nvme0n1") == "/sys/devices/pci0000:00/0000:00:02.0/block/nvme0n1");
    CHECK(ah::detail::resolve_sysfs_link(sys, "/sys/block/sda") ==
          "/sys/devices/pci0000:00/0000:00:1f.2/host4/target4:0:0/4:0:0:0/block/sda");
    CHECK_FALSE(ah::detail::resolve_sysfs_link(sys, "/sys/block/notalink").has_value());
    CHECK_FALSE(ah::detail::resolve_sysfs_link(sys, "/sys/block/missing").has_value());
    CHECK_FALSE(ah::detail::resolve_sysfs_link(sys, "/sys/devices").has_value()); // a directory
    CHECK_FALSE(ah::detail::looks_like_stored_link("../a\nb"));
    CHECK_FALSE(ah::detail::looks_like_stored_link("../\x01"));
}

TEST_CASE("detail::read_optional_file") {
    test::scratch_dir dir;
    dir.write("present", "1\n");
    dir.write("big", std::string(100, 'x'));
    dir.write("secret", "x");
    denying_view sys(dir.path().string());
    sys.denied.insert("/secret");
    std::vector<ah::warning> w;
    CHECK(ah::detail::read_optional_file(sys, "/present", 10, w) == "1\n");
    CHECK_FALSE(ah::detail::read_optional_file(sys, "/missing", 10, w).has_value());
    CHECK(w.empty()); // absent is not a warning
    CHECK_FALSE(ah::detail::read_optional_file(sys, "/secret", 10, w).has_value());
    REQUIRE(w.size() == 1);
    CHECK(w[0].kind == ah::warning_kind::permission_denied);
    CHECK(w[0].subject == "/secret");
    CHECK(ah::detail::read_optional_file(sys, "/big", 10, w) == std::string(10, 'x'));
    REQUIRE(w.size() == 2);
    CHECK(w[1].kind == ah::warning_kind::output_truncated);
    CHECK_FALSE(ah::detail::read_optional_file(sys, "/", 10, w).has_value()); // a directory
    REQUIRE(w.size() == 3);
    CHECK(w[2].kind == ah::warning_kind::read_error);
}

TEST_CASE("to_decimal and add_value_warning") {
    CHECK(ah::detail::to_decimal(0) == "0");
    CHECK(ah::detail::to_decimal(UINT64_MAX) == "18446744073709551615");
    std::vector<ah::warning> w;
    ah::detail::add_value_warning(w, ah::warning_kind::parse_error, "/sys/x", "not a rate:", "fast");
    ah::detail::add_value_warning(w, ah::warning_kind::parse_error, "/sys/y", "unknown", std::string(50, 'a'));
    REQUIRE(w.size() == 2);
    CHECK(w[0].subject == "/sys/x");
    CHECK(w[0].message == "not a rate: 'fast'");
    CHECK(w[1].message == "unknown '" + std::string(40, 'a') + "'"); // cut to 40 characters
}

TEST_CASE("detail::with_numbers") {
    using ah::detail::with_numbers;
    CHECK(with_numbers("{} socket(s) and {} core(s)", {2, 96}) == "2 socket(s) and 96 core(s)");
    CHECK(with_numbers("past {}", {UINT64_MAX}) == "past 18446744073709551615");
    CHECK(with_numbers("{}{}", {1, 2}) == "12");        // placeholders side by side
    CHECK(with_numbers("no numbers", {}) == "no numbers");
    CHECK(with_numbers("{} and {}", {7}) == "7 and {}"); // a placeholder past the numbers stays
    CHECK(with_numbers("{}", {1, 2}) == "1");            // numbers past the placeholders are not shown
    CHECK(with_numbers("{ } {", {3}) == "{ } {");        // only "{}" is a placeholder
    CHECK(with_numbers("", {}) == "");
}

