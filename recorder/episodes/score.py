"""The running total of an ARIA episode and its final score taken apart into its parts.

Source of the rules: the ARIA case description (``examples/aria-episodes/CASE-README.md``,
"Reward"), observed on the server at commit 230f8d5:

- ``total_reward`` is clamped to [0, 1] after every step, so it is not the sum of the rewards;
- the final score (``/state`` ``info.current_score``) starts from ``total_reward``, adds
  0.05·(1 − n/max_steps) when resolved, 0.03 (keyword overlap ≥ 0.5) or 0.01 (≥ 0.3) for the
  best diagnosis, subtracts 0.02 per noop beyond 3 and 0.05 per repeated restart of the same
  service, and is clamped to [0.001, 0.999].

The server reports only the final score; the parts here are derived from ``/state`` by
those rules, and :func:`score_parts` says whether they add up to the reported score.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

TOTAL_RANGE = (0.0, 1.0)
SCORE_RANGE = (0.001, 0.999)
TOTAL_DECIMALS = 6
"""Totals are rounded to 6 decimals, so 0.08 + 0.15 is 0.23 as the server reports it."""

EFFICIENCY_WEIGHT = 0.05
DIAGNOSIS_BONUS = ((0.5, 0.03), (0.3, 0.01))
NOOP_ALLOWANCE = 3
NOOP_PENALTY = 0.02
REPEAT_RESTART_PENALTY = 0.05


def _clamp(value: float, bounds: tuple[float, float]) -> float:
    return min(bounds[1], max(bounds[0], value))


def next_total(previous: float, reward: float) -> float:
    """The running total after a step: ``clamp(previous + reward, 0, 1)``, 6 decimals."""
    return _clamp(round(previous + reward, TOTAL_DECIMALS), TOTAL_RANGE)


def _number(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return float(value)


def score_parts(state: dict[str, Any], max_steps: int | None) -> dict[str, Any]:
    """The final score of ``state`` (a ``GET /state`` body) and the parts it is made of.

    ``max_steps`` is the episode's step budget (the observation's ``max_steps``). Returns::

        {reported_score, total_reward, resolved, env_steps, max_steps,
         efficiency_bonus, diagnosis_bonus, best_diagnosis_overlap, noops, noop_penalty,
         repeated_restarts{service: extra restarts}, repeat_restart_penalty,
         unclamped, derived_score, clamp[low, high], parts_match}

    ``env_steps`` is the number of actions the environment counted (``action_history``; a
    request the server failed is not one). ``parts_match`` is true when the derived score
    equals the reported one to 4 decimals; ``None`` parts mean /state lacked the field.
    """
    info = state.get("info") if isinstance(state.get("info"), dict) else {}
    analytics = info.get("analytics") if isinstance(info.get("analytics"), dict) else {}
    history = state.get("action_history") if isinstance(state.get("action_history"), list) else []
    actions = [entry.get("action") if isinstance(entry.get("action"), dict) else {}
               for entry in history if isinstance(entry, dict)]
    total = _number(state.get("total_reward"))
    resolved = state.get("incident_resolved") is True
    steps = len(actions)
    efficiency = 0.0
    if resolved and steps and max_steps:
        efficiency = EFFICIENCY_WEIGHT * max(0.0, 1.0 - steps / max_steps)
    overlap = _number(analytics.get("best_diagnosis_overlap"))
    diagnosis = 0.0
    for threshold, bonus in DIAGNOSIS_BONUS:
        if overlap is not None and overlap >= threshold:
            diagnosis = bonus
            break
    types = Counter(str(action.get("action_type")) for action in actions)
    noops = types.get("noop", 0)
    noop_penalty = NOOP_PENALTY * max(0, noops - NOOP_ALLOWANCE)
    restarts = Counter(
        str(action.get("service") or "")
        for action in actions
        if action.get("action_type") == "restart_service"
    )
    repeated = {service: count - 1 for service, count in sorted(restarts.items()) if count > 1}
    restart_penalty = REPEAT_RESTART_PENALTY * sum(repeated.values())
    reported = _number(info.get("current_score"))
    unclamped = derived = None
    if total is not None:
        unclamped = round(total + efficiency + diagnosis - noop_penalty - restart_penalty, 6)
        derived = round(_clamp(unclamped, SCORE_RANGE), 4)
    return {
        "reported_score": reported,
        "total_reward": total,
        "resolved": resolved,
        "env_steps": steps,
        "max_steps": max_steps,
        "efficiency_bonus": round(efficiency, 6),
        "diagnosis_bonus": diagnosis,
        "best_diagnosis_overlap": overlap,
        "noops": noops,
        "noop_penalty": round(noop_penalty, 6),
        "repeated_restarts": repeated,
        "repeat_restart_penalty": round(restart_penalty, 6),
        "unclamped": unclamped,
        "derived_score": derived,
        "clamp": list(SCORE_RANGE),
        "parts_match": (
            reported is not None and derived is not None and abs(reported - derived) < 5e-5
        ),
    }
