# shellcheck shell=bash
# Shared by build.sh and the start<mode>.sh scripts (source it from the repo root).
# Finds a running Docker engine and a Compose CLI (`docker compose` v2 or the
# older `docker-compose`), builds the image, and starts one mode of the server.
# Uses only bash builtins until Docker is found, so it fails cleanly without it.

# The caller's name, for messages.
me=${0##*/}

# Exits 1 with one line when no Docker engine is reachable.
# $1: what to run instead without Docker.
require_engine() {
  local hint="without Docker, run the server directly: $1"
  if ! command -v docker >/dev/null 2>&1; then
    echo "$me: Docker is not installed ('docker' is not on PATH); $hint" >&2
    exit 1
  fi
  if ! docker info >/dev/null 2>&1; then
    echo "$me: no Docker engine is running ('docker info' cannot reach it); $hint" >&2
    exit 1
  fi
}

# Sets COMPOSE to the Compose command line, preferring the v2 plugin. With TLS_DIR set, compose.tls.yaml
# goes on top of compose.yaml (the servers serve TLS_DIR's certificate; Compose's k6 verifies its ca.crt).
find_compose() {
  if docker compose version >/dev/null 2>&1; then
    COMPOSE=(docker compose)
  elif command -v docker-compose >/dev/null 2>&1; then
    COMPOSE=(docker-compose)
  else
    echo "$me: neither 'docker compose' nor 'docker-compose' is installed; install the Docker Compose plugin" >&2
    exit 1
  fi
  if [ -n "${TLS_DIR:-}" ]; then
    local file
    for file in server.crt server.key ca.crt; do
      if [ ! -r "$TLS_DIR/$file" ]; then
        echo "$me: TLS_DIR=$TLS_DIR has no readable $file; make a set with: npm run certs -- --out $TLS_DIR" >&2
        exit 2
      fi
    done
    COMPOSE+=(-f compose.yaml -f compose.tls.yaml)
  fi
  own_service
}

# With OWN_DIR set, compose.own.yaml goes on top: the user's service (docs/own-message.md) from the files in
# OWN_DIR, mounted at /own. Made absolute here: Compose would take a bare relative name for a named volume.
own_service() {
  if [ -z "${OWN_DIR:-}" ]; then
    local name
    for name in RPC PROTO; do
      if [ -n "${!name:-}" ]; then
        echo "$me: $name is set but OWN_DIR is not: set OWN_DIR to the folder holding PROTO, RESPONSE and REQUESTS (docs/docker.md)" >&2
        exit 2
      fi
    done
    return 0
  fi
  if [ ! -d "$OWN_DIR" ]; then
    echo "$me: OWN_DIR=$OWN_DIR is not a folder (a relative one is read from $PWD)" >&2
    exit 2
  fi
  if [ -z "${RPC:-}" ] || [ -z "${PROTO:-}" ]; then
    echo "$me: OWN_DIR is set: set RPC (package.Service/Method) and PROTO (a path in OWN_DIR) too" >&2
    exit 2
  fi
  OWN_DIR=$(cd -- "$OWN_DIR" && pwd)
  export OWN_DIR
  case " ${COMPOSE[*]} " in *" -f "*) ;; *) COMPOSE+=(-f compose.yaml) ;; esac
  COMPOSE+=(-f compose.own.yaml)
}

# Builds the server image that both modes use. Extra arguments go to the build.
# CONTAINER_ENGINE=docker builds with Compose; =podman with `podman build`, in Docker's image format
# (podman's default, OCI, drops the HEALTHCHECK). Unset: docker when an engine answers, else podman
# when it is installed, else docker (whose absence require_engine reports).
build_image() {
  local engine=${CONTAINER_ENGINE:-}
  if [ -z "$engine" ]; then
    engine=docker
    if ! { command -v docker >/dev/null 2>&1 && docker info >/dev/null 2>&1; } && command -v podman >/dev/null 2>&1; then engine=podman; fi
  fi
  case $engine in
    docker)
      require_engine "npm run start:http (or npm run start:grpc)"
      find_compose
      # Building one service tags the image that both server services name.
      "${COMPOSE[@]}" --profile http build "$@" server-http
      ;;
    podman)
      # The tag compose.yaml's server services name.
      podman build --format docker --tag json-vs-grpc-bench:local "$@" .
      ;;
    *) echo "$me: CONTAINER_ENGINE is '$engine': docker or podman" >&2; exit 2 ;;
  esac
}

# Every mode with a server service (server-<mode> in compose.yaml; bench/modes.js MODES, which
# test/unit/docker.test.js checks this list against).
SERVER_MODES=(http grpc connect-grpc connect-json)

# Starts the server in mode $1 (one of SERVER_MODES), waits until its health check passes
# and prints the k6 command to run next: $2, the k6 script and its -e for a k6 on this machine
# (default: <mode>-tests/local.js), and $3 for the k6 service of Compose (default: $2).
start_mode() {
  local mode=$1 other id status known=
  require_engine "npm run start:$mode"
  find_compose
  for other in "${SERVER_MODES[@]}"; do [ "$other" = "$mode" ] && known=1; done
  if [ -z "$known" ]; then echo "$me: unknown mode '$mode'" >&2; exit 2; fi

  # Two modes would share the CPUs and skew a benchmark: stop the others.
  for other in "${SERVER_MODES[@]}"; do
    [ "$other" = "$mode" ] || "${COMPOSE[@]}" --profile "$other" stop "server-$other"
  done
  "${COMPOSE[@]}" --profile "$mode" up -d "server-$mode"

  # Compose v1 has no `up --wait`: poll the container's health instead.
  id=$("${COMPOSE[@]}" --profile "$mode" ps -q "server-$mode")
  for _ in $(seq 60); do
    status=$(docker inspect -f '{{if .State.Health}}{{.State.Health.Status}}{{else}}none{{end}}' "$id")
    [ "$status" = starting ] || break
    sleep 1
  done
  if [ "$status" != healthy ]; then
    echo "$me: server-$mode is not healthy (health: $status); see: ${COMPOSE[*]} --profile $mode logs server-$mode" >&2
    exit 1
  fi

  local script=${2:-$mode-tests/local.js}
  local in_compose=${3:-$script}
  # Over TLS the host's k6 verifies TLS_DIR's CA: the scripts read TLS_CA, k6's HTTP client SSL_CERT_FILE.
  local tls=
  [ -z "${TLS_DIR:-}" ] || tls="SSL_CERT_FILE=$TLS_DIR/ca.crt TLS_CA=$TLS_DIR/ca.crt "
  # An own service: the settings Compose reads again (the caller may have set them for this command only), and the
  # same as -e for a k6 on this machine, which resolves them against OWN_DIR (k6/common.js).
  local own='' own_e='' name
  if [ -n "${OWN_DIR:-}" ]; then
    for name in OWN_DIR RPC PROTO PROTO_PATH RESPONSE REQUESTS MAX_BODY_BYTES STREAM STREAM_INTERVAL STREAM_FRAMING; do
      [ -z "${!name:-}" ] || own+="$name=$(printf %q "${!name}") "
    done
    for name in OWN_DIR RPC PROTO PROTO_PATH REQUESTS STREAM STREAM_FRAMING; do
      [ -z "${!name:-}" ] || own_e+="-e $name=$(printf %q "${!name}") "
    done
    [ -n "${REQUESTS:-}" ] || echo "$me: REQUESTS is not set: k6 needs a JSON array of request messages in OWN_DIR (docs/docker.md)" >&2
  fi
  # Compose reads TLS_DIR again whenever it parses compose.tls.yaml (down too): its commands carry it, as they carry an
  # own service's settings.
  local compose_env=$own
  [ -z "${TLS_DIR:-}" ] || compose_env="TLS_DIR=$(printf %q "$TLS_DIR") $own"
  echo "server-$mode is up and healthy${tls:+, over TLS}. Next, from this folder:"
  echo "  ${tls}k6 run $own_e$script --duration=60s --vus=32"
  echo "or, without k6 installed:"
  echo "  $compose_env${COMPOSE[*]} --profile $mode run --rm k6 run $in_compose --duration=60s --vus=32"
  echo "Stop it with: $compose_env${COMPOSE[*]} --profile $mode down"
}
