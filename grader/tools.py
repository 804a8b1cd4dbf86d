"""The real tools a grade runs and their versions: promtool, amtool, and the Alertmanager
whose inhibition semantics the simulator follows.

Binaries: ``ALERTFORGE_PROMTOOL`` (default ``promtool``), ``ALERTFORGE_AMTOOL`` (default
``amtool``); the Alertmanager server the tests cross-check the simulator against is
``ALERTFORGE_ALERTMANAGER`` (default ``prometheus-alertmanager``). Every GradeResult names
the versions in ``tools`` (docs/formats.md), so a grade says what produced it.

amtool 0.28 logs on stdout (slog logfmt, ``time=... level=WARN source=parse.go:176 msg=...``)
where 0.25 printed nothing: matchers its new UTF-8 parser rejects and the classic parser
accepts. :func:`without_log_lines` removes those lines (also one glued to the end of
``check-config``'s ``Checking 'F'`` line) before output is read.
"""

from __future__ import annotations

import os
import re
import subprocess

PROMTOOL = os.environ.get("ALERTFORGE_PROMTOOL", "promtool")
"""The promtool binary (``ALERTFORGE_PROMTOOL`` overrides, e.g. Debian 13's, or a hanging one)."""
AMTOOL = os.environ.get("ALERTFORGE_AMTOOL", "amtool")
"""The amtool binary (``ALERTFORGE_AMTOOL`` overrides)."""
ALERTMANAGER = os.environ.get("ALERTFORGE_ALERTMANAGER", "prometheus-alertmanager")
"""The Alertmanager server binary (``ALERTFORGE_ALERTMANAGER`` overrides)."""
INHIBITION_SEMANTICS = "alertmanager 0.25"
"""Whose inhibition the simulator (grader/inhibition.py) follows: Alertmanager 0.25's
``inhibit/inhibit.go``; cross-checked against the 0.25 and 0.28 servers."""

_LOG_LINE = re.compile(r"time=\d{4}-\d\d-\d\dT[\d:.]+Z? level=[A-Z]+ source=\S+ msg=.*$")


def without_log_lines(text: str) -> str:
    """``text`` without amtool 0.28's log lines on stdout: a whole line, or the tail of a
    line it was glued to (``Checking 'F'time=... level=WARN ...``)."""
    kept = []
    for line in text.splitlines():
        match = _LOG_LINE.search(line)
        if match is None:
            kept.append(line)
        elif match.start() > 0:
            kept.append(line[:match.start()])
    return "\n".join(kept) + ("\n" if text.endswith("\n") and kept else "")


def tool_version(binary: str) -> str:
    """The version ``binary --version`` prints (``2.42.0+ds``, ``0.28.1+ds``), or
    ``unknown (<why>)`` when it cannot be run or says no version."""
    try:
        out = subprocess.run([binary, "--version"], capture_output=True, text=True, timeout=30,
                             stdin=subprocess.DEVNULL, check=False)
    except (OSError, subprocess.TimeoutExpired) as err:
        return f"unknown ({type(err).__name__})"
    found = re.search(r"\bversion (\S+)", (out.stdout or "") + (out.stderr or ""))
    return found.group(1) if found else "unknown (no version printed)"


def tool_versions() -> dict[str, str]:
    """``{promtool, amtool, inhibition}``: the versions of the binaries grades run now, and
    the Alertmanager semantics of the inhibition simulator. Runs each binary once."""
    return {"promtool": tool_version(PROMTOOL), "amtool": tool_version(AMTOOL),
            "inhibition": INHIBITION_SEMANTICS}
