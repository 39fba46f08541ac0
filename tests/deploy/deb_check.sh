#!/usr/bin/env bash
# The .deb as a machine would get it: `cpack -G DEB` from the build folder (the lane-tune already built there, not
# built again), its control file's dependencies, and its contents unpacked with dpkg-deb: the binary runs
# (`lane-tune --version`), the units name it where it is installed, sysusers.d makes their user, postinst runs it.
# Usage: deb_check.sh CPACK BUILD_DIR WORK_DIR. Exits 77 (skipped) where dpkg-deb or dpkg-shlibdeps is missing.
set -euo pipefail
cpack=$1 build=$2 work=$3
for tool in dpkg-deb dpkg-shlibdeps file; do
  if ! command -v $tool >/dev/null; then
    echo "$tool not found (Debian's dpkg-dev and file packages): the .deb was not built"
    exit 77
  fi
done
rm -rf "$work" && mkdir -p "$work"
# (Under Ninja, cpack builds nothing: it packages what the build made.)
"$cpack" -G DEB --config "$build/CPackConfig.cmake" -B "$work" >"$work/cpack.log" 2>&1 || {
  cat "$work/cpack.log"
  exit 1
}
deb=$(ls "$work"/lane-tune_*.deb)
echo "built $(basename "$deb") ($(du -h "$deb" | cut -f1))"
depends=$(dpkg-deb -f "$deb" Depends)
echo "Depends: $depends"
for lib in libgrpc++ libprotobuf libsqlite3 libxgboost libcpp-httplib libsystemd; do
  grep -q "$lib" <<<"$depends" || { echo "the .deb does not depend on $lib"; exit 1; }
done
dpkg-deb -x "$deb" "$work/root"
dpkg-deb -e "$deb" "$work/control"
version=$("$work/root/usr/bin/lane-tune" --version)
echo "$version"
grep -q "^lane-tune [0-9]" <<<"$version"
for f in lib/systemd/system/lane-tune-coordinator.service lib/systemd/system/lane-tune-worker@.service \
  lib/systemd/system/lane-tune-nightly.service lib/systemd/system/lane-tune-nightly.timer lib/sysusers.d/lane-tune.conf; do
  [ -f "$work/root/usr/$f" ] || { echo "the .deb has no /usr/$f"; exit 1; }
done
grep -q "^ExecStart=/usr/bin/lane-tune coordinator" "$work/root/usr/lib/systemd/system/lane-tune-coordinator.service"
grep -q "systemd-sysusers lane-tune.conf" "$work/control/postinst"
echo "the .deb installs lane-tune, its units and its user"
