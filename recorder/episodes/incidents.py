"""What ARIA says of a task's incident beyond the observation: difficulty and failure mode.

Sources (Twilight-13/devops-incident-response at commit 230f8d5): the task difficulties are
``GET /tasks`` (``server/app.py:1537-1626``; recorded in
tests/fixtures/aria-2026-12/endpoint-samples-2.json): easy "easy", medium "medium", hard,
bonus, security, database and failover "hard", generated "variable". The observation has no
difficulty and no failure mode. A generated incident's failure mode is one of the factory's
eight (``generator/incident_factory.py:4``); each mode's ground-truth root cause starts with
its own words (``incident_factory.py:56-64``), so the mode is read back from ``/state``'s
``ground_truth_root_cause``, marked as inferred.
"""

from __future__ import annotations

from typing import Any

TASK_DIFFICULTY = {"easy": "easy", "medium": "medium", "hard": "hard", "bonus": "hard",
                   "security": "hard", "database": "hard", "failover": "hard",
                   "generated": "variable"}

ROOT_CAUSE_OPENINGS = (
    ("memory leak", "oom"),
    ("bad deployment", "cascade"),
    ("data corruption", "corruption"),
    ("ddos", "security"),
    ("missing index", "database"),
    ("network partition", "network_partition"),
    ("network latency", "network_latency"),
    ("config drift", "config_drift"),
)
"""How each failure mode's ground-truth root cause begins (``incident_factory.py:56-64``)."""


def difficulty(task_id: str) -> str | None:
    """ARIA's difficulty of ``task_id`` (``/tasks``), None for a task it does not list."""
    return TASK_DIFFICULTY.get(task_id)


def failure_mode(task_id: str, state: dict[str, Any] | None) -> dict[str, Any] | None:
    """``{mode, source, inferred: True}`` of a generated incident from its ``/state`` ground
    truth, None for a curated task, without a state, or for a root cause of no known mode."""
    if task_id != "generated" or not isinstance(state, dict):
        return None
    truth = str(state.get("ground_truth_root_cause") or "").lower()
    for opening, mode in ROOT_CAUSE_OPENINGS:
        if truth.startswith(opening):
            return {"mode": mode, "inferred": True,
                    "source": "the ground truth's wording (generator/incident_factory.py:56-64)"}
    return None
