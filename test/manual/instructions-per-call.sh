#!/usr/bin/env bash
# Instructions the server's worker executes per request, counted by valgrind's callgrind instead of timed: a count
# does not move with a noisy machine the way req/s does (docs/findings/2026-11-25-profiling.md, "Counting instructions"). Not part of npm test.
#
# One launch of a one-worker server (512 MiB initial heap, as `npm run targets` runs it) under callgrind, without the
# accounting (ADMIN_PORT unset): its samplers run by the clock, and valgrind's clock runs some 50 times longer per request.
# It serves WARM requests, then its counters are zeroed and it serves WINDOWS windows of N requests, its counters dumped
# (and zeroed) after each: every window's instructions ÷ N is printed, then their median. One launch, so V8's random hash
# seed and start-up cancel; the spread of the windows is what is left (the JIT still tiering up, GC, timers). The first
# window after the warm-up runs high while V8 is still compiling: read the later ones, and compare equal WARM and N.
# The load is h2load with a fixed request count: the scenario `user` (GetUser, GET /), gRPC framing for a gRPC listener,
# HTTP/1.1 (--h1) or h2c for the others. Server on cpu 0, h2load on cpu 1. Needs valgrind (apt-get install valgrind).
#   bash test/manual/instructions-per-call.sh grpc 8 32            # h2load -c8 -m32
#   WARM=50000 N=20000 WINDOWS=3 bash test/manual/instructions-per-call.sh peer-http 32 1
set -euo pipefail
listener=${1:?usage: instructions-per-call.sh <listener> <connections> <streams per connection>}
connections=${2:?connections}
streams=${3:?streams per connection}
warm=${WARM:-50000}
window=${N:-20000}
windows=${WINDOWS:-3}
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root"
command -v callgrind_control >/dev/null || { echo "instructions-per-call.sh: valgrind is missing: apt-get install valgrind" >&2; exit 2; }
command -v h2load >/dev/null || { echo "instructions-per-call.sh: h2load is missing: apt-get install nghttp2-client" >&2; exit 2; }
# The listener's port setting, how it is asked (server/listeners.js), the scenario's paths and a free loopback port.
read -r port_setting transport request rpc_path http_path port < <(node --input-type=module -e "
  import { LISTENERS } from './server/listeners.js';
  import { freePort } from './bench/processes.js';
  import { rpcPath, SCENARIOS } from './proto/payload.js';
  const l = LISTENERS[process.argv[1]];
  if (!l) { console.error('instructions-per-call.sh: no listener ' + process.argv[1]); process.exit(2); }
  const { rpc, httpPath } = SCENARIOS.user;
  console.log(l.portSetting, l.transport === 'HTTP/1.1' ? 'h1' : 'h2', l.load.request, rpcPath(rpc), httpPath, await freePort());
" "$listener")
[ "$request" = connect ] && { echo "instructions-per-call.sh: the Connect protocol's POST is not loaded here" >&2; exit 2; }
scratch=$(mktemp -d)
server=
cleanup() { [ -n "$server" ] && kill "$server" 2>/dev/null; rm -rf "$scratch"; }
trap cleanup EXIT
printf '\0\0\0\0\0' > "$scratch/get-user.grpc" # an empty GetUserRequest in gRPC's 5-byte framing
# h2load counts any 2xx as a success, and a gRPC error is a 200 with no DATA: every response must carry a body.
load() {
  local n=$1 out
  if [ "$request" = grpc ]; then
    out=$(taskset -c 1 h2load -c"$connections" -m"$streams" -n "$n" -d "$scratch/get-user.grpc" -H 'content-type: application/grpc' \
      -H 'te: trailers' "http://127.0.0.1:$port/$rpc_path")
  else
    local h1=()
    [ "$transport" = h1 ] && h1=(--h1)
    out=$(taskset -c 1 h2load "${h1[@]}" -c"$connections" -m"$streams" -n "$n" "http://127.0.0.1:$port$http_path")
  fi
  grep -q "$n succeeded" <<< "$out" || { echo "instructions-per-call.sh: not every request of $n succeeded" >&2; exit 1; }
  local data
  data=$(sed -n 's/^traffic: .*(\([0-9]*\)) data$/\1/p' <<< "$out")
  [ "${data:-0}" -ge $((n * 5)) ] || { echo "instructions-per-call.sh: $n responses carried ${data:-0} bytes of body: errors, not answers" >&2; exit 1; }
}
env MODE="$listener" WORKERS=1 "$port_setting=$port" WORKER_INITIAL_HEAP_MB=512 \
  taskset -c 0 valgrind --tool=callgrind --dump-instr=no --trace-children=yes \
  --callgrind-out-file="$scratch/cg.%p" --log-file="$scratch/vg.%p.log" node server/index.js > "$scratch/server.log" 2>&1 &
server=$!
for _ in $(seq 1 180); do grep -q '"event":"ready"' "$scratch/server.log" && break; sleep 1; done
grep -q '"event":"ready"' "$scratch/server.log" || { echo "instructions-per-call.sh: the server did not start in 180 s" >&2; exit 1; }
worker=$(grep -o '"pid":[0-9]*,"event":"worker-listening"' "$scratch/server.log" | grep -o '[0-9]*' | head -1)
load "$warm"
callgrind_control --zero "$worker" > /dev/null 2>&1
counts=()
for k in $(seq 1 "$windows"); do
  load "$window"
  callgrind_control --dump "$worker" > /dev/null 2>&1
  # callgrind writes each dump to cg.<pid>.<n>, its counters since the last zero or dump
  dump="$scratch/cg.$worker.$k"
  for _ in $(seq 1 30); do [ -s "$dump" ] && grep -q '^totals:' "$dump" && break; sleep 1; done
  counts+=("$(( $(awk '/^totals:/ {print $2}' "$dump") / window ))")
done
median=$(printf '%s\n' "${counts[@]}" | sort -n | awk '{a[NR]=$1} END {print (NR % 2) ? a[(NR + 1) / 2] : int((a[NR / 2] + a[NR / 2 + 1]) / 2)}')
echo "$listener (h2load -c$connections -m$streams, after $warm requests, $windows windows of $window): ${counts[*]} instructions per request; median $median"
