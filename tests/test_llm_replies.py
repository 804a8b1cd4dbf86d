"""Policy llm against what real OpenAI-compatible servers send: llama-cpp-python 0.3.36's
replies (captured from the real server with SmolLM2-135M, tests/fixtures/llama-cpp/) and the
quirks of other servers, replayed by the stand-in server in its ``--llama-cpp`` mode.

Each reply the stand-in never sent before is recorded as what it is (quirk codes and the
raw reply in ``extra.llm``), exported into the site's ``llm`` parts, and never crashes the
recorder or leaves an empty step.
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path

import atif
import openai_script_server
import pytest
from conftest import find_run

from contract.files import read_json
from contract.paths import TASKS_DIR, task_dirs
from exporter.export import export_site
from recorder.agents.llm_replies import calls_in_text, read_reply

TASK = task_dirs(TASKS_DIR)[0]
FIXTURES = Path(__file__).parent / "fixtures" / "llama-cpp"
REPLIES = json.loads((FIXTURES / "replies.json").read_text(encoding="utf-8"))
KEY = "sk-local-llama"
NAMES = {"read_file", "write_file"}


def _read(name: str):
    body = REPLIES[name]["body"]
    choice = body["choices"][0]
    return read_reply(choice["message"], choice["finish_reason"], "usage" in body, NAMES, 1)


def test_real_llama_cpp_tool_call_is_read_from_tool_calls_never_the_legacy_function_call():
    reply = _read("chatml-function-calling/tools_auto_write")
    body = REPLIES["chatml-function-calling/tools_auto_write"]["body"]
    assert body["choices"][0]["message"]["function_call"]["name"] == "read_file:"  # the quirk
    assert [c["name"] for c in reply.calls] == ["write_file"]
    assert reply.calls[0]["id"].startswith("call__0_write_file_cmpl-")
    assert json.loads(reply.calls[0]["arguments"]) == {"path": "/tmp/out.txt", "content": "Hello, World!"}
    assert reply.quirks == [] and reply.raw is None


def test_real_llama_cpp_empty_answer_and_truncation_are_quirks_with_the_raw_reply():
    empty = _read("chatml-function-calling/tools_auto_greeting")
    assert empty.calls == [] and empty.quirks == ["empty_reply"]
    assert empty.raw == {"content": "", "role": "assistant", "finish_reason": "stop"}
    cut = _read("default/tools_auto_max_tokens_3")
    assert cut.quirks == ["truncated"] and cut.raw["content"] == "The command `"


@pytest.mark.parametrize("text", [
    '<tool_call>\n{"name": "read_file", "arguments": {"path": "README.md"}}\n</tool_call>',
    '{"name": "read_file", "arguments": {"path": "README.md"}}',
    '```json\n{"name": "read_file", "parameters": {"path": "README.md"}}\n```',
    '[{"type": "function", "function": {"name": "read_file", "arguments": "{\\"path\\": \\"README.md\\"}"}}]',
    '[TOOL_CALLS][{"name": "read_file", "arguments": {"path": "README.md"}}]',
    'functions.read_file:\n{"path": "README.md"}',
])
def test_tool_calls_written_in_the_text_are_calls_in_every_known_format(text):
    calls = calls_in_text(text, NAMES)
    assert [(c["name"], json.loads(c["arguments"])) for c in calls] == [("read_file", {"path": "README.md"})]
    reply = read_reply({"content": text}, "stop", True, NAMES, 4)
    assert reply.quirks == ["tool_calls_in_content"] and reply.calls[0]["id"] == "turn4_call1"
    assert reply.raw["content"] == text


def test_prose_and_calls_of_tools_not_offered_stay_prose():
    for text in ['Use {"name": "rm_rf", "arguments": {}} to clean up.',
                 '{"name": "rm_rf", "arguments": {}}', "I will read README.md next."]:
        assert calls_in_text(text, NAMES) == []
    assert read_reply({"content": "I will read it."}, "stop", True, NAMES, 1).quirks == []


def test_refusal_nameless_calls_and_missing_usage_are_told_apart():
    refused = read_reply({"content": None, "refusal": "I can't help with that."}, "stop", True, NAMES, 1)
    assert refused.quirks == ["refusal"] and refused.refusal == "I can't help with that."
    filtered = read_reply({"content": "Sorry."}, "content_filter", True, NAMES, 1)
    assert filtered.quirks == ["refusal"]
    nameless = read_reply({"content": None, "tool_calls": [
        {"id": "", "type": "function", "function": {"name": "", "arguments": "{"}},
        {"id": "c2", "type": "function", "function": {"name": "read_file", "arguments": "{\"pa"}}]},
        "tool_calls", False, NAMES, 2)
    assert [c["id"] for c in nameless.calls] == ["c2"]
    assert nameless.quirks == ["tool_call_without_name", "invalid_arguments", "usage_missing"]


def stand_in(folder: Path, script: list[dict], *flags: str) -> openai_script_server.StandIn:
    """The stand-in server answering as llama-cpp-python (``--llama-cpp``)."""
    return openai_script_server.StandIn(folder, script, KEY, "--llama-cpp", *flags)


def _record(url: str, out: Path, *flags: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "ALERTFORGE_TEST_LLAMA_KEY": KEY}
    return subprocess.run(
        [sys.executable, "-m", "alertforge.cli", "record", "--task", TASK.name, "--policy", "llm",
         "--model", "smollm2", "--base-url", url, "--api-key-env", "ALERTFORGE_TEST_LLAMA_KEY",
         "--out", str(out), *flags], capture_output=True, text=True, env=env, timeout=300,
        check=False)


def _model_file(tmp_path: Path) -> tuple[Path, str]:
    model = tmp_path / "models" / "tiny.Q4_1.gguf"
    model.parent.mkdir()
    model.write_bytes(b"GGUF" + bytes(range(256)) * 64)
    return model, hashlib.sha256(model.read_bytes()).hexdigest()


def test_real_server_replies_are_recorded_as_what_they_are_and_exported(tmp_path):
    model, sha256 = _model_file(tmp_path)
    overflow = REPLIES["chatml-function-calling/overflow_12000_words"]
    script = [
        {"content": '<tool_call>{"name": "list_files", "arguments": {}}</tool_call>'},
        {"tool_calls": [{"name": "read_file", "raw_arguments": '{ "path'}]},  # cut mid-JSON
        {"tool_calls": [{"name": "read_file", "arguments": {"path": "README.md"}}], "omit_usage": True},
        {"content": None, "refusal": "I can't help with that."},  # answered with the reminder
        {"tool_calls": [{"name": "", "arguments": {}},
                        {"name": "read_file", "arguments": {"path": "alertmanager/alertmanager.yml"}}]},
        {"delay_s": 4, "tool_calls": [{"name": "run_checks", "arguments": {}}]},  # too slow
        {"reply_body": REPLIES["chatml-function-calling/tools_auto_write"]["body"]},
        {"reply_status": overflow["status"], "reply_body": overflow["body"]},
    ]
    server = stand_in(tmp_path, script, "--model-file", str(model))
    try:
        slow = _record(server.url, tmp_path / "runs", "--timeout", "1", "--max-retries", "0")
        assert slow.returncode != 0 and "no reply within 1 s (--timeout)" in slow.stderr, slow.stderr
        assert "Traceback" not in slow.stderr and "resume" in slow.stderr
        done = _record(server.url, tmp_path / "runs", "--timeout", "30", "--max-retries", "0")
        assert done.returncode == 0, done.stderr
        requests = server.requests()
    finally:
        server.stop()

    run_dir = find_run(tmp_path / "runs", f"{TASK.name}__llm__s0")
    summary = read_json(run_dir / "run.json")
    assert summary["status"] == "complete"
    assert summary["endpoint"]["server"] == "\U0001f999 llama.cpp Python API"
    assert summary["endpoint"]["server_version"] == "0.3.36"
    assert summary["endpoint"]["models"] == [str(model)]
    assert summary["endpoint"]["model_file"] == {"path": str(model), "bytes": model.stat().st_size,
                                                 "sha256": sha256}
    doc = read_json(run_dir / "trajectory.json")
    atif.Trajectory.model_validate(doc)
    steps = doc["steps"][1:]
    names = [s["tool_calls"][0]["function_name"] for s in steps]
    assert names == ["list_files", "read_file", "read_file", "read_file", "write_file", "submit"]
    info = [(s.get("extra") or {}).get("llm") or {} for s in steps]
    assert info[0]["quirks"] == ["tool_calls_in_content"]
    assert info[0]["raw_reply"]["content"].startswith("<tool_call>")
    assert steps[1]["tool_calls"][0]["arguments"] == {"invalid_arguments": '{ "path'}
    assert info[1]["quirks"] == ["invalid_arguments"] and steps[1]["extra"]["tool_error"] is True
    assert info[2]["quirks"] == ["usage_missing"] and "metrics" not in steps[2]
    assert info[3]["quirks"] == ["refusal", "tool_call_without_name"]
    assert info[3]["raw_replies"][0]["refusal"] == "I can't help with that."
    assert steps[3]["metrics"]["extra"]["llm_calls"] == 2
    assert "function_call" not in json.dumps(info[4])  # a clean reply keeps no raw copy
    stopped = info[5]["stopped"]
    assert stopped["status"] == 400 and stopped["error"]["code"] == "context_length_exceeded"
    assert info[5]["implicit_submit"] is True
    assert all(i.get("raw_reply") or i.get("raw_replies") or i.get("stopped") for i in info if i.get("quirks"))

    bodies = [r["body"] for r in requests]
    assert all(b["tool_choice"] == "auto" for b in bodies)  # else llama-cpp ignores the tools
    assert all(isinstance(m.get("content"), str) for b in bodies for m in b["messages"])
    # the call written in the text went back as a tool call with the model's own words
    assistant = next(m for m in bodies[1]["messages"] if m["role"] == "assistant")
    assert assistant["content"].startswith("<tool_call>") and assistant["tool_calls"][0]["id"] == "turn1_call1"

    site = tmp_path / "site"
    export_site([tmp_path / "runs"], site)
    run_file = read_json(next((site / "data" / "runs").glob("*.json")))
    block = run_file["llm"]
    assert block["endpoint"]["model_file"]["sha256"] == sha256
    assert block["malformed_calls"] == 2 and block["steps_without_usage"] == 1
    assert block["quirks"] == {"tool_calls_in_content": 1, "invalid_arguments": 1, "usage_missing": 1,
                               "refusal": 1, "tool_call_without_name": 1, "context_length_exceeded": 1}
    parts = [s.get("llm") for s in run_file["steps"]]
    assert parts[0] is None and parts[1]["prompt_tokens"] > 0
    assert [q["code"] for q in parts[6]["quirks"]] == ["context_length_exceeded"]
    assert parts[6]["stopped"]["error"]["message"].startswith("This model's maximum context length")


def test_a_prompt_longer_than_the_context_ends_the_run_with_the_servers_error(tmp_path):
    server = stand_in(tmp_path, [{"tool_calls": [{"name": "list_files", "arguments": {}}]}],
                     "--n-ctx", "300")
    try:
        done = _record(server.url, tmp_path / "runs")
    finally:
        server.stop()
    assert done.returncode == 0, done.stderr
    run_dir = find_run(tmp_path / "runs", f"{TASK.name}__llm__s0")
    steps = read_json(run_dir / "trajectory.json")["steps"]
    assert len(steps) == 2 and steps[1]["tool_calls"][0]["function_name"] == "submit"
    error = steps[1]["extra"]["llm"]["stopped"]["error"]
    assert error["code"] == "context_length_exceeded" and "maximum context length is 300" in error["message"]
    assert read_json(run_dir / "run.json")["status"] == "complete"


def test_an_episode_the_endpoint_refuses_ends_with_the_reason_in_run_json(tmp_path):
    from aria_contract_server import ContractServer

    from recorder.importers.aria_transcripts import EXAMPLE_EPISODES

    expert = json.loads((EXAMPLE_EPISODES / "easy-expert.json").read_bytes())
    first = expert["steps"][0]["request"]["json"]
    arguments = {k: v for k, v in first.items() if k != "action_type"}
    model, sha256 = _model_file(tmp_path)
    overflow = REPLIES["chatml-function-calling/overflow_12000_words"]
    script = [{"content": json.dumps({"name": first["action_type"], "arguments": arguments})},
              {"reply_status": overflow["status"], "reply_body": overflow["body"]}]
    aria = ContractServer().start()
    server = stand_in(tmp_path, script, "--model-file", str(model))
    try:
        env = {**os.environ, "ALERTFORGE_TEST_LLAMA_KEY": KEY}
        done = subprocess.run(
            [sys.executable, "-m", "alertforge.cli", "record", "--env", "aria", "--env-url", aria.url,
             "--task", "easy", "--seed", "42", "--policy", "llm", "--model", "smollm2",
             "--base-url", server.url, "--api-key-env", "ALERTFORGE_TEST_LLAMA_KEY",
             "--out", str(tmp_path / "runs")], capture_output=True, text=True, env=env,
            timeout=120, check=False)
    finally:
        server.stop()
        aria.stop()
    # the episode ended after one action: the contract server answers a mid-episode /state
    # with the episode id (as ARIA does), so the run completes with the refusal in its notes
    assert done.returncode == 0, done.stderr
    run_dir = find_run(tmp_path / "runs", "aria-easy__llm__s42")
    summary = read_json(run_dir / "run.json")
    assert summary["endpoint"]["server_version"] == "0.3.36"
    assert summary["endpoint"]["model_file"]["sha256"] == sha256
    assert summary["notes"] == ["policy llm: the endpoint refused turn 2 (context_length_exceeded): "
                                + json.loads(overflow["body"])["error"]["message"]]
    steps = read_json(run_dir / "trajectory.json")["steps"]
    assert [s["tool_calls"][0]["function_name"] for s in steps[1:]] == [first["action_type"]]
    assert steps[1]["extra"]["llm"]["quirks"] == ["tool_calls_in_content"]


def test_only_a_regular_model_file_named_by_absolute_path_is_hashed(tmp_path, monkeypatch):
    from recorder.agents.llm_server import _is_loopback, describe_endpoint, hash_model_file

    model, sha256 = _model_file(tmp_path)
    assert hash_model_file(str(model))["sha256"] == sha256
    link = tmp_path / "link.gguf"
    link.symlink_to(model)
    monkeypatch.chdir(model.parent)
    assert [hash_model_file(p) for p in (str(link), model.name, "/dev/zero", str(tmp_path))] == \
        [None, None, None, None]
    # a server that answers nothing of this: the block says so, no error
    assert describe_endpoint("http://127.0.0.1:9/v1", KEY, 2) == {"base_url": "http://127.0.0.1:9/v1",
                                                                  "models": []}
    server = stand_in(tmp_path, [], "--model-file", str(model))
    try:
        local = describe_endpoint(server.url, KEY)
    finally:
        server.stop()
    assert local["model_file"]["sha256"] == sha256 and local["server_version"] == "0.3.36"
    # a model path named by a server that is not on this machine is never opened
    assert [_is_loopback(url) for url in ("http://localhost:1/v1", "http://[::1]:1/v1",
                                          "http://10.0.0.5:8000/v1", "https://api.example.com/v1")] \
        == [True, True, False, False]
