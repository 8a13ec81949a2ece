#include "ai_hwaccel/detect/amd.hpp"

#include "fixtures.hpp"

#include <doctest/doctest.h>

#include <filesystem>
#include <string>

#if AI_HWACCEL_BACKEND_ROCM

namespace ah = ai_hwaccel;
namespace fs = std::filesystem;

namespace {

constexpr std::uint64_t kib = 1024;
constexpr std::uint64_t gib = 1024ull * 1024 * 1024;
constexpr std::uint64_t mib = 1024ull * 1024;

std::string problems_of(const std::vector<ah::amd_parse_problem>& ps) {
    std::string s;
    for (const auto& p : ps) s += std::to_string(p.line) + ": " + p.message + "\n";
    return s;
}
std::string warnings_of(const std::vector<ah::warning>& ws) {
    std::string s;
    for (const auto& w : ws) s += w.subject + ": " + w.message + "\n";
    return s;
}

} // namespace

static_assert(ah::backend_probe<ah::rocm_probe, ah::host_system>);
static_assert(ah::descriptor_of<ah::rocm_probe>().name == "rocm");

TEST_CASE("detail::amd::gfx_target_name") {
    using ah::detail::amd::gfx_target_name;
    CHECK(gfx_target_name(90006) == "gfx906");
    CHECK(gfx_target_name(90010) == "gfx90a");
    CHECK(gfx_target_name(90402) == "gfx942");
    CHECK(gfx_target_name(110000) == "gfx1100");
    CHECK(gfx_target_name(110501) == "gfx1151");
    CHECK(gfx_target_name(120001) == "gfx1201");
    CHECK(gfx_target_name(0).empty());
    CHECK(gfx_target_name(90016).empty()); // stepping 16 has no hex digit
    CHECK(gfx_target_name(10000000).empty());
    CHECK(gfx_target_name(UINT64_MAX).empty());
}

TEST_CASE("parse_kfd_node_properties") {
    SUBCASE("real capture: Vega 20 node") {
        const auto t = test::capture("amdgpu-sysfs/kfd-topology-node-properties_vega20-radeon-vii.txt");
        if (!t) return;
        const auto r = ah::parse_kfd_node_properties(*t);
        INFO(problems_of(r.problems));
        CHECK(r.problems.empty());
        const auto& n = r.node;
        CHECK(n.is_gpu());
        CHECK(*n.cpu_cores_count == 0);
        CHECK(*n.simd_count == 240);
        CHECK(*n.simd_per_cu == 4);
        CHECK(n.compute_units() == 60u);
        CHECK(*n.gfx_target_version == 90006);
        CHECK(*n.vendor_id == 4098);
        CHECK(*n.device_id == 26287);
        CHECK(*n.location_id == 25344);
        CHECK(n.pci() == ah::pci_address{0, 0x63, 0, 0});
        CHECK(*n.drm_render_minor == 0);
        CHECK(*n.hive_id == 0);
        CHECK(*n.num_sdma_engines == 2);
        CHECK(*n.num_sdma_xgmi_engines == 0);
        CHECK(*n.max_engine_clk_fcompute == 1801);
        CHECK(*n.local_mem_size == 0);
        CHECK(*n.unique_id == 985321441578344217ull);
        CHECK(*n.num_xcc == 1);
        CHECK(*n.wave_front_size == 64);
        REQUIRE(r.devices.size() == 1);
        const auto& d = r.devices[0];
        CHECK(d.kind == ah::device_kind::rocm_gpu);
        CHECK(d.maker == ah::vendor::amd);
        CHECK(d.arch.view() == "gfx906");
        CHECK(d.pci_device_id == 0x66af);
        CHECK(*d.compute_units == 60);
        CHECK(d.compute_units.from == ah::origin::sysfs);
        CHECK(*d.pci == ah::pci_address{0, 0x63, 0, 0});
        CHECK(d.uuid.view() == "0dac90a172da5f19"); // 985321441578344217 as amdgpu's unique_id prints it
        REQUIRE(d.spec != nullptr); // 0x66af, pci.ids "Vega 20 [Radeon VII]"
        CHECK(d.spec->name == "AMD Radeon VII");
        CHECK(d.memory_bytes.from == ah::origin::catalogue);
    }
    SUBCASE("hand-made: one CPX partition of an MI300X (38 of 304 compute units, its memory share)") {
        const auto r = ah::parse_kfd_node_properties("simd_count 152\nsimd_per_cu 4\ndevice_id 29857\n"
                                                     "local_mem_size 25767706624\ngfx_target_version 90402\n");
        INFO(problems_of(r.problems));
        CHECK(r.problems.empty());
        REQUIRE(r.devices.size() == 1);
        const auto& d = r.devices[0];
        REQUIRE(d.spec != nullptr);
        CHECK(d.spec->name == "AMD Instinct MI300X");
        CHECK(*d.compute_units == 38);
        CHECK(*d.memory_bytes == 25767706624ull); // the node's own, not the row's 192 GiB
        CHECK(d.memory_bytes.from == ah::origin::sysfs);
        CHECK(*d.memory_bandwidth_gbps == doctest::Approx(5300.0 * 38 / 304));
        CHECK(d.peak.bf16 == doctest::Approx(1307.4 * 38 / 304));
    }
    SUBCASE("hand-made: unique ids, as amdgpu's unique_id prints them") {
        auto r = ah::parse_kfd_node_properties("simd_count 8\nunique_id 1\n");
        REQUIRE(r.devices.size() == 1);
        CHECK(r.devices[0].uuid.view() == "0000000000000001");
        r = ah::parse_kfd_node_properties("simd_count 8\nunique_id 18446744073709551615\n");
        REQUIRE(r.devices.size() == 1);
        CHECK(r.devices[0].uuid.view() == "ffffffffffffffff");
        r = ah::parse_kfd_node_properties("simd_count 8\nunique_id 0\n"); // none
        REQUIRE(r.devices.size() == 1);
        CHECK(r.devices[0].uuid.empty());
    }
    SUBCASE("hand-made: a CPU node yields no device") {
        const auto r = ah::parse_kfd_node_properties("cpu_cores_count 64\nsimd_count 0\ngfx_target_version 0\n"
                                                     "drm_render_minor -1\nunknown_future_key 7\n");
        CHECK(r.problems.empty());
        CHECK(r.devices.empty());
        CHECK_FALSE(r.node.is_gpu());
        CHECK(*r.node.drm_render_minor == -1);
    }
    SUBCASE("hand-made: a partitioned MI300X node (partition in bits 31..28)") {
        const auto r = ah::parse_kfd_node_properties(
            "simd_count 152\nsimd_per_cu 4\ngfx_target_version 90402\nvendor_id 4098\ndevice_id 29857\n"
            "location_id 805307648\ndomain 2\nhive_id 42\n");
        INFO(problems_of(r.problems));
        CHECK(r.problems.empty());
        CHECK(r.node.pci() == ah::pci_address{2, 0x05, 0, 0}); // 0x30000500 → bus 5, partition 3 dropped
        REQUIRE(r.devices.size() == 1);
        CHECK(r.devices[0].arch.view() == "gfx942");
        CHECK(*r.devices[0].compute_units == 38);
        REQUIRE(r.devices[0].spec != nullptr); // 0x74a1: one row
        CHECK(r.devices[0].spec->name == "AMD Instinct MI300X");
    }
    SUBCASE("hostile input") {
        CHECK(ah::parse_kfd_node_properties("").problems.empty());
        CHECK(ah::parse_kfd_node_properties("").devices.empty());
        auto r = ah::parse_kfd_node_properties("simd_count 99999999999999999999999\nsimd_per_cu x\n"
                                               "garbage\n\xff\xfe\n");
        CHECK(r.devices.empty());
        CHECK(r.problems.size() == 4);
        r = ah::parse_kfd_node_properties("simd_count 8\nsimd_per_cu 0\ngfx_target_version 99999999\n"
                                          "device_id 70000\nvendor_id 4318\nlocation_id 99999999999\ndomain 0\n");
        REQUIRE(r.devices.size() == 1);
        CHECK(r.devices[0].arch.empty());
        CHECK_FALSE(r.devices[0].compute_units.has_value());
        CHECK(r.devices[0].pci_device_id == 0);
        CHECK_FALSE(r.devices[0].pci.has_value());
        CHECK(r.problems.size() == 4); // gfx, device id, vendor, location
        std::string many;
        for (int i = 0; i < 100'000; ++i) many += "x y\n";
        r = ah::parse_kfd_node_properties(many);
        CHECK(r.problems.size() <= ah::detail::parsing::max_problems + 1);
        r = ah::parse_kfd_node_properties(std::string(1 << 20, 'a'));
        CHECK(r.problems.size() == 1);
    }
}

TEST_CASE("parse_pp_dpm_levels") {
    SUBCASE("real capture: Navi behind its switch, x8") {
        const auto t = test::capture("amdgpu-sysfs/pp_dpm_pcie_navi-x8.txt");
        if (!t) return;
        const auto r = ah::parse_pp_dpm_levels(*t);
        INFO(problems_of(r.problems));
        CHECK(r.problems.empty());
        REQUIRE(r.levels.size() == 2);
        CHECK(r.levels[0] == ah::dpm_level{"0", 250, {1, 8}, false});
        CHECK(r.levels[1] == ah::dpm_level{"1", 1143, {4, 8}, true});
        CHECK(r.active == 1u);
        CHECK(r.max_link == ah::pcie_link{4, 8});
        CHECK(r.max_mhz == 1143);
    }
    SUBCASE("real capture: RX 6800 on a Gen3 board, trailing blank") {
        const auto t = test::capture("amdgpu-sysfs/pp_dpm_pcie_rx6800-gen3-board.txt");
        if (!t) return;
        const auto r = ah::parse_pp_dpm_levels(*t);
        INFO(problems_of(r.problems));
        CHECK(r.problems.empty());
        REQUIRE(r.levels.size() == 2);
        CHECK(r.levels[0] == ah::dpm_level{"0", 310, {1, 1}, false});
        CHECK(r.levels[1] == ah::dpm_level{"1", 619, {3, 16}, true});
        CHECK(r.max_link == ah::pcie_link{3, 16});
    }
    SUBCASE("hand-made: every level one link, each marked (an Intel host, no link switching)") {
        // smu_v13_0_update_pcie_parameters gives every level the same link when the platform
        // cannot switch it, and print_clk_levels marks each level that matches the link.
        auto r = ah::parse_pp_dpm_levels("0: 16.0GT/s, x8 250Mhz *\n1: 16.0GT/s, x8 1143Mhz *\n");
        INFO(problems_of(r.problems));
        CHECK(r.problems.empty());
        CHECK(r.active == 1u);
        CHECK(r.levels[*r.active].link == ah::pcie_link{4, 8});
        // Marks on two different links, or on clocks, stay a contradiction.
        CHECK(ah::parse_pp_dpm_levels("0: 2.5GT/s, x8 250Mhz *\n1: 16.0GT/s, x8 1143Mhz *\n").problems.size() == 1);
        CHECK(ah::parse_pp_dpm_levels("0: 500Mhz *\n1: 1000Mhz *\n").problems.size() == 1);
    }
    SUBCASE("hand-made: clock tables, deep-sleep level") {
        const auto r = ah::parse_pp_dpm_levels("S: 19Mhz\n0: 500Mhz\n1: 1000Mhz *\n2: 2482Mhz\n");
        CHECK(r.problems.empty());
        REQUIRE(r.levels.size() == 4);
        CHECK(r.levels[0].label == "S");
        CHECK(r.active == 2u);
        CHECK(r.max_mhz == 2482);
        CHECK(r.max_link == ah::pcie_link{});
    }
    SUBCASE("hostile input") {
        CHECK(ah::parse_pp_dpm_levels("").levels.empty());
        CHECK(ah::parse_pp_dpm_levels("").problems.empty());
        auto r = ah::parse_pp_dpm_levels("0: 99999999999999999999Mhz\n1: 3.3GT/s\nfoo\n2: x99\n3: *\n4: 1Mhz *\n5: 2Mhz *\n");
        CHECK(r.levels.size() == 2);
        CHECK(r.problems.size() == 6);
        std::string many;
        for (int i = 0; i < 1000; ++i) many += "0: 1Mhz\n";
        r = ah::parse_pp_dpm_levels(many);
        CHECK(r.levels.size() == 64);
        CHECK(r.problems.size() == 1);
        r = ah::parse_pp_dpm_levels(std::string(1 << 20, ' ') + "0:" + std::string(1 << 20, 'x'));
        CHECK(r.problems.size() == 1);
    }
}

TEST_CASE("parse_amdgpu_mem_info") {
    CHECK(ah::parse_amdgpu_mem_info("8573157376\n") == 8573157376ull);
    CHECK(ah::parse_amdgpu_mem_info("0") == 0u);
    CHECK_FALSE(ah::parse_amdgpu_mem_info(""));
    CHECK_FALSE(ah::parse_amdgpu_mem_info("-1"));
    CHECK_FALSE(ah::parse_amdgpu_mem_info("99999999999999999999999"));
    CHECK_FALSE(ah::parse_amdgpu_mem_info("12 MB"));
}

TEST_CASE("parse_sysfs_transcript") {
    SUBCASE("real capture: RX 570 mem_info, '$' prompts") {
        const auto t = test::capture("amdgpu-sysfs/mem_info_rx570_4gb.txt");
        if (!t) return;
        const auto r = ah::parse_sysfs_transcript(*t);
        INFO(problems_of(r.problems));
        CHECK(r.problems.empty());
        REQUIRE(r.files.size() == 2);
        CHECK(r.files[0].path == "/sys/class/drm/card1/device/mem_info_gtt_total");
        CHECK(r.files[0].value == "4294967296");
        CHECK(r.files[1].path == "/sys/class/drm/card1/device/mem_info_vram_total");
        CHECK(r.files[1].value == "4294967296");
    }
    SUBCASE("real capture: 8 GiB card, root prompts") {
        const auto t = test::capture("amdgpu-sysfs/mem_info_vram_used-total_8gb-card_nixos.txt");
        if (!t) return;
        const auto r = ah::parse_sysfs_transcript(*t);
        INFO(problems_of(r.problems));
        CHECK(r.problems.empty());
        REQUIRE(r.files.size() == 2);
        CHECK(r.files[0].path == "/sys/class/drm/card0/device/mem_info_vram_used");
        CHECK(r.files[0].value == "6812925952");
        CHECK(r.files[1].path == "/sys/class/drm/card0/device/mem_info_vram_total");
        CHECK(r.files[1].value == "8573157376");
    }
    SUBCASE("real capture: tail -v of two PCI functions' link files") {
        const auto t = test::capture("pci-sysfs/link_navi-gpu-and-upstream-switch_tail.txt");
        if (!t) return;
        const auto r = ah::parse_sysfs_transcript(*t);
        INFO(problems_of(r.problems));
        CHECK(r.problems.empty());
        REQUIRE(r.files.size() == 8);
        CHECK(r.files[0].path == "/sys/bus/pci/devices/0000:01:00.0/current_link_speed");
        CHECK(r.files[0].value == "16.0 GT/s PCIe");
        CHECK(r.files[1].value == "8");
        CHECK(r.files[2].value == "32.0 GT/s PCIe");
        CHECK(r.files[3].value == "16");
        CHECK(r.files[4].path == "/sys/bus/pci/devices/0000:03:00.0/current_link_speed");
        CHECK(r.files[4].value == "32.0 GT/s PCIe");
        CHECK(r.files[7].path == "/sys/bus/pci/devices/0000:03:00.0/max_link_width");
        CHECK(r.files[7].value == "16");
    }
    SUBCASE("real capture: grep . of an RX 7800 XT's link files") {
        const auto t = test::capture("pci-sysfs/link_rx7800xt_grep.txt");
        if (!t) return;
        const auto r = ah::parse_sysfs_transcript(*t);
        INFO(problems_of(r.problems));
        CHECK(r.problems.empty());
        REQUIRE(r.files.size() == 4);
        CHECK(r.files[0].path == "/sys/class/drm/card0/device/current_link_speed");
        CHECK(r.files[0].value == "16.0 GT/s PCIe");
        CHECK(r.files[3].path == "/sys/class/drm/card0/device/max_link_width");
        CHECK(r.files[3].value == "16");
    }
    SUBCASE("a prompt with nothing typed after it ends the file before it") {
        for (const char* prompt : {"[root@gaming:~]# ", "$ ", "[user@host ~]$"}) {
            CAPTURE(prompt);
            const auto r = ah::parse_sysfs_transcript(std::string("[root@gaming:~]# cat /sys/class/drm/card0/device/"
                                                                  "mem_info_vram_total\n8573157376\n") +
                                                      prompt + "\n");
            INFO(problems_of(r.problems));
            CHECK(r.problems.empty());
            REQUIRE(r.files.size() == 1);
            CHECK(r.files[0].value == "8573157376");
        }
    }
    SUBCASE("hostile input") {
        CHECK(ah::parse_sysfs_transcript("").files.empty());
        auto r = ah::parse_sysfs_transcript("orphan output\n$ cat /sys/a\n$ cat /sys/b /sys/c\nx\n");
        CHECK(r.files.empty());
        CHECK(r.problems.size() == 3); // orphan, /sys/a without output, x outside a file
        r = ah::parse_sysfs_transcript("$ cat /sys/x\n" + std::string(1 << 20, '\xff'));
        REQUIRE(r.files.size() == 1);
        CHECK(r.files[0].value.size() == 4096);
    }
}

TEST_CASE("parse_rocminfo") {
    SUBCASE("2x RX 7900 XTX") {
        const auto t = test::capture("rocminfo/i9-13900k_2x-rx7900xtx.txt");
        if (!t) return;
        const auto r = ah::parse_rocminfo(*t);
        INFO(problems_of(r.problems));
        CHECK(r.problems.empty());
        REQUIRE(r.devices.size() == 2);
        REQUIRE(r.gpus.size() == 2);
        const char* uuids[] = {"GPU-4fe81514950cd6cd", "GPU-4aca8d870a6af8f4"};
        const std::uint32_t bdf[] = {768, 3072}; // 03:00.0 and 0c:00.0
        for (std::uint32_t i = 0; i < 2; ++i) {
            const auto& d = r.devices[i];
            CHECK(d.index == i);
            CHECK(d.kind == ah::device_kind::rocm_gpu);
            CHECK(d.name.view() == "AMD Radeon RX 7900 XTX");
            CHECK(d.arch.view() == "gfx1100");
            CHECK(d.uuid.view() == uuids[i]);
            CHECK(d.pci_device_id == 0x744c);
            CHECK(*d.compute_units == 96);
            CHECK(d.compute_units.from == ah::origin::tool);
            CHECK(*d.memory_bytes == 25149440 * kib);
            CHECK(d.memory_bytes.from == ah::origin::tool);
            CHECK_FALSE(d.pci.has_value()); // rocminfo prints no PCI domain
            REQUIRE(d.spec != nullptr);     // id shared by three rows: matched by name
            CHECK(d.spec->name == "AMD Radeon RX 7900 XTX");
            CHECK(d.memory_bandwidth_gbps.from == ah::origin::catalogue);
            CHECK(r.gpus[i].node == i + 1);
            CHECK(r.gpus[i].bdfid == bdf[i]);
            CHECK(r.gpus[i].max_clock_mhz == 2482);
        }
    }
    SUBCASE("rocminfo --support: 2x EPYC + 2x MI210") {
        const auto t = test::capture("rocminfo/support_2x-epyc7763_2x-mi210_rocm6.3.3.txt");
        if (!t) return;
        const auto r = ah::parse_rocminfo(*t);
        INFO(problems_of(r.problems));
        CHECK(r.problems.empty());
        REQUIRE(r.devices.size() == 2);
        const char* uuids[] = {"GPU-67c63ac3c3c637f9", "GPU-7b6b270993774982"};
        const std::uint32_t bdf[] = {768, 33536}; // 03:00.0 and 83:00.0
        for (std::uint32_t i = 0; i < 2; ++i) {
            const auto& d = r.devices[i];
            CHECK(d.name.view() == "AMD Instinct MI210");
            CHECK(d.arch.view() == "gfx90a");
            CHECK(d.uuid.view() == uuids[i]);
            CHECK(d.pci_device_id == 0x740f);
            CHECK(*d.compute_units == 104);
            CHECK(*d.memory_bytes == 67092480 * kib);
            REQUIRE(d.spec != nullptr);
            CHECK(d.spec->name == "AMD Instinct MI210");
            CHECK(r.gpus[i].node == i + 2);
            CHECK(r.gpus[i].bdfid == bdf[i]);
            CHECK(r.gpus[i].max_clock_mhz == 1700);
        }
    }
    SUBCASE("MI300X VF in an SR-IOV guest") {
        const auto t = test::capture("rocminfo/xeon8568y_mi300x-vf_rocm7.2.txt");
        if (!t) return;
        const auto r = ah::parse_rocminfo(*t);
        INFO(problems_of(r.problems));
        CHECK(r.problems.empty());
        REQUIRE(r.devices.size() == 1);
        const auto& d = r.devices[0];
        CHECK(d.name.view() == "AMD Instinct MI300X VF");
        CHECK(d.arch.view() == "gfx942");
        CHECK(d.uuid.view() == "GPU-43529fe3ce00c724");
        CHECK(d.pci_device_id == 0x74b5);
        CHECK(*d.compute_units == 304);
        CHECK(*d.memory_bytes == 200998912 * kib); // the VF's share as the runtime offers it
        REQUIRE(d.spec != nullptr);
        CHECK(d.spec->name == "AMD Instinct MI300X");
        CHECK(r.gpus[0].node == 1);
        CHECK(r.gpus[0].bdfid == 33536u);
        CHECK(r.gpus[0].max_clock_mhz == 2100);
    }
    SUBCASE("MI300X compute partition (the VF capture with 38 compute units: hand-edited)") {
        // In CPX mode each of the eight logical GPUs has 38 of the 304 compute units; the
        // catalogue's figures are the whole GPU's, so each keeps an eighth of them. The
        // memory stays what the runtime reports (the VF capture's pool).
        auto t = test::capture("rocminfo/xeon8568y_mi300x-vf_rocm7.2.txt");
        if (!t) return;
        const auto at = t->find("Compute Unit:            304");
        REQUIRE(at != std::string::npos);
        t->replace(at, 28, "Compute Unit:            38 ");
        const auto r = ah::parse_rocminfo(*t);
        INFO(problems_of(r.problems));
        CHECK(r.problems.empty());
        REQUIRE(r.devices.size() == 1);
        const auto& d = r.devices[0];
        REQUIRE(d.spec != nullptr);
        CHECK(d.spec->name == "AMD Instinct MI300X");
        CHECK(*d.compute_units == 38);
        CHECK(*d.memory_bandwidth_gbps == doctest::Approx(5300.0 / 8));
        CHECK(d.memory_bandwidth_gbps.from == ah::origin::catalogue);
        CHECK(d.peak.bf16 == doctest::Approx(1307.4 / 8));
        CHECK(d.peak.fp8 == doctest::Approx(2614.9 / 8));
        CHECK(*d.power_limit_watts == doctest::Approx(750.0 / 8));
        CHECK(*d.memory_bytes == 200998912 * kib);
        CHECK(d.memory_bytes.from == ah::origin::tool);
        // The whole GPU keeps the row's figures.
        const auto whole = ah::parse_rocminfo(*test::capture("rocminfo/xeon8568y_mi300x-vf_rocm7.2.txt"));
        REQUIRE(whole.devices.size() == 1);
        CHECK(*whole.devices[0].memory_bandwidth_gbps == 5300.0);
        CHECK(whole.devices[0].peak.bf16 == 1307.4);
    }
    SUBCASE("a blank Marketing Name takes the catalogue row's (LUMI's MI250X prints none)") {
        // Hand-made in the shape of LUMI's published output: an MI250X GCD, gfx90a, chip
        // 0x740c, Marketing Name empty.
        const auto r = ah::parse_rocminfo("Agent 3\n  Name:                    gfx90a\n  Marketing Name:          \n"
                                          "  Device Type:             GPU\n  Chip ID:                 29708(0x740c)\n"
                                          "  Compute Unit:            110\n");
        INFO(problems_of(r.problems));
        REQUIRE(r.devices.size() == 1);
        REQUIRE(r.devices[0].spec != nullptr);
        CHECK(r.devices[0].name.view() == r.devices[0].spec->name);
        CHECK_FALSE(r.devices[0].name.empty());
    }
    SUBCASE("hostile input") {
        CHECK(ah::parse_rocminfo("").devices.empty());
        CHECK(ah::parse_rocminfo("").problems.empty());
        CHECK(ah::parse_rocminfo("garbage\n").problems.size() == 1);
        // Hand-made: a GPU agent with broken numbers, one without a type, a huge pool.
        auto r = ah::parse_rocminfo("Agent 1\n  Name: gfx942\n  Device Type: GPU\n  Chip ID: zz\n"
                                    "  Compute Unit: 99999999999999999999999\n  Uuid: GPU-XX\n"
                                    "  Pool Info:\n    Pool 1\n      Segment: GLOBAL; FLAGS: COARSE GRAINED\n"
                                    "      Size: 99999999999999(0x0) KB\n"
                                    "Agent 2\n  Name: x\n"
                                    "Agent 3\n  Name: \xff\n  Device Type: GPU\n");
        REQUIRE(r.devices.size() == 2);
        CHECK(r.devices[0].uuid.empty());
        CHECK(r.devices[0].memory_bytes.from != ah::origin::tool);
        CHECK(r.problems.size() == 5); // chip, CU, pool, no type, name
        std::string many;
        for (int i = 0; i < 3000; ++i) many += "Agent 1\n  Device Type: GPU\n  Name: gfx90a\n";
        r = ah::parse_rocminfo(many);
        CHECK(r.devices.size() == ah::detail::parsing::max_rows);
        r = ah::parse_rocminfo("Agent 1\n  Name:" + std::string(1 << 20, 'g') + "\n  Device Type: GPU\n");
        REQUIRE(r.devices.size() == 1);
        CHECK(r.problems.size() == 1);
    }
}

namespace {

// Hand-made sysfs tree: two MI300X in one XGMI hive, an RX 7900 XTX without a product
// name, an Intel iGPU, an AMD card bound to vfio-pci, and a display connector entry.
struct fake_amd_host {
    test::scratch_dir dir;
    const fs::path root = dir.path();

    void link(const std::string& at, const std::string& target) const {
        fs::create_directories((root / at).parent_path());
        fs::create_symlink(target, root / at);
    }
    void card(int n, const std::string& addr, const std::string& vendor, const std::string& device,
              const std::string& driver) const {
        const std::string pci = "sys/devices/pci0000:00/" + addr;
        dir.write(pci + "/vendor", vendor + "\n");
        dir.write(pci + "/device", device + "\n");
        fs::create_directories(root / "sys/bus/pci/drivers" / driver);
        link(pci + "/driver", "../../../bus/pci/drivers/" + driver);
        fs::create_directories(root / ("sys/class/drm/card" + std::to_string(n)));
        link("sys/class/drm/card" + std::to_string(n) + "/device", "../../../devices/pci0000:00/" + addr);
    }
    std::string dev(const std::string& addr) const { return "sys/devices/pci0000:00/" + addr; }
};

} // namespace

TEST_CASE("rocm_probe") {
    SUBCASE("hand-made tree: two MI300X in a hive and a consumer card") {
        fake_amd_host h;
        const auto& d = h.dir;
        h.card(0, "0000:00:02.0", "0x8086", "0x7d55", "i915");     // another vendor: skipped
        h.card(1, "0000:05:00.0", "0x1002", "0x74a1", "amdgpu");
        h.card(2, "0000:26:00.0", "0x1002", "0x74a1", "amdgpu");
        h.card(3, "0000:83:00.0", "0x1002", "0x744c", "amdgpu");
        h.card(4, "0000:a1:00.0", "0x1002", "0x74a1", "vfio-pci"); // passed through: skipped
        fs::create_directories(h.root / "sys/class/drm/card3-DP-1");
        d.write("sys/class/drm/version", "drm 1.1.0 20060810\n");
        for (const char* a : {"0000:05:00.0", "0000:26:00.0"}) {
            const auto p = h.dev(a);
            d.write(p + "/product_name", "AMD Instinct MI300X OAM\n");
            d.write(p + "/mem_info_vram_total", std::to_string(192 * gib) + "\n");
            d.write(p + "/mem_info_vram_used", "297795584\n");
            d.write(p + "/mem_info_vis_vram_total", std::to_string(192 * gib) + "\n");
            d.write(p + "/mem_info_gtt_total", std::to_string(1008 * gib) + "\n");
            d.write(p + "/current_link_speed", "32.0 GT/s PCIe\n");
            d.write(p + "/current_link_width", "16\n");
            d.write(p + "/max_link_speed", "32.0 GT/s PCIe\n");
            d.write(p + "/max_link_width", "16\n");
            d.write(p + "/board_info", "type : oam\n");
        }
        d.write(h.dev("0000:05:00.0") + "/unique_id", "6bd35e1b4a2d1c0f\n");
        d.write(h.dev("0000:05:00.0") + "/numa_node", "0\n");
        d.write(h.dev("0000:26:00.0") + "/numa_node", "1\n");
        d.write(h.dev("0000:05:00.0") + "/xgmi_device_id", "12345\n");
        d.write(h.dev("0000:26:00.0") + "/xgmi_device_id", "67890\n");
        // The hive folder under its first device; the other device links to it.
        d.write(h.dev("0000:05:00.0") + "/xgmi_hive_info/xgmi_hive_id", "1311768467463790320\n");
        h.link(h.dev("0000:26:00.0") + "/xgmi_hive_info", "../0000:05:00.0/xgmi_hive_info");
        // The consumer card: no product name, Gen1 link while idle.
        const auto x = h.dev("0000:83:00.0");
        d.write(x + "/mem_info_vram_total", "25753026560\n");
        d.write(x + "/mem_info_vram_used", "1073741824\n");
        d.write(x + "/current_link_speed", "2.5 GT/s PCIe\n");
        d.write(x + "/current_link_width", "16\n");
        d.write(x + "/max_link_speed", "16.0 GT/s PCIe\n");
        d.write(x + "/max_link_width", "16\n");
        d.write(x + "/numa_node", "-1\n");
        d.write(x + "/board_info", "type : cem\n");
        d.write(x + "/pp_dpm_mclk", "0: 96Mhz\n1: 456Mhz\n2: 772Mhz\n3: 1249Mhz *\n");
        fs::create_directories(h.root / x / "drm/renderD130");
        // KFD topology: a CPU node and three GPU nodes; the 7900 XTX's has no location.
        const std::string k = "sys/class/kfd/kfd/topology/nodes/";
        d.write(k + "0/properties", "cpu_cores_count 96\nsimd_count 0\ngfx_target_version 0\n");
        d.write(k + "1/properties", "simd_count 1216\nsimd_per_cu 4\ngfx_target_version 90402\nvendor_id 4098\n"
                                    "device_id 29857\nlocation_id 1280\ndomain 0\nhive_id 1311768467463790320\n");
        d.write(k + "2/properties", "simd_count 1216\nsimd_per_cu 4\ngfx_target_version 90402\nvendor_id 4098\n"
                                    "device_id 29857\nlocation_id 9728\ndomain 0\nhive_id 1311768467463790320\n");
        d.write(k + "3/properties", "simd_count 192\nsimd_per_cu 2\ngfx_target_version 110000\nvendor_id 4098\n"
                                    "device_id 29772\ndrm_render_minor 130\n");

        const auto out = ah::rocm_probe{}.probe(ah::host_system(h.root.string()));
        INFO(warnings_of(out.warnings));
        CHECK(out.warnings.empty());
        REQUIRE(out.devices.size() == 3);
        for (int i = 0; i < 2; ++i) {
            const auto& g = out.devices[static_cast<std::size_t>(i)];
            CHECK(g.index == static_cast<std::uint32_t>(i + 1));
            CHECK(g.kind == ah::device_kind::rocm_gpu);
            CHECK(g.name.view() == "AMD Instinct MI300X OAM");
            CHECK(g.pci_device_id == 0x74a1);
            CHECK(g.arch.view() == "gfx942");
            CHECK(*g.compute_units == 304);
            CHECK(g.compute_units.from == ah::origin::sysfs);
            CHECK(*g.memory_bytes == 192 * gib);
            CHECK(g.memory_bytes.from == ah::origin::sysfs);
            CHECK(*g.memory_used_bytes == 297795584);
            CHECK(*g.memory_free_bytes == 192 * gib - 297795584);
            CHECK(*g.pcie_current == ah::pcie_link{5, 16});
            CHECK(*g.pcie_max == ah::pcie_link{5, 16});
            CHECK(*g.numa_node == i);
            CHECK_FALSE(g.unified_memory);
            REQUIRE(g.spec != nullptr);
            CHECK(g.spec->name == "AMD Instinct MI300X");
            CHECK(g.memory_bandwidth_gbps.from == ah::origin::catalogue);
        }
        CHECK(*out.devices[0].pci == ah::pci_address{0, 0x05, 0, 0});
        CHECK(*out.devices[1].pci == ah::pci_address{0, 0x26, 0, 0});
        CHECK(out.devices[0].uuid.view() == "6bd35e1b4a2d1c0f");
        const auto& c = out.devices[2];
        CHECK(c.index == 3);
        CHECK(c.name.view() == "AMD Radeon RX 7900 XTX"); // from the row its 96 CUs pick
        CHECK(c.arch.view() == "gfx1100");
        CHECK(*c.compute_units == 96);
        CHECK(*c.memory_bytes == 25753026560ull);
        CHECK(*c.memory_free_bytes == 25753026560ull - gib);
        CHECK(*c.pcie_current == ah::pcie_link{1, 16});
        CHECK(*c.pcie_max == ah::pcie_link{4, 16});
        CHECK_FALSE(c.numa_node.has_value());
        REQUIRE(c.spec != nullptr);
        CHECK(c.spec->name == "AMD Radeon RX 7900 XTX");
        REQUIRE(out.links.size() == 1);
        CHECK(out.links[0].kind == ah::interconnect_kind::xgmi);
        CHECK(out.links[0].scope == ah::link_scope::intra_node);
        CHECK(out.links[0].name == "XGMI hive 0x123456789abcdef0");
        CHECK(out.links[0].devices == std::vector<std::uint32_t>{1, 2});

        std::vector<ah::warning> w;
        const auto cards = ah::probe_amdgpu_cards(ah::host_system(h.root.string()), w);
        REQUIRE(cards.size() == 3);
        CHECK(cards[0].xgmi_device_id == 12345u);
        CHECK(cards[1].xgmi_hive_id == 1311768467463790320ull);
        CHECK(cards[0].gtt_total_bytes == 1008 * gib);
        CHECK(cards[0].visible_vram_bytes == 192 * gib);
        CHECK(cards[0].kfd_nodes == 1);
        CHECK(cards[2].max_memory_clock_mhz == 1249);
        CHECK(cards[2].xgmi_hive_id == 0);
        CHECK_FALSE(cards[0].virtual_function);
    }
    SUBCASE("a Radeon behind the PCIe switch on its board: pp_dpm_pcie gives the slot's link") {
        // One machine's real files (nokyan/resources #512): the GPU function says 32 GT/s
        // x16, the link to the switch inside the card; the switch's upstream port and
        // amdgpu's PCIe levels say 16 GT/s x8.
        const auto levels = test::capture("amdgpu-sysfs/pp_dpm_pcie_navi-x8.txt");
        if (!levels) return;
        fake_amd_host h;
        const auto& d = h.dir;
        h.card(1, "0000:03:00.0", "0x1002", "0x73bf", "amdgpu");
        const auto x = h.dev("0000:03:00.0");
        d.write(x + "/mem_info_vram_total", std::to_string(16 * gib) + "\n");
        d.write(x + "/current_link_speed", "32.0 GT/s PCIe\n");
        d.write(x + "/current_link_width", "16\n");
        d.write(x + "/max_link_speed", "32.0 GT/s PCIe\n");
        d.write(x + "/max_link_width", "16\n");
        d.write(x + "/board_info", "type : cem\n");
        d.write(x + "/pp_dpm_pcie", *levels);
        auto out = ah::rocm_probe{}.probe(ah::host_system(h.root.string()));
        INFO(warnings_of(out.warnings));
        CHECK(out.warnings.empty());
        REQUIRE(out.devices.size() == 1);
        CHECK(*out.devices[0].pcie_current == ah::pcie_link{4, 8});
        CHECK(*out.devices[0].pcie_max == ah::pcie_link{4, 8});
        CHECK(out.devices[0].pcie_max.from == ah::origin::sysfs);
        CHECK(out.devices[0].pcie_bandwidth_gbps() == doctest::Approx(ah::pcie_link{4, 8}.bandwidth_gbps()));
        // Without the levels the function's own attributes are all there is.
        fs::remove(h.root / x / "pp_dpm_pcie");
        out = ah::rocm_probe{}.probe(ah::host_system(h.root.string()));
        REQUIRE(out.devices.size() == 1);
        CHECK(*out.devices[0].pcie_current == ah::pcie_link{5, 16});
        // Levels that are not levels: a warning naming the file, the attributes kept.
        d.write(x + "/pp_dpm_pcie", "garbage\n");
        out = ah::rocm_probe{}.probe(ah::host_system(h.root.string()));
        REQUIRE(out.devices.size() == 1);
        CHECK(test::count_kind(out.warnings, ah::warning_kind::parse_error) == 1);
        CHECK(*out.devices[0].pcie_max == ah::pcie_link{5, 16});
        // On an Intel host both levels are the slot's link and both are marked.
        d.write(x + "/pp_dpm_pcie", "0: 16.0GT/s, x8 250Mhz *\n1: 16.0GT/s, x8 1143Mhz *\n");
        out = ah::rocm_probe{}.probe(ah::host_system(h.root.string()));
        INFO(warnings_of(out.warnings));
        CHECK(out.warnings.empty());
        REQUIRE(out.devices.size() == 1);
        CHECK(*out.devices[0].pcie_current == ah::pcie_link{4, 8});
        CHECK(*out.devices[0].pcie_max == ah::pcie_link{4, 8});
        // A function without a link capability: width 255 is the kernel's "unknown".
        fs::remove(h.root / x / "pp_dpm_pcie");
        d.write(x + "/max_link_speed", "Unknown\n");
        d.write(x + "/max_link_width", "255\n");
        out = ah::rocm_probe{}.probe(ah::host_system(h.root.string()));
        INFO(warnings_of(out.warnings));
        CHECK(out.warnings.empty());
    }
    SUBCASE("hand-made tree: APU with VRAM 0 (MI300A-like) and a partitioned GPU") {
        fake_amd_host h;
        const auto& d = h.dir;
        h.card(0, "0000:02:00.0", "0x1002", "0x74a0", "amdgpu");
        d.write(h.dev("0000:02:00.0") + "/mem_info_vram_total", "0\n");
        d.write(h.dev("0000:02:00.0") + "/mem_info_gtt_total", std::to_string(96 * gib) + "\n");
        const std::string k = "sys/class/kfd/kfd/topology/nodes/";
        // Two compute partitions of the same PCI function (partition number in bits 31..28).
        d.write(k + "1/properties", "simd_count 456\nsimd_per_cu 4\ngfx_target_version 90402\n"
                                    "location_id 512\ndomain 0\n");
        d.write(k + "2/properties", "simd_count 456\nsimd_per_cu 4\ngfx_target_version 90402\n"
                                    "location_id 268435968\ndomain 0\n");
        const auto out = ah::rocm_probe{}.probe(ah::host_system(h.root.string()));
        INFO(warnings_of(out.warnings));
        CHECK(out.warnings.empty());
        REQUIRE(out.devices.size() == 1);
        const auto& g = out.devices[0];
        CHECK(g.unified_memory);
        CHECK(*g.memory_bytes == 96 * gib); // VRAM 0 + GTT
        CHECK(*g.compute_units == 228);     // summed over both partitions
        CHECK(g.name.view() == "AMD Instinct MI300A");
        CHECK(out.links.empty());
    }
    SUBCASE("hand-made tree: Strix Halo's GPU, one PCI id for two rows, told by its compute units") {
        // Strix Halo's GPU at the address and id the real amd-smi and rocm-smi captures of a
        // Ryzen AI Max+ 395 show (0000:c5:00.0, 0x1586): 512 MiB carved out, 64 GiB of GTT,
        // and in its KFD node 40 CUs (an 8060S) or 32 (an 8050S), two SIMDs per CU on RDNA.
        for (const int cus : {40, 32}) {
            CAPTURE(cus);
            fake_amd_host h;
            const auto& d = h.dir;
            h.card(0, "0000:c5:00.0", "0x1002", "0x1586", "amdgpu");
            d.write(h.dev("0000:c5:00.0") + "/mem_info_vram_total", std::to_string(512 * mib) + "\n");
            d.write(h.dev("0000:c5:00.0") + "/mem_info_gtt_total", std::to_string(64 * gib) + "\n");
            d.write("sys/class/kfd/kfd/topology/nodes/1/properties",
                    "simd_count " + std::to_string(2 * cus) +
                        "\nsimd_per_cu 2\ngfx_target_version 110501\nlocation_id 50432\ndomain 0\n");
            const auto out = ah::rocm_probe{}.probe(ah::host_system(h.root.string()));
            INFO(warnings_of(out.warnings));
            CHECK(out.warnings.empty());
            REQUIRE(out.devices.size() == 1);
            const auto& g = out.devices[0];
            REQUIRE(g.spec != nullptr);
            CHECK(g.spec->name == (cus == 40 ? "AMD Radeon 8060S" : "AMD Radeon 8050S"));
            CHECK(g.unified_memory);
            CHECK(*g.memory_bytes == 512 * mib + 64 * gib); // carve-out + GTT
            CHECK(g.memory_bytes.from == ah::origin::sysfs);
            CHECK(*g.memory_bandwidth_gbps == 256);
            CHECK(g.arch.view() == "gfx1151");
        }
    }
    SUBCASE("hand-made tree: two Radeons sharing a PCI id and CU count, told by their memory") {
        // RX 7600 and RX 7600 XT: both 0x7480 with 32 CUs; 8 and 16 GiB. No product_name
        // (consumer boards have none) and no rocm-smi. An id the catalogue lacks is named
        // by the id.
        fake_amd_host h;
        const auto& d = h.dir;
        h.card(0, "0000:03:00.0", "0x1002", "0x7480", "amdgpu");
        h.card(1, "0000:04:00.0", "0x1002", "0x7480", "amdgpu");
        h.card(2, "0000:05:00.0", "0x1002", "0x7fff", "amdgpu");
        d.write(h.dev("0000:03:00.0") + "/mem_info_vram_total", std::to_string(8 * gib - 16 * mib) + "\n");
        d.write(h.dev("0000:04:00.0") + "/mem_info_vram_total", std::to_string(16 * gib - 16 * mib) + "\n");
        d.write(h.dev("0000:05:00.0") + "/mem_info_vram_total", std::to_string(4 * gib) + "\n");
        for (const auto& [node, location] : {std::pair{1, "768"}, std::pair{2, "1024"}})
            d.write("sys/class/kfd/kfd/topology/nodes/" + std::to_string(node) + "/properties",
                    std::string("simd_count 64\nsimd_per_cu 2\ngfx_target_version 110002\nlocation_id ") + location +
                        "\ndomain 0\n");
        const auto out = ah::rocm_probe{}.probe(ah::host_system(h.root.string()));
        INFO(warnings_of(out.warnings));
        CHECK(out.warnings.empty());
        REQUIRE(out.devices.size() == 3);
        CHECK(out.devices[0].name.view() == "AMD Radeon RX 7600");
        CHECK(out.devices[1].name.view() == "AMD Radeon RX 7600 XT");
        CHECK(*out.devices[1].memory_bandwidth_gbps == 288);
        CHECK(out.devices[2].name.view() == "AMD GPU [0x7fff]");
        CHECK(out.devices[2].spec == nullptr);
    }
    SUBCASE("hand-made tree: an MI250X package is two GCDs, each with half its figures") {
        // The OS lists each GCD as a device of its own: 0x7408, 64 GiB of VRAM, 110 CUs.
        fake_amd_host h;
        const auto& d = h.dir;
        h.card(0, "0000:c1:00.0", "0x1002", "0x7408", "amdgpu");
        h.card(1, "0000:c6:00.0", "0x1002", "0x7408", "amdgpu");
        for (const char* a : {"0000:c1:00.0", "0000:c6:00.0"})
            d.write(h.dev(a) + "/mem_info_vram_total", std::to_string(64 * gib) + "\n");
        const auto out = ah::rocm_probe{}.probe(ah::host_system(h.root.string()));
        REQUIRE(out.devices.size() == 2);
        for (const auto& g : out.devices) {
            REQUIRE(g.spec != nullptr);
            CHECK(g.spec->name == "AMD Instinct MI250X GCD");
            CHECK(*g.memory_bandwidth_gbps == doctest::Approx(1638.4)); // not the package's 3276.8
            CHECK(g.peak.bf16 == doctest::Approx(191.5));
            CHECK(*g.compute_units == 110);
        }
        // The catalogue's figures hold per GCD: two of them are the package AMD publishes.
        const auto& row = *out.devices[0].spec;
        CHECK(2 * row.memory_bytes == 128 * gib);
        CHECK(2 * row.peak.bf16 == doctest::Approx(383.0));
    }
    SUBCASE("hand-made tree: memory files past what a GPU holds are refused, not summed") {
        // An APU (uma/carveout, no board_info) whose files hold 2^64 - 1.
        fake_amd_host h;
        const auto& d = h.dir;
        h.card(0, "0000:c5:00.0", "0x1002", "0x1586", "amdgpu");
        for (const char* f : {"mem_info_vram_total", "mem_info_vram_used", "mem_info_gtt_total", "mem_info_gtt_used"})
            d.write(h.dev("0000:c5:00.0") + "/" + f, "18446744073709551615\n");
        d.write(h.dev("0000:c5:00.0") + "/uma/carveout", "1\n");
        const auto out = ah::rocm_probe{}.probe(ah::host_system(h.root.string()));
        REQUIRE(out.devices.size() == 1);
        CHECK(test::count_kind(out.warnings, ah::warning_kind::value_out_of_range) == 4);
        CHECK(out.devices[0].memory_bytes.from != ah::origin::sysfs);
        CHECK_FALSE(out.devices[0].memory_used_bytes.has_value());
    }
    SUBCASE("hand-made tree: a VF on the host, a links-as-folders copy, garbage files") {
        fake_amd_host h;
        const auto& d = h.dir;
        h.card(0, "0000:11:00.0", "0x1002", "0x74b5", "amdgpu");
        h.link(h.dev("0000:11:00.0") + "/physfn", "../0000:10:00.0");
        // card1: its device link copied as a folder; the address comes from uevent.
        d.write("sys/class/drm/card1/device/vendor", "0x1002\n");
        d.write("sys/class/drm/card1/device/device", "0x744c\n");
        d.write("sys/class/drm/card1/device/driver", "../../../bus/pci/drivers/amdgpu\n"); // a stored link
        d.write("sys/class/drm/card1/device/uevent", "DRIVER=amdgpu\nPCI_SLOT_NAME=0000:0c:00.0\n");
        d.write("sys/class/drm/card1/device/mem_info_vram_total", "lots\n");
        d.write("sys/class/drm/card1/device/current_link_speed", "Unknown\n");
        d.write("sys/class/drm/card1/device/numa_node", "99999999\n");
        d.write("sys/class/drm/card1/device/pp_dpm_mclk", "\xff\xfe\n");
        d.write("sys/class/kfd/kfd/topology/nodes/1/properties", "simd_count banana\n");
        const auto out = ah::rocm_probe{}.probe(ah::host_system(h.root.string()));
        REQUIRE(out.devices.size() == 2);
        CHECK(out.devices[0].name.view() == "AMD Instinct MI300X");
        CHECK_FALSE(out.devices[0].memory_bytes.has_value()); // not the board's 192 GiB
        CHECK(*out.devices[1].pci == ah::pci_address{0, 0x0c, 0, 0});
        CHECK_FALSE(out.devices[1].memory_bytes.from == ah::origin::sysfs);
        CHECK(out.warnings.size() == 4); // vram, numa, mclk, kfd node
        for (const auto& w : out.warnings) CHECK(w.backend == ah::backend_id::rocm);
        std::vector<ah::warning> w;
        const auto cards = ah::probe_amdgpu_cards(ah::host_system(h.root.string()), w);
        REQUIRE(cards.size() == 2);
        CHECK(cards[0].virtual_function);
    }
#if AI_HWACCEL_JSON
    SUBCASE("a card the kernel leaves unnamed is named by rocm-smi, matched by PCI bus") {
        fake_amd_host h;
        h.card(0, "0000:03:00.0", "0x1002", "0x744c", "amdgpu"); // no product_name file
        h.card(1, "0000:0c:00.0", "0x1002", "0x744c", "amdgpu");
        // No memory or CU count either, so the catalogue's three 0x744c rows stay apart.
        // Hand-made rocm-smi JSON in the shape of the real showproductname capture, with
        // the "PCI Bus" key --showbus adds; its card numbers deliberately differ from DRM's.
        h.dir.write("ai-hwaccel-tools/names.json",
                    "{\"card0\": {\"Card Series\": \"Radeon RX 7900 XTX\", \"Card Model\": \"0x744c\", "
                    "\"PCI Bus\": \"0000:0C:00.0\"}, \"card1\": {\"Card Series\": \"Radeon RX 7900 XT\", "
                    "\"PCI Bus\": \"0000:03:00.0\"}}\n");
        h.dir.write("ai-hwaccel-tools/index",
                    "0\tnames.json\trocm-smi --showproductname --showbus --json\n");
        const auto out = ah::rocm_probe{}.probe(ah::host_system(h.root.string()));
        INFO(test::warnings_text(out.warnings));
        CHECK(out.warnings.empty());
        REQUIRE(out.devices.size() == 2);
        CHECK(out.devices[0].name.view() == "Radeon RX 7900 XT");
        CHECK(out.devices[1].name.view() == "Radeon RX 7900 XTX");
    }
    SUBCASE("rocm-smi exits 0 with nothing: a parse error, the card named by its PCI id") {
        fake_amd_host h;
        h.card(0, "0000:03:00.0", "0x1002", "0x7fff", "amdgpu"); // no product_name, no catalogue row
        h.dir.write("ai-hwaccel-tools/names.json", "");
        h.dir.write("ai-hwaccel-tools/index", "0\tnames.json\trocm-smi --showproductname --showbus --json\n");
        const auto out = ah::rocm_probe{}.probe(ah::host_system(h.root.string()));
        INFO(test::warnings_text(out.warnings));
        REQUIRE(out.devices.size() == 1);
        CHECK(out.devices[0].name.view() == "AMD GPU [0x7fff]");
        CHECK(test::count_kind(out.warnings, ah::warning_kind::parse_error) == 1);
    }
    SUBCASE("every card named by the kernel: rocm-smi is not run") {
        fake_amd_host h;
        h.card(0, "0000:03:00.0", "0x1002", "0x744c", "amdgpu");
        h.dir.write(h.dev("0000:03:00.0") + "/product_name", "Radeon RX 7900 XTX\n");
        h.dir.write("ai-hwaccel-tools/index", "1\t-\trocm-smi --showproductname --showbus --json\n");
        const auto out = ah::rocm_probe{}.probe(ah::host_system(h.root.string()));
        CHECK(out.warnings.empty()); // a failing rocm-smi would have warned
        REQUIRE(out.devices.size() == 1);
    }
#endif
    SUBCASE("no DRM, no KFD: nothing, no warning") {
        test::scratch_dir dir;
        const auto out = ah::rocm_probe{}.probe(ah::host_system(dir.path().string()));
        CHECK(out.devices.empty());
        CHECK(out.links.empty());
        CHECK(out.warnings.empty());
    }
}

TEST_CASE("detail::formats: AMD sniffers and capture parsers") {
    namespace f = ah::detail::formats;
    // Captures are their format's by path prefix.
    const test::sniffer_row rows[] = {
        {"rocminfo", f::sniff_rocminfo, "rocminfo/"},
        {"kfd", f::sniff_kfd_properties, "amdgpu-sysfs/kfd-topology-node-properties"},
        {"pp_dpm", f::sniff_pp_dpm, "amdgpu-sysfs/pp_dpm_"},
        {"transcript", f::sniff_amdgpu_transcript, "amdgpu-sysfs/mem_info_"},
    };
    test::check_sniffers(rows, 8);

    if (const auto t = test::capture("rocminfo/xeon8568y_mi300x-vf_rocm7.2.txt")) {
        ah::capture_parse out;
        out.format = "rocminfo";
        f::parse_rocminfo_capture(*t, out);
        CHECK(out.warnings.empty());
        REQUIRE(out.devices.size() == 1);
        CHECK(out.devices[0].name.view() == "AMD Instinct MI300X VF");
    }
    if (const auto t = test::capture("amdgpu-sysfs/kfd-topology-node-properties_vega20-radeon-vii.txt")) {
        ah::capture_parse out;
        out.format = "kfd-node-properties";
        f::parse_kfd_properties_capture(*t, out);
        CHECK(out.warnings.empty());
        REQUIRE(out.devices.size() == 1);
        CHECK(out.devices[0].arch.view() == "gfx906");
    }
    if (const auto t = test::capture("amdgpu-sysfs/pp_dpm_pcie_rx6800-gen3-board.txt")) {
        ah::capture_parse out;
        out.format = "amdgpu-pp-dpm";
        f::parse_pp_dpm_capture(*t, out);
        CHECK(out.warnings.empty());
        REQUIRE(out.devices.size() == 1);
        CHECK(*out.devices[0].pcie_current == ah::pcie_link{3, 16});
        CHECK(*out.devices[0].pcie_max == ah::pcie_link{3, 16}); // the highest level: the Gen3 board's link
    }
    if (const auto t = test::capture("amdgpu-sysfs/mem_info_vram_used-total_8gb-card_nixos.txt")) {
        ah::capture_parse out;
        out.format = "amdgpu-sysfs-transcript";
        f::parse_amdgpu_transcript_capture(*t, out);
        INFO(warnings_of(out.warnings));
        CHECK(out.warnings.empty());
        REQUIRE(out.devices.size() == 1);
        CHECK(*out.devices[0].memory_bytes == 8573157376ull);
        CHECK(*out.devices[0].memory_used_bytes == 6812925952ull);
        CHECK(*out.devices[0].memory_free_bytes == 8573157376ull - 6812925952ull);
    }
    if (const auto t = test::capture("amdgpu-sysfs/mem_info_rx570_4gb.txt")) {
        ah::capture_parse out;
        out.format = "amdgpu-sysfs-transcript";
        f::parse_amdgpu_transcript_capture(*t, out);
        CHECK(out.warnings.empty());
        REQUIRE(out.devices.size() == 1);
        CHECK(*out.devices[0].memory_bytes == 4 * gib);
    }
    // Empty inputs say they found nothing.
    for (auto parse : {f::parse_rocminfo_capture, f::parse_kfd_properties_capture, f::parse_pp_dpm_capture,
                       f::parse_amdgpu_transcript_capture}) {
        ah::capture_parse out;
        out.format = "x";
        parse("", out);
        CHECK(test::count_kind(out.warnings, ah::warning_kind::parse_error) == 1);
        CHECK(out.devices.empty());
    }
    CHECK(f::sniff_rocminfo("") == 0);
    CHECK(f::sniff_kfd_properties("simd_count 4\n") == 0);
    CHECK(f::sniff_pp_dpm("0: 1Mhz\n") == 0);
    CHECK(f::sniff_amdgpu_transcript("$ cat /sys/class/drm/card0/device/vendor\n0x1002\n") == 0);
}

#endif // AI_HWACCEL_BACKEND_ROCM
