#!/usr/bin/env bash
# scripts/test-with-tools.sh DIR [pytest args]: the README's test suite with the promtool,
# amtool and prometheus-alertmanager in DIR put first on the PATH and the grader's tool
# variables pointed at them (e.g. Debian 13's, unpacked by scripts/fetch-tools.sh).
set -euo pipefail
DIR="$(cd "${1:?usage: $0 DIR_WITH_PROMTOOL_AND_AMTOOL [pytest args]}" && pwd)"
shift
cd "$(dirname "$0")/.."
export PATH="$DIR:$PATH"
export ALERTFORGE_PROMTOOL="$DIR/promtool" ALERTFORGE_AMTOOL="$DIR/amtool"
export ALERTFORGE_ALERTMANAGER="$DIR/prometheus-alertmanager"
"$ALERTFORGE_PROMTOOL" --version 2>&1 | head -1
"$ALERTFORGE_AMTOOL" --version 2>&1 | head -1
"$ALERTFORGE_ALERTMANAGER" --version 2>&1 | head -1
exec .venv/bin/python -m pytest -q -p no:cacheprovider "${@:-tests}"
