#include "ai_hwaccel/detect/windows.hpp"

#include "ai_hwaccel/detect/merge.hpp"
#include "ai_hwaccel/detect/vulkan.hpp"

#include "fixtures.hpp"

#include <doctest/doctest.h>

#if AI_HWACCEL_BACKEND_WINDOWS

namespace ah = ai_hwaccel;

namespace {
constexpr std::uint64_t mib = 1024ull * 1024;

// Hand-made adapters, with the values DXGI_ADAPTER_DESC1 gives for such cards.
ah::dxgi_adapter rtx4090() {
    ah::dxgi_adapter a;
    a.index = 0;
    a.description = "NVIDIA GeForce RTX 4090";
    a.vendor_id = 0x10de;
    a.device_id = 0x2684;
    a.dedicated_video_memory = 24'325 * mib; // what Windows reports: a little under 24 GiB
    a.shared_system_memory = 32'000 * mib;
    a.luid = 0x0000000000012345ull;
    return a;
}
} // namespace

TEST_CASE("profile_from_dxgi") {
    SUBCASE("a discrete card: its own memory, the catalogue by PCI id") {
        const auto p = ah::profile_from_dxgi(rtx4090());
        CHECK(p.kind == ah::device_kind::dxgi_gpu);
        CHECK(p.maker == ah::vendor::nvidia);
        CHECK(p.name.view() == "NVIDIA GeForce RTX 4090");
        CHECK(p.pci_device_id == 0x2684);
        CHECK(*p.memory_bytes == 24'325 * mib);
        CHECK(p.memory_bytes.from == ah::origin::tool);
        REQUIRE(p.spec != nullptr);
        CHECK(p.memory_bandwidth_gbps.from == ah::origin::catalogue);
        CHECK(p.uuid.view() == "0000000000012345"); // the LUID other Windows APIs use
        CHECK(p.is_accelerator());
    }
    SUBCASE("an integrated GPU: a carve-out is not memory of its own") {
        ah::dxgi_adapter a;
        a.index = 1;
        a.description = "Intel(R) UHD Graphics 770";
        a.vendor_id = 0x8086;
        a.device_id = 0x4680;
        a.dedicated_video_memory = 128 * mib;
        a.shared_system_memory = 16'000 * mib;
        const auto p = ah::profile_from_dxgi(a);
        CHECK(p.unified_memory);
        CHECK_FALSE(p.memory_bytes.has_value());
        CHECK(p.maker == ah::vendor::intel);
    }
    SUBCASE("the Microsoft Basic Render Driver is software") {
        ah::dxgi_adapter a;
        a.index = 2;
        a.description = "Microsoft Basic Render Driver";
        a.vendor_id = 0x1414;
        a.device_id = 0x008c;
        a.shared_system_memory = 16'000 * mib;
        a.software = true;
        const auto p = ah::profile_from_dxgi(a);
        CHECK(p.software);
        CHECK_FALSE(p.is_accelerator());
        CHECK(p.spec == nullptr);
    }
    SUBCASE("hostile values") {
        ah::dxgi_adapter a;
        a.description = std::string(300, 'x'); // longer than a profile keeps
        a.vendor_id = 0xffffffffu;
        a.device_id = 0x123456u;
        a.dedicated_video_memory = ~0ull;
        const auto p = ah::profile_from_dxgi(a);
        CHECK(p.maker == ah::vendor::unknown);
        CHECK(p.pci_device_id == 0);
        CHECK(p.name.size() <= decltype(p.name)::capacity());
        CHECK_FALSE(p.memory_bytes.has_value()); // 16 EiB is no device's memory
    }
}

TEST_CASE("merge_duplicates: a DXGI adapter is the same card as the vendor's and Vulkan's views") {
    // What Windows detection would gather for one RTX 4090: nvidia-smi's view (PCI address,
    // UUID), vulkaninfo's (the real capture from a Windows machine), then DXGI's adapter,
    // which names neither.
    ah::accelerator_profile cuda;
    cuda.kind = ah::device_kind::cuda_gpu;
    cuda.maker = ah::vendor::nvidia;
    cuda.name = "NVIDIA GeForce RTX 4090";
    cuda.uuid = "GPU-11deafdf-9f15-e857-2a87-8acc153fc9f7";
    cuda.pci = *ah::parse_pci_address("0000:01:00.0");
    cuda.pci_device_id = 0x2684;
    cuda.memory_bytes = {24'564 * mib, ah::origin::tool};
    const auto dxgi = ah::profile_from_dxgi(rtx4090());

    SUBCASE("with the real vulkaninfo capture: one accelerator, the vendor's view kept") {
        const auto t = test::capture("vulkaninfo/summary_windows_rtx4090_driver560.txt");
        if (!t) return;
        const auto vk = ah::parse_vulkaninfo(*t);
        std::vector<ah::accelerator_profile> ps{cuda};
        for (const auto& d : vk.devices) ps.push_back(d);
        ps.push_back(dxgi);
        ah::merge_duplicates(ps);
        std::size_t accelerators = 0;
        for (const auto& p : ps) accelerators += p.is_accelerator() ? 1 : 0;
        CHECK(accelerators == 1);
        CHECK(ps[0].kind == ah::device_kind::cuda_gpu);
        CHECK(ps[0].uuid.view() == "GPU-11deafdf-9f15-e857-2a87-8acc153fc9f7"); // not the LUID
        CHECK(*ps[0].memory_bytes == 24'564 * mib);
    }
    SUBCASE("two identical cards and their two adapters pair in order") {
        auto second = cuda;
        second.pci = *ah::parse_pci_address("0000:02:00.0");
        second.uuid = "GPU-22deafdf-9f15-e857-2a87-8acc153fc9f7";
        auto a2 = rtx4090();
        a2.index = 1;
        a2.luid = 0x22222;
        std::vector<ah::accelerator_profile> ps{cuda, second, dxgi, ah::profile_from_dxgi(a2)};
        CHECK(ah::merge_duplicates(ps) == 2);
        REQUIRE(ps.size() == 2);
        CHECK(ps[0].kind == ah::device_kind::cuda_gpu);
        CHECK(ps[1].kind == ah::device_kind::cuda_gpu);
        CHECK(ps[1].uuid.view() == "GPU-22deafdf-9f15-e857-2a87-8acc153fc9f7");
    }
    SUBCASE("as many adapters as views, or nothing paired") {
        auto a2 = rtx4090();
        a2.index = 1;
        a2.luid = 0x22222;
        std::vector<ah::accelerator_profile> ps{cuda, dxgi, ah::profile_from_dxgi(a2)};
        CHECK(ah::merge_duplicates(ps) == 0); // two adapters, one view: which is which is unknown
        CHECK(ps.size() == 3);
    }
    SUBCASE("an adapter no other backend sees stays, and the software renderer is never paired") {
        ah::dxgi_adapter igpu;
        igpu.description = "Intel(R) UHD Graphics 770";
        igpu.vendor_id = 0x8086;
        igpu.device_id = 0x4680;
        igpu.dedicated_video_memory = 128 * mib;
        igpu.shared_system_memory = 16'000 * mib;
        ah::dxgi_adapter warp;
        warp.description = "Microsoft Basic Render Driver";
        warp.vendor_id = 0x1414;
        warp.device_id = 0x8c;
        warp.software = true;
        std::vector<ah::accelerator_profile> ps{cuda, dxgi, ah::profile_from_dxgi(igpu), ah::profile_from_dxgi(warp)};
        CHECK(ah::merge_duplicates(ps) == 1);
        REQUIRE(ps.size() == 3);
        CHECK(ps[1].kind == ah::device_kind::dxgi_gpu);
        CHECK(ps[1].maker == ah::vendor::intel);
        CHECK(ps[2].software);
    }
}

#if !AI_HWACCEL_OS_WINDOWS
TEST_CASE("windows_probe finds nothing off Windows, and says nothing") {
    test::scratch_dir dir;
    const auto out = ah::windows_probe{}.probe(ah::host_system(dir.path().string()));
    CHECK(out.devices.empty());
    CHECK(out.warnings.empty());
}
#endif

#endif
