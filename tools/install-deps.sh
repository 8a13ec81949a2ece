#!/usr/bin/env bash
# Installs what building and testing ai-hwaccel needs on Debian 12 / Ubuntu 22.04 or later:
# a C++20 compiler, CMake, range-v3, doctest, Google Benchmark, nlohmann/json (optional for
# users: it enables io/json.hpp, whose tests need it), pkgconf, hwloc (the host agreement
# test compares with lstopo), Python 3 (for the amalgamation check), MinGW-w64 (the
# Windows backend's cross-compile test), promtool (the Prometheus export check), PyYAML and
# jsonschema (manifest and JSON Schema checks), pybind11 (the Python module) and clang with
# its libFuzzer runtime (the fuzz targets).
# Uses sudo when not run as root. Safe to run again.
set -euo pipefail
packages=(g++ cmake make librange-v3-dev doctest-dev libbenchmark-dev nlohmann-json3-dev python3 pkgconf hwloc
          g++-mingw-w64-x86-64-posix prometheus python3-yaml python3-jsonschema pybind11-dev python3-pybind11 python3-dev
          clang)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
# clang 14's libFuzzer runtime: Debian 12 packages it as libclang-rt-14-dev, Ubuntu 22.04
# inside libclang-common-14-dev (it has no libclang-rt-14-dev).
fuzzer_runtime() { compgen -G '/usr/lib/llvm-14/lib/clang/*/lib/linux/libclang_rt.fuzzer-*.a' > /dev/null; }
fuzzer_runtime || missing+=(clang-fuzzer-runtime)
[ ${#missing[@]} -eq 0 ] && exit 0
run() { if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo "$@"; fi; }
run apt-get update -qq
for i in "${!missing[@]}"; do
  if [ "${missing[$i]}" = clang-fuzzer-runtime ]; then
    if apt-cache show libclang-rt-14-dev > /dev/null 2>&1; then missing[$i]=libclang-rt-14-dev
    else missing[$i]=libclang-common-14-dev; fi
  fi
done
DEBIAN_FRONTEND=noninteractive run apt-get install -y -qq --no-install-recommends "${missing[@]}"
