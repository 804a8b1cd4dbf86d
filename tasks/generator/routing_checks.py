"""Checks of route and inhibit requirements, run against Alertmanager's own routing tree and
inhibition (amtool): who is paged for which labels, and which alerts a firing one mutes."""

from __future__ import annotations

from tasks.generator.checks import AUDIT, Catalog
from tasks.generator.world import World


def routed_teams(am: dict) -> list[str]:
    """The teams the pristine routing tree's top-level routes match by ``team="X"``, in order."""
    teams = []
    for route in (am.get("route") or {}).get("routes") or []:
        for matcher in (route.get("matchers") or []) if isinstance(route, dict) else []:
            name, _, value = str(matcher).partition("=")
            if name.strip() == "team" and value.startswith('"') and value.endswith('"'):
                teams.append(value[1:-1])
    return list(dict.fromkeys(teams))


def route_checks(catalog: Catalog, world: World, req: dict, alert_req: dict | None,
                  pristine_receivers: set[str] = frozenset(), teams: list[str] = ()) -> None:
    """Route checks: positives (Jaccard of receivers), an end-to-end chain, negatives.

    By default the positives are the team's new alert and its service's Down alert, the chain
    routes the labels the agent's own rule carries, and the negatives are every other team's
    Down alert. A requirement may list its own ``cases`` (``positives`` / ``negatives``:
    label sets) and ``chain_alert`` instead (moved routes, renamed receivers). A receiver the
    pristine config lacks must also have an integration (routing to an empty receiver pages
    nobody, and amtool's routing test cannot tell). Every route requirement also gets the
    negatives of :func:`_more_negatives` (``teams``: the pristine routes' teams).
    """
    rid, team, receiver = req["id"], req["team"], req["receiver"]
    service = req["service"]
    expect = sorted([receiver, AUDIT])
    chain_alert = req.get("chain_alert", alert_req["alert"] if alert_req else None)
    cases = req.get("cases")
    if cases is None:
        positives = []
        if alert_req is not None:
            positives.append({"alertname": alert_req["alert"], "service": service, **alert_req["labels"]})
        positives.append({"alertname": f"{world.service(service).camel}Down", "service": service,
                          "severity": "page", "team": team})
        negatives = [{"alertname": f"{svc.camel}Down", "service": svc.name, "severity": "page",
                      "team": svc.team} for svc in world.services if svc.team != team]
    else:
        positives, negatives = cases["positives"], cases["negatives"]
    if chain_alert is not None:
        catalog.add(f"{rid}.route.chain", rid, "Route",
                    f"The labels {chain_alert} really carries reach {receiver}",
                    "End to end: the agent's own alert rule's labels are routed, not the spec's",
                    {"type": "route_chain", "alert": chain_alert, "service": service,
                     "expect": expect}, role="positive")
    for index, labels in enumerate(positives, 1):
        catalog.add(f"{rid}.route.positive{index}", rid, "Route",
                    f"{labels['alertname']} for {labels.get('service', 'any service')} reaches "
                    f"{receiver} and the audit log",
                    f"Team {team} is on call for {service}; every page is also audited",
                    {"type": "route", "labels": labels, "expect": expect}, role="positive")
    if receiver not in pristine_receivers:
        destination = req.get("destination")
        catalog.add(f"{rid}.route.receiver", rid, "Route",
                    f"Receiver {receiver} exists and sends where the spec says" if destination
                    else f"Receiver {receiver} exists and has an integration",
                    "A receiver copied from another team's, or without an integration, pages "
                    "the wrong people or nobody",
                    {"type": "receiver", "name": receiver,
                     **({"integrations": destination} if destination else {})}, role="positive")
    for name in req.get("removes") or []:
        catalog.add(f"{rid}.route.removed-{name}", rid, "Route",
                    f"Receiver {name} is gone and no route names it",
                    "The request retires this receiver; left in place it still pages the old way",
                    {"type": "receiver_removed", "name": name}, role="positive")
    for index, labels in enumerate(positives, 1):
        catalog.add(f"{rid}.route.timing{index}", rid, "Route",
                    f"{labels['alertname']}'s page is sent on time",
                    "A group_wait of hours, inherited or set, pages long after the outage began",
                    timing_probe(world, labels), role="positive")
    for index, labels in enumerate(negatives, 1):
        catalog.add(f"{rid}.route.negative{index}", rid, "Route",
                    f"{labels.get('service', labels['alertname'])}'s page does not reach {receiver}",
                    "A catch-all route pages the wrong team",
                    {"type": "route", "labels": labels, "forbid": [receiver]}, role="negative")
    _more_negatives(catalog, req, positives, negatives, teams)


def _more_negatives(catalog: Catalog, req: dict, positives: list[dict], negatives: list[dict],
                    teams: list[str]) -> None:
    """A page without a team label (the first negative's, team dropped) does not reach the
    receiver: ``=~".*"`` or a dropped matcher also takes alerts that lack the label. And a
    team-level page (no service) of every team of the pristine routes that neither the
    requirement (nor its seeded typo), its positives nor its negatives name: a matcher widened
    to a prefix regex takes a neighbour team's pages (``p.*`` for payments also takes platform)."""
    rid, receiver = req["id"], req["receiver"]
    unlabelled = next(({k: v for k, v in labels.items() if k != "team"} for labels in negatives
                       if "team" in labels and "service" in labels), None)
    if unlabelled is not None:
        catalog.add(f"{rid}.route.negative-no-team", rid, "Route",
                    f"{unlabelled['service']}'s page without a team label does not reach {receiver}",
                    'A matcher widened to =~".*" (or dropped) also matches alerts that carry no '
                    "team label at all: they must fall through to the default receiver",
                    {"type": "route", "labels": unlabelled, "forbid": [receiver]}, role="negative")
    named = {req["team"], req.get("merged_team"), req.get("label_team"), req.get("typo"),
             *(labels.get("team") for labels in [*positives, *negatives])}
    for team in teams:
        if team not in named:
            catalog.add(f"{rid}.route.negative-team-{team}", rid, "Route",
                        f"Team {team}'s page does not reach {receiver}",
                        f"Team {team} has its own route; a matcher widened to a prefix regex "
                        "takes a neighbour team's pages",
                        {"type": "route", "labels": {"alertname": "HeartbeatMissing",
                                                     "severity": "page", "team": team},
                         "forbid": [receiver]}, role="negative")


def timing_probe(world: World, labels: dict) -> dict:
    """A ``route_timing`` probe of ``labels`` with the world's notification bounds in seconds."""
    limits = {field: [duration_s(low), duration_s(high)]
              for field, (low, high) in world.notification.items() if field != "group_by"}
    return {"type": "route_timing", "labels": labels, "limits": limits,
            "group_by": list(world.notification["group_by"])}


def duration_s(text: str | None) -> int | None:
    """``"1m"`` -> 60, ``"4h"`` -> 14400 (units s, m, h); None stays None."""
    if text is None:
        return None
    return int(text[:-1]) * {"s": 1, "m": 60, "h": 3600}[text[-1]]


def timing_preservation_checks(catalog: Catalog, world: World) -> None:
    """For a task with no route requirement: every service's Down page is still sent on time
    (Preservation): nothing asks to touch routing, so timings must stay in bounds."""
    for svc in world.services:
        labels = {"alertname": f"{svc.camel}Down", "service": svc.name, "severity": "page",
                  "team": svc.team}
        catalog.add(f"P.timing.{svc.name}", None, "Preservation",
                    f"{svc.camel}Down's page is sent on time",
                    "Routing timings nobody asked to change still deliver pages promptly",
                    timing_probe(world, labels))


def inhibit_checks(catalog: Catalog, world: World, req: dict, alert_req: dict | None) -> None:
    """Inhibit checks: each target muted while the source fires for the same service; the
    source itself, other services' alerts and non-target alerts keep paging.

    Each check is an amtool inhibition case: firing ``alerts``, the index of the ``target``
    among them, and whether it is expected muted.
    """
    rid, service = req["id"], req["service"]
    svc = world.service(service)
    base = {"service": service, "team": svc.team}
    source = {"alertname": req["source"], "severity": "page", **base}
    bystander_svc = next(s for s in world.services if s.name != service)
    cases = []
    severities = req.get("target_severity") or {}
    for target in req["targets"]:
        severity = severities.get(target) or (
            "page" if alert_req and target == alert_req["alert"] else "ticket")
        cases.append((f"suppressed.{target}", f"{target} is muted while {req['source']} fires",
                      [source, {"alertname": target, "severity": severity, **base}], 1, True))
    first = req["targets"][0]
    other = next(s for s in world.services if s.name != service)
    other_down = {"alertname": f"{other.camel}Down", "severity": "page", "service": other.name,
                  "team": other.team}
    target_alert = {"alertname": first, "severity": severities.get(first, "page"), **base}
    cases += [
        ("not-suppressed.reversed", f"{req['source']} itself stays active while {first} fires",
         [target_alert, source], 1, False),
        ("not-suppressed.other-down",
         f"{first} for {service} is not muted when only {other.name} is down",
         [other_down, target_alert], 1, False),
        ("bystander.other-service",
         f"HighErrorRatio for {bystander_svc.name} is not muted by {service}'s outage",
         [source, {"alertname": "HighErrorRatio", "severity": "ticket",
                   "service": bystander_svc.name, "team": bystander_svc.team}], 1, False),
        ("bystander.other-alert",
         f"{svc.camel}LatencyHigh is not muted (not a target)",
         [source, {"alertname": f"{svc.camel}LatencyHigh", "severity": "page", **base}], 1, False),
        ("bystander.other-burn",
         f"{other.camel}ErrorBudgetBurnFast for {other.name} is not muted by {service}'s outage",
         [source, {"alertname": f"{other.camel}ErrorBudgetBurnFast", "severity": "page",
                   "service": other.name, "team": other.team}], 1, False),
    ]
    cases += _neighbour_cases(req, svc.camel, base, severities, alert_req)
    for key, label, alerts, target, muted in cases:
        catalog.add(f"{rid}.inhibit.{key}", rid, "Inhibit", label,
                    "One outage should page once; other services and alerts keep paging",
                    {"type": "inhibit", "alerts": alerts, "target": target, "expect_muted": muted},
                    role=key.split(".")[0])


def _neighbour_cases(req: dict, camel: str, base: dict, severities: dict,
                     alert_req: dict | None) -> list[tuple]:
    """One "not suppressed" case per target: the target fires together with another alert of
    the same service (same ``equal`` labels, severity page) that is not the source and whose
    name starts with the service's prefix, as the source's does (``GeoRpcLatencyHigh`` beside
    ``GeoRpcDown``). Only the named source may mute: a source side matching any alert of the
    service, or the prefix regex, mutes the target here."""
    taken = {req["source"], *req["targets"]}
    neighbour = next(name for name in (f"{camel}LatencyHigh", f"{camel}SaturationHigh",
                                       f"{camel}CertificateExpiry") if name not in taken)
    cases = []
    for target in req["targets"]:
        severity = severities.get(target) or (
            "page" if alert_req and target == alert_req["alert"] else "ticket")
        cases.append((f"not-suppressed.neighbour.{target}",
                      f"{target} is not muted while only {neighbour} fires for {base['service']}",
                      [{"alertname": neighbour, "severity": "page", **base},
                       {"alertname": target, "severity": severity, **base}], 1, False))
    return cases
