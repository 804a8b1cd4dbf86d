"""Embedded ATIF subagent trajectories (v1.7 ``subagent_trajectories``) normalized, nested.

Each embedded trajectory is normalized like the main one
(:func:`~recorder.importers.harbor.normalize.normalize_steps`) and kept nested under the
run's ``subagent_trajectories`` with its ``trajectory_id``; the step that spawned it keeps
its result's ``subagent_trajectory_ref`` (the viewer links from there). One that cannot be
normalized into valid ATIF is kept as it came under the run's
``extra.source_subagents`` with the reason, never dropped.
"""

from __future__ import annotations

from typing import Any

from recorder.importers.harbor.normalize import normalize_steps, take_agent, validation_errors

MAX_DEPTH = 8
"""Nesting levels of subagents kept as trajectories (deeper ones are kept as they came)."""


def _one(raw: dict, index: int, depth: int, refused: list[dict]) -> dict | None:
    trajectory_id = raw.get("trajectory_id")
    trajectory_id = str(trajectory_id) if trajectory_id not in (None, "") else f"subagent-{index + 1}"
    doc: dict[str, Any] = {"schema_version": str(raw.get("schema_version") or "ATIF-v1.8"),
                           "trajectory_id": trajectory_id,
                           "agent": {"name": "unknown-agent", "version": "unknown"},
                           "steps": normalize_steps(raw)}
    if isinstance(raw.get("session_id"), str):
        doc["session_id"] = raw["session_id"]
    take_agent(doc, raw.get("agent"))
    if isinstance(raw.get("final_metrics"), dict):
        candidate = dict(doc, final_metrics=raw["final_metrics"])
        doc = candidate if not validation_errors(candidate) else doc
    nested = nest(raw, depth + 1, refused)
    if nested:
        doc["subagent_trajectories"] = nested
    problems = validation_errors(doc)
    if problems:
        refused.append({"trajectory_id": trajectory_id, "reason": "; ".join(problems[:5]),
                        "trajectory": raw})
        return None
    return doc


def nest(doc: Any, depth: int = 0, refused: list[dict] | None = None) -> list[dict]:
    """The normalized ``subagent_trajectories`` of ``doc`` (``[]`` when it has none).

    ``refused`` collects ``{trajectory_id, reason, trajectory}`` of each one that cannot be
    made valid ATIF (or lies deeper than :data:`MAX_DEPTH`).
    """
    refused = refused if refused is not None else []
    raw = doc.get("subagent_trajectories") if isinstance(doc, dict) else None
    if not isinstance(raw, list):
        return []
    kept = []
    for index, sub in enumerate(raw):
        if not isinstance(sub, dict) or not isinstance(sub.get("steps"), list):
            refused.append({"trajectory_id": None, "reason": "not an ATIF trajectory (no steps "
                            "list)", "trajectory": sub})
        elif depth >= MAX_DEPTH:
            refused.append({"trajectory_id": sub.get("trajectory_id"), "reason": f"nested deeper "
                            f"than {MAX_DEPTH} levels", "trajectory": sub})
        else:
            one = _one(sub, index, depth, refused)
            if one is not None:
                kept.append(one)
    return kept


def walk(doc: dict) -> list[dict]:
    """``doc`` and every trajectory nested in it, depth first."""
    found = [doc]
    for sub in doc.get("subagent_trajectories") or []:
        found += walk(sub)
    return found
