"""ARIA's dual-agent sessions in a run: the observer's findings and the responder's actions.

Source: ARIA's ``multi_agent/session.py`` and ``server/app.py:1892-2002`` at commit
230f8d5 (notes/aria-scoring.md §4 "Dual-agent"). ``POST /multi-agent/reset {task_id, seed}``
opens a session; the observer (agent A) posts findings with ``step/a/{sid} {finding}``
(a flat 0.05 per accepted finding, counted nowhere else); the responder (agent B) acts with
``step/b/{sid}`` (an Action, the single-agent step rules, its rewards make the running
total); ``GET /multi-agent/state/{sid}`` has no total, score or ground truth, so the score
of a dual-agent run is derived: the grader's parts over B's actions, the diagnosis part
against the ground truth restated for the task and seed (:mod:`recorder.episodes.ground_truth`;
checked by hand against ``DualAgentSession.env.state()``, which the server grades with).

A finding is a trajectory step of the observer (tool ``report_finding``); its
``extra.env`` holds ``agent: "observer"``, ``reward`` (the observer's), ``accepted``,
``finding_index`` (1-based, the server's findings log order) and ``before_responder_step``
(the responder step count when it was posted, the server's ``step`` field); responder steps
carry ``agent: "responder"`` and ``findings_seen`` (``agent_a_findings_count``).
"""

from __future__ import annotations

from typing import Any

OBSERVER = "observer"
RESPONDER = "responder"
FINDING_TOOL = "report_finding"
FINDING_REWARD_SOURCE = "multi_agent/session.py:73-90"


def responder_view(reset_answer: dict[str, Any]) -> dict[str, Any]:
    """The responder's observation of a ``/multi-agent/reset`` answer (``observation_b``)."""
    view = reset_answer.get("observation_b")
    return view if isinstance(view, dict) else {}


def finding_env(finding: str, answer: dict[str, Any], total: float, done: bool,
                index: int) -> dict[str, Any]:
    """``extra.env`` of one observer step from the ``step/a`` answer (``{accepted, reward,
    finding_recorded{step}}`` or ``{error, reward?}``)."""
    accepted = answer.get("accepted") is True
    recorded = answer.get("finding_recorded") if isinstance(answer.get("finding_recorded"), dict) else {}
    reward = answer.get("reward")
    env: dict[str, Any] = {
        "agent": OBSERVER,
        "reward": 0.0,
        "observer_reward": float(reward) if isinstance(reward, (int, float)) else 0.0,
        "total": total,
        "done": done,
        "info": {},
        "observation": None,
        "accepted": accepted,
        "finding": finding,
        "finding_index": index if accepted else None,
        "before_responder_step": recorded.get("step"),
        "aria_step": None,
        "components": [{"name": "finding", "amount": float(reward or 0.0),
                        "source": FINDING_REWARD_SOURCE, "kind": "bonus", "inferred": False,
                        "agent": OBSERVER}] if accepted else [],
        "explained": True,
    }
    if not accepted:
        env["refused"] = str(answer.get("error") or "not accepted")
    return env


def derived_state(actions: list[dict[str, Any]], total: float, resolved: bool,
                  task_id: str, truth: dict[str, str] | None) -> dict[str, Any]:
    """A ``/state``-shaped body for the grader's parts of a dual-agent run: B's actions, the
    running total, the resolution, the ground truth ``truth`` (``{root_cause, fix}`` from
    :func:`~recorder.episodes.ground_truth.seeded_ground_truth`, or None when the task is not
    restated); no reported score."""
    return {"task_id": task_id, "total_reward": total, "incident_resolved": resolved,
            "action_history": [{"action": a} for a in actions],
            "ground_truth_root_cause": (truth or {}).get("root_cause"),
            "ground_truth_fix": (truth or {}).get("fix"), "info": {}}


def agent_summary(steps: list[dict[str, Any]]) -> dict[str, Any]:
    """``{observer: {findings, accepted, reward}, responder: {actions, reward}}`` of a run's
    trajectory steps (rewards summed as paid; the responder's running total is separate)."""
    observer = {"findings": 0, "accepted": 0, "reward": 0.0}
    responder = {"actions": 0, "reward": 0.0}
    for step in steps:
        env = (step.get("extra") or {}).get("env") or {}
        if env.get("agent") == OBSERVER:
            observer["findings"] += 1
            observer["accepted"] += 1 if env.get("accepted") else 0
            observer["reward"] = round(observer["reward"] + env.get("observer_reward", 0.0), 6)
        elif env.get("agent") == RESPONDER:
            responder["actions"] += 1
            responder["reward"] = round(responder["reward"] + (env.get("reward") or 0.0), 6)
    return {OBSERVER: observer, RESPONDER: responder}
