"""Routing probes: the receivers amtool resolves for a label set, an alert rule's own labels, where
a receiver sends, a retired receiver, and when the routes of a page notify."""

from __future__ import annotations

import time

from grader import reward, route_walk, routing
from grader.destinations import destination_mismatches, integrations_of
from grader.grading_pass import GradingPass
from grader.probes.evidence import Evidence, Outcome
from grader.probes.labels import format_labels

_ROUTES_TEST = "amtool config routes test --config.file=alertmanager/alertmanager.yml "


def resolve_routes(grading: GradingPass, rules: list[dict]) -> dict[str, list[str]]:
    """Check id -> receivers for every ``route`` and ``route_timing`` check and every
    ``route_chain`` check whose
    alert rule exists, in one batch of ``amtool config routes test`` calls. Empty when
    alertmanager.yml does not load; when amtool fails, ``grading.am_error`` says why and no
    check gets receivers. Adds ``amtool_s`` to ``grading.timings``."""
    route_checks = [c for c in grading.catalog["checks"] if c["probe"]["type"] in ("route", "route_timing")
                    or (c["probe"]["type"] == "route_chain"
                        and any(r.get("alert") == c["probe"]["alert"] for r in rules))]
    resolved: list[list[str] | None] = [None] * len(route_checks)
    started = time.perf_counter()
    if grading.am_path and route_checks:
        label_sets = [c["probe"]["labels"] if c["probe"]["type"] != "route_chain"
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
    ``*_configs`` entry, so its pages go somewhere; with ``probe.integrations`` (``kind ->
    entries`` of judged fields), also when it sends exactly there, as effective values
    (:func:`grader.destinations.destination_mismatches`)."""
    probe = check["probe"]
    name = probe["name"]
    am = evidence.alertmanager
    receivers = am.get("receivers") if isinstance(am, dict) else None
    found = [r for r in receivers or [] if isinstance(r, dict) and r.get("name") == name]
    configs = integrations_of(found[0]) if found else {}
    wrong = (destination_mismatches(found[0], probe["integrations"])
             if configs and probe.get("integrations") else [])
    passed = bool(configs) and not wrong
    detail = ""
    if am is None:
        detail = f"alertmanager.yml does not load: {evidence.grading.am_error}"
    elif not found:
        detail = f"expected a receiver named {name}; there is none"
    elif not configs:
        detail = (f"expected receiver {name} to have an integration (a *_configs entry); it has "
                  f"none, so its pages go nowhere")
    elif wrong:
        detail = f"receiver {name} sends to the wrong place: " + "; ".join(wrong)
    return Outcome(passed, detail, 1.0 if passed else 0.0,
                   "amtool check-config alertmanager/alertmanager.yml")


def receiver_removed(check: dict, evidence: Evidence) -> Outcome:
    """Passed (score 1.0) when no receiver is named ``probe.name`` and no route names it: a
    receiver the request retires pages nobody any more."""
    name = check["probe"]["name"]
    am = evidence.alertmanager
    reproduce = "amtool config show --config.file=alertmanager/alertmanager.yml"
    if am is None:
        return Outcome(False, f"alertmanager.yml does not load: {evidence.grading.am_error}",
                       0.0, reproduce)
    defined = [r for r in am.get("receivers") or [] if isinstance(r, dict) and r.get("name") == name]
    naming = [where for where, route in _routes_with_place(am.get("route"), "route")
              if route.get("receiver") == name]
    if not defined and not naming:
        return Outcome(True, "", 1.0, reproduce)
    kept = (["it is still defined"] if defined else []) + (
        [f"{', '.join(naming)} still name{'s' if len(naming) == 1 else ''} it"] if naming else [])
    return Outcome(False, f"expected receiver {name} removed; {' and '.join(kept)}", 0.0, reproduce)


def _routes_with_place(route, where: str):
    """``(where, route)`` for ``route`` and every route under it, in tree order."""
    if not isinstance(route, dict):
        return
    yield where, route
    for index, child in enumerate(route.get("routes") or [] if isinstance(route.get("routes"), list) else []):
        yield from _routes_with_place(child, f"{where}.routes[{index}]")


def route_timing(check: dict, evidence: Evidence) -> Outcome:
    """Every route delivering ``probe.labels`` notifies on time: effective ``group_wait``,
    ``group_interval`` and ``repeat_interval`` within ``probe.limits`` (``field -> [min, max]``
    seconds, None for no bound) and ``group_by`` holding ``probe.group_by`` (or ``...``), so
    the page starts its own group and waits ``group_wait``, not a running group's interval.
    The walk (:func:`grader.route_walk.matched_routes`) must deliver to the receivers amtool
    resolved, else the check fails saying so."""
    probe = check["probe"]
    got = evidence.routes.get(check["id"])
    reproduce = (_ROUTES_TEST.replace("routes test ", "routes test --tree ")
                 + " ".join(f"{k}={v}" for k, v in sorted(probe["labels"].items())))
    if got is None or evidence.alertmanager is None:
        return Outcome(False, f"alertmanager.yml does not load: {evidence.grading.am_error}",
                       0.0, reproduce)
    try:
        matched = route_walk.matched_routes(evidence.alertmanager, probe["labels"])
    except route_walk.RouteWalkError as err:
        return Outcome(False, f"the routing tree cannot be walked: {err}", 0.0, reproduce)
    walked = [m.receiver.value for m in matched]
    if walked != list(got):
        return Outcome(False, f"the grader's route walk reaches {walked} but amtool {list(got)}; "
                       "timings not judged", 0.0, reproduce)
    late = [problem for m in matched for problem in timing_problems(m, probe)]
    return Outcome(not late, "; ".join(late), 0.0 if late else 1.0, reproduce)


def _route_name(where: str) -> str:
    """``route`` -> ``the root route``; others as they are (``route.routes[2]``)."""
    return "the root route" if where == "route" else where


def timing_problems(matched: route_walk.MatchedRoute, probe: dict) -> list[str]:
    """What of one delivering route breaks ``probe``'s bounds, in words naming the effective
    value and the route it is set on (``default``: Alertmanager's own)."""
    problems = []
    for field, (low, high) in probe["limits"].items():
        setting = matched.timings[field]
        value = float(setting.value)
        where = "Alertmanager's default" if setting.where == "default" else (
            "inherited from " + _route_name(setting.where) if setting.where != matched.where
            else "set there")
        text = route_walk.format_seconds
        if high is not None and value > high:
            problems.append(f"{matched.describe()}: {field} {text(value)} ({where}) is over "
                            f"{text(high)}")
        if low is not None and value < low:
            problems.append(f"{matched.describe()}: {field} {text(value)} ({where}) is under "
                            f"{text(low)}")
    group_by = tuple(matched.group_by.value)
    needed = [label for label in probe.get("group_by") or [] if label not in group_by]
    if needed and route_walk.GROUP_BY_ALL not in group_by:
        where = ("Alertmanager's default" if matched.group_by.where == "default"
                 else f"set on {_route_name(matched.group_by.where)}")
        problems.append(f"{matched.describe()}: group_by {list(group_by)} ({where}) lacks "
                        f"{needed}, so a page can join a running group and wait its "
                        f"group_interval instead of group_wait")
    return problems
