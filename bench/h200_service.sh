#!/usr/bin/env bash
# The tuning service on a GPU machine: a coordinator and one worker with the real CUDA runner tune a synthesized
# tiny-qwen3 (recorded as the replay fixture the demo and CI answer from) and a synthesized qwen3-0.6b; then the
# best qwen3-0.6b build is exported, run by hand as its README says, and checked by nightly.
#
# usage: bench/h200_service.sh LANE_TUNE_BINARY WORKDIR OUTDIR     (TINY_ONLY=1: the tiny-qwen3 job and its recording alone)
set -uo pipefail
LT=$1; W=$2; O=$3
mkdir -p "$W" "$O"
export LT_NVCC=${LT_NVCC:-$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)}
log() { echo "== $(date +%T) $*" | tee -a "$O/service.txt"; }
"$LT" synth --preset tiny-qwen3 --seed 1 -o "$W/tiny-qwen3.gguf" > /dev/null
"$LT" synth --preset qwen3-0.6b --seed 1 -o "$W/qwen3-0.6b.gguf" > /dev/null
"$LT" coordinator --db "$W/h200.db" --listen 127.0.0.1:0 --port-file "$W/port" > "$O/coordinator.log" 2>&1 &
C=$!
for i in $(seq 100); do [ -s "$W/port" ] && break; sleep 0.1; done
A=127.0.0.1:$(cat "$W/port")
"$LT" worker --coordinator "$A" --gpu 0 --cache "$W/cache" -v > "$O/worker.log" 2>&1 &
WK=$!
# GPU utilization sampled every 200 ms over the jobs: the busy fraction.
nvidia-smi --query-gpu=utilization.gpu --format=csv,noheader,nounits -lms 200 > "$W/util.txt" 2>/dev/null &
U=$!
# (2026-11-29: a plan of tiny-qwen3 took about 7 s with the default checks: halving over 12 is ~16 plans.)
log "tiny-qwen3: halving, budget 12 (the demo's job, recorded as the replay fixture)"
t0=$(date +%s)
timeout ${TINY_S:-240} "$LT" submit "$W/tiny-qwen3.gguf" --gpus h200 --strategy halving --budget 12 --objective decode --wait --coordinator "$A" 2>&1 | tail -3 | tee -a "$O/service.txt"
"$LT" record --coordinator "$A" --job 1 -o "$O/h200-tiny-qwen3.json" && log "recorded job 1"
if [ -n "${TINY_ONLY:-}" ]; then  # the replay fixture alone
  kill $U $WK $C 2> /dev/null
  wait 2> /dev/null
  exit 0
fi
log "qwen3-0.6b: random, budget 6"
timeout ${QWEN_S:-300} "$LT" submit "$W/qwen3-0.6b.gguf" --gpus h200 --strategy random --budget 6 --wait --coordinator "$A" 2>&1 | tail -3 | tee -a "$O/service.txt"
t1=$(date +%s)
kill $U 2>/dev/null
"$LT" status --coordinator "$A" | tee -a "$O/service.txt"
"$LT" results 2 --top 10 --coordinator "$A" | tee -a "$O/service.txt"
"$LT" best 2 --coordinator "$A" | tee -a "$O/service.txt"
python3 -c "
import sys
v=[float(x) for x in open('$W/util.txt') if x.strip().replace('.','',1).isdigit()]
print(f'GPU busy over the jobs ({$t1-$t0} s, {len(v)} samples): mean utilization {sum(v)/max(len(v),1):.1f}%, samples > 0: {sum(1 for x in v if x>0)/max(len(v),1):.2f}')
" | tee -a "$O/service.txt"
"$LT" record --coordinator "$A" --job 2 -o "$O/h200-qwen3-0.6b.json" && log "recorded job 2"
if "$LT" --help | grep -q "^  export"; then
  log "export job 2 for h200"
  "$LT" export 2 --gpu h200 -o "$W/release" --coordinator "$A" 2>&1 | tee -a "$O/service.txt"
  cat "$W/release/README.md" >> "$O/service.txt" 2>/dev/null
  cp "$W/release/manifest.json" "$O/" 2>/dev/null
  log "the exported binary, by hand"
  (cd "$W/release" && ./lane "$W/qwen3-0.6b.gguf" lane.sidecar 32 1 2 3 4 5 6 7 8) 2>&1 | tee -a "$O/service.txt"
  log "nightly"
  timeout 120 "$LT" nightly --gpus h200 --coordinator "$A" 2>&1 | tee -a "$O/service.txt"
  echo "nightly exit: ${PIPESTATUS[0]}" | tee -a "$O/service.txt"
fi
kill $WK $C 2>/dev/null
wait 2>/dev/null
# The database after the coordinator closed it (its WAL folded in), for the notes and the next session.
cp "$W/h200.db" "$O/" 2>/dev/null
tail -5 "$O/worker.log"
