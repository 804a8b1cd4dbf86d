"""Workflow ``alert-storm-cleanup``: requirements per tier, the shipped defects and the oracle's files."""

from __future__ import annotations

import yaml

from tasks.generator.repo import rule_groups
from tasks.generator.workflows import alert_storm_cleanup as wf


def _world(tier: str, seed: int):
    return wf.sample(f"af-0xx-alert-storm-cleanup-{tier}-s{seed}", tier, seed)


def _rules(text: str) -> list[dict]:
    return [rule for group in rule_groups(text) for rule in group["rules"]]


def test_requirements_per_tier():
    shapes = {(tier, seed): [(r["id"], r.get("defect")) for r in _world(tier, seed).requirements]
              for tier in ("easy", "medium", "hard") for seed in (1, 2)}
    assert shapes[("easy", 1)] == [("P1", "per-pod"), ("I1", None)]
    assert shapes[("easy", 2)] == [("P1", "no-threshold"), ("I1", None)]
    assert shapes[("medium", 1)] == [("P1", "per-pod"), ("P2", "missing-for"), ("P3", "duplicate"),
                                     ("I1", None)]
    assert [rid for rid, _ in shapes[("hard", 2)]] == ["P1", "P2", "P3", "P4", "P5", "I1"]


def test_sampling_and_files_are_deterministic():
    for tier in ("easy", "medium", "hard"):
        first, second = _world(tier, 2), _world(tier, 2)
        assert first.to_json() == second.to_json()
        assert wf.pristine_files(first) == wf.pristine_files(second)
        assert wf.solution_files(first) == wf.solution_files(second)


def test_duplicate_lives_in_the_legacy_file_and_the_oracle_removes_only_it():
    world = _world("medium", 1)
    dup = next(r for r in world.requirements if r.get("defect") == "duplicate")
    pristine = wf.pristine_files(world)
    legacy = [r["alert"] for r in _rules(pristine[wf.LEGACY_FILE])]
    assert dup["alert"] in legacy
    fixed = [r["alert"] for r in _rules(wf.solution_files(world)[wf.LEGACY_FILE])]
    assert fixed == [r["alert"] for r in wf.LEGACY_RULES]


def test_hard_has_postmortem_free_defects_manifests_on_odd_seeds_and_no_sibling_inhibit():
    world = _world("hard", 1)
    assert world.rules_format == "PrometheusRule"
    assert any(r["kind"] == "repair" and not r.get("postmortem") for r in world.requirements)
    am = yaml.safe_load(wf.pristine_files(world)["alertmanager/alertmanager.yml"])
    assert len(am["inhibit_rules"]) == 1  # only the cluster rule


def test_every_defect_changes_its_rule():
    for tier in ("easy", "medium", "hard"):
        world = _world(tier, 1)
        pristine, fixed = wf.pristine_files(world), wf.solution_files(world)
        changed = {r["alert"] for path, text in fixed.items() if path.startswith("rules/")
                   for r in _rules(text) if r not in _rules(pristine[path])}
        for req in world.requirements:
            if req["kind"] == "repair" and req["defect"] != "duplicate":
                assert req["alert"] in changed, (tier, req["id"])
