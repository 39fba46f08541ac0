#!/usr/bin/env bash
# Lanes of shapes no preset has, as a checkpoint from another tool would bring them: K shapes drawn at random (llama,
# qwen2 with its biases, qwen3 with its q/k norms, now and then a mixture: qwen3moe, qwen2moe with a shared expert,
# gpt-oss with sinks and a sliding window; 1 to 8 query heads a key/value head; heads 32 to 256 wide; widths whole
# 32-blocks but not always whole 256-blocks, so that K-quant files fall back as llama.cpp's quantizer does; half of
# them tiny, half a few hundred MB), each written by `lane-tune synth --shape` in a random matrix type, then N knob
# points of each through bench/sweep.sh: built, checked against the CPU reference (tokens, logits within the numerics'
# bound, bit for bit under --stagger), timed. The CPU side of the same draws is ctest's RandomShapesOnCpu (the plan
# model); this is the kernels'. A mixture's points take the exact numerics only (dequant, precise): its random router
# flips an expert under int8 (and under a compact cache's or f16 GEMMs' roundings, so those are off too). Prints sweep.sh's table for every shape; exits 1 if any point fails.
#
# usage: bench/shapes.sh LANE_TUNE_BINARY WORKDIR K N
#   SEED=N: the shapes' seed (2026); BUILD_ONLY=1: build the lanes, run nothing (a machine without a GPU);
#   ARCHS="gemma3 ...": draw the architectures from these (default: the mix above, as earlier sessions drew it)
set -uo pipefail
LT=$1; W=$2; K=$3; N=$4
mkdir -p "$W/shapes"
python3 - "$W/shapes" "$K" "${SEED:-2026}" "${ARCHS:-}" > "$W/shapes/list" <<'PY'
import json, random, sys
out, k, rng = sys.argv[1], int(sys.argv[2]), random.Random(int(sys.argv[3]))
archs = sys.argv[4].split() or ["llama", "qwen2", "qwen3"] * 2 + ["qwen3moe", "qwen2moe", "gpt-oss"]
types = ["q8_0", "q4_k_m", "q5_k_m", "q4_0", "q4_1", "q5_0", "q5_1", "q2_k", "q3_k", "q4_k", "q5_k", "q6_k",
         "iq4_nl", "iq4_xs", "mxfp4", "f16", "bf16"]
for i in range(k):
    arch = rng.choice(archs)
    big = i % 2 == 1
    kv = rng.randint(1, 4 if big else 3)
    s = {"name": f"shape{i}", "architecture": arch, "layers": rng.randint(1, 2), "kv_heads": kv,
         "heads": kv * rng.randint(1, 8), "head_dim": rng.choice([32, 48, 64, 80, 96, 128, 256]),
         "d_model": 32 * rng.randint(16, 64) if big else 32 * rng.randint(4, 16),
         "ffn": 32 * rng.randint(32, 160) if big else 32 * rng.randint(4, 31),
         "vocab": rng.randint(2000, 32000) if big else rng.randint(260, 959), "context": 4096,
         "rope_base": rng.choice([10000.0, 500000.0, 1000000.0]), "norm_eps": rng.choice([1e-5, 1e-6]),
         "tied_output": arch != "gpt-oss" and rng.random() < 0.5,
         "qkv_bias": arch in ("qwen2", "qwen2moe", "gpt-oss"), "qk_norm": arch in ("qwen3", "qwen3moe", "gemma3")}
    while s["heads"] * s["head_dim"] % 32:
        s["heads"] += kv
    if arch == "llama" and rng.random() < 0.5:
        s.update(rope_scale_factor=8.0, rope_low_freq=1.0, rope_high_freq=4.0, rope_original_context=1024)
    if arch in ("qwen3moe", "qwen2moe", "gpt-oss"):
        s["experts"] = rng.randint(2, 8)
        s.update(experts_used=rng.randint(1, min(s["experts"], 4)), expert_ffn=32 * rng.randint(2, 13))
    if arch == "qwen2moe":
        s["shared_ffn"] = 32 * rng.randint(2, 13)
    if arch == "gpt-oss":
        s.update(sliding_window=rng.choice([8, 32, 128]), rope_scale_factor=32.0, rope_original_context=4096)
    if arch in ("gemma2", "gemma3"):  # (sandwich norms, GELU: a sliding window, global every 2nd or 3rd layer, linear
        s.update(sliding_window=rng.choice([8, 32, 128]), sliding_pattern=rng.randint(2, 3),  # scaling or not)
                 rope_scale_factor=rng.choice([0.0, 8.0]))
    if arch == "gemma2":  # (tied, softcaps that bend random logits or real ones)
        s.update(tied_output=True, attn_softcap=rng.choice([3.0, 10.0, 50.0]), final_softcap=rng.choice([3.0, 30.0]))
    json.dump(s, open(f"{out}/shape{i}.json", "w"))
    print(rng.choice(types), f"{out}/shape{i}.json")
PY
fail=0
i=0
while read -r TYPE SHAPE; do
  echo "==== $(basename "$SHAPE" .json) $TYPE: $(cat "$SHAPE")"
  # (a mixture's random router flips an expert under the int8 numerics: another expert is another function, so its
  # lanes are judged under the exact numerics, as ctest's draws are)
  num="dequant int8 int8x2 precise" fixed='{}'
  grep -q '"experts"' "$SHAPE" && num="dequant precise" fixed='{"kv_cache": "act", "gemm_half": false}'
  pure=1; case $TYPE in *_m) pure= ;; esac  # (every matrix in a format: its kernels on every launch)
  PURE=$pure NUMERICS=$num FIXED=$fixed TYPE=$TYPE SEED=$((2026 + i)) bash "$(dirname "$0")/sweep.sh" "$LT" "$W/s$i" "$N" "$SHAPE" || fail=1
  i=$((i + 1))
done < "$W/shapes/list"
exit $fail
