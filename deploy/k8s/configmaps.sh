#!/usr/bin/env bash
# Makes the ConfigMaps the TestRuns read: each mode's remote script as one `k6 archive` (the
# script and every module it imports, proto/user.proto included), then `kubectl apply`s them.
# Needs k6 (scripts/ensure-tool.sh k6 builds the pinned one) and kubectl pointed at your cluster.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
k6="${K6_BIN:-$(bash scripts/ensure-tool.sh k6)}"
out="$(mktemp -d)"
trap 'rm -rf "$out"' EXIT
for mode in http grpc; do
  "$k6" archive --include-system-env-vars=false -O "$out/$mode.tar" "$mode-tests/remote.js"
  kubectl create configmap "k6-$mode" --from-file="$mode.tar=$out/$mode.tar" --dry-run=client -o yaml | kubectl apply -f -
done
