"""Adversaries on where pages go and when, with every receiver name right: a new receiver
written by copying another team's block, and a first page held back for hours.

Part of the adversary reference policies (:data:`recorder.reference.mutations.ADVERSARIES`).
"""

from __future__ import annotations

import copy

from recorder.reference.context import (
    AM,
    Context,
    Files,
    NotApplicable,
    dump_doc,
    load_doc,
    text_of,
)


def am_doc(files: Files, ctx: Context) -> dict:
    """The parsed alertmanager.yml of ``files`` over the pristine repo (NotApplicable when the
    task has none, or it has no route tree)."""
    if AM not in files and AM not in ctx.pristine:
        raise NotApplicable(f"the task has no {AM}")
    doc = load_doc(text_of(files, ctx, AM))
    if not isinstance(doc, dict) or not isinstance(doc.get("route"), dict):
        raise NotApplicable(f"{AM} has no route tree")
    return doc


def _route_path(route: dict, receiver: str) -> list[dict]:
    """The routes from ``route`` (included) down to the first child route, depth first,
    sending to ``receiver``; empty when none does."""
    for child in route.get("routes") or []:
        if not isinstance(child, dict):
            continue
        if child.get("receiver") == receiver:
            return [route, child]
        if below := _route_path(child, receiver):
            return [route, *below]
    return []


def sibling_receiver(files: Files, ctx: Context) -> Files:
    """The receiver the route requirement creates, written by copying another team's block
    and changing only its name: every name is right, and its pages reach the other team."""
    req = ctx.need("route")
    if not req.get("destination"):
        raise NotApplicable(f"{req['id']} creates no receiver (its destination is preserved)")
    doc = am_doc(files, ctx)
    receivers = [r for r in doc.get("receivers") or [] if isinstance(r, dict)]
    others = sorted(set((ctx.spec.get("teams") or {}).values()) - {req["receiver"]})
    sibling = next((r for name in others for r in receivers if r.get("name") == name
                    and any(k.endswith("_configs") and v for k, v in r.items())), None)
    mine = next((r for r in receivers if r.get("name") == req["receiver"]), None)
    if sibling is None or mine is None:
        raise NotApplicable(f"no other team's receiver to copy into {req['receiver']}")
    mine.clear()
    mine.update({**copy.deepcopy(sibling), "name": req["receiver"]})
    return {**files, AM: dump_doc(doc)}


def late_page(files: Files, ctx: Context) -> Files:
    """The team's pages wait 3h before the first one is sent: ``group_wait: 3h`` on the root
    route (every route inherits it), or on the nearest route of the team's path that sets
    its own (Alertmanager's ``dispatch/route.go``: a child route inherits what it leaves out)."""
    req = ctx.need("route")
    doc = am_doc(files, ctx)
    path = _route_path(doc["route"], req["receiver"])
    if not path:
        raise NotApplicable(f"no route sends to {req['receiver']}")
    setter = next((r for r in reversed(path) if "group_wait" in r), doc["route"])
    setter["group_wait"] = "3h"
    return {**files, AM: dump_doc(doc)}
