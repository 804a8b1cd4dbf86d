"""Workflow ``latency-slo``: worlds, repo files and check catalogs per tier, and the burn alert's
reference half on agent records that differ from the reference (grader regression)."""

from __future__ import annotations

import shutil

import pytest
import yaml

from grader.grade import grade_result
from tasks.generator.catalog import derive_catalog
from tasks.generator.generate import task_files, write_task
from tasks.generator.repo import rule_groups
from tasks.generator.workflows import latency_slo as wf

BOUNDS = {"easy": (55, 75), "medium": (110, 140), "hard": (165, 195)}


def _world(tier: str, seed: int):
    return wf.sample(f"af-0xx-latency-slo-{tier}-s{seed}", tier, seed)


@pytest.mark.parametrize("tier", ["easy", "medium", "hard"])
@pytest.mark.parametrize("seed", [1, 2])
def test_world_files_and_catalog_per_tier(tmp_path, tier, seed):
    world = _world(tier, seed)
    assert world.to_json() == _world(tier, seed).to_json()
    kinds = [r["kind"] for r in world.requirements]
    assert kinds[0] == "alert" and world.requirements[0]["condition"] == {"type": "latency-burn"}
    assert kinds.count("repair") == {"easy": 0, "medium": 1, "hard": 3}[tier]
    target = world.services[0]
    assert target.family == "latency" and target.latency_le in wf.LATENCY_BOUNDS

    pristine = wf.pristine_files(world)
    solution = wf.solution_files(world)
    le = f'le="{target.latency_le}"'
    assert f'service="{target.name}",{le}' not in pristine["rules/slo-recording.yml"]
    assert f'service="{target.name}",{le}' in solution["rules/slo-recording.yml"]
    alerts = [r.get("alert") for g in rule_groups(pristine["rules/slo-alerts.yml"]) for r in g["rules"]]
    assert (alerts == []) == (tier == "hard")  # hard: no healthy latency alert to copy
    manifest = tier == "hard" and seed % 2 == 1
    assert ("kind: PrometheusRule" in pristine["rules/slo-alerts.yml"]) == manifest
    ref = yaml.safe_load(wf.reference_records(world))
    assert {r["record"] for g in ref["groups"] for r in g["rules"]} == {wf.LATENCY_SHORT, wf.LATENCY_LONG}
    assert len(ref["groups"]) == 2  # the sibling's records are stripped too: both come back

    for rel, text in pristine.items():
        path = tmp_path / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    catalog = derive_catalog(world.to_json(), tmp_path)
    lo, hi = BOUNDS[tier]
    assert lo <= len(catalog["checks"]) <= hi
    ids = {c["id"] for c in catalog["checks"]}
    assert {"A1.silent.no-traffic@60m", f"C1.value.{wf.LATENCY_SHORT}.no-traffic@60m"} <= ids


def test_a_correct_alert_on_records_with_the_wrong_bucket_keeps_half_its_credit(tmp_path):
    world = wf.sample("af-021-latency-slo-medium-s1", "medium", 1)
    task = write_task(tmp_path / "tasks", world.task_id, task_files(world))
    ws = tmp_path / "ws"
    shutil.copytree(task / "environment" / "monitoring", ws)
    shutil.copytree(task / "solution" / "monitoring", ws, dirs_exist_ok=True)
    path = ws / "rules" / "slo-recording.yml"
    text = path.read_text()
    target = world.services[0]
    wrong = "0.1" if target.latency_le != "0.1" else "1"
    path.write_text(text.replace(f'service="{target.name}",le="{target.latency_le}"',
                                 f'service="{target.name}",le="{wrong}"'))
    result = grade_result(task, ws)
    scores = {r.id: r.q for r in result.requirements}
    assert 0.45 <= scores["A1"] <= 0.6  # the reference half passes, the integrated one does not
    assert scores["C1"] < 0.5 and scores["R1"] == 1.0
