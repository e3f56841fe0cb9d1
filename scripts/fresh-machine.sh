#!/usr/bin/env bash
# The fresh-machine check: the README's two commands, run in a fresh clone inside a fresh Debian 12
# container that has only the README's prerequisites (Node, npm and Go, mounted from this machine),
# root, and the package registries. Each command must provision all it needs; nothing of this
# machine's installs, caches or folders beside the checkout is visible inside.
#   bash scripts/fresh-machine.sh [COMMAND...]   default: bash bench.sh && npm test
#   GO_CACHE_OUT=DIR (empty): keep the container's Go caches there after it ends
# Needs root (podman runs the container rootful, --privileged for the network-namespace tests).
# The base is Debian's minbase made by mmdebstrap (no image registry is reached), cached in
# .tools/fresh/ and imported into podman once; podman, mmdebstrap and runc come from Debian, set up by scripts/podman.sh.
# Prints each phase's wall time; exits with the commands' status.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
root="$PWD"
[ "$(id -u)" = 0 ] || { echo "fresh-machine: needs root (podman rootful, --privileged): sudo bash scripts/fresh-machine.sh" >&2; exit 1; }
# shellcheck source=scripts/podman.sh
source scripts/podman.sh
me=fresh-machine
podman_setup container

# The base image is made once per podman storage, as the Docker flow's stand-ins are (scripts/podman-standins.sh): it
# holds nothing of a run, every container from it starts fresh. Its tag names what it was made with.
packages=ca-certificates,git
cache="$root/.tools/fresh"
image="localhost/json-vs-grpc-fresh:bookworm-${packages//,/-}"
rootfs="$cache/bookworm-minbase.tar"
started=$SECONDS
if ! podman image exists "$image"; then
  minbase_rootfs "$rootfs" "$packages"
  podman import --quiet "$rootfs" "$image" >/dev/null
fi
echo "fresh-machine: base image ready in $((SECONDS - started)) s" >&2

# A fresh clone of what is committed: no node_modules, no .tools, no results. Inside, it is under /root
# (mode 700), where a root user clones: the tests that drop root must run a copy the dropped user can read.
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
git clone --quiet --no-hardlinks "$root" "$work/json-vs-grpc-bench"

# The prerequisites, from this machine: node and npm, and Go.
node_bin="$(readlink -f "$(command -v node)")"
npm_dir="$(cd "$(dirname "$(readlink -f "$(command -v npm)")")/.." && pwd)" # .../node_modules/npm
go_root="$(go env GOROOT)"
# The registries are reached through the certificate authority this machine's environment names.
env_args=()
for v in NODE_EXTRA_CA_CERTS SSL_CERT_FILE SSL_CERT_DIR PIP_CERT GIT_SSL_CAINFO REQUESTS_CA_BUNDLE CURL_CA_BUNDLE; do
  if [ -n "${!v:-}" ]; then env_args+=(--env "$v=${!v}"); fi
done
if [ $# -eq 0 ]; then set -- bash -c 'bash bench.sh && npm test'; fi
# GO_CACHE_OUT=<an empty folder>: the container's Go build and module caches are written there, to outlive it (CI hands
# them to its host jobs, which build the same pinned tools). It must be empty, so the container still builds cold. It is
# mounted at the same path inside, as GOROOT is: Go's build cache keys hold the sources' paths, so the host then hits it.
go_cache=()
if [ -n "${GO_CACHE_OUT:-}" ]; then
  if [ ! -d "$GO_CACHE_OUT" ] || [ -n "$(ls -A "$GO_CACHE_OUT")" ]; then
    echo "fresh-machine: GO_CACHE_OUT=$GO_CACHE_OUT must be an empty folder" >&2
    exit 1
  fi
  go_cache=(--volume "$GO_CACHE_OUT:$GO_CACHE_OUT" --env "GOCACHE=$GO_CACHE_OUT/build" --env "GOMODCACHE=$GO_CACHE_OUT/mod")
fi

echo "fresh-machine: running in a fresh container: $*" >&2
started=$SECONDS
status=0
podman run --rm --privileged --network host --pull never \
  --volume /etc/ssl/certs:/etc/ssl/certs:ro \
  --volume "$node_bin:/usr/local/bin/node:ro" \
  --volume "$npm_dir:/usr/local/lib/node_modules/npm:ro" \
  --volume "$go_root:$go_root:ro" \
  --volume "$work/json-vs-grpc-bench:/root/json-vs-grpc-bench" \
  --workdir /root/json-vs-grpc-bench \
  --env "PATH=$go_root/bin:/root/go/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin" \
  --env CI="${CI:-}" \
  "${env_args[@]}" "${go_cache[@]}" \
  "$image" \
  bash -c 'ln -s ../lib/node_modules/npm/bin/npm-cli.js /usr/local/bin/npm && exec "$@"' fresh "$@" || status=$?
echo "fresh-machine: the commands ran $((SECONDS - started)) s and exited $status" >&2
exit "$status"
