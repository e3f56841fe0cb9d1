#!/usr/bin/env bash
# What the README's two commands run first, so that each works on a fresh machine with only Node, npm,
# Go and root (or stops at once with the one command that provisions what is missing):
#   bash scripts/provision.sh SET COMMAND [ARGS...]
# 1. the pinned Node (scripts/ensure-tool.sh node) goes first on PATH, so COMMAND, npm and every
#    server the jobs and tests start run on it;
# 2. `npm ci` when node_modules is missing or older than package-lock.json;
# 3. the tools of SET (scripts/ensure-tool.sh --set SET; `-` for none);
# then COMMAND runs in the repository's root, with BENCH_CWD the folder it was called from.
set -euo pipefail
# Where the user ran the command (npm run sets INIT_CWD): the jobs resolve the user's own files (PROTO, REQUEST, …) from it.
export BENCH_CWD="${BENCH_CWD:-${INIT_CWD:-$PWD}}"
cd "$(dirname "${BASH_SOURCE[0]}")/.."
set_name="${1:?usage: bash scripts/provision.sh SET|- COMMAND [ARGS...]}"
shift

node_bin="$(bash scripts/ensure-tool.sh node)"
PATH="$(dirname "$node_bin"):$PATH"
export PATH

# By the lock file's content, not its time: a fresh checkout (a clone, a git worktree) gives package-lock.json a new
# time, and npm ci would then empty a node_modules that is already right (or shared through a symlink).
lock_sum="$(sha256sum package-lock.json | cut -d' ' -f1)"
if [ ! -f node_modules/.package-lock.json ] || [ "$(cat node_modules/.provisioned-lock 2>/dev/null)" != "$lock_sum" ]; then
  echo "Installing dependencies (npm ci)..." >&2
  npm ci --no-audit --no-fund >&2
  echo "$lock_sum" >node_modules/.provisioned-lock
fi
[ "$set_name" = - ] || bash scripts/ensure-tool.sh --set "$set_name"
exec "$@"
