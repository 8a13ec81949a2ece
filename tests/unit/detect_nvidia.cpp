#include "ai_hwaccel/detect/nvidia.hpp"

#include "fixtures.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#if AI_HWACCEL_BACKEND_CUDA

namespace ah = ai_hwaccel;

namespace {

constexpr std::uint64_t mib = 1024ull * 1024;

std::string problems_of(const std::vector<ah::nvidia_parse_problem>& ps) {
    std::string s;
    for (const auto& p : ps) s += std::to_string(p.line) + ": " + p.message + "\n";
    return s;
}


} // namespace


TEST_CASE("parse_nvidia_smi_query_csv: real captures") {
    SUBCASE("2x RTX A6000, noheader nounits") {
        const auto t = test::capture(
            "nvidia-smi/query-gpu_index-memtotal-name-computecap_noheader-nounits_2x-rtx-a6000.csv");
        if (!t) return;
        const auto r = ah::parse_nvidia_smi_query_csv(*t, "index,memory.total,name,compute_cap");
        INFO(problems_of(r.problems));
        CHECK(r.problems.empty());
        REQUIRE(r.devices.size() == 2);
        for (std::uint32_t i = 0; i < 2; ++i) {
            const auto& d = r.devices[i];
            CHECK(d.index == i);
            CHECK(d.kind == ah::device_kind::cuda_gpu);
            CHECK(d.maker == ah::vendor::nvidia);
            CHECK(d.name.view() == "NVIDIA RTX A6000");
            CHECK(*d.memory_bytes == 46068 * mib);
            CHECK(d.memory_bytes.from == ah::origin::tool);
            CHECK(d.arch.view() == "8.6");
            REQUIRE(d.spec != nullptr); // matched by name
            CHECK(d.spec->name == "NVIDIA RTX A6000");
            CHECK(d.memory_bandwidth_gbps.from == ah::origin::catalogue);
            CHECK(d.peak_from == ah::origin::catalogue);
        }
    }
    SUBCASE("laptop GeForce: [N/A] fan is unknown, not a problem") {
        const auto t = test::capture("nvidia-smi/query-gpu_mem-temp-fan-util_nounits_fan-NA.csv");
        if (!t) return;
        const auto r = ah::parse_nvidia_smi_query_csv(
            *t, "memory.total,memory.free,memory.used,temperature.gpu,fan.speed,utilization.gpu,utilization.memory");
        INFO(problems_of(r.problems));
        CHECK(r.problems.empty());
        REQUIRE(r.devices.size() == 1);
        const auto& d = r.devices[0];
        CHECK(*d.memory_bytes == 2004 * mib);
        CHECK(*d.memory_free_bytes == 2004 * mib);
        CHECK(d.memory_used_bytes.has_value());
        CHECK(*d.memory_used_bytes == 0);
        CHECK(*d.temperature_c == 44);
        CHECK(*d.utilization_percent == 0);
        CHECK(d.spec == nullptr); // no name, no id: nothing to match
    }
    SUBCASE("AWS g6e L40S, noheader with units") {
        const auto t = test::capture("nvidia-smi/query-gpu_name-deviceid-busid-memtotal_aws-g6e-l40s_noheader.csv");
        if (!t) return;
        const auto r = ah::parse_nvidia_smi_query_csv(*t, "name,pci.device_id,pci.bus_id,memory.total");
        INFO(problems_of(r.problems));
        CHECK(r.problems.empty());
        REQUIRE(r.devices.size() == 1);
        const auto& d = r.devices[0];
        CHECK(d.name.view() == "NVIDIA L40S");
        CHECK(d.pci_device_id == 0x26b9);
        REQUIRE(d.pci);
        CHECK(*d.pci == ah::pci_address{0, 0x30, 0, 0});
        CHECK(*d.memory_bytes == 46068 * mib);
        REQUIRE(d.spec != nullptr); // matched by PCI id
        CHECK(d.spec->name == "NVIDIA L40S");
    }
    SUBCASE("H100 NVL: name and device id") {
        const auto t = test::capture("nvidia-smi/query-gpu_name-deviceid_h100-nvl_noheader.csv");
        if (!t) return;
        const auto r = ah::parse_nvidia_smi_query_csv(*t, "name,pci.device_id");
        INFO(problems_of(r.problems));
        CHECK(r.problems.empty());
        REQUIRE(r.devices.size() == 1);
        CHECK(r.devices[0].name.view() == "NVIDIA H100 NVL");
        CHECK(r.devices[0].pci_device_id == 0x2321);
        REQUIRE(r.devices[0].spec != nullptr);
        CHECK(r.devices[0].spec->name == "NVIDIA H100 NVL 94GB");
        // Memory unqueried: filled from the catalogue and marked so.
        CHECK(r.devices[0].memory_bytes.from == ah::origin::catalogue);
    }
    SUBCASE("2x Quadro RTX 6000: a PCI id shared by several rows falls back to the name") {
        const auto t =
            test::capture("nvidia-smi/query-gpu_name-memtotal-driver-deviceid_2x-quadro-rtx6000_noheader.csv");
        if (!t) return;
        const auto r = ah::parse_nvidia_smi_query_csv(*t, "name,memory.total,driver_version,pci.device_id");
        INFO(problems_of(r.problems));
        CHECK(r.problems.empty());
        REQUIRE(r.devices.size() == 2);
        for (std::uint32_t i = 0; i < 2; ++i) {
            const auto& d = r.devices[i];
            CHECK(d.index == i); // no index column: row order
            CHECK(d.name.view() == "Quadro RTX 6000");
            CHECK(*d.memory_bytes == 24576 * mib);
            CHECK(d.driver_version.view() == "570.211.01");
            CHECK(d.pci_device_id == 0x1e30);
            REQUIRE(d.spec != nullptr);
            CHECK(d.spec->name == "NVIDIA Quadro RTX 6000");
        }
    }
    SUBCASE("3 GPUs, power.draw only") {
        const auto t = test::capture("nvidia-smi/query-gpu_power.draw_3gpu_nounits.csv");
        if (!t) return;
        const auto r = ah::parse_nvidia_smi_query_csv(*t, "power.draw");
        INFO(problems_of(r.problems));
        CHECK(r.problems.empty());
        REQUIRE(r.devices.size() == 3);
        CHECK(*r.devices[0].power_draw_watts == doctest::Approx(133.91));
        CHECK(*r.devices[1].power_draw_watts == doctest::Approx(189.84));
        CHECK(*r.devices[2].power_draw_watts == doctest::Approx(104.34));
        CHECK(r.devices[0].power_draw_watts.from == ah::origin::tool);
    }
    SUBCASE("Tesla P100 with its header line: the header names the columns") {
        const auto t = test::capture("nvidia-smi/query-gpu_tesla-p100.csv");
        if (!t) return;
        const auto r = ah::parse_nvidia_smi_query_csv(*t);
        INFO(problems_of(r.problems));
        CHECK(r.problems.empty());
        REQUIRE(r.devices.size() == 1);
        const auto& d = r.devices[0];
        CHECK(d.name.view() == "Tesla P100-PCIE-16GB");
        CHECK(d.uuid.view() == "GPU-ef1b2c9b-38d8-2090-2bd1-f567a3eb42a6");
        CHECK(*d.memory_used_bytes == 0);
        CHECK(*d.memory_free_bytes == 16280 * mib);
        CHECK(*d.utilization_percent == 0);
        CHECK(*d.temperature_c == 37);
        CHECK(*d.power_draw_watts == doctest::Approx(28.16));
        REQUIRE(d.spec != nullptr);
        CHECK(d.spec->name == "NVIDIA Tesla P100 PCIe 16GB");
        // memory.total was not queried: the catalogue's value, marked as such.
        CHECK(d.memory_bytes.from == ah::origin::catalogue);
    }
}

// nvidia-smi refuses a whole --query-gpu list when one name in it is unknown ("Field ... is
// not a valid field to query"), so every name the CUDA probe asks for must be one a driver
// knows. The real `--help-query-gpu` of a late-2022 driver lists them, one property per
// line, its spellings joined by " or ".
TEST_CASE("nvidia_smi_query_fields and the parser's spellings: as nvidia-smi --help-query-gpu lists them") {
    const auto help = test::capture("nvidia-smi/help-query-gpu.txt");
    if (!help) return;
    std::vector<std::vector<std::string>> properties; // the spellings of each property
    std::set<std::string, std::less<>> known;
    std::size_t at = 0;
    while (at < help->size()) {
        const std::size_t end = std::min(help->find('\n', at), help->size());
        std::string_view line = std::string_view(*help).substr(at, end - at);
        at = end + 1;
        std::vector<std::string> names;
        while (line.size() > 2 && line.front() == '"') {
            const auto close = line.find('"', 1);
            const auto name = line.substr(1, close == std::string_view::npos ? 0 : close - 1);
            if (name.empty() || name.find_first_not_of("abcdefghijklmnopqrstuvwxyz0123456789._") != name.npos) {
                names.clear(); // a line of prose that starts with a quotation ("0: Default" ...)
                break;
            }
            names.emplace_back(name);
            line.remove_prefix(close + 1);
            if (line.starts_with(" or ")) line.remove_prefix(4);
            else if (!line.empty()) names.clear();
        }
        if (names.empty()) continue;
        known.insert(names.begin(), names.end());
        properties.push_back(std::move(names));
    }
    // Not a handful: the capture is the whole list (114 properties, 134 spellings).
    CHECK(properties.size() > 100);

    for (const auto name : ah::nvidia_smi_query_fields) {
        CAPTURE(name);
        CHECK(known.contains(name));
    }
    // Every spelling the parser maps is a real one; the one this driver does not know yet
    // is the current generation's later spelling. (Later drivers' pcie.link.gen.gpumax is
    // the GPU's own ceiling, not the link's, and is not read.)
    std::set<std::string, std::less<>> unknown;
    for (const auto& f : ah::detail::nvidia::field_table)
        if (!known.contains(f.name)) unknown.emplace(f.name);
    CHECK(unknown == std::set<std::string, std::less<>>{"pcie.link.gen.gpucurrent"});
    // A property the parser maps is mapped under each of its spellings, to the same field.
    for (const auto& spellings : properties) {
        const auto* first = ah::detail::nvidia::find_field(spellings.front());
        for (const auto& s : spellings) {
            CAPTURE(s);
            const auto* f = ah::detail::nvidia::find_field(s);
            CHECK((f == nullptr) == (first == nullptr));
            if (f && first) CHECK(f->id == first->id);
        }
    }
}

// A Blackwell Ultra as public nvidia-smi output names it ("NVIDIA B300 SXM6 AC", 275040 MiB,
// compute capability 10.3); the line itself is hand-made in that shape.
TEST_CASE("parse_nvidia_smi_query_csv: a B300 is matched to its catalogue row, its memory read as reported") {
    const auto r = ah::parse_nvidia_smi_query_csv(
        "0, GPU-0a1b2c3d-0000-4000-8000-000000000000, NVIDIA B300 SXM6 AC, 00000000:19:00.0, 0x318210DE, 275040, "
        "10.3\n",
        "index,uuid,name,pci.bus_id,pci.device_id,memory.total,compute_cap");
    INFO(problems_of(r.problems));
    CHECK(r.problems.empty());
    REQUIRE(r.devices.size() == 1);
    const auto& d = r.devices[0];
    REQUIRE(d.spec != nullptr);
    CHECK(d.spec->name == "NVIDIA B300");
    CHECK(d.memory_bytes.value_or(0) == 275040 * mib);
    CHECK(d.memory_bytes.from == ah::origin::tool);
    // What the driver does not say comes from the row: the bandwidth the planner reads.
    CHECK(d.memory_bandwidth_gbps.value_or(0) == 7700);
    CHECK(d.memory_bandwidth_gbps.from == ah::origin::catalogue);
    CHECK(d.peak.fp4 > d.peak.fp8);
}

// The root `compatible` of Jetson boards, in the shape the kernel exposes it (NUL-separated,
// ending in a NUL): carrier+module, module, chip, as jetson-stats' module table and the Orin
// Nano developer kit's device tree (tegra234-p3768-0000+p3767-0005) name them.
TEST_CASE("jetson_module_gpu: the module's row from the device tree's compatible") {
    using namespace std::string_view_literals;
    const auto row = [](std::string_view compatible) {
        const auto* s = ah::jetson_module_gpu(compatible);
        return s ? std::string(s->name) : std::string("(none)");
    };
    CHECK(row("nvidia,p3768-0000+p3767-0005\0nvidia,p3767-0005\0nvidia,tegra234\0"sv) == "NVIDIA Jetson Orin Nano 8GB");
    CHECK(row("nvidia,p3737-0000+p3701-0005\0nvidia,p3701-0005\0nvidia,tegra234\0"sv) ==
          "NVIDIA Jetson AGX Orin 64GB");
    CHECK(row("nvidia,p3737-0000+p3701-0004\0nvidia,tegra234\0"sv) == "NVIDIA Jetson AGX Orin 32GB");
    CHECK(row("nvidia,p3768-0000+p3767-0000\0nvidia,tegra234\0"sv) == "NVIDIA Jetson Orin NX 16GB");
    CHECK(row("nvidia,p3767-0001\0"sv) == "NVIDIA Jetson Orin NX 8GB");
    CHECK(row("nvidia,p3767-0003"sv) == "NVIDIA Jetson Orin Nano 8GB");
    CHECK(row("nvidia,p3768-0000+p3767-0004\0nvidia,tegra234\0"sv) == "NVIDIA Jetson Orin Nano 4GB");
    // The Thor modules (meta-tegra's machine configurations: T5000 p3834-0008, T4000
    // p3834-0000); the developer kit's compatible as jetson_stats issue 711 shows it.
    CHECK(row("nvidia,p4071-0000+p3834-0008\0nvidia,p3834-0008\0nvidia,tegra264\0"sv) == "NVIDIA Jetson T5000");
    CHECK(row("nvidia,p4071-0000+p3834-0000\0nvidia,tegra264\0"sv) == "NVIDIA Jetson T4000");
    CHECK(row("nvidia,p4071-0000+p3834-0005\0nvidia,tegra264\0"sv) == "(none)");
    // Every module's row is a Jetson GPU sharing the module's memory, with a bandwidth.
    for (auto part : {"p3701-0004", "p3701-0005", "p3767-0000", "p3767-0001", "p3767-0003", "p3767-0004", "p3767-0005",
                      "p3834-0000", "p3834-0008"}) {
        CAPTURE(part);
        const auto* s = ah::jetson_module_gpu("nvidia," + std::string(part));
        REQUIRE(s != nullptr);
        CHECK(s->kind == ah::device_kind::cuda_gpu);
        CHECK(s->memory == ah::memory_type::unified);
        CHECK(s->memory_bandwidth_gbps > 0);
        CHECK(std::string_view(s->arch) == (std::string_view(part).starts_with("p3834") ? "11.0" : "8.7"));
    }
    // Modules without a row, other boards, the chip alone, and malformed text: none.
    CHECK(row("nvidia,p3740-0002+p3701-0008\0nvidia,p3701-0008\0nvidia,tegra234\0"sv) == "(none)");
    CHECK(row("nvidia,tegra234\0"sv) == "(none)");
    CHECK(row("raspberrypi,5-model-b\0brcm,bcm2712\0"sv) == "(none)");
    CHECK(row("acme,p3767-0005\0"sv) == "(none)"); // not NVIDIA's
    CHECK(row("nvidia,p3767-00050\0"sv) == "(none)");
    CHECK(row(""sv) == "(none)");
    CHECK(row("\0\0\0"sv) == "(none)");
    CHECK(row("nvidia,\0nvidia,+\0nvidia,++p3767\0"sv) == "(none)");
    CHECK(row("nvidia,+p3767-0004+"sv) == "NVIDIA Jetson Orin Nano 4GB");
    // JetPack 6.2's Super flash of the Orin Nano 8GB, told by the model; other modules and
    // models keep their data-sheet rows.
    const auto nano = "nvidia,p3768-0000+p3767-0005\0nvidia,p3767-0005\0nvidia,tegra234\0"sv;
    const auto super_row = [](std::string_view compatible, std::string_view model) {
        const auto* s = ah::jetson_module_gpu(compatible, model);
        return s ? std::string(s->name) : std::string("(none)");
    };
    CHECK(super_row(nano, "NVIDIA Jetson Orin Nano Engineering Reference Developer Kit Super\0"sv) ==
          "NVIDIA Jetson Orin Nano 8GB Super");
    CHECK(super_row(nano, "NVIDIA Jetson Orin Nano Engineering Reference Developer Kit Super\n"sv) ==
          "NVIDIA Jetson Orin Nano 8GB Super");
    CHECK(super_row(nano, "NVIDIA Jetson Orin Nano Developer Kit\0"sv) == "NVIDIA Jetson Orin Nano 8GB");
    CHECK(super_row(nano, "Superb board"sv) == "NVIDIA Jetson Orin Nano 8GB");
    CHECK(super_row("nvidia,p3767-0004\0"sv, "NVIDIA Jetson Orin Nano 4GB Super\0"sv) == "NVIDIA Jetson Orin Nano 4GB");
    CHECK(super_row("nvidia,p3701-0005\0"sv, "Super\0"sv) == "NVIDIA Jetson AGX Orin 64GB");
    CHECK(super_row("raspberrypi,5-model-b\0"sv, "Raspberry Pi 5 Super\0"sv) == "(none)");
    CHECK(super_row(nano, "\0\0\n\0"sv) == "NVIDIA Jetson Orin Nano 8GB");
    static_assert(ah::jetson_module_gpu("nvidia,p3701-0005") == ah::find_device("NVIDIA Jetson AGX Orin 64GB"));
}

TEST_CASE("parse_nvidia_smi_query_csv: units, unavailable values, header detection (hand-made)") {
    SUBCASE("values with units are read like values without") {
        const auto r = ah::parse_nvidia_smi_query_csv(
            "memory.total [MiB], power.draw [W], utilization.gpu [%], clocks.max.memory [MHz]\n"
            "81559 MiB, 350.00 W, 65 %, 2619 MHz\n");
        INFO(problems_of(r.problems));
        CHECK(r.problems.empty());
        REQUIRE(r.devices.size() == 1);
        CHECK(*r.devices[0].memory_bytes == 81559 * mib);
        CHECK(*r.devices[0].power_draw_watts == 350.0);
        CHECK(*r.devices[0].utilization_percent == 65.0);
        REQUIRE(r.max_memory_clock_mhz.size() == 1);
        CHECK(*r.max_memory_clock_mhz[0] == 2619u);
    }
    SUBCASE("[N/A], [Not Supported] and N/A are unknown, not zero, not a problem") {
        const auto r = ah::parse_nvidia_smi_query_csv("[N/A], [Not Supported], N/A\n",
                                                      "power.limit,memory.total,temperature.gpu");
        INFO(problems_of(r.problems));
        CHECK(r.problems.empty());
        REQUIRE(r.devices.size() == 1);
        CHECK_FALSE(r.devices[0].power_limit_watts.has_value());
        CHECK_FALSE(r.devices[0].memory_bytes.has_value());
        CHECK_FALSE(r.devices[0].temperature_c.has_value());
    }
    SUBCASE("a device in trouble is listed unavailable, with the reason") {
        for (const char* v : {"[GPU is lost]", "[GPU requires reset]", "[Unknown Error]"}) {
            CAPTURE(v);
            const auto r = ah::parse_nvidia_smi_query_csv(std::string("0, ") + v + ", 4\n", "index,memory.total,memory.used");
            INFO(problems_of(r.problems));
            CHECK(r.problems.empty());
            REQUIRE(r.devices.size() == 1);
            CHECK_FALSE(r.devices[0].available);
            CHECK_FALSE(r.devices[0].memory_bytes.has_value());
            CHECK(r.devices[0].memory_used_bytes.has_value());
            REQUIRE(r.device_errors.size() == 1);
            CHECK(r.device_errors[0] == std::string("memory.total reported \"") + v + "\"");
        }
        const auto fine = ah::parse_nvidia_smi_query_csv("0, 81559\n", "index,memory.total");
        REQUIRE(fine.device_errors.size() == 1);
        CHECK(fine.device_errors[0].empty());
        CHECK(fine.devices[0].available);
    }
    SUBCASE("a GPU nvidia-smi cannot open, in place of its row") {
        // The line as NVIDIA/open-gpu-kernel-modules#387 and NVIDIA/nvidia-docker#1553 quote
        // it ("for GPU 0000:0B:00.0"), and as current drivers print it (no space).
        for (const char* gap : {"", " "}) {
            CAPTURE(gap);
            const auto r = ah::parse_nvidia_smi_query_csv(
                std::string("0, 00000000:19:00.0, 81559\nUnable to determine the device handle for GPU") + gap +
                    "0000:4C:00.0: Unknown Error\n2, 00000000:5D:00.0, 81559\n",
                "index,pci.bus_id,memory.total");
            INFO(problems_of(r.problems));
            CHECK(r.problems.empty());
            REQUIRE(r.devices.size() == 3);
            REQUIRE(r.device_errors.size() == 3);
            CHECK(r.devices[0].available);
            CHECK_FALSE(r.devices[1].available);
            CHECK(r.devices[1].index == 1);
            REQUIRE(r.devices[1].pci.has_value());
            CHECK(*r.devices[1].pci == *ah::parse_pci_address("0000:4c:00.0"));
            CHECK(r.device_errors[1] == "nvidia-smi cannot open it: \"Unknown Error\"");
            CHECK(r.devices[2].index == 2);
            CHECK(r.devices[2].available);
            CHECK(r.max_memory_clock_mhz.size() == 3);
            CHECK(r.mig_enabled.size() == 3);
        }
    }
    SUBCASE("a header wins over the field list") {
        const auto r = ah::parse_nvidia_smi_query_csv("name, memory.total [MiB]\nNVIDIA A10, 23028 MiB\n",
                                                      "memory.total,name");
        CHECK(r.problems.empty());
        REQUIRE(r.devices.size() == 1);
        CHECK(r.devices[0].name.view() == "NVIDIA A10");
    }
    SUBCASE("every mapped field") {
        const auto r = ah::parse_nvidia_smi_query_csv(
            "3, GPU-00000000-1111-2222-3333-444444444444, NVIDIA H100 80GB HBM3, 00000000:1B:00.0, 0x233010DE, "
            "81559, 4, 81003, 9.0, 550.90.07, 700.00, 71.50, 33, 12, 2619, 4, 5, 8, 16, Enabled\n",
            ah::detail::nvidia::query_field_list());
        INFO(problems_of(r.problems));
        CHECK(r.problems.empty());
        REQUIRE(r.devices.size() == 1);
        const auto& d = r.devices[0];
        CHECK(d.index == 3);
        CHECK(d.uuid.view() == "GPU-00000000-1111-2222-3333-444444444444");
        CHECK(*d.pci == ah::pci_address{0, 0x1b, 0, 0});
        CHECK(d.pci_device_id == 0x2330);
        CHECK(*d.memory_used_bytes == 4 * mib);
        CHECK(d.arch.view() == "9.0");
        CHECK(d.driver_version.view() == "550.90.07");
        CHECK(*d.power_limit_watts == 700.0);
        CHECK(d.power_limit_watts.from == ah::origin::tool);
        CHECK(*d.power_draw_watts == 71.5);
        CHECK(*d.temperature_c == 33);
        CHECK(*d.utilization_percent == 12);
        CHECK(*r.max_memory_clock_mhz[0] == 2619u);
        CHECK(r.mig_enabled[0] == true);
        CHECK(*d.pcie_current == ah::pcie_link{4, 8});
        CHECK(*d.pcie_max == ah::pcie_link{5, 16});
        CHECK(d.pcie_max.from == ah::origin::tool);
        REQUIRE(d.spec != nullptr);
        CHECK(d.spec->name == "NVIDIA H100 SXM5 80GB");
        CHECK(d.memory_bandwidth_gbps.from == ah::origin::catalogue);
    }
}

TEST_CASE("parse_nvidia_smi_query_csv: hostile input never crashes and is reported") {
    CHECK(ah::parse_nvidia_smi_query_csv("", "name").devices.empty());
    CHECK(ah::parse_nvidia_smi_query_csv("", "name").problems.empty());
    CHECK(ah::parse_nvidia_smi_query_csv("\n\n  \n", "name").devices.empty());

    // No header and no field list: nothing can be named.
    auto r = ah::parse_nvidia_smi_query_csv("81559, 12\n");
    CHECK(r.devices.empty());
    CHECK(r.problems.size() == 1);

    // Garbage: rows with the wrong number of values are skipped.
    r = ah::parse_nvidia_smi_query_csv("\x01\x02garbage, more, still more\n%%%", "name,memory.total");
    CHECK(r.devices.empty());
    CHECK(r.problems.size() == 2);

    // A fraction where a whole number belongs is malformed, not out of range.
    r = ah::parse_nvidia_smi_query_csv("1.5, 4.0\n", "index,pcie.link.gen.max");
    REQUIRE(r.problems.size() == 2);
    for (const auto& p : r.problems) CHECK(p.kind == ah::warning_kind::parse_error);
    // pcie.link.gen.gpumax is the GPU's own ceiling, not the link's: an RTX 4090 in a Gen3
    // slot (as q-x_rtx4090_driver535.xml shows it: max 3, device max 4) links at most at 3.
    r = ah::parse_nvidia_smi_query_csv("name, pcie.link.gen.max, pcie.link.gen.gpumax, pcie.link.width.max\n"
                                       "NVIDIA GeForce RTX 4090, 3, 4, 16\n");
    REQUIRE(r.devices.size() == 1);
    CHECK(*r.devices[0].pcie_max == ah::pcie_link{3, 16});

    // Out of range and negative numbers: unknown, with a problem each.
    r = ah::parse_nvidia_smi_query_csv("1000000000000000000000000000000 MiB, -5, -1, 101\n",
                                       "memory.total,power.draw,memory.used,utilization.gpu");
    REQUIRE(r.devices.size() == 1);
    CHECK_FALSE(r.devices[0].memory_bytes.has_value());
    CHECK_FALSE(r.devices[0].power_draw_watts.has_value());
    CHECK_FALSE(r.devices[0].memory_used_bytes.has_value());
    CHECK_FALSE(r.devices[0].utilization_percent.has_value());
    CHECK(r.problems.size() == 4);
    r = ah::parse_nvidia_smi_query_csv(std::string(400, '9') + "\n", "memory.total");
    CHECK(r.problems.size() == 1);
    r = ah::parse_nvidia_smi_query_csv("nan, inf, 0x12345678, 9.x, 00:zz.0\n",
                                       "power.draw,temperature.gpu,pci.device_id,compute_cap,pci.bus_id");
    REQUIRE(r.devices.size() == 1);
    CHECK(r.problems.size() == 5);
    CHECK(r.devices[0].pci_device_id == 0);
    CHECK(r.devices[0].arch.empty());

    // Non-UTF-8 and control characters in a name: replaced, reported.
    r = ah::parse_nvidia_smi_query_csv("NVIDIA \xff\xfe A\x07" "100\n", "name");
    REQUIRE(r.devices.size() == 1);
    CHECK(r.devices[0].name.view() == "NVIDIA ?? A?100");
    CHECK(r.problems.size() == 1);

    // 100 000 columns: one row of the wrong width, one problem.
    std::string wide;
    for (int i = 0; i < 100'000; ++i) wide += "1, ";
    wide += "1\n";
    r = ah::parse_nvidia_smi_query_csv(wide, "memory.total");
    CHECK(r.devices.empty());
    CHECK(r.problems.size() == 1);
    // …and as many fields: read, unmapped columns ignored.
    std::string fields;
    for (int i = 0; i < 100'000; ++i) fields += "fan.speed,";
    fields += "memory.total";
    r = ah::parse_nvidia_smi_query_csv(wide, fields);
    INFO(problems_of(r.problems));
    CHECK(r.problems.empty());
    REQUIRE(r.devices.size() == 1);
    CHECK(*r.devices[0].memory_bytes == mib);

    // Missing columns.
    r = ah::parse_nvidia_smi_query_csv("NVIDIA A10\nNVIDIA A10, 23028\n", "name,memory.total");
    REQUIRE(r.devices.size() == 1);
    CHECK(r.problems.size() == 1);
    CHECK(r.problems[0].line == 1);

    // Many bad lines: problems are capped, the last one counts the rest.
    std::string many;
    for (int i = 0; i < 5000; ++i) many += "x, y\n";
    r = ah::parse_nvidia_smi_query_csv(many, "name");
    CHECK(r.problems.size() == ah::detail::nvidia::max_problems + 1);
}

TEST_CASE("parse_nvidia_smi_list") {
    SUBCASE("A100 80GB PCIe with 2x MIG 3g.40gb") {
        const auto t = test::capture("nvidia-smi/L_a100-80gb-pcie_mig-2x3g.40gb.txt");
        if (!t) return;
        const auto r = ah::parse_nvidia_smi_list(*t);
        INFO(problems_of(r.problems));
        CHECK(r.problems.empty());
        REQUIRE(r.gpus.size() == 1);
        CHECK(r.gpus[0].index == 0);
        CHECK(r.gpus[0].name.view() == "NVIDIA A100 80GB PCIe");
        CHECK(r.gpus[0].uuid.view() == "GPU-932bfb2c-849a-2a22-1e84-9eff6bc02b39");
        CHECK(r.gpus[0].kind == ah::device_kind::cuda_gpu);
        REQUIRE(r.gpus[0].spec != nullptr);
        CHECK(r.gpus[0].spec->name == "NVIDIA A100 PCIe 80GB");
        REQUIRE(r.mig.size() == 2);
        CHECK(r.mig[0] == ah::nvidia_mig_instance{0, 0, "3g.40gb", "MIG-0929581a-2be6-5dec-bf34-0954c6c529a6"});
        CHECK(r.mig[1] == ah::nvidia_mig_instance{0, 1, "3g.40gb", "MIG-3adbed3a-d03d-549f-a016-ba1fd7359f23"});
    }
    SUBCASE("A100 SXM4 80GB with 7x MIG 1g.10gb") {
        const auto t = test::capture("nvidia-smi/L_a100-80gb-sxm4_mig-7x1g.10gb.txt");
        if (!t) return;
        const auto r = ah::parse_nvidia_smi_list(*t);
        INFO(problems_of(r.problems));
        CHECK(r.problems.empty());
        REQUIRE(r.gpus.size() == 1);
        CHECK(r.gpus[0].name.view() == "NVIDIA A100-SXM4-80GB");
        CHECK(r.gpus[0].uuid.view() == "GPU-7fdaf0a5-179b-f636-d15d-daf243e3ff16");
        REQUIRE(r.mig.size() == 7);
        for (std::uint32_t i = 0; i < 7; ++i) {
            CHECK(r.mig[i].parent_index == 0);
            CHECK(r.mig[i].device_index == i);
            CHECK(r.mig[i].profile == "1g.10gb");
        }
        CHECK(r.mig[6].uuid == "MIG-1aae4990-b962-574e-8375-119d6d9b9687");
    }
    SUBCASE("hand-made: two GPUs, MIG parents follow the GPU lines") {
        const auto r = ah::parse_nvidia_smi_list("GPU 0: A (UUID: GPU-a)\nGPU 1: B (UUID: GPU-b)\n"
                                                 "  MIG 1g.5gb Device 0: (UUID: MIG-GPU-b/1/0)\n");
        CHECK(r.problems.empty());
        REQUIRE(r.gpus.size() == 2);
        CHECK(r.gpus[1].index == 1);
        REQUIRE(r.mig.size() == 1);
        CHECK(r.mig[0].parent_index == 1);
        CHECK(r.mig[0].uuid == "MIG-GPU-b/1/0");
    }
    SUBCASE("a GPU line not understood: the MIG lines under it belong to no GPU read") {
        // hand-made: the second GPU's line lost its ")". Before, its instance was given to
        // the first GPU, which the probe then marked unavailable as a MIG parent.
        const auto r = ah::parse_nvidia_smi_list("GPU 0: NVIDIA H100 80GB HBM3 (UUID: GPU-a)\n"
                                                 "GPU 1: NVIDIA A100-SXM4-80GB (UUID: GPU-b\n"
                                                 "  MIG 3g.40gb Device 0: (UUID: MIG-c)\n");
        REQUIRE(r.gpus.size() == 1);
        CHECK(r.mig.empty());
        CHECK(r.problems.size() == 2);
    }
    SUBCASE("hostile input") {
        CHECK(ah::parse_nvidia_smi_list("").gpus.empty());
        CHECK(ah::parse_nvidia_smi_list("").problems.empty());
        CHECK(ah::parse_nvidia_smi_list("No devices were found\n").problems.empty());
        auto r = ah::parse_nvidia_smi_list("garbage\nGPU x: (UUID: )\nGPU 99999999999999999999: A (UUID: GPU-1)\n"
                                           "  MIG 1g.5gb Device 0: (UUID: MIG-1)\nGPU 0: (UUID: GPU-2)\n");
        CHECK(r.gpus.empty());
        CHECK(r.mig.empty());
        CHECK(r.problems.size() == 5);
        r = ah::parse_nvidia_smi_list("GPU 0: \xff\xfe (UUID: GPU-1)\n");
        REQUIRE(r.gpus.size() == 1);
        CHECK(r.problems.size() == 1);
        CHECK(ah::parse_nvidia_smi_list(std::string(100'000, ',')).problems.size() == 1);
    }
}

TEST_CASE("detail::formats::sniff_nvidia_csv / sniff_nvidia_list") {
    namespace f = ah::detail::formats;
    if (const auto t = test::capture("nvidia-smi/query-gpu_tesla-p100.csv")) {
        CHECK(f::sniff_nvidia_csv(*t) == 90);
        CHECK(f::sniff_nvidia_list(*t) == 0);
        ah::capture_parse out;
        out.format = "nvidia-smi-query-csv";
        f::parse_nvidia_csv_capture(*t, out);
        CHECK(out.warnings.empty());
        REQUIRE(out.devices.size() == 1);
        CHECK(out.devices[0].name.view() == "Tesla P100-PCIE-16GB");
    }
    for (const char* file : {"nvidia-smi/L_a100-80gb-pcie_mig-2x3g.40gb.txt",
                             "nvidia-smi/L_a100-80gb-sxm4_mig-7x1g.10gb.txt"}) {
        CAPTURE(file);
        const auto t = test::capture(file);
        if (!t) continue;
        CHECK(f::sniff_nvidia_list(*t) == 90);
        CHECK(f::sniff_nvidia_csv(*t) == 0);
        ah::capture_parse out;
        out.format = "nvidia-smi-list";
        f::parse_nvidia_list_capture(*t, out);
        CHECK(out.warnings.empty());
        CHECK(out.devices.size() == 1);
    }
    // Header-less captures cannot be named, so they are not claimed.
    if (const auto t = test::capture("nvidia-smi/query-gpu_name-deviceid_h100-nvl_noheader.csv"))
        CHECK(f::sniff_nvidia_csv(*t) == 0);
    CHECK(f::sniff_nvidia_csv("index, name\n0, NVIDIA A10\n") == 90);
    CHECK(f::sniff_nvidia_csv("memory.total [MiB]\n81559 MiB\n") == 90);
    CHECK(f::sniff_nvidia_csv("") == 0);
    CHECK(f::sniff_nvidia_csv("MemTotal: 1 kB\n") == 0);
    CHECK(f::sniff_nvidia_list("GPU 0: x\n") == 0);
    CHECK(f::sniff_nvidia_list("") == 0);

    ah::capture_parse empty;
    empty.format = "nvidia-smi-list";
    f::parse_nvidia_list_capture("", empty);
    CHECK(test::count_kind(empty.warnings, ah::warning_kind::parse_error) == 1);
}

#endif // AI_HWACCEL_BACKEND_CUDA
