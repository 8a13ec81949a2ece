#!/usr/bin/env bash
# Compile time of one translation unit per public header: the TU includes the header and
# does nothing else. Reports the best and the median of N runs (default 5) of
# `$CXX -std=c++20 -O0 -c` (other flags with -f, e.g. -f "-O2"), in seconds, plus an empty
# TU for reference, then the sum over the headers. Usage:
#   benchmarks/compile_time.sh [-n RUNS] [-c CXX] [-f FLAGS] [HEADER...]
# Headers are paths under include/ (e.g. ai_hwaccel/core.hpp); default: every public
# header (*.hpp under include/ai_hwaccel; the catalogue's *.inc parts are not headers of
# their own) and the single header, written single_include:ai_hwaccel/ai_hwaccel.hpp.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
runs=5
cxx=${CXX:-g++}
flags="-O0"
while getopts "n:c:f:" opt; do
  case $opt in
    n) runs=$OPTARG ;;
    c) cxx=$OPTARG ;;
    f) flags=$OPTARG ;;
    *) echo "usage: $0 [-n RUNS] [-c CXX] [-f FLAGS] [HEADER...]" >&2; exit 2 ;;
  esac
done
shift $((OPTIND - 1))
if [ $# -eq 0 ]; then
  mapfile -t headers < <(cd "$root/include" && find ai_hwaccel -name '*.hpp' | sort)
  [ -f "$root/single_include/ai_hwaccel/ai_hwaccel.hpp" ] && headers+=("single_include:ai_hwaccel/ai_hwaccel.hpp")
else
  headers=("$@")
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# Prints "best median" of $runs compilations of file with include-dir.
time_of() { # file include-dir
  local times=()
  for _ in $(seq "$runs"); do
    local s e
    s=$(date +%s%N)
    # shellcheck disable=SC2086 # flags are split on purpose
    "$cxx" -std=c++20 $flags -I"$2" -c "$1" -o "$tmp/out.o"
    e=$(date +%s%N)
    times+=($(( (e - s) / 1000000 )))
  done
  mapfile -t sorted < <(printf '%s\n' "${times[@]}" | sort -n)
  awk -v b="${sorted[0]}" -v m="${sorted[$((runs / 2))]}" 'BEGIN { printf "%.3f %.3f", b / 1000, m / 1000 }'
}

echo "compiler: $($cxx --version | head -n 1)"
echo "runs: $runs, -std=c++20 $flags -c; seconds, best and median"
printf '%-46s %7s %7s\n' "translation unit" "best" "median"
printf 'int main() { return 0; }\n' > "$tmp/empty.cpp"
read -r eb em < <(time_of "$tmp/empty.cpp" "$root/include"; echo)
printf '%-46s %7s %7s\n' "(empty translation unit)" "$eb" "$em"
sum_b=0 sum_m=0
for h in "${headers[@]}"; do
  dir="$root/include"
  name=$h
  case $h in single_include:*) dir="$root/single_include"; name=${h#single_include:} ;; esac
  printf '#include "%s"\nint main() { return 0; }\n' "$name" > "$tmp/tu.cpp"
  label=$name
  [ "$dir" = "$root/single_include" ] && label="single_include/$name"
  read -r b m < <(time_of "$tmp/tu.cpp" "$dir"; echo)
  printf '%-46s %7s %7s\n' "$label" "$b" "$m"
  sum_b=$(awk -v a="$sum_b" -v b="$b" 'BEGIN { print a + b }')
  sum_m=$(awk -v a="$sum_m" -v b="$m" 'BEGIN { print a + b }')
done
printf '%-46s %7.3f %7.3f\n' "(sum over the ${#headers[@]} translation units)" "$sum_b" "$sum_m"
