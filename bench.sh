#!/usr/bin/env bash
# The main job: JSON over HTTP vs protobuf over gRPC, measured by k6, reported side by side.
# Settings (environment): VUS, DURATION, WARMUP, WORKERS; see README.md.
# scripts/provision.sh puts the pinned Node first on PATH and runs npm ci when needed; the CLI then
# checks the settings and the tools, and finds or builds k6, before anything starts.
set -euo pipefail
# STREAMS=N holds N connections open in k6 and in the server (bench/commands/run.js checks the limit): the soft limit of
# open files raised to the hard one.
if [ -n "${STREAMS:-}" ]; then ulimit -n "$(ulimit -Hn)" 2>/dev/null || true; fi
exec bash "$(dirname "${BASH_SOURCE[0]}")/scripts/provision.sh" - node bench/cli.js run "$@"
