"""Finding the route and the inhibit rule a requirement names in alertmanager.yml, and editing its matchers.

A route requirement's route is a route in the tree sending to its receiver, preferring one
the oracle added or changed (another route may send to the same receiver), then one whose
matchers name the requirement's team or service. An inhibit requirement's rule is the
inhibit rule whose source side names its source alert. Matchers are the ``matchers`` list
strings (Alertmanager's matcher syntax, parsed with :mod:`grader.matchers`) or the legacy
``match``/``match_re`` maps.
"""

from __future__ import annotations

from collections.abc import Iterator

from grader.matchers import MatcherError, parse_matcher
from recorder.reference.context import AM, Context, Files, NotApplicable, dump_doc, load_doc


def am_doc(files: Files):
    """The loaded alertmanager.yml (NotApplicable without one or without a route tree)."""
    if AM not in files:
        raise NotApplicable(f"the task has no {AM}")
    doc = load_doc(files[AM])
    if not isinstance(doc, dict) or not isinstance(doc.get("route"), dict):
        raise NotApplicable(f"{AM} has no route tree")
    return doc


def with_am(files: Files, doc) -> Files:
    """``files`` with alertmanager.yml replaced by the dump of ``doc``."""
    return {**files, AM: dump_doc(doc)}


def child_routes(route: dict) -> Iterator[tuple[dict, int]]:
    """``(parent, index)`` of every route below ``route``, depth first in tree order."""
    for index, child in enumerate(route.get("routes") or []):
        if isinstance(child, dict):
            yield route, index
            yield from child_routes(child)


def matcher_texts(route: dict) -> list[tuple[str, str, str]]:
    """A route's (or inhibit side's) matchers as ``(name, op, value)``: the ``matchers``
    list, then ``match`` (``=``) and ``match_re`` (``=~``); unparsable entries are skipped."""
    found = []
    for text in route.get("matchers") or []:
        try:
            m = parse_matcher(str(text))
        except MatcherError:
            continue
        found.append((m.name, m.op, m.value))
    found += [(str(k), "=", str(v)) for k, v in (route.get("match") or {}).items()]
    found += [(str(k), "=~", str(v)) for k, v in (route.get("match_re") or {}).items()]
    return found


def set_matchers(route: dict, matchers: list[tuple[str, str, str]], prefix: str = "") -> None:
    """Replace a route's (``prefix=""``) or an inhibit side's (``"source_"``/``"target_"``)
    matchers by a ``matchers`` list; an empty list removes the side's matchers altogether."""
    for key in ("matchers", "match", "match_re"):
        route.pop(prefix + key, None)
    if matchers:
        escaped = [(n, o, v.replace("\\", "\\\\").replace('"', '\\"')) for n, o, v in matchers]
        route[prefix + "matchers"] = [f'{n}{o}"{v}"' for n, o, v in escaped]


def _mentions(route: dict, req: dict) -> bool:
    values = {req.get("team"), req.get("service"), req.get("label_team")} - {None}
    return any(value in values for _, _, value in matcher_texts(route))


def route_of(doc, ctx: Context, req: dict) -> tuple[dict, int]:
    """``(parent, index)`` of the route requirement's route in ``doc`` (NotApplicable if none)."""
    pristine = load_doc(ctx.pristine[AM]) if AM in ctx.pristine else {}
    before = [parent["routes"][i] for parent, i in child_routes((pristine or {}).get("route") or {})]
    sites = [(p, i) for p, i in child_routes(doc["route"]) if p["routes"][i].get("receiver") == req.get("receiver")]
    if not sites:
        raise NotApplicable(f"no route sends to {req.get('receiver')}")
    ranked = sorted(sites, key=lambda s: (s[0]["routes"][s[1]] in before, not _mentions(s[0]["routes"][s[1]], req)))
    return ranked[0]


def inhibit_rule_of(doc, req: dict) -> int:
    """Index of the inhibit rule whose source side names the requirement's source alert."""
    source = str(req.get("source"))
    for index, rule in enumerate(doc.get("inhibit_rules") or []):
        side = {k[len("source_"):]: v for k, v in (rule or {}).items() if str(k).startswith("source_")}
        if any(name == "alertname" and source in value for name, _, value in matcher_texts(side)):
            return index
    raise NotApplicable(f"no inhibit rule has {source} as its source")


def side(rule: dict, prefix: str) -> list[tuple[str, str, str]]:
    """The ``source_`` or ``target_`` matchers of an inhibit rule as ``(name, op, value)``."""
    return matcher_texts({k[len(prefix):]: v for k, v in rule.items() if str(k).startswith(prefix)})


def labels_seen(ctx: Context, name: str) -> set[str]:
    """Values of label ``name`` the spec names: teams, services, alert names, severities."""
    spec = ctx.spec
    if name == "team":
        return set(spec.get("teams") or {})
    if name == "service":
        return {s["name"] for s in spec.get("services", [])}
    values: set[str] = set()
    for req in spec.get("requirements", []):
        for case in [*((req.get("cases") or {}).get("positives") or []),
                     *((req.get("cases") or {}).get("negatives") or [])]:
            if name in case:
                values.add(str(case[name]))
        if name == "alertname":
            values |= {str(v) for v in [req.get("alert"), req.get("source"), *(req.get("targets") or [])] if v}
        if name == "severity":
            values |= {str(v) for v in (req.get("labels") or {}).values()} & {"page", "ticket"}
    return values
