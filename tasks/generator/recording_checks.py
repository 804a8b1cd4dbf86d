"""Checks of a recording requirement: one series per service (Cardinality) and the SLI's
value (Value) at fixed points of the scenarios, computed with the reference evaluator."""

from __future__ import annotations

from tasks.generator import promsim
from tasks.generator.checks import ONE, Catalog
from tasks.generator.scenarios import Scenario, counters
from tasks.generator.world import World


def _value_band(values: list[float | None], rel: float) -> tuple[float, float] | None:
    """(lo, hi): the range of ``values`` widened by ``rel`` of each end (and 1e-9); None if a
    value is undefined."""
    if any(v is None for v in values):
        return None
    lo, hi = min(values), max(values)
    return lo - abs(lo) * rel - 1e-9, hi + abs(hi) * rel + 1e-9


def recording_checks(catalog: Catalog, world: World, req: dict, scenarios: dict[str, Scenario]) -> None:
    """Cardinality and Value checks of each record of a recording requirement.

    Values are the error ratio over the record's window (5m, 30m or 1h) under both window
    semantics: exact where they agree, else a band 2% wider than both; points where the ratio
    is undefined are skipped, and ``no-traffic`` (if present) checks the record is NaN.
    ``scenarios``: every scenario of the task by id.
    """
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
