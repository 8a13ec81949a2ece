# Intel discrete-GPU machines (include/ai_hwaccel/detect/intel_gpu.hpp). Sourced by
# assemble.sh and assemble-part.sh; uses lib.sh's helpers. Every file here is hand-made.

# --- Two Max 1550 cards on xe: four stacks, the devices Level Zero shows by default --------
m=handmade-max1550-2card-xe
fresh $m
# Hand-made: two 32-core Xeon Platinum 8462Y+ sockets (the CPUs of Intel's Max-series
# servers), 512 GiB, one NUMA node per socket.
x86_server $m "Intel(R) Xeon(R) Platinum 8462Y+" 2 32 528482304
# Two Max 1550 (8086:0bd5, display class 0x0380), PCIe 5.0 x16, one per socket, bound to xe.
# xe adds a tile<N> folder per stack under the PCI function (drivers/gpu/drm/xe/
# xe_tile_sysfs.c), and Linux 6.8's xe a physical_vram_size_bytes in each: 64 GiB a stack.
# The DRM minors link to the functions as the kernel's do.
card=1
for fn in 0000:29:00.0:0 0000:9a:00.0:1; do
  addr=${fn%:*}
  pci_fn $m "$addr" 0x038000 0x8086 0x0bd5 32.0 16 "${fn##*:}" xe
  for t in 0 1; do
    put $m "sys/bus/pci/devices/$addr/tile$t/physical_vram_size_bytes" $'68719476736\n'
  done
  link $m "sys/class/drm/card$card/device" "../../../bus/pci/devices/$addr"
  card=$((card + 1))
done
# No xpu-smi: an empty index (the tools this machine has: none).
put $m ai-hwaccel-tools/index $'# no captured tools: xpu-smi is not installed\n'
