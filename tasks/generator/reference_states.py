"""The reference alert per minute: its condition and firing state under each window semantics.

Computed with the reference evaluator (:mod:`tasks.generator.promsim`) from the scenario's
counters, never read off the oracle's rule text; checks are placed where every semantics
agrees, at least :data:`tasks.generator.checks.MARGIN` intervals from any crossing.
"""

from __future__ import annotations

from tasks.generator import promsim
from tasks.generator.checks import MARGIN
from tasks.generator.scenarios import Scenario, counters
from tasks.generator.world import World


def condition(world: World, scenario: Scenario, req: dict, semantics: str) -> list[bool]:
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


def outage_window(scenario: Scenario, service: str) -> tuple[int, int]:
    """(start, end) minutes of the service's outage in ``scenario`` (phases or targets down)."""
    spans = [(p.start, p.end) for p in scenario.phases.get(service, [])]
    spans += [(o.start, o.end) for o in scenario.outages.get(service, [])]
    return min(a for a, _ in spans), max(b for _, b in spans)


def states(world: World, scenario: Scenario, req: dict) -> dict[str, tuple[list[bool], list[bool]]]:
    """Condition and firing state per minute under each window semantics."""
    for_min = req["for_s"] // world.evaluation_interval_s
    out = {}
    for semantics in promsim.SEMANTICS:
        cond = condition(world, scenario, req, semantics)
        out[semantics] = (cond, promsim.firing_states(cond, for_min))
    return out


def stable(states: dict, t: int, firing: bool, horizon: int) -> bool:
    """Firing state equals ``firing`` under every semantics from t-MARGIN to t+MARGIN."""
    lo, hi = t - MARGIN, t + MARGIN
    if lo < 0 or hi > horizon:
        return False
    return all(
        fire[m] == firing for _, fire in states.values() for m in range(lo, hi + 1)
    )


def first(values: list[bool], start: int = 0) -> int | None:
    """The first minute from ``start`` at which ``values`` is true (None if it never is)."""
    for index in range(start, len(values)):
        if values[index]:
            return index
    return None
