"""Config hygiene of an alertmanager.yml: what is wrong with the routing tree although no
check fails, shown with the grade (never scored; where a request implies one, such as a
receiver that goes away, it is a check of its own).

- ``unused-receiver``: a receiver no route names (the root's default included): it pages
  nobody, and a reader takes it for a live destination;
- ``unreachable-route``: a route an earlier sibling without ``continue: true`` always catches
  first, because every matcher of that sibling is also one of this route's (Alertmanager's
  ``Route.Match`` stops at the first matching child; ``dispatch/route.go``); a regex that
  happens to cover another is not reasoned about, so this is never a false alarm;
- ``timing-contradiction``: on a route, after inheritance, ``group_wait`` longer than
  ``group_interval`` (a new group waits longer than a running one between notifications) or
  ``repeat_interval`` shorter than ``group_interval`` (a notification cannot repeat sooner
  than the group is flushed, so the setting has no effect).

The same kinds of findings as the amlint linter (PyPI, 0.8.5) reports for these, computed
here from the grader's own route walk (:mod:`grader.route_walk`).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping

from grader import route_walk
from grader.matchers import MatcherError, config_matchers


def _routes(route: Mapping, where: str, parent: dict | None) -> Iterator[tuple[str, Mapping, dict]]:
    """``(where, route, effective options)`` of ``route`` and every route under it."""
    opts = route_walk.route_options(route, where, parent)
    yield where, route, opts
    for index, child in enumerate(route.get("routes") or []):
        if isinstance(child, Mapping):
            yield from _routes(child, f"{where}.routes[{index}]", opts)


def _matcher_set(route: Mapping) -> frozenset[str] | None:
    try:
        return frozenset(str(m) for m in config_matchers(route))
    except (MatcherError, ValueError):
        return None


def _unreachable(route: Mapping, where: str) -> Iterator[dict]:
    children = [c for c in route.get("routes") or [] if isinstance(c, Mapping)]
    for later_index, later in enumerate(children):
        later_set = _matcher_set(later)
        for earlier_index, earlier in enumerate(children[:later_index]):
            earlier_set = _matcher_set(earlier)
            if earlier.get("continue") or earlier_set is None or later_set is None:
                continue
            if earlier_set <= later_set:
                yield {"kind": "unreachable-route", "where": f"{where}.routes[{later_index}]",
                       "text": (f"{where}.routes[{later_index}] -> {later.get('receiver', '(inherited)')} "
                                f"can never be reached: {where}.routes[{earlier_index}] "
                                f"{{{', '.join(sorted(earlier_set))}}} catches every alert it "
                                "matches first and has no continue: true")}
                break
    for index, child in enumerate(children):
        yield from _unreachable(child, f"{where}.routes[{index}]")


def hygiene_findings(config: object) -> list[dict]:
    """``[{kind, where, text}]`` for a loaded alertmanager.yml (kinds above, in the order
    unused receivers, unreachable routes, timing contradictions); empty for a config whose
    tree cannot be walked (amtool's check-config says why). Never raises."""
    if not isinstance(config, Mapping) or not isinstance(config.get("route"), Mapping):
        return []
    try:
        routes = list(_routes(config["route"], "route", None))
    except route_walk.RouteWalkError:
        return []
    named = {str(route.get("receiver")) for _, route, _ in routes if route.get("receiver")}
    findings = [{"kind": "unused-receiver", "where": f"receivers[{index}]",
                 "text": f"receiver {receiver.get('name')} is named by no route, so it pages nobody"}
                for index, receiver in enumerate(config.get("receivers") or [])
                if isinstance(receiver, Mapping) and str(receiver.get("name")) not in named]
    findings += list(_unreachable(config["route"], "route"))
    text = route_walk.format_seconds
    for where, _, opts in routes:  # said where a value involved is set, not on every heir
        wait, interval, repeat = (float(opts[f].value) for f in route_walk.TIMING_FIELDS)
        set_here = {f for f in route_walk.TIMING_FIELDS if opts[f].where == where}
        if wait > interval and set_here & {"group_wait", "group_interval"}:
            findings.append({"kind": "timing-contradiction", "where": where, "text": (
                f"{where}: group_wait {text(wait)} is longer than group_interval {text(interval)}")})
        if repeat < interval and set_here & {"repeat_interval", "group_interval"}:
            findings.append({"kind": "timing-contradiction", "where": where, "text": (
                f"{where}: repeat_interval {text(repeat)} is shorter than group_interval "
                f"{text(interval)}, so it has no effect")})
    return findings
