"""Dual-agent sessions recorded live (``record --env aria --mode dual``) equal their import.

Against tests/aria_contract_server.py, which answers /multi-agent/... from the real
sessions of tests/fixtures/aria-2026-12/ (``*-dual-agent-seed{3,42}.json``, SOURCE.md). The
scripted sessions use examples/aria-actions/dual-*.yaml (made from those transcripts); the
llm session uses tests/openai_script_server.py as a stand-in model that calls the recorded
findings and actions.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from aria_contract_server import SET2, ContractServer
from test_episodes_llm import KEY, MODEL, ScriptServer, call

from recorder.importers.aria_transcripts import import_episodes

ROOT = Path(__file__).resolve().parent.parent
ACTIONS = ROOT / "examples" / "aria-actions"


def load(path: Path) -> dict:
    return json.loads(path.read_bytes())


@pytest.fixture
def server():
    running = ContractServer().start()
    yield running
    running.stop()


def cli(*args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "alertforge.cli", *args], check=False,
                          capture_output=True, text=True, timeout=180, env=env)


def lanes(run_dir: Path) -> list[tuple]:
    """What must not depend on how the session came in: who acted, what, and the answers."""
    rows = []
    for step in load(run_dir / "trajectory.json")["steps"][1:]:
        env, call_ = step["extra"]["env"], step["tool_calls"][0]
        rows.append((env["agent"], call_["function_name"], call_["arguments"], env["reward"],
                     env.get("observer_reward"), env["total"], env["done"], env.get("finding_index"),
                     env.get("findings_seen"), json.dumps(env.get("observation"), sort_keys=True)))
    return rows


def entries_of(transcript: dict) -> list[dict]:
    return [{"finding": c["request"]["json"]["finding"]} if "/step/a/" in c["request"]["path"]
            else c["request"]["json"] for c in transcript["steps"]]


@pytest.mark.parametrize("name", sorted(p.name for p in SET2.glob("*dual-agent-seed*.json")))
def test_a_scripted_dual_session_records_what_importing_it_gives(server, tmp_path, name):
    transcript = load(SET2 / name)
    actions = tmp_path / "session.yaml"
    actions.write_text(yaml.safe_dump({"actions": entries_of(transcript)}))
    result = cli("record", "--env", "aria", "--mode", "dual", "--env-url", server.url, "--task",
                 transcript["task_id"], "--seed", str(transcript["seed"]), "--policy", "scripted",
                 "--actions", str(actions), "--out", str(tmp_path / "runs"))
    assert result.returncode == 0, result.stderr
    run_dir = Path(result.stdout.strip())
    imported = import_episodes([SET2 / name], tmp_path / "imported")[0]
    assert lanes(run_dir) == lanes(imported)
    run = load(run_dir / "run.json")
    assert run["status"] == "complete" and run["final"] == {
        **load(imported / "run.json")["final"]}
    agents = run["final"]["episode"]["agents"]
    assert agents["observer"]["accepted"] == transcript["summary"]["n_findings"]
    assert agents["responder"]["actions"] == transcript["summary"]["n_steps"]


def test_the_shipped_dual_action_lists_are_the_recorded_sessions():
    for path in sorted(ACTIONS.glob("dual-*.yaml")):
        task, seed = path.stem.split("-")[1], int(path.stem.split("seed")[1])
        transcript = load(SET2 / f"{task}-dual-agent-seed{seed}.json")
        assert yaml.safe_load(path.read_text())["actions"] == entries_of(transcript), path.name


def test_a_dual_session_the_server_cannot_open_is_bad_input(server, tmp_path):
    actions = tmp_path / "a.yaml"
    actions.write_text(yaml.safe_dump({"actions": [{"finding": "something seen"},
                                                   {"action_type": "noop"}]}))
    result = cli("record", "--env", "aria", "--mode", "dual", "--env-url", server.url, "--task",
                 "generated", "--seed", "3", "--policy", "scripted", "--actions", str(actions),
                 "--out", str(tmp_path / "runs"))
    assert result.returncode == 2, result.stderr
    assert "no dual-agent session" in result.stderr and "Traceback" not in result.stderr


def test_findings_in_a_single_agent_action_list_are_refused(server, tmp_path):
    result = cli("record", "--env", "aria", "--env-url", server.url, "--task", "easy", "--seed",
                 "3", "--policy", "scripted", "--actions", str(ACTIONS / "dual-easy-seed3.yaml"),
                 "--out", str(tmp_path / "runs"))
    assert result.returncode == 2 and "--mode dual" in result.stderr


def test_llm_observer_and_responder_with_a_stand_in_model(server, tmp_path):
    transcript = load(SET2 / "easy-dual-agent-seed3.json")
    entries = entries_of(transcript)
    findings = [e["finding"] for e in entries if "finding" in e]
    actions = [e for e in entries if "finding" not in e]
    script = []
    for index, action in enumerate(actions):  # observer turn (while it has findings), responder turn
        if index < len(findings):
            script.append({"content": "", "tool_calls": [
                {"name": "report_finding", "arguments": {"finding": findings[index]}}]})
        elif index == len(findings):  # the observer has nothing more: two replies without a call
            script += [{"content": "nothing new"}, {"content": "still nothing"}]
        script.append({"content": "", "tool_calls": [call(action)]})
    model = ScriptServer(tmp_path / "llm", script)
    env = {**os.environ, "ALERTFORGE_TEST_EPISODE_KEY": KEY}
    try:
        result = cli("record", "--env", "aria", "--mode", "dual", "--env-url", server.url,
                     "--task", "easy", "--seed", "3", "--policy", "llm", "--model", MODEL,
                     "--base-url", model.url, "--api-key-env", "ALERTFORGE_TEST_EPISODE_KEY",
                     "--out", str(tmp_path / "runs"), env=env)
        requests = model.requests()
    finally:
        model.stop()
    assert result.returncode == 0, result.stderr
    run_dir = Path(result.stdout.strip())
    imported = import_episodes([SET2 / "easy-dual-agent-seed3.json"], tmp_path / "imported")[0]
    assert [row[:9] for row in lanes(run_dir)] == [row[:9] for row in lanes(imported)]
    tools = [{t["function"]["name"] for t in r["body"]["tools"]} for r in requests]
    assert tools[0] == {"report_finding"} and "read_logs" in tools[1]
    assert load(run_dir / "run.json")["final"]["solved"] is True


SERVER_SCORES = {
    # ARIA's own grade of each session: DualAgentSession(task, seed) replayed at 230f8d5, then
    # env.state().info["current_score"] (tests/fixtures/aria-2026-12/SOURCE.md, measured by hand).
    "easy-dual-agent-seed3.json": (0.999, "memory_leak_payment_service"),
    "easy-dual-agent-seed42.json": (0.999, "memory_leak_user_service"),
    "failover-dual-agent-seed3.json": (0.95, "us_east_1_network_partition_partial_region_failure"),
    "failover-dual-agent-seed42.json": (0.95, "us_east_1_network_partition_partial_region_failure"),
    "medium-dual-agent-seed3.json": (0.999, "connection_pool_exhaustion_inventory-service_v2.3.5"),
    "medium-dual-agent-seed42.json": (0.999, "connection_pool_exhaustion_inventory-service_v2.3.1"),
}


def test_every_dual_fixture_session_has_a_measured_server_score():
    assert sorted(SERVER_SCORES) == sorted(p.name for p in SET2.glob("*dual-agent-seed*.json"))


@pytest.mark.parametrize("name", sorted(SERVER_SCORES))
def test_a_dual_session_scores_what_the_server_grades_it(tmp_path, name):
    score, root_cause = SERVER_SCORES[name]
    run = load(import_episodes([SET2 / name], tmp_path)[0] / "run.json")
    episode = run["final"]["episode"]
    assert run["final"]["reward"] == score
    assert episode["ground_truth"]["root_cause"] == root_cause
    assert episode["ground_truth"]["source"].startswith("restated from ARIA's task code")
    assert episode["parts"]["diagnosis_bonus"] > 0  # the part the derived score used to leave out


def single_agent_states():
    for path in sorted(SET2.glob("*.json")):
        transcript = load(path)
        state = ((transcript.get("final_state") or {}).get("response")) if isinstance(transcript, dict) else None
        if isinstance(state, dict) and state.get("ground_truth_root_cause") and "foreign" not in path.name:
            yield pytest.param(transcript, state, id=path.stem)


@pytest.mark.parametrize(("transcript", "state"), list(single_agent_states()))
def test_the_restated_ground_truth_is_the_servers(transcript, state):
    """Every single-agent transcript's /state ground truth (the foreign-reset one belongs to
    the foreign seed, so it is left out); `generated` is not restated."""
    from recorder.episodes.ground_truth import seeded_ground_truth

    truth = seeded_ground_truth(transcript["task_id"], transcript["seed"])
    if transcript["task_id"] == "generated":
        assert truth is None
        return
    assert (truth["root_cause"], truth["fix"]) == (state["ground_truth_root_cause"],
                                                  state["ground_truth_fix"])
