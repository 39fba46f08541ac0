#!/usr/bin/env bash
# Session 37's third call (~8 minutes; carry .carry): s37_depth_rope.sh (#19's depth 32k with fuse_rope at 32 and 64
# splits), then s37_norm_fold.sh's kernels alone (norm_fold_bench: A, B and C at the 8B's and the 0.6B's shapes).
set -u
timeout 420 bash bench/calls/s37_depth_rope.sh
timeout 150 bash bench/calls/s37_norm_fold.sh 2>&1 | tail -16
