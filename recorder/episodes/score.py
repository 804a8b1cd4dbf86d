"""The running total of an ARIA episode and its final score taken apart into ARIA's parts.

Source: ARIA's grader, ``graders/grader.py`` of Twilight-13/devops-incident-response at
commit 230f8d5 (read and restated, not copied; the lines are cited per part):

- the running total is clamped to [0, 1] after every step (``tasks/base.py:319-320``), so
  it is not the sum of the rewards;
- the final score (``/state`` ``info.current_score``, ``env.py:73-76``) starts from that
  total (``grader.py:33``), adds 0.05·max(0, 1 − n/M) when resolved, with n every recorded
  step and M from the grader's own table, not the episode's ``max_steps``
  (``grader.py:39-42``: easy 15, medium 20, hard 25, bonus 25, any other task 20), adds 0.03
  (best keyword overlap ≥ 0.5) or 0.01 (≥ 0.3) for the best ``diagnose`` against the ground
  truth (``grader.py:45-57``, overlap ``:140-158``), subtracts 0.02 per noop beyond 3
  (``:60-62``) and 0.05 per repeated restart of one service (``:65-72``), then clamps to
  [0.001, 0.999] and rounds to 4 places (``:76``).

There is no adjustment part: when the parts do not give the reported score, the
difference is reported as a mismatch.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

TOTAL_RANGE = (0.0, 1.0)
SCORE_RANGE = (0.001, 0.999)
TOTAL_DECIMALS = 6
"""Totals are rounded to 6 decimals, so 0.08 + 0.15 is 0.23 as the server reports it."""

EFFICIENCY_WEIGHT = 0.05
GRADER_STEP_TABLE = {"easy": 15, "medium": 20, "hard": 25, "bonus": 25}
GRADER_DEFAULT_STEPS = 20
"""The grader's M (``grader.py:40``): failover runs 25 steps but is graded against 20."""
DIAGNOSIS_BONUS = ((0.5, 0.03), (0.3, 0.01))
NOOP_ALLOWANCE = 3
NOOP_PENALTY = 0.02
REPEAT_RESTART_PENALTY = 0.05
OVERLAP_STOP_WORDS = frozenset(
    {"the", "a", "an", "of", "to", "in", "for", "and", "or", "is", "was", "are",
     "v", "v2", "v3", "v4"})
"""The stop words of the grader's keyword overlap (``grader.py:147-148``)."""


def _clamp(value: float, bounds: tuple[float, float]) -> float:
    return min(bounds[1], max(bounds[0], value))


def next_total(previous: float, reward: float) -> float:
    """The running total after a step: ``clamp(previous + reward, 0, 1)``, 6 decimals."""
    return _clamp(round(previous + reward, TOTAL_DECIMALS), TOTAL_RANGE)


def _number(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return float(value)


def _tokens(text: str) -> set[str]:
    words = text.lower().replace("-", " ").replace("_", " ").replace(".", " ").split()
    return {word for word in words if word not in OVERLAP_STOP_WORDS and len(word) > 1}


def keyword_overlap(candidate: str, ground_truth: str) -> float:
    """The grader's overlap (``grader.py:140-158``): the share of the ground truth's content
    words (lowercased, ``-_.`` as spaces, stop words and 1-letter tokens dropped) that the
    candidate contains as exact tokens; 0.0 when either is empty. A fraction in [0, 1]."""
    truth = _tokens(ground_truth or "")
    if not candidate or not truth:
        return 0.0
    return len(truth & _tokens(candidate)) / len(truth)


def grader_steps(task_id: str) -> int:
    """M of the efficiency bonus for ``task_id`` (``grader.py:40``)."""
    return GRADER_STEP_TABLE.get(task_id, GRADER_DEFAULT_STEPS)


def _part(name: str, amount: float, source: str, detail: str) -> dict[str, Any]:
    return {"name": name, "amount": round(amount, 6), "source": source, "detail": detail}


def _diagnosis(actions: list[dict[str, Any]], truth: str | None) -> tuple[float | None, float]:
    roots = [str(a.get("root_cause") or "") for a in actions if a.get("action_type") == "diagnose"]
    if not roots or not isinstance(truth, str):
        return None, 0.0
    best = max(keyword_overlap(root, truth) for root in roots)
    return best, next((bonus for limit, bonus in DIAGNOSIS_BONUS if best >= limit), 0.0)


def _diagnosis_detail(actions: list[dict[str, Any]], state: dict[str, Any],
                      overlap: float | None) -> str:
    if overlap is not None:
        return f"best keyword overlap {overlap:.3f}"
    if any(a.get("action_type") == "diagnose" for a in actions):
        return "no ground truth to compare the diagnosis with: not computed"
    return "no diagnose"


def score_parts(state: dict[str, Any], task_id: str) -> dict[str, Any]:
    """The final score of ``state`` (a ``GET /state`` body) and the grader's parts of it.

    Returns ``{reported_score, total_reward, resolved, env_steps, grader_max_steps,
    efficiency_bonus, diagnosis_bonus, best_diagnosis_overlap, overlap_agrees, noops,
    noop_penalty, repeated_restarts{service: extra restarts}, repeat_restart_penalty,
    parts[{name, amount, source, detail}], unclamped, derived_score, clamp[low, high],
    parts_match, mismatch}``. Penalties are negative amounts in ``parts`` and positive in
    the ``*_penalty`` keys. ``env_steps`` counts ``action_history`` (a request the server
    failed is not in it). ``overlap_agrees`` compares the overlap recomputed here with
    ``analytics.best_diagnosis_overlap`` (3 places). ``mismatch`` is reported − derived
    (None when they agree or either is missing).
    """
    info = state.get("info") if isinstance(state.get("info"), dict) else {}
    analytics = info.get("analytics") if isinstance(info.get("analytics"), dict) else {}
    actions = _history_actions(state)
    total = _number(state.get("total_reward"))
    resolved = state.get("incident_resolved") is True
    steps, limit = len(actions), grader_steps(task_id)
    efficiency = EFFICIENCY_WEIGHT * max(0.0, 1.0 - steps / limit) if resolved and steps else 0.0
    overlap, diagnosis = _diagnosis(actions, state.get("ground_truth_root_cause"))
    reported_overlap = _number(analytics.get("best_diagnosis_overlap"))
    noops, noop_penalty, repeated, restart_penalty = _penalties(actions)
    parts = [
        _part("running total", total or 0.0, "graders/grader.py:33",
              "total_reward, clamped to [0, 1] after every step (tasks/base.py:319-320)"),
        _part("efficiency", efficiency, "graders/grader.py:39-42",
              f"0.05 x max(0, 1 - {steps}/{limit}) when resolved" if resolved
              else "not resolved: no efficiency bonus"),
        _part("diagnosis", diagnosis, "graders/grader.py:45-57", _diagnosis_detail(actions, state, overlap)),
        _part("noops", -noop_penalty, "graders/grader.py:60-62", f"{noops} noops, 3 free"),
        _part("repeated restarts", -restart_penalty, "graders/grader.py:65-72",
              ", ".join(f"{s or '(no service)'} +{n}" for s, n in repeated.items()) or "none"),
    ]
    reported = _number(info.get("current_score"))
    return {
        "reported_score": reported, "total_reward": total, "resolved": resolved,
        "env_steps": steps, "grader_max_steps": limit, "max_steps": limit,
        "efficiency_bonus": round(efficiency, 6), "diagnosis_bonus": diagnosis,
        "best_diagnosis_overlap": None if overlap is None else round(overlap, 3),
        "overlap_agrees": _overlap_agrees(overlap, reported_overlap),
        "noops": noops, "noop_penalty": round(noop_penalty, 6),
        "repeated_restarts": repeated, "repeat_restart_penalty": round(restart_penalty, 6),
        "parts": parts, **_derived_score(total, parts, reported),
    }


def _history_actions(state: dict[str, Any]) -> list[dict[str, Any]]:
    """The actions of the state's ``action_history`` (an entry without one as {})."""
    history = state.get("action_history") if isinstance(state.get("action_history"), list) else []
    return [entry.get("action") if isinstance(entry.get("action"), dict) else {}
            for entry in history if isinstance(entry, dict)]


def _penalties(actions: list[dict[str, Any]]) -> tuple[int, float, dict[str, int], float]:
    """``(noops, noop penalty, {service: extra restarts}, repeated-restart penalty)``, the
    penalties as positive amounts."""
    types = Counter(str(action.get("action_type")) for action in actions)
    noops = types.get("noop", 0)
    noop_penalty = NOOP_PENALTY * max(0, noops - NOOP_ALLOWANCE)
    restarts = Counter(str(a.get("service") or "") for a in actions
                       if a.get("action_type") == "restart_service")
    repeated = {service: count - 1 for service, count in sorted(restarts.items()) if count > 1}
    return noops, noop_penalty, repeated, REPEAT_RESTART_PENALTY * sum(repeated.values())


def _overlap_agrees(overlap: float | None, reported_overlap: float | None) -> bool:
    """Whether the recomputed overlap agrees with the reported one to 3 places (or either
    is missing)."""
    return (reported_overlap is None or overlap is None
            or abs(round(overlap, 3) - reported_overlap) < 5e-4)


def _derived_score(total: float | None, parts: list[dict[str, Any]],
                   reported: float | None) -> dict[str, Any]:
    """``{unclamped, derived_score, clamp, parts_match, mismatch}``: the parts' sum, clamped,
    against the reported score (None sums without a running total)."""
    unclamped = derived = None
    if total is not None:
        unclamped = round(sum(p["amount"] for p in parts), 6)
        derived = round(_clamp(unclamped, SCORE_RANGE), 4)
    match = reported is not None and derived is not None and abs(reported - derived) < 5e-5
    return {
        "unclamped": unclamped, "derived_score": derived,
        "clamp": list(SCORE_RANGE), "parts_match": match,
        "mismatch": None if match or reported is None or derived is None
        else round(reported - derived, 4),
    }
