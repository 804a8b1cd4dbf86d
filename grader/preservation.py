"""Preservation and tamper: is what the change requests did not mention still there, unchanged?

Items are compared as parsed content, not text: a rule is equal when its name, expression
(whitespace-insensitive), ``for``/``keep_firing_for`` (as seconds), labels and annotations
are; Alertmanager items when their YAML values are, matchers compared as sets.
"""

from __future__ import annotations

import re

_DURATION = re.compile(r"(\d+)(ms|s|m|h|d|w|y)")
_UNIT_S = {"ms": 0.001, "s": 1, "m": 60, "h": 3600, "d": 86400, "w": 604800, "y": 31536000}


def duration_seconds(value) -> float | None:
    """A Prometheus duration (``1h30m``, ``90s``) in seconds; None when absent or malformed."""
    if value is None:
        return None
    text = str(value).strip()
    parts = _DURATION.findall(text)
    if not parts or "".join(n + u for n, u in parts) != text:
        return None
    return sum(int(n) * _UNIT_S[u] for n, u in parts)


def normalize_expr(expr) -> str:
    """PromQL text with whitespace collapsed (``a  >\\n 1`` -> ``a > 1``)."""
    text = re.sub(r"\s+", " ", str(expr or "")).strip()
    return re.sub(r"\s*([(){}\[\],=<>!~/*+-])\s*", r"\1", text)


def normalize_rule(rule: dict) -> tuple:
    """A hashable form of an alerting or recording rule for semantic comparison."""
    return (
        rule.get("alert"),
        rule.get("record"),
        normalize_expr(rule.get("expr")),
        duration_seconds(rule.get("for")) or 0,
        duration_seconds(rule.get("keep_firing_for")) or 0,
        tuple(sorted((str(k), str(v)) for k, v in (rule.get("labels") or {}).items())),
        tuple(sorted((str(k), str(v).strip()) for k, v in (rule.get("annotations") or {}).items())),
    )


def _normalize_matchers(item: dict) -> dict:
    out = dict(item)
    for key in ("matchers", "source_matchers", "target_matchers"):
        if isinstance(out.get(key), list):
            out[key] = sorted(re.sub(r"\s+", "", str(m)) for m in out[key])
    if isinstance(out.get("equal"), list):
        out["equal"] = sorted(str(x) for x in out["equal"])
    return out


def same_am_item(a, b) -> bool:
    """Equality of two Alertmanager config items (routes, receivers, inhibit rules)."""
    if isinstance(a, dict) and isinstance(b, dict):
        a, b = _normalize_matchers(a), _normalize_matchers(b)
        if set(a) != set(b):
            return False
        return all(same_am_item(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(same_am_item(x, y) for x, y in zip(a, b))
    return a == b


def _all_routes(route: dict):
    for child in route.get("routes") or []:
        if isinstance(child, dict):
            yield child
            yield from _all_routes(child)


def preserved(what: str, item, rules: list[dict], am: dict | None) -> tuple[bool, str]:
    """Whether a pristine ``item`` of kind ``what`` is still present; ``(ok, detail)``.

    ``what`` is ``rule``, ``receiver``, ``route``, ``inhibit_rule`` or ``global``.
    """
    if what == "rule":
        return _rule_preserved(item, rules)
    if am is None:
        return False, "alertmanager.yml does not load, so nothing in it is preserved"
    if what == "receiver":
        return _receiver_preserved(item, am)
    if what == "route":
        if any(same_am_item(route, item) for route in _all_routes(am.get("route") or {})):
            return True, ""
        return False, (f"expected the route {item.get('matchers')} -> {item.get('receiver')} "
                       "unchanged; not found in the route tree")
    if what == "inhibit_rule":
        if any(same_am_item(rule, item) for rule in am.get("inhibit_rules") or []):
            return True, ""
        return False, "expected this inhibit rule unchanged; not found"
    if what == "global":
        if same_am_item(am.get("global"), item):
            return True, ""
        return False, "expected the global block unchanged; got a changed one"
    raise ValueError(f"unknown preservation item kind {what!r}")


def _rule_preserved(item: dict, rules: list[dict]) -> tuple[bool, str]:
    """``(ok, detail)`` for a pristine alerting or recording rule: an equal rule is among
    ``rules``, else which of its fields the same-named rule changed."""
    want = normalize_rule(item)
    if any(normalize_rule(r) == want for r in rules):
        return True, ""
    name = item.get("alert") or item.get("record")
    same_name = [r for r in rules if (r.get("alert") or r.get("record")) == name]
    if not same_name:
        return False, f"expected rule {name} unchanged; got no rule with that name"
    got = normalize_rule(same_name[0])
    diffs = [field for field, x, y in zip(
        ("alert", "record", "expr", "for", "keep_firing_for", "labels", "annotations"), want, got)
        if x != y]
    return False, f"expected rule {name} unchanged; got a changed {', '.join(diffs)}"


def _receiver_preserved(item: dict, am: dict) -> tuple[bool, str]:
    """``(ok, detail)`` for a pristine receiver: the first receiver of its name is unchanged."""
    for receiver in am.get("receivers") or []:
        if isinstance(receiver, dict) and receiver.get("name") == item.get("name"):
            if same_am_item(receiver, item):
                return True, ""
            return False, f"expected receiver {item.get('name')} unchanged; got a changed definition"
    return False, f"expected receiver {item.get('name')}; got none with that name"


_RESERVED_LABELS = re.compile(r'label_replace\s*\([^;]*?,\s*"(alertname|alertstate|__name__)"')


GROUP_DEFAULTS = {"limit": 0, "query_offset": 0.0}
"""Group settings whose default value changes nothing (Prometheus rule group fields)."""


def _same_setting(setting: str, value, before, evaluation_interval: str) -> bool:
    """Whether a group ``setting`` of ``value`` evaluates as ``before`` did: equal as written,
    or (``interval``, ``query_offset``: as durations; ``limit``: as numbers) equal to the
    pristine value or, where the pristine group had none, to the default (the evaluation
    interval for ``interval``)."""
    if value == before:
        return True
    if setting == "interval":
        reference = before if before is not None else evaluation_interval
        return duration_seconds(value) is not None and duration_seconds(value) == duration_seconds(reference)
    if setting == "query_offset":
        reference = duration_seconds(before) if before is not None else GROUP_DEFAULTS[setting]
        return duration_seconds(value) is not None and duration_seconds(value) == reference
    if setting == "limit":
        reference = before if before is not None else GROUP_DEFAULTS[setting]
        return isinstance(value, int) and not isinstance(value, bool) and value == reference
    return False


def tamper_findings(what: str, probe: dict, rule_entries: list[tuple[str, dict, dict]],
                    pristine_groups: dict[str, dict], am: dict | None, *,
                    evaluation_interval: str = "1m") -> list[str]:
    """Tamper found for one tamper check (empty list: none). Seed spec, "Anti-hacking".

    ``rule_entries`` are ``(file, group, rule)`` of the workspace; ``pristine_groups`` maps
    pristine group names to their group dicts; ``evaluation_interval`` is the task's (a group
    ``interval`` equal to it, where the pristine group set none, changes nothing).
    """
    if what == "reserved_records":
        return _reserved_series_findings(probe, rule_entries)
    if what == "group_settings":
        return _group_setting_findings(rule_entries, pristine_groups, evaluation_interval)
    if what == "time_intervals" and am:
        return _time_interval_findings(am)
    return []


def _reserved_series_findings(probe: dict, rule_entries: list[tuple[str, dict, dict]]) -> list[str]:
    """Rules writing a reserved or input series (the probe's ``names``) or relabelling onto
    ``alertname``, ``alertstate`` or ``__name__``."""
    found = []
    names = set(probe.get("names") or [])
    for rel, group, rule in rule_entries:
        if rule.get("record") in names:
            found.append(f"{rel}: recording rule writes the reserved or input series "
                         f"{rule['record']}")
        if _RESERVED_LABELS.search(str(rule.get("expr") or "")):
            found.append(f"{rel}: label_replace onto a reserved label in "
                         f"{rule.get('alert') or rule.get('record')}")
    return found


def _group_setting_findings(rule_entries: list[tuple[str, dict, dict]], pristine_groups: dict[str, dict],
                            evaluation_interval: str) -> list[str]:
    """Each group (once per file) that sets ``interval``, ``limit``, ``query_offset`` or
    ``evaluation_interval`` to something that evaluates differently from the pristine group."""
    found = []
    seen = set()
    for rel, group, _ in rule_entries:
        key = (rel, group.get("name"))
        if key in seen:
            continue
        seen.add(key)
        before = pristine_groups.get(group.get("name")) or {}
        for setting in ("interval", "limit", "query_offset", "evaluation_interval"):
            if setting in group and not _same_setting(setting, group.get(setting),
                                                      before.get(setting), evaluation_interval):
                found.append(f"{rel}: group {group.get('name')} sets {setting}: {group.get(setting)}")
    return found


def _time_interval_findings(am: dict) -> list[str]:
    """Time intervals anywhere in alertmanager.yml: defined at the top, or set on any route."""
    found = []
    for key in ("mute_time_intervals", "time_intervals"):
        if am.get(key):
            found.append(f"alertmanager.yml defines {key}")
    stack = [am.get("route") or {}]
    while stack:
        route = stack.pop()
        if not isinstance(route, dict):
            continue
        for key in ("mute_time_intervals", "active_time_intervals"):
            if route.get(key):
                found.append(f"alertmanager.yml: a route sets {key}")
        stack.extend(route.get("routes") or [])
    return found
