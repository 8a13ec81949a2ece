# Helpers shared by assemble.sh and the machine parts in parts/*.sh. Sourced, never run:
# the caller sets `here` (the folder the machines go in) and `real` (the real captures).
# Every function writes below "$here/<machine>"; nothing else is touched.

link() { # machine, path, relative target
  mkdir -p "$(dirname "$here/$1/$2")"
  ln -s "$3" "$here/$1/$2"
}
# A two-socket x86 server without SMT: /proc/cpuinfo, the CPU topology, the NUMA nodes
# (one per socket, memory split evenly) and /proc/meminfo. Hand-made.
x86_server() { # machine, model name, sockets, cores per socket, MemTotal kB
  local m=$1 model=$2 sockets=$3 cores=$4 total=$5 c s cpuinfo=""
  local n=$((sockets * cores))
  for ((c = 0; c < n; c++)); do
    s=$((c / cores))
    cpuinfo+="processor	: $c
vendor_id	: $( [[ $model == AMD* ]] && echo AuthenticAMD || echo GenuineIntel )
cpu family	: $( [[ $model == AMD* ]] && echo 25 || echo 6 )
model name	: $model
physical id	: $s
siblings	: $cores
core id		: $((c % cores))
cpu cores	: $cores
flags		: fpu vme de pse tsc msr pae mce cx8 apic sep mtrr pge mca cmov pat pse36 clflush mmx fxsr sse sse2 ht syscall nx pdpe1gb rdtscp lm constant_tsc rep_good nopl nonstop_tsc cpuid pni pclmulqdq ssse3 fma cx16 sse4_1 sse4_2 movbe popcnt aes xsave avx f16c rdrand lahf_lm abm 3dnowprefetch bmi1 avx2 smep bmi2 erms invpcid avx512f avx512dq rdseed adx smap clflushopt clwb avx512cd sha_ni avx512bw avx512vl xsaveopt xsavec xgetbv1 xsaves avx512_bf16 avx512vbmi umip pku ospke avx512_vbmi2 gfni vaes vpclmulqdq avx512_vnni avx512_bitalg avx512_vpopcntdq

"
    put $m sys/devices/system/cpu/cpu$c/topology/physical_package_id "$s"$'\n'
    put $m sys/devices/system/cpu/cpu$c/topology/core_id "$((c % cores))"$'\n'
  done
  put $m proc/cpuinfo "$cpuinfo"
  put $m sys/devices/system/cpu/online "0-$((n - 1))"$'\n'
  put $m proc/self/status "Name:	python3
Cpus_allowed_list:	0-$((n - 1))
"
  put $m proc/meminfo "MemTotal:       $total kB
MemFree:        $((total - 41943040)) kB
MemAvailable:   $((total - 33554432)) kB
"
  for ((s = 0; s < sockets; s++)); do
    put $m sys/devices/system/node/node$s/meminfo "Node $s MemTotal:       $((total / sockets)) kB
Node $s MemFree:        $((total / sockets - 20971520)) kB
"
    put $m sys/devices/system/node/node$s/cpulist "$((s * cores))-$((s * cores + cores - 1))"$'\n'
  done
}
# Arm CPUs as arm64 /proc/cpuinfo lists them (no model name: the kernel prints none), their
# package and core ids, and the online list. Hand-made.
arm_cpus() { # machine, implementer, variant, revision, BogoMIPS, Features, cores per package, each CPU's part…
  local m=$1 impl=$2 variant=$3 rev=$4 bogo=$5 features=$6 per=$7 c=0 part cpuinfo=""
  shift 7
  for part in "$@"; do
    cpuinfo+="processor	: $c
BogoMIPS	: $bogo
Features	: $features
CPU implementer	: $impl
CPU architecture: 8
CPU variant	: $variant
CPU part	: $part
CPU revision	: $rev

"
    put $m sys/devices/system/cpu/cpu$c/topology/physical_package_id "$((c / per))"$'\n'
    put $m sys/devices/system/cpu/cpu$c/topology/core_id "$((c % per))"$'\n'
    c=$((c + 1))
  done
  put $m proc/cpuinfo "$cpuinfo"
  put $m sys/devices/system/cpu/online "0-$((c - 1))"$'\n'
}
# One PCI function under sys/bus/pci/devices. Hand-made.
pci_fn() { # machine, address, class, vendor, device, link GT/s, width, numa, driver
  local d=sys/bus/pci/devices/$2
  put $1 $d/class "$3"$'\n'
  put $1 $d/vendor "$4"$'\n'
  put $1 $d/device "$5"$'\n'
  if [ -n "$6" ]; then
    put $1 $d/current_link_speed "$6 GT/s PCIe"$'\n'
    put $1 $d/max_link_speed "$6 GT/s PCIe"$'\n'
    put $1 $d/current_link_width "$7"$'\n'
    put $1 $d/max_link_width "$7"$'\n'
  fi
  put $1 $d/numa_node "$8"$'\n'
  [ -z "$9" ] || link $1 $d/driver "../../../../bus/pci/drivers/$9"
  mkdir -p "$here/$1/sys/bus/pci/drivers/${9:-none}"
}
# One GPU of a full `vulkaninfo` text, in the layout of the real RADV capture. Hand-made.
vk_gpu() { # n, name, vendor, device, type, driver id, driver name, uuid, pci "d b s f" or "", heap bytes, local, driverVersion line
  local heap_hex heap_gib flags
  heap_hex=$(printf '0x%x' "${10}")
  heap_gib=$(awk -v b="${10}" 'BEGIN { printf "%.2f GiB", b / 1073741824 }')
  if [ "${11}" = local ]; then flags=$'\t\tflags: count = 1\n\t\t\tMEMORY_HEAP_DEVICE_LOCAL_BIT'; else flags=$'\t\tflags:\n\t\t\tNone'; fi
  printf 'GPU%s:\nVkPhysicalDeviceProperties:\n---------------------------\n' "$1"
  printf '\tapiVersion        = 1.3.255 (4206847)\n\tdriverVersion     = %s\n' "${12}"
  printf '\tvendorID          = %s\n\tdeviceID          = %s\n\tdeviceType        = %s\n\tdeviceName        = %s\n\n' "$3" "$4" "$5" "$2"
  printf 'VkPhysicalDeviceDriverProperties:\n---------------------------------\n\tdriverID        = %s\n\tdriverName      = %s\n\n' "$6" "$7"
  printf 'VkPhysicalDeviceIDProperties:\n-----------------------------\n\tdeviceUUID      = %s\n\tdeviceLUIDValid = false\n\n' "$8"
  if [ -n "$9" ]; then
    set -- "$@" # keep positional parameters
    read -r dom bus dev fn <<< "$9"
    printf 'VkPhysicalDevicePCIBusInfoPropertiesEXT:\n----------------------------------------\n'
    printf '\tpciDomain   = %s\n\tpciBus      = %s\n\tpciDevice   = %s\n\tpciFunction = %s\n\n' "$dom" "$bus" "$dev" "$fn"
  fi
  printf 'VkPhysicalDeviceMemoryProperties:\n=================================\nmemoryHeaps: count = 1\n'
  printf '\tmemoryHeaps[0]:\n\t\tsize   = %s (%s) (%s)\n%s\n\n' "${10}" "$heap_hex" "$heap_gib" "$flags"
}
vk_header() {
  printf '==========\nVULKANINFO\n==========\n\nVulkan Instance Version: 1.3.255\n\n\nDevice Properties and Extensions:\n=================================\n'
}

fresh() { # machine: empties its folder, keeping the reviewed expected.json
  mkdir -p "$here/$1"
  find "$here/$1" -mindepth 1 -maxdepth 1 ! -name expected.json -exec rm -rf {} +
}
put() { # machine, path, content
  mkdir -p "$(dirname "$here/$1/$2")"
  printf '%s' "$3" > "$here/$1/$2"
}
copy() { # machine, path, capture
  mkdir -p "$(dirname "$here/$1/$2")"
  cp "$real/$3" "$here/$1/$2"
}

