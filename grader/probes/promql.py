"""The promql probe: a check read from the promtool replay, with its failure in words.

Each promql check is an expression evaluated at one time of one scenario, expecting given
samples (:mod:`grader.promql_replay` runs them). A failing check's detail is built from its
family (Fire, Silent, Dup, Label, Value, ...) and its witness's samples.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from grader import promtool
from grader.probes.evidence import Evidence, Outcome
from grader.probes.labels import format_labels
from grader.promql_replay import witness_expr

VARIANTS = ("integrated", "reference")


def promql(check: dict, evidence: Evidence) -> Outcome:
    """Passed when promtool found the check's samples in the integrated replay; the outcome
    also carries its pass in each replay variant (what scoring the reference records reads)."""
    variant_pass = {}
    for variant in VARIANTS:
        entry = evidence.promql.get(variant, {}).get(check["id"], {})
        variant_pass[variant] = 0.0 if "check" in entry else 1.0
    entry = evidence.promql.get("integrated", {}).get(check["id"], {})
    passed = "check" not in entry
    detail = ""
    if not passed:
        try:
            detail = _promql_detail(check, entry)
        except (KeyError, ValueError, TypeError, IndexError):  # an unusual catalog check
            detail = (f"expected {entry['check'].exp} at {check['probe']['eval_time']}; "
                      f"got {entry['check'].got}")
    return Outcome(passed, detail, reproduce=_reproduce_promql(check, evidence.catalog),
                   variant_pass=variant_pass)


@dataclass(frozen=True)
class _Failing:
    """A failing promql check as its detail reads it: the probe, promtool's entry, the time in
    words, the alert's name and the witness's samples (all, firing, pending)."""

    probe: dict
    entry: dict
    at: str
    name: str
    witness: list
    firing: list
    pending: list


def _promql_detail(check: dict, entry: dict) -> str:
    """Expected vs got, in words, from a failing check and its witness."""
    probe = check["probe"]
    at = f"at {probe['eval_time']} ({probe['scenario']})"
    witness = promtool.parse_samples(entry["witness"].got) if "witness" in entry else []
    firing = [labels for labels, _ in witness if labels.get("alertstate", "firing") == "firing"]
    pending = [labels for labels, _ in witness if labels.get("alertstate") == "pending"]
    family = check["family"]
    alert = re.search(r'alertname="([^"]+)"', probe["expr"])
    name = alert.group(1) if alert else ""
    failing = _Failing(probe, entry, at, name, witness, firing, pending)
    if family in ("Silent",) or (family == "Timing" and not probe["exp_samples"]):
        return _silent_detail(failing)
    if family in ("Fire", "Timing"):
        return _fire_detail(failing)
    if family == "Dup":
        return _dup_detail(failing)
    if family == "Label":
        return _label_detail(failing)
    if family in ("Value", "Cardinality"):
        return _value_detail(failing, family)
    return f"expected {entry['check'].exp} {at}; got {entry['check'].got}"


def _silent_detail(failing: _Failing) -> str:
    """A Silent check (or a Timing check expecting nothing) that found firing alerts."""
    got = promtool.parse_samples(failing.entry["check"].got)
    return (f"expected no firing {failing.name} {failing.at}; got {len(got)} firing: "
            + ", ".join(format_labels(lb) for lb, _ in got[:5]))


def _fire_detail(failing: _Failing) -> str:
    """A Fire or Timing check whose alert was not firing for the service (elsewhere, pending,
    or not at all)."""
    name, at, probe = failing.name, failing.at, failing.probe
    if failing.firing:
        return (f"expected {name} firing for {_service(probe)} {at}; got it firing only with "
                + ", ".join(format_labels(lb) for lb in failing.firing[:3]))
    if failing.pending:
        return f"expected {name} firing {at}; got it pending (its for has not elapsed)"
    return f"expected {name} firing for {_service(probe)} {at}; got no firing alert"


def _dup_detail(failing: _Failing) -> str:
    """A Dup check: none or several firing alerts, with the labels the several differ by."""
    name, at, firing = failing.name, failing.at, failing.firing
    if not firing:
        return f"expected exactly 1 firing {name} for {_service(failing.probe)} {at}; got none"
    varying = sorted(k for k in set().union(*firing)
                     if len({lb.get(k) for lb in firing}) > 1)
    return (f"expected exactly 1 firing {name} for {_service(failing.probe)} {at}; "
            f"got {len(firing)}, "
            f"distinct by {', '.join(varying) or 'nothing visible'} "
            f"({'; '.join(format_labels(lb) for lb in firing[:4])})")


def _label_detail(failing: _Failing) -> str:
    """A Label check: the value the firing alerts carry for the one label the check wants."""
    want = dict(re.findall(r'(\w+)="([^"]*)"', failing.probe["expr"]))
    for key in ("alertname", "alertstate", "service"):
        want.pop(key, None)
    if not failing.firing:
        return f"expected {failing.name} firing {failing.at} to read its labels; got no firing alert"
    (key, value), = want.items()
    got = sorted({lb.get(key, "") for lb in failing.firing})
    shown = ", ".join(f"{key}={g}" if g else f"no {key} label" for g in got)
    return f"expected label {key}={value} on the firing {failing.name}; got {shown}"


def _value_detail(failing: _Failing, family: str) -> str:
    """A Value or Cardinality check: the wanted value (or one series) against the witness's
    series and values; promtool's own exp/got for a check without a stated value."""
    probe, at = failing.probe, failing.at
    values = [f"{format_labels(lb)} = {v}" for lb, v in failing.witness]
    want = _wanted_value(family, probe.get("expected_value"))
    if want is None:
        return (f"expected {probe['expr']} {at} to give {failing.entry['check'].exp}; "
                f"got {failing.entry['check'].got}")
    record = witness_expr(probe)
    return (f"expected {record} for {_service(probe)} {at} to be {want}; got "
            + ("; ".join(values[:5]) if values else "no series"))


def _wanted_value(family: str, expected: object) -> str | None:
    """What a Value or Cardinality check wants, in words; None for a check without a stated
    value."""
    if family == "Cardinality":
        return "exactly one series"
    if isinstance(expected, list):
        return f"a value in [{expected[0]:.6g}, {expected[1]:.6g}]"
    if isinstance(expected, (int, float)):
        return f"{expected:.6g}"
    if expected == "NaN":
        return "NaN (0/0)"
    return None


def _service(probe: dict) -> str:
    """``service=X`` from the probe expression's service matcher, else "the service"."""
    match = re.search(r'service="([^"]+)"', probe["expr"])
    return f"service={match.group(1)}" if match else "the service"


def _quote(text: str) -> str:
    """A YAML single-quoted scalar."""
    return "'" + str(text).replace("'", "''") + "'"


def _reproduce_promql(check: dict, catalog: dict) -> str:
    """A promtool test file that shows this check's result by hand (input series, time, expr)."""
    probe = check["probe"]
    interval = catalog.get("evaluation_interval", "1m")
    lines = ["# promtool test rules repro.yml  (next to the workspace's rules/)",
             "rule_files: ['rules/*.yml']", f"evaluation_interval: {interval}", "tests:",
             f"- interval: {interval}", "  input_series:"]
    for item in catalog.get("input_series", {}).get(probe["scenario"], []):
        lines.append(f"  - series: {_quote(item['series'])}")
        lines.append(f"    values: {_quote(item['values'])}")
    expected = ", ".join(f"{{labels: {_quote(e['labels'])}, value: {e['value']}}}"
                         for e in probe["exp_samples"])
    lines += ["  promql_expr_test:", f"  - expr: {_quote(probe['expr'])}",
              f"    eval_time: {probe['eval_time']}", f"    exp_samples: [{expected}]"]
    return "\n".join(lines) + "\n"
