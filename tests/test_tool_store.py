"""The tool store (grader/tool_store.py): promtool and amtool answers kept on disk by content,
shared between graders and processes, bounded, keyed by the binaries that answered."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from contract.paths import TASKS_DIR, task_dirs
from grader import promtool, routing, tool_store
from grader.cache import GradeCache
from grader.grade import Grader
from grader.tool_store import ToolStore

TASK = task_dirs(TASKS_DIR)[0]
ROOT = Path(__file__).resolve().parents[1]


def test_a_second_grader_sharing_the_store_grades_alike_without_running_the_tools(tmp_path, monkeypatch):
    workspace = TASK / "solution" / "monitoring"
    first = Grader(GradeCache(store=ToolStore(tmp_path / "store"))).grade_result(TASK, workspace)
    assert len(list((tmp_path / "store").glob("*.json"))) > 3

    def refuse(*_args, **_kwargs):
        raise AssertionError("a tool ran although the store holds its answer")

    monkeypatch.setattr(promtool, "run_tests", refuse)
    monkeypatch.setattr(promtool, "check_rules_many", refuse)
    monkeypatch.setattr(routing, "resolve_many", refuse)
    second = Grader(GradeCache(store=ToolStore(tmp_path / "store"))).grade_result(TASK, workspace)
    assert second.checks == first.checks
    assert second.reward == first.reward


def test_an_entry_of_the_wrong_shape_or_not_json_is_absent_and_the_tool_runs(tmp_path, monkeypatch):
    store = ToolStore(tmp_path / "store")
    cache = GradeCache(store=store)
    rules = tmp_path / "ws" / "a.yml"
    rules.parent.mkdir()
    rules.write_text("groups: []\n")
    assert cache.check_rules([rules]) == [None]
    (entry,) = (tmp_path / "store").glob("*.json")
    calls = []
    real = promtool.check_rules_many
    monkeypatch.setattr(promtool, "check_rules_many", lambda paths: calls.append(paths) or real(paths))
    for damaged in (b"not json", b'{"a": 1}', b"[[1, 2]]"):
        entry.write_bytes(damaged)
        assert GradeCache(store=ToolStore(tmp_path / "store")).check_rules([rules]) == [None]
    assert len(calls) == 3


def test_another_binary_is_another_key(tmp_path, monkeypatch):
    folder = tmp_path / "store"
    ToolStore(folder).put("replay", "abc", [["check", "A1", "1m", "x", "y"]])
    assert ToolStore(folder).get("replay", "abc") == [["check", "A1", "1m", "x", "y"]]
    copy = tmp_path / "bin" / "promtool"
    copy.parent.mkdir()
    shutil.copy2(shutil.which("promtool"), copy)
    os.utime(copy, ns=(1, 1))
    monkeypatch.setattr(tool_store, "PROMTOOL", str(copy))
    assert ToolStore(folder).get("replay", "abc") is None


def test_the_folder_keeps_at_most_its_bound_the_newest_kept(tmp_path, monkeypatch):
    monkeypatch.setattr(tool_store, "TRIM_EVERY", 1)
    store = ToolStore(tmp_path / "store", max_entries=3)
    for n in range(6):
        store.put("routes", f"key-{n}", [f"receiver-{n}"])
        os.utime(store._path(tmp_path / "store", "routes", f"key-{n}"), ns=(n * 10**9, n * 10**9))
    store.trim()
    assert len(list((tmp_path / "store").glob("*.json"))) == 3
    assert [store.get("routes", f"key-{n}") for n in range(6)] == [
        None, None, None, ["receiver-3"], ["receiver-4"], ["receiver-5"]]


def test_clearing_the_replays_stops_reading_the_store(tmp_path, monkeypatch):
    store = ToolStore(tmp_path / "store")
    store_cache = GradeCache(store=store)
    rules = tmp_path / "a.yml"
    rules.write_text("groups: []\n")
    store_cache.check_rules([rules])
    calls = []
    real = promtool.check_rules_many
    monkeypatch.setattr(promtool, "check_rules_many", lambda paths: calls.append(paths) or real(paths))
    cache = GradeCache(store=ToolStore(tmp_path / "store"))
    cache.check_rules([rules])
    assert calls == []
    cache.clear_replays()
    cache.check_rules([rules])
    assert len(calls) == 1


def test_without_the_variable_a_cli_grade_writes_no_store(tmp_path):
    env = {k: v for k, v in os.environ.items() if k != tool_store.ENV}
    env["TMPDIR"] = str(tmp_path)
    proc = subprocess.run([sys.executable, "-m", "alertforge.cli", "grade", str(TASK)], cwd=ROOT,
                          env=env, capture_output=True, text=True, check=False)
    assert proc.returncode == 0, proc.stderr
    assert list(tmp_path.iterdir()) == []
    env[tool_store.ENV] = str(tmp_path / "store")
    proc = subprocess.run([sys.executable, "-m", "alertforge.cli", "grade", str(TASK)], cwd=ROOT,
                          env=env, capture_output=True, text=True, check=False)
    assert proc.returncode == 0, proc.stderr
    assert list((tmp_path / "store").glob("*.json"))


@pytest.mark.parametrize("value", ["", "   "])
def test_an_empty_variable_keeps_nothing(tmp_path, monkeypatch, value):
    monkeypatch.setenv(tool_store.ENV, value)
    store = ToolStore()
    store.put("routes", "k", ["r"])
    assert store.get("routes", "k") is None


def test_the_pristine_memos_are_bounded_oldest_first():
    """A long-lived server grades fresh tasks without end: the pristine memos keep at most
    PRISTINE_CACHE_SIZE tasks, the oldest dropped first and computed again when asked."""
    from grader.cache import PRISTINE_CACHE_SIZE, GradeCache

    cache, computed = GradeCache(), []

    def scores(key):
        return cache.pristine_scores(key, lambda: computed.append(key) or {"R1": 1.0})

    for n in range(PRISTINE_CACHE_SIZE + 40):
        scores(f"task-{n}")
    assert len(cache._pristine_scores.values) == PRISTINE_CACHE_SIZE
    scores(f"task-{PRISTINE_CACHE_SIZE + 39}")  # the newest: kept
    assert len(computed) == PRISTINE_CACHE_SIZE + 40
    scores("task-0")  # the oldest: dropped, computed again
    assert computed[-1] == "task-0" and len(computed) == PRISTINE_CACHE_SIZE + 41
