# One device call of session 9 (run from the repository root on the GPU machine: `bash bench/calls/FILE`).
set -u
. bench/calls/prelude.sh
mkdir -p /tmp/o && tar xJf .carry/old/bundle.tar.xz -C /tmp/o
OLD=/tmp/o/lane-tune
printf '#!/bin/sh\nLD_LIBRARY_PATH=/tmp/o/lib:/usr/local/cuda/lib64 exec /tmp/o/lane-tune "$@"\n' > /tmp/oldlt; chmod +x /tmp/oldlt
printf '#!/bin/sh\nLD_LIBRARY_PATH=/tmp/c/lib:/usr/local/cuda/lib64 exec /tmp/c/lane-tune "$@"\n' > /tmp/newlt; chmod +x /tmp/newlt
timeout 270 python3 bench/equivalence.py /tmp/oldlt /tmp/newlt /tmp/eq > $OUT/equivalence.txt 2>&1
echo "equivalence rc=$? $(date)"
TYPES="q4_k_m q2_k" SETS_ONLY="9" LANE_TYPES="q2_k" SPEED_PRESETS="" timeout 75 bash bench/formats_check.sh $L /tmp/fc > $OUT/formats.txt 2>&1
echo "formats rc=$? $(date)"
tail -25 $OUT/equivalence.txt
grep -E "valid|lane.cu" $OUT/formats.txt | head
