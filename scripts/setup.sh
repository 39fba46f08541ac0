#!/usr/bin/env bash
# Installs everything lane-tune's build needs from Debian's packages; safe to run again.
set -euo pipefail
packages=(
  build-essential cmake ninja-build ccache pkg-config git
  libgrpc++-dev protobuf-compiler-grpc libprotobuf-dev protobuf-compiler
  libsqlite3-dev sqlite3 libcli11-dev libgtest-dev libgmock-dev nlohmann-json3-dev libxxhash-dev
  libxgboost-dev openssl libssl-dev
  libcpp-httplib-dev libsystemd-dev   # the coordinator's /metrics and sd_notify
  libyaml-cpp-dev file systemd        # the deploy tests: manifests, the .deb's dependencies, systemd-analyze
  clang-14 libclang-rt-14-dev
  libjs-chart.js                      # Chart.js 3 (MIT), embedded into `lane-tune report`'s pages
  chromium-headless-shell             # the report test loads a page in a real browser (~100 MB)
)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  sudo_cmd=""
  [ "$(id -u)" -eq 0 ] || sudo_cmd="sudo"
  export DEBIAN_FRONTEND=noninteractive
  $sudo_cmd apt-get update -qq
  $sudo_cmd apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi
