#!/usr/bin/env bash
# The service under load and under kills (issue #20), bounded, on loopback: one coordinator on a real SQLite file,
# WORKERS replaying workers (a synthetic recording of tiny-qwen3's space, each plan taking DELAY ms), CLIENTS clients
# asking for the job's status in a loop, a random worker SIGKILLed (and a new one started) every KILL_EVERY seconds,
# and the coordinator SIGKILLed once halfway and restarted on the same database and port. Then the database is read:
# every plan of the job measured exactly once (none lost, none twice), and the workers' lease calls' latencies
# (their `lease_call` log lines) as p50 / p99 / max. Figures, never assertions: bench/NOTES.md.
#
# usage: [WORKERS=200] [CLIENTS=50] [SECONDS=120] [PLANS=3000] [DELAY=200] [KILL_EVERY=3] bench/soak.sh LANE_TUNE WORKDIR
set -uo pipefail
LT=$(realpath "$1"); W=$2
WORKERS=${WORKERS:-200}; CLIENTS=${CLIENTS:-50}; SECONDS_RUN=${SECONDS:-120}; PLANS=${PLANS:-3000}
DELAY=${DELAY:-200}; KILL_EVERY=${KILL_EVERY:-3}
rm -rf "$W"; mkdir -p "$W/logs"
cd "$W" || exit 1
"$LT" synth --preset tiny-qwen3 --seed 1 -q -o m.gguf || exit 1
"$LT" record --synthetic m.gguf --gpu h200 --landscape lane -o rec.json || exit 1

coordinator() {  # (port: 0 the first time, then the same)
  "$LT" coordinator --db soak.db --listen "127.0.0.1:$1" --port-file port --lease 10 > "logs/coordinator-$2.log" 2>&1 &
  COORD=$!
  for _ in $(seq 100); do [ -s port ] && break; sleep 0.1; done
}
rm -f port; coordinator 0 1
PORT=$(cat port); export LT_COORDINATOR=127.0.0.1:$PORT
JOB=$("$LT" submit m.gguf --gpus h200 --strategy random --budget "$PLANS" --seed 7 2>&1 | sed -n 's/.*job \([0-9]*\).*/\1/p' | head -1)
[ -n "$JOB" ] || { echo "no job"; exit 1; }

declare -A WPID
worker() {
  "$LT" worker --replay rec.json --replay-delay "$DELAY" --kind h200 --name "w$1" --prefetch 2 --give-up 60 \
    --cache "$W/cache" -vv > "logs/worker-$1-$2.log" 2>&1 &
  WPID[$1]=$!
  disown "$!"  # (no job-control notice when it is killed)
}
for i in $(seq "$WORKERS"); do worker "$i" 0; done
CLIENT_PIDS=()
for c in $(seq "$CLIENTS"); do
  (while :; do "$LT" status "$JOB" > /dev/null 2>&1; sleep 0.2; done) &
  CLIENT_PIDS+=($!)
  disown "$!"
done

start=$(date +%s); kills=0; restarted=0
while :; do
  now=$(date +%s); el=$((now - start))
  [ "$el" -ge "$SECONDS_RUN" ] && break
  state=$("$LT" status "$JOB" 2>/dev/null | grep -o -m1 -E '\b(running|done|failed|cancelled)\b')
  [ "$state" = done ] && break
  if [ "$restarted" = 0 ] && [ "$el" -ge $((SECONDS_RUN / 2)) ]; then
    kill -9 "$COORD"; wait "$COORD" 2> /dev/null; rm -f port
    coordinator "$PORT" 2; restarted=1
    echo "coordinator killed and restarted at ${el}s"
  fi
  i=$((RANDOM % WORKERS + 1))
  kill -9 "${WPID[$i]}" 2> /dev/null && kills=$((kills + 1))
  worker "$i" "$el"
  sleep "$KILL_EVERY"
done
# Let the job finish (the workers still run), then stop everything.
for _ in $(seq 120); do
  "$LT" status "$JOB" 2>/dev/null | grep -q -m1 -w done && break
  sleep 1
done
took=$(( $(date +%s) - start ))
kill "${CLIENT_PIDS[@]}" 2> /dev/null
for p in "${WPID[@]}"; do kill "$p" 2> /dev/null; done
sleep 1; kill "$COORD" 2> /dev/null; wait 2> /dev/null

q() { sqlite3 soak.db "$1"; }
echo "workers $WORKERS, clients $CLIENTS, ${DELAY} ms a plan, ${took} s; workers SIGKILLed $kills times, the coordinator once"
echo "job $JOB: $(q "select state from jobs where id = $JOB") ($(q "select message from jobs where id = $JOB"))"
echo "plans by state: $(q "select group_concat(state || '=' || n, ' ') from (select state, count(*) n from plans where job = $JOB group by state)")"
echo "runs: $(q "select count(*) from runs where job = $JOB"); plans done without a run (lost): $(q "select count(*) from plans p where p.job = $JOB and p.state = 'done' and not exists (select 1 from runs r where r.plan = p.id)"); plans with more than one run: $(q "select count(*) from (select plan from runs where job = $JOB group by plan having count(*) > 1)"); runs of the failure classes: $(q "select group_concat(f || '=' || n, ' ') from (select case when valid then 'valid' else failure end f, count(*) n from runs where job = $JOB group by f)")"
cat logs/worker-*.log | sed -n 's/.*event=lease_call .*ms=\([0-9.]*\).*/\1/p' | python3 -c '
import sys
v = sorted(float(x) for x in sys.stdin if x.strip())
if v:
    q = lambda p: v[min(len(v) - 1, int(p * len(v)))]
    print(f"lease calls: {len(v)}; latency p50 {q(0.5):.1f} ms, p99 {q(0.99):.1f} ms, max {v[-1]:.1f} ms")'
