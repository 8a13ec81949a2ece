#!/usr/bin/env bash
# Wall time of whole `ai-hwaccel` processes: start-up, detection, output, exit. Reports
# the best and the median of N runs (default 20) for each command line, in milliseconds.
# Then `detect --root` on each hand-made machine under tests/machines (captured tool
# output replayed from the machine's ai-hwaccel-tools folder).
#   benchmarks/process_time.sh [-n RUNS] PATH/TO/ai-hwaccel
set -euo pipefail
[ -n "${EPOCHREALTIME:-}" ] || { echo "$0: needs bash 5 (EPOCHREALTIME)" >&2; exit 2; }
runs=20
while getopts "n:" opt; do
  case $opt in
    n) runs=$OPTARG ;;
    *) echo "usage: $0 [-n RUNS] PATH/TO/ai-hwaccel" >&2; exit 2 ;;
  esac
done
shift $((OPTIND - 1))
[ $# -eq 1 ] || { echo "usage: $0 [-n RUNS] PATH/TO/ai-hwaccel" >&2; exit 2; }
cli=$1
root=$(cd "$(dirname "$0")/.." && pwd)

measure() { # label, then the command line
  local label=$1; shift
  local times=()
  for ((i = 0; i < runs; i++)); do
    # Bash's own clock: `$(date)` would add a process start (about 1 ms) to each run.
    local t0 t1
    t0=${EPOCHREALTIME/./}
    "$@" >/dev/null 2>&1 || true
    t1=${EPOCHREALTIME/./}
    times+=($((t1 - t0)))
  done
  mapfile -t sorted < <(printf '%s\n' "${times[@]}" | sort -n)
  local best=${sorted[0]} median=${sorted[$((runs / 2))]}
  awk -v l="$label" -v b="$best" -v m="$median" 'BEGIN { printf "%-62s best %8.2f ms   median %8.2f ms\n", l, b / 1000, m / 1000 }'
}

measure "ai-hwaccel --version" "$cli" --version
measure "ai-hwaccel detect" "$cli" detect
measure "ai-hwaccel detect --json" "$cli" detect --json
# An --only list naming no backend: the host probes alone (CPU, memory, NUMA, PCI, ...).
measure "ai-hwaccel detect --only , (host only)" "$cli" detect --only ,
for m in "$root"/tests/machines/*/; do
  [ -f "$m/expected.json" ] || continue # a machine, not the parts it is assembled from
  measure "ai-hwaccel detect --root $(basename "$m")" "$cli" detect --root "$m"
done
