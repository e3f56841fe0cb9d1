#!/usr/bin/env bash
# Prints the path of a pinned Go tool the project runs, building it from source when needed:
#   bash scripts/ensure-tool.sh k6|h2spec|grpcurl|toxiproxy-server
# k6 from PATH is used when it is at least the pinned release; the others are always the
# project's own pinned build in .tools/bin (git-ignored). Everything is built with
# `go install` from the Go module proxy; nothing downloads a prebuilt binary.
# Progress goes to stderr, the path to stdout; exit 1 with one line when it cannot.
set -euo pipefail

# tool: module path of its main package, pinned version
declare -A MODULE=(
  [k6]=go.k6.io/k6
  [h2spec]=github.com/summerwind/h2spec/cmd/h2spec
  [grpcurl]=github.com/fullstorydev/grpcurl/cmd/grpcurl
  [toxiproxy-server]=github.com/Shopify/toxiproxy/v2/cmd/server
)
declare -A VERSION=(
  [k6]=v1.8.1
  [h2spec]=v2.2.1+incompatible
  [grpcurl]=v1.9.3
  [toxiproxy-server]=v2.12.0
)
declare -A MINUTES=([k6]=3 [h2spec]=1 [grpcurl]=1 [toxiproxy-server]=1)

tool="${1:-}"
if [ -z "$tool" ] || [ -z "${MODULE[$tool]:-}" ]; then
  echo "usage: bash scripts/ensure-tool.sh <$(printf '%s|' "${!MODULE[@]}" | sed 's/|$//')>" >&2
  exit 2
fi
module="${MODULE[$tool]}"
version="${VERSION[$tool]}"
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
local_bin="$root/.tools/bin"
stamp="$local_bin/.$tool.version" # the pin the local build was made from

k6_new_enough() {
  local v
  v="$("$1" version 2>/dev/null | sed -nE 's/^k6 v([0-9]+\.[0-9]+\.[0-9]+).*/\1/p' | head -n1)"
  [ -n "$v" ] && [ "$(printf '%s\n%s\n' "${version#v}" "$v" | sort -V | head -n1)" = "${version#v}" ]
}

if [ "$tool" = k6 ]; then
  for candidate in "${K6_BIN:-}" "$(command -v k6 || true)" "$local_bin/k6"; do
    if [ -n "$candidate" ] && [ -x "$candidate" ] && k6_new_enough "$candidate"; then
      echo "$candidate"
      exit 0
    fi
  done
fi
if [ -x "$local_bin/$tool" ] && [ "$(cat "$stamp" 2>/dev/null)" = "$module@$version" ]; then
  echo "$local_bin/$tool"
  exit 0
fi

if ! command -v go >/dev/null 2>&1; then
  echo "$tool $version is not installed and Go is not there to build it: install Go (https://go.dev/doc/install), then run this again." >&2
  exit 1
fi
echo "Building $tool $version from source into $local_bin (about ${MINUTES[$tool]} minute(s))..." >&2
build="$(mktemp -d)"
trap 'rm -rf "$build"' EXIT
if ! GOBIN="$build" GOFLAGS=-mod=mod go install "$module@$version" >&2; then
  echo "Building $tool $version with 'go install $module@$version' failed (see above)." >&2
  exit 1
fi
mkdir -p "$local_bin"
# go install names the binary after the package's folder (toxiproxy's is cmd/server).
mv "$build/$(basename "$module")" "$local_bin/$tool"
echo "$module@$version" > "$stamp"
echo "$local_bin/$tool"
