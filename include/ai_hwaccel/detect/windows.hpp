// ai-hwaccel detect: GPUs and system memory on Windows, through DXGI and the Win32 API.
//
// Two layers. The portable one, compiled wherever the backend is on, turns what DXGI
// says about an adapter (`dxgi_adapter`, the fields of DXGI_ADAPTER_DESC1) into a profile
// and is tested on every platform. The Windows one enumerates adapters with
// IDXGIFactory1::EnumAdapters1 (dxgi.dll is loaded at run time, so nothing extra is linked)
// and reads physical memory with GlobalMemoryStatusEx; it is compiled only for Windows,
// and the test suite cross-compiles it with MinGW-w64 where Debian's toolchain is
// installed. It has never run on a Windows machine in this project's tests: treat it as
// compiled, not verified.
//
// DXGI's "dedicated video memory" is the adapter's own memory; integrated GPUs report a
// small carve-out there and use shared system memory, so they are marked unified and
// their memory left to the host's total. The Microsoft Basic Render Driver (WARP) is
// DXGI_ADAPTER_FLAG_SOFTWARE: listed, never an accelerator. An adapter that a vendor tool
// or vulkaninfo also lists is folded into that view by detail::merge_dxgi (detect/merge.hpp).
#pragma once

#include "ai_hwaccel/config.hpp"

#if AI_HWACCEL_BACKEND_WINDOWS

#include "ai_hwaccel/core/catalogue.hpp"
#include "ai_hwaccel/core/profile.hpp"
#include "ai_hwaccel/core/system_io.hpp"
#include "ai_hwaccel/core/taxonomy.hpp"
#include "ai_hwaccel/core/warning.hpp"
#include "ai_hwaccel/detect/probe.hpp"
#include "ai_hwaccel/detect/system.hpp"

#include <cstdint>
#include <cstring>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#if AI_HWACCEL_OS_WINDOWS
#ifndef WIN32_LEAN_AND_MEAN
#define WIN32_LEAN_AND_MEAN
#endif
#ifndef NOMINMAX
#define NOMINMAX
#endif
#include <windows.h>
#include <dxgi.h>
#endif

AI_HWACCEL_NAMESPACE_BEGIN

/// One adapter as DXGI_ADAPTER_DESC1 describes it (the description already UTF-8).
struct dxgi_adapter {
    std::uint32_t index = 0; ///< position in EnumAdapters1's order
    std::string description;
    std::uint32_t vendor_id = 0;
    std::uint32_t device_id = 0;
    std::uint32_t subsystem_id = 0;
    std::uint32_t revision = 0;
    std::uint64_t dedicated_video_memory = 0;  ///< bytes
    std::uint64_t dedicated_system_memory = 0; ///< bytes
    std::uint64_t shared_system_memory = 0;    ///< bytes
    std::uint64_t luid = 0;                    ///< LUID, high part << 32 | low part
    bool software = false;                     ///< DXGI_ADAPTER_FLAG_SOFTWARE
    friend bool operator==(const dxgi_adapter&, const dxgi_adapter&) = default;
};

namespace detail::windows {
// Below this, "dedicated" video memory is a firmware carve-out of an integrated GPU, not
// memory of its own (integrated parts report 128 MiB to 512 MiB there; the smallest
// discrete cards of the last decade have 2 GiB).
inline constexpr std::uint64_t carve_out_limit = 1024ull * 1024 * 1024;
} // namespace detail::windows

/// The profile of one DXGI adapter: kind dxgi_gpu, the vendor by PCI vendor id, memory
/// from DedicatedVideoMemory (origin tool) unless the adapter is integrated, completed
/// from the catalogue by PCI id when exactly one row answers, else by name.
inline accelerator_profile profile_from_dxgi(const dxgi_adapter& a) {
    accelerator_profile p;
    p.kind = device_kind::dxgi_gpu;
    p.index = a.index;
    p.maker = a.vendor_id <= 0xffff ? vendor_from_id(static_cast<std::uint16_t>(a.vendor_id)) : vendor::unknown;
    p.name.assign(a.description);
    if (a.device_id != 0 && a.device_id <= 0xffff) p.pci_device_id = static_cast<std::uint16_t>(a.device_id);
    if (a.luid != 0) {
        // The LUID is how other Windows APIs (D3D12, DirectML) name the adapter.
        char buf[24];
        const char* digits = "0123456789abcdef";
        std::size_t n = 0;
        for (int shift = 60; shift >= 0; shift -= 4) buf[n++] = digits[(a.luid >> shift) & 0xf];
        p.uuid.assign(std::string_view(buf, n));
    }
    if (a.software) {
        p.software = true;
        p.unified_memory = true;
        return p;
    }
    const bool integrated = a.dedicated_video_memory < detail::windows::carve_out_limit && a.shared_system_memory > 0;
    if (integrated) p.unified_memory = true;
    else if (a.dedicated_video_memory > 0 && a.dedicated_video_memory <= (16ull << 40)) // no device has 16 TiB
        p.memory_bytes = {a.dedicated_video_memory, origin::tool};
    const device_spec* spec = nullptr;
    if (p.maker != vendor::unknown) {
        const auto rows = find_devices_by_pci(a.vendor_id, p.pci_device_id);
        if (rows.size() == 1) spec = rows[0];
    }
    if (!spec) spec = find_device(p.name.view());
    if (spec && !integrated) p.apply_spec(*spec);
    return p;
}

#if AI_HWACCEL_OS_WINDOWS
namespace detail::windows {

inline std::string utf8(const wchar_t* w) {
    if (!w || !*w) return {};
    const int n = ::WideCharToMultiByte(CP_UTF8, 0, w, -1, nullptr, 0, nullptr, nullptr);
    if (n <= 1) return {};
    std::string s(static_cast<std::size_t>(n - 1), '\0');
    ::WideCharToMultiByte(CP_UTF8, 0, w, -1, s.data(), n, nullptr, nullptr);
    return s;
}

} // namespace detail::windows

/// Every adapter DXGI lists. dxgi.dll is loaded at run time; when it or
/// CreateDXGIFactory1 is missing, the list is empty and a warning says why.
inline std::vector<dxgi_adapter> enumerate_dxgi_adapters(std::vector<warning>& warnings) {
    std::vector<dxgi_adapter> out;
    HMODULE dll = ::LoadLibraryExW(L"dxgi.dll", nullptr, LOAD_LIBRARY_SEARCH_SYSTEM32);
    if (!dll) {
        warnings.push_back(warning{warning_kind::tool_not_found, backend_id::windows, "dxgi.dll",
                                   "DXGI is not available on this system", 0});
        return out;
    }
    using create_fn = HRESULT(WINAPI*)(REFIID, void**);
    const auto proc = ::GetProcAddress(dll, "CreateDXGIFactory1");
    if (!proc) {
        warnings.push_back(warning{warning_kind::tool_failed, backend_id::windows, "dxgi.dll",
                                   "CreateDXGIFactory1 is missing", 0});
        return out;
    }
    create_fn create = nullptr;
    static_assert(sizeof(create) == sizeof(proc));
    std::memcpy(&create, &proc, sizeof create);
    IDXGIFactory1* factory = nullptr;
    if (FAILED(create(__uuidof(IDXGIFactory1), reinterpret_cast<void**>(&factory))) || !factory) {
        warnings.push_back(warning{warning_kind::tool_failed, backend_id::windows, "dxgi.dll",
                                   "CreateDXGIFactory1 failed", 0});
        return out;
    }
    for (UINT i = 0; i < 64; ++i) {
        IDXGIAdapter1* adapter = nullptr;
        if (factory->EnumAdapters1(i, &adapter) == DXGI_ERROR_NOT_FOUND) break;
        if (!adapter) break;
        DXGI_ADAPTER_DESC1 d{};
        if (SUCCEEDED(adapter->GetDesc1(&d))) {
            dxgi_adapter a;
            a.index = i;
            a.description = detail::windows::utf8(d.Description);
            a.vendor_id = d.VendorId;
            a.device_id = d.DeviceId;
            a.subsystem_id = d.SubSysId;
            a.revision = d.Revision;
            a.dedicated_video_memory = d.DedicatedVideoMemory;
            a.dedicated_system_memory = d.DedicatedSystemMemory;
            a.shared_system_memory = d.SharedSystemMemory;
            a.luid = (static_cast<std::uint64_t>(static_cast<std::uint32_t>(d.AdapterLuid.HighPart)) << 32) |
                     d.AdapterLuid.LowPart;
            a.software = (d.Flags & DXGI_ADAPTER_FLAG_SOFTWARE) != 0;
            out.push_back(std::move(a));
        }
        adapter->Release();
    }
    factory->Release();
    return out;
}

/// Physical memory as GlobalMemoryStatusEx reports it.
inline memory_info windows_memory_status(std::vector<warning>& warnings) {
    memory_info m;
    MEMORYSTATUSEX s{};
    s.dwLength = sizeof s;
    if (!::GlobalMemoryStatusEx(&s)) {
        warnings.push_back(warning{warning_kind::read_error, std::nullopt, "GlobalMemoryStatusEx",
                                   "failed with error " + std::to_string(::GetLastError()), 0});
        return m;
    }
    m.total_bytes = {s.ullTotalPhys, origin::tool};
    m.available_bytes = {s.ullAvailPhys, origin::tool};
    return m;
}
#endif // AI_HWACCEL_OS_WINDOWS

/// GPUs through DXGI on Windows; nothing elsewhere, and nothing for a machine tree
/// (DXGI cannot be replayed).
struct windows_probe {
    static constexpr backend_id backend = backend_id::windows;

    template <system_view S>
    probe_output probe([[maybe_unused]] const S& sys) const {
        probe_output out;
#if AI_HWACCEL_OS_WINDOWS
        for (const auto& a : enumerate_dxgi_adapters(out.warnings)) out.devices.push_back(profile_from_dxgi(a));
#endif
        return out;
    }
};

AI_HWACCEL_NAMESPACE_END

#endif // AI_HWACCEL_BACKEND_WINDOWS
