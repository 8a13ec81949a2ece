// ai-hwaccel core: the vocabulary of devices.
//
// Families (CPU, GPU, NPU, TPU, AI ASIC), vendors with their PCI vendor ids, device kinds
// (what a backend reports: a CUDA GPU, a Gaudi, an Inferentia…), numeric data types a
// device computes in, memory technologies and interconnect kinds. Each enum has one
// constexpr table from which names, parsing and documentation derive; static_asserts
// check that every table row sits at its enum's index and that names are unique.
#pragma once

#include "ai_hwaccel/config.hpp"
#include "ai_hwaccel/core/text.hpp"

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

AI_HWACCEL_NAMESPACE_BEGIN

namespace detail {
/// Every table row carries `id` and `name`; a table is valid when row i describes
/// enumerator i and no two rows share a name (compared loosely, as parsing does).
template <class Table>
constexpr bool table_is_indexed_and_unique(const Table& t) noexcept {
    for (std::size_t i = 0; i < t.size(); ++i) {
        if (static_cast<std::size_t>(t[i].id) != i) return false;
        if (t[i].name.empty()) return false;
        for (std::size_t j = i + 1; j < t.size(); ++j)
            if (loose_equals(t[i].name, t[j].name)) return false;
    }
    return true;
}
template <class Enum, class Table>
constexpr std::optional<Enum> parse_by_name(const Table& t, std::string_view s) noexcept {
    s = trim(s);
    for (const auto& row : t)
        if (loose_equals(row.name, s)) return row.id;
    return std::nullopt;
}
} // namespace detail

// ---------------------------------------------------------------------------------------
/// Broad class of a device; decides which planning rules apply.
enum class family : std::uint8_t { cpu, gpu, npu, tpu, ai_asic };
inline constexpr std::size_t family_count = 5;

struct family_info {
    family id;
    std::string_view name;    ///< stable identifier, used in JSON and on the CLI
    std::string_view display; ///< for people
};
inline constexpr std::array<family_info, family_count> family_table{{
    {family::cpu, "cpu", "CPU"},
    {family::gpu, "gpu", "GPU"},
    {family::npu, "npu", "NPU"},
    {family::tpu, "tpu", "TPU"},
    {family::ai_asic, "ai_asic", "AI ASIC"},
}};
static_assert(detail::table_is_indexed_and_unique(family_table));

constexpr const family_info& info(family f) noexcept {
    return family_table[static_cast<std::size_t>(f)];
}
constexpr std::string_view to_string(family f) noexcept { return info(f).name; }
constexpr std::optional<family> parse_family(std::string_view s) noexcept {
    if (detail::loose_equals(s, "asic")) return family::ai_asic;
    return detail::parse_by_name<family>(family_table, s);
}

// ---------------------------------------------------------------------------------------
/// Who makes the device. `vendor_id` is the PCI-SIG vendor id where the vendor's devices
/// sit on PCI, or the Khronos-assigned id for vendors without one (Mesa: 0x10005, as
/// Vulkan reports it); 0 where no public id is known.
enum class vendor : std::uint8_t {
    unknown,
    nvidia,
    amd,
    intel,
    apple,
    google,
    amazon,
    qualcomm,
    habana, ///< Habana Labs (Intel) Gaudi parts carry their own PCI vendor id
    cerebras,
    graphcore,
    groq,
    samsung,
    mediatek,
    arm,
    microsoft, ///< software adapters (WARP, Basic Render) seen through DXGI; Azure Cobalt CPUs
    mesa,      ///< software rasterizers (llvmpipe, lavapipe)
    google_swiftshader,
};
inline constexpr std::size_t vendor_count = 18;

struct vendor_info {
    vendor id;
    std::string_view name;
    std::string_view display;
    std::uint32_t vendor_id;
};
inline constexpr std::array<vendor_info, vendor_count> vendor_table{{
    {vendor::unknown, "unknown", "Unknown", 0},
    {vendor::nvidia, "nvidia", "NVIDIA", 0x10de},
    {vendor::amd, "amd", "AMD", 0x1002},
    {vendor::intel, "intel", "Intel", 0x8086},
    {vendor::apple, "apple", "Apple", 0x106b},
    {vendor::google, "google", "Google", 0x1ae0},
    {vendor::amazon, "amazon", "Amazon Web Services", 0x1d0f},
    {vendor::qualcomm, "qualcomm", "Qualcomm", 0x17cb},
    {vendor::habana, "habana", "Habana Labs (Intel)", 0x1da3},
    {vendor::cerebras, "cerebras", "Cerebras", 0},
    {vendor::graphcore, "graphcore", "Graphcore", 0},
    {vendor::groq, "groq", "Groq", 0},
    {vendor::samsung, "samsung", "Samsung", 0},
    {vendor::mediatek, "mediatek", "MediaTek", 0},
    {vendor::arm, "arm", "Arm", 0},
    {vendor::microsoft, "microsoft", "Microsoft", 0x1414},
    {vendor::mesa, "mesa", "Mesa", 0x10005},
    {vendor::google_swiftshader, "swiftshader", "Google SwiftShader", 0x1ae0},
}};
static_assert(detail::table_is_indexed_and_unique(vendor_table));

constexpr const vendor_info& info(vendor v) noexcept {
    return vendor_table[static_cast<std::size_t>(v)];
}
constexpr std::string_view to_string(vendor v) noexcept { return info(v).name; }
constexpr std::optional<vendor> parse_vendor(std::string_view s) noexcept {
    return detail::parse_by_name<vendor>(vendor_table, s);
}
/// The vendor owning a PCI (or Khronos) vendor id. AMD's CPU/NPU id 0x1022 maps to AMD as well; Google's
/// id is shared by TPUs and SwiftShader, and resolves to Google.
constexpr vendor vendor_from_id(std::uint32_t pci_vendor) noexcept {
    if (pci_vendor == 0x1022) return vendor::amd;
    for (const auto& row : vendor_table)
        if (row.vendor_id != 0 && row.vendor_id == pci_vendor) return row.id;
    return vendor::unknown;
}

// ---------------------------------------------------------------------------------------
/// What a backend reports. A superset of the reference peer's eighteen kinds: Neuron is
/// split into Inferentia and Trainium, and DXGI adapters of unknown vendor have a kind.
enum class device_kind : std::uint8_t {
    cpu,
    cuda_gpu,
    rocm_gpu,
    intel_gpu,
    metal_gpu,
    vulkan_gpu,
    dxgi_gpu,
    apple_neural_engine,
    intel_npu,
    amd_xdna_npu,
    samsung_npu,
    mediatek_apu,
    tpu,
    gaudi,
    aws_inferentia,
    aws_trainium,
    qualcomm_ai100,
    cerebras_wse,
    graphcore_ipu,
    groq_lpu,
};
inline constexpr std::size_t device_kind_count = 20;

struct device_kind_info {
    device_kind id;
    std::string_view name;
    std::string_view display;
    family fam;
    vendor default_vendor; ///< unknown where the kind spans vendors (Vulkan, DXGI, CPU)
    bool trains;           ///< the vendor's software stack supports training on it
};
inline constexpr std::array<device_kind_info, device_kind_count> device_kind_table{{
    {device_kind::cpu, "cpu", "CPU", family::cpu, vendor::unknown, true},
    {device_kind::cuda_gpu, "cuda_gpu", "CUDA GPU", family::gpu, vendor::nvidia, true},
    {device_kind::rocm_gpu, "rocm_gpu", "ROCm GPU", family::gpu, vendor::amd, true},
    {device_kind::intel_gpu, "intel_gpu", "Intel GPU", family::gpu, vendor::intel, true},
    {device_kind::metal_gpu, "metal_gpu", "Metal GPU", family::gpu, vendor::apple, true},
    {device_kind::vulkan_gpu, "vulkan_gpu", "Vulkan GPU", family::gpu, vendor::unknown, false},
    {device_kind::dxgi_gpu, "dxgi_gpu", "DXGI GPU", family::gpu, vendor::unknown, false},
    {device_kind::apple_neural_engine, "apple_neural_engine", "Apple Neural Engine", family::npu,
     vendor::apple, false},
    {device_kind::intel_npu, "intel_npu", "Intel NPU", family::npu, vendor::intel, false},
    {device_kind::amd_xdna_npu, "amd_xdna_npu", "AMD XDNA NPU", family::npu, vendor::amd, false},
    {device_kind::samsung_npu, "samsung_npu", "Samsung NPU", family::npu, vendor::samsung, false},
    {device_kind::mediatek_apu, "mediatek_apu", "MediaTek APU", family::npu, vendor::mediatek,
     false},
    {device_kind::tpu, "tpu", "Google TPU", family::tpu, vendor::google, true},
    {device_kind::gaudi, "gaudi", "Intel Gaudi", family::ai_asic, vendor::habana, true},
    {device_kind::aws_inferentia, "aws_inferentia", "AWS Inferentia", family::ai_asic,
     vendor::amazon, false},
    {device_kind::aws_trainium, "aws_trainium", "AWS Trainium", family::ai_asic, vendor::amazon,
     true},
    {device_kind::qualcomm_ai100, "qualcomm_ai100", "Qualcomm Cloud AI 100", family::ai_asic,
     vendor::qualcomm, false},
    {device_kind::cerebras_wse, "cerebras_wse", "Cerebras WSE", family::ai_asic, vendor::cerebras,
     true},
    {device_kind::graphcore_ipu, "graphcore_ipu", "Graphcore IPU", family::ai_asic,
     vendor::graphcore, true},
    {device_kind::groq_lpu, "groq_lpu", "Groq LPU", family::ai_asic, vendor::groq, false},
}};
static_assert(detail::table_is_indexed_and_unique(device_kind_table));

constexpr const device_kind_info& info(device_kind k) noexcept {
    return device_kind_table[static_cast<std::size_t>(k)];
}
constexpr std::string_view to_string(device_kind k) noexcept { return info(k).name; }
namespace detail {
/// device_kind_table's family column alone, for the queries that read only it: a program
/// that reads it carries 20 bytes instead of the table and its names.
inline constexpr auto kind_families = [] {
    std::array<family, device_kind_count> out{};
    for (const auto& row : device_kind_table) out[static_cast<std::size_t>(row.id)] = row.fam;
    return out;
}();
} // namespace detail
constexpr family family_of(device_kind k) noexcept { return detail::kind_families[static_cast<std::size_t>(k)]; }
constexpr std::optional<device_kind> parse_device_kind(std::string_view s) noexcept {
    return detail::parse_by_name<device_kind>(device_kind_table, s);
}

// ---------------------------------------------------------------------------------------
/// Numeric types a device computes in (peak throughput is quoted per type).
enum class dtype : std::uint8_t { fp64, fp32, tf32, bf16, fp16, fp8, int8, fp6, fp4, int4 };
inline constexpr std::size_t dtype_count = 10;

struct dtype_info {
    dtype id;
    std::string_view name;
    unsigned bits; ///< storage width of one element
};
inline constexpr std::array<dtype_info, dtype_count> dtype_table{{
    {dtype::fp64, "fp64", 64},
    {dtype::fp32, "fp32", 32},
    {dtype::tf32, "tf32", 32},
    {dtype::bf16, "bf16", 16},
    {dtype::fp16, "fp16", 16},
    {dtype::fp8, "fp8", 8},
    {dtype::int8, "int8", 8},
    {dtype::fp6, "fp6", 6},
    {dtype::fp4, "fp4", 4},
    {dtype::int4, "int4", 4},
}};
static_assert(detail::table_is_indexed_and_unique(dtype_table));
constexpr const dtype_info& info(dtype d) noexcept {
    return dtype_table[static_cast<std::size_t>(d)];
}
constexpr std::string_view to_string(dtype d) noexcept { return info(d).name; }
constexpr std::optional<dtype> parse_dtype(std::string_view s) noexcept {
    return detail::parse_by_name<dtype>(dtype_table, s);
}

// ---------------------------------------------------------------------------------------
/// Memory technology attached to a device.
enum class memory_type : std::uint8_t {
    unknown,
    hbm2,
    hbm2e,
    hbm3,
    hbm3e,
    gddr5,
    gddr6,
    gddr6x,
    gddr7,
    lpddr4x,
    lpddr5,
    lpddr5x,
    ddr4,
    ddr5,
    sram,
    unified, ///< shares system memory (Apple, iGPUs, NPUs)
};
inline constexpr std::size_t memory_type_count = 16;
struct memory_type_info {
    memory_type id;
    std::string_view name;
};
inline constexpr std::array<memory_type_info, memory_type_count> memory_type_table{{
    {memory_type::unknown, "unknown"}, {memory_type::hbm2, "HBM2"},
    {memory_type::hbm2e, "HBM2e"},     {memory_type::hbm3, "HBM3"},
    {memory_type::hbm3e, "HBM3e"},     {memory_type::gddr5, "GDDR5"},
    {memory_type::gddr6, "GDDR6"},     {memory_type::gddr6x, "GDDR6X"},
    {memory_type::gddr7, "GDDR7"},     {memory_type::lpddr4x, "LPDDR4X"},
    {memory_type::lpddr5, "LPDDR5"},   {memory_type::lpddr5x, "LPDDR5X"},
    {memory_type::ddr4, "DDR4"},       {memory_type::ddr5, "DDR5"},
    {memory_type::sram, "SRAM"},       {memory_type::unified, "unified"},
}};
static_assert(detail::table_is_indexed_and_unique(memory_type_table));
constexpr std::string_view to_string(memory_type m) noexcept {
    return memory_type_table[static_cast<std::size_t>(m)].name;
}

// ---------------------------------------------------------------------------------------
/// Links between devices. `scope` tells intra-node links (which make tensor parallelism
/// cheap) from inter-node networks (which favour pipeline or data parallelism).
enum class interconnect_kind : std::uint8_t {
    none,
    pcie,
    nvlink,
    nvswitch,
    xgmi,
    infinity_fabric, ///< on-package fabric (MI300A/X dies, Apple UltraFusion-style links)
    ici,             ///< Google TPU inter-chip interconnect
    neuronlink,
    gaudi_roce, ///< Gaudi's integrated RoCE ports, used both inside and between nodes
    ipu_link,
    infiniband,
    roce,
    roce_v2,
    ethernet,
};
inline constexpr std::size_t interconnect_kind_count = 14;
enum class link_scope : std::uint8_t { intra_node, inter_node };

struct interconnect_kind_info {
    interconnect_kind id;
    std::string_view name;
    std::string_view display;
    link_scope scope; ///< where the kind usually runs
};
inline constexpr std::array<interconnect_kind_info, interconnect_kind_count>
    interconnect_kind_table{{
        {interconnect_kind::none, "none", "none", link_scope::intra_node},
        {interconnect_kind::pcie, "pcie", "PCIe", link_scope::intra_node},
        {interconnect_kind::nvlink, "nvlink", "NVLink", link_scope::intra_node},
        {interconnect_kind::nvswitch, "nvswitch", "NVSwitch", link_scope::intra_node},
        {interconnect_kind::xgmi, "xgmi", "XGMI", link_scope::intra_node},
        {interconnect_kind::infinity_fabric, "infinity_fabric", "Infinity Fabric",
         link_scope::intra_node},
        {interconnect_kind::ici, "ici", "ICI", link_scope::intra_node},
        {interconnect_kind::neuronlink, "neuronlink", "NeuronLink", link_scope::intra_node},
        {interconnect_kind::gaudi_roce, "gaudi_roce", "Gaudi RoCE", link_scope::intra_node},
        {interconnect_kind::ipu_link, "ipu_link", "IPU-Link", link_scope::intra_node},
        {interconnect_kind::infiniband, "infiniband", "InfiniBand", link_scope::inter_node},
        {interconnect_kind::roce, "roce", "RoCE", link_scope::inter_node},
        {interconnect_kind::roce_v2, "roce_v2", "RoCE v2", link_scope::inter_node},
        {interconnect_kind::ethernet, "ethernet", "Ethernet", link_scope::inter_node},
    }};
static_assert(detail::table_is_indexed_and_unique(interconnect_kind_table));
constexpr const interconnect_kind_info& info(interconnect_kind k) noexcept {
    return interconnect_kind_table[static_cast<std::size_t>(k)];
}
constexpr std::string_view to_string(interconnect_kind k) noexcept { return info(k).name; }
/// A device-to-device fabric that tensor parallelism scales over (NVLink, NVSwitch, XGMI,
/// Infinity Fabric, ICI, NeuronLink, Gaudi's on-chip RoCE, IPU-Links), as PCIe and the
/// networks between nodes are not: what the planner and the cost model count as fast.
constexpr bool is_device_fabric(interconnect_kind k) noexcept {
    switch (k) {
    case interconnect_kind::nvlink:
    case interconnect_kind::nvswitch:
    case interconnect_kind::xgmi:
    case interconnect_kind::infinity_fabric:
    case interconnect_kind::ici:
    case interconnect_kind::neuronlink:
    case interconnect_kind::gaudi_roce:
    case interconnect_kind::ipu_link: return true;
    default: return false;
    }
}
constexpr std::optional<interconnect_kind> parse_interconnect_kind(std::string_view s) noexcept {
    return detail::parse_by_name<interconnect_kind>(interconnect_kind_table, s);
}
constexpr std::string_view to_string(link_scope s) noexcept {
    return s == link_scope::intra_node ? "intra_node" : "inter_node";
}

AI_HWACCEL_NAMESPACE_END
