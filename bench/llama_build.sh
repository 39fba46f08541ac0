#!/usr/bin/env bash
# Builds llama.cpp's llama-bench for sm_90 alone, statically linked (one file to carry back and forth), from a pruned
# source tarball (../shared/targets.md says where the source comes from: the npm package node-llama-cpp 3.22.1's git
# bundle). Only tools/llama-bench is built: the tools' CMakeLists is replaced by one that adds it alone.
#
# usage: bench/llama_build.sh SRC_TAR_XZ WORKDIR OUT_BINARY      (on the GPU machine: 16 cores, ~4 minutes)
# Here (2 cores, ~50 minutes): GGML_NATIVE=OFF, so the host code runs on the GPU machine's CPU too. Built here it links
# CUDA's NCCL (llama.cpp joins several GPUs with it; 218 MB, too big to carry): carry instead .llama/lib holding
# bench/nccl_stub.c built as libnccl.so.2 (`gcc -shared -fPIC -Wl,-soname,libnccl.so.2`) and libgomp.so.1, on
# LD_LIBRARY_PATH after CUDA's (bench/calls/llama_prelude.sh).
set -euo pipefail
tarball=$1; w=$2; out=$3
mkdir -p "$w/src"
tar xJf "$tarball" -C "$w/src"
printf 'find_package(Threads REQUIRED)\nllama_add_compile_flags()\nadd_subdirectory(llama-bench)\n' > "$w/src/tools/CMakeLists.txt"
cmake -S "$w/src" -B "$w/build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DGGML_CUDA=ON -DCMAKE_CUDA_ARCHITECTURES=90 \
  -DBUILD_SHARED_LIBS=OFF -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF -DLLAMA_BUILD_SERVER=OFF \
  -DLLAMA_BUILD_TOOLS=ON -DLLAMA_BUILD_APP=OFF -DLLAMA_BUILD_UI=OFF -DLLAMA_CURL=OFF -DLLAMA_OPENSSL=OFF -DGGML_NATIVE=${GGML_NATIVE:-ON} > "$w/cmake.log" 2>&1 || { tail -30 "$w/cmake.log"; exit 1; }
cmake --build "$w/build" --target llama-bench -j "$(nproc)" > "$w/build.log" 2>&1 || { tail -40 "$w/build.log"; exit 1; }
cp "$w/build/bin/llama-bench" "$out"
ls -la "$out"
