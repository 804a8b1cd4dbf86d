"""The reward formula of 3amBench (seed spec, "Reward"; restated in DESIGN.md).

Per requirement r, a score q_r in [0, 1] from its check families (mean of an empty family
is 1):

- alert / repair: q = E * dup * mean(Fire u Timing) * mean(Silent) * (0.7 + 0.3 * mean(Label u Annotation))
  and for burn-rate alerts q = 1/2 q(agent's SLI records) + 1/2 q(reference SLI records);
- recording: q = dup * mean(Value u Cardinality);
- route: q = mean over positives of Jaccard(expected, resolved) * mean over negatives of ok;
- inhibit: q = mean(Suppressed) * mean(NotSuppressed) * mean(Bystander) (bystanders: alerts the
  rule is not about, while its source fires; see :func:`inhibit_q`).

Then s_r = clip((q_r - q_pristine) / (1 - q_pristine), -0.25, 1),
progress = max(0, (0.5 + 0.5 * preservation) * sum(w_r s_r) / sum(w_r)) with weights alert 3,
repair 3, others 2, and reward = 0.6 * [all s_r = 1 and preservation = 1 and syntax_ok and
not tamper] + 0.4 * progress; tamper zeroes the reward.
"""

from __future__ import annotations

from collections.abc import Iterable

WEIGHTS = {"alert": 3, "repair": 3, "recording": 2, "route": 2, "inhibit": 2}
KEY_ORDER = (
    "reward", "solved", "outcome", "progress", "preservation", "req_alerts", "req_repairs",
    "req_recording", "req_routing", "req_inhibit", "fire_rate", "silent_rate", "label_rate",
    "check_pass_rate", "syntax_ok", "tamper",
)
"""The 16 keys every grade reports, identical in every task (seed spec, "Reward")."""


def mean(values: Iterable[float]) -> float:
    """Arithmetic mean; the mean of nothing is 1 (an empty check family does not penalize)."""
    values = list(values)
    return sum(values) / len(values) if values else 1.0


def alert_q(exists: bool, dup: list[float], fire_timing: list[float], silent: list[float],
            label_annotation: list[float]) -> float:
    """q of an alert or repair requirement from pass values (1.0 / 0.0) of its families."""
    if not exists:
        return 0.0
    return mean(dup) * mean(fire_timing) * mean(silent) * (0.7 + 0.3 * mean(label_annotation))


def recording_q(dup: list[float], value_cardinality: list[float]) -> float:
    """q of a recording requirement."""
    return mean(dup) * mean(value_cardinality)


def route_q(positive_jaccard: list[float], negative_ok: list[float]) -> float:
    """q of a route requirement: the mean over its positive checks (Jaccard of receivers;
    destination, removal and timing checks 1.0 or 0.0) times the pass rate of its negatives."""
    return mean(positive_jaccard) * mean(negative_ok)


def inhibit_q(suppressed: list[float], not_suppressed: list[float],
              bystander: list[float] | None = None) -> float:
    """q of an inhibit requirement: mean(Suppressed) * mean(NotSuppressed) * mean(Bystander).

    Bystander cases (the source fires; an alert the rule is not about must stay active) are
    their own factor: with them folded into NotSuppressed, an inhibit-everything rule would
    keep credit from not-suppressed cases that no rule keyed on the source can fail.
    """
    return mean(suppressed) * mean(not_suppressed) * mean(bystander or [])


def jaccard(expected: set[str], got: set[str]) -> float:
    """|A n B| / |A u B|; two empty sets are identical (1.0)."""
    union = expected | got
    return len(expected & got) / len(union) if union else 1.0


def normalized_score(q: float, q_pristine: float) -> float:
    """s = clip((q - q_pristine) / (1 - q_pristine), -0.25, 1): pristine -> 0, correct -> 1.

    When the pristine repo already scores 1 there is nothing to normalize against: s is 1
    for q = 1 and q - 1 (clipped) below it.
    """
    if q_pristine >= 1.0:
        raw = 1.0 if q >= 1.0 else q - 1.0
    else:
        raw = (q - q_pristine) / (1.0 - q_pristine)
    return max(-0.25, min(1.0, raw))


def progress(scores: list[tuple[float, float]], preservation: float) -> float:
    """max(0, (0.5 + 0.5 * preservation) * sum(w s) / sum(w)) over ``(weight, s)`` pairs."""
    total = sum(w for w, _ in scores)
    if total == 0:
        return 0.0
    return max(0.0, (0.5 + 0.5 * preservation) * sum(w * s for w, s in scores) / total)


def reward(scores: list[float], preservation: float, syntax_ok: bool, tamper: bool,
           progress_value: float) -> tuple[float, bool]:
    """``(reward, solved)``: 0.6 * solved + 0.4 * progress, and 0 under tamper."""
    solved = (all(s >= 1.0 for s in scores) and preservation >= 1.0 and syntax_ok and not tamper)
    if tamper:
        return 0.0, False
    return 0.6 * float(solved) + 0.4 * progress_value, solved
