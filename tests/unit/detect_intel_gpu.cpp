#include "ai_hwaccel/detect/intel_gpu.hpp"
#include "ai_hwaccel/detect/merge.hpp"

#include "fixtures.hpp"

#include <doctest/doctest.h>

#include <filesystem>
#include <string>

#if AI_HWACCEL_BACKEND_INTEL_GPU

namespace ah = ai_hwaccel;

namespace {

constexpr std::uint64_t mib = 1024ull * 1024;
constexpr std::uint64_t gib = 1024ull * mib;

std::string problems_of(const std::vector<ah::parse_problem>& ps) {
    std::string s;
    for (const auto& p : ps) s += std::to_string(p.line) + ": " + p.message + "\n";
    return s;
}

std::string warnings_of(const std::vector<ah::warning>& ws) {
    std::string s;
    for (const auto& w : ws) s += w.subject + ": " + w.message + "\n";
    return s;
}

const char* const capture_files[] = {
    "xpu-smi/discovery_1x-max-series-0x020a_doc.txt",
    "xpu-smi/discovery-d_detail_max-series-0x020a_2-tiles_doc.txt",
    "xpu-smi/discovery-j_1x-max-series-0x020a_doc.json",
    "xpu-smi/discovery-dump-1,2,3,6_2x-flex-0x56c0_doc.csv",
};

} // namespace

static_assert(ah::backend_probe<ah::intel_gpu_probe, ah::host_system>);
static_assert(ah::descriptor_of<ah::intel_gpu_probe>().name == "intel_gpu");
static_assert(ah::detail::intel_gpu::id_in_name("Intel(R) Graphics [0x020a]") == 0x020a);
static_assert(!ah::detail::intel_gpu::id_in_name("Intel(R) Graphics"));

TEST_CASE("parse_xpu_smi_discovery_table: real captures") {
    SUBCASE("xpu-smi discovery, one Max-series device") {
        const auto t = test::capture("xpu-smi/discovery_1x-max-series-0x020a_doc.txt");
        if (!t) return;
        const auto r = ah::parse_xpu_smi_discovery_table(*t);
        INFO(problems_of(r.problems));
        CHECK(r.problems.empty());
        REQUIRE(r.devices.size() == 1);
        const auto& d = r.devices[0];
        CHECK(d.kind == ah::device_kind::intel_gpu);
        CHECK(d.maker == ah::vendor::intel);
        CHECK(d.index == 0);
        CHECK(d.name.view() == "Intel(R) Graphics [0x020a]");
        CHECK(d.uuid.view() == "00000000-0000-0000-0000-020a00008086");
        REQUIRE(d.pci);
        CHECK(*d.pci == ah::pci_address{0, 0x4d, 0, 0});
        CHECK(d.pci_device_id == 0x020a); // from the bracket in the name
        CHECK_FALSE(d.memory_bytes.has_value()); // the list does not say
        CHECK(d.spec == nullptr);                 // 0x020a names no catalogue row
        REQUIRE(r.tiles.size() == 1);
        CHECK_FALSE(r.tiles[0].has_value());
    }
    SUBCASE("xpu-smi discovery -d, Max-series with 2 tiles") {
        const auto t = test::capture("xpu-smi/discovery-d_detail_max-series-0x020a_2-tiles_doc.txt");
        if (!t) return;
        const auto r = ah::parse_xpu_smi_discovery_table(*t);
        INFO(problems_of(r.problems));
        CHECK(r.problems.empty());
        REQUIRE(r.devices.size() == 1);
        const auto& d = r.devices[0];
        CHECK(d.name.view() == "Intel(R) Graphics [0x020a]");
        CHECK(d.uuid.view() == "00000000-0000-0000-0000-020a00008086");
        CHECK(d.driver_version.view() == "16929133");
        REQUIRE(d.pci);
        CHECK(*d.pci == ah::pci_address{0, 0x4d, 0, 0});
        // Memory Physical Size, not Memory Bus Width (128) nor Max Mem Alloc Size.
        CHECK(*d.memory_bytes == 32768 * mib);
        CHECK(d.memory_bytes.from == ah::origin::tool);
        CHECK(*d.pcie_max == ah::pcie_link{4, 16});
        CHECK(d.pcie_max.from == ah::origin::tool);
        CHECK(d.pci_device_id == 0x020a);
        REQUIRE(r.tiles.size() == 1);
        CHECK(*r.tiles[0] == 2u);
    }
}

#if AI_HWACCEL_JSON
TEST_CASE("parse_xpu_smi_discovery_json") {
    SUBCASE("real capture: xpu-smi discovery -j") {
        const auto t = test::capture("xpu-smi/discovery-j_1x-max-series-0x020a_doc.json");
        if (!t) return;
        const auto r = ah::parse_xpu_smi_discovery_json(*t);
        INFO(problems_of(r.problems));
        CHECK(r.problems.empty());
        REQUIRE(r.devices.size() == 1);
        const auto& d = r.devices[0];
        CHECK(d.index == 0);
        CHECK(d.name.view() == "Intel(R) Graphics [0x020a]");
        CHECK(d.uuid.view() == "00000000-0000-0000-0000-020a00008086");
        CHECK(d.pci_device_id == 0x020a); // "0x20a"
        REQUIRE(d.pci);
        CHECK(*d.pci == ah::pci_address{0, 0x4d, 0, 0});
        CHECK_FALSE(d.memory_bytes.has_value());
    }
    SUBCASE("hand-made: -d -j detail object with the byte count") {
        const auto r = ah::parse_xpu_smi_discovery_json(
            R"({"device_id": 1, "device_name": "Intel(R) Data Center GPU Flex 170", "pci_device_id": "0x56c0",)"
            R"( "memory_physical_size_byte": "14248030208", "memory_bus_width": "256", "number_of_tiles": "1",)"
            R"( "pci_bdf_address": "0000:3a:00.0", "driver_version": "1.3.26516"})");
        INFO(problems_of(r.problems));
        CHECK(r.problems.empty());
        REQUIRE(r.devices.size() == 1);
        const auto& d = r.devices[0];
        CHECK(d.index == 1);
        CHECK(*d.memory_bytes == 14248030208ull);
        CHECK(d.driver_version.view() == "1.3.26516");
        REQUIRE(d.spec != nullptr);
        CHECK(d.spec->name == "Intel Data Center GPU Flex 170");
        CHECK(*r.tiles[0] == 1u);
    }
    SUBCASE("hostile") {
        CHECK(ah::parse_xpu_smi_discovery_json("").problems.size() == 1);
        CHECK(ah::parse_xpu_smi_discovery_json("[1,2]").problems.size() == 1);
        CHECK(ah::parse_xpu_smi_discovery_json("{\"device_list\": 5}").problems.size() == 1);
        // What xpumanager prints with no device (its list starts as a null json value).
        CHECK(ah::parse_xpu_smi_discovery_json("{\"device_list\": null}").problems.empty());
        CHECK(ah::parse_xpu_smi_discovery_json("{\"device_list\": null}").devices.empty());
        CHECK(ah::parse_xpu_smi_discovery_json("{\"error\": \"Level Zero init failed\"}").problems.size() == 1);
        auto r = ah::parse_xpu_smi_discovery_json(
            R"({"device_list": [3, {"device_id": -1, "device_name": ["x"], "memory_physical_size_byte": "99999999999999999999999",)"
            R"( "pci_bdf_address": "zz", "pci_device_id": "0x123456"}]})");
        REQUIRE(r.devices.size() == 1);
        CHECK_FALSE(r.devices[0].memory_bytes.has_value());
        CHECK(r.devices[0].pci_device_id == 0);
        CHECK(r.problems.size() == 6);
        std::string deep(100'000, '[');
        CHECK(ah::parse_xpu_smi_discovery_json(deep).devices.empty());
        CHECK(ah::parse_xpu_smi_discovery_json("{\"device_list\":[{\"device_name\":\"\xff\xfe\"}]}").devices.empty());
    }
}
#endif

TEST_CASE("parse_xpu_smi_dump_csv") {
    SUBCASE("real capture: --dump 1,2,3,6 on 2x Flex 170") {
        const auto t = test::capture("xpu-smi/discovery-dump-1,2,3,6_2x-flex-0x56c0_doc.csv");
        if (!t) return;
        const auto r = ah::parse_xpu_smi_dump_csv(*t);
        INFO(problems_of(r.problems));
        CHECK(r.problems.empty());
        REQUIRE(r.devices.size() == 2);
        for (std::uint32_t i = 0; i < 2; ++i) {
            const auto& d = r.devices[i];
            CHECK(d.index == i);
            CHECK(d.name.view() == "Intel(R) Graphics [0x56c0]");
            CHECK(d.pci_device_id == 0x56c0);
            REQUIRE(d.spec != nullptr); // by the id in the name
            CHECK(d.spec->name == "Intel Data Center GPU Flex 170");
            // Memory was not dumped: the catalogue's, marked so.
            CHECK(*d.memory_bytes == 16 * gib);
            CHECK(d.memory_bytes.from == ah::origin::catalogue);
            CHECK_FALSE(d.pci.has_value());
        }
    }
    SUBCASE("hand-made: columns by label; bus width is not memory") {
        auto r = ah::parse_xpu_smi_dump_csv("Memory Bus Width,Device ID,PCI BDF Address,Memory Physical Size,Number of EUs\n"
                                            "\"128\",3,\"0000:4d:00.0\",\"49152.00 MiB\",\"448\"\n");
        INFO(problems_of(r.problems));
        CHECK(r.problems.empty());
        REQUIRE(r.devices.size() == 1);
        CHECK(r.devices[0].index == 3);
        CHECK(*r.devices[0].memory_bytes == 48 * gib);
        CHECK(*r.devices[0].pci == ah::pci_address{0, 0x4d, 0, 0});
        // The reference implementation's 1,2,18,19: no memory at all.
        r = ah::parse_xpu_smi_dump_csv("Device ID,Device Name,Memory Bus Width,Number of EUs\n"
                                       "0,\"Intel(R) Graphics [0x020a]\",\"128\",\"512\"\n");
        CHECK(r.problems.empty());
        REQUIRE(r.devices.size() == 1);
        CHECK_FALSE(r.devices[0].memory_bytes.has_value());
        // Empty and "unknown" values are unknown, not problems.
        r = ah::parse_xpu_smi_dump_csv("Device ID,UUID,Memory Physical Size\n,\"\",\"unknown\"\n");
        CHECK(r.problems.empty());
        REQUIRE(r.devices.size() == 1);
        CHECK_FALSE(r.devices[0].memory_bytes.has_value());
    }
    SUBCASE("no device") {
        const auto r = ah::parse_xpu_smi_dump_csv("No device discovered\n");
        CHECK(r.devices.empty());
        CHECK(r.problems.empty());
    }
    SUBCASE("hostile") {
        CHECK(ah::parse_xpu_smi_dump_csv("").devices.empty());
        CHECK(ah::parse_xpu_smi_dump_csv("").problems.empty());
        CHECK(ah::parse_xpu_smi_dump_csv("garbage,more\n1,2\n").problems.size() == 1);
        auto r = ah::parse_xpu_smi_dump_csv("Device ID,Memory Physical Size\n0,\"12 GB\"\n1,\"unterminated\n2\n"
                                            "99999999999,\"1e30 MiB\"\n");
        CHECK(r.devices.size() == 2);
        CHECK(r.problems.size() == 5);
        r = ah::parse_xpu_smi_dump_csv("Device Name\n\"\xff\x01\"\n");
        REQUIRE(r.devices.size() == 1);
        CHECK(r.devices[0].name.view() == "??");
        CHECK(r.problems.size() == 1);
        std::string many = "Device ID\n";
        for (int i = 0; i < 5000; ++i) many += "x\n";
        r = ah::parse_xpu_smi_dump_csv(many);
        CHECK(r.devices.size() == ah::detail::parsing::max_rows);
        CHECK(r.problems.size() == ah::detail::parsing::max_problems + 1);
        CHECK(ah::parse_xpu_smi_dump_csv("Device ID\n" + std::string(1'000'000, '"')).problems.size() == 1);
    }
}

TEST_CASE("parse_xpu_smi_discovery_table: hand-made and hostile") {
    SUBCASE("two devices, a wrapped value") {
        const auto r = ah::parse_xpu_smi_discovery_table(
            "+---+---+\n| Device ID | Device Information |\n+---+---+\n"
            "| 0 | Device Name: Intel(R) Data Center GPU Max |\n|   | 1550 |\n|   | PCI BDF Address: 0000:29:00.0 |\n"
            "+---+---+\n| 1 | Device Name: Intel(R) Graphics [0x56c1] |\n+---+---+\n");
        INFO(problems_of(r.problems));
        CHECK(r.problems.empty());
        REQUIRE(r.devices.size() == 2);
        CHECK(r.devices[0].name.view() == "Intel(R) Data Center GPU Max 1550");
        REQUIRE(r.devices[0].spec != nullptr);
        CHECK(r.devices[0].spec->name == "Intel Data Center GPU Max 1550");
        CHECK(r.devices[1].index == 1);
        REQUIRE(r.devices[1].spec != nullptr);
        CHECK(r.devices[1].spec->name == "Intel Data Center GPU Flex 140");
    }
    SUBCASE("hostile") {
        CHECK(ah::parse_xpu_smi_discovery_table("").devices.empty());
        CHECK(ah::parse_xpu_smi_discovery_table("").problems.empty());
        CHECK(ah::parse_xpu_smi_discovery_table("No device discovered\n").problems.empty());
        auto r = ah::parse_xpu_smi_discovery_table("garbage\n|   | Device Name: x |\n| zz | Memory Physical Size: 1 GB |\n"
                                                   "|    | PCIe Generation: 99 |\n|    | Device Type: NPU |\n");
        CHECK(r.devices.size() == 1);
        CHECK(r.problems.size() == 6);
        CHECK(ah::parse_xpu_smi_discovery_table(std::string(1'000'000, '|')).devices.empty());
        std::string wrapped = "| 0 | Device Name: a |\n";
        for (int i = 0; i < 10000; ++i) wrapped += "|   | " + std::string(100, 'x') + " |\n";
        r = ah::parse_xpu_smi_discovery_table(wrapped);
        REQUIRE(r.devices.size() == 1);
        CHECK(r.devices[0].name.size() <= 63);
        std::string many;
        for (int i = 0; i < 3000; ++i) many += "| " + std::to_string(i) + " | Device Name: x |\n";
        r = ah::parse_xpu_smi_discovery_table(many);
        CHECK(r.devices.size() == ah::detail::parsing::max_rows);
        CHECK(r.problems.size() == 1);
    }
}

TEST_CASE("detail::formats xpu-smi sniffers") {
    namespace f = ah::detail::formats;
    struct expect {
        const char* file;
        int (*mine)(std::string_view) noexcept;
        void (*parse)(std::string_view, ah::capture_parse&);
        std::size_t devices;
    };
    const expect all[] = {
        {capture_files[0], f::sniff_xpu_smi_discovery, f::parse_xpu_smi_discovery_capture, 1},
        {capture_files[1], f::sniff_xpu_smi_discovery_detail, f::parse_xpu_smi_discovery_capture, 1},
#if AI_HWACCEL_JSON
        {capture_files[2], f::sniff_xpu_smi_json, f::parse_xpu_smi_json_capture, 1},
#endif
        {capture_files[3], f::sniff_xpu_smi_dump, f::parse_xpu_smi_dump_capture, 2},
    };
    for (const auto& e : all) {
        CAPTURE(e.file);
        const auto t = test::capture(e.file);
        if (!t) return;
        CHECK(e.mine(*t) == 90);
        ah::capture_parse out;
        out.format = "xpu-smi";
        e.parse(*t, out);
        INFO(warnings_of(out.warnings));
        CHECK(out.warnings.empty());
        CHECK(out.devices.size() == e.devices);
    }
    // Every sniffer says 0 for every other capture.
    std::vector<test::sniffer_row> rows;
    for (const auto& e : all) rows.push_back({e.file, e.mine, e.file});
    test::check_sniffers(rows, std::size(all));
    CHECK(f::sniff_xpu_smi_dump("") == 0);
    CHECK(f::sniff_xpu_smi_discovery("") == 0);
    ah::capture_parse empty;
    empty.format = "xpu-smi-dump";
    f::parse_xpu_smi_dump_capture("", empty);
    CHECK(test::count_kind(empty.warnings, ah::warning_kind::parse_error) == 1);
}

namespace {
// Hand-made sysfs: a PCI function, its DRM card, and the links between them.
void add_card(const test::scratch_dir& dir, const std::string& card, const std::string& addr, const char* device,
              const char* driver) {
    namespace fs = std::filesystem;
    const std::string pci = "sys/bus/pci/devices/" + addr;
    dir.write(pci + "/vendor", "0x8086\n");
    dir.write(pci + "/device", std::string(device) + "\n");
    dir.write(pci + "/class", "0x030000\n");
    fs::create_directories(dir.path() / "sys/bus/pci/drivers" / driver);
    fs::create_directory_symlink(std::string("../../../bus/pci/drivers/") + driver, dir.path() / pci / "driver");
    fs::create_directories(dir.path() / "sys/class/drm" / card);
    fs::create_directory_symlink("../../../devices/pci0000:00/" + addr, dir.path() / "sys/class/drm" / card / "device");
    fs::create_directories(dir.path() / "sys/class/drm" / (card + "-DP-1"));
}
} // namespace

TEST_CASE("intel_gpu_probe / read_intel_gpu_sysfs (hand-made sysfs trees)") {
    const auto request = ah::xpu_smi_discovery_request();
    const std::string dump = "xpu-smi discovery --dump 1,2,4,8,11,13,14,16,24";
    CHECK(ah::command_line_of(request.argv) == dump);
    // The probe's xpu-smi run, answered with `csv`: a hand-made dump in the columns it asks for.
    const auto with_dump = [&](test::scratch_dir& dir, const std::string& csv) {
        dir.write("ai-hwaccel-tools/index", "0\td.csv\t" + dump + "\n");
        dir.write("ai-hwaccel-tools/d.csv", csv);
    };

    SUBCASE("integrated graphics alone: unified, the host's memory, no xpu-smi, no warning") {
        test::scratch_dir dir;
        add_card(dir, "card0", "0000:00:02.0", "0x4680", "i915");
        const auto out = ah::intel_gpu_probe{}.probe(ah::host_system(dir.path().string()));
        INFO(warnings_of(out.warnings));
        CHECK(out.warnings.empty());
        REQUIRE(out.devices.size() == 1);
        const auto& d = out.devices[0];
        CHECK(d.kind == ah::device_kind::intel_gpu);
        CHECK(d.unified_memory);
        CHECK_FALSE(d.memory_bytes.has_value()); // no /proc/meminfo in the tree
        CHECK(d.pci_device_id == 0x4680);
        CHECK(d.name.view() == "Intel Graphics [0x4680]");
        // With it, the GPU has what the host has (Intel's compute runtime sizes it from the
        // host's pages too).
        dir.write("proc/meminfo", "MemTotal:       32768000 kB\nMemAvailable:   20000000 kB\n");
        const auto sized = ah::intel_gpu_probe{}.probe(ah::host_system(dir.path().string()));
        REQUIRE(sized.devices.size() == 1);
        CHECK(sized.devices[0].memory_bytes == ah::sourced<std::uint64_t>{32768000ull * 1024, ah::origin::sysfs});
        CHECK(sized.devices[0].memory_free_bytes == ah::sourced<std::uint64_t>{20000000ull * 1024, ah::origin::sysfs});
    }
    SUBCASE("an Arc A770 on xe and an iGPU; xpu-smi missing is a warning") {
        test::scratch_dir dir;
        add_card(dir, "card0", "0000:00:02.0", "0x4680", "i915");
        add_card(dir, "card1", "0000:03:00.0", "0x56a0", "xe");
        dir.write("sys/bus/pci/devices/0000:03:00.0/tile0/physical_vram_size_bytes", "17163091968\n");
        // The kernel gives a PCIe function all four link attributes (an idle Arc drops to
        // 2.5 GT/s), and read_pci_device reads the maximum only where the current is there.
        dir.write("sys/bus/pci/devices/0000:03:00.0/current_link_speed", "2.5 GT/s PCIe\n");
        dir.write("sys/bus/pci/devices/0000:03:00.0/current_link_width", "16\n");
        dir.write("sys/bus/pci/devices/0000:03:00.0/max_link_speed", "16.0 GT/s PCIe\n");
        dir.write("sys/bus/pci/devices/0000:03:00.0/max_link_width", "16\n");
        dir.write("sys/bus/pci/devices/0000:03:00.0/numa_node", "-1\n");
        const ah::host_system sys(dir.path().string());
        std::vector<ah::warning> w;
        const auto cards = ah::read_intel_gpu_sysfs(sys, w);
        INFO(warnings_of(w));
        CHECK(w.empty());
        REQUIRE(cards.size() == 2);
        CHECK(cards[0].card == "card0");
        CHECK(cards[0].driver == "i915");
        CHECK_FALSE(cards[0].discrete);
        CHECK(cards[1].card == "card1");
        CHECK(cards[1].driver == "xe");
        CHECK(cards[1].discrete);
        CHECK(cards[1].local_memory);
        const auto& arc = cards[1].profile;
        CHECK(arc.index == 1);
        CHECK(*arc.pci == ah::pci_address{0, 3, 0, 0});
        CHECK(*arc.memory_bytes == 17163091968ull);
        CHECK(arc.memory_bytes.from == ah::origin::sysfs);
        CHECK_FALSE(arc.unified_memory);
        REQUIRE(arc.spec != nullptr); // 0x56a0 is two rows; the 16 GB one by size
        CHECK(arc.spec->name == "Intel Arc A770 16GB");
        CHECK(arc.name.view() == "Intel Arc A770 16GB");
        CHECK(*arc.pcie_max == ah::pcie_link{4, 16});
        CHECK(*arc.pcie_current == ah::pcie_link{1, 16});

        const auto out = ah::intel_gpu_probe{}.probe(sys);
        REQUIRE(out.devices.size() == 2);
        REQUIRE(out.warnings.size() == 1);
        CHECK(out.warnings[0].kind == ah::warning_kind::tool_not_found);
        CHECK(out.warnings[0].backend == ah::backend_id::intel_gpu);
        CHECK(out.warnings[0].message.find("0000:03:00.0") != std::string::npos);
        CHECK(out.warnings[0].message.find("0000:00:02.0") == std::string::npos);
    }
    SUBCASE("a Flex 170 on backported i915, enriched by a captured xpu-smi run") {
        test::scratch_dir dir;
        add_card(dir, "card1", "0000:3a:00.0", "0x56c0", "i915");
        dir.write("sys/class/drm/card1/lmem_total_bytes", "14248030208\n");
        // A hand-made dump for the same card, in the columns the probe asks for.
        with_dump(dir,
                  "Device ID,Device Name,UUID,Driver Version,PCI BDF Address,PCIe Generation,PCIe Max Link Width,"
                  "Memory Physical Size,PCI Device ID\n"
                  "0,\"Intel(R) Graphics [0x56c0]\",\"00000000-0000-0000-0000-56c000008086\",\"1.3.26241\","
                  "\"0000:3a:00.0\",\"4\",\"16\",\"13588.00 MiB\",\"0x56c0\"\n");
        const auto out = ah::intel_gpu_probe{}.probe(ah::host_system(dir.path().string()));
        INFO(warnings_of(out.warnings));
        CHECK(out.warnings.empty());
        REQUIRE(out.devices.size() == 1);
        const auto& d = out.devices[0];
        CHECK(d.name.view() == "Intel Data Center GPU Flex 170");
        CHECK(d.uuid.view() == "00000000-0000-0000-0000-56c000008086");
        CHECK(*d.memory_bytes == 14248030208ull); // lmem_total_bytes, not the catalogue's 16 GiB
        CHECK(d.memory_bytes.from == ah::origin::sysfs);
        CHECK(d.driver_version.view() == "1.3.26241");
        CHECK_FALSE(d.unified_memory);
    }
    SUBCASE("passed through to a VM without PCIe root ports: discrete cards on bus 0") {
        // QEMU's i440fx machine puts every device on bus 0. An A770 (its id names two
        // catalogue rows) whose kernel publishes no memory size, and a DG2 id no row names,
        // are discrete by their ids, never integrated graphics given the host's memory.
        test::scratch_dir dir;
        add_card(dir, "card0", "0000:00:04.0", "0x56a0", "i915");
        add_card(dir, "card1", "0000:00:05.0", "0x56b3", "xe");
        dir.write("proc/meminfo", "MemTotal:       65536000 kB\nMemAvailable:   60000000 kB\n");
        const ah::host_system sys(dir.path().string());
        std::vector<ah::warning> w;
        const auto cards = ah::read_intel_gpu_sysfs(sys, w);
        REQUIRE(cards.size() == 2);
        for (const auto& c : cards) {
            CAPTURE(c.card);
            CHECK(c.discrete);
            CHECK_FALSE(c.profile.unified_memory);
            CHECK_FALSE(c.profile.memory_bytes.has_value());
        }
        // With xpu-smi, its dump gives the A770's memory, and the memory its row.
        with_dump(dir, "Device ID,Device Name,PCI BDF Address,Memory Physical Size,PCI Device ID\n"
                       "0,\"Intel(R) Arc(TM) A770 Graphics\",\"0000:00:04.0\",\"15930.00 MiB\",\"0x56a0\"\n");
        const auto out = ah::intel_gpu_probe{}.probe(sys);
        INFO(warnings_of(out.warnings));
        CHECK(out.warnings.empty());
        REQUIRE(out.devices.size() == 2);
        const auto& arc = out.devices[0];
        CHECK(*arc.memory_bytes == 15930ull * mib);
        CHECK(arc.memory_bytes.from == ah::origin::tool);
        REQUIRE(arc.spec != nullptr);
        CHECK(arc.spec->name == "Intel Arc A770 16GB");
        CHECK(arc.name.view() == "Intel Arc A770 16GB");
        CHECK(*arc.memory_bandwidth_gbps == 560.0);
        CHECK_FALSE(out.devices[1].unified_memory);
    }
    SUBCASE("a Flex 140: two GPUs of 6 GiB on one card, 12 GiB in all") {
        test::scratch_dir dir;
        add_card(dir, "card1", "0000:4b:00.0", "0x56c1", "i915");
        add_card(dir, "card2", "0000:4e:00.0", "0x56c1", "i915");
        std::vector<ah::warning> w;
        const auto cards = ah::read_intel_gpu_sysfs(ah::host_system(dir.path().string()), w);
        REQUIRE(cards.size() == 2);
        std::uint64_t total = 0;
        for (const auto& c : cards) {
            REQUIRE(c.profile.spec != nullptr);
            CHECK(c.profile.spec->name == "Intel Data Center GPU Flex 140");
            total += *c.profile.memory_bytes;
        }
        CHECK(total == 12 * gib);
    }
    SUBCASE("a Max 1550: its two stacks are the devices Level Zero shows, unless COMPOSITE") {
        test::scratch_dir dir;
        add_card(dir, "card1", "0000:29:00.0", "0x0bd5", "xe");
        add_card(dir, "card2", "0000:9a:00.0", "0x0bd5", "i915"); // no tile folders: the row's two stacks
        for (const char* tile : {"tile0", "tile1"})
            dir.write(std::string("sys/bus/pci/devices/0000:29:00.0/") + tile + "/physical_vram_size_bytes",
                      "68719476736\n");
        dir.write("ai-hwaccel-tools/index", "# xpu-smi not installed\n");
        const ah::host_system sys(dir.path().string());
        std::vector<ah::warning> w;
        const auto cards = ah::read_intel_gpu_sysfs(sys, w);
        REQUIRE(cards.size() == 2);
        CHECK(cards[0].tiles == 2);
        CHECK(cards[1].tiles == 0);
        CHECK(*cards[0].profile.memory_bytes == 128 * gib);

        auto out = ah::intel_gpu_probe{}.probe(sys);
        REQUIRE(out.devices.size() == 4);
        for (std::size_t i = 0; i < 4; ++i) {
            CAPTURE(i);
            const auto& d = out.devices[i];
            CHECK(d.stack == std::optional<std::uint8_t>(static_cast<std::uint8_t>(i % 2)));
            CHECK(d.pci == cards[i / 2].profile.pci);
            CHECK(d.index == cards[i / 2].profile.index);
            CHECK(d.name.view() == "Intel Data Center GPU Max 1550");
            CHECK(*d.memory_bytes == 64 * gib);
            CHECK(d.memory_bytes.from == (i < 2 ? ah::origin::sysfs : ah::origin::catalogue));
            CHECK(*d.memory_bandwidth_gbps == doctest::Approx(1638.4));
            CHECK(*d.compute_units == 64);
            CHECK(d.peak.bf16 == doctest::Approx(838.9 / 2));
            CHECK(*d.power_limit_watts == doctest::Approx(300));
            CHECK_FALSE(d.unified_memory);
        }
        // Stacks of one card are two devices to the merge, and ZE_AFFINITY_MASK counts them.
        CHECK(ah::merge_duplicates(out.devices) == 0);
        CHECK(out.devices.size() == 4);
        std::vector<ah::warning> hidden;
        ah::apply_visibility(
            out.devices,
            [](std::string_view v) {
                return v == "ZE_AFFINITY_MASK" ? std::optional<std::string>("1,2") : std::nullopt;
            },
            hidden);
        CHECK(hidden.size() == 2);
        CHECK_FALSE(out.devices[0].available);
        CHECK(out.devices[1].available);
        CHECK(out.devices[2].available);
        CHECK_FALSE(out.devices[3].available);
        // Stacks of a card share its index: the warning names the stack and the card's address.
        for (const auto& said : hidden) {
            CAPTURE(said.message);
            CHECK(said.message.find(" stack ") != std::string::npos);
            CHECK(said.message.find(":00.0)") != std::string::npos);
        }
        CHECK(hidden[0].message != hidden[1].message);

        // COMPOSITE keeps each card one device of 128 GiB; FLAT and COMBINED split it.
        for (const char* mode : {"COMPOSITE", "FLAT", "COMBINED"}) {
            CAPTURE(mode);
            dir.write("proc/self/environ", std::string("ZE_FLAT_DEVICE_HIERARCHY=") + mode + "\n");
            const auto again = ah::intel_gpu_probe{}.probe(ah::host_system(dir.path().string()));
            const bool whole = std::string_view(mode) == "COMPOSITE";
            REQUIRE(again.devices.size() == (whole ? 2u : 4u));
            CHECK(again.devices[0].stack.has_value() == !whole);
            CHECK(*again.devices[0].memory_bytes == (whole ? 128 : 64) * gib);
        }
    }
    SUBCASE("a Max 1550 xpu-smi alone lists (a container): its catalogue row's two stacks") {
        test::scratch_dir dir;
        // The card's 128 GiB and its UUID.
        with_dump(dir, "Device ID,Device Name,UUID,PCI BDF Address,Memory Physical Size,PCI Device ID\n"
                       "0,\"Intel(R) Data Center GPU Max 1550\",\"00000000-0000-0000-0000-0bd500008086\","
                       "\"0000:29:00.0\",\"131072.00 MiB\",\"0x0bd5\"\n");
        const auto out = ah::intel_gpu_probe{}.probe(ah::host_system(dir.path().string()));
        INFO(warnings_of(out.warnings));
        CHECK(out.warnings.empty());
        REQUIRE(out.devices.size() == 2);
        for (std::uint8_t k = 0; k < 2; ++k) {
            const auto& d = out.devices[k];
            CHECK(d.stack == std::optional<std::uint8_t>(k));
            CHECK(d.memory_bytes == ah::sourced<std::uint64_t>{64 * gib, ah::origin::tool});
            CHECK(d.uuid.empty()); // the card's, not a stack's
            REQUIRE(d.spec != nullptr);
            CHECK(d.spec->name == "Intel Data Center GPU Max 1550");
        }
    }
    SUBCASE("machine tree: handmade-max1550-2card-xe") {
        const std::string root = std::string(AI_HWACCEL_MACHINES_DIR) + "/handmade-max1550-2card-xe";
        if (!std::filesystem::exists(root)) {
            MESSAGE("skipped: machine tree not assembled");
            return;
        }
        const auto out = ah::intel_gpu_probe{}.probe(ah::host_system(root));
        REQUIRE(out.warnings.size() == 1); // no xpu-smi on the machine
        CHECK(out.warnings[0].kind == ah::warning_kind::tool_not_found);
        REQUIRE(out.devices.size() == 4);
        const ah::pci_address cards[] = {{0, 0x29, 0, 0}, {0, 0x9a, 0, 0}};
        for (std::size_t i = 0; i < 4; ++i) {
            CAPTURE(i);
            const auto& d = out.devices[i];
            CHECK(d.pci == cards[i / 2]);
            CHECK(d.stack == std::optional<std::uint8_t>(static_cast<std::uint8_t>(i % 2)));
            CHECK(d.memory_bytes == ah::sourced<std::uint64_t>{64 * gib, ah::origin::sysfs}); // one tile's file
            CHECK(*d.numa_node == static_cast<std::int32_t>(i / 2));
            CHECK(*d.pcie_max == ah::pcie_link{5, 16});
        }
    }
    SUBCASE("no /sys/class/drm (a container): xpu-smi alone lists the device") {
        test::scratch_dir dir;
        // The documentation's Max-series values.
        with_dump(dir, "Device ID,Device Name,UUID,PCI BDF Address,Memory Physical Size\n"
                       "0,\"Intel(R) Graphics [0x020a]\",\"00000000-0000-0000-0000-020a00008086\","
                       "\"0000:4d:00.0\",\"32768.00 MiB\"\n");
        const auto out = ah::intel_gpu_probe{}.probe(ah::host_system(dir.path().string()));
        INFO(warnings_of(out.warnings));
        CHECK(out.warnings.empty());
        REQUIRE(out.devices.size() == 1);
        CHECK(out.devices[0].uuid.view() == "00000000-0000-0000-0000-020a00008086");
        CHECK(*out.devices[0].memory_bytes == 32 * gib);
    }
    SUBCASE("xpu-smi fails: reported") {
        test::scratch_dir dir;
        add_card(dir, "card0", "0000:03:00.0", "0x56a1", "xe");
        dir.write("ai-hwaccel-tools/index", "3\t-\t" + dump + "\n");
        const auto out = ah::intel_gpu_probe{}.probe(ah::host_system(dir.path().string()));
        REQUIRE(out.devices.size() == 1);
        CHECK(out.devices[0].spec != nullptr);
        CHECK_FALSE(out.devices[0].memory_bytes.from == ah::origin::sysfs); // no tile file: the catalogue's
        REQUIRE(out.warnings.size() == 1);
        CHECK(out.warnings[0].kind == ah::warning_kind::tool_failed);
    }
    SUBCASE("an Arc card behind its own PCIe switch: the slot's link, not the GPU's 2.5 GT/s x1") {
        // Hand-made after the lspci of an Arc B570 (GPU endpoint: LnkCap 2.5GT/s x1) and the
        // layout nvtop works round: root port 00:01.0, the card's switch 01:00.0 (upstream)
        // and 02:01.0 (downstream), the GPU 03:00.0.
        namespace fs = std::filesystem;
        test::scratch_dir dir;
        const std::string up = "sys/devices/pci0000:00/0000:00:01.0/0000:01:00.0";
        const std::string gpu = up + "/0000:02:01.0/0000:03:00.0";
        for (const auto& [d, speed, width] : {std::tuple{up, "16.0 GT/s PCIe", "16"}, std::tuple{gpu, "2.5 GT/s PCIe", "1"}})
            for (const char* w : {"current", "max"}) {
                dir.write(d + "/" + w + "_link_speed", std::string(speed) + "\n");
                dir.write(d + "/" + w + "_link_width", std::string(width) + "\n");
            }
        dir.write(up + "/current_link_speed", "8.0 GT/s PCIe\n"); // a Gen3 slot
        dir.write(gpu + "/vendor", "0x8086\n");
        dir.write(gpu + "/device", "0x56a0\n");
        dir.write(gpu + "/class", "0x030000\n");
        fs::create_directories(dir.path() / "sys/bus/pci/drivers/xe");
        fs::create_directory_symlink("../../../../../../bus/pci/drivers/xe", dir.path() / gpu / "driver");
        fs::create_directories(dir.path() / "sys/bus/pci/devices");
        fs::create_directory_symlink("../../../devices/pci0000:00/0000:00:01.0/0000:01:00.0/0000:02:01.0/0000:03:00.0",
                                     dir.path() / "sys/bus/pci/devices/0000:03:00.0");
        fs::create_directories(dir.path() / gpu / "drm/card0");
        fs::create_directories(dir.path() / "sys/class/drm");
        fs::create_directory_symlink("../../devices/pci0000:00/0000:00:01.0/0000:01:00.0/0000:02:01.0/0000:03:00.0/drm/card0",
                                     dir.path() / "sys/class/drm/card0");
        fs::create_directory_symlink("../../../0000:03:00.0", dir.path() / gpu / "drm/card0/device");
        std::vector<ah::warning> w;
        const auto cards = ah::read_intel_gpu_sysfs(ah::host_system(dir.path().string()), w);
        INFO(test::warnings_text(w));
        REQUIRE(cards.size() == 1);
        const auto& p = cards[0].profile;
        CHECK(*p.pcie_max == ah::pcie_link{4, 16});
        CHECK(*p.pcie_current == ah::pcie_link{3, 16});
        CHECK(p.pcie_max.from == ah::origin::sysfs);
    }
    SUBCASE("a DRM card whose number no kernel writes (past 2^64) is no card") {
        test::scratch_dir dir;
        add_card(dir, "card184467440737095516160", "0000:03:00.0", "0x56a0", "xe");
        add_card(dir, "card1", "0000:04:00.0", "0x56a0", "xe");
        std::vector<ah::warning> w;
        const auto cards = ah::read_intel_gpu_sysfs(ah::host_system(dir.path().string()), w);
        REQUIRE(cards.size() == 1);
        CHECK(cards[0].profile.index == 1);
    }
    SUBCASE("hostile sysfs values") {
        test::scratch_dir dir;
        add_card(dir, "card0", "0000:03:00.0", "0x56a0", "xe");
        dir.write("sys/bus/pci/devices/0000:03:00.0/tile0/physical_vram_size_bytes", "lots\n");
        dir.write("sys/bus/pci/devices/0000:03:00.0/tile1/physical_vram_size_bytes", "99999999999999999999\n");
        std::vector<ah::warning> w;
        const auto cards = ah::read_intel_gpu_sysfs(ah::host_system(dir.path().string()), w);
        REQUIRE(cards.size() == 1);
        CHECK_FALSE(cards[0].local_memory);
        CHECK(cards[0].discrete); // off bus 0
        CHECK(w.size() == 2);
    }
}

#endif // AI_HWACCEL_BACKEND_INTEL_GPU
