#include "ai_hwaccel/detect/topology.hpp"

#include "fixtures.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <filesystem>
#include <initializer_list>
#include <set>
#include <string>
#include <utility>
#include <vector>

namespace ah = ai_hwaccel;
namespace fs = std::filesystem;

namespace {
using test::denying_view;

using test::count_kind;

const fs::path pci_capture = fs::path(AI_HWACCEL_FIXTURES_DIR) / "pci-sysfs/sysfs-pci-links_supermicro-nec-ve-plx";

// "(file, value)" pairs from `tail -v -n +1 …` ("==> file <==" then the value) and from
// `grep . …` ("file:value") captures.
std::vector<std::pair<std::string, std::string>> attribute_lines(const std::string& text) {
    std::vector<std::pair<std::string, std::string>> out;
    std::string pending;
    std::size_t pos = 0;
    while (pos < text.size()) {
        const auto nl = text.find('\n', pos);
        std::string line = text.substr(pos, nl == std::string::npos ? std::string::npos : nl - pos);
        pos = nl == std::string::npos ? text.size() : nl + 1;
        if (line.rfind("==> ", 0) == 0) {
            pending = line.substr(4, line.size() - 8);
        } else if (!pending.empty() && !line.empty()) {
            out.emplace_back(pending, line);
            pending.clear();
        } else if (line.rfind("/sys/", 0) == 0 && line.find(':') != std::string::npos) {
            const auto colon = line.rfind(':'); // the value has no colon; the path may
            out.emplace_back(line.substr(0, colon), line.substr(colon + 1));
        }
    }
    return out;
}
} // namespace

TEST_CASE("parse_node_meminfo") {
    if (auto text = test::capture("gpu-numa-sysfs/node250-meminfo_ac922-v100-gpu-memory-node.txt")) {
        const auto node = ah::parse_node_meminfo(*text);
        REQUIRE(node);
        CHECK(node->id == 250);
        CHECK(node->memory_bytes == 15728640ull * 1024); // one V100's 15 GiB
        CHECK(node->cpus.empty());
    }
    const auto n = ah::parse_node_meminfo("Node 0 MemTotal:       65536 kB\nNode 0 MemFree: 1 kB\n");
    REQUIRE(n);
    CHECK(n->id == 0);
    CHECK(n->memory_bytes == 65536ull * 1024);
}

TEST_CASE("parse_node_meminfo hostile input") {
    CHECK_FALSE(ah::parse_node_meminfo("").has_value());
    CHECK_FALSE(ah::parse_node_meminfo("Node 0 MemFree: 5 kB\n").has_value());               // no MemTotal
    CHECK_FALSE(ah::parse_node_meminfo("Node 0 MemTotal: 5\n").has_value());                 // no unit
    CHECK_FALSE(ah::parse_node_meminfo("Node 0 MemTotal: 5 MB\n").has_value());              // not kB
    CHECK_FALSE(ah::parse_node_meminfo("Node 0 MemTotal: -1 kB\n").has_value());
    CHECK_FALSE(ah::parse_node_meminfo("Node 0 MemTotal: 1000000000000000000000000000000 kB\n").has_value());
    CHECK_FALSE(ah::parse_node_meminfo("Node 0 MemTotal: 18446744073709551615 kB\n").has_value()); // × 1024 overflows
    CHECK_FALSE(ah::parse_node_meminfo("Node x MemTotal: 5 kB\n").has_value());
    CHECK_FALSE(ah::parse_node_meminfo("Node 4294967296 MemTotal: 5 kB\n").has_value());
    CHECK_FALSE(ah::parse_node_meminfo("Node 0 MemTotal: 5 kB\nNode 1 MemFree: 5 kB\n").has_value()); // two nodes
    CHECK_FALSE(ah::parse_node_meminfo(std::string(5000, '\xff')).has_value());
    CHECK(ah::parse_node_meminfo("Node 3 MemTotal: 5 kB\r\n")->memory_bytes == 5120); // CRLF
}

TEST_CASE("probe_numa") {
    test::scratch_dir root;
    root.write("sys/devices/system/node/node0/cpulist", "0-3\n");
    root.write("sys/devices/system/node/node0/meminfo", "Node 0 MemTotal:       1024 kB\nNode 0 MemFree: 10 kB\n");
    root.write("sys/devices/system/node/node1/cpulist", "4-7\n");
    root.write("sys/devices/system/node/node1/meminfo", "Node 1 MemTotal:       2048 kB\n");
    // A GPU's memory: a node with memory and no CPUs (the real capture's meminfo).
    root.write("sys/devices/system/node/node250/cpulist", "\n");
    if (auto text = test::capture("gpu-numa-sysfs/node250-meminfo_ac922-v100-gpu-memory-node.txt"))
        root.write("sys/devices/system/node/node250/meminfo", *text);
    else
        root.write("sys/devices/system/node/node250/meminfo", "Node 250 MemTotal:       15728640 kB\n");
    root.write("sys/devices/system/node/possible", "0-1,250\n");
    root.write("sys/devices/system/node/has_cpu", "0-1\n");
    std::vector<ah::warning> w;
    const auto nodes = ah::probe_numa(ah::host_system(root.path().string()), w);
    CHECK(w.empty());
    REQUIRE(nodes.size() == 3);
    CHECK(nodes[0] == ah::numa_node{0, 1024 * 1024, "0-3"});
    CHECK(nodes[1] == ah::numa_node{1, 2048 * 1024, "4-7"});
    CHECK(nodes[2].id == 250);
    CHECK(nodes[2].cpus.empty()); // kept, with no CPUs
    CHECK(nodes[2].memory_bytes == 15728640ull * 1024);
}

TEST_CASE("probe_numa without NUMA, with bad and unreadable files") {
    test::scratch_dir empty;
    std::vector<ah::warning> w;
    CHECK(ah::probe_numa(ah::host_system(empty.path().string()), w).empty());
    CHECK(w.empty()); // a kernel without NUMA is not a problem

    test::scratch_dir root;
    root.write("sys/devices/system/node/node0/cpulist", "zero to three\n");
    root.write("sys/devices/system/node/node0/meminfo", "Node 7 MemTotal: 1024 kB\n"); // another node's
    root.write("sys/devices/system/node/node1/cpulist", "0-3\n");
    root.write("sys/devices/system/node/node1/meminfo", "\x00\x01garbage");
    root.write("sys/devices/system/node/node2/cpulist", "0-4294967295\n");
    root.write("sys/devices/system/node/node2/meminfo", "Node 2 MemTotal: 1 kB\n");
    root.write("sys/devices/system/node/nodeX/cpulist", "0\n"); // not a node directory
    denying_view sys(root.path().string());
    sys.denied.insert("/sys/devices/system/node/node2/meminfo");
    const auto nodes = ah::probe_numa(sys, w);
    REQUIRE(nodes.size() == 3);
    CHECK(nodes[0].cpus.empty());
    CHECK(nodes[0].memory_bytes == 0);
    CHECK(nodes[1].cpus == "0-3");
    CHECK(nodes[1].memory_bytes == 0);
    CHECK(nodes[2].cpus.empty());
    CHECK(nodes[2].memory_bytes == 0);
    CHECK(count_kind(w, ah::warning_kind::parse_error) == 3); // two cpulists, one meminfo
    CHECK(count_kind(w, ah::warning_kind::disagreement) == 1);
    CHECK(count_kind(w, ah::warning_kind::permission_denied) == 1);
    CHECK(w.size() == 5);
}

TEST_CASE("parse_pcie_link_speed") {
    CHECK(ah::parse_pcie_link_speed("2.5 GT/s PCIe") == 1);
    CHECK(ah::parse_pcie_link_speed("2.5 GT/s") == 1); // older kernels: no "PCIe"
    CHECK(ah::parse_pcie_link_speed("5.0 GT/s PCIe") == 2);
    CHECK(ah::parse_pcie_link_speed("5 GT/s") == 2);
    CHECK(ah::parse_pcie_link_speed("8.0 GT/s PCIe\n") == 3);
    CHECK(ah::parse_pcie_link_speed("16.0 GT/s PCIe") == 4);
    CHECK(ah::parse_pcie_link_speed("32.0 GT/s PCIe") == 5);
    CHECK(ah::parse_pcie_link_speed("64.0 GT/s PCIe") == 6);
    CHECK(ah::parse_pcie_link_speed("128.0 GT/s PCIe") == 7);
    CHECK(ah::parse_pcie_link_speed("Unknown") == 0);
    CHECK(ah::parse_pcie_link_speed("Unknown speed") == 0);
    // The real captures, every value they show.
    if (auto text = test::capture("pci-sysfs/link_navi-gpu-and-upstream-switch_tail.txt")) {
        const auto lines = attribute_lines(*text);
        REQUIRE(lines.size() == 8);
        std::vector<int> got;
        for (const auto& line : lines) {
            CAPTURE(line.first);
            if (line.first.find("_speed") != std::string::npos) got.push_back(ah::parse_pcie_link_speed(line.second));
            else got.push_back(ah::parse_pcie_link_width(line.second));
        }
        // 01:00.0 (switch upstream port): 16 GT/s x8 of 32 GT/s x16; 03:00.0: 32 GT/s x16.
        CHECK(got == std::vector<int>{4, 8, 5, 16, 5, 16, 5, 16});
    }
    if (auto text = test::capture("pci-sysfs/link_rx7800xt_grep.txt")) {
        const auto lines = attribute_lines(*text);
        REQUIRE(lines.size() == 4);
        CHECK(ah::parse_pcie_link_speed(lines[0].second) == 4);
        CHECK(ah::parse_pcie_link_width(lines[1].second) == 16);
        CHECK(ah::parse_pcie_link_speed(lines[2].second) == 4);
        CHECK(ah::parse_pcie_link_width(lines[3].second) == 16);
    }
}

TEST_CASE("parse_pcie_link_speed hostile input") {
    for (const char* bad : {"", "GT/s", "16", "16.0", "16.0 GB/s", "16.0 GT/sPCIe", "16.5 GT/s", "3 GT/s", "-8 GT/s",
                            "8. GT/s", "1000000000000000000000000000000 GT/s", "66 MHz PCI-X", "\xff\xfe GT/s",
                            "16.01 GT/s"}) {
        CAPTURE(bad);
        CHECK(ah::parse_pcie_link_speed(bad) == 0);
    }
    CHECK(ah::parse_pcie_link_speed("  8.0 GT/s PCIe  ") == 3);
    CHECK(ah::parse_pcie_link_speed("16.000 GT/s") == 4);
}

TEST_CASE("parse_pcie_link_width") {
    CHECK(ah::parse_pcie_link_width("16\n") == 16);
    CHECK(ah::parse_pcie_link_width("x8") == 8);
    CHECK(ah::parse_pcie_link_width("1") == 1);
    CHECK(ah::parse_pcie_link_width("32") == 32);
    for (const char* bad : {"", "0", "33", "255", "-1", "x", "16x", "1000000000000000000000000000000", "\xff"}) {
        CAPTURE(bad);
        CHECK(ah::parse_pcie_link_width(bad) == 0);
    }
}

TEST_CASE("read_pci_device") {
    if (!fs::exists(pci_capture)) {
        MESSAGE("skipped: capture not found: " << pci_capture.string());
        return;
    }
    const ah::host_system sys(pci_capture.string());
    std::vector<ah::warning> w;
    // An NEC SX-Aurora Vector Engine behind a PLX switch, on an old kernel ("8 GT/s").
    const auto ve = ah::read_pci_device(
        sys, "/sys/devices/pci0000:17/0000:17:00.0/0000:18:00.0/0000:19:08.0/0000:1b:00.0", w);
    REQUIRE(ve);
    CHECK(ve->address == ah::pci_address{0, 0x1b, 0, 0});
    CHECK(ve->class_code == 0x0b4000);
    CHECK(ve->vendor_id == 0x1bcf);
    CHECK(ve->device_id == 0x001c);
    CHECK(ve->subsystem_vendor_id == 0); // not in the capture
    REQUIRE(ve->link_current);
    CHECK(ve->link_current.from == ah::origin::sysfs);
    CHECK(*ve->link_current == ah::pcie_link{3, 16});
    CHECK(*ve->link_max == ah::pcie_link{3, 16});
    CHECK(ve->numa_node == -1);
    CHECK(ve->driver.empty());
    // The Intel X722 NIC: a Gen3 x1 link running at 2.5 GT/s.
    const auto nic = ah::read_pci_device(
        sys, "/sys/devices/pci0000:5d/0000:5d:02.0/0000:5e:00.0/0000:5f:03.0/0000:60:00.1", w);
    REQUIRE(nic);
    CHECK(nic->address == ah::pci_address{0, 0x60, 0, 1});
    CHECK(nic->class_code == 0x020000);
    CHECK(nic->vendor_id == 0x8086);
    CHECK(nic->device_id == 0x37d2);
    CHECK(*nic->link_current == ah::pcie_link{1, 1});
    CHECK(*nic->link_max == ah::pcie_link{3, 1});
    // A ConnectX-4 and the PLX switch above it.
    const auto cx4 = ah::read_pci_device(sys, "/sys/devices/pci0000:3a/0000:3a:00.0/0000:3b:00.0/0000:3c:08.0/0000:3e:00.0", w);
    REQUIRE(cx4);
    CHECK(cx4->vendor_id == 0x15b3);
    CHECK(cx4->device_id == 0x1013);
    CHECK(cx4->class_code == 0x020700); // InfiniBand controller
    const auto plx = ah::read_pci_device(sys, "/sys/devices/pci0000:3a/0000:3a:00.0/0000:3b:00.0", w);
    REQUIRE(plx);
    CHECK(plx->vendor_id == 0x10b5);
    CHECK(plx->device_id == 0x9797);
    CHECK(plx->class_code == 0x060400); // PCI bridge
    CHECK(w.empty());
    // Not a PCI function directory.
    CHECK_FALSE(ah::read_pci_device(sys, "/sys/devices/pci0000:3a", w).has_value());
    CHECK_FALSE(ah::read_pci_device(sys, "/sys/devices/pci0000:3a/0000:3a:00.7", w).has_value()); // absent
    CHECK(w.empty());
}

TEST_CASE("probe_pci on the captured tree") {
    if (!fs::exists(pci_capture)) {
        MESSAGE("skipped: capture not found: " << pci_capture.string());
        return;
    }
    // The capture has no /sys/bus; link every function into sys/bus/pci/devices as the
    // kernel does: relative links, within a copy of the capture (a machine tree's links
    // never lead out of it).
    test::scratch_dir root;
    fs::create_directories(root.path() / "sys/bus/pci/devices");
    fs::copy(pci_capture / "sys/devices", root.path() / "sys/devices", fs::copy_options::recursive);
    std::size_t linked = 0;
    for (const auto& e : fs::recursive_directory_iterator(root.path() / "sys/devices")) {
        if (!e.is_directory() || !ah::parse_pci_address(e.path().filename().string())) continue;
        fs::create_directory_symlink("../../.." / e.path().lexically_relative(root.path() / "sys"),
                                     root.path() / "sys/bus/pci/devices" / e.path().filename());
        ++linked;
    }
    CHECK(linked == 29);
    std::vector<ah::warning> w;
    const auto devices = ah::probe_pci(ah::host_system(root.path().string()), w);
    CHECK(w.empty());
    REQUIRE(devices.size() == 29);
    CHECK(std::is_sorted(devices.begin(), devices.end(),
                         [](const ah::pci_device& a, const ah::pci_device& b) { return a.address < b.address; }));
    auto count_vendor = [&](std::uint16_t v) {
        return std::count_if(devices.begin(), devices.end(), [&](const ah::pci_device& d) { return d.vendor_id == v; });
    };
    CHECK(count_vendor(0x1bcf) == 8);  // 8 Vector Engines
    CHECK(count_vendor(0x15b3) == 2);  // 2 ConnectX-4
    CHECK(count_vendor(0x10b5) == 12); // PLX switch ports
    CHECK(count_vendor(0x8086) == 7);  // root ports, bridges, the X722's two functions
    for (const auto& d : devices) {
        CAPTURE(std::string(d.address.text().data()));
        CHECK(d.link_current.has_value());
        CHECK(d.link_max.has_value());
    }
    CHECK(devices.front().address == ah::pci_address{0, 0x17, 0, 0});
    CHECK(devices.back().address == ah::pci_address{0, 0x60, 0, 1});
    // The X722's functions say 8 GT/s x1 of their own; the port above them (5f:03.0) is a
    // 2.5 GT/s x1 link, which caps them. The Vector Engines' Gen3 x16 path caps nothing.
    for (const auto& d : devices) {
        CAPTURE(std::string(d.address.text().data()));
        if (d.address.bus == 0x60) CHECK(*d.link_max == ah::pcie_link{1, 1});
        if (d.vendor_id == 0x1bcf) CHECK(*d.link_max == ah::pcie_link{3, 16});
    }
}

TEST_CASE("probe_pci: the ports above a function cap its maximum link") {
    // Hand-made trees. A device's max_link_* is its own capability; the slot's port limits it.
    struct hop {
        const char* address;
        const char* current_speed;
        const char* current_width;
        const char* max_speed;
        const char* max_width;
    };
    // One path from the root complex down: each hop a function in the folder of the one above,
    // linked into /sys/bus/pci/devices as the kernel links it.
    const auto chain = [](test::scratch_dir& root, std::initializer_list<hop> hops) {
        std::string dir = "sys/devices/pci0000:00";
        fs::create_directories(root.path() / "sys/bus/pci/devices");
        for (const hop& h : hops) {
            dir += std::string("/") + h.address;
            root.write(dir + "/vendor", "0x10de\n");
            root.write(dir + "/current_link_speed", std::string(h.current_speed) + " GT/s PCIe\n");
            root.write(dir + "/current_link_width", std::string(h.current_width) + "\n");
            root.write(dir + "/max_link_speed", std::string(h.max_speed) + " GT/s PCIe\n");
            root.write(dir + "/max_link_width", std::string(h.max_width) + "\n");
            fs::create_directory_symlink("../../../" + dir.substr(4), root.path() / "sys/bus/pci/devices" / h.address);
        }
        std::vector<ah::warning> w;
        auto devices = ah::probe_pci(ah::host_system(root.path().string()), w);
        CHECK(w.empty());
        return devices;
    };
    const auto max_of = [](const std::vector<ah::pci_device>& devices, ah::pci_address a) {
        for (const auto& d : devices)
            if (d.address == a) return *d.link_max;
        return ah::pcie_link{};
    };
    SUBCASE("a Gen5 x16 card in a Gen4 x8 slot") {
        test::scratch_dir root;
        const auto devices = chain(root, {{"0000:00:01.0", "16.0", "8", "16.0", "8"},
                                          {"0000:01:00.0", "16.0", "8", "32.0", "16"}});
        REQUIRE(devices.size() == 2);
        CHECK(max_of(devices, {0, 1, 0, 0}) == ah::pcie_link{4, 8});
        CHECK(max_of(devices, {0, 0, 1, 0}) == ah::pcie_link{4, 8});
    }
    SUBCASE("an idle card at 2.5 GT/s keeps its width's cap; a switch in between caps nothing more") {
        test::scratch_dir root;
        const auto devices = chain(root, {{"0000:00:01.0", "2.5", "16", "16.0", "16"},
                                          {"0000:01:00.0", "2.5", "16", "32.0", "16"},
                                          {"0000:02:00.0", "32.0", "16", "32.0", "16"},
                                          {"0000:03:00.0", "2.5", "16", "32.0", "16"}});
        CHECK(max_of(devices, {0, 3, 0, 0}) == ah::pcie_link{4, 16}); // the root port's Gen4
        CHECK(max_of(devices, {0, 2, 0, 0}) == ah::pcie_link{4, 16});
    }
    SUBCASE("a Radeon behind its on-board switch: the GPU's 32 GT/s x16 is the board's own link") {
        // The upstream port's and GPU's figures as in the real capture
        // pci-sysfs/link_navi-gpu-and-upstream-switch_tail.txt; the ports around them hand-made.
        test::scratch_dir root;
        const auto devices = chain(root, {{"0000:00:01.1", "16.0", "8", "16.0", "8"},
                                          {"0000:01:00.0", "16.0", "8", "32.0", "16"},
                                          {"0000:02:00.0", "32.0", "16", "32.0", "16"},
                                          {"0000:03:00.0", "32.0", "16", "32.0", "16"}});
        CHECK(max_of(devices, {0, 3, 0, 0}) == ah::pcie_link{4, 8});
        CHECK(max_of(devices, {0, 1, 0, 0}) == ah::pcie_link{4, 8});
    }
    SUBCASE("a virtual machine's emulated port claims less than the link runs at: no cap") {
        test::scratch_dir root;
        const auto devices = chain(root, {{"0000:00:02.0", "2.5", "1", "2.5", "1"},
                                          {"0000:01:00.0", "16.0", "16", "16.0", "16"}});
        CHECK(max_of(devices, {0, 1, 0, 0}) == ah::pcie_link{4, 16});
    }
}

TEST_CASE("probe_pci scratch tree: driver, NUMA node, subsystem, bad values") {
    test::scratch_dir root;
    const std::string gpu = "sys/devices/pci0000:00/0000:00:01.0/0000:01:00.0/";
    root.write(gpu + "class", "0x030200\n");
    root.write(gpu + "vendor", "0x10de\n");
    root.write(gpu + "device", "0x2330\n");
    root.write(gpu + "subsystem_vendor", "0x10de\n");
    root.write(gpu + "subsystem_device", "0x16c1\n");
    root.write(gpu + "numa_node", "1\n");
    root.write(gpu + "current_link_speed", "32.0 GT/s PCIe\n");
    root.write(gpu + "current_link_width", "16\n");
    root.write(gpu + "max_link_speed", "32.0 GT/s PCIe\n");
    root.write(gpu + "max_link_width", "16\n");
    fs::create_directory_symlink("../../../../bus/pci/drivers/nvidia", root.path() / gpu / "driver");
    // A function whose driver link was stored as a file (a captured tree in git), with a
    // link that is down and an unknown speed.
    const std::string nic = "sys/devices/pci0000:00/0000:00:02.0/";
    root.write(nic + "vendor", "0x15b3\n");
    root.write(nic + "current_link_speed", "Unknown\n");
    root.write(nic + "current_link_width", "0\n");
    root.write(nic + "numa_node", "-1\n");
    root.write(nic + "driver", "../../../bus/pci/drivers/mlx5_core");
    // Hostile values.
    const std::string bad = "sys/devices/pci0000:00/0000:00:03.0/";
    root.write(bad + "class", "garbage\n");
    root.write(bad + "vendor", "0x123456\n");                       // wider than 16 bits
    root.write(bad + "device", "0x1000000000000000000000000000000\n"); // 10^30-ish in hex
    root.write(bad + "numa_node", "-5\n");
    root.write(bad + "current_link_speed", "fast\n");
    root.write(bad + "current_link_width", "x255\n");
    root.write(bad + "subsystem_vendor", "");
    const std::string denied = "sys/devices/pci0000:00/0000:00:04.0/";
    root.write(denied + "vendor", "0x8086\n");
    root.write(denied + "numa_node", "1000000000000000000000000000000\n");
    fs::create_directories(root.path() / "sys/bus/pci/devices");
    for (const char* a : {"0000:01:00.0", "0000:00:02.0", "0000:00:03.0", "0000:00:04.0"}) {
        const std::string target = std::string(a) == "0000:01:00.0"
                                       ? "../../../devices/pci0000:00/0000:00:01.0/0000:01:00.0"
                                       : "../../../devices/pci0000:00/" + std::string(a);
        fs::create_directory_symlink(target, root.path() / "sys/bus/pci/devices" / a);
    }
    root.write("sys/bus/pci/devices/not-an-address", "");
    denying_view sys(root.path().string());
    sys.denied.insert("/sys/bus/pci/devices/0000:00:04.0/vendor");
    std::vector<ah::warning> w;
    const auto devices = ah::probe_pci(sys, w);
    REQUIRE(devices.size() == 4);
    CHECK(devices[0].address == ah::pci_address{0, 0, 2, 0});
    CHECK(devices[0].driver == "mlx5_core");
    CHECK(devices[0].numa_node == -1);
    CHECK(*devices[0].link_current == ah::pcie_link{0, 0}); // down: known to be unknown
    CHECK_FALSE(devices[0].link_max.has_value());
    CHECK(devices[1].address == ah::pci_address{0, 0, 3, 0});
    CHECK(devices[1].class_code == 0);
    CHECK(devices[1].vendor_id == 0);
    CHECK(devices[1].device_id == 0);
    CHECK(devices[1].numa_node == -1);
    CHECK(devices[2].address == ah::pci_address{0, 0, 4, 0});
    CHECK(devices[2].vendor_id == 0);
    CHECK(devices[3].address == ah::pci_address{0, 1, 0, 0});
    CHECK(devices[3].class_code == 0x030200);
    CHECK(devices[3].vendor_id == 0x10de);
    CHECK(devices[3].device_id == 0x2330);
    CHECK(devices[3].subsystem_vendor_id == 0x10de);
    CHECK(devices[3].subsystem_device_id == 0x16c1);
    CHECK(devices[3].numa_node == 1);
    CHECK(devices[3].driver == "nvidia");
    CHECK(*devices[3].link_current == ah::pcie_link{5, 16});
    CHECK(devices[3].link_current->bandwidth_gbps() > 60);
    // Parse errors: the non-address entry, class, device (too many digits), the empty
    // subsystem_vendor, speed, width. Out of range: vendor (wider than 16 bits), numa_node
    // -5, the 10^30 numa_node (past 64 bits). And one unreadable vendor.
    CHECK(count_kind(w, ah::warning_kind::parse_error) == 6);
    CHECK(count_kind(w, ah::warning_kind::value_out_of_range) == 3);
    CHECK(std::ranges::count_if(w, [](const ah::warning& x) {
              return x.kind == ah::warning_kind::value_out_of_range &&
                     x.message == "node -5 is not one a kernel can have";
          }) == 1);
    CHECK(count_kind(w, ah::warning_kind::permission_denied) == 1);
    CHECK(w.size() == 10);

    test::scratch_dir empty;
    w.clear();
    CHECK(ah::probe_pci(ah::host_system(empty.path().string()), w).empty());
    CHECK(w.empty());
}

// What a bound NVIDIA function's uevent holds, in the order and spelling of the kernel's
// pci_uevent (PCI_CLASS is "%04X" of the 24-bit class, so a leading zero is dropped) with
// the driver core's DRIVER line first.
constexpr std::string_view gpu_uevent = "DRIVER=nvidia\nPCI_CLASS=30200\nPCI_ID=10DE:2330\nPCI_SUBSYS_ID=10DE:16C1\n"
                                        "PCI_SLOT_NAME=0000:01:00.0\n"
                                        "MODALIAS=pci:v000010DEd00002330sv000010DEsd000016C1bc03sc02i00\n";

TEST_CASE("parse_pci_uevent") {
    const auto u = ah::parse_pci_uevent(gpu_uevent);
    CHECK(u.complete());
    CHECK(u.class_code == 0x030200u);
    CHECK(u.vendor_id == 0x10de);
    CHECK(u.device_id == 0x2330);
    CHECK(u.subsystem_vendor_id == 0x10de);
    CHECK(u.subsystem_device_id == 0x16c1);
    CHECK(u.slot == ah::pci_address{0, 1, 0, 0});
    CHECK(u.driver == "nvidia");
    CHECK(u.bad.empty());
    // No driver bound: no DRIVER line, the record still whole. A host bridge's class.
    const auto bridge = ah::parse_pci_uevent("PCI_CLASS=60000\nPCI_ID=8086:0D57\nPCI_SUBSYS_ID=0000:0000\n"
                                             "PCI_SLOT_NAME=0000:00:00.0\n");
    CHECK(bridge.complete());
    CHECK_FALSE(bridge.driver.has_value());
    CHECK(bridge.class_code == 0x060000u);
    CHECK(bridge.subsystem_vendor_id == 0);
    // Partial (hand-made trees): what is there, and not complete.
    const auto partial = ah::parse_pci_uevent("DRIVER=amdxdna\r\nPCI_ID=1022:17F0\r\nPCI_SLOT_NAME=0000:c6:00.1\r\n");
    CHECK_FALSE(partial.complete());
    CHECK(partial.driver == "amdxdna");
    CHECK(partial.vendor_id == 0x1022);
    CHECK_FALSE(partial.class_code.has_value());
    CHECK(ah::parse_pci_uevent("").bad.empty());
    CHECK_FALSE(ah::parse_pci_uevent("").complete());
}

TEST_CASE("parse_pci_uevent on a real machine's functions agrees with their attribute files") {
    // tests/data/pci-uevent/vm-linux-6.18-virtio: each function's uevent beside its class,
    // id and subsystem files and its driver link, captured from one machine (SOURCE.md).
    const fs::path capture = fs::path(AI_HWACCEL_TEST_DATA_DIR) / "pci-uevent/vm-linux-6.18-virtio";
    REQUIRE(fs::is_directory(capture));
    std::size_t functions = 0, bound = 0;
    for (const auto& e : fs::directory_iterator(capture)) {
        if (!e.is_directory()) continue;
        const auto dir = e.path();
        CAPTURE(dir.filename().string());
        const auto file = [&](const char* name) { return test::read_file((dir / name).string()); };
        const auto text = file("uevent");
        REQUIRE(text);
        const auto u = ah::parse_pci_uevent(*text);
        CHECK(u.bad.empty());
        REQUIRE(u.complete());
        CHECK(u.class_code == ah::detail::parse_hex_attribute(*file("class")));
        CHECK(u.vendor_id == ah::detail::parse_hex_attribute(*file("vendor")));
        CHECK(u.device_id == ah::detail::parse_hex_attribute(*file("device")));
        CHECK(u.subsystem_vendor_id == ah::detail::parse_hex_attribute(*file("subsystem_vendor")));
        CHECK(u.subsystem_device_id == ah::detail::parse_hex_attribute(*file("subsystem_device")));
        CHECK(u.slot == ah::parse_pci_address(dir.filename().string()));
        if (const auto link = file("driver")) {
            ++bound;
            CHECK(u.driver == ah::detail::base_name(ah::detail::trim(*link)));
        } else {
            CHECK_FALSE(u.driver.has_value());
        }
        ++functions;
    }
    CHECK(functions == 6);
    CHECK(bound == 5);
}

TEST_CASE("parse_pci_uevent hostile input") {
    for (const std::string_view line :
         {"PCI_ID=10DE", "PCI_ID=10DE:", "PCI_ID=:2330", "PCI_ID=10DE:12345", "PCI_ID=1000000000000000000000000:1",
          "PCI_SUBSYS_ID=zz:10", "PCI_CLASS=1000000", "PCI_CLASS=", "PCI_CLASS=-1", "PCI_SLOT_NAME=00:zz.9",
          "DRIVER=", "PCI_CLASS=\xff\xfe"}) {
        CAPTURE(line);
        const std::string text = std::string(line) + "\nPCI_ID=xx:yy\n";
        const auto u = ah::parse_pci_uevent(text);
        CHECK(u.bad == line); // the first line not understood
        CHECK_FALSE(u.vendor_id.has_value());
        CHECK_FALSE(u.subsystem_vendor_id.has_value());
        CHECK_FALSE(u.class_code.has_value());
        CHECK_FALSE(u.slot.has_value());
        CHECK_FALSE(u.driver.has_value());
        CHECK_FALSE(u.complete());
    }
    // Lines without '=', unknown keys, a NUL and blanks are passed over.
    const std::string odd = std::string("garbage\n\0\nFOO=bar\n  PCI_ID = 10de:2330\n\n", 33);
    CHECK(ah::parse_pci_uevent(odd).bad.empty());
    const auto one_bad = ah::parse_pci_uevent("PCI_ID=10DE:2330x\nPCI_CLASS=30200\nPCI_ID=nope\n");
    CHECK(one_bad.bad == "PCI_ID=10DE:2330x");
    CHECK(one_bad.class_code == 0x030200u); // the rest is still read
}

TEST_CASE("probe_pci reads a function's uevent before its attribute files") {
    test::scratch_dir root;
    fs::create_directories(root.path() / "sys/bus/pci/devices");
    auto function = [&](const std::string& address) {
        const std::string dir = "sys/devices/pci0000:00/" + address + "/";
        fs::create_directories(root.path() / dir);
        fs::create_directory_symlink("../../../devices/pci0000:00/" + address,
                                     root.path() / "sys/bus/pci/devices" / address);
        return dir;
    };
    // 00:01.0: the kernel's whole uevent, and attribute files that disagree with it (a tree
    // no kernel makes): what the uevent says wins, and the files are not read.
    const auto gpu = function("0000:00:01.0");
    root.write(gpu + "uevent", std::string(gpu_uevent));
    root.write(gpu + "class", "0x000000\n");
    root.write(gpu + "vendor", "0xffff\n");
    root.write(gpu + "numa_node", "1\n");
    fs::create_directory_symlink("../../../bus/pci/drivers/other", root.path() / gpu / "driver");
    // 00:02.0: whole, no driver bound: the driver link is not looked for.
    const auto bridge = function("0000:00:02.0");
    root.write(bridge + "uevent", "PCI_CLASS=60400\nPCI_ID=8086:A0BC\nPCI_SUBSYS_ID=1028:0A20\n");
    fs::create_directory_symlink("../../../bus/pci/drivers/pcieport", root.path() / bridge / "driver");
    // 00:03.0: partial, with one value not understood (a hand-made tree): the files.
    const auto npu = function("0000:00:03.0");
    root.write(npu + "uevent", "PCI_ID=1022:17F0\nPCI_CLASS=banana\n");
    root.write(npu + "class", "0x118000\n");
    root.write(npu + "vendor", "0x1022\n");
    root.write(npu + "device", "0x17f0\n");
    root.write(npu + "subsystem_vendor", "0x17aa\n");
    root.write(npu + "subsystem_device", "0x2339\n");
    fs::create_directory_symlink("../../../bus/pci/drivers/amdxdna", root.path() / npu / "driver");
    // 00:04.0: none (the captured trees): every attribute file, as before.
    const auto old = function("0000:00:04.0");
    root.write(old + "class", "0x020000\n");
    root.write(old + "vendor", "0x15b3\n");
    root.write(old + "device", "0x1017\n");
    root.write(old + "driver", "../../../bus/pci/drivers/mlx5_core");

    test::counting_view sys(root.path().string());
    std::vector<ah::warning> w;
    const auto devices = ah::probe_pci(sys, w);
    INFO(test::warnings_text(w));
    REQUIRE(devices.size() == 4);
    CHECK(devices[0].class_code == 0x030200u);
    CHECK(devices[0].vendor_id == 0x10de);
    CHECK(devices[0].device_id == 0x2330);
    CHECK(devices[0].subsystem_device_id == 0x16c1);
    CHECK(devices[0].driver == "nvidia");
    CHECK(devices[0].numa_node == 1);
    CHECK(devices[1].class_code == 0x060400u);
    CHECK(devices[1].subsystem_vendor_id == 0x1028);
    CHECK(devices[1].driver.empty());
    CHECK(devices[2].vendor_id == 0x1022);
    CHECK(devices[2].device_id == 0x17f0);
    CHECK(devices[2].class_code == 0x118000u);
    CHECK(devices[2].subsystem_vendor_id == 0x17aa);
    CHECK(devices[2].subsystem_device_id == 0x2339);
    CHECK(devices[2].driver == "amdxdna");
    CHECK(devices[3].class_code == 0x020000u);
    CHECK(devices[3].vendor_id == 0x15b3);
    CHECK(devices[3].device_id == 0x1017);
    CHECK(devices[3].driver == "mlx5_core");
    REQUIRE(w.size() == 1);
    CHECK(w[0].kind == ah::warning_kind::parse_error);
    CHECK(w[0].subject == "/sys/bus/pci/devices/0000:00:03.0/uevent");
    CHECK(w[0].message.find("PCI_CLASS=banana") != std::string::npos);
    // What each function cost: the uevent, the link pair and the NUMA node where the
    // uevent is whole; the five id files and the driver besides where it is not.
    auto reads_of = [&](const std::string& address) {
        std::vector<std::string> names;
        const std::string prefix = "/sys/bus/pci/devices/" + address + "/";
        for (const auto& p : sys.read)
            if (p.rfind(prefix, 0) == 0) names.push_back(p.substr(prefix.size()));
        return names;
    };
    const std::vector<std::string> whole{"uevent", "current_link_speed", "current_link_width", "numa_node"};
    CHECK(reads_of("0000:00:01.0") == whole);
    CHECK(reads_of("0000:00:02.0") == whole);
    CHECK(reads_of("0000:00:03.0") ==
          std::vector<std::string>{"uevent", "class", "vendor", "device", "subsystem_vendor", "subsystem_device",
                                   "current_link_speed", "current_link_width", "numa_node", "driver"});
    // Without one, as before: the five id files, the link pair, the NUMA node, the driver
    // link, then the file a captured tree stores it in.
    CHECK(reads_of("0000:00:04.0") ==
          std::vector<std::string>{"uevent", "class", "vendor", "device", "subsystem_vendor", "subsystem_device",
                                   "current_link_speed", "current_link_width", "numa_node", "driver", "driver"});
}

TEST_CASE("probe_numa and probe_pci: by number, not by name") {
    test::scratch_dir root;
    // Listed in whatever order the folder gives; "node10" sorts before "node2" as text.
    for (const char* node : {"node10", "node2", "node1"})
        root.write(std::string("sys/devices/system/node/") + node + "/cpulist", "\n");
    // A five-digit domain (Intel VMD's, as sysfs names it) sorts before "ffff" as text, after
    // it as a number.
    for (const char* fn : {"10000:00:00.0", "ffff:00:00.0", "0000:00:1f.0", "0000:00:02.0"})
        root.write(std::string("sys/bus/pci/devices/") + fn + "/vendor", "0x8086\n");
    const ah::host_system sys(root.path().string());
    std::vector<ah::warning> w;
    const auto nodes = ah::probe_numa(sys, w);
    REQUIRE(nodes.size() == 3);
    CHECK(nodes[0].id == 1);
    CHECK(nodes[1].id == 2);
    CHECK(nodes[2].id == 10);
    const auto devices = ah::probe_pci(sys, w);
    CHECK(w.empty());
    std::vector<std::string> order;
    for (const auto& d : devices) order.emplace_back(d.address.text().data());
    CHECK(order == std::vector<std::string>{"0000:00:02.0", "0000:00:1f.0", "ffff:00:00.0", "10000:00:00.0"});
}
