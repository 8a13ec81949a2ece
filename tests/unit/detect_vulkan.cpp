#include "ai_hwaccel/detect/vulkan.hpp"

#include "ai_hwaccel/detect/formats.hpp"
#include "ai_hwaccel/detect/merge.hpp"
#if AI_HWACCEL_BACKEND_CUDA
#include "ai_hwaccel/detect/nvidia.hpp"
#endif

#include "fixtures.hpp"

#include <doctest/doctest.h>

#include <filesystem>
#include <string>

#if AI_HWACCEL_BACKEND_VULKAN

namespace ah = ai_hwaccel;

namespace {

std::string problems_of(const std::vector<ah::parse_problem>& ps) {
    std::string s;
    for (const auto& p : ps) s += std::to_string(p.line) + ": " + p.message + "\n";
    return s;
}

constexpr const char* laptop = "vulkaninfo/summary_i9-13900hx-laptop_intel-rpls_rtx4070-laptop_llvmpipe.txt";
constexpr const char* jetson = "vulkaninfo/summary_jetson-orin-nano_tegra-nvgpu.txt";
constexpr const char* win4090 = "vulkaninfo/summary_windows_rtx4090_driver560.txt";
constexpr const char* win3070 = "vulkaninfo/summary_windows_ryzen9-7950x-igpu_rtx3070_author-trimmed.txt";
constexpr const char* rx5500 = "vulkaninfo/full-not-summary_rx5500xt_radv_mesa23.1.txt";

} // namespace

static_assert(ah::backend_probe<ah::vulkan_probe, ah::host_system>);
static_assert(ah::descriptor_of<ah::vulkan_probe>().name == "vulkan");
static_assert(ah::detail::vulkan::version_text("1.3.246 (4206838)") == "1.3.246");
static_assert(ah::detail::vulkan::version_text("4198400 (1.1.0)") == "1.1.0");
static_assert(ah::detail::vulkan::version_text("595.84.0.0") == "595.84.0.0");
static_assert(ah::detail::vulkan::gpu_header("GPU12:") == 12u);
static_assert(!ah::detail::vulkan::gpu_header("GPU id : 0 (x):"));

TEST_CASE("parse_vulkaninfo: --summary captures") {
    SUBCASE("laptop: Intel iGPU, RTX 4070 Laptop, llvmpipe") {
        const auto t = test::capture(laptop);
        if (!t) return;
        const auto r = ah::parse_vulkaninfo(*t);
        INFO(problems_of(r.problems));
        CHECK(r.problems.empty());
        REQUIRE(r.devices.size() == 3);
        REQUIRE(r.details.size() == 3);

        const auto& igpu = r.devices[0];
        CHECK(igpu.kind == ah::device_kind::vulkan_gpu);
        CHECK(igpu.index == 0);
        CHECK(igpu.name.view() == "Intel(R) Graphics (RPL-S)");
        CHECK(igpu.maker == ah::vendor::intel);
        CHECK(igpu.pci_device_id == 0xa788);
        CHECK(igpu.driver_version.view() == "25.2.8");
        CHECK(igpu.uuid.view() == "868088a7-0400-0000-0002-000000000000");
        CHECK(igpu.unified_memory);
        CHECK_FALSE(igpu.software);
        CHECK(igpu.is_accelerator());
        CHECK_FALSE(igpu.memory_bytes.has_value()); // the summary has no memory
        CHECK(r.details[0].type == ah::vulkan_device_type::integrated_gpu);
        CHECK(r.details[0].api_version == "1.4.318");
        CHECK(r.details[0].driver_id == "DRIVER_ID_INTEL_OPEN_SOURCE_MESA");
        CHECK(r.details[0].driver_info == "Mesa 25.2.8-0ubuntu0.24.04.2");
        CHECK(r.details[0].heaps.empty());

        const auto& nv = r.devices[1];
        CHECK(nv.name.view() == "NVIDIA GeForce RTX 4070 Laptop GPU");
        CHECK(nv.maker == ah::vendor::nvidia);
        CHECK(nv.pci_device_id == 0x2860);
        CHECK(nv.driver_version.view() == "595.84"); // driverInfo; driverVersion prints 595.84.0.0
        CHECK(nv.uuid.view() == "7e611089-1272-699d-8985-ab84fef4311e");
        CHECK_FALSE(nv.unified_memory);
        CHECK_FALSE(nv.software);
        CHECK(r.details[1].type == ah::vulkan_device_type::discrete_gpu);
        CHECK(*r.details[1].vendor_id == 0x10de);
        CHECK(*r.details[1].device_id == 0x2860);
        // The catalogue has no laptop 4070: not matched to the desktop card.
        CHECK(nv.spec == nullptr);
        CHECK_FALSE(nv.memory_bytes.has_value());

        const auto& sw = r.devices[2];
        CHECK(sw.name.view() == "llvmpipe (LLVM 20.1.2, 256 bits)");
        CHECK(sw.software);
        CHECK_FALSE(sw.is_accelerator());
        CHECK(sw.maker == ah::vendor::mesa);
        CHECK(sw.pci_device_id == 0);
        CHECK(sw.spec == nullptr);
        CHECK(r.details[2].type == ah::vulkan_device_type::cpu);
        CHECK(r.details[2].driver_id == "DRIVER_ID_MESA_LLVMPIPE");
    }
    SUBCASE("Jetson Orin Nano: integrated, 32-bit device id is not a PCI id") {
        const auto t = test::capture(jetson);
        if (!t) return;
        const auto r = ah::parse_vulkaninfo(*t);
        INFO(problems_of(r.problems));
        CHECK(r.problems.empty());
        REQUIRE(r.devices.size() == 1);
        const auto& d = r.devices[0];
        CHECK(d.name.view() == "NVIDIA Tegra Orin (nvgpu)");
        CHECK(d.maker == ah::vendor::nvidia);
        CHECK(*r.details[0].device_id == 0x97ba03d7u);
        CHECK(d.pci_device_id == 0);
        CHECK(d.unified_memory);
        CHECK(d.driver_version.view() == "595.78"); // driverInfo, not 595.78.0.0
        CHECK(d.uuid.view() == "1388f9e0-987e-54a0-908f-6a30d8fd5f29");
        CHECK(r.details[0].type == ah::vulkan_device_type::integrated_gpu);
        CHECK_FALSE(d.software);
    }
    SUBCASE("Windows RTX 4090 (8-space indents): matched by PCI id") {
        const auto t = test::capture(win4090);
        if (!t) return;
        const auto r = ah::parse_vulkaninfo(*t);
        INFO(problems_of(r.problems));
        CHECK(r.problems.empty());
        REQUIRE(r.devices.size() == 1);
        const auto& d = r.devices[0];
        CHECK(d.name.view() == "NVIDIA GeForce RTX 4090");
        CHECK(d.pci_device_id == 0x2684);
        CHECK(d.driver_version.view() == "560.70"); // driverInfo, not 560.70.0.0
        CHECK(d.uuid.view() == "11deafdf-9f15-e857-2a87-8acc153fc9f7");
        CHECK(r.details[0].api_version == "1.3.280");
        CHECK(r.details[0].driver_info == "560.70");
        REQUIRE(d.spec != nullptr);
        CHECK(d.spec->name == "NVIDIA GeForce RTX 4090");
        // Memory from the catalogue, marked so: never a default.
        CHECK(d.memory_bytes.from == ah::origin::catalogue);
        CHECK(*d.memory_bytes == 24564ull * 1024 * 1024); // as the driver reports it (nvidia-smi)
    }
    SUBCASE("Windows Ryzen iGPU + RTX 3070") {
        const auto t = test::capture(win3070);
        if (!t) return;
        const auto r = ah::parse_vulkaninfo(*t);
        INFO(problems_of(r.problems));
        CHECK(r.problems.empty());
        REQUIRE(r.devices.size() == 2);
        CHECK(r.devices[0].name.view() == "AMD Radeon(TM) Graphics");
        CHECK(r.devices[0].maker == ah::vendor::amd);
        CHECK(r.devices[0].pci_device_id == 0x164e);
        CHECK(r.devices[0].unified_memory);
        CHECK(r.devices[0].driver_version.view() == "2.0.294");
        CHECK(r.devices[0].uuid.view() == "00000000-0c00-0000-0000-000000000000");
        CHECK(r.details[0].driver_id == "DRIVER_ID_AMD_PROPRIETARY");
        CHECK(r.devices[0].spec == nullptr);
        CHECK(r.devices[1].name.view() == "NVIDIA GeForce RTX 3070");
        CHECK(r.devices[1].index == 1);
        CHECK(r.devices[1].pci_device_id == 0x2488);
        CHECK(r.devices[1].driver_version.view() == "581.57"); // driverInfo, not 581.57.0.0
        CHECK(r.devices[1].uuid.view() == "91c0b9f4-e340-3c73-1422-c227930ae260");
        REQUIRE(r.devices[1].spec != nullptr);
        CHECK(r.devices[1].spec->name == "NVIDIA GeForce RTX 3070");
    }
}

TEST_CASE("parse_vulkaninfo: full text (RX 5500 XT, RADV, CRLF)") {
    const auto t = test::capture(rx5500);
    if (!t) return;
    const auto r = ah::parse_vulkaninfo(*t);
    INFO(problems_of(r.problems));
    CHECK(r.problems.empty());
    REQUIRE(r.devices.size() == 1);
    const auto& d = r.devices[0];
    const auto& x = r.details[0];
    CHECK(d.kind == ah::device_kind::vulkan_gpu);
    CHECK(d.name.view() == "AMD Radeon RX 5500 XT (RADV NAVI14)");
    CHECK(d.maker == ah::vendor::amd);
    CHECK(d.pci_device_id == 0x7340);
    CHECK(d.driver_version.view() == "23.1.3");
    CHECK(x.api_version == "1.3.246");
    CHECK(x.type == ah::vulkan_device_type::discrete_gpu);
    CHECK(x.driver_id == "DRIVER_ID_MESA_RADV");
    CHECK(x.driver_name == "radv");
    CHECK(x.driver_info == "Mesa 23.1.3");
    CHECK(x.driver_uuid == "414d442d-4d45-5341-2d44-525600000000");
    CHECK(d.uuid.view() == "00000000-0300-0000-0000-000000000000");
    REQUIRE(d.pci);
    CHECK(*d.pci == ah::pci_address{0, 0x03, 0, 0});
    REQUIRE(x.heaps.size() == 2);
    CHECK(x.heaps[0] == ah::vulkan_memory_heap{16758302720ull, false});
    CHECK(x.heaps[1] == ah::vulkan_memory_heap{4278190080ull, true});
    CHECK(*d.memory_bytes == 4278190080ull); // the device-local heap, not host memory
    CHECK(d.memory_bytes.from == ah::origin::tool);
    CHECK_FALSE(d.unified_memory);
    CHECK_FALSE(d.software);
}

TEST_CASE("parse_vulkaninfo: an H200 on NVIDIA's driver 580 (real: summary, full text, profile JSON)") {
    // tests/data/nvidia-h200-vm: vulkaninfo 1.3.239 on one H200 of this project's device
    // machine, the three ways it prints (SOURCE.md there).
    const std::string dir = std::string(AI_HWACCEL_TEST_DATA_DIR) + "/nvidia-h200-vm/";
    const auto summary_text = test::read_file(dir + "vulkaninfo-summary.txt");
    const auto full_text = test::read_file(dir + "vulkaninfo.txt");
    REQUIRE(summary_text);
    REQUIRE(full_text);
    std::vector<ah::vulkan_parse_result> views{ah::parse_vulkaninfo(*summary_text), ah::parse_vulkaninfo(*full_text)};
#if AI_HWACCEL_JSON
    const auto json_text = test::read_file(dir + "VP_VULKANINFO_NVIDIA_H200_580_159_4_256.json");
    REQUIRE(json_text);
    views.push_back(ah::parse_vulkaninfo_json(*json_text));
    CHECK(ah::recognise_format(*json_text) == ah::find_capture_format("vulkaninfo-json"));
#endif
    CHECK(ah::recognise_format(*summary_text) == ah::find_capture_format("vulkaninfo-summary"));
    CHECK(ah::recognise_format(*full_text) == ah::find_capture_format("vulkaninfo-text"));
    for (const auto& r : views) {
        INFO(problems_of(r.problems));
        CHECK(r.problems.empty());
        REQUIRE(r.devices.size() == 1);
        const auto& d = r.devices[0];
        const auto& x = r.details[0];
        CHECK(d.kind == ah::device_kind::vulkan_gpu);
        CHECK(d.maker == ah::vendor::nvidia);
        CHECK(d.name.view() == "NVIDIA H200");
        CHECK(d.uuid.view() == "dfeff0e1-f84d-5d67-2198-55aa17e58eb9"); // nvidia-smi's GPU-dfeff0e1-…
        CHECK(d.pci_device_id == 0x2335);
        CHECK(x.type == ah::vulkan_device_type::discrete_gpu);
        CHECK(x.vendor_id == 0x10deu);
        CHECK(x.api_version == "1.4.312");
        CHECK(x.driver_id.ends_with("DRIVER_ID_NVIDIA_PROPRIETARY")); // "VK_…" in the JSON
        CHECK(x.driver_name == "NVIDIA");
        CHECK(x.driver_info == "580.159.04");
        CHECK(x.driver_uuid == "c7d8a05e-be16-5883-a818-6d61bf0812b6");
        // driverVersion reads 580.159.4.256 in vulkaninfo's text and packs 580.159.4.0 in
        // the JSON: the driver's own string is kept, as nvidia-smi prints it.
        CHECK(d.driver_version.view() == "580.159.04");
        CHECK(d.arch.view() == "9.0"); // the catalogue's
        CHECK_FALSE(d.software);
        CHECK_FALSE(d.unified_memory);
    }
    CHECK(views[0].details[0].driver_info == "580.159.04");
    // The full text and the JSON have the PCI address; only the full text the heaps.
    CHECK_FALSE(views[0].devices[0].pci.has_value());
    CHECK(*views[1].devices[0].pci == ah::pci_address{0, 0, 6, 0});
    CHECK(views[1].details[0].heaps ==
          std::vector<ah::vulkan_memory_heap>{{150754820096, true}, {101361423360, false}});
    CHECK(*views[1].devices[0].memory_bytes == 143771ull * 1024 * 1024); // nvidia-smi's total
#if AI_HWACCEL_JSON
    CHECK(*views[2].devices[0].pci == ah::pci_address{0, 0, 6, 0});
    CHECK(views[2].details[0].heaps.empty());
#endif
}

TEST_CASE("parse_vulkaninfo: heaps and software renderers (hand-made)") {
    // Hand-made full text: a discrete GPU with a small second device-local heap (the BAR
    // window) and an integrated GPU whose device-local heap is host RAM.
    const std::string text = "Device Properties and Extensions:\n"
                             "=================================\n"
                             "GPU0:\n"
                             "VkPhysicalDeviceProperties:\n"
                             "\tapiVersion = 1.3.280 (4206872)\n"
                             "\tdriverVersion = 560.70.0.0 (2349957120)\n"
                             "\tvendorID = 0x10de\n"
                             "\tdeviceID = 0x2684\n"
                             "\tdeviceType = PHYSICAL_DEVICE_TYPE_DISCRETE_GPU\n"
                             "\tdeviceName = NVIDIA GeForce RTX 4090\n"
                             "VkPhysicalDeviceLimits:\n"
                             "\tdeviceID = 0x1\n" // not the properties block: ignored
                             "VkPhysicalDevicePCIBusInfoPropertiesEXT:\n"
                             "\tpciDomain = 0\n\tpciBus = 1\n\tpciDevice = 0\n\tpciFunction = 0\n"
                             "VkPhysicalDeviceMemoryProperties:\n"
                             "memoryHeaps: count = 3\n"
                             "\tmemoryHeaps[0]:\n\t\tsize = 25757220864 (0x5ff400000) (23.99 GiB)\n"
                             "\t\tflags: count = 1\n\t\t\tMEMORY_HEAP_DEVICE_LOCAL_BIT\n"
                             "\tmemoryHeaps[1]:\n\t\tsize = 33434488832 (0x7c8e00000) (31.14 GiB)\n\t\tflags:\n\t\t\tNone\n"
                             "\tmemoryHeaps[2]:\n\t\tsize = 257949696 (0xf600000) (246.00 MiB)\n"
                             "\t\tflags: count = 1\n\t\t\tMEMORY_HEAP_DEVICE_LOCAL_BIT\n"
                             "memoryTypes: count = 1\n"
                             "\tmemoryTypes[0]:\n\t\theapIndex = 1\n\t\tpropertyFlags = 0x0001: count = 1\n"
                             "\t\t\tMEMORY_PROPERTY_DEVICE_LOCAL_BIT\n"
                             "GPU1:\n"
                             "VkPhysicalDeviceProperties:\n"
                             "\tvendorID = 0x8086\n\tdeviceID = 0xa788\n"
                             "\tdeviceType = PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU\n"
                             "\tdeviceName = Intel(R) Graphics\n"
                             "VkPhysicalDeviceMemoryProperties:\n"
                             "\tmemoryHeaps[0]:\n\t\tsize = 33434488832 (0x7c8e00000) (31.14 GiB)\n"
                             "\t\tflags: count = 1\n\t\t\tMEMORY_HEAP_DEVICE_LOCAL_BIT\n"
                             "GPU2:\n"
                             "VkPhysicalDeviceProperties:\n"
                             "\tvendorID = 0x1ae0\n\tdeviceID = 0xc0de\n"
                             "\tdeviceType = PHYSICAL_DEVICE_TYPE_OTHER\n"
                             "\tdeviceName = SwiftShader Device (Subzero)\n";
    const auto r = ah::parse_vulkaninfo(text);
    INFO(problems_of(r.problems));
    CHECK(r.problems.empty());
    REQUIRE(r.devices.size() == 3);
    CHECK(*r.devices[0].memory_bytes == 25757220864ull); // largest device-local, not the sum
    CHECK(*r.devices[0].pci == ah::pci_address{0, 1, 0, 0});
    CHECK(r.devices[0].driver_version.view() == "560.70.0.0");
    CHECK(r.devices[0].pci_device_id == 0x2684);
    REQUIRE(r.devices[0].spec != nullptr);
    CHECK(r.devices[0].spec->name == "NVIDIA GeForce RTX 4090");
    CHECK(r.details[0].heaps.size() == 3);
    CHECK(r.devices[1].unified_memory);
    CHECK(*r.devices[1].memory_bytes == 33434488832ull);
    CHECK(r.devices[2].software);
    CHECK(r.devices[2].maker == ah::vendor::google_swiftshader);
    CHECK(r.devices[2].pci_device_id == 0);
    CHECK_FALSE(r.devices[2].is_accelerator());

    // Dozen (Vulkan over Direct3D 12) wraps the adapter's name, WARP's among them.
    const auto warp = ah::parse_vulkaninfo("Devices:\n========\nGPU0:\n"
                                           "\tvendorID = 0x1414\n\tdeviceID = 0x008c\n"
                                           "\tdeviceType = PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU\n"
                                           "\tdeviceName = Microsoft Direct3D12 (Microsoft Basic Render Driver)\n"
                                           "\tdriverID = DRIVER_ID_MESA_DOZEN\n");
    REQUIRE(warp.devices.size() == 1);
    CHECK(warp.devices[0].software);
}

TEST_CASE("parse_vulkaninfo: RADV's split VRAM heaps, an old driverVersion, a heap past any device (hand-made)") {
    // RADV without resizable BAR: VRAM less the CPU-visible 256 MiB, then the visible part as
    // a device-local heap of its own (Mesa's radv_physical_device_init_mem_types), between
    // them the GTT heap. The same heaps from NVIDIA's driver would be one VRAM heap and its
    // BAR window inside it.
    const auto gpu = [](std::string_view driver_id, std::string_view driver_version) {
        return std::string("Device Properties and Extensions:\n"
                           "=================================\n"
                           "GPU0:\n"
                           "VkPhysicalDeviceProperties:\n"
                           "\tdriverVersion = ") +
               std::string(driver_version) +
               "\n"
               "\tvendorID = 0x1002\n"
               "\tdeviceID = 0x73bf\n"
               "\tdeviceType = PHYSICAL_DEVICE_TYPE_DISCRETE_GPU\n"
               "\tdeviceName = AMD Radeon RX 6800 XT (RADV NAVI21)\n"
               "VkPhysicalDeviceDriverProperties:\n"
               "\tdriverID = " +
               std::string(driver_id) +
               "\n"
               "VkPhysicalDeviceMemoryProperties:\n"
               "memoryHeaps: count = 3\n"
               "\tmemoryHeaps[0]:\n\t\tsize = 16911433728 (0x3f0000000) (15.75 GiB)\n"
               "\t\tflags: count = 1\n\t\t\tMEMORY_HEAP_DEVICE_LOCAL_BIT\n"
               "\tmemoryHeaps[1]:\n\t\tsize = 33434488832 (0x7c8e00000) (31.14 GiB)\n\t\tflags:\n\t\t\tNone\n"
               "\tmemoryHeaps[2]:\n\t\tsize = 268435456 (0x10000000) (256.00 MiB)\n"
               "\t\tflags: count = 1\n\t\t\tMEMORY_HEAP_DEVICE_LOCAL_BIT\n";
    };
    auto r = ah::parse_vulkaninfo(gpu("DRIVER_ID_MESA_RADV", "23.1.3 (96473091)"));
    INFO(problems_of(r.problems));
    CHECK(r.problems.empty());
    REQUIRE(r.devices.size() == 1);
    CHECK(*r.devices[0].memory_bytes == 16ull << 30); // 15.75 GiB + 256 MiB
    CHECK(r.devices[0].driver_version.view() == "23.1.3");
    r = ah::parse_vulkaninfo(gpu("DRIVER_ID_AMD_OPEN_SOURCE", "2.0.279 (8388887)"));
    REQUIRE(r.devices.size() == 1);
    CHECK(*r.devices[0].memory_bytes == 16911433728ull); // the largest: another driver's window is inside it
    // ANV (Mesa's Intel driver) without resizable BAR lays out its heaps the same way
    // (anv_physical_device_init_heaps): an Arc A770's 16 GiB as unmappable VRAM and the
    // mappable 256 MiB.
    r = ah::parse_vulkaninfo(gpu("DRIVER_ID_INTEL_OPEN_SOURCE_MESA", "23.1.3 (96473091)"));
    REQUIRE(r.devices.size() == 1);
    CHECK(*r.devices[0].memory_bytes == 16ull << 30);

    // vulkaninfo before 2020: the number and its hexadecimal form, decoded as vulkaninfo does
    // for the vendor (Mesa: 10.10.12 bits; NVIDIA: 10.8.8.6 bits).
    r = ah::parse_vulkaninfo(gpu("DRIVER_ID_MESA_RADV", "83898373 (0x5003005)"));
    REQUIRE(r.devices.size() == 1);
    CHECK(r.devices[0].driver_version.view() == "20.3.5");
    r = ah::parse_vulkaninfo(gpu("DRIVER_ID_NVIDIA_PROPRIETARY", "1846542336 (0x6e104000)"));
    REQUIRE(r.devices.size() == 1);
    CHECK(r.devices[0].driver_version.view() == "440.64.0.0");

    // A heap of 2^64 - 1 bytes: reported and left out, not taken as the card's memory.
    std::string huge = gpu("DRIVER_ID_MESA_RADV", "23.1.3 (96473091)");
    huge.replace(huge.find("16911433728 (0x3f0000000)"), 25, "18446744073709551615 (0x)");
    r = ah::parse_vulkaninfo(huge);
    REQUIRE(r.devices.size() == 1);
    REQUIRE(r.problems.size() == 1);
    CHECK(r.problems[0].message.find("past any device") != std::string::npos);
    CHECK(*r.devices[0].memory_bytes == 268435456ull);
}

TEST_CASE("parse_vulkaninfo: hostile input never crashes and is reported") {
    CHECK(ah::parse_vulkaninfo("").devices.empty());
    CHECK(ah::parse_vulkaninfo("").problems.empty());
    // Not vulkaninfo at all: one problem.
    auto r = ah::parse_vulkaninfo("MemTotal: 1 kB\n\x01\x02\xff garbage\n");
    CHECK(r.devices.empty());
    CHECK(r.problems.size() == 1);
    // A section with a device block that identifies nothing.
    r = ah::parse_vulkaninfo("Devices:\n========\nGPU0:\n\tfoo = bar\n");
    CHECK(r.devices.empty());
    CHECK(r.problems.size() == 1);
    // Bad values: each a problem, the device kept with what could be read.
    r = ah::parse_vulkaninfo("Devices:\nGPU0:\n\tvendorID = 10de\n\tdeviceID = 0x123456789\n"
                             "\tdeviceType = PHYSICAL_DEVICE_TYPE_QUANTUM\n\tdeviceName = A\xff\x07Z\n"
                             "\tdeviceUUID = not-a-uuid\n");
    REQUIRE(r.devices.size() == 1);
    CHECK(r.problems.size() == 5);
    CHECK(r.devices[0].name.view() == "A??Z");
    CHECK(r.devices[0].uuid.empty());
    CHECK(r.devices[0].maker == ah::vendor::unknown);
    // Numbers past 2^64, out-of-range PCI parts, heap sizes that are not numbers.
    r = ah::parse_vulkaninfo("Device Properties and Extensions:\nGPU0:\nVkPhysicalDeviceProperties:\n"
                             "\tdeviceName = X\n"
                             "VkPhysicalDevicePCIBusInfoPropertiesEXT:\n\tpciDomain = 99999999999999999999999\n"
                             "\tpciBus = 256\n\tpciDevice = 32\n\tpciFunction = 8\n"
                             "VkPhysicalDeviceMemoryProperties:\n\tmemoryHeaps[0]:\n"
                             "\t\tsize = 999999999999999999999999 (x)\n\t\tflags:\n\t\t\tMEMORY_HEAP_DEVICE_LOCAL_BIT\n");
    REQUIRE(r.devices.size() == 1);
    CHECK(r.problems.size() == 5);
    CHECK_FALSE(r.devices[0].pci);
    CHECK_FALSE(r.devices[0].memory_bytes.has_value());
    // A 1 MB line and a name longer than the profile keeps.
    r = ah::parse_vulkaninfo("Devices:\nGPU0:\n\tdeviceName = " + std::string(1 << 20, 'x') + "\n");
    REQUIRE(r.devices.size() == 1);
    CHECK(r.problems.size() == 1);
    // Thousands of devices and heaps: capped.
    std::string many = "Devices:\n";
    for (int i = 0; i < 3000; ++i) many += "GPU" + std::to_string(i) + ":\n\tdeviceName = G\n";
    r = ah::parse_vulkaninfo(many);
    CHECK(r.devices.size() == ah::detail::parsing::max_rows);
    CHECK(r.problems.size() == 1);
    std::string heaps = "Device Properties and Extensions:\nGPU0:\nVkPhysicalDeviceProperties:\n\tdeviceName = G\n"
                        "VkPhysicalDeviceMemoryProperties:\n";
    for (int i = 0; i < 40; ++i) heaps += "\tmemoryHeaps[" + std::to_string(i) + "]:\n\t\tsize = 1\n";
    r = ah::parse_vulkaninfo(heaps);
    REQUIRE(r.details.size() == 1);
    CHECK(r.details[0].heaps.size() == ah::detail::vulkan::max_heaps);
    CHECK(r.problems.size() == ah::detail::parsing::max_problems + 1); // 24 problems, capped
    // Truncated mid-block: what was read is kept.
    r = ah::parse_vulkaninfo("Devices:\nGPU0:\n\tvendorID = 0x10de\n\tdeviceNa");
    REQUIRE(r.devices.size() == 1);
    CHECK(r.devices[0].maker == ah::vendor::nvidia);
    // Binary.
    std::string bin;
    for (int i = 0; i < 70000; ++i) bin += static_cast<char>((i * 37) & 0xff);
    CHECK(ah::parse_vulkaninfo(bin).devices.empty());
    CHECK(ah::parse_vulkaninfo("Devices:\n" + bin).problems.size() <= ah::detail::parsing::max_problems + 1);
}

#if AI_HWACCEL_JSON
TEST_CASE("parse_vulkaninfo_json (hand-made, in the shape vulkaninfo's profile printer writes)") {
    // Hand-made: the Vulkan Profiles layout of DumpGpuProfileCapabilities (Vulkan-Tools
    // vulkaninfo.cpp): capabilities.device.properties.VkPhysicalDeviceProperties with
    // numeric versions and ids, uint8 arrays for UUIDs. No real capture is available.
    const std::string text = R"({
	"$schema": "https://schema.khronos.org/vulkan/profiles-0.8-latest.json",
	"capabilities": {
		"device": {
			"extensions": {},
			"features": {},
			"properties": {
				"VkPhysicalDeviceProperties": {
					"apiVersion": 4206872,
					"deviceID": 9860,
					"deviceName": "NVIDIA GeForce RTX 4090",
					"deviceType": "VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU",
					"driverVersion": 2349957120,
					"vendorID": 4318
				},
				"VkPhysicalDeviceIDProperties": {
					"deviceUUID": [17, 222, 175, 223, 159, 21, 232, 87, 42, 135, 138, 204, 21, 63, 201, 247],
					"deviceLUIDValid": false
				},
				"VkPhysicalDevicePCIBusInfoPropertiesEXT": {
					"pciDomain": 0, "pciBus": 1, "pciDevice": 0, "pciFunction": 0
				}
			}
		}
	},
	"profiles": {}
})";
    CHECK(ah::detail::formats::sniff_vulkaninfo_json(text) == 90);
    CHECK(ah::detail::formats::sniff_vulkaninfo_summary(text) == 0);
    const auto r = ah::parse_vulkaninfo_json(text);
    INFO(problems_of(r.problems));
    CHECK(r.problems.empty());
    REQUIRE(r.devices.size() == 1);
    const auto& d = r.devices[0];
    CHECK(d.name.view() == "NVIDIA GeForce RTX 4090");
    CHECK(d.maker == ah::vendor::nvidia);
    CHECK(d.pci_device_id == 0x2684);
    CHECK(d.driver_version.view() == "560.70.0.0"); // NVIDIA's 10.8.8.6-bit packing
    CHECK(r.details[0].api_version == "1.3.280");
    CHECK(d.uuid.view() == "11deafdf-9f15-e857-2a87-8acc153fc9f7");
    CHECK(*d.pci == ah::pci_address{0, 1, 0, 0});
    CHECK(d.memory_bytes.from == ah::origin::catalogue); // the JSON has no heaps

    CHECK(ah::parse_vulkaninfo_json("").problems.empty());
    CHECK(ah::parse_vulkaninfo_json("{\"capabilities\": 3}").problems.size() == 1);
    CHECK(ah::parse_vulkaninfo_json("[1,2]").problems.size() == 1);
    CHECK(ah::parse_vulkaninfo_json("{\"capabilities\": {\"device\": {\"properties\": {\"VkPhysicalDeviceProperties\":"
                                    " {\"vendorID\": -1, \"deviceName\": 5}}}}}")
              .problems.size() == 1); // nothing identifies it
    CHECK(ah::parse_vulkaninfo_json("{\"capabilities\": {").problems.size() == 1);
    CHECK(ah::parse_vulkaninfo_json(std::string(100000, '[')).problems.size() == 1);
}
#endif

TEST_CASE("merge_duplicates: nvidia-smi and vulkaninfo views of one card") {
#if AI_HWACCEL_BACKEND_CUDA
    SUBCASE("by UUID (vulkaninfo --summary has no PCI address)") {
        const auto t = test::capture(laptop);
        if (!t) return;
        // Hand-made nvidia-smi -L line for the capture's RTX 4070 Laptop: for NVIDIA the
        // Vulkan deviceUUID is the GPU UUID nvidia-smi prints with its "GPU-" prefix.
        auto smi = ah::parse_nvidia_smi_list(
            "GPU 0: NVIDIA GeForce RTX 4070 Laptop GPU (UUID: GPU-7e611089-1272-699d-8985-ab84fef4311e)\n");
        auto vk = ah::parse_vulkaninfo(*t);
        std::vector<ah::accelerator_profile> all = smi.gpus;
        all.insert(all.end(), vk.devices.begin(), vk.devices.end());
        REQUIRE(all.size() == 4);
        CHECK(ah::merge_duplicates(all) == 1);
        REQUIRE(all.size() == 3);
        CHECK(all[0].kind == ah::device_kind::cuda_gpu); // the vendor's view leads
        CHECK(all[0].uuid.view() == "GPU-7e611089-1272-699d-8985-ab84fef4311e");
        CHECK(all[0].pci_device_id == 0x2860); // learnt from Vulkan
        CHECK(all[1].name.view() == "Intel(R) Graphics (RPL-S)");
        CHECK(all[2].software);
    }
    SUBCASE("by PCI address (full vulkaninfo text)") {
        // Hand-made: an nvidia-smi query row and the full-text blocks of the same card.
        auto smi = ah::parse_nvidia_smi_query_csv("0, NVIDIA GeForce RTX 4090, 00000000:01:00.0, 24564\n",
                                                  "index,name,pci.bus_id,memory.total");
        auto vk = ah::parse_vulkaninfo("Device Properties and Extensions:\nGPU0:\nVkPhysicalDeviceProperties:\n"
                                       "\tvendorID = 0x10de\n\tdeviceID = 0x2684\n\tdeviceName = NVIDIA GeForce RTX 4090\n"
                                       "VkPhysicalDevicePCIBusInfoPropertiesEXT:\n"
                                       "\tpciDomain = 0\n\tpciBus = 1\n\tpciDevice = 0\n\tpciFunction = 0\n"
                                       "VkPhysicalDeviceMemoryProperties:\n\tmemoryHeaps[0]:\n"
                                       "\t\tsize = 25757220864 (0x5ff400000) (23.99 GiB)\n"
                                       "\t\tflags: count = 1\n\t\t\tMEMORY_HEAP_DEVICE_LOCAL_BIT\n");
        std::vector<ah::accelerator_profile> all = smi.devices;
        all.insert(all.end(), vk.devices.begin(), vk.devices.end());
        REQUIRE(all.size() == 2);
        CHECK(ah::merge_duplicates(all) == 1);
        REQUIRE(all.size() == 1);
        CHECK(all[0].kind == ah::device_kind::cuda_gpu);
        CHECK(*all[0].memory_bytes == 24564ull * 1024 * 1024); // nvidia-smi's, equally trusted, first
    }
#endif
    SUBCASE("two Vulkan devices with different UUIDs are not merged") {
        const auto t = test::capture(win3070);
        if (!t) return;
        auto vk = ah::parse_vulkaninfo(*t);
        CHECK(ah::merge_duplicates(vk.devices) == 0);
    }
}

TEST_CASE("vulkan_probe") {
    const auto request = ah::vulkaninfo_request();
    CHECK(ah::command_line_of(request.argv) == "vulkaninfo");
    CHECK(request.timeout == std::chrono::seconds(10));

    SUBCASE("a captured full text") {
        const auto t = test::capture(rx5500);
        if (!t) return;
        test::scratch_dir dir;
        dir.write("ai-hwaccel-tools/index", "0\tv.txt\tvulkaninfo\n");
        dir.write("ai-hwaccel-tools/v.txt", *t);
        const auto out = ah::vulkan_probe{}.probe(ah::host_system(dir.path().string()));
        CHECK(out.warnings.empty());
        REQUIRE(out.devices.size() == 1);
        CHECK(out.devices[0].name.view() == "AMD Radeon RX 5500 XT (RADV NAVI14)");
        CHECK(*out.devices[0].memory_bytes == 4278190080ull);
    }
    SUBCASE("hand-made output with a problem: a warning of the vulkan backend") {
        test::scratch_dir dir;
        dir.write("ai-hwaccel-tools/index", "0\tv.txt\tvulkaninfo\n");
        dir.write("ai-hwaccel-tools/v.txt", "Devices:\nGPU0:\n\tvendorID = nope\n\tdeviceName = X\n");
        const auto out = ah::vulkan_probe{}.probe(ah::host_system(dir.path().string()));
        REQUIRE(out.devices.size() == 1);
        REQUIRE(out.warnings.size() == 1);
        CHECK(out.warnings[0].kind == ah::warning_kind::parse_error);
        CHECK(out.warnings[0].backend == ah::backend_id::vulkan);
        CHECK(out.warnings[0].subject == "vulkaninfo");
    }
    SUBCASE("vulkaninfo absent: nothing, not even a warning") {
        test::scratch_dir dir;
        dir.write("ai-hwaccel-tools/index", "0\tq.csv\tnvidia-smi -L\n");
        dir.write("sys/bus/pci/devices/0000:01:00.0/vendor", "0x10de\n");
        dir.write("sys/bus/pci/devices/0000:01:00.0/class", "0x030000\n");
        const auto out = ah::vulkan_probe{}.probe(ah::host_system(dir.path().string()));
        CHECK(out.devices.empty());
        CHECK(out.warnings.empty());
    }
    SUBCASE("exit status 0 with nothing printed: a fault, not a machine without Vulkan") {
        test::scratch_dir dir;
        dir.write("ai-hwaccel-tools/v.txt", "");
        dir.write("ai-hwaccel-tools/index", "0\tv.txt\tvulkaninfo\n");
        const auto out = ah::vulkan_probe{}.probe(ah::host_system(dir.path().string()));
        CHECK(out.devices.empty());
        REQUIRE(out.warnings.size() == 1);
        CHECK(out.warnings[0].kind == ah::warning_kind::parse_error);
    }
    SUBCASE("exit status 1 (no driver)") {
        test::scratch_dir dir;
        dir.write("ai-hwaccel-tools/index", "1\t-\tvulkaninfo\n");
        const auto out = ah::vulkan_probe{}.probe(ah::host_system(dir.path().string()));
        CHECK(out.devices.empty());
        REQUIRE(out.warnings.size() == 1);
        CHECK(out.warnings[0].kind == ah::warning_kind::tool_failed);
    }
    SUBCASE("timeout") {
        test::scratch_dir dir;
        dir.write("ai-hwaccel-tools/index", "timeout\t-\tvulkaninfo\n");
        const auto out = ah::vulkan_probe{}.probe(ah::host_system(dir.path().string()));
        REQUIRE(out.warnings.size() == 1);
        CHECK(out.warnings[0].kind == ah::warning_kind::tool_timed_out);
    }
}

TEST_CASE("detail::formats::sniff_vulkaninfo_summary / sniff_vulkaninfo_text") {
    namespace f = ah::detail::formats;
    const test::sniffer_row rows[] = {
        {"vulkaninfo-summary", f::sniff_vulkaninfo_summary, "vulkaninfo/summary_"},
        {"vulkaninfo-text", f::sniff_vulkaninfo_text, "vulkaninfo/full-"},
#if AI_HWACCEL_JSON
        {"vulkaninfo-json", f::sniff_vulkaninfo_json, nullptr}, // no real capture: 0 for all of them
#endif
    };
    test::check_sniffers(rows, 5, [](const test::sniffer_row& row, std::string_view, const std::string& t) {
        CHECK(std::max(f::sniff_vulkaninfo_summary(t), f::sniff_vulkaninfo_text(t)) == 90);
        const bool summary = row.sniff == f::sniff_vulkaninfo_summary;
        ah::capture_parse out;
        out.format = row.name;
        (summary ? f::parse_vulkaninfo_summary_capture : f::parse_vulkaninfo_text_capture)(t, out);
        CHECK(out.warnings.empty());
        CHECK_FALSE(out.devices.empty());
    });
    CHECK(f::sniff_vulkaninfo_summary("") == 0);
    CHECK(f::sniff_vulkaninfo_text("") == 0);
    ah::capture_parse empty;
    empty.format = "vulkaninfo-summary";
    f::parse_vulkaninfo_summary_capture("==========\nVULKANINFO\n==========\nDevices:\n========\n", empty);
    CHECK(test::count_kind(empty.warnings, ah::warning_kind::parse_error) == 1);
}

#endif // AI_HWACCEL_BACKEND_VULKAN
