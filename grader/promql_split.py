"""Splitting an alerting rule's PromQL expression at its top-level comparison: the value side and the threshold."""

from __future__ import annotations

import re

_COMPARISONS = ("==", "!=", ">=", "<=", ">", "<")
_SET_OPERATORS = re.compile(r"\b(and|or|unless)\b")
_MODIFIERS = re.compile(r"^\s*(bool\s*)?((on|ignoring)\s*\([^)]*\)\s*)?((group_left|group_right)"
                        r"\s*(\([^)]*\))?\s*)?")


def _top_level(expr: str):
    """Yield (index, char) of every character of ``expr`` outside brackets and strings."""
    depth, quote, i = 0, "", 0
    while i < len(expr):
        ch = expr[i]
        if quote:
            if ch == "\\":
                i += 2
                continue
            if ch == quote:
                quote = ""
        elif ch in "\"'`":
            quote = ch
        elif ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
        elif depth == 0:
            yield i, ch
        i += 1


def split_comparison(expr: str) -> tuple[str, str, str] | None:
    """``(value side, operator, threshold side)`` of the first top-level comparison of an
    alerting rule's expression, e.g. ``("sum(rate(errors[5m])) / sum(rate(all[5m]))", ">",
    "0.05")``; None when it has none (then every sample of the expression fires).

    PromQL binary operators (prometheus.io/docs/prometheus/latest/querying/operators/): the
    value side starts after the last top-level ``and``/``or``/``unless`` before the operator;
    the threshold side ends at the next one; ``bool``, ``on(...)``/``ignoring(...)`` and
    ``group_left``/``group_right`` modifiers are dropped from it. Never raises.
    """
    chars = dict(_top_level(expr))
    for i in sorted(chars):
        two = expr[i:i + 2]
        op = two if two in _COMPARISONS else (expr[i] if expr[i] in "<>" else "")
        if not op or (op in "<>" and expr[i + 1:i + 2] == "="):
            continue
        if op in ("==", "!=") or op in ("<", ">", ">=", "<="):
            before = expr[:i]
            starts = [m.end() for m in _SET_OPERATORS.finditer(before) if m.start() in chars]
            left = before[starts[-1] if starts else 0:].strip()
            after = expr[i + len(op):]
            ends = [m.start() for m in _SET_OPERATORS.finditer(after) if i + len(op) + m.start() in chars]
            right = _MODIFIERS.sub("", after[:ends[0] if ends else len(after)]).strip()
            if left and right:
                return left, op, right
            return None
    return None
