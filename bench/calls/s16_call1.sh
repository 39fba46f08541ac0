#!/usr/bin/env bash
# For the next GPU session, call 1 (~8 minutes; carry .carry, .llama/llama-bench.xz and .llama/lib): #17's speed side by
# side, as s15_side_by_side.sh's mixtures part meant to (its lane-tune could not build the precise reference lane):
# qwen3-30b-a3b Q8_0 and gpt-oss-20b MXFP4 (synth, random weights: timing only; the sets verified on the trained
# shapes in s15_trained_moe.sh), decode after a 512-token prompt and prefill(512), against llama-bench pp512/tg128 on
# the same files; `measure --format json` so that a failure says why. Then gpt-oss-20b's shape in its first 2 layers
# trained (20 s) and judged under the 6 sets (s15_trained_moe.sh's, which ran out of time there).
set -u
. bench/calls/prelude.sh
. bench/calls/llama_prelude.sh
. bench/common.sh
. bench/calls/moe_side_by_side.sh
moe qwen3-30b-a3b q8_0
moe gpt-oss-20b mxfp4
ONLY=oss20-2l OSS_SECONDS=20 timeout 280 bash bench/calls/s15_trained_moe.sh
