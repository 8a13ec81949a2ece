#include "ai_hwaccel/detect/nvidia_links.hpp"
#include "ai_hwaccel/detect/formats.hpp"

#include "fixtures.hpp"

#include <doctest/doctest.h>

#include <filesystem>
#include <string>

#if AI_HWACCEL_BACKEND_CUDA

namespace ah = ai_hwaccel;

namespace {

std::string problems_of(const std::vector<ah::parse_problem>& ps) {
    std::string s;
    for (const auto& p : ps) s += std::to_string(p.line) + ": " + p.message + "\n";
    return s;
}

const ah::nvidia_topo_pair* pair_of(const ah::nvidia_topo_result& r, std::uint32_t a, std::uint32_t b) {
    for (const auto& p : r.pairs)
        if (p.a == a && p.b == b) return &p;
    return nullptr;
}

// Hand-made: the layout of nv-procfs.c's nv_procfs_read_gpu_info ("Key: \t value"), with
// values of an H100 SXM; not a capture.
constexpr const char* proc_information_h100 = "Model: \t\t NVIDIA H100 80GB HBM3\n"
                                              "IRQ:   \t\t 455\n"
                                              "GPU UUID: \t GPU-11111111-2222-3333-4444-555555555555\n"
                                              "Video BIOS: \t 96.00.99.00.01\n"
                                              "Bus Type: \t PCIe\n"
                                              "DMA Size: \t 52 bits\n"
                                              "DMA Mask: \t 0xfffffffffffff\n"
                                              "Bus Location: \t 0000:18:00.0\n"
                                              "Device Minor: \t 3\n"
                                              "GPU Firmware: \t 550.90.07\n"
                                              "GPU Excluded:\t No\n";

} // namespace

TEST_CASE("parse_nvidia_smi_topo: real captures") {
    SUBCASE("2 GPUs joined by NV12, 8 mlx5 HCAs as columns, no NIC legend") {
        const auto t = test::capture("nvidia-smi/topo-m_2x-nv12_8x-mlx5.txt");
        if (!t) return;
        const auto r = ah::parse_nvidia_smi_topo(*t);
        INFO(problems_of(r.problems));
        CHECK(r.problems.empty());
        CHECK_FALSE(r.p2p);
        REQUIRE(r.gpus.size() == 2);
        for (std::uint32_t i = 0; i < 2; ++i) {
            CHECK(r.gpus[i].index == i);
            CHECK(r.gpus[i].cpu_affinity == "48-95,144-191");
            CHECK(r.gpus[i].numa_affinity == "1");
            CHECK(*r.gpus[i].numa_node == 1);
            CHECK(r.gpus[i].numa_node.from == ah::origin::tool);
            CHECK_FALSE(r.gpus[i].gpu_numa_id.has_value()); // no such column
            CHECK(r.gpus[i].nic_paths ==
                  std::vector<std::string>{"SYS", "SYS", "SYS", "SYS", "NODE", "NODE", "PXB", "PXB"});
        }
        CHECK(r.nics == std::vector<std::string>{"mlx5_0", "mlx5_1", "mlx5_2", "mlx5_3", "mlx5_4", "mlx5_5",
                                                 "mlx5_6", "mlx5_7"});
        REQUIRE(r.pairs.size() == 1);
        CHECK(r.pairs[0] == ah::nvidia_topo_pair{0, 1, "NV12", 12});
        CHECK(r.legend.size() == 7);
        CHECK(r.legend[6].first == "NV#");
        REQUIRE(r.links.size() == 1);
        const auto& l = r.links[0];
        CHECK(l.kind == ah::interconnect_kind::nvlink);
        CHECK(l.scope == ah::link_scope::intra_node);
        CHECK(l.name == "NVLink GPU0-GPU1");
        CHECK(l.state == "12 links");
        CHECK(l.devices == std::vector<std::uint32_t>{0, 1});
        CHECK_FALSE(l.bandwidth_gbps.has_value()); // the generation is not in the matrix
        CHECK_FALSE(r.nvlink_switched);            // 12 links: could be direct

        // With the per-link figure nvlink -s prints (one direction): both directions.
        const auto with = ah::parse_nvidia_smi_topo(*t, {25.0, ah::origin::tool});
        REQUIRE(with.links.size() == 1);
        CHECK(*with.links[0].bandwidth_gbps == 600.0);
        CHECK(with.links[0].bandwidth_gbps.from == ah::origin::tool);
    }
    SUBCASE("2x RTX 5090 on one host bridge") {
        const auto t = test::capture("nvidia-smi/topo-m_2x-rtx5090_phb.txt");
        if (!t) return;
        const auto r = ah::parse_nvidia_smi_topo(*t);
        INFO(problems_of(r.problems));
        CHECK(r.problems.empty());
        REQUIRE(r.gpus.size() == 2);
        CHECK(r.gpus[1].cpu_affinity == "0-63");
        CHECK(*r.gpus[1].numa_node == 0);
        CHECK_FALSE(r.gpus[1].gpu_numa_id.has_value()); // "N/A"
        CHECK(r.gpus[1].nic_paths.empty());
        CHECK(r.nics.empty());
        REQUIRE(r.pairs.size() == 1);
        CHECK(r.pairs[0] == ah::nvidia_topo_pair{0, 1, "PHB", 0});
        CHECK(r.links.empty());
    }
    SUBCASE("8x RTX 4090, 2 NICs, no NVLink, legend omitted") {
        const auto t = test::capture("nvidia-smi/topo-m_8x-rtx4090_2nics_no-nvlink.txt");
        if (!t) return;
        const auto r = ah::parse_nvidia_smi_topo(*t);
        INFO(problems_of(r.problems));
        CHECK(r.problems.empty());
        CHECK_FALSE(r.p2p);
        REQUIRE(r.gpus.size() == 8);
        CHECK(r.pairs.size() == 28);
        for (const auto& p : r.pairs) CHECK(p.connection == "SYS");
        CHECK(r.links.empty());
        CHECK(r.legend.empty());
        CHECK(r.nics == std::vector<std::string>{"NIC0", "NIC1"}); // no NIC legend to name them
        for (std::uint32_t i = 0; i < 8; ++i) {
            CHECK(*r.gpus[i].numa_node == (i < 4 ? 0 : 1));
            CHECK(r.gpus[i].cpu_affinity == (i < 4 ? "0-55,112-167" : "56-111,168-223"));
            CHECK(r.gpus[i].nic_paths ==
                  (i == 6 ? std::vector<std::string>{"PHB", "PHB"} : std::vector<std::string>{"SYS", "SYS"}));
        }
    }
    SUBCASE("8x RTX 5090, dual socket, space-separated, NIC legend") {
        const auto t = test::capture("nvidia-smi/topo-m_8x-rtx5090_dual-socket_2nics.txt");
        if (!t) return;
        const auto r = ah::parse_nvidia_smi_topo(*t);
        INFO(problems_of(r.problems));
        CHECK(r.problems.empty());
        REQUIRE(r.gpus.size() == 8);
        CHECK(r.pairs.size() == 28);
        CHECK(pair_of(r, 0, 1)->connection == "NODE");
        CHECK(pair_of(r, 0, 4)->connection == "SYS");
        CHECK(pair_of(r, 3, 4)->connection == "SYS");
        CHECK(pair_of(r, 4, 7)->connection == "NODE");
        CHECK(r.links.empty());
        CHECK(r.nics == std::vector<std::string>{"mlx5_0", "mlx5_1"});
        CHECK(r.gpus[0].cpu_affinity == "0-127,256-383");
        CHECK(r.gpus[7].cpu_affinity == "128-255,384-511");
        CHECK(*r.gpus[3].numa_node == 0);
        CHECK(*r.gpus[4].numa_node == 1);
        CHECK(r.gpus[0].nic_paths == std::vector<std::string>{"NODE", "NODE"});
        CHECK(r.gpus[5].nic_paths == std::vector<std::string>{"SYS", "SYS"});
        CHECK(r.legend.size() == 7);
    }
    SUBCASE("topo -p2p rw, 2x RTX 5090: GPU not supported") {
        const auto t = test::capture("nvidia-smi/topo-p2p-rw_2x-rtx5090.txt");
        if (!t) return;
        const auto r = ah::parse_nvidia_smi_topo(*t);
        INFO(problems_of(r.problems));
        CHECK(r.problems.empty());
        CHECK(r.p2p);
        REQUIRE(r.gpus.size() == 2);
        CHECK(r.gpus[0].cpu_affinity.empty());
        CHECK_FALSE(r.gpus[0].numa_node.has_value());
        REQUIRE(r.pairs.size() == 1);
        CHECK(r.pairs[0] == ah::nvidia_topo_pair{0, 1, "GNS", 0});
        CHECK(r.legend.size() == 8);
        CHECK(r.legend[3] == std::pair<std::string, std::string>{"GNS", "GPU not supported"});
        CHECK(r.links.empty());
    }
}

TEST_CASE("parse_nvidia_smi_topo: the header nvidia-smi underlines, into a pipe too") {
    // Real: driver 580.159.04 on one H200 (tests/data/nvidia-h200-vm/topo-m.txt), written
    // to a file; the header line is wrapped in ESC[4m ... ESC[0m.
    const auto t = test::read_file(std::string(AI_HWACCEL_TEST_DATA_DIR) + "/nvidia-h200-vm/topo-m.txt");
    REQUIRE(t);
    REQUIRE(t->find("\x1b[4mGPU0\t") != std::string::npos);
    const auto r = ah::parse_nvidia_smi_topo(*t);
    INFO(problems_of(r.problems));
    CHECK(r.problems.empty());
    REQUIRE(r.gpus.size() == 1);
    CHECK(r.gpus[0].index == 0);
    CHECK(r.gpus[0].cpu_affinity == "0-15");
    CHECK(r.gpus[0].numa_affinity == "0");
    CHECK(*r.gpus[0].numa_node == 0);
    CHECK_FALSE(r.gpus[0].gpu_numa_id.has_value()); // "N/A"
    CHECK_FALSE(r.p2p);
    CHECK(r.nics.empty());
    CHECK(r.pairs.empty());
    CHECK(r.links.empty());
    CHECK(r.legend.size() == 7);
    namespace f = ah::detail::formats;
    CHECK(f::sniff_nvidia_topo(*t) > 0);
    CHECK(f::sniff_nvidia_topo_p2p(*t) == 0);
    CHECK(ah::recognise_format(*t) == ah::find_capture_format("nvidia-smi-topo"));

    // topo -p2p underlines its header the same way.
    const auto p2p = test::read_file(std::string(AI_HWACCEL_TEST_DATA_DIR) + "/nvidia-h200-vm/topo-p2p-r.txt");
    REQUIRE(p2p);
    REQUIRE(p2p->find('\x1b') != std::string::npos);
    const auto rp = ah::parse_nvidia_smi_topo(*p2p);
    INFO(problems_of(rp.problems));
    CHECK(rp.problems.empty());
    CHECK(rp.p2p); // told by the legend's "OK = Status Ok": its one cell is "X"
    CHECK(rp.gpus.size() == 1);
    CHECK(rp.pairs.empty());
    // nvlink -s printed nothing there (no NVLink peer in the VM): nothing, and no problem.
    const auto nvlink = test::read_file(std::string(AI_HWACCEL_TEST_DATA_DIR) + "/nvidia-h200-vm/nvlink-s.txt");
    REQUIRE(nvlink);
    const auto rn = ah::parse_nvidia_smi_nvlink_status(*nvlink);
    CHECK(rn.gpus.empty());
    CHECK(rn.links.empty());
    CHECK(rn.problems.empty());
    CHECK(ah::recognise_format(*p2p) == ah::find_capture_format("nvidia-smi-topo-p2p"));

    // Several GPUs: a real matrix given the same underline reads as it does without.
    const auto plain = test::capture("nvidia-smi/topo-m_2x-nv12_8x-mlx5.txt");
    if (!plain) return;
    std::string underlined = *plain;
    const auto first = underlined.find("GPU0");
    const auto eol = underlined.find('\n');
    REQUIRE(first < eol);
    underlined.insert(eol, "\x1b[0m");
    underlined.insert(first, "\x1b[4m");
    const auto a = ah::parse_nvidia_smi_topo(*plain);
    const auto b = ah::parse_nvidia_smi_topo(underlined);
    CHECK(b.problems.empty());
    REQUIRE(b.gpus.size() == a.gpus.size());
    CHECK(b.nics == a.nics);
    CHECK(b.pairs == a.pairs);
    REQUIRE(b.links.size() == 1);
    CHECK(b.links == a.links);
    CHECK(f::sniff_nvidia_topo(underlined) == f::sniff_nvidia_topo(*plain));
    // Escapes anywhere: colours around a cell, an unfinished sequence at the end.
    std::string coloured = *plain;
    const auto nv = coloured.find("NV12");
    coloured.replace(nv, 4, "\x1b[1;32mNV12\x1b[0m");
    coloured += "\x1b[";
    const auto c = ah::parse_nvidia_smi_topo(coloured);
    CHECK(c.pairs == a.pairs);
}

TEST_CASE("parse_nvidia_smi_topo: NVSwitch is told by arithmetic, never invented (hand-made)") {
    // Hand-made, in the layout of the captures: 8 GPUs with NV18 to every peer (an HGX
    // H100 board shows this), "GPU NUMA ID" numbers and trailing blank NIC cells.
    std::string m = "\tGPU0\tGPU1\tGPU2\tGPU3\tGPU4\tGPU5\tGPU6\tGPU7\tNIC0\tCPU Affinity\tNUMA Affinity\tGPU NUMA ID\n";
    for (int i = 0; i < 8; ++i) {
        m += "GPU" + std::to_string(i);
        for (int j = 0; j < 8; ++j) m += i == j ? "\t X " : "\tNV18";
        m += i < 4 ? "\tSYS\t0-47\t0\t\t2\n" : "\tSYS\t48-95\t1\t\t3\n";
    }
    m += "NIC0\tSYS\tSYS\tSYS\tSYS\tSYS\tSYS\tSYS\tSYS\t X \t\t\t\n\nNIC Legend:\n\n  NIC0: mlx5_0\n";
    auto r = ah::parse_nvidia_smi_topo(m, {25.0, ah::origin::user});
    INFO(problems_of(r.problems));
    CHECK(r.problems.empty());
    REQUIRE(r.gpus.size() == 8);
    CHECK(*r.gpus[0].gpu_numa_id == 2);
    CHECK(*r.gpus[7].gpu_numa_id == 3);
    CHECK(r.links.size() == 28);
    CHECK(r.nvlink_switched); // 7 x 18 links from one GPU: cannot all be direct
    for (const auto& l : r.links) {
        CHECK(l.kind == ah::interconnect_kind::nvlink); // never nvswitch
        CHECK(*l.bandwidth_gbps == 900.0);
        CHECK(l.bandwidth_gbps.from == ah::origin::user);
    }
    CHECK(r.nics == std::vector<std::string>{"mlx5_0"});

    // 4 GPUs with NV4 to each peer (12 links each): direct wiring is possible.
    r = ah::parse_nvidia_smi_topo("\tGPU0\tGPU1\tGPU2\tGPU3\tCPU Affinity\n"
                                  "GPU0\t X \tNV4\tNV4\tNV4\t0-63\n"
                                  "GPU1\tNV4\t X \tNV4\tNV4\t0-63\n"
                                  "GPU2\tNV4\tNV4\t X \tNV4\t0-63\n"
                                  "GPU3\tNV4\tNV4\tNV4\t X \t0-63\n");
    INFO(problems_of(r.problems));
    CHECK(r.problems.empty());
    CHECK(r.links.size() == 6);
    CHECK_FALSE(r.nvlink_switched);
    CHECK(r.links[5].state == "4 links");
    CHECK_FALSE(r.gpus[0].numa_node.has_value()); // no NUMA column

    // Older drivers: SOC, and a text line before the matrix.
    r = ah::parse_nvidia_smi_topo("NVIDIA Topology:\n\tGPU0\tGPU1\tmlx4_0\tCPU Affinity\n"
                                  "GPU0\t X \tSOC\tSOC\t0-5\nGPU1\tSOC\t X \tPHB\t6-11\nmlx4_0\tSOC\tPHB\t X\n");
    INFO(problems_of(r.problems));
    CHECK(r.problems.empty());
    CHECK(r.pairs.size() == 1);
    CHECK(r.pairs[0].connection == "SOC");
    CHECK(r.gpus[1].nic_paths == std::vector<std::string>{"PHB"});
}

TEST_CASE("parse_nvidia_smi_topo: an empty CPU affinity keeps its column (hand-made from a public capture)") {
    // Hand-made in the layout of a public 8x H100 capture (Princeton's della-k17g3 node):
    // nvidia-smi wrote no CPU affinity for GPUs 0-3 ("NODE\t\t0\t\tN/A"). Blank runs read
    // as one separator moved NUMA node 0 into the CPU affinity and lost it, without a word.
    std::string m = "\tGPU0\tGPU1\tGPU2\tGPU3\tGPU4\tGPU5\tGPU6\tGPU7\tNIC0\tCPU Affinity\tNUMA Affinity\tGPU NUMA ID\n";
    for (int i = 0; i < 8; ++i) {
        m += "GPU" + std::to_string(i);
        for (int j = 0; j < 8; ++j) m += i == j ? "\t X " : "\tNV18";
        m += i < 4 ? "\tNODE\t\t0\t\tN/A\n" : "\tNODE\t1\t1\t\tN/A\n";
    }
    m += "NIC0\tNODE\tNODE\tNODE\tNODE\tNODE\tNODE\tNODE\tNODE\t X \t\t\t\t\n";
    const auto r = ah::parse_nvidia_smi_topo(m);
    INFO(problems_of(r.problems));
    CHECK(r.problems.empty());
    REQUIRE(r.gpus.size() == 8);
    for (std::size_t i = 0; i < 8; ++i) {
        CAPTURE(i);
        CHECK(r.gpus[i].cpu_affinity == (i < 4 ? "" : "1"));
        REQUIRE(r.gpus[i].numa_node.has_value());
        CHECK(*r.gpus[i].numa_node == (i < 4 ? 0 : 1));
        CHECK_FALSE(r.gpus[i].gpu_numa_id.has_value());
    }
    // The same rows with their tabs turned to spaces cannot show an empty cell: the words
    // are read in order, as before.
    std::string spaced = m;
    for (char& c : spaced)
        if (c == '\t') c = ' ';
    const auto s2 = ah::parse_nvidia_smi_topo(spaced);
    REQUIRE(s2.gpus.size() == 8);
    CHECK(*s2.gpus[4].numa_node == 1);
}

TEST_CASE("parse_nvidia_smi_topo: hostile input") {
    CHECK(ah::parse_nvidia_smi_topo("").problems.empty());
    CHECK(ah::parse_nvidia_smi_topo("").gpus.empty());
    auto r = ah::parse_nvidia_smi_topo("garbage\n\x01\x02\xff\n");
    CHECK(r.gpus.empty());
    CHECK(r.problems.size() == 1);
    // A row too short, an unknown code, a disagreeing lower triangle, a missing row.
    r = ah::parse_nvidia_smi_topo("\tGPU0\tGPU1\tGPU2\n GPU0\t X \tNV2\tZZZ\nGPU1\tNV3\t X \tSYS\nGPU2\tSYS\n");
    CHECK(r.gpus.size() == 3);
    CHECK(r.problems.size() == 3); // ZZZ, GPU2 short, NV2/NV3 disagree
    // A GPU named twice.
    r = ah::parse_nvidia_smi_topo("\tGPU0\tGPU0\nGPU0\t X \tSYS\n");
    CHECK(r.gpus.empty());
    CHECK(r.problems.size() == 1);
    // Too many columns: refused, bounded.
    std::string wide = "GPU0";
    for (int i = 1; i < 100'000; ++i) wide += "\tGPU" + std::to_string(i);
    r = ah::parse_nvidia_smi_topo(wide + "\n");
    CHECK(r.gpus.empty());
    CHECK(r.problems.size() == 1);
    // A megabyte of one line, numbers past 2^64, non-UTF-8 names.
    r = ah::parse_nvidia_smi_topo("\tGPU0\tGPU99999999999999999999999\n" + std::string(1 << 20, 'x'));
    CHECK(r.links.empty());
    r = ah::parse_nvidia_smi_topo("\tGPU0\t\xff\xfe\tCPU Affinity\tNUMA Affinity\n"
                                  "GPU0\t X \tPIX\t0-4294967296\t99999999999999999999999\n");
    CHECK(r.gpus.size() == 1);
    CHECK(r.nics.size() == 1);
    CHECK(r.nics[0] == "??");
    CHECK_FALSE(r.gpus[0].numa_node.has_value());
    CHECK(r.problems.size() == 3); // name, CPU list, NUMA
    // Thousands of bad rows: problems capped.
    std::string many = "\tGPU0\nGPU0\t X\n";
    for (int i = 0; i < 5000; ++i) many += "junk row\n";
    r = ah::parse_nvidia_smi_topo(many);
    CHECK(r.problems.size() == ah::detail::parsing::max_problems + 1);
}

TEST_CASE("parse_nvidia_smi_nvlink_status") {
    SUBCASE("8x A100 SXM4 80GB, 12 links each") {
        const auto t = test::capture("nvidia-smi/nvlink-status_a100.txt");
        if (!t) return;
        const auto r = ah::parse_nvidia_smi_nvlink_status(*t);
        INFO(problems_of(r.problems));
        CHECK(r.problems.empty());
        REQUIRE(r.gpus.size() == 8);
        REQUIRE(r.devices.size() == 8);
        REQUIRE(r.links.size() == 8);
        for (std::uint32_t i = 0; i < 8; ++i) {
            CHECK(r.gpus[i].index == i);
            CHECK(r.gpus[i].links_listed == 12);
            CHECK(r.gpus[i].links_active == 12);
            CHECK(r.gpus[i].gbps_one_direction == 300.0);
            CHECK(r.devices[i].name.view() == "NVIDIA A100-SXM4-80GB");
            CHECK(r.devices[i].kind == ah::device_kind::cuda_gpu);
            const auto& l = r.links[i];
            CHECK(l.kind == ah::interconnect_kind::nvlink);
            CHECK(l.name == "NVLink GPU" + std::to_string(i));
            CHECK(l.state == "12 links up");
            CHECK(l.devices == std::vector<std::uint32_t>{i});
            CHECK(*l.bandwidth_gbps == 600.0); // both directions, as NVIDIA quotes A100's NVLink
            CHECK(l.bandwidth_gbps.from == ah::origin::tool);
        }
        CHECK(r.devices[0].uuid.view() == "GPU-5269b708-678a-b1a8-60f0-c90406537486");
        CHECK(r.devices[4].uuid.view() == "GPU-82ef2c67-965f-a411-1413-f5e1d756bcdb");
    }
    SUBCASE("hand-made: inactive links, fractional speeds") {
        const auto r = ah::parse_nvidia_smi_nvlink_status("GPU 0: Tesla V100-SXM2-16GB (UUID: GPU-a)\n"
                                                          "\t Link 0: 25.781 GB/s\n\t Link 1: <inactive>\n"
                                                          "GPU 1: Tesla V100-SXM2-16GB (UUID: GPU-b)\n"
                                                          "\t Link 0: <inactive>\n");
        INFO(problems_of(r.problems));
        CHECK(r.problems.empty());
        REQUIRE(r.gpus.size() == 2);
        CHECK(r.gpus[0].links_listed == 2);
        CHECK(r.gpus[0].links_active == 1);
        CHECK(r.gpus[0].gbps_one_direction == doctest::Approx(25.781));
        REQUIRE(r.links.size() == 1); // GPU 1 has no active link
        CHECK(r.links[0].state == "1 link up");
        CHECK(*r.links[0].bandwidth_gbps == doctest::Approx(51.562));
    }
    SUBCASE("hand-made: a GPU whose links are all down (NVML's message, leptonai/gpud#1085)") {
        const std::string text = "GPU 0: NVIDIA B200 (UUID: GPU-a)\n"
                                 "NVML: Unable to retrieve NVLink information as all links are inActive\n"
                                 "GPU 1: NVIDIA B200 (UUID: GPU-b)\n\t Link 0: 53.125 GB/s\n\t Link 1: 53.125 GB/s\n";
        const auto r = ah::parse_nvidia_smi_nvlink_status(text);
        INFO(problems_of(r.problems));
        CHECK(r.problems.empty());
        REQUIRE(r.gpus.size() == 2);
        CHECK(r.gpus[0].all_links_inactive);
        CHECK(r.gpus[0].links_active == 0);
        CHECK_FALSE(r.gpus[1].all_links_inactive);
        REQUIRE(r.links.size() == 1);
        CHECK(r.links[0].devices == std::vector<std::uint32_t>{1});
        // The whole capture is still recognised, though its second line is no link line.
        namespace f = ah::detail::formats;
        CHECK(f::sniff_nvidia_nvlink_status(text) > f::sniff_nvidia_list(text));
    }
    SUBCASE("hand-made: links under a GPU line that was refused go nowhere") {
        const auto r = ah::parse_nvidia_smi_nvlink_status(
            "GPU 0: A (UUID: GPU-a)\n Link 0: 25 GB/s\nGPU 1 B\n Link 0: 25 GB/s\n Link 1: 25 GB/s\n"
            "GPU 0: A (UUID: GPU-a)\n Link 0: 25 GB/s\n Link 1: 25 GB/s\n");
        CHECK(r.problems.size() == 2); // the line that is no GPU line, the GPU listed twice
        REQUIRE(r.gpus.size() == 1);
        CHECK(r.gpus[0].links_listed == 1);
        CHECK(r.gpus[0].gbps_one_direction == doctest::Approx(25));
    }
    SUBCASE("hand-made: GPU lines without a UUID (DGX-1 captures as Microway shows them)") {
        const auto r = ah::parse_nvidia_smi_nvlink_status("GPU 0: Tesla V100-SXM2-32GB\n\t Link 0: 25.781 GB/s\n"
                                                          "GPU 1: Tesla V100-SXM2-32GB\n\t Link 0: 25.781 GB/s\n");
        INFO(problems_of(r.problems));
        CHECK(r.problems.empty());
        REQUIRE(r.devices.size() == 2);
        CHECK(r.devices[1].index == 1);
        CHECK(r.devices[1].name.view() == "Tesla V100-SXM2-32GB");
        CHECK(r.links.size() == 2);
    }
    SUBCASE("nvlink -c is not nvlink -s") {
        namespace f = ah::detail::formats;
        const std::string capabilities = "GPU 0: NVIDIA H800 (UUID: GPU-a)\n\t Link 0, P2P is supported: true\n"
                                         "\t Link 0, Access to system memory supported: true\n";
        CHECK(f::sniff_nvidia_nvlink_status(capabilities) == 0);
    }
    SUBCASE("hostile input") {
        CHECK(ah::parse_nvidia_smi_nvlink_status("").problems.empty());
        auto r = ah::parse_nvidia_smi_nvlink_status("Link 0: 25 GB/s\nGPU 0: A (UUID: GPU-a)\nLink x: 1 GB/s\n"
                                                    "Link 1: 99999999999999999999999 GB/s\nLink 2: 25 MB/s\n"
                                                    "Link 3: -5 GB/s\nGPU 0: A (UUID: GPU-a)\nwhat\n");
        CHECK(r.gpus.size() == 1);
        CHECK(r.links.empty());
        CHECK(r.problems.size() == 7);
        r = ah::parse_nvidia_smi_nvlink_status(std::string(1 << 20, 'L'));
        CHECK(r.problems.size() == 1);
        r = ah::parse_nvidia_smi_nvlink_status("GPU 0: \xff (UUID: GPU-a)\n Link 0: 1 GB/s\n");
        CHECK(r.gpus.size() == 1);
        CHECK(r.problems.size() == 1);
    }
}

TEST_CASE("parse_nvidia_proc_information (hand-made, layout from nv-procfs.c; and a real one)") {
    const auto r = ah::parse_nvidia_proc_information(proc_information_h100);
    INFO(problems_of(r.problems));
    CHECK(r.problems.empty());
    CHECK(r.model == "NVIDIA H100 80GB HBM3");
    CHECK(*r.irq == 455u);
    CHECK(r.uuid == "GPU-11111111-2222-3333-4444-555555555555");
    CHECK(r.video_bios == "96.00.99.00.01");
    CHECK(r.bus_type == "PCIe");
    CHECK(*r.dma_bits == 52u);
    CHECK(*r.dma_mask == 0xfffffffffffffull);
    CHECK(*r.bus_location == ah::pci_address{0, 0x18, 0, 0});
    CHECK(*r.device_minor == 3u);
    CHECK(r.firmware == "550.90.07");
    CHECK(*r.excluded == false);

    // Real: an H200 on the open kernel module 580.159.04 (tests/data/nvidia-h200-vm).
    const auto real = test::read_file(std::string(AI_HWACCEL_TEST_DATA_DIR) +
                                      "/nvidia-h200-vm/proc-driver-nvidia-gpus-information.txt");
    REQUIRE(real);
    const auto h = ah::parse_nvidia_proc_information(*real);
    INFO(problems_of(h.problems));
    CHECK(h.problems.empty());
    CHECK(h.model == "NVIDIA H200");
    CHECK(*h.irq == 41u);
    CHECK(h.uuid == "GPU-ee57b6d3-1370-2283-2fa4-d5a32d6c3fb6");
    CHECK(h.video_bios == "96.00.a5.00.1a");
    CHECK(*h.dma_bits == 52u);
    CHECK(*h.bus_location == ah::pci_address{0, 0, 6, 0});
    CHECK(*h.device_minor == 0u);
    CHECK(h.firmware == "580.159.04");
    CHECK(*h.excluded == false);

    // Without a UUID line (the driver omits it when it has none).
    auto s = ah::parse_nvidia_proc_information("Model: \t\t Tesla T4\nGPU Excluded:\t Yes\n");
    CHECK(s.problems.empty());
    CHECK(s.uuid.empty());
    CHECK(*s.excluded);

    // Hostile.
    CHECK(ah::parse_nvidia_proc_information("").problems.empty());
    s = ah::parse_nvidia_proc_information("\x01\x02garbage\nIRQ: 99999999999999999999\nDMA Mask: 0xzz\n"
                                          "DMA Size: 47\nBus Location: 0000:zz:00.0\nGPU Excluded: maybe\n"
                                          "Model: \xff\xfe\nWho: me\n");
    CHECK(s.problems.size() == 8);
    CHECK_FALSE(s.irq);
    CHECK_FALSE(s.dma_mask);
    CHECK(s.model == "??");
    CHECK(ah::parse_nvidia_proc_information(std::string(1 << 20, ':')).problems.size() == 1);
}

TEST_CASE("nvidia_gpus_from_driver") {
    SUBCASE("/proc/driver/nvidia/gpus joined with PCI sysfs (hand-made tree)") {
        test::scratch_dir dir;
        dir.write("proc/driver/nvidia/gpus/0000:18:00.0/information", proc_information_h100);
        dir.write("proc/driver/nvidia/gpus/0000:2a:00.0/information",
                  "Model: \t\t NVIDIA H100 80GB HBM3\nDevice Minor: \t 1\nGPU Excluded:\t Yes\n");
        dir.write("proc/driver/nvidia/gpus/not-an-address/information", "");
        const std::string pci = "sys/bus/pci/devices/0000:18:00.0/";
        dir.write(pci + "vendor", "0x10de\n");
        dir.write(pci + "device", "0x2330\n");
        dir.write(pci + "class", "0x030200\n");
        dir.write(pci + "current_link_speed", "32.0 GT/s PCIe\n");
        dir.write(pci + "current_link_width", "16\n");
        dir.write(pci + "max_link_speed", "32.0 GT/s PCIe\n");
        dir.write(pci + "max_link_width", "16\n");
        dir.write(pci + "numa_node", "0\n");
        std::vector<ah::warning> warnings;
        const auto gpus = ah::nvidia_gpus_from_driver(ah::host_system(dir.path().string()), warnings);
        REQUIRE(gpus.size() == 2);
        REQUIRE(warnings.size() == 1); // the directory that is not an address
        const auto& a = gpus[0];
        CHECK(a.kind == ah::device_kind::cuda_gpu);
        CHECK(a.maker == ah::vendor::nvidia);
        CHECK(a.index == 3); // the device minor
        CHECK(a.name.view() == "NVIDIA H100 80GB HBM3");
        CHECK(a.uuid.view() == "GPU-11111111-2222-3333-4444-555555555555");
        CHECK(*a.pci == ah::pci_address{0, 0x18, 0, 0});
        CHECK(a.pci_device_id == 0x2330);
        CHECK(*a.pcie_max == ah::pcie_link{5, 16});
        CHECK(a.pcie_max.from == ah::origin::sysfs);
        CHECK(*a.numa_node == 0);
        CHECK(a.numa_node.from == ah::origin::sysfs);
        CHECK(a.available);
        REQUIRE(a.spec != nullptr);
        CHECK(a.spec->name == "NVIDIA H100 SXM5 80GB");
        CHECK(a.memory_bytes.from == ah::origin::catalogue);
        const auto& b = gpus[1];
        CHECK(b.index == 1);
        CHECK_FALSE(b.available); // excluded by the driver
        CHECK(b.pci_device_id == 0); // no sysfs entry
        CHECK_FALSE(b.numa_node.has_value());
        REQUIRE(b.spec != nullptr); // by name
    }
    SUBCASE("no /proc/driver/nvidia: PCI sysfs alone, only what the nvidia driver holds") {
        test::scratch_dir dir;
        const std::string a = "sys/bus/pci/devices/0000:01:00.0/";
        dir.write(a + "vendor", "0x10de\n");
        dir.write(a + "device", "0x2330\n");
        dir.write(a + "class", "0x030200\n");
        dir.write(a + "numa_node", "-1\n");
        dir.write(a + "driver", "../../../bus/pci/drivers/nvidia"); // a link stored as a file
        const std::string b = "sys/bus/pci/devices/0000:02:00.0/"; // bound to vfio-pci: not listed
        dir.write(b + "vendor", "0x10de\n");
        dir.write(b + "device", "0x2330\n");
        dir.write(b + "class", "0x030200\n");
        dir.write(b + "driver", "../../../bus/pci/drivers/vfio-pci");
        const std::string c = "sys/bus/pci/devices/0000:01:00.1/"; // NVIDIA audio function
        dir.write(c + "vendor", "0x10de\n");
        dir.write(c + "class", "0x040300\n");
        dir.write(c + "driver", "../../../bus/pci/drivers/nvidia");
        std::vector<ah::warning> warnings;
        const auto gpus = ah::nvidia_gpus_from_driver(ah::host_system(dir.path().string()), warnings);
        CHECK(warnings.empty());
        REQUIRE(gpus.size() == 1);
        CHECK(*gpus[0].pci == ah::pci_address{0, 1, 0, 0});
        CHECK(gpus[0].pci_device_id == 0x2330);
        CHECK_FALSE(gpus[0].numa_node.has_value());
        REQUIRE(gpus[0].spec != nullptr);
        CHECK(gpus[0].name.view() == "NVIDIA H100 SXM5 80GB"); // the catalogue's name
        CHECK(gpus[0].uuid.empty());
    }
    SUBCASE("nothing NVIDIA") {
        test::scratch_dir dir;
        std::vector<ah::warning> warnings;
        CHECK(ah::nvidia_gpus_from_driver(ah::host_system(dir.path().string()), warnings).empty());
        CHECK(warnings.empty());
    }
}

TEST_CASE("mig_devices") {
    SUBCASE("A100 80GB PCIe, 2x 3g.40gb") {
        const auto t = test::capture("nvidia-smi/L_a100-80gb-pcie_mig-2x3g.40gb.txt");
        if (!t) return;
        const auto d = ah::mig_devices(ah::parse_nvidia_smi_list(*t));
        REQUIRE(d.size() == 2);
        CHECK(d[0].name.view() == "NVIDIA A100 80GB PCIe MIG 3g.40gb");
        CHECK(d[0].uuid.view() == "MIG-0929581a-2be6-5dec-bf34-0954c6c529a6");
        CHECK(d[1].uuid.view() == "MIG-3adbed3a-d03d-549f-a016-ba1fd7359f23");
        CHECK(d[1].index == 1);
        for (const auto& m : d) {
            CHECK(m.kind == ah::device_kind::cuda_gpu);
            CHECK(m.maker == ah::vendor::nvidia);
            CHECK(m.arch.view() == "8.0"); // the parent's
            CHECK_FALSE(m.memory_bytes.has_value());
            CHECK(m.peak_from == ah::origin::none);
            CHECK_FALSE(m.pci.has_value());
            CHECK(m.spec == nullptr);
        }
    }
    SUBCASE("A100 SXM4 80GB, 7x 1g.10gb") {
        const auto t = test::capture("nvidia-smi/L_a100-80gb-sxm4_mig-7x1g.10gb.txt");
        if (!t) return;
        const auto d = ah::mig_devices(ah::parse_nvidia_smi_list(*t));
        REQUIRE(d.size() == 7);
        for (std::uint32_t i = 0; i < 7; ++i) {
            CHECK(d[i].index == i);
            CHECK(d[i].name.view() == "NVIDIA A100-SXM4-80GB MIG 1g.10gb");
            CHECK_FALSE(d[i].memory_bytes.has_value());
        }
        CHECK(d[6].uuid.view() == "MIG-1aae4990-b962-574e-8375-119d6d9b9687");
    }
    SUBCASE("R450/R460's MIG UUIDs (49 bytes) kept whole: two instances, two UUIDs") {
        // As NVIDIA's GPU operator documentation pastes `nvidia-smi -L` of those drivers.
        // Before, cut at 47 bytes, which gave instances /1/0 and /1/1 the same UUID.
        const auto d = ah::mig_devices(ah::parse_nvidia_smi_list(
            "GPU 0: A100-SXM4-40GB (UUID: GPU-5c89852c-d268-c3f3-1b07-005d5ae1dc3f)\n"
            "  MIG 1g.5gb Device 0: (UUID: MIG-GPU-5c89852c-d268-c3f3-1b07-005d5ae1dc3f/11/0)\n"
            "  MIG 1g.5gb Device 1: (UUID: MIG-GPU-5c89852c-d268-c3f3-1b07-005d5ae1dc3f/12/0)\n"));
        REQUIRE(d.size() == 2);
        CHECK(d[0].uuid.view() == "MIG-GPU-5c89852c-d268-c3f3-1b07-005d5ae1dc3f/11/0");
        CHECK(d[1].uuid.view() == "MIG-GPU-5c89852c-d268-c3f3-1b07-005d5ae1dc3f/12/0");
    }
    SUBCASE("no MIG, or a MIG line without its GPU") {
        CHECK(ah::mig_devices(ah::parse_nvidia_smi_list("GPU 0: A (UUID: GPU-a)\n")).empty());
        ah::nvidia_list_result orphan;
        orphan.mig.push_back({5, 0, "1g.5gb", "MIG-x"});
        const auto d = ah::mig_devices(orphan);
        REQUIRE(d.size() == 1);
        CHECK(d[0].name.view() == "NVIDIA GPU MIG 1g.5gb");
    }
}

TEST_CASE("requests") {
    CHECK(ah::command_line_of(ah::nvidia_smi_topo_request().argv) == "nvidia-smi topo -m");
    CHECK(ah::command_line_of(ah::nvidia_smi_nvlink_status_request().argv) == "nvidia-smi nvlink -s");
}

TEST_CASE("detail::formats::sniff_nvidia_topo / sniff_nvidia_topo_p2p / sniff_nvidia_nvlink_status") {
    namespace f = ah::detail::formats;
    const std::vector<std::string> topo = {
        "nvidia-smi/topo-m_2x-nv12_8x-mlx5.txt", "nvidia-smi/topo-m_2x-rtx5090_phb.txt",
        "nvidia-smi/topo-m_8x-rtx4090_2nics_no-nvlink.txt", "nvidia-smi/topo-m_8x-rtx5090_dual-socket_2nics.txt"};
    const std::string p2p = "nvidia-smi/topo-p2p-rw_2x-rtx5090.txt";
    const std::string nvlink = "nvidia-smi/nvlink-status_a100.txt";

    // Each of these captures is its format's; every other capture is no one's.
    const test::sniffer_row rows[] = {
        {"topo", f::sniff_nvidia_topo, topo[0].c_str()},
        {"topo", f::sniff_nvidia_topo, topo[1].c_str()},
        {"topo", f::sniff_nvidia_topo, topo[2].c_str()},
        {"topo", f::sniff_nvidia_topo, topo[3].c_str()},
        {"topo-p2p", f::sniff_nvidia_topo_p2p, p2p.c_str()},
        {"nvlink-status", f::sniff_nvidia_nvlink_status, nvlink.c_str()},
    };
    test::check_sniffers(rows, 6);

    for (const auto& file : topo) {
        const auto t = test::capture(file);
        if (!t) continue;
        CAPTURE(file);
        ah::capture_parse out;
        out.format = "nvidia-smi-topo";
        f::parse_nvidia_topo_capture(*t, out);
        CHECK(out.warnings.empty());
        CHECK(out.devices.empty()); // the matrix names no device
        REQUIRE(out.system);
        CHECK(out.system->interconnects.size() == (file == topo[0] ? 1u : 0u));
    }
    if (const auto t = test::capture(p2p)) {
        ah::capture_parse out;
        out.format = "nvidia-smi-topo-p2p";
        f::parse_nvidia_topo_p2p_capture(*t, out);
        CHECK(out.warnings.empty());
        CHECK(out.devices.empty());
    }
    if (const auto t = test::capture(nvlink)) {
        // Its first line is a `nvidia-smi -L` GPU line: the nvlink sniffer must outscore that one.
        CHECK(f::sniff_nvidia_nvlink_status(*t) > f::sniff_nvidia_list(*t));
        ah::capture_parse out;
        out.format = "nvidia-smi-nvlink-status";
        f::parse_nvidia_nvlink_status_capture(*t, out);
        CHECK(out.warnings.empty());
        CHECK(out.devices.size() == 8);
        REQUIRE(out.system);
        CHECK(out.system->interconnects.size() == 8);
        CHECK(out.system->has_interconnect(ah::link_scope::intra_node));
    }
    CHECK(f::sniff_nvidia_topo("") == 0);
    CHECK(f::sniff_nvidia_topo("\tGPU0\n") == 0); // a header alone
    CHECK(f::sniff_nvidia_topo_p2p("\tGPU0\tGPU1\nGPU0\tX\tOK\n") == 90);
    CHECK(f::sniff_nvidia_nvlink_status("GPU 0: A (UUID: GPU-a)\n") == 0);

    ah::capture_parse empty;
    empty.format = "nvidia-smi-topo";
    f::parse_nvidia_topo_capture("", empty);
    CHECK(test::count_kind(empty.warnings, ah::warning_kind::parse_error) == 1);
}

#endif // AI_HWACCEL_BACKEND_CUDA
