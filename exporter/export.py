"""The exporter stage: run folders in, site data and rendered pages out (docs/formats.md)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from alertforge.errors import BadInput
from alertforge.files import dump_json, write_atomic
from alertforge.paths import SITE_DIR
from exporter.gallery import build_gallery
from exporter.gallery_episodes import build_penalty_gallery
from exporter.long_text import delta_failed, externalize_long_texts
from exporter.redact import Redactor
from exporter.render import render_pages
from exporter.run_folders import read_runs
from exporter.run_index import SearchIndex, shard_rows
from exporter.site_data import (
    home_document,
    index_document,
    run_document,
    run_head_document,
    run_summary,
    task_document,
    task_runs_document,
)
from exporter.steps import build_steps
from exporter.task_folder import TaskInfo, read_task

MAX_FILE_BYTES = 10 * 1024 * 1024
OWNED_FOLDERS = (
    "data/runs", "data/run-heads", "data/tasks", "data/task-runs", "data/runs-index", "data/search",
    "data/text", "gallery", "static",
)
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


TASK_TEXT_FIELDS = ("title", "instruction", "requirements", "checks", "pristine", "reproduction")
"""TaskInfo fields a redactor masks (the id, workflow and tier name files and facets)."""


def build_site_files(
    run_dirs: list[Path], site_dir: Path, redactor: Redactor | None = None
) -> tuple[dict[str, bytes], int, int]:
    """Every output file in memory: ``({relative path: bytes}, run count, task count)``.

    With ``redactor``, every string read from runs and task folders (but the run and task ids)
    is masked before anything is built from it, so no page, data file or search token holds a
    secret; ``redactor.masked`` counts the strings changed.

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
    graded_runs = []
    search = SearchIndex()
    for number, run in enumerate(runs):
        task = read_task(run)
        if redactor is not None:
            run_id, task_id = run.run_id, run.run["task"]["id"]
            run = redactor.dataclass_fields(run, ("run", "trajectory"))
            run.run["run_id"], run.run["task"]["id"] = run_id, task_id
            task = redactor.dataclass_fields(task, TASK_TEXT_FIELDS)
        known = tasks.get(task.id)
        if known is None or (task.from_folder and not known.from_folder):
            tasks[task.id] = task
        steps = build_steps(run, task)
        search.add_run(number, steps)
        stored_steps, text_files = externalize_long_texts(run.run_id, delta_failed(steps))
        document = run_document(run, stored_steps)
        data = _json_bytes(document)
        if len(data) > MAX_FILE_BYTES:
            raise BadInput(
                run.path / "trajectory.json",
                f"site data for this run would be {len(data)} bytes (limit {MAX_FILE_BYTES})",
            )
        files[f"data/runs/{run.run_id}.json"] = data
        files[f"data/run-heads/{run.run_id}.json"] = _json_bytes(run_head_document(document))
        files.update(text_files)
        summary = run_summary(document, task)
        agent = run.run.get("agent")
        summary["agent"] = agent.get("name") if isinstance(agent, dict) else None
        summaries.append(summary)
        graded_runs.append(({**document, "steps": steps}, task, steps))
    for task in tasks.values():
        files[f"data/tasks/{task.id}.json"] = _json_bytes(task_document(task))
        files[f"data/task-runs/{task.id}.json"] = _json_bytes(task_runs_document(task, summaries))
    index = index_document(summaries, tasks)
    files["data/index.json"] = _json_bytes(index)
    run_shards = shard_rows(summaries)
    for number, shard in enumerate(run_shards):
        files[f"data/runs-index/{number}.json"] = _json_bytes(shard)
    search_shards = search.shards()
    for number, shard in enumerate(search_shards):
        files[f"data/search/{number}.json"] = _json_bytes(shard)
    files["data/home.json"] = _json_bytes(
        home_document(summaries, [len(shard["rows"]) for shard in run_shards], len(search_shards))
    )
    for relative, data in files.items():
        if len(data) > MAX_FILE_BYTES:
            raise BadInput(Path(relative), f"would be {len(data)} bytes (limit {MAX_FILE_BYTES})")
    gallery = build_gallery(graded_runs)
    gallery["penalties"] = build_penalty_gallery([document for document, _, _ in graded_runs])
    files.update(render_pages(site_dir / "templates", index, gallery))
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


SITE_MARKERS = {
    "data", "static", "gallery", "index.html", "run.html", "compare.html", "README.md", ".gitattributes",
    "listing.json",
}
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


def export_site(
    run_dirs: list[Path], out_dir: Path, site_dir: Path | None = None, redactor: Redactor | None = None
) -> dict:
    """Export runs to a static site in ``out_dir``.

    ``run_dirs``: run folders or folders of run folders. ``site_dir``: the viewer's source
    (``templates/``, ``static/``), default the repo's ``site/``. Writes ``data/index.json``,
    ``data/tasks/<task-id>.json``, ``data/runs/<run-id>.json`` and its head
    ``data/run-heads/<run-id>.json`` (orjson, sorted keys, compact),
    ``index.html``, ``run.html`` and ``static/``; each file atomically, unchanged files are left
    as they are, and files in the owned folders (``OWNED_FOLDERS``: data/runs, data/run-heads,
    data/tasks, static/ ...) that this export did not write are removed. Other files in
    ``out_dir`` (a Space README, say) are kept. With ``redactor``, secrets are masked first
    (see :func:`build_site_files`); the summary's ``masked`` counts them.

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
    files, run_count, task_count = build_site_files([Path(p) for p in run_dirs], site_dir, redactor)
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
        "masked": redactor.masked if redactor is not None else 0,
    }
