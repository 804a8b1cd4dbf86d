"""A receiver a task asks for must have an integration: an empty one routes fine and pages nobody."""

from __future__ import annotations

import shutil

import yaml

from contract.files import read_json
from contract.paths import TASKS_DIR, task_dirs
from grader.grade import grade_result

TASK = next(t for t in task_dirs(TASKS_DIR) if "team-reorg-migration-easy" in t.name)


def test_a_new_receiver_without_integrations_fails_its_route_requirement(tmp_path):
    ws = tmp_path / "ws"
    shutil.copytree(TASK / "environment" / "monitoring", ws)
    shutil.copytree(TASK / "solution" / "monitoring", ws, dirs_exist_ok=True)
    spec = read_json(TASK / "tests" / "spec.json")
    route = next(r for r in spec["requirements"] if r["kind"] == "route")
    path = ws / "alertmanager" / "alertmanager.yml"
    doc = yaml.safe_load(path.read_text())
    doc["receivers"] = [{"name": r["name"]} if r["name"] == route["receiver"] else r
                        for r in doc["receivers"]]
    path.write_text(yaml.safe_dump(doc, sort_keys=False))
    result = grade_result(TASK, ws)
    check = next(c for c in result.checks if c.id == f"{route['id']}.route.receiver")
    assert check.passed is False and "has none" in check.detail
    assert result.keys["solved"] == 0
    assert next(r for r in result.requirements if r.id == route["id"]).s < 1.0
