"""The OpenEnv 0.10 server on 127.0.0.1, driven by openenv 0.10's own clients (issue 17).

Bundled tasks, fresh train tasks (parity reward, grades in observations), held-out tasks
(outcome reward only, nothing of the grading shown), /mcp tool listing and calls, the web
interface, and record-openenv against this server and against another OpenEnv server.
"""

from __future__ import annotations

import base64
import hashlib
import importlib.metadata
import json
import shutil
import sys
import time
import urllib.request
from pathlib import Path

import atif
import pytest
from conftest import assert_run_matches_schema
from openenv_helpers import alertforge_server, free_port, running

from contract.files import read_json
from contract.paths import TASKS_DIR, task_dirs
from contract.task_roots import task_fingerprint
from grader.grade import grade_result
from recorder.agents.base import ScriptedAgent
from recorder.environments.openenv_server.fresh_tasks import FreshTasks

TASK = TASKS_DIR / "af-001-slo-onboarding-easy-s1"
FRESH = {"split": "train", "workflow": "missed-page-postmortem", "tier": "medium"}


@pytest.fixture(scope="module")
def state_dir(tmp_path_factory):
    return tmp_path_factory.mktemp("openenv-state")


@pytest.fixture(scope="module")
def server_url(state_dir):
    with alertforge_server(state_dir) as url:
        yield url


def _post(url: str, body: dict) -> dict:
    request = urllib.request.Request(url, data=json.dumps(body).encode(), method="POST",
                                     headers={"content-type": "application/json"})
    with urllib.request.urlopen(request, timeout=60) as response:
        return json.loads(response.read())


def _solution(task_dir: Path) -> dict[str, str]:
    """The oracle's files of a task folder: repo path -> text."""
    root = task_dir / "solution" / "monitoring"
    return {p.relative_to(root).as_posix(): p.read_text() for p in sorted(root.rglob("*"))
            if p.is_file()}


def _graded_with(task_dir: Path, files: dict[str, str], tmp_path: Path) -> float:
    """The grader's reward for the task's pristine repo with ``files`` written over it."""
    workspace = tmp_path / "graded-here"
    shutil.copytree(task_dir / "environment" / "monitoring", workspace)
    for rel, text in files.items():
        (workspace / rel).parent.mkdir(parents=True, exist_ok=True)
        (workspace / rel).write_text(text)
    return grade_result(task_dir, workspace).reward


def test_openenv_is_0_10_whole_and_openenv_core_is_not_installed():
    """The two packages ship the same modules: one installed over the other mixes files."""
    assert importlib.metadata.version("openenv").startswith("0.10.")
    with pytest.raises(importlib.metadata.PackageNotFoundError):
        importlib.metadata.version("openenv-core")
    dist = importlib.metadata.distribution("openenv")
    hashed = [f for f in dist.files if f.hash and f.parts[0] in ("openenv", "openenv_core")]
    differ = [str(f) for f in hashed if base64.urlsafe_b64encode(hashlib.sha256(
        f.locate().read_bytes()).digest()).rstrip(b"=").decode() != f.hash.value]
    assert len(hashed) > 150 and differ == []


def test_fresh_train_task_is_new_reproducible_and_its_parity_rewards_sum_to_the_grade(
        server_url, state_dir, tmp_path):
    from openenv.core import GenericEnvClient

    bundled = {t.name: (t / "instruction.md").read_text() for t in task_dirs()}
    with GenericEnvClient(base_url=server_url).sync() as env:
        first = env.reset(seed=7, **FRESH)
        seven = first.observation
        assert seven["task_id"] == "af-train-missed-page-postmortem-medium-s7"
        assert seven["task_id"] not in bundled and seven["instruction"] not in bundled.values()
        assert (seven["split"], seven["workflow"], seven["tier"], seven["seed"]) == \
            ("train", "missed-page-postmortem", "medium", 7)
        assert isinstance(seven["grade"]["checks"], str) and seven["grade"]["failed"]
        eight = env.reset(seed=8, **FRESH).observation
        assert eight["task_id"].endswith("-s8") and eight["instruction"] != seven["instruction"]
        again = env.reset(seed=7, **FRESH)
        assert again.observation["instruction"] == seven["instruction"]
        assert again.observation["grade"] == {**seven["grade"], "grade_s": again.observation["grade"]["grade_s"]}
        cached = [p.name for p in (state_dir / "tasks").iterdir() if p.is_dir()]
        assert sum(n.startswith(seven["task_id"] + "-") for n in cached) == 1  # built once
        # a client builds the same train task with the same generator
        here = FreshTasks(tmp_path / "client-state").task("train", FRESH["workflow"], FRESH["tier"], 7)
        served = next(p for p in (state_dir / "tasks").iterdir() if p.name.startswith(seven["task_id"] + "-"))
        assert task_fingerprint(here.path) == task_fingerprint(served)
        assert task_fingerprint(served) not in {task_fingerprint(t) for t in task_dirs()}
        rewards = [again.reward]
        for rel, text in _solution(here.path).items():
            step = env.step({"tool": "write_file", "path": rel, "content": text})
            assert step.observation["grade"]["reward"] == step.observation["level"]
            rewards.append(step.reward)
        end = env.step({"tool": "submit"})
        rewards.append(end.reward)
        assert end.done and end.observation["level"] == 1.0
    assert sum(rewards) == pytest.approx(_graded_with(here.path, _solution(here.path), tmp_path),
                                         abs=1e-12)
    assert sum(rewards) == pytest.approx(1.0, abs=1e-12) and all(r >= 0 for r in rewards[1:-1])


def test_heldout_gives_outcome_reward_only_and_hides_grading(server_url, state_dir, tmp_path):
    from openenv.core import GenericEnvClient

    with GenericEnvClient(base_url=server_url).sync() as env:
        train = env.reset(seed=7, **FRESH).observation
        first = env.reset(seed=7, **{**FRESH, "split": "heldout"})
        held = first.observation
        assert held["task_id"] == "af-heldout-missed-page-postmortem-medium-n7"
        assert held["instruction"] != train["instruction"] and first.reward == 0.0
        assert held["grade"] is None and held["level"] is None
        state = env.state()
        assert state["split"] == "heldout" and state["level"] is None
        assert state["reward_mode"] == "outcome"
        # the test can see the server's cache; a client cannot
        folder = next(p for p in (state_dir / "tasks").iterdir() if p.name.startswith(held["task_id"] + "-"))
        spec = read_json(folder / "tests" / "spec.json")
        assert spec["seed"] >= 2**32 and str(spec["seed"]) not in json.dumps(held)
        files = _solution(folder)
        steps = [env.step({"tool": "write_file", "path": rel, "content": text})
                 for rel, text in files.items()]
        steps.append(env.step({"tool": "replace_in_file", "path": "README.md", "old": "zzz-none",
                               "new": "x"}))
        for step in steps:
            assert step.reward == 0.0 and not step.done
            assert step.observation["grade"] is None and step.observation["level"] is None
            assert "check" not in step.observation["output"].lower()
        assert env.state()["level"] is None
        end = env.step({"tool": "submit"})
    assert end.done and end.reward == _graded_with(folder, files, tmp_path) == 1.0
    assert end.observation["level"] == end.reward and end.observation["grade"] is None
    assert (state_dir / "heldout-master-seed").stat().st_mode & 0o077 == 0


def test_reset_errors_name_the_argument_and_the_session_stays_usable(server_url):
    from openenv.core import GenericEnvClient

    with GenericEnvClient(base_url=server_url).sync() as env:
        with pytest.raises(RuntimeError, match="unknown reset argument.*teir"):
            env.reset(seed=1, split="train", teir="easy")
        with pytest.raises(RuntimeError, match="bundled task is public"):
            env.reset(task=TASK.name, split="heldout")
        with pytest.raises(RuntimeError, match="outcome reward only"):
            env.reset(seed=1, split="heldout", reward_mode="parity")
        with pytest.raises(RuntimeError, match="unknown workflow"):
            env.reset(seed=1, workflow="nope", tier="easy")
        assert env.reset(task=TASK.name).observation["task_id"] == TASK.name
    stateless = _post(server_url + "/reset", {"seed": 7, **FRESH})
    assert stateless["observation"]["task_id"] == "af-train-missed-page-postmortem-medium-s7"


def test_mcp_lists_and_calls_the_benchmark_tools(server_url, tmp_path):
    from openenv.core import MCPToolClient

    listed = _post(server_url + "/mcp", {"jsonrpc": "2.0", "id": 1, "method": "tools/list",
                                         "params": {}})
    tools = {t["name"]: t["inputSchema"] for t in listed["result"]["tools"]}
    assert set(tools) == {"list_files", "read_file", "write_file", "replace_in_file",
                          "run_checks", "route_test", "submit"}
    assert tools["write_file"]["required"] == ["path", "content"]
    unsessioned = _post(server_url + "/mcp", {"jsonrpc": "2.0", "id": 2, "method": "tools/call",
                                              "params": {"name": "list_files", "arguments": {}}})
    assert "no episode running" in unsessioned["result"]["structured_content"]["output"]
    here = FreshTasks(tmp_path / "client").task("train", FRESH["workflow"], FRESH["tier"], 7)
    rel, text = next(iter(_solution(here.path).items()))
    with MCPToolClient(base_url=server_url).sync() as client:
        client.reset(seed=7, **FRESH)
        assert {t.name for t in client.list_tools()} == set(tools)
        listing = client.call_tool("list_files")
        assert rel in listing["output"].splitlines() and listing["step"] == 1
        wrote = client.call_tool("write_file", path=rel, content=text)
        assert wrote["step"] == 2 and wrote["grade"]["reward"] == wrote["level"] > 0
        assert wrote["reward"] == pytest.approx(wrote["grade"]["delta"], abs=1e-6)
        route = client.call_tool("route_test", labels={"team": "nobody", "severity": "page"})
        assert route["output"].startswith("receivers: ") and not route["tool_error"]


@pytest.mark.browser
def test_web_interface_serves_episodes(tmp_path, page):
    with alertforge_server(tmp_path / "state", {"ENABLE_WEB_INTERFACE": "true"}) as url:
        page.goto(url + "/web/")
        page.get_by_role("button", name="Reset").first.click(timeout=60_000)
        page.get_by_text("af-train-", exact=False).first.wait_for(timeout=60_000)
        assert "split" in page.inner_text("body") and page.page_errors == []
        with urllib.request.urlopen(url + "/web/", timeout=30) as response:
            page = response.read().decode()
        assert response.status == 200 and "gradio" in page.lower()
        reset = _post(url + "/web/reset", {"seed": 7, **FRESH})
        assert reset["observation"]["task_id"] == "af-train-missed-page-postmortem-medium-s7"
        step = _post(url + "/web/step", {"action": {"tool": "read_file", "path": "README.md"}})
        assert step["observation"]["output"].startswith("# ") and step["observation"]["step"] == 1
        with urllib.request.urlopen(url + "/web/state", timeout=30) as response:
            assert json.loads(response.read())["step_count"] == 1


def test_run_driven_through_openenv_sums_step_rewards_to_the_final_reward(server_url, tmp_path):
    from recorder.record_openenv import OpenEnvRecording, record_openenv

    solution = TASK / "solution" / "monitoring" / "rules"
    agent = ScriptedAgent([("read_file", {"path": "README.md"})] + [
        ("write_file", {"path": f"rules/{name}", "content": (solution / name).read_text()})
        for name in ("slo-recording.yml",)] + [("list_files", {}), ("submit", {})])
    run_dir = record_openenv(server_url, agent, OpenEnvRecording(
        out=tmp_path, readable="openenv-scripted", policy="scripted",
        reset={"task": TASK.name, "seed": 0}, task_dir=TASK))
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
    assert {"split", "workflow", "tier", "seed", "level"} <= set(schema["state"]["properties"])


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


def test_record_openenv_cli_fresh_train_oracle_and_heldout_actions(server_url, tmp_path,
                                                                    capsys, monkeypatch):
    from alertforge.cli import main

    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "client-state"))
    fresh = ["--split", "train", "--workflow", FRESH["workflow"], "--tier", FRESH["tier"],
             "--seed", "7"]
    code = main(["record-openenv", "--url", server_url, *fresh, "--policy", "oracle",
                 "--out", str(tmp_path / "runs")])
    assert code == 0, capsys.readouterr().err
    run = read_json(Path(capsys.readouterr().out.strip().splitlines()[-1]) / "run.json")
    assert run["kind"] == "alerting" and run["final"]["reward"] == 1.0
    assert run["task"]["id"] == "af-train-missed-page-postmortem-medium-s7" and run["checks"]
    held = ["--split", "heldout", "--workflow", FRESH["workflow"], "--tier", FRESH["tier"]]
    refused = main(["record-openenv", "--url", server_url, *held, "--policy", "oracle",
                    "--out", str(tmp_path / "runs")])
    assert refused == 2 and "held-out tasks are hidden" in capsys.readouterr().err
    actions = tmp_path / "actions.json"
    actions.write_text(json.dumps([{"tool": "list_files"}, {"tool": "submit"}]))
    code = main(["record-openenv", "--url", server_url, *held, "--actions", str(actions),
                 "--out", str(tmp_path / "runs")])
    assert code == 0, capsys.readouterr().err
    run_dir = Path(capsys.readouterr().out.strip().splitlines()[-1])
    run = read_json(run_dir / "run.json")
    assert run["kind"] == "episode" and run["final"]["reward"] == 0.0
    assert (run["task"]["workflow"], run["task"]["tier"]) == (FRESH["workflow"], FRESH["tier"])
    steps = read_json(run_dir / "trajectory.json")["steps"]
    assert all("grade" not in s["extra"] for s in steps)
    assert [s["extra"]["env"]["observation"]["level"] for s in steps] == [None, None, 0.0]


def test_record_openenv_records_another_openenv_server(tmp_path, capsys):
    from alertforge.cli import main

    port = free_port()
    counter = str(Path(__file__).parent / "openenv_counter_env.py")
    actions = tmp_path / "actions.json"
    actions.write_text(json.dumps([{"add": 2}, {"add": 3}, {"add": 9}]))
    with running([sys.executable, counter, str(port)], port) as url:
        code = main(["record-openenv", "--url", url, "--actions", str(actions),
                     "--reset-json", '{"target": 5}', "--out", str(tmp_path / "runs")])
    assert code == 0, capsys.readouterr().err
    run_dir = Path(capsys.readouterr().out.strip().splitlines()[-1])
    assert_run_matches_schema(run_dir)
    run = read_json(run_dir / "run.json")
    assert run["kind"] == "episode" and run["status"] == "complete"
    assert run["openenv"] == {"reset": {"seed": 0, "target": 5}, "reward_sum": 5.0}
    steps = read_json(run_dir / "trajectory.json")["steps"]
    assert [s["extra"]["env"]["observation"]["total"] for s in steps] == [0, 2, 5]
    assert steps[-1]["extra"]["env"]["done"] is True


def _post_status(url: str, body: bytes, headers: dict[str, str] | None = None) -> tuple[int, dict]:
    request = urllib.request.Request(url, data=body, method="POST",
                                     headers={"content-type": "application/json", **(headers or {})})
    try:
        with urllib.request.urlopen(request, timeout=60) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as err:
        return err.code, json.loads(err.read() or b"{}")


def test_http_reset_refuses_bad_arguments_with_422_and_an_oversized_body_with_413(server_url):
    """POST /reset answers what /ws says (the reason), not HTTP 500 and a traceback; a body
    far beyond any real request is refused before it is read."""
    status, body = _post_status(server_url + "/reset", json.dumps({"seed": 1, "teir": "easy"}).encode())
    assert status == 422 and "unknown reset argument" in body["detail"] and "teir" in body["detail"]
    status, body = _post_status(server_url + "/reset", json.dumps({"seed": 1, "workflow": "nope",
                                                                   "tier": "easy"}).encode())
    assert status == 422 and "unknown workflow" in body["detail"]
    import http.client
    from urllib.parse import urlsplit

    where = urlsplit(server_url)
    conn = http.client.HTTPConnection(where.hostname, where.port, timeout=30)
    conn.putrequest("POST", "/step")  # 5 MiB announced: answered before a byte of it is sent
    conn.putheader("Content-Type", "application/json")
    conn.putheader("Content-Length", str(5 << 20))
    conn.endheaders()
    response = conn.getresponse()
    assert response.status == 413 and "request body over" in json.loads(response.read())["detail"]
    conn.close()
    conn = http.client.HTTPConnection(where.hostname, where.port, timeout=30)
    conn.putrequest("POST", "/step")  # no length said: a chunked body is refused unread
    conn.putheader("Content-Type", "application/json")
    conn.putheader("Transfer-Encoding", "chunked")
    conn.endheaders()
    response = conn.getresponse()
    assert response.status == 411 and "Content-Length" in json.loads(response.read())["detail"]
    conn.close()
    from websockets.exceptions import ConnectionClosed
    from websockets.sync.client import connect

    with connect(f"ws://{where.hostname}:{where.port}/ws", max_size=None) as socket:
        socket.send("x" * (5 << 20))  # a /ws message over the cap closes the socket (1009)
        with pytest.raises(ConnectionClosed) as closed:
            socket.recv(timeout=30)
    assert closed.value.rcvd is not None and closed.value.rcvd.code == 1009
    assert _post(server_url + "/reset", {"seed": 7, **FRESH})["observation"]["task_id"]


def test_sessions_are_bounded_and_an_idle_one_is_closed(tmp_path):
    """``--max-sessions 1 --session-idle-timeout 1``: a second MCP session is refused while
    the first is open, with the capacity in the answer; once the first sits unused past the
    timeout the server closes it (openenv's reaper looks every 5 s) and a new one opens."""
    from openenv_helpers import free_port, running

    port = free_port()
    command = [sys.executable, "-m", "alertforge.cli", "serve-openenv", "--port", str(port),
               "--state-dir", str(tmp_path / "state"), "--max-sessions", "1", "--session-idle-timeout", "1"]
    with running(command, port) as url:
        create = {"jsonrpc": "2.0", "id": 1, "method": "openenv/session/create", "params": {}}
        first = _post(url + "/mcp", create)
        assert first["result"]["session_id"]
        refused = _post(url + "/mcp", create)
        assert refused["error"]["data"] == {"active_sessions": 1, "max_sessions": 1}, refused
        deadline = time.monotonic() + 60
        while "result" not in (again := _post(url + "/mcp", create)):
            assert time.monotonic() < deadline, again
            time.sleep(1)
        assert again["result"]["session_id"] != first["result"]["session_id"]
