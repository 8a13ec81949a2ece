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

put() { # machine, path, content
  mkdir -p "$(dirname "$here/$1/$2")"
  printf '%s' "$3" > "$here/$1/$2"
}
copy() { # machine, path, capture
  mkdir -p "$(dirname "$here/$1/$2")"
  cp "$real/$3" "$here/$1/$2"
}

# --- 1. A Kubernetes pod on a Graviton2 node, cgroup v1 limits ---------------------------
m=handmade-k8s-pod-graviton2-cgroup-v1
rm -rf "${here:?}/$m"
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
rm -rf "${here:?}/$m"
copy $m proc/meminfo proc-meminfo/meminfo_huawei-kunpeng920_arm64.txt
copy $m proc/self/cgroup container/proc-self-cgroup_cgroup-v1_kunpeng920_user-session.txt
for f in "$real"/dmi/sys-class-dmi-id_128arm-2pa2n8cluster4co/*; do
  copy $m "sys/class/dmi/id/$(basename "$f")" "dmi/sys-class-dmi-id_128arm-2pa2n8cluster4co/$(basename "$f")"
done
cpuinfo=""
for ((c = 0; c < 128; c++)); do
  cpuinfo+="processor	: $c
BogoMIPS	: 200.00
Features	: fp asimd evtstrm aes pmull sha1 sha2 crc32 atomics fphp asimdhp cpuid asimdrdm jscvt fcma dcpop asimddp asimdfhm
CPU implementer	: 0x48
CPU architecture: 8
CPU variant	: 0x1
CPU part	: 0xd01
CPU revision	: 0

"
  put $m sys/devices/system/cpu/cpu$c/topology/physical_package_id "$((c / 64))"$'\n'
  put $m sys/devices/system/cpu/cpu$c/topology/core_id "$((c % 64))"$'\n'
done
put $m proc/cpuinfo "$cpuinfo"
put $m sys/devices/system/cpu/online $'0-127\n'
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
rm -rf "${here:?}/$m"
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
q="index,uuid,name,pci.bus_id,pci.device_id,memory.total,memory.used,memory.free,compute_cap,driver_version,power.limit,power.draw,temperature.gpu,utilization.gpu,clocks.max.memory,pcie.link.gen.current,pcie.link.gen.max,pcie.link.width.current,pcie.link.width.max"
put $m ai-hwaccel-tools/index "# captured tool outputs (hand-made), see include/ai_hwaccel/detect/system.hpp
0	nvidia-smi-query.csv	nvidia-smi --query-gpu=$q --format=csv,noheader,nounits
"
put $m ai-hwaccel-tools/nvidia-smi-query.csv $'0, GPU-4f1a2b3c-5d6e-7f80-91a2-b3c4d5e6f708, NVIDIA GeForce RTX 4090, 00000000:01:00.0, 0x268410DE, 24564, 1102, 23046, 8.9, 550.54.14, 450.00, 21.34, 34, 0, 10501, 1, 4, 16, 16\n'
echo "assembled: $(cd "$here" && ls -d handmade-*/ | tr '\n' ' ')"
