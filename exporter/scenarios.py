"""Scenario plots for alert checks: a service's error ratio over a scenario, from the catalog's input series.

The check catalog (tests/checks.json) carries each scenario's promtool ``input_series``
(counters in promtool's expanding notation, one value per evaluation interval). For the
service an alert requirement watches, the error ratio per interval and over the
requirement's short and long windows are computed here, so the viewer can draw them with
the threshold, the outage window and the checks' evaluation times.
"""

from __future__ import annotations

import re
from typing import Any, NamedTuple

_SERIES = re.compile(r"^\s*([a-zA-Z_:][a-zA-Z0-9_:]*)\s*(?:\{(.*)\})?\s*$")
_LABEL = re.compile(r'([a-zA-Z_][a-zA-Z0-9_]*)\s*=\s*"((?:[^"\\]|\\.)*)"')
_EXPANDING = re.compile(r"^([-+]?[0-9.eE+-]*?[0-9.])([+-])([0-9.eE+-]+)x(\d+)$")
_REPEAT = re.compile(r"^([-+]?[0-9.eE+-]+|_)x(\d+)$")
_DURATION_TEXT = re.compile(r"^(?:\d+(?:ms|s|m|h|d))+$")
_DURATION_PART = re.compile(r"(\d+)(ms|s|m|h|d)")
_UNIT_MINUTES = {"ms": 1 / 60000, "s": 1 / 60, "m": 1, "h": 60, "d": 1440}
SIGNIFICANT = 6


def duration_minutes(text: Any) -> float | None:
    """A promtool duration ("90m", "1h30m", "60s") in minutes, or None when it is not one."""
    if not isinstance(text, str) or not _DURATION_TEXT.match(text):
        return None
    return sum(int(number) * _UNIT_MINUTES[unit] for number, unit in _DURATION_PART.findall(text))


MAX_POINTS = 100_000
"""Values a series may expand to for a plot (the bundled scenarios have a few hundred)."""


def expand_values(values: str) -> list[float | None]:
    """promtool's ``values`` notation expanded: ``"0+2x3 _ 5"`` -> ``[0, 2, 4, 6, None, 5]``.

    ``a+bxn`` / ``a-bxn`` give n + 1 values, ``axn`` repeats a n + 1 times, ``_`` is a missing
    value (``_xn``: n of them), ``stale`` a stale marker (None).

    Raises:
        ValueError: a token is none of those, or the values expand past
            :data:`MAX_POINTS` (a crafted catalog could ask for billions).
    """
    out: list[float | None] = []
    for token in values.split():
        if len(out) > MAX_POINTS:
            raise ValueError(f"the series expands to over {MAX_POINTS} values")
        if token in ("_", "stale"):
            out.append(None)
            continue
        match = _EXPANDING.match(token)
        if match:
            start, sign, step, count = match.groups()
            if int(count) > MAX_POINTS:
                raise ValueError(f"the series expands to over {MAX_POINTS} values")
            base, delta = float(start), float(step) * (1 if sign == "+" else -1)
            out.extend(base + delta * k for k in range(int(count) + 1))
            continue
        match = _REPEAT.match(token)
        if match:
            value, count = match.groups()
            if int(count) > MAX_POINTS:
                raise ValueError(f"the series expands to over {MAX_POINTS} values")
            if value == "_":
                out.extend([None] * int(count))
            else:
                out.extend([float(value)] * (int(count) + 1))
            continue
        out.append(float(token))
    return out


def parse_series(text: str) -> tuple[str, dict[str, str]] | None:
    """``metric{a="b",...}`` as ``(metric, labels)``, or None when it does not parse."""
    match = _SERIES.match(text)
    if not match:
        return None
    return match.group(1), dict(_LABEL.findall(match.group(2) or ""))


def is_error(labels: dict[str, str]) -> bool | None:
    """Whether a request series counts errors (``code`` 5xx, ``grpc_code`` not OK), None if it has no code."""
    if "code" in labels:
        return labels["code"].startswith("5")
    if "grpc_code" in labels:
        return labels["grpc_code"] != "OK"
    if "status" in labels:
        return labels["status"].startswith("5") or labels["status"] == "error"
    return None


def _round(value: float | None) -> float | None:
    if value is None:
        return None
    return float(f"{value:.{SIGNIFICANT}g}")


def error_ratio_series(
    input_series: list[dict[str, Any]], service: str, windows: list[float]
) -> dict[str, list[float | None]] | None:
    """Per evaluation interval: the service's error ratio within it and over each window.

    Returns ``{"ratio": [...], "w<minutes>": [...], ...}`` (index t = minute t; None where no
    request was counted), or None when the service has no request counters with a code label.
    The windowed ratio at t is the error increase over the request increase from t - window
    (or 0) to t: promtool's ``rate`` without its extrapolation, close enough to draw.
    """
    families: dict[str, list[tuple[bool, list[float | None]]]] = {}
    for entry in input_series:
        parsed = parse_series(str(entry.get("series", "")))
        if parsed is None:
            continue
        metric, labels = parsed
        error = is_error(labels)
        if labels.get("service") != service or error is None:
            continue
        try:
            values = expand_values(str(entry.get("values", "")))
        except ValueError:
            return None
        families.setdefault(metric, []).append((error, values))
    if not families:
        return None
    series = max(families.values(), key=len)
    length = max(len(values) for _, values in series)

    def totals(errors_only: bool) -> list[float | None]:
        out: list[float | None] = []
        for t in range(length):
            present = [v[t] for e, v in series if (e or not errors_only) and t < len(v)]
            known = [x for x in present if x is not None]
            out.append(sum(known) if known else None)
        return out

    errors, requests = totals(True), totals(False)

    def windowed(width: float) -> list[float | None]:
        out: list[float | None] = []
        for t in range(length):
            start = max(0, t - max(1, round(width)))
            if t == 0 or None in (errors[t], errors[start], requests[t], requests[start]):
                out.append(None)
                continue
            made = requests[t] - requests[start]
            out.append(_round((errors[t] - errors[start]) / made) if made > 0 else None)
        return out

    result = {"ratio": windowed(1)}
    for width in windows:
        result[f"w{width:g}"] = windowed(width)
    return result


def _by_service(input_series: list[dict[str, Any]], service: str, metric: str) -> list[tuple[dict, list]]:
    out = []
    for entry in input_series:
        parsed = parse_series(str(entry.get("series", "")))
        if parsed is None or parsed[0] != metric or parsed[1].get("service") != service:
            continue
        out.append((parsed[1], expand_values(str(entry.get("values", "")))))
    return out


def up_series(input_series: list[dict[str, Any]], service: str) -> dict[str, list[float | None]] | None:
    """Per minute: the fraction of the service's targets whose ``up`` is 1 (None: no ``up``
    series at all, the targets vanished). None when the service has no ``up`` series."""
    try:
        series = [values for _, values in _by_service(input_series, service, "up")]
    except ValueError:
        return None
    if not series:
        return None
    length = max(len(v) for v in series)
    out: list[float | None] = []
    for t in range(length):
        known = [v[t] for v in series if t < len(v) and v[t] is not None]
        out.append(_round(sum(known) / len(series)) if known else None)
    return {"up": out}


def slow_ratio_series(input_series: list[dict[str, Any]], service: str, le: str,
                      windows: list[float]) -> dict[str, list[float | None]] | None:
    """Like :func:`error_ratio_series` for a latency SLI: the share of requests slower than
    ``le`` seconds (``_count`` minus ``_bucket{le}``), per interval and over each window."""
    try:
        counts = [v for _, v in _by_service(input_series, service, "http_request_duration_seconds_count")]
        fast = [v for labels, v in _by_service(input_series, service, "http_request_duration_seconds_bucket")
                if labels.get("le") == le]
    except ValueError:
        return None
    if not counts or not fast:
        return None
    rebuilt = []
    for total, good in zip(counts, fast):
        slow = [None if a is None or b is None else a - b for a, b in zip(total, good)]
        rebuilt += [{"series": 'x{code="500"}', "values": _notation(slow)},
                    {"series": 'x{code="200"}', "values": _notation(good)}]
    return error_ratio_series([{**r, "series": r["series"].replace("{", f'{{service="{service}",')}
                               for r in rebuilt], service, windows)


def _notation(values: list[float | None]) -> str:
    return " ".join("_" if v is None else repr(v) for v in values)


def _alert_targets(requirement: dict[str, Any]) -> dict[str, Any] | None:
    targets = requirement.get("targets") or {}
    if requirement.get("kind") not in ("alert", "repair") or not isinstance(targets, dict):
        return None
    if not isinstance(targets.get("service"), str):
        return None
    return targets


class _CheckReading(NamedTuple):
    """What one check's plot is drawn from: its requirement's ``targets``, the scenario and
    service, the evaluation time and windows (minutes), the alert kind and the plot's key."""

    targets: dict[str, Any]
    scenario_id: Any
    service: str
    eval_min: float
    windows: dict[str, float]
    kind: str
    key: str


def _read_check(check: dict[str, Any], requirements: dict[Any, dict[str, Any]],
                scenarios: dict[Any, dict[str, Any]]) -> _CheckReading | None:
    """A check's plot reading, or None when it has none: its requirement is no alert or repair
    on a service, its scenario is unknown, or its ``eval_time`` is no promtool duration."""
    probe = check.get("probe") or {}
    requirement = requirements.get(check.get("req"))
    targets = _alert_targets(requirement) if requirement else None
    scenario_id = probe.get("scenario")
    eval_min = duration_minutes(probe.get("eval_time"))
    if targets is None or scenario_id not in scenarios or eval_min is None:
        return None
    service = targets["service"]
    windows = {
        name: duration_minutes(text)
        for name, text in sorted((targets.get("windows") or {}).items())
        if duration_minutes(text)
    }
    condition = targets.get("condition")
    kind = condition.get("type", "burn") if isinstance(condition, dict) else "burn"
    key = f"{scenario_id}|{service}" + ("|up" if kind == "down" else "")
    return _CheckReading(targets, scenario_id, service, eval_min, windows, kind, key)


def _plot_series(inputs: list[dict[str, Any]], reading: _CheckReading
                 ) -> tuple[dict[str, list[float | None]] | None, str]:
    """``(series, quantity)`` of a plot by the alert's kind: targets up for ``down``, the share
    of slow requests for ``latency-burn`` (with a ``latency_le``), else the error ratio;
    ``series`` is None when the scenario's inputs cannot give it."""
    targets, service = reading.targets, reading.service
    if reading.kind == "down":
        return up_series(inputs, service), "targets up"
    windows = sorted(set(reading.windows.values()))
    if reading.kind == "latency-burn" and targets.get("latency_le"):
        series = slow_ratio_series(inputs, service, str(targets["latency_le"]), windows)
        return series, f"share of requests slower than {targets['latency_le']} s"
    return error_ratio_series(inputs, service, windows), "error ratio"


def _phases(scenario: dict[str, Any]) -> dict[str, list[dict[str, Any]]]:
    """A scenario's ``phases`` per service, each service's outages appended as
    ``{start, end, outage}`` (``outage``: how, default ``down``)."""
    phases = {name: list(items) for name, items in (scenario.get("phases") or {}).items()}
    for name, items in (scenario.get("outages") or {}).items():
        phases.setdefault(name, []).extend(
            {"start": o.get("start"), "end": o.get("end"), "outage": o.get("how", "down")}
            for o in items if isinstance(o, dict))
    return phases


def scenario_plots(catalog: dict[str, Any]) -> tuple[dict[str, Any], dict[str, dict[str, Any]]]:
    """Plot data for a catalog: ``(plots, check_plots)``.

    ``plots`` maps ``"<scenario>|<service>"`` (``|up`` appended for Down alerts) to
    ``{scenario, service, title, horizon_min, quantity, phases{service: [{start, end,
    error_ratio, traffic} | {start, end, outage}]}, series{ratio, w<m>... | up}}``: the error
    ratio, for a ``latency-burn`` alert the share of slow requests, for a ``down`` alert the
    fraction of targets up;
    ``check_plots`` maps a check id to ``{plot, threshold, windows{short, long} (minutes),
    eval_min}`` for the promql checks of alert and repair requirements whose service has
    request counters with a code label in the check's scenario.
    """
    requirements = {r.get("id"): r for r in catalog.get("requirements") or [] if isinstance(r, dict)}
    scenarios = {s.get("id"): s for s in catalog.get("scenarios") or [] if isinstance(s, dict)}
    input_series = catalog.get("input_series") or {}
    plots: dict[str, Any] = {}
    check_plots: dict[str, dict[str, Any]] = {}
    for check in catalog.get("checks") or []:
        reading = _read_check(check, requirements, scenarios)
        if reading is None:
            continue
        key = reading.key
        if key not in plots:
            series, quantity = _plot_series(input_series.get(reading.scenario_id) or [], reading)
            if series is None:
                continue
            scenario = scenarios[reading.scenario_id]
            plots[key] = {
                "scenario": reading.scenario_id,
                "service": reading.service,
                "title": scenario.get("title") or reading.scenario_id,
                "horizon_min": scenario.get("horizon_min"),
                "phases": _phases(scenario),
                "quantity": quantity,
                "series": series,
            }
        threshold = reading.targets.get("threshold") if reading.kind != "down" else None
        check_plots[check["id"]] = {
            "plot": key,
            "threshold": threshold if isinstance(threshold, (int, float)) else None,
            "windows": reading.windows,
            "eval_min": reading.eval_min,
        }
    return plots, check_plots
