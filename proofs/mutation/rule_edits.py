"""Finding and rewriting the rules a requirement names in a workspace: the ground the rule operators stand on.

An alert or repair requirement names its alerting rule (``alert``); a recording requirement
names record series (``records``) that other services' rules may record too, so its rules
are the ones the oracle added or changed against the pristine repo. Edits load each rule
file with :func:`recorder.reference.context.load_doc` (plain files and PrometheusRule
manifests alike) and dump it back with PyYAML.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from recorder.reference.context import (
    Context,
    Files,
    NotApplicable,
    dump_doc,
    edit_rules,
    find_rule,
    is_rule_file,
    iter_rules,
    load_doc,
)

_DURATION = re.compile(r"(\d+)(ms|s|m|h|d|w|y)")
_UNIT_S = {"ms": 0.001, "s": 1, "m": 60, "h": 3600, "d": 86400, "w": 604800, "y": 31536000}


def seconds(text: object) -> float:
    """A Prometheus duration (``90s``, ``5m``, ``1h30m``) in seconds; 0 for None or ``0``.

    Raises NotApplicable for text that is not a duration.
    """
    if text in (None, 0, "0"):
        return 0.0
    parts = _DURATION.findall(str(text))
    if not parts or "".join(n + u for n, u in parts) != str(text):
        raise NotApplicable(f"{text!r} is not a Prometheus duration")
    return sum(int(n) * _UNIT_S[u] for n, u in parts)


def duration(total: float) -> str:
    """Seconds as the shortest whole-unit Prometheus duration (``300`` -> ``5m``, ``90`` -> ``90s``)."""
    total = round(total)
    for unit, size in (("h", 3600), ("m", 60)):
        if total and total % size == 0:
            return f"{total // size}{unit}"
    return f"{total}s"


def alert_rule(files: Files, ctx: Context, req: dict) -> dict:
    """The alerting rule of an alert or repair requirement (NotApplicable when none)."""
    if not req.get("alert"):
        raise NotApplicable(f"{req['id']} names no alert")
    return find_rule(files, ctx, req["alert"])[2]


def edit_alert(files: Files, ctx: Context, req: dict, change: Callable[[dict], None]) -> Files:
    """Apply ``change`` to the requirement's alerting rule(s); returns the new files."""
    if not req.get("alert"):
        raise NotApplicable(f"{req['id']} names no alert")
    return edit_rules(files, ctx, req["alert"], change)


def changed_records(files: Files, ctx: Context, req: dict) -> list[tuple[str, int]]:
    """``(path, index among the file's rules)`` of the recording requirement's rules that the
    oracle added or changed (a pristine rule of the same name is another service's)."""
    names = set((req.get("records") or {}).values())
    found = []
    for path in sorted(p for p in files if is_rule_file(p)):
        before = [r for _, r in iter_rules(load_doc(ctx.pristine[path]))] if path in ctx.pristine else []
        for index, (_, rule) in enumerate(iter_rules(load_doc(files[path]))):
            if rule.get("record") in names and rule not in before:
                found.append((path, index))
    return found


def edit_records(files: Files, ctx: Context, req: dict, change: Callable[[dict], None]) -> Files:
    """Apply ``change`` to every rule of :func:`changed_records`; NotApplicable when there is none."""
    sites = changed_records(files, ctx, req)
    if not sites:
        raise NotApplicable(f"{req['id']}: the oracle adds no recording rule")
    out = dict(files)
    for path in sorted({p for p, _ in sites}):
        doc = load_doc(out[path])
        wanted = {i for p, i in sites if p == path}
        for index, (_, rule) in enumerate(iter_rules(doc)):
            if index in wanted:
                change(rule)
        out[path] = dump_doc(doc)
    return out


def edit_exprs(files: Files, ctx: Context, req: dict, rewrite: Callable[[str], str]) -> Files:
    """Rewrite the expression(s) of the requirement's rules: the alerting rule of an alert or
    repair, the added recording rules of a recording requirement. NotApplicable when
    ``rewrite`` changes no expression."""
    changed = []

    def change(rule: dict) -> None:
        before = str(rule.get("expr", ""))
        after = rewrite(before)
        if after.strip() != before.strip():
            rule["expr"] = after
            changed.append(rule)

    out = edit_records(files, ctx, req, change) if req["kind"] == "recording" else edit_alert(files, ctx, req, change)
    if not changed:
        raise NotApplicable(f"{req['id']}: the rewrite does not apply to its expression")
    return out
