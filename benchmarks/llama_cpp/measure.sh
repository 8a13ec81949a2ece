#!/usr/bin/env bash
# Times llama.cpp on this machine's GPU with synthetic models of the calibration data's
# shapes, for judging the throughput estimator (tests/calibration/REPORT.md). See README.md.
#
#   benchmarks/llama_cpp/measure.sh LLAMA_CPP_SOURCE OUTPUT_DIR [cmake options...]
#
# Builds llama-bench from LLAMA_CPP_SOURCE (default options: CUDA for this GPU's
# architecture, flash attention left out as in llama.cpp's 2024 defaults the published rows
# used), writes Llama 3 8B in Q4_K_M, F16 and Q8_0 and Llama 3 70B in Q4_K_M with
# synthetic_gguf.py into MODELS (default OUTPUT_DIR/models; about 30 GB, then 43 GB), runs
# the tests and leaves llama-bench's JSON lines in OUTPUT_DIR/llama-bench.jsonl and its
# table in OUTPUT_DIR/llama-bench.md. to_calibration_csv.py turns the JSON lines into rows.
# SUITE=depth runs instead a 512-token prompt and 128 decoded tokens after 2,048, 8,192 and
# 32,768 tokens already in the cache, on 8B in Q4_K_M and F16 (3 samples each).
# Needs cmake, ninja, a C++ compiler, Python 3 and the GPU's toolkit (nvcc for CUDA).
set -euo pipefail
. "$(dirname "$0")/common.sh"

suite=${SUITE:-default}
case $suite in
  default) formats="Q4_K_M F16 Q8_0" ;;
  depth) formats="Q4_K_M F16" ;;
  *) echo "SUITE is default or depth" >&2; exit 2 ;;
esac
# The 8B files are written while llama.cpp builds.
(for f in $formats; do gen llama-3-8b $f; done) > "$out/models.txt" 2>&1 &
writer=$!
build_tool llama-bench
wait $writer

bench() {
  echo "llama-bench $*" >&2
  "$build/bin/llama-bench" -ngl 99 -fa 0 "$@" -o jsonl -oe md >> "$out/llama-bench.jsonl" 2>> "$out/llama-bench.md"
}
: > "$out/llama-bench.jsonl"
: > "$out/llama-bench.md"
if [ "$suite" = depth ]; then
  for f in $formats; do bench -m "$models/llama-3-8b-$f.gguf" -p 512 -n 128 -d 2048,8192,32768 -r 3; done
  rm -f "$models"/llama-3-8b-*.gguf
else
  for f in $formats; do bench -m "$models/llama-3-8b-$f.gguf" -p 512,4096 -n 128,512 -r 5; done
  for f in Q4_K_M F16; do bench -m "$models/llama-3-8b-$f.gguf" -p 512 -n 128 -d 4096 -r 5; done
  rm -f "$models"/llama-3-8b-*.gguf
  gen llama-3-70b Q4_K_M >> "$out/models.txt" 2>&1
  bench -m "$models/llama-3-70b-Q4_K_M.gguf" -p 512 -n 128 -r 5
  rm -f "$models/llama-3-70b-Q4_K_M.gguf"
fi
grep -v '^ggml_cuda_init\|^  Device ' "$out/llama-bench.md"
