#!/usr/bin/env bash
# For the next GPU session, call 2 (~6 minutes; carry .carry, .llama/llama-bench.xz): qwen3-30b-a3b Q8_0 side by side
# with llama-bench under the chunks-of-512 set, with session 17's grouped GEMM tiles (down BM 128; prediction:
# prefill(512) 45.9 -> ~42 ms).
set -u
. bench/calls/moe_prelude.sh
MOE_SETS=("$MOE_512")
moe qwen3-30b-a3b q8_0
