#include "ai_hwaccel/detect/neuron.hpp"

#include "fixtures.hpp"

#include <doctest/doctest.h>

#include <filesystem>
#include <string>

#if AI_HWACCEL_BACKEND_NEURON

#include "ai_hwaccel/detect/detect.hpp"

namespace ah = ai_hwaccel;
namespace fs = std::filesystem;

namespace {

constexpr std::uint64_t mib = 1024ull * 1024;
constexpr std::uint64_t gib = 1024ull * 1024 * 1024;

std::string problems_of(const std::vector<ah::neuron_parse_problem>& ps) {
    std::string s;
    for (const auto& p : ps) s += std::to_string(p.line) + ": " + p.message + "\n";
    return s;
}

using pair_list = std::vector<std::pair<std::uint32_t, std::uint32_t>>;

pair_list pairs_of(const std::vector<ah::interconnect>& links) {
    pair_list out;
    for (const auto& l : links) {
        CHECK(l.kind == ah::interconnect_kind::neuronlink);
        CHECK(l.scope == ah::link_scope::intra_node);
        CHECK_FALSE(l.bandwidth_gbps.has_value());
        REQUIRE(l.devices.size() == 2);
        out.emplace_back(l.devices[0], l.devices[1]);
    }
    return out;
}

// The 4x4 torus both real captures print: each device's CONNECTED DEVICES.
const std::vector<std::vector<std::uint32_t>> torus_connected = {
    {12, 3, 4, 1},  {13, 0, 5, 2},  {14, 1, 6, 3},  {15, 2, 7, 0},  {0, 7, 8, 5},   {1, 4, 9, 6},
    {2, 5, 10, 7},  {3, 6, 11, 4},  {4, 11, 12, 9}, {5, 8, 13, 10}, {6, 9, 14, 11}, {7, 10, 15, 8},
    {8, 15, 0, 13}, {9, 12, 1, 14}, {10, 13, 2, 15}, {11, 14, 3, 12},
};

pair_list torus_pairs() {
    pair_list out;
    for (std::uint32_t d = 0; d < 16; ++d)
        for (auto c : torus_connected[d])
            if (d < c) out.emplace_back(d, c);
    std::sort(out.begin(), out.end());
    return out;
}

} // namespace

static_assert(ah::backend_probe<ah::neuron_probe, ah::host_system>);
static_assert(ah::descriptor_of<ah::neuron_probe>().name == "neuron");

TEST_CASE("parse_neuron_ls: real captures") {
    SUBCASE("trn2n.48xlarge default view") {
        const auto t = test::capture("neuron-ls/default_trn2n.48xlarge_16-devices.txt");
        if (!t) return;
        const auto r = ah::parse_neuron_ls(*t);
        INFO(problems_of(r.problems));
        CHECK(r.problems.empty());
        CHECK(r.instance_type == "trn2n.48xlarge");
        CHECK(r.instance_id == "i-aabbccdd123456789");
        CHECK(r.logical_nc_config == 2u);
        REQUIRE(r.devices.size() == 16);
        REQUIRE(r.details.size() == 16);
        const char* bus[] = {"cc", "b5", "b6", "cb", "6f", "58", "59", "6e",
                             "9b", "84", "85", "9a", "f8", "e1", "e2", "f7"};
        for (std::uint32_t i = 0; i < 16; ++i) {
            CAPTURE(i);
            const auto& d = r.devices[i];
            CHECK(d.index == i);
            CHECK(d.kind == ah::device_kind::aws_trainium);
            CHECK(d.maker == ah::vendor::amazon);
            REQUIRE(d.spec != nullptr);
            CHECK(d.spec->name == "AWS Trainium2");
            CHECK(d.name.view() == "AWS Trainium2");
            CHECK(*d.compute_units == 4); // logical cores (logical-neuroncore-config 2)
            CHECK(d.compute_units.from == ah::origin::tool);
            CHECK(*d.memory_bytes == 96 * gib);
            CHECK(d.memory_bytes.from == ah::origin::tool);
            CHECK(d.memory_bandwidth_gbps.from == ah::origin::catalogue);
            CHECK(d.peak_from == ah::origin::catalogue);
            REQUIRE(d.pci);
            CHECK(*d.pci == *ah::parse_pci_address(std::string("0000:") + bus[i] + ":00.0"));
            CHECK(*d.numa_node == (i >= 4 && i < 12 ? 0 : 1));
            CHECK(r.details[i].connected == torus_connected[i]);
            CHECK(r.details[i].cpu_affinity == (i >= 4 && i < 12 ? "0-47,96-143" : "48-95,144-191"));
            CHECK(r.details[i].pids.empty());
        }
        CHECK(pairs_of(r.links) == torus_pairs());
        CHECK(r.links.size() == 32);
        CHECK(r.links[0].name == "NeuronLink 0-1");
    }
    SUBCASE("trn2n.48xlarge --wide with a process on every device") {
        const auto t = test::capture("neuron-ls/wide_trn2n.48xlarge_with-processes.txt");
        if (!t) return;
        const auto r = ah::parse_neuron_ls(*t);
        INFO(problems_of(r.problems));
        CHECK(r.problems.empty());
        CHECK(r.instance_type == "trn2n.48xlarge");
        REQUIRE(r.devices.size() == 16);
        for (std::uint32_t i = 0; i < 16; ++i) {
            CAPTURE(i);
            CHECK(r.devices[i].index == i);
            CHECK(r.devices[i].kind == ah::device_kind::aws_trainium);
            CHECK(*r.devices[i].compute_units == 4);
            CHECK(*r.devices[i].memory_bytes == 96 * gib);
            CHECK_FALSE(r.devices[i].numa_node.has_value()); // no NUMA column in this view
            CHECK(r.details[i].pids == std::vector<std::uint64_t>{268911});
            CHECK(r.details[i].connected == torus_connected[i]);
        }
        // The short BDF form "cc:00.0" is domain 0.
        CHECK(*r.devices[0].pci == ah::pci_address{0, 0xcc, 0, 0});
        CHECK(*r.devices[15].pci == ah::pci_address{0, 0xf7, 0, 0});
        CHECK(pairs_of(r.links) == torus_pairs());
        // Hand-made from the capture: a command line holding '|' (and "| |") splits its COMMAND
        // cell; the extra cells are put back and no device is lost.
        const std::string cmd = "neuron-bench exec --run-as-cc-neff --warmup none --fixed-instance-count 64 --...";
        for (const std::string with : {"sh -c 'neuron-bench exec | tee log.txt'", "a | b | | c"}) {
            std::string text = *t;
            const auto at = text.find(cmd, text.find("| 2      |"));
            REQUIRE(at != std::string::npos);
            text.replace(at, cmd.size(), with);
            const auto p = ah::parse_neuron_ls(text);
            INFO(problems_of(p.problems));
            CHECK(p.problems.empty());
            REQUIRE(p.devices.size() == 16);
            CHECK(p.details[2].pids == std::vector<std::uint64_t>{268911});
            CHECK(*p.devices[2].memory_bytes == 96 * gib);
        }
    }
    SUBCASE("trn1.32xlarge --topology: the table and the torus diagram") {
        const auto t = test::capture("neuron-ls/topology_trn1.32xlarge_16-devices-torus.txt");
        if (!t) return;
        const auto r = ah::parse_neuron_ls(*t);
        INFO(problems_of(r.problems));
        CHECK(r.problems.empty()); // the diagram agrees with CONNECTED DEVICES
        CHECK(r.instance_type == "trn1.32xlarge");
        CHECK(r.instance_id == "i-0633517e496256bf8");
        CHECK_FALSE(r.logical_nc_config.has_value());
        REQUIRE(r.devices.size() == 16);
        for (std::uint32_t i = 0; i < 16; ++i) {
            CAPTURE(i);
            const auto& d = r.devices[i];
            CHECK(d.index == i);
            CHECK(d.kind == ah::device_kind::aws_trainium);
            REQUIRE(d.spec != nullptr);
            CHECK(d.spec->name == "AWS Trainium");
            CHECK(*d.compute_units == 2);
            CHECK(*d.memory_bytes == 32 * gib); // not the reference peer's 64 GiB
            CHECK(d.memory_bytes.from == ah::origin::tool);
        }
        CHECK(*r.devices[0].pci == ah::pci_address{0, 0x10, 0x1c, 0});
        CHECK(*r.devices[2].pci == ah::pci_address{0, 0xa0, 0x1c, 0});
        CHECK(*r.devices[13].pci == ah::pci_address{0, 0x10, 0x1b, 0});
        CHECK(pairs_of(r.links) == torus_pairs());

        const auto topo = ah::parse_neuron_ls_topology(*t);
        INFO(problems_of(topo.problems));
        CHECK(topo.problems.empty());
        REQUIRE(topo.devices.size() == 16);
        CHECK(topo.devices.front() == 0);
        CHECK(topo.devices.back() == 15);
        CHECK(topo.pairs == torus_pairs());
        // Row neighbours, the row wrap-around, the column below and the column wrap-around.
        for (const auto& p : pair_list{{0, 1}, {0, 3}, {0, 4}, {0, 12}, {10, 14}, {11, 15}})
            CHECK(std::find(topo.pairs.begin(), topo.pairs.end(), p) != topo.pairs.end());
        CHECK(std::find(topo.pairs.begin(), topo.pairs.end(), std::make_pair(0u, 5u)) == topo.pairs.end());
    }
}

TEST_CASE("parse_neuron_ls: other layouts (hand-made)") {
    SUBCASE("LOGICAL NC column: the runtime's count is the logical one") {
        // Hand-made, in the layout of the neuron-ls user guide's older trn2n example.
        const std::string t =
            "+--------+--------+---------+--------+---------------+---------+\n"
            "| NEURON | NEURON | LOGICAL | NEURON |   CONNECTED   |   PCI   |\n"
            "| DEVICE | CORES  |   NC    | MEMORY |    DEVICES    |   BDF   |\n"
            "+--------+--------+---------+--------+---------------+---------+\n"
            "| 0      | 8      | 4       | 96 GB  | 1             | cc:00.0 |\n"
            "| 1      | 8      | 4       | 96 GB  | 0             | b5:00.0 |\n"
            "+--------+--------+---------+--------+---------------+---------+\n";
        const auto r = ah::parse_neuron_ls(t, ah::find_device("Trainium2"));
        INFO(problems_of(r.problems));
        CHECK(r.problems.empty());
        REQUIRE(r.devices.size() == 2);
        CHECK(*r.devices[0].compute_units == 4);
        CHECK(r.devices[1].spec->name == "AWS Trainium2");
        CHECK(pairs_of(r.links) == pair_list{{0, 1}});
    }
    SUBCASE("--show-all-procs: borders between devices, extra process rows") {
        // Hand-made, in the layout of the neuron-ls user guide's --show-all-procs example.
        const std::string t =
            "instance-type: inf2.24xlarge\n"
            "+--------+--------+--------+-----------+---------+--------+------------------+---------+\n"
            "| NEURON | NEURON | NEURON | CONNECTED |   PCI   |  PID   |     COMMAND      | RUNTIME |\n"
            "| DEVICE | CORES  | MEMORY |  DEVICES  |   BDF   |        |                  | VERSION |\n"
            "+--------+--------+--------+-----------+---------+--------+------------------+---------+\n"
            "| 0      | 2      | 32 GB  | 1         | 10:1e.0 | 100    | python3 serve.py | 2.0.0   |\n"
            "|        |        |        |           |         | 101    | neuron-ls -a     | NA      |\n"
            "+--------+--------+--------+-----------+---------+--------+------------------+---------+\n"
            "| 1      | 2      | 32 GB  | 0         | 20:1e.0 | 101    | neuron-ls -a     | NA      |\n"
            "+--------+--------+--------+-----------+---------+--------+------------------+---------+\n";
        const auto r = ah::parse_neuron_ls(t);
        INFO(problems_of(r.problems));
        CHECK(r.problems.empty());
        REQUIRE(r.devices.size() == 2);
        CHECK(r.devices[0].kind == ah::device_kind::aws_inferentia);
        CHECK(r.devices[0].spec->name == "AWS Inferentia2");
        CHECK(r.details[0].pids == std::vector<std::uint64_t>{100, 101});
        CHECK(r.details[1].pids == std::vector<std::uint64_t>{101});
    }
    SUBCASE("Inf1's layout: two memory channels, summed") {
        // The neuron-ls 1.x example of the Neuron docs (docs/neuron-tools/Readme.md), inf1.xlarge.
        const std::string t =
            "+--------------+---------+--------+-----------+-----------+------+------+\n"
            "|   PCI BDF    | LOGICAL | NEURON |  MEMORY   |  MEMORY   | EAST | WEST |\n"
            "|              |   ID    | CORES  | CHANNEL 0 | CHANNEL 1 |      |      |\n"
            "+--------------+---------+--------+-----------+-----------+------+------+\n"
            "| 0000:00:1f.0 |       0 |      4 | 4096 MB   | 4096 MB   |    0 |    0 |\n"
            "+--------------+---------+--------+-----------+-----------+------+------+\n";
        auto r = ah::parse_neuron_ls(t, ah::find_device("inf1"));
        INFO(problems_of(r.problems));
        CHECK(r.problems.empty());
        REQUIRE(r.devices.size() == 1);
        CHECK(*r.devices[0].memory_bytes == 8192 * mib);
        CHECK(*r.devices[0].compute_units == 4);
        CHECK(*r.devices[0].pci == ah::pci_address{0, 0, 0x1f, 0});
        CHECK(r.devices[0].spec->name == "AWS Inferentia");
        // Without an instance type or a hint the generation is unknown: said so.
        r = ah::parse_neuron_ls(t);
        REQUIRE(r.devices.size() == 1);
        CHECK(r.problems.size() == 1);
        CHECK(r.devices[0].spec == nullptr);
        CHECK(*r.devices[0].memory_bytes == 8 * gib);
        CHECK(r.devices[0].kind == ah::device_kind::aws_inferentia);
    }
    SUBCASE("a Trainium generation the catalogue does not know") {
        const std::string t = "instance-type: trn9.48xlarge\n"
                              "+--------+--------+\n| NEURON | NEURON |\n| DEVICE | CORES  |\n+--------+--------+\n"
                              "| 0      | 8      |\n+--------+--------+\n";
        const auto r = ah::parse_neuron_ls(t);
        CHECK(r.problems.empty());
        REQUIRE(r.devices.size() == 1);
        CHECK(r.devices[0].kind == ah::device_kind::aws_trainium);
        CHECK(r.devices[0].spec == nullptr);
        CHECK_FALSE(r.devices[0].memory_bytes.has_value());
    }
}

TEST_CASE("parse_neuron_ls: hostile input never crashes and is reported") {
    CHECK(ah::parse_neuron_ls("").devices.empty());
    CHECK(ah::parse_neuron_ls("").problems.empty());
    CHECK(ah::parse_neuron_ls("\n\n  \n").problems.empty());
    auto r = ah::parse_neuron_ls("garbage\n\x01\x02\xff\n");
    CHECK(r.devices.empty());
    CHECK(r.problems.size() == 2);
    // Truncated in the header: said so.
    r = ah::parse_neuron_ls("+--------+\n| NEURON |\n");
    CHECK(r.devices.empty());
    CHECK(r.problems.size() == 1);
    // Bad cells: unknown values with a problem each; the row is still a device.
    const std::string head = "instance-type: trn1.2xlarge\n+---+---+---+---+---+---+\n"
                             "| NEURON | NEURON | NEURON | CONNECTED | PCI | NUMA |\n"
                             "| DEVICE | CORES | MEMORY | DEVICES | BDF | NODE |\n+---+---+---+---+---+---+\n";
    r = ah::parse_neuron_ls(head + "| 0 | 99999999999999999999999 | 1e300 GB | 1, x | zz:00.0 | -7 |\n+---+\n");
    REQUIRE(r.devices.size() == 1);
    CHECK(r.problems.size() == 5);
    CHECK(*r.devices[0].compute_units == 2); // the catalogue's, not garbage
    CHECK(r.devices[0].compute_units.from == ah::origin::catalogue);
    CHECK(*r.devices[0].memory_bytes == 32 * gib);
    CHECK(r.devices[0].memory_bytes.from == ah::origin::catalogue);
    CHECK_FALSE(r.devices[0].pci.has_value());
    // N/A stays unknown without a problem; wrong widths are skipped.
    r = ah::parse_neuron_ls(head + "| 1 | N/A | N/A | | N/A | N/A |\n| 2 | 2 |\n| x | 2 | 32 GB | | 00:1e.0 | 0 |\n+---+\n");
    CHECK(r.devices.size() == 1);
    CHECK(r.problems.size() == 2);
    // Cut short inside the rows: said so.
    r = ah::parse_neuron_ls(head + "| 0 | 2 | 32 GB | | N/A | 0 |\n");
    CHECK(r.devices.size() == 1);
    CHECK(r.problems.size() == 1);
    // Non-UTF-8 instance type: replaced, reported.
    r = ah::parse_neuron_ls("instance-type: trn1\xff\n");
    CHECK(r.problems.size() == 1);
    // A megabyte line and many bad rows: capped.
    CHECK(ah::parse_neuron_ls(std::string(1 << 20, '|')).problems.size() == 1);
    std::string many = head;
    for (int i = 0; i < 5000; ++i) many += "| 1 |\n";
    r = ah::parse_neuron_ls(many);
    CHECK(r.problems.size() == ah::detail::neuron::max_problems + 1);
    // More devices than any machine has.
    many = head;
    for (int i = 0; i < 1100; ++i) many += "| " + std::to_string(i % 1000) + " | 2 | 32 GB | | N/A | 0 |\n";
    r = ah::parse_neuron_ls(many);
    CHECK(r.devices.size() == ah::detail::neuron::max_rows);
    // The diagram parser on garbage and on wide lines.
    CHECK(ah::parse_neuron_ls_topology("[ 99999999 ]\n[[[]]]\n\xff\xfe[ 1 ]◄––►\n").pairs.empty());
    CHECK(ah::parse_neuron_ls_topology(std::string(100'000, '[')).problems.size() == 1);
    const auto two = ah::parse_neuron_ls_topology("Neuron Device Topology\n[ 0 ]◄––►[ 1 ]\n  │\n");
    CHECK(two.pairs == pair_list{{0, 1}});
}

#if AI_HWACCEL_JSON
TEST_CASE("parse_neuron_ls_json") {
    SUBCASE("trn1.2xlarge (hand-made: the shape of a published real output)") {
        // The values of the trn1.2xlarge output quoted in public plugin tests: one device,
        // connected_to null, numa_node the string "-1", memory in bytes, no instance_type.
        const std::string t = R"([
    {
        "neuron_device": 0,
        "bdf": "0000:00:1e.0",
        "cpu_affinity": "0-7",
        "numa_node": "-1",
        "connected_to": null,
        "nc_count": 2,
        "memory_size": 34359738368,
        "neuroncore_ids": [
            0,
            1
        ],
        "neuron_processes": []
    }
])";
        auto r = ah::parse_neuron_ls_json(t, ah::find_device("trn1"));
        INFO(problems_of(r.problems));
        CHECK(r.problems.empty());
        REQUIRE(r.devices.size() == 1);
        const auto& d = r.devices[0];
        CHECK(d.kind == ah::device_kind::aws_trainium);
        CHECK(*d.memory_bytes == 32 * gib);
        CHECK(d.memory_bytes.from == ah::origin::tool);
        CHECK(*d.compute_units == 2);
        CHECK(*d.pci == ah::pci_address{0, 0, 0x1e, 0});
        CHECK_FALSE(d.numa_node.has_value());
        CHECK(r.details[0].cpu_affinity == "0-7");
        CHECK(r.links.empty());
        // Without the probe's hint the generation is unknown (trn1 and inf2 look alike).
        r = ah::parse_neuron_ls_json(t);
        CHECK(r.problems.size() == 1);
        CHECK(r.devices[0].spec == nullptr);
    }
    SUBCASE("trn2.48xlarge entry with instance type and processes (hand-made: a published output's values)") {
        const std::string t =
            R"([{"instance_type": "trn2.48xlarge", "instance_id": "i-0dcf246b9a7d5f066", "neuron_device": 0,
                 "bdf": "0000:e1:00.0", "cpu_affinity": "48-95,144-191", "numa_node": "1",
                 "connected_to": [12, 1, 9, 14], "nc_count": 4, "logical_neuroncore_config": 2,
                 "memory_size": 103079215104, "neuroncore_ids": [0, 1, 2, 3],
                 "neuron_processes": [{"pid": 1966680, "command": "", "neuron_runtime_version": "2.34.10"},
                                      {"pid": 1966681, "command": "", "neuron_runtime_version": "2.34.10"}]},
                {"neuron_device": 1, "connected_to": [0], "nc_count": 4, "memory_size": 103079215104}])";
        const auto r = ah::parse_neuron_ls_json(t);
        INFO(problems_of(r.problems));
        CHECK(r.problems.empty());
        CHECK(r.instance_type == "trn2.48xlarge");
        CHECK(r.logical_nc_config == 2u);
        REQUIRE(r.devices.size() == 2);
        CHECK(r.devices[0].spec->name == "AWS Trainium2");
        CHECK(*r.devices[0].memory_bytes == 96 * gib);
        CHECK(*r.devices[0].numa_node == 1);
        CHECK(r.details[0].pids == std::vector<std::uint64_t>{1966680, 1966681});
        CHECK(pairs_of(r.links) == pair_list{{0, 1}}); // 12, 9, 14 are not listed
    }
    SUBCASE("hostile input") {
        CHECK(ah::parse_neuron_ls_json("").problems.empty());
        CHECK(ah::parse_neuron_ls_json("not json").problems.size() == 1);
        CHECK(ah::parse_neuron_ls_json("42").problems.size() == 1);
        CHECK(ah::parse_neuron_ls_json("[1, \"x\", {}]").problems.size() == 3);
        auto r = ah::parse_neuron_ls_json(
            R"([{"neuron_device": 0, "bdf": 7, "numa_node": "x", "connected_to": "1", "nc_count": -2,
                 "memory_size": 1e300, "cpu_affinity": "zz", "instance_type": "trn1\u0007"},
                {"neuron_device": 18446744073709551615}])");
        REQUIRE(r.devices.size() == 1);
        CHECK(r.problems.size() == 8);
        CHECK_FALSE(r.devices[0].numa_node.has_value());
        CHECK(ah::parse_neuron_ls_json(std::string(1 << 20, '[')).problems.size() == 1);
        std::string many = "[";
        for (int i = 0; i < 1100; ++i) many += std::string(i ? "," : "") + "{\"neuron_device\": 1}";
        r = ah::parse_neuron_ls_json(many + "]");
        CHECK(r.devices.size() == ah::detail::neuron::max_rows);
    }
    SUBCASE("a long UTF-8 instance type is cut between characters") {
        // hand-made: one byte, then 40 two-byte characters, past the 64-byte cap.
        std::string v = "a";
        for (int i = 0; i < 40; ++i) v += "\xC3\xA9";
        const auto r = ah::parse_neuron_ls_json(R"([{"neuron_device": 0, "instance_type": ")" + v + "\"}]");
        REQUIRE(r.problems.size() == 1); // the instance type names no chip
        CHECK(r.problems[0].message.find("not printable") == std::string::npos);
        CHECK(r.instance_type == v.substr(0, 63)); // "a" and 31 whole characters
    }
}
#endif

namespace {

// A hand-made Neuron host: PCI functions, the driver's sysfs folders, /dev nodes.
struct fake_neuron_host {
    test::scratch_dir dir;
    const fs::path root = dir.path();
    void pci(const std::string& addr, const std::string& device, const std::string& driver, int numa = -1) const {
        const std::string d = "sys/bus/pci/devices/" + addr;
        dir.write(d + "/vendor", "0x1d0f\n");
        dir.write(d + "/device", device + "\n");
        dir.write(d + "/class", "0x088000\n");
        dir.write(d + "/numa_node", std::to_string(numa) + "\n");
        dir.write(d + "/current_link_speed", "16.0 GT/s PCIe\n");
        dir.write(d + "/current_link_width", "8\n");
        if (!driver.empty()) {
            fs::create_directories(root / "sys/bus/pci/drivers" / driver);
            fs::create_symlink("../../../../bus/pci/drivers/" + driver, root / d / "driver");
        }
    }
    void node(int n, const std::string& cores, const std::string& connected, const std::string& name) const {
        const std::string d = "sys/devices/virtual/neuron_device/neuron" + std::to_string(n);
        dir.write(d + "/core_count", cores);
        dir.write(d + "/connected_devices", connected);
        dir.write(d + "/info/architecture/device_name", name);
        dir.write("dev/neuron" + std::to_string(n), "");
    }
};

} // namespace

TEST_CASE("neuron_probe") {
    SUBCASE("hand-made: two Inferentia2 from sysfs, neuron-ls missing; an ENA NIC is not a Neuron device") {
        fake_neuron_host h;
        h.pci("0000:00:1e.0", "0x7264", "neuron-driver", 0);
        h.pci("0000:00:1f.0", "0x7264", "neuron-driver", 0);
        h.pci("0000:00:05.0", "0xec20", "ena"); // Amazon's vendor id, a network card
        h.node(0, "2", "1\n", "Inferentia2\n");
        h.node(1, "2", "0\n", "Inferentia2\n");
        const auto out = ah::neuron_probe{}.probe(ah::host_system(h.root.string()));
        INFO(test::warnings_text(out.warnings));
        REQUIRE(out.warnings.size() == 1);
        CHECK(out.warnings[0].kind == ah::warning_kind::tool_not_found);
        CHECK(out.warnings[0].backend == ah::backend_id::neuron);
        REQUIRE(out.devices.size() == 2);
        for (std::uint32_t i = 0; i < 2; ++i) {
            const auto& d = out.devices[i];
            CHECK(d.index == i);
            CHECK(d.kind == ah::device_kind::aws_inferentia);
            CHECK(d.name.view() == "AWS Inferentia2");
            CHECK(*d.memory_bytes == 32 * gib);
            CHECK(d.memory_bytes.from == ah::origin::catalogue);
            CHECK(*d.compute_units == 2);
            CHECK(d.compute_units.from == ah::origin::sysfs);
            CHECK_FALSE(d.pci.has_value()); // two of each: which is which is unknown
        }
        CHECK(pairs_of(out.links) == pair_list{{0, 1}});
    }
    SUBCASE("hand-made: neuron-ls replayed; PCI adds the device id, link and NUMA node") {
        fake_neuron_host h;
        h.pci("0000:10:1c.0", "0x7164", "neuron-driver", 1);
        h.node(0, "2", "\n", "Trainium1\n");
#if AI_HWACCEL_JSON
        h.dir.write("ai-hwaccel-tools/ls.json",
                    R"([{"neuron_device": 0, "bdf": "0000:10:1c.0", "numa_node": "-1", "connected_to": null,
                         "nc_count": 2, "memory_size": 34359738368}])");
        h.dir.write("ai-hwaccel-tools/index", "0\tls.json\tneuron-ls --json-output\n");
#else
        h.dir.write("ai-hwaccel-tools/ls.txt",
                    "+--------+--------+--------+---------+\n| NEURON | NEURON | NEURON |   PCI   |\n"
                    "| DEVICE | CORES  | MEMORY |   BDF   |\n+--------+--------+--------+---------+\n"
                    "| 0      | 2      | 32 GB  | 10:1c.0 |\n+--------+--------+--------+---------+\n");
        h.dir.write("ai-hwaccel-tools/index", "0\tls.txt\tneuron-ls\n");
#endif
        const auto out = ah::neuron_probe{}.probe(ah::host_system(h.root.string()));
        INFO(test::warnings_text(out.warnings));
        CHECK(out.warnings.empty());
        REQUIRE(out.devices.size() == 1);
        const auto& d = out.devices[0];
        CHECK(d.kind == ah::device_kind::aws_trainium);
        CHECK(d.spec->name == "AWS Trainium");
        CHECK(d.pci_device_id == 0x7164);
        CHECK(*d.memory_bytes == 32 * gib);
        CHECK(d.memory_bytes.from == ah::origin::tool);
        CHECK(*d.numa_node == 1);
        CHECK(d.numa_node.from == ah::origin::sysfs);
        CHECK(*d.pcie_current == ah::pcie_link{4, 8});
    }
#if AI_HWACCEL_JSON
    // neuron-ls's table of one Inferentia2 (hand-made, in the real layout).
    constexpr const char* one_device_table = "+--------+--------+--------+\n| NEURON | NEURON | NEURON |\n"
                                             "| DEVICE | CORES  | MEMORY |\n+--------+--------+--------+\n"
                                             "| 0      | 2      | 32 GB  |\n+--------+--------+--------+\n";
    SUBCASE("hand-made: --json-output refused (Neuron 2.34+): the table is used, no warning") {
        fake_neuron_host h;
        h.pci("0000:00:1e.0", "0x7264", "neuron-driver");
        h.dir.write("ai-hwaccel-tools/ls.txt", one_device_table);
        h.dir.write("ai-hwaccel-tools/index", "2\t-\tneuron-ls --json-output\n0\tls.txt\tneuron-ls\n");
        const auto out = ah::neuron_probe{}.probe(ah::host_system(h.root.string()));
        INFO(test::warnings_text(out.warnings));
        CHECK(out.warnings.empty());
        REQUIRE(out.devices.size() == 1);
        CHECK(out.devices[0].spec->name == "AWS Inferentia2");
    }
    SUBCASE("hand-made: --json-output hangs: the table is not asked (it would hang as long)") {
        fake_neuron_host h;
        h.pci("0000:00:1e.0", "0x7264", "neuron-driver");
        h.dir.write("ai-hwaccel-tools/ls.txt", one_device_table);
        h.dir.write("ai-hwaccel-tools/index", "timeout\t-\tneuron-ls --json-output\n0\tls.txt\tneuron-ls\n");
        struct counting_runs : ah::host_system {
            using ah::host_system::host_system;
            mutable int runs = 0;
            ah::tool_result run(const ah::tool_request& request) const {
                ++runs;
                return ah::host_system::run(request);
            }
        };
        const counting_runs sys(h.root.string());
        const auto out = ah::neuron_probe{}.probe(sys);
        INFO(test::warnings_text(out.warnings));
        CHECK(sys.runs == 1);
        CHECK(test::count_kind(out.warnings, ah::warning_kind::tool_timed_out) == 1);
    }
#endif
    SUBCASE("hand-made: neuron-ls lists nothing where the driver shows a device: the driver's kept, said") {
        fake_neuron_host h;
        h.pci("0000:00:1e.0", "0x7264", "neuron-driver", 0);
        h.node(0, "2", "\n", "Inferentia2\n");
#if AI_HWACCEL_JSON
        h.dir.write("ai-hwaccel-tools/ls.json", "[]\n");
        h.dir.write("ai-hwaccel-tools/index", "0\tls.json\tneuron-ls --json-output\n");
#else
        h.dir.write("ai-hwaccel-tools/ls.txt", "instance-type: inf2.xlarge\n");
        h.dir.write("ai-hwaccel-tools/index", "0\tls.txt\tneuron-ls\n");
#endif
        const auto out = ah::neuron_probe{}.probe(ah::host_system(h.root.string()));
        INFO(test::warnings_text(out.warnings));
        REQUIRE(out.devices.size() == 1);
        CHECK(out.devices[0].spec->name == "AWS Inferentia2");
        CHECK(*out.devices[0].pci == ah::pci_address{0, 0, 0x1e, 0});
        REQUIRE(out.warnings.size() == 1);
        CHECK(out.warnings[0].kind == ah::warning_kind::disagreement);
        // No device anywhere: an empty list is the answer, and no warning.
        fake_neuron_host none;
#if AI_HWACCEL_JSON
        none.dir.write("ai-hwaccel-tools/ls.json", "[]\n");
        none.dir.write("ai-hwaccel-tools/index", "0\tls.json\tneuron-ls --json-output\n");
#endif
        const auto empty = ah::neuron_probe{}.probe(ah::host_system(none.root.string()));
        CHECK(empty.devices.empty());
        CHECK(empty.warnings.empty());
    }
    SUBCASE("hand-made: neuron-ls fails, garbage sysfs files, a function passed to a VM") {
        fake_neuron_host h;
        h.pci("0000:00:1e.0", "0x7164", "neuron-driver");
        h.pci("0000:00:1f.0", "0x7164", "vfio-pci");
        h.node(0, "lots", "1, x\n", "Trainium1\n");
        h.dir.write("ai-hwaccel-tools/index", "1\t-\tneuron-ls --json-output\n1\t-\tneuron-ls\n");
        const auto out = ah::neuron_probe{}.probe(ah::host_system(h.root.string()));
        INFO(test::warnings_text(out.warnings));
        CHECK(test::count_kind(out.warnings, ah::warning_kind::parse_error) == 2);
        CHECK(test::count_kind(out.warnings, ah::warning_kind::tool_failed) == (AI_HWACCEL_JSON ? 2 : 1));
        REQUIRE(out.devices.size() == 1);
        CHECK(*out.devices[0].compute_units == 2); // the catalogue's
        CHECK(*out.devices[0].pci == ah::pci_address{0, 0, 0x1e, 0}); // one function, one device
        CHECK(out.links.empty());
    }
    SUBCASE("hand-made: Trainium2 from sysfs: the runtime's logical cores, not the driver's physical ones") {
        // The driver's core_count is 8 on Trainium2; the runtime groups two per logical core
        // by default (NEURON_LOGICAL_NC_CONFIG=1 undoes it), and NEURON_RT_VISIBLE_CORES
        // numbers the logical ones: cores 4-7 are device 1's.
        for (const std::string lnc : {"", "2", "1"}) {
            CAPTURE(lnc);
            fake_neuron_host h;
            h.pci("0000:00:1e.0", "0x7364", "neuron-driver");
            h.pci("0000:00:1f.0", "0x7364", "neuron-driver");
            h.node(0, "8", "1\n", "Trainium2\n");
            h.node(1, "8", "0\n", "Trainium2\n");
            std::string env = "NEURON_RT_VISIBLE_CORES=4-7";
            if (!lnc.empty()) env += std::string(1, '\0') + "NEURON_LOGICAL_NC_CONFIG=" + lnc;
            h.dir.write("proc/self/environ", env + std::string(1, '\0'));
            const auto reg =
                ah::detector::none().with(ah::backend_id::neuron).parallel(false).run(ah::host_system(h.root.string()));
            const auto devices = reg.all();
            REQUIRE(devices.size() == 2);
            const std::uint32_t cores = lnc == "1" ? 8 : 4;
            for (const auto& d : devices) {
                CHECK(d.spec->name == "AWS Trainium2");
                CHECK(*d.compute_units == cores);
                CHECK(d.compute_units.from == ah::origin::sysfs);
            }
            // Logical 4-7 are device 1's; physical (LNC 1) 4-7 are device 0's.
            CHECK(devices[0].available == (lnc == "1"));
            CHECK(devices[1].available == (lnc != "1"));
        }
        // core_count unreadable: the catalogue's physical 8 is counted the same way.
        fake_neuron_host h;
        h.pci("0000:00:1e.0", "0x7364", "neuron-driver");
        h.node(0, "8", "\n", "Trainium2\n");
        fs::remove(h.root / "sys/devices/virtual/neuron_device/neuron0/core_count");
        const auto out = ah::neuron_probe{}.probe(ah::host_system(h.root.string()));
        REQUIRE(out.devices.size() == 1);
        CHECK(*out.devices[0].compute_units == 4);
        CHECK(out.devices[0].compute_units.from == ah::origin::catalogue);
    }
    SUBCASE("hand-made: a Trainium the catalogue does not know, from sysfs: its kind and name from the driver") {
        fake_neuron_host h;
        h.node(0, "8", "\n", "Trainium9\n");
        h.node(1, "8", "\n", "Inferentia9\n");
        const auto out = ah::neuron_probe{}.probe(ah::host_system(h.root.string()));
        REQUIRE(out.devices.size() == 2);
        CHECK(out.devices[0].kind == ah::device_kind::aws_trainium);
        CHECK(out.devices[0].name.view() == "AWS Trainium9");
        CHECK(*out.devices[0].compute_units == 4); // Trainium2 and later group cores in pairs
        CHECK(out.devices[1].kind == ah::device_kind::aws_inferentia);
        CHECK(out.devices[1].name.view() == "AWS Inferentia9");
        CHECK(*out.devices[1].compute_units == 8);
    }
    SUBCASE("hand-made: Trainium3's two PCI device ids, from the bus and sysfs") {
        // aws-neuron-driver binds 0x7564 and 0x7565 (TRN3_DEVICE_ID0/1), both Trainium3.
        for (const std::string id : {"0x7564", "0x7565"}) {
            CAPTURE(id);
            fake_neuron_host h;
            h.pci("0000:00:1e.0", id, "neuron-driver", 1);
            h.node(0, "8", "\n", "Trainium3\n");
            const auto out = ah::neuron_probe{}.probe(ah::host_system(h.root.string()));
            REQUIRE(out.devices.size() == 1);
            const auto& d = out.devices[0];
            REQUIRE(d.spec != nullptr);
            CHECK(d.spec->name == "AWS Trainium3");
            REQUIRE(d.pci.has_value()); // one function, one device: matched
            CHECK(*d.pci == ah::pci_address{0, 0, 0x1e, 0});
            CHECK(*d.numa_node == 1);
            CHECK(*d.pcie_current == ah::pcie_link{4, 8});
            CHECK(*d.memory_bytes == 144 * gib);
            CHECK(*d.compute_units == 4); // eight NeuronCore-v4, two per logical core by default
        }
    }
    SUBCASE("hand-made: a container given one device of two") {
        // sysfs shows both; only /dev/neuron1 was passed in. Before, both were available.
        fake_neuron_host h;
        h.node(0, "2", "1\n", "Inferentia2\n");
        h.node(1, "2", "0\n", "Inferentia2\n");
        std::filesystem::remove(h.root / "dev/neuron0");
        const auto out = ah::neuron_probe{}.probe(ah::host_system(h.root.string()));
        REQUIRE(out.devices.size() == 2);
        CHECK_FALSE(out.devices[0].available);
        CHECK(out.devices[1].available);
    }
    SUBCASE("hand-made: the driver not loaded yet, only the PCI bus shows the chips") {
        // Before aws-neuronx-dkms is installed: two functions, no driver bound, no sysfs
        // devices of the driver's. Each function is a device (before: none at all).
        fake_neuron_host h;
        h.pci("0000:00:1e.0", "0x7264", "", 0);
        h.pci("0000:00:1f.0", "0x7264", "", 1);
        const auto out = ah::neuron_probe{}.probe(ah::host_system(h.root.string()));
        INFO(test::warnings_text(out.warnings));
        REQUIRE(out.devices.size() == 2);
        for (std::uint32_t i = 0; i < 2; ++i) {
            const auto& d = out.devices[i];
            CHECK(d.index == i);
            REQUIRE(d.spec != nullptr);
            CHECK(d.name.view() == "AWS Inferentia2");
            REQUIRE(d.pci.has_value());
            CHECK(*d.numa_node == static_cast<std::int32_t>(i));
        }
        CHECK(*out.devices[1].pci == ah::pci_address{0, 0, 0x1f, 0});
        REQUIRE(out.warnings.size() == 1); // neuron-ls missing
        CHECK(out.warnings[0].kind == ah::warning_kind::tool_not_found);
    }
    SUBCASE("hand-made: a driver device that names no chip, and no PCI function that does") {
        fake_neuron_host h;
        h.node(0, "2", "\n", "\n");
        const auto out = ah::neuron_probe{}.probe(ah::host_system(h.root.string()));
        REQUIRE(out.devices.size() == 1);
        CHECK(out.devices[0].spec == nullptr);
        INFO(test::warnings_text(out.warnings));
        bool said = false;
        for (const auto& w : out.warnings) said = said || w.message.find("chip generation is not named") != std::string::npos;
        CHECK(said);
    }
    SUBCASE("no Neuron device: nothing, no warning") {
        test::scratch_dir dir;
        const auto out = ah::neuron_probe{}.probe(ah::host_system(dir.path().string()));
        CHECK(out.devices.empty());
        CHECK(out.links.empty());
        CHECK(out.warnings.empty());
    }
}

TEST_CASE("neuron_probe: fixture machines") {
    SUBCASE("handmade-trn1-32xlarge") {
        const std::string root = std::string(AI_HWACCEL_MACHINES_DIR) + "/handmade-trn1-32xlarge";
        if (!fs::exists(root)) {
            MESSAGE("skipped: machine not assembled");
            return;
        }
        const auto out = ah::neuron_probe{}.probe(ah::host_system(root));
        INFO(test::warnings_text(out.warnings));
        CHECK(out.warnings.empty());
        REQUIRE(out.devices.size() == 16);
        for (std::uint32_t i = 0; i < 16; ++i) {
            CAPTURE(i);
            const auto& d = out.devices[i];
            CHECK(d.index == i);
            CHECK(d.kind == ah::device_kind::aws_trainium);
            REQUIRE(d.spec != nullptr);
            CHECK(d.spec->name == "AWS Trainium");
            CHECK(d.pci_device_id == 0x7164);
            CHECK(*d.memory_bytes == 32 * gib);
            CHECK(*d.compute_units == 2);
            CHECK(d.pci.has_value());
        }
        CHECK(*out.devices[0].pci == ah::pci_address{0, 0x10, 0x1c, 0});
        CHECK(*out.devices[15].pci == ah::pci_address{0, 0xa0, 0x1b, 0});
        CHECK(pairs_of(out.links) == torus_pairs());
    }
    SUBCASE("handmade-inf2-host") {
        const std::string root = std::string(AI_HWACCEL_MACHINES_DIR) + "/handmade-inf2-host";
        if (!fs::exists(root)) {
            MESSAGE("skipped: machine not assembled");
            return;
        }
        const auto out = ah::neuron_probe{}.probe(ah::host_system(root));
        INFO(test::warnings_text(out.warnings));
        REQUIRE(out.warnings.size() == 1);
        CHECK(out.warnings[0].kind == ah::warning_kind::tool_not_found);
        REQUIRE(out.devices.size() == 1);
        const auto& d = out.devices[0];
        CHECK(d.kind == ah::device_kind::aws_inferentia);
        CHECK(d.name.view() == "AWS Inferentia2");
        CHECK(*d.memory_bytes == 32 * gib);
        CHECK(d.memory_bytes.from == ah::origin::catalogue);
        CHECK(*d.compute_units == 2);
        CHECK(d.compute_units.from == ah::origin::sysfs);
        CHECK(*d.pci == ah::pci_address{0, 0, 0x1f, 0});
        CHECK(d.pci_device_id == 0x7264);
        CHECK(out.links.empty());
    }
}

TEST_CASE("detail::formats: Neuron sniffers and capture parsers") {
    namespace f = ah::detail::formats;
    // Captures are their format's by path prefix.
    const test::sniffer_row rows[] = {
        {"default", f::sniff_neuron_ls, "neuron-ls/default_"},
        {"wide", f::sniff_neuron_ls_wide, "neuron-ls/wide_"},
        {"topology", f::sniff_neuron_ls_topology, "neuron-ls/topology_"},
#if AI_HWACCEL_JSON
        {"json", f::sniff_neuron_ls_json, nullptr}, // no real capture yet: 0 for all of them
#endif
    };
    test::check_sniffers(rows, 3);

    struct cap {
        const char* file;
        void (*parse)(std::string_view, ah::capture_parse&);
        std::size_t devices;
    };
    for (const auto& c : {cap{"neuron-ls/default_trn2n.48xlarge_16-devices.txt", f::parse_neuron_ls_capture, 16},
                          cap{"neuron-ls/wide_trn2n.48xlarge_with-processes.txt", f::parse_neuron_ls_wide_capture, 16},
                          cap{"neuron-ls/topology_trn1.32xlarge_16-devices-torus.txt",
                              f::parse_neuron_ls_topology_capture, 16}}) {
        CAPTURE(c.file);
        const auto t = test::capture(c.file);
        if (!t) continue;
        ah::capture_parse out;
        out.format = "neuron-ls";
        c.parse(*t, out);
        CHECK(out.warnings.empty());
        CHECK(out.devices.size() == c.devices);
        REQUIRE(out.system);
        CHECK(out.system->interconnects.size() == 32);
    }
    ah::capture_parse empty;
    empty.format = "neuron-ls";
    f::parse_neuron_ls_capture("", empty);
    CHECK(test::count_kind(empty.warnings, ah::warning_kind::parse_error) == 1);
    CHECK(f::sniff_neuron_ls("") == 0);
    CHECK(f::sniff_neuron_ls("| NEURON | x |\n") == 0);
#if AI_HWACCEL_JSON
    const std::string json = R"([{"neuron_device": 0, "nc_count": 2, "memory_size": 34359738368}])";
    CHECK(f::sniff_neuron_ls_json(json) == 90);
    CHECK(f::sniff_neuron_ls_json("[{\"neuron_device\": 0}]") == 0);
    ah::capture_parse out;
    out.format = "neuron-ls-json";
    f::parse_neuron_ls_json_capture(json, out);
    CHECK(out.warnings.size() == 1); // the generation is not named
    CHECK(out.devices.size() == 1);
#endif
}

#endif // AI_HWACCEL_BACKEND_NEURON
