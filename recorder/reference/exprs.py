"""PromQL the adversaries write, built per condition type from the world spec.

An alert or repair requirement has a ``condition``: ``burn`` (1h and 5m SLI error ratios
over the threshold, from recording rules), ``ratio`` (the error ratio over ``window_min``
minutes), ``latency-burn`` (like burn, the SLI being the share of requests slower than a
histogram bucket ``le``) or ``down`` (every target of the service down). The error ratio of
a service comes from its SLI family (``spec["sli_families"]``: metric and error selector).
"""

from __future__ import annotations

import re

from recorder.reference.context import Context, NotApplicable, find_rule

HISTOGRAM = "http_request_duration_seconds_bucket"
_LE_KEYS = ("le", "latency_le", "bucket_le", "latency_threshold_s", "latency_s", "threshold_s")


def condition(req: dict) -> str:
    """The condition type of a requirement (``ratio`` when the spec leaves it out)."""
    return str((req.get("condition") or {}).get("type") or "ratio")


def num(value: float) -> str:
    """A threshold as PromQL text (6 significant digits)."""
    return f"{value:.6g}"


def _selector(req: dict, *extra: str) -> str:
    parts = [*extra] + ([] if req.get("generic") else [f'service="{req["service"]}"'])
    return "{" + ",".join(parts) + "}" if parts else ""


def _family(ctx: Context, req: dict) -> dict:
    service = ctx.service(req.get("service", ""))
    family = (ctx.spec.get("sli_families") or {}).get(service.get("family"))
    if not family:
        raise NotApplicable(f"service {req.get('service')} has no SLI family in the spec")
    return family


def error_ratio(ctx: Context, req: dict, window: str, by: str = "service") -> str:
    """Error ratio of the requirement's service over ``window``, aggregated ``by`` (all
    services for a generic rule). NotApplicable for a service without an error-counting family."""
    family = _family(ctx, req)
    if "error_selector" not in family:
        raise NotApplicable(f"service {req.get('service')} has no error-counting SLI family")
    metric = family["metric"]
    return (f"sum by ({by}) (rate({metric}{_selector(req, family['error_selector'])}[{window}])) / "
            f"sum by ({by}) (rate({metric}{_selector(req)}[{window}]))")


def latency_bucket(ctx: Context, req: dict) -> tuple[str, str]:
    """``(bucket metric, le)`` of a latency-burn requirement: from its service (``latency_le``
    and a histogram SLI family), else from its SLI records' expressions, else from its
    condition's fields. Raises NotApplicable when none names a bucket."""
    service = ctx.service(req.get("service", ""))
    family = (ctx.spec.get("sli_families") or {}).get(service.get("family")) or {}
    if service.get("latency_le") is not None and family.get("histogram"):
        return f"{family['metric']}_bucket", str(service["latency_le"])
    for record in (req.get("records") or {}).values():
        try:
            _, _, rule = find_rule(ctx.solution, ctx, record)
        except NotApplicable:
            continue
        found = re.search(r'([a-zA-Z_:][\w:]*_bucket)\{[^}]*le="([^"]+)"', str(rule.get("expr")))
        if found:
            return found.group(1), found.group(2)
    cond = req.get("condition") or {}
    for source in (cond, req):
        for key in _LE_KEYS:
            if source.get(key) is not None:
                metric = str(cond.get("metric") or cond.get("histogram") or HISTOGRAM)
                return (metric if metric.endswith("_bucket") else metric + "_bucket"), str(source[key])
    raise NotApplicable(f"{req.get('id')}: no latency bucket (le) in its service, records or condition")


def slow_ratio(ctx: Context, req: dict, window: str, by: str = "service") -> str:
    """Share of the service's requests slower than the latency threshold over ``window``."""
    bucket, le = latency_bucket(ctx, req)
    count = bucket.removesuffix("_bucket") + "_count"
    inf, under = _selector(req, 'le="+Inf"'), _selector(req, f'le="{le}"')
    total = f"{count}{_selector(req)}" if count in ctx.reserved else f"{bucket}{inf}"
    return (f"1 - (sum by ({by}) (rate({bucket}{under}[{window}])) / "
            f"sum by ({by}) (rate({total}[{window}])))")


def _windows(req: dict) -> tuple[str, str]:
    windows = req.get("windows") or {}
    return str(windows.get("long", "1h")), str(windows.get("short", "5m"))


def _ratio_window(req: dict) -> str:
    return f"{(req.get('condition') or {}).get('window_min', 5)}m"


def _threshold(req: dict) -> float:
    if req.get("threshold") is None:
        raise NotApplicable(f"{req.get('id')} has no threshold (condition {condition(req)})")
    return float(req["threshold"])


def _sli(ctx: Context, req: dict, window: str, by: str) -> str:
    if condition(req) == "latency-burn":
        return slow_ratio(ctx, req, window, by)
    return error_ratio(ctx, req, window, by)


def per_pod(ctx: Context, req: dict) -> str:
    """The requirement's condition without aggregating pods away: one alert per pod.

    Raises NotApplicable when the service has a single pod (one alert per pod is then right).
    """
    pods = ctx.service(req.get("service", "")).get("pods")
    if pods is not None and int(pods) < 2:
        raise NotApplicable(f"service {req.get('service')} has {pods} pod(s); per-pod alerts cannot duplicate")
    kind = condition(req)
    if kind == "down":
        return f"up{_selector(req)} == 0"
    t = num(_threshold(req))
    if kind == "ratio":
        return f"{error_ratio(ctx, req, _ratio_window(req), 'service, pod')} > {t}"
    long, short = _windows(req)
    return (f"{_sli(ctx, req, long, 'service, pod')} > {t} and "
            f"{_sli(ctx, req, short, 'service, pod')} > {t}")


def band(ctx: Context, req: dict, factor: float = 1.3) -> str:
    """Fires only while the SLI is between 1x and ``factor``x the threshold (passes the
    brackets at 0.85x and 1.15x, misses real outages). NotApplicable for ``down``."""
    kind = condition(req)
    if kind == "down":
        raise NotApplicable(f"{req.get('id')}: condition down has no threshold to band")
    t = _threshold(req)
    low, high = num(t), num(t * factor)
    if kind == "ratio":
        ratio = error_ratio(ctx, req, _ratio_window(req))
        return f"{ratio} > {low} and {ratio} < {high}"
    records = req.get("records") or {}
    long, short = _windows(req)
    if "long" in records and "short" in records:
        sel = _selector(req)
        first, second = f"{records['long']}{sel}", f"{records['short']}{sel}"
    else:
        first, second = _sli(ctx, req, long, "service"), _sli(ctx, req, short, "service")
    return f"{first} > {low} and {first} < {high} and {second} > {low}"


def always_true(req: dict) -> str:
    """A constant 1 carrying the requirement's service label."""
    return f'label_replace(vector(1), "service", "{req.get("service", "")}", "", "")'


def inputs_read(ctx: Context, req: dict) -> list[str]:
    """Input series the requirement's condition reads (for shadowing), best guess first."""
    kind = condition(req)
    if kind == "down":
        return ["up"]
    if kind == "latency-burn":
        try:
            bucket, _ = latency_bucket(ctx, req)
        except NotApplicable:
            bucket = HISTOGRAM
        return [bucket, bucket.removesuffix("_bucket") + "_count"]
    try:
        return [_family(ctx, req)["metric"]]
    except NotApplicable:
        return []
