#!/usr/bin/env bash
# Prints the path of a k6 binary at least as new as the pinned release (scripts/ensure-tool.sh):
# k6 from PATH if new enough, else the project-local build in .tools/bin, else builds the pinned
# release from source with `go install` (about 3 minutes). Never downloads a prebuilt binary.
set -euo pipefail
exec bash "$(dirname "${BASH_SOURCE[0]}")/ensure-tool.sh" k6
