"""Where things are: the repository root, the bundled tasks, a task folder by id or path."""

from __future__ import annotations

from pathlib import Path

from alertforge.errors import BadInput

REPO_ROOT = Path(__file__).resolve().parent.parent
"""The checkout this package was installed from (editable install): holds tasks/, site/, space/."""

TASKS_DIR = REPO_ROOT / "tasks"
SITE_DIR = REPO_ROOT / "site"
SPACE_DIR = REPO_ROOT / "space"


def task_dirs(tasks_dir: str | Path | None = None) -> list[Path]:
    """Every task folder under ``tasks_dir`` (default: the bundled ``tasks/``), sorted by id.

    A task folder is one that holds ``task.toml``. Raises BadInput if none is found.
    """
    root = Path(tasks_dir) if tasks_dir else TASKS_DIR
    if not root.is_dir():
        raise BadInput(root, "tasks directory not found")
    found = sorted(p for p in root.iterdir() if (p / "task.toml").is_file())
    if not found:
        raise BadInput(root, "no task folders (with task.toml) found")
    return found


def resolve_task(task: str | Path, tasks_dir: str | Path | None = None) -> Path:
    """A task folder from a path or a task id (looked up under ``tasks_dir``).

    Raises BadInput when neither names a folder holding ``task.toml``.
    """
    candidate = Path(task)
    if (candidate / "task.toml").is_file():
        return candidate.resolve()
    root = Path(tasks_dir) if tasks_dir else TASKS_DIR
    by_id = root / str(task)
    if (by_id / "task.toml").is_file():
        return by_id.resolve()
    raise BadInput(task, f"not a task folder (no task.toml) and no task with this id under {root}")
