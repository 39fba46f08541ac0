#!/usr/bin/env bash
# Session 19, call 6 (~1 minute; carry .carry): the pipelined load's moved matrices (mapped host memory): a tiny-llama
# q4_k_m lane run with fewer device bytes than it takes (one byte fewer, and 3/4: matrices moved) against the same lane
# in full; the same logits, bit for bit. (Call 5's try asked for half, below the lane's fixed arrays: it did not run.)
set -u
. bench/calls/prelude.sh
. bench/common.sh
mkdir -p /tmp/v
F=$(TYPE=q4_k_m checkpoint $L /tmp/v tiny-llama)
$L compile "$F" -o /tmp/v/lk > /dev/null && $L build /tmp/v/lk --arch sm_90 > /dev/null 2>&1
printf "8 %s\n" "$(tokens $(vocab /tmp/v/lk) 40 3)" > /tmp/v/p
run() { /tmp/v/lk/lane "$F" /tmp/v/lk/lane.sidecar --prompts /tmp/v/p --logits /tmp/v/$1.bin ${2:+--device-bytes $2} > /tmp/v/$1.txt 2>&1; echo "$1 rc=$? $(grep -h '^MOVED\|^DEVICE_BYTES' /tmp/v/$1.txt | tr '\n' ' ') $(tail -1 /tmp/v/$1.txt | cut -c1-100)"; }
run full
DB=$(awk '/^DEVICE_BYTES:/ {print $2}' /tmp/v/full.txt)
run less1 $((DB - 1))
run less4 $((DB * 3 / 4))
for x in less1 less4; do echo "$x logits $(cmp -s /tmp/v/full.bin /tmp/v/$x.bin && echo equal || echo DIFFER) tokens $(diff <(grep TOKENS /tmp/v/full.txt) <(grep TOKENS /tmp/v/$x.txt) > /dev/null && echo equal || echo DIFFER)"; done
