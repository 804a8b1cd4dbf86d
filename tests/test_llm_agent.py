"""Policy llm against a real local OpenAI-compatible server process replying from a script.

These are protocol tests: the server (tests/openai_script_server.py) is a separate process
on 127.0.0.1 that checks what the agent sends (bearer key, tool results answering the
right call ids) and replies with scripted tool calls; the tools, grader, promtool and
amtool are the real ones.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import atif
import pytest
from conftest import find_run
from openai_script_server import StandIn

from contract.files import read_json
from contract.paths import TASKS_DIR, task_dirs
from recorder.agents import llm_alerting as llm_agent
from recorder.agents import llm_endpoint
from recorder.record import record_run

TASK = task_dirs(TASKS_DIR)[0]
KEY = "sk-local-test"


def ScriptServer(tmp: Path, script: list[dict]) -> StandIn:
    """The script server as a child process; ``url`` is its /v1 base URL."""
    return StandIn(tmp, script, KEY)


def _call(name: str, **arguments) -> dict:
    return {"name": name, "arguments": arguments}


def _options(url: str) -> dict:
    return {"base_url": url, "model": "scripted-model", "api_key_env": "ALERTFORGE_TEST_KEY",
            "price_input": 1.0, "price_output": 2.0, "max_retries": 0}


def test_protocol_llm_run_records_tool_calls_grades_metrics_and_resumes(tmp_path, monkeypatch):
    monkeypatch.setenv("ALERTFORGE_TEST_KEY", KEY)
    pristine_am = (TASK / "environment/monitoring/alertmanager/alertmanager.yml").read_text()
    assert pristine_am.count("  routes:\n") == 1
    recording = (TASK / "solution/monitoring/rules/slo-recording.yml").read_text()
    route = next(r for r in read_json(TASK / "tests/spec.json")["requirements"] if r["kind"] == "route")
    team, receiver = route["team"], route["receiver"]
    platform_route = f'  routes:\n  - matchers:\n    - team="{team}"\n    receiver: {receiver}\n'
    script = [
        {"content": "Let me look around.", "tool_calls": [_call("list_files")]},
        {"content": "Reading two files.", "tool_calls": [
            _call("read_file", path="README.md"),
            _call("read_file", path="alertmanager/alertmanager.yml")]},
        {"content": "I think this is fine."},  # no tool call: the agent reminds the model once
        {"tool_calls": [_call("route_test", labels={"team": team})]},
        {"tool_calls": [_call("replace_in_file", path="alertmanager/alertmanager.yml",
                              old="  routes:\n", new=platform_route)]},
        {"tool_calls": [_call("write_file", path="rules/slo-recording.yml", content=recording)]},
        {"tool_calls": [{"name": "read_file", "raw_arguments": "{not json"}]},
        {"status": 400, "error": "scripted outage"},  # the run stops here; resumed below
        {"tool_calls": [_call("run_checks")]},
        {"tool_calls": [_call("route_test", labels={"team": team})]},
        {"content": "Done.", "tool_calls": [_call("submit")]},
    ]
    server = ScriptServer(tmp_path, script)
    try:
        with pytest.raises(llm_endpoint.LLMError, match="scripted outage"):
            record_run(TASK, "llm", out=tmp_path / "runs", options=_options(server.url))
        run_dir = find_run(tmp_path / "runs", f"{TASK.name}__llm__s0")
        assert read_json(run_dir / "run.json")["status"] == "running"
        record_run(TASK, "llm", out=tmp_path / "runs", options=_options(server.url))
        requests = server.requests()
    finally:
        server.stop()

    doc = read_json(run_dir / "trajectory.json")
    atif.Trajectory.model_validate(doc)
    agent_steps = doc["steps"][1:]
    names = [s["tool_calls"][0]["function_name"] for s in agent_steps]
    assert names == ["list_files", "read_file", "read_file", "route_test", "replace_in_file",
                     "write_file", "read_file", "run_checks", "route_test", "submit"]
    # one inference per turn: the second read_file came from the same turn as the first
    assert [s["llm_call_count"] for s in agent_steps] == [1, 1, 0, 1, 1, 1, 1, 1, 1, 1]
    assert "metrics" not in agent_steps[2]
    for step in (s for s in agent_steps if s["llm_call_count"] == 1):
        metrics = step["metrics"]
        assert metrics["prompt_tokens"] > 0 and metrics["completion_tokens"] > 0
        expected = (metrics["prompt_tokens"] * 1.0 + metrics["completion_tokens"] * 2.0) / 1e6
        assert metrics["cost_usd"] == pytest.approx(expected)
        assert step["model_name"] == "scripted-model-scripted"
    reminded = agent_steps[3]["metrics"]  # the text-only reply and the answer, summed
    assert reminded["extra"]["llm_calls"] == 2
    assert agent_steps[3]["extra"]["llm"]["replies_without_tool_call"] == ["I think this is fine."]
    assert agent_steps[3]["observation"]["results"][0]["content"] == "receivers: default-slack"
    assert agent_steps[-2]["observation"]["results"][0]["content"] == f"receivers: {receiver}"
    assert agent_steps[6]["extra"]["tool_error"] is True  # arguments that are not JSON
    assert "invalid_arguments" in agent_steps[6]["tool_calls"][0]["arguments"]

    graded = [s for s in agent_steps if "grade" in (s.get("extra") or {})]
    assert [s["tool_calls"][0]["function_name"] for s in graded] == ["replace_in_file", "write_file"]
    replaced = graded[0]["extra"]
    assert replaced["edits"][0]["path"] == "alertmanager/alertmanager.yml"
    assert platform_route in replaced["edits"][0]["content"]
    assert graded[1]["extra"]["grade"]["reward"] > doc["steps"][0]["extra"]["grade"]["reward"]
    assert agent_steps[-3]["tool_calls"][0]["function_name"] == "run_checks"
    assert "amtool check-config alertmanager/alertmanager.yml: ok" in \
        agent_steps[-3]["observation"]["results"][0]["content"]

    summary = read_json(run_dir / "run.json")
    assert summary["status"] == "complete" and summary["model"] == "scripted-model"
    assert summary["final"]["reward"] == graded[-1]["extra"]["grade"]["reward"]

    assert all(r["authorization"] == f"Bearer {KEY}" for r in requests)
    first = requests[0]["body"]
    assert [t["function"]["name"] for t in first["tools"]] == list(llm_agent_tool_names())
    assert first["messages"][1]["content"] == (TASK / "instruction.md").read_text()
    # after the outage the conversation was rebuilt from the recorded steps: the two reads
    # of one turn are one assistant message, and every tool result answers its call id
    resumed = requests[-3]["body"]["messages"]
    # the failed request, sent again (arguments compared as JSON: run files sort their keys)
    assert _parsed(requests[-4]["body"]["messages"]) == _parsed(resumed)
    two_calls = [m for m in resumed if m["role"] == "assistant" and len(m.get("tool_calls") or []) == 2]
    assert len(two_calls) == 1
    tool_results = [m for m in resumed if m["role"] == "tool"]
    assert len(tool_results) == 7
    assert tool_results[3]["content"] == "receivers: default-slack"


def _parsed(messages: list[dict]) -> list[dict]:
    """Messages with every tool call's arguments parsed (text that is not JSON kept)."""
    out = json.loads(json.dumps(messages))
    for message in out:
        for call in message.get("tool_calls") or []:
            try:
                call["function"]["arguments"] = json.loads(call["function"]["arguments"])
            except json.JSONDecodeError:
                pass
    return out


def llm_agent_tool_names() -> tuple[str, ...]:
    return tuple(spec["function"]["name"] for spec in llm_agent.TOOL_SPECS)


def test_protocol_llm_resume_refuses_a_run_of_another_model(tmp_path, monkeypatch):
    monkeypatch.setenv("ALERTFORGE_TEST_KEY", KEY)
    agent = llm_agent.LLMAgent(llm_endpoint.settings_from(_options("http://127.0.0.1:9/v1")))
    user = {"step_id": 1, "source": "user", "message": "instruction"}
    recorded = {"step_id": 2, "source": "agent", "message": "",
                "tool_calls": [{"tool_call_id": "call_0002", "function_name": "list_files",
                                "arguments": {}}],
                "observation": {"results": [{"source_call_id": "call_0002", "content": "x"}]},
                "extra": {"llm": {"turn": 1, "tool_call_id": "c1", "model": "other-model"}}}
    with pytest.raises(Exception, match="other-model"):
        agent.resume([user, recorded])


def test_record_llm_without_an_endpoint_is_bad_input_naming_the_flag(tmp_path):
    env = {k: v for k, v in os.environ.items()
           if k not in ("OPENAI_BASE_URL", "ALERTFORGE_MODEL", "OPENAI_API_KEY")}
    out = subprocess.run([sys.executable, "-m", "alertforge.cli", "record", "--task", TASK.name,
                          "--policy", "llm", "--out", str(tmp_path)], capture_output=True,
                         text=True, env=env, timeout=120, check=False)
    assert out.returncode == 2, out.stderr
    assert "--base-url" in out.stderr and "Traceback" not in out.stderr
