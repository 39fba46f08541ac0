#!/usr/bin/env bash
# Session 39 (~6 minutes; carry .carry (this tree) and .carry-old (586ace8, session 38's)): the 2-minute tuning job on
# qwen3-0.6b Q4_K_M twice from cold worker caches, session 38's worker then this tree's, whose kernel cache builds the
# instances a configuration adds in shared modules of up to 8 (nvcc reads the library once for them) with a module
# head without the host's headers. Here (2 cores) the 0.6B's first configuration's 51 kernels took 147 nvcc-seconds
# alone and 45-50 shared. Prediction: the job measures 1.5-2.5x the configurations (session 38's H100: 17 in 121 s,
# build_s median 16 s) and verifies more of them; the GPU stays mostly idle still (the runs are ~0.5 s).
set -u
. bench/calls/prelude.sh
mkdir -p /tmp/c-old && tar xJf .carry-old/bundle.tar.xz -C /tmp/c-old
G=h200; nvidia-smi --query-gpu=name --format=csv,noheader | grep -q H100 && G=h100
for side in old new; do
  B=/tmp/c/lane-tune; [ $side = old ] && B=/tmp/c-old/lane-tune
  TUNE_GPU=$G LD_LIBRARY_PATH=$(dirname $B)/lib:/usr/local/cuda/lib64:/usr/lib/x86_64-linux-gnu \
    timeout 250 bash bench/tune_h200.sh $B /tmp/tj-$side qwen3-0.6b 2m > $OUT/tune-06b-$side.txt 2>&1
  echo "== $side rc=$?"; grep -E "^job:|GPU util|cost \(median|best \(verified\)|h[12]00: model" $OUT/tune-06b-$side.txt | cut -c1-260
  cp /tmp/tj-$side/job/results.json $OUT/results-$side.json 2> /dev/null; xz -9 $OUT/results-$side.json 2> /dev/null
done
