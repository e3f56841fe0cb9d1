#!/usr/bin/env bash
# Builds the server's Docker image (both modes). Extra arguments go to
# `compose build`, e.g. bash build.sh --no-cache
set -euo pipefail
case ${BASH_SOURCE[0]} in */*) cd -- "${BASH_SOURCE[0]%/*}" ;; esac
# shellcheck source=scripts/compose.sh
source scripts/compose.sh
build_image "$@"
