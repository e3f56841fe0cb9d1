#!/usr/bin/env bash
# Starts the server in connect-grpc mode (connect-node, gRPC protocol) in Docker and prints the k6 command to run next:
# the gRPC scripts, aimed at its port.
set -euo pipefail
# Builtins only: the no-Docker message must work even with a bare PATH.
case ${BASH_SOURCE[0]} in */*) cd -- "${BASH_SOURCE[0]%/*}" ;; esac
# shellcheck source=scripts/compose.sh
source scripts/compose.sh
start_mode connect-grpc "-e LOCAL_GRPC_HOST=localhost:4002 grpc-tests/local.js" "-e LOCAL_GRPC_HOST=server-connect-grpc:4002 grpc-tests/local.js"
