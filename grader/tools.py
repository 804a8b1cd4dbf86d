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

import functools
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
"""The inhibition judge named when amtool's version cannot be read: the simulator
(grader/inhibition.py) with Alertmanager 0.25's ``inhibit/inhibit.go``."""

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


def inhibition_judge(amtool_version: str) -> str:
    """Whose inhibition a grade follows: the Alertmanager of the machine's amtool (one
    Debian package ships both), ``alertmanager <major>.<minor>`` (``0.28.1+ds`` ->
    ``alertmanager 0.28``), judged by the simulator with that version's semantics
    (:func:`grader.inhibition.semantics_of`); :data:`INHIBITION_SEMANTICS` when the version
    cannot be read."""
    found = re.match(r"v?(\d+)\.(\d+)", amtool_version)
    return f"alertmanager {found.group(1)}.{found.group(2)}" if found else INHIBITION_SEMANTICS


@functools.cache
def amtool_inhibition(binary: str) -> tuple[str, str]:
    """``(judge, semantics)`` for the amtool at ``binary`` (asked once per binary):
    :func:`inhibition_judge` and the simulator's semantics for it (``"0.25"`` / ``"0.30"``)."""
    from grader.inhibition import semantics_of

    judge = inhibition_judge(tool_version(binary))
    return judge, semantics_of(judge.removeprefix("alertmanager "))


def tool_versions() -> dict[str, str]:
    """``{promtool, amtool, inhibition}``: the versions of the binaries grades run now, and
    the Alertmanager whose inhibition the simulator follows (:func:`inhibition_judge`).
    Runs each binary once."""
    amtool = tool_version(AMTOOL)
    return {"promtool": tool_version(PROMTOOL), "amtool": amtool,
            "inhibition": inhibition_judge(amtool)}
