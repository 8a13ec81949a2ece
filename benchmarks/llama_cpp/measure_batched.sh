#!/usr/bin/env bash
# Times llama.cpp decoding several sequences at once (llama-batched-bench) on this machine's
# GPU with synthetic models, for judging the estimator's batched decode. See README.md.
#
#   benchmarks/llama_cpp/measure_batched.sh LLAMA_CPP_SOURCE OUTPUT_DIR [cmake options...]
#
# Builds llama-batched-bench from LLAMA_CPP_SOURCE (the same default options as
# measure.sh), writes Llama 3 8B in Q4_K_M and F16 with synthetic_gguf.py into MODELS
# (default OUTPUT_DIR/models; about 21 GB), and runs REPS (default 3) rounds of: each
# sequence prefills a 512-token prompt of its own, then all of them decode 128 tokens
# together, for 1, 2, 4, ... 128 sequences. The JSON lines go to
# OUTPUT_DIR/llama-batched-bench.jsonl; to_calibration_csv.py turns them into rows.
# FORMATS picks other formats ("Q4_K_M F16 Q8_0"); FLASH_ATTN=on times flash attention
# (build with -DGGML_CUDA=ON -DCMAKE_CUDA_ARCHITECTURES=native, its kernels included).
# Needs cmake, ninja, a C++ compiler, Python 3 and the GPU's toolkit (nvcc for CUDA).
set -euo pipefail
. "$(dirname "$0")/common.sh"
reps=${REPS:-3}
formats=${FORMATS:-Q4_K_M F16}
fa=${FLASH_ATTN:-off}

(for f in $formats; do gen llama-3-8b "$f"; done) > "$out/models.txt" 2>&1 &
writer=$!
build_tool llama-batched-bench
wait $writer

# 128 sequences of 512 + 128 tokens fill 81,920 cells; each sequence gets its own 640.
# llama.cpp prints through a logging thread, and a line written just before exit is
# sometimes lost: a round missing a line is run again (at most twice).
batches=1,2,4,8,16,32,64,128
: > "$out/llama-batched-bench.jsonl"
for f in $formats; do
  for r in $(seq "$reps"); do
    for try in 1 2 3; do
      echo "llama-batched-bench $f, round $r, try $try" >&2
      "$build/bin/llama-batched-bench" -m "$models/llama-3-8b-$f.gguf" -ngl 99 -fa "$fa" -c 81920 -b 2048 -ub 512 \
        -npp 512 -ntg 128 -npl $batches --output-format jsonl 2>> "$out/llama-batched-bench.log" |
        grep '^{' | sed "s/^{/{\"preset\": \"llama-3-8b\", \"format\": \"$f\", \"round\": $r, /" > "$out/round.jsonl" || true
      [ "$(wc -l < "$out/round.jsonl")" -eq "$(echo $batches | tr , '\n' | wc -l)" ] && break
    done
    cat "$out/round.jsonl" >> "$out/llama-batched-bench.jsonl"
  done
  rm -f "$models/llama-3-8b-$f.gguf"
done
rm -f "$out/round.jsonl"
