"""The cause of a failing route check: the path of matching routes amtool prints, the matcher that stopped the expected branch, a missing ``continue``.

The path is amtool's own (``amtool config routes test --tree``); why a receiver was not
reached is read from the route tree walked as Alertmanager 0.25 ``dispatch/route.go``
``Route.Match`` walks it: a route matches when all its matchers do (a missing label is
``""``), its children are tried in order, and the first matching child without
``continue: true`` ends the walk at that level.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from grader.matchers import Matcher, config_matchers


@dataclass
class RouteNode:
    """One route of the tree: ``where`` (``route``, ``route.routes[1]``, ...), its matchers,
    its receiver (inherited from the parent when it sets none), ``continue`` and children."""

    where: str
    matchers: list[Matcher]
    receiver: str
    cont: bool
    explicit: bool = True
    children: list[RouteNode] = field(default_factory=list)

    def describe(self) -> str:
        """``{a="b", c=~"d"} -> receiver`` (``{}`` for no matchers)."""
        return "{" + ", ".join(map(str, self.matchers)) + "} -> " + self.receiver


def route_tree_of(route: dict, where: str = "route", parent_receiver: str = "") -> RouteNode:
    """The route tree of a loaded alertmanager.yml ``route`` (amtool accepted it). Raises
    MatcherError for a matcher the grader cannot parse (amtool would have refused it)."""
    receiver = str(route.get("receiver") or parent_receiver)
    node = RouteNode(where, config_matchers(route) if where != "route" else [], receiver,
                     bool(route.get("continue")), explicit=bool(route.get("receiver")))
    for i, child in enumerate(route.get("routes") or []):
        if isinstance(child, dict):
            node.children.append(route_tree_of(child, f"{where}.routes[{i}]", receiver))
    return node


def _branches(node: RouteNode, receiver: str, path: tuple = ()) -> list[tuple[RouteNode, ...]]:
    """Every root-to-route path ending at a route that names ``receiver`` itself, deepest
    first (an inherited receiver counts only where no route names it)."""
    path = path + (node,)
    found = [path] if node.receiver == receiver else []
    for child in node.children:
        found += _branches(child, receiver, path)
    named = [b for b in found if b[-1].explicit]
    return sorted(named or found, key=len, reverse=True)


def _stopper(branch: tuple[RouteNode, ...], labels: dict[str, str]) -> dict:
    """Why a branch was not taken: the first route on it whose matcher fails, or the earlier
    sibling that matched without ``continue`` and ended the walk at that level."""
    for depth, node in enumerate(branch[1:], start=1):
        failing = [m for m in node.matchers if not m.matches(labels)]
        if failing:
            m = failing[0]
            return {"kind": "route-matcher-stopped", "route": node.where, "matcher": str(m),
                    "label": m.name, "value": labels.get(m.name)}
        parent = branch[depth - 1]
        for sibling in parent.children[:parent.children.index(node)]:
            if all(m.matches(labels) for m in sibling.matchers) and not sibling.cont:
                return {"kind": "route-continue-missing", "route": sibling.where,
                        "sibling": sibling.describe(), "before": node.where}
    last = branch[-1]
    child = next((c for c in last.children if all(m.matches(labels) for m in c.matchers)), None)
    if child is not None:
        return {"kind": "route-child-matched", "route": last.where, "child": child.where,
                "sibling": child.describe()}
    return {"kind": "route-reached-deeper", "route": last.where}


def _delivering(node: RouteNode, labels: dict[str, str]) -> list[RouteNode]:
    """The routes a label set ends at (Alertmanager 0.25 ``Route.Match``)."""
    if node.where != "route" and not all(m.matches(labels) for m in node.matchers):
        return []
    found: list[RouteNode] = []
    for child in node.children:
        matched = _delivering(child, labels)
        found += matched
        if matched and not child.cont:
            break
    return found or [node]


def _missing_label_matches(node: RouteNode, labels: dict[str, str]) -> list[str]:
    """Regex or negative matchers of ``node`` that matched only because the label is absent."""
    return [str(m) for m in node.matchers if m.name not in labels and m.op in ("=~", "!=", "!~")]


def _summary(stop: dict, receiver: str, labels_text: str) -> str:
    if stop["kind"] == "route-matcher-stopped":
        value = "absent" if stop["value"] is None else f"{stop['value']!r}"
        return (f"expected receiver {receiver} is not reached: {stop['route']} needs "
                f"{stop['matcher']}, and the alert's {stop['label']} is {value} ({labels_text})")
    if stop["kind"] == "route-continue-missing":
        return (f"expected receiver {receiver} is not reached: the earlier sibling "
                f"{stop['route']} {stop['sibling']} matched and has no continue: true, so the "
                f"walk stopped before {stop['before']}")
    if stop["kind"] == "route-child-matched":
        return (f"expected receiver {receiver} of {stop['route']} is not used: its child "
                f"{stop['child']} {stop['sibling']} matched, and a matching child's receiver "
                "replaces the parent's")
    return f"expected receiver {receiver}: its route {stop['route']} is under a deeper match"


def route_cause(labels: dict[str, str], expected: set[str], got: set[str], forbidden: set[str],
                am: dict, tree_lines: list[str]) -> dict:
    """The cause (contract.grade.Cause as a dict) of a failing route check on ``labels``.

    ``facts``: ``{labels, path (amtool --tree lines), expected, got, missing: [{receiver,
    kind, route, ...}], extra: [{receiver, route, describe, matched_on_absent}], caught_by:
    [{route, describe}] (the routes that delivered the alert)}``. When several routes name a
    missing receiver, the one explained is the one whose walk a delivering route stopped.
    """
    tree = route_tree_of(am.get("route") or {})
    labels_text = "{" + ", ".join(f"{k}={v}" for k, v in sorted(labels.items())) + "}"
    delivering = _delivering(tree, labels)
    caught = {node.where for node in delivering}
    missing = [_missing_receiver(tree, receiver, labels, caught)
               for receiver in sorted(expected - got)]
    extra = []
    for node in delivering:
        if node.receiver in (got - expected) | (got & forbidden):
            extra.append({"receiver": node.receiver, "route": node.where,
                          "describe": node.describe(),
                          "matched_on_absent": _missing_label_matches(node, labels)})
    facts = {"labels": labels, "path": tree_lines, "expected": sorted(expected), "got": sorted(got),
             "missing": missing, "extra": extra,
             "caught_by": [{"route": n.where, "describe": n.describe()} for n in delivering]}
    path = " > ".join(line.strip(" ├└─│") for line in tree_lines) or "(none)"
    kind, summary = _route_summary(missing, extra, labels_text, got)
    return {"kind": kind, "summary": f"{summary}; amtool path: {path}", "facts": facts}


def _missing_receiver(tree: RouteNode, receiver: str, labels: dict[str, str], caught: set[str]) -> dict:
    """``{receiver, kind, route, ...}``: why the walk for ``labels`` did not reach
    ``receiver`` (``route-receiver-unrouted`` when no route names it)."""
    branches = _branches(tree, receiver)
    if not branches:
        return {"receiver": receiver, "kind": "route-receiver-unrouted"}
    stops = [_stopper(b, labels) for b in branches]
    # several routes name the receiver: explain the one a route that did catch the
    # alert stopped, not the first in tree order (which may never have been meant)
    best = next((s for s in stops if s["kind"] == "route-continue-missing"
                 and s["route"] in caught), stops[0])
    return {"receiver": receiver, **best}


def _route_summary(missing: list[dict], extra: list[dict], labels_text: str,
                   got: set[str]) -> tuple[str, str]:
    """(kind, summary) of a failing route check from its first missing receiver, else its
    first extra one."""
    if missing and missing[0]["kind"] != "route-receiver-unrouted":
        return missing[0]["kind"], _summary(missing[0], missing[0]["receiver"], labels_text)
    if missing:
        return ("route-receiver-unrouted",
                f"no route in the tree delivers to {missing[0]['receiver']}")
    if extra and extra[0]["matched_on_absent"]:
        return ("route-matches-missing-label",
                (f"{extra[0]['route']} {extra[0]['describe']} matched because "
                 f"{', '.join(extra[0]['matched_on_absent'])} also matches alerts without "
                 f"that label ({labels_text} has none)"))
    if extra:
        return ("route-overmatched",
                (f"{extra[0]['route']} {extra[0]['describe']} matched {labels_text}, "
                 f"adding receiver {extra[0]['receiver']}"))
    return "route-overmatched", f"amtool resolved {sorted(got)}"
