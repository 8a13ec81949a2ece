#include "ai_hwaccel/detect/fabric.hpp"
#include "ai_hwaccel/detect/formats.hpp"

#include "fixtures.hpp"

#include <doctest/doctest.h>

#include <filesystem>
#include <string>
#include <vector>

namespace ah = ai_hwaccel;
namespace fs = std::filesystem;

namespace {

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
double total_bandwidth(const std::vector<ah::interconnect>& links) {
    double sum = 0;
    for (const auto& l : links) sum += l.bandwidth_gbps.value_or(0);
    return sum;
}

} // namespace

TEST_CASE("detail::fabric::parse_rate") {
    using ah::detail::fabric::parse_rate;
    CHECK(parse_rate("400 Gb/sec (4X NDR)") == 400.0);
    CHECK(parse_rate("400 Gb/sec (4X NDR)\n") == 400.0);
    CHECK(parse_rate("56 Gb/sec (4X FDR)") == 56.0);
    CHECK(parse_rate("2.5 Gb/sec (1X SDR)") == 2.5); // the kernel's ".5" form
    CHECK(parse_rate("200") == 200.0);                // ibstat
    CHECK_FALSE(parse_rate(""));
    CHECK_FALSE(parse_rate("Gb/sec"));
    CHECK_FALSE(parse_rate("400 Mb/sec"));
    CHECK_FALSE(parse_rate("0 Gb/sec (4X SDR)"));
    CHECK_FALSE(parse_rate("99999999999999999999999 Gb/sec"));
    CHECK_FALSE(parse_rate("1.2.3 Gb/sec"));
    CHECK_FALSE(parse_rate("-5"));
    CHECK(ah::detail::fabric::both_directions_gbytes(400) == 100.0);
}

TEST_CASE("detail::fabric::state_name / kind_of") {
    using namespace ah::detail::fabric;
    CHECK(state_name("4: ACTIVE\n") == "ACTIVE");
    CHECK(state_name("5: LinkUp") == "LinkUp");
    CHECK(state_name("Active") == "Active");
    CHECK(state_name("x: y") == "x: y");
    CHECK(is_active_state("4: ACTIVE"));
    CHECK(is_active_state("Active"));
    CHECK_FALSE(is_active_state("1: DOWN"));
    CHECK_FALSE(is_active_state("5: ACTIVE_DEFER"));
    CHECK(kind_of("InfiniBand", "1: CA") == ah::interconnect_kind::infiniband);
    CHECK(kind_of("Ethernet", "1: CA") == ah::interconnect_kind::roce);
    CHECK(kind_of("Ethernet", "") == ah::interconnect_kind::roce);
    CHECK(kind_of("Ethernet", "4: RNIC") == ah::interconnect_kind::ethernet);
    CHECK(kind_of("Ethernet", "usNIC UDP") == ah::interconnect_kind::ethernet);
    CHECK(kind_of("Unknown", "1: CA") == ah::interconnect_kind::none);
}

TEST_CASE("parse_ibstat") {
    SUBCASE("real capture: A100 node, 1 Ethernet + 8 InfiniBand HCAs at 200") {
        const auto t = test::capture("ibstat/ibstat_a100-node_all-active_cx6dx.txt");
        if (!t) return;
        const auto r = ah::parse_ibstat(*t);
        INFO(problems_of(r.problems));
        CHECK(r.problems.empty());
        REQUIRE(r.ports.size() == 9);
        REQUIRE(r.links.size() == 9);
        const auto& p0 = r.ports[0];
        CHECK(p0.device == "mlx5_0");
        CHECK(p0.port == 1);
        CHECK(p0.hca_type == "MT4126");
        CHECK(p0.firmware == "22.35.2302");
        CHECK(p0.state == "Active");
        CHECK(p0.phys_state == "LinkUp");
        CHECK(p0.link_layer == "Ethernet");
        CHECK(p0.kind == ah::interconnect_kind::roce);
        CHECK(*p0.rate_gbit == 200.0);
        CHECK(p0.rate_gbit.from == ah::origin::tool);
        CHECK(r.links[0].name == "mlx5_0 port 1");
        CHECK(r.links[0].kind == ah::interconnect_kind::roce);
        for (std::size_t i = 1; i < 9; ++i) {
            CAPTURE(i);
            CHECK(r.ports[i].device == "mlx5_" + std::to_string(i));
            CHECK(r.ports[i].firmware == "28.37.1014");
            CHECK(r.ports[i].kind == ah::interconnect_kind::infiniband);
            CHECK(r.links[i].kind == ah::interconnect_kind::infiniband);
        }
        for (const auto& l : r.links) {
            CHECK(l.scope == ah::link_scope::inter_node);
            CHECK(l.state == "Active");
            CHECK(*l.bandwidth_gbps == 50.0); // 200 Gb/s each way = 50 GB/s both ways
            CHECK(l.bandwidth_gbps.from == ah::origin::tool);
            CHECK(l.devices.empty());
        }
    }
    SUBCASE("real capture: H100 node, 12 HCAs, all Ethernet") {
        const auto t = test::capture("ibstat/ibstat_h100-node_12-hcas_ethernet-and-ib_fw28.39.txt");
        if (!t) return;
        const auto r = ah::parse_ibstat(*t);
        INFO(problems_of(r.problems));
        CHECK(r.problems.empty());
        REQUIRE(r.ports.size() == 12);
        // In the order printed: mlx5_0, mlx5_1, mlx5_10, mlx5_11, mlx5_2, …
        CHECK(r.links[2].name == "mlx5_10 port 1");
        CHECK(r.links[11].name == "mlx5_9 port 1");
        std::size_t cx7 = 0, cx6 = 0;
        for (const auto& p : r.ports) {
            CHECK(p.kind == ah::interconnect_kind::roce);
            CHECK(p.active);
            if (p.hca_type == "MT4129") {
                ++cx7;
                CHECK(*p.rate_gbit == 400.0);
                CHECK(p.firmware == "28.39.1002");
            } else if (p.hca_type == "MT4125") {
                ++cx6;
                CHECK(*p.rate_gbit == 100.0);
                CHECK(p.firmware == "22.39.1002");
            }
        }
        CHECK(cx7 == 8);
        CHECK(cx6 == 4);
        CHECK(total_bandwidth(r.links) == 8 * 100.0 + 4 * 25.0);
    }
    SUBCASE("hand-made: a port down and a two-port adapter") {
        const auto r = ah::parse_ibstat("CA 'mlx4_0'\n\tCA type: MT4099\n\tNumber of ports: 2\n"
                                        "\tPort 1:\n\t\tState: Down\n\t\tPhysical state: Polling\n"
                                        "\t\tRate: 10\n\t\tLink layer: InfiniBand\n"
                                        "\tPort 2:\n\t\tState: Active\n\t\tPhysical state: LinkUp\n"
                                        "\t\tRate: 56\n\t\tLink layer: InfiniBand\n");
        INFO(problems_of(r.problems));
        CHECK(r.problems.empty());
        REQUIRE(r.links.size() == 2);
        CHECK(r.links[0].name == "mlx4_0 port 1");
        CHECK(r.links[0].state == "Down");
        CHECK_FALSE(r.links[0].bandwidth_gbps.has_value()); // down: never counted
        CHECK(r.ports[0].rate_gbit.has_value());            // but the printed rate is kept
        CHECK(r.links[1].name == "mlx4_0 port 2");
        CHECK(*r.links[1].bandwidth_gbps == 14.0); // 56 Gb/s each way
        CHECK(r.ports[1].hca_type == "MT4099");
    }
    SUBCASE("hand-made: FDR10, a switch after an adapter, and one port asked for") {
        // infiniband-diags' ibstat prints FDR10 as "Rate: 40 (FDR10)", a node of another
        // type under its own header ("Switch 'name'", whose management port is 0), and
        // "CA: 'name'" when `ibstat mlx5_0 1` asks for one port.
        const auto r = ah::parse_ibstat("CA 'mlx4_0'\n\tCA type: MT4099\n\tPort 1:\n\t\tState: Active\n"
                                        "\t\tRate: 40 (FDR10)\n\t\tLink layer: InfiniBand\n"
                                        "Switch 'sw0'\n\tPort 0:\n\t\tState: Active\n\t\tRate: 100\n"
                                        "\t\tLink layer: InfiniBand\n\tPort 1:\n\t\tState: Down\n\t\tRate: 10\n"
                                        "\t\tLink layer: InfiniBand\n");
        INFO(problems_of(r.problems));
        CHECK(r.problems.empty());
        REQUIRE(r.ports.size() == 3);
        CHECK(r.links[0].name == "mlx4_0 port 1");
        CHECK(*r.links[0].bandwidth_gbps == 10.0); // 40 Gb/s each way
        CHECK(r.links[1].name == "sw0 port 0");
        CHECK(r.ports[1].node_type == "Switch");
        CHECK(r.links[2].name == "sw0 port 1"); // not a second "mlx4_0 port 1"
        const auto one = ah::parse_ibstat("CA: 'mlx5_0'\nPort 1:\nState: Active\nRate: 400\nLink layer: InfiniBand\n");
        INFO(problems_of(one.problems));
        CHECK(one.problems.empty());
        REQUIRE(one.links.size() == 1);
        CHECK(one.links[0].name == "mlx5_0 port 1");
    }
}

TEST_CASE("parse_ibstat: a long UTF-8 CA type is cut between characters") {
    // hand-made: one byte, then 100 two-byte characters, past the 128-byte cap. A cut that
    // split a character would read as a '?' and a "not printable" problem.
    std::string type = "a";
    for (int i = 0; i < 100; ++i) type += "\xC3\xA9";
    const auto r = ah::parse_ibstat("CA 'mlx5_0'\n\tCA type: " + type + "\n\tPort 1:\n\t\tState: Active\n");
    INFO(problems_of(r.problems));
    CHECK(r.problems.empty());
    REQUIRE(r.ports.size() == 1);
    CHECK(r.ports[0].hca_type == type.substr(0, 127)); // "a" and 63 whole characters
}

TEST_CASE("parse_ibstatus") {
    SUBCASE("real capture: A100 node, 8x HDR InfiniBand + 1 Ethernet") {
        const auto t = test::capture("ibstat/ibstatus_a100_ib-hdr200.txt");
        if (!t) return;
        const auto r = ah::parse_ibstatus(*t);
        INFO(problems_of(r.problems));
        CHECK(r.problems.empty());
        REQUIRE(r.ports.size() == 9);
        for (std::size_t i = 0; i < 8; ++i) {
            CAPTURE(i);
            const auto& p = r.ports[i];
            CHECK(p.device == "mlx5_" + std::to_string(i));
            CHECK(p.port == 1);
            CHECK(p.state == "ACTIVE");
            CHECK(p.phys_state == "LinkUp");
            CHECK(p.rate_text == "200 Gb/sec (4X HDR)");
            CHECK(p.link_layer == "InfiniBand");
            CHECK(r.links[i].kind == ah::interconnect_kind::infiniband);
            CHECK(*r.links[i].bandwidth_gbps == 50.0);
        }
        CHECK(r.links[8].name == "mlx5_8 port 1");
        CHECK(r.links[8].kind == ah::interconnect_kind::roce);
        CHECK(*r.links[8].bandwidth_gbps == 10.0); // "40 Gb/sec (4X QDR)"
        CHECK(total_bandwidth(r.links) == 8 * 50.0 + 10.0);
    }
    SUBCASE("hand-made: a disabled port") {
        const auto r = ah::parse_ibstatus("Infiniband device 'mlx5_3' port 2 status:\n"
                                          "\tstate:\t\t 1: DOWN\n\tphys state:\t 3: Disabled\n"
                                          "\trate:\t\t 10 Gb/sec (4X SDR)\n\tlink_layer:\t InfiniBand\n");
        INFO(problems_of(r.problems));
        CHECK(r.problems.empty());
        REQUIRE(r.links.size() == 1);
        CHECK(r.links[0].name == "mlx5_3 port 2");
        CHECK(r.links[0].state == "DOWN");
        CHECK(r.ports[0].phys_state == "Disabled");
        CHECK_FALSE(r.links[0].bandwidth_gbps.has_value());
    }
}

TEST_CASE("parse_ibstat / parse_ibstatus: hostile input never crashes and is reported") {
    const std::string big_line(1u << 20, 'x');
    std::string binary;
    for (int i = 0; i < 4096; ++i) binary += static_cast<char>((i * 37) & 0xff);
    std::string many_ports = "CA 'a'\n";
    for (int i = 0; i < 3000; ++i) many_ports += "\tPort 1:\n\t\tState: Active\n";
    std::string many_status;
    for (int i = 0; i < 3000; ++i) many_status += "Infiniband device 'x' port 1 status:\n\tstate: 4: ACTIVE\n";
    const std::vector<std::string> inputs = {
        "",
        "\n\n\n",
        big_line,
        binary,
        "CA '",
        "CA ''\n",
        "CA 'mlx5_0'\n\tPort 99999999999999999999999:\n\t\tState: Active\n",
        "CA 'mlx5_0'\n\tPort 1:\n\t\tRate: 18446744073709551617\n\t\tState: Active\n",
        "CA 'ml\xff\xfe'\n\tPort 1:\n\t\tState: Act\x01ive\n\t\tRate: 400\n",
        "Infiniband device 'x' status:\n",
        "Infiniband device 'x' port status:\n\tstate: 4: ACTIVE\n",
        "Infiniband device 'x' port 1 status:\n\trate: garbage\n\tlink_layer: Token Ring\n",
        "\tstate: 4: ACTIVE\n",
        many_ports,
        many_status,
        "CA 'mlx5_0'\n\tPort 1:\n" + big_line + "\n",
    };
    for (const auto& in : inputs) {
        CAPTURE(in.substr(0, 60));
        const auto a = ah::parse_ibstat(in);
        const auto b = ah::parse_ibstatus(in);
        CHECK(a.problems.size() <= ah::detail::parsing::max_problems + 1);
        CHECK(b.problems.size() <= ah::detail::parsing::max_problems + 1);
        CHECK(a.ports.size() <= ah::detail::parsing::max_rows);
        CHECK(b.ports.size() <= ah::detail::parsing::max_rows);
        CHECK(a.links.size() == a.ports.size());
        for (const auto& l : a.links) CHECK(l.name.size() < 200);
    }
    // Garbage is reported, never read as ports.
    CHECK_FALSE(ah::parse_ibstat(big_line).problems.empty());
    CHECK(ah::parse_ibstat(big_line).ports.empty());
    CHECK_FALSE(ah::parse_ibstatus(binary).problems.empty());
    CHECK(ah::parse_ibstat(many_ports).ports.size() == ah::detail::parsing::max_rows);
    // A rate past any real one stays unknown.
    const auto huge = ah::parse_ibstat("CA 'mlx5_0'\n\tPort 1:\n\t\tRate: 18446744073709551617\n\t\tState: Active\n");
    REQUIRE(huge.links.size() == 1);
    CHECK_FALSE(huge.links[0].bandwidth_gbps.has_value());
    CHECK_FALSE(huge.problems.empty());
    // Unprintable names are kept with '?' and reported.
    const auto odd = ah::parse_ibstat("CA 'ml\xff\xfe'\n\tPort 1:\n\t\tState: Active\n\t\tRate: 400\n");
    REQUIRE(odd.links.size() == 1);
    CHECK(odd.links[0].name == "ml?? port 1");
    CHECK_FALSE(odd.problems.empty());
}

TEST_CASE("detail::formats::sniff_ibstat / sniff_ibstatus") {
    namespace f = ah::detail::formats;
    const test::sniffer_row rows[] = {
        {"ibstat", f::sniff_ibstat, "ibstat/ibstat_"},
        {"ibstatus", f::sniff_ibstatus, "ibstat/ibstatus_"},
    };
    test::check_sniffers(rows, 3, [](const test::sniffer_row&, std::string_view, const std::string& text) {
        // Exclusive: no other format of the table claims these captures.
        for (const auto& other : ah::capture_formats) {
            CAPTURE(other.name);
            if (other.name != "ibstat" && other.name != "ibstatus") CHECK(other.sniff(text) == 0);
        }
    });

    if (const auto t = test::capture("ibstat/ibstat_a100-node_all-active_cx6dx.txt")) {
        ah::capture_parse out;
        out.format = "ibstat";
        f::parse_ibstat_capture(*t, out);
        CHECK(out.warnings.empty());
        CHECK(out.devices.empty());
        REQUIRE(out.system);
        REQUIRE(out.system->interconnects.size() == 9);
        CHECK(out.system->interconnects[1].name == "mlx5_1 port 1");
        CHECK(out.system->interconnects[1].kind == ah::interconnect_kind::infiniband);
        CHECK(out.system->has_interconnect(ah::link_scope::inter_node));
    }
    if (const auto t = test::capture("ibstat/ibstatus_a100_ib-hdr200.txt")) {
        ah::capture_parse out;
        out.format = "ibstatus";
        f::parse_ibstatus_capture(*t, out);
        CHECK(out.warnings.empty());
        REQUIRE(out.system);
        REQUIRE(out.system->interconnects.size() == 9);
        CHECK(*out.system->interconnects[0].bandwidth_gbps == 50.0);
    }
    {
        ah::capture_parse out;
        out.format = "ibstat";
        f::parse_ibstat_capture("", out);
        CHECK(out.warnings.size() == 1); // "no ports found"
        ah::capture_parse out2;
        out2.format = "ibstatus";
        f::parse_ibstatus_capture("garbage\n", out2);
        CHECK_FALSE(out2.warnings.empty());
    }
}

TEST_CASE("probe_fabric") {
    SUBCASE("real sysfs tree: H100 node, 8x ConnectX-7 NDR + a BlueField-3 bond") {
        const fs::path real = fs::path(AI_HWACCEL_FIXTURES_DIR) / "infiniband-sysfs/sys-class-infiniband_h100-node";
        if (!fs::exists(real)) {
            MESSAGE("skipped: fixtures not found");
            return;
        }
        // The capture is /sys/class/infiniband itself; put it where the probe looks.
        test::scratch_dir dir;
        fs::create_directories(dir.path() / "sys/class");
        fs::copy(real, dir.path() / "sys/class/infiniband", fs::copy_options::recursive);
        const ah::host_system sys(dir.path().string());
        std::vector<ah::warning> warnings;
        const auto ports = ah::read_fabric_ports(sys, warnings);
        INFO(warnings_of(warnings));
        CHECK(warnings.empty());
        REQUIRE(ports.size() == 9);
        const char* names[] = {"mlx5_0", "mlx5_1", "mlx5_4", "mlx5_5", "mlx5_6",
                               "mlx5_7", "mlx5_8", "mlx5_9", "mlx5_bond_0"};
        for (std::size_t i = 0; i < 9; ++i) CHECK(ports[i].device == names[i]);
        for (std::size_t i = 0; i < 8; ++i) {
            CAPTURE(i);
            const auto& p = ports[i];
            CHECK(p.port == 1);
            CHECK(p.hca_type == "MT4129");
            CHECK(p.firmware == "28.41.1000");
            CHECK(p.board_id == "MT_0000000838");
            CHECK(p.state == "ACTIVE");
            CHECK(p.phys_state == "LinkUp");
            CHECK(p.rate_text == "400 Gb/sec (4X NDR)");
            CHECK(*p.rate_gbit == 400.0);
            CHECK(p.rate_gbit.from == ah::origin::sysfs);
            CHECK(p.kind == ah::interconnect_kind::infiniband);
            CHECK_FALSE(p.pci); // the capture has no `device` links
            CHECK(p.numa_node == -1);
        }
        CHECK(ports[8].hca_type == "MT41692");
        CHECK(ports[8].firmware == "32.38.3056");
        CHECK(ports[8].link_layer == "Ethernet");
        CHECK(ports[8].kind == ah::interconnect_kind::roce); // no GID table in the capture
        CHECK(*ports[8].rate_gbit == 200.0);

        warnings.clear();
        const auto links = ah::probe_fabric(sys, warnings);
        CHECK(warnings.empty());
        REQUIRE(links.size() == 9);
        CHECK(links[0].name == "mlx5_0 port 1");
        CHECK(links[0].state == "ACTIVE");
        CHECK(links[0].scope == ah::link_scope::inter_node);
        CHECK(*links[0].bandwidth_gbps == 100.0);
        CHECK(links[0].bandwidth_gbps.from == ah::origin::sysfs);
        CHECK(links[8].name == "mlx5_bond_0 port 1");
        CHECK(*links[8].bandwidth_gbps == 50.0);
        CHECK(total_bandwidth(links) == 8 * 100.0 + 50.0);
    }
    SUBCASE("real sysfs tree: ConnectX-3 FDR and a dangling scif0") {
        const fs::path root =
            fs::path(AI_HWACCEL_FIXTURES_DIR) / "infiniband-sysfs/sys-class-infiniband_mlx4-fdr-plus-scif0";
        if (!fs::exists(root)) {
            MESSAGE("skipped: fixtures not found");
            return;
        }
        const ah::host_system sys(root.string());
        std::vector<ah::warning> warnings;
        const auto ports = ah::read_fabric_ports(sys, warnings);
        // scif0's link points at a folder the dump does not hold: skipped, and said.
        REQUIRE(warnings.size() == 1);
        CHECK(warnings[0].kind == ah::warning_kind::read_error);
        CHECK(warnings[0].subject == "/sys/class/infiniband/scif0");
        REQUIRE(ports.size() == 1);
        const auto& p = ports[0];
        CHECK(p.device == "mlx4_0");
        CHECK(p.port == 1);
        CHECK(p.hca_type == "MT4099");
        CHECK(p.firmware == "2.11.500");
        CHECK(p.board_id == "DEL0A30000019");
        CHECK(p.node_type == "CA");
        CHECK(p.state == "ACTIVE");
        CHECK(p.rate_text == "56 Gb/sec (4X FDR)");
        CHECK(p.kind == ah::interconnect_kind::infiniband);
        // The device sits in its PCI function's folder, .../0000:82:00.0/infiniband/mlx4_0.
        REQUIRE(p.pci);
        CHECK(*p.pci == *ah::parse_pci_address("0000:82:00.0"));
        CHECK(p.numa_node == -1); // the dump has no numa_node file
        warnings.clear();
        const auto links = ah::probe_fabric(sys, warnings);
        REQUIRE(links.size() == 1);
        CHECK(links[0].name == "mlx4_0 port 1");
        CHECK(*links[0].bandwidth_gbps == 14.0); // 56 Gb/s each way
    }
    SUBCASE("hand-made tree: down port, RoCE v2, iWARP, bad rate, natural order, NUMA") {
        test::scratch_dir dir;
        auto port = [&](const std::string& dev, int n, const std::string& state, const std::string& rate,
                        const std::string& layer) {
            const std::string p = "sys/class/infiniband/" + dev + "/ports/" + std::to_string(n) + "/";
            dir.write(p + "state", state + "\n");
            dir.write(p + "phys_state", state.starts_with("4") ? "5: LinkUp\n" : "3: Disabled\n");
            dir.write(p + "rate", rate + "\n");
            dir.write(p + "link_layer", layer + "\n");
        };
        port("mlx5_10", 1, "4: ACTIVE", "100 Gb/sec (4X EDR)", "InfiniBand");
        port("mlx5_2", 1, "4: ACTIVE", "200 Gb/sec (4X HDR)", "InfiniBand");
        port("mlx5_2", 2, "1: DOWN", "10 Gb/sec (4X SDR)", "InfiniBand");
        port("mlx5_3", 1, "4: ACTIVE", "100 Gb/sec (4X EDR)", "Ethernet");
        dir.write("sys/class/infiniband/mlx5_3/ports/1/gid_attrs/types/0", "IB/RoCE v1\n");
        dir.write("sys/class/infiniband/mlx5_3/ports/1/gid_attrs/types/1", "RoCE v2\n");
        port("iwp0", 1, "4: ACTIVE", "25 Gb/sec (1X EDR)", "Ethernet");
        dir.write("sys/class/infiniband/iwp0/node_type", "4: RNIC\n");
        port("bad0", 1, "4: ACTIVE", "fast", "InfiniBand");
        dir.write("sys/class/infiniband/mlx5_2/node_type", "1: CA\n");
        dir.write("sys/bus/pci/devices/0000:c1:00.0/numa_node", "1\n");
        fs::create_directory_symlink("../../../bus/pci/devices/0000:c1:00.0",
                                     dir.path() / "sys/class/infiniband/mlx5_2/device");
        fs::create_directory_symlink("../../devices/nowhere/mlx5_99", dir.path() / "sys/class/infiniband/mlx5_99");
        fs::create_directories(dir.path() / "sys/class/infiniband/noports");
        const ah::host_system sys(dir.path().string());
        std::vector<ah::warning> warnings;
        const auto ports = ah::read_fabric_ports(sys, warnings);
        INFO(warnings_of(warnings));
        REQUIRE(ports.size() == 6);
        CHECK(ports[0].device == "bad0");
        CHECK(ports[1].device == "iwp0");
        CHECK(ports[2].device == "mlx5_2");
        CHECK(ports[3].device == "mlx5_2");
        CHECK(ports[4].device == "mlx5_3");
        CHECK(ports[5].device == "mlx5_10");
        CHECK_FALSE(ports[0].rate_gbit.has_value());
        CHECK(ports[1].kind == ah::interconnect_kind::ethernet);
        CHECK(ports[2].port == 1);
        REQUIRE(ports[2].pci);
        CHECK(*ports[2].pci == *ah::parse_pci_address("0000:c1:00.0"));
        CHECK(ports[2].numa_node == 1);
        CHECK(ports[3].port == 2);
        CHECK(ports[3].state == "DOWN");
        CHECK(ports[3].phys_state == "Disabled");
        CHECK_FALSE(ports[3].active);
        CHECK(ports[4].kind == ah::interconnect_kind::roce_v2);
        // Two warnings: the rate that is not one, the dangling link.
        REQUIRE(warnings.size() == 2);
        CHECK(warnings[0].subject == "/sys/class/infiniband/bad0/ports/1/rate");
        CHECK(warnings[1].subject == "/sys/class/infiniband/mlx5_99");

        warnings.clear();
        const auto links = ah::probe_fabric(sys, warnings);
        REQUIRE(links.size() == 6);
        CHECK_FALSE(links[0].bandwidth_gbps.has_value()); // rate unreadable
        CHECK(links[3].name == "mlx5_2 port 2");
        CHECK(links[3].state == "DOWN");
        CHECK_FALSE(links[3].bandwidth_gbps.has_value()); // down: not counted
        CHECK(*links[2].bandwidth_gbps == 50.0);
        CHECK(links[4].kind == ah::interconnect_kind::roce_v2);
        CHECK(*links[4].bandwidth_gbps == 25.0);
    }
    SUBCASE("no RDMA devices: nothing, no warning") {
        test::scratch_dir dir;
        const ah::host_system sys(dir.path().string());
        std::vector<ah::warning> warnings;
        CHECK(ah::probe_fabric(sys, warnings).empty());
        CHECK(warnings.empty());
    }
    SUBCASE("a hostile tree: garbage attribute files") {
        test::scratch_dir dir;
        const std::string p = "sys/class/infiniband/x/ports/1/";
        dir.write(p + "state", std::string(1u << 16, '\xff'));
        dir.write(p + "rate", "1e400 Gb/sec");
        dir.write(p + "link_layer", std::string("Infini\0Band", 11));
        dir.write("sys/class/infiniband/x/ports/notaport/state", "4: ACTIVE\n");
        const ah::host_system sys(dir.path().string());
        std::vector<ah::warning> warnings;
        const auto links = ah::probe_fabric(sys, warnings);
        REQUIRE(links.size() == 1);
        CHECK_FALSE(links[0].bandwidth_gbps.has_value());
        CHECK(links[0].kind == ah::interconnect_kind::none);
        CHECK(links[0].state.size() <= 128);
        CHECK_FALSE(warnings.empty());
    }
}

#if AI_HWACCEL_OS_LINUX || AI_HWACCEL_OS_MACOS
TEST_CASE("probe_fabric: machine handmade-ib-cluster-node-8gpu") {
    const std::string root = std::string(AI_HWACCEL_MACHINES_DIR) + "/handmade-ib-cluster-node-8gpu";
    if (!fs::exists(root + "/sys/class/infiniband")) {
        MESSAGE("skipped: machine not assembled");
        return;
    }
    const ah::host_system sys(root);
    std::vector<ah::warning> warnings;
    const auto ports = ah::read_fabric_ports(sys, warnings);
    INFO(warnings_of(warnings));
    CHECK(warnings.empty());
    REQUIRE(ports.size() == 9);
    // Each ConnectX-7 beside its GPU (bus + 1), the first four on socket 0.
    const char* addresses[] = {"0000:1a:00.0", "0000:3c:00.0", "0000:4d:00.0", "0000:5e:00.0", "0000:9c:00.0",
                               "0000:bc:00.0", "0000:cc:00.0", "0000:dc:00.0", "0000:2a:00.0"};
    for (std::size_t i = 0; i < 9; ++i) {
        CAPTURE(i);
        REQUIRE(ports[i].pci);
        CHECK(*ports[i].pci == *ah::parse_pci_address(addresses[i]));
        CHECK(ports[i].numa_node == (i >= 4 && i < 8 ? 1 : 0));
    }
    const auto links = ah::probe_fabric(sys, warnings);
    REQUIRE(links.size() == 9);
    std::size_t ib = 0;
    for (const auto& l : links) {
        CHECK(l.scope == ah::link_scope::inter_node);
        CHECK(l.state == "ACTIVE");
        CHECK(l.devices.empty());
        if (l.kind == ah::interconnect_kind::infiniband) {
            ++ib;
            CHECK(*l.bandwidth_gbps == 100.0);
        }
    }
    CHECK(ib == 8);
    CHECK(links[8].name == "mlx5_bond_0 port 1");
    CHECK(links[8].kind == ah::interconnect_kind::roce);
    CHECK(*links[8].bandwidth_gbps == 50.0);
    CHECK(total_bandwidth(links) == 850.0);
}
#endif
