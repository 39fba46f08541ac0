#!/usr/bin/env bash
# Packs lane-tune and the shared libraries it needs beyond glibc (and, when given, llama.cpp's llama-bench) into
# DIR/bundle.tar.xz (default .carry/), for a machine that lacks the Debian packages (the GPU machine). There:
#   mkdir -p /tmp/c && tar xJf .carry/bundle.tar.xz -C /tmp/c
#   LD_LIBRARY_PATH=/tmp/c/lib /tmp/c/lane-tune ...      /tmp/c/llama-bench ...
#
# usage: bench/carry.sh [LANE_TUNE_BINARY] [DIR] [LLAMA_BENCH]
set -euo pipefail
bin=${1:-build/cli/lane-tune}
dir=${2:-.carry}
lb=${3:-}
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
mkdir -p "$stage/lib"
cp "$bin" "$stage/lane-tune"
ldd "$bin" | awk '/=>/ {print $3}' | grep -v -E '/(libc|libm|libpthread|libdl|librt|libstdc\+\+|libgcc_s|ld-linux[^/]*)\.so' | while read -r lib; do
  cp -L "$lib" "$stage/lib/"
done
[ -n "$lb" ] && cp "$lb" "$stage/llama-bench"
strip "$stage"/lane-tune "$stage"/lib/* ${lb:+"$stage/llama-bench"} 2> /dev/null || true
rm -rf "$dir"
mkdir -p "$dir"
tar cf - -C "$stage" . | xz -T0 -6 > "$dir/bundle.tar.xz"
du -sh "$dir"
