"""GradeCache: what grading memoizes between grades (promtool replays, pristine scores and groups)."""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from pathlib import Path

from grader import promtool
from grader.workspace import load_workspace

REPLAY_CACHE_SIZE = 256
"""promtool replays a GradeCache keeps by default; past that, the oldest is dropped first."""


class GradeCache:
    """The memos one grader keeps between grades, each keyed by content so it never goes stale.

    - promtool replays, by the digest of a generated test file and the rule files it names
      (at most ``replay_size``, oldest dropped first): per-step grading re-grades workspaces
      whose rules did not change (a step that edits only alertmanager.yml), and the replay is
      then served from memory;
    - q of every requirement on a task's pristine repo, by the task's
      :func:`contract.task_roots.task_fingerprint`;
    - the pristine repo's rule groups by name, by the same fingerprint.

    The pristine memos hold one entry per task content and are not bounded. Replays run from
    the grader's worker threads: each entry is read and written with single dict operations.
    """

    def __init__(self, replay_size: int = REPLAY_CACHE_SIZE) -> None:
        self._replay_size = replay_size
        self._replays: dict[str, list[promtool.Failure]] = {}
        self._pristine_scores: dict[str, dict[str, float]] = {}
        self._pristine_groups: dict[str, dict] = {}

    def replay(self, test_path: Path) -> list[promtool.Failure]:
        """:func:`grader.promtool.run_tests` on ``test_path``, memoized on the content of the
        test file (its own folder's path left out) and of the ``rules/*.yml`` beside it.

        Raises what ``run_tests`` raises (promtool.GraderError); a failure is not memoized.
        """
        digest = hashlib.sha256()
        text = test_path.read_text(encoding="utf-8")
        digest.update(text.replace(str(test_path.parent), "").encode())
        for path in sorted((test_path.parent / "rules").glob("*.yml")):  # the files it names
            digest.update(path.name.encode() + b"\0" + path.read_bytes() + b"\0")
        key = digest.hexdigest()
        if key not in self._replays:
            if len(self._replays) >= self._replay_size:
                self._replays.pop(next(iter(self._replays)))
            self._replays[key] = promtool.run_tests(test_path)
        return self._replays[key]

    def pristine_scores(self, key: str, compute: Callable[[], dict[str, float]]) -> dict[str, float]:
        """Requirement id -> q of the pristine repo of the task whose fingerprint is ``key``;
        ``compute()`` grades it the first time."""
        if key not in self._pristine_scores:
            self._pristine_scores[key] = compute()
        return self._pristine_scores[key]

    def pristine_groups(self, task_dir: Path, key: str) -> dict:
        """Rule groups of the task's pristine repo by name (a later group of a name wins), for
        the task whose fingerprint is ``key``."""
        if key not in self._pristine_groups:
            groups = {}
            for rule_file in load_workspace(task_dir / "environment" / "monitoring").rule_files:
                for group in rule_file.groups:
                    groups[group.get("name")] = group
            self._pristine_groups[key] = groups
        return self._pristine_groups[key]

    def clear_replays(self) -> None:
        """Forget every promtool replay, so the next grades run promtool again (the gate's
        determinism check and tests that must exercise promtool call this)."""
        self._replays.clear()
