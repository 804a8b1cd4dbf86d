"""team-reorg-migration: deterministic, sized by tier, and its oracle config is self-consistent
(no route to a receiver that does not exist, the renamed receiver's old name gone)."""

from __future__ import annotations

import json

import pytest
import yaml

from tasks.generator.generate import task_files
from tasks.generator.workflows import team_reorg_migration as wf

BOUNDS = {"easy": (55, 90), "medium": (110, 170), "hard": (165, 225)}
"""Checks per task by tier (release 0.4.0: 0.3.0 plus the destination, removal and timing checks; same
upper bounds as tests/test_generate.py)."""


def _receivers_used(route: dict) -> set[str]:
    used = {route["receiver"]} if "receiver" in route else set()
    for child in route.get("routes") or []:
        used |= _receivers_used(child)
    return used


@pytest.mark.parametrize("tier", sorted(BOUNDS))
@pytest.mark.parametrize("seed", [1, 2, 3, 7, 123456])
def test_tasks_are_reproducible_sized_and_consistent(tier, seed):
    world = wf.sample(f"af-0-{tier}-{seed}", tier, seed)
    files = task_files(world)
    assert files == task_files(wf.sample(f"af-0-{tier}-{seed}", tier, seed))
    checks = json.loads(files["tests/checks.json"])["checks"]
    lo, hi = BOUNDS[tier]
    assert lo <= len(checks) <= hi
    r2 = next(r for r in world.requirements if r["id"] == "R2")
    for side in ("environment", "solution"):
        am = yaml.safe_load(files[f"{side}/monitoring/alertmanager/alertmanager.yml"])
        names = [r["name"] for r in am["receivers"]]
        assert len(names) == len(set(names))
        assert _receivers_used(am["route"]) <= set(names)
    solved = files["solution/monitoring/alertmanager/alertmanager.yml"].decode()
    assert r2["old_receiver"] not in solved and r2["receiver"] in solved
    assert (world.rules_format == "PrometheusRule") == (tier == "hard" and seed % 2 == 1)
