#!/usr/bin/env bash
# The default report of two checkouts, interleaved: ROUNDS times `bash bench.sh` in BEFORE (a git worktree of the old
# commit, with node_modules and .tools linked to this checkout's), then in this checkout. Prints each report's JSON; read
# them together with test/manual/report-runs.js. Not part of npm test; run it on a quiet machine, and nothing beside it.
#   bash test/manual/bench-ab.sh 3 /tmp/before
set -u
rounds=${1:?usage: bench-ab.sh <rounds> <before checkout>}
before=${2:?usage: bench-ab.sh <rounds> <before checkout>}
after=$(cd "$(dirname "$0")/../.." && pwd)
for r in $(seq 1 "$rounds"); do
  for root in "$before" "$after"; do
    log=$(mktemp)
    (cd "$root" && bash bench.sh >"$log" 2>&1)
    echo "$root round $r: exit $?, $(grep -o 'results/compare-[^ ]*\.json' "$log" | tail -1)"
    rm -f "$log"
  done
done
