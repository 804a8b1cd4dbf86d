"""Rule operators on conditions: ``for``, thresholds, windows, aggregation, selectors, ``absent()``.

Each targets the alert, repair or recording requirement whose rule it rewrites; the check
families named are the ones the catalog uses to see that kind of mistake (Timing for a
``for``, Fire and Silent for a threshold, Dup for a lost aggregation, Value and
Cardinality for a recording rule). The mistakes are the field's common ones (issue 14
part 1) and the seeded defects of the repair workflows (``tasks/generator/defects.py``:
per-pod, missing-for, threshold-low, no-threshold, for-too-long).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator

from proofs.mutation.operators import Operator, Site
from proofs.mutation.rule_edits import alert_rule, duration, edit_alert, edit_exprs, seconds
from recorder.reference.context import Context, Files, NotApplicable

_NUMBER = r"[0-9]*\.?[0-9]+(?:[eE][-+]?[0-9]+)?"
_PARENS = r"\((?:[^()]|\([^()]*\))*\)"
_THRESHOLD = re.compile(rf"(?<![=!<>])(>=?|<=?)\s*(?!bool\b)({_NUMBER}|{_PARENS})")
_RANGE = re.compile(r"\[(\d+(?:ms|s|m|h|d|w|y))\]")
_BY = re.compile(r"\s*\bby\s*\(([^)]*)\)")
_ABSENT = re.compile(r"\s*\bor\b\s*absent\((?:[^()]|\([^()]*\))*\)\s*")
_SELECTOR = re.compile(r"\{([^{}]*)\}")
_AND = re.compile(r"\s+\band\b\s+")


# ---- for --------------------------------------------------------------------------------

def _for_change(new_for: Callable[[float], str | None]) -> Callable[[Files, Context, dict], Iterator[Site]]:
    """An operator body setting the alert's ``for`` to ``new_for(current seconds)`` (None: drop
    it); NotApplicable for a rule without a ``for``."""
    def apply(files: Files, ctx: Context, req: dict) -> Iterator[Site]:
        current = seconds(alert_rule(files, ctx, req).get("for"))
        if not current:
            raise NotApplicable("the rule has no for")
        value = new_for(current)

        def change(rule: dict) -> None:
            if value is None:
                rule.pop("for", None)
            else:
                rule["for"] = value
        yield req["id"], edit_alert(files, ctx, req, change), req["id"]
    return apply


# ---- thresholds -------------------------------------------------------------------------

def _scaled_threshold(factor: float) -> Callable[[str], str]:
    """A rewrite multiplying every ``>``/``<`` threshold (never ``== 0``) by ``factor``."""
    def rewrite(expr: str) -> str:
        def one(match: re.Match) -> str:
            op, value = match.groups()
            if value.startswith("("):
                return f"{op} ({factor:g} * {value})"
            return f"{op} {float(value) * factor:.6g}"
        return _THRESHOLD.sub(one, expr)
    return rewrite


def _no_threshold(expr: str) -> str:
    return _THRESHOLD.sub("", expr).rstrip() + "\n"


def _scaled_windows(factor: float) -> Callable[[str], str]:
    """A rewrite scaling every range selector ``[5m]`` by ``factor`` (at least 1m)."""
    def rewrite(expr: str) -> str:
        return _RANGE.sub(lambda m: f"[{duration(max(60, seconds(m.group(1)) * factor))}]", expr)
    return rewrite


def _exprs(rewrite: Callable[[str], str]) -> Callable[[Files, Context, dict], Iterator[Site]]:
    def apply(files: Files, ctx: Context, req: dict) -> Iterator[Site]:
        yield req["id"], edit_exprs(files, ctx, req, rewrite), req["id"]
    return apply


# ---- aggregation and selectors ----------------------------------------------------------

def _per_pod(expr: str) -> str:
    return _BY.sub(lambda m: f" by ({m.group(1)}, pod)" if "pod" not in m.group(1) else m.group(0), expr)


def _drop_by(expr: str) -> str:
    return _BY.sub("", expr)


def _drop_service_selector(expr: str) -> str:
    def one(match: re.Match) -> str:
        kept = [p for p in match.group(1).split(",") if p.strip() and not re.match(r'\s*service\s*=[^~]', p)]
        return "{" + ",".join(kept) + "}"
    return _SELECTOR.sub(one, expr)


def _drop_absent(files: Files, ctx: Context, req: dict) -> Iterator[Site]:
    if not (req.get("condition") or {}).get("absent"):
        raise NotApplicable(f"{req['id']} does not ask for absent()")
    def rewrite(expr: str) -> str:
        out = _ABSENT.sub("\n", expr).strip()
        return out[1:-1].strip() + "\n" if out.startswith("(") and out.endswith(")") else out + "\n"
    yield req["id"], edit_exprs(files, ctx, req, rewrite), req["id"]


def _drop_burn_window(files: Files, ctx: Context, req: dict) -> Iterator[Site]:
    """The multiwindow condition loses one window: ``long`` keeps only the 5m clause (pages on
    a spike), ``short`` only the 1h clause (keeps paging long after recovery)."""
    expr = str(alert_rule(files, ctx, req).get("expr", ""))
    clauses = _AND.split(expr.strip())
    if len(clauses) != 2:
        raise NotApplicable(f"{req['id']}: the condition is not two windows joined by and")
    long_name = str((req.get("records") or {}).get("long") or "1h")
    first_is_long = long_name in clauses[0] or "1h" in clauses[0]
    for dropped, kept in (("long", clauses[1] if first_is_long else clauses[0]),
                          ("short", clauses[0] if first_is_long else clauses[1])):
        yield (f"{req['id']}.{dropped}",
               edit_alert(files, ctx, req, lambda rule, k=kept: rule.__setitem__("expr", k + "\n")), req["id"])


RULES = ("alert", "repair")
EXPRS = ("alert", "repair", "recording")

OPERATORS = (
    Operator("drop-for", RULES, ("Timing",), _for_change(lambda s: None),
             "the rule loses its for: pages on the first bad evaluation"),
    Operator("for-zero", RULES, ("Timing",), _for_change(lambda s: "0s"),
             "for: 0s (same as none, written out)"),
    Operator("double-for", RULES, ("Timing", "Fire"), _for_change(lambda s: duration(2 * s)),
             "for doubled: pages late"),
    Operator("for-too-long", RULES, ("Fire", "Timing"),
             _for_change(lambda s: "30m" if s < 1800 else duration(2 * s)),
             "for longer than the outages it must page for (defect for-too-long)"),
    Operator("threshold-x2", RULES, ("Fire",), _exprs(_scaled_threshold(2)),
             "threshold doubled: misses real outages"),
    Operator("threshold-half", RULES, ("Silent",), _exprs(_scaled_threshold(0.5)),
             "threshold halved: pages on healthy traffic"),
    Operator("threshold-tenth", RULES, ("Silent",), _exprs(_scaled_threshold(0.1)),
             "a tenth of the threshold (defect threshold-low)"),
    Operator("no-threshold", RULES, ("Silent",), _exprs(_no_threshold),
             "the comparison is gone: fires whenever the expression has a value (defect no-threshold)"),
    Operator("window-x6", EXPRS, ("Silent", "Fire", "Value"), _exprs(_scaled_windows(6)),
             "range windows six times longer ([5m] -> [30m])"),
    Operator("window-div5", EXPRS, ("Silent", "Value"), _exprs(_scaled_windows(0.2)),
             "range windows a fifth as long ([5m] -> [1m])"),
    Operator("per-pod", EXPRS, ("Dup", "Cardinality"), _exprs(_per_pod),
             "by (service) becomes by (service, pod): one page per replica (defect per-pod)"),
    Operator("drop-by", EXPRS, ("Dup", "Label", "Cardinality"), _exprs(_drop_by),
             "the aggregation loses its by clause: the service label is gone"),
    Operator("drop-service-selector", RULES, ("Silent", "Value"), _exprs(_drop_service_selector),
             'the service="..." selector is dropped: other services fire it'),
    Operator("drop-absent", RULES, ("Fire",), _drop_absent,
             "a Down alert loses its or absent(...): vanished targets never page"),
    Operator("drop-burn-window", ("alert",), ("Silent", "Timing"), _drop_burn_window,
             "a multiwindow burn alert keeps one window only"),
)
