"""Routing probes: the receivers amtool resolves for a label set, an alert rule's own labels, a receiver's integrations."""

from __future__ import annotations

import time

from grader import reward, routing
from grader.grading_pass import GradingPass
from grader.probes.evidence import Evidence, Outcome
from grader.probes.labels import format_labels

_ROUTES_TEST = "amtool config routes test --config.file=alertmanager/alertmanager.yml "


def resolve_routes(grading: GradingPass, rules: list[dict]) -> dict[str, list[str]]:
    """Check id -> receivers for every ``route`` check and every ``route_chain`` check whose
    alert rule exists, in one batch of ``amtool config routes test`` calls. Empty when
    alertmanager.yml does not load; when amtool fails, ``grading.am_error`` says why and no
    check gets receivers. Adds ``amtool_s`` to ``grading.timings``."""
    route_checks = [c for c in grading.catalog["checks"] if c["probe"]["type"] == "route"
                    or (c["probe"]["type"] == "route_chain"
                        and any(r.get("alert") == c["probe"]["alert"] for r in rules))]
    resolved: list[list[str] | None] = [None] * len(route_checks)
    started = time.perf_counter()
    if grading.am_path and route_checks:
        label_sets = [c["probe"]["labels"] if c["probe"]["type"] == "route"
                      else chain_labels(c["probe"], rules) for c in route_checks]
        try:
            resolved = grading.cache.routes(grading.am_path, label_sets)
        except routing.RoutingError as err:
            grading.am_error = str(err)
    grading.timings["amtool_s"] = time.perf_counter() - started
    return {c["id"]: r for c, r in zip(route_checks, resolved)}


def chain_labels(probe: dict, rules: list[dict]) -> dict[str, str]:
    """The labels an alert of the agent's rule carries: its static labels, alertname, service."""
    rule = next((r for r in rules if r.get("alert") == probe["alert"]), {})
    labels = {str(k): str(v) for k, v in (rule.get("labels") or {}).items()}
    labels["alertname"] = probe["alert"]
    labels.setdefault("service", probe["service"])
    return labels


def route(check: dict, evidence: Evidence) -> Outcome:
    """Receivers of ``probe.labels``: with ``expect``, scored by Jaccard similarity to the
    expected set (passed at 1.0); with ``forbid``, passed (score 1.0) when none of them is hit."""
    probe = check["probe"]
    got = evidence.routes.get(check["id"])
    reproduce = _ROUTES_TEST + " ".join(f"{k}={v}" for k, v in sorted(probe["labels"].items()))
    if got is None:
        return Outcome(False, f"alertmanager.yml does not load: {evidence.grading.am_error}", 0.0,
                       reproduce)
    if "expect" in probe:
        expected, got_set = set(probe["expect"]), set(got)
        score = reward.jaccard(expected, got_set)
        passed = score == 1.0
        detail = "" if passed else (
            f"expected receivers {sorted(expected)}; got {sorted(got_set)} "
            f"(missing {sorted(expected - got_set)}, extra {sorted(got_set - expected)})")
        return Outcome(passed, detail, score, reproduce)
    bad = sorted(set(probe["forbid"]) & set(got))
    passed = not bad
    detail = f"expected none of {probe['forbid']}; got {sorted(set(got))}" if bad else ""
    return Outcome(passed, detail, 1.0 if passed else 0.0, reproduce)


def route_chain(check: dict, evidence: Evidence) -> Outcome:
    """Receivers of the labels the agent's rule ``probe.alert`` carries (:func:`chain_labels`),
    scored by Jaccard similarity to ``probe.expect`` (passed at 1.0)."""
    probe = check["probe"]
    defined = [r for r in evidence.rules if r.get("alert") == probe["alert"]]
    got = evidence.routes.get(check["id"])
    labels = chain_labels(probe, evidence.rules)
    reproduce = _ROUTES_TEST + " ".join(f"{k}={v}" for k, v in sorted(labels.items()))
    if not defined:
        return Outcome(False, f"expected rule {probe['alert']} to route its labels; got no such rule",
                       0.0, reproduce)
    if got is None:
        return Outcome(False, f"alertmanager.yml does not load: {evidence.grading.am_error}", 0.0,
                       reproduce)
    expected, got_set = set(probe["expect"]), set(got)
    score = reward.jaccard(expected, got_set)
    passed = score == 1.0
    detail = "" if passed else (
        f"routing the labels {probe['alert']} carries {format_labels(labels, drop=())}: "
        f"expected {sorted(expected)}; got {sorted(got_set)}")
    return Outcome(passed, detail, score, reproduce)


def receiver(check: dict, evidence: Evidence) -> Outcome:
    """Passed (score 1.0) when receiver ``probe.name`` exists with at least one non-empty
    ``*_configs`` entry, so its pages go somewhere."""
    name = check["probe"]["name"]
    am = evidence.alertmanager
    receivers = am.get("receivers") if isinstance(am, dict) else None
    found = [r for r in receivers or [] if isinstance(r, dict) and r.get("name") == name]
    configs = [c for key, value in (found[0].items() if found else [])
               if key.endswith("_configs") and isinstance(value, list) for c in value if c]
    passed = bool(configs)
    detail = ""
    if am is None:
        detail = f"alertmanager.yml does not load: {evidence.grading.am_error}"
    elif not found:
        detail = f"expected a receiver named {name}; there is none"
    elif not configs:
        detail = (f"expected receiver {name} to have an integration (a *_configs entry); it has "
                  f"none, so its pages go nowhere")
    return Outcome(passed, detail, 1.0 if passed else 0.0,
                   "amtool check-config alertmanager/alertmanager.yml")
