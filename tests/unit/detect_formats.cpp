#include "ai_hwaccel/detect/formats.hpp"

#include "fixtures.hpp"

#include <doctest/doctest.h>

#include <string>
#include <vector>

namespace ah = ai_hwaccel;

TEST_CASE("recognise_format: every real capture of a machine file, by itself") {
    struct row {
        const char* file;
        const char* format;
    };
    // Named members, not a structured binding: clang 14 cannot capture one in the lambdas
    // doctest's CAPTURE makes.
    for (const auto& entry : {
             row{"proc-cpuinfo/x86_i7-1370p-hybrid_hp-elitebook_full.txt", "proc-cpuinfo"},
             row{"proc-cpuinfo/x86_i7-8705g_block0.txt", "proc-cpuinfo"},
             row{"proc-cpuinfo/x86_ryzen7-1700_block0_truncated.txt", "proc-cpuinfo"},
             row{"proc-cpuinfo/x86_xeon-e5620_block15.txt", "proc-cpuinfo"},
             row{"proc-cpuinfo/arm64_graviton1-a1_first2blocks.txt", "proc-cpuinfo"},
             row{"proc-cpuinfo/arm64_graviton2-t4g.small_full.txt", "proc-cpuinfo"},
             row{"proc-cpuinfo/arm64_graviton3-c7g_head9.txt", "proc-cpuinfo"},
             row{"proc-cpuinfo/arm64_nvidia-jetson-tx1.txt", "proc-cpuinfo"},
             row{"proc-cpuinfo/arm64_pixel-2-xl_msm8998.txt", "proc-cpuinfo"},
             row{"proc-cpuinfo/armv7_raspberry-pi-3_bcm2709.txt", "proc-cpuinfo"},
             row{"proc-meminfo/meminfo_16gb-server_kernel3.14plus.txt", "proc-meminfo"},
             row{"proc-meminfo/meminfo_16gb-workstation_kernel5x_swap.txt", "proc-meminfo"},
             row{"proc-meminfo/meminfo_1gb-vm_kernel3x.txt", "proc-meminfo"},
             row{"proc-meminfo/meminfo_64gb-x86_kernel6x_zswap-unaccepted.txt", "proc-meminfo"},
             row{"proc-meminfo/meminfo_huawei-kunpeng920_arm64.txt", "proc-meminfo"},
             row{"lscpu/intel-i5-10400_cometlake_util-linux-2.39.txt", "lscpu"},
             row{"lscpu/lscpu_2x-epyc7742_old-format.txt", "lscpu"},
             row{"lscpu/lscpu_azure-vm_epyc-9v74_hypervisor-microsoft.txt", "lscpu"},
             row{"gpu-numa-sysfs/node250-meminfo_ac922-v100-gpu-memory-node.txt", "node-meminfo"},
#if AI_HWACCEL_JSON
             row{"lsblk/json_dell-server_nvme-raid_rota-false.json", "lsblk-json"},
             row{"lsblk/json_default-columns_majmin-mountpoints.json", "lsblk-json"},
             row{"lsblk/json_fsused_usb-virtual-media-rota-true.json", "lsblk-json"},
#endif
         }) {
        const char* const file = entry.file;
        const char* const format = entry.format;
        CAPTURE(file);
        const auto text = test::capture(file);
        if (!text) continue;
        const auto* f = ah::recognise_format(*text);
        REQUIRE(f != nullptr);
        CHECK(f->name == format);
        const auto r = ah::parse_capture(*text, *f);
        CHECK(r.format == format);
        CHECK(r.warnings.empty()); // a real capture earns no warning
        CHECK((r.host.has_value() || r.system.has_value()));
    }
}

// The vendor tools' outputs: each recognised by its own format and by no other, read
// without a warning. What each one says is asserted in the backend's own test file.
TEST_CASE("recognise_format: every real capture of an accelerator or fabric tool, by itself and by one format only") {
    struct row {
        const char* file;
        const char* format;
    };
    const std::vector<row> rows{
        row{"ibstat/ibstat_a100-node_all-active_cx6dx.txt", "ibstat"},
        row{"ibstat/ibstat_h100-node_12-hcas_ethernet-and-ib_fw28.39.txt", "ibstat"},
        row{"ibstat/ibstatus_a100_ib-hdr200.txt", "ibstatus"},
#if AI_HWACCEL_BACKEND_TPU
        row{"tpu/tpu-info_version_v6e.txt", "tpu-info-version"},
        row{"tpu/tpu-info_process_8-chips_dev-vfio.txt", "tpu-info-process"},
        row{"tpu/v6e_ls-dev-vfio_iommu-groups-vendor-device.txt", "tpu-vfio-transcript"},
        row{"tpu/tpu-info_v4_4-chips_dev-accel_rich-table.txt", "tpu-info"},
        row{"tpu/tpu-info_v6e_4-chips_dev-vfio_static.txt", "tpu-info"},
#endif
#if AI_HWACCEL_BACKEND_GAUDI
        row{"hl-smi/default-table_8x-gaudi3-hl325l_v1.21.0_openshift-pod.txt", "hl-smi-table"},
        row{"hl-smi/default-table_gaudi2_v1.17.1_openshift-job.txt", "hl-smi-table"},
        row{"hl-smi/default-table_8x-gaudi2-hl225_v1.21.1_busy.txt", "hl-smi-table"},
        row{"hl-smi/L-i_one-aip_gaudi2-hl225_v1.12.1.txt", "hl-smi-log"},
#endif
#if AI_HWACCEL_BACKEND_NEURON
        row{"neuron-ls/default_trn2n.48xlarge_16-devices.txt", "neuron-ls"},
        row{"neuron-ls/wide_trn2n.48xlarge_with-processes.txt", "neuron-ls-wide"},
        row{"neuron-ls/topology_trn1.32xlarge_16-devices-torus.txt", "neuron-ls-topology"},
#endif
#if AI_HWACCEL_BACKEND_INTEL_NPU || AI_HWACCEL_BACKEND_AMD_XDNA
        row{"npu-sysfs/ls-sys-class-accel_strix-halo-xdna.txt", "accel-class-listing"},
        row{"npu-sysfs/session_lunar-lake_accel0-device-attributes.txt", "accel-sysfs-transcript"},
#endif
#if AI_HWACCEL_BACKEND_QUALCOMM
        row{"qaic-util/q-grep-Status-QID_4-socs.txt", "qaic-util-query"},
#endif
#if AI_HWACCEL_BACKEND_GRAPHCORE
        row{"gc-info/l_ipuof-partition_4-ipus_m2000.txt", "gc-info-list"},
        row{"gc-info/gc-monitor_ipuof-partition_4-ipus_m2000.txt", "gc-monitor"},
#endif
#if AI_HWACCEL_BACKEND_CUDA
row{"nvidia-smi/L_a100-80gb-pcie_mig-2x3g.40gb.txt", "nvidia-smi-list"},
row{"nvidia-smi/L_a100-80gb-sxm4_mig-7x1g.10gb.txt", "nvidia-smi-list"},
row{"nvidia-smi/default-table_8x-h100_driver550.90.07.txt", "nvidia-smi-table"},
row{"nvidia-smi/default-table_windows_rtx4090_wddm_driver560.txt", "nvidia-smi-table"},
row{"nvidia-smi/nvlink-status_a100.txt", "nvidia-smi-nvlink-status"},
row{"nvidia-smi/q-x_rtx3060_driver515.xml", "nvidia-smi-q-xml"},
row{"nvidia-smi/q-x_rtx4090_driver535.xml", "nvidia-smi-q-xml"},
row{"nvidia-smi/q-x_tesla-p100_driver510.xml", "nvidia-smi-q-xml"},
row{"nvidia-smi/q_8x-h100-80gb-hbm3_driver535.161.08.txt", "nvidia-smi-q"},
row{"nvidia-smi/q_8x-h100-80gb-hbm3_driver535.183.01.txt", "nvidia-smi-q"},
row{"nvidia-smi/q_8x-rtx4090_driver535.154.05_with-processes.txt", "nvidia-smi-q"},
row{"nvidia-smi/q_a10_driver535.129.03.txt", "nvidia-smi-q"},
row{"nvidia-smi/query-gpu_tesla-p100.csv", "nvidia-smi-query-csv"},
row{"nvidia-smi/topo-m_2x-nv12_8x-mlx5.txt", "nvidia-smi-topo"},
row{"nvidia-smi/topo-m_2x-rtx5090_phb.txt", "nvidia-smi-topo"},
row{"nvidia-smi/topo-m_8x-rtx4090_2nics_no-nvlink.txt", "nvidia-smi-topo"},
row{"nvidia-smi/topo-m_8x-rtx5090_dual-socket_2nics.txt", "nvidia-smi-topo"},
row{"nvidia-smi/topo-p2p-rw_2x-rtx5090.txt", "nvidia-smi-topo-p2p"},
#endif
#if AI_HWACCEL_BACKEND_ROCM
row{"amd-smi/default-dashboard_2x-rx7900xtx_nixos_rocm-na.txt", "amd-smi-dashboard"},
row{"amd-smi/list_2x-mi210_valid-uuid.txt", "amd-smi-static"},
row{"amd-smi/list_strix-halo-apu.txt", "amd-smi-static"},
row{"amd-smi/static-driver_2x-rx7900xtx_nixos-kernel-string.txt", "amd-smi-static"},
row{"amd-smi/static_4x-mi300a_rocm6.2.txt", "amd-smi-static"},
row{"amd-smi/topology_2x-rx7900xtx_pcie.txt", "amd-smi-topology"},
row{"amd-smi/xgmi_2x-rx7900xtx_no-xgmi.txt", "amd-smi-xgmi"},
row{"amdgpu-sysfs/kfd-topology-node-properties_vega20-radeon-vii.txt", "kfd-node-properties"},
row{"amdgpu-sysfs/mem_info_rx570_4gb.txt", "amdgpu-sysfs-transcript"},
row{"amdgpu-sysfs/mem_info_vram_used-total_8gb-card_nixos.txt", "amdgpu-sysfs-transcript"},
row{"amdgpu-sysfs/pp_dpm_pcie_navi-x8.txt", "amdgpu-pp-dpm"},
row{"amdgpu-sysfs/pp_dpm_pcie_rx6800-gen3-board.txt", "amdgpu-pp-dpm"},
row{"rocm-smi/concise_2x-mi210_rocm6.3.txt", "rocm-smi"},
row{"rocm-smi/concise_strix-halo-apu_partitions-column.txt", "rocm-smi"},
row{"rocm-smi/showdriverversion-csv_mi100.csv", "rocm-smi-csv"},
row{"rocm-smi/showmeminfo-vram_4gb-gpu.txt", "rocm-smi"},
row{"rocm-smi/showproductname-csv_2x-mi100.csv", "rocm-smi-csv"},
#if AI_HWACCEL_JSON
row{"rocm-smi/showproductname-json_mi250x.json", "rocm-smi-json"},
#endif
row{"rocm-smi/showproductname-showuse-showmeminfo-vram-csv_rx7900xt.csv", "rocm-smi-csv"},
#if AI_HWACCEL_JSON
row{"rocm-smi/showproductname-showuse-showmeminfo-vram-json_rx7900xt.json", "rocm-smi-json"},
#endif
row{"rocm-smi/showproductname_2x-mi210.txt", "rocm-smi"},
row{"rocm-smi/showuniqueid_2x-mi210_valid.txt", "rocm-smi"},
row{"rocminfo/i9-13900k_2x-rx7900xtx.txt", "rocminfo"},
row{"rocminfo/support_2x-epyc7763_2x-mi210_rocm6.3.3.txt", "rocminfo"},
row{"rocminfo/xeon8568y_mi300x-vf_rocm7.2.txt", "rocminfo"},
#endif
#if AI_HWACCEL_BACKEND_APPLE
row{"sysctl/hw.memsize-and-memsize_usable_36gb-mac.txt", "sysctl"},
row{"sysctl/machdep.cpu_m1-pro.txt", "sysctl"},
row{"sysctl/machdep.cpu_m1_bigsur.txt", "sysctl"},
row{"sysctl/n-machdep.cpu.brand_string_intel-i7-3820qm.txt", "sysctl-brand-string"},
row{"sysctl/n-machdep.cpu.brand_string_intel-i9-9980hk.txt", "sysctl-brand-string"},
#if AI_HWACCEL_JSON
row{"system_profiler/SPDisplaysDataType-json_m1-pro_3-displays-incl-sidecar.json", "system-profiler-json"},
#endif
row{"system_profiler/SPDisplaysDataType_m3-macbook-pro_external-display.txt", "system-profiler"},
row{"system_profiler/SPHardwareDataType-detailLevel-mini_m1-pro.txt", "system-profiler"},
row{"system_profiler/SPHardwareDataType-detailLevel-mini_m2-pro.txt", "system-profiler"},
#if AI_HWACCEL_JSON
row{"system_profiler/SPHardwareDataType-json_m2-macbook-pro-mac14,7.json", "system-profiler-json"},
#endif
row{"system_profiler/SPHardwareDataType_lines_m2-max-16in_serials-masked.txt", "system-profiler"},
row{"system_profiler/SPHardwareDataType_m1-pro-macbookpro18,3.txt", "system-profiler"},
#endif
#if AI_HWACCEL_BACKEND_VULKAN
row{"vulkaninfo/full-not-summary_rx5500xt_radv_mesa23.1.txt", "vulkaninfo-text"},
row{"vulkaninfo/summary_i9-13900hx-laptop_intel-rpls_rtx4070-laptop_llvmpipe.txt", "vulkaninfo-summary"},
row{"vulkaninfo/summary_jetson-orin-nano_tegra-nvgpu.txt", "vulkaninfo-summary"},
row{"vulkaninfo/summary_windows_rtx4090_driver560.txt", "vulkaninfo-summary"},
row{"vulkaninfo/summary_windows_ryzen9-7950x-igpu_rtx3070_author-trimmed.txt", "vulkaninfo-summary"},
#endif
#if AI_HWACCEL_BACKEND_INTEL_GPU
row{"xpu-smi/discovery-d_detail_max-series-0x020a_2-tiles_doc.txt", "xpu-smi-discovery-detail"},
row{"xpu-smi/discovery-dump-1,2,3,6_2x-flex-0x56c0_doc.csv", "xpu-smi-dump"},
#if AI_HWACCEL_JSON
row{"xpu-smi/discovery-j_1x-max-series-0x020a_doc.json", "xpu-smi-discovery-json"},
#endif
row{"xpu-smi/discovery_1x-max-series-0x020a_doc.txt", "xpu-smi-discovery"},
#endif
    };
    for (const auto& entry : rows) {
        const char* const file = entry.file; // not a structured binding: see above
        const char* const format = entry.format;
        INFO(std::string(file));
        const auto text = test::capture(file);
        if (!text) continue;
        const auto* f = ah::recognise_format(*text);
        REQUIRE(f != nullptr);
        CHECK(f->name == format);
        std::size_t claimants = 0;
        for (const auto& other : ah::capture_formats) claimants += other.sniff(*text) > 0 ? 1 : 0;
        CHECK(claimants == 1);
        const auto r = ah::parse_capture(*text, *f);
        CHECK(r.warnings.empty());
        // Three captures hold nothing a registry keeps: a driver version alone, a tool's
        // own version, and a peer-to-peer support matrix (which says what is allowed, not
        // what is connected).
        const std::string_view name = file;
        if (name != "rocm-smi/showdriverversion-csv_mi100.csv" && name != "nvidia-smi/topo-p2p-rw_2x-rtx5090.txt" &&
            name != "tpu/tpu-info_version_v6e.txt")
            CHECK((!r.devices.empty() || r.host.has_value() || r.system.has_value()));
    }
}

TEST_CASE("parse_capture reads what the capture shows") {
    if (const auto t = test::capture("proc-meminfo/meminfo_1gb-vm_kernel3x.txt")) {
        const auto r = ah::parse_capture(*t, *ah::find_capture_format("proc-meminfo"));
        REQUIRE(r.host);
        CHECK(*r.host->memory.total_bytes == 1019732ull * 1024);
    }
    if (const auto t = test::capture("lscpu/lscpu_azure-vm_epyc-9v74_hypervisor-microsoft.txt")) {
        const auto r = ah::parse_capture(*t, *ah::find_capture_format("lscpu"));
        REQUIRE(r.host);
        CHECK(r.host->cpu.threads == 4);
        REQUIRE(r.system);
        CHECK(r.system->environment.hypervisor == "Microsoft");
    }
    if (const auto t = test::capture("gpu-numa-sysfs/node250-meminfo_ac922-v100-gpu-memory-node.txt")) {
        const auto r = ah::parse_capture(*t, *ah::recognise_format(*t));
        REQUIRE(r.host);
        REQUIRE(r.host->numa.size() == 1);
        CHECK(r.host->numa[0].id == 250);
        CHECK(r.host->numa[0].memory_bytes == 15728640ull * 1024);
    }
}

TEST_CASE("recognise_format: the CUDA probe's own query output, without its header line") {
    // What detection asks nvidia-smi for (`--format=csv,noheader,nounits` in the columns of
    // nvidia_smi_query_fields), as a machine tree holds it: recognised and read in those
    // columns, since nothing else could name them.
    const auto text = test::read_file(std::string(AI_HWACCEL_MACHINES_DIR) +
                                      "/handmade-hgx-h100-8gpu-nvswitch/ai-hwaccel-tools/nvidia-smi-query.csv");
    REQUIRE(text);
    const auto* f = ah::recognise_format(*text);
    REQUIRE(f != nullptr);
    CHECK(f->name == "nvidia-smi-query-csv");
    const auto r = ah::parse_capture(*text, *f);
    CHECK(r.warnings.empty());
    REQUIRE(r.devices.size() == 8);
    REQUIRE(r.devices[1].pci);
    CHECK(std::string(r.devices[1].pci->text().data()) == "0000:3b:00.0");
    CHECK(r.devices[0].memory_bytes.value_or(0) == 81559ull << 20);
    CHECK(r.devices[7].index == 7);
    // Rows of another width, or without a GPU UUID second, are not taken for it.
    const auto first = text->substr(0, text->find('\n'));
    CHECK(ah::recognise_format(first.substr(0, first.rfind(',')) + "\n") == nullptr);
    std::string no_uuid = first;
    no_uuid.replace(no_uuid.find("GPU-"), 4, "XYZ-");
    CHECK(ah::recognise_format(no_uuid + "\n") == nullptr);
}

TEST_CASE("find_capture_format") {
    CHECK(ah::find_capture_format("proc-cpuinfo")->name == "proc-cpuinfo");
    CHECK(ah::find_capture_format("PROC_CPUINFO")->name == "proc-cpuinfo");
    CHECK(ah::find_capture_format("nvidia-smi-xyz") == nullptr);
    CHECK(ah::find_capture_format("") == nullptr);
}

TEST_CASE("recognise_format and parse_capture on what is not a capture") {
    CHECK(ah::recognise_format("") == nullptr);
    CHECK(ah::recognise_format("hello world\n") == nullptr);
    CHECK(ah::recognise_format(std::string(4096, '\xff')) == nullptr);
    CHECK(ah::recognise_format("{\"not\": \"lsblk\"}") == nullptr);
    // Forced to a format it is not in: a warning, never a crash.
    for (const auto& f : ah::capture_formats) {
        CAPTURE(f.name);
        for (std::string junk : {std::string(), std::string("\0\0\0", 3), std::string("MemTotal: 99999999999999999999999 kB"),
                                 std::string("processor : 0\nflags : \xff\xfe"), std::string(100000, '{'),
                                 std::string("Node 0 MemTotal: -1 kB")}) {
            const auto r = ah::parse_capture(junk, f);
            CHECK(r.format == f.name);
        }
        CHECK_FALSE(ah::parse_capture("", f).warnings.empty());
    }
}
