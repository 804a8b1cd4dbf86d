"""Several attempts per task: pass@k (the unbiased estimator) and the mean reward with its interval.

Runs are attempts of one another when they share the task, the agent and the model (a
Harbor job with ``n_attempts`` writes one trial per attempt; Harbor stores no attempt
index). An attempt passes when the run is ``solved``.

- pass@k for ``n`` attempts of which ``c`` passed: ``1 - C(n - c, k) / C(n, k)``, the
  unbiased estimator of Chen et al. 2021, "Evaluating Large Language Models Trained on
  Code" (arXiv:2107.03374, eq. 1); 1 when ``n - c < k``. Harbor 0.26 computes the same
  (harbor/utils/pass_at_k.py) for k in 1..n.
- the mean reward with a 95% Student t interval, ``mean +- t(0.975, n - 1) * s / sqrt(n)``
  with ``s`` the sample standard deviation (n - 1 in the denominator), clipped to [0, 1];
  the t quantiles are :data:`T_975` (standard tables), 1.96 past 30 degrees of freedom.
"""

from __future__ import annotations

import math
from collections import defaultdict
from typing import Any

from contract.site import RunRow

T_975 = {1: 12.706, 2: 4.303, 3: 3.182, 4: 2.776, 5: 2.571, 6: 2.447, 7: 2.365, 8: 2.306,
         9: 2.262, 10: 2.228, 11: 2.201, 12: 2.179, 13: 2.160, 14: 2.145, 15: 2.131,
         16: 2.120, 17: 2.110, 18: 2.101, 19: 2.093, 20: 2.086, 21: 2.080, 22: 2.074,
         23: 2.069, 24: 2.064, 25: 2.060, 26: 2.056, 27: 2.052, 28: 2.048, 29: 2.045,
         30: 2.042}
"""Two-sided 95% quantiles of Student's t by degrees of freedom."""


def pass_at_k(n: int, c: int, k: int) -> float:
    """The unbiased pass@k estimate (0..1) from ``n`` attempts with ``c`` passing.

    Raises:
        ValueError: not ``0 <= c <= n`` and ``1 <= k <= n``.
    """
    if not (0 <= c <= n and 1 <= k <= n):
        raise ValueError(f"pass@k needs 0 <= c <= n and 1 <= k <= n (n={n}, c={c}, k={k})")
    if n - c < k:
        return 1.0
    return 1.0 - math.comb(n - c, k) / math.comb(n, k)


def mean_interval(values: list[float]) -> tuple[float, float | None, float | None]:
    """``(mean, low, high)``: the 95% t interval of the mean (None, None for one value).

    Raises:
        ValueError: ``values`` is empty.
    """
    if not values:
        raise ValueError("no values")
    n = len(values)
    mean = sum(values) / n
    if n == 1:
        return mean, None, None
    s = math.sqrt(sum((v - mean) ** 2 for v in values) / (n - 1))
    half = T_975.get(n - 1, 1.96) * s / math.sqrt(n)
    return mean, max(0.0, mean - half), min(1.0, mean + half)


def _row(rows: list[RunRow]) -> dict[str, Any]:
    n, c = len(rows), sum(1 for r in rows if r.solved)
    mean, low, high = mean_interval([float(r.reward) for r in rows])
    return {"attempts": n, "solved": c,
            "pass_at": {str(k): round(pass_at_k(n, c, k), 6) for k in range(1, n + 1)},
            "mean_reward": round(mean, 6),
            "ci_low": None if low is None else round(low, 6),
            "ci_high": None if high is None else round(high, 6)}


def attempt_rows(summaries: list[RunRow]) -> list[dict[str, Any]]:
    """Per task and agent/model with at least two complete runs with a reward: ``{task_id, agent, model,
    attempts, solved, pass_at: {k: value} for k in 1..attempts, mean_reward, ci_low,
    ci_high}`` (6 decimals), sorted by task, agent, model. ``agent`` is the run's policy (an
    imported trial's policy is its agent's name), else its agent's name, so that the rows
    line up with the leaderboard's."""
    groups: dict[tuple[str, str, str], list[RunRow]] = defaultdict(list)
    for summary in summaries:
        if summary.status != "complete" or summary.reward is None:
            continue  # a run that stopped, or one with no reward, is no attempt's result
        agent = str(summary.policy or summary.agent or "unknown")
        groups[(summary.task_id, agent, str(summary.model or ""))].append(summary)
    return [{"task_id": task, "agent": agent, "model": model or None, **_row(rows)}
            for (task, agent, model), rows in sorted(groups.items()) if len(rows) >= 2]


def policy_attempts(summaries: list[RunRow], attempts: list[dict[str, Any]],
                    policy: str) -> dict[str, Any]:
    """A leaderboard row's ``ci_low``/``ci_high`` (the t interval of the policy's mean
    reward over its runs, ``summaries``) and ``pass_at`` (per k, the mean over the tasks of the
    policy's attempt groups on those runs' tasks that have at least k attempts; Harbor averages
    pass@k over tasks so)."""
    rewards = [float(s.reward) for s in summaries]
    _, low, high = mean_interval(rewards) if rewards else (None, None, None)
    tasks = {s.task_id for s in summaries}  # the row's own runs' tasks: one run kind's
    mine = [a for a in attempts if a["agent"] == policy and a["task_id"] in tasks]
    by_k: dict[str, list[float]] = defaultdict(list)
    for group in mine:
        for k, value in group["pass_at"].items():
            by_k[k].append(value)
    return {"ci_low": None if low is None else round(low, 6),
            "ci_high": None if high is None else round(high, 6),
            "pass_at": {k: round(sum(v) / len(v), 6) for k, v in sorted(by_k.items(), key=lambda i: int(i[0]))}}


def shown_k(pass_at: dict[str, float]) -> list[int]:
    """The k of ``pass_at`` (``{"1": value, ...}``) the pages show, ascending: every k up to 5,
    then 10, 20, 50, 100, 200, 500, ... and the largest k, so a row's width grows with the
    logarithm of its attempts, not with them (the data files keep every k)."""
    ks = sorted(int(k) for k in pass_at)

    def round_number(k: int) -> bool:
        while k % 10 == 0:
            k //= 10
        return k in (1, 2, 5)

    return [k for k in ks if k <= 5 or round_number(k) or k == ks[-1]]


def shown_pass_at(pass_at: dict[str, float]) -> dict[str, float]:
    """``pass_at`` with only the k of :func:`shown_k` (keys stay strings)."""
    return {str(k): pass_at[str(k)] for k in shown_k(pass_at)}
