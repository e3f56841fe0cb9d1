#!/usr/bin/env bash
# Starts the server in connect-json mode (connect-node, Connect protocol with JSON) in Docker and prints the k6 command to run next.
set -euo pipefail
# Builtins only: the no-Docker message must work even with a bare PATH.
case ${BASH_SOURCE[0]} in */*) cd -- "${BASH_SOURCE[0]%/*}" ;; esac
# shellcheck source=scripts/compose.sh
source scripts/compose.sh
start_mode connect-json
