"""The exporter stage: run folders in, site data and rendered pages out (docs/formats.md)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from alertforge.errors import BadInput
from alertforge.files import dump_json, write_atomic
from alertforge.paths import SITE_DIR
from exporter.render import render_pages
from exporter.run_folders import read_runs
from exporter.site_data import index_document, run_document, run_summary, task_document
from exporter.steps import build_steps
from exporter.task_folder import TaskInfo, read_task

MAX_FILE_BYTES = 10 * 1024 * 1024
OWNED_FOLDERS = ("data/runs", "data/tasks", "static")
"""Folders of the output the exporter owns: files there that this export did not write are removed."""


def _json_bytes(value: Any) -> bytes:
    return dump_json(value, indent=False)


def _static_files(static_dir: Path) -> dict[str, bytes]:
    if not static_dir.is_dir():
        raise BadInput(static_dir, "static folder not found")
    return {
        "static/" + path.relative_to(static_dir).as_posix(): path.read_bytes()
        for path in sorted(static_dir.rglob("*"))
        if path.is_file() and not path.name.startswith(".")
    }


def build_site_files(run_dirs: list[Path], site_dir: Path) -> tuple[dict[str, bytes], int, int]:
    """Every output file in memory: ``({relative path: bytes}, run count, task count)``.

    Reads all inputs before anything is written, so bad input never leaves a half export.
    The task file for a task id comes from the first run (by run_id) whose task folder exists,
    else from the first run naming that task.

    Raises:
        BadInput: any bad run folder, task file or template (names the file), or a data file
            over 10 MB (names the run's trajectory.json).
    """
    runs = read_runs(run_dirs)
    tasks: dict[str, TaskInfo] = {}
    files: dict[str, bytes] = {}
    summaries = []
    for run in runs:
        task = read_task(run)
        known = tasks.get(task.id)
        if known is None or (task.from_folder and not known.from_folder):
            tasks[task.id] = task
        document = run_document(run, build_steps(run, task))
        data = _json_bytes(document)
        if len(data) > MAX_FILE_BYTES:
            raise BadInput(
                run.path / "trajectory.json",
                f"site data for this run would be {len(data)} bytes (limit {MAX_FILE_BYTES})",
            )
        files[f"data/runs/{run.run_id}.json"] = data
        summaries.append(run_summary(document, task))
    for task in tasks.values():
        files[f"data/tasks/{task.id}.json"] = _json_bytes(task_document(task))
    index = index_document(summaries, tasks)
    files["data/index.json"] = _json_bytes(index)
    files.update(render_pages(site_dir / "templates", index))
    files.update(_static_files(site_dir / "static"))
    return files, len(runs), len(tasks)


def _remove_stale(out_dir: Path, written: dict[str, bytes]) -> None:
    for folder in OWNED_FOLDERS:
        root = out_dir / folder
        if not root.is_dir():
            continue
        for path in sorted(root.rglob("*"), reverse=True):
            relative = path.relative_to(out_dir).as_posix()
            if path.is_file() and relative not in written:
                path.unlink()
            elif path.is_dir() and not any(path.iterdir()):
                path.rmdir()


SITE_MARKERS = {"data", "static", "index.html", "run.html", "README.md", ".gitattributes"}
"""What an output folder may already hold: a previous export, a Space's README."""


def _check_output_folder(out_dir: Path, run_dirs: list[Path]) -> None:
    """Refuse an output folder that would mix the site into something else.

    Raises BadInput for the filesystem root, a folder holding (or inside) the runs being
    exported, or a non-empty folder that holds files a site export would not write.
    """
    resolved = out_dir.resolve()
    if resolved == Path(resolved.anchor):
        raise BadInput(out_dir, "refusing to export into the filesystem root")
    for run_dir in run_dirs:
        run_path = run_dir.resolve()
        if resolved == run_path or resolved in run_path.parents or run_path in resolved.parents:
            raise BadInput(out_dir, f"output folder overlaps the runs being exported ({run_dir})")
    if out_dir.is_dir():
        foreign = sorted(p.name for p in out_dir.iterdir() if p.name not in SITE_MARKERS)
        if foreign:
            raise BadInput(out_dir, "output folder holds files that are not a site export: "
                           + ", ".join(foreign[:5]) + " (choose an empty or new folder)")


def export_site(run_dirs: list[Path], out_dir: Path, site_dir: Path | None = None) -> dict:
    """Export runs to a static site in ``out_dir``.

    ``run_dirs``: run folders or folders of run folders. ``site_dir``: the viewer's source
    (``templates/``, ``static/``), default the repo's ``site/``. Writes ``data/index.json``,
    ``data/tasks/<task-id>.json``, ``data/runs/<run-id>.json`` (orjson, sorted keys, compact),
    ``index.html``, ``run.html`` and ``static/``; each file atomically, unchanged files are left
    as they are, and files in data/runs, data/tasks and static/ that this export did not write
    are removed. Other files in ``out_dir`` (a Space README, say) are kept.

    Returns:
        ``{"runs": int, "tasks": int, "files": int, "bytes": int, "out_dir": str}``, bytes
        being the total size of the files of this export.

    Raises:
        BadInput: naming the file at fault (run.json, trajectory.json, task.toml,
            tests/checks.json, a template) or ``out_dir`` when it is not a folder. Everything
            is read and checked before the first write, so ``out_dir`` is left as it was.
    """
    out_dir = Path(out_dir)
    site_dir = Path(site_dir) if site_dir is not None else SITE_DIR
    if out_dir.exists() and not out_dir.is_dir():
        raise BadInput(out_dir, "output path exists and is not a folder")
    _check_output_folder(out_dir, [Path(p) for p in run_dirs])
    files, run_count, task_count = build_site_files([Path(p) for p in run_dirs], site_dir)
    for relative, data in sorted(files.items()):
        target = out_dir / relative
        if target.is_file() and target.read_bytes() == data:
            continue
        write_atomic(target, data)
    _remove_stale(out_dir, files)
    return {
        "runs": run_count,
        "tasks": task_count,
        "files": len(files),
        "bytes": sum(len(data) for data in files.values()),
        "out_dir": str(out_dir),
    }
