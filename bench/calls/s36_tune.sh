#!/usr/bin/env bash
# Session 36 call 2 (~7 minutes; carry .carry, this tree's build, and .carry-sass): session 35's tuning job
# (s35_tune.sh) ran on a warm machine after call 1 and the machine stopped answering about 10 minutes in, nothing back.
# Again on a fresh machine, a 4-minute job, the machine's memory, disk and processes sampled every 10 s into $OUT (the
# samples come back if the call ends; the job's logs are copied as it goes), the worker's log tailed. Prediction: the
# job screens the priors first, its chosen configuration the record's set or within ~3% (540-555 tok/s after a 5-token
# prompt, prefill(512) ~16,000), >= 30 configurations measured, GPU busy > 50%. Then the norm's SASS at 2 and 4 pieces
# a thread (the 8B's 512-thread launch: 4 pieces 3.90 us, 2 pieces 4.62; call 1).
set -u
T0=$(date +%s)
. bench/calls/prelude.sh
( while :; do
    { echo "== $(( $(date +%s) - T0 )) s"; free -m | sed -n 2p; df -m /tmp | tail -1; du -sm /tmp/tj 2> /dev/null
      ps -eo rss,pcpu,comm --sort=-rss | head -6 | tr '\n' ';'; echo; } >> $OUT/mon.txt
    mkdir -p $OUT/job; cp /tmp/tj/job/*.log /tmp/tj/job/progress.txt $OUT/job/ 2> /dev/null
    sleep 10
  done ) &
MON=$!
TYPE=q4_k_m timeout 390 bash bench/tune_h200.sh $L /tmp/tj llama-3.1-8b ${BUDGET:-4m} > $OUT/tune.txt 2>&1
echo "tune rc=$? after $(( $(date +%s) - T0 )) s"
kill $MON
tail -22 $OUT/tune.txt | cut -c1-400
cp /tmp/tj/job/results.json /tmp/tj/job/progress.txt /tmp/tj/job/best.txt /tmp/tj/job/*.log $OUT/ 2> /dev/null
xz -9 $OUT/results.json $OUT/worker-0.log 2> /dev/null
tail -3 $OUT/mon.txt
for v in 2 4; do
  cuobjdump -sass -fun "_Z14lk_add_rmsnormILb1ELb1ELi${v}EEvPfPKfS2_S0_ifPi" .carry-sass/v$v.cubin > $OUT/norm-v$v.sass 2>&1
  echo "norm V=$v: $(grep -cE '^\s+/\*[0-9a-f]{4}\*/' $OUT/norm-v$v.sass) instructions"
done
