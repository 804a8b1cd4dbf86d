"""Routing operators: widened or dropped matchers, lost ``continue``, reordered routes, swapped receivers.

Each targets a route requirement (the route sending to its receiver, see
:func:`proofs.mutation.am_edits.route_of`) and must be seen by the Route family (the
positive, negative and chain cases resolved with the real amtool). ``=~".*"`` also matches
alerts without the label, so a widened matcher is a catch-all in disguise; a prefix regex
matches a neighbour whose name starts the same way; the typo is the team-reorg workflow's
seeded defect.
"""

from __future__ import annotations

import os
from collections.abc import Iterator

from proofs.mutation.am_edits import (
    am_doc,
    labels_seen,
    matcher_texts,
    route_of,
    set_matchers,
    with_am,
)
from proofs.mutation.operators import Operator, Site
from recorder.reference.context import Context, Files, NotApplicable


def _route_matchers(files: Files, ctx: Context, req: dict):
    doc = am_doc(files)
    parent, index = route_of(doc, ctx, req)
    matchers = matcher_texts(parent["routes"][index])
    if not matchers:
        raise NotApplicable(f"the route to {req['receiver']} has no matchers")
    return doc, parent["routes"][index], matchers


def _rewrite_matcher(new):
    """An operator body replacing each matcher of the route by ``new(ctx, name, op, value)``
    (a list of matchers, maybe empty), one site per matcher."""
    def apply(files: Files, ctx: Context, req: dict) -> Iterator[Site]:
        _, _, matchers = _route_matchers(files, ctx, req)
        for k, (name, op, value) in enumerate(matchers):
            doc, route, current = _route_matchers(files, ctx, req)
            set_matchers(route, current[:k] + new(ctx, name, op, value) + current[k + 1:])
            yield f"{req['id']}.{name}", with_am(files, doc), req["id"]
    return apply


def _prefix(ctx: Context, name: str, value: str, caught: set[str]) -> str:
    """The longest prefix ``value`` shares with another value of the label the spec names
    that no earlier sibling route already takes (``caught``).

    Raises NotApplicable when there is none: the prefix regex would then match nothing that
    reaches the route, so no probe could tell it from the oracle.
    """
    others = labels_seen(ctx, name) - {value} - caught
    shared = max((len(os.path.commonprefix([value, o])) for o in others), default=0)
    if not shared:
        raise NotApplicable(f"no other {name} that reaches the route shares a prefix with {value}")
    return value[:shared]


def _widen_to_prefix(files: Files, ctx: Context, req: dict) -> Iterator[Site]:
    """Each ``name="value"`` matcher of the route becomes ``name=~"<prefix>.*"``, the prefix
    shared with a neighbour's value that the routes before this one do not take."""
    doc, _, matchers = _route_matchers(files, ctx, req)
    parent, index = route_of(doc, ctx, req)
    earlier = [matcher_texts(r) for r in parent["routes"][:index] if not r.get("continue")]
    for k, (name, op, value) in enumerate(matchers):
        if op != "=":
            continue
        caught = {v for ms in earlier if len(ms) == 1 for n, o, v in ms if n == name and o == "="}
        prefix = _prefix(ctx, name, value, caught)
        doc, route, current = _route_matchers(files, ctx, req)
        set_matchers(route, [*current[:k], (name, "=~", prefix + ".*"), *current[k + 1:]])
        yield f"{req['id']}.{name}", with_am(files, doc), req["id"]


def _typo(req: dict, value: str) -> str:
    if req.get("typo") and req.get("typo") != value:
        return str(req["typo"])
    return value[:1] + value[2:3] + value[1:2] + value[3:] if len(value) > 2 and value[1] != value[2] else value + "s"


def _typo_matcher(files: Files, ctx: Context, req: dict) -> Iterator[Site]:
    doc, route, matchers = _route_matchers(files, ctx, req)
    name, op, value = matchers[0]
    set_matchers(route, [(name, op, _typo(req, value)), *matchers[1:]])
    yield req["id"], with_am(files, doc), req["id"]


def _drop_continue(files: Files, ctx: Context, req: dict) -> Iterator[Site]:
    """Routes before the requirement's route (at every level of its path) lose ``continue``."""
    doc = am_doc(files)
    parent, index = route_of(doc, ctx, req)
    popped = sum(bool(sibling.pop("continue", None)) for sibling in parent["routes"][:index])
    if not popped:
        raise NotApplicable(f"no route with continue: true precedes the route to {req['receiver']}")
    yield req["id"], with_am(files, doc), req["id"]


def _move_route(to_first: bool):
    """Move the requirement's route first or last among its siblings. Last applies only to a
    route the spec says must come before the team routes (``label_team``: the alerts it
    takes carry another team's label); among disjoint siblings the position does not matter."""
    def apply(files: Files, ctx: Context, req: dict) -> Iterator[Site]:
        if not to_first and not req.get("label_team"):
            raise NotApplicable(f"{req['id']}: its route does not have to precede another")
        doc = am_doc(files)
        parent, index = route_of(doc, ctx, req)
        route = parent["routes"].pop(index)
        parent["routes"].insert(0 if to_first else len(parent["routes"]), route)
        yield req["id"], with_am(files, doc), req["id"]
    return apply


def _swap_receiver(files: Files, ctx: Context, req: dict) -> Iterator[Site]:
    doc = am_doc(files)
    parent, index = route_of(doc, ctx, req)
    names = [r.get("name") for r in doc.get("receivers") or []]
    pagers = [n for n in (ctx.spec.get("teams") or {}).values() if n in names and n != req["receiver"]]
    if not pagers:
        raise NotApplicable("no other team receiver to send to")
    parent["routes"][index]["receiver"] = min(pagers)
    yield req["id"], with_am(files, doc), req["id"]


def _drop_route(files: Files, ctx: Context, req: dict) -> Iterator[Site]:
    doc = am_doc(files)
    parent, index = route_of(doc, ctx, req)
    del parent["routes"][index]
    yield req["id"], with_am(files, doc), req["id"]


ROUTE = ("route",)

OPERATORS = (
    Operator("widen-matcher-any", ROUTE, ("Route",), _rewrite_matcher(lambda c, n, o, v: [(n, "=~", ".*")]),
             'a route matcher becomes name=~".*" (also matches alerts without the label)'),
    Operator("widen-matcher-prefix", ROUTE, ("Route",), _widen_to_prefix,
             "a route matcher becomes a prefix regex that a neighbour's value also matches"),
    Operator("drop-matcher", ROUTE, ("Route",), _rewrite_matcher(lambda c, n, o, v: []),
             "a route matcher is dropped"),
    Operator("typo-matcher", ROUTE, ("Route",), _typo_matcher,
             "the route's matcher value has a typo (the team-reorg workflow's defect)"),
    Operator("drop-continue", ROUTE, ("Route",), _drop_continue,
             "routes before the team's lose continue: true (the audit route swallows pages)"),
    Operator("route-first", ROUTE, ("Route",), _move_route(True),
             "the team's route moves first among its siblings"),
    Operator("route-last", ROUTE, ("Route",), _move_route(False),
             "the team's route moves last among its siblings (after routes that shadow it)"),
    Operator("swap-receiver", ROUTE, ("Route",), _swap_receiver, "the route sends to another team's receiver"),
    Operator("drop-route", ROUTE, ("Route",), _drop_route, "the team's route is missing"),
)
