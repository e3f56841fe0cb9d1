#!/usr/bin/env bash
# The main job: JSON over HTTP vs protobuf over gRPC, measured by k6, reported side by side.
# Settings (environment): VUS, DURATION, WARMUP, WORKERS; see README.md.
# scripts/provision.sh puts the pinned Node first on PATH and runs npm ci when needed; the CLI then
# checks the settings and the tools, and finds or builds k6, before anything starts.
set -euo pipefail
exec bash "$(dirname "${BASH_SOURCE[0]}")/scripts/provision.sh" - node bench/cli.js run "$@"
