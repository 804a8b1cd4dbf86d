#!/usr/bin/env bash
# Harbor oracle: copy the solution's files over the workspace's monitoring repo.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
dest="${1:-/app/monitoring}"
cp -R "$here/monitoring/." "$dest/"
