#!/usr/bin/env bash
# Assembles the hand-made fixture machines in this folder from real captures
# (../shared/fixtures/real, copied byte for byte) and hand-written files (the values a
# real machine of that shape would show). Run it again after changing it; the trees are
# committed, so tests never depend on it. Each machine's README.md says which file is which.
#   tests/machines/assemble.sh [PATH/TO/fixtures/real]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
real=${1:-$here/../../../shared/fixtures/real}
[ -d "$real" ] || { echo "no captures at $real" >&2; exit 1; }
# shellcheck source=lib.sh
. "$here/lib.sh"

# --- 1. A Kubernetes pod on a Graviton2 node, cgroup v1 limits ---------------------------
m=handmade-k8s-pod-graviton2-cgroup-v1
fresh $m
copy $m proc/cpuinfo proc-cpuinfo/arm64_graviton2-t4g.small_full.txt
copy $m proc/meminfo proc-meminfo/meminfo_1gb-vm_kernel3x.txt
copy $m proc/1/cgroup container/proc-self-cgroup_k8s-docker-burstable_truncated.txt
copy $m proc/self/cgroup container/proc-self-cgroup_k8s-docker-burstable_truncated.txt
copy $m proc/self/environ k8s-env/printenv_kind-pod-with-downward-api.txt
put $m proc/self/status $'Name:\tpython3\nState:\tS (sleeping)\nCpus_allowed:\t3\nCpus_allowed_list:\t0-1\n'
put $m sys/devices/system/cpu/online $'0-1\n'
for c in 0 1; do
  put $m sys/devices/system/cpu/cpu$c/topology/physical_package_id $'0\n'
  put $m sys/devices/system/cpu/cpu$c/topology/core_id "$c"$'\n'
done
put $m sys/fs/cgroup/memory/memory.limit_in_bytes $'536870912\n'
put $m sys/fs/cgroup/memory/memory.usage_in_bytes $'402653184\n'
put $m sys/fs/cgroup/memory/memory.stat $'cache 134217728\nrss 268435456\ninactive_file 67108864\nactive_file 67108864\ntotal_cache 134217728\ntotal_rss 268435456\ntotal_inactive_file 67108864\ntotal_active_file 67108864\n'
put $m sys/fs/cgroup/cpu,cpuacct/cpu.cfs_quota_us $'150000\n'
put $m sys/fs/cgroup/cpu,cpuacct/cpu.cfs_period_us $'100000\n'
put $m .dockerenv ''
put $m var/run/secrets/kubernetes.io/serviceaccount/namespace 'ml-serving'
put $m sys/class/dmi/id/sys_vendor $'Amazon EC2\n'
put $m sys/class/dmi/id/bios_vendor $'Amazon EC2\n'
put $m sys/class/dmi/id/board_vendor $'Amazon EC2\n'
put $m sys/class/dmi/id/product_name $'t4g.micro\n'
put $m sys/block/nvme0n1/size $'16777216\n'
put $m sys/block/nvme0n1/queue/rotational $'0\n'
put $m sys/block/nvme0n1/device/model $'Amazon Elastic Block Store              \n'

# --- 2. A two-socket NUMA server: Huawei XA320 V2, 2x Kunpeng 920 ------------------------
m=handmade-numa-2socket-kunpeng920
fresh $m
copy $m proc/meminfo proc-meminfo/meminfo_huawei-kunpeng920_arm64.txt
copy $m proc/self/cgroup container/proc-self-cgroup_cgroup-v1_kunpeng920_user-session.txt
for f in "$real"/dmi/sys-class-dmi-id_128arm-2pa2n8cluster4co/*; do
  copy $m "sys/class/dmi/id/$(basename "$f")" "dmi/sys-class-dmi-id_128arm-2pa2n8cluster4co/$(basename "$f")"
done
# shellcheck disable=SC2046 # 128 words, one part number per CPU
arm_cpus $m 0x48 0x1 0 200.00 "fp asimd evtstrm aes pmull sha1 sha2 crc32 atomics fphp asimdhp cpuid asimdrdm jscvt fcma dcpop asimddp asimdfhm" \
  64 $(printf '0xd01 %.0s' {1..128})
put $m proc/self/status $'Name:\tbash\nCpus_allowed_list:\t0-127\n'
# MemTotal 527031224 kB split over four nodes (two per socket).
n=0
for kb in 131357436 132108288 132108288 131457212; do
  put $m sys/devices/system/node/node$n/meminfo "Node $n MemTotal:       $kb kB
Node $n MemFree:        $((kb - 2000000)) kB
Node $n MemUsed:         2000000 kB
"
  put $m sys/devices/system/node/node$n/cpulist "$((n * 32))-$((n * 32 + 31))"$'\n'
  n=$((n + 1))
done
d=sys/bus/pci/devices/0000:81:00.0
put $m $d/class $'0x020000\n'
put $m $d/vendor $'0x15b3\n'
put $m $d/device $'0x1017\n'
put $m $d/subsystem_vendor $'0x15b3\n'
put $m $d/subsystem_device $'0x0007\n'
put $m $d/current_link_speed $'8.0 GT/s PCIe\n'
put $m $d/current_link_width $'16\n'
put $m $d/max_link_speed $'8.0 GT/s PCIe\n'
put $m $d/max_link_width $'16\n'
put $m $d/numa_node $'2\n'
put $m $d/driver '../../../../bus/pci/drivers/mlx5_core'

# --- 3. A workstation: Core i7-1370P, 64 GB, an RTX 4090 on PCIe 4.0 x16, a SATA disk -----
m=handmade-workstation-rtx4090
fresh $m
copy $m proc/cpuinfo proc-cpuinfo/x86_i7-1370p-hybrid_hp-elitebook_full.txt
copy $m proc/meminfo proc-meminfo/meminfo_64gb-x86_kernel6x_zswap-unaccepted.txt
copy $m proc/self/cgroup container/proc-self-cgroup_host-cgroup2-user-session.txt
cp -r "$real/block-sysfs/sys-block-rotational_nvme-sata-pmem/sys" "$here/$m/"
put $m sys/devices/system/cpu/online $'0-19\n'
put $m proc/self/status $'Name:\tai-hwaccel\nCpus_allowed_list:\t0-19\n'
put $m sys/devices/system/node/node0/meminfo $'Node 0 MemTotal:       65589900 kB\nNode 0 MemFree:        49384032 kB\n'
put $m sys/devices/system/node/node0/cpulist $'0-19\n'
put $m proc/self/environ $'HOME=/home/dev\nCUDA_VISIBLE_DEVICES=0\n'
d=sys/bus/pci/devices/0000:01:00.0
put $m $d/class $'0x030000\n'
put $m $d/vendor $'0x10de\n'
put $m $d/device $'0x2684\n'
put $m $d/subsystem_vendor $'0x10de\n'
put $m $d/subsystem_device $'0x167c\n'
put $m $d/current_link_speed $'2.5 GT/s PCIe\n'
put $m $d/current_link_width $'16\n'
put $m $d/max_link_speed $'16.0 GT/s PCIe\n'
put $m $d/max_link_width $'16\n'
put $m $d/numa_node $'-1\n'
put $m $d/driver '../../../../bus/pci/drivers/nvidia'
d=sys/bus/pci/devices/0000:00:02.0
put $m $d/class $'0x030000\n'
put $m $d/vendor $'0x8086\n'
put $m $d/device $'0xa7a0\n'
put $m $d/numa_node $'-1\n'
put $m $d/driver '../../../../bus/pci/drivers/i915'
# nvidia-smi's answer to the CUDA probe's query (hand-made: an idle RTX 4090 as driver 550
# prints it; 24564 MiB is what nvidia-smi reports for the card's 24 GiB).
q="index,uuid,name,pci.bus_id,pci.device_id,memory.total,memory.used,memory.free,compute_cap,driver_version,power.limit,power.draw,temperature.gpu,utilization.gpu,clocks.max.memory,pcie.link.gen.current,pcie.link.gen.max,pcie.link.width.current,pcie.link.width.max,mig.mode.current"
put $m ai-hwaccel-tools/index "# captured tool outputs (hand-made), see include/ai_hwaccel/detect/system.hpp
0	nvidia-smi-query.csv	nvidia-smi --query-gpu=$q --format=csv,noheader,nounits
"
put $m ai-hwaccel-tools/nvidia-smi-query.csv $'0, GPU-4f1a2b3c-5d6e-7f80-91a2-b3c4d5e6f708, NVIDIA GeForce RTX 4090, 00000000:01:00.0, 0x268410DE, 24564, 1102, 23046, 8.9, 550.54.14, 450.00, 21.34, 34, 0, 10501, 1, 4, 16, 16, [N/A]\n'

# The workstation's Vulkan view: the RTX 4090 (the same card nvidia-smi reports, same UUID
# and PCI address), the i7's Iris Xe through ANV, and llvmpipe. Hand-made vulkaninfo text.
link $m sys/class/drm/card0/device ../../../bus/pci/devices/0000:00:02.0
link $m sys/class/drm/card1/device ../../../bus/pci/devices/0000:01:00.0
mkdir -p "$here/$m/sys/bus/pci/drivers/i915" "$here/$m/sys/bus/pci/drivers/nvidia"
{
  vk_header
  vk_gpu 0 "NVIDIA GeForce RTX 4090" 0x10de 0x2684 PHYSICAL_DEVICE_TYPE_DISCRETE_GPU DRIVER_ID_NVIDIA_PROPRIETARY \
    NVIDIA 4f1a2b3c-5d6e-7f80-91a2-b3c4d5e6f708 "0 1 0 0" 25757220864 local "550.54.14.0 (2307752832)"
  vk_gpu 1 "Intel(R) Graphics (RPL-P)" 0x8086 0xa7a0 PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU DRIVER_ID_INTEL_OPEN_SOURCE_MESA \
    "Intel open-source Mesa driver" 8680a0a7-0400-0000-0002-000000000000 "0 0 2 0" 33580670976 local "23.2.1 (96477185)"
  vk_gpu 2 "llvmpipe (LLVM 15.0.6, 256 bits)" 0x10005 0x0000 PHYSICAL_DEVICE_TYPE_CPU DRIVER_ID_MESA_LLVMPIPE \
    llvmpipe 6d657361-3233-2e31-2e33-000000000000 "" 67179799552 local "0.0.1 (1)"
} > "$here/$m/ai-hwaccel-tools/vulkaninfo.txt"
printf '0\tvulkaninfo.txt\tvulkaninfo\n' >> "$here/$m/ai-hwaccel-tools/index"

# --- 4. An HGX H100 node: 8x H100 SXM5 80GB behind NVSwitch, 2x Xeon 8480+ ---------------
m=handmade-hgx-h100-8gpu-nvswitch
fresh $m
x86_server $m "Intel(R) Xeon(R) Platinum 8480+" 2 56 2113623476
copy $m proc/self/cgroup container/proc-self-cgroup_host-cgroup2-user-session.txt
# DMI: the vendor and product of the real dmidecode capture of a PowerEdge XE9680.
put $m sys/class/dmi/id/sys_vendor $'Dell Inc.\n'
put $m sys/class/dmi/id/product_name $'PowerEdge XE9680\n'
put $m sys/class/dmi/id/product_family $'PowerEdge\n'
# The GPUs at the bus ids, UUIDs and driver of the real 8x H100 `nvidia-smi -q` capture
# (q_8x-h100-80gb-hbm3_driver535.161.08.txt); the first four on socket 0.
q="index,uuid,name,pci.bus_id,pci.device_id,memory.total,memory.used,memory.free,compute_cap,driver_version,power.limit,power.draw,temperature.gpu,utilization.gpu,clocks.max.memory,pcie.link.gen.current,pcie.link.gen.max,pcie.link.width.current,pcie.link.width.max,mig.mode.current"
real_q="$real/nvidia-smi/q_8x-h100-80gb-hbm3_driver535.161.08.txt"
mapfile -t uuids < <(grep 'GPU UUID' "$real_q" | awk '{print $NF}')
i=0
csv=""
topo=$'\tGPU0\tGPU1\tGPU2\tGPU3\tGPU4\tGPU5\tGPU6\tGPU7\tCPU Affinity\tNUMA Affinity\tGPU NUMA ID\n'
for bus in 19 3b 4c 5d 9b bb cb db; do
  node=$((i / 4))
  pci_fn $m 0000:$bus:00.0 0x030200 0x10de 0x2330 32.0 16 $node nvidia
  csv+="$i, ${uuids[$i]}, NVIDIA H100 80GB HBM3, 00000000:${bus^^}:00.0, 0x233010DE, 81559, 0, 81004, 9.0, 535.161.08, 700.00, 71.00, 30, 0, 2619, 5, 5, 16, 16, Disabled"$'\n'
  topo+="GPU$i"
  for ((j = 0; j < 8; j++)); do [ $j -eq $i ] && topo+=$'\t X ' || topo+=$'\tNV18'; done
  [ $node -eq 0 ] && topo+=$'\t0-55\t0\t\tN/A\n' || topo+=$'\t56-111\t1\t\tN/A\n'
  i=$((i + 1))
done
topo+=$'\nLegend:\n\n  X    = Self\n  SYS  = Connection traversing PCIe as well as the SMP interconnect between NUMA nodes (e.g., QPI/UPI)\n  NODE = Connection traversing PCIe as well as the interconnect between PCIe Host Bridges within a NUMA node\n  PHB  = Connection traversing PCIe as well as a PCIe Host Bridge (typically the CPU)\n  PXB  = Connection traversing multiple PCIe bridges (without traversing the PCIe Host Bridge)\n  PIX  = Connection traversing at most a single PCIe bridge\n  NV#  = Connection traversing a bonded set of # NVLinks\n'
put $m ai-hwaccel-tools/nvidia-smi-query.csv "$csv"
put $m ai-hwaccel-tools/topo-m.txt "$topo"
put $m ai-hwaccel-tools/index "# captured tool outputs (hand-made), see include/ai_hwaccel/detect/system.hpp
0	nvidia-smi-query.csv	nvidia-smi --query-gpu=$q --format=csv,noheader,nounits
0	topo-m.txt	nvidia-smi topo -m
"

# --- 5. Four MI300X in one XGMI hive, 2x EPYC 9654 ---------------------------------------
m=handmade-mi300x-4gpu-xgmi
fresh $m
x86_server $m "AMD EPYC 9654 96-Core Processor" 2 96 1584937616
copy $m proc/self/cgroup container/proc-self-cgroup_host-cgroup2-user-session.txt
put $m sys/class/kfd/kfd/topology/nodes/0/properties $'cpu_cores_count 96\nsimd_count 0\ngfx_target_version 0\n'
put $m sys/class/kfd/kfd/topology/nodes/1/properties $'cpu_cores_count 96\nsimd_count 0\ngfx_target_version 0\n'
n=0
for bus in 05 26 46 65; do
  a=0000:$bus:00.0
  node=$((n / 2))
  pci_fn $m $a 0x120000 0x1002 0x74a1 32.0 16 $node amdgpu
  d=sys/bus/pci/devices/$a
  put $m $d/product_name $'AMD Instinct MI300X OAM\n'
  put $m $d/unique_id "$(printf '%016x' $((0x6bd35e1b4a2d1c00 + n)))"$'\n'
  put $m $d/mem_info_vram_total $'206141652992\n'
  put $m $d/mem_info_vram_used $'297795584\n'
  put $m $d/mem_info_vis_vram_total $'206141652992\n'
  put $m $d/board_info $'type : oam\n'
  put $m $d/xgmi_device_id "$((7001 + n))"$'\n'
  put $m $d/xgmi_physical_id "$n"$'\n'
  if [ $n -eq 0 ]; then put $m $d/xgmi_hive_info/xgmi_hive_id $'1311768467463790320\n'
  else link $m $d/xgmi_hive_info ../0000:05:00.0/xgmi_hive_info; fi
  link $m sys/class/drm/card$((n + 1))/device ../../../bus/pci/devices/$a
  put $m sys/class/kfd/kfd/topology/nodes/$((n + 2))/properties "simd_count 1216
simd_per_cu 4
gfx_target_version 90402
vendor_id 4098
device_id 29857
location_id $((16#$bus * 256))
domain 0
hive_id 1311768467463790320
"
  n=$((n + 1))
done

# --- 6. A MacBook Pro with an M1 Pro (10 CPU cores, 16 GPU cores, 16 GB) -----------------
m=handmade-macbook-pro-m1pro
fresh $m
# system_profiler's JSON: the real M1 Pro SPDisplaysDataType capture, with SPHardwareDataType
# written from the real M1 Pro text capture (SPHardwareDataType_m1-pro-macbookpro18,3.txt;
# serial numbers and UUIDs left out). sysctl: hand-made from the same machine's 16 GB and
# 10 cores (8 performance, 2 efficiency; one thread each) in one package.
mkdir -p "$here/$m/ai-hwaccel-tools"
python3 - "$real/system_profiler/SPDisplaysDataType-json_m1-pro_3-displays-incl-sidecar.json" \
  "$here/$m/ai-hwaccel-tools/system_profiler.json" <<'PY'
import json, sys
doc = json.load(open(sys.argv[1]))
doc["SPHardwareDataType"] = [{
    "_name": "hardware_overview", "chip_type": "Apple M1 Pro", "machine_model": "MacBookPro18,3",
    "machine_name": "MacBook Pro", "model_number": "MKGQ3LL/A", "number_processors": "proc 10:8:2",
    "physical_memory": "16 GB"}]
json.dump(doc, open(sys.argv[2], "w"), indent=2)
PY
put $m ai-hwaccel-tools/sysctl.txt $'hw.memsize: 17179869184\nmachdep.cpu.brand_string: Apple M1 Pro\nhw.packages: 1\nhw.physicalcpu: 10\nhw.logicalcpu: 10\n'
put $m ai-hwaccel-tools/index "# captured tool outputs (hand-made), see include/ai_hwaccel/detect/system.hpp
0	sysctl.txt	sysctl hw.memsize machdep.cpu.brand_string hw.packages hw.physicalcpu hw.logicalcpu
0	system_profiler.json	system_profiler SPDisplaysDataType SPHardwareDataType -json
"

# --- 7. A laptop booted with nomodeset: no GPU driver bound, Vulkan has only llvmpipe ----
m=handmade-laptop-llvmpipe-only
fresh $m
copy $m proc/cpuinfo proc-cpuinfo/x86_i7-1370p-hybrid_hp-elitebook_full.txt
copy $m proc/meminfo proc-meminfo/meminfo_16gb-workstation_kernel5x_swap.txt
copy $m proc/self/cgroup container/proc-self-cgroup_host-cgroup2-user-session.txt
put $m sys/devices/system/cpu/online $'0-19\n'
put $m proc/self/status $'Name:\tai-hwaccel\nCpus_allowed_list:\t0-19\n'
pci_fn $m 0000:00:02.0 0x030000 0x8086 0xa7a0 "" "" -1 ""
{
  vk_header
  vk_gpu 0 "llvmpipe (LLVM 15.0.6, 256 bits)" 0x10005 0x0000 PHYSICAL_DEVICE_TYPE_CPU DRIVER_ID_MESA_LLVMPIPE \
    llvmpipe 6d657361-3233-2e31-2e33-000000000000 "" 16518029312 local "0.0.1 (1)"
} > "$here/$m/ai-hwaccel-tools-vulkaninfo.txt"
mkdir -p "$here/$m/ai-hwaccel-tools"
mv "$here/$m/ai-hwaccel-tools-vulkaninfo.txt" "$here/$m/ai-hwaccel-tools/vulkaninfo.txt"
put $m ai-hwaccel-tools/index "# captured tool outputs (hand-made), see include/ai_hwaccel/detect/system.hpp
0	vulkaninfo.txt	vulkaninfo
"

# --- Machines of the parts/ folder, one file per backend family -------------------------
for part in "$here"/parts/*.sh; do
  [ -e "$part" ] || continue
  # shellcheck source=/dev/null
  . "$part"
done

echo "assembled: $(cd "$here" && ls -d handmade-*/ | tr '\n' ' ')"
