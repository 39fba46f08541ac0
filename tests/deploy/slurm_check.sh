#!/usr/bin/env bash
# The Slurm script under a stand-in srun that runs its command once per task of a two-GPU allocation, as Slurm binds
# them (each task's CUDA_VISIBLE_DEVICES its own GPU), and a stand-in lane-tune that records its arguments: one
# worker per GPU, each on its own GPU and cache. Then a task given two GPUs is refused.
# Usage: slurm_check.sh SOURCE_DIR WORK_DIR.
set -euo pipefail
src=$1 work=$2
rm -rf "$work" && mkdir -p "$work/bin"
cat >"$work/bin/srun" <<'SRUN'
#!/usr/bin/env bash
# Runs the command (the arguments after srun's own options) once per GPU of $FAKE_GPUS (a task each).
while [[ $1 == --* ]]; do shift; done
status=0
i=0
for g in $FAKE_GPUS; do
  CUDA_VISIBLE_DEVICES=$g SLURM_LOCALID=$i SLURM_PROCID=$i "$@" || status=$?
  i=$((i + 1))
done
exit $status
SRUN
cat >"$work/bin/lane-tune" <<'LT'
#!/usr/bin/env bash
echo "$*" >>"$FAKE_LOG"
LT
chmod +x "$work/bin/srun" "$work/bin/lane-tune"
export PATH="$work/bin:$PATH" FAKE_LOG="$work/workers.log" LT_COORDINATOR=host:7117 SLURM_JOB_ID=42 TMPDIR=/scratch
FAKE_GPUS="2 3" bash "$src/deploy/slurm/lane-tune-workers.slurm"
cat "$FAKE_LOG"
[ "$(wc -l <"$FAKE_LOG")" -eq 2 ] || { echo "expected two workers"; exit 1; }
grep -q -- "--gpu 2 .*--cache /scratch/lane-tune-42-0$" "$FAKE_LOG" || { echo "task 0 is not on GPU 2"; exit 1; }
grep -q -- "--gpu 3 .*--cache /scratch/lane-tune-42-1$" "$FAKE_LOG" || { echo "task 1 is not on GPU 3"; exit 1; }
if FAKE_GPUS="0,1" bash "$src/deploy/slurm/lane-tune-workers.slurm" 2>"$work/refused.log"; then
  echo "a task given two GPUs was not refused"
  exit 1
fi
grep -q "exactly one GPU" "$work/refused.log"
echo "one worker per GPU"
