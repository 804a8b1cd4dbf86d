"""Where things are: the repository root, the bundled tasks, a task folder by id or path."""

from __future__ import annotations

from pathlib import Path

from contract.errors import BadInput

REPO_ROOT = Path(__file__).resolve().parent.parent
"""The checkout this package was installed from (editable install): holds tasks/, site/, space/."""

TASKS_DIR = REPO_ROOT / "tasks"
SITE_DIR = REPO_ROOT / "site"
SPACE_DIR = REPO_ROOT / "space"


def task_dirs(tasks_dir: str | Path | None = None) -> list[Path]:
    """Every task folder under ``tasks_dir`` (default: the bundled ``tasks/``), sorted by id.

    A task folder is one that holds ``task.toml``; folders reached through a link are left
    out (a tasks folder is read as an untrusted tree, contract.untrusted). Raises BadInput
    if none is found.
    """
    from contract.untrusted import Tree

    root = Path(tasks_dir) if tasks_dir else TASKS_DIR
    if not root.is_dir():
        raise BadInput(root, "tasks directory not found")
    tree = Tree(root)
    found = sorted(root / name for name, kind in tree.entries()
                   if kind == "dir" and tree.is_file(f"{name}/task.toml"))
    if not found:
        raise BadInput(root, "no task folders (with task.toml) found")
    return found


def resolve_task(task: str | Path, tasks_dir: str | Path | None = None) -> Path:
    """A task folder from a path, a task id, or a task id's short form (``af-001`` for
    ``af-001-slo-onboarding-easy-s1``: the one task under ``tasks_dir`` whose id starts with
    it and a ``-``), as ``gate --only`` takes them.

    Raises BadInput when none names a folder holding ``task.toml``, or a short form names
    several.
    """
    from contract.untrusted import Tree

    candidate = Path(task)
    if candidate.is_dir() and Tree(candidate).is_file("task.toml"):
        return candidate.resolve()
    root = Path(tasks_dir) if tasks_dir else TASKS_DIR
    by_id = root / str(task)
    if root.is_dir() and Tree(root).kind(str(task)) == "dir" and Tree(by_id).is_file("task.toml"):
        return by_id.resolve()
    short = str(task)
    if root.is_dir() and short and "/" not in short:
        found = [p.name for p in task_dirs(root) if p.name.startswith(f"{short}-")]
        if len(found) == 1:
            return (root / found[0]).resolve()
        if found:
            raise BadInput(task, f"names {len(found)} tasks under {root} ({', '.join(found[:5])}"
                                 f"{', ...' if len(found) > 5 else ''}); give the whole id")
    raise BadInput(task, f"not a task folder (no task.toml) and no task with this id under {root}")
