#include "ai_hwaccel/detect/apple.hpp"

#include "fixtures.hpp"

#include <doctest/doctest.h>

#include <filesystem>
#include <span>
#include <string>
#include <vector>

#if AI_HWACCEL_BACKEND_APPLE

#include "ai_hwaccel/detect/detect.hpp"
#include "ai_hwaccel/registry.hpp"

namespace ah = ai_hwaccel;

namespace {

constexpr std::uint64_t gib = 1024ull * 1024 * 1024;

std::string problems_of(const std::vector<ah::parse_problem>& ps) {
    std::string s;
    for (const auto& p : ps) s += std::to_string(p.line) + ": " + p.message + "\n";
    return s;
}

const ah::accelerator_profile* find_kind(const std::vector<ah::accelerator_profile>& ds, ah::device_kind k) {
    for (const auto& d : ds)
        if (d.kind == k) return &d;
    return nullptr;
}

// Whether any text the parser kept holds `s` (serials must never be copied).
bool machine_mentions(const ah::apple_machine& m, std::string_view s) {
    for (const std::string* t : {&m.chip, &m.cpu_brand, &m.processor_name, &m.machine_name, &m.machine_model})
        if (t->find(s) != std::string::npos) return true;
    for (const auto& g : m.gpus)
        if (g.model.find(s) != std::string::npos || g.vendor.find(s) != std::string::npos ||
            g.metal.find(s) != std::string::npos)
            return true;
    return false;
}

// The Neural Engine every Apple Silicon chip of the captures has, from the catalogue.
void check_neural_engine(const std::vector<ah::accelerator_profile>& ds, std::string_view name,
                         std::string_view spec_name, double tops) {
    const auto* ane = find_kind(ds, ah::device_kind::apple_neural_engine);
    REQUIRE(ane != nullptr);
    CHECK(ane->name.view() == name);
    CHECK(ane->maker == ah::vendor::apple);
    CHECK(ane->unified_memory);
    REQUIRE(ane->spec != nullptr);
    CHECK(ane->spec->name == spec_name);
    CHECK(ane->peak.fp16 == doctest::Approx(tops));
    CHECK(ane->peak_from == ah::origin::catalogue);
    CHECK(ane->compute_units.from == ah::origin::catalogue);
}

} // namespace

static_assert(ah::backend_probe<ah::apple_probe, ah::host_system>);
static_assert(ah::descriptor_of<ah::apple_probe>().name == "apple");

#if AI_HWACCEL_JSON
TEST_CASE("parse_system_profiler_json: real captures") {
    SUBCASE("SPDisplaysDataType, M1 Pro 16-core GPU with three displays") {
        const auto t = test::capture("system_profiler/SPDisplaysDataType-json_m1-pro_3-displays-incl-sidecar.json");
        if (!t) return;
        const auto r = ah::parse_system_profiler_json(*t);
        INFO(problems_of(r.problems));
        CHECK(r.problems.empty());
        REQUIRE(r.machine.gpus.size() == 1); // the displays are not GPUs
        const auto& g = r.machine.gpus[0];
        CHECK(g.model == "Apple M1 Pro");
        CHECK(g.vendor == "sppci_vendor_Apple");
        CHECK(g.apple);
        CHECK(g.built_in == true);
        CHECK(*g.cores == 16u);
        CHECK(g.metal == "Metal 3");
        CHECK_FALSE(machine_mentions(r.machine, "3046324c")); // a display's serial
        REQUIRE(r.devices.size() == 2);
        const auto* gpu = find_kind(r.devices, ah::device_kind::metal_gpu);
        REQUIRE(gpu != nullptr);
        CHECK(gpu->name.view() == "Apple M1 Pro");
        CHECK(gpu->unified_memory);
        CHECK(*gpu->compute_units == 16u);
        CHECK(gpu->compute_units.from == ah::origin::tool);
        REQUIRE(gpu->spec != nullptr);
        CHECK(gpu->spec->name == "Apple M1 Pro 16-core GPU");
        CHECK(*gpu->memory_bandwidth_gbps == 200.0);
        CHECK(gpu->memory_bandwidth_gbps.from == ah::origin::catalogue);
        CHECK(gpu->arch.view() == "apple7");
        CHECK_FALSE(gpu->memory_bytes.has_value()); // SPDisplaysDataType says nothing of memory
        check_neural_engine(r.devices, "Apple M1 Pro Neural Engine", "Apple M1 Neural Engine", 11);
    }
    SUBCASE("SPHardwareDataType, M2 MacBook Pro Mac14,7") {
        const auto t = test::capture("system_profiler/SPHardwareDataType-json_m2-macbook-pro-mac14,7.json");
        if (!t) return;
        const auto r = ah::parse_system_profiler_json(*t);
        INFO(problems_of(r.problems));
        CHECK(r.problems.empty());
        const auto& m = r.machine;
        CHECK(m.chip == "Apple M2");
        CHECK(m.machine_name == "MacBook Pro");
        CHECK(m.machine_model == "Mac14,7");
        CHECK(*m.cores == 8u);
        CHECK(*m.performance_cores == 4u);
        CHECK(*m.efficiency_cores == 4u);
        CHECK(*m.profiler_memory_bytes == 16 * gib);
        CHECK(*m.memory_bytes() == 16 * gib);
        CHECK(m.gpus.empty());
        CHECK_FALSE(machine_mentions(m, "D5XQV1FMFJ"));
        CHECK_FALSE(machine_mentions(m, "D26E7BC6"));
        REQUIRE(r.devices.size() == 2);
        const auto* gpu = find_kind(r.devices, ah::device_kind::metal_gpu);
        REQUIRE(gpu != nullptr);
        CHECK(gpu->name.view() == "Apple M2");
        CHECK(gpu->spec == nullptr); // 8- and 10-core M2s: the core count is unknown here
        CHECK_FALSE(gpu->compute_units.has_value());
        CHECK(*gpu->memory_bytes == 16 * gib);
        CHECK(gpu->memory_bytes.from == ah::origin::tool);
        CHECK(gpu->unified_memory);
        check_neural_engine(r.devices, "Apple M2 Neural Engine", "Apple M2 Neural Engine", 15.8);
        const auto host = ah::apple_host(m);
        CHECK(*host.memory.total_bytes == 16 * gib);
        CHECK(host.cpu.model == "Apple M2");
        CHECK(host.cpu.maker == ah::vendor::apple);
        CHECK(host.cpu.arch == ah::cpu_arch::aarch64);
        CHECK(host.cpu.cores == 8u);
        CHECK(host.cpu.threads == 8u); // no SMT on Apple's cores: a thread per core
    }
}

TEST_CASE("parse_system_profiler_json: hand-made variants and hostile input") {
    SUBCASE("both data types, a binned chip whose core count picks the row") {
        // Hand-made: the shape of `system_profiler -json SPDisplaysDataType SPHardwareDataType`.
        const auto r = ah::parse_system_profiler_json(R"({"SPDisplaysDataType":[{"_name":"Apple M2 Pro",
            "spdisplays_mtlgpufamilysupport":"spdisplays_metal3","spdisplays_vendor":"sppci_vendor_Apple",
            "sppci_bus":"spdisplays_builtin","sppci_cores":19,"sppci_model":"Apple M2 Pro"}],
            "SPHardwareDataType":[{"chip_type":"Apple M2 Pro","number_processors":"proc 12:8:4",
            "physical_memory":"32 GB","serial_number":"XXXX"}]})");
        INFO(problems_of(r.problems));
        CHECK(r.problems.empty());
        REQUIRE(r.devices.size() == 2);
        const auto* gpu = find_kind(r.devices, ah::device_kind::metal_gpu);
        REQUIRE(gpu->spec != nullptr);
        CHECK(gpu->spec->name == "Apple M2 Pro 19-core GPU");
        CHECK(*gpu->compute_units == 19u);
        CHECK(*gpu->memory_bytes == 32 * gib);
        check_neural_engine(r.devices, "Apple M2 Pro Neural Engine", "Apple M2 Neural Engine", 15.8);
    }
    SUBCASE("four counts in number_processors, in either order macOS writes them") {
        // "proc 24:16:8:0" is a Mac Studio's (M2 Ultra) in a public capture; "proc 12:0:8:4"
        // an M2 Pro's in another. Before, the fourth count lost all three.
        struct proc_case {
            const char* text;
            std::uint32_t total, perf, eff;
        };
        for (const auto& c : {proc_case{"proc 24:16:8:0", 24, 16, 8}, proc_case{"proc 12:0:8:4", 12, 8, 4},
                              proc_case{"proc 10:8:2", 10, 8, 2}}) {
            CAPTURE(c.text);
            const auto r = ah::parse_system_profiler_json(
                std::string(R"({"SPHardwareDataType":[{"chip_type":"Apple M2 Ultra","number_processors":")") + c.text +
                "\"}]}");
            INFO(problems_of(r.problems));
            CHECK(r.problems.empty());
            CHECK(*r.machine.cores == c.total);
            CHECK(*r.machine.performance_cores == c.perf);
            CHECK(*r.machine.efficiency_cores == c.eff);
        }
        // Five counts are not a form macOS writes.
        CHECK(ah::parse_system_profiler_json(R"({"SPHardwareDataType":[{"chip_type":"Apple M2",)"
                                             R"("number_processors":"proc 8:4:4:0:0"}]})")
                  .problems.size() == 1);
    }
    SUBCASE("an Intel Mac: no Apple GPU, no device") {
        // Hand-made: an Intel Mac's GPUs as SPDisplaysDataType lists them.
        const auto r = ah::parse_system_profiler_json(
            R"({"SPDisplaysDataType":[{"sppci_model":"Intel UHD Graphics 630","spdisplays_vendor":"sppci_vendor_intel"},
                {"sppci_model":"AMD Radeon Pro 5500M","spdisplays_vendor":"sppci_vendor_amd"}],
                "SPHardwareDataType":[{"cpu_type":"8-Core Intel Core i9","number_processors":8,"physical_memory":"16 GB"}]})");
        INFO(problems_of(r.problems));
        CHECK(r.problems.empty());
        CHECK(r.machine.gpus.size() == 2);
        CHECK_FALSE(r.machine.apple_silicon());
        CHECK(r.devices.empty());
        CHECK(*r.machine.cores == 8u);
        const auto host = ah::apple_host(r.machine);
        CHECK(host.cpu.maker == ah::vendor::intel);
        CHECK(host.cpu.arch == ah::cpu_arch::x86_64);
    }
    SUBCASE("hostile") {
        CHECK(ah::parse_system_profiler_json("").problems.empty());
        CHECK(ah::parse_system_profiler_json("  \n").devices.empty());
        CHECK(ah::parse_system_profiler_json("{").problems.size() == 1);
        CHECK(ah::parse_system_profiler_json("[1,2]").problems.size() == 1);
        CHECK(ah::parse_system_profiler_json("{}").problems.size() == 1);
        CHECK(ah::parse_system_profiler_json("\xff\xfe\x01garbage").problems.size() == 1);
        auto r = ah::parse_system_profiler_json(R"({"SPDisplaysDataType":{"a":1},"SPHardwareDataType":[1,"x"]})");
        CHECK(r.devices.empty());
        CHECK(r.problems.size() == 3);
        // Wrong types and impossible values: unknown, one problem each.
        r = ah::parse_system_profiler_json(R"({"SPDisplaysDataType":[{"sppci_model":5,"sppci_cores":"99999999999999999999999",
            "spdisplays_vendor":["x"],"sppci_bus":null}],"SPHardwareDataType":[{"chip_type":{},"physical_memory":"999999 TB",
            "number_processors":"proc x:y:z"}]})");
        CHECK(r.problems.size() == 7);
        CHECK(r.devices.empty());
        CHECK_FALSE(r.machine.profiler_memory_bytes.has_value());
        CHECK_FALSE(r.machine.cores.has_value());
        // Non-UTF-8 in a name: replaced and reported.
        r = ah::parse_system_profiler_json("{\"SPHardwareDataType\":[{\"chip_type\":\"Apple M1\\u0007\"}]}");
        CHECK(r.machine.chip == "Apple M1?");
        CHECK(r.problems.size() == 1);
        // Deep nesting and a huge array: no crash, capped.
        std::string deep(100'000, '[');
        deep += std::string(100'000, ']');
        CHECK(ah::parse_system_profiler_json(deep).problems.size() == 1);
        std::string many = "{\"SPDisplaysDataType\":[";
        for (int i = 0; i < 5000; ++i) many += "{\"sppci_model\":\"Apple M1\",\"spdisplays_vendor\":\"sppci_vendor_Apple\"},";
        many += "{}]}";
        r = ah::parse_system_profiler_json(many);
        CHECK(r.machine.gpus.size() == ah::detail::parsing::max_rows);
        CHECK(r.devices.size() <= ah::detail::parsing::max_rows + 1);
        CHECK(r.problems.size() == 1);
        CHECK(ah::parse_system_profiler_json(std::string(1 << 20, 'x')).problems.size() == 1);
    }
}
#endif // AI_HWACCEL_JSON

TEST_CASE("parse_system_profiler_text: real captures") {
    SUBCASE("SPDisplaysDataType, M3 with an external display") {
        const auto t = test::capture("system_profiler/SPDisplaysDataType_m3-macbook-pro_external-display.txt");
        if (!t) return;
        const auto r = ah::parse_system_profiler_text(*t);
        INFO(problems_of(r.problems));
        CHECK(r.problems.empty());
        REQUIRE(r.machine.gpus.size() == 1);
        const auto& g = r.machine.gpus[0];
        CHECK(g.model == "Apple M3");
        CHECK(g.vendor == "Apple (0x106b)");
        CHECK(g.apple);
        CHECK(g.built_in == true);
        CHECK(*g.cores == 10u);
        CHECK(g.metal == "Metal 3");
        CHECK(r.machine.chip.empty());
        CHECK_FALSE(r.machine.cores.has_value()); // the GPU's cores are not the CPU's
        REQUIRE(r.devices.size() == 2);
        const auto* gpu = find_kind(r.devices, ah::device_kind::metal_gpu);
        REQUIRE(gpu != nullptr);
        CHECK(gpu->name.view() == "Apple M3");
        CHECK(*gpu->compute_units == 10u);
        CHECK(gpu->compute_units.from == ah::origin::tool);
        REQUIRE(gpu->spec != nullptr);
        CHECK(gpu->spec->name == "Apple M3 10-core GPU");
        CHECK(gpu->arch.view() == "apple9");
        check_neural_engine(r.devices, "Apple M3 Neural Engine", "Apple M3 Neural Engine", 18);
    }

    struct hardware_case {
        const char* file;
        const char* chip;
        const char* model;
        std::uint32_t cores, performance, efficiency;
        std::uint64_t memory;
        const char* ane_spec;
        double tops;
        const char* serial; // must not be copied ("" when the capture has none)
    };
    const hardware_case cases[] = {
        {"system_profiler/SPHardwareDataType-detailLevel-mini_m1-pro.txt", "Apple M1 Pro", "MacBookPro18,1", 10, 8, 2,
         16 * gib, "Apple M1 Neural Engine", 11, ""},
        {"system_profiler/SPHardwareDataType-detailLevel-mini_m2-pro.txt", "Apple M2 Pro", "Mac14,10", 12, 8, 4,
         16 * gib, "Apple M2 Neural Engine", 15.8, ""},
        {"system_profiler/SPHardwareDataType_lines_m2-max-16in_serials-masked.txt", "Apple M2 Max", "Mac14,6", 12, 8, 4,
         32 * gib, "Apple M2 Neural Engine", 15.8, "----------"},
        {"system_profiler/SPHardwareDataType_m1-pro-macbookpro18,3.txt", "Apple M1 Pro", "MacBookPro18,3", 10, 8, 2,
         16 * gib, "Apple M1 Neural Engine", 11, "GGJXG26P75"},
    };
    for (const auto& c : cases) {
        CAPTURE(c.file);
        const auto t = test::capture(c.file);
        if (!t) continue;
        const auto r = ah::parse_system_profiler_text(*t);
        INFO(problems_of(r.problems));
        CHECK(r.problems.empty());
        const auto& m = r.machine;
        CHECK(m.chip == c.chip);
        CHECK(m.machine_name == "MacBook Pro");
        CHECK(m.machine_model == c.model);
        CHECK(*m.cores == c.cores);
        CHECK(*m.performance_cores == c.performance);
        CHECK(*m.efficiency_cores == c.efficiency);
        CHECK(*m.profiler_memory_bytes == c.memory);
        CHECK(m.gpus.empty());
        if (*c.serial) CHECK_FALSE(machine_mentions(m, c.serial));
        CHECK_FALSE(machine_mentions(m, "8422")); // firmware versions are not kept either
        REQUIRE(r.devices.size() == 2);
        const auto* gpu = find_kind(r.devices, ah::device_kind::metal_gpu);
        REQUIRE(gpu != nullptr);
        CHECK(gpu->name.view() == c.chip);
        CHECK(gpu->spec == nullptr); // binned chips: no GPU core count, no row
        CHECK(*gpu->memory_bytes == c.memory);
        CHECK(gpu->unified_memory);
        check_neural_engine(r.devices, std::string(c.chip) + " Neural Engine", c.ane_spec, c.tops);
    }
}

TEST_CASE("parse_system_profiler_text: hand-made variants and hostile input") {
    SUBCASE("both data types in one output, as the probe asks for them") {
        // Hand-made: the two sections one after the other.
        const auto r = ah::parse_system_profiler_text("Graphics/Displays:\n\n    Apple M1 Max:\n\n"
                                                      "      Chipset Model: Apple M1 Max\n      Type: GPU\n"
                                                      "      Bus: Built-In\n      Total Number of Cores: 32\n"
                                                      "      Vendor: Apple (0x106b)\n      Metal Support: Metal 3\n"
                                                      "      Displays:\n        Color LCD:\n"
                                                      "          Total Number of Cores: 1\n\n"
                                                      "Hardware:\n\n    Hardware Overview:\n\n"
                                                      "      Chip: Apple M1 Max\n"
                                                      "      Total Number of Cores: 10 (8 performance and 2 efficiency)\n"
                                                      "      Memory: 64 GB\n");
        INFO(problems_of(r.problems));
        CHECK(r.problems.empty());
        REQUIRE(r.machine.gpus.size() == 1);
        CHECK(*r.machine.gpus[0].cores == 32u);
        CHECK(*r.machine.cores == 10u);
        REQUIRE(r.devices.size() == 2);
        const auto* gpu = find_kind(r.devices, ah::device_kind::metal_gpu);
        REQUIRE(gpu->spec != nullptr);
        CHECK(gpu->spec->name == "Apple M1 Max 32-core GPU");
        CHECK(*gpu->memory_bytes == 64 * gib);
        check_neural_engine(r.devices, "Apple M1 Max Neural Engine", "Apple M1 Neural Engine", 11);
    }
    SUBCASE("an Intel Mac's hardware overview: no device") {
        // Hand-made: the keys an Intel Mac prints instead of "Chip".
        const auto r = ah::parse_system_profiler_text("Hardware:\n\n    Hardware Overview:\n\n"
                                                      "      Processor Name: Quad-Core Intel Core i7\n"
                                                      "      Total Number of Cores: 4\n      Memory: 16 GB\n");
        CHECK(r.problems.empty());
        CHECK(r.devices.empty());
        CHECK(*r.machine.cores == 4u);
        CHECK(ah::apple_host(r.machine).cpu.maker == ah::vendor::intel);
        CHECK(ah::apple_host(r.machine).cpu.threads == 0u); // Hyper-Threading not stated: unknown
    }
    SUBCASE("memory figures") {
        namespace ap = ah::detail::apple;
        CHECK(ap::memory_figure("16 GB") == 16ull << 30);
        CHECK(ap::memory_figure(" 512 MB ") == 512ull << 20);
        CHECK(ap::memory_figure("1 TB") == 1ull << 40);
        CHECK(ap::memory_figure("1.5 TB") == 3ull << 39); // a 2019 Mac Pro's largest
        CHECK(ap::memory_figure("1.25 TB") == 5ull << 38);
        CHECK(ap::memory_figure("0.5 GB") == 1ull << 29);
        for (const char* bad : {"1. TB", ".5 TB", "1.555 TB", "1.x TB", "1.-5 TB", "0 GB", "0.0 GB", "16 GiB", "16",
                                "-1 GB", "65 TB", "64.01 TB", "99999999999999999999 MB"})
            CHECK_MESSAGE(!ap::memory_figure(bad), bad);
        CHECK(ap::memory_figure("64 TB") == ap::max_memory);
        const auto r = ah::parse_system_profiler_text("Hardware:\n  Model Name: Mac Pro\n  Memory: 1.5 TB\n"); // hand-made
        CHECK(r.problems.empty());
        CHECK(r.machine.profiler_memory_bytes.value_or(0) == 3ull << 39);
    }
    SUBCASE("hostile") {
        CHECK(ah::parse_system_profiler_text("").problems.empty());
        CHECK(ah::parse_system_profiler_text("").devices.empty());
        auto r = ah::parse_system_profiler_text("garbage\n\x01\x02\n");
        CHECK(r.problems.size() == 2);
        CHECK(r.devices.empty());
        r = ah::parse_system_profiler_text("Hardware:\n  Chip: Apple M1\n  Memory: 99999999999999999999999 GB\n"
                                           "  Total Number of Cores: 10 (eight performance)\n"
                                           "  Model Name: \xff\xfe\n");
        CHECK(r.problems.size() == 3);
        CHECK_FALSE(r.machine.profiler_memory_bytes.has_value());
        CHECK_FALSE(r.machine.cores.has_value());
        CHECK(r.machine.machine_name == "??");
        CHECK(r.devices.size() == 2); // the chip still names its GPU and engine
        const std::string long_line(1 << 20, 'a');
        r = ah::parse_system_profiler_text("Hardware:\n  Chip: " + long_line + "\n");
        CHECK(r.machine.chip.size() == ah::detail::apple::max_text);
        CHECK(r.problems.size() == 1);
        std::string many;
        for (int i = 0; i < 5000; ++i) many += "x\n";
        CHECK(ah::parse_system_profiler_text(many).problems.size() == ah::detail::parsing::max_problems + 1);
        std::string gpus = "Graphics/Displays:\n";
        for (int i = 0; i < 3000; ++i) gpus += "  G:\n    Vendor: Apple\n";
        r = ah::parse_system_profiler_text(gpus);
        CHECK(r.machine.gpus.size() == ah::detail::parsing::max_rows);
    }
}

TEST_CASE("parse_sysctl / parse_sysctl_brand_string: real captures") {
    SUBCASE("hw.memsize and hw.memsize_usable, a shell transcript") {
        const auto t = test::capture("sysctl/hw.memsize-and-memsize_usable_36gb-mac.txt");
        if (!t) return;
        const auto r = ah::parse_sysctl(*t);
        INFO(problems_of(r.problems));
        CHECK(r.problems.empty());
        CHECK(*r.machine.memsize_bytes == 38654705664ull);
        CHECK(*r.machine.memsize_bytes == 36 * gib);
        CHECK(*r.machine.memsize_usable_bytes == 37984092160ull);
        CHECK(r.machine.memsize_bytes.from == ah::origin::tool);
        CHECK(r.devices.empty()); // memory alone names no chip
        CHECK(*ah::apple_host(r.machine).memory.total_bytes == 38654705664ull);
    }
    struct cpu_case {
        const char* file;
        const char* brand;
        const char* ane_spec;
    };
    for (const auto& c : {cpu_case{"sysctl/machdep.cpu_m1-pro.txt", "Apple M1 Pro", "Apple M1 Neural Engine"},
                          cpu_case{"sysctl/machdep.cpu_m1_bigsur.txt", "Apple M1", "Apple M1 Neural Engine"}}) {
        CAPTURE(c.file);
        const auto t = test::capture(c.file);
        if (!t) continue;
        const auto r = ah::parse_sysctl(*t);
        INFO(problems_of(r.problems));
        CHECK(r.problems.empty());
        CHECK(r.machine.cpu_brand == c.brand);
        CHECK(r.machine.chip == c.brand);
        CHECK(*r.machine.cores == 8u);
        CHECK(*r.machine.threads == 8u);
        REQUIRE(r.devices.size() == 2);
        const auto* gpu = find_kind(r.devices, ah::device_kind::metal_gpu);
        REQUIRE(gpu != nullptr);
        CHECK(gpu->name.view() == c.brand);
        CHECK(gpu->spec == nullptr); // binned: 7/8 (M1), 14/16 (M1 Pro)
        CHECK_FALSE(gpu->memory_bytes.has_value());
        check_neural_engine(r.devices, std::string(c.brand) + " Neural Engine", c.ane_spec, 11);
        const auto host = ah::apple_host(r.machine);
        CHECK(host.cpu.model == c.brand);
        CHECK(host.cpu.cores == 8u);
        CHECK(host.cpu.threads == 8u);
    }
    struct brand_case {
        const char* file;
        const char* brand;
    };
    for (const auto& c : {brand_case{"sysctl/n-machdep.cpu.brand_string_intel-i7-3820qm.txt",
                                     "Intel(R) Core(TM) i7-3820QM CPU @ 2.70GHz"},
                          brand_case{"sysctl/n-machdep.cpu.brand_string_intel-i9-9980hk.txt",
                                     "Intel(R) Core(TM) i9-9980HK CPU @ 2.40GHz"}}) {
        CAPTURE(c.file);
        const auto t = test::capture(c.file);
        if (!t) continue;
        const auto r = ah::parse_sysctl_brand_string(*t);
        INFO(problems_of(r.problems));
        CHECK(r.problems.empty());
        CHECK(r.machine.cpu_brand == c.brand);
        CHECK(r.machine.chip.empty());
        CHECK(r.devices.empty()); // an Intel Mac: no Metal GPU from sysctl alone
        const auto host = ah::apple_host(r.machine);
        CHECK(host.cpu.model == c.brand);
        CHECK(host.cpu.maker == ah::vendor::intel);
    }
}

TEST_CASE("parse_sysctl: hand-made variants and hostile input") {
    // Hand-made: the probe's own run, and the performance levels.
    auto r = ah::parse_sysctl("hw.memsize: 17179869184\nmachdep.cpu.brand_string: Apple M4 Pro\n"
                              "hw.perflevel0.physicalcpu: 10\nhw.perflevel1.physicalcpu: 4\nhw.unknown.key: 3\n"
                              "hw.optional.arm.FEAT_AES: 1\nhw.packages: 1\n");
    INFO(problems_of(r.problems));
    CHECK(r.problems.empty());
    CHECK(*r.machine.packages == 1u);
    CHECK(ah::apple_host(r.machine).cpu.sockets == 1u);
    CHECK(*r.machine.performance_cores == 10u);
    CHECK(*r.machine.efficiency_cores == 4u);
    REQUIRE(r.devices.size() == 2);
    CHECK(*find_kind(r.devices, ah::device_kind::metal_gpu)->memory_bytes == 16 * gib);
    CHECK(ah::detail::formats::sniff_sysctl("hw.optional.arm.FEAT_AES: 1\nhw.memsize: 1\n") == 90);
    // The Apple core's Advanced SIMD is there whatever sysctl printed (AArch64 requires it);
    // the rest only as flags say. Hand-made lines in the shape of `sysctl hw.optional` on
    // a Mac with an M3 (FEAT_SME 0).
    {
        using ah::cpu_feature;
        const auto bare = ah::apple_host(r.machine).cpu.features;
        CHECK(bare.has(cpu_feature::neon));
        CHECK_FALSE(bare.has(cpu_feature::asimd_dotprod));
        const auto flags = ah::parse_sysctl(
            "machdep.cpu.brand_string: Apple M3\nhw.optional.arm.FEAT_DotProd: 1\nhw.optional.arm.FEAT_FP16: 1\n"
            "hw.optional.arm.FEAT_I8MM: 1\nhw.optional.arm.FEAT_BF16: 1\nhw.optional.arm.FEAT_SME: 0\n"
            "hw.optional.neon: 1\nhw.optional.neon_fp16: 1\nhw.optional.arm.FEAT_SHA3: 1\n");
        INFO(problems_of(flags.problems));
        CHECK(flags.problems.empty());
        const auto f = ah::apple_host(flags.machine).cpu.features;
        for (const auto on : {cpu_feature::neon, cpu_feature::asimd_dotprod, cpu_feature::asimd_fp16,
                              cpu_feature::i8mm, cpu_feature::arm_bf16})
            CHECK(f.has(on));
        CHECK_FALSE(f.has(cpu_feature::sme));
        CHECK(ah::parse_sysctl("hw.optional.arm.FEAT_SME: yes\nhw.optional.neon: 2\n").problems.size() == 2);
        // An Intel Mac's CPU is told nothing of Arm.
        CHECK(ah::apple_host(ah::parse_sysctl("machdep.cpu.brand_string: Intel(R) Core(TM) i9-9980HK CPU @ 2.40GHz\n")
                                 .machine)
                  .cpu.features.bits == 0);
    }
    // Hand-made: the core split with capitals reads the same.
    CHECK(*ah::parse_system_profiler_text("Hardware:\n  Total Number of Cores: 14 (10 Performance and 4 Efficiency)\n")
               .machine.efficiency_cores == 4u);

    CHECK(ah::parse_sysctl("").problems.empty());
    CHECK(ah::parse_sysctl("\n \n").devices.empty());
    r = ah::parse_sysctl("hw.memsize: 99999999999999999999999\nhw.memsize: -1\nhw.memsize: 0\n"
                         "machdep.cpu.core_count: 1e9\nMemTotal: 1 kB\ngarbage\n\xff\xfe\nhw.packages: 99999\n");
    CHECK(r.problems.size() == 8);
    CHECK_FALSE(r.machine.packages.has_value());
    CHECK_FALSE(r.machine.memsize_bytes.has_value());
    CHECK_FALSE(r.machine.cores.has_value());
    r = ah::parse_sysctl("machdep.cpu.brand_string: Apple \xff M1\n");
    CHECK(r.machine.cpu_brand == "Apple ? M1");
    CHECK(r.problems.size() == 1);
    r = ah::parse_sysctl("machdep.cpu.brand_string: " + std::string(1 << 20, 'x') + "\n");
    CHECK(r.machine.cpu_brand.size() == ah::detail::apple::max_text);
    std::string many;
    for (int i = 0; i < 5000; ++i) many += "x\n";
    CHECK(ah::parse_sysctl(many).problems.size() == ah::detail::parsing::max_problems + 1);

    CHECK(ah::parse_sysctl_brand_string("").problems.empty());
    r = ah::parse_sysctl_brand_string("Apple M2 Max\n");
    CHECK(r.devices.size() == 2);
    CHECK(ah::parse_sysctl_brand_string("a\nb\n").problems.size() == 1);
}

TEST_CASE("apple_devices: unified memory is counted once") {
    // The machine's memory appears on the host, the CPU, the GPU and the Neural Engine;
    // the registry pools unified devices with the CPU and counts that pool once.
    ah::apple_machine m;
    if (const auto t = test::capture("system_profiler/SPHardwareDataType_m1-pro-macbookpro18,3.txt"))
        m = ah::parse_system_profiler_text(*t).machine;
    else
        m = ah::parse_system_profiler_text("Hardware:\n  Chip: Apple M1 Pro\n  Memory: 16 GB\n").machine; // hand-made
    const auto devices = ah::apple_devices(m);
    REQUIRE(devices.size() == 2);
    for (const auto& d : devices) {
        CHECK(d.unified_memory);
        CHECK(*d.memory_bytes == 16 * gib);
    }
    ah::accelerator_profile cpu;
    cpu.kind = ah::device_kind::cpu;
    cpu.memory_bytes = {16 * gib, ah::origin::sysfs};
    std::vector<ah::accelerator_profile> all{cpu};
    all.insert(all.end(), devices.begin(), devices.end());
    const ah::accelerator_registry reg(all, {}, ah::apple_host(m));
    CHECK(reg.total_memory() == 16 * gib);             // not 48 GiB
    CHECK(reg.total_accelerator_memory() == 16 * gib); // not 32 GiB
    CHECK(*reg.host().memory.total_bytes == 16 * gib);

    // hw.memsize, when known, is the figure every device carries.
    ah::apple_machine exact = m;
    exact.memsize_bytes = {17179869184ull, ah::origin::tool};
    for (const auto& d : ah::apple_devices(exact)) CHECK(*d.memory_bytes == 17179869184ull);
}

TEST_CASE("apple_devices: chips the catalogue knows, and one it does not know yet") {
    // Hand-made machines: a chip name and a GPU core count, as system_profiler gives them.
    const auto machine = [](std::string chip, std::string gpu_model, std::uint32_t cores) {
        ah::apple_machine m;
        m.chip = std::move(chip);
        m.memsize_bytes = {32 * gib, ah::origin::tool};
        ah::apple_gpu g;
        g.model = std::move(gpu_model);
        g.apple = true;
        g.cores = {cores, ah::origin::tool};
        m.gpus.push_back(g);
        return m;
    };
    SUBCASE("M5: 10-core GPU at 153 GB/s, a 16-core Neural Engine without a TOPS figure") {
        const auto ds = ah::apple_devices(machine("Apple M5", "Apple M5", 10));
        REQUIRE(ds.size() == 2);
        REQUIRE(ds[0].spec != nullptr);
        CHECK(ds[0].spec->name == "Apple M5 10-core GPU");
        CHECK(*ds[0].memory_bandwidth_gbps == 153.0);
        CHECK(ds[1].kind == ah::device_kind::apple_neural_engine);
        CHECK(ds[1].name.view() == "Apple M5 Neural Engine");
        REQUIRE(ds[1].spec != nullptr);
        CHECK(*ds[1].compute_units == 16u);
        CHECK(ds[1].peak.fp16 == 0.0);
    }
    SUBCASE("M5 Max 40-core and M5 Pro 20-core") {
        CHECK(*ah::apple_devices(machine("Apple M5 Max", "Apple M5 Max", 40))[0].memory_bandwidth_gbps == 614.0);
        const auto pro = ah::apple_devices(machine("Apple M5 Pro", "Apple M5 Pro", 20));
        CHECK(*pro[0].memory_bandwidth_gbps == 307.0);
        REQUIRE(pro.size() == 2);
        REQUIRE(pro[1].spec != nullptr);
        CHECK(pro[1].spec->name == "Apple M5 Neural Engine");
        // A bin Apple gave no figures for: the GPU stays unmatched, the engine is still known.
        const auto binned = ah::apple_devices(machine("Apple M5 Max", "Apple M5 Max", 32));
        CHECK(binned[0].spec == nullptr);
        CHECK(!binned[0].memory_bandwidth_gbps);
        REQUIRE(binned.size() == 2);
        CHECK(binned[1].spec != nullptr);
    }
    SUBCASE("a chip newer than the catalogue: both devices listed, without figures") {
        const auto ds = ah::apple_devices(machine("Apple M9 Ultra", "Apple M9 Ultra", 96));
        REQUIRE(ds.size() == 2);
        CHECK(ds[0].kind == ah::device_kind::metal_gpu);
        CHECK(ds[0].spec == nullptr);
        CHECK(*ds[0].compute_units == 96u);
        CHECK(ds[1].kind == ah::device_kind::apple_neural_engine);
        CHECK(ds[1].name.view() == "Apple M9 Ultra Neural Engine");
        CHECK(ds[1].spec == nullptr);
        CHECK(*ds[1].memory_bytes == 32 * gib);
        CHECK(ds[1].unified_memory);
    }
    SUBCASE("a virtual machine's chip (macOS CI runners name it \"Apple M1 (Virtual)\"): no Neural Engine") {
        const auto ds = ah::apple_devices(machine("Apple M1 (Virtual)", "Apple M1 (Virtual)", 0));
        REQUIRE(ds.size() == 1);
        CHECK(ds[0].kind == ah::device_kind::metal_gpu);
    }
    SUBCASE("an Apple GPU that is not a chip (a virtual machine's): no Neural Engine") {
        ah::apple_machine m = machine("", "Apple Paravirtual device", 0);
        m.gpus[0].cores = {};
        const auto ds = ah::apple_devices(m);
        REQUIRE(ds.size() == 1);
        CHECK(ds[0].kind == ah::device_kind::metal_gpu);
    }
}

TEST_CASE("merge_apple_machine") {
    ah::apple_machine a, b;
    a.chip = "Apple M1";
    b.chip = "Apple M2";
    b.memsize_bytes = {8 * gib, ah::origin::tool};
    b.gpus.push_back(ah::apple_gpu{"Apple M2", "Apple", true, true, {10, ah::origin::tool}, "Metal 3"});
    ah::merge_apple_machine(a, b);
    CHECK(a.chip == "Apple M1"); // kept
    CHECK(*a.memsize_bytes == 8 * gib);
    CHECK(a.gpus.size() == 1);
}

namespace {
std::string sysctl_key() { return ah::command_line_of(ah::apple_sysctl_request().argv); }
std::string profiler_key() { return ah::command_line_of(ah::apple_system_profiler_request().argv); }
} // namespace

TEST_CASE("apple_probe") {
    const auto s = ah::apple_sysctl_request();
    CHECK(sysctl_key() == "sysctl hw.memsize machdep.cpu.brand_string hw.packages hw.physicalcpu hw.logicalcpu");
    CHECK(s.timeout == std::chrono::seconds(5));
    const auto p = ah::apple_system_profiler_request();
    CHECK(p.timeout == std::chrono::seconds(15));
#if AI_HWACCEL_JSON
    CHECK(profiler_key() == "system_profiler SPDisplaysDataType SPHardwareDataType -json");
    // Hand-made: both data types of an M1 Pro with the 16-core GPU.
    const std::string profiler_out =
        R"({"SPDisplaysDataType":[{"_name":"Apple M1 Pro","spdisplays_mtlgpufamilysupport":"spdisplays_metal3",
        "spdisplays_vendor":"sppci_vendor_Apple","sppci_bus":"spdisplays_builtin","sppci_cores":"16",
        "sppci_model":"Apple M1 Pro"}],"SPHardwareDataType":[{"chip_type":"Apple M1 Pro",
        "number_processors":"proc 10:8:2","physical_memory":"16 GB"}]})";
#else
    CHECK(profiler_key() == "system_profiler SPDisplaysDataType SPHardwareDataType");
    const std::string profiler_out = "Graphics/Displays:\n\n    Apple M1 Pro:\n\n      Chipset Model: Apple M1 Pro\n"
                                     "      Total Number of Cores: 16\n      Vendor: Apple (0x106b)\n\n"
                                     "Hardware:\n\n    Hardware Overview:\n\n      Chip: Apple M1 Pro\n"
                                     "      Memory: 16 GB\n"; // hand-made
#endif

    SUBCASE("captured outputs of both tools (hand-made)") {
        test::scratch_dir dir;
        dir.write("ai-hwaccel-tools/index",
                  "0\tsysctl.txt\t" + sysctl_key() + "\n0\tsp.out\t" + profiler_key() + "\n");
        dir.write("ai-hwaccel-tools/sysctl.txt", "hw.memsize: 17179869184\nmachdep.cpu.brand_string: Apple M1 Pro\n");
        dir.write("ai-hwaccel-tools/sp.out", profiler_out);
        const auto out = ah::apple_probe{}.probe(ah::host_system(dir.path().string()));
        CHECK(out.warnings.empty());
        REQUIRE(out.devices.size() == 2);
        const auto* gpu = find_kind(out.devices, ah::device_kind::metal_gpu);
        REQUIRE(gpu != nullptr);
        CHECK(gpu->name.view() == "Apple M1 Pro");
        CHECK(*gpu->compute_units == 16u);
        CHECK(*gpu->memory_bytes == 17179869184ull);
        REQUIRE(gpu->spec != nullptr);
        CHECK(gpu->spec->name == "Apple M1 Pro 16-core GPU");
        check_neural_engine(out.devices, "Apple M1 Pro Neural Engine", "Apple M1 Neural Engine", 11);
    }
    SUBCASE("a machine tree without Apple tools: nothing, silently") {
        test::scratch_dir dir;
        dir.write("ai-hwaccel-tools/index", "0\tq.csv\tnvidia-smi -L\n");
        const auto out = ah::apple_probe{}.probe(ah::host_system(dir.path().string()));
        CHECK(out.devices.empty());
        CHECK(out.warnings.empty());
    }
#if !AI_HWACCEL_OS_MACOS
    SUBCASE("the live host off macOS: nothing, silently") {
        const auto out = ah::apple_probe{}.probe(ah::host_system{});
        CHECK(out.devices.empty());
        CHECK(out.warnings.empty());
    }
#endif
    SUBCASE("sysctl shows Apple Silicon, system_profiler absent: tool_not_found") {
        test::scratch_dir dir;
        dir.write("ai-hwaccel-tools/index", "0\tsysctl.txt\t" + sysctl_key() + "\n");
        dir.write("ai-hwaccel-tools/sysctl.txt", "hw.memsize: 8589934592\nmachdep.cpu.brand_string: Apple M2\n");
        const auto out = ah::apple_probe{}.probe(ah::host_system(dir.path().string()));
        REQUIRE(out.warnings.size() == 1);
        CHECK(out.warnings[0].kind == ah::warning_kind::tool_not_found);
        CHECK(out.warnings[0].backend == ah::backend_id::apple);
        CHECK(out.warnings[0].subject == "system_profiler");
        REQUIRE(out.devices.size() == 2);
        CHECK(*out.devices[0].memory_bytes == 8 * gib);
    }
    SUBCASE("an Intel Mac's sysctl, system_profiler absent: nothing to say") {
        test::scratch_dir dir;
        dir.write("ai-hwaccel-tools/index", "0\tsysctl.txt\t" + sysctl_key() + "\n");
        dir.write("ai-hwaccel-tools/sysctl.txt",
                  "hw.memsize: 17179869184\nmachdep.cpu.brand_string: Intel(R) Core(TM) i7-3820QM CPU @ 2.70GHz\n");
        const auto out = ah::apple_probe{}.probe(ah::host_system(dir.path().string()));
        CHECK(out.devices.empty());
        CHECK(out.warnings.empty());
    }
    SUBCASE("system_profiler fails or hangs; garbage from sysctl") {
        test::scratch_dir dir;
        dir.write("ai-hwaccel-tools/index",
                  "0\tsysctl.txt\t" + sysctl_key() + "\ntimeout\t-\t" + profiler_key() + "\n");
        dir.write("ai-hwaccel-tools/sysctl.txt", "garbage\nmachdep.cpu.brand_string: Apple M3\n");
        const auto out = ah::apple_probe{}.probe(ah::host_system(dir.path().string()));
        CHECK(test::count_kind(out.warnings, ah::warning_kind::tool_timed_out) == 1);
        CHECK(test::count_kind(out.warnings, ah::warning_kind::parse_error) == 1);
        CHECK(test::count_kind(out.warnings, ah::warning_kind::tool_not_found) == 0);
        CHECK(out.devices.size() == 2);

        test::scratch_dir dir2;
        dir2.write("ai-hwaccel-tools/index", "1\t-\t" + sysctl_key() + "\n1\t-\t" + profiler_key() + "\n");
        const auto failed = ah::apple_probe{}.probe(ah::host_system(dir2.path().string()));
        CHECK(failed.devices.empty());
        CHECK(test::count_kind(failed.warnings, ah::warning_kind::tool_failed) == 2);
    }
}

TEST_CASE("a Mac's host: sysctl where there is no /proc") {
    // Hand-made captures of a Mac (no /proc, sysctl and system_profiler answer) and of
    // machines that are not Macs, through the whole detection.
    const std::string m1_pro =
        "hw.memsize: 17179869184\nmachdep.cpu.brand_string: Apple M1 Pro\nhw.packages: 1\nhw.physicalcpu: 10\nhw.logicalcpu: 10\n";
    auto detect_tree = [](const test::scratch_dir& dir) {
        return ah::detector::none().with_host().with(ah::backend_id::apple).parallel(false).run(
            ah::host_system(dir.path().string()));
    };
    auto count_subject = [](std::span<const ah::warning> ws, std::string_view subject) {
        return std::ranges::count_if(ws, [&](const ah::warning& w) { return w.subject == subject; });
    };

    SUBCASE("an Apple Silicon Mac: the CPU, its cores and the memory; no /proc warnings") {
        test::scratch_dir dir;
        dir.write("ai-hwaccel-tools/index", "0\tsysctl.txt\t" + sysctl_key() + "\n");
        dir.write("ai-hwaccel-tools/sysctl.txt", m1_pro);
        const auto reg = detect_tree(dir);
        const auto& cpu = reg.host().cpu;
        CHECK(cpu.model == "Apple M1 Pro");
        CHECK(cpu.maker == ah::vendor::apple);
        CHECK(cpu.arch == ah::cpu_arch::aarch64);
        CHECK(cpu.sockets == 1);
        CHECK(cpu.cores == 10);
        CHECK(cpu.threads == 10);
        CHECK(*reg.host().memory.total_bytes == 16 * gib);
        const auto& d = reg.all().front();
        REQUIRE(d.kind == ah::device_kind::cpu);
        CHECK(d.name.view() == "Apple M1 Pro");
        CHECK(d.maker == ah::vendor::apple);
        CHECK(*d.memory_bytes == 16 * gib);
        CHECK(d.memory_bytes.from == ah::origin::tool);
        CHECK(*d.compute_units == 10u);
        CHECK(count_subject(reg.warnings(), "/proc/cpuinfo") == 0);
        CHECK(count_subject(reg.warnings(), "/proc/meminfo") == 0);
        // Only system_profiler is missing, said once; the unified pool is counted once.
        REQUIRE(reg.warnings().size() == 1);
        CHECK(reg.warnings()[0].subject == "system_profiler");
        CHECK(reg.total_memory() == 16 * gib);
    }
    SUBCASE("an Intel Mac: an x86-64 CPU from Intel, and no Apple device") {
        test::scratch_dir dir;
        dir.write("ai-hwaccel-tools/index", "0\tsysctl.txt\t" + sysctl_key() + "\n");
        dir.write("ai-hwaccel-tools/sysctl.txt",
                  "hw.memsize: 34359738368\nmachdep.cpu.brand_string: Intel(R) Core(TM) i9-9980HK CPU @ 2.40GHz\nhw.packages: 1\n"
                  "hw.physicalcpu: 8\nhw.logicalcpu: 16\n");
        const auto reg = detect_tree(dir);
        CHECK(reg.host().cpu.maker == ah::vendor::intel);
        CHECK(reg.host().cpu.arch == ah::cpu_arch::x86_64);
        CHECK(reg.host().cpu.cores == 8);
        CHECK(reg.host().cpu.threads == 16);
        REQUIRE(reg.all().size() == 1);
        CHECK(*reg.all().front().memory_bytes == 32 * gib);
        CHECK(reg.warnings().empty());
    }
    SUBCASE("/proc is there: sysctl is not asked") {
        test::scratch_dir dir;
        dir.write("proc/cpuinfo", "processor\t: 0\nmodel name\t: Hand-made CPU\n");
        dir.write("proc/meminfo", "MemTotal:       8388608 kB\n");
        dir.write("ai-hwaccel-tools/index", "0\tsysctl.txt\t" + sysctl_key() + "\n");
        dir.write("ai-hwaccel-tools/sysctl.txt", m1_pro);
        const auto reg = detect_tree(dir);
        CHECK(reg.host().cpu.model == "Hand-made CPU");
        CHECK(*reg.host().memory.total_bytes == 8 * gib);
        CHECK(reg.all().front().name.view() == "Hand-made CPU");
    }
    SUBCASE("one of the two files there: not a Mac, sysctl is not asked") {
        test::scratch_dir dir;
        dir.write("proc/meminfo", "MemTotal:       8388608 kB\n");
        dir.write("ai-hwaccel-tools/index", "0\tsysctl.txt\t" + sysctl_key() + "\n");
        dir.write("ai-hwaccel-tools/sysctl.txt", m1_pro);
        const auto reg = detect_tree(dir);
        CHECK(reg.host().cpu.model.empty());
        CHECK(*reg.host().memory.total_bytes == 8 * gib);
        CHECK(count_subject(reg.warnings(), "/proc/cpuinfo") == 1);
    }
    SUBCASE("no /proc and no sysctl: the files' warnings stay") {
        test::scratch_dir dir;
        dir.write("ai-hwaccel-tools/index", "0\tq.csv\tnvidia-smi -L\n");
        const auto reg = detect_tree(dir);
        CHECK(reg.host().cpu.model.empty());
        CHECK(count_subject(reg.warnings(), "/proc/cpuinfo") == 1);
        CHECK(count_subject(reg.warnings(), "/proc/meminfo") == 1);
    }
    SUBCASE("sysctl fails, hangs or prints nothing it knows: the files' warnings stay, the tool's once") {
        for (const std::string outcome : {"1\t-\t", "timeout\t-\t", "0\tsysctl.txt\t"}) {
            CAPTURE(outcome);
            test::scratch_dir dir;
            dir.write("ai-hwaccel-tools/index", outcome + sysctl_key() + "\n");
            dir.write("ai-hwaccel-tools/sysctl.txt", "kern.ostype: Darwin\ngarbage\n");
            const auto reg = detect_tree(dir);
            CHECK(reg.host().cpu.model.empty());
            CHECK_FALSE(reg.host().memory.total_bytes);
            CHECK(count_subject(reg.warnings(), "/proc/cpuinfo") == 1);
            CHECK(count_subject(reg.warnings(), "/proc/meminfo") == 1);
            CHECK(count_subject(reg.warnings(), "sysctl") == 1); // the host's and the probe's run, said once
        }
    }
#if !AI_HWACCEL_OS_MACOS
    SUBCASE("a live Linux host without /proc never runs sysctl for itself") {
        // The live host (it replays no tools) with /proc hidden, through a view that fails
        // the test if asked to run anything.
        struct no_proc_no_tools : ah::host_system {
            ah::file_read read_file(std::string_view path, std::size_t cap) const {
                if (path.starts_with("/proc/")) return ah::file_read{ah::read_status::not_found, {}};
                return ah::host_system::read_file(path, cap);
            }
            ah::tool_result run(const ah::tool_request& r) const {
                FAIL("ran " << ah::command_line_of(r.argv));
                return {};
            }
        };
        static_assert(ah::system_view<no_proc_no_tools>);
        const auto reg = ah::detector::none().with_host().run(no_proc_no_tools{});
        CHECK(count_subject(reg.warnings(), "/proc/cpuinfo") == 1);
        CHECK(count_subject(reg.warnings(), "/proc/meminfo") == 1);
    }
#endif
}

namespace {
struct apple_format {
    const char* dir_or_file;
    int (*sniff)(std::string_view) noexcept;
    void (*parse)(std::string_view, ah::capture_parse&);
    const char* name;
};

// Which of the Apple formats owns each capture of system_profiler/ and sysctl/.
int expected_owner(const std::string& rel) {
    if (rel.starts_with("system_profiler/") && rel.ends_with(".json")) return 0;
    if (rel.starts_with("system_profiler/")) return 1;
    if (rel.starts_with("sysctl/n-")) return 3;
    if (rel.starts_with("sysctl/")) return 2;
    return -1;
}
} // namespace

TEST_CASE("detail::formats::sniff_system_profiler_* / sniff_sysctl*") {
    namespace f = ah::detail::formats;
    const std::vector<apple_format> formats = {
#if AI_HWACCEL_JSON
        {"system_profiler json", f::sniff_system_profiler_json, f::parse_system_profiler_json_capture,
         "system-profiler-json"},
#else
        {"system_profiler json", nullptr, nullptr, "system-profiler-json"},
#endif
        {"system_profiler text", f::sniff_system_profiler_text, f::parse_system_profiler_text_capture,
         "system-profiler"},
        {"sysctl", f::sniff_sysctl, f::parse_sysctl_capture, "sysctl"},
        {"sysctl -n brand", f::sniff_sysctl_brand_string, f::parse_sysctl_brand_string_capture,
         "sysctl-brand-string"},
    };
    std::size_t mine = 0, others = 0;
    const std::size_t captures = test::for_each_capture([&](std::string_view rel, const std::string& text) {
        const int owner = expected_owner(std::string(rel));
        for (std::size_t i = 0; i < formats.size(); ++i) {
            if (!formats[i].sniff) continue;
            const std::string format = formats[i].dir_or_file;
            CAPTURE(format);
            const int score = formats[i].sniff(text);
            if (static_cast<int>(i) == owner) {
                CHECK(score > 0);
                ah::capture_parse out;
                out.format = formats[i].name;
                formats[i].parse(text, out);
                CHECK(out.warnings.empty());
                CHECK((out.host.has_value() || !out.devices.empty())); // displays alone describe no host
                ++mine;
            } else {
                CHECK(score == 0);
            }
        }
        if (owner < 0) ++others;
    });
    if (captures != 0) {
        CHECK(mine >= 10);
        CHECK(others > 100);
    }

    // Hand-made: nothing of ours in a parse gives one "nothing found".
    ah::capture_parse empty;
    empty.format = "sysctl";
    f::parse_sysctl_capture("", empty);
    CHECK(test::count_kind(empty.warnings, ah::warning_kind::parse_error) == 1);
    CHECK(f::sniff_sysctl("") == 0);
    CHECK(f::sniff_sysctl("kernel.ostype: Linux\n") == 0);
    CHECK(f::sniff_system_profiler_text("") == 0);
    CHECK(f::sniff_sysctl_brand_string("") == 0);
    CHECK(f::sniff_sysctl_brand_string("Apple M1\n") == 60);
}

#endif // AI_HWACCEL_BACKEND_APPLE
