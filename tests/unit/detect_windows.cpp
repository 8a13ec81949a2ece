#include "ai_hwaccel/detect/windows.hpp"

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

#if !AI_HWACCEL_OS_WINDOWS
TEST_CASE("windows_probe finds nothing off Windows, and says nothing") {
    test::scratch_dir dir;
    const auto out = ah::windows_probe{}.probe(ah::host_system(dir.path().string()));
    CHECK(out.devices.empty());
    CHECK(out.warnings.empty());
}
#endif

#endif
