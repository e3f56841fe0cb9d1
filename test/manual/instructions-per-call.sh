#!/usr/bin/env bash
# Instructions the server's worker executes per request, counted by valgrind's cachegrind instead of timed: a count
# does not move with a noisy machine the way req/s does (docs/profiling.md, "Counting instructions"). Not part of npm test.
#
# Per listener, two launches of a one-worker server (accounting on, 512 MiB initial heap, as `npm run targets` runs
# them) under cachegrind: the first serves WARM requests, the second WARM then MORE. The worker's instructions in the
# second minus the first, divided by MORE, are its instructions per request with startup and warm-up cancelled.
# What does not cancel: V8's hash seed is random and its start-up work with it, and a function may be compiled in one
# launch's measured window and not the other's; repeat a listener and read the spread.
# The load is h2load with a fixed request count: the scenario `user` (GetUser, GET /), gRPC framing for a gRPC listener,
# HTTP/1.1 (--h1) or h2c for the others. Server on cpu 0, h2load on cpu 1. Needs valgrind (apt-get install valgrind).
#   bash test/manual/instructions-per-call.sh grpc 8 32            # h2load -c8 -m32
#   WARM=10000 MORE=20000 bash test/manual/instructions-per-call.sh peer-http 32 1
set -euo pipefail
listener=${1:?usage: instructions-per-call.sh <listener> <connections> <streams per connection>}
connections=${2:?connections}
streams=${3:?streams per connection}
warm=${WARM:-10000}
more=${MORE:-20000}
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root"
command -v valgrind >/dev/null || { echo "instructions-per-call.sh: valgrind is missing: apt-get install valgrind" >&2; exit 2; }
command -v h2load >/dev/null || { echo "instructions-per-call.sh: h2load is missing: apt-get install nghttp2-client" >&2; exit 2; }
# The listener's port setting and how it is asked (server/listeners.js), and two free loopback ports.
read -r port_setting transport request port admin < <(node --input-type=module -e "
  import { LISTENERS } from './server/listeners.js';
  import { freePort } from './bench/processes.js';
  const l = LISTENERS[process.argv[1]];
  if (!l) { console.error('instructions-per-call.sh: no listener ' + process.argv[1]); process.exit(2); }
  console.log(l.portSetting, l.transport === 'HTTP/1.1' ? 'h1' : 'h2', l.load.request, await freePort(), await freePort());
" "$listener")
[ "$request" = connect ] && { echo "instructions-per-call.sh: the Connect protocol's POST is not loaded here" >&2; exit 2; }
scratch=$(mktemp -d)
server=
cleanup() { [ -n "$server" ] && kill "$server" 2>/dev/null; rm -rf "$scratch"; }
trap cleanup EXIT
printf '\0\0\0\0\0' > "$scratch/get-user.grpc" # an empty GetUserRequest in gRPC's 5-byte framing
load() {
  local n=$1
  if [ "$request" = grpc ]; then
    taskset -c 1 h2load -c"$connections" -m"$streams" -n "$n" -d "$scratch/get-user.grpc" -H 'content-type: application/grpc' \
      -H 'te: trailers' "http://127.0.0.1:$port/bench.UserService/GetUser"
  else
    local h1=()
    [ "$transport" = h1 ] && h1=(--h1)
    taskset -c 1 h2load "${h1[@]}" -c"$connections" -m"$streams" -n "$n" "http://127.0.0.1:$port/"
  fi | grep -q "$n succeeded" || { echo "instructions-per-call.sh: not every request of $n succeeded" >&2; exit 1; }
}
counts=()
for extra in 0 "$more"; do
  env MODE="$listener" WORKERS=1 "$port_setting=$port" ADMIN_PORT="$admin" WORKER_INITIAL_HEAP_MB=512 \
    taskset -c 0 valgrind --tool=cachegrind --cache-sim=no --branch-sim=no --trace-children=yes \
    --cachegrind-out-file="$scratch/cg.%p" --log-file="$scratch/vg.%p.log" node server/index.js > "$scratch/server.log" 2>&1 &
  server=$!
  for _ in $(seq 1 180); do grep -q '"event":"ready"' "$scratch/server.log" && break; sleep 1; done
  grep -q '"event":"ready"' "$scratch/server.log" || { echo "instructions-per-call.sh: the server did not start in 180 s" >&2; exit 1; }
  load "$warm"
  [ "$extra" -gt 0 ] && load "$extra"
  kill "$server"
  wait "$server" || true
  server=
  worker=$(grep -o '"pid":[0-9]*,"event":"worker-listening"' "$scratch/server.log" | grep -o '[0-9]*' | head -1)
  counts+=("$(awk '/^summary:/ {print $2}' "$scratch/cg.$worker")")
  rm -f "$scratch"/cg.* "$scratch"/vg.*
done
echo "$listener (h2load -c$connections -m$streams, $more requests after $warm): $(( (counts[1] - counts[0]) / more )) instructions per request (worker: ${counts[0]} after $warm, ${counts[1]} after $((warm + more)))"
