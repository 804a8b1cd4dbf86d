"""Run the real ``promtool``: check rule files, and replay scenarios with ``promtool test rules``.

Every PromQL check becomes one ``promql_expr_test`` whose expression ends in a PromQL
comment naming the check (``# check A1.fire.outage@86m``). promtool 2.42 has no
machine-readable output, so failures are attributed by that comment in the quoted
``expr:`` of each ``FAILED:`` entry; anything in the output that names no check is a
grader error, never a silent pass or fail (DESIGN.md, "Grading facts").
"""

from __future__ import annotations

import json
import os
import re
import subprocess
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from contract.errors import ToolFailure
from grader.tools import PROMTOOL

TIMEOUT_S = float(os.environ.get("ALERTFORGE_PROMTOOL_TIMEOUT", "120"))
"""Seconds a promtool run may take before the grade fails with a named error."""


class GraderError(ToolFailure):
    """promtool failed in a way no check explains (bad test file, crash, timeout)."""


def version() -> str:
    """``promtool --version`` first line (for CI logs and grade timings)."""
    out = subprocess.run([PROMTOOL, "--version"], capture_output=True, text=True, timeout=30,
                         check=False)
    return (out.stdout or out.stderr).splitlines()[0].strip()


def check_rules(path: Path, timeout: float | None = None) -> str | None:
    """``promtool check rules FILE``: None when it loads, else promtool's message."""
    timeout = min(30.0, TIMEOUT_S) if timeout is None else timeout
    try:
        out = subprocess.run([PROMTOOL, "check", "rules", str(path)], capture_output=True,
                             text=True, timeout=timeout, check=False)
    except subprocess.TimeoutExpired:
        return f"promtool check rules timed out after {timeout:g} s"
    if out.returncode == 0:
        return None
    lines = [ln.strip() for ln in (out.stdout + "\n" + out.stderr).splitlines()]
    lines = [ln for ln in lines if ln and not ln.startswith("Checking ") and ln != "FAILED:"]
    return "; ".join(lines).replace(str(path.parent) + "/", "") or "promtool rejected the file"


def check_rules_many(paths: list[Path], workers: int = 4, batch: int = 64) -> list[str | None]:
    """:func:`check_rules` for several files, results in input order.

    Files are checked ``batch`` at a time in one promtool process each (promtool prints
    ``Checking F`` / ``SUCCESS`` per file); only files that did not succeed are checked again
    one by one, for a message that names just them.
    """
    if not paths:
        return []
    chunks = [paths[i:i + batch] for i in range(0, len(paths), batch)]

    def passed_in(chunk: list[Path]) -> set[str]:
        try:
            out = subprocess.run([PROMTOOL, "check", "rules", *map(str, chunk)], capture_output=True,
                                 text=True, timeout=min(30.0, TIMEOUT_S) * 4, check=False)
        except subprocess.TimeoutExpired:
            return set()
        ok, current = set(), None
        for line in out.stdout.splitlines():
            if line.startswith("Checking "):
                current = line[len("Checking "):].strip()
            elif current and line.strip().startswith("SUCCESS"):
                ok.add(current)
        return ok

    with ThreadPoolExecutor(max_workers=workers) as pool:
        succeeded = set().union(*pool.map(passed_in, chunks))
        retry = [p for p in paths if str(p) not in succeeded]
        messages = dict(zip(map(str, retry), pool.map(check_rules, retry)))
    return [None if str(p) in succeeded else messages[str(p)] for p in paths]



def tagged(expr: str, kind: str, check_id: str) -> str:
    """The expression with a trailing PromQL comment that names the check (or its witness)."""
    return f"{expr}\n# {kind} {check_id}"


@dataclass
class Failure:
    """One failing ``promql_expr_test``: the check it belongs to, and promtool's exp/got text."""

    kind: str  # "check" or "witness"
    check_id: str
    time: str
    exp: str
    got: str


_EXPR = re.compile(r'^\s*expr: (".*"), time: (\S+?),?\s*$')
_ALERT = re.compile(r"^\s*alertname: (\S+?), time: (\S+?),?\s*$")


def parse_failures(output: str) -> tuple[list[Failure], list[str]]:
    """Split promtool test output into attributed failures and unattributed lines.

    Returns ``(failures, stray)``: ``stray`` holds every non-empty line that is neither a
    header, ``SUCCESS``/``FAILED:``, nor part of an attributed failure (any stray line
    means the grade cannot be trusted).
    """
    failures: list[Failure] = []
    stray: list[str] = []
    current: Failure | None = None
    for line in output.splitlines():
        text = line.strip()
        if (not text or text.startswith("Unit Testing:") or text in ("SUCCESS", "FAILED:")
                or re.fullmatch(r"name: \S+,", text)):  # a test group's name heads its failures
            current = None
            continue
        alert = _ALERT.match(line)
        if alert:
            current = Failure("alert", f"{alert.group(1)}@{duration_minutes(alert.group(2))}m",
                              alert.group(2), "", "")
            failures.append(current)
            continue
        match = _EXPR.match(line)
        if match:
            try:
                expr = json.loads(match.group(1))
            except json.JSONDecodeError:
                stray.append(text)
                current = None
                continue
            tag = re.search(r"\n# (check|witness) (\S+)\s*$", expr)
            if not tag:
                stray.append(text)
                current = None
                continue
            current = Failure(tag.group(1), tag.group(2), match.group(2), "", "")
            failures.append(current)
            continue
        if current is not None and text.startswith("exp:"):
            current.exp = text[4:].strip()
            continue
        if current is not None and text.startswith("got:"):
            current.got = text[4:].strip()
            continue
        if current is not None and current.got and not text.startswith(("exp:", "got:")):
            # a long got: continues on following lines in some versions
            current.got += " " + text
            continue
        stray.append(text)
    return failures, stray


_SAMPLE = re.compile(r"\{([^{}]*)\}\s*=?>?\s*([-+0-9.eE]+|NaN|[+-]?Inf)?")
_LABEL = re.compile(r'([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"')


def duration_minutes(text: str) -> int:
    """promtool's printed durations (``1h26m``, ``45m``, ``0s``) in whole minutes."""
    total = 0.0
    for number, unit in re.findall(r"(\d+(?:\.\d+)?)(ms|h|m|s)", text):
        total += float(number) * {"h": 60, "m": 1, "s": 1 / 60, "ms": 1 / 60000}[unit]
    return round(total)


def parse_alerts(got: str) -> list[tuple[dict[str, str], dict[str, str]]]:
    """Firing alerts in an ``alert_rule_test`` failure's ``got:`` text: ``(labels, annotations)``."""
    alerts = []
    for labels, notes in re.findall(r"Labels:\{([^{}]*)\}\s*Annotations:\{([^{}]*)\}", got):
        unescape = lambda v: bytes(v, "utf-8").decode("unicode_escape")
        alerts.append(({k: unescape(v) for k, v in _LABEL.findall(labels)},
                       {k: unescape(v) for k, v in _LABEL.findall(notes)}))
    return alerts


def parse_samples(got: str) -> list[tuple[dict[str, str], str]]:
    """Label sets and values in promtool's ``got:`` text (``{a="b", ...} 1E+00, ...``).

    Lenient by design: it reads the label-set notation that every Prometheus version
    prints; values are returned as text. ``nil`` gives an empty list.
    """
    if got.strip() in ("nil", "[]", ""):
        return []
    samples = []
    for match in _SAMPLE.finditer(got):
        labels = {k: bytes(v, "utf-8").decode("unicode_escape") for k, v in _LABEL.findall(match.group(1))}
        samples.append((labels, match.group(2) or ""))
    return samples


def test_file(rule_files: list[Path], group_order: list[str], groups: list[dict],
              evaluation_interval: str) -> str:
    """A ``promtool test rules`` file (as JSON, which YAML includes): one test group per scenario.

    ``groups`` are ``{"name", "input_series", "promql_expr_test"}`` dicts; the file sets
    ``interval`` on every group (2.42 has no default) and ``group_eval_order``.
    """
    doc = {
        "rule_files": [str(p) for p in rule_files],
        "evaluation_interval": evaluation_interval,
        "group_eval_order": group_order,
        "tests": [
            {"name": g["name"], "interval": evaluation_interval,
             "input_series": g["input_series"], "promql_expr_test": g["promql_expr_test"],
             **({"alert_rule_test": g["alert_rule_test"]} if g.get("alert_rule_test") else {})}
            for g in groups
        ],
    }
    if not group_order:
        del doc["group_eval_order"]
    return json.dumps(doc, indent=1)  # JSON is YAML, and far faster to write than PyYAML's emitter


def run_tests(test_path: Path, timeout: float | None = None) -> list[Failure]:
    """Run ``promtool test rules`` on one file and return its attributed failures.

    Raises:
        GraderError: promtool timed out, or printed something no check explains.
    """
    timeout = TIMEOUT_S if timeout is None else timeout
    try:
        out = subprocess.run([PROMTOOL, "test", "rules", test_path.name], cwd=test_path.parent,
                             capture_output=True, text=True, timeout=timeout, check=False)
    except subprocess.TimeoutExpired:
        raise GraderError(f"promtool test rules timed out after {timeout:g} s") from None
    failures, stray = parse_failures(out.stdout + "\n" + out.stderr)
    if stray:
        raise GraderError("promtool output not attributable to a check: " + " | ".join(stray[:5]))
    if out.returncode != 0 and not failures:
        raise GraderError(f"promtool test rules exited {out.returncode} with no failing check")
    return failures
