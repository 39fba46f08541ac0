#!/usr/bin/env bash
# Session 52, call 6, prepared (~4 minutes on any GPU; carry .carry and bench/.ab_gemv52 = gemv_bench at the tree,
# `nvcc -O3 -std=c++20 -arch=sm_90 -o bench/.ab_gemv52 bench/gemv_bench.cu`, ignored by git).
# (1) Why two rows a warp gained 3.5% in the 8B's lane (session 52's call 5, the tuner's 4-warp set on an H100) while
# gemv_bench's pairs moved ~0-0.3 us: in the lane each GEMV's blocks wait under a norm or the attention (2-5 us) with
# their first loads in flight, in the bench under the quantize alone (~1 us). GB_LINK_NS puts a launch of N ns between.
# Prediction: at 2-4 us, q 4096x4096 at 2 rows a warp 1.0-1.5 us shorter than at 1 (its whole matrix in one wave's
# first loads), the gate/up pair's gap unchanged (~7 waves: the window covers one); at 0 as in call 4.
# (2) On an H200 also the lane A/B of call 5 (the 8B's tuned set with 2 rows a warp); prediction +2-4% as on the H100.
set -u
. bench/calls/prelude.sh
. bench/calls/s45_sets.sh
for ns in 0 2000 4000; do
  echo "== gemv_bench GB_LINK_NS=$ns"
  [ -x bench/.ab_gemv52 ] && GB_LINK_NS=$ns timeout 90 bench/.ab_gemv52 "lib rpw1,lib rpw2,glu lib rpw1,glu lib rpw2" 2>&1 |
    grep -E "q4_k|q6_k" | grep -v "06 "
done | tee $OUT/gemv-link.txt
T8=$(sed -n 2p bench/calls/s51_sets8b.txt)
case "$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)" in
  *H200*)
    echo "== llama-3.1-8b A the tuned set, B + gemv_rows_per_warp 2"
    KNOBS_A="$T8" KNOBS="${T8%\}},\"gemv_rows_per_warp\":2}" AB_SIDES="a b" TYPE=q4_k_m ROUNDS=3 PREFILL=512 \
      AB_DECODE_AT=5 AB_PROMPT_LENS="5 300" timeout 170 bash bench/ab_decode.sh $L $L /tmp/abr8 llama-3.1-8b 2>&1 |
      grep -E "====|BUILD_FAIL" | tee -a $OUT/rpw2.txt ;;
esac
