#!/usr/bin/env bash
# The kustomize base built as Kubernetes would (`kubectl kustomize`), where kubectl is installed (it is not in
# Debian's archive; manifests_test.cpp checks the base's structure everywhere): it builds, and every object lands in
# the namespace with the image set. Usage: kustomize_check.sh SOURCE_DIR. Exits 77 (skipped) without kubectl.
set -euo pipefail
src=$1
if ! command -v kubectl >/dev/null; then
  echo "kubectl not found: the base was not built (manifests_test checks its structure)"
  exit 77
fi
out=$(kubectl kustomize "$src/deploy/kubernetes")
kinds=$(grep -c "^kind: " <<<"$out")
namespaced=$(grep -c "^  namespace: lane-tune$" <<<"$out")
echo "$kinds objects, $namespaced in namespace lane-tune"
[ "$namespaced" -eq $((kinds - 1)) ] || { echo "an object is outside the namespace"; exit 1; }
! grep -q "image: lane-tune$" <<<"$out" || { echo "an image was not set by the base"; exit 1; }
