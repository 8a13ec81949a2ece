# shellcheck shell=bash
# --- A Cloud TPU v5p VM host (ct5p-hightpu-4t): 4 chips through VFIO ----------------------
# Sourced by assemble-part.sh / assemble.sh with lib.sh loaded. Everything here is
# hand-made except proc/self/cgroup (a real capture, copied byte for byte).
# The shape follows public facts: Google's v5p page (4 chips, 208 vCPUs, 448 GB, 2 NUMA
# nodes per VM), tpu-info's device.py (chips are PCI functions of vendor 0x1ae0, v5p is
# device 0x0062 and is reached at /dev/vfio/<n>), the real v6e transcript
# (tpu/v6e_ls-dev-vfio_iommu-groups-vendor-device.txt: one chip per IOMMU group, chips at
# 0000:00:04.0-07.0, groups 0-3, /dev/vfio/0-3 plus the vfio control node), and the
# kernel's VFIO documentation (the device's iommu_group link names its group).
m=handmade-tpu-v5p-host
fresh $m
# Hand-made host: the CPU model string is a placeholder in GCE's generic style.
x86_server $m "Intel(R) Xeon(R) CPU @ 2.10GHz" 2 104 469762048
copy $m proc/self/cgroup container/proc-self-cgroup_host-cgroup2-user-session.txt
n=0
for slot in 04 05 06 07; do
  a=0000:00:$slot.0
  d=sys/bus/pci/devices/$a
  put $m $d/vendor $'0x1ae0\n'
  put $m $d/device $'0x0062\n'
  # Hand-made: which NUMA node each chip hangs off is an assumption (two per node).
  put $m $d/numa_node "$((n / 2))"$'\n'
  link $m $d/driver ../../../../bus/pci/drivers/vfio-pci
  link $m $d/iommu_group ../../../../kernel/iommu_groups/$n
  link $m sys/kernel/iommu_groups/$n/devices/$a ../../../../bus/pci/devices/$a
  put $m dev/vfio/$n ''
  n=$((n + 1))
done
mkdir -p "$here/$m/sys/bus/pci/drivers/vfio-pci"
put $m dev/vfio/vfio ''
# Hand-made tpu-info static-mode output, laid out like the real v6e capture
# (tpu/tpu-info_v6e_4-chips_dev-vfio_static.txt), for a busy v5p host; tpu-info gives a
# v5p 95 GiB of HBM (device.py, TpuChip.V5P).
put $m ai-hwaccel-tools/index $'# hand-made\n0\ttpu-info.txt\ttpu-info\n'
put $m ai-hwaccel-tools/tpu-info.txt 'Libtpu version: 0.0.18
Accelerator type: v5p

TPU Chips

| Chip        | Type         | Devices | PID    |
|-------------|--------------|---------|--------|
| /dev/vfio/0 | TPU v5p chip | 1       | 412377 |
| /dev/vfio/1 | TPU v5p chip | 1       | 412377 |
| /dev/vfio/2 | TPU v5p chip | 1       | 412377 |
| /dev/vfio/3 | TPU v5p chip | 1       | 412377 |

TPU Runtime Utilization

| Chip | HBM Usage (GiB)       | Duty cycle |
|------|-----------------------|------------|
| 0    | 60.25 GiB / 95.00 GiB |     87.50% |
| 1    | 58.00 GiB / 95.00 GiB |     86.25% |
| 2    | 58.00 GiB / 95.00 GiB |     86.25% |
| 3    | 58.00 GiB / 95.00 GiB |     86.00% |
'
