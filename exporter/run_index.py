"""The home page's run list in shards, its filter facets, and the cross-run search index.

``data/index.json`` keeps every run row (the contract for tools); the home page instead loads
``data/home.json`` (small: counts, facets, shard list) and the shards it needs, so it stays
fast with 10,000 runs. Search postings are sharded by a hash of the token.
"""

from __future__ import annotations

import re
import zlib
from collections import Counter, defaultdict
from typing import Any

SHARD_ROWS = 250
"""Run rows per ``data/runs-index/<k>.json`` shard: the home page's first load takes one (about
55 kB, whatever the number of runs); filters and sorting load the rest, search only the
shards holding the runs it lists."""

ROW_FIELDS = (
    "run_id", "kind", "task_id", "workflow", "tier", "policy", "agent", "model",
    "reward", "solved", "steps", "status", "incident",
)
FACET_FIELDS = ("workflow", "tier", "policy", "agent", "model", "kind", "solved", "status")

TOKEN = re.compile(r"[a-z0-9_]{3,40}")
STEPS_PER_POSTING = 16
"""Step numbers kept per (token, run): enough to jump to the first matches."""
SEARCH_SHARD_TARGET = 1_500_000
"""Aim for search shards of about this many bytes (a power-of-two shard count)."""


def shard_rows(summaries: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The run rows (sorted by run_id) cut into shards ``{fields, rows[[...]]}`` of ``SHARD_ROWS``."""
    ordered = sorted(summaries, key=lambda s: s["run_id"])
    shards = []
    for start in range(0, max(1, len(ordered)), SHARD_ROWS):
        chunk = ordered[start : start + SHARD_ROWS]
        shards.append(
            {"fields": list(ROW_FIELDS), "rows": [[row.get(f) for f in ROW_FIELDS] for row in chunk]}
        )
    return shards


def facets(summaries: list[dict[str, Any]]) -> dict[str, list[list[Any]]]:
    """Per filter field, ``[[value, run count], ...]`` sorted by value's text (None as "")."""
    result = {}
    for name in FACET_FIELDS:
        counts = Counter(summary.get(name) for summary in summaries)
        result[name] = [
            [value, counts[value]] for value in sorted(counts, key=lambda v: ("" if v is None else str(v)))
        ]
    return result


def tokens(text: str) -> set[str]:
    """The searchable tokens of ``text``: lowercase runs of ``[a-z0-9_]``, 3 to 40 characters."""
    return set(TOKEN.findall(text.lower()))


def step_search_text(step: dict[str, Any]) -> str:
    """What cross-run search covers in a step: tool name, arguments (as JSON text) and output."""
    import orjson

    parts = []
    tool = step.get("tool")
    if tool:
        parts.append(str(tool.get("name") or ""))
        parts.append(orjson.dumps(tool.get("arguments"), option=orjson.OPT_SORT_KEYS).decode())
    if step.get("output"):
        parts.append(step["output"])
    return "\n".join(parts)


def run_tokens(steps: list[dict[str, Any]], full_texts: dict | None = None) -> dict[str, list[int]]:
    """``{token: [step n, ...]}`` of one run: the first :data:`STEPS_PER_POSTING` steps holding
    each token, in step order (``full_texts`` as :meth:`SearchIndex.add_run`'s)."""
    found: dict[str, list[int]] = {}
    for step in steps:
        n = step["n"]
        text = (full_texts or {}).get(n)
        if text is None:
            text = step_search_text(step)
        for token in tokens(text):
            listed = found.setdefault(token, [])
            if len(listed) < STEPS_PER_POSTING:
                listed.append(n)
    return found


class SearchIndex:
    """Token -> postings ``[[run number, step, ...], ...]`` over all exported runs."""

    def __init__(self) -> None:
        self.postings: dict[str, dict[int, list[int]]] = defaultdict(dict)

    def add_run(self, run_number: int, steps: list[dict[str, Any]], full_texts: dict | None = None) -> None:
        """Index one run's steps (``full_texts``: ``{n: text}`` overriding a step's search text)."""
        self.add_tokens(run_number, run_tokens(steps, full_texts))

    def add_tokens(self, run_number: int, found: dict[str, list[int]]) -> None:
        """Index one run by its :func:`run_tokens`."""
        for token, steps in found.items():
            self.postings[token][run_number] = list(steps)

    def shards(self) -> list[dict[str, Any]]:
        """The index cut into a power-of-two number of shards by ``crc32(token)``; each shard is
        ``{tokens: {token: [[run number, step, ...], ...]}}`` with postings sorted by run number."""
        size = sum(len(token) + 8 * len(runs) for token, runs in self.postings.items())
        count = 1
        while size / count > SEARCH_SHARD_TARGET:
            count *= 2
        shards: list[dict[str, Any]] = [{"tokens": {}} for _ in range(count)]
        for token in sorted(self.postings):
            runs = self.postings[token]
            shard = shards[shard_of(token, count)]
            shard["tokens"][token] = [[number, *runs[number]] for number in sorted(runs)]
        return shards


def shard_of(token: str, count: int) -> int:
    """The search shard holding ``token`` among ``count`` shards (the viewer computes the same)."""
    return zlib.crc32(token.encode("utf-8")) % count
