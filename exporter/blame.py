"""Blame: for every failing check, the step that gave it its failure (the last pass-to-fail step, or the step its cause changed kind at) and the diff hunk of it.

Computed from the per-step check states and diffs alone (the exporter reads files only). The
hunk is the one of that step's diff whose changed lines name most of what the check's cause
names (alert, receiver, label, matcher); the first changed hunk when none names anything;
none when the step changed no file (step 0, the pristine repo, or an ungraded step).
"""

from __future__ import annotations

import re
from typing import Any

from contract.site import SiteStep

_TOKEN = re.compile(r"[A-Za-z_][A-Za-z0-9_:.-]{2,}")
_FACT_KEYS = ("alert", "receiver", "label", "item", "matcher", "file")


def _cause_tokens(check: dict[str, Any], cause: dict[str, Any] | None) -> set[str]:
    """Names a check and its cause mention: facts' names, the quoted words of the summary."""
    facts = (cause or {}).get("facts") or {}
    tokens = {str(facts[k]) for k in _FACT_KEYS if isinstance(facts.get(k), str)}
    listed = [facts.get(key) for key in ("missing", "extra")]
    for item in [i for value in listed if isinstance(value, list) for i in value]:
        if isinstance(item, dict):
            tokens |= {str(item.get(k)) for k in ("receiver", "matcher", "label") if item.get(k)}
    tokens |= set(re.findall(r"[A-Z][A-Za-z0-9]+[A-Z][A-Za-z0-9]+", (cause or {}).get("summary", "")))
    tokens |= set(re.findall(r"[A-Z][A-Za-z0-9]+[A-Z][A-Za-z0-9]+", str(check.get("label") or "")))
    return {t for t in tokens if len(t) >= 3}


def pick_hunk(diff: dict[str, Any] | None, tokens: set[str]) -> int | None:
    """Index of the hunk of ``diff`` (``{hunks: [{header, lines: [[op, text]]}]}``) whose
    added or removed lines name most ``tokens``; the first hunk when none does; None when the
    diff has no hunk."""
    hunks = (diff or {}).get("hunks") or []
    if not hunks:
        return None
    scores = []
    for hunk in hunks:
        changed = " ".join(text for op, text in hunk.get("lines", []) if op in "+-")
        scores.append(sum(1 for t in tokens if t in changed))
    best = max(range(len(hunks)), key=lambda i: (scores[i], -i))
    return best


def attach_blame(steps: list[SiteStep], checks: list[dict[str, Any]]) -> None:
    """Set ``blame`` on each step: ``{check id: hunk index or None}`` for every check that
    turns red there (state ``0`` at step n, not ``0`` at step n - 1; at step 0 every failing
    check, which no change of the agent broke), and for every check that stays red at a step
    that changes files while its cause changes kind (the step gave it the cause it now has: a
    route check red in the pristine repo for a missing route and red later for a catch-all
    route is blamed on the catch-all's step, not on the pristine repo). A check's blame at
    step n is the latest entry at or before n while it stays red (:func:`blame_at`).

    ``causes`` on a step is a delta (``{check id: cause}`` where it starts or changes,
    ``null`` where it ends, exporter.steps), so the current cause kind is carried along.
    """
    previous = ""
    kinds: dict[str, str | None] = {}
    for n, step in enumerate(steps):
        states = step.checks or ""
        changed = step.causes or {}
        blame = {}
        for index, check in enumerate(checks):
            cid = check["id"]
            cause = changed.get(cid)
            kind_before = kinds.get(cid)
            if cid in changed:
                kinds[cid] = cause.get("kind") if isinstance(cause, dict) else None
            if index >= len(states) or states[index] != "0":
                continue
            turned_red = n == 0 or index >= len(previous) or previous[index] != "0"
            new_cause = (n > 0 and isinstance(cause, dict) and kind_before is not None
                         and cause.get("kind") != kind_before and (step.diff or {}).get("hunks"))
            if turned_red or new_cause:
                tokens = _cause_tokens(check, cause if isinstance(cause, dict) else None)
                blame[cid] = pick_hunk(step.diff, tokens) if n else None
        step.blame = blame
        previous = states


def blame_at(steps: list[SiteStep], n: int, check_id: str) -> dict[str, Any] | None:
    """``{step, hunk}`` of a check failing at step n (steps with ``blame`` from
    :func:`attach_blame`), or None when it does not fail there."""
    for m in range(n, -1, -1):
        if check_id in (steps[m].blame or {}):
            return {"step": m, "hunk": steps[m].blame[check_id]}
    return None
