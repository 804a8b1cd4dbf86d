"""The probe table: a check's probe kind (``probe.type``) -> the function that evaluates it.

A probe is ``(check, evidence) -> Outcome`` (:mod:`grader.probes.evidence`); one module per
family of probes. Adding a probe kind means writing one such function and adding it here.
"""

from __future__ import annotations

from collections.abc import Callable
from types import MappingProxyType

from contract.errors import BadInput
from grader.probes import alerts, inhibition, preservation, promql, routing, syntax
from grader.probes.evidence import Evidence, Outcome

Probe = Callable[[dict, Evidence], Outcome]

PROBES: MappingProxyType[str, Probe] = MappingProxyType({
    "promql": promql.promql,
    "static_label": alerts.static_label,
    "annotation": alerts.annotation,
    "rule_count": alerts.rule_count,
    "route": routing.route,
    "route_chain": routing.route_chain,
    "receiver": routing.receiver,
    "receiver_removed": routing.receiver_removed,
    "route_timing": routing.route_timing,
    "inhibit": inhibition.inhibit,
    "syntax": syntax.syntax,
    "preserve": preservation.preserve,
    "tamper": preservation.tamper,
})


def run_probes(evidence: Evidence) -> tuple[list[dict], dict[str, dict[str, float]]]:
    """Every catalog check through its probe, in catalog order.

    Returns the GradeResult ``checks`` items (id, req, family, label, note, passed, detail,
    reproduce and, when the probe scores, score) and replay variant -> check id -> 1.0/0.0
    for the promql checks. Raises BadInput for a probe kind the table does not hold.
    """
    results = []
    variant_pass: dict[str, dict[str, float]] = {"integrated": {}, "reference": {}}
    for check in evidence.catalog["checks"]:
        kind = check["probe"]["type"]
        probe = PROBES.get(kind)
        if probe is None:
            raise BadInput(evidence.grading.task_dir / "tests" / "checks.json",
                           f"unknown probe type {kind!r}")
        outcome = probe(check, evidence)
        for variant, value in (outcome.variant_pass or {}).items():
            variant_pass[variant][check["id"]] = value
        item = {key: check[key] for key in ("id", "req", "family", "label", "note")}
        item.update(passed=outcome.passed, detail=outcome.detail, reproduce=outcome.reproduce)
        if outcome.score is not None:
            item["score"] = outcome.score
        results.append(item)
    return results, variant_pass
