#!/usr/bin/env bash
# Stripped size of (1) a minimal CPU-only program, benchmarks/minimal.cpp, built with
# -Os, AI_HWACCEL_BACKENDS_NONE=1 and AI_HWACCEL_JSON=0, and (2) the ai-hwaccel CLI:
# the binary given (e.g. a CMake Release build), stripped, and with -v the CLI compiled
# again under other size options, to show what they buy. Sizes in bytes and in KB (1000
# bytes) and KiB. With -m, only (1), printed as its byte count alone (the test suite's size
# budget, tests/size/, reads it); with -C, only the CLI compiled here with the options
# CMake's Release build gives it (CMakeLists.txt: -Oz, no exceptions or RTTI, LTO, packed
# relocations, no separate code segment), its byte count alone, for the CLI's budget. Usage:
#   benchmarks/binary_size.sh [-c CXX] [-v] [-m | -C] [PATH/TO/ai-hwaccel]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cxx=${CXX:-g++}
variants=0
minimal_only=0
cli_only=0
while getopts "c:vmC" opt; do
  case $opt in
    c) cxx=$OPTARG ;;
    v) variants=1 ;;
    m) minimal_only=1 ;;
    C) cli_only=1 ;;
    *) echo "usage: $0 [-c CXX] [-v] [-m | -C] [PATH/TO/ai-hwaccel]" >&2; exit 2 ;;
  esac
done
shift $((OPTIND - 1))
[ $# -le 1 ] || { echo "usage: $0 [-c CXX] [-v] [-m | -C] [PATH/TO/ai-hwaccel]" >&2; exit 2; }
cli=${1:-}
strip=${STRIP:-strip}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

report() { # label, file (stripped here, on a copy)
  cp "$2" "$tmp/s"
  "$strip" --strip-all "$tmp/s"
  local b
  b=$(stat -c %s "$tmp/s")
  awk -v l="$1" -v b="$b" 'BEGIN { printf "%-76s %9d bytes %8.1f KB %8.1f KiB\n", l, b, b / 1000, b / 1024 }'
}

minimal_flags=(-std=c++20 -Os -DNDEBUG -DAI_HWACCEL_BACKENDS_NONE=1 -DAI_HWACCEL_JSON=0 -I"$root/include")
if [ "$minimal_only" = 1 ]; then
  "$cxx" "${minimal_flags[@]}" "$root/benchmarks/minimal.cpp" -o "$tmp/minimal" -pthread
  "$strip" --strip-all "$tmp/minimal"
  stat -c %s "$tmp/minimal"
  exit 0
fi
if [ "$cli_only" = 1 ]; then
  # CMake's Release build of ai_hwaccel_cli (CMakeLists.txt), by hand: keep the two alike.
  release=(-O3 -DNDEBUG -flto=auto -fno-fat-lto-objects -Oz -fno-exceptions -fno-rtti -fno-asynchronous-unwind-tables)
  "$cxx" -std=gnu++20 "${release[@]}" -DAI_HWACCEL_TABLE_SOURCES=0 -I"$root/include" "$root/tools/cli/main.cpp" \
    -o "$tmp/cli" -Wl,-z,noseparate-code -Wl,-z,pack-relative-relocs -ldl
  "$strip" --strip-all "$tmp/cli"
  stat -c %s "$tmp/cli"
  exit 0
fi
echo "compiler: $($cxx --version | head -n 1)"
"$cxx" "${minimal_flags[@]}" "$root/benchmarks/minimal.cpp" -o "$tmp/minimal" -pthread
report "minimal (-Os, no backends, no JSON)" "$tmp/minimal"
"$cxx" "${minimal_flags[@]}" -ffunction-sections -fdata-sections -Wl,--gc-sections \
  "$root/benchmarks/minimal.cpp" -o "$tmp/minimal-gc" -pthread
report "minimal, + -ffunction-sections -Wl,--gc-sections" "$tmp/minimal-gc"
# An embedded build: no exceptions (a configuration the library supports, see
# tests/CMakeLists.txt), so no unwind tables either, and no page of padding between code
# and data.
# shellcheck disable=SC2054 # the commas belong to -Wl,
embedded=(-fno-exceptions -fno-asynchronous-unwind-tables -Wl,-z,noseparate-code)
"$cxx" "${minimal_flags[@]}" "${embedded[@]}" "$root/benchmarks/minimal.cpp" -o "$tmp/minimal-emb" -pthread
report "minimal, + ${embedded[*]}" "$tmp/minimal-emb"
# (GCC's note that it runs the LTRANS jobs serially is dropped.)
"$cxx" "${minimal_flags[@]}" "${embedded[@]}" -flto "$root/benchmarks/minimal.cpp" -o "$tmp/minimal-lto" -pthread \
  2> >(grep -v '^lto-wrapper: ' >&2)
report "minimal, + the same + -flto" "$tmp/minimal-lto"

if [ -n "$cli" ]; then
  report "CLI as built: $cli" "$cli"
fi
if [ "$variants" = 1 ]; then
  # The CLI compiled with CMake's Release options (-O3 -DNDEBUG; -pthread here, which CMake
  # leaves out where glibc has pthreads built in), then with size options; nlohmann/json
  # and range-v3 from the system include path.
  cli_src="$root/tools/cli/main.cpp"
  build() { # label, flags...
    local label=$1; shift
    if "$cxx" -std=c++20 -DNDEBUG -I"$root/include" "$@" "$cli_src" -o "$tmp/cli" -pthread -ldl 2> "$tmp/err"; then
      report "CLI $label" "$tmp/cli"
    else
      printf '%-76s does not compile: %s\n' "CLI $label" "$(grep -m1 'error' "$tmp/err" || true)"
    fi
  }
  build "-O3 (CMake Release)" -O3
  build "-O3 -ffunction-sections -fdata-sections -Wl,--gc-sections" -O3 -ffunction-sections -fdata-sections -Wl,--gc-sections
  build "-O2" -O2
  build "-Os" -Os
  build "-Os -ffunction-sections -fdata-sections -Wl,--gc-sections" -Os -ffunction-sections -fdata-sections -Wl,--gc-sections
  build "-Os -Wl,-z,noseparate-code" -Os -Wl,-z,noseparate-code
  build "-Os -flto -Wl,-z,noseparate-code" -Os -flto -Wl,-z,noseparate-code
  build "-Os -fno-exceptions -fno-asynchronous-unwind-tables -Wl,-z,noseparate-code" \
    -Os -fno-exceptions -fno-asynchronous-unwind-tables -Wl,-z,noseparate-code
fi
