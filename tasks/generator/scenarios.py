"""Traffic scenarios: what each service's request and error counters do over a replay.

A scenario gives, per service, the error ratio and traffic factor in each minute and
optionally an interval where the service is gone (its series end in a ``stale`` marker and
``up`` drops to 0). From that it builds (a) the exact counter samples the reference
evaluator reads and (b) the promtool ``input_series`` the grader replays.
"""

from __future__ import annotations

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
class Scenario:
    """A replay of ``horizon`` minutes; services not named in ``phases`` run at their baseline."""

    id: str
    title: str
    horizon: int
    phases: dict[str, list[Phase]] = field(default_factory=dict)
    gone: dict[str, int] = field(default_factory=dict)  # service -> minute its process dies

    def ratio_and_traffic(self, svc: Service, minute: int) -> tuple[float, float]:
        """Error ratio and traffic factor of ``svc`` during ``minute`` (the minute ending at +1)."""
        for phase in self.phases.get(svc.name, []):
            if phase.start <= minute < phase.end:
                return phase.error_ratio, phase.traffic
        return svc.baseline_error_ratio, 1.0

    def to_json(self) -> dict:
        """The scenario as stored in the check catalog (for the viewer's scenario plot)."""
        return {
            "id": self.id,
            "title": self.title,
            "horizon_min": self.horizon,
            "phases": {
                name: [vars(p) for p in phases] for name, phases in sorted(self.phases.items())
            },
            "gone": dict(sorted(self.gone.items())),
        }


@dataclass
class Counters:
    """Per-pod counter samples of one service in one scenario (index = minute)."""

    errors: list[list[float | None]]
    totals: list[list[float | None]]  # ok + error series, one list per series


def counters(world: World, scenario: Scenario, svc: Service) -> tuple[Counters, list[dict]]:
    """The counter samples of ``svc`` and its promtool input series.

    Returns the counters for the reference evaluator and a list of
    ``{"series": ..., "values": ...}`` items (promtool expanding notation).
    """
    family = SLI_FAMILIES[svc.family]
    gone_at = scenario.gone.get(svc.name)
    items: list[dict] = []
    errors: list[list[float | None]] = []
    totals: list[list[float | None]] = []
    for pod_index, rpm in enumerate(svc.requests_per_minute):
        ok_values: list[float] = [0.0]
        err_values: list[float] = [0.0]
        last = scenario.horizon if gone_at is None else gone_at
        for minute in range(last):
            ratio, traffic = scenario.ratio_and_traffic(svc, minute)
            requests = rpm * traffic
            err_values.append(round(err_values[-1] + requests * ratio, 6))
            ok_values.append(round(ok_values[-1] + requests * (1 - ratio), 6))
        pod = f"{svc.name}-{pod_index}"
        base = f'service="{svc.name}",pod="{pod}"'
        for value_label, values in ((family["ok_value"], ok_values), (family["error_value"], err_values)):
            series = f'{family["metric"]}{{{base},{family["error_label"]}="{value_label}"}}'
            items.append({"series": series, "values": expand_notation(values, stale=gone_at is not None)})
        padded_err: list[float | None] = list(err_values)
        padded_ok: list[float | None] = list(ok_values)
        padded_err += [None] * (scenario.horizon + 1 - len(padded_err))
        padded_ok += [None] * (scenario.horizon + 1 - len(padded_ok))
        errors.append(padded_err)
        totals.extend([padded_ok, padded_err])
        up = [1.0] * (scenario.horizon + 1)
        if gone_at is not None:
            up = [1.0 if m < gone_at else 0.0 for m in range(scenario.horizon + 1)]
        items.append({"series": f'up{{job="{svc.name}",{base}}}', "values": expand_notation(up)})
    return Counters(errors=errors, totals=totals), items


def format_number(value: float) -> str:
    """A sample value as promtool reads it: integers without a decimal point, else shortest repr."""
    if value == int(value):
        return str(int(value))
    return repr(round(value, 6))


def expand_notation(values: list[float], stale: bool = False) -> str:
    """Samples as promtool's expanding notation: runs of equal steps become ``a+bxN``.

    ``[0, 5, 10, 15, 3]`` -> ``"0+5x3 3"``; a trailing ``stale`` marks the series gone.
    """
    parts: list[str] = []
    index = 0
    while index < len(values):
        start = values[index]
        run = 0
        if index + 1 < len(values):
            step = round(values[index + 1] - start, 6)
            while (
                index + run + 1 < len(values)
                and abs(round(values[index + run + 1] - values[index + run], 6) - step) < 1e-9
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
    return " ".join(parts)


def burn_scenarios(world: World, target: Service, threshold: float, other: Service) -> list[Scenario]:
    """The scenarios a fast-burn alert is judged on (seed spec: Fire, Timing, Silent families).

    normal traffic; a sustained outage of the target and its recovery; steady error ratios
    just under (0.85x) and just over (1.15x) the threshold; a short spike that trips the 5m
    window but not the 1h one; another service failing while the target is healthy.
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
            "other-fails",
            f"{other.name} fails 50% of requests from 60m to 100m; {target.name} is healthy",
            110,
            phases={other.name: [Phase(60, 100, 0.5)]},
        ),
    ]
