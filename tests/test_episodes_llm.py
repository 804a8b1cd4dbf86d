"""Protocol tests of the episode ``llm`` policy: a scripted OpenAI-compatible server and ARIA answers.

Two real local servers on 127.0.0.1: tests/openai_script_server.py (a separate process that
replies from a script of tool calls and checks what the client sends: bearer key, every tool
call answered by its id) and tests/aria_contract_server.py (answers from the recorded ARIA
transcripts, so every reward is one the real server gave). Episodes are recorded through the
CLI, ``alertforge record --env aria --policy llm``.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import atif
import pytest
from aria_contract_server import ContractServer
from conftest import find_run, readable

from recorder.agents.episode_policies import ACTION_FIELDS, ACTION_TYPES
from recorder.agents.llm_episode import ACTION_TOOLS, action_from_call
from recorder.importers.aria_transcripts import EXAMPLE_EPISODES

SCRIPT_SERVER = Path(__file__).parent / "openai_script_server.py"
KEY = "sk-local-episodes"
MODEL = "scripted-model"
EASY_EXPERT = json.loads((EXAMPLE_EPISODES / "easy-expert.json").read_bytes())
EASY_ACTIONS = [call["request"]["json"] for call in EASY_EXPERT["steps"]]
EASY_REWARDS = [call["response"]["reward"] for call in EASY_EXPERT["steps"]]


class ScriptServer:
    """The OpenAI-compatible script server as a child process; ``url`` is its /v1 base URL."""

    def __init__(self, folder: Path, script: list[dict]):
        folder.mkdir(parents=True, exist_ok=True)
        self.log = folder / "requests.jsonl"
        (folder / "script.json").write_text(json.dumps(script))
        self.process = subprocess.Popen(
            [sys.executable, str(SCRIPT_SERVER), "--script", str(folder / "script.json"),
             "--log", str(self.log), "--api-key", KEY, "--port", "0"],
            stdout=subprocess.PIPE, text=True)
        line = self.process.stdout.readline()
        assert line.startswith("PORT "), f"script server did not start: {line!r}"
        self.url = f"http://127.0.0.1:{int(line.split()[1])}/v1"

    def requests(self) -> list[dict]:
        if not self.log.is_file():
            return []
        return [json.loads(line) for line in self.log.read_text().splitlines()]

    def stop(self) -> None:
        self.process.terminate()
        self.process.wait(timeout=10)
        self.process.stdout.close()


@pytest.fixture
def aria():
    server = ContractServer().start()
    yield server
    server.stop()


def call(action: dict, **extra) -> dict:
    arguments = {k: v for k, v in action.items() if k != "action_type"}
    return {"name": action["action_type"], "arguments": {**arguments, **extra}}


def record(aria, script_server: ScriptServer, out: Path, *flags: str):
    env = {**os.environ, "ALERTFORGE_TEST_EPISODE_KEY": KEY}
    env.pop("OPENAI_API_KEY", None)
    return subprocess.run(
        [sys.executable, "-m", "alertforge.cli", "record", "--env", "aria",
         "--env-url", aria.url, "--task", "easy", "--seed", "42", "--policy", "llm",
         "--model", MODEL, "--base-url", script_server.url,
         "--api-key-env", "ALERTFORGE_TEST_EPISODE_KEY", "--out", str(out), *flags],
        capture_output=True, text=True, env=env, timeout=60, check=False)


def load(path: Path) -> dict:
    return json.loads(path.read_bytes())


def test_the_action_tools_are_the_14_action_types_with_optional_string_fields():
    assert [tool["function"]["name"] for tool in ACTION_TOOLS] == list(ACTION_TYPES)
    for tool in ACTION_TOOLS:
        parameters = tool["function"]["parameters"]
        assert list(parameters["properties"]) == list(ACTION_FIELDS)
        assert parameters["required"] == []
        assert {p["type"] for p in parameters["properties"].values()} == {"string"}
    assert action_from_call("read_logs", '{"service": "api", "n": 3, "x": "y"}') == (
        {"action_type": "read_logs", "service": "api"},
        {"n": 3, "x": "y"},
    )
    assert action_from_call("noop", "not json") == ({"action_type": "noop"}, {
        "invalid_arguments": "not json"})


def test_protocol_llm_episode_records_actions_rewards_totals_and_metrics(aria, tmp_path):
    script = [
        {"content": "Logs and metrics of the crashing service first.",
         "tool_calls": [call(EASY_ACTIONS[0]), call(EASY_ACTIONS[1])]},
        {"content": "I think it is a memory leak."},  # no tool call: reminded once
        {"content": "", "tool_calls": [call(EASY_ACTIONS[2], priority="high")]},
        {"content": "Diagnosing.", "tool_calls": [call(EASY_ACTIONS[3])]},
        {"content": "Restarting.", "tool_calls": [call(EASY_ACTIONS[4])]},
    ]
    server = ScriptServer(tmp_path / "llm", script)
    try:
        result = record(aria, server, tmp_path / "runs")
        requests = server.requests()
    finally:
        server.stop()
    assert result.returncode == 0, result.stderr
    run_dir = Path(result.stdout.strip())
    assert readable(run_dir.name) == "aria-easy__llm__s42"

    # what the model was sent: the key, the 14 tools, every call answered with its result
    assert len(requests) == 5  # done after the 5th action: nothing asked after it
    assert {r["authorization"] for r in requests} == {f"Bearer {KEY}"}
    body = requests[-1]["body"]
    assert body["model"] == MODEL and body["seed"] == 42
    assert [t["function"]["name"] for t in body["tools"]] == list(ACTION_TYPES)
    tool_messages = [m for m in body["messages"] if m["role"] == "tool"]
    assert [json.loads(m["content"].splitlines()[0])["reward"] for m in tool_messages] == (
        EASY_REWARDS[:4]
    )
    assert '"task_id": "easy"' in body["messages"][1]["content"]

    # what the environment got and gave: the transcript's actions and rewards
    trajectory = load(run_dir / "trajectory.json")
    atif.Trajectory.model_validate(trajectory)
    steps = trajectory["steps"][1:]
    sent = [{"action_type": s["tool_calls"][0]["function_name"], **s["tool_calls"][0]["arguments"]}
            for s in steps]
    assert sent == EASY_ACTIONS
    assert [s["extra"]["env"]["reward"] for s in steps] == EASY_REWARDS
    totals, total = [], 0.0
    for reward in EASY_REWARDS:
        total = round(min(1.0, max(0.0, total + reward)), 6)
        totals.append(total)
    assert [s["extra"]["env"]["total"] for s in steps] == totals
    assert steps[-1]["extra"]["env"]["done"] is True

    # one model turn per step except the second call of turn 1; tokens on every model step
    assert [s["llm_call_count"] for s in steps] == [1, 0, 1, 1, 1]
    for step in steps:
        if step["llm_call_count"]:
            metrics = step["metrics"]
            assert metrics["prompt_tokens"] > 0 and metrics["completion_tokens"] > 0
            assert step["model_name"] == f"{MODEL}-scripted"
        else:
            assert "metrics" not in step
    assert steps[2]["metrics"]["extra"]["llm_calls"] == 2
    assert steps[2]["extra"]["llm"]["replies_without_tool_call"] == ["I think it is a memory leak."]
    assert steps[2]["extra"]["llm"]["dropped_arguments"] == {"priority": "high"}
    assert [s["extra"]["llm"]["turn"] for s in steps] == [1, 1, 2, 3, 4]
    assert steps[0]["message"] == "Logs and metrics of the crashing service first."

    run = load(run_dir / "run.json")
    assert run["status"] == "complete" and run["policy"] == "llm" and run["model"] == MODEL
    assert run["final"]["reward"] == EASY_EXPERT["final_state"]["response"]["info"]["current_score"]
    assert run["final"]["solved"] is True and run["final"]["episode"]["totals_agree"] is True
    assert trajectory["agent"]["model_name"] == MODEL


def test_protocol_llm_episode_stops_at_the_step_limit(aria, tmp_path):
    script = [{"content": "", "tool_calls": [call(a) for a in EASY_ACTIONS[:3]]}]
    server = ScriptServer(tmp_path / "llm", script)
    try:
        result = record(aria, server, tmp_path / "runs", "--max-steps", "2")
        requests = server.requests()
    finally:
        server.stop()
    run_dir = find_run(tmp_path / "runs", "aria-easy__llm__s42")
    steps = load(run_dir / "trajectory.json")["steps"][1:]
    assert [s["tool_calls"][0]["function_name"] for s in steps] == ["read_logs", "read_metrics"]
    assert [s["extra"]["env"]["reward"] for s in steps] == EASY_REWARDS[:2]
    assert len(requests) == 1  # the third call of the turn was never sent
    # the recordings hold a full /state only at an episode's end; mid-episode the contract
    # server answers the episode id alone, so the run ends on its running total, unscored
    assert result.returncode == 0, result.stderr
    final = load(run_dir / "run.json")["final"]
    assert final["source"] == "running-total" and final["episode"]["state"] is False


def test_protocol_llm_episode_resumes_after_an_endpoint_error(aria, tmp_path):
    first = ScriptServer(tmp_path / "llm-1", [
        {"content": "", "tool_calls": [call(EASY_ACTIONS[0])]},
        {"content": "", "tool_calls": [call(EASY_ACTIONS[1])]},
        {"status": 400, "error": "context length exceeded"},
    ])
    try:
        failed = record(aria, first, tmp_path / "runs")
    finally:
        first.stop()
    assert failed.returncode == 1 and "model endpoint error" in failed.stderr
    run_dir = find_run(tmp_path / "runs", "aria-easy__llm__s42")
    assert load(run_dir / "run.json")["status"] == "running"
    assert len(load(run_dir / "trajectory.json")["steps"]) == 3

    second = ScriptServer(tmp_path / "llm-2", [
        {"content": "", "tool_calls": [call(a) for a in EASY_ACTIONS[2:]]},
    ])
    try:
        resumed = record(aria, second, tmp_path / "runs")
        requests = second.requests()
    finally:
        second.stop()
    assert resumed.returncode == 0, resumed.stderr
    # the rebuilt conversation answers both earlier calls by their ids (the server checks)
    messages = requests[0]["body"]["messages"]
    assert [m["role"] for m in messages] == [
        "system", "user", "assistant", "tool", "assistant", "tool"]
    steps = load(run_dir / "trajectory.json")["steps"][1:]
    assert [s["extra"]["env"]["reward"] for s in steps] == EASY_REWARDS
    assert [s["extra"]["llm"]["turn"] for s in steps] == [1, 2, 3, 3, 3]
    assert load(run_dir / "run.json")["status"] == "complete"
