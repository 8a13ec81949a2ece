#!/usr/bin/env bash
# The whole test suite, in three configurations:
#   1. build/       the normal build and every ctest test (unit tests against the headers
#                   and the single header, the CLI, fixture machines, consumers, fuzz
#                   smoke runs, packages, examples, …);
#   2. build-asan/  the unit tests again under AddressSanitizer + UndefinedBehaviorSanitizer
#                   (built with clang, see below), and the C ABI's test program, the
#                   library and the C program both instrumented;
#   3. build-tsan/  the unit tests of the parallel, cached and asynchronous paths (detection,
#                   the tool runner, NVML's abandoned thread, the cache room, the memory
#                   bandwidth measurement's threads) under ThreadSanitizer.
# Each phase prints its duration. JOBS sets the parallelism (default 2).
#   tools/test-all.sh [--quick]      (--quick: phase 1 only)
set -euo pipefail
cd "$(dirname "$0")/.."
jobs=${JOBS:-2}
phase() { echo; echo "=== $* ($(date -u +%H:%M:%S))"; }
start=$SECONDS

phase "1/3 normal build and the whole ctest suite"
cmake -S . -B build -DAI_HWACCEL_BUILD_PYTHON=ON
cmake --build build -j"$jobs"
ctest --test-dir build --output-on-failure -j"$jobs"
[ "${1:-}" = "--quick" ] && exit 0

# The sanitizer builds need no CLI, examples or benchmarks: the unit tests, and under
# ASan+UBSan the C ABI (a C caller can hand it any value, which only the compiled library
# sees: an enum value out of range was found this way).
lean=(-DCMAKE_BUILD_TYPE=Debug -DAI_HWACCEL_BUILD_BENCHMARKS=OFF -DAI_HWACCEL_BUILD_EXAMPLES=OFF
      -DAI_HWACCEL_INSTALL=OFF)

phase "2/3 unit tests under AddressSanitizer and UndefinedBehaviorSanitizer"
# With clang: GCC's -fsanitize=undefined implies -fno-delete-null-pointer-checks, under which
# comparing a catalogue row's address with nullptr is no longer a constant expression, so
# the compile-time plans the tests static_assert cannot be evaluated. Clang has no such limit.
cxx=clang++
command -v "$cxx" > /dev/null || cxx=g++
cc=clang
[ "$cxx" = clang++ ] && command -v "$cc" > /dev/null || cc=gcc
sanitize="-fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer"
cmake -S . -B build-asan "${lean[@]}" -DAI_HWACCEL_BUILD_CAPI=ON -DCMAKE_CXX_COMPILER="$cxx" \
  -DCMAKE_C_COMPILER="$cc" -DCMAKE_CXX_FLAGS="$sanitize" -DCMAKE_C_FLAGS="$sanitize"
cmake --build build-asan -j"$jobs" --target unit_tests capi_test
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1
build-asan/tests/unit_tests
build-asan/tests/capi_test tests/machines/handmade-macbook-pro-m1pro/expected.json \
  tests/machines/handmade-workstation-rtx4090/expected.json \
  tests/machines/handmade-ib-cluster-node-8gpu/expected.json \
  tests/machines/handmade-hgx-h100-8gpu-nvswitch/expected.json \
  tests/machines/handmade-inf2-host/expected.json
unset ASAN_OPTIONS UBSAN_OPTIONS

phase "3/3 parallel, cached and asynchronous paths under ThreadSanitizer"
cmake -S . -B build-tsan "${lean[@]}" -DAI_HWACCEL_BUILD_CAPI=OFF -DCMAKE_CXX_FLAGS="-fsanitize=thread" \
  "-DAI_HWACCEL_UNIT_TEST_GLOBS=detect.cpp;detect_bandwidth.cpp;detect_process.cpp;detect_nvml.cpp;detect_cuda.cpp;cache_*.cpp;umbrellas.cpp"
cmake --build build-tsan -j"$jobs" --target unit_tests
# setarch -R: ThreadSanitizer cannot start under some kernels' address-space randomisation.
run_tsan=(build-tsan/tests/unit_tests)
if setarch "$(uname -m)" -R true 2>/dev/null; then run_tsan=(setarch "$(uname -m)" -R "${run_tsan[@]}"); fi
TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1 "${run_tsan[@]}"

echo
echo "all three configurations passed in $(((SECONDS - start) / 60)) min $(((SECONDS - start) % 60)) s"
