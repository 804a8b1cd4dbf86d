"""The check catalog of a task: every check, derived from the world spec and the pristine repo.

Checks are claims about the world ("during this outage a correct alert for chat-gw is
firing at 75m"), computed with the reference evaluator (:mod:`tasks.generator.promsim`)
under both window semantics, placed at least two evaluation intervals away from any
crossing, never read off the oracle's rule text (DESIGN.md, "Deriving checks"). This module
orders them: Syntax, each requirement's family, Preservation, Tamper.
"""

from __future__ import annotations

from pathlib import Path

from contract.version import DATASET_VERSION
from tasks.generator.alert_checks import alert_checks
from tasks.generator.checks import Catalog
from tasks.generator.preservation_checks import load_yaml, preservation_checks
from tasks.generator.recording_checks import recording_checks
from tasks.generator.routing_checks import (
    inhibit_checks,
    route_checks,
    routed_teams,
    timing_preservation_checks,
)
from tasks.generator.scenarios import Scenario, alert_scenarios, counters
from tasks.generator.world import SLI_FAMILIES, World, world_from_json

TARGET_KEYS = ("alert", "service", "records", "receiver", "source", "targets", "reference_records",
               "threshold", "for_s", "labels", "slo", "windows", "team", "equal", "condition",
               "defect", "destination", "removes")
"""Requirement fields the catalog repeats as a requirement's ``targets`` (in this order)."""


def input_metric_names(world: World) -> list[str]:
    """Names of the series the scenarios feed in: a rule recording one of them is tamper."""
    names = {"up"}
    for svc in world.services:
        family = SLI_FAMILIES[svc.family]
        if family.get("histogram"):
            names |= {family["metric"] + "_bucket", family["metric"] + "_count"}
        else:
            names.add(family["metric"])
    return sorted(names)


def _latency_le(world: World, req: dict) -> dict:
    """``{"latency_le": ...}`` for a requirement on a latency service (the viewer plots the
    share of slower requests), else ``{}``."""
    if "service" not in req:
        return {}
    le = world.service(req["service"]).latency_le
    return {"latency_le": le} if le else {}


def _alert_scenarios(world: World, alert_req: dict | None) -> tuple[dict, dict, dict]:
    """The scenarios of every alert and repair requirement: ``(scenarios by id, prefix by
    requirement id, own scenarios by requirement id and unprefixed name)``. The first alert
    requirement's scenarios are unprefixed, the others' carry ``<id>-``."""
    scenarios: dict[str, Scenario] = {}
    prefixes: dict[str, str] = {}
    own: dict[str, dict[str, Scenario]] = {}
    for req in world.requirements:
        if req["kind"] in ("alert", "repair"):
            prefix = "" if req is alert_req else f"{req['id']}-"
            prefixes[req["id"]] = prefix
            own[req["id"]] = {}
            for scenario in alert_scenarios(world, req, prefix):
                scenarios[scenario.id] = scenario
                own[req["id"]][scenario.id[len(prefix):]] = scenario
    return scenarios, prefixes, own


def _syntax_checks(catalog: Catalog) -> None:
    """Every rule file and alertmanager.yml load."""
    catalog.add("S.rules", None, "Syntax", "Every rule file loads",
                "promtool check rules on each file under rules/",
                {"type": "syntax", "what": "rules"})
    catalog.add("S.alertmanager", None, "Syntax", "alertmanager.yml loads",
                "amtool check-config", {"type": "syntax", "what": "alertmanager"})


def _requirement_checks(catalog: Catalog, world: World, pristine: Path, alert_req: dict | None,
                        scenarios: tuple[dict, dict, dict]) -> set[str]:
    """Each requirement's checks, in requirement order; returns the rules they change."""
    by_id, prefixes, own = scenarios
    touched: set[str] = set()
    for req in world.requirements:
        if req["kind"] in ("alert", "repair"):
            alert_checks(catalog, world, req, own[req["id"]], prefixes[req["id"]])
            touched.add(req["alert"])
        elif req["kind"] == "recording":
            recording_checks(catalog, world, req, by_id)
        elif req["kind"] == "route":
            am = load_yaml(pristine / "alertmanager" / "alertmanager.yml") or {}
            route_checks(catalog, world, req, alert_req,
                         {r.get("name") for r in am.get("receivers") or [] if isinstance(r, dict)},
                         routed_teams(am))
        elif req["kind"] == "inhibit":
            inhibit_checks(catalog, world, req, alert_req)
    return touched


def _tamper_checks(catalog: Catalog, world: World) -> None:
    """No recording rule fakes the replay's series, no group changes evaluation, no time
    interval mutes pages."""
    catalog.add("T.reserved-series", None, "Tamper",
                "No recording rule writes ALERTS or an input series",
                "Recording ALERTS or shadowing inputs fakes the replay",
                {"type": "tamper", "what": "reserved_records",
                 "names": ["ALERTS", "ALERTS_FOR_STATE", *input_metric_names(world)]})
    catalog.add("T.group-settings", None, "Tamper",
                "No rule group changes its evaluation interval, limit or query offset",
                "Evaluation knobs change what the replay measures",
                {"type": "tamper", "what": "group_settings"})
    catalog.add("T.time-intervals", None, "Tamper", "No mute or active time intervals",
                "A mute interval silences pages without fixing anything",
                {"type": "tamper", "what": "time_intervals"})


def derive_catalog(spec: dict, pristine: Path) -> dict:
    """The ordered check catalog of a task, from its spec and its pristine monitoring repo.

    Returns ``{version, task_id, catalog_version, requirements[], scenarios[], input_series{},
    checks[]}``
    (docs/formats.md). Reads nothing but ``spec`` and the files under ``pristine``.

    Raises:
        CatalogError: the spec gives no safe time for a check.
    """
    world = world_from_json(spec)
    catalog = Catalog()
    _syntax_checks(catalog)
    alert_req = next((r for r in world.requirements if r["kind"] == "alert"), None)
    scenarios = _alert_scenarios(world, alert_req)
    touched = _requirement_checks(catalog, world, pristine, alert_req, scenarios)
    preservation_checks(catalog, world, pristine, touched)
    if not any(r["kind"] == "route" for r in world.requirements):
        timing_preservation_checks(catalog, world)
    _tamper_checks(catalog, world)
    by_id = scenarios[0]
    input_series = {}
    for scenario in by_id.values():
        items = []
        for svc in world.services:
            items += counters(world, scenario, svc)[1]
        input_series[scenario.id] = items
    return {
        "version": 1,
        "task_id": world.task_id,
        "catalog_version": DATASET_VERSION,
        "evaluation_interval": f"{world.evaluation_interval_s}s",
        "requirements": [
            {"id": r["id"], "kind": r["kind"], "weight": r["weight"], "title": r["title"],
             "targets": {k: r[k] for k in TARGET_KEYS if k in r} | _latency_le(world, r)}
            for r in world.requirements
        ],
        "scenarios": [s.to_json() for s in by_id.values()],
        "input_series": input_series,
        "checks": catalog.checks,
    }
