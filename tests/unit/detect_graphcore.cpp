#include "ai_hwaccel/detect/graphcore.hpp"

#include "fixtures.hpp"

#include <doctest/doctest.h>

#include <filesystem>
#include <string>

#if AI_HWACCEL_BACKEND_GRAPHCORE

namespace ah = ai_hwaccel;
namespace fs = std::filesystem;

static_assert(ah::backend_probe<ah::graphcore_probe, ah::host_system>);

namespace {

std::string problems_of(const std::vector<ah::parse_problem>& ps) {
    std::string s;
    for (const auto& p : ps) s += std::to_string(p.line) + ": " + p.message + "\n";
    return s;
}

const char* const list_capture = "gc-info/l_ipuof-partition_4-ipus_m2000.txt";
const char* const monitor_capture = "gc-info/gc-monitor_ipuof-partition_4-ipus_m2000.txt";

} // namespace

TEST_CASE("parse_gc_info_list") {
    SUBCASE("real capture: 4 IPUs of an IPU-M2000 over fabric, 3 Multi IPU devices") {
        const auto t = test::capture(list_capture);
        if (!t) return;
        const auto r = ah::parse_gc_info_list(*t);
        INFO(problems_of(r.problems));
        CHECK(r.problems.empty());
        CHECK(r.partition == "ipuof");
        REQUIRE(r.devices.size() == 4);
        REQUIRE(r.ipus.size() == 4);
        for (std::uint32_t i = 0; i < 4; ++i) {
            const auto& d = r.devices[i];
            CHECK(d.index == i);
            CHECK(d.kind == ah::device_kind::graphcore_ipu);
            CHECK(d.maker == ah::vendor::graphcore);
            CHECK(d.available);
            CHECK_FALSE(d.pci.has_value()); // remote over IPU-over-Fabric
            CHECK(d.name.empty());          // the listing does not say the type
            CHECK(r.ipus[i].id == i);
            CHECK(r.ipus[i].target == "Fabric");
            CHECK(r.ipus[i].ipum_host == "172.31.100.130");
            CHECK(r.ipus[i].ipu_number == 3 - i);
        }
        REQUIRE(r.groups.size() == 3);
        CHECK(r.groups[0] == ah::graphcore_multi_ipu{4, {0, 1}});
        CHECK(r.groups[1] == ah::graphcore_multi_ipu{5, {2, 3}});
        CHECK(r.groups[2] == ah::graphcore_multi_ipu{6, {0, 1, 2, 3}});
    }
    SUBCASE("PCIe cards as Graphcore's TensorFlow documentation prints them (IPUConfig.select_ipus)") {
        // Cut from the 16-IPU listing there: padded brackets, "type" for "target", members
        // as "PCIe Id" lines. Before, IPUs 0 and 1 were not understood and each Multi IPU
        // device came out as one more IPU.
        const auto r = ah::parse_gc_info_list("Graphcore device listing:\n\n"
                                              "-+- Id:  [0], type:      [PCIe], PCI Domain: [0000:1a:00.0]\n"
                                              "-+- Id:  [1], type:      [PCIe], PCI Domain: [0000:1b:00.0]\n"
                                              "-+- Id: [10], type:      [PCIe], PCI Domain: [0000:8e:00.0]\n"
                                              "-+- Id: [11], type:      [PCIe], PCI Domain: [0000:8f:00.0]\n"
                                              "-+- Id: [16], type: [Multi IPU]\n"
                                              "|--- PCIe Id:  [1], DNC Id: [0], PCI Domain: [0000:1b:00.0]\n"
                                              "|--- PCIe Id:  [0], DNC Id: [1], PCI Domain: [0000:1a:00.0]\n"
                                              "-+- Id: [17], type: [Multi IPU]\n"
                                              "|--- PCIe Id: [11], DNC Id: [0], PCI Domain: [0000:8f:00.0]\n"
                                              "|--- PCIe Id: [10], DNC Id: [1], PCI Domain: [0000:8e:00.0]\n");
        INFO(problems_of(r.problems));
        CHECK(r.problems.empty());
        REQUIRE(r.devices.size() == 4);
        const std::uint32_t index[] = {0, 1, 10, 11};
        const std::uint8_t bus[] = {0x1a, 0x1b, 0x8e, 0x8f};
        for (std::size_t i = 0; i < 4; ++i) {
            CAPTURE(i);
            CHECK(r.devices[i].index == index[i]);
            CHECK(*r.devices[i].pci == ah::pci_address{0, bus[i], 0, 0});
            CHECK(r.ipus[i].target == "PCIe");
        }
        REQUIRE(r.groups.size() == 2);
        CHECK(r.groups[0] == ah::graphcore_multi_ipu{16, {1, 0}});
        CHECK(r.groups[1] == ah::graphcore_multi_ipu{17, {11, 10}});
    }
    SUBCASE("an Id twice in one partition: reported, the second listing left out") {
        // hand-made
        const auto r = ah::parse_gc_info_list("-+- Id: [0], target: [Fabric]\n-+- Id: [0], target: [Fabric]\n"
                                              "-+- Id: [4], target: [Multi IPU]\n |--- Id: [0]\n"
                                              "-+- Id: [4], target: [Multi IPU]\n |--- Id: [7]\n"
                                              "Partition: p2\n-+- Id: [0], target: [Fabric]\n");
        REQUIRE(r.devices.size() == 2); // the second partition may use Id 0 again
        CHECK(r.devices[0].available);
        CHECK_FALSE(r.devices[1].available);
        REQUIRE(r.groups.size() == 1);
        CHECK(r.groups[0] == ah::graphcore_multi_ipu{4, {0}});
        REQUIRE(r.problems.size() == 2);
        CHECK(r.problems[0].message == "Id 0 listed twice; the second listing ignored");
        CHECK(r.problems[1].message == "Id 4 listed twice; the second listing ignored");
    }
    SUBCASE("hand-made: another partition is not active; a PCI address is taken") {
        const auto r = ah::parse_gc_info_list("Graphcore device listing:\n"
                                              "Partition: p1 [active]\n"
                                              "-+- Id: [0], target: [PCIe], PCI Domain: [0000:35:00.0]\n"
                                              "Partition: p2\n"
                                              "-+- Id: [0], target: [Fabric], IPU-M host: [10.0.0.1], IPU#: [0]\n");
        INFO(problems_of(r.problems));
        CHECK(r.problems.empty());
        CHECK(r.partition == "p1");
        REQUIRE(r.devices.size() == 2);
        CHECK(*r.devices[0].pci == ah::pci_address{0, 0x35, 0, 0});
        CHECK(r.devices[0].available);
        CHECK_FALSE(r.devices[1].available);
    }
    SUBCASE("hostile input") {
        CHECK(ah::parse_gc_info_list("").devices.empty());
        CHECK(ah::parse_gc_info_list("").problems.empty());
        auto r = ah::parse_gc_info_list("-+- Id: [x]\n |--- Id: [1]\n-+- Id: [0], target: [Fabric], IPU#: [zz]\n"
                                        "-+- Id: [1], target: [Fab\n-+- Id: [99999999999999999999999]\nrandom\n");
        CHECK(r.devices.size() == 1);
        CHECK(r.problems.size() == 6);
        r = ah::parse_gc_info_list("-+- Id: [0], target: [\xff\xfe]\n");
        REQUIRE(r.devices.size() == 1);
        CHECK(r.problems.size() == 1);
        CHECK(r.ipus[0].target == "??");
        std::string many;
        for (int i = 0; i < 3000; ++i) many += "-+- Id: [" + std::to_string(i) + "], target: [Fabric]\n";
        r = ah::parse_gc_info_list(many);
        CHECK(r.devices.size() == ah::detail::parsing::max_rows);
        CHECK(r.problems.size() == 1);
        r = ah::parse_gc_info_list("-+- " + std::string(1 << 20, '['));
        CHECK(r.problems.size() == 1);
        std::string commas = "-+- Id: [0]";
        for (int i = 0; i < 10000; ++i) commas += ", a: [b]";
        CHECK(ah::parse_gc_info_list(commas).problems.size() == 1);
    }
}

TEST_CASE("parse_gc_monitor") {
    SUBCASE("real capture: 4 IPUs of type M2000") {
        const auto t = test::capture(monitor_capture);
        if (!t) return;
        const auto r = ah::parse_gc_monitor(*t);
        INFO(problems_of(r.problems));
        CHECK(r.problems.empty());
        CHECK(r.partition == "ipuof");
        REQUIRE(r.devices.size() == 4);
        for (std::uint32_t i = 0; i < 4; ++i) {
            const auto& d = r.devices[i];
            CHECK(d.index == i);
            CHECK(d.name.view() == "M2000");
            CHECK(d.uuid.empty()); // serials are not copied
            REQUIRE(d.spec != nullptr);
            CHECK(d.spec->name == "Graphcore Colossus MK2 GC200 IPU");
            CHECK(d.memory_bytes.from == ah::origin::catalogue);
            CHECK(*d.compute_units == 1472u);
        }
    }
    SUBCASE("two IPU-Machines: a border between their rows, then the processes box") {
        // The 8-IPU table of the "Command Line Tools" chapter of Graphcore's tutorials
        // (public copy, file id 16213440070), followed by its attached-processes example,
        // whose rows have as many cells as the device table's and are not devices.
        const std::string machines =
            "+---------------+--------------------------------------------------------------------------------+\n"
            "|  gc-monitor   |            Partition: p1 (gcd:0) [active] has 8 reconfigurable IPUs            |\n"
            "+-------------+--------------------+--------+--------------+----------+------+----+------+-------+\n"
            "|    IPU-M    |       Serial       |IPU-M SW|Server version|  ICU FW  | Type | ID | IPU# |Routing|\n"
            "+-------------+--------------------+--------+--------------+----------+------+----+------+-------+\n"
            "|  10.1.5.10  | 0024.0002.8203321  | 2.5.0  |    1.9.0     |  2.4.4   |M2000 | 0  |  3   |  DNC  |\n"
            "|  10.1.5.10  | 0024.0002.8203321  | 2.5.0  |    1.9.0     |  2.4.4   |M2000 | 1  |  2   |  DNC  |\n"
            "|  10.1.5.10  | 0024.0001.8203321  | 2.5.0  |    1.9.0     |  2.4.4   |M2000 | 2  |  1   |  DNC  |\n"
            "|  10.1.5.10  | 0024.0001.8203321  | 2.5.0  |    1.9.0     |  2.4.4   |M2000 | 3  |  0   |  DNC  |\n"
            "+-------------+--------------------+--------+--------------+----------+------+----+------+-------+\n"
            "|  10.1.5.11  | 0013.0002.8204921  | 2.5.0  |    1.9.0     |  2.4.4   |M2000 | 4  |  3   |  DNC  |\n"
            "|  10.1.5.11  | 0013.0002.8204921  | 2.5.0  |    1.9.0     |  2.4.4   |M2000 | 5  |  2   |  DNC  |\n"
            "|  10.1.5.11  | 0013.0001.8204921  | 2.5.0  |    1.9.0     |  2.4.4   |M2000 | 6  |  1   |  DNC  |\n"
            "|  10.1.5.11  | 0013.0001.8204921  | 2.5.0  |    1.9.0     |  2.4.4   |M2000 | 7  |  0   |  DNC  |\n"
            "+-------------+--------------------+--------+--------------+----------+------+----+------+-------+\n";
        const std::string processes =
            "+------------------------------------------------------------------------+------------------------+-----------------+\n"
            "|                     Attached processes in partition p1                 |          IPU           |      Board      |\n"
            "+--------+-----------------------------------------+--------+------------+----+----------+--------+--------+--------+\n"
            "|  PID   |                 Command                 |  Time  |    User    | ID |  Clock   |  Temp  |  Temp  | Power  |\n"
            "+--------+-----------------------------------------+--------+------------+----+----------+--------+--------+--------+\n"
            "| 81816  |           gc-hosttraffictest            |  10s   |  justina   | 14 | 1300MHz  | 33.7 C | 35.0 C |113.7 W |\n"
            "+--------+-----------------------------------------+--------+------------+----+----------+--------+--------+--------+\n"
            "| 81816  |           gc-hosttraffictest            |  10s   |  justina   | 12 | 1300MHz  | 31.4 C | 32.8 C |107.1 W |\n"
            "+--------+-----------------------------------------+--------+------------+----+----------+--------+--------+--------+\n";
        for (const auto& text : {machines, machines + processes}) {
            const auto r = ah::parse_gc_monitor(text);
            INFO(problems_of(r.problems));
            CHECK(r.problems.empty());
            CHECK(r.partition == "p1");
            REQUIRE(r.devices.size() == 8);
            for (std::uint32_t i = 0; i < 8; ++i) {
                CHECK(r.devices[i].index == i);
                REQUIRE(r.devices[i].spec != nullptr);
                CHECK(r.devices[i].spec->name == "Graphcore Colossus MK2 GC200 IPU");
            }
        }
        // A row cut short after the first machine: the table ends there, nothing invented.
        const auto cut = ah::parse_gc_monitor(machines.substr(0, machines.find("|  10.1.5.11")) + "|  10.1.5.11 | 00\n");
        CHECK(cut.devices.size() == 4);
    }
    SUBCASE("hostile input") {
        CHECK(ah::parse_gc_monitor("").devices.empty());
        CHECK(ah::parse_gc_monitor("").problems.empty());
        CHECK(ah::parse_gc_monitor("garbage\n").problems.size() == 1); // not a table row
        auto r = ah::parse_gc_monitor("| ID | Type |\n| x | M2000 |\n| 1 |\n| 2 | \xff |\n| 3 | Z9 |\n");
        REQUIRE(r.devices.size() == 2);
        CHECK(r.problems.size() == 3);
        CHECK(r.devices[1].spec == nullptr);
        r = ah::parse_gc_monitor("|" + std::string(1 << 20, '|'));
        CHECK(r.devices.empty());
        r = ah::parse_gc_monitor("| ID | Type |\n| 0 | M2000 |\n| 0 | M2000 |\n| 1 | M2000 |\n");
        CHECK(r.devices.size() == 2);
        REQUIRE(r.problems.size() == 1);
        CHECK(r.problems[0].message == "ID 0 listed twice; the second row ignored");
    }
}

TEST_CASE("detail::formats::sniff_gc_info_list / sniff_gc_monitor") {
    namespace f = ah::detail::formats;
    if (const auto t = test::capture(list_capture)) {
        CHECK(f::sniff_gc_info_list(*t) == 95);
        CHECK(f::sniff_gc_monitor(*t) == 0);
        ah::capture_parse out;
        out.format = "gc-info-list";
        f::parse_gc_info_list_capture(*t, out);
        CHECK(out.warnings.empty());
        CHECK(out.devices.size() == 4);
    }
    if (const auto t = test::capture(monitor_capture)) {
        CHECK(f::sniff_gc_monitor(*t) == 95);
        CHECK(f::sniff_gc_info_list(*t) == 0);
        ah::capture_parse out;
        out.format = "gc-monitor";
        f::parse_gc_monitor_capture(*t, out);
        CHECK(out.warnings.empty());
        CHECK(out.devices.size() == 4);
    }
    CHECK(f::sniff_gc_monitor("+--+\n| x |\n") == 0);
    CHECK(f::sniff_gc_monitor("") == 0);
    CHECK(f::sniff_gc_info_list("") == 0);
    const test::sniffer_row rows[] = {
        {"gc-info-list", f::sniff_gc_info_list, list_capture},
        {"gc-monitor", f::sniff_gc_monitor, monitor_capture},
    };
    test::check_sniffers(rows, 2);
    ah::capture_parse empty;
    empty.format = "gc-info-list";
    f::parse_gc_info_list_capture("Graphcore device listing:\n", empty);
    CHECK(test::count_kind(empty.warnings, ah::warning_kind::parse_error) == 1);
}

TEST_CASE("graphcore_probe") {
    const auto l = test::capture(list_capture);
    const auto m = test::capture(monitor_capture);
    if (!l || !m) return;
    SUBCASE("both tools replayed: four GC200 IPUs") {
        test::scratch_dir dir;
        dir.write("ai-hwaccel-tools/l.txt", *l);
        dir.write("ai-hwaccel-tools/m.txt", *m);
        dir.write("ai-hwaccel-tools/index", "0\tl.txt\tgc-info -l\n0\tm.txt\tgc-monitor\n");
        const auto out = ah::graphcore_probe{}.probe(ah::host_system(dir.path().string()));
        INFO(test::warnings_text(out.warnings));
        CHECK(out.warnings.empty());
        REQUIRE(out.devices.size() == 4);
        for (const auto& d : out.devices) {
            CHECK(d.name.view() == "M2000");
            REQUIRE(d.spec != nullptr);
            CHECK(d.spec->name == "Graphcore Colossus MK2 GC200 IPU");
            CHECK(d.memory_bytes.has_value());
        }
    }
    SUBCASE("gc-monitor absent: IPUs listed, unnamed") {
        test::scratch_dir dir;
        dir.write("ai-hwaccel-tools/l.txt", *l);
        dir.write("ai-hwaccel-tools/index", "0\tl.txt\tgc-info -l\n");
        const auto out = ah::graphcore_probe{}.probe(ah::host_system(dir.path().string()));
        CHECK(out.warnings.empty());
        REQUIRE(out.devices.size() == 4);
        CHECK(out.devices[0].spec == nullptr);
    }
    SUBCASE("gc-monitor exits 0 with nothing: IPUs listed, unnamed, and said") {
        test::scratch_dir dir;
        dir.write("ai-hwaccel-tools/l.txt", *l);
        dir.write("ai-hwaccel-tools/m.txt", "");
        dir.write("ai-hwaccel-tools/index", "0\tl.txt\tgc-info -l\n0\tm.txt\tgc-monitor\n");
        const auto out = ah::graphcore_probe{}.probe(ah::host_system(dir.path().string()));
        REQUIRE(out.devices.size() == 4);
        CHECK(out.devices[0].spec == nullptr);
        REQUIRE(out.warnings.size() == 1);
        CHECK(out.warnings[0].kind == ah::warning_kind::parse_error);
        CHECK(out.warnings[0].subject == "gc-monitor");
    }
    SUBCASE("no gc-info: silence; failing gc-info: a warning") {
        test::scratch_dir dir;
        auto out = ah::graphcore_probe{}.probe(ah::host_system(dir.path().string()));
        CHECK(out.devices.empty());
        CHECK(out.warnings.empty());
        dir.write("ai-hwaccel-tools/index", "timeout\t-\tgc-info -l\n");
        out = ah::graphcore_probe{}.probe(ah::host_system(dir.path().string()));
        CHECK(test::count_kind(out.warnings, ah::warning_kind::tool_timed_out) == 1);
    }
}

#endif // AI_HWACCEL_BACKEND_GRAPHCORE
