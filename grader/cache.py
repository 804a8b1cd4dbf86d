"""GradeCache: what grading memoizes between grades (tool answers, pristine scores and groups)."""

from __future__ import annotations

import hashlib
import threading
from collections.abc import Callable, Sequence
from pathlib import Path

from grader import promtool, routing
from grader.tool_store import ToolStore
from grader.workspace import load_workspace

REPLAY_CACHE_SIZE = 256
"""promtool replays a GradeCache keeps by default; past that, the oldest is dropped first."""

ANSWER_CACHE_SIZE = 8192
"""Rule-file checks and routing answers a GradeCache keeps; past that, the oldest go first."""

PRISTINE_CACHE_SIZE = 256
"""Tasks whose pristine scores and rule groups a GradeCache keeps (a long-lived server grades
fresh tasks without end); past that, the oldest task's go first and are computed again if
needed."""


class _Memo:
    """A dict bounded to ``size`` entries, the oldest dropped first."""

    def __init__(self, size: int) -> None:
        self.size, self.values = size, {}
        self._lock = threading.Lock()  # replays are memoized from the grader's worker threads

    def get(self, key):
        return self.values.get(key)

    def put(self, key, value) -> None:
        with self._lock:
            if key not in self.values and len(self.values) >= self.size:
                self.values.pop(next(iter(self.values)))
            self.values[key] = value


class GradeCache:
    """The memos one grader keeps between grades, each keyed by content so it never goes stale.

    - promtool replays, by the digest of a generated test file and the rule files it names
      (at most ``replay_size``, oldest dropped first): per-step grading re-grades workspaces
      whose rules did not change (a step that edits only alertmanager.yml), and the replay is
      then served from memory;
    - ``promtool check rules`` per rule file, ``amtool check-config`` per config and ``amtool
      config routes test`` (receivers and ``--tree`` path) per label set, by the bytes checked (at most :data:`ANSWER_CACHE_SIZE` each): a step that edits one
      file leaves the other answers as they were;
    - q of every requirement on a task's pristine repo, by the task's
      :func:`contract.task_roots.task_fingerprint`;
    - the pristine repo's rule groups by name, by the same fingerprint.

    With a :class:`grader.tool_store.ToolStore` (``store``), a tool answer missing from
    memory is looked up on disk before the tool runs, and kept there after.

    The pristine memos hold one entry per task content, at most :data:`PRISTINE_CACHE_SIZE`
    tasks, the oldest dropped first. Replays run from
    the grader's worker threads: each entry is read and written with single dict operations.
    """

    def __init__(self, replay_size: int = REPLAY_CACHE_SIZE, store: ToolStore | None = None) -> None:
        self._replays = _Memo(replay_size)
        self._rule_checks = _Memo(ANSWER_CACHE_SIZE)
        self._routes = _Memo(ANSWER_CACHE_SIZE)
        self._store = store
        self._pristine_scores = _Memo(PRISTINE_CACHE_SIZE)
        self._pristine_groups = _Memo(PRISTINE_CACHE_SIZE)

    def _answer(self, memo: _Memo, kind: str, key: str, valid: Callable[[object], bool]):
        """The memoized answer for ``key``: from memory, else from the store (when it has
        the expected shape); None when neither has it."""
        found = memo.get((kind, key))
        if found is None and self._store is not None:
            stored = self._store.get(kind, key)
            if stored is not None and valid(stored):
                memo.put((kind, key), stored)
                found = stored
        return found

    def _keep(self, memo: _Memo, kind: str, key: str, value) -> None:
        memo.put((kind, key), value)
        if self._store is not None:
            self._store.put(kind, key, value)

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
        rows = self._answer(self._replays, "replay", key, _failure_rows)
        if rows is None:
            failures = promtool.run_tests(test_path)
            rows = [[f.kind, f.check_id, f.time, f.exp, f.got] for f in failures]
            self._keep(self._replays, "replay", key, rows)
        return [promtool.Failure(*row) for row in rows]

    def check_rules(self, paths: list[Path]) -> list[str | None]:
        """:func:`grader.promtool.check_rules_many` on ``paths``, memoized per file on its name
        and bytes (promtool's message names the file): only files not seen run promtool."""
        keys = [_digest(p.name.encode(), p.read_bytes()) for p in paths]
        answers = [self._answer(self._rule_checks, "check-rules", k,
                                lambda v: isinstance(v, list) and len(v) == 1
                                and (v[0] is None or isinstance(v[0], str))) for k in keys]
        missing = [i for i, a in enumerate(answers) if a is None]
        checked = promtool.check_rules_many([paths[i] for i in missing]) if missing else []
        for i, problem in zip(missing, checked):
            answers[i] = [problem]
            self._keep(self._rule_checks, "check-rules", keys[i], answers[i])
        return [a[0] for a in answers]

    def routes(self, config_file: Path, label_sets: Sequence[dict[str, str]]) -> list[list[str]]:
        """:func:`grader.routing.resolve_many`, memoized per label set on the config's bytes
        and the labels: only label sets not seen with this config run amtool.

        Raises routing.RoutingError as ``resolve_many`` does (nothing of that call is kept).
        """
        config = Path(config_file).read_bytes()
        keys = [_digest(config, repr(sorted(ls.items())).encode()) for ls in label_sets]
        answers = [self._answer(self._routes, "routes", k, _strings) for k in keys]
        missing = [i for i, a in enumerate(answers) if a is None]
        resolved = routing.resolve_many(config_file, [label_sets[i] for i in missing]) if missing else []
        for i, receivers in zip(missing, resolved):
            answers[i] = receivers
            self._keep(self._routes, "routes", keys[i], receivers)
        return [list(a) for a in answers]

    def route_tree(self, config_file: Path, labels: dict[str, str]) -> list[str]:
        """:func:`grader.routing.route_tree` (amtool's ``--tree`` path), memoized on the
        config's bytes and the labels. Raises routing.RoutingError as it does (not kept)."""
        key = _digest(Path(config_file).read_bytes(), repr(sorted(labels.items())).encode())
        found = self._answer(self._routes, "route-tree", key, _strings)
        if found is None:
            found = routing.route_tree(config_file, labels)
            self._keep(self._routes, "route-tree", key, found)
        return list(found)

    def check_config(self, config_file: Path, *, has_templates: bool) -> str | None:
        """:func:`grader.routing.check_config` (``amtool check-config``), memoized on the
        config's bytes unless it loads templates (their files would be part of the answer).
        Raises routing.RoutingError as it does (not kept)."""
        if has_templates:
            return routing.check_config(config_file)
        key = _digest(Path(config_file).read_bytes())
        found = self._answer(self._routes, "check-config", key, lambda v: isinstance(v, list)
                             and len(v) == 1 and (v[0] is None or isinstance(v[0], str)))
        if found is None:
            found = [routing.check_config(config_file)]
            self._keep(self._routes, "check-config", key, found)
        return found[0]

    def pristine_scores(self, key: str, compute: Callable[[], dict[str, float]]) -> dict[str, float]:
        """Requirement id -> q of the pristine repo of the task whose fingerprint is ``key``;
        ``compute()`` grades it the first time."""
        found = self._pristine_scores.get(key)
        if found is None:
            found = compute()
            self._pristine_scores.put(key, found)
        return found

    def pristine_groups(self, task_dir: Path, key: str) -> dict:
        """Rule groups of the task's pristine repo by name (a later group of a name wins), for
        the task whose fingerprint is ``key``."""
        groups = self._pristine_groups.get(key)
        if groups is None:
            groups = {}
            for rule_file in load_workspace(task_dir / "environment" / "monitoring").rule_files:
                for group in rule_file.groups:
                    groups[group.get("name")] = group
            self._pristine_groups.put(key, groups)
        return groups

    def clear_replays(self) -> None:
        """Forget every tool answer, so the next grades run promtool and amtool again (the
        gate's determinism check and tests that must exercise the tools call this); the
        store on disk, if any, is no longer read or written by this cache."""
        self._replays.values.clear()
        self._rule_checks.values.clear()
        self._routes.values.clear()
        self._store = None


def _digest(*parts: bytes) -> str:
    digest = hashlib.sha256()
    for part in parts:
        digest.update(len(part).to_bytes(8, "big") + part)
    return digest.hexdigest()


def _failure_rows(value: object) -> bool:
    return isinstance(value, list) and all(
        isinstance(row, list) and len(row) == 5 and all(isinstance(v, str) for v in row)
        for row in value)


def _strings(value: object) -> bool:
    return isinstance(value, list) and all(isinstance(v, str) for v in value)
