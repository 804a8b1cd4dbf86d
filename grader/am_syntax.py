"""The Alertmanager syntax every supported version accepts: what the grader adds to
``amtool check-config`` so that a config is valid on Debian 12's amtool 0.25 exactly when
it is valid on Debian 13's 0.28.

Alertmanager 0.27 moved to a UTF-8 matcher parser with a fallback to the classic one, so
0.28 accepts label names 0.25 rejects (``1a="b"``, ``a.b="c"``, non-ASCII) in ``matchers``
lists, ``group_by`` and inhibit ``equal``, and, built with Go 1.22, regexes with
``(?<name>...)`` groups (docs/formats.md "Tool versions"). The
grader follows the classic (0.25) syntax where the versions disagree: a config that only
the UTF-8 parser accepts is a syntax error on every version, so no grade depends on which
amtool ran. Configs both versions accept are not touched.
"""

from __future__ import annotations

from typing import Any

from grader.matchers import MatcherError, is_valid_label_name, parse_matcher_list

_MATCHER_FIELDS = ("matchers",)
_INHIBIT_MATCHER_FIELDS = ("source_matchers", "target_matchers")


def classic_syntax_problems(config: Any) -> list[str]:
    """What in a parsed ``alertmanager.yml`` only Alertmanager >= 0.27 accepts: matchers
    the classic parser rejects in the route tree and inhibit rules, and label names in
    ``group_by`` and ``equal`` outside ``[a-zA-Z_][a-zA-Z0-9_]*``. ``[]`` when none (also
    for shapes amtool itself judges: this runs only on configs amtool accepted)."""
    if not isinstance(config, dict):
        return []
    problems: list[str] = []
    _route(config.get("route"), "route", problems)
    for index, rule in enumerate(config.get("inhibit_rules") or []):
        if not isinstance(rule, dict):
            continue
        where = f"inhibit_rules[{index}]"
        for field in _INHIBIT_MATCHER_FIELDS:
            _matchers(rule.get(field), f"{where}.{field}", problems)
        _label_names(rule.get("equal"), f"{where}.equal", problems)
    return problems


def _route(route: Any, where: str, problems: list[str]) -> None:
    if not isinstance(route, dict):
        return
    for field in _MATCHER_FIELDS:
        _matchers(route.get(field), f"{where}.{field}", problems)
    _label_names(route.get("group_by"), f"{where}.group_by", problems, allow=("...",))
    for index, child in enumerate(route.get("routes") or []):
        _route(child, f"{where}.routes[{index}]", problems)


def _matchers(items: Any, where: str, problems: list[str]) -> None:
    try:
        parse_matcher_list(items, field=where)
    except MatcherError as err:
        problems.append(f"{err} (Alertmanager 0.25 rejects it, newer versions may accept it: "
                        "the grader follows 0.25 so grades agree across versions)")


def _label_names(names: Any, where: str, problems: list[str], allow: tuple[str, ...] = ()) -> None:
    if not isinstance(names, list):
        return
    for index, name in enumerate(names):
        if isinstance(name, str) and name not in allow and not is_valid_label_name(name):
            problems.append(f"{where}[{index}]: invalid label name {name!r} (accepted only by "
                            "Alertmanager 0.27 and later; the grader follows 0.25 so grades agree "
                            "across versions)")
