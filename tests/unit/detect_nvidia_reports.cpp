#include "ai_hwaccel/detect/nvidia_reports.hpp"

#include "fixtures.hpp"

#include <doctest/doctest.h>

#include <array>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#if AI_HWACCEL_BACKEND_CUDA

namespace ah = ai_hwaccel;

namespace {

constexpr std::uint64_t mib = 1024ull * 1024;

std::string problems_of(const std::vector<ah::parse_problem>& ps) {
    std::string s;
    for (const auto& p : ps) s += std::to_string(p.line) + ": " + p.message + "\n";
    return s;
}

ah::pci_address bus(std::uint8_t b) { return ah::pci_address{0, b, 0, 0}; }

// Checks what every GPU of the two 8x H100 HGX -q captures shows alike.
void check_h100(const ah::nvidia_query_result& r, std::string_view driver, const std::array<std::uint8_t, 8>& buses) {
    INFO(problems_of(r.problems));
    CHECK(r.problems.empty());
    REQUIRE(r.devices.size() == 8);
    REQUIRE(r.max_memory_clock_mhz.size() == 8);
    REQUIRE(r.mig_enabled.size() == 8);
    for (std::uint32_t i = 0; i < 8; ++i) {
        CAPTURE(i);
        const auto& d = r.devices[i];
        CHECK(d.index == i);
        CHECK(d.kind == ah::device_kind::cuda_gpu);
        CHECK(d.maker == ah::vendor::nvidia);
        CHECK(d.name.view() == "NVIDIA H100 80GB HBM3");
        REQUIRE(d.pci);
        CHECK(*d.pci == bus(buses[i]));
        CHECK(d.pci_device_id == 0x2330);
        CHECK(d.driver_version.view() == driver);
        CHECK(*d.memory_bytes == 81559 * mib);
        CHECK(d.memory_bytes.from == ah::origin::tool);
        CHECK(*d.power_limit_watts == 700.0);
        CHECK(d.power_limit_watts.from == ah::origin::tool);
        CHECK(*d.pcie_max == ah::pcie_link{5, 16});
        CHECK(*d.pcie_current == ah::pcie_link{5, 16});
        CHECK(*r.max_memory_clock_mhz[i] == 2619u);
        CHECK(r.mig_enabled[i] == std::optional<bool>(false)); // "MIG Mode / Current : Disabled"
        CHECK(d.uuid.view().starts_with("GPU-"));
        REQUIRE(d.spec != nullptr);
        CHECK(d.spec->name == "NVIDIA H100 SXM5 80GB");
        CHECK(d.memory_bandwidth_gbps.from == ah::origin::catalogue);
        CHECK(d.arch.view() == "9.0"); // not in the report: the catalogue's
    }
}

} // namespace

TEST_CASE("parse_nvidia_smi_q: real captures") {
    SUBCASE("8x H100 80GB HBM3, driver 535.161.08") {
        const auto t = test::capture("nvidia-smi/q_8x-h100-80gb-hbm3_driver535.161.08.txt");
        if (!t) return;
        const auto r = ah::parse_nvidia_smi_q(*t);
        check_h100(r, "535.161.08", {0x19, 0x3b, 0x4c, 0x5d, 0x9b, 0xbb, 0xcb, 0xdb});
        REQUIRE(r.devices.size() == 8);
        const auto& d = r.devices[0];
        CHECK(d.uuid.view() == "GPU-ee7954ec-da95-fd7a-ddfd-c6b32cc2f8aa");
        CHECK(*d.memory_used_bytes == 0);
        CHECK(*d.memory_free_bytes == 81007 * mib);
        CHECK(*d.temperature_c == 29);
        CHECK(*d.power_draw_watts == doctest::Approx(67.74));
        CHECK(*d.utilization_percent == 0);
        CHECK(*r.devices[7].power_draw_watts == doctest::Approx(72.27));
        CHECK(r.devices[7].uuid.view() == "GPU-b0fe4996-1f7c-91f6-0ccd-08ae3b7e23c5");
    }
    SUBCASE("8x H100 80GB HBM3, driver 535.183.01") {
        const auto t = test::capture("nvidia-smi/q_8x-h100-80gb-hbm3_driver535.183.01.txt");
        if (!t) return;
        const auto r = ah::parse_nvidia_smi_q(*t);
        check_h100(r, "535.183.01", {0x53, 0x64, 0x75, 0x86, 0x97, 0xa8, 0xb9, 0xca});
        REQUIRE(r.devices.size() == 8);
        CHECK(r.devices[0].uuid.view() == "GPU-566e6f65-c38e-b12f-4824-6944218668b9");
        CHECK(*r.devices[0].temperature_c == 36);
        // The one busy GPU: 9221 MiB used.
        CHECK(*r.devices[2].memory_used_bytes == 9221 * mib);
        CHECK(*r.devices[2].memory_free_bytes == 71786 * mib);
        CHECK(*r.devices[2].power_draw_watts == doctest::Approx(118.01));
    }
    SUBCASE("8x RTX 4090 with Processes sections") {
        const auto t = test::capture("nvidia-smi/q_8x-rtx4090_driver535.154.05_with-processes.txt");
        if (!t) return;
        const auto r = ah::parse_nvidia_smi_q(*t);
        INFO(problems_of(r.problems));
        CHECK(r.problems.empty());
        REQUIRE(r.devices.size() == 8);
        const std::array<std::uint8_t, 8> buses{0x01, 0x23, 0x41, 0x61, 0x81, 0xa1, 0xc1, 0xe1};
        // FB memory used, GPU by GPU: the processes' "Used GPU Memory" must not leak in.
        const std::array<std::uint64_t, 8> used{20328, 21356, 23044, 22790, 24212, 0, 22378, 6488};
        for (std::uint32_t i = 0; i < 8; ++i) {
            CAPTURE(i);
            const auto& d = r.devices[i];
            CHECK(d.index == i);
            CHECK(d.name.view() == "NVIDIA GeForce RTX 4090");
            CHECK(*d.pci == bus(buses[i]));
            CHECK(d.pci_device_id == 0x2684);
            CHECK(d.driver_version.view() == "535.154.05");
            CHECK(*d.memory_bytes == 24564 * mib);
            CHECK(*d.memory_used_bytes == used[i] * mib);
            CHECK(*d.power_limit_watts == 450.0);
            CHECK(d.pcie_max->generation == 4);
            CHECK(d.pcie_max->width == 16);
            CHECK(*r.max_memory_clock_mhz[i] == 10501u);
            REQUIRE(d.spec != nullptr);
            CHECK(d.spec->name == "NVIDIA GeForce RTX 4090");
        }
        CHECK(r.devices[0].uuid.view() == "GPU-313bbff0-b0a0-fd26-4820-0578bdef3a12");
        CHECK(*r.devices[1].utilization_percent == 100);
        CHECK(*r.devices[6].power_draw_watts == doctest::Approx(313.42));
        // Idle links train down: GPU 4 at gen 1 of 4.
        CHECK(*r.devices[4].pcie_current == ah::pcie_link{1, 16});
    }
    SUBCASE("A10, driver 535.129.03") {
        const auto t = test::capture("nvidia-smi/q_a10_driver535.129.03.txt");
        if (!t) return;
        const auto r = ah::parse_nvidia_smi_q(*t);
        INFO(problems_of(r.problems));
        CHECK(r.problems.empty());
        REQUIRE(r.devices.size() == 1);
        const auto& d = r.devices[0];
        CHECK(d.name.view() == "NVIDIA A10");
        CHECK(d.uuid.view() == "GPU-73d12ef7-f589-f867-4259-c7090ab44736");
        CHECK(*d.pci == bus(0x07));
        CHECK(d.pci_device_id == 0x2236);
        CHECK(d.driver_version.view() == "535.129.03");
        CHECK(*d.memory_bytes == 23028 * mib);
        CHECK(*d.memory_used_bytes == 4 * mib);
        CHECK(*d.memory_free_bytes == 22511 * mib);
        CHECK(*d.temperature_c == 33);
        CHECK(*d.power_draw_watts == doctest::Approx(43.89));
        CHECK(*d.power_limit_watts == 150.0);
        CHECK(*d.utilization_percent == 0);
        CHECK(*d.pcie_max == ah::pcie_link{4, 16});
        CHECK(*r.max_memory_clock_mhz[0] == 6251u);
        REQUIRE(r.mig_enabled.size() == 1);
        CHECK_FALSE(r.mig_enabled[0].has_value()); // N/A: the A10 has no MIG
        REQUIRE(d.spec != nullptr);
        CHECK(d.spec->name == "NVIDIA A10");
    }
}

TEST_CASE("parse_nvidia_smi_q: layouts and unknown values (hand-made)") {
    SUBCASE("the layout before driver 535: Power Readings / Power Limit") {
        const auto r = ah::parse_nvidia_smi_q("==============NVSMI LOG==============\n\n"
                                              "Driver Version                      : 470.57.02\n"
                                              "Attached GPUs                       : 1\n"
                                              "GPU 00000000:3B:00.0\n"
                                              "    Product Name                    : Tesla V100-PCIE-16GB\n"
                                              "    PCI\n"
                                              "        Device Id                   : 0x1DB410DE\n"
                                              "    Power Readings\n"
                                              "        Power Management            : Supported\n"
                                              "        Power Draw                  : 25.12 W\n"
                                              "        Power Limit                 : 250.00 W\n"
                                              "        Default Power Limit         : 250.00 W\n");
        INFO(problems_of(r.problems));
        CHECK(r.problems.empty());
        REQUIRE(r.devices.size() == 1);
        const auto& d = r.devices[0];
        CHECK(*d.pci == bus(0x3b)); // from the section header alone
        CHECK(*d.power_draw_watts == doctest::Approx(25.12));
        CHECK(*d.power_limit_watts == 250.0);
        CHECK(d.power_limit_watts.from == ah::origin::tool);
        CHECK(d.driver_version.view() == "470.57.02");
        REQUIRE(d.spec != nullptr);
        CHECK(d.spec->name == "NVIDIA Tesla V100 PCIe 16GB");
    }
    SUBCASE("N/A and [N/A] stay unknown; Module Power Readings is not the GPU's") {
        const auto r = ah::parse_nvidia_smi_q("GPU 00000000:01:00.0\n"
                                              "    Product Name : [N/A]\n"
                                              "    FB Memory Usage\n"
                                              "        Total : N/A\n"
                                              "    Temperature\n"
                                              "        GPU Current Temp : N/A\n"
                                              "    Module Power Readings\n"
                                              "        Power Draw : 500.00 W\n"
                                              "        Current Power Limit : 900.00 W\n");
        INFO(problems_of(r.problems));
        CHECK(r.problems.empty());
        REQUIRE(r.devices.size() == 1);
        const auto& d = r.devices[0];
        CHECK(d.name.empty());
        CHECK_FALSE(d.memory_bytes.has_value());
        CHECK_FALSE(d.temperature_c.has_value());
        CHECK_FALSE(d.power_draw_watts.has_value());
        CHECK_FALSE(d.power_limit_watts.has_value());
        CHECK(d.spec == nullptr);
    }
    SUBCASE("a report cut short: fewer sections than announced") {
        const auto r = ah::parse_nvidia_smi_q("==============NVSMI LOG==============\n"
                                              "Attached GPUs : 2\n"
                                              "GPU 00000000:01:00.0\n"
                                              "    Product Name : NVIDIA A10\n"
                                              "    FB Memory Usage\n"
                                              "        Tot");
        REQUIRE(r.devices.size() == 1);
        CHECK(r.devices[0].name.view() == "NVIDIA A10");
        CHECK(r.problems.size() == 1);
    }
    SUBCASE("-q -i 0 on an 8-GPU host: every GPU counted, one section (no problem)") {
        // The shape of `nvidia-smi -q -i 0` on an 8x H800 (driver 525.105.17).
        const auto r = ah::parse_nvidia_smi_q("\n==============NVSMI LOG==============\n\n"
                                              "Timestamp                                 : Mon Jun  5 10:00:00 2023\n"
                                              "Driver Version                            : 525.105.17\n"
                                              "CUDA Version                              : 12.0\n\n"
                                              "Attached GPUs                             : 8\n"
                                              "GPU 00000000:18:00.0\n"
                                              "    Product Name                          : NVIDIA H800\n");
        INFO(problems_of(r.problems));
        CHECK(r.problems.empty());
        REQUIRE(r.devices.size() == 1);
        CHECK(r.devices[0].name.view() == "NVIDIA H800");
    }
    SUBCASE("more sections than attached GPUs") {
        const auto r = ah::parse_nvidia_smi_q("Attached GPUs : 1\nGPU 00000000:01:00.0\n    Product Name : A\n"
                                              "GPU 00000000:02:00.0\n    Product Name : B\n");
        CHECK(r.devices.size() == 2);
        CHECK(r.problems.size() == 1);
    }
}

TEST_CASE("parse_nvidia_smi_q: hostile input") {
    CHECK(ah::parse_nvidia_smi_q("").devices.empty());
    CHECK(ah::parse_nvidia_smi_q("").problems.empty());
    CHECK(ah::parse_nvidia_smi_q("\n  \n").problems.empty());

    // Not a report at all: one problem, nothing found.
    auto r = ah::parse_nvidia_smi_q("\x01\x02\xff garbage\n%%% : ::\n");
    CHECK(r.devices.empty());
    CHECK(r.problems.size() == 1);

    // A GPU header without an address, a bad value, a lost GPU, a non-UTF-8 name.
    r = ah::parse_nvidia_smi_q("GPU zz\n    Product Name : X\n"
                               "GPU 00000000:01:00.0\n"
                               "    Product Name : NVIDIA \xff\xfe A10\n"
                               "    FB Memory Usage\n"
                               "        Total : 1000000000000000000000000000 MiB\n"
                               "        Used : [GPU is lost]\n"
                               "        Free : lots\n");
    REQUIRE(r.devices.size() == 1);
    CHECK(r.devices[0].name.view() == "NVIDIA ?? A10");
    CHECK(r.devices[0].memory_bytes.from != ah::origin::tool); // the catalogue's A10, if any
    CHECK_FALSE(r.devices[0].memory_used_bytes.has_value());
    CHECK(r.problems.size() == 4);
    CHECK_FALSE(r.devices[0].available); // the lost GPU: listed, not used
    REQUIRE(r.device_errors.size() == 1);
    CHECK(r.device_errors[0] == "memory.used reported \"[GPU is lost]\"");

    // A 1 MB line, a 1 MB key, a 1 MB value.
    const std::string big(1 << 20, 'x');
    r = ah::parse_nvidia_smi_q("GPU 00000000:01:00.0\n    " + big + "\n    " + big + " : 1\n    Product Name : " + big +
                               "\n");
    REQUIRE(r.devices.size() == 1);
    CHECK(r.problems.size() == 1); // the name is cut to what the profile keeps

    // Sections nested 3000 deep, then a value back at the top of the GPU.
    std::string deep = "GPU 00000000:01:00.0\n";
    for (int i = 1; i <= 3000; ++i) deep += std::string(static_cast<std::size_t>(i), ' ') + "S\n";
    deep += " Product Name : NVIDIA A10\n";
    r = ah::parse_nvidia_smi_q(deep);
    CHECK(r.problems.empty());
    REQUIRE(r.devices.size() == 1);
    CHECK(r.devices[0].name.view() == "NVIDIA A10");

    // More GPU sections than any machine has: capped, one problem.
    std::string many;
    for (int i = 0; i < 2000; ++i) many += "GPU 00000000:01:00.0\n    Product Name : A\n";
    r = ah::parse_nvidia_smi_q(many);
    CHECK(r.devices.size() == ah::detail::parsing::max_rows);
    CHECK(r.problems.size() == 1);
}

TEST_CASE("parse_nvidia_smi_xml: real captures") {
    SUBCASE("Tesla P100, driver 510 (power_readings/power_limit)") {
        const auto t = test::capture("nvidia-smi/q-x_tesla-p100_driver510.xml");
        if (!t) return;
        const auto r = ah::parse_nvidia_smi_xml(*t);
        INFO(problems_of(r.problems));
        CHECK(r.problems.empty());
        REQUIRE(r.devices.size() == 1);
        const auto& d = r.devices[0];
        CHECK(d.index == 0);
        CHECK(d.name.view() == "Tesla P100-PCIE-16GB");
        CHECK(d.uuid.view() == "GPU-d3da8716-eaab-75db-efc1-60e88e1cd55e");
        CHECK(*d.pci == ah::pci_address{0, 0, 4, 0});
        CHECK(d.pci_device_id == 0x15f8);
        CHECK(d.driver_version.view() == "510.47.03");
        CHECK(*d.memory_bytes == 16384 * mib);
        CHECK(*d.memory_used_bytes == 0);
        CHECK(*d.memory_free_bytes == 16280 * mib);
        CHECK(*d.temperature_c == 38);
        CHECK(*d.power_draw_watts == doctest::Approx(26.16));
        CHECK(*d.power_limit_watts == 250.0);
        CHECK(d.power_limit_watts.from == ah::origin::tool);
        CHECK(*d.utilization_percent == 0);
        CHECK(*d.pcie_max == ah::pcie_link{3, 16});
        CHECK(*d.pcie_current == ah::pcie_link{3, 16});
        CHECK(*r.max_memory_clock_mhz[0] == 715u);
        REQUIRE(r.mig_enabled.size() == 1);
        CHECK_FALSE(r.mig_enabled[0].has_value()); // <current_mig>N/A</current_mig>
        REQUIRE(d.spec != nullptr);
        CHECK(d.spec->name == "NVIDIA Tesla P100 PCIe 16GB");
    }
    SUBCASE("RTX 3060 Laptop GPU, driver 515: no power limit, no catalogue row") {
        const auto t = test::capture("nvidia-smi/q-x_rtx3060_driver515.xml");
        if (!t) return;
        const auto r = ah::parse_nvidia_smi_xml(*t);
        INFO(problems_of(r.problems));
        CHECK(r.problems.empty());
        REQUIRE(r.devices.size() == 1);
        const auto& d = r.devices[0];
        CHECK(d.name.view() == "NVIDIA GeForce RTX 3060 Laptop GPU");
        CHECK(d.uuid.view() == "GPU-473d8d0f-d462-185c-6b36-6fc23e23e571");
        CHECK(*d.pci == bus(0x01));
        CHECK(d.pci_device_id == 0x2520);
        CHECK(d.driver_version.view() == "515.65.01");
        CHECK(*d.memory_bytes == 6144 * mib);
        CHECK(*d.memory_used_bytes == 5 * mib);
        CHECK(*d.memory_free_bytes == 5940 * mib);
        CHECK(*d.temperature_c == 45);
        CHECK(*d.power_draw_watts == doctest::Approx(8.70));
        CHECK_FALSE(d.power_limit_watts.has_value()); // N/A, and no catalogue row to fill it
        CHECK(*d.pcie_max == ah::pcie_link{4, 16});
        CHECK(*d.pcie_current == ah::pcie_link{1, 8});
        CHECK(*r.max_memory_clock_mhz[0] == 6001u);
        // Laptop parts are not in the catalogue; the desktop RTX 3060 must not be taken.
        CHECK(d.spec == nullptr);
    }
    SUBCASE("RTX 4090, driver 535 (gpu_power_readings/current_power_limit)") {
        const auto t = test::capture("nvidia-smi/q-x_rtx4090_driver535.xml");
        if (!t) return;
        const auto r = ah::parse_nvidia_smi_xml(*t);
        INFO(problems_of(r.problems));
        CHECK(r.problems.empty());
        REQUIRE(r.devices.size() == 1);
        const auto& d = r.devices[0];
        CHECK(d.name.view() == "NVIDIA GeForce RTX 4090");
        CHECK(d.uuid.view() == "GPU-71d1acc2-662d-2166-bf9f-65272d2fc437");
        CHECK(*d.pci == bus(0x84));
        CHECK(d.pci_device_id == 0x2684);
        CHECK(d.driver_version.view() == "535.86.05");
        CHECK(*d.memory_bytes == 24564 * mib);
        CHECK(*d.memory_used_bytes == 2 * mib);
        CHECK(*d.memory_free_bytes == 24214 * mib);
        CHECK(*d.temperature_c == 40);
        CHECK(*d.power_draw_watts == doctest::Approx(26.84));
        CHECK(*d.power_limit_watts == 450.0);
        CHECK(d.power_limit_watts.from == ah::origin::tool);
        CHECK(*d.pcie_max == ah::pcie_link{3, 16});
        CHECK(*d.pcie_current == ah::pcie_link{1, 16});
        CHECK(*r.max_memory_clock_mhz[0] == 10501u);
        REQUIRE(d.spec != nullptr);
        CHECK(d.spec->name == "NVIDIA GeForce RTX 4090");
    }
}

TEST_CASE("parse_nvidia_smi_xml: XML forms (hand-made)") {
    SUBCASE("entities, character references, CDATA, comments, attributes, empty elements") {
        const auto r = ah::parse_nvidia_smi_xml(
            "\xEF\xBB\xBF<?xml version=\"1.0\" ?>\n<!-- a comment with <gpu> in it -->\n"
            "<!DOCTYPE nvidia_smi_log SYSTEM \"nvsmi_device_v12.dtd\">\n"
            "<nvidia_smi_log>\n"
            "  <driver_version>550.&#53;4.15</driver_version>\n"
            "  <gpu note='a > b' id=\"00000000:1B:00.0\">\n"
            "    <product_name>NVIDIA A&#x31;0 &amp; &lt;co&gt; &quot;&apos;&unknown;</product_name>\n"
            "    <uuid><![CDATA[GPU-<raw>&amp;]]></uuid>\n"
            "    <mig_mode><current_mig>Enabled</current_mig><pending_mig>Disabled</pending_mig></mig_mode>\n"
            "    <mig_devices/>\n"
            "    <fb_memory_usage><total>23028 <!-- inside -->MiB</total></fb_memory_usage>\n"
            "  </gpu>\n"
            "</nvidia_smi_log>\n");
        INFO(problems_of(r.problems));
        CHECK(r.problems.empty());
        REQUIRE(r.devices.size() == 1);
        const auto& d = r.devices[0];
        CHECK(d.driver_version.view() == "550.54.15");
        CHECK(*d.pci == bus(0x1b));
        CHECK(d.name.view() == "NVIDIA A10 & <co> \"'&unknown;");
        CHECK(d.uuid.view() == "GPU-<raw>&amp;");
        CHECK(*d.memory_bytes == 23028 * mib);
        REQUIRE(r.mig_enabled.size() == 1);
        CHECK(r.mig_enabled[0] == std::optional<bool>(true));
    }
    SUBCASE("two GPUs, indexed in order") {
        const auto r = ah::parse_nvidia_smi_xml(
            "<nvidia_smi_log><attached_gpus>2</attached_gpus>"
            "<gpu id=\"00000000:01:00.0\"><product_name>NVIDIA A10</product_name></gpu>"
            "<gpu id=\"00000000:02:00.0\"><product_name>NVIDIA L4</product_name></gpu>"
            "</nvidia_smi_log>");
        INFO(problems_of(r.problems));
        CHECK(r.problems.empty());
        REQUIRE(r.devices.size() == 2);
        CHECK(r.devices[1].index == 1);
        CHECK(*r.devices[1].pci == bus(0x02));
        REQUIRE(r.devices[1].spec != nullptr);
        CHECK(r.devices[1].spec->name == "NVIDIA L4");
    }
    SUBCASE("-q -x -i 0: a whole document with one of the attached GPUs is no problem; more is one") {
        const auto one = ah::parse_nvidia_smi_xml(
            "<nvidia_smi_log><attached_gpus>8</attached_gpus>"
            "<gpu id=\"00000000:18:00.0\"><product_name>NVIDIA H800</product_name></gpu></nvidia_smi_log>");
        INFO(problems_of(one.problems));
        CHECK(one.problems.empty());
        CHECK(one.devices.size() == 1);
        const auto more = ah::parse_nvidia_smi_xml(
            "<nvidia_smi_log><attached_gpus>1</attached_gpus>"
            "<gpu id=\"00000000:01:00.0\"><product_name>NVIDIA A10</product_name></gpu>"
            "<gpu id=\"00000000:02:00.0\"><product_name>NVIDIA L4</product_name></gpu></nvidia_smi_log>");
        CHECK(more.devices.size() == 2);
        CHECK(more.problems.size() == 1);
    }
}

TEST_CASE("parse_nvidia_smi_xml: hostile input") {
    CHECK(ah::parse_nvidia_smi_xml("").devices.empty());
    CHECK(ah::parse_nvidia_smi_xml("").problems.empty());
    CHECK(ah::parse_nvidia_smi_xml(" \n ").problems.empty());

    auto r = ah::parse_nvidia_smi_xml("not xml at all");
    CHECK(r.devices.empty());
    CHECK_FALSE(r.problems.empty());

    r = ah::parse_nvidia_smi_xml("<html><gpu><product_name>x</product_name></gpu></html>");
    CHECK(r.devices.empty());
    CHECK(r.problems.size() == 1); // the wrong root

    // Unterminated tags, comments, declarations, CDATA: one problem each, GPUs so far kept.
    const std::string head = "<nvidia_smi_log><gpu id=\"00000000:01:00.0\"><product_name>NVIDIA A10</product_name>";
    for (const char* tail : {"<pci", "<!-- x", "<![CDATA[", "</gp", "", "<? x"}) {
        CAPTURE(tail);
        r = ah::parse_nvidia_smi_xml(head + tail);
        REQUIRE(r.devices.size() == 1);
        CHECK(r.devices[0].name.view() == "NVIDIA A10");
        CHECK(r.problems.size() == 1);
    }
    r = ah::parse_nvidia_smi_xml("<!DOCTYPE nvidia_smi_log [ <!ENTITY x \"]>\"> ");
    CHECK(r.devices.empty());
    CHECK(r.problems.size() == 1);

    // Mismatched and stray end tags are reported, and the scan goes on.
    r = ah::parse_nvidia_smi_xml("<nvidia_smi_log></stray><gpu><fb_memory_usage><total>1 MiB</used></gpu>"
                                 "<gpu><product_name>NVIDIA A10</product_name></gpu></nvidia_smi_log>");
    REQUIRE(r.devices.size() == 2);
    CHECK(r.devices[1].name.view() == "NVIDIA A10");
    CHECK(r.problems.size() == 3); // </stray>, </used>, and </gpu> closing <total>

    // 100 000 nested elements: the depth cap ends the scan, without recursion.
    std::string nested = "<nvidia_smi_log>";
    for (int i = 0; i < 100'000; ++i) nested += "<gpu>";
    r = ah::parse_nvidia_smi_xml(nested);
    CHECK(r.devices.size() == 1);
    CHECK(r.problems.size() == 1);

    // A 10 MB attribute, closed and unclosed.
    const std::string huge(10u << 20, 'a');
    r = ah::parse_nvidia_smi_xml("<nvidia_smi_log><gpu id=\"" + huge + "\"><product_name>NVIDIA A10</product_name>"
                                 "</gpu></nvidia_smi_log>");
    INFO(problems_of(r.problems));
    CHECK(r.problems.empty());
    REQUIRE(r.devices.size() == 1);
    CHECK_FALSE(r.devices[0].pci.has_value());
    r = ah::parse_nvidia_smi_xml("<nvidia_smi_log><gpu id=\"" + huge);
    CHECK(r.devices.empty());
    CHECK(r.problems.size() == 1);

    // A 10 MB value: cut, reported, not used.
    r = ah::parse_nvidia_smi_xml("<nvidia_smi_log><gpu><product_name>" + huge +
                                 "</product_name></gpu></nvidia_smi_log>");
    REQUIRE(r.devices.size() == 1);
    CHECK(r.devices[0].name.empty());
    CHECK(r.problems.size() == 1);

    // An entity bomb: declarations are skipped, never expanded.
    std::string bomb = "<?xml version=\"1.0\"?>\n<!DOCTYPE nvidia_smi_log [\n <!ENTITY lol \"lol\">\n";
    for (int i = 1; i < 10; ++i) {
        bomb += " <!ENTITY lol" + std::to_string(i) + " \"";
        for (int k = 0; k < 10; ++k) bomb += "&lol" + (i == 1 ? std::string() : std::to_string(i - 1)) + ";";
        bomb += "\">\n";
    }
    bomb += "]>\n<nvidia_smi_log><gpu><product_name>&lol9;</product_name></gpu></nvidia_smi_log>\n";
    r = ah::parse_nvidia_smi_xml(bomb);
    INFO(problems_of(r.problems));
    CHECK(r.problems.empty());
    REQUIRE(r.devices.size() == 1);
    CHECK(r.devices[0].name.view() == "&lol9;");
    // An external entity is never fetched either.
    r = ah::parse_nvidia_smi_xml("<!DOCTYPE x [<!ENTITY e SYSTEM \"file:///etc/passwd\">]>"
                                 "<nvidia_smi_log><gpu><product_name>&e;</product_name></gpu></nvidia_smi_log>");
    REQUIRE(r.devices.size() == 1);
    CHECK(r.devices[0].name.view() == "&e;");

    // Non-UTF-8, references to nothing, numbers past 2^64, a truncated section.
    r = ah::parse_nvidia_smi_xml("<nvidia_smi_log><gpu><product_name>NVIDIA \xff\xfe A10</product_name>"
                                 "<uuid>&#0;&#xD800;&#99999999999;</uuid>"
                                 "<fb_memory_usage><total>99999999999999999999999 MiB</total></fb_memory_usage>"
                                 "<pci><pci_device_id>ZZZZ10DE</pci_device_id></pci>"
                                 "<temperature><gpu_te");
    REQUIRE(r.devices.size() == 1);
    CHECK(r.devices[0].name.view() == "NVIDIA ?? A10");
    CHECK(r.devices[0].uuid.view() == "&#0;&#xD800;&#99999999999;");
    CHECK(r.devices[0].memory_bytes.from != ah::origin::tool); // the catalogue's A10, if any
    CHECK(r.devices[0].pci_device_id == 0);
    CHECK(r.problems.size() == 4);

    // More <gpu> elements than any machine has.
    std::string many = "<nvidia_smi_log>";
    for (int i = 0; i < 2000; ++i) many += "<gpu/>";
    many += "</nvidia_smi_log>";
    r = ah::parse_nvidia_smi_xml(many);
    CHECK(r.devices.size() == ah::detail::parsing::max_rows);
    CHECK(r.problems.size() == 1);
}

TEST_CASE("parse_nvidia_smi_table: real captures") {
    SUBCASE("8x H100, Linux, driver 550.90.07") {
        const auto t = test::capture("nvidia-smi/default-table_8x-h100_driver550.90.07.txt");
        if (!t) return;
        const auto r = ah::parse_nvidia_smi_table(*t);
        INFO(problems_of(r.problems));
        CHECK(r.problems.empty());
        REQUIRE(r.devices.size() == 8);
        const std::array<std::uint8_t, 8> buses{0x19, 0x3b, 0x4c, 0x5d, 0x9b, 0xbb, 0xcb, 0xdb};
        const std::array<double, 8> draw{72, 74, 70, 72, 73, 74, 73, 72};
        const std::array<double, 8> temp{27, 24, 23, 23, 27, 22, 24, 23};
        for (std::uint32_t i = 0; i < 8; ++i) {
            CAPTURE(i);
            const auto& d = r.devices[i];
            CHECK(d.index == i);
            CHECK(d.name.view() == "NVIDIA H100 80GB HBM3");
            CHECK(*d.pci == bus(buses[i]));
            CHECK(d.driver_version.view() == "550.90.07");
            CHECK(*d.memory_bytes == 81559 * mib);
            CHECK(*d.memory_used_bytes == 1 * mib);
            CHECK(*d.power_draw_watts == draw[i]);
            CHECK(*d.power_limit_watts == 700);
            CHECK(d.power_limit_watts.from == ah::origin::tool);
            CHECK(*d.temperature_c == temp[i]);
            CHECK(*d.utilization_percent == 0);
            CHECK(d.pci_device_id == 0); // the table shows no PCI id
            REQUIRE(d.spec != nullptr);  // the whole name fits: matched by name
            CHECK(d.spec->name == "NVIDIA H100 SXM5 80GB");
            CHECK(r.mig_enabled[i] == std::optional<bool>(false)); // the third row: Disabled
        }
    }
    SUBCASE("RTX 4090, Windows WDDM, driver 560.70") {
        const auto t = test::capture("nvidia-smi/default-table_windows_rtx4090_wddm_driver560.txt");
        if (!t) return;
        const auto r = ah::parse_nvidia_smi_table(*t);
        INFO(problems_of(r.problems));
        CHECK(r.problems.empty());
        REQUIRE(r.devices.size() == 1); // the process rows are not GPUs
        const auto& d = r.devices[0];
        CHECK(d.index == 0);
        CHECK(d.name.view() == "NVIDIA GeForce RTX 4090");
        CHECK(*d.pci == bus(0x01));
        CHECK(d.driver_version.view() == "560.70");
        CHECK(*d.memory_bytes == 24564 * mib);
        CHECK(*d.memory_used_bytes == 395 * mib);
        CHECK(*d.power_draw_watts == 10);
        CHECK(*d.power_limit_watts == 500);
        CHECK(*d.temperature_c == 24);
        CHECK(*d.utilization_percent == 19);
        REQUIRE(r.mig_enabled.size() == 1);
        CHECK_FALSE(r.mig_enabled[0].has_value()); // N/A
        REQUIRE(d.spec != nullptr);
        CHECK(d.spec->name == "NVIDIA GeForce RTX 4090");
    }
}

TEST_CASE("one H200 told by four reports and -L (real, driver 580.159.04)") {
    // tests/data/nvidia-h200-vm: nvidia-smi's table, -q, -q -x and -L on one NVIDIA H200 of
    // this project's device machine (SOURCE.md there). Driver 580 prints the one-second
    // average power draw under new names, and "GPU" under "Utilization".
    const std::string dir = std::string(AI_HWACCEL_TEST_DATA_DIR) + "/nvidia-h200-vm/";
    const auto q_text = test::read_file(dir + "q.txt");
    const auto xml_text = test::read_file(dir + "q-x.xml");
    const auto table_text = test::read_file(dir + "table.txt");
    REQUIRE(q_text);
    REQUIRE(xml_text);
    REQUIRE(table_text);
    const auto q = ah::parse_nvidia_smi_q(*q_text);
    const auto xml = ah::parse_nvidia_smi_xml(*xml_text);
    const auto table = ah::parse_nvidia_smi_table(*table_text);
    for (const auto* r : {&q, &xml, &table}) {
        INFO(problems_of(r->problems));
        CHECK(r->problems.empty());
        REQUIRE(r->devices.size() == 1);
        const auto& d = r->devices[0];
        CHECK(d.name.view() == "NVIDIA H200");
        CHECK(*d.pci == ah::pci_address{0, 0, 6, 0});
        CHECK(d.driver_version.view() == "580.159.04");
        CHECK(*d.memory_bytes == 143771 * mib);
        CHECK(*d.memory_used_bytes == 0); // the 616 MiB the driver reserves is not "Used"
        CHECK(*d.power_limit_watts == 700.0);
        REQUIRE(d.power_draw_watts);
        CHECK(d.power_draw_watts.from == ah::origin::tool);
        CHECK(*d.utilization_percent == 0.0);
        CHECK(*d.temperature_c == 34.0);
        REQUIRE(d.spec != nullptr);
        CHECK(d.spec->name == "NVIDIA H200 SXM 141GB");
    }
    CHECK(*q.devices[0].power_draw_watts == doctest::Approx(79.09)); // "Average Power Draw"
    CHECK(*xml.devices[0].power_draw_watts == doctest::Approx(78.98)); // <average_power_draw>
    CHECK(*table.devices[0].power_draw_watts == 79.0);
    // nvidia-smi -L: the name and UUID, nothing more.
    const auto list_text = test::read_file(dir + "L.txt");
    REQUIRE(list_text);
    const auto list = ah::parse_nvidia_smi_list(*list_text);
    CHECK(list.problems.empty());
    CHECK(list.mig.empty());
    REQUIRE(list.gpus.size() == 1);
    CHECK(list.gpus[0].index == 0);
    CHECK(list.gpus[0].name.view() == "NVIDIA H200");
    CHECK(list.gpus[0].uuid.view() == "GPU-ee57b6d3-1370-2283-2fa4-d5a32d6c3fb6");
    for (const auto* r : {&q, &xml}) {
        const auto& d = r->devices[0];
        CHECK(d.pci_device_id == 0x2335);
        CHECK(*d.memory_free_bytes == 143156 * mib);
        CHECK(*d.pcie_current == ah::pcie_link{5, 16});
        CHECK(*d.pcie_max == ah::pcie_link{5, 16});
        CHECK(d.uuid.view() == "GPU-ee57b6d3-1370-2283-2fa4-d5a32d6c3fb6");
    }
}

TEST_CASE("three reports of the same GPUs agree where they overlap") {
    // The table and the -q report of the 8x H100 HGX come from one project's test data,
    // taken months apart (drivers 550 and 535): the same slots, names, memory and limits.
    const auto q = test::capture("nvidia-smi/q_8x-h100-80gb-hbm3_driver535.161.08.txt");
    const auto table = test::capture("nvidia-smi/default-table_8x-h100_driver550.90.07.txt");
    if (!q || !table) return;
    const auto a = ah::parse_nvidia_smi_q(*q);
    const auto b = ah::parse_nvidia_smi_table(*table);
    REQUIRE(a.devices.size() == b.devices.size());
    for (std::size_t i = 0; i < a.devices.size(); ++i) {
        CAPTURE(i);
        CHECK(a.devices[i].index == b.devices[i].index);
        CHECK(a.devices[i].name == b.devices[i].name);
        CHECK(a.devices[i].pci == b.devices[i].pci);
        CHECK(a.devices[i].memory_bytes == b.devices[i].memory_bytes);
        CHECK(a.devices[i].power_limit_watts == b.devices[i].power_limit_watts);
        CHECK(a.devices[i].spec == b.devices[i].spec);
    }
    // Hand-made: one GPU told three ways gives one profile.
    const auto t1 = ah::parse_nvidia_smi_q("GPU 00000000:07:00.0\n    Product Name : NVIDIA A10\n"
                                           "    FB Memory Usage\n        Total : 23028 MiB\n        Used : 4 MiB\n"
                                           "    Temperature\n        GPU Current Temp : 33 C\n");
    const auto t2 = ah::parse_nvidia_smi_xml("<nvidia_smi_log><gpu id=\"00000000:07:00.0\"><product_name>NVIDIA A10"
                                             "</product_name><fb_memory_usage><total>23028 MiB</total><used>4 MiB"
                                             "</used></fb_memory_usage><temperature><gpu_temp>33 C</gpu_temp>"
                                             "</temperature></gpu></nvidia_smi_log>");
    const auto t3 = ah::parse_nvidia_smi_table("| NVIDIA-SMI 1  Driver Version: 1  CUDA Version: 1 |\n"
                                               "|   0  NVIDIA A10   On  | 00000000:07:00.0 Off | 0 |\n"
                                               "| 0%   33C  P8   N/A /  N/A |   4MiB /  23028MiB |  0%  Default |\n");
    REQUIRE(t1.devices.size() == 1);
    REQUIRE(t2.devices.size() == 1);
    REQUIRE(t3.devices.size() == 1);
    CHECK(t1.devices[0].name == t2.devices[0].name);
    CHECK(t1.devices[0].name == t3.devices[0].name);
    CHECK(t1.devices[0].pci == t3.devices[0].pci);
    CHECK(t1.devices[0].memory_bytes == t2.devices[0].memory_bytes);
    CHECK(t1.devices[0].memory_bytes == t3.devices[0].memory_bytes);
    CHECK(t1.devices[0].memory_used_bytes == t3.devices[0].memory_used_bytes);
    CHECK(t1.devices[0].temperature_c == t2.devices[0].temperature_c);
    CHECK(t1.devices[0].temperature_c == t3.devices[0].temperature_c);
    CHECK(t1.devices[0].spec == t3.devices[0].spec);
    CHECK(t1.devices[0].power_limit_watts.from == ah::origin::catalogue);
    CHECK(t3.devices[0].power_limit_watts.from == ah::origin::catalogue); // N/A in the table
}

TEST_CASE("parse_nvidia_smi_table: layouts (hand-made)") {
    SUBCASE("the older, narrower layout: two rows per GPU, names cut with ...") {
        const auto r = ah::parse_nvidia_smi_table(
            "+-----------------------------------------------------------------------------+\n"
            "| NVIDIA-SMI 515.65.01    Driver Version: 515.65.01    CUDA Version: 11.7     |\n"
            "|-------------------------------+----------------------+----------------------+\n"
            "| GPU  Name        Persistence-M| Bus-Id        Disp.A | Volatile Uncorr. ECC |\n"
            "| Fan  Temp  Perf  Pwr:Usage/Cap|         Memory-Usage | GPU-Util  Compute M. |\n"
            "|===============================+======================+======================|\n"
            "|   0  NVIDIA GeForce ...  Off  | 00000000:01:00.0 Off |                  N/A |\n"
            "| 30%   41C    P8    15W / 170W |      5MiB / 12288MiB |      0%      Default |\n"
            "+-------------------------------+----------------------+----------------------+\n"
            "|   1  NVIDIA GeForce RTX 4090...| 00000000:02:00.0 Off |                  N/A |\n"
            "| 30%   41C    P8   ERR! / 450W |      5MiB / 24564MiB |      0%      Default |\n"
            "+-------------------------------+----------------------+----------------------+\n");
        INFO(problems_of(r.problems));
        REQUIRE(r.devices.size() == 2);
        CHECK(r.devices[0].name.view() == "NVIDIA GeForce ...");
        CHECK(r.devices[0].spec == nullptr);
        CHECK(*r.devices[0].memory_bytes == 12288 * mib);
        CHECK(*r.devices[0].power_limit_watts == 170);
        CHECK(r.devices[0].driver_version.view() == "515.65.01");
        // A cut name is never looked up, even where its visible part names a row.
        CHECK(r.devices[1].name.view() == "NVIDIA GeForce RTX 4090...");
        CHECK(r.devices[1].spec == nullptr);
        CHECK_FALSE(r.devices[1].power_draw_watts.has_value());
        CHECK(r.problems.size() == 1); // ERR!
    }
    SUBCASE("MIG devices and processes are not GPUs") {
        const auto r = ah::parse_nvidia_smi_table(
            "| NVIDIA-SMI 550.54.15  Driver Version: 550.54.15  CUDA Version: 12.4 |\n"
            "|   0  NVIDIA A100 80GB PCIe   On  | 00000000:17:00.0 Off | On |\n"
            "| N/A   40C  P0   70W / 300W |   87MiB / 81920MiB |  N/A  Default |\n"
            "|                             |                    |      Enabled |\n"
            "| MIG devices: |\n"
            "|   0    1   0   0  | 00000000:17:00.0 | 0 |\n"
            "|   0    1   0   0  |   37MiB / 40192MiB | 42  0 |\n");
        INFO(problems_of(r.problems));
        CHECK(r.problems.empty());
        REQUIRE(r.devices.size() == 1);
        CHECK_FALSE(r.devices[0].utilization_percent.has_value());
        CHECK(r.mig_enabled[0] == std::optional<bool>(true));
        REQUIRE(r.devices[0].spec != nullptr);
        CHECK(r.devices[0].spec->name == "NVIDIA A100 PCIe 80GB");
    }
}

TEST_CASE("parse_nvidia_smi_table: hostile input") {
    CHECK(ah::parse_nvidia_smi_table("").devices.empty());
    CHECK(ah::parse_nvidia_smi_table("").problems.empty());
    CHECK(ah::parse_nvidia_smi_table("No devices were found\n").devices.empty());

    auto r = ah::parse_nvidia_smi_table("\x01\xff garbage | | |\n");
    CHECK(r.devices.empty());
    CHECK(r.problems.size() == 1);

    // A GPU row without its second row, then a complete one.
    r = ah::parse_nvidia_smi_table("| NVIDIA-SMI 1  Driver Version: 1  CUDA Version: 1 |\n"
                                   "|   0  NVIDIA A10   On  | 00000000:07:00.0 Off | 0 |\n"
                                   "+---+\n"
                                   "|   1  NVIDIA \xff A10   On  | 00000000:08:00.0 Off | 0 |\n"
                                   "| 0%  1000C  P8  -5W / N/A |  x / 99999999999999999999999MiB |  0%  Default |\n"
                                   "|   2  NVIDIA A10   On  | 00000000:09:00.0 Off | 0 |\n");
    REQUIRE(r.devices.size() == 3);
    CHECK(r.devices[1].name.view() == "NVIDIA ? A10");
    CHECK_FALSE(r.devices[1].temperature_c.has_value());
    CHECK(r.devices[1].memory_bytes.from != ah::origin::tool); // the catalogue's A10, if any
    // second row missing (0), name, temperature, power, used, total, last row cut (2)
    CHECK(r.problems.size() == 7);

    // A 1 MB line and a 1 MB cell.
    const std::string big(1 << 20, '9');
    r = ah::parse_nvidia_smi_table(big + "\n|" + big + "|" + big + "|" + big + "|\n");
    CHECK(r.devices.empty());

    // More GPU rows than any machine has.
    std::string many = "| NVIDIA-SMI 1  Driver Version: 1  CUDA Version: 1 |\n";
    for (int i = 0; i < 2000; ++i)
        many += "| 0 A  On | 00000000:01:00.0 Off | 0 |\n| 0%  1C  P0  1W / 2W | 1MiB / 2MiB | 0% x |\n";
    r = ah::parse_nvidia_smi_table(many);
    CHECK(r.devices.size() == ah::detail::parsing::max_rows);
    CHECK(r.problems.size() == 1);
}

TEST_CASE("detail::formats::sniff_nvidia_smi_q / _xml / _table") {
    namespace f = ah::detail::formats;
    const test::sniffer_row rows[] = {
        {"nvidia-smi-q", f::sniff_nvidia_smi_q, "nvidia-smi/q_"},
        {"nvidia-smi-q-xml", f::sniff_nvidia_smi_xml, "nvidia-smi/q-x_"},
        {"nvidia-smi-table", f::sniff_nvidia_smi_table, "nvidia-smi/default-table_"},
    };
    test::check_sniffers(rows, 9, [](const test::sniffer_row& row, std::string_view, const std::string& text) {
        ah::capture_parse out;
        out.format = row.name;
        const bool q = row.sniff == f::sniff_nvidia_smi_q, xml = row.sniff == f::sniff_nvidia_smi_xml;
        (q ? f::parse_nvidia_smi_q_capture : xml ? f::parse_nvidia_smi_xml_capture : f::parse_nvidia_smi_table_capture)(
            text, out);
        CHECK(out.warnings.empty());
        CHECK_FALSE(out.devices.empty());
        // The older nvidia-smi formats are not claimed by these sniffers, nor these by theirs.
        CHECK(f::sniff_nvidia_csv(text) == 0);
        CHECK(f::sniff_nvidia_list(text) == 0);
    });

    CHECK(f::sniff_nvidia_smi_q("") == 0);
    CHECK(f::sniff_nvidia_smi_xml("") == 0);
    CHECK(f::sniff_nvidia_smi_table("") == 0);
    CHECK(f::sniff_nvidia_smi_xml("<?xml version=\"1.0\"?><html/>") == 0);
    CHECK(f::sniff_nvidia_smi_table("Driver Version: 1\n") == 0);

    for (auto parse :
         {f::parse_nvidia_smi_q_capture, f::parse_nvidia_smi_xml_capture, f::parse_nvidia_smi_table_capture}) {
        ah::capture_parse empty;
        empty.format = "nvidia-smi-report";
        parse("", empty);
        CHECK(empty.devices.empty());
        CHECK(test::count_kind(empty.warnings, ah::warning_kind::parse_error) == 1);
    }
    ah::capture_parse bad;
    bad.format = "nvidia-smi-q-xml";
    f::parse_nvidia_smi_xml_capture("<nvidia_smi_log><gpu>", bad);
    CHECK(bad.devices.size() == 1);
    REQUIRE(bad.warnings.size() == 1);
    CHECK(bad.warnings[0].backend == ah::backend_id::cuda);
    CHECK(bad.warnings[0].subject == "nvidia-smi-q-xml");
}

#endif // AI_HWACCEL_BACKEND_CUDA
