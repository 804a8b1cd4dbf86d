"""The check catalog: every check of a task, derived from the world spec and the pristine repo.

Checks are claims about the world ("during this outage a correct alert for chat-gw is
firing at 75m"), computed with the reference evaluator (:mod:`tasks.generator.promsim`)
under both window semantics, placed at least two evaluation intervals away from any
crossing, never read off the oracle's rule text (DESIGN.md, "Deriving checks").
"""

from __future__ import annotations

from pathlib import Path

import yaml

from tasks.generator import promsim
from tasks.generator.scenarios import Scenario, alert_scenarios, counters
from tasks.generator.world import World, world_from_json

AUDIT = "audit-log"
"""The receiver every page is copied to (see tasks.generator.repo.AUDIT_RECEIVER)."""

MARGIN = 2
"""Evaluation intervals (minutes) kept between a check and any crossing or edge."""


class CatalogError(ValueError):
    """The spec does not allow a safe check (for example no time far enough from a crossing)."""


def _alerts(alert: str, service: str | None = None, **labels: str) -> str:
    matchers = [f'alertname="{alert}"', 'alertstate="firing"']
    if service is not None:
        matchers.append(f'service="{service}"')
    matchers += [f'{k}="{v}"' for k, v in sorted(labels.items())]
    return "ALERTS{" + ",".join(matchers) + "}"


ONE = [{"labels": "{}", "value": 1}]
NONE: list = []


class Catalog:
    """Collects checks in order; ids are unique (``A1.fire.outage@75m``)."""

    def __init__(self) -> None:
        self.checks: list[dict] = []
        self._ids: set[str] = set()

    def add(self, id: str, req: str | None, family: str, label: str, note: str, probe: dict) -> None:
        if id in self._ids:
            raise CatalogError(f"duplicate check id {id}")
        self._ids.add(id)
        self.checks.append(
            {"id": id, "req": req, "family": family, "label": label, "note": note, "probe": probe}
        )


def _condition(world: World, scenario: Scenario, req: dict, semantics: str) -> list[bool]:
    """The reference alert's condition per minute: what a correct rule's expression selects.

    ``burn`` / ``latency-burn``: both the 1h and 5m SLI ratios over the threshold (SRE
    Workbook, ch. 5, multiwindow burn rate; a latency SLI counts requests slower than the
    SLO's bucket bound as bad); ``ratio``: the error ratio over one window over the
    threshold; ``down``: every target of the service has ``up`` == 0 (with ``absent``: or no ``up`` at
    all, which only ``absent()`` sees).
    """
    svc = world.service(req["service"])
    cnt, _ = counters(world, scenario, svc)
    condition = req.get("condition") or {"type": "burn"}
    if condition["type"] == "down":  # absent: no up series at all counts as down too
        return [all(pod[t] is None or pod[t] == 0 for pod in cnt.up)
                and (condition.get("absent") or any(pod[t] is not None for pod in cnt.up))
                for t in range(scenario.horizon + 1)]
    threshold = req["threshold"]
    cond = []
    for t in range(scenario.horizon + 1):
        if condition["type"] in ("burn", "latency-burn"):
            short = promsim.error_ratio(cnt.errors, cnt.totals, t, 5, semantics)
            long = promsim.error_ratio(cnt.errors, cnt.totals, t, 60, semantics)
            cond.append(promsim.gt(short, threshold) and promsim.gt(long, threshold))
        else:
            window = int(condition["window_min"])
            ratio = promsim.error_ratio(cnt.errors, cnt.totals, t, window, semantics)
            cond.append(promsim.gt(ratio, threshold))
    return cond


def _outage_window(scenario: Scenario, service: str) -> tuple[int, int]:
    """(start, end) minutes of the service's outage in ``scenario`` (phases or targets down)."""
    spans = [(p.start, p.end) for p in scenario.phases.get(service, [])]
    spans += [(o.start, o.end) for o in scenario.outages.get(service, [])]
    return min(a for a, _ in spans), max(b for _, b in spans)


def _states(world: World, scenario: Scenario, req: dict) -> dict[str, tuple[list[bool], list[bool]]]:
    """Condition and firing state per minute under each window semantics."""
    for_min = req["for_s"] // world.evaluation_interval_s
    out = {}
    for semantics in promsim.SEMANTICS:
        cond = _condition(world, scenario, req, semantics)
        out[semantics] = (cond, promsim.firing_states(cond, for_min))
    return out


def _stable(states: dict, t: int, firing: bool, horizon: int) -> bool:
    """Firing state equals ``firing`` under every semantics from t-MARGIN to t+MARGIN."""
    lo, hi = t - MARGIN, t + MARGIN
    if lo < 0 or hi > horizon:
        return False
    return all(
        fire[m] == firing for _, fire in states.values() for m in range(lo, hi + 1)
    )


def _first(values: list[bool], start: int = 0) -> int | None:
    for index in range(start, len(values)):
        if values[index]:
            return index
    return None


def _alert_checks(catalog: Catalog, world: World, req: dict, scenarios: dict[str, Scenario],
                  prefix: str = "") -> None:
    """Fire, Timing, Silent, Dup, Label and Annotation checks of an alert or repair requirement.

    ``scenarios``: the requirement's scenarios by unprefixed name (``outage``, ``normal``...,
    from :func:`tasks.generator.scenarios.alert_scenarios`); their ids carry ``prefix``.
    """
    rid, alert, service = req["id"], req["alert"], req["service"]
    condition = (req.get("condition") or {"type": "burn"})["type"]
    for_min = req["for_s"] // world.evaluation_interval_s
    firing = _alerts(alert, service)
    anywhere = _alerts(alert)

    def promql(scenario: str, t: int, expr: str, expect: list) -> dict:
        return {"type": "promql", "scenario": prefix + scenario, "eval_time": f"{t}m",
                "expr": expr, "exp_samples": expect}

    def fire(scenario: str, t: int, family: str, label: str, note: str) -> None:
        states = _states(world, scenarios[scenario], req)
        if not _stable(states, t, True, scenarios[scenario].horizon):
            raise CatalogError(f"{rid}: {scenario}@{t}m is not safely firing")
        catalog.add(f"{rid}.{family.lower()}.{scenario}@{t}m", rid, family, label, note,
                    promql(scenario, t, f"count({firing}) > bool 0", ONE))

    def silent_for(scenario: str, t: int, expr: str, label: str, note: str) -> None:
        catalog.add(f"{rid}.silent.{scenario}-others@{t}m", rid, "Silent", label, note,
                    promql(scenario, t, expr, NONE))

    def silent(scenario: str, t: int, family: str, label: str, note: str) -> None:
        states = _states(world, scenarios[scenario], req)
        if family != "Timing" and not _stable(states, t, False, scenarios[scenario].horizon):
            raise CatalogError(f"{rid}: {scenario}@{t}m is not safely silent")
        catalog.add(f"{rid}.{family.lower()}.{scenario}@{t}m", rid, family, label, note,
                    promql(scenario, t, anywhere, NONE))

    catalog.add(f"{rid}.defined-once", rid, "Dup", f"{alert} is defined exactly once",
                "Two rules with one name page twice for one outage",
                {"type": "rule_count", "kind": "alert", "name": alert, "expect": 1})

    # Outage: silent before, not before `for` has elapsed, on time after it, firing, recovery.
    outage = _states(world, scenarios["outage"], req)
    outage_start, outage_end = _outage_window(scenarios["outage"], service)
    true_at = max(_first(cond) for cond, _ in outage.values())
    fires_at = [_first(fire) for _, fire in outage.values()]
    if any(f is None for f in fires_at):
        raise CatalogError(f"{rid}: the outage never fires the reference alert")
    earliest, latest = min(fires_at), max(fires_at)
    silent("outage", outage_start - 5, "Silent",
           f"Silent before the {service} outage ({outage_start - 5}m)",
           "Normal traffic just before the outage must not page")
    not_before = (true_at + earliest) // 2
    if earliest - true_at >= 2 and all(cond[not_before] and not fire[not_before]
                                       for cond, fire in outage.values()):
        silent("outage", not_before, "Timing",
               f"Not firing at {not_before}m, before for: {for_min}m has elapsed",
               f"The condition holds from about {true_at}m; an alert without for "
               "(or with a shorter one) already fires here")
    fire("outage", latest + MARGIN, "Timing", f"Firing on time at {latest + MARGIN}m",
         f"The condition holds from about {true_at}m; with for: {for_min}m the alert must fire "
         f"by {latest}m")
    steady = min(latest + 10, outage_end - 3)
    for t in sorted({steady, outage_end - 3}):
        fire("outage", t, "Fire", f"Fires during the {service} outage ({t}m)",
             "A sustained outage burns the error budget fast: it must page")
        catalog.add(f"{rid}.dup.outage@{t}m", rid, "Dup",
                    f"One alert for {service}, not one per pod ({t}m)",
                    "The page is per service: aggregate away pod labels",
                    promql("outage", t, f"count({firing})", ONE) | {"witness": firing})
    label_at = steady
    for name, value in sorted(req["labels"].items()):
        catalog.add(f"{rid}.label.{name}", rid, "Label",
                    f"The firing alert carries {name}={value}",
                    "Routing and on-call tooling read this label",
                    promql("outage", label_at, f"count({_alerts(alert, service, **{name: value})}) > bool 0", ONE)
                    | {"witness": firing})
    recovered = None
    for t in range(outage_end, scenarios["outage"].horizon - MARGIN):
        if _stable(outage, t, False, scenarios["outage"].horizon):
            recovered = t
            break
    if recovered is None:
        raise CatalogError(f"{rid}: no safe recovery time")
    silent("outage", recovered + 1, "Silent", f"Silent after recovery ({recovered + 1}m)",
           "Once the 5m window is clean the page must resolve, though the 1h window still burns")

    if condition == "down":
        _down_probes(world, req, scenarios, fire, silent)
    else:
        _traffic_probes(world, req, scenarios, fire, silent, silent_for, steady)

    for name, value in sorted(req["labels"].items()):
        catalog.add(f"{rid}.static-label.{name}", rid, "Label",
                    f"The rule declares {name}: {value}",
                    "Static labels on the rule are what routing sees before it ever fires",
                    {"type": "static_label", "alert": alert, "name": name, "value": value})
    annotations = req.get("annotations") or {}
    for key, rule in sorted(annotations.items()):
        expect = dict(rule)
        if "equals" in expect:
            label = f"Annotation {key} is {expect['equals']}"
        elif "contains" in expect:
            label = f"Annotation {key} resolves to text naming {expect['contains']}"
        else:
            label = f"Annotation {key} is present"
        catalog.add(f"{rid}.annotation.{key}", rid, "Annotation", label,
                    "On-call reads the annotations first; templates must resolve",
                    {"type": "annotation", "scenario": prefix + "outage", "eval_time": f"{label_at}m",
                     "alert": alert, "service": service, "key": key, "expect": expect})


def _traffic_probes(world: World, req: dict, scenarios: dict[str, Scenario], fire, silent,
                    silent_for, steady: int) -> None:
    """Fire and Silent probes of an error-ratio or burn-rate alert beyond its outage."""
    alert, service = req["alert"], req["service"]
    silent("normal", 30, "Silent", "Silent on normal traffic (30m)",
           "Baseline errors are far under the burn threshold")
    silent("normal", 80, "Silent", "Silent on normal traffic (80m)",
           "Baseline errors are far under the burn threshold")
    for t in (70, 85):
        silent("under", t, "Silent", f"Silent just under the threshold, 0.85x ({t}m)",
               "A threshold set too low pages on traffic that does not burn the budget fast")
        fire("over", t, "Fire", f"Fires just over the threshold, 1.15x ({t}m)",
             "A threshold set too high misses a real fast burn")
    for t in (62, 65, 70):
        silent("spike", t, "Silent", f"Silent through a 3-minute spike ({t}m)",
               "A short spike is not an incident: the 1h window or the for keeps it quiet")
    if "other-fails" in scenarios:
        for t in (80, 95):
            silent("other-fails", t, "Silent", f"Silent while another service fails ({t}m)",
                   f"The alert is about {service}: another service's outage must not fire it")
    if req.get("generic"):
        silent_for("outage", steady, _alerts(alert).replace("}", f',service!="{service}"}}'),
                   f"Only {service} fires during its outage ({steady}m)",
                   "A rule for every service must not page for the healthy ones")
    for t in (60, 85):
        silent("low-traffic", t, "Silent", f"Silent on very low traffic ({t}m)",
               "A handful of requests at the usual error ratio is not a fast burn")
    long_spike = _states(world, scenarios["long-spike"], req)
    long_fire = max(_first(fire) or 10**6 for _, fire in long_spike.values()) + MARGIN + 1
    fire("long-spike", long_fire, "Fire", f"Fires on a 25-minute burst ({long_fire}m)",
         "A long enough burst burns the 1h budget too: it must page")
    if "no-traffic" in scenarios:
        for t in (60, 85):
            silent("no-traffic", t, "Silent", f"Silent at zero traffic ({t}m)",
                   "With no requests the SLI is 0/0 = NaN: that is no burn, and must not page")


def _down_probes(world: World, req: dict, scenarios: dict[str, Scenario], fire, silent) -> None:
    """Fire and Silent probes of a "service down" alert beyond its outage."""
    service = req["service"]
    for_min = req["for_s"] // world.evaluation_interval_s
    for t in (60 + for_min + MARGIN + 1, 80) if "vanish" in scenarios else ():
        fire("vanish", t, "Fire", f"Fires when {service}'s targets vanish ({t}m)",
             "With no up series at all, == 0 selects nothing: only absent() sees the outage")
    for t in (30, 80):
        silent("normal", t, "Silent", f"Silent on normal traffic ({t}m)",
               "Every target is up")
    for t in (60, 80):
        silent("one-pod", t, "Silent", f"Silent with one pod down ({t}m)",
               "One replica down is not the service down: the page is per service")
    for t in (60, 62, 65):
        silent("blip", t, "Silent", f"Silent through a missed scrape ({t}m)",
               f"A blip shorter than for: {for_min}m is not an outage")
    for t in (70, 80):
        silent("other-fails", t, "Silent", f"Silent while another service is down ({t}m)",
               f"The alert is about {service}")


def _value_band(values: list[float | None], rel: float) -> tuple[float, float] | None:
    if any(v is None for v in values):
        return None
    lo, hi = min(values), max(values)
    return lo - abs(lo) * rel - 1e-9, hi + abs(hi) * rel + 1e-9


def _recording_checks(catalog: Catalog, world: World, req: dict, scenarios: dict[str, Scenario]) -> None:
    rid, service = req["id"], req["service"]
    svc = world.service(service)
    windows = {"5m": 5, "30m": 30, "1h": 60}
    points = [("normal", 90), ("outage", 75), ("outage", 95), ("over", 80)]
    for window, record in sorted(req["records"].items(), key=lambda kv: windows[kv[0]]):
        catalog.add(f"{rid}.card.{record}", rid, "Cardinality",
                    f"{record} has one series for {service}",
                    "A recording rule must aggregate pods away (sum by (service))",
                    {"type": "promql", "scenario": "normal", "eval_time": "90m",
                     "expr": f'count({record}{{service="{service}"}})', "exp_samples": ONE})
        for scenario_id, t in points:
            cnt, _ = counters(world, scenarios[scenario_id], svc)
            values = [promsim.error_ratio(cnt.errors, cnt.totals, t, windows[window], s)
                      for s in promsim.SEMANTICS]
            exact = values[0] is not None and abs(values[0] - values[1]) < 1e-12
            band = _value_band(values, 1e-6 if exact else 0.02)
            if band is None:
                continue
            lo, hi = band
            shown = f"{values[0]:.6g}" if exact else f"{lo:.4g}..{hi:.4g}"
            catalog.add(f"{rid}.value.{record}.{scenario_id}@{t}m", rid, "Value",
                        f"{record} for {service} is {shown} ({scenario_id}, {t}m)",
                        "The SLI is the ratio of failed to all requests over the window",
                        {"type": "promql", "scenario": scenario_id, "eval_time": f"{t}m",
                         "expr": f'count({record}{{service="{service}"}} > {lo!r} < {hi!r})',
                         "exp_samples": ONE, "expected_value": values[0] if exact else [lo, hi]})
        if "no-traffic" in scenarios:
            sel = f'{record}{{service="{service}"}}'
            catalog.add(f"{rid}.value.{record}.no-traffic@60m", rid, "Value",
                        f"{record} for {service} is NaN with no traffic (no-traffic, 60m)",
                        "0/0 is NaN: the series stays, and no alert on it fires",
                        {"type": "promql", "scenario": "no-traffic", "eval_time": "60m",
                         "expr": f"count({sel} != {sel})", "exp_samples": ONE,
                         "expected_value": "NaN"})


def _route_checks(catalog: Catalog, world: World, req: dict, alert_req: dict | None,
                  pristine_receivers: set[str] = frozenset()) -> None:
    """Route checks: positives (Jaccard of receivers), an end-to-end chain, negatives.

    By default the positives are the team's new alert and its service's Down alert, the chain
    routes the labels the agent's own rule carries, and the negatives are every other team's
    Down alert. A requirement may list its own ``cases`` (``positives`` / ``negatives``:
    label sets) and ``chain_alert`` instead (moved routes, renamed receivers). A receiver the
    pristine config lacks must also have an integration (routing to an empty receiver pages
    nobody, and amtool's routing test cannot tell).
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
                     "expect": expect})
    for index, labels in enumerate(positives, 1):
        catalog.add(f"{rid}.route.positive{index}", rid, "Route",
                    f"{labels['alertname']} for {labels.get('service', 'any service')} reaches "
                    f"{receiver} and the audit log",
                    f"Team {team} is on call for {service}; every page is also audited",
                    {"type": "route", "labels": labels, "expect": expect})
    if receiver not in pristine_receivers:
        catalog.add(f"{rid}.route.receiver", rid, "Route",
                    f"Receiver {receiver} exists and has an integration",
                    "A receiver without a webhook or pager integration silently drops every page",
                    {"type": "receiver", "name": receiver})
    for index, labels in enumerate(negatives, 1):
        catalog.add(f"{rid}.route.negative{index}", rid, "Route",
                    f"{labels.get('service', labels['alertname'])}'s page does not reach {receiver}",
                    "A catch-all route pages the wrong team",
                    {"type": "route", "labels": labels, "forbid": [receiver]})


def _inhibit_checks(catalog: Catalog, world: World, req: dict, alert_req: dict | None) -> None:
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
    for key, label, alerts, target, muted in cases:
        catalog.add(f"{rid}.inhibit.{key}", rid, "Inhibit", label,
                    "One outage should page once; other services and alerts keep paging",
                    {"type": "inhibit", "alerts": alerts, "target": target, "expect_muted": muted})


def _load_yaml(path: Path):
    return yaml.safe_load(path.read_text(encoding="utf-8"))


def _rule_groups(doc) -> list[dict]:
    if isinstance(doc, dict) and doc.get("kind") == "PrometheusRule":
        doc = doc.get("spec") or {}
    return list((doc or {}).get("groups") or [])


def _preservation_checks(catalog: Catalog, world: World, pristine: Path, touched: set[str]) -> None:
    """One check per untouched pristine rule, receiver, route, inhibit rule and the global block.

    Requirements name what they change: alert and repair requirements their rule, route and
    inhibit requirements ``replaces`` (``{"receivers": [names], "routes": [1-based indexes],
    "inhibit_rules": [1-based indexes]}``).
    """
    replaced: dict[str, set] = {"receivers": set(), "routes": set(), "inhibit_rules": set()}
    for req in world.requirements:
        for key, items in (req.get("replaces") or {}).items():
            replaced[key].update(items)
    for path in sorted((pristine / "rules").rglob("*.y*ml")):
        rel = path.relative_to(pristine).as_posix()
        for group in _rule_groups(_load_yaml(path)):
            for rule in group.get("rules") or []:
                name = rule.get("alert") or rule.get("record")
                if name in touched:
                    continue
                kind = "alerting rule" if "alert" in rule else "recording rule"
                index = sum(1 for c in catalog.checks if c["id"].startswith(f"P.rule.{name}"))
                suffix = f"#{index + 1}" if index else ""
                catalog.add(f"P.rule.{name}{suffix}", None, "Preservation",
                            f"Untouched {kind} {name} is unchanged",
                            f"From {rel}, group {group.get('name')}",
                            {"type": "preserve", "what": "rule", "file": rel, "item": rule})
    am = _load_yaml(pristine / "alertmanager" / "alertmanager.yml")
    for receiver in am.get("receivers") or []:
        if receiver["name"] in replaced["receivers"]:
            continue
        catalog.add(f"P.receiver.{receiver['name']}", None, "Preservation",
                    f"Receiver {receiver['name']} is unchanged", "Receivers are shared by teams",
                    {"type": "preserve", "what": "receiver", "item": receiver})
    for index, route in enumerate((am.get("route") or {}).get("routes") or [], 1):
        if index in replaced["routes"]:
            continue
        catalog.add(f"P.route.{index}", None, "Preservation",
                    f"Route to {route.get('receiver')} is unchanged",
                    "Existing teams keep their routing",
                    {"type": "preserve", "what": "route", "item": route})
    for index, rule in enumerate(am.get("inhibit_rules") or [], 1):
        if index in replaced["inhibit_rules"]:
            continue
        catalog.add(f"P.inhibit.{index}", None, "Preservation",
                    f"Inhibit rule {index} is unchanged", "Existing inhibitions stay in force",
                    {"type": "preserve", "what": "inhibit_rule", "item": rule})
    if "global" in am:
        catalog.add("P.global", None, "Preservation", "The global block is unchanged",
                    "Global settings affect every receiver",
                    {"type": "preserve", "what": "global", "item": am["global"]})


def input_metric_names(world: World) -> list[str]:
    """Names of the series the scenarios feed in: a rule recording one of them is tamper."""
    from tasks.generator.world import SLI_FAMILIES

    names = {"up"}
    for svc in world.services:
        family = SLI_FAMILIES[svc.family]
        if family.get("histogram"):
            names |= {family["metric"] + "_bucket", family["metric"] + "_count"}
        else:
            names.add(family["metric"])
    return sorted(names)


def _latency_le(world: World, req: dict) -> dict:
    """``{"latency_le": ...}`` for a requirement on a latency service (the viewer plots the
    share of slower requests), else ``{}``."""
    if "service" not in req:
        return {}
    le = world.service(req["service"]).latency_le
    return {"latency_le": le} if le else {}


def derive_catalog(spec: dict, pristine: Path) -> dict:
    """The ordered check catalog of a task, from its spec and its pristine monitoring repo.

    Returns ``{version, task_id, requirements[], scenarios[], input_series{}, checks[]}``
    (docs/formats.md). Reads nothing but ``spec`` and the files under ``pristine``.

    Raises:
        CatalogError: the spec gives no safe time for a check.
    """
    world = world_from_json(spec)
    catalog = Catalog()
    catalog.add("S.rules", None, "Syntax", "Every rule file loads",
                "promtool check rules on each file under rules/",
                {"type": "syntax", "what": "rules"})
    catalog.add("S.alertmanager", None, "Syntax", "alertmanager.yml loads",
                "amtool check-config", {"type": "syntax", "what": "alertmanager"})
    alert_req = next((r for r in world.requirements if r["kind"] == "alert"), None)
    scenarios: dict[str, Scenario] = {}
    prefixes: dict[str, str] = {}
    own: dict[str, dict[str, Scenario]] = {}
    for req in world.requirements:
        if req["kind"] in ("alert", "repair"):
            prefix = "" if req is alert_req else f"{req['id']}-"
            prefixes[req["id"]] = prefix
            own[req["id"]] = {}
            for scenario in alert_scenarios(world, req, prefix):
                scenarios[scenario.id] = scenario
                own[req["id"]][scenario.id[len(prefix):]] = scenario
    touched: set[str] = set()
    for req in world.requirements:
        if req["kind"] in ("alert", "repair"):
            _alert_checks(catalog, world, req, own[req["id"]], prefixes[req["id"]])
            touched.add(req["alert"])
        elif req["kind"] == "recording":
            _recording_checks(catalog, world, req, scenarios)
        elif req["kind"] == "route":
            am = _load_yaml(pristine / "alertmanager" / "alertmanager.yml") or {}
            _route_checks(catalog, world, req, alert_req,
                          {r.get("name") for r in am.get("receivers") or [] if isinstance(r, dict)})
        elif req["kind"] == "inhibit":
            _inhibit_checks(catalog, world, req, alert_req)
    _preservation_checks(catalog, world, pristine, touched)
    catalog.add("T.reserved-series", None, "Tamper",
                "No recording rule writes ALERTS or an input series",
                "Recording ALERTS or shadowing inputs fakes the replay",
                {"type": "tamper", "what": "reserved_records",
                 "names": ["ALERTS", "ALERTS_FOR_STATE", *input_metric_names(world)]})
    catalog.add("T.group-settings", None, "Tamper",
                "No rule group changes its evaluation interval, limit or query offset",
                "Evaluation knobs change what the replay measures",
                {"type": "tamper", "what": "group_settings"})
    catalog.add("T.time-intervals", None, "Tamper", "No mute or active time intervals",
                "A mute interval silences pages without fixing anything",
                {"type": "tamper", "what": "time_intervals"})
    input_series = {}
    for scenario in scenarios.values():
        items = []
        for svc in world.services:
            items += counters(world, scenario, svc)[1]
        input_series[scenario.id] = items
    return {
        "version": 1,
        "task_id": world.task_id,
        "evaluation_interval": f"{world.evaluation_interval_s}s",
        "requirements": [
            {"id": r["id"], "kind": r["kind"], "weight": r["weight"], "title": r["title"],
             "targets": {k: r[k] for k in ("alert", "service", "records", "receiver", "source",
                                           "targets", "reference_records", "threshold", "for_s",
                                           "labels", "slo", "windows", "team", "equal",
                                           "condition", "defect") if k in r}
             | _latency_le(world, r)}
            for r in world.requirements
        ],
        "scenarios": [s.to_json() for s in scenarios.values()],
        "input_series": input_series,
        "checks": catalog.checks,
    }
