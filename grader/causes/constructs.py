"""PromQL and rule constructs that change what an alerting rule does in ways its value alone
does not show: ``bool`` comparisons, a top-level ``or`` (``... or absent(...)``), templated
labels and ``keep_firing_for``. A cause names them so the reader sees the construct, not only
its effect.

Semantics: Prometheus docs, "Operators" (a comparison with ``bool`` returns 0 or 1 for every
series instead of filtering; ``or`` is the union of both sides), "Alerting rules" (label
values are templates expanded at every evaluation, so a label carrying ``$value`` makes a
new alert series whenever the value changes; ``keep_firing_for`` keeps an alert firing that
long after its condition last held).
"""

from __future__ import annotations

import re

from grader.preservation import duration_seconds
from grader.promql_split import _top_level

_BOOL = re.compile(r"(==|!=|>=|<=|>|<)\s*bool\b")
_OR = re.compile(r"\bor\b")
_TEMPLATE = re.compile(r"\{\{.*?\}\}", re.DOTALL)


def _top_level_or(expr: str) -> bool:
    chars = dict(_top_level(expr))
    return any(m.start() in chars for m in _OR.finditer(expr))


def rule_constructs(rule: dict) -> list[dict]:
    """``[{construct, note}]`` for the constructs of an alerting rule (``construct`` one of
    ``bool``, ``or``, ``template-label``, ``keep_firing_for``), in that order; empty when it
    has none. Never raises."""
    expr = str(rule.get("expr") or "")
    found = []
    if _BOOL.search(expr):
        found.append({"construct": "bool", "note": (
            "its comparison uses bool, which returns 0 or 1 for every series instead of "
            "dropping the ones that fail, so the alert fires whenever the expression returns "
            "a sample")})
    if _top_level_or(expr):
        found.append({"construct": "or", "note": (
            "the expression is a union (or): it fires for every series either side returns, "
            "e.g. an absent(...) side fires whenever its series is missing")})
    for key, value in sorted((rule.get("labels") or {}).items(), key=lambda kv: str(kv[0])):
        if _TEMPLATE.search(str(value)):
            found.append({"construct": "template-label", "note": (
                f"label {key} is the template {str(value)[:80]!r}, expanded at every "
                "evaluation, so each new value starts a new alert series")})
    keep = duration_seconds(rule.get("keep_firing_for"))
    if keep:
        found.append({"construct": "keep_firing_for", "note": (
            f"keep_firing_for: {rule.get('keep_firing_for')} keeps it firing that long after its "
            "condition last held")})
    return found
