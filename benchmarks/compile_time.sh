#!/usr/bin/env bash
# Compile time of one translation unit per public header: the TU includes the header and
# does nothing else. Reports the best of N runs (default 5) of `$CXX -std=c++20 -O0 -c`,
# in seconds, plus an empty TU for reference. Usage:
#   benchmarks/compile_time.sh [-n RUNS] [-c CXX] [HEADER...]
# Headers are paths under include/ (e.g. ai_hwaccel/core.hpp); default: every public
# header and the single header.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
runs=5
cxx=${CXX:-g++}
while getopts "n:c:" opt; do
  case $opt in
    n) runs=$OPTARG ;;
    c) cxx=$OPTARG ;;
    *) echo "usage: $0 [-n RUNS] [-c CXX] [HEADER...]" >&2; exit 2 ;;
  esac
done
shift $((OPTIND - 1))
if [ $# -eq 0 ]; then
  mapfile -t headers < <(cd "$root/include" && find ai_hwaccel -name '*.hpp' | sort)
  headers+=("single_include:ai_hwaccel/ai_hwaccel.hpp")
else
  headers=("$@")
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

best_of() { # file include-dir
  local best=""
  for _ in $(seq "$runs"); do
    local s e
    s=$(date +%s.%N)
    "$cxx" -std=c++20 -O0 -I"$2" -c "$1" -o "$tmp/out.o"
    e=$(date +%s.%N)
    best=$(awk -v a="$best" -v s="$s" -v e="$e" 'BEGIN { t = e - s; if (a == "" || t < a) print t; else print a }')
  done
  printf '%.3f' "$best"
}

echo "compiler: $($cxx --version | head -n 1)"
echo "runs: best of $runs, -std=c++20 -O0 -c"
printf 'int main() { return 0; }\n' > "$tmp/empty.cpp"
printf '%-44s %s\n' "(empty translation unit)" "$(best_of "$tmp/empty.cpp" "$root/include")"
for h in "${headers[@]}"; do
  dir="$root/include"
  name=$h
  case $h in single_include:*) dir="$root/single_include"; name=${h#single_include:} ;; esac
  printf '#include "%s"\nint main() { return 0; }\n' "$name" > "$tmp/tu.cpp"
  label=$name
  [ "$dir" = "$root/single_include" ] && label="single_include/$name"
  printf '%-44s %s\n' "$label" "$(best_of "$tmp/tu.cpp" "$dir")"
done
