"""Contract tests of the episode recorder's HTTP and WebSocket adapters, with real ARIA responses.

The server (tests/aria_contract_server.py) answers from the recorded transcripts, so every
answer the recorder sees is one the real ARIA server gave; a recording of a transcript's own
actions must give the run that importing the transcript gives.
"""

from __future__ import annotations

import json
import subprocess
import sys
import threading
from pathlib import Path

import pytest
import yaml
from aria_contract_server import ContractServer
from conftest import assert_run_matches_schema, find_run, readable

from contract.errors import BadInput, EnvironmentFailure
from recorder.agents.episode_policies import (
    ACTION_TYPES,
    RandomPolicy,
    ScriptedPolicy,
    action_of,
    read_actions,
)
from recorder.environments.aria import HttpEnvironment, WebSocketEnvironment
from recorder.episodes.live import EpisodeRecording, record_episode
from recorder.importers.aria_transcripts import EXAMPLE_EPISODES, import_episodes

TRANSCRIPTS = {p.stem: p for p in sorted(EXAMPLE_EPISODES.glob("*.json"))}


def load(path: Path) -> dict:
    return json.loads(path.read_bytes())


def actions_of(name: str) -> list[dict]:
    return [call["request"]["json"] for call in load(TRANSCRIPTS[name])["steps"]]


def env_steps(run_dir: Path) -> list[dict]:
    """What must not depend on how the episode came in: action, reward, total, done, info, obs."""
    steps = load(run_dir / "trajectory.json")["steps"]
    rows = []
    for step in steps:
        env = step["extra"]["env"]
        call = (step.get("tool_calls") or [{}])[0]
        rows.append(
            {
                "action": call.get("function_name"),
                "arguments": call.get("arguments"),
                **{k: env.get(k) for k in ("reward", "total", "done", "info", "observation")},
                "failed": "error" in env,
            }
        )
    return rows


@pytest.fixture
def server():
    running = ContractServer().start()
    yield running
    running.stop()


@pytest.fixture(scope="module")
def imported(tmp_path_factory) -> dict[str, Path]:
    out = tmp_path_factory.mktemp("imported")
    folders = import_episodes(list(TRANSCRIPTS.values()), out)
    return {load(f / "run.json")["env"]["source"]["file"][:-5]: f for f in folders}


def record(server, name: str, out: Path, transport: str, extra_actions=(), **options) -> Path:
    transcript = load(TRANSCRIPTS[name])
    policy = ScriptedPolicy(actions_of(name) + list(extra_actions), label=f"scripted-{name}")
    return record_episode(
        server.url,
        transcript["task_id"],
        transcript["seed"],
        policy,
        recording=EpisodeRecording(out=out, transport=transport, **options),
    )


def assert_same_as_import(run_dir: Path, imported_dir: Path) -> None:
    recorded, expected = env_steps(run_dir), env_steps(imported_dir)
    if load(run_dir / "run.json")["task"]["env_task_id"] == "generated":
        # two recordings of generated/12345 differ in uuids and timestamps from /reset on
        # (findings.determinism_generated_seed12345): the server answers /reset from the
        # first, and the steps of the transcript whose actions these are
        recorded[0]["observation"] = expected[0]["observation"] = None
    assert recorded == expected
    run, reference = load(run_dir / "run.json"), load(imported_dir / "run.json")
    assert run["status"] == "complete"
    assert run["final"]["reward"] == reference["final"]["reward"]
    assert run["final"]["episode"]["parts"] == reference["final"]["episode"]["parts"]


@pytest.mark.parametrize("name", ["easy-expert", "medium-poor", "failover-expert", "hard-poor"])
def test_contract_http_recording_equals_the_imported_transcript(server, imported, tmp_path, name):
    run_dir = record(server, name, tmp_path, "http")
    assert_same_as_import(run_dir, imported[name])
    assert_run_matches_schema(run_dir)
    run = load(run_dir / "run.json")
    assert run["source"] == "aria" and run["env"]["transport"] == "http" and run["seed"] == load(TRANSCRIPTS[name])["seed"]
    steps = len(actions_of(name))
    checks = [i for i in range(1, steps + 1) if i == 1 or i % 10 == 0]
    expected = ["/reset", "/state"]  # the episode id right after the reset
    for i in range(1, steps + 1):
        expected += ["/step"] + (["/state"] if i in checks else [])
    assert [r[1] for r in server.requests] == [*expected, "/state"]


def test_contract_http_server_error_then_dropped_connection_is_retried(server, imported, tmp_path):
    run_dir = record(server, "generated-expert", tmp_path, "http")
    assert_same_as_import(run_dir, imported["generated-expert"])
    assert server.dropped == 1  # the keep-alive socket after the 500 was reset by the server
    steps = load(run_dir / "trajectory.json")["steps"]
    failed, retried = steps[3], steps[4]
    assert failed["extra"]["env"]["error"] == {"status": 500, "message": "Internal Server Error"}
    assert "retried_after" not in failed["extra"]["transport"]
    assert retried["extra"]["transport"]["retried_after"].startswith("ConnectionResetError")
    assert retried["extra"]["env"]["done"] is True


def test_contract_ws_records_all_16_in_parallel(server, imported, tmp_path):
    results: dict[str, Path] = {}
    errors: list[BaseException] = []

    def work(name):
        try:
            results[name] = record(server, name, tmp_path, "ws")
        except BaseException as err:  # noqa: BLE001 - reported below
            errors.append(err)

    threads = [threading.Thread(target=work, args=(name,)) for name in TRANSCRIPTS]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    assert errors == []
    assert server.ws_connections == 16
    for name, run_dir in results.items():
        assert_same_as_import(run_dir, imported[name])
        assert load(run_dir / "run.json")["env"]["transport"] == "ws"


def test_contract_ws_server_error_is_the_steps_result(server, tmp_path):
    run_dir = record(server, "generated-expert", tmp_path, "ws")
    failed = load(run_dir / "trajectory.json")["steps"][3]
    assert failed["extra"]["env"]["error"] == {
        "status": None,
        "message": "'Action' object has no attribute 'diagnosis'",
    }
    assert "'diagnosis'" in failed["observation"]["results"][0]["content"]
    assert server.dropped == 0


def test_contract_recording_stops_at_done_and_never_steps_after_it(server, imported, tmp_path):
    # the real server answers a step after done with done: false, so stopping is on us
    run_dir = record(
        server,
        "easy-expert",
        tmp_path,
        "http",
        extra_actions=[{"action_type": "noop"}, {"action_type": "noop"}],
    )
    steps = [r for r in server.requests if r[1] == "/step"]
    assert len(steps) == len(actions_of("easy-expert"))
    assert load(run_dir / "run.json")["final"]["episode"]["resolution"] == "incident_resolved"
    env = HttpEnvironment(server.url)  # what a step after done gives (findings.step_after_done)
    outcome = env.step({"action_type": "noop"})
    assert (outcome.done, outcome.reward, outcome.observation["step"]) == (False, 0.0, 6)
    env.close()


def test_contract_shared_http_session_interference_fails_the_run(server, tmp_path):
    class Interrupted(ScriptedPolicy):
        """Before its second action another client resets the server's one HTTP environment."""

        def decide(self, observation, index):
            if index == 1:
                other = HttpEnvironment(server.url)
                other.reset("security", 42)
                other.close()
            return super().decide(observation, index)

    policy = Interrupted(
        [
            {"action_type": "read_logs", "service": "user-service"},
            {"action_type": "restart_service", "service": "auth-service"},
        ],
        label="interrupted",
    )
    with pytest.raises(EnvironmentFailure, match="another episode"):
        record_episode(server.url, "easy", 42, policy, recording=EpisodeRecording(out=tmp_path))
    run = load(find_run(tmp_path, "aria-easy__interrupted__s42") / "run.json")
    assert run["status"] == "failed" and "shared HTTP environment" in run["error"]
    assert run["steps"] == 2  # the other episode's answer is not recorded as this one's


def test_contract_parallel_http_recordings_take_turns_on_one_server(server, imported, tmp_path):
    names = ["easy-expert", "security-expert", "database-poor"]
    results, errors = {}, []

    def work(name):
        try:
            results[name] = record(server, name, tmp_path, "http")
        except BaseException as err:  # noqa: BLE001 - reported below
            errors.append(err)

    threads = [threading.Thread(target=work, args=(name,)) for name in names]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    assert errors == []
    for name in names:
        assert_same_as_import(results[name], imported[name])
    resets = [i for i, r in enumerate(server.requests) if r[1] == "/reset"]
    states = [i for i, r in enumerate(server.requests) if r[1] == "/state"]
    assert all(state < reset for state, reset in zip(states, resets[1:]))  # one episode at a time


def test_interrupted_recording_resumes_by_replaying_the_journal(server, imported, tmp_path):
    class Crash(Exception):
        pass

    class CrashingOnce(ScriptedPolicy):
        crashed = False

        def decide(self, observation, index):
            if index == 3 and not CrashingOnce.crashed:
                CrashingOnce.crashed = True
                raise Crash
            return super().decide(observation, index)

    policy = CrashingOnce(actions_of("medium-expert"), label="resumed")
    with pytest.raises(Crash):
        record_episode(server.url, "medium", 42, policy, recording=EpisodeRecording(out=tmp_path))
    run_dir = find_run(tmp_path, "aria-medium__resumed__s42")
    assert load(run_dir / "run.json")["status"] == "running"
    with open(run_dir / "journal.jsonl", "ab") as journal:
        journal.write(b'{"step_id": 5, "torn')  # a write cut short by the crash
    record_episode(server.url, "medium", 42, policy, recording=EpisodeRecording(out=tmp_path))
    assert_same_as_import(run_dir, imported["medium-expert"])
    steps = [r[2] for r in server.requests if r[1] == "/step"]
    assert steps[:3] == steps[3:6] == actions_of("medium-expert")[:3]  # replayed once


def test_ws_connection_lost_mid_episode_is_replayed_on_a_new_connection(server, imported, tmp_path):
    server.drop_ws_at_message = 4  # fault injection: reset, 2 steps, then the 3rd step is lost
    run_dir = record(server, "easy-expert", tmp_path, "ws")
    assert_same_as_import(run_dir, imported["easy-expert"])
    assert server.ws_connections == 2 and server.dropped == 1
    step = load(run_dir / "trajectory.json")["steps"][3]
    assert "connection lost" in step["extra"]["transport"]["retried_after"]


def test_unknown_task_is_refused_as_bad_input(server, tmp_path):
    for transport in ("http", "ws"):
        with pytest.raises(BadInput, match="refused this task"):
            record_episode(
                server.url,
                "nope",
                1,
                ScriptedPolicy([{"action_type": "noop"}]),
                recording=EpisodeRecording(out=tmp_path, transport=transport),
            )


def test_ws_adapter_messages_match_the_recorded_session_log(server):
    env = WebSocketEnvironment(server.url)
    early = env.step({"action_type": "noop"})
    assert early.error["message"] == "Call reset before step"
    observation, transport = env.reset("easy", 42)
    assert observation["task_id"] == "easy" and transport["type"] == "observation"
    outcome = env.step({"action_type": "read_logs", "service": "user-service"})
    assert (outcome.reward, outcome.done) == (0.15, False)
    env.close()


def test_cli_records_over_ws_with_an_actions_file(server, imported, tmp_path):
    actions = tmp_path / "easy.yaml"
    actions.write_text(yaml.safe_dump({"actions": actions_of("easy-expert")}))
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "alertforge.cli",
            "record",
            "--env",
            "aria",
            "--env-url",
            server.url,
            "--transport",
            "ws",
            "--task",
            "easy",
            "--seed",
            "42",
            "--policy",
            "scripted",
            "--actions",
            str(actions),
            "--out",
            str(tmp_path / "runs"),
        ],
        check=False,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    run_dir = Path(result.stdout.strip())
    assert readable(run_dir.name) == "aria-easy__scripted-easy__s42"
    assert_same_as_import(run_dir, imported["easy-expert"])


def test_bad_actions_file_is_bad_input_naming_the_file(tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text("- action_type: reboot_everything\n")
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "alertforge.cli",
            "record",
            "--env",
            "aria",
            "--env-url",
            "http://127.0.0.1:9",
            "--task",
            "easy",
            "--policy",
            "scripted",
            "--actions",
            str(bad),
        ],
        check=False,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 2 and str(bad) in result.stderr
    assert "reboot_everything" in result.stderr
    bad.write_text("- &a {action_type: noop}\n- *a\n")
    with pytest.raises(BadInput, match="aliases"):
        read_actions(bad)


def test_random_policy_is_valid_and_repeatable_per_seed():
    observation = load(TRANSCRIPTS["easy-expert"])["reset"]["response"]
    first = [action_of(RandomPolicy(7).decide(observation, i)) for i in range(40)]
    assert first == [action_of(RandomPolicy(7).decide(observation, i)) for i in range(40)]
    assert first != [action_of(RandomPolicy(8).decide(observation, i)) for i in range(40)]
    names = {row["name"] for row in observation["services"]}
    for action in first:
        assert action["action_type"] in ACTION_TYPES
        assert all(isinstance(value, str) for value in action.values())
        if action["action_type"] in ("restart_service", "read_logs"):
            assert action["service"] in names
