#!/usr/bin/env bash
# Set up everything 3amBench Replay needs on a fresh Debian 12/13 machine (idempotent):
# the real promtool, amtool and Alertmanager, Debian's Chromium, a venv with the package.
set -euo pipefail
cd "$(dirname "$0")/.."

need=()
command -v promtool >/dev/null 2>&1 || need+=(prometheus)
command -v amtool >/dev/null 2>&1 || need+=(prometheus-alertmanager)
command -v prometheus-alertmanager >/dev/null 2>&1 || need+=(prometheus-alertmanager)
[ -x /usr/bin/chromium ] || need+=(chromium)
if [ ${#need[@]} -gt 0 ]; then
  SUDO=""
  [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends \
    $(printf '%s\n' "${need[@]}" | sort -u) >/dev/null
fi

if [ ! -x .venv/bin/python ]; then
  python3 -m venv .venv
fi
# openenv-core (0.3, deprecated) and openenv (0.10) ship the same module names: installing one
# over the other silently mixes their files, and uninstalling core later deletes files 0.10
# needs. A .venv from before the move to 0.10 still has core: remove it, then (re)install 0.10.
if .venv/bin/python -m pip show -q openenv-core >/dev/null 2>&1; then
  .venv/bin/python -m pip uninstall -q -y openenv-core
  .venv/bin/python -m pip install -q --disable-pip-version-check --force-reinstall --no-deps \
    'openenv>=0.10,<0.11'
fi
.venv/bin/python -m pip install -q --disable-pip-version-check -e '.[test]'
# Byte-compile the packages once: every CLI run the tests start then imports from .pyc (about
# a third faster to start), even where PYTHONDONTWRITEBYTECODE stops Python writing them itself.
.venv/bin/python -m compileall -q -j 0 alertforge contract grader recorder exporter tasks/generator >/dev/null
