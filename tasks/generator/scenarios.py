"""Traffic scenarios: what each service's request and error counters do over a replay.

A scenario gives, per service, the error ratio and traffic factor in each minute and
optionally an interval where the service is gone (its series end in a ``stale`` marker and
``up`` drops to 0). From that it builds (a) the exact counter samples the reference
evaluator reads and (b) the promtool ``input_series`` the grader replays.
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass, field

from tasks.generator.world import SLI_FAMILIES, Service, World


@dataclass
class Phase:
    """From minute ``start`` (inclusive) to ``end`` (exclusive): this error ratio and traffic factor."""

    start: int
    end: int
    error_ratio: float
    traffic: float = 1.0


@dataclass
class Outage:
    """From minute ``start`` to ``end`` (exclusive) the service's targets are down.

    ``how``: ``"down"`` (every pod's scrape fails: its counters end in a stale marker and
    ``up`` is 0), ``"vanish"`` (the pods are gone from service discovery: ``up`` ends in a stale
    marker too, so only ``absent()`` sees it) or ``"one-pod"`` (pod 0 only, as ``"down"``).
    At ``end`` the pods come back and their counters restart from 0 (a counter reset).
    """

    start: int
    end: int
    how: str = "down"


@dataclass
class Scenario:
    """A replay of ``horizon`` minutes; services not named in ``phases`` run at their baseline."""

    id: str
    title: str
    horizon: int
    phases: dict[str, list[Phase]] = field(default_factory=dict)
    gone: dict[str, int] = field(default_factory=dict)  # service -> minute its process dies
    outages: dict[str, list[Outage]] = field(default_factory=dict)

    def ratio_and_traffic(self, svc: Service, minute: int) -> tuple[float, float]:
        """Error ratio and traffic factor of ``svc`` during ``minute`` (the minute ending at +1)."""
        for phase in self.phases.get(svc.name, []):
            if phase.start <= minute < phase.end:
                return phase.error_ratio, phase.traffic
        return svc.baseline_error_ratio, 1.0

    def outage_at(self, svc: Service, pod_index: int, minute: int) -> Outage | None:
        """The outage that takes pod ``pod_index`` of ``svc`` down at sample ``minute``, if any."""
        for outage in self.outages.get(svc.name, []):
            if outage.start <= minute < outage.end and (outage.how != "one-pod" or pod_index == 0):
                return outage
        return None

    def to_json(self) -> dict:
        """The scenario as stored in the check catalog (for the viewer's scenario plot)."""
        data = {
            "id": self.id,
            "title": self.title,
            "horizon_min": self.horizon,
            "phases": {
                name: [vars(p) for p in phases] for name, phases in sorted(self.phases.items())
            },
            "gone": dict(sorted(self.gone.items())),
        }
        if self.outages:
            data["outages"] = {name: [vars(o) for o in items]
                               for name, items in sorted(self.outages.items())}
        return data


DIURNAL_AMPLITUDE = 0.35
"""Traffic swings +-35% over a day (a sine with a seeded start time)."""
JITTER = 0.06
"""Per 5-minute block, traffic varies by up to +-6% (seeded)."""


def traffic_shape(world: World, scenario: Scenario, svc: Service) -> list[float]:
    """Per-minute traffic multiplier: a diurnal sine from a seeded time of day, times jitter.

    Both change every 5 minutes (so the input series compress into ``a+bxN`` runs).

    Seeded by task, service and scenario, so the same task always replays the same traffic
    and two seeds of a workflow do not.
    """
    rng = random.Random(f"{world.task_id}/{svc.name}/{scenario.id}/traffic")
    start = rng.randrange(24 * 60)
    blocks = [1 + rng.uniform(-JITTER, JITTER) for _ in range(scenario.horizon // 5 + 1)]
    return [
        round((1 + DIURNAL_AMPLITUDE * math.sin(2 * math.pi * (start + m - m % 5) / 1440))
              * blocks[m // 5], 4)
        for m in range(scenario.horizon)
    ]


@dataclass
class Counters:
    """Per-pod samples of one service in one scenario (index = minute; None = no sample).

    ``errors``: the SLI's bad-event counters (failed requests; for a latency SLI the requests
    slower than the threshold), one list per pod; ``totals``: series whose sum counts every
    request; ``up``: each pod's ``up`` samples.
    """

    errors: list[list[float | None]]
    totals: list[list[float | None]]  # ok + error series (latency: the _count series)
    up: list[list[float | None]] = field(default_factory=list)


LATENCY_BUCKETS = (("0.05", 0.0, 0.4), ("0.1", 0.0, 0.75), ("1", 0.5, 1.0), ("2.5", 0.9, 1.0))
"""Histogram buckets besides the SLO threshold's and +Inf: (le, share of slow, share of fast).

A bucket's count is floor(share_fast x fast + share_slow x slow) of the cumulative counts, so
every bucket is a monotone whole-number counter and ``le`` order is respected for the
thresholds the generator samples (0.25 s to 0.5 s)."""


def _pod_samples(scenario: Scenario, svc: Service, pod_index: int, rpm: float, shape: list[float],
                 last: int) -> tuple[list, list, list]:
    """Cumulative (requests, bad events, up) samples of one pod, minute 0..``last``.

    Counters count whole requests, as real ones do: cumulative sums are floored, so each
    minute adds an integer and the ratio over a window tracks the scenario's. Whole numbers
    also keep promtool's expanding notation exact (a+bxN is summed in float64). During an
    outage a pod has no counter samples; when it comes back its counters restart at 0.
    """
    requests: list[float | None] = [0.0]
    bad: list[float | None] = [0.0]
    up: list[float | None] = [1.0]
    real_requests = real_bad = 0.0
    was_down = False
    for index in range(1, last + 1):
        minute = index - 1
        outage = scenario.outage_at(svc, pod_index, index)
        if outage is not None:
            requests.append(None)
            bad.append(None)
            up.append(None if outage.how == "vanish" else 0.0)
            was_down = True
            continue
        up.append(1.0)
        if was_down:  # a fresh process: counters start over
            real_requests = real_bad = 0.0
            requests.append(0.0)
            bad.append(0.0)
            was_down = False
            continue
        ratio, traffic = scenario.ratio_and_traffic(svc, minute)
        before = math.floor(real_requests)
        real_requests += rpm * traffic * shape[minute]
        added = math.floor(real_requests) - before
        real_bad += added * ratio
        requests.append(float(math.floor(real_requests)))
        bad.append(float(math.floor(real_bad + 1e-9)))
    return requests, bad, up


def _shares(requests: list, bad: list, share_slow: float, share_fast: float) -> list:
    return [None if r is None else float(math.floor(share_fast * (r - b) + share_slow * b + 1e-9))
            for r, b in zip(requests, bad)]


def counters(world: World, scenario: Scenario, svc: Service) -> tuple[Counters, list[dict]]:
    """The counter samples of ``svc`` and its promtool input series.

    Returns the counters for the reference evaluator and a list of
    ``{"series": ..., "values": ...}`` items (promtool expanding notation). An ``http`` or
    ``grpc`` service feeds its request counter split by status; a ``latency`` service feeds
    a histogram (``_bucket{le}``, ``_count``) whose slow requests are the scenario's "errors".
    """
    family = SLI_FAMILIES[svc.family]
    gone_at = scenario.gone.get(svc.name)
    items: list[dict] = []
    errors: list[list[float | None]] = []
    totals: list[list[float | None]] = []
    ups: list[list[float | None]] = []
    shape = traffic_shape(world, scenario, svc)
    last = scenario.horizon if gone_at is None else gone_at
    pad = [None] * (scenario.horizon - last)
    for pod_index, rpm in enumerate(svc.requests_per_minute):
        requests, bad, up = _pod_samples(scenario, svc, pod_index, rpm, shape, last)
        pod = f"{svc.name}-{pod_index}"
        base = f'service="{svc.name}",pod="{pod}"'
        stale = gone_at is not None
        if family.get("histogram"):
            metric = family["metric"]
            buckets = [(le, slow, fast) for le, slow, fast in LATENCY_BUCKETS if float(le) < float(svc.latency_le)]
            buckets.append((svc.latency_le, 0.0, 1.0))
            buckets += [(le, slow, fast) for le, slow, fast in LATENCY_BUCKETS if float(le) > float(svc.latency_le)]
            for le, share_slow, share_fast in buckets:
                items.append({"series": f'{metric}_bucket{{{base},le="{le}"}}',
                              "values": expand_notation(_shares(requests, bad, share_slow, share_fast), stale)})
            for suffix in (f'_bucket{{{base},le="+Inf"}}', f"_count{{{base}}}"):
                items.append({"series": metric + suffix, "values": expand_notation(requests, stale)})
            errors.append(bad + pad)
            totals.append(requests + pad)
        else:
            ok = [None if r is None else r - b for r, b in zip(requests, bad)]
            for value_label, values in ((family["ok_value"], ok), (family["error_value"], bad)):
                series = f'{family["metric"]}{{{base},{family["error_label"]}="{value_label}"}}'
                items.append({"series": series, "values": expand_notation(values, stale)})
            errors.append(bad + pad)
            totals.extend([ok + pad, bad + pad])
        if gone_at is not None:
            up = [1.0 if m < gone_at else 0.0 for m in range(scenario.horizon + 1)]
        ups.append(up)
        items.append({"series": f'up{{job="{svc.name}",{base}}}', "values": expand_notation(up)})
    return Counters(errors=errors, totals=totals, up=ups), items


def format_number(value: float) -> str:
    """A sample value as promtool reads it: integers without a decimal point, else shortest repr."""
    if value == int(value):
        return str(int(value))
    return repr(round(value, 6))


def expand_notation(values: list[float | None], stale: bool = False) -> str:
    """Samples as promtool's expanding notation: runs of equal steps become ``a+bxN``.

    Runs are only compressed on exactly equal steps; with whole-number counters promtool's
    float64 re-summing of ``a+bxN`` is exact, so it never sees a counter reset that is not there.
    ``None`` is a missing sample: the first after a value is written ``stale`` (a stale marker,
    as Prometheus writes when a target's scrape fails), later ones ``_``.

    ``[0, 5, 10, 15, 3]`` -> ``"0+5x3 3"``; a trailing ``stale`` marks the series gone.

    Raises:
        ValueError: the text would not expand back to ``values`` (never expected).
    """
    parts: list[str] = []
    index = 0
    while index < len(values):
        start = values[index]
        if start is None:
            parts.append("stale" if index and values[index - 1] is not None else "_")
            index += 1
            continue
        run = 0
        if index + 1 < len(values) and values[index + 1] is not None:
            step = values[index + 1] - start
            while (
                index + run + 1 < len(values)
                and values[index + run + 1] is not None
                and values[index + run + 1] - values[index + run] == step
            ):
                run += 1
        if run >= 2:
            step_text = format_number(step)
            sign = "" if step_text.startswith("-") else "+"
            parts.append(f"{format_number(start)}{sign}{step_text}x{run}")
            index += run + 1
        else:
            parts.append(format_number(start))
            index += 1
    if stale:
        parts.append("stale")
    text = " ".join(parts)
    if read_notation(text) != [*values, *([None] if stale else [])]:
        raise ValueError(f"expanding notation does not round-trip: {text[:80]}...")
    return text


def read_notation(text: str) -> list[float | None]:
    """Expand promtool's notation the way Prometheus does (``a+bxN``: N+1 values by repeated
    float64 addition; ``stale`` and ``_`` -> None). Used to prove the written series round-trip."""
    values: list[float | None] = []
    for part in text.split():
        if part in ("stale", "_"):
            values.append(None)
            continue
        if "x" not in part:
            values.append(float(part))
            continue
        head, times = part.rsplit("x", 1)
        cut = max(head.rfind("+"), head.rfind("-"))
        start, step = float(head[:cut]), float(head[cut:])
        value = start
        for _ in range(int(times) + 1):
            values.append(value)
            value += step
    return values


def burn_scenarios(world: World, target: Service, threshold: float, other: Service) -> list[Scenario]:
    """The scenarios a fast-burn alert is judged on (seed spec: Fire, Timing, Silent families).

    normal traffic; a sustained outage of the target and its recovery; steady error ratios
    just under (0.85x) and just over (1.15x) the threshold; a short spike that trips the 5m
    window but not the 1h one, and a long one that burns the budget and must page; very low
    traffic at the usual error ratio; another service failing while the target is healthy.
    """
    outage_ratio = min(0.9, max(0.3, round(threshold * 5, 4)))
    spike_ratio = min(1.0, round(threshold * 10, 4))
    return [
        Scenario("normal", "Normal traffic on every service", 100),
        Scenario(
            "outage",
            f"{target.name} fails {outage_ratio:.0%} of requests from 60m to 100m, then recovers",
            130,
            phases={target.name: [Phase(60, 100, outage_ratio)]},
        ),
        Scenario(
            "under",
            f"{target.name} steady at 0.85x the burn threshold",
            90,
            phases={target.name: [Phase(0, 90, round(threshold * 0.85, 6))]},
        ),
        Scenario(
            "over",
            f"{target.name} steady at 1.15x the burn threshold",
            90,
            phases={target.name: [Phase(0, 90, round(threshold * 1.15, 6))]},
        ),
        Scenario(
            "spike",
            f"{target.name} fails {spike_ratio:.0%} of requests for 3 minutes at 60m",
            90,
            phases={target.name: [Phase(60, 63, spike_ratio)]},
        ),
        Scenario(
            "low-traffic",
            f"{target.name} at 2% of its usual traffic with its usual error ratio",
            90,
            phases={target.name: [Phase(0, 90, target.baseline_error_ratio, 0.02)]},
        ),
        Scenario(
            "long-spike",
            f"{target.name} fails {spike_ratio:.0%} of requests for 25 minutes from 40m",
            90,
            phases={target.name: [Phase(40, 65, spike_ratio)]},
        ),
        Scenario(
            "other-fails",
            f"{other.name} fails 50% of requests from 60m to 100m; {target.name} is healthy",
            110,
            phases={other.name: [Phase(60, 100, 0.5)]},
        ),
    ]


def ratio_scenarios(world: World, target: Service, threshold: float, prefix: str,
                    other: Service | None = None) -> list[Scenario]:
    """Scenarios for a single-window error-ratio alert (a repair of an existing rule).

    normal traffic; an outage of one service and its recovery; steady ratios just under
    (0.85x) and over (1.15x) the threshold; a 3-minute spike that ``for`` must ride out; a
    25-minute burst that must page; very low traffic at the usual error ratio; with
    ``other`` (an alert about one service, not a generic rule for all), another service
    failing half its requests while the target is healthy.
    """
    name = target.name
    others = [] if other is None else [
        Scenario(prefix + "other-fails", f"{other.name} fails 50% of requests from 60m to 100m; "
                 f"{name} is healthy", 110, phases={other.name: [Phase(60, 100, 0.5)]})]
    return [
        Scenario(prefix + "normal", "Normal traffic on every service", 100),
        Scenario(prefix + "outage", f"{name} fails 30% of requests from 40m to 80m, then recovers",
                 110, phases={name: [Phase(40, 80, 0.3)]}),
        Scenario(prefix + "under", f"{name} steady at 0.85x the threshold", 90,
                 phases={name: [Phase(0, 90, round(threshold * 0.85, 6))]}),
        Scenario(prefix + "over", f"{name} steady at 1.15x the threshold", 90,
                 phases={name: [Phase(0, 90, round(threshold * 1.15, 6))]}),
        Scenario(prefix + "spike", f"{name} fails every request for 3 minutes at 60m", 90,
                 phases={name: [Phase(60, 63, 1.0)]}),
        Scenario(prefix + "long-spike", f"{name} fails every request for 25 minutes from 40m", 90,
                 phases={name: [Phase(40, 65, 1.0)]}),
        Scenario(prefix + "low-traffic", f"{name} at 2% of its usual traffic, usual error ratio", 90,
                 phases={name: [Phase(0, 90, target.baseline_error_ratio, 0.02)]}),
    ] + others


def down_scenarios(world: World, target: Service, other: Service, for_min: int,
                   prefix: str) -> list[Scenario]:
    """Scenarios for a "service down" alert (``up`` == 0 or absent).

    normal traffic; a total outage (every scrape fails: counters go stale, ``up`` is 0) and
    the recovery; the pods vanishing from service discovery (``up`` itself goes stale, so only
    ``absent()`` can page); one pod of several down (not an outage of the service); a blip
    shorter than ``for``; another service down.
    """
    name = target.name
    blip = max(1, for_min - 1)
    return [
        Scenario(prefix + "normal", "Normal traffic on every service", 100),
        Scenario(prefix + "outage", f"Every {name} target is down from 60m to 85m (up = 0), then back",
                 110, outages={name: [Outage(60, 85)]}),
        Scenario(prefix + "vanish", f"{name}'s pods vanish from service discovery from 60m to 85m "
                 "(no up series at all)", 110, outages={name: [Outage(60, 85, "vanish")]}),
        Scenario(prefix + "one-pod", f"One {name} pod is down from 40m to 90m; the others serve",
                 100, outages={name: [Outage(40, 90, "one-pod")]}),
        Scenario(prefix + "blip", f"Every {name} target misses {blip} scrape(s) at 60m", 90,
                 outages={name: [Outage(60, 60 + blip)]}),
        Scenario(prefix + "other-fails", f"Every {other.name} target is down from 60m to 85m; "
                 f"{name} is healthy", 110, outages={other.name: [Outage(60, 85)]}),
    ]


def alert_scenarios(world: World, req: dict, prefix: str = "") -> list[Scenario]:
    """The scenarios an alert or repair requirement is judged on, ids prefixed with ``prefix``.

    By the requirement's condition type: ``burn`` and ``latency-burn`` (multi-window burn
    rate; a latency SLI also gets a zero-traffic scenario, where the SLI is NaN), ``ratio``
    (one window), ``down`` (targets down or gone).
    """
    target = world.service(req["service"])
    condition = req.get("condition") or {"type": "burn"}
    other = next(s for s in world.services if s.name != target.name)
    if condition["type"] in ("burn", "latency-burn"):
        scenarios = burn_scenarios(world, target, req["threshold"], other)
        if condition["type"] == "latency-burn":
            scenarios.append(Scenario("no-traffic", f"{target.name} serves no requests at all "
                                      "(its SLI is 0/0 = NaN)", 90,
                                      phases={target.name: [Phase(0, 90, 0.0, 0.0)]}))
        for scenario in scenarios:
            scenario.id = prefix + scenario.id
        return scenarios
    if condition["type"] == "down":
        scenarios = down_scenarios(world, target, other, req["for_s"] // world.evaluation_interval_s, prefix)
        if not condition.get("absent"):  # the rule is not asked to see vanished targets
            scenarios = [s for s in scenarios if not s.id.endswith("vanish")]
        return scenarios
    return ratio_scenarios(world, target, req["threshold"], prefix,
                           None if req.get("generic") else other)
