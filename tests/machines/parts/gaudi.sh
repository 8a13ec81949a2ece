# --- An 8x Intel Gaudi 3 (HL-325L OAM) node -----------------------------------------------
# Sourced by assemble.sh / assemble-part.sh (needs lib.sh). The devices are those of the real
# `hl-smi` table captured in an OpenShift pod on an 8x Gaudi 3 worker (bus ids, names, memory,
# power, temperature, driver version); that table is copied byte for byte as the output of
# plain `hl-smi`. Everything else is hand-made: the CPUs and memory, the PCI functions and the
# habanalabs driver's sysfs attributes (names from its sysfs ABI), and the `hl-smi -Q` CSV the
# probe runs, written from the table's values (no real capture of the CSV form was found; the
# table gives no UUIDs, so the CSV says N/A; module ids are taken equal to the AIP index).
m=handmade-gaudi3-8x-node
fresh $m
csv=""
x86_server $m "Intel(R) Xeon(R) Platinum 8480+" 2 56 2113389876
n=0
# AIP index -> bus, power draw (W), temperature (C), in the order of the real table.
for row in "e9 228 36" "c1 226 37" "b7 225 36" "ad 228 40" "a3 228 36" "df 229 39" "d5 231 36" "cb 227 38"; do
  read -r bus watts temp <<< "$row"
  a=0000:$bus:00.0
  node=$(( 16#$bus >= 16#c8 ? 1 : 0 ))
  pci_fn $m $a 0x120000 0x1da3 0x1060 32.0 16 $node habanalabs
  d=sys/bus/pci/devices/$a
  put $m $d/device_type $'GAUDI3\n'
  put $m $d/status $'Operational\n'
  put $m $d/module_id "$n"$'\n'
  put $m $d/pci_addr "$a"$'\n'
  put $m $d/max_power $'900000\n'
  link $m sys/class/accel/accel$n/device ../../../bus/pci/devices/$a
  put $m dev/accel/accel$n ''
  csv+="$n, $n, HL-325L, $a, N/A, 1.20.1-366eb9c, 131072, 672, 130400, $watts, $temp, 0"$'\n'
  n=$((n + 1))
done
put $m ai-hwaccel-tools/hl-smi-query.csv "index, module_id, name, bus_id, uuid, driver_version, memory.total [MiB], memory.used [MiB], memory.free [MiB], power.draw [W], temperature.aip [C], utilization.aip [%]
$csv"
unset csv
copy $m ai-hwaccel-tools/hl-smi.txt hl-smi/default-table_8x-gaudi3-hl325l_v1.21.0_openshift-pod.txt
put $m ai-hwaccel-tools/index "# captured tool outputs: hl-smi.txt is real, hl-smi-query.csv hand-made (see README.md)
0	hl-smi-query.csv	hl-smi -Q index,module_id,name,bus_id,uuid,driver_version,memory.total,memory.used,memory.free,power.draw,temperature.aip,utilization.aip -f csv,nounits
0	hl-smi.txt	hl-smi
"
