#include "ai_hwaccel/detect/qualcomm.hpp"

#include "fixtures.hpp"

#include <doctest/doctest.h>

#include <filesystem>
#include <string>

#if AI_HWACCEL_BACKEND_QUALCOMM

namespace ah = ai_hwaccel;
namespace fs = std::filesystem;

static_assert(ah::backend_probe<ah::qualcomm_probe, ah::host_system>);

namespace {

constexpr std::uint64_t mib = 1024ull * 1024;

std::string problems_of(const std::vector<ah::parse_problem>& ps) {
    std::string s;
    for (const auto& p : ps) s += std::to_string(p.line) + ": " + p.message + "\n";
    return s;
}

// Hand-made: one Ready SoC as QUtil.cpp of the open-source qaic-util formats it, then an
// SoC in Error (which prints no more than its Dev Link). Serials are placeholders.
constexpr const char* handmade_query =
    "QID 0\n"
    "\tStatus:Ready\n"
    "\tPCI Address:0000:2d:00.0\n"
    "\tPCI Info:Unassigned class Qualcomm Device a100\n"
    "\tMax Link Speed:16GT/s\n"
    "\tMax Link Width:x8\n"
    "\tCurrent Link Speed:16GT/s\n"
    "\tCurrent Link Width:x4\n"
    "\tDev Link:/dev/accel/accel0 \n"
    "\tHW Version:0.2.0.0\n"
    "\tHW Serial:XXXXXXXX\n"
    "\tFW Version:1.12.2\n"
    "\tDram Total:32768 MB\n"
    "\tDram Free:30720 MB\n"
    "\tDram Fragmentation:0.00%\n"
    "\tNsp Total:14\n"
    "\tNsp Free:14\n"
    "\tBoard serial:YYYYYYYY\n"
    "\tSoC temperature(degree C):41.25\n"
    "\tBoard power(Watts):22.50\n"
    "QID 1\n"
    "\tStatus:Error\n"
    "\tPCI Address:0000:2e:00.0\n"
    "\tDev Link:/dev/accel/accel1 \n";

} // namespace

TEST_CASE("parse_qaic_util_query") {
    SUBCASE("real capture: grep of Status and QID lines, 4 SoCs Ready") {
        const auto t = test::capture("qaic-util/q-grep-Status-QID_4-socs.txt");
        if (!t) return;
        const auto r = ah::parse_qaic_util_query(*t);
        INFO(problems_of(r.problems));
        CHECK(r.problems.empty());
        REQUIRE(r.devices.size() == 4);
        for (std::uint32_t i = 0; i < 4; ++i) {
            const auto& d = r.devices[i];
            CHECK(d.index == i);
            CHECK(d.kind == ah::device_kind::qualcomm_ai100);
            CHECK(d.maker == ah::vendor::qualcomm);
            CHECK(d.available);
            CHECK(r.status[i] == "Ready");
            CHECK_FALSE(d.pci.has_value());
            CHECK_FALSE(d.memory_bytes.has_value()); // the grep kept no DRAM line
            CHECK(d.spec == nullptr);
        }
    }
    SUBCASE("hand-made full output") {
        const auto r = ah::parse_qaic_util_query(handmade_query);
        INFO(problems_of(r.problems));
        CHECK(r.problems.empty());
        REQUIRE(r.devices.size() == 2);
        const auto& d = r.devices[0];
        CHECK(d.available);
        CHECK(d.name.view() == "Qualcomm Cloud AI 100");
        CHECK(*d.pci == ah::pci_address{0, 0x2d, 0, 0});
        CHECK(*d.pcie_max == ah::pcie_link{4, 8});
        CHECK(*d.pcie_current == ah::pcie_link{4, 4});
        CHECK(*d.memory_bytes == 32768 * mib);
        CHECK(d.memory_bytes.from == ah::origin::tool);
        CHECK(*d.memory_free_bytes == 30720 * mib);
        CHECK(*d.memory_used_bytes == 2048 * mib);
        CHECK(*d.compute_units == 14u);
        CHECK(*d.temperature_c == doctest::Approx(41.25));
        CHECK_FALSE(d.power_draw_watts.has_value()); // the card's, not the SoC's
        CHECK(d.uuid.empty());                       // serials are not copied
        const auto& e = r.devices[1];
        CHECK(e.index == 1);
        CHECK_FALSE(e.available);
        CHECK(r.status[1] == "Error");
        CHECK_FALSE(e.memory_bytes.has_value());
    }
    SUBCASE("the full output's preamble: the runtime's image lines and the device count") {
        // In the layout of the qaic-util -q output published in krai/ck-qaic's AEDK setup notes
        // (public copy id 8853544916), cut to the lines the parser maps.
        const std::string head = "LRT QC_IMAGE_VERSION: LRT.AIC.6.7.1.6.52\nLRT IMAGE_VARIANT: LRT.AIC.REL\n";
        const std::string soc = "QID 0\n        Status:Ready\n        PCI Address:0002:01:00.0\n"
                                "        Dram Total:8116 MB\n        Dram Free:8116 MB\n        Nsp Total:8\n";
        auto r = ah::parse_qaic_util_query(head + "Number of devices: 1\n" + soc);
        INFO(problems_of(r.problems));
        CHECK(r.problems.empty());
        REQUIRE(r.devices.size() == 1);
        CHECK(*r.devices[0].pci == ah::pci_address{2, 1, 0, 0});
        CHECK(*r.devices[0].memory_bytes == 8116 * mib);
        CHECK(ah::detail::formats::sniff_qaic_util(head + "Number of devices: 1\n" + soc) == 90);
        // A count that disagrees with the QID blocks, or cannot be read, is said.
        r = ah::parse_qaic_util_query(head + "Number of devices: 2\n" + soc);
        REQUIRE(r.problems.size() == 1);
        CHECK(r.problems[0].kind == ah::warning_kind::disagreement);
        CHECK(r.problems[0].line == 3);
        CHECK(ah::parse_qaic_util_query("Number of devices: many\n" + soc).problems.size() == 1);
        // Preamble lines after the first QID are no preamble.
        CHECK(ah::parse_qaic_util_query(soc + "Number of devices: 1\n").problems.empty()); // a key of QID 0
        CHECK(ah::parse_qaic_util_query("LRT nothing\n" + soc).problems.size() == 1);
        CHECK(ah::detail::formats::sniff_qaic_util(head + "hello\n" + soc) == 0);
    }
    SUBCASE("hostile input") {
        CHECK(ah::parse_qaic_util_query("").devices.empty());
        CHECK(ah::parse_qaic_util_query("").problems.empty());
        auto r = ah::parse_qaic_util_query("Status:Ready\ngarbage\nQID x\n");
        CHECK(r.devices.empty());
        CHECK(r.problems.size() == 3);
        r = ah::parse_qaic_util_query("QID 0\n\tStatus:Sleeping\n\tDram Total:99999999999999999999999 MB\n"
                                      "\tDram Free:12 GB\n\tPCI Address:zz\n\tNsp Total:-1\n"
                                      "\tMax Link Speed:fast\n\tSoC temperature(degree C):nan\n");
        REQUIRE(r.devices.size() == 1);
        REQUIRE(r.problems.size() == 7);
        // A number no SoC reports (past 2^64, a negative count) is out of range; the rest
        // cannot be read.
        const bool out_of_range[] = {false, true, false, false, true, false, false};
        for (std::size_t i = 0; i < 7; ++i)
            CHECK((r.problems[i].kind == ah::warning_kind::value_out_of_range) == out_of_range[i]);
        CHECK_FALSE(r.devices[0].memory_bytes.has_value());
        CHECK(r.status[0].empty());
        // Numbers no SoC reports are out of range, not unreadable.
        r = ah::parse_qaic_util_query("QID 0\n\tDram Free:20000000 MB\n\tNsp Total:5000\n"
                                      "\tSoC temperature(degree C):9999\n");
        REQUIRE(r.problems.size() == 3);
        for (const auto& p : r.problems) CHECK(p.kind == ah::warning_kind::value_out_of_range);
        // QUtil's "Unknown" state: read, and the SoC is not available.
        r = ah::parse_qaic_util_query("QID 0\n\tStatus:Unknown\n");
        CHECK(r.problems.empty());
        REQUIRE(r.devices.size() == 1);
        CHECK_FALSE(r.devices[0].available);
        CHECK(r.status[0] == "Unknown");
        // A QID twice: reported, its second block left out.
        r = ah::parse_qaic_util_query("QID 0\n\tDram Total:32768 MB\nQID 1\nQID 0\n\tDram Total:1 MB\n\tjunk\n");
        REQUIRE(r.devices.size() == 2);
        CHECK(*r.devices[0].memory_bytes == 32768 * mib);
        REQUIRE(r.problems.size() == 1);
        CHECK(r.problems[0].message == "QID 0 listed twice; the second block ignored");
        r = ah::parse_qaic_util_query("Failed to query Device ID: 3\n");
        CHECK(r.problems.size() == 1);
        r = ah::parse_qaic_util_query("QID 0\n\tStatus:\xff\xfe\x01\n");
        CHECK(r.problems.size() == 1);
        std::string many;
        for (int i = 0; i < 5000; ++i) many += "QID " + std::to_string(i) + "\n";
        r = ah::parse_qaic_util_query(many);
        CHECK(r.devices.size() == ah::detail::parsing::max_rows);
        CHECK(r.problems.size() == 1);
        r = ah::parse_qaic_util_query(std::string(1 << 20, 'Q'));
        CHECK(r.devices.empty());
        CHECK(r.problems.size() == 1);
        std::string bad;
        for (int i = 0; i < 5000; ++i) bad += "?\n";
        CHECK(ah::parse_qaic_util_query(bad).problems.size() == ah::detail::parsing::max_problems + 1);
    }
}

TEST_CASE("detail::formats::sniff_qaic_util") {
    namespace f = ah::detail::formats;
    const std::string mine = "qaic-util/q-grep-Status-QID_4-socs.txt";
    if (const auto t = test::capture(mine)) {
        CHECK(f::sniff_qaic_util(*t) == 90);
        ah::capture_parse out;
        out.format = "qaic-util-query";
        f::parse_qaic_util_capture(*t, out);
        CHECK(out.warnings.empty());
        CHECK(out.devices.size() == 4);
    }
    CHECK(f::sniff_qaic_util(handmade_query) == 90);
    CHECK(f::sniff_qaic_util("QID 0\n") == 0);
    CHECK(f::sniff_qaic_util("") == 0);
    const test::sniffer_row rows[] = {{"qaic-util-query", f::sniff_qaic_util, mine.c_str()}};
    test::check_sniffers(rows, 1);
    ah::capture_parse empty;
    empty.format = "qaic-util-query";
    f::parse_qaic_util_capture("", empty);
    CHECK(test::count_kind(empty.warnings, ah::warning_kind::parse_error) == 1);
}

namespace {
// Hand-made sysfs tree: two AI 100 SoCs bound to qaic, one unbound AI 080, one NVIDIA GPU.
struct fake_qaic_host {
    test::scratch_dir dir;
    const fs::path root = dir.path();
    void function(const std::string& addr, const std::string& vendor, const std::string& device,
                  const std::string& driver) const {
        const std::string pci = "sys/devices/pci0000:00/" + addr;
        dir.write(pci + "/vendor", vendor + "\n");
        dir.write(pci + "/device", device + "\n");
        dir.write(pci + "/class", "0x120000\n");
        if (!driver.empty()) {
            fs::create_directories(root / "sys/bus/pci/drivers" / driver);
            fs::create_symlink("../../../bus/pci/drivers/" + driver, root / pci / "driver");
        }
        fs::create_directories(root / "sys/bus/pci/devices");
        fs::create_symlink("../../../devices/pci0000:00/" + addr, root / "sys/bus/pci/devices" / addr);
    }
};
} // namespace

TEST_CASE("qualcomm_probe") {
    SUBCASE("hand-made tree with qaic-util -q replayed") {
        fake_qaic_host h;
        h.function("0000:2d:00.0", "0x17cb", "0xa100", "qaic");
        h.function("0000:2e:00.0", "0x17cb", "0xa100", "qaic");
        h.function("0000:2f:00.0", "0x17cb", "0xa080", "");
        h.function("0000:65:00.0", "0x10de", "0x2330", "nvidia");
        h.dir.write("sys/devices/pci0000:00/0000:2d:00.0/numa_node", "1\n");
        h.dir.write("ai-hwaccel-tools/q.txt", handmade_query);
        h.dir.write("ai-hwaccel-tools/index", "0\tq.txt\tqaic-util -q\n");
        const auto out = ah::qualcomm_probe{}.probe(ah::host_system(h.root.string()));
        INFO(test::warnings_text(out.warnings));
        CHECK(out.warnings.empty());
        REQUIRE(out.devices.size() == 3);
        const auto& a = out.devices[0];
        CHECK(a.index == 0);
        CHECK(a.available);
        CHECK(a.pci_device_id == 0xa100);
        CHECK(*a.numa_node == 1);
        CHECK(*a.memory_bytes == 32768 * mib);
        CHECK(*a.pcie_max == ah::pcie_link{4, 8});
        const auto& b = out.devices[1];
        CHECK(b.index == 1);
        CHECK_FALSE(b.available); // Status:Error
        const auto& c = out.devices[2];
        CHECK(c.name.view() == "Qualcomm Cloud AI 080");
        CHECK_FALSE(c.available); // no driver bound
        CHECK(c.pci_device_id == 0xa080);
    }
    SUBCASE("a SoC qaic-util does not list takes a number no listed SoC's QID holds") {
        // hand-made: the first SoC on the bus has no driver; the tool lists the other two
        // as QID 0 and 1. Before, the first kept its place, 0, which QID 0 also held.
        fake_qaic_host h;
        h.function("0000:2c:00.0", "0x17cb", "0xa100", "");
        h.function("0000:2d:00.0", "0x17cb", "0xa100", "qaic");
        h.function("0000:2e:00.0", "0x17cb", "0xa100", "qaic");
        h.dir.write("ai-hwaccel-tools/q.txt", "QID 0\n\tStatus:Ready\n\tPCI Address:0000:2d:00.0\n"
                                              "QID 1\n\tStatus:Ready\n\tPCI Address:0000:2e:00.0\n");
        h.dir.write("ai-hwaccel-tools/index", "0\tq.txt\tqaic-util -q\n");
        const auto out = ah::qualcomm_probe{}.probe(ah::host_system(h.root.string()));
        INFO(test::warnings_text(out.warnings));
        CHECK(out.warnings.empty());
        REQUIRE(out.devices.size() == 3);
        CHECK(out.devices[0].index == 2);
        CHECK_FALSE(out.devices[0].available);
        CHECK(out.devices[1].index == 0);
        CHECK(out.devices[2].index == 1);
    }
    SUBCASE("every SoC in Error (qaic-util without root): the bus's availability, a warning") {
        // Hand-made: what qaic-util prints for each SoC when it lacks the permission.
        fake_qaic_host h;
        h.function("0000:2d:00.0", "0x17cb", "0xa100", "qaic");
        h.function("0000:2e:00.0", "0x17cb", "0xa100", "qaic");
        h.dir.write("ai-hwaccel-tools/q.txt", "QID 0\n\tStatus:Error\n\tPCI Address:0000:2d:00.0\n"
                                              "QID 1\n\tStatus:Error\n\tPCI Address:0000:2e:00.0\n");
        h.dir.write("ai-hwaccel-tools/index", "0\tq.txt\tqaic-util -q\n");
        const auto out = ah::qualcomm_probe{}.probe(ah::host_system(h.root.string()));
        INFO(test::warnings_text(out.warnings));
        REQUIRE(out.warnings.size() == 1);
        CHECK(out.warnings[0].kind == ah::warning_kind::permission_denied);
        CHECK(out.warnings[0].subject == "qaic-util");
        REQUIRE(out.devices.size() == 2);
        CHECK(out.devices[0].available);
        CHECK(out.devices[1].available);
    }
    SUBCASE("SoCs on the bus, qaic-util missing: a warning") {
        fake_qaic_host h;
        h.function("0000:2d:00.0", "0x17cb", "0xa100", "qaic");
        const auto out = ah::qualcomm_probe{}.probe(ah::host_system(h.root.string()));
        REQUIRE(out.devices.size() == 1);
        CHECK(test::count_kind(out.warnings, ah::warning_kind::tool_not_found) == 1);
        CHECK_FALSE(out.devices[0].memory_bytes.has_value());
    }
    SUBCASE("nothing on the bus, no tool: silence") {
        test::scratch_dir dir;
        const auto out = ah::qualcomm_probe{}.probe(ah::host_system(dir.path().string()));
        CHECK(out.devices.empty());
        CHECK(out.warnings.empty());
    }
    SUBCASE("the real capture replayed without sysfs: four SoCs from the tool") {
        const auto t = test::capture("qaic-util/q-grep-Status-QID_4-socs.txt");
        if (!t) return;
        test::scratch_dir dir;
        dir.write("ai-hwaccel-tools/q.txt", *t);
        dir.write("ai-hwaccel-tools/index", "0\tq.txt\tqaic-util -q\n");
        const auto out = ah::qualcomm_probe{}.probe(ah::host_system(dir.path().string()));
        INFO(test::warnings_text(out.warnings));
        CHECK(out.warnings.empty());
        CHECK(out.devices.size() == 4);
    }
    SUBCASE("qaic-util exits 0 with nothing: a fault with SoCs on the bus, nothing to say without") {
        fake_qaic_host h;
        h.function("0000:2d:00.0", "0x17cb", "0xa100", "qaic");
        h.dir.write("ai-hwaccel-tools/q.txt", "");
        h.dir.write("ai-hwaccel-tools/index", "0\tq.txt\tqaic-util -q\n");
        auto out = ah::qualcomm_probe{}.probe(ah::host_system(h.root.string()));
        CHECK(out.devices.size() == 1);
        REQUIRE(out.warnings.size() == 1);
        CHECK(out.warnings[0].kind == ah::warning_kind::parse_error);
        test::scratch_dir dir;
        dir.write("ai-hwaccel-tools/q.txt", "");
        dir.write("ai-hwaccel-tools/index", "0\tq.txt\tqaic-util -q\n");
        out = ah::qualcomm_probe{}.probe(ah::host_system(dir.path().string()));
        CHECK(out.devices.empty());
        CHECK(out.warnings.empty());
    }
    SUBCASE("qaic-util fails") {
        test::scratch_dir dir;
        dir.write("ai-hwaccel-tools/index", "1\t-\tqaic-util -q\n");
        const auto out = ah::qualcomm_probe{}.probe(ah::host_system(dir.path().string()));
        CHECK(out.devices.empty());
        CHECK(test::count_kind(out.warnings, ah::warning_kind::tool_failed) == 1);
    }
}

#endif // AI_HWACCEL_BACKEND_QUALCOMM
