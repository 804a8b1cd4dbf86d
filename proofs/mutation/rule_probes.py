"""The rule half of the equivalence probe: replay oracle and mutant rules through the real promtool on more scenarios and times.

The probe set is broader than the catalog's: every catalog scenario of the targeted requirement
evaluated at every minute, plus scenarios generated from the spec (``tasks/generator/scenarios.py``'s
counters) for the targeted requirement's service: steady error ratios at 0.5x, 0.9x, 1.1x,
2x and 5x its threshold, a short full burst, its targets down, vanished and one pod down,
and every other service failing or down at once. At each minute the probe reads which
alerts fire, with their labels (``ALERTS{alertstate="firing"}``), the values of the
records the spec names, and the labels and annotations of the targeted alert
(``alert_rule_test``). A mutant is equivalent on this half when every reading equals the
oracle's.
"""

from __future__ import annotations

import json
import math
import re
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

from grader import promtool
from grader.promql_replay import group_eval_order
from grader.workspace import load_workspace
from recorder.reference.context import Context, Files
from tasks.generator.scenarios import Outage, Phase, Scenario, counters
from tasks.generator.world import world_from_json

HORIZON_MIN = 100
"""Minutes each generated scenario runs (every minute is a probe time)."""
RATIO_FACTORS = (0.5, 0.9, 1.1, 2.0, 5.0)
"""Multiples of the requirement's threshold the steady-ratio scenarios run at."""


@dataclass(frozen=True)
class Reading:
    """What the rules show in one scenario at one minute: ``alerts`` (sorted label sets of
    firing alerts and record samples, as text) and ``notes`` (the targeted alert's labels and
    annotations, as text); ``error`` when promtool could not replay the rules at all."""

    alerts: tuple[str, ...] = ()
    notes: tuple[str, ...] = ()
    error: str | None = None


def _service_of(ctx: Context, req: dict) -> str:
    return str(req.get("service") or next(s["name"] for s in ctx.spec["services"]))


def _threshold(ctx: Context, req: dict, service: str) -> float:
    if req.get("threshold") is not None:
        return float(req["threshold"])
    return next((float(r["threshold"]) for r in ctx.requirements("alert", "repair")
                 if r.get("service") == service and r.get("threshold") is not None), 0.05)


def generated_scenarios(ctx: Context, req: dict) -> list[Scenario]:
    """The extra scenarios of the probe for the requirement ``req`` (see the module doc)."""
    service = _service_of(ctx, req)
    threshold = _threshold(ctx, req, service)
    others = [s["name"] for s in ctx.spec["services"] if s["name"] != service]
    out = [Scenario(f"probe-x{f:g}", f"{service} at {f:g}x the threshold", HORIZON_MIN,
                    phases={service: [Phase(20, 80, min(1.0, round(threshold * f, 6)))]})
           for f in RATIO_FACTORS]
    out += [
        Scenario("probe-burst", f"{service} fails every request for 10 minutes", HORIZON_MIN,
                 phases={service: [Phase(30, 40, 1.0)]}),
        Scenario("probe-down", f"{service} down", HORIZON_MIN, outages={service: [Outage(30, 70)]}),
        Scenario("probe-vanish", f"{service} vanishes", HORIZON_MIN, outages={service: [Outage(30, 70, "vanish")]}),
        Scenario("probe-one-pod", f"one {service} pod down", HORIZON_MIN,
                 outages={service: [Outage(30, 70, "one-pod")]}),
        Scenario("probe-others-fail", "every other service fails half its requests", HORIZON_MIN,
                 phases={name: [Phase(20, 80, 0.5)] for name in others}),
        Scenario("probe-others-down", "every other service down", HORIZON_MIN,
                 outages={name: [Outage(30, 70)] for name in others}),
    ]
    return out


def owned_scenarios(ctx: Context, req: dict, ids: list[str]) -> list[str]:
    """The catalog scenarios that judge ``req``: the first alert requirement's have no prefix
    (recording requirements are judged on them too), every other alert or repair
    requirement's are prefixed ``<id>-``."""
    rules = ctx.requirements("alert", "repair")
    primary = next((r for r in rules if r["kind"] == "alert"), None)
    prefixes = [f"{r['id']}-" for r in rules if r is not primary]
    if req["kind"] in ("alert", "repair") and req is not primary:
        return [i for i in ids if i.startswith(f"{req['id']}-")]
    return [i for i in ids if not any(i.startswith(p) for p in prefixes)]


def probe_series(ctx: Context, catalog: dict, req: dict) -> dict[str, tuple[list[dict], int]]:
    """Scenario id -> (promtool input series, horizon in minutes): the catalog's scenarios
    that judge ``req`` (:func:`owned_scenarios`) and :func:`generated_scenarios`."""
    horizons = {s["id"]: int(s.get("horizon_min", HORIZON_MIN)) for s in catalog.get("scenarios", [])}
    own = owned_scenarios(ctx, req, list(horizons))
    out = {sid: (items, horizons.get(sid, HORIZON_MIN))
           for sid, items in catalog.get("input_series", {}).items() if sid in own}
    world = world_from_json(ctx.spec)
    for scenario in generated_scenarios(ctx, req):
        items = [item for svc in world.services for item in counters(world, scenario, svc)[1]]
        out[scenario.id] = (items, scenario.horizon)
    return out


def _test_groups(series: dict[str, tuple[list[dict], int]], names: list[str], alert: str | None) -> list[dict]:
    selector = "|".join(["ALERTS", *names])
    expr = f'{{__name__=~"{selector}",alertstate=~"firing|"}}'
    groups = []
    for sid, (items, horizon) in sorted(series.items()):
        times = range(1, horizon + 1)
        groups.append({
            "name": sid, "input_series": items,
            "promql_expr_test": [{"expr": promtool.tagged(expr, "check", f"{sid}@{t}m"), "eval_time": f"{t}m",
                                  "exp_samples": []} for t in times],
            "alert_rule_test": [{"eval_time": f"{t}m", "alertname": alert, "exp_alerts": []} for t in times]
            if alert else [],
        })
    return groups


def replay(files: Files, series: dict[str, tuple[list[dict], int]], names: list[str],
           alert: str | None, interval: str) -> dict[str, Reading]:
    """Readings (``"<scenario>@<minute>m"`` -> :class:`Reading`) of the workspace ``files``.

    Times with nothing firing are left out. When a rule file does not load, or promtool
    fails in a way no probe explains, the result is ``{"*": Reading(error=...)}``.
    """
    with tempfile.TemporaryDirectory(prefix="alertforge-probe-") as tmp:
        root = Path(tmp) / "monitoring"
        for rel, text in files.items():
            (root / rel).parent.mkdir(parents=True, exist_ok=True)
            (root / rel).write_text(text, encoding="utf-8")
        rule_files = load_workspace(root).rule_files
        broken = [f"{f.rel}: {f.error}" for f in rule_files if f.error]
        if broken:
            return {"*": Reading(error="rule file does not load: " + broken[0])}
        paths = []
        for n, rule_file in enumerate(rule_files):
            path = Path(tmp) / f"rules-{n}.yml"
            path.write_text(rule_file.text, encoding="utf-8")
            paths.append(path)
        test = Path(tmp) / "probe.json"
        test.write_text(promtool.test_file(paths, group_eval_order(rule_files),
                                           _test_groups(series, names, alert), interval), encoding="utf-8")
        out = subprocess.run([promtool.PROMTOOL, "test", "rules", test.name], cwd=tmp, capture_output=True,
                             text=True, timeout=promtool.TIMEOUT_S, check=False)
    return readings(out.stdout + "\n" + out.stderr, out.returncode)


_GROUP = re.compile(r"^\s*name: (\S+),\s*$", re.MULTILINE)


def readings(output: str, returncode: int = 1) -> dict[str, Reading]:
    """Readings from ``promtool test rules`` output. An expression probe's tag names its
    scenario and minute; an alert test's failure names only the minute, so its scenario is
    the test group whose ``name:`` line precedes it. ``{"*": Reading(error=...)}`` for
    output no probe explains."""
    parts = _GROUP.split(output)
    chunks = [(None, parts[0])] + [(parts[k], parts[k + 1]) for k in range(1, len(parts), 2)]
    out: dict[str, Reading] = {}
    stray_all: list[str] = []
    for scenario, chunk in chunks:
        failures, stray = promtool.parse_failures(chunk)
        stray_all += stray
        for failure in failures:
            if failure.kind == "alert":
                if scenario is None:
                    stray_all.append(f"alert test failure outside a test group: {failure.check_id}")
                    continue
                key = f"{scenario}@{promtool.duration_minutes(failure.time)}m"
                notes = tuple(sorted(json.dumps([lab, ann], sort_keys=True)
                                     for lab, ann in promtool.parse_alerts(failure.got)))
                out[key] = Reading(out.get(key, Reading()).alerts, notes)
            else:
                key = failure.check_id
                samples = tuple(sorted(sample_text(labels, v) for labels, v in promtool.parse_samples(failure.got)))
                out[key] = Reading(samples, out.get(key, Reading()).notes)
    if stray_all or (returncode != 0 and not out):
        return {"*": Reading(error="promtool: " + " | ".join(stray_all[:3] or [f"exit {returncode}"]))}
    return out


def sample_text(labels: dict[str, str], value: str) -> str:
    """A sample as PromQL-like text: ``ALERTS{alertname="X",service="y"}`` (alert state and
    value left out) or ``record{service="y"} 0.0123456789`` (the value as promtool printed it,
    compared with a tolerance by :func:`same_samples`)."""
    labels = dict(labels)
    name = labels.pop("__name__", "")
    if name == "ALERTS":
        labels.pop("alertstate", None)
    text = name + "{" + ",".join(f'{k}="{v}"' for k, v in sorted(labels.items())) + "}"
    return text if name == "ALERTS" else f"{text} {_value(value)}"


def _value(text: str) -> str:
    try:
        return repr(float(text))
    except ValueError:
        return text


def _split(item: str) -> tuple[str, float | None]:
    key, _, value = item.rpartition(" ")
    if not key.endswith("}"):
        return item, None
    try:
        return key, float(value)
    except ValueError:
        return item, None


def same_samples(oracle: tuple[str, ...], mutant: tuple[str, ...], rel: float = 1e-6) -> bool:
    """True when both readings hold the same series and each value agrees within ``rel``
    (relative; NaN equals NaN): the same rules evaluated in another order may sum in another
    order and differ in the last digits."""
    ours, theirs = dict(map(_split, oracle)), dict(map(_split, mutant))
    if set(ours) != set(theirs):
        return False
    for key, a in ours.items():
        b = theirs[key]
        if (a is None) != (b is None):
            return False
        if a is not None and not (math.isclose(a, b, rel_tol=rel, abs_tol=1e-12) or (math.isnan(a) and math.isnan(b))):
            return False
    return True
