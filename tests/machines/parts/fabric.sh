# shellcheck shell=bash
# --- An 8x H100 node on an InfiniBand cluster: 8x ConnectX-7 NDR + a BlueField-3 bond -----
# Sourced by assemble.sh / assemble-part.sh (they set `here` and `real` and source lib.sh).
m=handmade-ib-cluster-node-8gpu
fresh $m
x86_server $m "Intel(R) Xeon(R) Platinum 8480+" 2 56 2113623476
copy $m proc/self/cgroup container/proc-self-cgroup_host-cgroup2-user-session.txt
# The RDMA devices: the real /sys/class/infiniband tree of an H100 node, byte for byte
# (8x ConnectX-7 MT4129 at "400 Gb/sec (4X NDR)" InfiniBand, and mlx5_bond_0, a
# BlueField-3 MT41692 at "200 Gb/sec (2X NDR)" Ethernet). The capture flattened the class
# links into folders and has no `device` links; those below are hand-made.
mkdir -p "$here/$m/sys/class"
cp -R "$real/infiniband-sysfs/sys-class-infiniband_h100-node" "$here/$m/sys/class/infiniband"
chmod -R u+w "$here/$m/sys/class/infiniband" # the captures are read-only; the links go inside
# The GPUs: as the handmade-hgx-h100-8gpu-nvswitch machine (bus ids, UUIDs and driver of
# the real 8x H100 `nvidia-smi -q` capture; the first four on socket 0). Each GPU shares a
# PCIe switch with one ConnectX-7, whose function is the GPU's bus + 1 (hand-made).
q="index,uuid,name,pci.bus_id,pci.device_id,memory.total,memory.used,memory.free,compute_cap,driver_version,power.limit,power.draw,temperature.gpu,utilization.gpu,clocks.max.memory,pcie.link.gen.current,pcie.link.gen.max,pcie.link.width.current,pcie.link.width.max,mig.mode.current"
real_q="$real/nvidia-smi/q_8x-h100-80gb-hbm3_driver535.161.08.txt"
mapfile -t uuids < <(grep 'GPU UUID' "$real_q" | awk '{print $NF}')
nics=(mlx5_0 mlx5_1 mlx5_4 mlx5_5 mlx5_6 mlx5_7 mlx5_8 mlx5_9 mlx5_bond_0)
nic_node=(0 0 0 0 1 1 1 1 0)
i=0
csv=""
topo=$'\tGPU0\tGPU1\tGPU2\tGPU3\tGPU4\tGPU5\tGPU6\tGPU7'
for ((k = 0; k < ${#nics[@]}; k++)); do topo+=$'\tNIC'$k; done
topo+=$'\tCPU Affinity\tNUMA Affinity\tGPU NUMA ID\n'
for bus in 19 3b 4c 5d 9b bb cb db; do
  node=$((i / 4))
  pci_fn $m 0000:$bus:00.0 0x030200 0x10de 0x2330 32.0 16 $node nvidia
  nic_bus=$(printf '%02x' $((16#$bus + 1)))
  # ConnectX-7 (15b3:1021; hca_type MT4129 is the device id 4129 = 0x1021) in InfiniBand
  # mode (class 0x020700), PCIe Gen5 x16.
  pci_fn $m 0000:$nic_bus:00.0 0x020700 0x15b3 0x1021 32.0 16 $node mlx5_core
  link $m sys/class/infiniband/${nics[$i]}/device ../../../bus/pci/devices/0000:$nic_bus:00.0
  csv+="$i, ${uuids[$i]}, NVIDIA H100 80GB HBM3, 00000000:${bus^^}:00.0, 0x233010DE, 81559, 0, 81004, 9.0, 535.161.08, 700.00, 71.00, 30, 0, 2619, 5, 5, 16, 16, Disabled"$'\n'
  topo+="GPU$i"
  for ((j = 0; j < 8; j++)); do [ $j -eq $i ] && topo+=$'\t X ' || topo+=$'\tNV18'; done
  for ((k = 0; k < ${#nics[@]}; k++)); do
    if [ $k -eq $i ]; then topo+=$'\tPIX'
    elif [ "${nic_node[$k]}" -eq $node ]; then topo+=$'\tNODE'
    else topo+=$'\tSYS'; fi
  done
  [ $node -eq 0 ] && topo+=$'\t0-55\t0\t\tN/A\n' || topo+=$'\t56-111\t1\t\tN/A\n'
  i=$((i + 1))
done
# BlueField-3 (15b3:a2dc; MT41692 = 0xa2dc) as an Ethernet controller on socket 0.
pci_fn $m 0000:2a:00.0 0x020000 0x15b3 0xa2dc 32.0 16 0 mlx5_core
link $m sys/class/infiniband/mlx5_bond_0/device ../../../bus/pci/devices/0000:2a:00.0
for ((k = 0; k < ${#nics[@]}; k++)); do
  topo+="NIC$k"
  for ((j = 0; j < 8; j++)); do
    if [ $j -eq $k ]; then topo+=$'\tPIX'
    elif [ $((j / 4)) -eq "${nic_node[$k]}" ]; then topo+=$'\tNODE'
    else topo+=$'\tSYS'; fi
  done
  for ((l = 0; l < ${#nics[@]}; l++)); do
    if [ $l -eq $k ]; then topo+=$'\t X '
    elif [ "${nic_node[$l]}" -eq "${nic_node[$k]}" ]; then topo+=$'\tNODE'
    else topo+=$'\tSYS'; fi
  done
  topo+=$'\n'
done
topo+=$'\nLegend:\n\n  X    = Self\n  SYS  = Connection traversing PCIe as well as the SMP interconnect between NUMA nodes (e.g., QPI/UPI)\n  NODE = Connection traversing PCIe as well as the interconnect between PCIe Host Bridges within a NUMA node\n  PHB  = Connection traversing PCIe as well as a PCIe Host Bridge (typically the CPU)\n  PXB  = Connection traversing multiple PCIe bridges (without traversing the PCIe Host Bridge)\n  PIX  = Connection traversing at most a single PCIe bridge\n  NV#  = Connection traversing a bonded set of # NVLinks\n\nNIC Legend:\n\n'
for ((k = 0; k < ${#nics[@]}; k++)); do topo+="  NIC$k: ${nics[$k]}"$'\n'; done
put $m ai-hwaccel-tools/nvidia-smi-query.csv "$csv"
put $m ai-hwaccel-tools/topo-m.txt "$topo"
put $m ai-hwaccel-tools/index "# captured tool outputs (hand-made), see include/ai_hwaccel/detect/system.hpp
0	nvidia-smi-query.csv	nvidia-smi --query-gpu=$q --format=csv,noheader,nounits
0	topo-m.txt	nvidia-smi topo -m
"
