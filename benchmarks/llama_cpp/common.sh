# Sourced by measure.sh and measure_batched.sh, after `set -euo pipefail`: takes their
# arguments (LLAMA_CPP_SOURCE OUTPUT_DIR [cmake options...]) and the environment (MODELS,
# BUILD, JOBS), and gives them
#   src, out, here, models, build, jobs   the directories and the build's parallelism;
#   gen PRESET FORMAT                     writes models/PRESET-FORMAT.gguf (synthetic_gguf.py);
#   build_tool TARGET                     configures llama.cpp (the cmake options given, by
#                                         default CUDA for this GPU's architecture without
#                                         flash attention) and builds TARGET, logging to
#                                         out/build.txt.
[ $# -ge 2 ] || { sed -n 5p "$0" >&2; exit 2; }
src=$(cd "$1" && pwd)
out=$(mkdir -p "$2" && cd "$2" && pwd)
shift 2
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
models=${MODELS:-$out/models}
build=${BUILD:-$out/build}
jobs=${JOBS:-$(nproc)}
mkdir -p "$models"
cmake_options=("$@")
[ ${#cmake_options[@]} -gt 0 ] || cmake_options=(-DGGML_CUDA=ON -DCMAKE_CUDA_ARCHITECTURES=native -DGGML_CUDA_FA=OFF)

gen() { python3 "$here/synthetic_gguf.py" --preset "$1" --format "$2" -o "$models/$1-$2.gguf"; }

build_tool() {
  cmake -S "$src" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DBUILD_SHARED_LIBS=OFF -DGGML_CCACHE=OFF \
    -DLLAMA_CURL=OFF -DLLAMA_OPENSSL=OFF -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF -DLLAMA_BUILD_SERVER=OFF \
    -DLLAMA_BUILD_APP=OFF "${cmake_options[@]}" > "$out/build.txt" 2>&1
  cmake --build "$build" -j"$jobs" --target "$1" >> "$out/build.txt" 2>&1
}
