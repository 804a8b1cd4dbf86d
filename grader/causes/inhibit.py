"""The cause of a failing inhibit check: each inhibit rule's source, target and ``equal`` side against the case's alerts.

Alertmanager 0.25 semantics (``inhibit/inhibit.go``, as :mod:`grader.inhibition` follows
them): a rule mutes a target that matches its target matchers when some other alert matches
its source matchers with equal values of every ``equal`` label (missing on both sides counts
as equal), and an alert that matches both sides never mutes one that does too.
"""

from __future__ import annotations

import difflib

from grader.inhibition import InhibitRule, compile_inhibit_rule
from grader.matchers import Matcher, matches_all
from grader.probes.labels import format_labels


def _matcher_facts(matchers: tuple[Matcher, ...], alert: dict[str, str]) -> list[dict]:
    """``[{matcher, matched}]`` of each matcher against one alert."""
    return [{"matcher": str(m), "matched": m.matches(alert)} for m in matchers]


def _absent_labels(rule: InhibitRule, alerts: list[dict[str, str]]) -> list[dict]:
    """Matchers of the rule on a label no alert of the case carries, each with the closest
    label name the alerts do carry (``difflib``, cutoff 0.5) or None."""
    carried = sorted({name for alert in alerts for name in alert})
    out = []
    for side, matchers in (("source", rule.source), ("target", rule.target)):
        for matcher in matchers:
            if matcher.name not in carried and not matcher.matches_value(""):
                close = difflib.get_close_matches(matcher.name, carried, n=1, cutoff=0.5)
                out.append({"side": side, "matcher": str(matcher), "label": matcher.name,
                            "closest": close[0] if close else None})
    return out


def _equal_facts(rule: InhibitRule, source: dict[str, str], target: dict[str, str]) -> list[dict]:
    """``[{label, source, target, same}]`` of every ``equal`` label (missing is None)."""
    return [{"label": name, "source": source.get(name) or None, "target": target.get(name) or None,
             "same": (source.get(name) or "") == (target.get(name) or "")} for name in rule.equal]


def rule_facts(index: int, rule: InhibitRule, alerts: list[dict[str, str]], target: int) -> dict:
    """What one inhibit rule does to ``alerts[target]``: ``{rule, describe, target_matched,
    source_matches_target, target_matchers, sources: [{alert, alertname, labels, matched,
    matchers, equal, self_excluded}],
    absent_labels, mutes}`` (``rule`` 1-based, as the config lists it)."""
    tgt = alerts[target]
    target_matched = matches_all(rule.target, tgt)
    two_sided = matches_all(rule.source, tgt)
    sources = []
    for s, alert in enumerate(alerts):
        if s == target:
            continue
        matched = matches_all(rule.source, alert)
        equal = _equal_facts(rule, alert, tgt)
        self_excluded = matched and two_sided and matches_all(rule.target, alert)
        sources.append({"alert": s, "alertname": alert.get("alertname", ""), "labels": alert,
                        "matched": matched,
                        "matchers": _matcher_facts(rule.source, alert), "equal": equal,
                        "self_excluded": self_excluded})
    mutes = target_matched and any(s["matched"] and all(e["same"] for e in s["equal"])
                                   and not s["self_excluded"] for s in sources)
    return {"rule": index + 1, "describe": rule.describe(), "target_matched": target_matched,
            "source_matches_target": two_sided,
            "target_matchers": _matcher_facts(rule.target, tgt), "sources": sources,
            "absent_labels": _absent_labels(rule, alerts), "mutes": mutes}


def _stage(facts: dict) -> int:
    """How far a rule got towards muting: 0 nothing, 1 target or a source matched, 2 both,
    3 an ``equal``-satisfying source too."""
    matched = [s for s in facts["sources"] if s["matched"]]
    if facts["target_matched"] and any(all(e["same"] for e in s["equal"]) for s in matched):
        return 3
    return int(facts["target_matched"]) + int(bool(matched))


def _not_muted(rules: list[dict], target: dict[str, str]) -> tuple[str, str]:
    """(kind, summary) of a target that should be muted and is not."""
    name = target.get("alertname", "the target")
    if not rules:
        return "inhibit-no-rule", f"alertmanager.yml has no inhibit rule, so nothing mutes {name}"
    misspelt = [r for r in rules if r["target_matched"] and any(
        a["side"] == "source" for a in r["absent_labels"])]
    if not misspelt and not any(s["matched"] for r in rules for s in r["sources"]):
        return _no_source_matches(rules, name)
    best = misspelt[0] if misspelt else max(rules, key=_stage)
    where = (f"inhibit rule {best['rule']} ({best['describe']})" if len(rules) == 1 else
             f"none of the {len(rules)} inhibit rules mutes {name}; the closest, rule "
             f"{best['rule']} ({best['describe']})")
    absent = sorted(best["absent_labels"], key=lambda a: a["side"] != "source")
    if absent:
        a = absent[0]
        hint = f"; did you mean {a['closest']}?" if a["closest"] else ""
        return ("inhibit-matcher-absent-label",
                (f"{where}: its {a['side']} matcher {a['matcher']} is on label {a['label']}, "
                f"which no alert in the case carries{hint}"))
    if not best["target_matched"]:
        failing = [m["matcher"] for m in best["target_matchers"] if not m["matched"]]
        return ("inhibit-target-unmatched",
                (f"{where}: target matcher {', '.join(failing)} does not match {name} "
                f"{format_labels(target)}"))
    matched = [s for s in best["sources"] if s["matched"]]
    if not matched:
        return _source_unmatched(best, where)
    return _matched_source_does_not_mute(matched, where, name)


def _no_source_matches(rules: list[dict], name: str) -> tuple[str, str]:
    """(kind, summary) when no other alert of the case matches any rule's source side (only
    the target itself may)."""
    own = [r for r in rules if r["target_matched"] and r["source_matches_target"]]
    if own:
        return ("inhibit-self-excluded",
                (f"only {name} itself matches the source side of inhibit rule {own[0]['rule']} "
                f"({own[0]['describe']}), and an alert never mutes itself"))
    others = ", ".join(f"{s['alertname']} {format_labels(s['labels'])}" for s in rules[0]["sources"])
    whose = ("the only inhibit rule's source side matches" if len(rules) == 1 else
             f"none of the {len(rules)} inhibit rules' source sides matches")
    return ("inhibit-no-matching-rule",
            f"{whose} no other alert firing in the case ({others}), so nothing can mute {name}")


def _source_unmatched(best: dict, where: str) -> tuple[str, str]:
    """(kind, summary) when no alert matches the closest rule's source side, naming the
    matchers the nearest alert fails."""
    near = max(best["sources"], key=lambda s: sum(m["matched"] for m in s["matchers"]),
               default=None)
    failing = [m["matcher"] for m in (near or {}).get("matchers", []) if not m["matched"]]
    return ("inhibit-source-unmatched",
            f"{where}: no alert in the case matches its source side"
            + (f" ({near['alertname']} fails {', '.join(failing)})" if near and failing else ""))


def _matched_source_does_not_mute(matched: list[dict], where: str, name: str) -> tuple[str, str]:
    """(kind, summary) when sources match the closest rule but none mutes: the qualifying ones
    match both sides, or an ``equal`` label differs."""
    if all(s["self_excluded"] for s in matched if all(e["same"] for e in s["equal"])) and any(
            all(e["same"] for e in s["equal"]) for s in matched):
        return ("inhibit-self-excluded",
                (f"{where}: the only qualifying source matches both sides, as {name} does, and "
                "such alerts never mute each other"))
    differing = [e for s in matched for e in s["equal"] if not e["same"]]
    e = differing[0]
    return ("inhibit-equal-differs",
            (f"{where}: equal label {e['label']} differs: source has "
            f"{e['source'] if e['source'] is not None else '(missing)'}, {name} has "
            f"{e['target'] if e['target'] is not None else '(missing)'}"))


def _muted(rules: list[dict], target: dict[str, str]) -> tuple[str, str]:
    """(kind, summary) of a target that should not be muted and is."""
    first = next(r for r in rules if r["mutes"])
    source = next(s for s in first["sources"] if s["matched"] and not s["self_excluded"]
                  and all(e["same"] for e in s["equal"]))
    missing_both = [e["label"] for e in source["equal"] if e["source"] is None and e["target"] is None]
    also = (f"; equal label {', '.join(missing_both)} is missing on both sides, which counts as equal"
            if missing_both else "")
    broad = [m["matcher"] for m in first["target_matchers"]]
    return ("inhibit-overmatched",
            (f"inhibit rule {first['rule']} ({first['describe']}) mutes "
            f"{target.get('alertname', 'the target')}: target matchers "
            f"{', '.join(broad) or '(none: every alert)'} match it and source "
            f"{source['alertname']} qualifies{also}"))


def inhibit_cause(check: dict, inhibit_rules: list[dict]) -> dict:
    """The cause (contract.grade.Cause as a dict) of a failing inhibit check whose inhibit
    rules loaded: ``facts`` is ``{target, expect_muted, rules: [rule_facts ...]}``.
    Raises InhibitConfigError / ValueError only for rules the probe already refused."""
    probe = check["probe"]
    alerts = [{str(k): str(v) for k, v in a.items()} for a in probe["alerts"]]
    target = alerts[probe["target"]]
    rules = [rule_facts(i, compile_inhibit_rule(r, i), alerts, probe["target"])
             for i, r in enumerate(inhibit_rules)]
    kind, summary = (_not_muted if probe["expect_muted"] else _muted)(rules, target)
    return {"kind": kind, "summary": summary,
            "facts": {"target": target, "expect_muted": probe["expect_muted"], "rules": rules}}
