"""Inhibition operators: over-broad or missing sources, lost ``equal``, swapped sides, widened targets.

Each targets an inhibit requirement (the inhibit rule whose source side names its source
alert) and must be seen by the Inhibit family (the grader's Alertmanager 0.25 inhibition
simulator). The over-broad source is the mistake of issue 14's first paragraph: a source
that any alert of the service matches mutes the targets while another alert of that
service fires, not only while the named source fires.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

from proofs.mutation.am_edits import (
    am_doc,
    inhibit_rule_of,
    labels_seen,
    set_matchers,
    side,
    with_am,
)
from proofs.mutation.operators import Operator, Site
from recorder.reference.context import Context, Files, NotApplicable


def _camel(service: str) -> str:
    return "".join(part.capitalize() for part in service.split("-"))


def _rule_change(change: Callable[[dict, dict, Context], None]):
    """An operator body applying ``change(rule, req, ctx)`` to the requirement's inhibit rule."""
    def apply(files: Files, ctx: Context, req: dict) -> Iterator[Site]:
        doc = am_doc(files)
        rule = doc["inhibit_rules"][inhibit_rule_of(doc, req)]
        change(rule, req, ctx)
        yield req["id"], with_am(files, doc), req["id"]
    return apply


def _source_service_only(rule: dict, req: dict, ctx: Context) -> None:
    set_matchers(rule, [("service", "=", str(req["service"]))], "source_")


def _source_prefix(rule: dict, req: dict, ctx: Context) -> None:
    prefix = _camel(str(req["service"]))
    names = labels_seen(ctx, "alertname")
    if not any(n.startswith(prefix) and n != req["source"] for n in names):
        raise NotApplicable(f"no other alert the spec names starts with {prefix}")
    others = [(n, o, v) for n, o, v in side(rule, "source_") if n != "alertname"]
    set_matchers(rule, [("alertname", "=~", prefix + ".*"), *others], "source_")


def _drop_equal(rule: dict, req: dict, ctx: Context) -> None:
    if not rule.get("equal"):
        raise NotApplicable("the inhibit rule has no equal labels")
    rule.pop("equal")


def _swap_sides(rule: dict, req: dict, ctx: Context) -> None:
    source, target = side(rule, "source_"), side(rule, "target_")
    set_matchers(rule, target, "source_")
    set_matchers(rule, source, "target_")


def _target_prefix(rule: dict, req: dict, ctx: Context) -> None:
    """Targets named by the service's alert-name prefix (``GeoRpc.*``), plus any target that
    prefix does not cover (a generic alert such as HighErrorRatio)."""
    prefix = _camel(str(req["service"]))
    kept = [t for t in req.get("targets") or [] if not str(t).startswith(prefix)]
    others = [(n, o, v) for n, o, v in side(rule, "target_") if n != "alertname"]
    set_matchers(rule, [("alertname", "=~", "|".join([prefix + ".*", *kept])), *others], "target_")


def _drop_target(files: Files, ctx: Context, req: dict) -> Iterator[Site]:
    """One site per target alert: the rule no longer mutes that one."""
    targets = [str(t) for t in req.get("targets") or []]
    if len(targets) < 2:
        raise NotApplicable(f"{req['id']} has a single target (dropping it drops the rule)")
    for dropped in targets:
        doc = am_doc(files)
        rule = doc["inhibit_rules"][inhibit_rule_of(doc, req)]
        others = [(n, o, v) for n, o, v in side(rule, "target_") if n != "alertname"]
        rest = [t for t in targets if t != dropped]
        set_matchers(rule, [("alertname", "=~" if len(rest) > 1 else "=", "|".join(rest)), *others], "target_")
        yield f"{req['id']}.{dropped}", with_am(files, doc), req["id"]


def _drop_rule(files: Files, ctx: Context, req: dict) -> Iterator[Site]:
    doc = am_doc(files)
    del doc["inhibit_rules"][inhibit_rule_of(doc, req)]
    yield req["id"], with_am(files, doc), req["id"]


INHIBIT = ("inhibit",)

OPERATORS = (
    Operator("drop-source-matchers", INHIBIT, ("Inhibit",),
             _rule_change(lambda rule, req, ctx: set_matchers(rule, [], "source_")),
             "the source side has no matchers: any alert (with equal labels) mutes the targets"),
    Operator("source-service-only", INHIBIT, ("Inhibit",), _rule_change(_source_service_only),
             'the source is any alert of the service (service="...") instead of the named alert'),
    Operator("source-prefix", INHIBIT, ("Inhibit",), _rule_change(_source_prefix),
             "the source alert name becomes the service's prefix regex (GeoRpc.*)"),
    Operator("drop-equal", INHIBIT, ("Inhibit",), _rule_change(_drop_equal),
             "equal is dropped: one service's outage mutes every service's targets"),
    Operator("swap-source-target", INHIBIT, ("Inhibit",), _rule_change(_swap_sides),
             "source and target matchers swapped"),
    Operator("drop-target-matchers", INHIBIT, ("Inhibit",),
             _rule_change(lambda rule, req, ctx: set_matchers(rule, [], "target_")),
             "the target side has no matchers: every alert of the service is muted"),
    Operator("target-prefix", INHIBIT, ("Inhibit",), _rule_change(_target_prefix),
             "targets widened to the service's alert-name prefix (mutes its other alerts too)"),
    Operator("drop-target", INHIBIT, ("Inhibit",), _drop_target, "one of the targets is left out"),
    Operator("drop-inhibit-rule", INHIBIT, ("Inhibit",), _drop_rule, "the inhibit rule is missing"),
)
