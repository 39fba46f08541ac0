# Shared by the bench scripts (sourced): the nvcc lanes are built with, and the pieces every GPU script repeats.
export LT_NVCC=${LT_NVCC:-$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)}
BENCH=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)

# A preset's checkpoint in DIR (q8_0, or $TYPE; seed 1), synthesized once; PRESET may be a shape's JSON file (synth
# --shape), named by its file's name. $TYPE is laid out as llama.cpp's quantize tool does, or with PURE=1 every matrix
# in it (synth --pure: a format's own kernels on every matrix).  usage: checkpoint LANE_TUNE DIR PRESET -> path
checkpoint() {
  local t=${TYPE:-q8_0} f="$2/$(label "$3")${LAYERS:+-${LAYERS}l}.gguf" what=(--preset "$3")
  [ "$t" = q8_0 ] || f="${f%.gguf}-$t${PURE:+-pure}.gguf"
  [ -f "$3" ] && what=(--shape "$3")
  [ -f "$f" ] || "$1" synth "${what[@]}" --type "$t" ${PURE:+--pure} ${LAYERS:+--layers "$LAYERS"} --seed 1 -o "$f" > /dev/null
  echo "$f"
}

# A preset's name in file names and tables: the preset's, or a shape file's name without .json.  usage: label PRESET
label() { basename "$1" .json; }

# compare_logits.py's bounds for a compiled lane against the CPU reference: the judge's (lane.json's "judge": the
# worker's rule for its knobs, knobs::tolerance, against the precise lane), plus the precise lane's own bound against
# the CPU reference, so that a script's verdict is the tuner's.
# usage: judge_args LANE_DIR -> --tol X --tie T --min-agree A
judge_args() {
  python3 - "$1/lane.json" <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))["judge"]
print(f"--tol {j['rel_l2'] + j['precise_against_cpu']:.6g} --tie {j['tie']} --min-agree {j['argmax_agree']}")
PY
}

# The vocabulary of a compiled lane.  usage: vocab LANE_DIR
vocab() { python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["vocab"])' "$1/lane.json"; }

# The correctness prompts: lengths PROMPT_LENS (5, 23 and 300: past the largest chunk, 256), N_GEN (16) tokens each,
# deterministic: random tokens, or with PROMPT_TEXT=FILE windows of its bytes (a byte a token: the text a
# train_checkpoint.py checkpoint learned).  usage: prompts VOCAB OUT [N_GEN]
prompts() {
  python3 - "$1" "$2" "${3:-16}" "${PROMPT_TEXT:-}" "${PROMPT_LENS:-5 23 300}" <<'PY'
import random, sys
v, out, n_gen, text = int(sys.argv[1]), sys.argv[2], sys.argv[3], sys.argv[4]
rng = random.Random(7)
data = open(text, "rb").read() if text else b""
with open(out, "w") as f:
    for n in map(int, sys.argv[5].split()):
        if data:
            at = rng.randrange(len(data) - n)
            toks = list(data[at:at + n])
        else:
            toks = [rng.randrange(v) for _ in range(n)]
        f.write(n_gen + " " + " ".join(map(str, toks)) + "\n")
PY
}

# N deterministic tokens below VOCAB from SEED, on one line.  usage: tokens VOCAB N SEED
tokens() { python3 -c "import random; r=random.Random($3); print(' '.join(str(r.randrange($1)) for _ in range($2)))"; }

# Builds every lane directory listed in FILE for sm_90, in parallel; a failure is named on stdout.
build_all() { xargs -P "$(nproc)" -I{} sh -c '"$0" build {} --arch sm_90 > {}.build.log 2>&1 || echo BUILD_FAIL {}' "$1" < "$2"; }

# The CPU reference over a prompts file (lines "N_GEN TOKEN..."): the logits of all of them into OUT.bin, their
# TOKENS lines into OUT.txt.  usage: reference_prompts LANE_TUNE CHECKPOINT PROMPTS OUT  (returns 1 on a failure)
reference_prompts() {
  local n toks rc=0
  : > "$4.bin"; : > "$4.txt"
  while read -r n toks; do
    "$1" reference "$2" --n-gen "$n" --logits "$4.one.bin" $toks >> "$4.txt" || rc=1
    cat "$4.one.bin" >> "$4.bin"
  done < "$3"
  rm -f "$4.one.bin"
  return $rc
}
