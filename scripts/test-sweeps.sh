#!/usr/bin/env bash
# The long sweeps left out of the README's test command (tests marked `sweep`): the Ray engine
# on a real local Ray head and the verifier's venv and wheel builds. Extra pytest arguments
# pass through (e.g. -n 0 for one process). Run before each closing note.
set -euo pipefail
cd "$(dirname "$0")/.."
exec .venv/bin/python -m pytest -q -p no:cacheprovider -m sweep "$@" tests
