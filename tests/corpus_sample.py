"""A representative sample of the bundled corpus for the tests that record or grade runs.

Recording oracle, no-op and partial runs on all 30 tasks takes minutes; the tests record them
on one task per workflow, rotating tiers and seeds so every tier is covered, and always on
the first task (the one many tests use). ``alertforge gate`` covers every task; it is its
own command, not part of the test suite.
"""

from __future__ import annotations

from pathlib import Path

from contract.paths import TASKS_DIR, task_dirs

PICKS = (0, 2, 4, 1, 3)
"""For the n-th workflow, the index of its task (sorted easy-s1, easy-s2, medium-s1, ...)."""


def sample_tasks(root: Path = TASKS_DIR) -> list[Path]:
    """The first task, plus one task per workflow (task.toml ``workflow``), in task order."""
    by_workflow: dict[str, list[Path]] = {}
    for task in task_dirs(root):
        workflow = task.name.split("-", 2)[2].rsplit("-", 2)[0]
        by_workflow.setdefault(workflow, []).append(task)
    chosen = {task_dirs(root)[0]}
    for n, tasks in enumerate(by_workflow.values()):
        chosen.add(tasks[PICKS[n % len(PICKS)] % len(tasks)])
    return sorted(chosen)


SAMPLE = sample_tasks()
