// Fuzz target: the parsers of include/ai_hwaccel/detect/ (and the name and number parsers
// of core/ they build on) called directly, beside what `capture_formats` reaches: sysfs
// and /proc value parsers, the capture index of machine trees, and every backend's
// tool-output parser with its optional arguments (a query's field list, a chip, a link
// rate), which the capture table always leaves at their defaults.
//
// Input: one selector byte (modulo the number of entries of `parsers` below), then the
// text. Parsers of two strings split the text at its first NUL byte. The names in
// `parsers` are read by make_corpus.py to seed each parser with the fixtures it is for,
// so keep each entry's name on the line that opens it, as `{"name", …`.
#include "fuzz_common.hpp"

#include "ai_hwaccel/core.hpp"
#include "ai_hwaccel/detect/detect.hpp"
#include "ai_hwaccel/detect/formats.hpp"
#include "ai_hwaccel/detect/sysfs.hpp"
#include "ai_hwaccel/detect/system.hpp"
#include "ai_hwaccel/detect/topology.hpp"

#include <cstddef>
#include <cstdint>
#include <iterator>
#include <string_view>

namespace ah = ai_hwaccel;
using fuzz::consume;
using std::string_view;

namespace {

struct entry {
    string_view name;
    void (*run)(string_view text);
};

// A device the catalogue knows, chosen by the text's length, for the parsers that take one.
const ah::device_spec* some_device(string_view text) {
    constexpr std::size_t n = std::size(ah::device_catalogue);
    return text.size() % 4 == 0 ? nullptr : &ah::device_catalogue[text.size() % n];
}

const entry parsers[] = {
    // detect/sysfs.hpp: kernel values
    {"sysfs.parse_u64", [](string_view t) { consume(ah::detail::parse_u64(t)); }},
    {"sysfs.parse_i64", [](string_view t) { consume(ah::detail::parse_i64(t)); }},
    {"sysfs.parse_hex_attribute", [](string_view t) { consume(ah::detail::parse_hex_attribute(t)); }},
    {"sysfs.for_each_key_value", [](string_view t) {
         std::size_t n = 0;
         ah::detail::for_each_key_value(t, [&](string_view k, string_view v, bool c) { n += k.size() + v.size() + c; });
         consume(n);
     }},
    {"sysfs.parse_cpulist", [](string_view t) { consume(ah::parse_cpulist(t)); }},
    {"sysfs.cpulist_count", [](string_view t) { consume(ah::cpulist_count(t)); }},
    {"sysfs.base_name", [](string_view t) { consume(ah::detail::base_name(t)); }},
    {"sysfs.join_path", [](string_view t) {
         const auto [a, b] = fuzz::split_nul(t);
         consume(ah::detail::join_path(a, b));
     }},
    // detect/topology.hpp
    {"topology.parse_node_meminfo", [](string_view t) { consume(ah::parse_node_meminfo(t)); }},
    {"topology.numa_dir_id", [](string_view t) { consume(ah::detail::numa_dir_id(t)); }},
    {"topology.parse_pci_uevent", [](string_view t) {
         const auto u = ah::parse_pci_uevent(t);
         consume(u.class_code);
         consume(u.vendor_id);
         consume(u.subsystem_device_id);
         consume(u.slot);
         consume(u.driver ? u.driver->size() : 0);
         consume(u.bad.size());
         consume(u.complete());
     }},
    {"topology.parse_pcie_link_speed", [](string_view t) { consume(ah::parse_pcie_link_speed(t)); }},
    {"topology.parse_pcie_link_width", [](string_view t) { consume(ah::parse_pcie_link_width(t)); }},
    // detect/system.hpp: the index of a machine tree's captured tool outputs
    {"system.parse_capture_index", [](string_view t) { consume(ah::parse_capture_index(t)); }},
    // detect/cpu.hpp
    {"cpu.parse_meminfo", [](string_view t) { consume(ah::parse_meminfo(t)); }},
    {"cpu.parse_cpuinfo", [](string_view t) { consume(ah::parse_cpuinfo(t)); }},
    {"cpu.parse_lscpu", [](string_view t) { consume(ah::parse_lscpu(t)); }},
    {"cpu.parse_cgroup_memory_limit", [](string_view t) { consume(ah::parse_cgroup_memory_limit(t)); }},
    {"cpu.parse_cgroup_cpu_max", [](string_view t) { consume(ah::parse_cgroup_cpu_max(t)); }},
    {"cpu.parse_cgroup_cfs_quota", [](string_view t) {
         const auto [q, p] = fuzz::split_nul(t);
         consume(ah::parse_cgroup_cfs_quota(q, p));
     }},
    {"cpu.cgroup_stat", [](string_view t) {
         const auto [text, key] = fuzz::split_nul(t);
         consume(ah::detail::cgroup_stat(text, key));
     }},
    {"cpu.own_cgroup_path", [](string_view t) {
         const auto [text, controller] = fuzz::split_nul(t);
         consume(ah::detail::own_cgroup_path(text, controller));
     }},
    // detect/environment.hpp
    {"environment.parse_proc_cgroup", [](string_view t) { consume(ah::parse_proc_cgroup(t)); }},
    {"environment.is_wsl_kernel", [](string_view t) { consume(ah::is_wsl_kernel(t)); }},
    {"environment.is_kubernetes_namespace", [](string_view t) { consume(ah::is_kubernetes_namespace(t)); }},
    // detect/storage.hpp
    {"storage.classify_block_device", [](string_view t) {
         const auto [name, rest] = fuzz::split_nul(t);
         const auto [vendor, model] = fuzz::split_nul(rest);
         consume(ah::classify_block_device(name, vendor, model, t.size() % 3 == 0 ? std::nullopt : std::optional<bool>(t.size() % 3 == 1)));
     }},
    {"storage.parse_rotational", [](string_view t) { consume(ah::detail::parse_rotational(t)); }},
    {"storage.parse_lsblk_size", [](string_view t) { consume(ah::parse_lsblk_size(t)); }},
#if AI_HWACCEL_JSON
    {"storage.parse_lsblk_json", [](string_view t) { consume(ah::parse_lsblk_json(t)); }},
#endif
    // detect/fabric.hpp
    {"fabric.parse_ibstat", [](string_view t) { consume(ah::parse_ibstat(t)); }},
    {"fabric.parse_ibstatus", [](string_view t) { consume(ah::parse_ibstatus(t)); }},
    // core/: names and addresses the parsers and the JSON reader rely on
    {"core.parse_pci_address", [](string_view t) { consume(ah::parse_pci_address(t)); }},
    {"core.parse_backend", [](string_view t) { consume(ah::parse_backend(t)); }},
    {"core.parse_quant_format", [](string_view t) { consume(ah::parse_quant_format(t)); }},
    {"core.find_device", [](string_view t) { consume(ah::find_device(t)); }},
    {"formats.find_capture_format", [](string_view t) { consume(ah::find_capture_format(t)); }},
#if AI_HWACCEL_BACKEND_CUDA
    {"nvidia.parse_nvidia_smi_query_csv", [](string_view t) {
         const auto [text, fields] = fuzz::split_nul(t);
         consume(ah::parse_nvidia_smi_query_csv(text, fields));
     }},
    {"nvidia.parse_nvidia_smi_list", [](string_view t) { consume(ah::parse_nvidia_smi_list(t)); }},
    {"nvidia.parse_nvidia_smi_q", [](string_view t) { consume(ah::parse_nvidia_smi_q(t)); }},
    {"nvidia.parse_nvidia_smi_xml", [](string_view t) { consume(ah::parse_nvidia_smi_xml(t)); }},
    {"nvidia.parse_nvidia_smi_table", [](string_view t) { consume(ah::parse_nvidia_smi_table(t)); }},
    {"nvidia.parse_nvidia_smi_topo", [](string_view t) {
         consume(ah::parse_nvidia_smi_topo(t, ah::sourced<double>(static_cast<double>(t.size() % 64), ah::origin::catalogue)));
     }},
    {"nvidia.parse_nvidia_smi_nvlink_status", [](string_view t) { consume(ah::parse_nvidia_smi_nvlink_status(t)); }},
    {"nvidia.parse_nvidia_proc_information", [](string_view t) { consume(ah::parse_nvidia_proc_information(t)); }},
    {"nvidia.jetson_module_gpu", [](string_view t) { // the model, a NUL, the compatible strings
         const auto [model, compatible] = fuzz::split_nul(t);
         consume(ah::jetson_module_gpu(compatible, model));
     }},
#endif
#if AI_HWACCEL_BACKEND_ROCM
    {"amd.parse_kfd_node_properties", [](string_view t) { consume(ah::parse_kfd_node_properties(t)); }},
    {"amd.parse_pp_dpm_levels", [](string_view t) { consume(ah::parse_pp_dpm_levels(t)); }},
    {"amd.parse_amdgpu_mem_info", [](string_view t) { consume(ah::parse_amdgpu_mem_info(t)); }},
    {"amd.parse_sysfs_transcript", [](string_view t) { consume(ah::parse_sysfs_transcript(t)); }},
    {"amd.parse_rocminfo", [](string_view t) { consume(ah::parse_rocminfo(t)); }},
    {"amd.parse_rocm_smi", [](string_view t) { consume(ah::parse_rocm_smi(t)); }},
    {"amd.parse_amd_smi_static", [](string_view t) { consume(ah::parse_amd_smi_static(t)); }},
    {"amd.parse_amd_smi_topology", [](string_view t) { consume(ah::parse_amd_smi_topology(t)); }},
    {"amd.parse_amd_smi_xgmi", [](string_view t) { consume(ah::parse_amd_smi_xgmi(t)); }},
    {"amd.parse_amd_smi_dashboard", [](string_view t) { consume(ah::parse_amd_smi_dashboard(t)); }},
#endif
#if AI_HWACCEL_BACKEND_APPLE
    {"apple.parse_sysctl", [](string_view t) { consume(ah::parse_sysctl(t)); }},
    {"apple.parse_sysctl_brand_string", [](string_view t) { consume(ah::parse_sysctl_brand_string(t)); }},
    {"apple.parse_system_profiler_text", [](string_view t) { consume(ah::parse_system_profiler_text(t)); }},
#if AI_HWACCEL_JSON
    {"apple.parse_system_profiler_json", [](string_view t) { consume(ah::parse_system_profiler_json(t)); }},
#endif
#endif
#if AI_HWACCEL_BACKEND_INTEL_GPU
    {"intel_gpu.parse_xpu_smi_discovery_table", [](string_view t) { consume(ah::parse_xpu_smi_discovery_table(t)); }},
    {"intel_gpu.parse_xpu_smi_dump_csv", [](string_view t) { consume(ah::parse_xpu_smi_dump_csv(t)); }},
#if AI_HWACCEL_JSON
    {"intel_gpu.parse_xpu_smi_discovery_json", [](string_view t) { consume(ah::parse_xpu_smi_discovery_json(t)); }},
#endif
#endif
#if AI_HWACCEL_BACKEND_VULKAN
    {"vulkan.parse_vulkan_device_type", [](string_view t) { consume(ah::parse_vulkan_device_type(t)); }},
    {"vulkan.parse_vulkaninfo", [](string_view t) { consume(ah::parse_vulkaninfo(t)); }},
#if AI_HWACCEL_JSON
    {"vulkan.parse_vulkaninfo_json", [](string_view t) { consume(ah::parse_vulkaninfo_json(t)); }},
#endif
#endif
#if AI_HWACCEL_BACKEND_TPU
    {"tpu.parse_tpu_info", [](string_view t) { consume(ah::parse_tpu_info(t)); }},
    {"tpu.parse_tpu_info_version", [](string_view t) { consume(ah::parse_tpu_info_version(t)); }},
    {"tpu.parse_tpu_vfio_transcript", [](string_view t) { consume(ah::parse_tpu_vfio_transcript(t)); }},
#endif
#if AI_HWACCEL_BACKEND_GAUDI
    {"gaudi.parse_hl_smi_query_csv", [](string_view t) {
         const auto [text, fields] = fuzz::split_nul(t);
         consume(ah::parse_hl_smi_query_csv(text, fields));
     }},
    {"gaudi.parse_hl_smi_table", [](string_view t) { consume(ah::parse_hl_smi_table(t)); }},
    {"gaudi.parse_hl_smi_log", [](string_view t) { consume(ah::parse_hl_smi_log(t)); }},
#endif
#if AI_HWACCEL_BACKEND_NEURON
    {"neuron.parse_neuron_ls", [](string_view t) { consume(ah::parse_neuron_ls(t, some_device(t))); }},
    {"neuron.parse_neuron_ls_topology", [](string_view t) { consume(ah::parse_neuron_ls_topology(t)); }},
#if AI_HWACCEL_JSON
    {"neuron.parse_neuron_ls_json", [](string_view t) { consume(ah::parse_neuron_ls_json(t, some_device(t))); }},
#endif
    {"neuron.parse_neuron_connected_devices", [](string_view t) { consume(ah::parse_neuron_connected_devices(t)); }},
#endif
#if AI_HWACCEL_BACKEND_INTEL_NPU || AI_HWACCEL_BACKEND_AMD_XDNA
    {"npu.parse_accel_class_listing", [](string_view t) { consume(ah::parse_accel_class_listing(t)); }},
    {"npu.parse_accel_transcript", [](string_view t) { consume(ah::parse_accel_transcript(t)); }},
#endif
#if AI_HWACCEL_BACKEND_SAMSUNG_NPU || AI_HWACCEL_BACKEND_MEDIATEK_APU
    {"npu.parse_dt_compatible", [](string_view t) { consume(ah::parse_dt_compatible(t)); }},
#endif
#if AI_HWACCEL_BACKEND_SAMSUNG_NPU
    {"npu.is_samsung_npu_compatible", [](string_view t) { consume(ah::is_samsung_npu_compatible(t)); }},
#endif
#if AI_HWACCEL_BACKEND_MEDIATEK_APU
    {"npu.is_mediatek_mdla_compatible", [](string_view t) { consume(ah::is_mediatek_mdla_compatible(t)); }},
#endif
#if AI_HWACCEL_BACKEND_QUALCOMM
    {"qualcomm.parse_qaic_util_query", [](string_view t) { consume(ah::parse_qaic_util_query(t)); }},
#endif
#if AI_HWACCEL_BACKEND_GRAPHCORE
    {"graphcore.parse_gc_info_list", [](string_view t) { consume(ah::parse_gc_info_list(t)); }},
    {"graphcore.parse_gc_monitor", [](string_view t) { consume(ah::parse_gc_monitor(t)); }},
#endif
};

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const auto in = fuzz::select(data, size);
    parsers[in.selector % std::size(parsers)].run(in.text);
    return 0;
}
