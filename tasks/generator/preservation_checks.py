"""Preservation checks: everything of the pristine repo no requirement changes must stay as it
is (rules, receivers, routes, inhibit rules, the global block)."""

from __future__ import annotations

from pathlib import Path

import yaml

from tasks.generator.checks import Catalog
from tasks.generator.world import World


def load_yaml(path: Path):
    """The YAML document at ``path`` (UTF-8), parsed with the safe loader."""
    return yaml.safe_load(path.read_text(encoding="utf-8"))


def _rule_groups(doc) -> list[dict]:
    """The rule groups of a rules file, plain or a PrometheusRule manifest (its ``spec``)."""
    if isinstance(doc, dict) and doc.get("kind") == "PrometheusRule":
        doc = doc.get("spec") or {}
    return list((doc or {}).get("groups") or [])


def preservation_checks(catalog: Catalog, world: World, pristine: Path, touched: set[str]) -> None:
    """One check per untouched pristine rule, receiver, route, inhibit rule and the global block.

    Requirements name what they change: alert and repair requirements their rule, route and
    inhibit requirements ``replaces`` (``{"receivers": [names], "routes": [1-based indexes],
    "inhibit_rules": [1-based indexes]}``).
    """
    replaced: dict[str, set] = {"receivers": set(), "routes": set(), "inhibit_rules": set()}
    for req in world.requirements:
        for key, items in (req.get("replaces") or {}).items():
            replaced[key].update(items)
    _rule_checks(catalog, pristine, touched)
    am = load_yaml(pristine / "alertmanager" / "alertmanager.yml")
    _alertmanager_checks(catalog, am, replaced)


def _rule_checks(catalog: Catalog, pristine: Path, touched: set[str]) -> None:
    """One check per pristine alerting or recording rule not in ``touched`` (a second rule of
    the same name gets ``#2``, and so on)."""
    for path in sorted((pristine / "rules").rglob("*.y*ml")):
        rel = path.relative_to(pristine).as_posix()
        for group in _rule_groups(load_yaml(path)):
            for rule in group.get("rules") or []:
                name = rule.get("alert") or rule.get("record")
                if name in touched:
                    continue
                kind = "alerting rule" if "alert" in rule else "recording rule"
                index = sum(1 for c in catalog.checks if c["id"].startswith(f"P.rule.{name}"))
                suffix = f"#{index + 1}" if index else ""
                catalog.add(f"P.rule.{name}{suffix}", None, "Preservation",
                            f"Untouched {kind} {name} is unchanged",
                            f"From {rel}, group {group.get('name')}",
                            {"type": "preserve", "what": "rule", "file": rel, "item": rule})


def _alertmanager_checks(catalog: Catalog, am: dict, replaced: dict[str, set]) -> None:
    """One check per pristine receiver, top-level route and inhibit rule no requirement
    replaces, and one for the global block when there is one."""
    for receiver in am.get("receivers") or []:
        if receiver["name"] in replaced["receivers"]:
            continue
        catalog.add(f"P.receiver.{receiver['name']}", None, "Preservation",
                    f"Receiver {receiver['name']} is unchanged", "Receivers are shared by teams",
                    {"type": "preserve", "what": "receiver", "item": receiver})
    for index, route in enumerate((am.get("route") or {}).get("routes") or [], 1):
        if index in replaced["routes"]:
            continue
        catalog.add(f"P.route.{index}", None, "Preservation",
                    f"Route to {route.get('receiver')} is unchanged",
                    "Existing teams keep their routing",
                    {"type": "preserve", "what": "route", "item": route})
    for index, rule in enumerate(am.get("inhibit_rules") or [], 1):
        if index in replaced["inhibit_rules"]:
            continue
        catalog.add(f"P.inhibit.{index}", None, "Preservation",
                    f"Inhibit rule {index} is unchanged", "Existing inhibitions stay in force",
                    {"type": "preserve", "what": "inhibit_rule", "item": rule})
    if "global" in am:
        catalog.add("P.global", None, "Preservation", "The global block is unchanged",
                    "Global settings affect every receiver",
                    {"type": "preserve", "what": "global", "item": am["global"]})
