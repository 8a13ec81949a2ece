# Client-NPU machines (include/ai_hwaccel/detect/npu.hpp). Sourced by assemble.sh and
# assemble-part.sh; uses lib.sh's helpers. Real captures are copied byte for byte with
# `copy`; every other file is hand-made, as said beside it.

# A hand-made /proc/cpuinfo: one block per logical CPU.
npu_cpuinfo() { # machine, vendor_id, family, model name, cores, threads per core, flags
  local m=$1 c cpus=$(($5 * $6)) text=""
  for ((c = 0; c < cpus; c++)); do
    text+="processor	: $c
vendor_id	: $2
cpu family	: $3
model name	: $4
physical id	: 0
siblings	: $cpus
core id		: $((c % $5))
cpu cores	: $5
flags		: $7

"
  done
  put $m proc/cpuinfo "$text"
  put $m sys/devices/system/cpu/online "0-$((cpus - 1))"$'\n'
  put $m proc/self/status "Name:	ai-hwaccel
Cpus_allowed_list:	0-$((cpus - 1))
"
}

# --- Lunar Lake laptop with its Intel NPU (intel_vpu) --------------------------------------
m=handmade-laptop-intel-npu
fresh $m
# Hand-made: Core Ultra 7 256V (Lunar Lake, 8 cores, no SMT, 16 GB on package).
npu_cpuinfo $m GenuineIntel 6 "Intel(R) Core(TM) Ultra 7 256V" 8 1 \
  "fpu vme de pse tsc msr pae mce cx8 apic sep mtrr pge mca cmov pat pse36 clflush mmx fxsr sse sse2 ht syscall nx rdtscp lm constant_tsc pni pclmulqdq ssse3 fma cx16 sse4_1 sse4_2 movbe popcnt aes xsave avx f16c rdrand lahf_lm abm bmi1 avx2 bmi2 sha_ni avx_vnni"
# Real meminfo of a 16 GB x86 host (not this laptop's, which no public capture shows).
copy $m proc/meminfo proc-meminfo/meminfo_16gb-workstation_kernel5x_swap.txt
# The NPU's PCI function as the kernel lays it out: the function's folder under
# /sys/devices, the accel node inside it, /sys/class/accel and /sys/bus/pci/devices
# linking to them. Hand-made files; the values are those of the real Lunar Lake
# transcript npu-sysfs/session_lunar-lake_accel0-device-attributes.txt.
d=sys/devices/pci0000:00/0000:00:0b.0
put $m $d/vendor $'0x8086\n'
put $m $d/device $'0x643e\n'
put $m $d/subsystem_vendor $'0x17aa\n'
put $m $d/subsystem_device $'0x2339\n'
put $m $d/class $'0x120000\n'
put $m $d/numa_node $'-1\n'
put $m $d/uevent $'DRIVER=intel_vpu\nPCI_CLASS=120000\nPCI_ID=8086:643E\nPCI_SUBSYS_ID=17AA:2339\nPCI_SLOT_NAME=0000:00:0b.0\nMODALIAS=pci:v00008086d0000643Esv000017AAsd00002339bc12sc00i00\n'
put $m $d/npu_max_frequency_mhz $'1900\n'
put $m $d/npu_current_frequency_mhz $'0\n'
put $m $d/npu_busy_time_us $'979473\n'
put $m $d/npu_memory_utilization $'68714496\n'
put $m $d/power_state $'D3hot\n'
put $m $d/power/runtime_status $'suspended\n'
put $m $d/current_link_speed $'Unknown\n'
put $m $d/current_link_width $'0\n'
put $m $d/max_link_speed $'Unknown\n'
put $m $d/max_link_width $'255\n'
link $m $d/driver ../../../bus/pci/drivers/intel_vpu
mkdir -p "$here/$m/sys/bus/pci/drivers/intel_vpu"
link $m $d/accel/accel0/device ../../../0000:00:0b.0
link $m sys/class/accel/accel0 ../../devices/pci0000:00/0000:00:0b.0/accel/accel0
link $m sys/bus/pci/devices/0000:00:0b.0 ../../../devices/pci0000:00/0000:00:0b.0
put $m dev/accel/accel0 "" # hand-made: the node exists (an empty file stands for it)

# --- Strix Halo (Ryzen AI MAX+ 395) with its XDNA 2 NPU (amdxdna) -------------------------
m=handmade-laptop-ryzen-ai-xdna
fresh $m
# Hand-made: Ryzen AI MAX+ 395 (Zen 5, family 26, 16 cores, 2 threads each).
npu_cpuinfo $m AuthenticAMD 26 "AMD RYZEN AI MAX+ 395 w/ Radeon 8060S" 16 2 \
  "fpu vme de pse tsc msr pae mce cx8 apic sep mtrr pge mca cmov pat pse36 clflush mmx fxsr sse sse2 ht syscall nx mmxext fxsr_opt pdpe1gb rdtscp lm constant_tsc rep_good nopl nonstop_tsc cpuid pni pclmulqdq ssse3 fma cx16 sse4_1 sse4_2 movbe popcnt aes xsave avx f16c rdrand lahf_lm cmp_legacy abm sse4a bmi1 avx2 bmi2 sha_ni avx512f avx512dq avx512cd avx512bw avx512vl avx512_bf16 avx512_vnni avx_vnni"
# Real meminfo of a 64 GB x86 host (not this machine's).
copy $m proc/meminfo proc-meminfo/meminfo_64gb-x86_kernel6x_zswap-unaccepted.txt
# The accel node where the real listing npu-sysfs/ls-sys-class-accel_strix-halo-xdna.txt
# puts it (0000:c6:00.1 behind the 0000:00:08.2 bridge). Hand-made files: PCI id 1022:17f0
# as that capture's .source gives it; revision 0x11 and "RyzenAI-npu5" are what amdxdna's
# table (amdxdna_pci_drv.c, npu5_regs.c of kernel 6.17's time) gives Strix Halo.
d=sys/devices/pci0000:00/0000:00:08.2/0000:c6:00.1
put $m $d/vendor $'0x1022\n'
put $m $d/device $'0x17f0\n'
put $m $d/revision $'0x11\n'
put $m $d/numa_node $'-1\n'
put $m $d/uevent $'DRIVER=amdxdna\nPCI_ID=1022:17F0\nPCI_SLOT_NAME=0000:c6:00.1\n'
put $m $d/vbnv $'RyzenAI-npu5\n'
put $m $d/power/runtime_status $'active\n'
link $m $d/driver ../../../../bus/pci/drivers/amdxdna
mkdir -p "$here/$m/sys/bus/pci/drivers/amdxdna"
link $m $d/accel/accel0/device ../../../0000:c6:00.1
link $m sys/class/accel/accel0 ../../devices/pci0000:00/0000:00:08.2/0000:c6:00.1/accel/accel0
link $m sys/bus/pci/devices/0000:c6:00.1 ../../../devices/pci0000:00/0000:00:08.2/0000:c6:00.1
put $m dev/accel/accel0 "" # hand-made: the node exists
