#!/usr/bin/env bash
# Session 55, call 3 (~8 minutes on any GPU; carry .carry = the tree's build, .carry-b = the build whose mixed q/k/v
# launch takes q's and k's rows two a warp).
# 1. Which small launches should let the next one start before their wait (LK_PDL_FIRST's new bits, one build): the 8B
#    Q4_K_M with T8 (session 50's H200 choice, pdl_first off), A the tree, B the norms early (4), C the norms and the
#    GLU output's quantize (12), D the step attention (16), E all but the GEMVs (1: session 28's 0.968x). Why: a GEMV's
#    blocks reach the SMs only once the small launch before it has passed its wait, which is after the GEMV before that
#    one has finished; a small launch that triggers first lets them in during that GEMV's tail. Session 28 read its loss
#    on the 8B as the waiting blocks taking a multi-wave GEMV's slots: the norms follow the o and down projections (one
#    wave each), the quantize the 4.5-wave gate/up, the attention the 1.9-wave q/k/v. Prediction: B +1-3%, C < B, D
#    and E < 1; logits bitwise equal (a trigger moves no value).
# 2. s55_call1.sh's H100 half with T8 alone (the B build's mixed q/k rows two a warp): +0.5-1.5%, bitwise equal.
# .carry-b: `git apply bench/calls/s55_qk2.patch`, `ninja -C build cli/lane-tune`, `bash bench/carry.sh
# build/cli/lane-tune .carry-b`, then `git checkout compiler/src/lane/lower.cpp` and build again for .carry.
set -u
. bench/calls/prelude.sh
mkdir -p /tmp/cb && tar xJf .carry-b/bundle.tar.xz -C /tmp/cb
T8=$(sed -n 2p bench/calls/s51_sets8b.txt)
echo "== pdl bits"
KNOBS="$T8" NVFLAGS_B=-DLK_PDL_FIRST=4 NVFLAGS_C=-DLK_PDL_FIRST=12 NVFLAGS_D=-DLK_PDL_FIRST=16 \
  NVFLAGS_E=-DLK_PDL_FIRST=1 AB_SIDES="a b c d e" TYPE=q4_k_m ROUNDS=3 PREFILL=512 AB_DECODE_AT=5 \
  AB_PROMPT_LENS="5 300" timeout 320 bash bench/ab_decode.sh $L $L /tmp/ab llama-3.1-8b 2>&1 |
  grep -E "====|BUILD_FAIL" | tee $OUT/ab-pdl.txt
echo "== mixed q/k rows two a warp (B build)"
KNOBS="$T8" TYPE=q4_k_m ROUNDS=3 PREFILL=512 AB_DECODE_AT=5 AB_PROMPT_LENS="5 300" timeout 200 \
  bash bench/ab_decode.sh $L /tmp/cb/lane-tune /tmp/ab llama-3.1-8b 2>&1 | grep -E "====|BUILD_FAIL" |
  tee $OUT/ab-qk2.txt
