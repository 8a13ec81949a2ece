#include "ai_hwaccel/detect/tpu.hpp"

#include "fixtures.hpp"

#include <doctest/doctest.h>

#include <filesystem>
#include <string>
#include <vector>

#if AI_HWACCEL_BACKEND_TPU

namespace ah = ai_hwaccel;
namespace fs = std::filesystem;

namespace {

constexpr std::uint64_t gib = 1024ull * 1024 * 1024;

std::string problems_of(const std::vector<ah::tpu_parse_problem>& ps) {
    std::string s;
    for (const auto& p : ps) s += std::to_string(p.line) + ": " + p.message + "\n";
    return s;
}

// GiB figures as tpu-info prints them (two decimals), in bytes.
constexpr std::uint64_t gib_x100(std::uint64_t hundredths) { return (hundredths * gib + 50) / 100; } // rounded

} // namespace

static_assert(ah::backend_probe<ah::tpu_probe, ah::host_system>);
static_assert(ah::descriptor_of<ah::tpu_probe>().name == "tpu");
static_assert(ah::detail::tpu::chip_number("/dev/vfio/3") == 3u);
static_assert(ah::detail::tpu::chip_number("/dev/accel12") == 12u);
static_assert(ah::detail::tpu::chip_number("/dev/accel/accel1") == 1u);
static_assert(!ah::detail::tpu::chip_number("/dev/vfio/vfio"));
static_assert(!ah::detail::tpu::chip_number("/dev/nvidia0"));
static_assert(ah::detail::tpu::is_tpu_device_id(0x0062));
static_assert(!ah::detail::tpu::is_tpu_device_id(0x0042)); // gVNIC shares Google's vendor id

TEST_CASE("every TPU PCI id the catalogue carries is one the probe knows") {
    for (const auto& row : ah::device_catalogue) {
        if (row.kind != ah::device_kind::tpu) continue;
        CAPTURE(row.name);
        for (auto id : row.pci_device_ids) CHECK(ah::detail::tpu::is_tpu_device_id(id));
    }
}

TEST_CASE("parse_tpu_info: real captures") {
    SUBCASE("v4, first release, rich box tables, /dev/accel") {
        const auto t = test::capture("tpu/tpu-info_v4_4-chips_dev-accel_rich-table.txt");
        if (!t) return;
        const auto r = ah::parse_tpu_info(*t);
        INFO(problems_of(r.problems));
        CHECK(r.problems.empty());
        CHECK(r.libtpu_version.empty());
        CHECK(r.accelerator_type.empty());
        REQUIRE(r.devices.size() == 4);
        REQUIRE(r.chips.size() == 4);
        for (std::size_t i = 0; i < 4; ++i) {
            const auto& d = r.devices[i];
            CAPTURE(i);
            CHECK(d.kind == ah::device_kind::tpu);
            CHECK(d.maker == ah::vendor::google);
            CHECK(d.index == i);
            CHECK(d.name.view() == "TPU v4");
            CHECK(r.chips[i].device_path == "/dev/accel" + std::to_string(i));
            CHECK(r.chips[i].pids == std::vector<std::uint32_t>{3786361});
            CHECK(r.chips[i].devices_per_chip == 1u);
            CHECK(*d.memory_bytes == gib_x100(3075)); // 30.75 GiB
            CHECK(d.memory_bytes.from == ah::origin::tool);
            CHECK(*d.memory_used_bytes == 0);
            CHECK(*d.memory_free_bytes == gib_x100(3075));
            CHECK(*d.utilization_percent == 0.0);
            CHECK(d.driver_version.empty());
            REQUIRE(d.spec != nullptr);
            CHECK(d.spec->name == "Google TPU v4");
            CHECK(d.peak.bf16 == 275);
            CHECK(d.peak_from == ah::origin::catalogue);
            CHECK(d.memory_bandwidth_gbps.from == ah::origin::catalogue);
        }
    }
    SUBCASE("v6e, static mode, markdown tables, /dev/vfio, busy") {
        const auto t = test::capture("tpu/tpu-info_v6e_4-chips_dev-vfio_static.txt");
        if (!t) return;
        const auto r = ah::parse_tpu_info(*t);
        INFO(problems_of(r.problems));
        CHECK(r.problems.empty());
        CHECK(r.libtpu_version == "0.0.19.dev20250721+nightly");
        CHECK(r.accelerator_type == "v6e");
        REQUIRE(r.devices.size() == 4);
        const std::uint64_t used[] = {gib_x100(1845), gib_x100(1040), gib_x100(1040), gib_x100(1040)};
        for (std::size_t i = 0; i < 4; ++i) {
            const auto& d = r.devices[i];
            CAPTURE(i);
            CHECK(d.name.view() == "TPU v6e");
            CHECK(r.chips[i].device_path == "/dev/vfio/" + std::to_string(i));
            CHECK(r.chips[i].pids == std::vector<std::uint32_t>{1469584});
            CHECK(r.chips[i].devices_per_chip == 1u);
            CHECK(*d.memory_bytes == gib_x100(3125)); // 31.25 GiB
            CHECK(*d.memory_used_bytes == used[i]);
            CHECK(*d.memory_free_bytes == gib_x100(3125) - used[i]);
            CHECK(*d.utilization_percent == 100.0);
            CHECK(d.utilization_percent.from == ah::origin::tool);
            CHECK(d.driver_version.view() == "0.0.19.dev20250721+nightly");
            REQUIRE(d.spec != nullptr);
            CHECK(d.spec->name == "Google TPU v6e");
            CHECK(d.peak.bf16 == 918);
        }
    }
    SUBCASE("tpu-info --process: 8 chips held by one python3") {
        const auto t = test::capture("tpu/tpu-info_process_8-chips_dev-vfio.txt");
        if (!t) return;
        const auto r = ah::parse_tpu_info(*t);
        INFO(problems_of(r.problems));
        CHECK(r.problems.empty());
        REQUIRE(r.devices.size() == 8);
        for (std::size_t i = 0; i < 8; ++i) {
            CAPTURE(i);
            CHECK(r.devices[i].kind == ah::device_kind::tpu);
            CHECK(r.devices[i].index == i);
            CHECK(r.devices[i].spec == nullptr); // the table does not say which TPU
            CHECK(r.chips[i].device_path == "/dev/vfio/" + std::to_string(i));
            CHECK(r.chips[i].pids == std::vector<std::uint32_t>{799657});
            CHECK(r.chips[i].process_name == "python3");
        }
    }
}

TEST_CASE("parse_tpu_info: hand-made variations") {
    SUBCASE("idle chips print PID None; the type line names the chip when the table does not") {
        // hand-made
        const auto r = ah::parse_tpu_info("Libtpu version: 0.0.18\nAccelerator type: v5p\n\nTPU Chips\n\n"
                                          "| Chip        | Type         | Devices | PID  |\n"
                                          "|-------------|--------------|---------|------|\n"
                                          "| /dev/vfio/0 | TPU v5p chip | 1       | None |\n");
        INFO(problems_of(r.problems));
        CHECK(r.problems.empty());
        REQUIRE(r.devices.size() == 1);
        CHECK(r.chips[0].pids.empty());
        REQUIRE(r.devices[0].spec != nullptr);
        CHECK(r.devices[0].spec->name == "Google TPU v5p");
        CHECK(r.devices[0].memory_bytes.from == ah::origin::catalogue); // no usage table
    }
    SUBCASE("TPU7x: a chip of two cores lists each core's holder; N/A for a chip whose one core is unheld") {
        // hand-made, in the layout of tpu-info's ActualTpuChipsTable (cli_helper.py): "Chip " header,
        // holders of the chip's cores joined by ", "
        const auto r = ah::parse_tpu_info("| Chip        | Type       | Devices | PID          |\n"
                                          "|-------------|------------|---------|--------------|\n"
                                          "| /dev/vfio/0 | TPU7x chip | 2       | 1234, 1235   |\n"
                                          "| /dev/vfio/2 | TPU7x chip | 2       | 77           |\n"
                                          "| /dev/vfio/4 | TPU7x chip | 2       | None         |\n"
                                          "| /dev/vfio/6 | TPU7x chip | 2       | N/A          |\n"
                                          "| /dev/vfio/8 | TPU7x chip | 2       | 1, x         |\n"
                                          "| /dev/vfio/9 | TPU7x chip | 2       | 1,           |\n");
        REQUIRE(r.devices.size() == 6);
        CHECK(r.chips[0].pids == std::vector<std::uint32_t>{1234, 1235});
        CHECK(r.chips[1].pids == std::vector<std::uint32_t>{77});
        CHECK(r.chips[2].pids.empty());
        CHECK(r.chips[3].pids.empty());
        CHECK(r.chips[4].pids.empty()); // not every entry reads: none kept, one problem
        CHECK(r.chips[5].pids.empty());
        REQUIRE(r.problems.size() == 2);
        CHECK(r.problems[0].message.find("\"1, x\"") != std::string::npos);
        CHECK(r.chips[0].devices_per_chip == 2u);
        REQUIRE(r.devices[0].spec != nullptr);
        CHECK(r.devices[0].spec->name == "Google TPU7x");
    }
    SUBCASE("a usage table alone makes the chips; its numbers index them") {
        // hand-made
        const auto r = ah::parse_tpu_info("Accelerator type: v5e\n\n| Chip | HBM Usage (GiB) | Duty cycle |\n"
                                          "|---|---|---|\n| 0 | 1.00 GiB / 15.75 GiB | 5.00% |\n"
                                          "| 1 | N/A | N/A |\n");
        INFO(problems_of(r.problems));
        CHECK(r.problems.empty());
        REQUIRE(r.devices.size() == 2);
        CHECK(*r.devices[0].memory_used_bytes == gib);
        CHECK(*r.devices[0].utilization_percent == 5.0);
        CHECK(r.devices[1].memory_bytes.from == ah::origin::catalogue); // N/A stays unknown to the tool
        CHECK_FALSE(r.devices[1].utilization_percent.has_value());
        CHECK(r.devices[1].spec->name == "Google TPU v5e");
    }
    SUBCASE("a usage table alone whose numbers start past 0: each row on the chip it made") {
        // hand-made
        const auto r = ah::parse_tpu_info("Accelerator type: v5e\n\n| Chip | HBM Usage (GiB) | Duty cycle |\n"
                                          "|---|---|---|\n| 1 | 1.00 GiB / 2.00 GiB | 5.00% |\n"
                                          "| 2 | 1.00 GiB / 3.00 GiB | 7.00% |\n");
        INFO(problems_of(r.problems));
        CHECK(r.problems.empty());
        REQUIRE(r.devices.size() == 2);
        CHECK(r.devices[0].index == 1);
        CHECK(*r.devices[0].memory_bytes == 2 * gib);
        CHECK(*r.devices[0].utilization_percent == 5.0);
        CHECK(r.devices[1].index == 2);
        CHECK(*r.devices[1].memory_bytes == 3 * gib);
        CHECK(*r.devices[1].utilization_percent == 7.0);
    }
    SUBCASE("a chip's usage row twice: the second is reported, not written over the first") {
        // hand-made
        const auto r = ah::parse_tpu_info("| Chip        | Type         | Devices | PID  |\n"
                                          "|-------------|--------------|---------|------|\n"
                                          "| /dev/vfio/0 | TPU v5e chip | 1       | None |\n"
                                          "| /dev/vfio/1 | TPU v5e chip | 1       | None |\n\n"
                                          "| Chip | HBM Usage (GiB) | Duty cycle |\n|---|---|---|\n"
                                          "| 0 | 1.00 GiB / 2.00 GiB | 5.00% |\n| 0 | 1.00 GiB / 3.00 GiB | 7.00% |\n");
        REQUIRE(r.devices.size() == 2);
        CHECK(*r.devices[0].memory_bytes == 2 * gib);
        CHECK(r.devices[1].memory_bytes.from != ah::origin::tool);
        REQUIRE(r.problems.size() == 1);
        CHECK(r.problems[0].message.find("second utilization row for chip 0") != std::string::npos);
    }
    SUBCASE("more usage rows than chips: usage not assigned, said so") {
        // hand-made: a v3-like table with two devices per chip
        const auto r = ah::parse_tpu_info("| Device | Type | Cores | PID |\n| /dev/accel0 | TPU v3 chip | 2 | 1 |\n\n"
                                          "| Core ID | Memory usage | Duty cycle |\n| 0 | 1.00 GiB / 16.00 GiB | 1.00% |\n"
                                          "| 1 | 1.00 GiB / 16.00 GiB | 1.00% |\n");
        REQUIRE(r.devices.size() == 1);
        CHECK(r.chips[0].devices_per_chip == 2u);
        CHECK_FALSE(r.devices[0].memory_bytes.has_value());
        CHECK(r.problems.size() == 1);
    }
}

TEST_CASE("parse_tpu_info: hostile input never crashes and is reported") {
    const std::string header = "| Chip | HBM Usage (GiB) | Duty cycle |\n|---|---|---|\n";
    for (const std::string& text : std::vector<std::string>{
             "",
             "\n\n\n",
             std::string("\0\xff\xfe|\x01|\n", 8),
             "| Chip | Type |\n| /dev/vfio/0 |",
             "| Chip | Type |\n| /etc/passwd | x |\n",
             "| Chip | Type | Devices | PID |\n| /dev/vfio/0 | \xff\xfe chip | 99999999999999999999 | -1 |\n",
             header + "| 0 | 99999999999999999999999 GiB / 1 GiB | 200% |\n",
             header + "| 0 | 2 GiB / 1 GiB | -5% |\n",
             header + "| 99999999999999999999 | 1 GiB / 2 GiB | 1% |\n",
             header + "| 7 | 1.00 GiB / 2.00 GiB | 1% |\n",
             header + "| 0 | 1 MiB / 2 MiB | nan% |\n",
             "Libtpu version: " + std::string(100000, 'x') + "\n",
             std::string(1 << 20, '|'),
             "|" + std::string(1 << 20, 'a') + "|\n",
         }) {
        const auto r = ah::parse_tpu_info(text);
        CHECK(r.problems.size() <= ah::detail::parsing::max_problems + 1);
        CHECK(r.devices.size() == r.chips.size());
        for (const auto& d : r.devices) {
            if (d.utilization_percent) CHECK(*d.utilization_percent <= 100.0);
            if (d.memory_used_bytes) CHECK(*d.memory_used_bytes <= *d.memory_bytes);
        }
    }
    // Many rows: capped, not unbounded.
    std::string many = "| Chip | Type | Devices | PID |\n|---|---|---|---|\n";
    for (int i = 0; i < 3000; ++i) many += "| /dev/vfio/" + std::to_string(i) + " | TPU v6e chip | 1 | 1 |\n";
    const auto r = ah::parse_tpu_info(many);
    CHECK(r.devices.size() == ah::detail::parsing::max_rows);
    CHECK_FALSE(r.problems.empty());
    // Garbage rows in a known table are each a problem, capped.
    std::string bad = "| Chip | Type |\n";
    for (int i = 0; i < 100; ++i) bad += "| nope | x |\n";
    const auto b = ah::parse_tpu_info(bad);
    CHECK(b.devices.empty());
    CHECK(b.problems.size() == ah::detail::parsing::max_problems + 1);
}

TEST_CASE("parse_tpu_info: a long UTF-8 value is cut between characters") {
    // hand-made: 100 two-byte characters after one byte, past the 120-byte cap: the cut
    // must not split a character (which read as bad text, a '?' and a "not printable" problem).
    std::string version = "a";
    for (int i = 0; i < 100; ++i) version += "\xC3\xA9";
    const auto r = ah::parse_tpu_info("Libtpu version: " + version + "\n");
    INFO(problems_of(r.problems));
    CHECK(r.libtpu_version.find('?') == std::string::npos);
    CHECK(r.libtpu_version.size() == 119); // "a" and 59 whole characters
    REQUIRE(r.problems.size() == 1);
    CHECK(r.problems[0].message.find("too long, cut") != std::string::npos);
}

TEST_CASE("parse_tpu_info_version") {
    if (const auto t = test::capture("tpu/tpu-info_version_v6e.txt")) {
        const auto r = ah::parse_tpu_info_version(*t);
        INFO(problems_of(r.problems));
        CHECK(r.problems.empty());
        CHECK(r.tpu_info_version == "0.8.0");
        CHECK(r.libtpu_version == "0.0.18");
        CHECK(r.accelerator_type == "v6e");
    }
    const auto g = ah::parse_tpu_info_version("- tpu-info version: 1\nhello\n\xff\n");
    CHECK(g.tpu_info_version == "1");
    CHECK(g.problems.size() == 2);
    std::string lots;
    for (int i = 0; i < 1000; ++i) lots += "x\n";
    CHECK(ah::parse_tpu_info_version(lots).problems.size() <= ah::detail::parsing::max_problems + 1);
}

TEST_CASE("parse_tpu_vfio_transcript") {
    SUBCASE("real capture: v6e host, four chips, one per IOMMU group") {
        const auto t = test::capture("tpu/v6e_ls-dev-vfio_iommu-groups-vendor-device.txt");
        if (!t) return;
        const auto r = ah::parse_tpu_vfio_transcript(*t);
        INFO(problems_of(r.problems));
        CHECK(r.problems.empty());
        CHECK(r.vfio_control_node);
        CHECK(r.vfio_nodes == std::vector<std::uint32_t>{0, 1, 2, 3});
        CHECK(r.iommu_groups == std::vector<std::uint32_t>{0, 1, 2, 3});
        REQUIRE(r.devices.size() == 4);
        for (std::size_t i = 0; i < 4; ++i) {
            const auto& d = r.devices[i];
            CAPTURE(i);
            CHECK(d.index == i);
            CHECK(d.kind == ah::device_kind::tpu);
            CHECK(*d.pci == ah::pci_address{0, 0, static_cast<std::uint8_t>(4 + i), 0});
            CHECK(d.pci_device_id == 0x006f);
            CHECK(d.available);
            CHECK(d.name.view() == "Google TPU v6e");
            REQUIRE(d.spec != nullptr);
            CHECK(*d.memory_bytes == 32 * gib);
            CHECK(d.memory_bytes.from == ah::origin::catalogue);
        }
    }
    SUBCASE("hand-made: TPU7x, two functions per chip in separate groups, one device per chip") {
        const auto r = ah::parse_tpu_vfio_transcript(
            "--- /dev/vfio ---\ncrw-rw-rw- 1 root root 245,   1 Jul 29 18:29 1\n"
            "crw-rw-rw- 1 root root 245,   2 Jul 29 18:29 2\n--- sysfs devices ---\n"
            "/sys/kernel/iommu_groups/0/devices/0000:00:04.0 -> vendor: 0x1ae0 device: 0x0076\n"
            "/sys/kernel/iommu_groups/1/devices/0000:00:04.1 -> vendor: 0x1ae0 device: 0x0076\n"
            "/sys/kernel/iommu_groups/2/devices/0000:00:05.0 -> vendor: 0x1ae0 device: 0x0076\n"
            "/sys/kernel/iommu_groups/3/devices/0000:00:05.1 -> vendor: 0x1ae0 device: 0x0076\n"
            "/sys/kernel/iommu_groups/4/devices/0000:00:06.0 -> vendor: 0x1ae0 device: 0x0076\n"
            "/sys/kernel/iommu_groups/5/devices/0000:00:06.1 -> vendor: 0x1ae0 device: 0x0076\n");
        INFO(problems_of(r.problems));
        CHECK(r.problems.empty());
        REQUIRE(r.devices.size() == 3);
        CHECK(r.iommu_groups == std::vector<std::uint32_t>{0, 2, 4});
        CHECK(r.devices[0].available);      // its second core's node
        CHECK(r.devices[1].available);      // its first core's node
        CHECK_FALSE(r.devices[2].available); // neither
        CHECK(r.devices[2].index == 2u);
        CHECK(*r.devices[2].memory_bytes == 192 * gib);
    }
    SUBCASE("hand-made: a group without its node, a NIC of the same vendor, garbage") {
        const auto r = ah::parse_tpu_vfio_transcript(
            "--- /dev/vfio ---\ntotal 0\ncrw-rw-rw- 1 root root 245,   0 Jul 29 18:29 0\n"
            "crw-rw-rw- 1 root root  10, 196 Jul 29 18:29 vfio\n--- sysfs devices ---\n"
            "/sys/kernel/iommu_groups/1/devices/0000:00:05.0 -> vendor: 0x1ae0\n  device: 0x0062\n"
            "/sys/kernel/iommu_groups/0/devices/0000:00:04.0 -> vendor: 0x1ae0\n  device: 0x0062\n"
            "/sys/kernel/iommu_groups/2/devices/0000:00:03.0 -> vendor: 0x1ae0\n  device: 0x0042\n"
            "/sys/kernel/iommu_groups/3/devices/0000:00:02.0 -> vendor: 0x8086  device: 0x1237\n");
        INFO(problems_of(r.problems));
        CHECK(r.problems.empty());
        REQUIRE(r.devices.size() == 2);
        CHECK(*r.devices[0].pci == ah::pci_address{0, 0, 4, 0});
        CHECK(r.devices[0].available);
        CHECK(*r.devices[1].pci == ah::pci_address{0, 0, 5, 0});
        CHECK_FALSE(r.devices[1].available); // group 1 has no node
        CHECK(r.devices[1].spec->name == "Google TPU v5p");
        CHECK(r.iommu_groups == std::vector<std::uint32_t>{0, 1});
    }
    SUBCASE("hostile") {
        for (const std::string& text : std::vector<std::string>{
                 "", "device: 0x1\n", "/sys/kernel/iommu_groups/x/devices/zz -> vendor: 0x1ae0\n",
                 "/sys/kernel/iommu_groups/99999999999999999999/devices/0000:00:04.0 -> vendor: 0x1ae0\n",
                 "/sys/kernel/iommu_groups/0/devices/0000:00:04.0 -> vendor: 0x1ae0\n  device: 0xfffff\n",
                 "--- /dev/vfio ---\n-rw-r--r-- 1 root root 0 x\ncrw 99999999999999999999\n",
                 std::string(1 << 20, '-'), std::string("\0\xff\n", 3)}) {
            const auto r = ah::parse_tpu_vfio_transcript(text);
            CHECK(r.problems.size() <= ah::detail::parsing::max_problems + 1);
            CHECK(r.devices.size() == r.iommu_groups.size());
        }
        std::string many = "--- /dev/vfio ---\n";
        for (int i = 0; i < 3000; ++i) many += "crw-rw-rw- 1 root root 245, 0 Jul 29 18:29 " + std::to_string(i) + "\n";
        const auto r = ah::parse_tpu_vfio_transcript(many);
        CHECK(r.vfio_nodes.size() == ah::detail::parsing::max_rows);
        CHECK(r.problems.size() == 1);
    }
}

namespace {

// A hand-made machine tree with TPU chips on the PCI bus.
struct fake_tpu_host {
    test::scratch_dir dir;
    fs::path root = dir.path();
    std::string dev(const std::string& a) const { return "sys/bus/pci/devices/" + a; }
    void link(const std::string& at, const std::string& target) const {
        fs::create_directories((root / at).parent_path());
        fs::create_symlink(target, root / at);
    }
    void chip(const std::string& a, const std::string& device, const std::string& driver, int numa = -1) const {
        dir.write(dev(a) + "/vendor", "0x1ae0\n");
        dir.write(dev(a) + "/device", device + "\n");
        dir.write(dev(a) + "/subsystem_device", "0x0000\n");
        dir.write(dev(a) + "/numa_node", std::to_string(numa) + "\n");
        if (!driver.empty()) link(dev(a) + "/driver", "../../../../bus/pci/drivers/" + driver);
    }
    void vfio(const std::string& a, int group, bool node = true) const {
        link(dev(a) + "/iommu_group", "../../../../kernel/iommu_groups/" + std::to_string(group));
        if (node) dir.write("dev/vfio/" + std::to_string(group), "");
    }
    void tool(const std::string& output) const {
        dir.write("ai-hwaccel-tools/tpu-info.txt", output);
        dir.write("ai-hwaccel-tools/index", "0\ttpu-info.txt\ttpu-info\n");
    }
};

// hand-made tpu-info output in the layout of the real v6e static capture.
std::string v5p_tpu_info(int chips) {
    std::string s = "Libtpu version: 0.0.18\nAccelerator type: v5p\n\nTPU Chips\n\n"
                    "| Chip        | Type         | Devices | PID  |\n|---|---|---|---|\n";
    for (int i = 0; i < chips; ++i) s += "| /dev/vfio/" + std::to_string(i) + " | TPU v5p chip | 1 | 42 |\n";
    s += "\nTPU Runtime Utilization\n\n| Chip | HBM Usage (GiB) | Duty cycle |\n|---|---|---|\n";
    for (int i = 0; i < chips; ++i) s += "| " + std::to_string(i) + " | 10.00 GiB / 95.00 GiB | 50.00% |\n";
    return s;
}

} // namespace

TEST_CASE("tpu_probe") {
    SUBCASE("hand-made tree: four v5p chips through VFIO, tpu-info running") {
        fake_tpu_host h;
        const char* addrs[] = {"0000:00:04.0", "0000:00:05.0", "0000:00:06.0", "0000:00:07.0"};
        for (int i = 0; i < 4; ++i) {
            h.chip(addrs[i], "0x0062", "vfio-pci", i / 2);
            h.vfio(addrs[i], i);
            h.dir.write(h.dev(addrs[i]) + "/current_link_speed", "16.0 GT/s PCIe\n");
            h.dir.write(h.dev(addrs[i]) + "/current_link_width", "16\n");
        }
        h.chip("0000:00:03.0", "0x0042", "gvnic"); // Google's NIC: not a TPU
        h.dir.write("sys/bus/pci/devices/0000:00:02.0/vendor", "0x8086\n");
        h.tool(v5p_tpu_info(4));
        const auto out = ah::tpu_probe{}.probe(ah::host_system(h.root.string()));
        INFO(test::warnings_text(out.warnings));
        CHECK(out.warnings.empty());
        REQUIRE(out.devices.size() == 4);
        for (std::size_t i = 0; i < 4; ++i) {
            const auto& d = out.devices[i];
            CAPTURE(i);
            CHECK(d.kind == ah::device_kind::tpu);
            CHECK(d.index == i);
            CHECK(d.available);
            CHECK(d.name.view() == "Google TPU v5p");
            CHECK(d.pci_device_id == 0x0062);
            CHECK(*d.pci == *ah::parse_pci_address(addrs[i]));
            CHECK(*d.numa_node == static_cast<int>(i / 2));
            CHECK(d.numa_node.from == ah::origin::sysfs);
            CHECK(*d.pcie_current == ah::pcie_link{4, 16});
            CHECK_FALSE(d.pcie_max.has_value());
            CHECK(*d.chips == 1);
            CHECK(*d.memory_bytes == 95 * gib);
            CHECK(d.memory_bytes.from == ah::origin::tool);
            CHECK(*d.memory_used_bytes == 10 * gib);
            CHECK(*d.memory_free_bytes == 85 * gib);
            CHECK(*d.utilization_percent == 50.0);
            CHECK(d.driver_version.view() == "0.0.18");
            REQUIRE(d.spec != nullptr);
            CHECK(d.peak.bf16 == 459);
            CHECK(d.peak_from == ah::origin::catalogue);
        }
        REQUIRE(out.links.size() == 1);
        const auto& l = out.links[0];
        CHECK(l.kind == ah::interconnect_kind::ici);
        CHECK(l.scope == ah::link_scope::intra_node);
        CHECK(l.devices == std::vector<std::uint32_t>{0, 1, 2, 3});
        CHECK(*l.bandwidth_gbps == 1200);
        CHECK(l.bandwidth_gbps.from == ah::origin::catalogue);
    }
    SUBCASE("hand-made tree: v4 chips through the accel class; one unbound, one without its node") {
        fake_tpu_host h;
        h.chip("0000:00:04.0", "0x005e", "accel_driver_name_unknown");
        h.chip("0000:00:05.0", "0x005e", "accel_driver_name_unknown");
        h.chip("0000:00:06.0", "0x005e", "");
        h.chip("0000:00:07.0", "0x005e", "vfio-pci");
        h.vfio("0000:00:07.0", 9, false); // group 9 has no /dev/vfio/9
        // accel1 is the chip at 04.0, accel0 the one at 05.0: the class says, not the order.
        h.link("sys/class/accel/accel1/device", "../../../bus/pci/devices/0000:00:04.0");
        h.link("sys/class/accel/accel0/device", "../../../bus/pci/devices/0000:00:05.0");
        h.dir.write("dev/accel1", "");
        const auto out = ah::tpu_probe{}.probe(ah::host_system(h.root.string()));
        REQUIRE(out.devices.size() == 4);
        CHECK(out.devices[0].available);       // /dev/accel1 exists
        CHECK_FALSE(out.devices[1].available); // /dev/accel0 does not
        CHECK_FALSE(out.devices[2].available); // no driver
        CHECK_FALSE(out.devices[3].available); // no VFIO node
        CHECK(out.devices[0].name.view() == "Google TPU v4");
        CHECK(*out.devices[0].memory_bytes == 32 * gib);
        REQUIRE(out.links.size() == 1);
        CHECK(out.links[0].devices.size() == 4);
        CHECK_FALSE(out.links[0].bandwidth_gbps.has_value()); // v4's per-chip ICI figure is unpublished
        // Hardware present, tpu-info absent: one warning.
        REQUIRE(out.warnings.size() == 1);
        CHECK(out.warnings[0].kind == ah::warning_kind::tool_not_found);
        CHECK(out.warnings[0].backend == ah::backend_id::tpu);
    }
    SUBCASE("hand-made tree: no class entry, tpu-info's /dev/accel<n> convention; v2/v3 by subsystem") {
        fake_tpu_host h;
        h.chip("0000:00:04.0", "0x0027", "some_driver");
        h.dir.write(h.dev("0000:00:04.0") + "/subsystem_device", "0x004f\n");
        h.dir.write("dev/accel0", "");
        const auto out = ah::tpu_probe{}.probe(ah::host_system(h.root.string()));
        REQUIRE(out.devices.size() == 1);
        CHECK(out.devices[0].available);
        CHECK(out.devices[0].name.view() == "Google TPU v3");
        CHECK(out.devices[0].spec == nullptr);
        CHECK(out.links.empty()); // one chip: no ICI link
    }
    SUBCASE("hand-made tree: TPU7x, two PCI functions per chip, one device per chip") {
        // Each TPU7x chip shows one function per core at one domain:bus:device (tpu-info's
        // device.py groups them the same way); the row's figures are the whole chip's.
        fake_tpu_host h;
        int group = 0;
        for (int chip = 0; chip < 4; ++chip)
            for (int fn = 0; fn < 2; ++fn) {
                const std::string a = "0000:00:0" + std::to_string(4 + chip) + "." + std::to_string(fn);
                h.chip(a, "0x0076", "vfio-pci", 0);
                // chip 1 has no node for its first core, chip 2 none at all
                h.vfio(a, group++, !(chip == 1 && fn == 0) && chip != 2);
            }
        std::string info = "| Chip | Type | Devices | PID |\n|---|---|---|---|\n";
        for (int chip = 0; chip < 4; ++chip)
            info += "| /dev/vfio/" + std::to_string(2 * chip) + " | TPU7x chip | 2 | 10, 11 |\n";
        h.tool(info);
        const auto out = ah::tpu_probe{}.probe(ah::host_system(h.root.string()));
        INFO(test::warnings_text(out.warnings));
        CHECK(out.warnings.empty()); // tpu-info's four chips match the bus's four
        REQUIRE(out.devices.size() == 4);
        std::uint64_t hbm = 0;
        for (std::size_t i = 0; i < 4; ++i) {
            const auto& d = out.devices[i];
            CAPTURE(i);
            CHECK(d.index == i);
            CHECK(d.name.view() == "Google TPU7x");
            CHECK(*d.pci == ah::pci_address{0, 0, static_cast<std::uint8_t>(4 + i), 0}); // the first core's
            CHECK(*d.chips == 1);
            CHECK(*d.compute_units == 2);
            CHECK(d.available == (i != 2));
            hbm += *d.memory_bytes;
        }
        CHECK(hbm == 4 * 192 * gib);
        REQUIRE(out.links.size() == 1);
        CHECK(out.links[0].state == "4 chips");
        // A v5p chip of one function each stays one device per function.
        fake_tpu_host v;
        v.chip("0000:00:04.0", "0x0062", "vfio-pci");
        v.vfio("0000:00:04.0", 0);
        v.chip("0000:00:05.0", "0x0062", "vfio-pci");
        v.vfio("0000:00:05.0", 1);
        CHECK(ah::tpu_probe{.use_tpu_info = false}.probe(ah::host_system(v.root.string())).devices.size() == 2);
    }
    SUBCASE("tpu-info disagrees on the count: its figures are not used") {
        fake_tpu_host h;
        h.chip("0000:00:04.0", "0x0062", "vfio-pci");
        h.vfio("0000:00:04.0", 0);
        h.chip("0000:00:05.0", "0x0062", "vfio-pci");
        h.vfio("0000:00:05.0", 1);
        h.tool(v5p_tpu_info(3));
        const auto out = ah::tpu_probe{}.probe(ah::host_system(h.root.string()));
        REQUIRE(out.devices.size() == 2);
        CHECK(out.devices[0].memory_bytes.from == ah::origin::catalogue);
        REQUIRE(out.warnings.size() == 1);
        CHECK(out.warnings[0].kind == ah::warning_kind::disagreement);
    }
    SUBCASE("tpu-info fails: reported, sysfs chips kept") {
        fake_tpu_host h;
        h.chip("0000:00:04.0", "0x006f", "vfio-pci");
        h.vfio("0000:00:04.0", 0);
        h.dir.write("ai-hwaccel-tools/index", "1\t-\ttpu-info\n");
        const auto out = ah::tpu_probe{}.probe(ah::host_system(h.root.string()));
        REQUIRE(out.devices.size() == 1);
        CHECK(out.devices[0].available);
        CHECK(test::count_kind(out.warnings, ah::warning_kind::tool_failed) == 1);
    }
    SUBCASE("tpu-info exits 0 with nothing, or no table: a parse error, sysfs chips kept") {
        for (const char* text : {"", "ok\n"}) {
            CAPTURE(text);
            fake_tpu_host h;
            h.chip("0000:00:04.0", "0x006f", "vfio-pci");
            h.vfio("0000:00:04.0", 0);
            h.dir.write("ai-hwaccel-tools/t.txt", text);
            h.dir.write("ai-hwaccel-tools/index", "0\tt.txt\ttpu-info\n");
            const auto out = ah::tpu_probe{}.probe(ah::host_system(h.root.string()));
            INFO(test::warnings_text(out.warnings));
            REQUIRE(out.devices.size() == 1);
            CHECK(out.devices[0].memory_bytes.from == ah::origin::catalogue);
            REQUIRE(out.warnings.size() == 1);
            CHECK(out.warnings[0].kind == ah::warning_kind::parse_error);
            CHECK(out.warnings[0].subject == "tpu-info");
        }
    }
    SUBCASE("no TPU: nothing, no warning, tpu-info not run") {
        fake_tpu_host h;
        h.chip("0000:00:03.0", "0x0042", "gvnic");
        h.dir.write("ai-hwaccel-tools/index", "1\t-\ttpu-info\n");
        const auto out = ah::tpu_probe{}.probe(ah::host_system(h.root.string()));
        CHECK(out.devices.empty());
        CHECK(out.links.empty());
        CHECK(out.warnings.empty());
        test::scratch_dir empty;
        CHECK(ah::tpu_probe{}.probe(ah::host_system(empty.path().string())).devices.empty());
    }
}

TEST_CASE("tpu_probe: machine tree handmade-tpu-v5p-host") {
    const fs::path root = fs::path(AI_HWACCEL_MACHINES_DIR) / "handmade-tpu-v5p-host";
    if (!fs::exists(root)) {
        MESSAGE("skipped: machine tree not found: " << root.string());
        return;
    }
    const auto out = ah::tpu_probe{}.probe(ah::host_system(root.string()));
    INFO(test::warnings_text(out.warnings));
    CHECK(out.warnings.empty());
    REQUIRE(out.devices.size() == 4);
    const std::uint64_t used[] = {gib_x100(6025), 58 * gib, 58 * gib, 58 * gib};
    const double duty[] = {87.5, 86.25, 86.25, 86.0};
    for (std::size_t i = 0; i < 4; ++i) {
        const auto& d = out.devices[i];
        CAPTURE(i);
        CHECK(d.index == i);
        CHECK(d.available);
        CHECK(d.name.view() == "Google TPU v5p");
        CHECK(*d.pci == ah::pci_address{0, 0, static_cast<std::uint8_t>(4 + i), 0});
        CHECK(*d.numa_node == static_cast<int>(i / 2));
        CHECK(*d.memory_bytes == 95 * gib);
        CHECK(*d.memory_used_bytes == used[i]);
        CHECK(*d.utilization_percent == duty[i]);
        CHECK(d.driver_version.view() == "0.0.18");
        CHECK(d.memory_bandwidth_gbps == ah::sourced<double>{2765, ah::origin::catalogue});
    }
    REQUIRE(out.links.size() == 1);
    CHECK(out.links[0].kind == ah::interconnect_kind::ici);
    CHECK(out.links[0].devices == std::vector<std::uint32_t>{0, 1, 2, 3});
    CHECK(*out.links[0].bandwidth_gbps == 1200);
}

TEST_CASE("detail::formats: TPU sniffers and capture parsers") {
    namespace f = ah::detail::formats;
    // Captures are their format's by path prefix; tpu/tpu-info_version* is not the table's.
    const test::sniffer_row rows[] = {
        {"tpu-info", f::sniff_tpu_info, "tpu/tpu-info_v", "tpu/tpu-info_version"},
        {"tpu-info-process", f::sniff_tpu_info_process, "tpu/tpu-info_process"},
        {"tpu-info-version", f::sniff_tpu_info_version, "tpu/tpu-info_version"},
        {"tpu-vfio-transcript", f::sniff_tpu_vfio_transcript, "tpu/v6e_ls-dev-vfio"},
    };
    test::check_sniffers(rows, 5);

    if (const auto t = test::capture("tpu/tpu-info_v6e_4-chips_dev-vfio_static.txt")) {
        ah::capture_parse out;
        out.format = "tpu-info";
        f::parse_tpu_info_capture(*t, out);
        CHECK(out.warnings.empty());
        REQUIRE(out.devices.size() == 4);
        CHECK(out.devices[0].spec->name == "Google TPU v6e");
    }
    if (const auto t = test::capture("tpu/tpu-info_process_8-chips_dev-vfio.txt")) {
        ah::capture_parse out;
        out.format = "tpu-info-process";
        f::parse_tpu_info_process_capture(*t, out);
        CHECK(out.warnings.empty());
        CHECK(out.devices.size() == 8);
    }
    if (const auto t = test::capture("tpu/tpu-info_version_v6e.txt")) {
        ah::capture_parse out;
        out.format = "tpu-info-version";
        f::parse_tpu_info_version_capture(*t, out);
        CHECK(out.warnings.empty());
        CHECK(out.devices.empty());
    }
    if (const auto t = test::capture("tpu/v6e_ls-dev-vfio_iommu-groups-vendor-device.txt")) {
        ah::capture_parse out;
        out.format = "tpu-vfio-transcript";
        f::parse_tpu_vfio_transcript_capture(*t, out);
        CHECK(out.warnings.empty());
        REQUIRE(out.devices.size() == 4);
        CHECK(out.devices[3].pci_device_id == 0x006f);
    }
    // Empty inputs say they found nothing.
    for (auto parse : {f::parse_tpu_info_capture, f::parse_tpu_info_process_capture,
                       f::parse_tpu_info_version_capture, f::parse_tpu_vfio_transcript_capture}) {
        ah::capture_parse out;
        out.format = "x";
        parse("", out);
        CHECK(test::count_kind(out.warnings, ah::warning_kind::parse_error) == 1);
        CHECK(out.devices.empty());
    }
    CHECK(f::sniff_tpu_info("") == 0);
    CHECK(f::sniff_tpu_info("TPU Chips\n") == 0);
    CHECK(f::sniff_tpu_info_process("TPU Process Info\n") == 0);
    CHECK(f::sniff_tpu_info_version("- libtpu version: 1\n") == 0);
    CHECK(f::sniff_tpu_vfio_transcript("/sys/kernel/iommu_groups/0\n") == 0);
}

#endif // AI_HWACCEL_BACKEND_TPU
