// The prelude every lane starts with: shared helpers of the kernel library (warp sums, f16/bf16 reads).
#pragma once
