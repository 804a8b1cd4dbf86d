"""The alertforge command: exit codes and messages (0 ok, 2 bad input naming the file, no traceback)."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys

from contract.paths import TASKS_DIR, task_dirs

TASK = task_dirs(TASKS_DIR)[0]


def cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "alertforge.cli", *args], check=False, capture_output=True,
                          text=True, timeout=300)


def test_unknown_task_is_bad_input():
    out = cli("grade", "no-such-task")
    assert out.returncode == 2
    assert "no-such-task" in out.stderr and "Traceback" not in out.stderr


def test_unknown_policy_is_bad_input(tmp_path):
    out = cli("record", "--task", TASK.name, "--policy", "wizard", "--out", str(tmp_path))
    assert out.returncode == 2 and "unknown policy" in out.stderr


def test_export_of_a_missing_path_is_bad_input(tmp_path):
    out = cli("export", str(tmp_path / "nope"), "--out", str(tmp_path / "site"))
    assert out.returncode == 2 and "nope" in out.stderr and "Traceback" not in out.stderr


def test_workspace_that_is_a_file_is_bad_input(tmp_path):
    (tmp_path / "file").write_text("x")
    out = cli("grade", TASK.name, "--workspace", str(tmp_path / "file"))
    assert out.returncode == 2 and "file" in out.stderr


def test_grade_json_of_a_broken_workspace_reports_syntax_not_a_crash(tmp_path):
    ws = tmp_path / "ws"
    shutil.copytree(TASK / "environment" / "monitoring", ws)
    (ws / "rules" / "slo-alerts.yml").write_bytes(b"\xff\xfe groups: [")
    (ws / "alertmanager" / "alertmanager.yml").write_text("route: [\n")
    before = sorted(p.relative_to(ws) for p in ws.rglob("*"))
    out = cli("grade", TASK.name, "--workspace", str(ws), "--json")
    assert out.returncode == 0, out.stderr
    result = json.loads(out.stdout)
    assert result["keys"]["syntax_ok"] == 0
    files = {e["file"] for e in result["syntax_errors"]}
    assert {"rules/slo-alerts.yml", "alertmanager/alertmanager.yml"} <= files
    assert sorted(p.relative_to(ws) for p in ws.rglob("*")) == before


def test_record_into_a_file_is_bad_input(tmp_path):
    (tmp_path / "afile").write_text("x")
    out = cli("record", "--task", TASK.name, "--policy", "nop", "--out", str(tmp_path / "afile"))
    assert out.returncode == 2 and "not a folder" in out.stderr and "Traceback" not in out.stderr


def test_export_refuses_root_overlap_and_foreign_folders(tmp_path):
    runs = tmp_path / "runs"
    assert cli("record", "--task", TASK.name, "--policy", "nop", "--out", str(runs)).returncode == 0
    for out_dir in ("/", str(runs), str(next(runs.iterdir()))):
        out = cli("export", str(runs), "--out", out_dir)
        assert out.returncode == 2, out_dir
    foreign = tmp_path / "home"
    foreign.mkdir()
    (foreign / "notes.txt").write_text("mine")
    out = cli("export", str(runs), "--out", str(foreign))
    assert out.returncode == 2 and "notes.txt" in out.stderr
    assert sorted(p.name for p in foreign.iterdir()) == ["notes.txt"]
    site = tmp_path / "site"
    assert cli("export", str(runs), "--out", str(site)).returncode == 0
    assert (site / "index.html").stat().st_mode & 0o044 == 0o044  # readable by a web server


def test_symlinked_rule_file_is_a_syntax_error(tmp_path):
    ws = tmp_path / "ws"
    shutil.copytree(TASK / "environment" / "monitoring", ws)
    (ws / "rules" / "z.yml").symlink_to("/etc/passwd")
    out = cli("grade", TASK.name, "--workspace", str(ws), "--json")
    result = json.loads(out.stdout)
    assert result["keys"]["syntax_ok"] == 0
    assert any(e["file"] == "rules/z.yml" and "symlink" in e["message"] for e in result["syntax_errors"])


def test_output_under_a_file_is_bad_input_not_a_traceback(tmp_path):
    (tmp_path / "afile").write_text("x")
    for args in (["generate", "--out", str(tmp_path / "afile" / "sub")],
                 ["export", str(tmp_path / "nope"), "--out", str(tmp_path / "afile" / "sub")]):
        out = cli(*args)
        assert out.returncode == 2, (args, out.stderr)
        assert "Traceback" not in out.stderr


def test_negative_master_seed_is_refused():
    out = cli("generate", "--out", "/tmp/never-written", "--master-seed", "-1")
    assert out.returncode == 2 and "seed must be >= 0" in out.stderr


def test_record_prints_the_reward_the_steps_how_to_see_it_and_when_it_reused_a_run(tmp_path):
    runs = tmp_path / "runs"
    first = cli("record", "--task", TASK.name, "--policy", "nop", "--out", str(runs))
    assert first.returncode == 0, first.stderr
    lines = first.stdout.splitlines()
    assert lines[0] == str(next(runs.iterdir()))  # the folder first, as before
    assert lines[1].startswith("  reward 0.0000 (not solved), ") and lines[1].endswith(" complete")
    assert lines[2] == f"  to see it: alertforge view {runs}"
    assert "reused" not in first.stderr
    markdown = cli("export", str(lines[0]), "--markdown", "--out", str(tmp_path / "run.md"))
    assert markdown.returncode == 0, markdown.stderr
    counted = re.search(r"after (\d+) steps?", (tmp_path / "run.md").read_text()).group(1)
    assert f", {counted} step" in lines[1]  # the agent's steps, counted alike everywhere
    again = cli("record", "--task", TASK.name, "--policy", "nop", "--out", str(runs))
    assert again.returncode == 0 and again.stdout == first.stdout
    assert "reused the complete run already in" in again.stderr and "--fresh" in again.stderr


def test_grade_takes_the_short_task_ids_gate_only_takes(tmp_path):
    """`grade af-001` is af-001-...; a prefix naming several tasks is refused, naming them."""
    out = cli("grade", TASK.name[:6], "--json")
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout)["task_id"] == TASK.name
    several = cli("grade", "af")
    assert several.returncode == 2 and "names 30 tasks" in several.stderr and "whole id" in several.stderr
    missing = cli("grade", "af-999")
    assert missing.returncode == 2 and "no task with this id" in missing.stderr


def test_export_leaves_out_leftover_folders_and_says_so(tmp_path):
    """An empty folder (an import that skipped a trial) or an unfinished recording (journal,
    no run.json) among the runs no longer refuses the whole set: each is named and left out."""
    runs = tmp_path / "runs"
    assert cli("record", "--task", TASK.name, "--policy", "nop", "--out", str(runs)).returncode == 0
    (runs / "harbor__job__skipped-trial").mkdir()
    unfinished = runs / "af-001__llm__s0__cut"
    unfinished.mkdir()
    (unfinished / "journal.jsonl").write_text('{"step": 1}\n')
    every = [str(p) for p in sorted(runs.iterdir())]  # what `runs/*` expands to
    out = cli("export", *every, "--out", str(tmp_path / "site"))
    assert out.returncode == 0, out.stderr
    assert "exported 1 run of 1 task into" in out.stdout
    assert out.stdout.splitlines()[1].startswith("  to see it: alertforge serve ")
    assert f"skipped {runs / 'harbor__job__skipped-trial'}: an empty folder" in out.stderr
    assert f"skipped {unfinished}: an unfinished recording" in out.stderr
    folder = cli("export", str(runs), "--out", str(tmp_path / "site2"))  # the folder of runs
    assert folder.returncode == 0 and f"skipped {unfinished}" in folder.stderr
    only = cli("export", str(unfinished), "--out", str(tmp_path / "site3"))
    assert only.returncode == 2 and "no run to export" in only.stderr


def test_record_reference_skips_an_adversary_a_task_gives_no_place_and_records_the_rest(tmp_path):
    """adversary:sibling-receiver needs a receiver the task creates; af-001's keeps its own:
    said on stderr, the other runs recorded, no traceback (a failing job used to spill the
    pool's cancelled futures as tracebacks)."""
    tasks = tmp_path / "tasks"
    shutil.copytree(TASK, tasks / TASK.name)
    done = cli("record-reference", "--tasks", str(tasks), "--out", str(tmp_path / "runs"), "-j", "1",
               "--policies", "nop,adversary:sibling-receiver")
    assert done.returncode == 0, done.stderr
    assert "skipped adversary:sibling-receiver on" in done.stderr and "Traceback" not in done.stderr
    assert len([p for p in (tmp_path / "runs").iterdir() if p.is_dir()]) == 1


def test_hints_name_the_command_as_the_reader_typed_it(monkeypatch, tmp_path):
    import shutil

    from alertforge.cli.options import command_name

    program = tmp_path / "venv-bin" / "alertforge"
    program.parent.mkdir()
    program.write_text("#!/bin/sh\n")
    monkeypatch.setattr(sys, "argv", [str(program), "export"])
    monkeypatch.setattr(shutil, "which", lambda name: None)
    assert command_name() == str(program), "not on PATH: the hint must be runnable as printed"
    monkeypatch.setattr(shutil, "which", lambda name: str(program))
    assert command_name() == "alertforge"
    monkeypatch.setattr(sys, "argv", ["/x/alertforge/cli/__main__.py"])
    assert command_name() == "alertforge", "python -m alertforge.cli"
