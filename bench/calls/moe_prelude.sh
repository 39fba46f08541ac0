# Sourced by the device calls that time the mixtures side by side: the lane-tune bundle and llama-bench unpacked
# (prelude.sh, llama_prelude.sh), bench/common.sh's helpers and `moe` (moe_side_by_side.sh, with its MOE_512 set).
. bench/calls/prelude.sh
. bench/calls/llama_prelude.sh
. bench/common.sh
. bench/calls/moe_side_by_side.sh
