"""Which rules a change actually edited, for the cause of a failing alert check: a rule named
in the check that is gone while others were added (a rename, a regex edit that hit the name),
or a rule left as the pristine repo had it while the change edited other rules.

A rule is *edited* when no rule of the pristine repo with the same ``alert`` / ``record``
name is equal to it (as parsed YAML), or the pristine repo has no rule of that name.
"""

from __future__ import annotations

import difflib


def _name(rule: dict) -> str | None:
    return rule.get("alert") or rule.get("record")


def _pristine_rules(pristine_groups: dict) -> dict[str, list[dict]]:
    by_name: dict[str, list[dict]] = {}
    for group in pristine_groups.values():
        for rule in (group or {}).get("rules") or []:
            if isinstance(rule, dict) and _name(rule):
                by_name.setdefault(str(_name(rule)), []).append(rule)
    return by_name


def edited_rules(rules: list[dict], pristine_groups: dict) -> list[str]:
    """Names of the rules in ``rules`` (the workspace's, file order) that the change added or
    changed against ``pristine_groups`` (group name -> group), each once, in order."""
    pristine = _pristine_rules(pristine_groups)
    names: list[str] = []
    for rule in rules:
        name = _name(rule)
        if name and rule not in pristine.get(str(name), []) and name not in names:
            names.append(str(name))
    return names


def edit_note(name: str, rule: dict | None, rules: list[dict], pristine_groups: dict) -> tuple[list[str], str]:
    """``(edited rule names, note)`` for a failing check of alert ``name`` whose rule is
    ``rule`` (None: no loadable rule defines it). The note is empty unless the rules the change
    edited are not this one: then it names them (and, for a missing alert, the closest
    name among the alerting rules the change added, by difflib's ratio)."""
    edited = edited_rules(rules, pristine_groups)
    others = [n for n in edited if n != name]
    if not others:
        return edited, ""
    shown = ", ".join(others[:5]) + (f" and {len(others) - 5} more" if len(others) > 5 else "")
    if rule is None:
        added = [n for n in others if any(r.get("alert") == n for r in rules)]
        close = difflib.get_close_matches(name, added, n=1, cutoff=0.6)
        hint = f" ({close[0]} is the closest name)" if close else ""
        return edited, f"the change added or edited {shown} instead{hint}"
    if name not in edited and any(r == rule for r in _pristine_rules(pristine_groups).get(name, [])):
        return edited, f"this rule is as the pristine repo had it; the change edited {shown}"
    return edited, ""
