"""import-harbor: Harbor job folders and real ATIF trajectories into runs, re-graded step by step."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import atif
import pytest
from conftest import find_run

from contract.files import read_json
from contract.paths import TASKS_DIR
from contract.version import DATASET_VERSION
from exporter.run_folders import read_run_folder
from recorder.importers.harbor.importer import SUMMARY_FILE, import_harbor
from recorder.importers.shell.tracker import FileTracker

FIXTURES = Path(__file__).parent / "fixtures"
JOB = FIXTURES / "harbor-job" / "2026-11-29__09-00-00"
REAL = FIXTURES / "atif-real"
TASK = TASKS_DIR / "af-001-slo-onboarding-easy-s1"
EXACT, SED, NO_TRAJECTORY, BROKEN = (f"af-001-slo-onboarding-easy-s1__{suffix}" for suffix in
                                     ("Hd9xQ2a", "Kp3mZ7c", "Tq8wN4e", "Zr5bV1u"))


def _run(out: Path, trial: str) -> tuple[dict, dict]:
    folder = find_run(out, f"harbor__{JOB.name}__{trial}")
    return read_json(folder / "run.json"), read_json(folder / "trajectory.json")


def _extra(step: dict) -> dict:
    return step.get("extra") or {}


@pytest.fixture(scope="module")
def imported(tmp_path_factory) -> tuple[Path, dict]:
    out = tmp_path_factory.mktemp("harbor-runs")
    return out, import_harbor([JOB], out)


def test_job_imports_every_readable_trial_and_lists_the_unreadable_one(imported):
    out, summary = imported
    assert sorted(Path(r["path"]).name for r in summary["imported"]) == [EXACT, SED, NO_TRAJECTORY]
    assert [Path(s["path"]).name for s in summary["skipped"]] == [BROKEN]
    assert "result.json is not valid JSON" in summary["skipped"][0]["reason"]
    assert read_json(out / SUMMARY_FILE) == summary
    for row in summary["imported"]:
        folder = out / row["run_id"]
        atif.Trajectory.model_validate(read_json(folder / "trajectory.json"))
        read_run_folder(folder)  # what the exporter accepts


def test_heredoc_trial_replays_exactly_and_regrades_to_the_harbor_reward(imported):
    out, _ = imported
    run, doc = _run(out, EXACT)
    harbor_reward = float((JOB / EXACT / "verifier" / "reward.txt").read_text())
    assert run["replay"] == "exact" and run["lossy_steps"] == [] and run["validation_errors"] == []
    assert run["harbor"]["reward"] == harbor_reward
    assert run["regrade"]["reward"] == harbor_reward == run["final"]["reward"]
    assert run["task"]["id"] == TASK.name and run["task"]["known"] is True
    assert run["task"]["catalog_version"] == DATASET_VERSION
    assert run["policy"] == "terminus-2" and run["model"] == "openai/gpt-4o"
    steps = doc["steps"]
    assert steps[0]["source"] == "user" and "grade" in steps[0]["extra"]
    graded = [s for s in steps[1:] if "grade" in _extra(s)]
    paths = [[e["path"] for e in s["extra"]["edits"]] for s in graded]
    solution = TASK / "solution" / "monitoring"
    assert paths[0] == ["rules/slo-recording.yml", "rules/slo-alerts.yml"]  # two heredocs, one call
    assert sorted(p for group in paths for p in group) == sorted(
        f.relative_to(solution).as_posix() for f in solution.rglob("*") if f.is_file())
    for step, group in zip(graded, paths):
        assert step["extra"]["changed_files"] == group
        for edit in step["extra"]["edits"]:
            assert edit["content"] == (solution / edit["path"]).read_text()
    # "cd /app/monitoring" and "ls rules" were one turn: two steps, one observation, one metrics
    split = [s for s in steps if _extra(s).get("source_step_id") == 3]
    assert [s["tool_calls"][0]["arguments"]["keystrokes"] for s in split] == \
        ["cd /app/monitoring\n", "ls rules\n"]
    assert "observation" not in split[0] and "slo-alerts.yml" in \
        split[1]["observation"]["results"][0]["content"]
    assert "metrics" in split[0] and "metrics" not in split[1] and split[1]["llm_call_count"] == 0


def test_sed_trial_is_approximate_naming_the_sed_step_and_keeps_validation_errors(imported):
    out, _ = imported
    run, doc = _run(out, SED)
    assert run["replay"] == "approximate"
    (lossy,) = run["lossy_steps"]
    assert "sed -i" in lossy["reasons"][0] and lossy["tool"] == "bash_command"
    sed_step = doc["steps"][lossy["step_id"] - 1]
    assert sed_step["extra"]["replay"]["lossy"] == lossy["reasons"]
    assert "grade" in sed_step["extra"]  # emulated, so the curve still moves
    assert any("step_id" in error for error in run["validation_errors"])
    assert run["harbor"]["schema_version"] == "ATIF-v1.2"
    harbor_reward = read_json(JOB / SED / "verifier" / "reward.json")["reward"]
    assert run["harbor"]["reward"] == harbor_reward
    assert run["regrade"]["reward"] == harbor_reward  # the s/// emulation matched real sed


def test_trial_without_a_trajectory_is_terminal_only_with_the_harbor_reward(imported):
    out, _ = imported
    run, doc = _run(out, NO_TRAJECTORY)
    assert run["replay"] == "terminal-only" and run["graded"] is False
    assert run["regrade"] is None
    assert run["final"] == {"reward": 0.0, "solved": False, "keys": {}, "requirements": {},
                            "source": "harbor"}
    assert "AgentSetupTimeoutError" in run["error"]
    assert len(doc["steps"]) == 1 and "no readable agent trajectory" in doc["steps"][0]["message"]


def test_reimporting_the_same_job_grades_nothing_again(imported, tmp_path):
    out, first = imported
    again = import_harbor([JOB], out)
    assert all(row["unchanged"] for row in again["imported"])
    assert [r["run_id"] for r in again["imported"]] == [r["run_id"] for r in first["imported"]]


def test_real_atif_trajectories_import_as_ungraded_runs_showing_every_call(tmp_path):
    summary = import_harbor(sorted(REAL.glob("*.json")), tmp_path)
    assert summary["skipped"] == []
    for row in summary["imported"]:
        run = read_json(tmp_path / row["run_id"] / "run.json")
        doc = read_json(tmp_path / row["run_id"] / "trajectory.json")
        original = read_json(Path(row["path"]))
        assert run["task"] == {"id": "unknown", "dir": None, "known": False, "name": None,
                               "workflow": None, "tier": None, "seed": None}
        assert run["graded"] is False and run["final"] is None and run["validation_errors"] == []
        assert any("not graded" in note for note in run["notes"])
        assert not any("grade" in _extra(s) for s in doc["steps"])
        calls = [(c["function_name"], c["arguments"]) for s in original["steps"]
                 for c in s.get("tool_calls") or []]
        assert [(c["function_name"], c["arguments"]) for s in doc["steps"]
                for c in s.get("tool_calls") or []] == calls
        outputs = [r.get("content") for s in original["steps"]
                   for r in (s.get("observation") or {}).get("results", [])]
        assert [r.get("content") for s in doc["steps"]
                for r in (s.get("observation") or {}).get("results", [])] == outputs
        assert [s["message"] for s in doc["steps"]] == [s["message"] for s in original["steps"]]
        read_run_folder(tmp_path / row["run_id"])
    openhands = read_json(find_run(tmp_path, "atif__openhands__hello-world") / "trajectory.json")
    edits = [e for s in openhands["steps"] for e in _extra(s).get("edits", [])]
    assert edits == [{"path": "/app/hello.txt", "content": "Hello, world!"}]
    terminus_dir = find_run(tmp_path, "atif__terminus_2__hello-world-timeout")
    terminus = read_json(terminus_dir / "trajectory.json")
    assert not any("edits" in _extra(s) for s in terminus["steps"])
    assert "prints to the terminal" in terminus["steps"][1]["extra"]["replay"]["notes"][0]
    assert "no file edit found" in " ".join(read_json(terminus_dir / "run.json")["notes"])


def test_cli_lists_an_unreadable_trial_on_stderr_and_a_missing_job_is_bad_input(tmp_path):
    job = tmp_path / "job"
    trial = job / "hello-world__AbC1234"
    (trial / "agent").mkdir(parents=True)
    shutil.copy(REAL / "openhands__hello-world.trajectory.json", trial / "agent" / "trajectory.json")
    (trial / "result.json").write_text(json.dumps({"task_name": "hello-world",
                                                   "trial_name": trial.name,
                                                   "verifier_result": {"rewards": {"reward": 1.0}}}))
    shutil.copytree(JOB / BROKEN, job / BROKEN)
    cli = [sys.executable, "-m", "alertforge.cli", "import-harbor"]
    out = subprocess.run([*cli, str(job), "--out", str(tmp_path / "runs")], capture_output=True,
                         text=True, timeout=120, check=False)
    assert out.returncode == 0, out.stderr
    assert f"skipped {job / BROKEN}" in out.stderr and "1 skipped" in out.stdout
    run = read_json(find_run(tmp_path / "runs", f"harbor__job__{trial.name}") / "run.json")
    assert run["task"]["id"] == "hello-world" and run["task"]["known"] is False
    assert run["task"].get("catalog_version") is None
    assert run["final"]["reward"] == 1.0 and run["final"]["source"] == "harbor"
    missing = subprocess.run([*cli, str(tmp_path / "nope")], capture_output=True, text=True,
                             timeout=60, check=False)
    assert missing.returncode == 2 and "nope" in missing.stderr and "Traceback" not in missing.stderr


# ---------------------------------------------------------------- edit reconstruction, by case


def _effects(calls: list[tuple[str, dict]], files: dict | None = None, known: bool = True):
    tracker = FileTracker(files or {"rules/a.yml": "a: 1\nb: 2\n"}, repo_known=known)
    return tracker, [tracker.apply(name, args) for name, args in calls]


def _edits(effect) -> list[tuple[str, str | None]]:
    return [(e.path, e.content) for e in effect.edits]


def test_heredoc_split_across_keystrokes_is_written_when_its_delimiter_arrives():
    _, (first, second) = _effects([
        ("bash_command", {"keystrokes": "cd /app/monitoring\ncat > rules/b.yml <<'EOF'\nx: 1\n"}),
        ("bash_command", {"keystrokes": "y: '{{ $labels.service }}'\nEOF\n"})])
    assert first.edits == [] and _edits(second) == [("rules/b.yml", "x: 1\ny: '{{ $labels.service }}'\n")]
    assert second.lossy == []


def test_ctrl_c_abandons_an_open_heredoc():
    _, effects = _effects([("bash_command", {"keystrokes": "cat > /app/monitoring/rules/b.yml <<EOF\nx\n"}),
                           ("bash_command", {"keystrokes": "C-c"}),
                           ("bash_command", {"keystrokes": "EOF\n"})])
    assert all(e.edits == [] for e in effects)


def test_unquoted_heredoc_expanding_dollar_is_lossy():
    _, (effect,) = _effects([("bash_command", {"keystrokes":
                             "cat > /app/monitoring/rules/b.yml <<EOF\nsummary: {{ $labels.x }}\nEOF\n"})])
    assert _edits(effect) == [("rules/b.yml", "summary: {{ $labels.x }}\n")]
    assert "unquoted" in effect.lossy[0]


def test_echo_printf_append_move_and_remove():
    _, effects = _effects([
        ("execute_bash", {"command": "cd /app/monitoring && echo 'c: 3' >> rules/a.yml"}),
        ("execute_bash", {"command": "printf '%s\\n' x y > /app/monitoring/rules/p.yml"}),
        ("Bash", {"command": "mv /app/monitoring/rules/p.yml /app/monitoring/rules/q.yml"}),
        ("Bash", {"command": "rm -f /app/monitoring/rules/q.yml"})])
    assert [_edits(e) for e in effects] == [
        [("rules/a.yml", "a: 1\nb: 2\nc: 3\n")], [("rules/p.yml", "x\ny\n")],
        [("rules/q.yml", "x\ny\n"), ("rules/p.yml", None)], [("rules/q.yml", None)]]
    assert all(e.lossy == [] for e in effects)


def test_output_of_an_unknown_command_into_a_repo_file_is_lossy():
    _, (effect,) = _effects([("bash_command", {"keystrokes":
                             "yq '.a = 2' /app/monitoring/rules/a.yml > /app/monitoring/rules/b.yml\n"})])
    assert effect.edits == [] and "rules/b.yml" in effect.lossy[0]


def test_editor_tools_create_replace_insert_undo_and_refusal():
    path = "/app/monitoring/rules/a.yml"
    _, effects = _effects([
        ("str_replace_editor", {"command": "str_replace", "path": path, "old_str": "b: 2",
                                "new_str": "b: 3"}),
        ("str_replace_editor", {"command": "insert", "path": path, "insert_line": 1,
                                "new_str": "z: 0"}),
        ("str_replace_editor", {"command": "undo_edit", "path": path}),
        ("Edit", {"file_path": path, "old_string": "missing", "new_string": "x"}),
        ("write_file", {"path": "monitoring/rules/n.yml", "content": "n: 1\n"})])
    assert [_edits(e) for e in effects] == [
        [("rules/a.yml", "a: 1\nb: 3\n")], [("rules/a.yml", "a: 1\nz: 0\nb: 3\n")],
        [("rules/a.yml", "a: 1\nb: 3\n")], [], [("rules/n.yml", "n: 1\n")]]
    assert "refused" in effects[3].notes[0] and effects[3].lossy == []


def test_codex_apply_patch_updates_adds_and_deletes():
    patch = ("*** Begin Patch\n*** Update File: /app/monitoring/rules/a.yml\n@@\n a: 1\n-b: 2\n+b: 20\n"
             "*** Add File: /app/monitoring/rules/new.yml\n+new: true\n"
             "*** Delete File: /app/monitoring/rules/a.yml\n*** End Patch")
    _, (effect,) = _effects([("apply_patch", {"input": patch})])
    assert _edits(effect) == [("rules/new.yml", "new: true\n"), ("rules/a.yml", None)]


def test_sed_in_place_is_emulated_for_s_and_lossy_for_other_scripts():
    _, (emulated, other) = _effects([
        ("bash_command", {"keystrokes": "sed -i -E 's/b: ([0-9])/b: \\1\\1/g' /app/monitoring/rules/a.yml\n"}),
        ("bash_command", {"keystrokes": "sed -i '1d' /app/monitoring/rules/a.yml\n"})])
    assert _edits(emulated) == [("rules/a.yml", "a: 1\nb: 22\n")] and "sed -i" in emulated.lossy[0]
    assert other.edits == [] and "sed" in other.lossy[0]


def test_a_write_through_a_file_is_refused_on_its_step_not_an_aborted_import(tmp_path):
    """A trajectory that writes ``notes`` and then ``notes/x`` (issue 16's odd trajectory)
    imports with exit 0: the second write is refused and named on its step, and no temp path
    reaches the run or the terminal (before: exit 2 naming the importer's temp folder)."""
    job = tmp_path / "job"
    shutil.copytree(JOB, job, ignore=shutil.ignore_patterns("*Kp3mZ7c", "*Tq8wN4e", "*Zr5bV1u"))
    path = job / EXACT / "agent" / "trajectory.json"
    doc = read_json(path)
    step = doc["steps"][1]
    step["tool_calls"][0]["arguments"]["keystrokes"] = (
        "cd /app/monitoring && echo a > notes && echo b > notes/x\n")
    path.write_text(json.dumps(doc))
    cli = subprocess.run([sys.executable, "-m", "alertforge.cli", "import-harbor", str(job), "--out",
                          str(tmp_path / "runs")], capture_output=True, text=True, check=False)
    assert cli.returncode == 0, cli.stderr
    assert "alertforge-" not in cli.stdout + cli.stderr
    folder = next((tmp_path / "runs").glob("harbor__*"))
    doc = read_json(folder / "trajectory.json")
    notes = [n for s in doc["steps"] for n in ((s.get("extra") or {}).get("replay") or {}).get("notes", [])]
    # a real shell fails that write too ("Not a directory"): refused, named, nothing written
    assert any("notes is a file, not a folder" in n for n in notes), notes
    assert "alertforge-" not in (folder / "trajectory.json").read_text()


def test_the_line_printed_per_run_says_in_words_how_it_was_replayed_and_rewarded():
    from alertforge.cli.imports import run_line

    row = {"run_id": "harbor__job__t1", "replay": "exact", "lossy_steps": 0, "harbor_reward": 1.0,
           "regrade_reward": 0.274718, "multi_step": []}
    assert run_line(row) == ("harbor__job__t1: replayed step by step; Harbor's verifier reward 1.0000, "
                             "re-graded here 0.2747")
    row.update(replay="approximate", lossy_steps=2, multi_step=["build", "deploy"])
    assert "2 step(s) approximate" in run_line(row) and run_line(row).endswith("; trial steps build, deploy")
    row.update(replay="terminal-only", lossy_steps=0, harbor_reward=None, regrade_reward=None, multi_step=[])
    assert run_line(row) == ("harbor__job__t1: not replayed (no steps to replay): rewards only; "
                             "Harbor's verifier reward none, not re-graded here")


def test_several_named_rewards_without_reward_give_the_first_as_harbor_view_does():
    from alertforge.cli.imports import run_line
    from recorder.importers.harbor.trials import harbor_reward, harbor_reward_key

    named = {"accuracy": 0.5, "style": 1, "passed": True}
    assert harbor_reward_key(named) == "accuracy" and harbor_reward(named) == 0.5
    assert harbor_reward_key({"note": "x", "reward": 0.25, "b": 1}) == "reward"
    assert harbor_reward({"flag": True, "n": "1"}) is None and harbor_reward(None) is None
    row = {"run_id": "r", "replay": "exact", "lossy_steps": 0, "harbor_reward": 0.5,
           "harbor_reward_key": "accuracy", "rewards": named, "regrade_reward": None, "multi_step": []}
    assert "Harbor's verifier reward 0.5000 (accuracy, the first of 3 named rewards)" in run_line(row)


def test_a_trial_named_in_bytes_that_are_not_utf8_is_skipped_and_a_broken_result_noted(tmp_path):
    import os

    job = tmp_path / "job"
    shutil.copytree(JOB, job)
    trials = sorted(p for p in job.iterdir() if p.is_dir())
    os.rename(trials[0], os.path.join(os.fsencode(job), b"bad\xffname"))
    (trials[1] / "result.json").write_text('{"trial_name": ')
    done = subprocess.run([sys.executable, "-m", "alertforge.cli", "import-harbor", str(job), "--out",
                           str(tmp_path / "runs")], check=False, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0 and "Traceback" not in done.stderr, done.stderr
    assert "bad\\xffname: its name is not UTF-8" in done.stderr
    assert "imported without the trial's result" in done.stderr
    summary = read_json(tmp_path / "runs" / SUMMARY_FILE)
    assert any(item["path"].endswith("bad\\xffname") for item in summary["skipped"])
    row = next(r for r in summary["imported"] if r["path"] == str(trials[1]))
    notes = read_json(tmp_path / "runs" / row["run_id"] / "run.json")["notes"]
    assert any(note.startswith("result.json is not valid JSON") for note in notes), notes


def test_a_trial_without_a_trajectory_names_its_model_as_the_jobs_other_trials(imported):
    """The errored trial has only result.json: its model is config.agent.model_name
    (``openai/gpt-4o``), as the others' trajectories say, not agent_info's bare ``gpt-4o``
    (the home page's model filter and pass@k split one model in two)."""
    out, _ = imported
    models = {trial: _run(out, trial)[0]["model"] for trial in (EXACT, SED, NO_TRAJECTORY)}
    assert models == dict.fromkeys((EXACT, SED, NO_TRAJECTORY), "openai/gpt-4o")


def test_agent_info_alone_names_the_model_provider_slash_name():
    from recorder.importers.harbor.importer import _agent
    from recorder.importers.harbor.trials import Trial

    trial = Trial(Path("job/t1"), "job", "t1",
                  result={"agent_info": {"name": "t", "model_info": {"name": "gpt-4o", "provider": "openai"}}})
    assert _agent(trial).model == "openai/gpt-4o"
