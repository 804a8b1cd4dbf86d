"""The causes of failing promql checks: the alert's state around the check time, its labels, the expression's value, the threshold and ``for`` asked.

The alert's state comes from the state witnesses the replay ran beside every alert check
(:mod:`grader.state_witnesses`); Value and Cardinality causes from the check's own witness.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

from grader.causes.constructs import rule_constructs
from grader.causes.edits import edit_note
from grader.preservation import duration_seconds
from grader.probes.labels import format_labels
from grader.promql_split import split_comparison
from grader.state_witnesses import ALERT_FAMILIES, alert_name

SAMPLE_FAMILIES = frozenset({"Value", "Cardinality"})
__all__ = ["ALERT_FAMILIES", "SAMPLE_FAMILIES", "alert_cause", "sample_cause"]


def _minutes(seconds: float) -> str:
    return f"{seconds / 60:g}m"


def number_text(text: str) -> str:
    """A sample value as promtool prints it (``2.9951980792316923E-01``) in 4 significant
    digits (``0.2995``); ``NaN``, ``+Inf`` and text that is no number unchanged."""
    try:
        value = float(text)
    except ValueError:
        return text
    return text if not math.isfinite(value) else f"{value:.4g}"


def _service(probe: dict) -> str | None:
    match = re.search(r'service="([^"]+)"', probe.get("expr", ""))
    return match.group(1) if match else None


def _requirement_asks(requirement: dict | None) -> dict:
    """``{threshold, for}`` the requirement's targets ask for (absent keys left out)."""
    targets = (requirement or {}).get("targets") or {}
    asks = {}
    if "threshold" in targets:
        asks["threshold"] = targets["threshold"]
    if "for_s" in targets:
        asks["for"] = _minutes(float(targets["for_s"]))
    return asks


def _state_facts(witness: dict, rule: dict, eval_time: str, service: str | None) -> dict:
    """The alert's state at ``eval_time``: series by state with active-since minutes, and the
    expression's value for ``service`` (every series when the check names none or none has it)."""
    since = {format_labels(lb): float(v) for lb, v in witness.get("since", []) if v}
    series = []
    for labels, _ in witness.get("alerts", []):
        key = format_labels(labels)
        entry = {"labels": {k: v for k, v in labels.items() if k not in ("__name__", "alertstate")},
                 "state": labels.get("alertstate", "firing")}
        if key in since:
            entry["active_since"] = _minutes(since[key])
        series.append(entry)
    split = split_comparison(str(rule.get("expr") or ""))
    if service is None:
        services = {s["labels"].get("service") for s in series if s["labels"].get("service")}
        service = next(iter(services)) if len(services) == 1 else None
    return {"at": eval_time, "series": series,
            "firing": sum(1 for s in series if s["state"] == "firing"),
            "pending": sum(1 for s in series if s["state"] == "pending"),
            "value": [{"labels": format_labels(lb), "value": number_text(v)}
                      for lb, v in _for_service(witness.get("value", []), service)][:8],
            "comparison": f"{split[1]} {split[2]}" if split else None,
            "rule_for": str(rule.get("for") or "0s"), "expr": str(rule.get("expr") or "")}


def _for_service(samples: list, service: str | None) -> list:
    mine = [(lb, v) for lb, v in samples if service and lb.get("service") == service]
    return mine or samples


def _values_text(facts: dict) -> str:
    shown = "; ".join(f"{v['labels']} = {v['value']}" for v in facts["value"][:3])
    return shown or "no series at all (its input series are absent or stale)"


def alert_cause(check: dict, rules: list[dict], witness: dict | None,
                requirement: dict | None, pristine_groups: dict | None = None) -> dict:
    """The cause (contract.grade.Cause as a dict) of a failing Fire, Silent, Timing, Dup or
    Label check from its witnesses (:func:`replay_witnesses`). ``facts``: ``{alert, at,
    series: [{labels, state, active_since}], firing, pending, value: [{labels, value}],
    comparison, rule_for, expr, asks: {threshold, for}}``, and ``edited`` (the rules the
    change added or changed, :func:`grader.causes.edits.edit_note`) when the change edited
    rules other than this alert's; ``pristine_groups`` (group name -> group) is what the
    edits are measured against (None: not measured)."""
    probe, family = check["probe"], check["family"]
    name = alert_name(probe) or "the alert"
    rule = next((r for r in rules if r.get("alert") == name), None)
    asks = _requirement_asks(requirement)
    if rule is None:  # what the change added instead is named for every family (causes.explain)
        return {"kind": "alert-undefined", "facts": {"alert": name, "asks": asks},
                "summary": f"no loadable rule file defines an alerting rule named {name}"}
    facts = {"alert": name, **_state_facts(witness or {}, rule, probe["eval_time"], _service(probe)),
             "asks": asks}
    constructs = rule_constructs(rule)
    if constructs:
        facts["constructs"] = [c["construct"] for c in constructs]
    edited, edit = edit_note(name, rule, rules, pristine_groups) if pristine_groups is not None else ([], "")
    if edit:
        facts["edited"] = edited
    kind, summary = _alert_summary(family, name, facts)
    notes = [c["note"] for c in constructs if _relevant(c["construct"], family, kind)] + ([edit] if edit else [])
    if any(c["construct"] == "or" for c in constructs) and kind == "alert-no-comparison":
        summary = summary.replace("the expression has no comparison, so every series it returns "
                                  "fires", "no comparison at the top level")
    return {"kind": kind, "summary": summary + "".join(f"; {n}" for n in notes), "facts": facts}


def _relevant(construct: str, family: str, kind: str) -> bool:
    """Whether a construct explains this failure: ``bool`` / ``or`` an alert that fires when
    it should not, a templated label a Label or Dup failure, ``keep_firing_for`` a firing or
    timing failure."""
    firing_kinds = ("alert-firing", "alert-no-comparison", "alert-for-too-short")
    if construct in ("bool", "or"):
        return kind in firing_kinds
    if construct == "template-label":
        return family in ("Label", "Dup")
    return kind in firing_kinds


def _asked(facts: dict) -> str:
    asks = facts["asks"]
    parts = ([f"threshold {asks['threshold']}"] if "threshold" in asks else []) + (
        [f"for {asks['for']}"] if "for" in asks else [])
    return f" (the requirement asks {', '.join(parts)})" if parts else ""


@dataclass(frozen=True)
class _AlertState:
    """What an alert check's summary reads: the alert's name, its state facts, the series
    firing and pending, the condition in words and the rule's ``for`` in words."""

    name: str
    facts: dict
    firing: list
    pending: list
    condition: str
    shown_for: str


def _alert_summary(family: str, name: str, facts: dict) -> tuple[str, str]:
    """(kind, summary) of an alert check from the alert's state facts."""
    at, rule_for = facts["at"], facts["rule_for"]
    firing = [s for s in facts["series"] if s["state"] == "firing"]
    pending = [s for s in facts["series"] if s["state"] == "pending"]
    comparison = facts["comparison"]
    condition = (f"value {_values_text(facts)}, condition {comparison}" if comparison
                 else f"the expression has no comparison, so every series it returns fires "
                      f"(value {_values_text(facts)})")
    shown_for = "no for:" if not duration_seconds(rule_for) else f"for: {rule_for}"
    state = _AlertState(name, facts, firing, pending, condition, shown_for)
    if family in ("Silent", "Timing") and firing:
        return _firing_too_early(family, state)
    if family == "Dup" and firing:
        return _duplicate_series(state)
    if family == "Label" and firing:
        return "alert-label-mismatch", (
            f"{name} fires at {at} with labels {format_labels(firing[0]['labels'])}")
    if pending:
        return _still_pending(state)
    if firing:
        return "alert-firing-other-labels", (
            f"{name} fires at {at} only with labels "
            + "; ".join(format_labels(s["labels"]) for s in firing[:3]))
    return "alert-inactive", (f"{name} is inactive at {at}: {condition}" + _asked(facts))


def _firing_too_early(family: str, state: _AlertState) -> tuple[str, str]:
    """(kind, summary) of a Silent or Timing check whose alert fires: no comparison, a ``for``
    shorter than asked (or any, for Timing), or firing when it should not."""
    facts, firing = state.facts, state.firing
    at, rule_for, comparison = facts["at"], facts["rule_for"], facts["comparison"]
    since = firing[0].get("active_since")
    fired = ""
    if since is not None and duration_seconds(rule_for) is not None:
        start = float(since.rstrip("m")) + duration_seconds(rule_for) / 60
        fired = f", firing since {start:g}m (active since {since}, the rule has {state.shown_for})"
    asked_for = duration_seconds(facts["asks"]["for"]) if "for" in facts["asks"] else None
    short = asked_for is not None and (duration_seconds(rule_for) or 0) < asked_for
    kind = "alert-no-comparison" if not comparison else (
        "alert-for-too-short" if family == "Timing" or short else "alert-firing")
    lead = ""
    if kind == "alert-for-too-short" and "for" in facts["asks"]:
        lead = (f"the rule has no for: (the requirement asks {facts['asks']['for']}): "
                if not duration_seconds(rule_for) else
                f"the rule has for: {rule_for}, shorter than the {facts['asks']['for']} asked: ")
    if lead:  # the lead already names the rule's for
        fired = fired.replace(f", the rule has {state.shown_for})", ")")
    return kind, (f"{lead}{state.name} fires at {at} ({len(firing)} series){fired}; "
                  f"{state.condition}" + _asked(facts))


def _duplicate_series(state: _AlertState) -> tuple[str, str]:
    """(kind, summary) of a Dup check with several firing series, and the labels they differ
    by (also set as the facts' ``distinct_by``)."""
    firing = state.firing
    varying = sorted(k for k in set().union(*(s["labels"] for s in firing))
                     if len({s["labels"].get(k) for s in firing}) > 1) if firing else []
    state.facts["distinct_by"] = varying
    return "alert-duplicate-series", (
        f"{len(firing)} firing series of {state.name} at {state.facts['at']}, "
        f"one per {', '.join(varying) or 'series'} "
        f"(the expression keeps {'that label' if varying else 'them apart'}; aggregate it away): "
        + "; ".join(format_labels(s["labels"]) for s in firing[:4]))


def _still_pending(state: _AlertState) -> tuple[str, str]:
    """(kind, summary) of an alert that is pending at the check time, and when it fires."""
    facts = state.facts
    rule_for = facts["rule_for"]
    since = state.pending[0].get("active_since")
    fires = ""
    if since is not None and duration_seconds(rule_for) is not None:
        fires = f", so it fires at {float(since.rstrip('m')) + duration_seconds(rule_for) / 60:g}m"
    return "alert-pending", (f"{state.name} is pending at {facts['at']}, active since "
                             f"{since or '?'}, and the rule's {state.shown_for} has not "
                             f"elapsed{fires}; {state.condition}" + _asked(facts))


def sample_cause(check: dict, witness_samples: list[tuple[dict, str]]) -> dict:
    """The cause of a failing Value or Cardinality check: expected vs got samples with their
    label sets (the replay's witness). ``facts``: ``{expr, at, expected, got: [{labels, value}]}``."""
    probe = check["probe"]
    got = [{"labels": format_labels(lb), "value": number_text(v)} for lb, v in witness_samples]
    expected = probe.get("expected_value", [e.get("value") for e in probe.get("exp_samples", [])])
    facts = {"expr": probe.get("witness") or probe["expr"], "at": probe["eval_time"],
             "expected": expected, "got": got[:8], "series": len(got)}
    if not got:
        return {"kind": "value-no-series", "facts": facts,
                "summary": f"{facts['expr']} gives no series at {probe['eval_time']} "
                           f"(expected {expected})"}
    if check["family"] == "Cardinality" or len(got) > 1:
        return {"kind": "value-series-count", "facts": facts,
                "summary": f"{facts['expr']} gives {len(got)} series at {probe['eval_time']}: "
                           + "; ".join(f"{g['labels']} = {g['value']}" for g in got[:4])}
    return {"kind": "value-mismatch", "facts": facts,
            "summary": f"{facts['expr']} is {got[0]['value']} for {got[0]['labels']} at "
                       f"{probe['eval_time']}; expected {expected}"}
