"""The recorder: ATIF output, resuming an interrupted run, and tools that stay inside the workspace."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import atif
import pytest

from contract.errors import BadInput
from contract.files import read_json
from contract.paths import TASKS_DIR, task_dirs
from contract.version import DATASET_VERSION
from recorder.environments.workspace import MAX_WRITE_BYTES, run_tool
from recorder.record import record_run, run_id_for, run_identity

TASK = task_dirs(TASKS_DIR)[0]


def test_nop_run_is_valid_atif_with_the_pristine_grade_on_step_one(tmp_path):
    run_dir = record_run(TASK, "nop", out=tmp_path)
    doc = read_json(run_dir / "trajectory.json")
    atif.Trajectory.model_validate(doc)
    first = doc["steps"][0]
    assert first["source"] == "user" and first["extra"]["grade"]["reward"] == 0.0
    catalog = read_json(TASK / "tests" / "checks.json")
    assert len(first["extra"]["grade"]["checks"]) == len(catalog["checks"])
    summary = read_json(run_dir / "run.json")
    assert summary["status"] == "complete" and summary["steps"] == len(doc["steps"])


def test_interrupted_run_resumes_without_lost_or_duplicated_steps(tmp_path):
    full = record_run(TASK, "oracle", out=tmp_path / "full")
    expected = read_json(full / "trajectory.json")["steps"]
    run_dir = record_run(TASK, "oracle", out=tmp_path / "cut")
    journal = run_dir / "journal.jsonl"
    lines = journal.read_bytes().splitlines(keepends=True)
    journal.write_bytes(b"".join(lines[:7]) + lines[7][:25])  # killed mid-write of step 8
    summary = read_json(run_dir / "run.json")
    summary["status"] = "running"
    (run_dir / "run.json").write_text(__import__("json").dumps(summary))
    record_run(TASK, "oracle", out=tmp_path / "cut")
    resumed = read_json(run_dir / "trajectory.json")["steps"]
    assert [s["step_id"] for s in resumed] == list(range(1, len(expected) + 1))
    strip = [{k: v for k, v in s.items() if k != "extra"} for s in resumed]
    assert strip == [{k: v for k, v in s.items() if k != "extra"} for s in expected]
    rewards = [(s.get("extra") or {}).get("grade", {}).get("reward") for s in resumed]
    assert rewards == [(s.get("extra") or {}).get("grade", {}).get("reward") for s in expected]
    assert len(journal.read_bytes().splitlines()) == len(expected)


def test_write_file_refuses_paths_outside_the_workspace(tmp_path: Path):
    ws = tmp_path / "ws"
    ws.mkdir()
    (tmp_path / "outside.txt").write_text("x")
    (ws / "link").symlink_to(tmp_path)
    for bad in ("../outside.txt", "/etc/passwd", "link/outside.txt"):
        result = run_tool(ws, "write_file", {"path": bad, "content": "pwned"})
        assert result.error and result.changed is None, bad
    assert (tmp_path / "outside.txt").read_text() == "x"
    big = run_tool(ws, "write_file", {"path": "big.yml", "content": "a" * (MAX_WRITE_BYTES + 1)})
    assert big.error and not (ws / "big.yml").exists()
    ok = run_tool(ws, "write_file", {"path": "rules/new.yml", "content": "groups: []\n"})
    assert not ok.error and ok.changed == "rules/new.yml"


def test_a_run_made_on_another_version_of_the_task_is_recorded_again_or_refused(tmp_path, monkeypatch):
    run_dir = record_run(TASK, "nop", out=tmp_path)
    summary = read_json(run_dir / "run.json")
    assert summary["task"]["fingerprint"]
    assert summary["task"]["catalog_version"] == DATASET_VERSION  # the catalog it was graded against
    summary["task"]["fingerprint"] = "0" * 64  # as if the task changed since
    (run_dir / "run.json").write_text(json.dumps(summary))
    again = read_json(record_run(TASK, "nop", out=tmp_path) / "run.json")
    assert again["task"]["fingerprint"] != "0" * 64 and again["status"] == "complete"
    # an LLM run cannot be replayed: it is refused, and left as it was
    monkeypatch.setenv("ALERTFORGE_TEST_KEY", "unused")
    options = {"model": "m", "base_url": "http://127.0.0.1:9", "api_key_env": "ALERTFORGE_TEST_KEY"}
    llm = tmp_path / run_id_for(TASK.name, "llm", 0, options)
    shutil.copytree(run_dir, llm)
    stale = read_json(llm / "run.json") | {
        "policy": "llm", "run_id": llm.name, "task": summary["task"],
        "identity": run_identity(TASK.name, "llm", 0, options).model_dump(mode="json")}
    (llm / "run.json").write_text(json.dumps(stale))
    before = (llm / "run.json").read_bytes()
    with pytest.raises(BadInput, match="changed since run"):
        record_run(TASK, "llm", out=tmp_path, options=options)
    assert (llm / "run.json").read_bytes() == before


def test_a_write_through_a_file_is_a_tool_error_not_a_crash(tmp_path):
    """An agent that writes ``notes`` then ``notes/x`` (or a name too long) gets a tool error,
    as a shell would answer; the recorder does not stop and no temp path is shown."""
    (tmp_path / "README.md").write_text("x")
    assert not run_tool(tmp_path, "write_file", {"path": "notes", "content": "a"}).error
    through = run_tool(tmp_path, "write_file", {"path": "notes/x", "content": "b"})
    assert through.error and through.output == "error: cannot write notes/x: notes is a file, not a folder"
    long_name = run_tool(tmp_path, "write_file", {"path": "rules/" + "x" * 300, "content": "b"})
    assert long_name.error and str(tmp_path) not in long_name.output
    assert (tmp_path / "notes").read_text() == "a"


def test_recording_again_says_how_many_runs_were_reused(tmp_path, capsys):
    from recorder.reference_runs import record_reference

    task = [TASKS_DIR / "af-001-slo-onboarding-easy-s1"]
    first = record_reference(task, tmp_path, jobs=1, policies=["oracle", "nop"])
    assert "reused" not in capsys.readouterr().err
    again = record_reference(task, tmp_path, jobs=1, policies=["oracle", "nop"])
    assert again == first
    assert "recording (2 reused, recorded before)" in capsys.readouterr().err
