"""import-episodes: the 16 recorded ARIA transcripts become episode runs with their values unchanged."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import atif
import pytest
from conftest import readable

from recorder.episodes.score import next_total, score_parts
from recorder.importers.aria_transcripts import EXAMPLE_EPISODES, import_episodes

TRANSCRIPTS = sorted(EXAMPLE_EPISODES.glob("*.json"))


def load(path: Path) -> dict:
    return json.loads(path.read_bytes())


def cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "alertforge.cli", *args],
        check=False,
        capture_output=True,
        text=True,
        timeout=120,
    )


@pytest.fixture(scope="module")
def imported(tmp_path_factory) -> dict[str, Path]:
    """Every transcript imported once: transcript file name -> run folder."""
    out = tmp_path_factory.mktemp("episode-runs")
    folders = import_episodes(TRANSCRIPTS, out)
    by_name = {}
    for folder in folders:
        source = load(folder / "run.json")["env"]["source"]["file"]
        by_name[source] = folder
    return by_name


def test_the_examples_hold_all_16_transcripts():
    assert len(TRANSCRIPTS) == 16
    assert {p.stem.rsplit("-", 1)[1] for p in TRANSCRIPTS} == {"expert", "poor"}


@pytest.mark.parametrize("transcript", TRANSCRIPTS, ids=lambda p: p.stem)
def test_import_keeps_rewards_totals_and_final_score(imported, transcript):
    recorded = load(transcript)
    run_dir = imported[transcript.name]
    run = load(run_dir / "run.json")
    trajectory = load(run_dir / "trajectory.json")
    atif.Trajectory.model_validate(trajectory)
    steps = trajectory["steps"]
    assert len(steps) == 1 + len(recorded["steps"])
    assert steps[0]["source"] == "user"
    assert steps[0]["extra"]["env"]["observation"] == recorded["reset"]["response"]

    total = 0.0
    for step, call in zip(steps[1:], recorded["steps"], strict=True):
        env = step["extra"]["env"]
        action = call["request"]["json"]
        (tool_call,) = step["tool_calls"]
        assert tool_call["function_name"] == action["action_type"]
        assert tool_call["arguments"] == {k: v for k, v in action.items() if k != "action_type"}
        (result,) = step["observation"]["results"]
        assert result["source_call_id"] == tool_call["tool_call_id"]
        if call["status"] == 200:
            response = call["response"]
            assert env["reward"] == response["reward"]
            assert env["done"] is response["done"] and env["info"] == response["info"]
            assert env["observation"] == response["observation"]
            assert json.loads(result["content"]) == response["observation"]
            total = min(1.0, max(0.0, round(total + response["reward"], 6)))
        else:  # the server failed the action: recorded as the step's result, no reward
            assert env["error"]["status"] == call["status"]
            assert env["observation"] is None and env["reward"] == 0.0
            assert f"HTTP {call['status']}" in result["content"]
        assert env["total"] == total
        if call.get("client_retry_after"):
            assert step["extra"]["transport"]["retried_after"] == call["client_retry_after"]

    state = recorded["final_state"]["response"]
    summary = recorded["summary"]
    assert [
        s["extra"]["env"]["reward"] for s in steps[1:] if "error" not in s["extra"]["env"]
    ] == summary["rewards"]
    assert total == state["total_reward"] == summary["state_total_reward"]
    final = run["final"]
    assert final["reward"] == state["info"]["current_score"] == summary["state_current_score"]
    assert final["solved"] is state["incident_resolved"]
    episode = final["episode"]
    assert episode["parts"]["parts_match"] and episode["totals_agree"]
    assert episode["rewards_unlocked"] == state["info"]["rewards_unlocked"]
    assert episode["ground_truth"] == {
        "root_cause": state["ground_truth_root_cause"],
        "fix": state["ground_truth_fix"],
    }
    assert episode["resolution"] == (
        summary["last_info"].get("resolution") or summary["last_info"].get("reason")
    )
    assert run["kind"] == "episode" and run["status"] == "complete"
    assert run["seed"] == recorded["seed"] and run["task"]["seed"] == recorded["seed"]
    assert run["task"]["env_task_id"] == recorded["task_id"]
    assert run["policy"] == recorded["variant"]
    assert [
        json.loads(line)["step_id"] for line in (run_dir / "journal.jsonl").read_text().splitlines()
    ] == [s["step_id"] for s in steps]


def test_total_is_clamped_after_every_step_so_it_is_not_the_sum():
    rewards = [-0.15, -0.1, 0.0, -0.1, 0.0, 0.25]  # medium-poor: sums to -0.10, ends at 0.25
    total = 0.0
    for reward in rewards:
        total = next_total(total, reward)
    assert round(sum(rewards), 6) == -0.1 and total == 0.25
    assert next_total(0.9, 0.4) == 1.0


def test_score_parts_flag_a_score_they_do_not_explain():
    state = {
        "total_reward": 0.5,
        "incident_resolved": False,
        "action_history": [],
        "info": {"current_score": 0.7, "analytics": {"best_diagnosis_overlap": 0.0}},
    }
    parts = score_parts(state, "medium")
    assert parts["derived_score"] == 0.5 and parts["parts_match"] is False
    state["info"]["current_score"] = 0.5
    assert score_parts(state, "medium")["parts_match"] is True


def test_reimport_rewrites_the_same_bytes(imported, tmp_path):
    again = import_episodes([TRANSCRIPTS[0]], tmp_path)[0]
    first = imported[TRANSCRIPTS[0].name]
    for name in ("run.json", "trajectory.json", "journal.jsonl"):
        assert (again / name).read_bytes() == (first / name).read_bytes()


def test_bad_transcript_is_bad_input_naming_the_file_and_nothing_is_written(tmp_path):
    broken = load(TRANSCRIPTS[0])
    broken["steps"][1]["response"]["reward"] = "lots"
    bad = tmp_path / "broken.json"
    bad.write_text(json.dumps(broken))
    out = tmp_path / "runs"
    result = cli("import-episodes", str(TRANSCRIPTS[1]), str(bad), "--out", str(out))
    assert result.returncode == 2
    assert str(bad) in result.stderr and "steps[1].response.reward" in result.stderr
    assert "Traceback" not in result.stderr
    assert not out.exists()
    (tmp_path / "not-json.json").write_text("{")
    result = cli("import-episodes", str(tmp_path / "not-json.json"), "--out", str(out))
    assert result.returncode == 2 and "not-json.json" in result.stderr


def test_the_same_transcript_twice_is_one_run_and_an_edited_one_is_another(tmp_path):
    copy = tmp_path / "copy.json"
    copy.write_bytes(TRANSCRIPTS[0].read_bytes())
    result = cli("import-episodes", str(TRANSCRIPTS[0]), str(copy), "--out", str(tmp_path / "o"))
    assert result.returncode == 0 and len(list((tmp_path / "o").iterdir())) == 1
    edited = load(TRANSCRIPTS[0])
    edited["reset"]["latency_ms"] = edited["reset"].get("latency_ms", 0) + 1
    copy.write_text(json.dumps(edited))
    result = cli("import-episodes", str(TRANSCRIPTS[0]), str(copy), "--out", str(tmp_path / "o"))
    assert result.returncode == 0, result.stderr
    names = sorted(p.name for p in (tmp_path / "o").iterdir())
    assert len(names) == 2 and len({readable(name) for name in names}) == 1
    site = tmp_path / "site"
    assert cli("export", str(tmp_path / "o"), "--out", str(site)).returncode == 0
    assert len(json.loads((site / "data" / "index.json").read_bytes())["runs"]) == 2


def test_cli_imports_into_out(tmp_path):
    result = cli("import-episodes", *map(str, TRANSCRIPTS[:2]), "--out", str(tmp_path))
    assert result.returncode == 0, result.stderr
    expected = []
    for transcript in TRANSCRIPTS[:2]:
        data = load(transcript)
        expected.append(f"aria-{data['task_id']}__{data['variant']}__s{data['seed']}")
    assert sorted(readable(p.name) for p in tmp_path.iterdir()) == sorted(expected)
    assert result.stdout.splitlines()[-1] == f"  to see them: alertforge view {tmp_path}"


def test_demo_imports_the_16_example_episodes(tmp_path):
    from alertforge.cli.site import import_demo_episodes as _demo_import_episodes

    _demo_import_episodes(tmp_path)
    runs = sorted(p.name for p in tmp_path.iterdir())
    assert len(runs) == 16 and all(name.startswith("aria-") for name in runs)
