#include "ai_hwaccel/detect/amd_smi.hpp"

#include "fixtures.hpp"

#include <doctest/doctest.h>

#include <filesystem>
#include <string>
#include <vector>

#if AI_HWACCEL_BACKEND_ROCM

namespace ah = ai_hwaccel;

namespace {

constexpr std::uint64_t mib = 1024ull * 1024;

std::string problems_of(const std::vector<ah::parse_problem>& ps) {
    std::string s;
    for (const auto& p : ps) s += std::to_string(p.line) + ": " + p.message + "\n";
    return s;
}

bool same_pci(const ah::accelerator_profile& d, std::uint32_t domain, std::uint8_t bus) {
    return d.pci && *d.pci == ah::pci_address{domain, bus, 0, 0};
}

void check_amd_gpu(const ah::accelerator_profile& d) {
    CHECK(d.kind == ah::device_kind::rocm_gpu);
    CHECK(d.maker == ah::vendor::amd);
}

} // namespace

TEST_CASE("parse_rocm_smi: real text captures") {
    SUBCASE("--showproductname, 2x MI210 (tabs)") {
        const auto t = test::capture("rocm-smi/showproductname_2x-mi210.txt");
        if (!t) return;
        const auto r = ah::parse_rocm_smi(*t);
        INFO(problems_of(r.problems));
        CHECK(r.problems.empty());
        REQUIRE(r.devices.size() == 2);
        for (std::uint32_t i = 0; i < 2; ++i) {
            const auto& d = r.devices[i];
            check_amd_gpu(d);
            CHECK(d.index == i);
            CHECK(d.name.view() == "Instinct MI210");
            CHECK(d.pci_device_id == 0x740f); // "Card Model" beside "Subsystem ID"
            CHECK(d.arch.view() == "gfx90a");
            REQUIRE(d.spec != nullptr);
            CHECK(d.spec->name == "AMD Instinct MI210");
            CHECK(d.memory_bytes.from == ah::origin::catalogue); // not in this output
            CHECK(d.memory_bandwidth_gbps.from == ah::origin::catalogue);
        }
    }
    SUBCASE("--showmeminfo vram, one 4 GiB GPU") {
        const auto t = test::capture("rocm-smi/showmeminfo-vram_4gb-gpu.txt");
        if (!t) return;
        const auto r = ah::parse_rocm_smi(*t);
        INFO(problems_of(r.problems));
        CHECK(r.problems.empty());
        REQUIRE(r.devices.size() == 1);
        CHECK(*r.devices[0].memory_bytes == 4278190080ull);
        CHECK(r.devices[0].memory_bytes.from == ah::origin::tool);
        CHECK(*r.devices[0].memory_used_bytes == 108814336ull);
        CHECK(r.devices[0].name.empty());
        CHECK(r.devices[0].spec == nullptr);
    }
    SUBCASE("--showuniqueid, 2x MI210") {
        const auto t = test::capture("rocm-smi/showuniqueid_2x-mi210_valid.txt");
        if (!t) return;
        const auto r = ah::parse_rocm_smi(*t);
        INFO(problems_of(r.problems));
        CHECK(r.problems.empty());
        REQUIRE(r.devices.size() == 2);
        CHECK(r.devices[0].uuid.view() == "0x67c63ac3c3c637f9");
        CHECK(r.devices[1].uuid.view() == "0x95a1ca7691e7c391");
        CHECK(r.devices[1].index == 1);
    }
    SUBCASE("concise table, 2x MI210, ROCm 6.3") {
        const auto t = test::capture("rocm-smi/concise_2x-mi210_rocm6.3.txt");
        if (!t) return;
        const auto r = ah::parse_rocm_smi(*t);
        INFO(problems_of(r.problems));
        CHECK(r.problems.empty());
        REQUIRE(r.devices.size() == 2);
        const auto& d = r.devices[0];
        CHECK(d.pci_device_id == 0x740f);
        CHECK(*d.temperature_c == 42.0);
        CHECK(*d.power_draw_watts == 39.0);
        CHECK(*d.power_limit_watts == 300.0);
        CHECK(d.power_limit_watts.from == ah::origin::tool);
        CHECK(*d.utilization_percent == 0.0);
        REQUIRE(d.spec != nullptr);
        CHECK(d.spec->name == "AMD Instinct MI210");
        CHECK(*r.devices[1].temperature_c == 30.0);
        CHECK(*r.devices[1].power_draw_watts == 40.0);
        CHECK(r.devices[1].index == 1);
    }
    SUBCASE("concise table with Partitions column, Strix Halo APU (two rows share its id, nothing here tells which)") {
        const auto t = test::capture("rocm-smi/concise_strix-halo-apu_partitions-column.txt");
        if (!t) return;
        const auto r = ah::parse_rocm_smi(*t);
        INFO(problems_of(r.problems));
        CHECK(r.problems.empty());
        REQUIRE(r.devices.size() == 1);
        const auto& d = r.devices[0];
        CHECK(d.pci_device_id == 0x1586);
        CHECK(*d.temperature_c == 39.0);
        CHECK(*d.power_draw_watts == doctest::Approx(13.057));
        CHECK_FALSE(d.power_limit_watts.has_value()); // PwrCap N/A
        CHECK(d.spec == nullptr);
    }
}

TEST_CASE("parse_rocm_smi: real CSV captures") {
    SUBCASE("--showproductname --csv, 2x MI100: the old 'Card model' is the subsystem") {
        const auto t = test::capture("rocm-smi/showproductname-csv_2x-mi100.csv");
        if (!t) return;
        const auto r = ah::parse_rocm_smi(*t);
        INFO(problems_of(r.problems));
        CHECK(r.problems.empty());
        REQUIRE(r.devices.size() == 2);
        for (std::uint32_t i = 0; i < 2; ++i) {
            const auto& d = r.devices[i];
            CHECK(d.index == i);
            CHECK(d.name.view() == "Arcturus GL-XL [AMD Instinct MI100]");
            CHECK(d.pci_device_id == 0); // 0x0c34 is the subsystem, not the device
            REQUIRE(d.spec != nullptr);  // by name
            CHECK(d.spec->name == "AMD Instinct MI100");
        }
    }
    SUBCASE("--showdriverversion --csv: the system row") {
        const auto t = test::capture("rocm-smi/showdriverversion-csv_mi100.csv");
        if (!t) return;
        const auto r = ah::parse_rocm_smi(*t);
        INFO(problems_of(r.problems));
        CHECK(r.problems.empty());
        CHECK(r.devices.empty());
        CHECK(r.driver_version == "4.18.0-348.12.2.el8_5.x86_64");
    }
    SUBCASE("--showproductname --showuse --showmeminfo vram --csv, RX 7900 XT") {
        const auto t = test::capture("rocm-smi/showproductname-showuse-showmeminfo-vram-csv_rx7900xt.csv");
        if (!t) return;
        const auto r = ah::parse_rocm_smi(*t);
        INFO(problems_of(r.problems));
        CHECK(r.problems.empty());
        REQUIRE(r.devices.size() == 1);
        const auto& d = r.devices[0];
        CHECK(d.name.view() == "Radeon RX 7900 XT");
        CHECK(d.pci_device_id == 0x744c);
        CHECK(*d.memory_bytes == 21458059264ull);
        CHECK(*d.memory_used_bytes == 27856896ull);
        CHECK(*d.utilization_percent == 0.0);
        CHECK(d.arch.view() == "gfx1100");
        REQUIRE(d.spec != nullptr); // 0x744c is three rows: matched by name
        CHECK(d.spec->name == "AMD Radeon RX 7900 XT");
    }
}

TEST_CASE("parse_rocm_smi: real JSON captures") {
#if AI_HWACCEL_JSON
    SUBCASE("RX 7900 XT, same run as the CSV") {
        const auto t = test::capture("rocm-smi/showproductname-showuse-showmeminfo-vram-json_rx7900xt.json");
        if (!t) return;
        const auto r = ah::parse_rocm_smi(*t);
        INFO(problems_of(r.problems));
        CHECK(r.problems.empty());
        REQUIRE(r.devices.size() == 1);
        const auto& d = r.devices[0];
        CHECK(d.index == 0);
        CHECK(d.name.view() == "Radeon RX 7900 XT");
        CHECK(d.pci_device_id == 0x744c);
        CHECK(*d.memory_bytes == 21458059264ull);
        CHECK(*d.memory_used_bytes == 27856896ull);
        REQUIRE(d.spec != nullptr);
        CHECK(d.spec->name == "AMD Radeon RX 7900 XT");
    }
    SUBCASE("MI250X GCD, HPE board name") {
        const auto t = test::capture("rocm-smi/showproductname-json_mi250x.json");
        if (!t) return;
        const auto r = ah::parse_rocm_smi(*t);
        INFO(problems_of(r.problems));
        CHECK(r.problems.empty());
        REQUIRE(r.devices.size() == 1);
        const auto& d = r.devices[0];
        CHECK(d.name.view() == "AMD INSTINCT MI200 (MCM) OAM LC MBA HPE C2");
        CHECK(d.pci_device_id == 0x7408);
        CHECK(d.arch.view() == "gfx90a"); // "gfx9010" as this rocm-smi printed it: stepping 10
        REQUIRE(d.spec != nullptr);        // by PCI id
        CHECK(d.spec->name == "AMD Instinct MI250X GCD"); // the row of the device the OS lists
        CHECK(*d.memory_bytes == 64ull << 30);
    }
#else
    const auto r = ah::parse_rocm_smi("{\"card0\": {}}");
    CHECK(r.devices.empty());
    CHECK(r.problems.size() == 1);
#endif
}

TEST_CASE("parse_rocm_smi: other forms (hand-made, shaped as rocm_smi.py prints them)") {
    SUBCASE("text driver version and several flags merged") {
        const auto r = ah::parse_rocm_smi("======= ROCm System Management Interface =======\n"
                                          "Driver version: 6.10.5\n"
                                          "GPU[1]\t\t: Device Name: \t\tAMD Instinct MI300X\n"
                                          "GPU[1]\t\t: Device ID: \t\t0x74a1\n"
                                          "GPU[1]\t\t: PCI Bus: 0000:1B:00.0\n"
                                          "GPU[1]\t\t: Not supported on the given system\n"
                                          "GPU[1]\t\t: Max Graphics Package Power (W): 750.0\n");
        INFO(problems_of(r.problems));
        CHECK(r.problems.empty());
        CHECK(r.driver_version == "6.10.5");
        REQUIRE(r.devices.size() == 1);
        const auto& d = r.devices[0];
        CHECK(d.index == 1);
        CHECK(d.driver_version.view() == "6.10.5");
        CHECK(d.pci_device_id == 0x74a1);
        CHECK(same_pci(d, 0, 0x1b));
        CHECK(*d.power_limit_watts == 750.0);
        REQUIRE(d.spec != nullptr);
        CHECK(d.spec->name == "AMD Instinct MI300X");
    }
    SUBCASE("sysfs-era Unique ID: the kernel's 16 hex digits, no 0x") {
        const auto r = ah::parse_rocm_smi("GPU[0]\t\t: Unique ID: 0dac90a172da5f19\n"
                                          "GPU[0]\t\t: GFX Version: gfx9012\n");
        INFO(problems_of(r.problems));
        CHECK(r.problems.empty());
        REQUIRE(r.devices.size() == 1);
        CHECK(r.devices[0].uuid.view() == "0dac90a172da5f19");
        CHECK(r.devices[0].arch.view() == "gfx90c");
        CHECK(ah::parse_rocm_smi("GPU[0]\t\t: Unique ID: 0dac90a172da5f1\n").problems.size() == 1);  // 15 digits
        CHECK(ah::parse_rocm_smi("GPU[0]\t\t: Unique ID: 0dac90a172da5f1g\n").problems.size() == 1); // not hex
    }
    SUBCASE("newer system CSV form") {
        const auto r = ah::parse_rocm_smi("name, value\n\"Driver version\", \"6.7.0\"\n");
        CHECK(r.problems.empty());
        CHECK(r.driver_version == "6.7.0");
    }
    SUBCASE("a long UTF-8 driver version is cut between characters") {
        // hand-made: two bytes, then 20 two-byte characters, past the 31-byte cap.
        std::string v = "60";
        for (int i = 0; i < 20; ++i) v += "\xC3\xA9";
        for (const auto& text : {"name, value\n\"Driver version\", \"" + v + "\"\n",
                                 "{\"system\": {\"Driver version\": \"" + v + "\"}}"}) {
            const auto r = ah::parse_rocm_smi(text);
            CHECK(r.problems.empty());
            CHECK(r.driver_version == v.substr(0, 30)); // "60" and 14 whole characters
        }
    }
    SUBCASE("'[Model : Revision]' concise layouts as published: the cell is the subsystem") {
        // rocm-smi 6.0-6.2's concise table puts the board's subsystem id in "[Model :
        // Revision]" (an MI210's 0x0c34, an MI250X's 0x0b0c, the CSV's "Card model"), not
        // its device id (0x740f, 0x7408); the name line under it may be a name cut to 20
        // characters, a device id where the tool has no name, and a name in the cell may
        // be cut before its "]". Rows as AMD's and LUMI's pages and GitHub issues show them.
        const std::string head = "==== ROCm System Management Interface ====\n"
                                 "Device  [Model : Revision]    Temp    Power  Partitions      SCLK    MCLK     Fan  "
                                 "Perf  PwrCap  VRAM%  GPU%  \n"
                                 "        Name (20 chars)       (Edge)  (Avg)  (Mem, Compute)\n=====\n";
        auto r = ah::parse_rocm_smi(head +
                                    "0       [0x0c34 : 0x02]       34.0\xC2\xB0" "C  43.0W  N/A, N/A        800Mhz  1600Mhz  "
                                    "0%   auto  300.0W    0%   0%    \n        Instinct MI210\n=====\n");
        INFO(problems_of(r.problems));
        CHECK(r.problems.empty());
        REQUIRE(r.devices.size() == 1);
        CHECK(r.devices[0].pci_device_id != 0x0c34);
        CHECK(r.devices[0].name.view() == "Instinct MI210");
        REQUIRE(r.devices[0].spec != nullptr); // by its name
        CHECK(r.devices[0].spec->name == "AMD Instinct MI210");
        CHECK(*r.devices[0].power_draw_watts == 43.0);

        // No name: the line holds a device id, which is no name.
        r = ah::parse_rocm_smi(head + "0       [0x5200 : 0xc8]       30.0\xC2\xB0" "C  10.0W  N/A, N/A        0Mhz    96Mhz    "
                                      "0%   auto  327.0W    0%   0%\n        0x744c\n=====\n");
        INFO(problems_of(r.problems));
        CHECK(r.problems.empty());
        REQUIRE(r.devices.size() == 1);
        CHECK(r.devices[0].pci_device_id != 0x5200);
        CHECK(r.devices[0].name.empty());
        CHECK(*r.devices[0].power_limit_watts == 327.0);

        // A name cut inside the bracket: the row's cells are where the header's columns are.
        r = ah::parse_rocm_smi(
            "==== ROCm System Management Interface ====\n"
            "Device  [Model : Revision]    Temp    Power     Partitions      SCLK    MCLK     Fan     Perf  PwrCap  VRAM%  GPU%  \n"
            "        Name (20 chars)       (Edge)  (Socket)  (Mem, Compute)\n=====\n"
            "0       [Radeon Pro Duo : 0x  30.0\xC2\xB0" "C  11.08W    N/A, N/A        567Mhz  300Mhz   19.22%  auto  98.0W     0%   0%    \n"
            "        Ellesmere [Radeon Pr\n=====\n");
        INFO(problems_of(r.problems));
        CHECK(r.problems.empty());
        REQUIRE(r.devices.size() == 1);
        CHECK(*r.devices[0].temperature_c == 30.0);
        CHECK(*r.devices[0].power_draw_watts == doctest::Approx(11.08));
        CHECK(*r.devices[0].power_limit_watts == 98.0);
        CHECK(r.devices[0].name.view() == "Ellesmere [Radeon Pr");
    }
    SUBCASE("'[Model : Revision]' concise layout, name on the next line") {
        const auto r = ah::parse_rocm_smi(
            "==== ROCm System Management Interface ====\n"
            "Device  [Model : Revision]    Temp        Power     Partitions      SCLK    MCLK    Fan  Perf  PwrCap  VRAM%  GPU%\n"
            "        Name (20 chars)       (Junction)  (Socket)  (Mem, Compute)\n"
            "=====\n"
            "0       [0x74a1 : 0x00]       35.0\xC2\xB0" "C      133.0W    NPS1, SPX       131Mhz  900Mhz  0%   auto  750.0W    0%   0%\n"
            "        AMD Instinct MI300X\n"
            "=====\n");
        INFO(problems_of(r.problems));
        CHECK(r.problems.empty());
        REQUIRE(r.devices.size() == 1);
        CHECK(r.devices[0].name.view() == "AMD Instinct MI300X");
        // 0x74a1 in the cell is the MI300X's subsystem id, which equals its device id:
        // the cell is not read as the device.
        CHECK(*r.devices[0].power_draw_watts == 133.0);
        REQUIRE(r.devices[0].spec != nullptr);
        CHECK(r.devices[0].spec->name == "AMD Instinct MI300X");
    }
#if AI_HWACCEL_JSON
    SUBCASE("JSON with a system block and N/A") {
        const auto r = ah::parse_rocm_smi(
            "{\"card0\": {\"Card series\": \"Navi 31 [Radeon RX 7900 XT/7900 XTX]\", \"Card model\": \"Radeon RX 7900 XTX\","
            " \"VRAM Total Memory (B)\": \"N/A\"}, \"system\": {\"Driver version\": \"6.3.6\"}}");
        INFO(problems_of(r.problems));
        CHECK(r.problems.empty());
        REQUIRE(r.devices.size() == 1);
        CHECK(r.devices[0].driver_version.view() == "6.3.6");
        CHECK(r.devices[0].memory_bytes.from != ah::origin::tool);
        REQUIRE(r.devices[0].spec != nullptr); // by the model name
        CHECK(r.devices[0].spec->name == "AMD Radeon RX 7900 XTX");
    }
#endif
}

TEST_CASE("detail::amd_smi::gfx_target_spelling: rocm-smi's decimal stepping spelt as the kernel does") {
    using ah::detail::amd_smi::gfx_target_spelling;
    CHECK(gfx_target_spelling("gfx9010") == "gfx90a"); // KFD 90010
    CHECK(gfx_target_spelling("gfx9012") == "gfx90c");
    CHECK(gfx_target_spelling("gfx942") == "gfx942");
    CHECK(gfx_target_spelling("gfx906") == "gfx906");
    CHECK(gfx_target_spelling("gfx1100") == "gfx1100");
    CHECK(gfx_target_spelling("gfx1030") == "gfx1030");
    CHECK(gfx_target_spelling("gfx1151") == "gfx1151");
    CHECK(gfx_target_spelling("gfx90a") == "gfx90a"); // already the kernel's spelling
    CHECK(gfx_target_spelling("gfx9016") == "");      // no stepping past 15
    CHECK(gfx_target_spelling("gfx90100") == "");
    CHECK(gfx_target_spelling("gfx") == "");
    CHECK(gfx_target_spelling("gfx9_0") == "");
    CHECK(gfx_target_spelling("sm_90") == "");
}

TEST_CASE("parse_rocm_smi: hostile input") {
    CHECK(ah::parse_rocm_smi("").devices.empty());
    CHECK(ah::parse_rocm_smi("").problems.empty());
    CHECK(ah::parse_rocm_smi("\n \n").problems.empty());

    auto r = ah::parse_rocm_smi("garbage\n\x01\x02\n");
    CHECK(r.devices.empty());
    CHECK(r.problems.size() == 1);

    // Numbers past 2^64 and nonsense: unknown, one problem each.
    r = ah::parse_rocm_smi("GPU[0]\t\t: VRAM Total Memory (B): 99999999999999999999999\n"
                           "GPU[0]\t\t: VRAM Total Used Memory (B): -5\n"
                           "GPU[0]\t\t: GPU use (%): 250\n"
                           "GPU[0]\t\t: Device ID: 0x123456\n"
                           "GPU[99999999999]\t\t: Card Series: X\n"
                           "GPU[\t: Card Series: X\n");
    REQUIRE(r.devices.size() == 1);
    CHECK_FALSE(r.devices[0].memory_bytes.has_value());
    CHECK_FALSE(r.devices[0].memory_used_bytes.has_value());
    CHECK_FALSE(r.devices[0].utilization_percent.has_value());
    CHECK(r.devices[0].pci_device_id == 0);
    CHECK(r.problems.size() == 6);

    // Non-UTF-8 name: replaced and reported.
    r = ah::parse_rocm_smi("GPU[0]\t\t: Card Series: Instinct \xff\xfe MI210\n");
    REQUIRE(r.devices.size() == 1);
    CHECK(r.devices[0].name.view() == "Instinct ?? MI210");
    CHECK(r.problems.size() == 1);

    // Truncated concise table: the cut row is skipped with a problem.
    r = ah::parse_rocm_smi("==== ROCm System Management Interface ====\n"
                           "Device  Node  IDs              Temp    Power  Partitions          SCLK    MCLK     Fan  Perf  PwrCap  VRAM%  GPU%\n"
                           "0       2     0x740f,   22303  42.0\xC2\xB0" "C  39.0W  N/A, N/A, 0         800Mhz  1600Mhz  0%   auto  300.0W  32%    0%\n"
                           "1       3     0x740f,   31706  30.0\xC2\xB0" "C  40.0W  N/A, N/A");
    CHECK(r.devices.size() == 1);
    CHECK(r.problems.size() == 1);

    // A 1 MB line and many bad lines: bounded problems.
    r = ah::parse_rocm_smi("GPU[0]\t\t: Card Series: " + std::string(1'000'000, 'A') + "\n");
    REQUIRE(r.devices.size() == 1);
    CHECK(r.devices[0].name.size() == decltype(r.devices[0].name)::capacity());
    CHECK(r.problems.size() == 1);
    std::string many;
    for (int i = 0; i < 5000; ++i) many += "GPU[0]\t\t: GPU use (%): x\n";
    r = ah::parse_rocm_smi(many);
    CHECK(r.problems.size() == ah::detail::parsing::max_problems + 1);
    many.clear();
    for (int i = 0; i < 5000; ++i) many += "GPU[" + std::to_string(i) + "]\t\t: Card Series: A\n";
    r = ah::parse_rocm_smi(many);
    CHECK(r.devices.size() == ah::detail::parsing::max_rows);

    // CSV of the wrong width and of the wrong header.
    r = ah::parse_rocm_smi("device,Card series,Card model\ncard0,A\ncardX,A,B\n");
    CHECK(r.devices.empty());
    CHECK(r.problems.size() == 2);

#if AI_HWACCEL_JSON
    // JSON of the wrong shape, broken JSON, deep nesting.
    CHECK(ah::parse_rocm_smi("[1, 2, 3]").problems.size() == 1);
    CHECK(ah::parse_rocm_smi("{\"card0\": [1]}").problems.size() == 1);
    r = ah::parse_rocm_smi("{\"card0\": {\"Card series\": {\"x\": 1}, \"VRAM Total Memory (B)\": 12}}");
    CHECK(r.problems.size() == 1);
    REQUIRE(r.devices.size() == 1);
    CHECK(*r.devices[0].memory_bytes == 12);
    CHECK(ah::parse_rocm_smi("{\"card0\": {\"Card series\": \"A\"").problems.size() == 1);
    CHECK(ah::parse_rocm_smi(std::string(200'000, '[')).problems.size() == 1); // not '{': text, not understood
    r = ah::parse_rocm_smi("{" + std::string(100'000, '[') + std::string(100'000, ']') + "}");
    CHECK(r.problems.size() == 1);
    CHECK(r.devices.empty());
    r = ah::parse_rocm_smi("{\"card0\": {\"Card series\": \"\xff\"}}"); // invalid UTF-8 inside JSON
    CHECK(r.devices.empty());
    CHECK(r.problems.size() == 1);
#endif
}

TEST_CASE("parse_amd_smi_static: real captures") {
    SUBCASE("amd-smi list, 2x MI210") {
        const auto t = test::capture("amd-smi/list_2x-mi210_valid-uuid.txt");
        if (!t) return;
        const auto r = ah::parse_amd_smi_static(*t);
        INFO(problems_of(r.problems));
        CHECK(r.problems.empty());
        REQUIRE(r.devices.size() == 2);
        check_amd_gpu(r.devices[0]);
        CHECK(same_pci(r.devices[0], 0, 0x03));
        CHECK(same_pci(r.devices[1], 0, 0x83));
        CHECK(r.devices[0].uuid.view() == "67ff740f-0000-1000-80c6-3ac3c3c637f9");
        CHECK(r.devices[1].uuid.view() == "95ff740f-0000-1000-80a1-ca7691e7c391");
        CHECK(r.devices[1].index == 1);
        CHECK(r.devices[0].spec == nullptr); // no name, no id in a list
    }
    SUBCASE("amd-smi list, Strix Halo APU") {
        const auto t = test::capture("amd-smi/list_strix-halo-apu.txt");
        if (!t) return;
        const auto r = ah::parse_amd_smi_static(*t);
        INFO(problems_of(r.problems));
        CHECK(r.problems.empty());
        REQUIRE(r.devices.size() == 1);
        CHECK(same_pci(r.devices[0], 0, 0xc5));
        CHECK(r.devices[0].uuid.view() == "00ff1586-0000-1000-8000-000000000000");
    }
    SUBCASE("amd-smi static --driver: in-kernel amdgpu reports the kernel banner") {
        const auto t = test::capture("amd-smi/static-driver_2x-rx7900xtx_nixos-kernel-string.txt");
        if (!t) return;
        const auto r = ah::parse_amd_smi_static(*t);
        INFO(problems_of(r.problems));
        CHECK(r.problems.empty());
        REQUIRE(r.devices.size() == 2);
        CHECK(r.devices[0].driver_version.view() == "6.19.11");
        CHECK(r.devices[1].driver_version.view() == "6.19.11");
    }
    SUBCASE("amd-smi static, 4x MI300A with CPU sections (docs example)") {
        const auto t = test::capture("amd-smi/static_4x-mi300a_rocm6.2.txt");
        if (!t) return;
        const auto r = ah::parse_amd_smi_static(*t);
        INFO(problems_of(r.problems));
        CHECK(r.problems.empty());
        REQUIRE(r.devices.size() == 4); // the CPU: blocks are not GPUs
        for (std::uint32_t i = 0; i < 4; ++i) {
            const auto& d = r.devices[i];
            check_amd_gpu(d);
            CHECK(d.index == i);
            CHECK(d.name.view() == "MI300A");
            CHECK(d.pci_device_id == 0x74a0);
            CHECK(same_pci(d, i, 0x01));
            CHECK(*d.memory_bytes == 64289 * mib);
            CHECK(d.memory_bytes.from == ah::origin::tool);
            CHECK(d.driver_version.view() == "6.9.0-rc5+");
            CHECK(*d.numa_node == static_cast<std::int32_t>(i));
            CHECK(*d.pcie_max == ah::pcie_link{5, 16});
            CHECK(*d.power_limit_watts == 550.0);
            CHECK(d.power_limit_watts.from == ah::origin::tool);
            REQUIRE(d.spec != nullptr);
            CHECK(d.spec->name == "AMD Instinct MI300A");
            // An APU: its CPU cores and GPU share the 128 GB of HBM3 (amd.com's MI300A
            // page), so its memory is not added to the host's.
            CHECK(d.spec->shared_with_host);
            CHECK(d.unified_memory);
        }
    }
    SUBCASE("hand-made from AMD's documentation of amd-smi 23.x: sections flush left") {
        const auto r = ah::parse_amd_smi_static(
            "GPU: 0\nASIC:\n    MARKET_NAME: MI300A\n    VENDOR_ID: 0x1002\n    DEVICE_ID: 0x74a0\nBUS:\n"
            "    BDF: 0000:01:00.0\n    MAX_PCIE_SPEED: 32 GT/s\n    MAX_PCIE_LANES: 16\nLIMIT:\n    MAX_POWER: 550 W\n"
            "DRIVER:\n    DRIVER_NAME: amdgpu\n    DRIVER_VERSION: 6.5.2\nVRAM:\n    VRAM_TYPE: HBM\n"
            "    VRAM_SIZE_MB: 96432 MB\nNUMA:\n    NODE: 0\n\nGPU: 1\nASIC:\n    MARKET_NAME: MI300A\n");
        INFO(problems_of(r.problems));
        CHECK(r.problems.empty());
        REQUIRE(r.devices.size() == 2);
        const auto& d = r.devices[0];
        CHECK(d.name.view() == "MI300A");
        CHECK(d.pci_device_id == 0x74a0);
        REQUIRE(d.pci.has_value());
        CHECK(*d.pci == ah::pci_address{0, 1, 0, 0});
        CHECK(*d.pcie_max == ah::pcie_link{5, 16});
        CHECK(*d.power_limit_watts == 550.0);
        CHECK(d.driver_version.view() == "6.5.2");
        CHECK(*d.memory_bytes == 96432ull << 20);
        CHECK(*d.numa_node == 0);
        CHECK(r.devices[1].name.view() == "MI300A");
        CHECK_FALSE(r.devices[1].pci.has_value()); // GPU 0's values stay GPU 0's
    }
    SUBCASE("hand-made: newer ASIC and LIMIT/PPT0 fields") {
        const auto r = ah::parse_amd_smi_static("GPU: 0\n    ASIC:\n        MARKET_NAME: AMD Radeon RX 9070 XT\n"
                                                "        DEVICE_ID: 0x7550\n        NUM_COMPUTE_UNITS: 64\n"
                                                "        TARGET_GRAPHICS_VERSION: gfx1201\n    BUS:\n"
                                                "        MAX_PCIE_WIDTH: N/A\n    LIMIT:\n        PPT0:\n"
                                                "            MAX_POWER_LIMIT: 340 W\n            SOCKET_POWER_LIMIT: 317 W\n");
        INFO(problems_of(r.problems));
        CHECK(r.problems.empty());
        REQUIRE(r.devices.size() == 1);
        const auto& d = r.devices[0];
        CHECK(*d.compute_units == 64);
        CHECK(d.compute_units.from == ah::origin::tool);
        CHECK(d.arch.view() == "gfx1201");
        CHECK(*d.power_limit_watts == 317.0);
        CHECK_FALSE(d.pcie_max.has_value());
        REQUIRE(d.spec != nullptr);
        CHECK(d.spec->name == "AMD Radeon RX 9070 XT");
    }
    SUBCASE("hand-made: two rows share the id, the compute units and VRAM pick one") {
        // pci.ids' name for 0x7480 covers a family (and is cut at the profile's 63 bytes), so
        // only the shape tells an RX 7600 XT.
        const std::string block = "GPU: 0\n    ASIC:\n        MARKET_NAME: Navi 33 [Radeon RX 7600/7600 XT/7600M XT/"
                                  "7600S/7700S / PRO W7600]\n        DEVICE_ID: 0x7480\n"
                                  "        NUM_COMPUTE_UNITS: 32\n    VRAM:\n        TYPE: GDDR6\n        SIZE: ";
        const auto xt = ah::parse_amd_smi_static(block + "16368 MB\n");
        INFO(problems_of(xt.problems));
        CHECK(xt.problems.size() == 1); // the cut name
        REQUIRE(xt.devices.size() == 1);
        REQUIRE(xt.devices[0].spec != nullptr);
        CHECK(xt.devices[0].spec->name == "AMD Radeon RX 7600 XT");
        CHECK(*xt.devices[0].memory_bytes == 16368ull << 20); // the tool's figure stays
        const auto plain = ah::parse_amd_smi_static(block + "8176 MB\n");
        REQUIRE(plain.devices.size() == 1);
        REQUIRE(plain.devices[0].spec != nullptr);
        CHECK(plain.devices[0].spec->name == "AMD Radeon RX 7600");
        // Memory no row has: no guess.
        const auto odd = ah::parse_amd_smi_static(block + "4096 MB\n");
        REQUIRE(odd.devices.size() == 1);
        CHECK(odd.devices[0].spec == nullptr);
    }
    SUBCASE("hostile input") {
        CHECK(ah::parse_amd_smi_static("").problems.empty());
        auto r = ah::parse_amd_smi_static("GPU: x\n    BDF: 0000:03:00.0\nnonsense\n");
        CHECK(r.devices.empty());
        CHECK(r.problems.size() == 2); // a bad GPU number (its block is skipped), not "KEY: value"
        r = ah::parse_amd_smi_static("GPU: 0\n    VRAM:\n        SIZE: 99999999999999999999999 MB\n"
                                     "        TYPE: HBM\n    ASIC:\n        MARKET_NAME: \xc3\x28\n"
                                     "        DEVICE_ID: 0x1234567\n    BUS:\n        BDF: 0000:zz:00.0\n"
                                     "        MAX_PCIE_SPEED: 3 GT/s\n");
        REQUIRE(r.devices.size() == 1);
        CHECK_FALSE(r.devices[0].memory_bytes.has_value());
        CHECK(r.devices[0].name.view() == "?(");
        CHECK(r.problems.size() == 5);
        r = ah::parse_amd_smi_static("GPU: 0\n    VRAM:\n        SIZE: 4096 GB\n"); // not amd-smi's unit
        CHECK(r.problems.size() == 1);
        std::string deep = "GPU: 0\n";
        for (int i = 1; i < 2000; ++i) deep += std::string(static_cast<std::size_t>(i), ' ') + "S:\n";
        r = ah::parse_amd_smi_static(deep);
        CHECK(r.devices.size() == 1);
        CHECK(r.problems.empty());
    }
}

TEST_CASE("parse_amd_smi_topology") {
    SUBCASE("2x RX 7900 XTX over PCIe: no link invented") {
        const auto t = test::capture("amd-smi/topology_2x-rx7900xtx_pcie.txt");
        if (!t) return;
        const auto r = ah::parse_amd_smi_topology(*t);
        INFO(problems_of(r.problems));
        CHECK(r.problems.empty());
        REQUIRE(r.devices.size() == 2);
        CHECK(same_pci(r.devices[0], 0, 0x03));
        CHECK(same_pci(r.devices[1], 0, 0x0c));
        CHECK(r.devices[1].index == 1);
        CHECK(r.links.empty());
    }
    SUBCASE("hand-made: an XGMI pair and a PCIe pair") {
        const auto r = ah::parse_amd_smi_topology("ACCESS TABLE:\n"
                                                  "             0000:0c:00.0 0000:22:00.0 0000:38:00.0\n"
                                                  "0000:0c:00.0 ENABLED      ENABLED      DISABLED\n"
                                                  "0000:22:00.0 ENABLED      ENABLED      DISABLED\n"
                                                  "0000:38:00.0 DISABLED     DISABLED     ENABLED\n"
                                                  "LINK TYPE TABLE:\n"
                                                  "             0000:0c:00.0 0000:22:00.0 0000:38:00.0\n"
                                                  "0000:0c:00.0 SELF         XGMI         PCIE\n"
                                                  "0000:22:00.0 XGMI         SELF         PCIE\n"
                                                  "0000:38:00.0 PCIE         PCIE         SELF\n");
        INFO(problems_of(r.problems));
        CHECK(r.problems.empty());
        REQUIRE(r.devices.size() == 3);
        REQUIRE(r.links.size() == 1);
        CHECK(r.links[0].kind == ah::interconnect_kind::xgmi);
        CHECK(r.links[0].devices == std::vector<std::uint32_t>{0, 1});
        CHECK(r.links[0].state == "ENABLED");
        CHECK_FALSE(r.links[0].bandwidth_gbps.has_value());
    }
    SUBCASE("hostile input") {
        auto r = ah::parse_amd_smi_topology("LINK TYPE TABLE:\n             0000:0c:00.0 0000:22:00.0\n"
                                            "0000:0c:00.0 SELF\n0000:22:00.0 XGMI SELF\n");
        CHECK(r.problems.size() == 1); // the cut row
        CHECK(r.links.size() == 1);    // the other direction still says XGMI
        r = ah::parse_amd_smi_topology("LINK TYPE TABLE:\nGPU0 GPU1\n");
        CHECK(r.problems.size() == 1); // a header that is not BDFs
        CHECK(r.devices.empty());
        CHECK(ah::parse_amd_smi_topology("garbage").problems.size() == 1);
    }
}

TEST_CASE("parse_amd_smi_xgmi") {
    SUBCASE("2x RX 7900 XTX: bogus bandwidths are not read, no XGMI") {
        const auto t = test::capture("amd-smi/xgmi_2x-rx7900xtx_no-xgmi.txt");
        if (!t) return;
        const auto r = ah::parse_amd_smi_xgmi(*t);
        INFO(problems_of(r.problems));
        CHECK(r.problems.empty());
        REQUIRE(r.devices.size() == 2);
        CHECK(same_pci(r.devices[0], 0, 0x03));
        CHECK(same_pci(r.devices[1], 0, 0x0c));
        CHECK(r.links.empty());
        for (const auto& d : r.devices) CHECK_FALSE(d.memory_bandwidth_gbps.from == ah::origin::tool);
    }
    SUBCASE("hand-made: two GPUs that report XGMI form one hive") {
        const auto r = ah::parse_amd_smi_xgmi("LINK METRIC TABLE:\n"
                                              "       bdf           bit_rate  max_bandwidth  link_type  GPU0  GPU1\n"
                                              "GPU0   0000:0c:00.0  32 Gb/s   512 Gb/s       XGMI       N/A   0 KB\n"
                                              "GPU1   0000:22:00.0  32 Gb/s   512 Gb/s       XGMI       0 KB  N/A\n");
        CHECK(r.problems.empty());
        REQUIRE(r.links.size() == 1);
        CHECK(r.links[0].kind == ah::interconnect_kind::xgmi);
        CHECK(r.links[0].devices == std::vector<std::uint32_t>{0, 1});
        CHECK_FALSE(r.links[0].bandwidth_gbps.has_value());
    }
    SUBCASE("hostile input") {
        CHECK(ah::parse_amd_smi_xgmi("").problems.empty());
        CHECK(ah::parse_amd_smi_xgmi("nonsense\n").problems.size() == 1);
        const auto r = ah::parse_amd_smi_xgmi("LINK METRIC TABLE:\nGPU0 zz\nGPU99999999999 0000:0c:00.0\n");
        CHECK(r.devices.empty());
        CHECK(r.problems.size() == 2);
    }
}

TEST_CASE("parse_amd_smi_dashboard") {
    SUBCASE("2x RX 7900 XTX, cut kernel banner as the amdgpu version") {
        const auto t = test::capture("amd-smi/default-dashboard_2x-rx7900xtx_nixos_rocm-na.txt");
        if (!t) return;
        const auto r = ah::parse_amd_smi_dashboard(*t);
        INFO(problems_of(r.problems));
        CHECK(r.problems.empty());
        CHECK(r.driver_version.empty()); // "Linuxver" is no version
        REQUIRE(r.devices.size() == 2);
        const auto& d0 = r.devices[0];
        check_amd_gpu(d0);
        CHECK(d0.name.view() == "AMD Radeon RX 7900 XTX");
        CHECK(same_pci(d0, 0, 0x03));
        CHECK(*d0.temperature_c == 93.0);
        CHECK(*d0.power_draw_watts == 280.0);
        CHECK(*d0.power_limit_watts == 327.0);
        CHECK(*d0.utilization_percent == 100.0);
        CHECK(*d0.memory_used_bytes == 7608 * mib);
        CHECK(*d0.memory_bytes == 24560 * mib);
        REQUIRE(d0.spec != nullptr);
        CHECK(d0.spec->name == "AMD Radeon RX 7900 XTX");
        const auto& d1 = r.devices[1];
        CHECK(d1.index == 1);
        CHECK(same_pci(d1, 0, 0x0c));
        CHECK(*d1.power_draw_watts == 20.0);
        CHECK(*d1.memory_used_bytes == 30 * mib);
    }
    SUBCASE("hand-made from the documented layout: a real version in the header") {
        const auto r = ah::parse_amd_smi_dashboard(
            "+------------------------------------------------------------------------------+\n"
            "| AMD-SMI            27.0.0                                                    |\n"
            "| amdgpu Version:    6.19.4                                                    |\n"
            "|-------------------------------------+----------------------------------------|\n"
            "|=====================================+========================================|\n"
            "| 0000:01:00.0    AMD Instinct MI300A | 0 %      27 \xC2\xB0" "C   0                49 W |\n"
            "|   0       0       0        SPX/NPS1 | 6 %        N/A            25/385728 MB |\n"
            "+-------------------------------------+----------------------------------------+\n");
        INFO(problems_of(r.problems));
        CHECK(r.problems.empty());
        CHECK(r.driver_version == "6.19.4");
        REQUIRE(r.devices.size() == 1);
        CHECK(r.devices[0].driver_version.view() == "6.19.4");
        CHECK(r.devices[0].name.view() == "AMD Instinct MI300A");
        CHECK(*r.devices[0].utilization_percent == 6.0);
        CHECK_FALSE(r.devices[0].power_draw_watts.has_value()); // "49 W" has no a/b form
    }
    SUBCASE("hostile input") {
        CHECK(ah::parse_amd_smi_dashboard("").problems.empty());
        CHECK(ah::parse_amd_smi_dashboard("| nothing |\n").problems.size() == 1);
        const auto r = ah::parse_amd_smi_dashboard("| AMD-SMI 1 |\n|=====|====|\n| x | y |\n"
                                                   "| 0000:01:00.0 A | 1 % 2 \xC2\xB0" "C 0 99999999999999999999999/5 W |\n"
                                                   "| 0 | 1 % N/A 1/99999999999999999999999 MB |\n");
        REQUIRE(r.devices.size() == 1);
        CHECK_FALSE(r.devices[0].power_draw_watts.has_value());
        CHECK_FALSE(r.devices[0].memory_bytes.has_value());
        CHECK(r.problems.size() == 3);
    }
}

TEST_CASE("detail::formats: AMD tool sniffers and capture parsers") {
    namespace f = ah::detail::formats;
    using sniff_fn = int (*)(std::string_view) noexcept;
    using parse_fn = void (*)(std::string_view, ah::capture_parse&);
    struct row {
        const char* name;
        sniff_fn sniff;
        parse_fn parse;
        std::vector<std::string> captures;
        std::size_t devices; // in each capture, 0 to skip the check
    };
    const std::vector<row> rows = {
        {"rocm-smi", f::sniff_rocm_smi, f::parse_rocm_smi_capture,
         {"rocm-smi/concise_2x-mi210_rocm6.3.txt", "rocm-smi/concise_strix-halo-apu_partitions-column.txt",
          "rocm-smi/showmeminfo-vram_4gb-gpu.txt", "rocm-smi/showproductname_2x-mi210.txt",
          "rocm-smi/showuniqueid_2x-mi210_valid.txt"},
         0},
        {"rocm-smi-csv", f::sniff_rocm_smi_csv, f::parse_rocm_smi_csv_capture,
         {"rocm-smi/showdriverversion-csv_mi100.csv", "rocm-smi/showproductname-csv_2x-mi100.csv",
          "rocm-smi/showproductname-showuse-showmeminfo-vram-csv_rx7900xt.csv"},
         0},
        {"rocm-smi-json", f::sniff_rocm_smi_json, f::parse_rocm_smi_json_capture,
         {"rocm-smi/showproductname-json_mi250x.json", "rocm-smi/showproductname-showuse-showmeminfo-vram-json_rx7900xt.json"},
         1},
        {"amd-smi-static", f::sniff_amd_smi_static, f::parse_amd_smi_static_capture,
         {"amd-smi/list_2x-mi210_valid-uuid.txt", "amd-smi/list_strix-halo-apu.txt",
          "amd-smi/static-driver_2x-rx7900xtx_nixos-kernel-string.txt", "amd-smi/static_4x-mi300a_rocm6.2.txt"},
         0},
        {"amd-smi-topology", f::sniff_amd_smi_topology, f::parse_amd_smi_topology_capture,
         {"amd-smi/topology_2x-rx7900xtx_pcie.txt"}, 2},
        {"amd-smi-xgmi", f::sniff_amd_smi_xgmi, f::parse_amd_smi_xgmi_capture, {"amd-smi/xgmi_2x-rx7900xtx_no-xgmi.txt"}, 2},
        {"amd-smi-dashboard", f::sniff_amd_smi_dashboard, f::parse_amd_smi_dashboard_capture,
         {"amd-smi/default-dashboard_2x-rx7900xtx_nixos_rocm-na.txt"}, 2},
    };
    for (const auto& rw : rows)
        for (const auto& c : rw.captures) {
            CAPTURE(c);
            const auto t = test::capture(c);
            if (!t) return;
            CHECK(rw.sniff(*t) == 90);
            ah::capture_parse out;
            out.format = rw.name;
            rw.parse(*t, out);
#if !AI_HWACCEL_JSON
            if (std::string_view(rw.name) == "rocm-smi-json") continue;
#endif
            CHECK(out.warnings.empty());
            if (rw.devices) CHECK(out.devices.size() == rw.devices);
        }

    // Every other file of the fixtures: no AMD sniffer claims it; each of ours is claimed
    // by its own sniffer only.
    std::vector<test::sniffer_row> sniffers; // a row for each capture; a format's rows share its sniffer
    for (const auto& rw : rows)
        for (const auto& c : rw.captures) sniffers.push_back({rw.name, rw.sniff, c.c_str()});
    test::check_sniffers(sniffers, sniffers.size());

    // Empty input: a warning that nothing was found.
    ah::capture_parse empty;
    empty.format = "amd-smi-static";
    f::parse_amd_smi_static_capture("", empty);
    CHECK(test::count_kind(empty.warnings, ah::warning_kind::parse_error) == 1);
    // Links travel in system_io.
    ah::capture_parse links;
    links.format = "amd-smi-topology";
    f::parse_amd_smi_topology_capture("LINK TYPE TABLE:\n             0000:0c:00.0 0000:22:00.0\n"
                                      "0000:0c:00.0 SELF XGMI\n0000:22:00.0 XGMI SELF\n",
                                      links);
    REQUIRE(links.system.has_value());
    CHECK(links.system->interconnects.size() == 1);
    // A system row alone: no device to carry the driver version, the capture keeps it.
    if (const auto t = test::capture("rocm-smi/showdriverversion-csv_mi100.csv")) {
        ah::capture_parse version;
        version.format = "rocm-smi-csv";
        f::parse_rocm_smi_csv_capture(*t, version);
        CHECK(version.devices.empty());
        CHECK(version.driver_version == "4.18.0-348.12.2.el8_5.x86_64");
    }
}

#endif // AI_HWACCEL_BACKEND_ROCM
