"""The OpenEnv server (openenv-core create_app) on 127.0.0.1, driven through openenv-core's client."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import atif
import pytest
from conftest import assert_run_matches_schema

from contract.files import read_json
from contract.paths import REPO_ROOT, TASKS_DIR
from recorder.agents.base import ScriptedAgent

TASK = TASKS_DIR / "af-001-slo-onboarding-easy-s1"


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.fixture(scope="module")
def server_url():
    port = _free_port()
    process = subprocess.Popen([sys.executable, "-m", "recorder.environments.openenv_server.app", "--host", "127.0.0.1",
                                "--port", str(port)], cwd=REPO_ROOT,
                               stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 90
    while True:
        try:
            with urllib.request.urlopen(url + "/health", timeout=2) as response:
                if response.status == 200:
                    break
        except OSError:
            if process.poll() is not None or time.monotonic() > deadline:
                process.kill()
                pytest.fail(f"OpenEnv server did not start: {process.stderr.read()[-2000:]}")
            time.sleep(0.3)
    yield url
    process.terminate()
    process.wait(timeout=20)


def test_run_driven_through_openenv_sums_step_rewards_to_the_final_reward(server_url, tmp_path):
    from recorder.record_openenv import record_openenv

    solution = TASK / "solution" / "monitoring" / "rules"
    agent = ScriptedAgent([("read_file", {"path": "README.md"})] + [
        ("write_file", {"path": f"rules/{name}", "content": (solution / name).read_text()})
        for name in ("slo-recording.yml",)] + [("list_files", {}), ("submit", {})])
    run_dir = record_openenv(server_url, agent, out=tmp_path, readable="openenv-scripted",
                             policy="scripted", reset={"task": TASK.name, "seed": 0}, task_dir=TASK)
    doc = read_json(run_dir / "trajectory.json")
    atif.Trajectory.model_validate(doc)
    run = read_json(run_dir / "run.json")
    assert_run_matches_schema(run_dir)
    assert run["kind"] == "alerting" and run["status"] == "complete" and run["source"] == "openenv"
    steps = doc["steps"]
    assert steps[-1]["tool_calls"][0]["function_name"] == "submit"
    rewards = [s["extra"]["env"]["reward"] for s in steps[1:]]
    levels = [s["extra"]["grade"]["reward"] for s in steps if "grade" in s["extra"]]
    assert sum(rewards) + steps[0]["extra"]["grade"]["reward"] == pytest.approx(levels[-1], abs=1e-12)
    assert run["final"]["reward"] == levels[-1] > levels[0]
    assert [s["extra"]["grade"]["delta"] for s in steps[1:] if "grade" in s["extra"]] == \
        pytest.approx([r for s, r in zip(steps[1:], rewards) if "grade" in s["extra"]], abs=1e-6)
    assert all(r == 0 for s, r in zip(steps[1:], rewards) if "grade" not in s["extra"])
    writes = [s for s in steps[1:] if s["tool_calls"][0]["function_name"] == "write_file"]
    assert all("grade" in s["extra"] for s in writes)
    assert len(run["checks"]) == len(steps[0]["extra"]["grade"]["checks"])


def test_client_session_outcome_mode_tool_errors_and_end_of_episode(server_url):
    from openenv.core import GenericEnvClient

    with GenericEnvClient(base_url=server_url).sync() as env:
        first = env.reset(task=TASK.name, reward_mode="outcome")
        assert first.observation["task_id"] == TASK.name and first.reward == 0.0
        assert first.observation["instruction"] == (TASK / "instruction.md").read_text()
        read = env.step({"tool": "read_file", "path": "README.md"})
        assert "# " in read.observation["output"] and read.reward == 0.0 and not read.done
        outside = env.step({"tool": "write_file", "path": "../escape.yml", "content": "x"})
        assert outside.observation["tool_error"] is True and "'..'" in outside.observation["output"]
        route = env.step({"tool": "route_test", "labels": {"team": "growth"}})
        assert route.observation["output"] == "receivers: growth-pager"
        solution = TASK / "solution" / "monitoring" / "rules" / "slo-recording.yml"
        wrote = env.step({"tool": "write_file", "path": "rules/slo-recording.yml",
                          "content": solution.read_text()})
        assert wrote.observation["grade"]["reward"] > 0 and wrote.reward == 0.0  # outcome mode
        end = env.step({"tool": "submit"})
        assert end.done and end.reward == wrote.observation["grade"]["reward"]
        after = env.step({"tool": "list_files"})
        assert after.done and after.observation["tool_error"]
    with urllib.request.urlopen(server_url + "/schema", timeout=10) as response:
        schema = json.loads(response.read())
    assert {"tool", "path", "content", "labels"} <= set(schema["action"]["properties"])


def test_record_openenv_cli_against_the_server(server_url, tmp_path, capsys):
    from alertforge.cli import main

    code = main(["record-openenv", "--url", server_url, "--task", TASK.name, "--policy", "nop",
                 "--out", str(tmp_path)])
    assert code == 0, capsys.readouterr().err
    run_dir = Path(capsys.readouterr().out.strip().splitlines()[-1])
    run = read_json(run_dir / "run.json")
    assert run["status"] == "complete" and run["final"]["reward"] == 0.0 and run["policy"] == "nop"
    unreachable = main(["record-openenv", "--url", "http://127.0.0.1:9", "--task", TASK.name,
                        "--out", str(tmp_path)])
    assert unreachable == 1 and "cannot reach" in capsys.readouterr().err
