#!/usr/bin/env bash
# Builds llcheck (bench/llama_cpu/llcheck.cpp) against llama.cpp's CPU backend from the pruned source tarball
# (.llama/src.tar.xz; ../shared/targets.md says where it comes from): llama.cpp as a second implementation on this
# machine, no GPU needed. ~25 minutes on 2 cores the first time (ccache after). GELU exact (below).
#
# usage: bench/llama_cpu/build.sh SRC_TAR_XZ WORKDIR        (writes WORKDIR/llcheck)
set -euo pipefail
tarball=$1; w=$2
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$w"
[ -f "$w/src/CMakeLists.txt" ] || { mkdir -p "$w/src"; tar xJf "$tarball" -C "$w/src"; }
# ggml's CPU GELU looks its values up in an f16 table (GGML_GELU_FP16: ~1e-3 off the tanh form that its CUDA backend and
# lane-tune compute): off, so that gemma3's exact comparison is of the same function (session 42).
sed -i 's|^#define GGML_GELU_FP16$|// (lane-tune: the tanh form, not the f16 table) #define GGML_GELU_FP16|' "$w/src/ggml/src/ggml-cpu/vec.h"
launcher=(); command -v ccache > /dev/null && launcher=(-DCMAKE_C_COMPILER_LAUNCHER=ccache -DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
cmake -S "$w/src" -B "$w/build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DGGML_CUDA=OFF -DGGML_NATIVE=ON \
  -DGGML_OPENMP=OFF -DBUILD_SHARED_LIBS=OFF -DLLAMA_BUILD_COMMON=OFF -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_TOOLS=OFF \
  -DLLAMA_BUILD_EXAMPLES=OFF -DLLAMA_BUILD_SERVER=OFF -DLLAMA_BUILD_APP=OFF -DLLAMA_CURL=OFF "${launcher[@]}" \
  > "$w/cmake.log" 2>&1 || { tail -30 "$w/cmake.log"; exit 1; }
ninja -C "$w/build" llama > "$w/build.log" 2>&1 || { tail -40 "$w/build.log"; exit 1; }
libs=$(find "$w/build" -name 'libllama.a' -o -name 'libggml*.a' | sort -r | tr '\n' ' ')
g++ -std=c++17 -O2 -I"$w/src/include" -I"$w/src/ggml/include" "$here/llcheck.cpp" -o "$w/llcheck" \
  -Wl,--start-group $libs -Wl,--end-group -lpthread -ldl -lm
echo "$w/llcheck"
