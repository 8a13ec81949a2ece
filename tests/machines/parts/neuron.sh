# Machine part: AWS Neuron hosts. Sourced by assemble.sh / assemble-part.sh (lib.sh loaded).
# Real captures are copied byte for byte with `copy`; every other file is hand-made.

# --- A trn1.32xlarge: 16 Trainium devices (2 NeuronCores, 32 GiB each) in a 2D torus ----
m=handmade-trn1-32xlarge
fresh $m
topo=neuron-ls/topology_trn1.32xlarge_16-devices-torus.txt
# Hand-made host: 2 sockets of Xeon 8375C, 128 logical CPUs shown as cores, 512 GiB.
x86_server $m "Intel(R) Xeon(R) Platinum 8375C CPU @ 2.90GHz" 2 64 528178332
put $m sys/class/dmi/id/sys_vendor $'Amazon EC2\n'
put $m sys/class/dmi/id/product_name $'trn1.32xlarge\n'
# The devices at the PCI addresses, and with the links, of the real --topology capture.
mapfile -t rows < <(grep -E '^\| [0-9]+ ' "$real/$topo")
json="["
for row in "${rows[@]}"; do
  n=$(awk -F'|' '{gsub(/ /, "", $2); print $2}' <<< "$row")
  conn=$(awk -F'|' '{gsub(/^ +| +$/, "", $5); print $5}' <<< "$row")
  bdf=0000:$(awk -F'|' '{gsub(/ /, "", $6); print $6}' <<< "$row")
  # Hand-made PCI function: Trainium's id (aws-neuron-driver neuron_device.h), its driver.
  pci_fn $m "$bdf" 0x088000 0x1d0f 0x7164 16.0 16 -1 neuron-driver
  # Hand-made driver sysfs (neuron_cdev.c: core_count without newline, connected_devices
  # "a, b, c, d\n"; device_name as neuron_sysfs_metrics.c composes it).
  d=sys/devices/virtual/neuron_device/neuron$n
  put $m $d/core_count '2'
  put $m $d/connected_devices "$conn"$'\n'
  put $m $d/info/architecture/device_name $'Trainium1\n'
  put $m dev/neuron$n ''
  # Hand-made `neuron-ls --json-output` entry (the keys of real outputs, this capture's values).
  [ "$n" = 0 ] || json+=","
  json+=$'\n    {\n        "neuron_device": '"$n"$',\n        "bdf": "'"$bdf"$'",\n        "numa_node": "-1",\n'
  json+='        "connected_to": ['"$conn"$'],\n        "nc_count": 2,\n        "memory_size": 34359738368,\n'
  json+='        "neuroncore_ids": ['"$((2 * n))"', '"$((2 * n + 1))"$'],\n        "neuron_processes": []\n    }'
done
json+=$'\n]\n'
put $m ai-hwaccel-tools/neuron-ls.json "$json"
# `neuron-ls` alone prints the table of the --topology capture without the diagram: hand-made
# from the capture's first 23 lines.
head -n 23 "$real/$topo" > "$here/$m/ai-hwaccel-tools/neuron-ls.txt"
copy $m ai-hwaccel-tools/neuron-ls-topology.txt $topo
put $m ai-hwaccel-tools/index "# captured tool outputs, see include/ai_hwaccel/detect/system.hpp
0	neuron-ls.json	neuron-ls --json-output
0	neuron-ls.txt	neuron-ls
0	neuron-ls-topology.txt	neuron-ls --topology
"

# --- An inf2.xlarge: one Inferentia2, no neuron-ls installed ------------------------------
m=handmade-inf2-host
fresh $m
# Hand-made host: 4 vCPUs of an EPYC 7R13 shown as cores, 16 GiB.
x86_server $m "AMD EPYC 7R13 Processor" 1 4 16005208
put $m sys/class/dmi/id/sys_vendor $'Amazon EC2\n'
put $m sys/class/dmi/id/product_name $'inf2.xlarge\n'
# Hand-made PCI: the Inferentia2 (0x7264) and an ENA network card (same vendor id, 0xec20).
pci_fn $m 0000:00:1f.0 0x088000 0x1d0f 0x7264 16.0 8 -1 neuron-driver
pci_fn $m 0000:00:05.0 0x020000 0x1d0f 0xec20 "" "" -1 ena
d=sys/devices/virtual/neuron_device/neuron0
put $m $d/core_count '2'
put $m $d/connected_devices $'\n'
put $m $d/info/architecture/device_name $'Inferentia2\n'
put $m dev/neuron0 ''
