#!/usr/bin/env bash
# Session 55, call 1 (carry .carry = the tree's build, .carry-b = a build whose fused q/k/v launch with v in another
# format (lk_gemv_parts_mixed) takes q's and k's rows two a warp whatever gemv_rows_per_warp says; .llama).
# On an H200 (~9 minutes): the 8B side by side with llama-bench (s51_call1.sh's H200 branch: the first H200 figures
# with session 54's mixed rows). Prediction: decode 550-565 tok/s (0.57-0.58 of the bound), ~2.0x llama.cpp's tg128.
# On any other GPU (~4 minutes): the B build against the tree on the 8B Q4_K_M with T8 (session 50's H200 choice, a
# row a warp) and REC (two rows a warp everywhere: B changes nothing there, the control). Under T8 the mixed launch is
# 6,144 warps at 80 registers, 1.9 waves of 24 warps an SM; B makes it 3,584 (1.1 waves). Prediction: T8 +0.5-1.5%,
# REC 1.000x; logits bitwise equal (a row's sums in the same order at one or two rows a warp).
# .carry-b: `git apply bench/calls/s55_qk2.patch`, `ninja -C build cli/lane-tune`, `bash bench/carry.sh
# build/cli/lane-tune .carry-b`, then `git checkout compiler/src/lane/lower.cpp` and build again for .carry.
# Ran in session 56 (bench/NOTES.md; T8 0.986x): bench/calls/s55_qk2.patch is gone since, `git show
# 1cb80e3:bench/calls/s55_qk2.patch` gives it back.
set -u
G=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)
echo "gpu: $G"
case "$G" in
  *H200*) SETS_FILE=bench/calls/s51_sets8b.txt SPEED_TIMEOUT=420 bash bench/calls/s44_side.sh ;;
  *)
    . bench/calls/prelude.sh
    mkdir -p /tmp/cb && tar xJf .carry-b/bundle.tar.xz -C /tmp/cb
    . bench/calls/s45_sets.sh
    T8=$(sed -n 2p bench/calls/s51_sets8b.txt)
    for S in T8 REC; do
      echo "== $S"
      KNOBS="${!S}" TYPE=q4_k_m ROUNDS=3 PREFILL=512 AB_DECODE_AT=5 AB_PROMPT_LENS="5 300" \
        timeout 200 bash bench/ab_decode.sh $L /tmp/cb/lane-tune /tmp/ab llama-3.1-8b 2>&1 |
        grep -E "====|BUILD_FAIL" | tee -a $OUT/ab.txt
    done
    ;;
esac
