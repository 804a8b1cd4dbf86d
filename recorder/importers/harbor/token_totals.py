"""Token and cost totals of an imported trajectory, copied-context steps left out.

ATIF v1.5 ``is_copied_context`` marks steps copied in from an earlier segment after
summarization; their metrics were already counted where they first ran, so summing them
again double-counts (Arize-ai/phoenix#14975). Totals are sums of ``step.metrics``
(``prompt_tokens``, ``completion_tokens``, ``cached_tokens``, ``cost_usd``) over the steps
that are not copied context, for the main trajectory and, apart, its subagents.
"""

from __future__ import annotations

from typing import Any

from recorder.importers.harbor.subagents import walk

FIELDS = ("prompt_tokens", "completion_tokens", "cached_tokens", "cost_usd")


def _sum(steps: list[dict]) -> dict[str, Any]:
    totals: dict[str, Any] = {name: 0 for name in FIELDS}
    counted = copied = 0
    for step in steps:
        metrics = step.get("metrics")
        if step.get("is_copied_context"):
            copied += 1
            continue
        if not isinstance(metrics, dict):
            continue
        counted += 1
        for name in FIELDS:
            value = metrics.get(name)
            if isinstance(value, (int, float)) and not isinstance(value, bool):
                totals[name] += value
    totals["cost_usd"] = round(totals["cost_usd"], 6)
    return {**totals, "steps_counted": counted, "copied_context_steps": copied}


def token_totals(doc: dict) -> dict[str, Any]:
    """``{main: totals, subagents: totals, all: totals}``; totals are ``{prompt_tokens,
    completion_tokens, cached_tokens, cost_usd (USD, 6 decimals), steps_counted,
    copied_context_steps}`` (tokens as the writer counted them)."""
    subs = [step for sub in walk(doc)[1:] for step in sub.get("steps") or []]
    main, nested = _sum(doc.get("steps") or []), _sum(subs)
    both = {name: main[name] + nested[name] for name in (*FIELDS, "steps_counted",
                                                          "copied_context_steps")}
    both["cost_usd"] = round(both["cost_usd"], 6)
    return {"main": main, "subagents": nested, "all": both}
