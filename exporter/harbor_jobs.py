"""Harbor's job level: one row per job of the imported trials, from each trial's own result
(run.json ``harbor``, :mod:`recorder.importers.harbor.importer`).

A row: ``{job, trials, rewarded, mean_reward, regraded, mean_regrade, errors, error_types,
prompt_tokens, completion_tokens, cost_usd}``. ``rewarded`` counts the trials with a verifier
reward (``harbor.reward``, the headline :func:`~recorder.importers.harbor.trials.harbor_reward`
chose); ``mean_reward`` is over those only (None when none has one): a trial with no reward is
counted as such, never as 0. ``regraded``/``mean_regrade`` likewise for the rewards re-graded
here (``regrade.reward``). ``errors`` counts trials whose result names an exception, by type
in ``error_types``. Tokens and cost are the sums of each trial's ``harbor.tokens.all`` (main
agent and subagents, copied context left out). Values of the wrong type count as missing.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any

from exporter.run_record import HarborTrial


def _number(value: Any) -> float | None:
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def _mean(values: list[float]) -> float | None:
    return round(sum(values) / len(values), 6) if values else None


def job_rows(trials: list[HarborTrial]) -> list[dict[str, Any]]:
    """The job rows (see the module) of the imported Harbor ``trials`` (one per run imported
    from Harbor), sorted by job name; [] when there is none."""
    jobs: dict[str, list[HarborTrial]] = defaultdict(list)
    for trial in trials:
        jobs[str(trial.harbor.get("job") or "(no job)")].append(trial)
    rows = []
    for job, summaries in sorted(jobs.items()):
        rewards, regrades, tokens = [], [], {"prompt_tokens": 0, "completion_tokens": 0, "cost_usd": 0.0}
        errors: dict[str, int] = defaultdict(int)
        for summary in summaries:
            harbor = summary.harbor
            if (reward := _number(harbor.get("reward"))) is not None:
                rewards.append(reward)
            regrade = summary.regrade or {}
            if (again := _number(regrade.get("reward"))) is not None:
                regrades.append(again)
            exception = harbor.get("exception")
            if isinstance(exception, dict) and exception:
                errors[str(exception.get("type") or "error")] += 1
            total = (harbor.get("tokens") or {}).get("all") if isinstance(harbor.get("tokens"), dict) else None
            for key in tokens:
                tokens[key] += _number((total or {}).get(key) if isinstance(total, dict) else None) or 0
        rows.append({"job": job, "trials": len(summaries), "rewarded": len(rewards), "mean_reward": _mean(rewards),
                     "regraded": len(regrades), "mean_regrade": _mean(regrades),
                     "errors": sum(errors.values()), "error_types": dict(sorted(errors.items())),
                     "prompt_tokens": int(tokens["prompt_tokens"]), "completion_tokens": int(tokens["completion_tokens"]),
                     "cost_usd": round(tokens["cost_usd"], 6)})
    return rows
