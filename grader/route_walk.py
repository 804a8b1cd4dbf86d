"""The routes an alert takes through an Alertmanager routing tree, with each route's effective
grouping and timing: what decides *when* a page is sent.

Semantics are Alertmanager's ``dispatch/route.go`` (unchanged from 0.25 to 0.33):

- ``NewRoute`` starts each route from its parent's options (the root from
  ``DefaultRouteOpts``: ``group_wait`` 30s, ``group_interval`` 5m, ``repeat_interval`` 4h,
  ``group_by`` empty, i.e. one group for all alerts of the route) and overrides only what the
  route sets; ``group_by: ['...']`` groups by every label (``GroupByAll``).
- ``Route.Match`` matches a route when all its matchers do (a missing label is ``""``; the root
  matches everything), tries the children in order, and the first matching child without
  ``continue: true`` ends the walk at that level; a route none of whose children matched is
  itself a match. The receivers of the matches, in order, are what
  ``amtool config routes test`` prints.

Durations are Prometheus durations (``model.ParseDuration``: ``1h30m``, ``90s``; no fractions).
The walk is cross-checked against amtool's receivers by the probes that use it
(:mod:`grader.probes.delivery`), so a difference in matching shows as a failed check, never as
a silent wrong answer.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from grader.matchers import config_matchers, matches_all
from grader.preservation import duration_seconds

TIMING_FIELDS = ("group_wait", "group_interval", "repeat_interval")
"""The per-route notification timings, in the order Alertmanager applies them to a group."""

DEFAULT_TIMINGS = {"group_wait": 30.0, "group_interval": 300.0, "repeat_interval": 14400.0}
"""Alertmanager's ``DefaultRouteOpts`` (``dispatch/route.go``), in seconds."""

GROUP_BY_ALL = "..."
"""``group_by: ['...']``: every label is a grouping label (``config.go``, ``GroupByAll``)."""


class RouteWalkError(ValueError):
    """The routing tree cannot be walked: a route or matcher of a shape amtool refuses
    (amtool's own check-config names it); a duration that does not parse."""


@dataclass(frozen=True)
class Setting:
    """One effective option of a route: its ``value`` and ``where`` it was set (``route``,
    ``route.routes[2]``, ..., or ``default`` for Alertmanager's default)."""

    value: object
    where: str


@dataclass(frozen=True)
class MatchedRoute:
    """A route an alert is delivered by: ``where`` (``route.routes[3]``), its matchers as
    text, its effective ``receiver`` and ``group_by`` / timings as :class:`Setting`
    (timings in seconds; ``group_by`` a tuple of label names or ``("...",)``)."""

    where: str
    matchers: str
    receiver: Setting
    group_by: Setting
    timings: dict[str, Setting]

    def describe(self) -> str:
        """``route.routes[3] {team="payments"} -> payments-pager``."""
        return f"{self.where} {{{self.matchers}}} -> {self.receiver.value}"


def route_options(route: Mapping, where: str, parent: dict | None) -> dict:
    """The effective options of ``route`` at ``where`` from its parent's (``NewRoute``; None
    for the root): ``receiver``, ``group_by`` and the :data:`TIMING_FIELDS` as
    :class:`Setting`. Raises :class:`RouteWalkError` for a value Alertmanager refuses."""
    opts = dict(parent) if parent else {
        "receiver": Setting("", "default"), "group_by": Setting((), "default"),
        **{f: Setting(v, "default") for f, v in DEFAULT_TIMINGS.items()}}
    if route.get("receiver"):
        opts["receiver"] = Setting(str(route["receiver"]), where)
    if route.get("group_by") is not None:
        group_by = route["group_by"]
        if not isinstance(group_by, list):
            raise RouteWalkError(f"{where}.group_by: expected a list, got {group_by!r}")
        opts["group_by"] = Setting(tuple(str(x) for x in group_by), where)
    for name in TIMING_FIELDS:
        if route.get(name) is not None:
            seconds = 0 if str(route[name]).strip() == "0" else duration_seconds(route[name])
            if seconds is None:
                raise RouteWalkError(f"{where}.{name}: {route[name]!r} is not a duration")
            opts[name] = Setting(float(seconds), where)
    return opts


def _walk(route: Mapping, where: str, parent: dict | None, labels: Mapping[str, str],
          out: list[MatchedRoute]) -> bool:
    """Append the matches under ``route`` (``Route.Match``); False when it does not match."""
    try:
        matchers = config_matchers(route) if parent is not None else []
    except ValueError as err:
        raise RouteWalkError(f"{where}: {err}") from None
    if not matches_all(matchers, labels):
        return False
    opts = route_options(route, where, parent)
    children = route.get("routes") or []
    if not isinstance(children, list):
        raise RouteWalkError(f"{where}.routes: expected a list")
    before = len(out)
    for index, child in enumerate(children):
        if not isinstance(child, Mapping):
            raise RouteWalkError(f"{where}.routes[{index}]: expected a mapping")
        if _walk(child, f"{where}.routes[{index}]", opts, labels, out) and not child.get("continue"):
            break
    if len(out) == before:
        out.append(MatchedRoute(where, ", ".join(map(str, matchers)), opts["receiver"],
                                opts["group_by"], {f: opts[f] for f in TIMING_FIELDS}))
    return True


def matched_routes(config: Mapping, labels: Mapping[str, str]) -> list[MatchedRoute]:
    """The routes that deliver an alert with ``labels`` under a loaded alertmanager.yml
    ``config``, in amtool's order (their receivers are what ``amtool config routes test``
    prints). Raises :class:`RouteWalkError` for a tree of a shape Alertmanager refuses."""
    root = config.get("route") if isinstance(config, Mapping) else None
    if not isinstance(root, Mapping):
        raise RouteWalkError("alertmanager.yml has no route")
    out: list[MatchedRoute] = []
    _walk(root, "route", None, labels, out)
    return out


def format_seconds(seconds: float) -> str:
    """``90.0`` -> ``1m30s``; ``14400.0`` -> ``4h`` (Prometheus duration style)."""
    left, parts = int(seconds), []
    for unit, size in (("h", 3600), ("m", 60), ("s", 1)):
        if left >= size:
            parts.append(f"{left // size}{unit}")
            left %= size
    return "".join(parts) or "0s"
