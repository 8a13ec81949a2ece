// ai-hwaccel core: the backend table.
//
// A backend is one way of finding devices: a vendor tool, a driver's sysfs tree, a
// runtime library. The table says, per backend, its stable name, the device kinds it can
// report, and the tools, libraries and paths it reads. It also records whether this build
// compiled the backend in: a backend switched off with AI_HWACCEL_BACKEND_<NAME>=0 keeps
// its name (so it can be reported as "not compiled") but its tool names and paths are
// removed from the table, and therefore from the binary.
#pragma once

#include "ai_hwaccel/config.hpp"
#include "ai_hwaccel/core/taxonomy.hpp"
#include "ai_hwaccel/core/text.hpp"

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

AI_HWACCEL_NAMESPACE_BEGIN

/// Backends in bit order of `compiled_backend_mask` and of the ABI namespace tag.
enum class backend_id : std::uint8_t {
    cuda,
    rocm,
    intel_gpu,
    apple,
    vulkan,
    tpu,
    gaudi,
    neuron,
    intel_npu,
    amd_xdna,
    qualcomm,
    cerebras,
    graphcore,
    groq,
    samsung_npu,
    mediatek_apu,
    windows,
};
inline constexpr std::size_t backend_count = 17;

struct backend_info {
    backend_id id;
    std::string_view name;    ///< stable identifier ("cuda"), used in JSON, CLI and timings
    std::string_view display; ///< for people
    std::string_view macro;   ///< the compile-time switch that includes it
    bool compiled;            ///< compiled into this build
    fixed_list<device_kind, 3> kinds;
    name_list<4> tools;     ///< executables run (looked up in absolute PATH entries)
    name_list<2> libraries; ///< shared libraries loaded at run time
    name_list<6> paths;     ///< files and folders read (relative to the system root)
};

// Expands its arguments only when `cond` is the literal 1.
#define AI_HWACCEL_DETAIL_IF_0(...)
#define AI_HWACCEL_DETAIL_IF_1(...) __VA_ARGS__
#define AI_HWACCEL_DETAIL_IF(cond) AI_HWACCEL_DETAIL_CAT(AI_HWACCEL_DETAIL_IF_, cond)

inline constexpr std::array<backend_info, backend_count> backend_table{{
    {backend_id::cuda, "cuda", "NVIDIA CUDA", "AI_HWACCEL_BACKEND_CUDA",
     AI_HWACCEL_BACKEND_CUDA == 1, {device_kind::cuda_gpu},
     {AI_HWACCEL_DETAIL_IF(AI_HWACCEL_BACKEND_CUDA)("nvidia-smi")},
     {AI_HWACCEL_DETAIL_IF(AI_HWACCEL_BACKEND_CUDA)("libnvidia-ml.so.1")},
     {AI_HWACCEL_DETAIL_IF(AI_HWACCEL_BACKEND_CUDA)(
         "/proc/driver/nvidia/gpus", "/sys/bus/pci/drivers/nvidia", "/sys/bus/pci/devices")}},
    {backend_id::rocm, "rocm", "AMD ROCm", "AI_HWACCEL_BACKEND_ROCM", AI_HWACCEL_BACKEND_ROCM == 1,
     {device_kind::rocm_gpu},
     {AI_HWACCEL_DETAIL_IF(AI_HWACCEL_BACKEND_ROCM)("amd-smi", "rocm-smi", "rocminfo")},
     {},
     {AI_HWACCEL_DETAIL_IF(AI_HWACCEL_BACKEND_ROCM)("/sys/class/drm",
                                                    "/sys/class/kfd/kfd/topology/nodes")}},
    {backend_id::intel_gpu, "intel_gpu", "Intel GPU (oneAPI)", "AI_HWACCEL_BACKEND_INTEL_GPU",
     AI_HWACCEL_BACKEND_INTEL_GPU == 1, {device_kind::intel_gpu},
     {AI_HWACCEL_DETAIL_IF(AI_HWACCEL_BACKEND_INTEL_GPU)("xpu-smi")},
     {},
     {AI_HWACCEL_DETAIL_IF(AI_HWACCEL_BACKEND_INTEL_GPU)("/sys/class/drm")}},
    {backend_id::apple, "apple", "Apple Silicon (Metal, Neural Engine)", "AI_HWACCEL_BACKEND_APPLE",
     AI_HWACCEL_BACKEND_APPLE == 1, {device_kind::metal_gpu, device_kind::apple_neural_engine},
     {AI_HWACCEL_DETAIL_IF(AI_HWACCEL_BACKEND_APPLE)("system_profiler", "sysctl")},
     {},
     {AI_HWACCEL_DETAIL_IF(AI_HWACCEL_BACKEND_APPLE)("/proc/device-tree/compatible")}},
    {backend_id::vulkan, "vulkan", "Vulkan", "AI_HWACCEL_BACKEND_VULKAN",
     AI_HWACCEL_BACKEND_VULKAN == 1, {device_kind::vulkan_gpu},
     {AI_HWACCEL_DETAIL_IF(AI_HWACCEL_BACKEND_VULKAN)("vulkaninfo")},
     {},
     {}},
    {backend_id::tpu, "tpu", "Google TPU", "AI_HWACCEL_BACKEND_TPU", AI_HWACCEL_BACKEND_TPU == 1,
     {device_kind::tpu},
     {AI_HWACCEL_DETAIL_IF(AI_HWACCEL_BACKEND_TPU)("tpu-info")},
     {},
     {AI_HWACCEL_DETAIL_IF(AI_HWACCEL_BACKEND_TPU)("/sys/bus/pci/devices", "/dev/accel",
                                                   "/dev/vfio")}},
    {backend_id::gaudi, "gaudi", "Intel Gaudi", "AI_HWACCEL_BACKEND_GAUDI",
     AI_HWACCEL_BACKEND_GAUDI == 1, {device_kind::gaudi},
     {AI_HWACCEL_DETAIL_IF(AI_HWACCEL_BACKEND_GAUDI)("hl-smi")},
     {},
     {AI_HWACCEL_DETAIL_IF(AI_HWACCEL_BACKEND_GAUDI)("/sys/class/accel")}},
    {backend_id::neuron, "neuron", "AWS Neuron (Inferentia, Trainium)", "AI_HWACCEL_BACKEND_NEURON",
     AI_HWACCEL_BACKEND_NEURON == 1, {device_kind::aws_inferentia, device_kind::aws_trainium},
     {AI_HWACCEL_DETAIL_IF(AI_HWACCEL_BACKEND_NEURON)("neuron-ls")},
     {},
     {AI_HWACCEL_DETAIL_IF(AI_HWACCEL_BACKEND_NEURON)("/dev", "/sys/bus/pci/devices")}},
    {backend_id::intel_npu, "intel_npu", "Intel NPU", "AI_HWACCEL_BACKEND_INTEL_NPU",
     AI_HWACCEL_BACKEND_INTEL_NPU == 1, {device_kind::intel_npu},
     {},
     {},
     {AI_HWACCEL_DETAIL_IF(AI_HWACCEL_BACKEND_INTEL_NPU)("/sys/class/accel", "/dev/accel")}},
    {backend_id::amd_xdna, "amd_xdna", "AMD XDNA NPU", "AI_HWACCEL_BACKEND_AMD_XDNA",
     AI_HWACCEL_BACKEND_AMD_XDNA == 1, {device_kind::amd_xdna_npu},
     {},
     {},
     {AI_HWACCEL_DETAIL_IF(AI_HWACCEL_BACKEND_AMD_XDNA)("/sys/class/accel", "/dev/accel")}},
    {backend_id::qualcomm, "qualcomm", "Qualcomm Cloud AI", "AI_HWACCEL_BACKEND_QUALCOMM",
     AI_HWACCEL_BACKEND_QUALCOMM == 1, {device_kind::qualcomm_ai100},
     {AI_HWACCEL_DETAIL_IF(AI_HWACCEL_BACKEND_QUALCOMM)("qaic-util")},
     {},
     {AI_HWACCEL_DETAIL_IF(AI_HWACCEL_BACKEND_QUALCOMM)("/sys/class/accel")}},
    {backend_id::cerebras, "cerebras", "Cerebras", "AI_HWACCEL_BACKEND_CEREBRAS",
     AI_HWACCEL_BACKEND_CEREBRAS == 1, {device_kind::cerebras_wse}, {}, {}, {}},
    {backend_id::graphcore, "graphcore", "Graphcore IPU", "AI_HWACCEL_BACKEND_GRAPHCORE",
     AI_HWACCEL_BACKEND_GRAPHCORE == 1, {device_kind::graphcore_ipu},
     {AI_HWACCEL_DETAIL_IF(AI_HWACCEL_BACKEND_GRAPHCORE)("gc-info", "gc-monitor")},
     {},
     {}},
    {backend_id::groq, "groq", "Groq LPU", "AI_HWACCEL_BACKEND_GROQ", AI_HWACCEL_BACKEND_GROQ == 1,
     {device_kind::groq_lpu}, {}, {}, {}},
    {backend_id::samsung_npu, "samsung_npu", "Samsung NPU", "AI_HWACCEL_BACKEND_SAMSUNG_NPU",
     AI_HWACCEL_BACKEND_SAMSUNG_NPU == 1, {device_kind::samsung_npu}, {}, {},
     {AI_HWACCEL_DETAIL_IF(AI_HWACCEL_BACKEND_SAMSUNG_NPU)("/sys/firmware/devicetree/base", "/proc/device-tree")}},
    {backend_id::mediatek_apu, "mediatek_apu", "MediaTek APU", "AI_HWACCEL_BACKEND_MEDIATEK_APU",
     AI_HWACCEL_BACKEND_MEDIATEK_APU == 1, {device_kind::mediatek_apu}, {}, {},
     {AI_HWACCEL_DETAIL_IF(AI_HWACCEL_BACKEND_MEDIATEK_APU)("/sys/firmware/devicetree/base", "/proc/device-tree")}},
    {backend_id::windows, "windows", "Windows (DXGI)", "AI_HWACCEL_BACKEND_WINDOWS",
     AI_HWACCEL_BACKEND_WINDOWS == 1, {device_kind::dxgi_gpu},
     {},
     {AI_HWACCEL_DETAIL_IF(AI_HWACCEL_BACKEND_WINDOWS)("dxgi.dll")},
     {}},
}};

#undef AI_HWACCEL_DETAIL_IF
#undef AI_HWACCEL_DETAIL_IF_0
#undef AI_HWACCEL_DETAIL_IF_1

namespace detail {
/// The prefix of every backend's switch; the rest is the backend's name in capitals.
inline constexpr std::string_view backend_macro_prefix = "AI_HWACCEL_BACKEND_";

/// Whether `macro` is the switch named after the backend `name` ("cuda" →
/// "AI_HWACCEL_BACKEND_CUDA"): a detection names the switch from the name, so that a
/// program that only detects carries no column of switches.
constexpr bool is_backend_macro(std::string_view macro, std::string_view name) noexcept {
    if (!macro.starts_with(backend_macro_prefix) || macro.size() != backend_macro_prefix.size() + name.size())
        return false;
    for (std::size_t i = 0; i < name.size(); ++i)
        if (macro[backend_macro_prefix.size() + i] != ascii_upper(name[i])) return false;
    return true;
}

constexpr bool backend_table_is_consistent() noexcept {
    if (!table_is_indexed_and_unique(backend_table)) return false;
    for (std::size_t i = 0; i < backend_table.size(); ++i) {
        const auto& b = backend_table[i];
        // The compiled flag and the build's mask are one fact written twice.
        if (b.compiled != (((compiled_backend_mask >> i) & 1u) != 0)) return false;
        // A compiled-out backend carries no tool, library or path strings.
        if (!b.compiled && (!b.tools.empty() || !b.libraries.empty() || !b.paths.empty()))
            return false;
        if (b.kinds.empty()) return false;
        if (!is_backend_macro(b.macro, b.name)) return false;
    }
    // Every device kind except the CPU is reported by exactly one backend.
    for (std::size_t k = 1; k < device_kind_count; ++k) {
        int owners = 0;
        for (const auto& b : backend_table)
            if (b.kinds.contains(static_cast<device_kind>(k))) ++owners;
        if (owners != 1) return false;
    }
    return true;
}
} // namespace detail
static_assert(detail::backend_table_is_consistent(), "backend_table: bad row");
static_assert(backend_count <= 32, "compiled_backend_mask is 32 bits wide");

constexpr const backend_info& info(backend_id b) noexcept {
    return backend_table[static_cast<std::size_t>(b)];
}

namespace detail {
/// backend_table's names and display names, packed at compile time: what a program that
/// only detects needs of the table (its tools, libraries and paths are four times as
/// large), without a relocation per name. The switch's name follows from the name
/// (is_backend_macro).
inline constexpr auto backend_names =
    pack_column<column_chars(backend_table, [](const backend_info& r) { return r.name; })>(
        backend_table, [](const backend_info& r) { return r.name; });
inline constexpr auto backend_displays =
    pack_column<column_chars(backend_table, [](const backend_info& r) { return r.display; })>(
        backend_table, [](const backend_info& r) { return r.display; });
} // namespace detail

constexpr std::string_view to_string(backend_id b) noexcept {
    return detail::backend_names[static_cast<std::size_t>(b)];
}
constexpr bool is_compiled(backend_id b) noexcept { return info(b).compiled; }
constexpr std::optional<backend_id> parse_backend(std::string_view s) noexcept {
    return detail::parse_by_name<backend_id>(backend_table, s);
}
/// The backend that reports a device kind (the CPU has none: it is always probed).
constexpr std::optional<backend_id> backend_for(device_kind k) noexcept {
    for (const auto& b : backend_table)
        if (b.kinds.contains(k)) return b.id;
    return std::nullopt;
}

AI_HWACCEL_NAMESPACE_END
