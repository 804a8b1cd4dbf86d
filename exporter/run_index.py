"""The home page's run list in shards, its filter facets, and the cross-run search index.

``data/index.json`` keeps every run row (the contract for tools); the home page instead loads
``data/home.json`` (small: counts, facets, shard list) and the shards it needs, so it stays
fast with 10,000 runs. Search postings are sharded by a hash of the token.
"""

from __future__ import annotations

import re
import tempfile
import zlib
from collections import Counter, defaultdict
from typing import IO, Any, Self

import orjson

from contract.site import RunRow, SiteStep

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


def shard_rows(summaries: list[RunRow]) -> list[dict[str, Any]]:
    """The run rows (sorted by run_id) cut into shards ``{fields, rows[[...]]}`` of ``SHARD_ROWS``."""
    ordered = sorted(summaries, key=lambda s: s.run_id)
    shards = []
    for start in range(0, max(1, len(ordered)), SHARD_ROWS):
        chunk = ordered[start : start + SHARD_ROWS]
        shards.append(
            {"fields": list(ROW_FIELDS), "rows": [[getattr(row, f) for f in ROW_FIELDS] for row in chunk]}
        )
    return shards


def facets(summaries: list[RunRow]) -> dict[str, list[list[Any]]]:
    """Per filter field, ``[[value, run count], ...]`` sorted by value's text (None as "")."""
    result = {}
    for name in FACET_FIELDS:
        counts = Counter(getattr(summary, name) for summary in summaries)
        result[name] = [
            [value, counts[value]] for value in sorted(counts, key=lambda v: ("" if v is None else str(v)))
        ]
    return result


def tokens(text: str) -> set[str]:
    """The searchable tokens of ``text``: lowercase runs of ``[a-z0-9_]``, 3 to 40 characters."""
    return set(TOKEN.findall(text.lower()))


def step_search_text(step: SiteStep) -> str:
    """What cross-run search covers in a step: tool name, arguments (as JSON text) and output."""
    parts = []
    tool = step.tool
    if tool:
        parts.append(str(tool.get("name") or ""))
        parts.append(orjson.dumps(tool.get("arguments"), option=orjson.OPT_SORT_KEYS).decode())
    if step.output:
        parts.append(step.output)
    return "\n".join(parts)


def run_tokens(steps: list[SiteStep]) -> dict[str, list[int]]:
    """``{token: [step n, ...]}`` of one run: the first :data:`STEPS_PER_POSTING` steps holding
    each token, in step order."""
    found: dict[str, list[int]] = {}
    for step in steps:
        n = step.n
        for token in tokens(step_search_text(step)):
            listed = found.setdefault(token, [])
            if len(listed) < STEPS_PER_POSTING:
                listed.append(n)
    return found


class SearchIndex:
    """Token -> postings ``[[run number, step, ...], ...]`` over all exported runs, built with
    memory bounded by one shard: past :data:`HELD_POSTINGS` postings held as added (a site of
    a few thousand runs), every run's postings are spilled into :data:`BUCKETS` buckets by
    ``crc32(token)`` in an unnamed temporary file; :meth:`shards` then makes one shard at a
    time from the buckets it covers. Runs must be added in increasing run number, each once.
    :meth:`close` (or a ``with`` block) frees the file, made at the first spill (an index that
    never spills makes none)."""

    HELD_POSTINGS = 200_000
    """Postings held in memory before the index spills to its file (tens of MB at most)."""

    BUCKETS = 1024
    """Buckets the postings are spilled into (a power of two: shard ``k`` of ``n`` shards is
    the union of the buckets ``b`` with ``b % n == k`` while ``n`` is at most this)."""
    FLUSH_BYTES = 16 * 1024
    """A bucket's postings are held in memory up to this many bytes, then appended to the file."""

    def __init__(self) -> None:
        self._file: IO[bytes] | None = None
        self._buffers: list[bytearray] = []
        self._chunks: list[list[tuple[int, int]]] = []
        self._end = 0
        self._last_run = -1
        self._postings = 0
        self._held: list[tuple[int, dict[str, list[int]]]] | None = []
        """Runs added while under :data:`HELD_POSTINGS` (None once spilled)."""

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Remove the spill file (if one was made)."""
        if self._file is not None:
            self._file.close()

    def add_tokens(self, run_number: int, found: dict[str, list[int]]) -> None:
        """Index one run by its :func:`run_tokens` (``{token: [step, ...]}``).

        Raises:
            ValueError: ``run_number`` is not above the last one added (each token's postings
                are kept in the order added, which must be run order).
        """
        if run_number <= self._last_run:
            raise ValueError(f"run {run_number} added after run {self._last_run}")
        self._last_run = run_number
        self._postings += len(found)
        if self._held is not None:
            self._held.append((run_number, found))
            if self._postings <= self.HELD_POSTINGS:
                return
            held, self._held = self._held, None
            self._file = tempfile.TemporaryFile(prefix="alertforge-search-")  # noqa: SIM115 - closed by close()
            self._buffers = [bytearray() for _ in range(self.BUCKETS)]
            self._chunks = [[] for _ in range(self.BUCKETS)]
            for number, tokens_of_run in held:
                self._spill(number, tokens_of_run)
            return
        self._spill(run_number, found)

    def _spill(self, run_number: int, found: dict[str, list[int]]) -> None:
        grouped: dict[int, dict[str, list[int]]] = defaultdict(dict)
        for token, steps in found.items():
            grouped[shard_of(token, self.BUCKETS)][token] = steps
        for bucket, postings in grouped.items():
            buffer = self._buffers[bucket]
            buffer += orjson.dumps([run_number, postings]) + b"\n"
            if len(buffer) >= self.FLUSH_BYTES:
                self._flush(bucket)

    def _flush(self, bucket: int) -> None:
        buffer = self._buffers[bucket]
        self._file.seek(self._end)
        self._file.write(buffer)
        self._chunks[bucket].append((self._end, len(buffer)))
        self._end += len(buffer)
        self._buffers[bucket] = bytearray()

    def _bucket(self, bucket: int):
        """The ``[run number, {token: [step, ...]}]`` records of ``bucket``, in the order added."""
        for offset, length in self._chunks[bucket]:
            self._file.seek(offset)
            for line in self._file.read(length).splitlines():
                yield orjson.loads(line)
        for line in bytes(self._buffers[bucket]).splitlines():
            yield orjson.loads(line)

    def shard_count(self) -> int:
        """The number of shards: the smallest power of two keeping the index's estimated size
        (each distinct token's length plus 8 bytes a posting) per shard at most
        :data:`SEARCH_SHARD_TARGET`."""
        size = 8 * self._postings
        if self._held is not None:
            size += sum(len(token) for token in {t for _, found in self._held for t in found})
        for bucket in range(self.BUCKETS if self._held is None else 0):
            size += sum(len(token) for token in {t for _, found in self._bucket(bucket) for t in found})
        count = 1
        while size / count > SEARCH_SHARD_TARGET:
            count *= 2
        return count

    def shards(self, count: int | None = None):
        """Yield the index cut into ``count`` (default :meth:`shard_count`) shards by
        ``crc32(token)``, one at a time in shard order; each shard is ``{tokens: {token:
        [[run number, step, ...], ...]}}``, tokens sorted, postings by run number (the order
        added: a token's postings are all in one bucket)."""
        count = self.shard_count() if count is None else count
        if self._held is not None:  # all in memory: every shard in one pass
            postings_of: list[dict[str, list[list[int]]]] = [defaultdict(list) for _ in range(count)]
            shard_by_token: dict[str, int] = {}  # a token is in many runs: hashed once
            for run_number, found in self._held:
                for token, steps in found.items():
                    shard = shard_by_token.get(token)
                    if shard is None:
                        shard = shard_by_token[token] = shard_of(token, count)
                    postings_of[shard][token].append([run_number, *steps])
            for postings in postings_of:
                yield {"tokens": {token: postings[token] for token in sorted(postings)}}
            return
        for number in range(count):
            postings: dict[str, list[list[int]]] = defaultdict(list)
            for bucket in range(number % self.BUCKETS, self.BUCKETS, count) if count <= self.BUCKETS else (
                    [number % self.BUCKETS]):
                for run_number, found in self._bucket(bucket):
                    for token, steps in found.items():
                        if count <= self.BUCKETS or shard_of(token, count) == number:
                            postings[token].append([run_number, *steps])
            yield {"tokens": {token: postings[token] for token in sorted(postings)}}


def shard_of(token: str, count: int) -> int:
    """The search shard holding ``token`` among ``count`` shards (the viewer computes the same)."""
    return zlib.crc32(token.encode("utf-8")) % count
