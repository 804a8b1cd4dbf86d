"""Workflow missed-page-postmortem: requirements per tier, the pristine defects, the oracle's fixes."""

from __future__ import annotations

import pytest
import yaml

from tasks.generator.repo import rule_groups
from tasks.generator.workflows import missed_page_postmortem as wf
from tasks.generator.world import TEAMS

TIERS = {"easy": ["A1", "R1", "P1"], "medium": ["A1", "R1", "P1", "I1", "P2"],
         "hard": ["A1", "A2", "R1", "P1", "I1", "P2", "P3"]}


def _world(tier: str, seed: int):
    return wf.sample(f"af-000-{wf.NAME}-{tier}-s{seed}", tier, seed)


def _alerts(text: str) -> dict[str, dict]:
    return {r["alert"]: r for g in rule_groups(text) for r in g["rules"] if "alert" in r}


@pytest.mark.parametrize("tier", sorted(TIERS))
@pytest.mark.parametrize("seed", [1, 2, 3, 11015, 12015])
def test_requirements_pristine_defects_and_oracle(tier, seed):
    world = _world(tier, seed)
    assert [r["id"] for r in world.requirements] == TIERS[tier]
    assert world.requirements[0]["kind"] == "alert"
    pristine, solution = wf.pristine_files(world), wf.solution_files(world)
    assert pristine == wf.pristine_files(_world(tier, seed))  # a pure function of the seed
    before = _alerts(pristine["rules/service-health.yml"])
    after = _alerts(solution["rules/service-health.yml"])
    for req in world.requirements:
        if req["kind"] == "alert":  # missing before; absent() in the fix
            assert req["alert"] not in before and "absent(up" in after[req["alert"]]["expr"]
        elif req["kind"] == "repair":
            assert before[req["alert"]] != after[req["alert"]]
            if req["alert"] == "HighErrorRatio":  # it counts http_requests_total only
                assert world.service(req["service"]).family == "http"
    route = wf.requirement(world, "route")
    assert route["typo"] != route["team"] and route["typo"] not in TEAMS
    assert sorted(route["typo"]) == sorted(route["team"])
    am_before = yaml.safe_load(pristine["alertmanager/alertmanager.yml"])
    am_after = yaml.safe_load(solution["alertmanager/alertmanager.yml"])
    index = route["replaces"]["routes"][0] - 1
    assert am_before["route"]["routes"][index]["matchers"] == [f'team="{route["typo"]}"']
    assert am_after["route"]["routes"][index]["matchers"] == [f'team="{route["team"]}"']
    assert am_before["route"]["routes"][index + 1:] == am_after["route"]["routes"][index + 1:]


def test_hard_leaves_some_defects_without_a_postmortem_and_ships_decoys():
    world = _world("hard", 1)
    files = wf.pristine_files(world)
    reported = [r["id"] for r in world.requirements if r.get("postmortem")]
    assert reported == ["A1", "R1", "P1"]
    assert sum(1 for p in files if p.startswith("postmortems/")) == 4  # A1/R1, P1, two decoys
    assert world.rules_format == "PrometheusRule"
    for text in (t for p, t in files.items() if p.startswith("postmortems/")):
        assert "for:" not in text and "absent(" not in text and "sum by" not in text
