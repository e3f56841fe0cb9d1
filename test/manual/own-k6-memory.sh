#!/usr/bin/env bash
# k6's peak memory and wall time with 10,000 own request samples (OTLP's example trace export, 5.6 MB of JSON) at 32
# VUs, HTTP and gRPC, 5 s each: the server on cpu 0, k6 on cpu 1 (docs/own-message.md).
#   bash test/manual/own-k6-memory.sh
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
PATH="$(dirname "$(bash scripts/ensure-tool.sh node)"):$PATH"
k6="$(bash scripts/ensure-tool.sh k6)"
dir="$(mktemp -d)"
otlp="$PWD/proto/otlp"
rpc=opentelemetry.proto.collector.trace.v1.TraceService/Export
proto=opentelemetry/proto/collector/trace/v1/trace_service.proto
# shellcheck disable=SC2016 # the ${...} is JavaScript's template literal, for node
node -e 'const fs = require("fs"); const one = JSON.stringify(JSON.parse(fs.readFileSync(process.argv[1], "utf8")));
  fs.writeFileSync(process.argv[2], `[${Array(10000).fill(one).join(",")}]`)' "$otlp/examples/traces.json" "$dir/requests.json"
MODE=http,grpc WORKERS=1 HTTP_PORT=33000 GRPC_PORT=34000 PROTO="$otlp/$proto" PROTO_PATH="$otlp" RPC="$rpc" \
  taskset -c 0 node server >"$dir/server.log" 2>&1 &
server=$!
trap 'kill "$server" 2>/dev/null; rm -rf "$dir"' EXIT
for _ in $(seq 50); do grep -q '"event":"ready"' "$dir/server.log" && break; sleep 0.2; done
for mode in http grpc; do
  /usr/bin/time -f "$mode: peak RSS %M kB, %e s wall for a 5 s run" taskset -c 1 "$k6" run -q --summary-mode=disabled \
    --duration=5s --vus=32 -e VUS=32 -e LOCAL_HTTP_HOST=127.0.0.1:33000 -e LOCAL_GRPC_HOST=127.0.0.1:34000 \
    -e "RPC=$rpc" -e "PROTO=$proto" -e "PROTO_PATH=$otlp" -e "REQUESTS=$dir/requests.json" "$mode-tests/local.js"
done
