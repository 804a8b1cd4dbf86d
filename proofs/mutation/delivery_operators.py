"""Delivery operators: where a route requirement's pages go and when they are sent.

The mistakes are the ones a plausible agent config makes while every receiver *name* is
right: a receiver created by copying another team's block (its URL left), the integration
kind changed, a second integration added, the receiver the request retires kept, a route's
``group_wait`` / ``group_interval`` / ``repeat_interval`` raised on the route or on the root
(where every route inherits it), a route grouping by ``team`` only (a new outage joins a
running group and waits its interval). Each must be seen by the Route family: the
destination, removal and timing checks (:mod:`grader.probes.routing`).
"""

from __future__ import annotations

import copy
from collections.abc import Iterator

from proofs.mutation.am_edits import am_doc, route_of, with_am
from proofs.mutation.operators import Operator, Site
from recorder.reference.context import Context, Files, NotApplicable


def _created_receiver(doc: dict, req: dict) -> dict:
    """The receiver the requirement creates or renames (it names where it must send)."""
    if not req.get("destination"):
        raise NotApplicable(f"{req['id']} creates no receiver (its destination is preserved)")
    found = [r for r in doc.get("receivers") or [] if isinstance(r, dict)
             and r.get("name") == req["receiver"]]
    if not found:
        raise NotApplicable(f"the oracle has no receiver {req['receiver']}")
    return found[0]


def _sibling(doc: dict, ctx: Context, req: dict) -> dict:
    """Another team's receiver with an integration (the block a copy starts from)."""
    teams = set((ctx.spec.get("teams") or {}).values()) - {req["receiver"]}
    for receiver in doc.get("receivers") or []:
        if isinstance(receiver, dict) and receiver.get("name") in sorted(teams) and any(
                key.endswith("_configs") and value for key, value in receiver.items()):
            return receiver
    raise NotApplicable("no other team receiver to copy")


def _copy_sibling(files: Files, ctx: Context, req: dict) -> Iterator[Site]:
    """The created receiver is another team's block with only its name changed."""
    doc = am_doc(files)
    mine = _created_receiver(doc, req)
    copied = copy.deepcopy(_sibling(doc, ctx, req))
    mine.clear()
    mine.update({**copied, "name": req["receiver"]})
    yield req["id"], with_am(files, doc), req["id"]


def _change_kind(files: Files, ctx: Context, req: dict) -> Iterator[Site]:
    """The created receiver's webhook becomes a Slack integration posting to the same URL."""
    doc = am_doc(files)
    mine = _created_receiver(doc, req)
    hooks = mine.pop("webhook_configs", None)
    if not hooks:
        raise NotApplicable(f"{req['receiver']} has no webhook")
    mine["slack_configs"] = [{"api_url": hook.get("url"), "channel": "#pages"} for hook in hooks]
    yield req["id"], with_am(files, doc), req["id"]


def _add_integration(files: Files, ctx: Context, req: dict) -> Iterator[Site]:
    """The created receiver also posts to another team's webhook."""
    doc = am_doc(files)
    mine = _created_receiver(doc, req)
    hooks = _sibling(doc, ctx, req).get("webhook_configs") or []
    if not hooks:
        raise NotApplicable("no sibling webhook to add")
    mine.setdefault("webhook_configs", []).append(copy.deepcopy(hooks[0]))
    yield req["id"], with_am(files, doc), req["id"]


def _keep_retired(files: Files, ctx: Context, req: dict) -> Iterator[Site]:
    """Each receiver the request retires is kept, as the pristine repo defined it."""
    removes = req.get("removes") or []
    if not removes:
        raise NotApplicable(f"{req['id']} retires no receiver")
    pristine = am_doc(ctx.pristine)
    for name in removes:
        doc = am_doc(files)
        old = [r for r in pristine.get("receivers") or [] if isinstance(r, dict) and r.get("name") == name]
        doc.setdefault("receivers", []).append(old[0] if old else {"name": name})
        yield f"{req['id']}.{name}", with_am(files, doc), req["id"]


def _raise_on_route(field: str, value: str):
    """The requirement's route sets ``field`` to ``value`` (hours where minutes are asked)."""
    def apply(files: Files, ctx: Context, req: dict) -> Iterator[Site]:
        doc = am_doc(files)
        parent, index = route_of(doc, ctx, req)
        parent["routes"][index][field] = value
        yield req["id"], with_am(files, doc), req["id"]
    return apply


def _raise_on_root(field: str, value: str):
    """The root route sets ``field`` to ``value``; every route that sets none inherits it."""
    def apply(files: Files, ctx: Context, req: dict) -> Iterator[Site]:
        doc = am_doc(files)
        doc["route"][field] = value
        yield req["id"], with_am(files, doc), req["id"]
    return apply


def _group_by_team(files: Files, ctx: Context, req: dict) -> Iterator[Site]:
    """The requirement's route groups by ``team`` only: one group per team."""
    doc = am_doc(files)
    parent, index = route_of(doc, ctx, req)
    parent["routes"][index]["group_by"] = ["team"]
    yield req["id"], with_am(files, doc), req["id"]


ROUTE = ("route",)

OPERATORS = (
    Operator("copy-sibling-receiver", ROUTE, ("Route",), _copy_sibling,
             "the receiver the request creates is another team's block, URL and all"),
    Operator("change-integration-kind", ROUTE, ("Route",), _change_kind,
             "the created receiver's webhook becomes a Slack integration"),
    Operator("add-integration", ROUTE, ("Route",), _add_integration,
             "the created receiver also posts to another team's webhook"),
    Operator("keep-retired-receiver", ROUTE, ("Route",), _keep_retired,
             "the receiver the request retires is left in place"),
    Operator("raise-group-wait", ROUTE, ("Route",), _raise_on_route("group_wait", "2h"),
             "the team's route waits 2h before the first page"),
    Operator("raise-group-interval", ROUTE, ("Route",), _raise_on_route("group_interval", "1h"),
             "the team's route waits 1h between a group's pages"),
    Operator("raise-repeat-interval", ROUTE, ("Route",), _raise_on_route("repeat_interval", "24h"),
             "the team's route repeats a firing page once a day"),
    Operator("raise-root-group-wait", ROUTE, ("Route",), _raise_on_root("group_wait", "3h"),
             "the root route waits 3h, and every route inherits it"),
    Operator("raise-root-repeat-interval", ROUTE, ("Route",), _raise_on_root("repeat_interval", "3d"),
             "the root route repeats once in 3 days, and every route inherits it"),
    Operator("group-by-team", ROUTE, ("Route",), _group_by_team,
             "the team's route groups by team only, so an outage joins a running group"),
)
