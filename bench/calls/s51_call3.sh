#!/usr/bin/env bash
# Session 51, call 3, prepared and not run (the device budget went to refused starts): ~5 minutes; ~4 with ROUNDS=2
# SIDES="a b c" NO_VERIFY=1; ~8 with NF_8B=1 for the 8B's A/B. Carry .carry = the tree's build, .carry-old = e7c19b0's,
# bench/.ab_nf_old and .ab_nf_new (bench/norm_fold_bench.cu at e7c19b0 and at the tree), bench/.ab_chains1 and
# .ab_chains2 (bench/attention_bench.cu at the tree with -DLK_AM_SCORE_CHAINS=1 and 2), bench/.ab_gemv51 (gemv_bench
# at the tree), all ignored by git.
# (1) The tails' counts (by which fuse_norm's and fuse_rope's last block and norm_fold's span ends find they are last)
# are lk_last_arrival's: one acquire-release count by thread 0 between the block's barriers, where every thread of
# every block ran a sequentially consistent fence before the count (and the last block's after it). Both knobs lost to
# the norm launch they replace (session 37: norm_fold 0.901x on the 8B, session 24: fuse_norm -5 to -9%); the fences
# were part of their epilogue's cost. Prediction: norm_fold_bench's B (the spans' fold, 8B shapes) -1 to -2 us of its
# ~3 us over the two GEMVs, the 0.6B's -0.5 to -1; in the lanes norm_fold and fuse_norm +3-6% over the old build's, and
# norm_fold within 0.97-1.02 of the set without it. Then the new build judged by the CPU reference with both knobs.
set -u
. bench/calls/prelude.sh
. bench/calls/s45_sets.sh
mkdir -p /tmp/old && tar xJf .carry-old/bundle.tar.xz -C /tmp/old
nvidia-smi --query-gpu=name --format=csv,noheader
for sh in "4096 14336" "1024 3072"; do
  for b in old new; do
    echo "== norm_fold_bench $b $sh"
    [ -x bench/.ab_nf_$b ] && timeout 60 bench/.ab_nf_$b $sh 2>&1 | tail -8
  done
done | tee $OUT/nf.txt
# (2) The step attention's scores as two chains of dependent products (LK_AM_SCORE_CHAINS 2, bench/.ab_chains2) against
# one (.ab_chains1, the tree's): attention_bench mmafold. Prediction: depth 32k -1 to -2 us a layer (~0.065 us a tile,
# 32 tiles a block at 16 splits), short contexts within noise; max diffs of the same size.
for dsp in "5 1" "512 16" "32768 16" "32768 32"; do
  for v in 1 2; do [ -x bench/.ab_chains$v ] && timeout 60 bench/.ab_chains$v mmafold $dsp 2>&1 | tail -1; done
done | tee $OUT/chains.txt
# (3) The 8B's fused gate/up GEMV ending in the down's int8 copy by a count a 32-group (gemv_bench's bv_glu_count,
# bench/.ab_gemv51 = gemv_bench at the tree) against the GLU and the quantize launch after it (the lanes' form at k
# 4,096). Prediction: the count form 0.5-1.5 us shorter than the pair (the launch's ~0.8 us and the quantize's L2 round
# trip, less ~0.3 us of the count in each block's tail); the copies equal.
[ -x bench/.ab_gemv51 ] && GB_SHAPE=gate+up timeout 90 bench/.ab_gemv51 "glu lib rpw1,glu count" 2>&1 | tee $OUT/glu.txt
T8=$(sed -n 2p bench/calls/s51_sets8b.txt)
for P in qwen3-0.6b ${NF_8B:+llama-3.1-8b}; do
  K="$R06S"; N=${ROUNDS:-3}; [ $P = llama-3.1-8b ] && K="$T8" && N=2
  echo "== $P decode after 5: A the set (old build), B + norm_fold (new), C + norm_fold (old), D + fuse_norm (new)"
  KNOBS_A="$K" KNOBS="${K%\}},\"norm_fold\":true}" KNOBS_C="${K%\}},\"norm_fold\":true}" LT_C=/tmp/old/lane-tune \
    KNOBS_D="${K%\}},\"fuse_norm\":true}" AB_SIDES="${SIDES:-a b c d}" TYPE=q4_k_m ROUNDS=$N PREFILL=512 \
    AB_DECODE_AT=5 AB_PROMPT_LENS="5 300" timeout 230 bash bench/ab_decode.sh /tmp/old/lane-tune $L /tmp/ab3-$P $P \
    2>&1 | grep -E "====|BUILD_FAIL" | tee -a $OUT/ab.txt
done
[ -n "${NO_VERIFY:-}" ] && exit 0
. bench/calls/verify_presets.sh
LAYERS=2 verify_real lastof06 qwen3-0.6b q4_k_m "5 300" 120 "${R06S%\}},\"norm_fold\":true}" \
  "${R06S%\}},\"fuse_norm\":true}"
