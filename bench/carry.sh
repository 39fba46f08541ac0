#!/usr/bin/env bash
# Gathers lane-tune and the shared libraries it needs beyond glibc into DIR (default .carry/), for a machine that
# lacks the Debian packages (the GPU machine): run there with LD_LIBRARY_PATH=DIR/lib DIR/lane-tune ...
set -euo pipefail
bin=${1:-build/cli/lane-tune}
dir=${2:-.carry}
rm -rf "$dir"
mkdir -p "$dir/lib"
cp "$bin" "$dir/lane-tune"
ldd "$bin" | awk '/=>/ {print $3}' | grep -v -E '/(libc|libm|libpthread|libdl|librt|ld-linux[^/]*)\.so' | while read -r lib; do
  cp -L "$lib" "$dir/lib/"
done
strip "$dir/lane-tune" "$dir"/lib/* 2>/dev/null || true
du -sh "$dir"
