#include "ai_hwaccel/detect/gaudi.hpp"

#include "fixtures.hpp"

#include <doctest/doctest.h>

#include <filesystem>
#include <string>
#include <vector>

#if AI_HWACCEL_BACKEND_GAUDI

namespace ah = ai_hwaccel;

namespace {

constexpr std::uint64_t mib = 1024ull * 1024;
constexpr std::uint64_t gib = 1024ull * mib;

std::string problems_of(const std::vector<ah::parse_problem>& ps) {
    std::string s;
    for (const auto& p : ps) s += std::to_string(p.line) + ": " + p.message + "\n";
    return s;
}

ah::pci_address bus(std::uint8_t b) { return ah::pci_address{0, b, 0, 0}; }

} // namespace

TEST_CASE("parse_hl_smi_table: real captures") {
    SUBCASE("8x Gaudi 2 HL-225, hl-smi 1.21.1, busy") {
        const auto t = test::capture("hl-smi/default-table_8x-gaudi2-hl225_v1.21.1_busy.txt");
        if (!t) return;
        const auto r = ah::parse_hl_smi_table(*t);
        INFO(problems_of(r.problems));
        CHECK(r.problems.empty());
        CHECK(r.hl_smi_version == "hl-1.21.1-fw-59.2.3.0");
        REQUIRE(r.devices.size() == 8);
        REQUIRE(r.module_ids.size() == 8);
        const std::uint8_t buses[] = {0x33, 0x34, 0x4e, 0x9a, 0x9b, 0xb3, 0xb4, 0x4d};
        const std::uint64_t used[] = {94963, 768, 90351, 90356, 90353, 90352, 82507, 85926};
        for (std::uint32_t i = 0; i < 8; ++i) {
            CAPTURE(i);
            const auto& d = r.devices[i];
            CHECK(d.index == i);
            CHECK(d.kind == ah::device_kind::gaudi);
            CHECK(d.maker == ah::vendor::habana);
            CHECK(d.name.view() == "HL-225");
            REQUIRE(d.pci);
            CHECK(*d.pci == bus(buses[i]));
            CHECK(*d.memory_bytes == 98304 * mib);
            CHECK(*d.memory_bytes == 96 * gib);
            CHECK(d.memory_bytes.from == ah::origin::tool);
            CHECK(*d.memory_used_bytes == used[i] * mib);
            CHECK(*d.memory_free_bytes == (98304 - used[i]) * mib);
            CHECK(*d.power_limit_watts == 600);
            CHECK(d.driver_version.view() == "1.21.1-bfcec49");
            CHECK_FALSE(r.module_ids[i].has_value());
            REQUIRE(d.spec != nullptr);
            CHECK(d.spec->name == "Intel Gaudi 2");
            CHECK(d.memory_bandwidth_gbps.from == ah::origin::catalogue);
        }
        CHECK(*r.devices[0].temperature_c == 35);
        CHECK(*r.devices[0].power_draw_watts == 525);
        CHECK(*r.devices[0].utilization_percent == 88);
        CHECK(*r.devices[7].temperature_c == 27);
        CHECK(*r.devices[7].power_draw_watts == 92);
        CHECK(*r.devices[7].utilization_percent == 0);
    }
    SUBCASE("8x Gaudi 3 HL-325L, hl-smi 1.21.0 over driver 1.20.1, OpenShift pod") {
        const auto t = test::capture("hl-smi/default-table_8x-gaudi3-hl325l_v1.21.0_openshift-pod.txt");
        if (!t) return;
        const auto r = ah::parse_hl_smi_table(*t);
        INFO(problems_of(r.problems));
        CHECK(r.problems.empty());
        CHECK(r.hl_smi_version == "hl-1.21.0-fw-59.2.1.0");
        REQUIRE(r.devices.size() == 8);
        const std::uint8_t buses[] = {0xe9, 0xc1, 0xb7, 0xad, 0xa3, 0xdf, 0xd5, 0xcb};
        const double watts[] = {228, 226, 225, 228, 228, 229, 231, 227};
        const double temps[] = {36, 37, 36, 40, 36, 39, 36, 38};
        for (std::uint32_t i = 0; i < 8; ++i) {
            CAPTURE(i);
            const auto& d = r.devices[i];
            CHECK(d.index == i);
            CHECK(d.name.view() == "HL-325L");
            CHECK(*d.pci == bus(buses[i]));
            CHECK(*d.memory_bytes == 128 * gib);
            CHECK(*d.memory_used_bytes == 672 * mib);
            CHECK(*d.power_draw_watts == watts[i]);
            CHECK(*d.power_limit_watts == 900);
            CHECK(d.power_limit_watts.from == ah::origin::tool);
            CHECK(*d.temperature_c == temps[i]);
            CHECK(*d.utilization_percent == 0);
            CHECK(d.driver_version.view() == "1.20.1-366eb9c"); // the driver's, not hl-smi's 1.21.0
            REQUIRE(d.spec != nullptr);
            CHECK(d.spec->name == "Intel Gaudi 3 HL-325L");
        }
    }
    SUBCASE("2x Gaudi 2, hl-smi 1.17.1 (older banner and headers, Perf N/A)") {
        const auto t = test::capture("hl-smi/default-table_gaudi2_v1.17.1_openshift-job.txt");
        if (!t) return;
        const auto r = ah::parse_hl_smi_table(*t);
        INFO(problems_of(r.problems));
        CHECK(r.problems.empty());
        CHECK(r.hl_smi_version == "hl-1.17.1-fw-51.5.0");
        REQUIRE(r.devices.size() == 2);
        CHECK(*r.devices[0].pci == bus(0x4d));
        CHECK(*r.devices[1].pci == bus(0xb4));
        CHECK(*r.devices[0].temperature_c == 31);
        CHECK(*r.devices[1].temperature_c == 28);
        CHECK(*r.devices[0].power_draw_watts == 95);
        CHECK(*r.devices[1].power_draw_watts == 85);
        for (const auto& d : r.devices) {
            CHECK(d.name.view() == "HL-225");
            CHECK(*d.memory_bytes == 98304 * mib);
            CHECK(*d.memory_used_bytes == 768 * mib);
            CHECK(*d.power_limit_watts == 600);
            CHECK(d.driver_version.view() == "1.17.1-78932ae");
            REQUIRE(d.spec != nullptr);
            CHECK(d.spec->name == "Intel Gaudi 2");
        }
    }
}

TEST_CASE("parse_hl_smi_log: real capture") {
    const auto t = test::capture("hl-smi/L-i_one-aip_gaudi2-hl225_v1.12.1.txt");
    if (!t) return;
    const auto r = ah::parse_hl_smi_log(*t);
    INFO(problems_of(r.problems));
    CHECK(r.problems.empty());
    CHECK(r.hl_smi_version == "hl-1.12.1-fw-46.0.5.0 (Oct 19 2023 - 01:19:50)");
    REQUIRE(r.devices.size() == 1);
    const auto& d = r.devices[0];
    CHECK(d.index == 0);
    CHECK(d.name.view() == "HL-225");
    CHECK(d.uuid.view() == "01P0-HL2080A0-15-TF8A81-09-07-06");
    REQUIRE(r.module_ids.size() == 1);
    CHECK(r.module_ids[0] == 0u);
    REQUIRE(d.pci);
    CHECK(*d.pci == bus(0x43));
    CHECK(d.pci_device_id == 0x1020);
    CHECK(d.driver_version.view() == "1.12.1-cb7a7bc");
    // "98304 MB": MiB, 96 GiB of HBM.
    CHECK(*d.memory_bytes == 96 * gib);
    CHECK(*d.memory_used_bytes == 768 * mib);
    CHECK(*d.memory_free_bytes == 97536 * mib);
    CHECK(*d.temperature_c == 30); // the hottest "On Chip" sensor
    // The 54 V and 12 V supplies together (50 + 31 W of 550 + 50 W), as hl-smi's table
    // prints them for HL-225s ("81W /  600W" in the 8-card captures).
    CHECK(*d.power_draw_watts == 81);
    CHECK(*d.power_limit_watts == 600);
    CHECK(*d.pcie_max == ah::pcie_link{4, 16});
    CHECK(*d.pcie_current == ah::pcie_link{4, 16});
    CHECK(d.pcie_current.from == ah::origin::tool);
    REQUIRE(d.spec != nullptr); // by PCI id
    CHECK(d.spec->name == "Intel Gaudi 2");
    CHECK(d.peak_from == ah::origin::catalogue);
    CHECK(d.available); // "Module status : Operational"

    // The same log with the module in another state (the driver's "In reset",
    // "Disabled", as sysfs `status` reads): listed, not available.
    for (const char* state : {"In reset", "Disabled"}) {
        CAPTURE(state);
        std::string other = *t;
        const auto at = other.find("Operational");
        REQUIRE(at != std::string::npos);
        other.replace(at, 11, state);
        const auto o = ah::parse_hl_smi_log(other);
        REQUIRE(o.devices.size() == 1);
        CHECK_FALSE(o.devices[0].available);
    }
}

TEST_CASE("parse_hl_smi_query_csv (hand-made: no real capture of the CSV form exists)") {
    SUBCASE("header with units in brackets, values with units") {
        const auto r = ah::parse_hl_smi_query_csv(
            "index, module_id, name, bus_id, memory.total [MiB], memory.used [MiB], power.draw [W], "
            "temperature.aip [C], utilization.aip [%]\n"
            "0, 3, HL-325L, 0000:e9:00.0, 131072 MiB, 672 MiB, 226 W, 36 C, 7 %\n"
            "1, 2, HL-325L, 0000:c1:00.0, 131072 MiB, 672 MiB, 230 W, 39 C, 0 %\n");
        INFO(problems_of(r.problems));
        CHECK(r.problems.empty());
        REQUIRE(r.devices.size() == 2);
        CHECK(r.module_ids[0] == 3u);
        CHECK(r.module_ids[1] == 2u);
        const auto& d = r.devices[0];
        CHECK(d.kind == ah::device_kind::gaudi);
        CHECK(d.name.view() == "HL-325L");
        CHECK(*d.pci == bus(0xe9));
        CHECK(*d.memory_bytes == 128 * gib);
        CHECK(*d.memory_used_bytes == 672 * mib);
        CHECK(*d.power_draw_watts == 226);
        CHECK(*d.temperature_c == 36);
        CHECK(*d.utilization_percent == 7);
        REQUIRE(d.spec != nullptr);
        CHECK(d.spec->name == "Intel Gaudi 3 HL-325L");
        CHECK(*r.devices[1].temperature_c == 39);
    }
    SUBCASE("noheader, nounits: the field list names the columns") {
        const auto r = ah::parse_hl_smi_query_csv("0, HL-225, 98304, 768, N/A, 1.21.1-bfcec49\n",
                                                  "index,name,memory.total,memory.used,uuid,driver_version");
        INFO(problems_of(r.problems));
        CHECK(r.problems.empty());
        REQUIRE(r.devices.size() == 1);
        CHECK(*r.devices[0].memory_bytes == 96 * gib);
        CHECK(r.devices[0].uuid.empty());
        CHECK(r.devices[0].driver_version.view() == "1.21.1-bfcec49");
        CHECK_FALSE(r.module_ids[0].has_value());
    }
    SUBCASE("every mapped field, and fields the library does not map") {
        const auto r = ah::parse_hl_smi_query_csv(
            "2, 5, HL-225, 0000:4d:00.0, 01P0-HL2080A0-15-TF8A81-09-07-06, AM50016138, 1.17.1-78932ae, 98304, 768, "
            "97536, 95, 600, 31, 12, 0, 2023/11/16 04:54:24.000\n",
            "index,module_id,name,bus_id,uuid,serial,driver_version,memory.total,memory.used,memory.free,power.draw,"
            "power.max,temperature.aip,utilization.aip,ecc.errors.dram-corrected.aggregate.total,timestamp");
        INFO(problems_of(r.problems));
        CHECK(r.problems.empty());
        REQUIRE(r.devices.size() == 1);
        const auto& d = r.devices[0];
        CHECK(d.index == 2);
        CHECK(r.module_ids[0] == 5u);
        CHECK(d.uuid.view() == "01P0-HL2080A0-15-TF8A81-09-07-06");
        CHECK(*d.memory_free_bytes == 97536 * mib);
        CHECK(*d.power_limit_watts == 600);
        CHECK(d.power_limit_watts.from == ah::origin::tool);
        CHECK(*d.utilization_percent == 12);
    }
    SUBCASE("a header wins over the field list") {
        const auto r = ah::parse_hl_smi_query_csv("name, memory.total [MiB]\nHL-225, 98304\n", "memory.total,name");
        INFO(problems_of(r.problems));
        CHECK(r.problems.size() == 0);
        REQUIRE(r.devices.size() == 1);
        CHECK(r.devices[0].name.view() == "HL-225");
    }
}

TEST_CASE("hl-smi parsers: hostile input never crashes and is reported") {
    for (const std::string& s :
         {std::string(), std::string("\n\n"), std::string(1 << 20, 'x'), std::string(100'000, '|'),
          std::string("\xff\xfe\x00\x01", 4), std::string(5000, '\n'), std::string("| HL-SMI Version: |\n|=|\n")}) {
        (void)ah::parse_hl_smi_table(s);
        (void)ah::parse_hl_smi_log(s);
        (void)ah::parse_hl_smi_query_csv(s, "index,name");
        (void)ah::parse_hl_smi_query_csv(s);
    }
    CHECK(ah::parse_hl_smi_table("").devices.empty());
    CHECK(ah::parse_hl_smi_table("").problems.empty());
    CHECK(ah::parse_hl_smi_log("").problems.empty());

    // CSV: no header and no field list; wrong widths; out of range; bad units.
    auto r = ah::parse_hl_smi_query_csv("0, 1\n");
    CHECK(r.devices.empty());
    CHECK(r.problems.size() == 1);
    r = ah::parse_hl_smi_query_csv("1, 2, 3\n%%%\n", "index,name");
    CHECK(r.devices.empty());
    CHECK(r.problems.size() == 2);
    r = ah::parse_hl_smi_query_csv(std::string(400, '9') + ", -5, 101, 9 GiB, 00:zz.0, 600000, 99999999\n",
                                   "memory.total,power.draw,utilization.aip,memory.used,bus_id,temperature.aip,index");
    REQUIRE(r.devices.size() == 1);
    CHECK_FALSE(r.devices[0].memory_bytes.has_value());
    CHECK_FALSE(r.devices[0].power_draw_watts.has_value());
    CHECK_FALSE(r.devices[0].utilization_percent.has_value());
    CHECK_FALSE(r.devices[0].memory_used_bytes.has_value());
    CHECK_FALSE(r.devices[0].pci.has_value());
    CHECK_FALSE(r.devices[0].temperature_c.has_value());
    CHECK(r.problems.size() == 7);
    r = ah::parse_hl_smi_query_csv("HL-\xff\x07" "225\n", "name");
    REQUIRE(r.devices.size() == 1);
    CHECK(r.devices[0].name.view() == "HL-??225");
    CHECK(r.problems.size() == 1);
    std::string many;
    for (int i = 0; i < 5000; ++i) many += "x, y\n";
    r = ah::parse_hl_smi_query_csv(many, "name");
    CHECK(r.problems.size() == ah::detail::parsing::max_problems + 1);
    std::string rows;
    for (int i = 0; i < 3000; ++i) rows += "HL-225\n";
    r = ah::parse_hl_smi_query_csv(rows, "name");
    CHECK(r.devices.size() == ah::detail::parsing::max_rows);

    // Table: a device line without its second line; garbage inside the device block.
    const std::string head = "| HL-SMI Version:   hl-1.21.1   |\n| Driver Version:   1.21.1-x   |\n"
                             "| AIP Name | Bus-Id | Util |\n|=====+=====+=====|\n";
    auto t = ah::parse_hl_smi_table(head + "|   0  HL-225  N/A  | 0000:33:00.0  N/A |  0  |\n");
    REQUIRE(t.devices.size() == 1);
    CHECK(t.problems.size() == 1);
    t = ah::parse_hl_smi_table(head + "| x | y | z |\n| a | b |\n|   0  HL-225  N/A  | 0000:zz:00.0  N/A |  0  |\n"
                                      "| N/A  999999C  P0  -5W / 600W | 1MiB / 99999999999999MiB | 200% 0% |\n");
    REQUIRE(t.devices.size() == 1);
    CHECK_FALSE(t.devices[0].pci.has_value());
    CHECK_FALSE(t.devices[0].temperature_c.has_value());
    CHECK(t.devices[0].memory_bytes.from == ah::origin::catalogue); // the HL-225's row, not the garbage
    CHECK_FALSE(t.devices[0].utilization_percent.has_value());
    CHECK(t.problems.size() == 7);
    std::string big = head;
    for (int i = 0; i < 3000; ++i) big += "|   0  HL-225  N/A  | 0000:33:00.0  N/A |  0  |\n| N/A 1C P0 1W / 2W | 1MiB / 2MiB | 0% 0% |\n";
    t = ah::parse_hl_smi_table(big);
    CHECK(t.devices.size() == ah::detail::parsing::max_rows);

    // Log: bad values under known groups.
    auto l = ah::parse_hl_smi_log("[0] AIP (accel0) 0000:43:00.0\n        Module ID : x\n        PCI\n"
                                  "                Device Id : 0x10de2330\n        Memory Usage\n"
                                  "                Total : lots\n        Temperature\n"
                                  "                [ 1] On Chip 0 : hot\n[99999999] AIP\n[x] AIP\n");
    REQUIRE(l.devices.size() == 1);
    CHECK(l.devices[0].pci_device_id == 0);
    CHECK_FALSE(l.devices[0].memory_bytes.has_value());
    CHECK(l.problems.size() == 6);
}

TEST_CASE("parse_hl_smi_table: a long UTF-8 version is cut between characters") {
    // hand-made: one byte, then 40 two-byte characters, past the 64-byte cap.
    std::string v = "a";
    for (int i = 0; i < 40; ++i) v += "\xC3\xA9";
    const auto t = ah::parse_hl_smi_table("| HL-SMI Version:   " + v + "   |\n| Driver Version:   " + v +
                                          "   |\n| AIP Name | Bus-Id | Util |\n|=====+=====+=====|\n");
    CHECK(t.hl_smi_version == v.substr(0, 63)); // "a" and 31 whole characters
    CHECK(t.hl_smi_version.find('?') == std::string::npos);
}

TEST_CASE("detail::formats::sniff_hl_smi_csv / sniff_hl_smi_table / sniff_hl_smi_log") {
    namespace f = ah::detail::formats;
    const test::sniffer_row rows[] = {
        {"hl-smi-table", f::sniff_hl_smi_table, "hl-smi/default-table"},
        {"hl-smi-log", f::sniff_hl_smi_log, "hl-smi/L-i"},
        {"hl-smi-query-csv", f::sniff_hl_smi_csv, nullptr}, // no real CSV capture exists
    };
    std::size_t tables = 0, logs = 0;
    test::check_sniffers(rows, 4, [&](const test::sniffer_row& row, std::string_view, const std::string& text) {
        const bool table = row.sniff == f::sniff_hl_smi_table;
        tables += table;
        logs += !table;
        ah::capture_parse out;
        out.format = row.name;
        (table ? f::parse_hl_smi_table_capture : f::parse_hl_smi_log_capture)(text, out);
        INFO(test::warnings_text(out.warnings));
        CHECK(out.warnings.empty());
        CHECK(!out.devices.empty());
    });
    if (tables + logs != 0) {
        CHECK(tables == 3);
        CHECK(logs == 1);
    }

    // Hand-made CSV headers: hl-smi's own fields make them hl-smi's, above nvidia-smi's 90.
    CHECK(f::sniff_hl_smi_csv("index, module_id, name\n0, 0, HL-325L\n") == 95);
    CHECK(f::sniff_hl_smi_csv("temperature.aip [C], memory.used [MiB]\n36, 672\n") == 95);
    CHECK(f::sniff_hl_smi_csv("index, name, memory.total [MiB]\n0, NVIDIA A10, 23028\n") == 0);
    CHECK(f::sniff_hl_smi_csv("") == 0);
    CHECK(f::sniff_hl_smi_table("") == 0);
    CHECK(f::sniff_hl_smi_log("") == 0);
    ah::capture_parse out;
    out.format = "hl-smi-query-csv";
    f::parse_hl_smi_csv_capture("index, module_id, name\n0, 4, HL-325L\n", out);
    CHECK(out.warnings.empty());
    REQUIRE(out.devices.size() == 1);
    CHECK(out.devices[0].name.view() == "HL-325L");
    ah::capture_parse empty;
    empty.format = "hl-smi-table";
    f::parse_hl_smi_table_capture("", empty);
    CHECK(test::count_kind(empty.warnings, ah::warning_kind::parse_error) == 1);
}

#if AI_HWACCEL_OS_LINUX || AI_HWACCEL_OS_MACOS

namespace {

// A Gaudi 2 on the current accel layout (hand-made sysfs files, attribute names from the
// habanalabs sysfs ABI).
void gaudi2_accel(const test::scratch_dir& d, int n, const std::string& addr, const std::string& status = "Operational") {
    const std::string dev = "sys/bus/pci/devices/" + addr;
    d.write(dev + "/vendor", "0x1da3\n");
    d.write(dev + "/device", "0x1020\n");
    d.write(dev + "/device_type", "GAUDI2\n");
    d.write(dev + "/status", status + "\n");
    d.write(dev + "/module_id", std::to_string(n) + "\n");
    d.write(dev + "/max_power", "600000\n");
    d.write(dev + "/current_link_speed", "16.0 GT/s PCIe\n");
    d.write(dev + "/current_link_width", "16\n");
    std::filesystem::create_directories(d.path() / "sys/class/accel" / ("accel" + std::to_string(n)));
    std::filesystem::create_directory_symlink("../../../bus/pci/devices/" + addr,
                                              d.path() / "sys/class/accel" / ("accel" + std::to_string(n)) / "device");
}

} // namespace

TEST_CASE("gaudi_probe: sysfs only, hl-smi missing (hand-made tree)") {
    test::scratch_dir d;
    gaudi2_accel(d, 0, "0000:33:00.0");
    gaudi2_accel(d, 1, "0000:34:00.0", "Needs reset");
    const auto out = ah::gaudi_probe{}.probe(ah::host_system(d.path().string()));
    INFO(test::warnings_text(out.warnings));
    REQUIRE(out.devices.size() == 2);
    const auto& g = out.devices[0];
    CHECK(g.kind == ah::device_kind::gaudi);
    CHECK(g.name.view() == "Intel Gaudi 2"); // the catalogue's, by PCI id
    CHECK(*g.pci == bus(0x33));
    CHECK(g.pci_device_id == 0x1020);
    CHECK(*g.memory_bytes == 96 * gib);
    CHECK(g.memory_bytes.from == ah::origin::catalogue);
    CHECK(*g.power_limit_watts == 600);
    CHECK(g.power_limit_watts.from == ah::origin::sysfs);
    CHECK(*g.pcie_current == ah::pcie_link{4, 16});
    CHECK(g.available);
    CHECK_FALSE(out.devices[1].available); // "Needs reset"
    // No hl-smi: one warning (the driver lists the devices; there is no PCI bus here).
    CHECK(test::count_kind(out.warnings, ah::warning_kind::tool_not_found) == 1);
    CHECK(out.warnings.size() == 1);
    REQUIRE(out.links.size() == 1);
    CHECK(out.links[0].kind == ah::interconnect_kind::gaudi_roce);
    CHECK(out.links[0].devices == std::vector<std::uint32_t>{0, 1});
    CHECK(out.links[0].bandwidth_gbps.from == ah::origin::estimated);
}

TEST_CASE("gaudi_probe: a container given one card of two (hand-made tree)") {
    // sysfs is not namespaced: both cards show, but only /dev/accel/accel1 was passed in
    // (docker run --device /dev/accel/accel1). Before, both were reported available.
    test::scratch_dir d;
    gaudi2_accel(d, 0, "0000:33:00.0");
    gaudi2_accel(d, 1, "0000:34:00.0");
    d.write("dev/accel/accel1", "");
    auto out = ah::gaudi_probe{}.probe(ah::host_system(d.path().string()));
    REQUIRE(out.devices.size() == 2);
    CHECK_FALSE(out.devices[0].available);
    CHECK(out.devices[1].available);
    // No accel folder in a /dev that lists: no card was passed in.
    std::filesystem::remove_all(d.path() / "dev/accel");
    d.write("dev/null", "");
    out = ah::gaudi_probe{}.probe(ah::host_system(d.path().string()));
    REQUIRE(out.devices.size() == 2);
    CHECK_FALSE(out.devices[0].available);
    CHECK_FALSE(out.devices[1].available);
}

TEST_CASE("gaudi_probe: older /sys/class/habanalabs layout; another vendor's accel device is skipped") {
    test::scratch_dir d;
    d.write("sys/class/habanalabs/hl0/device_type", "GAUDI2\n");
    d.write("sys/class/habanalabs/hl0/status", "Operational\n");
    d.write("sys/class/habanalabs/hl0/pci_addr", "0000:4d:00.0\n");
    d.write("sys/class/habanalabs/hl0/device/vendor", "0x1da3\n");
    d.write("sys/class/habanalabs/hl0/device/device", "0x1020\n");
    auto out = ah::gaudi_probe{}.probe(ah::host_system(d.path().string()));
    REQUIRE(out.devices.size() == 1);
    CHECK(*out.devices[0].pci == bus(0x4d)); // from pci_addr: the folder is no link here
    CHECK(out.links.empty());                // a single device

    test::scratch_dir npu; // an Intel NPU under /sys/class/accel: not a Gaudi, and no warning
    npu.write("sys/class/accel/accel0/device/vendor", "0x8086\n");
    npu.write("sys/class/accel/accel0/device/device", "0x7d1d\n");
    out = ah::gaudi_probe{}.probe(ah::host_system(npu.path().string()));
    CHECK(out.devices.empty());
    CHECK(out.warnings.empty());

    // Both: an older kernel's habanalabs class beside another driver's accel device. The
    // Gaudi is still found (before, any accel device hid the older class).
    d.write("sys/class/accel/accel0/device/vendor", "0x8086\n");
    d.write("sys/class/accel/accel0/device/device", "0x7d1d\n");
    out = ah::gaudi_probe{}.probe(ah::host_system(d.path().string()));
    REQUIRE(out.devices.size() == 1);
    CHECK(*out.devices[0].pci == bus(0x4d));
}

TEST_CASE("gaudi_probe: a refused query falls back on the table (hand-made tree, real table)") {
    const auto table = test::capture("hl-smi/default-table_gaudi2_v1.17.1_openshift-job.txt");
    if (!table) return;
    test::scratch_dir d;
    gaudi2_accel(d, 0, "0000:4d:00.0");
    gaudi2_accel(d, 1, "0000:b4:00.0");
    d.write("ai-hwaccel-tools/hl-smi.txt", *table);
    d.write("ai-hwaccel-tools/index", "2\t-\thl-smi -Q " + ah::detail::gaudi::query_field_list() +
                                          " -f csv,nounits\n0\thl-smi.txt\thl-smi\n");
    const auto out = ah::gaudi_probe{}.probe(ah::host_system(d.path().string()));
    INFO(test::warnings_text(out.warnings));
    CHECK(test::count_kind(out.warnings, ah::warning_kind::tool_failed) == 1);
    CHECK(out.warnings.size() == 1);
    REQUIRE(out.devices.size() == 2);
    CHECK(out.devices[1].name.view() == "HL-225");
    CHECK(*out.devices[1].pci == bus(0xb4));
    CHECK(*out.devices[1].memory_used_bytes == 768 * mib);
    CHECK(out.devices[1].memory_used_bytes.from == ah::origin::tool);
    CHECK(*out.devices[1].memory_bytes == 96 * gib);
    CHECK(out.devices[1].memory_bytes.from == ah::origin::tool);
    CHECK(*out.devices[1].power_draw_watts == 85);
}

TEST_CASE("gaudi_probe: nothing there, nothing said") {
    test::scratch_dir d;
    d.write("proc/meminfo", "MemTotal: 1 kB\n");
    const auto out = ah::gaudi_probe{}.probe(ah::host_system(d.path().string()));
    CHECK(out.devices.empty());
    CHECK(out.warnings.empty());
    CHECK(out.links.empty());
}

TEST_CASE("gaudi_probe: machine handmade-gaudi3-8x-node") {
    const std::string root = std::string(AI_HWACCEL_MACHINES_DIR) + "/handmade-gaudi3-8x-node";
    if (!std::filesystem::exists(root)) return;
    const auto out = ah::gaudi_probe{}.probe(ah::host_system(root));
    INFO(test::warnings_text(out.warnings));
    CHECK(out.warnings.empty());
    REQUIRE(out.devices.size() == 8);
    const std::uint8_t buses[] = {0xe9, 0xc1, 0xb7, 0xad, 0xa3, 0xdf, 0xd5, 0xcb};
    const double watts[] = {228, 226, 225, 228, 228, 229, 231, 227};
    for (std::uint32_t i = 0; i < 8; ++i) {
        CAPTURE(i);
        const auto& d = out.devices[i];
        CHECK(d.index == i);
        CHECK(d.kind == ah::device_kind::gaudi);
        CHECK(d.name.view() == "HL-325L");
        CHECK(*d.pci == bus(buses[i]));
        CHECK(d.pci_device_id == 0x1060);
        CHECK(*d.memory_bytes == 128 * gib);
        CHECK(d.memory_bytes.from == ah::origin::tool);
        CHECK(*d.memory_used_bytes == 672 * mib);
        CHECK(*d.memory_free_bytes == 130400 * mib);
        CHECK(*d.power_draw_watts == watts[i]);
        CHECK(*d.power_limit_watts == 900);
        CHECK(d.power_limit_watts.from == ah::origin::sysfs);
        CHECK(*d.pcie_max == ah::pcie_link{5, 16});
        CHECK(*d.numa_node == (buses[i] >= 0xc8 ? 1 : 0));
        CHECK(d.driver_version.view() == "1.20.1-366eb9c");
        CHECK(d.uuid.empty()); // N/A in the hand-made CSV
        REQUIRE(d.spec != nullptr);
        CHECK(d.spec->name == "Intel Gaudi 3 HL-325L");
    }
    REQUIRE(out.links.size() == 1);
    const auto& l = out.links[0];
    CHECK(l.kind == ah::interconnect_kind::gaudi_roce);
    CHECK(l.scope == ah::link_scope::intra_node);
    CHECK(l.devices == std::vector<std::uint32_t>{0, 1, 2, 3, 4, 5, 6, 7});
    CHECK(*l.bandwidth_gbps == doctest::Approx(1050.0));
    CHECK(l.bandwidth_gbps.from == ah::origin::estimated);
}

#endif // AI_HWACCEL_OS_LINUX || AI_HWACCEL_OS_MACOS

#endif // AI_HWACCEL_BACKEND_GAUDI
