"""``alertforge regrade``: a recorded alerting run graded again against the task as it is now,
from its recorded tool calls (real promtool and amtool): the shipped model runs of
examples/llm-runs were re-graded this way against 0.4.0; a run of another kind or task, or a
folder that is no run, is refused with exit 2 and nothing written."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from alertforge.cli.site import LLM_EXAMPLES
from contract.errors import BadInput
from contract.files import read_json
from contract.paths import TASKS_DIR
from recorder.regrade import regrade_run

RUN = next(p for p in sorted(LLM_EXAMPLES.iterdir()) if p.name.startswith("af-009"))


def _cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "alertforge.cli", "regrade", *args], check=False,
                          capture_output=True, text=True, timeout=300)


def test_the_shipped_model_runs_are_graded_against_the_current_catalog():
    for run in sorted(p for p in LLM_EXAMPLES.iterdir() if (p / "run.json").is_file()):
        summary = read_json(run / "run.json")
        catalog = read_json(TASKS_DIR / summary["task"]["id"] / "tests" / "checks.json")
        assert summary["regrade"]["catalog_version"] == catalog["catalog_version"], run.name
        assert summary["task"]["catalog_version"] == catalog["catalog_version"], run.name
        assert [c["id"] for c in summary["checks"]] == [c["id"] for c in catalog["checks"]], run.name
        assert "release 0.2.0's task files" in summary["regrade"]["note"], run.name
        steps = read_json(run / "trajectory.json")["steps"]
        grades = [s["extra"]["grade"] for s in steps if (s.get("extra") or {}).get("grade")]
        assert grades and all(len(g["checks"]) == len(catalog["checks"]) for g in grades), run.name


def test_regrade_gives_the_same_grades_again_and_leaves_the_input_alone(tmp_path):
    before = (RUN / "trajectory.json").read_bytes()
    out = _cli(str(RUN), "--out", str(tmp_path), "--note", "again")
    assert out.returncode == 0, out.stderr
    assert "re-graded against catalog 0.4.0" in out.stdout
    assert (RUN / "trajectory.json").read_bytes() == before
    again = [s.get("extra", {}).get("grade", {}).get("checks") for s in
             read_json(tmp_path / RUN.name / "trajectory.json")["steps"]]
    shipped = [s.get("extra", {}).get("grade", {}).get("checks") for s in json.loads(before)["steps"]]
    assert again == shipped
    assert read_json(tmp_path / RUN.name / "run.json")["regrade"]["note"] == "again"


def test_a_run_of_another_task_an_episode_or_no_run_is_refused(tmp_path):
    with pytest.raises(BadInput, match="af-009"):
        regrade_run(RUN, TASKS_DIR / "af-001-slo-onboarding-easy-s1", tmp_path / "out")
    episode = Path(__file__).parent / "fixtures" / "site" / "runs" / "fixture-episode-easy"
    for run, word in ((episode, "run.json"), (tmp_path / "nothing", "run.json")):
        out = _cli(str(run), "--out", str(tmp_path / "out"))
        assert out.returncode == 2 and word in out.stderr and "Traceback" not in out.stderr, out.stderr
    assert not (tmp_path / "out").exists()
