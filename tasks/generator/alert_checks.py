"""Checks of an alert or repair requirement: Fire, Timing, Silent, Dup, Label and Annotation.

Each probe asks whether the agent's alert is firing (or silent) in one scenario at one
minute where the reference alert (:mod:`tasks.generator.reference_states`) is safely so
under every window semantics (DESIGN.md, "Deriving checks").
"""

from __future__ import annotations

from tasks.generator import reference_states
from tasks.generator.checks import MARGIN, NONE, ONE, Catalog, CatalogError, alerts_selector
from tasks.generator.scenarios import Scenario
from tasks.generator.world import World


class AlertProbes:
    """Writes the probes of one alert or repair requirement into a catalog.

    ``scenarios``: the requirement's scenarios by unprefixed name (``outage``, ``normal``...);
    the probes name them with ``prefix``. Check ids read ``<req>.<family>.<scenario>@<t>m``.
    """

    def __init__(self, catalog: Catalog, world: World, req: dict, scenarios: dict[str, Scenario],
                 prefix: str) -> None:
        self.catalog, self.world, self.req = catalog, world, req
        self.scenarios, self.prefix = scenarios, prefix
        self.rid = req["id"]
        self.for_min = req["for_s"] // world.evaluation_interval_s
        self.firing = alerts_selector(req["alert"], req["service"])
        self.anywhere = alerts_selector(req["alert"])

    def states(self, scenario: str) -> dict[str, tuple[list[bool], list[bool]]]:
        """The reference alert's condition and firing state per minute in ``scenario``."""
        return reference_states.states(self.world, self.scenarios[scenario], self.req)

    def promql(self, scenario: str, t: int, expr: str, expect: list) -> dict:
        """A ``promql`` probe: ``expr`` evaluated in ``scenario`` at minute ``t``."""
        return {"type": "promql", "scenario": self.prefix + scenario, "eval_time": f"{t}m",
                "expr": expr, "exp_samples": expect}

    def fire(self, scenario: str, t: int, family: str, label: str, note: str) -> None:
        """The alert fires for its service in ``scenario`` at ``t``.

        Raises:
            CatalogError: the reference alert is not firing from t-MARGIN to t+MARGIN.
        """
        states = self.states(scenario)
        if not reference_states.stable(states, t, True, self.scenarios[scenario].horizon):
            raise CatalogError(f"{self.rid}: {scenario}@{t}m is not safely firing")
        self.catalog.add(f"{self.rid}.{family.lower()}.{scenario}@{t}m", self.rid, family, label,
                         note, self.promql(scenario, t, f"count({self.firing}) > bool 0", ONE))

    def silent_for(self, scenario: str, t: int, expr: str, label: str, note: str) -> None:
        """``expr`` (some other services' alert) selects nothing in ``scenario`` at ``t``."""
        self.catalog.add(f"{self.rid}.silent.{scenario}-others@{t}m", self.rid, "Silent", label,
                         note, self.promql(scenario, t, expr, NONE))

    def silent(self, scenario: str, t: int, family: str, label: str, note: str) -> None:
        """The alert fires for no service in ``scenario`` at ``t``.

        Raises:
            CatalogError: (family other than Timing) the reference alert is not silent from
                t-MARGIN to t+MARGIN.
        """
        states = self.states(scenario)
        if family != "Timing" and not reference_states.stable(
                states, t, False, self.scenarios[scenario].horizon):
            raise CatalogError(f"{self.rid}: {scenario}@{t}m is not safely silent")
        self.catalog.add(f"{self.rid}.{family.lower()}.{scenario}@{t}m", self.rid, family, label,
                         note, self.promql(scenario, t, self.anywhere, NONE))


def alert_checks(catalog: Catalog, world: World, req: dict, scenarios: dict[str, Scenario],
                 prefix: str = "") -> None:
    """Fire, Timing, Silent, Dup, Label and Annotation checks of an alert or repair requirement.

    ``scenarios``: the requirement's scenarios by unprefixed name (``outage``, ``normal``...,
    from :func:`tasks.generator.scenarios.alert_scenarios`); their ids carry ``prefix``.

    Raises:
        CatalogError: the scenarios give no safe time for a check.
    """
    probes = AlertProbes(catalog, world, req, scenarios, prefix)
    rid, alert = req["id"], req["alert"]
    catalog.add(f"{rid}.defined-once", rid, "Dup", f"{alert} is defined exactly once",
                "Two rules with one name page twice for one outage",
                {"type": "rule_count", "kind": "alert", "name": alert, "expect": 1})
    steady = _outage_checks(probes)
    if (req.get("condition") or {"type": "burn"})["type"] == "down":
        _down_probes(probes)
    else:
        _traffic_probes(probes, steady)
    _static_label_checks(probes)
    _annotation_checks(probes, steady)


def _outage_checks(probes: AlertProbes) -> int:
    """Outage: silent before, not before ``for`` has elapsed, on time after it, firing, one
    alert per service, its labels, recovery. Returns the steady firing minute."""
    outage = probes.states("outage")
    outage_start, outage_end = reference_states.outage_window(probes.scenarios["outage"],
                                                              probes.req["service"])
    true_at = max(reference_states.first(cond) for cond, _ in outage.values())
    fires_at = [reference_states.first(fire) for _, fire in outage.values()]
    if any(f is None for f in fires_at):
        raise CatalogError(f"{probes.rid}: the outage never fires the reference alert")
    latest = _onset_checks(probes, outage, outage_start, true_at, min(fires_at), max(fires_at))
    steady = min(latest + 10, outage_end - 3)
    _during_outage_checks(probes, sorted({steady, outage_end - 3}), steady)
    _recovery_check(probes, outage, outage_end)
    return steady


def _onset_checks(probes: AlertProbes, outage: dict, outage_start: int, true_at: int,
                  earliest: int, latest: int) -> int:
    """Silent just before the outage, not firing before ``for`` has elapsed (where the
    semantics leave room), firing on time; returns ``latest`` (the latest reference onset)."""
    service, for_min = probes.req["service"], probes.for_min
    probes.silent("outage", outage_start - 5, "Silent",
                  f"Silent before the {service} outage ({outage_start - 5}m)",
                  "Normal traffic just before the outage must not page")
    not_before = (true_at + earliest) // 2
    if earliest - true_at >= 2 and all(cond[not_before] and not fire[not_before]
                                       for cond, fire in outage.values()):
        probes.silent("outage", not_before, "Timing",
                      f"Not firing at {not_before}m, before for: {for_min}m has elapsed",
                      f"The condition holds from about {true_at}m; an alert without for "
                      "(or with a shorter one) already fires here")
    probes.fire("outage", latest + MARGIN, "Timing", f"Firing on time at {latest + MARGIN}m",
                f"The condition holds from about {true_at}m; with for: {for_min}m the alert must "
                f"fire by {latest}m")
    if _exact_onset(probes, outage, latest):
        probes.catalog.add(
            f"{probes.rid}.timing.outage@{latest + 1}m", probes.rid, "Timing",
            f"Firing one evaluation after for: {for_min}m has elapsed ({latest + 1}m)",
            f"Every target is down from {true_at}m, so the alert fires at {latest}m exactly; "
            "a longer for (or a condition that lags) is still pending here",
            probes.promql("outage", latest + 1, f"count({probes.firing}) > bool 0", ONE))
    return latest


def _exact_onset(probes: AlertProbes, outage: dict, latest: int) -> bool:
    """Whether the reference fires at ``latest`` under every semantics with no window in
    between: a Down condition reads ``up`` at the instant (no rate window), so its onset is
    exact and a probe one evaluation later needs no margin (it fires from ``latest`` to at
    least ``latest`` + MARGIN + 1)."""
    if (probes.req.get("condition") or {}).get("type") != "down":
        return False
    return all(reference_states.first(fire) == latest
               and all(fire[latest:latest + MARGIN + 2]) for _, fire in outage.values())


def _during_outage_checks(probes: AlertProbes, times: list[int], label_at: int) -> None:
    """Fires and is one alert per service at each of ``times``; carries every required label
    at ``label_at``."""
    rid, alert, service, firing = probes.rid, probes.req["alert"], probes.req["service"], probes.firing
    for t in times:
        probes.fire("outage", t, "Fire", f"Fires during the {service} outage ({t}m)",
                    "A sustained outage burns the error budget fast: it must page")
        probes.catalog.add(f"{rid}.dup.outage@{t}m", rid, "Dup",
                           f"One alert for {service}, not one per pod ({t}m)",
                           "The page is per service: aggregate away pod labels",
                           probes.promql("outage", t, f"count({firing})", ONE) | {"witness": firing})
    if (probes.req.get("condition") or {}).get("type") == "down":
        _exact_labels_check(probes, label_at)
    for name, value in sorted(probes.req["labels"].items()):
        selector = alerts_selector(alert, service, **{name: value})
        probes.catalog.add(f"{rid}.label.{name}", rid, "Label",
                           f"The firing alert carries {name}={value}",
                           "Routing and on-call tooling read this label",
                           probes.promql("outage", label_at, f"count({selector}) > bool 0", ONE)
                           | {"witness": firing})


def _exact_labels_check(probes: AlertProbes, t: int) -> None:
    """The firing Down alert carries the service and the required labels and nothing else.

    A Down alert's value is constant while it fires, so a label templated from
    ``{{ $value }}`` (or any extra label) is invisible to the other checks; every extra label
    splits or renames the page its routing and grouping see. ``count without`` the expected
    names leaves exactly the extra labels, which promtool's exp_samples compare exactly.
    """
    names = ["alertname", "alertstate", "service", *sorted(probes.req["labels"])]
    probes.catalog.add(f"{probes.rid}.label.exact", probes.rid, "Label",
                       f"The firing alert carries exactly service, {', '.join(names[3:])}",
                       "No label beyond the required ones: a templated label such as "
                       "{{ $value }} makes a different alert than the one routed",
                       probes.promql("outage", t, f"count without ({', '.join(names)}) "
                                     f"({probes.firing})", ONE) | {"witness": probes.firing})


def _recovery_check(probes: AlertProbes, outage: dict, outage_end: int) -> None:
    """Silent again at the first minute after the outage where every semantics is safely so.

    Raises:
        CatalogError: no such minute before the scenario's end.
    """
    horizon = probes.scenarios["outage"].horizon
    recovered = None
    for t in range(outage_end, horizon - MARGIN):
        if reference_states.stable(outage, t, False, horizon):
            recovered = t
            break
    if recovered is None:
        raise CatalogError(f"{probes.rid}: no safe recovery time")
    probes.silent("outage", recovered + 1, "Silent", f"Silent after recovery ({recovered + 1}m)",
                  "Once the 5m window is clean the page must resolve, though the 1h window still burns")


def _static_label_checks(probes: AlertProbes) -> None:
    """The rule itself declares every required label."""
    rid, alert = probes.rid, probes.req["alert"]
    for name, value in sorted(probes.req["labels"].items()):
        probes.catalog.add(f"{rid}.static-label.{name}", rid, "Label",
                           f"The rule declares {name}: {value}",
                           "Static labels on the rule are what routing sees before it ever fires",
                           {"type": "static_label", "alert": alert, "name": name, "value": value})


def _annotation_checks(probes: AlertProbes, label_at: int) -> None:
    """Each required annotation, resolved on the firing alert at ``label_at``, is present,
    equals or contains what the requirement says."""
    rid, alert, service = probes.rid, probes.req["alert"], probes.req["service"]
    annotations = probes.req.get("annotations") or {}
    for key, rule in sorted(annotations.items()):
        expect = dict(rule)
        if "equals" in expect:
            label = f"Annotation {key} is {expect['equals']}"
        elif "contains" in expect:
            label = f"Annotation {key} resolves to text naming {expect['contains']}"
        else:
            label = f"Annotation {key} is present"
        probes.catalog.add(f"{rid}.annotation.{key}", rid, "Annotation", label,
                           "On-call reads the annotations first; templates must resolve",
                           {"type": "annotation", "scenario": probes.prefix + "outage",
                            "eval_time": f"{label_at}m", "alert": alert, "service": service,
                            "key": key, "expect": expect})


def _traffic_probes(probes: AlertProbes, steady: int) -> None:
    """Fire and Silent probes of an error-ratio or burn-rate alert beyond its outage."""
    alert, service, scenarios = probes.req["alert"], probes.req["service"], probes.scenarios
    silent, fire = probes.silent, probes.fire
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
    if probes.req.get("generic"):
        probes.silent_for("outage", steady,
                          alerts_selector(alert).replace("}", f',service!="{service}"}}'),
                          f"Only {service} fires during its outage ({steady}m)",
                          "A rule for every service must not page for the healthy ones")
    for t in (60, 85):
        silent("low-traffic", t, "Silent", f"Silent on very low traffic ({t}m)",
               "A handful of requests at the usual error ratio is not a fast burn")
    long_spike = probes.states("long-spike")
    long_fire = max(reference_states.first(fire) or 10**6 for _, fire in long_spike.values()) + MARGIN + 1
    fire("long-spike", long_fire, "Fire", f"Fires on a 25-minute burst ({long_fire}m)",
         "A long enough burst burns the 1h budget too: it must page")
    _long_spike_edges(probes, long_spike)
    if "no-traffic" in scenarios:
        for t in (60, 85):
            silent("no-traffic", t, "Silent", f"Silent at zero traffic ({t}m)",
                   "With no requests the SLI is 0/0 = NaN: that is no burn, and must not page")


def _down_probes(probes: AlertProbes) -> None:
    """Fire and Silent probes of a "service down" alert beyond its outage."""
    service, for_min, silent = probes.req["service"], probes.for_min, probes.silent
    for t in (60 + for_min + MARGIN + 1, 80) if "vanish" in probes.scenarios else ():
        probes.fire("vanish", t, "Fire", f"Fires when {service}'s targets vanish ({t}m)",
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


def _long_spike_edges(probes: AlertProbes, states: dict) -> None:
    """The two edges of the 25-minute burst: still silent at the last safe minute before the
    reference fires (a rule that lost its long window, or with a shorter ``for``, already
    pages), and still firing at the last safe minute after the burst ends (the required
    window still holds the burst; a shorter window has already resolved)."""
    scenario = probes.scenarios["long-spike"]
    start, end = reference_states.outage_window(scenario, probes.req["service"])
    earliest = min(reference_states.first(fire) or 10**6 for _, fire in states.values())
    early = earliest - MARGIN - 1
    if early > start and reference_states.stable(states, early, False, scenario.horizon):
        probes.silent("long-spike", early, "Silent", f"Silent early in the burst ({early}m)",
                      f"{early - start} minutes into a burst neither the windows nor the for "
                      "have elapsed: a rule without its long window, or a shorter for, pages here")
    after = [t for t in range(end + 1, scenario.horizon - MARGIN)
             if reference_states.stable(states, t, True, scenario.horizon)]
    if after:
        t = max(after)
        probes.fire("long-spike", t, "Fire", f"Still firing {t - end}m after the burst ends ({t}m)",
                    "The required window still holds the burst: a shorter window resolves early")
