"""Imported ARIA episodes carry the server's numbers and ARIA's own parts of them.

Fixtures: tests/fixtures/aria-2026-12/ (31 real-server transcripts, SOURCE.md) and
examples/aria-episodes/episodes/ (16). Expected values are the server's (/state, each step's
reward) and the worked examples of the grader (failover seed 3: 0.89 + 0.03 + 0.03 = 0.95).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from recorder.episodes.rewards import split_step, start_episode
from recorder.episodes.score import keyword_overlap, score_parts
from recorder.importers.aria_transcripts import import_episodes

ROOT = Path(__file__).resolve().parent
SET2 = ROOT / "fixtures" / "aria-2026-12"
SET1 = ROOT.parent / "examples" / "aria-episodes" / "episodes"
ALL = sorted([*SET2.glob("*seed*.json"), *SET1.glob("*.json")])


def _run(path: Path, out: Path) -> tuple[dict, list[dict]]:
    run_dir = import_episodes([path], out)[0]
    run = json.loads((run_dir / "run.json").read_bytes())
    steps = json.loads((run_dir / "trajectory.json").read_bytes())["steps"]
    return run, steps


def _scored(path: Path) -> bool:
    data = json.loads(path.read_bytes())
    final = data.get("final_state") or {}
    if "receive" in final:
        return final["receive"].get("type") == "state"
    return final.get("status") == 200 and "total_reward" in (final.get("response") or {})


SCORED = [p for p in ALL if _scored(p)]


def test_every_scored_transcript_imports_with_parts_that_add_up_to_the_server_score(tmp_path):
    assert len(SCORED) == 39
    for path in SCORED:
        data = json.loads(path.read_bytes())
        run, steps = _run(path, tmp_path)
        episode = run["final"]["episode"]
        assert run["final"]["reward"] == data["summary"]["state_current_score"], path.name
        assert episode["parts"]["parts_match"] and episode["parts"]["mismatch"] is None, path.name
        assert episode["totals_agree"], path.name
        explained = episode["steps_explained"]
        assert explained["explained"] == explained["steps"], (path.name, explained)
        split = [p["amount"] for p in episode["parts"]["parts"]]
        assert round(min(0.999, max(0.001, sum(split))), 4) == run["final"]["reward"]
        for step in steps[1:]:
            env = step["extra"]["env"]
            if env.get("error") is None:
                total = round(sum(c["amount"] for c in env["components"]), 4)
                assert total == pytest.approx(env["reward"], abs=5e-5), (path.name, step)


def test_failover_efficiency_uses_the_graders_table_not_the_episode_budget(tmp_path):
    run, _ = _run(SET2 / "failover-expert-seed3.json", tmp_path)
    parts = {p["name"]: p for p in run["final"]["episode"]["parts"]["parts"]}
    assert run["final"]["episode"]["parts"]["grader_max_steps"] == 20
    assert parts["efficiency"]["amount"] == pytest.approx(0.03)
    assert parts["efficiency"]["source"] == "graders/grader.py:39-42"
    assert parts["diagnosis"]["amount"] == 0.03 and run["final"]["reward"] == 0.95


def test_a_step_reward_splits_into_a_fix_and_a_blind_fix_penalty():
    observation = json.loads((SET1 / "easy-expert.json").read_bytes())["reset"]["response"]
    episode = start_episode("easy", observation)
    failing = episode.failing
    result = split_step(episode, {"action_type": "restart_service", "service": failing}, 0.35)
    names = {c["name"]: c["amount"] for c in result["components"]}
    assert names == {"fix before diagnosis": -0.05, "fix": 0.40}
    assert result["explained"] and result["resolves"] and result["aria_step"] == 1


def test_a_reward_the_rules_cannot_give_is_an_unexplained_component():
    episode = start_episode("hard", {})
    result = split_step(episode, {"action_type": "noop"}, -0.07)
    assert not result["explained"]
    assert result["components"] == [{"name": "unexplained", "amount": -0.07, "source":
                                     "recorded reward", "kind": "penalty", "inferred": False}]


def test_penalty_names_come_from_the_split_failover_restart_is_a_timeout(tmp_path):
    _, steps = _run(SET1 / "failover-poor.json", tmp_path)
    names = {c["name"] for s in steps[1:] for c in s["extra"]["env"].get("components", [])
             if c["kind"] == "penalty"}
    assert "collateral restart" not in names and "fix before diagnosis" not in names
    assert names & {"timed out", "forbidden failover", "bad region", "late noop"}


def test_keyword_overlap_is_the_graders_exact_token_share():
    truth = "memory_leak_payment_service"
    assert keyword_overlap("memory leak (OOM, heap exhaustion) crash-looping order-service",
                           truth) == 0.75
    assert keyword_overlap("", truth) == 0.0


def test_score_parts_report_a_mismatch_instead_of_an_adjustment():
    state = {"total_reward": 0.5, "incident_resolved": False, "action_history": [],
             "info": {"current_score": 0.7}}
    parts = score_parts(state, "easy")
    assert parts["mismatch"] == 0.2 and not parts["parts_match"]
    assert {p["name"] for p in parts["parts"]} == {
        "running total", "efficiency", "diagnosis", "noops", "repeated restarts"}


def test_foreign_reset_is_an_environment_event_and_the_split_follows_the_new_episode(tmp_path):
    run, steps = _run(SET2 / "easy-foreign-reset-seed7.json", tmp_path)
    episode = run["final"]["episode"]
    assert [e["kind"] for e in episode["environment_events"]] == ["foreign reset"]
    assert episode["environment_events"][0]["before_step"] == 2
    assert all(s["tool_calls"][0]["function_name"] != "task_id" for s in steps[1:])
    assert len(steps) == 6 and run["final"]["reward"] == 0.13
    restart = steps[-1]["extra"]["env"]
    assert [c["name"] for c in restart["components"]] == ["collateral restart"]


def test_a_server_that_lost_the_episode_ends_the_import_as_an_environment_failure(tmp_path):
    run, steps = _run(SET2 / "easy-server-restart-seed3.json", tmp_path)
    assert run["status"] == "failed" and "Call /reset before /step" in run["error"]
    assert len(steps) == 3  # the instruction and the two answered steps; no 400 as an action
    assert all(s["extra"]["env"].get("error") is None for s in steps[1:])


def test_a_500_stays_the_steps_failed_action_and_the_episode_goes_on(tmp_path):
    run, steps = _run(SET2 / "generated-diagnose-500-seed3.json", tmp_path)
    envs = [s["extra"]["env"] for s in steps[1:]]
    assert [e.get("error", {}).get("status") for e in envs] == [None, 500, None]
    assert [e["aria_step"] for e in envs] == [1, None, 2]
    assert run["status"] == "complete" and run["final"]["reward"] == 0.595  # 2 counted steps


@pytest.mark.parametrize("name", sorted(p.name for p in SET2.glob("*dual-agent-seed*.json")))
def test_dual_agent_sessions_import_every_finding_action_and_reward(tmp_path, name):
    data = json.loads((SET2 / name).read_bytes())
    run, steps = _run(SET2 / name, tmp_path)
    envs = [s["extra"]["env"] for s in steps[1:]]
    findings = [e["finding"] for e in envs if e["agent"] == "observer"]
    assert findings == [f["finding"] for f in data["final_state"]["response"]["findings_log"]]
    assert [e["observer_reward"] for e in envs if e["agent"] == "observer"] == \
        data["summary"]["observer_rewards"]
    assert [e["reward"] for e in envs if e["agent"] == "responder"] == data["summary"]["rewards"]
    paths = [c["request"]["path"].split("/")[3] for c in data["steps"]]
    assert [e["agent"] for e in envs] == ["observer" if p == "a" else "responder" for p in paths]
    agents = run["final"]["episode"]["agents"]
    assert agents["observer"]["accepted"] == data["summary"]["n_findings"]
    assert run["final"]["solved"] is True and run["final"]["episode"]["mode"] == "dual"
    assert run["final"]["reward"] == run["final"]["episode"]["parts"]["derived_score"]
