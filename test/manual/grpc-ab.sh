#!/usr/bin/env bash
# The demo's gRPC GetUser on another commit against this checkout, with the server's own GC accounting (docs/own-message.md:
# the move to protobufjs 8 left it unchanged). The other commit runs from a git worktree with this checkout's node_modules,
# its protobufjs replaced by the release that commit's package-lock.json names.
#   bash test/manual/grpc-ab.sh OLD_REV [ROUNDS]
# Server on cpu 0 (WORKER_INITIAL_HEAP_MB=512, as npm run targets), h2load -c8 -m32 on cpu 1, 3 s warm-up then 8 s, rounds
# interleaved (old, new, old, new, ...).
set -euo pipefail
old_rev="${1:?usage: bash test/manual/grpc-ab.sh OLD_REV [ROUNDS]}"
rounds="${2:-3}"
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
node_bin="$(bash "$root/scripts/ensure-tool.sh" node)"
PATH="$(dirname "$node_bin"):$PATH"
export PATH
h2load="$(bash "$root/scripts/ensure-tool.sh" h2load)"
work="$(mktemp -d)"
cleanup() { git -C "$root" worktree remove --force "$work/old" >/dev/null 2>&1 || true; rm -rf "$work"; }
trap cleanup EXIT
git -C "$root" worktree add -q --detach "$work/old" "$old_rev"
cp -r "$root/node_modules" "$work/old/node_modules"
version="$(node -e 'const l=require(process.argv[1]);console.log(l.packages["node_modules/protobufjs"].version)' "$work/old/package-lock.json")"
(cd "$work" && npm pack --silent "protobufjs@$version" >/dev/null && rm -rf old/node_modules/protobufjs && mkdir old/node_modules/protobufjs \
  && tar -xzf "protobufjs-$version.tgz" -C old/node_modules/protobufjs --strip-components=1)
printf '\x00\x00\x00\x00\x00' > "$work/request.bin" # the empty GetUserRequest, gRPC-framed
gc() { curl -s "http://127.0.0.1:$2/metrics" | awk '/^server_gc_pause_seconds_total/ {s+=$2} END {print s}'; }
for round in $(seq "$rounds"); do
  for dir in "$work/old" "$root"; do
    port=$((20000 + RANDOM % 10000)); admin=$((port + 1))
    (cd "$dir" && MODE=grpc WORKERS=1 HOST=127.0.0.1 GRPC_PORT=$port ADMIN_PORT=$admin WORKER_INITIAL_HEAP_MB=512 \
      exec taskset -c 0 node server) > "$work/server.log" 2>&1 &
    pid=$!
    for _ in $(seq 50); do grep -q '"ready"' "$work/server.log" && break; sleep 0.2; done
    load=(taskset -c 1 "$h2load" -c8 -m32 -d "$work/request.bin" -H 'content-type: application/grpc' -H 'te: trailers'
      "http://127.0.0.1:$port/user.v1.UserService/GetUser")
    "${load[@]}" -D 3 >/dev/null
    before="$(gc x "$admin")"
    out="$("${load[@]}" -D 8)"
    after="$(gc x "$admin")"
    rps="$(grep -o '[0-9.]* req/s' <<<"$out" | head -1)"
    done_n="$(grep -o '[0-9]* succeeded' <<<"$out" | cut -d' ' -f1)"
    echo "round $round $(git -C "$dir" rev-parse --short HEAD): $rps, GC $(node -e "console.log(((${after}-${before})*1e6/${done_n}).toFixed(2))") ms per 1000 requests"
    kill -TERM "$pid"; wait "$pid" || true
  done
done
