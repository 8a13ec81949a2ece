# CUDA machines that are not a GPU server or a workstation with a card (the others are in
# assemble.sh). Sourced by assemble.sh and assemble-part.sh; uses lib.sh's helpers. Real
# captures are copied byte for byte with `copy`; every other file is hand-made, as said
# beside it.

# --- DGX Spark: a GB10 whose GPU shares the system's 128 GB -------------------------------
m=handmade-dgx-spark-gb10
fresh $m
# Real: the DMI attributes and the cgroup line of a DGX Spark (hwloc's nvidia-dgx-gb10 dump).
for f in "$real"/dmi/sys-class-dmi-id_nvidia-dgx-gb10/*; do
  copy $m "sys/class/dmi/id/$(basename "$f")" "dmi/sys-class-dmi-id_nvidia-dgx-gb10/$(basename "$f")"
done
copy $m proc/self/cgroup container/proc-self-cgroup_cgroup-v2_dgx-spark_user-session.txt
# Hand-made: the 20 cores NVIDIA's porting guide describes, two clusters of five Cortex-X925
# (part 0xd85) and five Cortex-A725 (0xd87), as arm64 /proc/cpuinfo lists them (no model
# name; the kernel's Armv9.2 feature words).
arm_cpus $m 0x41 0x0 1 2000.00 "fp asimd evtstrm aes pmull sha1 sha2 crc32 atomics fphp asimdhp cpuid asimdrdm jscvt fcma lrcpc dcpop sha3 sm3 sm4 asimddp sha512 sve asimdfhm dit uscat ilrcpc flagm sb paca pacg dcpodp sve2 sveaes svepmull svebitperm svesha3 svesm4 flagm2 frint svei8mm svebf16 i8mm bf16 dgh bti" \
  20 0xd85 0xd85 0xd85 0xd85 0xd85 0xd87 0xd87 0xd87 0xd87 0xd87 0xd85 0xd85 0xd85 0xd85 0xd85 0xd87 0xd87 0xd87 0xd87 0xd87
put $m proc/self/status $'Name:\tai-hwaccel\nCpus_allowed_list:\t0-19\n'
# Hand-made: 128 GiB of LPDDR5x less what the firmware keeps, one NUMA node.
put $m proc/meminfo $'MemTotal:       131334144 kB\nMemFree:        118901236 kB\nMemAvailable:   121602180 kB\n'
put $m sys/devices/system/node/node0/meminfo $'Node 0 MemTotal:       131334144 kB\nNode 0 MemFree:        118901236 kB\n'
put $m sys/devices/system/node/node0/cpulist $'0-19\n'
# The PCI functions lspci lists on a DGX Spark (https://wiki.gentoo.org/wiki/DGX_Spark):
# the GPU, its bridge, the ConnectX-7's four ports behind two root ports, the NVMe disk,
# the 10 GbE and Wi-Fi adapters. Hand-made files with those classes and ids; the drivers
# are the ones the kernel binds to them.
pci_fn $m 000f:01:00.0 0x030000 0x10de 0x2e12 "" "" -1 nvidia
pci_fn $m 000f:00:00.0 0x060400 0x10de 0x22d1 "" "" -1 pcieport
for d in 0000 0002; do
  pci_fn $m $d:00:00.0 0x060400 0x10de 0x22ce "" "" -1 pcieport
  pci_fn $m $d:01:00.0 0x020000 0x15b3 0x1021 "" "" -1 mlx5_core
  pci_fn $m $d:01:00.1 0x020000 0x15b3 0x1021 "" "" -1 mlx5_core
done
pci_fn $m 0004:00:00.0 0x060400 0x10de 0x22ce "" "" -1 pcieport
pci_fn $m 0004:01:00.0 0x010802 0x144d 0xa810 "" "" -1 nvme
pci_fn $m 0007:00:00.0 0x060400 0x10de 0x22d0 "" "" -1 pcieport
pci_fn $m 0007:01:00.0 0x020000 0x10ec 0x8127 "" "" -1 r8169
pci_fn $m 0009:00:00.0 0x060400 0x10de 0x22d0 "" "" -1 pcieport
pci_fn $m 0009:01:00.0 0x028000 0x14c3 0x7925 "" "" -1 mt7925e
# nvidia-smi's answer to the CUDA probe's query (hand-made, in the shape a GB10 prints:
# "[N/A]" for every memory value, which the GPU does not have of its own, and for power
# limit, clocks, PCIe and MIG; the bus id, driver 580.95.05, 4 W and 35 C of the
# `nvidia-smi` table in llama.cpp's benches/dgx-spark.md; compute capability 12.1).
q="index,uuid,name,pci.bus_id,pci.device_id,memory.total,memory.used,memory.free,compute_cap,driver_version,power.limit,power.draw,temperature.gpu,utilization.gpu,clocks.max.memory,pcie.link.gen.current,pcie.link.gen.max,pcie.link.width.current,pcie.link.width.max,mig.mode.current"
put $m ai-hwaccel-tools/index "# captured tool outputs (hand-made), see include/ai_hwaccel/detect/system.hpp
0	nvidia-smi-query.csv	nvidia-smi --query-gpu=$q --format=csv,noheader,nounits
"
put $m ai-hwaccel-tools/nvidia-smi-query.csv $'0, GPU-5b0e7c1d-2a34-4f56-8b78-9c0d1e2f3a4b, NVIDIA GB10, 0000000F:01:00.0, 0x2E1210DE, [N/A], [N/A], [N/A], 12.1, 580.95.05, [N/A], 4.00, 35, 0, [N/A], [N/A], [N/A], [N/A], [N/A], [N/A]\n'

# --- Jetson Orin Nano developer kit: the GPU is the module's, with its memory --------------
m=handmade-jetson-orin-nano-devkit
fresh $m
# Hand-made: the six Cortex-A78AE cores (part 0xd42) of an Orin Nano (the kernel's Armv8.2
# feature words for that core; BogoMIPS from Orin's 31.25 MHz system timer).
arm_cpus $m 0x41 0x0 1 62.50 "fp asimd evtstrm aes pmull sha1 sha2 crc32 atomics fphp asimdhp cpuid asimdrdm lrcpc dcpop asimddp uscat ilrcpc flagm paca pacg" \
  6 0xd42 0xd42 0xd42 0xd42 0xd42 0xd42
put $m proc/self/status $'Name:\tai-hwaccel\nCpus_allowed_list:\t0-5\n'
# Hand-made: 8 GB of LPDDR5 less what the firmware and carve-outs keep, one NUMA node.
put $m proc/meminfo $'MemTotal:        7650336 kB\nMemFree:         4215888 kB\nMemAvailable:    5123456 kB\n'
put $m sys/devices/system/node/node0/meminfo $'Node 0 MemTotal:        7650336 kB\nNode 0 MemFree:         4215888 kB\n'
put $m sys/devices/system/node/node0/cpulist $'0-5\n'
# Hand-made: the device tree's root model and compatible of the developer kit (carrier board
# p3768-0000, module p3767-0005, chip tegra234), NUL-terminated strings as the kernel
# exposes them; its device tree source is tegra234-p3768-0000+p3767-0005.
mkdir -p "$here/$m/sys/firmware/devicetree/base"
printf 'NVIDIA Jetson Orin Nano Developer Kit\0' > "$here/$m/sys/firmware/devicetree/base/model"
printf 'nvidia,p3768-0000+p3767-0005\0nvidia,p3767-0005\0nvidia,tegra234\0' \
  > "$here/$m/sys/firmware/devicetree/base/compatible"
# nvidia-smi's answer to the CUDA probe's query (hand-made, in the shape JetPack 6's
# nvidia-smi prints for an Orin: the name "Orin (nvgpu)" and "[N/A]" for memory, PCI and
# power values; compute capability 8.7, driver 540.4.0 as JetPack 6.1 reports it).
put $m ai-hwaccel-tools/index "# captured tool outputs (hand-made), see include/ai_hwaccel/detect/system.hpp
0	nvidia-smi-query.csv	nvidia-smi --query-gpu=$q --format=csv,noheader,nounits
"
put $m ai-hwaccel-tools/nvidia-smi-query.csv $'0, GPU-3c6f1a2b-7d84-4e95-a0b1-c2d3e4f5a6b7, Orin (nvgpu), [N/A], [N/A], [N/A], [N/A], [N/A], 8.7, 540.4.0, [N/A], [N/A], 41, 0, [N/A], [N/A], [N/A], [N/A], [N/A], [N/A]\n'

# --- Jetson AGX Thor developer kit: a T5000 module, JetPack 7 -----------------------------
m=handmade-jetson-agx-thor-devkit
fresh $m
# Hand-made: the T5000's 14 Neoverse-V3AE cores (part 0xd83), one cluster, with GB10's
# Armv9.2 feature words (no capture of a Thor is in reach); BogoMIPS from the 1 GHz system
# counter Armv9.2 parts run.
arm_cpus $m 0x41 0x0 1 2000.00 "fp asimd evtstrm aes pmull sha1 sha2 crc32 atomics fphp asimdhp cpuid asimdrdm jscvt fcma lrcpc dcpop sha3 sm3 sm4 asimddp sha512 sve asimdfhm dit uscat ilrcpc flagm sb paca pacg dcpodp sve2 sveaes svepmull svebitperm svesha3 svesm4 flagm2 frint svei8mm svebf16 i8mm bf16 dgh bti" \
  14 0xd83 0xd83 0xd83 0xd83 0xd83 0xd83 0xd83 0xd83 0xd83 0xd83 0xd83 0xd83 0xd83 0xd83
put $m proc/self/status $'Name:\tai-hwaccel\nCpus_allowed_list:\t0-13\n'
# Hand-made: 128 GB of LPDDR5X less what the firmware and carve-outs keep, one NUMA node.
put $m proc/meminfo $'MemTotal:       127883468 kB\nMemFree:        112204816 kB\nMemAvailable:   117356940 kB\n'
put $m sys/devices/system/node/node0/meminfo $'Node 0 MemTotal:       127883468 kB\nNode 0 MemFree:        112204816 kB\n'
put $m sys/devices/system/node/node0/cpulist $'0-13\n'
# The developer kit's root model and compatible as jetson_stats issue 711 shows them
# (carrier p4071-0000, module p3834-0008, chip tegra264), NUL-terminated as the kernel
# exposes them; /proc/device-tree is the kernel's link to this folder.
mkdir -p "$here/$m/sys/firmware/devicetree/base"
printf 'NVIDIA Jetson AGX Thor Developer Kit\0' > "$here/$m/sys/firmware/devicetree/base/model"
printf 'nvidia,p4071-0000+p3834-0008\0nvidia,p3834-0008\0nvidia,tegra264\0' \
  > "$here/$m/sys/firmware/devicetree/base/compatible"
# nvidia-smi's answer to the CUDA probe's query (hand-made in the shape public reports give
# for JetPack 7: the name "NVIDIA Thor" and "[N/A]" for memory, jetson_stats issue 885 and
# vllm-playground pull request 11; compute capability 11.0 and driver 595.78 as JetPack 7.2
# reports them; "[N/A]" for PCI, power, temperature and clocks).
put $m ai-hwaccel-tools/index "# captured tool outputs (hand-made), see include/ai_hwaccel/detect/system.hpp
0	nvidia-smi-query.csv	nvidia-smi --query-gpu=$q --format=csv,noheader,nounits
"
put $m ai-hwaccel-tools/nvidia-smi-query.csv $'0, GPU-8e2d4c6a-1b3f-4a5e-9c7d-0f1e2d3c4b5a, NVIDIA Thor, [N/A], [N/A], [N/A], [N/A], [N/A], 11.0, 595.78, [N/A], [N/A], [N/A], 0, [N/A], [N/A], [N/A], [N/A], [N/A], [N/A]\n'
