"""The alert-state witness expressions the promtool replay adds for every alert check, so a failing one's cause needs no second promtool run.

For each (scenario, alert, eval time) an alert check reads, three expressions that expect
nothing, so promtool prints what they give (the device the replay uses for witnesses):
``ALERTS{alertname="X"}`` (state and labels), ``ALERTS_FOR_STATE{alertname="X"}`` (its
value is the Unix time the alert became active, Prometheus ``rules/alerting.go``; promtool's
test clock starts at 0) and the value side of the rule's top-level comparison
(:func:`grader.promql_split.split_comparison`). Folding them into the replay costs a few
instant queries per test group instead of re-evaluating every scenario.
"""

from __future__ import annotations

import re

from grader import promtool
from grader.promql_split import split_comparison

ALERT_FAMILIES = frozenset({"Fire", "Silent", "Timing", "Dup", "Label"})
WITNESSES = ("alerts", "since", "value")


def alert_name(probe: dict) -> str | None:
    """The alert a promql probe reads (``alertname="X"`` in its expression), or None."""
    match = re.search(r'alertname="([^"]+)"', probe.get("expr", ""))
    return match.group(1) if match else None


def witness_id(witness: str, scenario: str, alert: str, eval_time: str) -> str:
    """The replay id of one state witness (``~alerts|scenario|Alert|20m``); no whitespace."""
    return f"~{witness}|{scenario}|{alert}|{eval_time}".replace(" ", "_")


def alert_state_tests(checks: list[dict], rules: list[dict]) -> dict[str, list[dict]]:
    """Scenario -> the state witness tests (``promql_expr_test`` items expecting nothing) of
    every alert-family promql check whose alert the workspace defines, one set per (alert,
    eval time)."""
    by_name = {r.get("alert"): r for r in rules if r.get("alert")}
    out: dict[str, list[dict]] = {}
    seen: set[tuple[str, str, str]] = set()
    for check in checks:
        probe = check["probe"]
        name = alert_name(probe)
        if check.get("family") not in ALERT_FAMILIES or name not in by_name:
            continue
        key = (probe["scenario"], name, probe["eval_time"])
        if key in seen:
            continue
        seen.add(key)
        expr = str(by_name[name].get("expr") or "")
        split = split_comparison(expr)
        exprs = {"alerts": f'ALERTS{{alertname="{name}"}}',
                 "since": f'ALERTS_FOR_STATE{{alertname="{name}"}}',
                 "value": split[0] if split else expr}
        out.setdefault(probe["scenario"], []).extend(
            {"expr": promtool.tagged(text, "witness", witness_id(w, *key)),
             "eval_time": probe["eval_time"], "exp_samples": []} for w, text in exprs.items())
    return out


def state_witnesses(promql: dict[str, dict], check: dict) -> dict[str, list]:
    """Witness (``alerts``, ``since``, ``value``) -> samples ``[(labels, value text)]`` of one
    alert check, read from the integrated replay results (empty when a witness gave nothing)."""
    probe = check["probe"]
    key = (probe["scenario"], alert_name(probe) or "", probe["eval_time"])
    integrated = promql.get("integrated", {})
    out = {}
    for witness in WITNESSES:
        failure = integrated.get(witness_id(witness, *key), {}).get("witness")
        out[witness] = promtool.parse_samples(failure.got) if failure else []
    return out
