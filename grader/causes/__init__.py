"""Causes of failing checks (issue 15): the probe kind's cause function, fed from what the real tools print, stored beside ``detail``.

:func:`explain` runs after every probe, only on checks that failed, and sets each one's
``cause`` (contract.grade.Cause as a dict). A check no cause can be given for gets kind
``none`` and a ``why`` (:data:`NO_CAUSE`, per family), so the reasons can be counted.
"""

from __future__ import annotations

import time
from concurrent.futures import ThreadPoolExecutor

from contract.grade import CAUSE_NONE
from grader import routing
from grader.causes.alert_state import ALERT_FAMILIES, SAMPLE_FAMILIES, alert_cause, sample_cause
from grader.causes.edits import edit_note
from grader.causes.inhibit import inhibit_cause
from grader.causes.route import route_cause
from grader.causes.static import (
    annotation_cause,
    preservation_cause,
    receiver_cause,
    receiver_kept_cause,
    route_timing_cause,
    rule_count_cause,
    static_label_cause,
    syntax_cause,
    tamper_cause,
    unloaded_cause,
)
from grader.probes.evidence import Evidence
from grader.probes.routing import chain_labels
from grader.promtool import parse_samples
from grader.state_witnesses import state_witnesses
from grader.workspace import ALERTMANAGER_PATH

NO_CAUSE = {
    "unknown-probe": "no cause is computed for this probe kind yet",
    "tool-failed": "the tool that would say why failed",
    "error": "the cause could not be computed from this workspace",
}
"""The reasons a failing check has no cause (``why`` of kind ``none``)."""


def no_cause(reason: str, extra: str = "") -> dict:
    """A cause of kind ``none``: ``why`` is :data:`NO_CAUSE` [reason] (plus ``extra``)."""
    why = NO_CAUSE[reason] + (f": {extra}" if extra else "")
    return {"kind": CAUSE_NONE, "summary": why, "why": why, "facts": {"reason": reason}}


def _am_problems(evidence: Evidence) -> list[dict]:
    problems = [e for e in evidence.grading.syntax_errors if e["file"] == ALERTMANAGER_PATH]
    return problems or [{"file": ALERTMANAGER_PATH,
                         "message": evidence.inhibit_error or evidence.grading.am_error or "?"}]


def _route_labels(check: dict, evidence: Evidence) -> dict[str, str]:
    probe = check["probe"]
    return probe["labels"] if probe["type"] == "route" else chain_labels(probe, evidence.rules)


def _route_causes(items: list[tuple[dict, dict]], evidence: Evidence) -> dict[str, dict]:
    """Causes of failing route and route-chain checks, amtool's ``--tree`` run for each."""
    am_path = evidence.grading.am_path
    resolvable = [(c, i) for c, i in items if evidence.routes.get(c["id"]) is not None and am_path]
    out = {c["id"]: (unloaded_cause(_am_problems(evidence), "alertmanager")
                     if evidence.alertmanager is None else None) for c, _ in items}

    def tree(check: dict) -> list[str] | None:
        try:
            return evidence.grading.cache.route_tree(am_path, _route_labels(check, evidence))
        except routing.RoutingError:
            return None

    with ThreadPoolExecutor(max_workers=4) as pool:
        trees = list(pool.map(tree, [c for c, _ in resolvable]))
    for (check, _), lines in zip(resolvable, trees):
        probe = check["probe"]
        out[check["id"]] = route_cause(
            _route_labels(check, evidence), set(probe.get("expect") or []),
            set(evidence.routes[check["id"]]), set(probe.get("forbid") or []),
            evidence.alertmanager, lines or [])
    for check, item in items:
        if out[check["id"]] is None:  # the rule is missing, or amtool failed
            if not any(r.get("alert") == probe_alert(check) for r in evidence.rules):
                out[check["id"]] = {"kind": "alert-undefined", "facts": {"alert": probe_alert(check)},
                                    "summary": item["detail"]}
            else:
                out[check["id"]] = no_cause("tool-failed", evidence.grading.am_error or "")
    return out


def probe_alert(check: dict) -> str | None:
    """The alert rule a route-chain probe names (None for other probes)."""
    return check["probe"].get("alert")


def _promql_causes(items: list[tuple[dict, dict]], evidence: Evidence) -> dict[str, dict]:
    """Causes of failing promql checks, from the state witnesses and the checks' witnesses."""
    reqs = {r["id"]: r for r in evidence.catalog.get("requirements", [])}
    out = {}
    for check, _ in items:
        if check["family"] in ALERT_FAMILIES:
            out[check["id"]] = alert_cause(check, evidence.rules,
                                           state_witnesses(evidence.promql, check),
                                           reqs.get(check["req"]), evidence.pristine_groups)
        elif check["family"] in SAMPLE_FAMILIES:
            entry = evidence.promql.get("integrated", {}).get(check["id"], {})
            got = entry.get("witness") or entry.get("check")
            out[check["id"]] = sample_cause(check, parse_samples(got.got) if got else [])
        else:
            out[check["id"]] = no_cause("unknown-probe", f"promql check of family {check['family']}")
    return out


def _one_cause(check: dict, item: dict, evidence: Evidence) -> dict:
    """The cause of one failing check of a probe kind that needs no batched tool run."""
    probe, kind = check["probe"], check["probe"]["type"]
    grading = evidence.grading
    if kind == "inhibit":
        if evidence.alertmanager is None or evidence.inhibit_error:
            return unloaded_cause(_am_problems(evidence), "alertmanager")
        return inhibit_cause(check, evidence.inhibit_rules)
    if kind == "syntax":
        problems = [e for e in grading.syntax_errors
                    if (e["file"] == ALERTMANAGER_PATH) == (probe["what"] == "alertmanager")]
        return syntax_cause(problems)
    if kind == "tamper":
        return tamper_cause(item["detail"])
    if kind == "preserve":
        return preservation_cause(probe, evidence.rules, evidence.alertmanager)
    if kind == "static_label":
        return static_label_cause(probe, grading.rule_entries())
    if kind == "rule_count":
        return rule_count_cause(probe, grading.rule_entries())
    if kind in ("receiver", "receiver_removed", "route_timing") and evidence.alertmanager is None:
        return unloaded_cause(_am_problems(evidence), "alertmanager")
    if kind == "receiver":
        return receiver_cause(probe, evidence.alertmanager)
    if kind == "receiver_removed":
        return receiver_kept_cause(probe["name"], evidence.alertmanager, item["detail"])
    if kind == "route_timing":
        return route_timing_cause(item["detail"], probe["labels"])
    if kind == "annotation":
        return annotation_cause(probe, evidence.rules, item["detail"])
    return no_cause("unknown-probe", kind)


def _name_the_edits(evidence: Evidence, items: list[dict]) -> None:
    """Every ``alert-undefined`` cause, of any family, names what the change added or edited
    instead (:func:`grader.causes.edits.edit_note`), once per grade."""
    notes: dict[str, tuple[list[str], str]] = {}
    for item in items:
        cause = item.get("cause") or {}
        name = (cause.get("facts") or {}).get("alert")
        if cause.get("kind") != "alert-undefined" or not isinstance(name, str) or "edited" in cause["facts"]:
            continue
        if name not in notes:
            notes[name] = edit_note(name, None, evidence.rules, evidence.pristine_groups)
        edited, note = notes[name]
        if note:
            cause["facts"]["edited"] = edited
            cause["summary"] += f"; {note}"


def explain(evidence: Evidence, results: list[dict]) -> None:
    """Set ``cause`` on every failing item of ``results`` (the GradeResult ``checks``, in
    catalog order); passing and not-applicable checks are left as they are. Adds
    ``causes_s`` to the grading's timings. Never raises for a cause it cannot compute: that
    check gets kind ``none`` with reason ``error`` and the exception's message."""
    started = time.perf_counter()
    failing = [(c, i) for c, i in zip(evidence.catalog["checks"], results) if i["passed"] is False]
    batched: dict[str, dict] = {}
    routes = [(c, i) for c, i in failing if c["probe"]["type"] in ("route", "route_chain")]
    promql = [(c, i) for c, i in failing if c["probe"]["type"] == "promql"]
    if routes:
        batched |= _route_causes(routes, evidence)
    if promql:
        batched |= _promql_causes(promql, evidence)
    for check, item in failing:
        try:
            item["cause"] = batched.get(check["id"]) or _one_cause(check, item, evidence)
        except (KeyError, ValueError, TypeError, IndexError, AttributeError, StopIteration) as err:
            item["cause"] = no_cause("error", f"{type(err).__name__}: {err}")
    _name_the_edits(evidence, [item for _, item in failing])
    evidence.grading.timings["causes_s"] = time.perf_counter() - started
