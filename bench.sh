#!/usr/bin/env bash
# The main job: JSON over HTTP vs protobuf over gRPC, measured by k6, reported side by side.
# Settings (environment): VUS, DURATION, WARMUP, WORKERS; see README.md.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")"

if [ ! -f node_modules/.package-lock.json ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
  echo "Installing dependencies (npm ci)..." >&2
  npm ci --no-audit --no-fund >&2
fi
# Settings and tools are checked, and k6 found or built, by the CLI before anything starts.
exec node bench/cli.js run "$@"
