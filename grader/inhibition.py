"""Simulate Alertmanager 0.25 inhibition for a set of firing alerts.

amtool cannot simulate inhibition, so the grader does it here, following
Alertmanager 0.25 ``inhibit/inhibit.go`` (``Inhibitor.Mutes``, ``InhibitRule.inhibits``):

- a target alert is muted by a rule when it matches the rule's target matchers and
  some unresolved alert matches the rule's source matchers with equal values for
  every ``equal`` label; a label missing on both sides counts as equal (both ``""``);
- when the target also matches the rule's source matchers, sources that also match
  the target matchers are skipped: an alert never inhibits itself, and two alerts
  that each match both sides do not inhibit each other;
- whether the source is itself muted does not matter;
- rules are tried in config order and the first muting rule decides; the server
  reports one source of that rule in ``status.inhibitedBy``, picked in Go map order
  (so not stable between queries when several sources qualify).

Alertmanager 0.30 (PR #4607, "improve inhibition performance", unchanged to 0.33) replaced
the scan by an index: per rule, one source alert per combination of the ``equal`` values (the
one that resolves last; on a tie the one processed last). A target is then muted by a rule only
through that one source, and when the target matches both sides and that source does too,
the rule does not mute it (no other source is tried). ``semantics`` selects ``"0.25"`` (0.25
to 0.29: the scan) or ``"0.30"`` (0.30 and later: the index); the alerts of a case are taken
as posted in list order with one end time, as the tests post them.

The real server is the reference: ``tests/test_inhibition.py`` cross-checks this module
against ``GET /api/v2/alerts`` of the ``prometheus-alertmanager`` it is given (0.25, 0.28 and
0.33.1 were run), with the semantics of that server's version.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from grader.matchers import (
    Matcher,
    MatcherError,
    config_matchers,
    is_valid_label_name,
    matches_all,
    scalar_to_str,
)

__all__ = [
    "RULE_KEYS",
    "SEMANTICS",
    "InhibitConfigError",
    "InhibitRule",
    "compile_inhibit_rule",
    "compile_inhibit_rules",
    "inhibit_rules_of",
    "inhibited_by",
    "inhibitors",
]

#: Keys an inhibit rule may have in Alertmanager 0.25 (others fail config loading).
RULE_KEYS = frozenset(
    {
        "source_match",
        "source_match_re",
        "source_matchers",
        "target_match",
        "target_match_re",
        "target_matchers",
        "equal",
    }
)


SEMANTICS = ("0.25", "0.30")
"""The inhibition semantics the simulator knows: the scan of 0.25-0.29, the index of 0.30+."""


def semantics_of(version: str) -> str:
    """The semantics of an Alertmanager (or amtool) version string (``0.28.1+ds`` ->
    ``"0.25"``, ``0.33.1`` -> ``"0.30"``); ``"0.25"`` when it does not parse."""
    found = re.match(r"v?(\d+)\.(\d+)", str(version).strip())
    if not found:
        return "0.25"
    return "0.30" if (int(found.group(1)), int(found.group(2))) >= (0, 30) else "0.25"


class InhibitConfigError(ValueError):
    """An ``inhibit_rules`` section Alertmanager 0.25 would refuse to load (wrong
    shape, unknown key, bad matcher or regex, invalid label name in ``equal``).
    The message says which rule (0-based index) and which field."""


@dataclass(frozen=True)
class InhibitRule:
    """A compiled inhibit rule: ``source`` and ``target`` matchers (AND of the legacy
    ``*_match``/``*_match_re`` maps and the ``*_matchers`` list) and the ``equal``
    label names, as Alertmanager 0.25 ``inhibit/inhibit.go`` NewInhibitRule builds it."""

    source: tuple[Matcher, ...]
    target: tuple[Matcher, ...]
    equal: tuple[str, ...]

    def describe(self) -> str:
        """Human-readable one-line form, e.g. ``{severity="critical"} mutes
        {severity="warning"} when equal [cluster]``. Never raises."""
        src = "{" + ", ".join(map(str, self.source)) + "}"
        tgt = "{" + ", ".join(map(str, self.target)) + "}"
        return f"{src} mutes {tgt} when equal [{', '.join(self.equal)}]"


def compile_inhibit_rule(rule: Mapping[str, object], index: int = 0) -> InhibitRule:
    """Validate and compile one inhibit rule dict (as loaded from YAML).

    Accepts ``source_match``, ``source_match_re``, ``source_matchers``, the same three
    for ``target_``, and ``equal`` (list of label names; duplicates are harmless).
    Missing sides match every alert. Raises :class:`InhibitConfigError` naming
    ``inhibit_rules[index]`` for a non-map rule, an unknown key, a bad matcher or
    regex, or an invalid ``equal`` entry (Alertmanager 0.25 ``config/config.go``
    InhibitRule.UnmarshalYAML and ``model.LabelNames``).
    """
    where = f"inhibit_rules[{index}]"
    if isinstance(rule, InhibitRule):
        return rule
    if not isinstance(rule, Mapping):
        raise InhibitConfigError(f"{where}: expected a map, got {rule!r}")
    unknown = sorted(str(k) for k in rule if k not in RULE_KEYS)
    if unknown:
        raise InhibitConfigError(
            f"{where}: unknown field(s) {', '.join(unknown)} "
            f"(allowed: {', '.join(sorted(RULE_KEYS))})"
        )
    try:
        source = config_matchers(rule, "source_")
        target = config_matchers(rule, "target_")
    except MatcherError as exc:
        raise InhibitConfigError(f"{where}: {exc}") from None
    raw_equal = rule.get("equal")
    if raw_equal is None:
        raw_equal = []
    if not isinstance(raw_equal, list):
        raise InhibitConfigError(
            f"{where}.equal: expected a list of label names, got {raw_equal!r}"
        )
    equal: list[str] = []
    for k, item in enumerate(raw_equal):
        try:
            name = scalar_to_str(item, where=f"{where}.equal[{k}]")
        except MatcherError as exc:
            raise InhibitConfigError(str(exc)) from None
        if not is_valid_label_name(name):
            raise InhibitConfigError(f"{where}.equal[{k}]: {name!r} is not a valid label name")
        if name not in equal:
            equal.append(name)
    return InhibitRule(tuple(source), tuple(target), tuple(equal))


def compile_inhibit_rules(inhibit_rules: object) -> list[InhibitRule]:
    """Compile a list of inhibit rule dicts (or already compiled :class:`InhibitRule`).

    ``None`` gives ``[]``. Raises :class:`InhibitConfigError` for a non-list or any
    malformed rule (see :func:`compile_inhibit_rule`).
    """
    if inhibit_rules is None:
        return []
    if not isinstance(inhibit_rules, list | tuple):
        raise InhibitConfigError(f"inhibit_rules: expected a list of rules, got {inhibit_rules!r}")
    return [compile_inhibit_rule(r, i) for i, r in enumerate(inhibit_rules)]


def inhibit_rules_of(config: Mapping[str, object]) -> list[dict]:
    """The ``inhibit_rules`` of a full Alertmanager config dict, validated.

    Returns the rule dicts (shallow copies, in config order) ready for
    :func:`inhibited_by`; a config without ``inhibit_rules`` (or with ``null``) gives
    ``[]``. Raises :class:`InhibitConfigError` if ``config`` is not a map, if
    ``inhibit_rules`` is not a list, or if any rule is malformed (unknown key, bad
    matcher or regex, invalid ``equal`` label), mirroring what Alertmanager 0.25
    ``config.Load`` rejects for this section.
    """
    if not isinstance(config, Mapping):
        raise InhibitConfigError(
            f"alertmanager config: expected a map, got {type(config).__name__}"
        )
    rules = config.get("inhibit_rules")
    compile_inhibit_rules(rules)  # validation only
    return [dict(r) for r in (rules or [])]


def _check_alerts(alerts: Sequence[Mapping[str, str]]) -> list[Mapping[str, str]]:
    # ValueError (not TypeError) on purpose: alerts come from task data, and callers
    # treat every malformed input of a check as one kind of error.
    out = []
    for i, alert in enumerate(alerts):
        if not isinstance(alert, Mapping):
            raise ValueError(f"alerts[{i}]: expected a label map, got {alert!r}")  # noqa: TRY004
        for k, v in alert.items():
            if not isinstance(k, str) or not isinstance(v, str):
                raise ValueError(f"alerts[{i}]: label {k!r}={v!r} must be str -> str")  # noqa: TRY004
        out.append(alert)
    return out


def inhibitors(
    inhibit_rules: Sequence[Mapping[str, object] | InhibitRule],
    alerts: Sequence[Mapping[str, str]],
    semantics: str = "0.25",
) -> list[list[tuple[int, int]]]:
    """For each alert, every ``(rule index, source alert index)`` pair that mutes it.

    ``alerts`` are label maps (``dict[str, str]``), all considered firing; a label
    with value ``""`` is the same as a missing one. Pairs are ordered by rule, then
    source index. Alertmanager 0.25 reports (by fingerprint, in ``status.inhibitedBy``)
    exactly one source among the pairs of the first rule listed here, chosen
    arbitrarily; newer versions may list more.

    Semantics: Alertmanager 0.25 ``inhibit/inhibit.go`` (``Mutes``, ``inhibits``), or with
    ``semantics="0.30"`` 0.30's index (at most one source per rule: the last alert of the list
    that matches the source side with the target's ``equal`` values).
    Raises :class:`InhibitConfigError` for malformed rules and ``ValueError`` for an
    alert that is not a ``str -> str`` map or an unknown ``semantics``.
    """
    if semantics not in SEMANTICS:
        raise ValueError(f"unknown inhibition semantics {semantics!r} (one of {', '.join(SEMANTICS)})")
    rules = compile_inhibit_rules(list(inhibit_rules))
    labels = _check_alerts(alerts)
    # Per rule: which alerts are sources, which are targets (computed once).
    src = [[matches_all(r.source, a) for a in labels] for r in rules]
    tgt = [[matches_all(r.target, a) for a in labels] for r in rules]
    out: list[list[tuple[int, int]]] = []
    for t, target in enumerate(labels):
        found: list[tuple[int, int]] = []
        for ri, rule in enumerate(rules):
            if not tgt[ri][t]:
                continue
            exclude_two_sided = src[ri][t]
            equal = [s for s, source in enumerate(labels) if src[ri][s] and all(
                (source.get(n) or "") == (target.get(n) or "") for n in rule.equal)]
            if semantics == "0.30":  # the index keeps one source per equal values
                equal = equal[-1:]
            found += [(ri, s) for s in equal if not (exclude_two_sided and tgt[ri][s])]
        out.append(found)
    return out


def inhibited_by(
    inhibit_rules: Sequence[Mapping[str, object] | InhibitRule],
    alerts: Sequence[Mapping[str, str]],
    semantics: str = "0.25",
) -> list[tuple[int, int] | None]:
    """For each alert: ``None`` if no rule mutes it, else ``(rule index, source alert
    index)`` of the first rule (config order) and first source (``alerts`` order) that
    mutes it.

    ``inhibit_rules`` is a list of rule dicts as in an Alertmanager config (see
    :func:`inhibit_rules_of`); ``alerts`` are label maps, all considered firing.
    A target is muted when it matches the rule's target matchers and some alert
    matching the source matchers has equal values for every ``equal`` label (missing
    on both sides counts as equal); if the target also matches the source matchers,
    sources that also match the target matchers are skipped, so an alert never
    inhibits itself. Source: Alertmanager 0.25 ``inhibit/inhibit.go``. The rule index
    is the rule the server attributes the inhibition to; when several alerts of that
    rule qualify, the server names any one of them, this function the lowest index.

    With ``semantics="0.30"``, Alertmanager 0.30's index instead (:func:`inhibitors`).

    Raises :class:`InhibitConfigError` for malformed rules and ``ValueError`` for an
    alert that is not a ``str -> str`` map.
    """
    return [pairs[0] if pairs else None for pairs in inhibitors(inhibit_rules, alerts, semantics)]
