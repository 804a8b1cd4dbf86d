"""The exporter stage: run folders in, site data and rendered pages out (docs/formats.md)."""

from __future__ import annotations

import copy
import dataclasses
import hashlib
import os
import pickle
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson

from contract.errors import BadInput
from contract.files import dump_json
from contract.paths import SITE_DIR
from contract.site import (
    AttemptsDocument,
    HomeDocument,
    RunDocument,
    RunHead,
    SiteIndex,
    TaskDocument,
    TaskInputs,
    TaskRuns,
)
from contract.task_roots import TaskIndex
from exporter.atif_view import MediaFiles, attach_atif_parts, harbor_view, subagent_documents
from exporter.bundle import page_assets
from exporter.gallery_checks import build_check_gallery
from exporter.gallery_episodes import build_outcome_gallery, build_penalty_gallery
from exporter.harbor_jobs import job_rows
from exporter.long_text import delta_failed, externalize_long_texts
from exporter.redact import Redactor, redact_id
from exporter.render import render_pages
from exporter.run_folders import RunFolder, read_runs
from exporter.run_index import SearchIndex, shard_rows
from exporter.site_data import (
    GENERATED_BY,
    aliases_document,
    attempts_document,
    home_document,
    index_document,
    run_document,
    run_head_document,
    run_summary,
    task_document,
    task_inputs_document,
    task_runs_document,
)
from exporter.site_swap import foreign_files, recover, write_site
from exporter.steps import build_steps
from exporter.task_folder import TaskInfo, read_task

MAX_FILE_BYTES = 10 * 1024 * 1024


def _json_bytes(value: Any) -> bytes:
    return dump_json(value, indent=False)


def _checked(model, document: dict) -> dict:
    """``document`` once it validates as the site file ``model`` (contract.site)."""
    model.model_validate(document)
    return document


def _static_files(static_dir: Path) -> dict[str, bytes]:
    if not static_dir.is_dir():
        raise BadInput(static_dir, "static folder not found")
    return {
        "static/" + path.relative_to(static_dir).as_posix(): path.read_bytes()
        for path in sorted(static_dir.rglob("*"))
        if path.is_file() and not path.name.startswith(".")
    }


TASK_TEXT_FIELDS = ("workflow", "tier", "title", "instruction", "requirements", "checks", "reproduction")
"""TaskInfo fields a redactor masks as text (the id is renamed when it holds a secret; the
pristine files' paths go through the same path rule as the runs' file names)."""


@dataclass
class SiteFiles:
    """Every file of a site in memory (``{relative path: bytes}``), what went into it, and the
    run or task ids that were renamed because they held a secret (the new ids)."""

    files: dict[str, bytes]
    runs: int
    tasks: int
    renamed_ids: list[str]


def build_site_files(
    run_dirs: list[Path], site_dir: Path, redactor: Redactor | None = None,
    task_index: TaskIndex | None = None, *, with_media: bool = True,
    skipped: list[dict] | None = None, memo: dict | None = None,
) -> SiteFiles:
    """Every output file in memory (see :class:`SiteFiles`).

    Media files of runs (ATIF image and audio parts) are re-encoded by
    :mod:`exporter.media_clean` and written under ``data/media/``; with ``with_media`` False none
    is (each part then says so in the viewer).

    Tasks are looked up in ``task_index`` (default: the bundled tasks only) by each run's task
    id and fingerprint (:mod:`exporter.task_folder`).

    With ``redactor``, every string read from runs and task folders is masked before anything
    is built from it (before any text is split into parts), so no page, data file or search
    token holds a secret; a run or task id that holds one is renamed
    (:func:`exporter.redact.redact_id`); ``redactor.masked`` counts the strings changed.

    Reads all inputs before anything is written, so bad input never leaves a half export.
    The task file for a task id comes from the first run (by run_id) whose task folder exists,
    else from the first run naming that task.

    Raises:
        BadInput: any bad run folder, task file or template (names the file), or a data file
            over 10 MB (names the run's trajectory.json).
    """
    runs = read_runs(run_dirs, skipped)
    index = task_index if task_index is not None else TaskIndex()
    tasks: dict[str, TaskInfo] = {}
    files: dict[str, bytes] = {}
    summaries: list[dict[str, Any]] = []
    graded_runs = []
    documents: list[dict[str, Any]] = []
    search = SearchIndex()
    read_cache: dict[Path, TaskInfo] = {}
    renaming = Renaming(redactor, memo) if redactor is not None else None
    redacted_runs: list = []
    for number, run in enumerate(runs):
        task = read_task(run, index, read_cache)
        if renaming is not None:
            run, task = renaming.redacted(run, task)
        known = tasks.get(task.id)
        if known is None or (task.from_folder and not known.from_folder):
            tasks[task.id] = task
        redacted_runs.append(run)
        steps = build_steps(run, task)
        media = MediaFiles(run, include=with_media, redactor=redactor)
        attach_atif_parts(steps, run, media)
        search.add_run(number, steps)
        document = _add_run_files(files, run, steps, _atif_fields(run, media))
        files.update(media.files)
        summary = run_summary(document, task)
        agent = run.run.get("agent")
        summary["agent"] = agent.get("name") if isinstance(agent, dict) else None
        summaries.append(summary)
        graded_runs.append(({**document, "steps": steps}, task, steps))
        documents.append(document)
    if memo is not None and renaming is not None:
        for stale in set(memo) - renaming.used:  # runs gone or changed since the last export
            del memo[stale]
    task_docs = {task_id: _checked(TaskDocument, task_document(task)) for task_id, task in tasks.items()}
    _add_run_heads(files, documents, task_docs)
    site_index = _add_index_files(files, tasks, task_docs, summaries, redacted_runs, search)
    _check_sizes(files)
    gallery = build_check_gallery(graded_runs)
    gallery["penalties"] = build_penalty_gallery([document for document, _, _ in graded_runs])
    gallery["outcomes"] = build_outcome_gallery([document for document, _, _ in graded_runs])
    files.update(render_pages(site_dir / "templates", site_index, gallery))
    files.update(_static_files(site_dir / "static"))
    files.update(page_assets(site_dir / "static"))
    renamed = renaming.renamed.values() if renaming is not None else ()
    return SiteFiles(files, len(runs), len(tasks), sorted(renamed))


class Renaming:
    """A redactor applied to runs and their tasks: each task masked once, renamed ids noted
    (``renamed``: old id -> new id). Shared by the site export and the Markdown export."""

    def __init__(self, redactor: Redactor, memo: dict | None = None) -> None:
        self.redactor = redactor
        self.renamed: dict[str, str] = {}
        self.memo = memo
        self.used: set[tuple[str, str]] = set()
        # keyed by id(task) and holding the task itself: a task read without a folder is a new
        # object per run (exporter.task_folder.read_task caches by folder), and once freed its
        # id would be the next one's, which would then get the earlier task masked
        self._tasks: dict[int, tuple[TaskInfo, TaskInfo]] = {}

    def redacted(self, run: RunFolder, task: TaskInfo) -> tuple[RunFolder, TaskInfo]:
        """``run`` and ``task`` with every string masked; ids holding a secret renamed
        (:func:`exporter.redact.redact_id`), the same task object masked only once."""
        redactor = self.redactor
        run_id = redact_id(redactor, run.run_id)
        task_id = redact_id(redactor, run.run["task"]["id"])
        for old, new in ((run.run_id, run_id), (run.run["task"]["id"], task_id)):
            if old != new:
                self.renamed[old] = new
        run = self._masked_run(run)
        run.run["run_id"], run.run["task"]["id"] = run_id, task_id
        known = self._tasks.get(id(task))
        if known is None or known[0] is not task:
            known = (task, self._masked_task(task, task_id))
            self._tasks[id(task)] = known
        return run, known[1]

    def _masked_task(self, task: TaskInfo, task_id: str) -> TaskInfo:
        """``task`` with every string masked (by content from the ``memo`` when it has it, a
        copy, with the redactor's counts grown as for a run)."""
        redactor = self.redactor
        key = ("task", task_id, hashlib.sha256(pickle.dumps(task)).hexdigest()) if self.memo is not None else None
        hit = self.memo.get(key) if key is not None else None
        if hit is None:
            masked, kinds, secrets = redactor.masked, Counter(redactor.kinds), set(redactor.secrets)
            done = redactor.dataclass_fields(dataclasses.replace(
                task, id=task_id, pristine={redactor.path(rel): redactor.text(text)
                                            for rel, text in task.pristine.items()}),
                TASK_TEXT_FIELDS)
            hit = (done, redactor.masked - masked, redactor.kinds - kinds, redactor.secrets - secrets)
            if key is not None:
                self.memo[key] = hit
        else:
            redactor.masked += hit[1]
            redactor.kinds.update(hit[2])
            redactor.secrets |= hit[3]
        if key is not None:
            self.used.add(key)
        return copy.deepcopy(hit[0]) if key is not None else hit[0]


    def _masked_run(self, run: RunFolder) -> RunFolder:
        """``run`` with every string masked; with a ``memo`` (kept by the caller across
        exports: ``alertforge view``), a run whose run.json and trajectory.json are the same
        as before is taken from it, and the redactor's counts grow as if it were masked again."""
        redactor = self.redactor
        if self.memo is None:
            return redactor.dataclass_fields(run, ("run", "trajectory"))
        key = (str(run.path), hashlib.sha256(orjson.dumps([run.run, run.trajectory])).hexdigest())
        self.used.add(key)
        hit = self.memo.get(key)
        if hit is None:
            masked, kinds, secrets = redactor.masked, Counter(redactor.kinds), set(redactor.secrets)
            done = redactor.dataclass_fields(run, ("run", "trajectory"))
            hit = (orjson.dumps([done.run, done.trajectory]), redactor.masked - masked,
                   redactor.kinds - kinds, redactor.secrets - secrets)
            self.memo[key] = hit
        else:
            redactor.masked += hit[1]
            redactor.kinds.update(hit[2])
            redactor.secrets |= hit[3]
        masked_run, masked_trajectory = orjson.loads(hit[0])
        return dataclasses.replace(run, run=masked_run, trajectory=masked_trajectory)


def _atif_fields(run: RunFolder, media: MediaFiles) -> dict[str, Any]:
    """The run document's ``harbor`` and ``subagents`` (exporter.atif_view), when it has them."""
    fields = {"harbor": harbor_view(run), "subagents": subagent_documents(run, media)}
    return {key: value for key, value in fields.items() if value}


def _add_run_files(files: dict[str, bytes], run: RunFolder, steps: list[dict[str, Any]],
                   extra_fields: dict[str, Any] | None = None) -> dict[str, Any]:
    """Add a run's data file and its long texts to ``files``; return its run document (with
    ``extra_fields`` added: :func:`_atif_fields`; its head is written by :func:`_add_run_heads`).

    Raises:
        BadInput: the run's data file would be over :data:`MAX_FILE_BYTES` (names its trajectory.json).
    """
    stored_steps, text_files = externalize_long_texts(run.run_id, delta_failed(steps))
    document = _checked(RunDocument, {**run_document(run, stored_steps), **(extra_fields or {})})
    data = _json_bytes(document)
    if len(data) > MAX_FILE_BYTES:
        raise BadInput(
            run.path / "trajectory.json",
            f"site data for this run would be {len(data)} bytes (limit {MAX_FILE_BYTES})",
        )
    files[f"data/runs/{run.run_id}.json"] = data
    files.update(text_files)
    return document


def _add_run_heads(files: dict[str, bytes], documents: list[dict[str, Any]],
                   task_docs: dict[str, dict[str, Any]]) -> None:
    """Add every run's head file (:func:`exporter.site_data.run_head_document`), its task part
    taken from the task file the site holds for the run's task (so the head's check labels are
    the task file's)."""
    for document in documents:
        head = run_head_document(document, task_docs[document["task_id"]])
        files[f"data/run-heads/{document['run_id']}.json"] = _json_bytes(_checked(RunHead, head))


def _add_index_files(files: dict[str, bytes], tasks: dict[str, TaskInfo], task_docs: dict[str, dict[str, Any]],
                     summaries: list[dict[str, Any]], runs: list[RunFolder],
                     search: SearchIndex) -> dict[str, Any]:
    """Add the task files (catalog, inputs, run list), index.json, aliases, run list and search
    shards, attempts.json and home.json to ``files``; return the index document (the pages are rendered from it)."""
    for task in tasks.values():
        files[f"data/tasks/{task.id}.json"] = _json_bytes(task_docs[task.id])
        files[f"data/task-inputs/{task.id}.json"] = _json_bytes(
            _checked(TaskInputs, task_inputs_document(task)))
        files[f"data/task-runs/{task.id}.json"] = _json_bytes(
            _checked(TaskRuns, task_runs_document(task, summaries)))
    index = _checked(SiteIndex, {**index_document(summaries, tasks), "jobs": job_rows(runs)})
    files["data/index.json"] = _json_bytes(index)
    files["data/aliases.json"] = _json_bytes(aliases_document(runs, [s["run_id"] for s in summaries]))
    run_shards = shard_rows(summaries)
    for number, shard in enumerate(run_shards):
        files[f"data/runs-index/{number}.json"] = _json_bytes(shard)
    search_shards = search.shards()
    for number, shard in enumerate(search_shards):
        files[f"data/search/{number}.json"] = _json_bytes(shard)
    attempts = attempts_document(index["attempts"])
    if attempts["attempts"]:
        files["data/attempts.json"] = _json_bytes(_checked(AttemptsDocument, attempts))
    files["data/home.json"] = _json_bytes(_checked(HomeDocument, home_document(
        summaries, [len(shard["rows"]) for shard in run_shards], len(search_shards))))
    return index


def _check_sizes(files: dict[str, bytes]) -> None:
    """Raises BadInput naming the first data file over :data:`MAX_FILE_BYTES`."""
    for relative, data in files.items():
        if len(data) > MAX_FILE_BYTES:
            raise BadInput(Path(relative), f"would be {len(data)} bytes (limit {MAX_FILE_BYTES})")


def _check_output_folder(out_dir: Path, run_dirs: list[Path]) -> None:
    """Refuse an output folder that would mix the site into something else.

    Raises BadInput for the filesystem root, or a folder holding (or inside) the runs being
    exported; a folder holding files no previous export wrote is refused when it is written
    (:func:`exporter.site_swap.write_site`).
    """
    resolved = out_dir.resolve()
    if resolved == Path(resolved.anchor):
        raise BadInput(out_dir, "refusing to export into the filesystem root")
    for run_dir in run_dirs:
        run_path = run_dir.resolve()
        if resolved == run_path or resolved in run_path.parents or run_path in resolved.parents:
            raise BadInput(out_dir, f"output folder overlaps the runs being exported ({run_dir})")


def export_site(
    run_dirs: list[Path], out_dir: Path, site_dir: Path | None = None,
    redactor: Redactor | None = None, *, redact: bool = True, task_index: TaskIndex | None = None,
    with_media: bool = True, memo: dict | None = None,
) -> dict:
    """Export runs to a static site in ``out_dir``, all or nothing.

    ``run_dirs``: run folders or folders of run folders. ``site_dir``: the viewer's source
    (``templates/``, ``static/``), default the repo's ``site/``. ``task_index``: where the
    runs' tasks are looked up (default: the bundled tasks). Writes ``data/index.json``,
    ``data/tasks/<task-id>.json`` and ``data/task-inputs/<task-id>.json``, ``data/runs/<run-id>.json`` and its head
    ``data/run-heads/<run-id>.json`` (orjson, sorted keys, compact), the pages, ``static/``
    and ``site-manifest.json``, built in a staging folder beside ``out_dir`` and swapped in
    whole (:mod:`exporter.site_swap`): after any failure or kill the previous site is intact.
    Files a previous export did not write are never deleted: such a folder is refused. Secrets
    are masked first (``redactor``, else a default :class:`~exporter.redact.Redactor`, unless
    ``redact`` is False; see :func:`build_site_files`); ``with_media`` as there. ``memo``
    (a dict the caller keeps between exports of the same runs, ``alertforge view``) holds
    each run's masked form by its content, so an unchanged run is not masked again.

    Returns:
        ``{"runs", "tasks", "files", "bytes", "out_dir", "masked", "renamed_ids",
        "redaction", "skipped"}``: ``bytes`` the total size of the files written,
        ``redaction`` the report line (kinds and counts, never values), ``skipped`` the
        leftover folders left out (``{path, reason}``: an empty folder, an unfinished
        recording; :func:`exporter.run_folders.unfinished`).

    Raises:
        BadInput: naming the file at fault (run.json, trajectory.json, task.toml,
            tests/checks.json, a template), or ``out_dir`` when it is not a folder or holds
            files no export wrote. Everything is read and checked before the swap.
    """
    out_dir = Path(os.path.realpath(out_dir))  # a link the user made: the site goes behind it
    site_dir = Path(site_dir) if site_dir is not None else SITE_DIR
    if out_dir.exists() and not out_dir.is_dir():
        raise BadInput(out_dir, "output path exists and is not a folder")
    _check_output_folder(out_dir, [Path(p) for p in run_dirs])
    recover(out_dir)
    foreign = foreign_files(out_dir)
    if foreign:
        raise BadInput(out_dir, "holds files no previous export wrote: " + ", ".join(foreign[:8])
                       + (f" and {len(foreign) - 8} more" if len(foreign) > 8 else "")
                       + "; they are never deleted: move them away or export into a new folder")
    if redactor is None and redact:
        redactor = Redactor()
    skipped: list[dict] = []
    site = build_site_files([Path(p) for p in run_dirs], site_dir, redactor, task_index,
                            with_media=with_media, skipped=skipped, memo=memo)
    write_site(out_dir, site.files, GENERATED_BY)
    return {
        "skipped": skipped,
        "runs": site.runs,
        "tasks": site.tasks,
        "files": len(site.files),
        "bytes": sum(len(data) for data in site.files.values()),
        "out_dir": str(out_dir),
        "masked": redactor.masked if redactor is not None else 0,
        "renamed_ids": site.renamed_ids,
        "redaction": redactor.report() if redactor is not None else "not redacted",
    }
