#!/bin/bash
# The figures of docs/docker.md: build time (no cache, cached; 3 runs each), image size, and start-to-healthy and stop
# times of the gRPC container (5 runs), with podman and docker-compose driven as test/integration/docker-run.test.js
# drives them (needs root, and the stand-ins of scripts/podman-standins.sh), then a k6 run from Compose's k6 service
# (its summary lands in results/). Not part of npm test:
#   flock /tmp/quiet.lock bash test/manual/docker-figures.sh
set -u
cd "$(dirname "$0")/../.." || exit 1
export PATH="$PWD/.tools/node-24.21.0/bin:$PATH"
export CONTAINERS_CONF="$PWD/.tools/podman/containers.conf"
sock=/tmp/pm-measure.sock; rm -f $sock
podman system service --time=0 unix://$sock & SVC=$!
trap 'kill $HEALTH 2>/dev/null; docker-compose --profile grpc down -t 1 >/dev/null 2>&1; kill $SVC' EXIT
for _ in $(seq 50); do [ -S $sock ] && break; sleep 0.1; done
NOFILE=$(ulimit -Hn)
export NOFILE DOCKER_HOST=unix://$sock COMPOSE_PROJECT_NAME=jvgbmeasure HTTP_PUBLISH=127.0.0.1:23001 GRPC_PUBLISH=127.0.0.1:23002 K6_USER=0:0 WORKERS=1 SERVER_CPUS=1
( while true; do for id in $(podman ps -q --filter label=com.docker.compose.project=jvgbmeasure); do podman healthcheck run "$id" >/dev/null 2>&1; done; sleep 1; done ) & HEALTH=$!
ms() { local s rc; s=$(date +%s%N); "$@" >/dev/null 2>&1; rc=$?; echo "$(( ($(date +%s%N) - s) / 1000000 )) rc=$rc"; }
echo "commit $(git rev-parse --short HEAD)"
for _ in 1 2 3; do echo "build no-cache: $(ms env CONTAINER_ENGINE=podman bash build.sh --no-cache)"; echo "build cached: $(ms env CONTAINER_ENGINE=podman bash build.sh)"; done
echo "size: $(podman image inspect json-vs-grpc-bench:local --format '{{.Size}}')"
for _ in 1 2 3 4 5; do
  echo "startgrpc: $(ms bash startgrpc.sh)"
  echo "stop: $(ms docker-compose --profile grpc stop server-grpc)"
done
# Compose's k6 against the gRPC container, 10 s at 8 VUs: its summary's main lines.
bash startgrpc.sh >/dev/null 2>&1
docker-compose --profile grpc run --rm k6 run grpc-tests/local.js --duration=10s --vus=8 2>/dev/null \
  | grep -E '^ +(checks|grpc_req_duration|grpc_req_failed|iterations)\.*:'
