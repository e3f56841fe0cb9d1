#!/usr/bin/env bash
# Prints the path of a k6 binary at least as new as the pinned release:
# k6 from PATH if new enough, else the project-local build in .tools/bin,
# else builds the pinned release from source with `go install` (about 3 minutes).
# Never downloads a prebuilt binary. Progress goes to stderr, the path to stdout.
set -euo pipefail

K6_VERSION="1.8.1"
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
local_bin="$root/.tools/bin"

version_of() { "$1" version 2>/dev/null | sed -nE 's/^k6 v([0-9]+\.[0-9]+\.[0-9]+).*/\1/p' | head -n1; }
new_enough() {
  local v
  v="$(version_of "$1")"
  [ -n "$v" ] && [ "$(printf '%s\n%s\n' "$K6_VERSION" "$v" | sort -V | head -n1)" = "$K6_VERSION" ]
}

for candidate in "${K6_BIN:-}" "$(command -v k6 || true)" "$local_bin/k6"; do
  if [ -n "$candidate" ] && [ -x "$candidate" ] && new_enough "$candidate"; then
    echo "$candidate"
    exit 0
  fi
done

if ! command -v go >/dev/null 2>&1; then
  echo "k6 >= v$K6_VERSION is not installed and Go is not there to build it." >&2
  echo "Install k6 (https://grafana.com/docs/k6/latest/set-up/install-k6/) or Go, then run this again." >&2
  exit 1
fi

echo "Building k6 v$K6_VERSION from source into $local_bin (about 3 minutes)..." >&2
mkdir -p "$local_bin"
if ! GOBIN="$local_bin" GOFLAGS=-mod=mod go install "go.k6.io/k6@v$K6_VERSION" >&2; then
  echo "Building k6 v$K6_VERSION with 'go install' failed (see above)." >&2
  exit 1
fi
echo "$local_bin/k6"
