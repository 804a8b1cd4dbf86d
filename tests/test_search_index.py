"""The cross-run search index spilled to disk (exporter.run_index.SearchIndex) gives the shards
the plain in-memory index gives, whatever the shard count, bucket count and flush size."""

from __future__ import annotations

import random
import zlib

import pytest

from exporter import run_index
from exporter.run_index import SearchIndex


def _plain_shards(runs: list[dict[str, list[int]]], count: int) -> list[dict]:
    """The shards by the definition in docs/formats.md, held whole in memory."""
    shards: list[dict] = [{"tokens": {}} for _ in range(count)]
    postings: dict[str, dict[int, list[int]]] = {}
    for number, found in enumerate(runs):
        for token, steps in found.items():
            postings.setdefault(token, {})[number] = steps
    for token in sorted(postings):
        shards[zlib.crc32(token.encode()) % count]["tokens"][token] = [
            [number, *postings[token][number]] for number in sorted(postings[token])]
    return shards


def _runs(seed: int, count: int) -> list[dict[str, list[int]]]:
    rng = random.Random(seed)
    words = [f"w{n:04d}" for n in range(400)] + ["alertmanager", "receiver", "for_5m"]
    return [{word: sorted(rng.sample(range(30), rng.randint(1, 4))) for word in rng.sample(words, rng.randint(0, 60))}
            for _ in range(count)]


@pytest.mark.parametrize(("held", "buckets", "flush", "count"), [
    (10**9, 1024, 16 * 1024, None),   # all held in memory, as a small site is: one shard here
    (10**9, 1024, 16 * 1024, 4),      # held, several shards
    (1000, 1024, 16 * 1024, None),    # spilled once past 1,000 postings, midway
    (0, 8, 64, 4),                    # spilled from the first run; several buckets a shard, many flushes
    (0, 8, 64, 32),                   # more shards than buckets: a bucket is cut by crc32 % count
    (0, 1, 1, 3),                     # one bucket, every record flushed
])
def test_spilled_index_gives_the_plain_shards(monkeypatch, held, buckets, flush, count):
    monkeypatch.setattr(SearchIndex, "HELD_POSTINGS", held)
    monkeypatch.setattr(SearchIndex, "BUCKETS", buckets)
    monkeypatch.setattr(SearchIndex, "FLUSH_BYTES", flush)
    runs = _runs(buckets + flush, 300)
    with SearchIndex() as index:
        for number, found in enumerate(runs):
            index.add_tokens(number, found)
        assert (index._held is None) == (held < sum(map(len, runs))), "held or spilled as the case says"
        shards = list(index.shards(count))
        expected_count = index.shard_count()
    assert shards == _plain_shards(runs, count or expected_count)
    assert sum(len(shard["tokens"]) for shard in shards) == len({t for found in runs for t in found}) > 400


@pytest.mark.parametrize("held", [0, 10**9])
def test_shard_count_keeps_shards_near_the_target(monkeypatch, held):
    monkeypatch.setattr(SearchIndex, "HELD_POSTINGS", held)
    runs = _runs(7, 300)
    size = sum(len(t) for t in {t for found in runs for t in found}) + 8 * sum(len(found) for found in runs)
    monkeypatch.setattr(run_index, "SEARCH_SHARD_TARGET", size // 5)
    with SearchIndex() as index:
        for number, found in enumerate(runs):
            index.add_tokens(number, found)
        assert index.shard_count() == 8, "the smallest power of two with size / count <= target"


def test_a_held_index_makes_no_spill_file_and_a_spilled_one_removes_it(monkeypatch):
    made = []
    real = run_index.tempfile.TemporaryFile

    def recording(*args, **kwargs):
        made.append(real(*args, **kwargs))
        return made[-1]

    monkeypatch.setattr(run_index.tempfile, "TemporaryFile", recording)
    with SearchIndex() as index:
        index.add_tokens(0, {"alpha": [1], "beta": [2]})
        assert len(list(index.shards(2))) == 2
    assert made == [], "an index under HELD_POSTINGS writes no file"
    monkeypatch.setattr(SearchIndex, "HELD_POSTINGS", 1)
    with SearchIndex() as index:
        index.add_tokens(0, {"alpha": [1], "beta": [2]})
        shards = list(index.shards(1))
    assert shards == [{"tokens": {"alpha": [[0, 1]], "beta": [[0, 2]]}}]
    assert len(made) == 1 and made[0].closed


def test_runs_must_be_added_in_run_order():
    with SearchIndex() as index:
        index.add_tokens(3, {"alpha": [1]})
        with pytest.raises(ValueError, match="run 3 added after run 3"):
            index.add_tokens(3, {"beta": [1]})
        with pytest.raises(ValueError, match="run 2 added after run 3"):
            index.add_tokens(2, {"beta": [1]})
