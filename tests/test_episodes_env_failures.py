"""Environment failures are not agent actions: a server that lost the episode, a foreign reset.

Against tests/aria_contract_server.py, which answers from the real transcripts of
tests/fixtures/aria-2026-12/ (``easy-server-restart-seed3.json``: 400 "Call /reset before
/step" after a restart; ``easy-foreign-reset-seed7.json``: seed 7's steps run in seed 1's
episode after another client's reset).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from aria_contract_server import SET2, ContractServer

from contract.errors import EnvironmentFailure
from recorder.agents.episode_policies import ScriptedPolicy
from recorder.episodes.live import EpisodeRecording, record_episode


def load(path: Path) -> dict:
    return json.loads(path.read_bytes())


def actions(name: str) -> list[dict]:
    calls = load(SET2 / name)["steps"]
    return [c["request"]["json"] for c in calls if c["request"]["path"] == "/step"]


@pytest.fixture
def server():
    running = ContractServer().start()
    yield running
    running.stop()


class FaultAfter(ScriptedPolicy):
    """Scripted; ``fault()`` happens to the server once, after ``after`` answered actions."""

    def __init__(self, steps, label, fault, after):
        super().__init__(steps, label=label)
        self.fault, self.after, self.seen = fault, after, 0

    def observe(self, step):
        self.seen += 1
        if self.seen == self.after:
            self.fault()


def test_a_server_that_lost_the_episode_ends_the_recording_kept_and_resumable(server, tmp_path):
    steps = actions("easy-expert-seed3.json")
    policy = FaultAfter(steps, "scripted-restart", server.restart, after=2)
    with pytest.raises(EnvironmentFailure, match="Call /reset before /step"):
        record_episode(server.url, "easy", 3, policy, recording=EpisodeRecording(out=tmp_path))
    (run_dir,) = tmp_path.iterdir()
    run = load(run_dir / "run.json")
    trajectory = load(run_dir / "trajectory.json")["steps"]
    assert run["status"] == "failed" and "lost the episode" in run["error"]
    assert len(trajectory) == 3  # instruction + 2 answered steps, the 400 is no action
    assert all("error" not in s["extra"]["env"] for s in trajectory[1:])
    again = record_episode(server.url, "easy", 3, ScriptedPolicy(steps, label="scripted-restart"),
                           recording=EpisodeRecording(out=tmp_path))
    assert again == run_dir
    run = load(run_dir / "run.json")
    assert run["status"] == "complete" and run["final"]["reward"] == 0.999
    assert len(load(run_dir / "trajectory.json")["steps"]) == 1 + len(steps)


def test_the_cli_exits_1_on_a_lost_episode(server, tmp_path):
    steps = actions("easy-expert-seed3.json")
    actions_file = tmp_path / "easy.yaml"
    actions_file.write_text(yaml.safe_dump({"actions": steps}))
    original, count = server.http_episode.step, {"n": 0}

    def counting(action):  # before the third /step is answered, the server restarts
        count["n"] += 1
        if count["n"] == 2:
            server.before_step = lambda srv: srv.restart()
        return original(action)

    server.http_episode.step = counting
    result = subprocess.run(
        [sys.executable, "-m", "alertforge.cli", "record", "--env", "aria", "--env-url",
         server.url, "--task", "easy", "--seed", "3", "--policy", "scripted", "--actions",
         str(actions_file), "--out", str(tmp_path / "runs")],
        check=False, capture_output=True, text=True, timeout=120)
    assert result.returncode == 1, result.stderr
    assert "lost the episode" in result.stderr and "Traceback" not in result.stderr
    (run_dir,) = (tmp_path / "runs").iterdir()
    assert load(run_dir / "run.json")["status"] == "failed"
    assert len(load(run_dir / "trajectory.json")["steps"]) == 3


def test_a_foreign_reset_before_the_first_step_is_detected(server, tmp_path):
    steps = actions("easy-foreign-reset-seed7.json")
    server.before_step = lambda srv: srv.foreign_reset("easy", 1)
    with pytest.raises(EnvironmentFailure, match="another client reset"):
        record_episode(server.url, "easy", 7, ScriptedPolicy(steps, label="scripted"),
                       recording=EpisodeRecording(out=tmp_path))
    # the one step went to the other client's episode: nothing of this run is kept ...
    assert list(tmp_path.iterdir()) == []
    # ... and the same command, run again, records the episode (a resume would replay that
    # step against our own episode and fail on its reward)
    server.before_step = None
    again = record_episode(server.url, "easy", 7, ScriptedPolicy(steps, label="scripted"),
                           recording=EpisodeRecording(out=tmp_path))
    run = load(again / "run.json")
    assert run["status"] == "complete"
    assert len(load(again / "trajectory.json")["steps"]) == 1 + len(steps)


def test_the_cli_says_a_foreign_first_step_left_nothing_and_the_same_command_works(server, tmp_path):
    steps = actions("easy-expert-seed3.json")
    actions_file = tmp_path / "easy.yaml"
    actions_file.write_text(yaml.safe_dump({"actions": steps}))
    command = [sys.executable, "-m", "alertforge.cli", "record", "--env", "aria", "--env-url",
               server.url, "--task", "easy", "--seed", "3", "--policy", "scripted", "--actions",
               str(actions_file), "--out", str(tmp_path / "runs")]
    server.before_step = lambda srv: srv.foreign_reset("easy", 1)
    first = subprocess.run(command, check=False, capture_output=True, text=True, timeout=120)
    assert first.returncode == 1 and "run the same command again" in first.stderr
    assert "Traceback" not in first.stderr
    assert not (tmp_path / "runs").exists() or not any((tmp_path / "runs").iterdir())
    server.before_step = None
    second = subprocess.run(command, check=False, capture_output=True, text=True, timeout=120)
    assert second.returncode == 0, second.stderr


@pytest.mark.parametrize("path", ["/api", "/v1/aria", "/reset"])
@pytest.mark.parametrize("mode", ["single", "dual"])
def test_an_env_url_with_a_wrong_path_is_named_as_such_not_a_refused_task(server, tmp_path, path, mode):
    steps = actions("easy-expert-seed3.json")
    actions_file = tmp_path / "easy.yaml"
    actions_file.write_text(yaml.safe_dump({"actions": steps}))
    result = subprocess.run(
        [sys.executable, "-m", "alertforge.cli", "record", "--env", "aria", "--mode", mode,
         "--env-url", server.url.rstrip("/") + path, "--task", "easy", "--seed", "3",
         "--policy", "scripted", "--actions", str(actions_file), "--out", str(tmp_path / "runs")],
        check=False, capture_output=True, text=True, timeout=120)
    assert result.returncode == 2, result.stderr
    assert "nothing answers POST" in result.stderr and "base URL" in result.stderr
    assert "refused this task" not in result.stderr and "Traceback" not in result.stderr
    assert not (tmp_path / "runs").exists() or not any((tmp_path / "runs").iterdir())


def test_a_connection_that_stays_down_ends_the_recording_kept_and_resumable(tmp_path):
    steps = actions("easy-expert-seed3.json")
    first = ContractServer().start()
    with pytest.raises(EnvironmentFailure):
        record_episode(first.url, "easy", 3, FaultAfter(steps, "scripted-down", first.kill, after=2),
                       recording=EpisodeRecording(out=tmp_path))
    (run_dir,) = tmp_path.iterdir()
    assert load(run_dir / "run.json")["status"] == "failed"
    assert len(load(run_dir / "trajectory.json")["steps"]) == 3
    second = ContractServer().start()  # the server back (on another port)
    try:
        again = record_episode(second.url, "easy", 3, ScriptedPolicy(steps, label="scripted-down"),
                               recording=EpisodeRecording(out=tmp_path))
    finally:
        second.stop()
    assert again == run_dir and load(run_dir / "run.json")["status"] == "complete"
    assert load(run_dir / "run.json")["final"]["reward"] == 0.999
