#!/usr/bin/env bash
# The systemd units as systemd reads them: `systemd-analyze verify` on each (ExecStart naming the lane-tune under
# test, so the binary's check is real) and `systemd-analyze security --offline=yes` under each unit's target exposure
# (the coordinator and the nightly run at most 4.0, a worker, which runs nvcc and CUDA lanes, at most 6.0).
# Usage: systemd_check.sh SOURCE_DIR LANE_TUNE WORK_DIR. Exits 77 (skipped) where systemd-analyze is missing.
set -euo pipefail
src=$1 lane_tune=$2 work=$3
if ! command -v systemd-analyze >/dev/null; then
  echo "systemd-analyze not found (Debian's systemd package): the units were not checked"
  exit 77
fi
rm -rf "$work" && mkdir -p "$work"
for t in "$src"/deploy/systemd/*.service.in; do
  unit=$(basename "$t" .in)
  sed "s|@LT_BINDIR@|$(dirname "$lane_tune")|" "$t" >"$work/$unit"
done
cp "$src/deploy/systemd/lane-tune-nightly.timer" "$work/"
ln -s "lane-tune-worker@.service" "$work/lane-tune-worker@0.service"
cd "$work"
systemd-analyze verify ./lane-tune-coordinator.service ./lane-tune-worker@0.service ./lane-tune-nightly.service \
  ./lane-tune-nightly.timer
status=0
for pair in lane-tune-coordinator.service:4.0 lane-tune-nightly.service:4.0 lane-tune-worker@0.service:6.0; do
  unit=${pair%%:*} target=${pair##*:}
  line=$(systemd-analyze security --offline=yes "./$unit" | grep "Overall exposure level")
  score=$(sed -E 's/.*: ([0-9.]+) .*/\1/' <<<"$line")
  echo "$unit: exposure $score (target at most $target)"
  if ! awk -v s="$score" -v t="$target" 'BEGIN { exit !(s <= t) }'; then
    systemd-analyze security --offline=yes "./$unit" | grep '✗' || true
    status=1
  fi
done
exit $status
