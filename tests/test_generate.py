"""The generator is deterministic: the bundled tasks are exactly what it writes."""

from __future__ import annotations

from pathlib import Path

from alertforge.paths import TASKS_DIR, task_dirs
from tasks.generator.generate import generate


def _files(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def test_regenerating_gives_the_committed_tasks_byte_for_byte(tmp_path):
    written = generate(tmp_path / "a")
    assert [p.name for p in written] == [p.name for p in task_dirs(TASKS_DIR)]
    for task in written:
        assert _files(task) == _files(TASKS_DIR / task.name), task.name


def test_a_master_seed_gives_a_fresh_but_reproducible_set(tmp_path):
    first = generate(tmp_path / "a", master_seed=7)
    second = generate(tmp_path / "b", master_seed=7)
    assert [_files(p) for p in first] == [_files(p) for p in second]
    bundled = {p.name for p in task_dirs(TASKS_DIR)}
    assert not bundled & {p.name for p in first}
