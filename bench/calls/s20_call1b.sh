. bench/calls/prelude.sh
B='{"numerics":"int8","gemv_prequant":true,"fuse_qkv":true,"fuse_glu":true,"fuse_rope_kv":true,"pdl":true,"gemv_rows_per_warp":1,"gemv_rows_q6_k":2,"gemm_half":true,"kv_cache":"f16","attn_mma":2,"max_chunk":256}'
TYPE=q4_k_m KNOBS="$B" timeout 300 bash bench/ncu_decode.sh $L /tmp/n llama-3.1-8b 2>&1 | tee $OUT/ncu-decode.txt | tail -40
