// ai-hwaccel detect: Vulkan devices through vulkaninfo.
//
// One text parser reads both shapes vulkaninfo prints: `vulkaninfo --summary` (a
// "Devices:" section of "GPU<n>:" blocks of key = value lines, with no memory at all) and
// the full `vulkaninfo` text ("Device Properties and Extensions:", then per "GPU<n>:" the
// VkPhysicalDevice* blocks, memory heaps included). A second parser reads the Vulkan
// Profiles JSON that `vulkaninfo --json` writes (when JSON is compiled in). Every device is
// a `vulkan_gpu`; software rasterizers (llvmpipe, lavapipe, SwiftShader) are listed with
// `software = true` and are never accelerators. Memory is the largest device-local heap
// when the full text gives heaps, and stays unknown otherwise: never a made-up default.
// The probe runs the full text once, only where vulkaninfo is installed; a missing
// vulkaninfo is not worth a warning (Vulkan is optional everywhere). Devices keep their
// PCI address (full text) and deviceUUID, so merge_duplicates (detect/merge.hpp) folds a
// Vulkan view of a card into the vendor backend's view of it.
#pragma once

#include "ai_hwaccel/config.hpp"

#if AI_HWACCEL_BACKEND_VULKAN

#include "ai_hwaccel/core/catalogue.hpp"
#include "ai_hwaccel/core/pci.hpp"
#include "ai_hwaccel/core/profile.hpp"
#include "ai_hwaccel/core/taxonomy.hpp"
#include "ai_hwaccel/core/text.hpp"
#include "ai_hwaccel/core/warning.hpp"
#include "ai_hwaccel/detect/capture.hpp"
#include "ai_hwaccel/detect/probe.hpp"
#include "ai_hwaccel/detect/process.hpp"
#include "ai_hwaccel/detect/system.hpp"

#include <algorithm>
#include <array>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#if AI_HWACCEL_JSON
#include <nlohmann/json.hpp>
#endif

AI_HWACCEL_NAMESPACE_BEGIN

/// VkPhysicalDeviceType.
enum class vulkan_device_type : std::uint8_t { unknown, other, integrated_gpu, discrete_gpu, virtual_gpu, cpu };

/// "PHYSICAL_DEVICE_TYPE_DISCRETE_GPU" (text) or "VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU" (JSON).
constexpr std::optional<vulkan_device_type> parse_vulkan_device_type(std::string_view s) noexcept {
    if (s.starts_with("VK_")) s.remove_prefix(3);
    if (s == "PHYSICAL_DEVICE_TYPE_OTHER"sv) return vulkan_device_type::other;
    if (s == "PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU"sv) return vulkan_device_type::integrated_gpu;
    if (s == "PHYSICAL_DEVICE_TYPE_DISCRETE_GPU"sv) return vulkan_device_type::discrete_gpu;
    if (s == "PHYSICAL_DEVICE_TYPE_VIRTUAL_GPU"sv) return vulkan_device_type::virtual_gpu;
    if (s == "PHYSICAL_DEVICE_TYPE_CPU"sv) return vulkan_device_type::cpu;
    return std::nullopt;
}

/// One VkMemoryHeap.
struct vulkan_memory_heap {
    std::uint64_t size_bytes = 0;
    bool device_local = false; ///< MEMORY_HEAP_DEVICE_LOCAL_BIT
    friend bool operator==(const vulkan_memory_heap&, const vulkan_memory_heap&) = default;
};

/// What vulkaninfo says about a device beyond what `accelerator_profile` holds.
struct vulkan_device_details {
    vulkan_device_type type = vulkan_device_type::unknown;
    std::optional<std::uint32_t> vendor_id; ///< VkPhysicalDeviceProperties::vendorID
    std::optional<std::uint32_t> device_id; ///< deviceID (not always a PCI id: Tegra's is 32 bits)
    std::string api_version;                ///< "1.3.246"
    std::string driver_id;                  ///< "DRIVER_ID_MESA_RADV"
    std::string driver_name;                ///< "radv"
    std::string driver_info;                ///< "Mesa 23.1.3"
    std::string driver_uuid;
    std::vector<vulkan_memory_heap> heaps; ///< empty when not reported (--summary, JSON)
};

/// What the vulkaninfo parsers read; `details[i]` belongs to `devices[i]`.
struct vulkan_parse_result {
    std::vector<accelerator_profile> devices;
    std::vector<vulkan_device_details> details;
    std::vector<parse_problem> problems;
};

namespace detail::vulkan {

using detail::parsing::max_problems;
using detail::parsing::max_rows;
using detail::parsing::parse_uint;
using detail::parsing::printable;
using detail::parsing::problem_sink;
using detail::parsing::quote_value;

// VK_MAX_MEMORY_HEAPS in the Vulkan headers.
inline constexpr std::size_t max_heaps = 16;

// Vulkan vendor ids that are not the vendor's PCI-SIG id (Khronos registers ids for
// vendors whose devices are not on PCI; Arm and Qualcomm report their JEDEC-style ids).
constexpr vendor vendor_of(std::uint32_t id) noexcept {
    if (id == 0x13b5) return vendor::arm;
    if (id == 0x5143) return vendor::qualcomm;
    return vendor_from_id(id);
}

// "0x10de" -> 0x10de (vulkaninfo prints ids in hexadecimal).
constexpr std::optional<std::uint32_t> parse_hex_id(std::string_view v) noexcept {
    if (!(v.starts_with("0x") || v.starts_with("0X"))) return std::nullopt;
    return parse_hex32(v.substr(2));
}

// "1.3.246 (4206838)" -> "1.3.246"; older vulkaninfo printed "4198400 (1.1.0)".
constexpr std::string_view version_text(std::string_view v) noexcept {
    v = trim(v);
    const auto sp = v.find(' ');
    const std::string_view first = v.substr(0, sp);
    const auto open = v.find('(');
    const auto close = v.find(')', open == std::string_view::npos ? 0 : open);
    if (open != std::string_view::npos && close != std::string_view::npos) {
        const std::string_view inner = trim(v.substr(open + 1, close - open - 1));
        bool digits = !first.empty();
        for (char c : first) digits = digits && c >= '0' && c <= '9';
        if (digits && inner.find('.') != std::string_view::npos) return inner;
    }
    return first;
}

// 8-4-4-4-12 hexadecimal digits, as vulkaninfo prints a VK_UUID_SIZE array.
constexpr bool is_uuid_text(std::string_view s) noexcept {
    if (s.size() != 36) return false;
    for (std::size_t i = 0; i < s.size(); ++i) {
        const bool dash = i == 8 || i == 13 || i == 18 || i == 23;
        if (dash ? s[i] != '-' : hex_value(s[i]) < 0) return false;
    }
    return true;
}

// "GPU0:" -> 0.
constexpr std::optional<std::uint32_t> gpu_header(std::string_view line) noexcept {
    if (!line.starts_with("GPU") || !line.ends_with(':') || line.size() < 5) return std::nullopt;
    const std::string_view n = line.substr(3, line.size() - 4);
    if (n.size() > 5) return std::nullopt;
    std::uint32_t v = 0;
    for (char c : n) {
        if (c < '0' || c > '9') return std::nullopt;
        v = v * 10 + static_cast<std::uint32_t>(c - '0');
    }
    return v;
}

// "VkPhysicalDeviceProperties:" -> "VkPhysicalDeviceProperties".
constexpr std::string_view vk_block_header(std::string_view line) noexcept {
    if (!line.starts_with("Vk") || !line.ends_with(':')) return {};
    const std::string_view name = line.substr(0, line.size() - 1);
    for (char c : name)
        if (!ascii_alnum(c)) return {};
    return name;
}

// A software implementation: by type, driver id or name (Dozen names a device after the
// Direct3D 12 adapter it wraps: "Microsoft Direct3D12 (Microsoft Basic Render Driver)").
constexpr bool is_software(vulkan_device_type type, std::string_view driver_id, std::string_view name) noexcept {
    if (driver_id.starts_with("VK_")) driver_id.remove_prefix(3);
    return type == vulkan_device_type::cpu || driver_id == "DRIVER_ID_MESA_LLVMPIPE"sv ||
           driver_id == "DRIVER_ID_GOOGLE_SWIFTSHADER"sv || icontains(name, "llvmpipe") ||
           icontains(name, "lavapipe") || icontains(name, "SwiftShader") ||
           icontains(name, "Microsoft Basic Render Driver"); // WARP, through Dozen
}

// The encoding vulkaninfo itself uses to print driverVersion (vendor specific), for the
// JSON, which carries only the number.
inline std::string driver_version_text(std::uint32_t v, std::uint32_t vendor_id, std::string_view driver_id) {
    if (driver_id.starts_with("VK_")) driver_id.remove_prefix(3);
    const auto s = [](std::uint32_t x) { return std::to_string(x); };
    if (driver_id == "DRIVER_ID_NVIDIA_PROPRIETARY"sv || (driver_id.empty() && vendor_id == 0x10de))
        return s((v >> 22) & 0x3ff) + "." + s((v >> 14) & 0xff) + "." + s((v >> 6) & 0xff) + "." + s(v & 0x3f);
    if (driver_id == "DRIVER_ID_INTEL_PROPRIETARY_WINDOWS"sv) return s(v >> 14) + "." + s(v & 0x3fff);
    return s((v >> 22) & 0x7f) + "." + s((v >> 12) & 0x3ff) + "." + s(v & 0xfff);
}
inline std::string api_version_text(std::uint32_t v) {
    return std::to_string((v >> 22) & 0x7f) + "." + std::to_string((v >> 12) & 0x3ff) + "." + std::to_string(v & 0xfff);
}

// One device as it is being read.
struct pending {
    std::size_t line = 0; // where its block starts
    accelerator_profile p;
    vulkan_device_details d;
    std::optional<std::uint64_t> pci_domain, pci_bus, pci_device, pci_function;
};

inline pending blank(std::uint32_t index, std::size_t line) {
    pending x;
    x.line = line;
    x.p.kind = device_kind::vulkan_gpu;
    x.p.index = index;
    return x;
}

template <std::size_t N>
inline void set_text(inplace_string<N>& field, std::string_view key, std::string_view v, std::size_t line,
                     problem_sink& problems) {
    bool changed = false;
    const std::string text = printable(v, changed);
    const bool fits = field.assign(text);
    if (changed) problems.add(line, std::string(key) + ": not printable UTF-8, replaced by " + quote_value(text));
    else if (!fits) problems.add(line, std::string(key) + ": longer than the profile keeps, cut");
}

inline void set_string(std::string& field, std::string_view key, std::string_view v, std::size_t line,
                       problem_sink& problems) {
    bool changed = false;
    field = printable(v, changed, 256);
    if (changed) problems.add(line, std::string(key) + ": not printable UTF-8, replaced by " + quote_value(field));
}

// Applies one "key = value" line of block `block` ("" in --summary output).
inline void apply_key(pending& x, std::string_view block, std::string_view key, std::string_view v, std::size_t line,
                      problem_sink& problems) {
    const bool summary = block.empty();
    const bool props = summary || block == "VkPhysicalDeviceProperties"sv;
    const bool driver = summary || block == "VkPhysicalDeviceDriverProperties"sv ||
                        block == "VkPhysicalDeviceDriverPropertiesKHR"sv || block == "VkPhysicalDeviceVulkan12Properties"sv;
    const bool ids = summary || block == "VkPhysicalDeviceIDProperties"sv || block == "VkPhysicalDeviceIDPropertiesKHR"sv ||
                     block == "VkPhysicalDeviceVulkan11Properties"sv;
    const bool bus = block == "VkPhysicalDevicePCIBusInfoPropertiesEXT"sv;
    const auto bad = [&] { problems.add(line, std::string(key) + ": cannot read " + quote_value(v)); };

    if (props && key == "apiVersion"sv) set_string(x.d.api_version, key, version_text(v), line, problems);
    else if (props && key == "driverVersion"sv) set_text(x.p.driver_version, key, version_text(v), line, problems);
    else if (props && (key == "vendorID"sv || key == "deviceID"sv)) {
        const auto id = parse_hex_id(v);
        if (!id) return bad();
        (key == "vendorID"sv ? x.d.vendor_id : x.d.device_id) = *id;
    } else if (props && key == "deviceType"sv) {
        const auto t = parse_vulkan_device_type(v);
        if (!t) return bad();
        x.d.type = *t;
    } else if (props && key == "deviceName"sv) set_text(x.p.name, key, v, line, problems);
    else if (driver && key == "driverID"sv) set_string(x.d.driver_id, key, v, line, problems);
    else if (driver && key == "driverName"sv) set_string(x.d.driver_name, key, v, line, problems);
    else if (driver && key == "driverInfo"sv) set_string(x.d.driver_info, key, v, line, problems);
    else if (ids && (key == "deviceUUID"sv || key == "driverUUID"sv)) {
        if (!is_uuid_text(v)) return bad();
        if (key == "deviceUUID"sv) set_text(x.p.uuid, key, v, line, problems);
        else x.d.driver_uuid = std::string(v);
    } else if (bus && (key == "pciDomain"sv || key == "pciBus"sv || key == "pciDevice"sv || key == "pciFunction"sv)) {
        const auto n = parse_uint(v);
        const std::uint64_t limit = key == "pciDomain"sv ? 0xffffffffu : key == "pciBus"sv ? 0xffu : key == "pciDevice"sv ? 31u : 7u;
        if (!n || *n > limit) return bad();
        (key == "pciDomain"sv ? x.pci_domain : key == "pciBus"sv ? x.pci_bus : key == "pciDevice"sv ? x.pci_device
                                                                                          : x.pci_function) = *n;
    }
}

// The profile from what was read; false when nothing identifies a device.
inline bool finish(pending& x, problem_sink& problems) {
    auto& p = x.p;
    auto& d = x.d;
    if (p.name.empty() && !d.vendor_id && !d.device_id) {
        problems.add(x.line, "GPU" + std::to_string(p.index) + ": no device properties; skipped");
        return false;
    }
    if (d.vendor_id) p.maker = vendor_of(*d.vendor_id);
    p.software = is_software(d.type, d.driver_id, p.name.view());
    // vulkaninfo before 2020 printed driverVersion as the number and its hexadecimal form
    // ("83898373 (0x5003005)"): decoded here as vulkaninfo's own encoding for the vendor.
    const std::string_view dv = p.driver_version.view();
    if (!dv.empty() && dv.find_first_not_of("0123456789") == std::string_view::npos)
        if (const auto n = parse_uint(dv); n && *n <= UINT32_MAX)
            p.driver_version.assign(
                driver_version_text(static_cast<std::uint32_t>(*n), d.vendor_id.value_or(0), d.driver_id));
    // NVIDIA's driverVersion packs the version into 10, 8, 8 and 6 bits, losing the zero
    // of a patch level such as "04" (and vulkaninfo 1.3.239 prints it as 580.159.4.256 on
    // driver 580.159.04); its driverInfo is the driver's own string, the one nvidia-smi
    // prints: the version wherever it is one.
    if (std::string_view id = d.driver_id; id.ends_with("DRIVER_ID_NVIDIA_PROPRIETARY") && !d.driver_info.empty() &&
                                           d.driver_info.front() >= '0' && d.driver_info.front() <= '9' &&
                                           d.driver_info.find_first_not_of("0123456789.") == std::string::npos)
        p.driver_version.assign(d.driver_info);
    if (p.software && d.vendor_id && *d.vendor_id == info(vendor::google_swiftshader).vendor_id)
        p.maker = vendor::google_swiftshader;
    // deviceID is the PCI device id only for vendors whose vendorID is their PCI-SIG id.
    const bool pci_vendor = p.maker == vendor::nvidia || p.maker == vendor::amd || p.maker == vendor::intel;
    if (pci_vendor && d.device_id && *d.device_id != 0 && *d.device_id <= 0xffff)
        p.pci_device_id = static_cast<std::uint16_t>(*d.device_id);
    if (x.pci_domain && x.pci_bus && x.pci_device && x.pci_function)
        p.pci = pci_address{static_cast<std::uint32_t>(*x.pci_domain), static_cast<std::uint8_t>(*x.pci_bus),
                            static_cast<std::uint8_t>(*x.pci_device), static_cast<std::uint8_t>(*x.pci_function)};

    // Device memory: the largest DEVICE_LOCAL heap. Not the sum: with resizable BAR off,
    // drivers expose a second small device-local heap (the host-visible window) that is
    // part of the same VRAM. Mesa's drivers are the exception: RADV's (AMD) VRAM heap is
    // the VRAM less the CPU-visible part, which is a device-local heap of its own
    // (radv_physical_device_init_mem_types), and ANV (Intel) does the same when it cannot
    // map all of the VRAM (anv_physical_device_init_heaps: the unmappable VRAM, then a
    // device-local heap of the mappable part), so their device-local heaps add up. Integrated
    // GPUs and CPU implementations report (part of) host RAM as device-local: the size is
    // kept, flagged unified, so totals never add it to the host's memory as if it were
    // dedicated.
    std::string_view driver = d.driver_id;
    if (driver.starts_with("VK_")) driver.remove_prefix(3);
    const bool split_heaps = driver == "DRIVER_ID_MESA_RADV"sv || driver == "DRIVER_ID_INTEL_OPEN_SOURCE_MESA"sv;
    std::uint64_t best = 0;
    for (const auto& h : d.heaps)
        if (h.device_local) best = split_heaps ? best + h.size_bytes : std::max(best, h.size_bytes); // each <= 16 TiB
    if (best != 0) p.memory_bytes = {best, origin::tool};
    if (d.type == vulkan_device_type::integrated_gpu || d.type == vulkan_device_type::cpu) p.unified_memory = true;

    // The catalogue row: by PCI id when exactly one row answers, else by name; only a GPU
    // row of the same vendor, never for a software renderer.
    if (!p.software) {
        const device_spec* spec = nullptr;
        if (p.pci_device_id != 0 && d.vendor_id) {
            const auto by_id = find_devices_by_pci(*d.vendor_id, p.pci_device_id);
            if (by_id.size() == 1) spec = by_id[0];
        }
        if (!spec && !p.name.empty()) spec = find_device(p.name.view());
        if (spec && family_of(spec->kind) == family::gpu && (p.maker == vendor::unknown || spec->maker == p.maker))
            p.apply_spec(*spec);
    }
    return true;
}

} // namespace detail::vulkan

/// Reads vulkaninfo's text output: `vulkaninfo --summary` or the full `vulkaninfo`
/// (Linux and Windows alike; blanks and CR line ends do not matter). Devices come from the
/// "GPU<n>:" blocks of the "Devices:" (summary) or "Device Properties and Extensions:"
/// (full) section, in order. Ids, names, versions, UUIDs are origin::tool text; memory
/// comes only from the full text's heaps. Input without either section is one problem.
inline vulkan_parse_result parse_vulkaninfo(std::string_view text) {
    using namespace detail::vulkan;
    vulkan_parse_result r;
    problem_sink problems{r.problems};
    std::optional<pending> cur;
    bool in_devices = false, seen_section = false, in_heaps = false, capped = false;
    std::string_view block;
    std::size_t number = 0;

    auto flush = [&] {
        if (!cur) return;
        if (finish(*cur, problems)) {
            r.devices.push_back(cur->p);
            r.details.push_back(std::move(cur->d));
        }
        cur.reset();
    };

    detail::formats::each_line(text, [&](std::string_view raw) {
        ++number;
        const std::string_view line = detail::trim(raw);
        if (line.empty()) return true;
        if (line == "Devices:"sv || line == "Device Properties and Extensions:"sv) {
            flush();
            in_devices = seen_section = true;
            return true;
        }
        if (!in_devices) return true;
        if (const auto n = gpu_header(line)) {
            flush();
            if (r.devices.size() >= max_rows) {
                if (!capped) problems.add(number, "more than " + std::to_string(max_rows) + " devices; the rest ignored");
                capped = true;
                return false;
            }
            cur = blank(*n, number);
            block = {};
            in_heaps = false;
            return true;
        }
        if (!cur) return true;
        if (const auto b = vk_block_header(line); !b.empty()) {
            block = b;
            in_heaps = false;
            return true;
        }
        if (block == "VkPhysicalDeviceMemoryProperties"sv) {
            if (line.starts_with("memoryHeaps[")) {
                in_heaps = cur->d.heaps.size() < max_heaps;
                if (in_heaps) cur->d.heaps.push_back({});
                else problems.add(number, "more than " + std::to_string(max_heaps) + " memory heaps; ignored");
                return true;
            }
            if (line.starts_with("memoryTypes")) {
                in_heaps = false;
                return true;
            }
            if (in_heaps && line.find("MEMORY_HEAP_DEVICE_LOCAL_BIT") != std::string_view::npos) {
                cur->d.heaps.back().device_local = true;
                return true;
            }
        }
        const auto eq = line.find('=');
        if (eq == std::string_view::npos) return true;
        const std::string_view key = detail::trim(line.substr(0, eq));
        const std::string_view value = detail::trim(line.substr(eq + 1));
        if (in_heaps && key == "size"sv) {
            // "16758302720 (0x3e6df6800) (15.61 GiB)": the decimal byte count comes first.
            const auto n = parse_uint(value.substr(0, value.find(' ')));
            if (!n) problems.add(number, "heap size: cannot read " + quote_value(value));
            else if (*n > (std::uint64_t{16} << 40)) // no device has 16 TiB
                problems.add(number, "heap size: " + quote_value(value) + " is past any device's; ignored");
            else cur->d.heaps.back().size_bytes = *n;
            return true;
        }
        apply_key(*cur, block, key, value, number, problems);
        return true;
    });
    flush();
    if (!seen_section && !detail::trim(text).empty())
        problems.add(0, "no \"Devices:\" or \"Device Properties and Extensions:\" section: not vulkaninfo output");
    problems.finish();
    return r;
}

#if AI_HWACCEL_JSON
namespace detail::vulkan {

inline const nlohmann::json* member(const nlohmann::json& j, std::initializer_list<const char*> names) {
    if (!j.is_object()) return nullptr;
    for (const char* n : names)
        if (const auto it = j.find(n); it != j.end()) return &*it;
    return nullptr;
}
inline std::optional<std::uint32_t> json_u32(const nlohmann::json* j) {
    if (!j || !j->is_number_unsigned()) return std::nullopt;
    const auto v = j->get<std::uint64_t>();
    if (v > 0xffffffffu) return std::nullopt;
    return static_cast<std::uint32_t>(v);
}
inline std::optional<std::string> json_str(const nlohmann::json* j) {
    if (!j || !j->is_string()) return std::nullopt;
    return j->get<std::string>();
}
// A VK_UUID_SIZE array of numbers, as the JSON printer writes uint8_t arrays.
inline std::optional<std::string> json_uuid(const nlohmann::json* j) {
    if (!j || !j->is_array() || j->size() != 16) return std::nullopt;
    constexpr char hex[] = "0123456789abcdef";
    std::string out;
    for (std::size_t i = 0; i < 16; ++i) {
        const auto b = json_u32(&(*j)[i]);
        if (!b || *b > 0xff) return std::nullopt;
        if (i == 4 || i == 6 || i == 8 || i == 10) out += '-';
        out += hex[*b >> 4];
        out += hex[*b & 0xf];
    }
    return out;
}

} // namespace detail::vulkan

/// Reads the Vulkan Profiles JSON that `vulkaninfo --json[=<gpu>]` writes to
/// "VP_VULKANINFO_<name>_<driver>.json" (one device): capabilities.<block>.properties
/// .VkPhysicalDeviceProperties (ids, name, type, versions as numbers, decoded as
/// vulkaninfo decodes them), and when present the ID, driver and PCI bus properties.
/// That JSON has no memory heaps: memory stays unknown (the catalogue may supply it).
inline vulkan_parse_result parse_vulkaninfo_json(std::string_view text) {
    using namespace detail::vulkan;
    vulkan_parse_result r;
    problem_sink problems{r.problems};
    const auto j = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
    if (j.is_discarded() || !j.is_object()) {
        if (!detail::trim(text).empty()) problems.add(0, "not a JSON object");
        problems.finish();
        return r;
    }
    const nlohmann::json* caps = member(j, {"capabilities"});
    if (!caps || !caps->is_object()) {
        problems.add(0, "no \"capabilities\" object: not a Vulkan profile");
        problems.finish();
        return r;
    }
    for (const auto& [block_name, block] : caps->items()) {
        const nlohmann::json* props = member(block, {"properties"});
        const nlohmann::json* base = props ? member(*props, {"VkPhysicalDeviceProperties"}) : nullptr;
        if (!base || !base->is_object()) continue;
        if (r.devices.size() >= max_rows) {
            problems.add(0, "more than " + std::to_string(max_rows) + " devices; the rest ignored");
            break;
        }
        pending x = blank(static_cast<std::uint32_t>(r.devices.size()), 0);
        const std::string where = "capabilities." + block_name + ": ";
        x.d.vendor_id = json_u32(member(*base, {"vendorID"}));
        x.d.device_id = json_u32(member(*base, {"deviceID"}));
        if (const auto name = json_str(member(*base, {"deviceName"})))
            set_text(x.p.name, "deviceName", *name, 0, problems);
        if (const auto type = json_str(member(*base, {"deviceType"}))) {
            if (const auto t = parse_vulkan_device_type(*type)) x.d.type = *t;
            else problems.add(0, where + "deviceType: cannot read " + quote_value(*type));
        }
        if (const auto api = json_u32(member(*base, {"apiVersion"}))) x.d.api_version = api_version_text(*api);
        if (const auto* drv = member(*props, {"VkPhysicalDeviceDriverProperties", "VkPhysicalDeviceDriverPropertiesKHR"})) {
            if (const auto s = json_str(member(*drv, {"driverID"}))) set_string(x.d.driver_id, "driverID", *s, 0, problems);
            if (const auto s = json_str(member(*drv, {"driverName"})))
                set_string(x.d.driver_name, "driverName", *s, 0, problems);
            if (const auto s = json_str(member(*drv, {"driverInfo"})))
                set_string(x.d.driver_info, "driverInfo", *s, 0, problems);
        }
        if (const auto dv = json_u32(member(*base, {"driverVersion"})))
            set_text(x.p.driver_version, "driverVersion",
                     driver_version_text(*dv, x.d.vendor_id.value_or(0), x.d.driver_id), 0, problems);
        if (const auto* idp = member(*props, {"VkPhysicalDeviceIDProperties", "VkPhysicalDeviceIDPropertiesKHR",
                                              "VkPhysicalDeviceVulkan11Properties"})) {
            if (const auto u = json_uuid(member(*idp, {"deviceUUID"}))) x.p.uuid.assign(*u);
            if (const auto u = json_uuid(member(*idp, {"driverUUID"}))) x.d.driver_uuid = *u;
        }
        if (const auto* bus = member(*props, {"VkPhysicalDevicePCIBusInfoPropertiesEXT"})) {
            const auto dom = json_u32(member(*bus, {"pciDomain"}));
            const auto b = json_u32(member(*bus, {"pciBus"}));
            const auto dev = json_u32(member(*bus, {"pciDevice"}));
            const auto fn = json_u32(member(*bus, {"pciFunction"}));
            if (dom && b && dev && fn && *b <= 0xff && *dev <= 31 && *fn <= 7) {
                x.pci_domain = *dom;
                x.pci_bus = *b;
                x.pci_device = *dev;
                x.pci_function = *fn;
            } else {
                problems.add(0, where + "VkPhysicalDevicePCIBusInfoPropertiesEXT: incomplete or out of range");
            }
        }
        if (finish(x, problems)) {
            r.devices.push_back(x.p);
            r.details.push_back(std::move(x.d));
        }
    }
    if (r.devices.empty() && r.problems.empty())
        problems.add(0, "no capabilities block with VkPhysicalDeviceProperties");
    problems.finish();
    return r;
}
#endif // AI_HWACCEL_JSON

namespace detail::vulkan {
inline void problems_to_warnings(const std::vector<parse_problem>& problems, std::string_view subject,
                                 std::vector<warning>& out) {
    detail::parsing::problems_to_warnings(problems, backend_id::vulkan, subject, out);
}
} // namespace detail::vulkan

/// The one vulkaninfo run the Vulkan probe makes: the full text (the summary has no
/// memory). Its output is around 100 KiB per device; 8 MiB leaves room for many GPUs.
inline tool_request vulkaninfo_request() {
    using namespace std::chrono_literals;
    tool_request req{{"vulkaninfo"}, 10s};
    req.stdout_cap = std::size_t{8} << 20;
    return req;
}

/// Vulkan devices as vulkaninfo lists them, software renderers included (flagged).
struct vulkan_probe {
    static constexpr backend_id backend = backend_id::vulkan;

    template <system_view S>
    probe_output probe(const S& sys) const {
        probe_output out;
        const tool_request request = vulkaninfo_request();
        tool_result r = sys.run(request);
        if (tool_missing(r, out.warnings)) return out; // optional everywhere: only a skipped PATH entry to say
        if (!report_tool_result(request, r, backend, out.warnings)) return out;
        // It prints its banner whenever it runs; a clean run with nothing is a fault.
        if (report_empty_output(request, r, backend, out.warnings)) return out;
        auto parsed = parse_vulkaninfo(r.out);
        out.devices = std::move(parsed.devices);
        detail::vulkan::problems_to_warnings(parsed.problems, "vulkaninfo", out.warnings);
        return out;
    }
};
#if AI_HWACCEL_OS_LINUX || AI_HWACCEL_OS_MACOS
static_assert(backend_probe<vulkan_probe, host_system>);
#endif

namespace detail::formats {

namespace vulkan_sniff {
// The banner line vulkaninfo opens with; stderr lines may come first in a capture.
constexpr bool has_banner(std::string_view t) noexcept {
    bool found = false;
    std::size_t lines = 0;
    each_line(t, [&](std::string_view line) {
        found = trim(line) == "VULKANINFO"sv;
        return !found && ++lines < 40;
    });
    return found;
}
constexpr bool has_line(std::string_view t, std::string_view wanted) noexcept {
    bool found = false;
    each_line(t, [&](std::string_view line) {
        found = trim(line) == wanted;
        return !found;
    });
    return found;
}
} // namespace vulkan_sniff

// vulkaninfo --summary ------------------------------------------------------------------
inline int sniff_vulkaninfo_summary(std::string_view t) noexcept {
    if (!vulkan_sniff::has_line(t, "Devices:") || vulkan_sniff::has_line(t, "Device Properties and Extensions:"))
        return 0;
    if (vulkan_sniff::has_banner(t)) return 90;
    return vulkan_sniff::has_line(t, "GPU0:") && has_key_line(t, "Vulkan Instance Version") ? 70 : 0;
}
inline void parse_vulkaninfo_summary_capture(std::string_view t, capture_parse& out) {
    auto r = parse_vulkaninfo(t);
    vulkan::problems_to_warnings(r.problems, out.format, out.warnings);
    if (r.devices.empty() && r.problems.empty()) nothing_found(out, "Vulkan devices");
    out.devices = std::move(r.devices);
}

// vulkaninfo (full text) ----------------------------------------------------------------
inline int sniff_vulkaninfo_text(std::string_view t) noexcept {
    if (!vulkan_sniff::has_line(t, "Device Properties and Extensions:")) return 0;
    if (vulkan_sniff::has_banner(t)) return 90;
    return vulkan_sniff::has_line(t, "VkPhysicalDeviceProperties:") ? 70 : 0;
}
inline void parse_vulkaninfo_text_capture(std::string_view t, capture_parse& out) {
    parse_vulkaninfo_summary_capture(t, out);
}

#if AI_HWACCEL_JSON
// vulkaninfo --json (Vulkan Profiles JSON) ------------------------------------------------
inline int sniff_vulkaninfo_json(std::string_view t) noexcept {
    const auto first = first_non_blank_line(t);
    if (!first.starts_with("{")) return 0;
    const auto head = t.substr(0, 4096);
    return head.find("schema.khronos.org/vulkan/profiles") != std::string_view::npos &&
                   t.find("\"VkPhysicalDeviceProperties\"") != std::string_view::npos
               ? 90
               : 0;
}
inline void parse_vulkaninfo_json_capture(std::string_view t, capture_parse& out) {
    auto r = parse_vulkaninfo_json(t);
    vulkan::problems_to_warnings(r.problems, out.format, out.warnings);
    if (r.devices.empty() && r.problems.empty()) nothing_found(out, "Vulkan devices");
    out.devices = std::move(r.devices);
}
#endif

} // namespace detail::formats

AI_HWACCEL_NAMESPACE_END

#endif // AI_HWACCEL_BACKEND_VULKAN
