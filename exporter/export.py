"""The exporter stage: run folders in, site data and rendered pages out (docs/formats.md).

Each run is read, masked and made into its own files one at a time, which go into the site
being built at once (exporter.export_runs); what the shared files (index, run list and
search shards, task files, run heads, gallery pages) need from a run is kept as its record,
and those files are made from the records at the end (exporter.export_shared). Exporting into
a site this version wrote before reuses every run whose files did not change: read from its
record, its files hard-linked from the current site (exporter.export_state); the result is
the same bytes as a full export.
"""

from __future__ import annotations

import os
from collections import deque
from concurrent.futures import Executor
from contextlib import nullcontext
from dataclasses import dataclass
from pathlib import Path

import orjson

from contract.errors import BadInput
from contract.paths import SITE_DIR
from contract.task_roots import TaskIndex
from engine import Engine
from exporter.export_runs import (
    MAX_FILE_BYTES,
    ExportContext,
    MemorySink,
    RunEntry,
    folder_key,
    keep_run,
    make_run_on_worker,
    read_entry,
    read_raw,
    reused_entry,
)
from exporter.export_shared import restore_counts, write_shared_files
from exporter.export_state import ExportState, options_digest, task_world
from exporter.redact import Redactor
from exporter.renaming import Renaming
from exporter.run_folders import find_run_folders
from exporter.run_record import RunRecord
from exporter.site_data import GENERATED_BY
from exporter.site_swap import Staging, crash_point
from exporter.task_folder import TaskInfo

IN_FLIGHT_PER_WORKER = 2
"""Runs handed to each engine worker at a time (``export --ray``): one being made, one waiting."""

__all__ = ["MAX_FILE_BYTES", "Renaming", "SiteFiles", "build_site_files", "export_site"]


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

    Runs are read one at a time; only their records stay in memory (exporter.export_runs).
    The task file for a task id comes from the first run (by run_id) whose task folder exists,
    else from the first run naming that task.

    Raises:
        BadInput: any bad run folder, task file or template (names the file), or a data file
            over 10 MB (names the run's trajectory.json).
    """
    context = ExportContext(MemorySink(), task_index if task_index is not None else TaskIndex(),
                            Renaming(redactor, memo) if redactor is not None else None, with_media)
    built = _build(run_dirs, site_dir, context, skipped, memo)
    return SiteFiles(context.sink.files, built.runs, built.tasks, built.renamed_ids)


@dataclass
class Built:
    """What :func:`_build` made: counts, renamed ids, and how many runs were reused."""

    runs: int
    tasks: int
    renamed_ids: list[str]
    reused: int


def _build(run_dirs: list[Path], site_dir: Path, context: ExportContext, skipped: list[dict] | None,
           memo: dict | None) -> Built:
    """Every file of the site into ``context.sink``: each run's own files as it is read (or
    reused), then the shared files from the records."""
    redactor = context.redactor
    start = (redactor.masked, redactor.kinds.copy()) if redactor is not None else None
    try:
        entries = _collect_runs(find_run_folders([Path(p) for p in run_dirs], skipped), context)
        if memo is not None and context.renaming is not None:
            for stale in set(memo) - context.renaming.used:  # runs gone or changed since the last export
                del memo[stale]
        tasks = write_shared_files(entries, site_dir, context)
    finally:
        context.spool.close()
    if redactor is not None and start is not None:
        restore_counts(redactor, start, entries)
    renamed = {old: new for entry in entries for old, new in entry.record.renamed.items()}
    return Built(len(entries), tasks, sorted(renamed.values()), sum(entry.reused for entry in entries))


def _collect_runs(folders: list[Path], context: ExportContext) -> list[RunEntry]:
    """Each run folder reused (when the previous export's state allows) or read, in the order
    found (made on the context's engine when it has one: :class:`RemoteRuns`); sorted by
    run_id.

    Raises:
        BadInput: as :func:`exporter.export_runs.read_entry` (which refuses a second run folder
            with the same run_id, naming its run.json).
    """
    entries: dict[str, RunEntry] = {}
    with context.engine.pool(1) if context.engine is not None else nullcontext() as pool:
        remote = RemoteRuns(context, pool) if pool is not None else None
        for number, folder in enumerate(folders, start=1):
            key = folder_key(folder) if context.saved is not None else None
            entry = reused_entry(folder, key, context) if key is not None else None
            if entry is None and remote is not None:
                entries.update((done.record.run_id, done) for done in remote.submit(folder, key))
            elif entry is None:
                entry = read_entry(folder, context, key)
            if entry is not None:
                entries[entry.record.run_id] = entry
            crash_point(f"export:run:{number}")
        if remote is not None:
            entries.update((done.record.run_id, done) for done in remote.finish())
    return [entries[run_id] for run_id in sorted(entries)]


class RemoteRuns:
    """Runs made on an engine's workers (``export --ray``), kept here in the order handed out.

    Each run is read here (the safe-read path, and its task), handed to a worker
    (:func:`exporter.export_runs.make_run_on_worker`: masked, its files and record made) and
    kept here (:func:`exporter.export_runs.keep_run`), at most :data:`IN_FLIGHT_PER_WORKER`
    per worker at a time, so memory stays bounded. Runs of one task share one masked task
    object (by its digest), as in a local export.
    """

    def __init__(self, context: ExportContext, pool: Executor) -> None:
        self.context, self.pool = context, pool
        self.pending: deque = deque()
        self.tasks: dict[str, TaskInfo] = {}
        self.limit = IN_FLIGHT_PER_WORKER * max(1, context.engine.workers)

    def submit(self, folder: Path, key: str | None) -> list[RunEntry]:
        """Hand out the run in ``folder``; returns the runs kept meanwhile (the oldest, when
        the workers are full).

        Raises:
            BadInput: this run, or one kept meanwhile, cannot be read or exported.
        """
        context = self.context
        job = self.pool.submit(make_run_on_worker, read_raw(folder, context), context.redactor, context.with_media)
        self.pending.append((folder, key, job))
        return [self._keep_oldest() for _ in range(max(0, len(self.pending) - self.limit + 1))]

    def finish(self) -> list[RunEntry]:
        """Wait for every run handed out; returns them kept."""
        return [self._keep_oldest() for _ in range(len(self.pending))]

    def _keep_oldest(self) -> RunEntry:
        folder, key, job = self.pending.popleft()
        made = job.result()
        made.task = self.tasks.setdefault(RunRecord.from_json(orjson.loads(made.record)).task.digest, made.task)
        return keep_run(folder, made, self.context, key)


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
    run_dirs: list[Path], out_dir: Path, redactor: Redactor | bool = True, *,
    task_index: TaskIndex | None = None, with_media: bool = True, memo: dict | None = None,
    incremental: bool | Path = True, engine: Engine | None = None,
) -> dict:
    """Export runs to a static site in ``out_dir``, all or nothing.

    ``run_dirs``: run folders or folders of run folders; the pages come from the repo's
    ``site/`` (``templates/``, ``static/``). ``task_index``: where the
    runs' tasks are looked up (default: the bundled tasks). Writes ``data/index.json``,
    ``data/tasks/<task-id>.json`` and ``data/task-inputs/<task-id>.json``, ``data/runs/<run-id>.json`` and its head
    ``data/run-heads/<run-id>.json`` (orjson, sorted keys, compact), the pages, ``static/``
    and ``site-manifest.json``, built in a staging folder beside ``out_dir`` and swapped in
    whole (:mod:`exporter.site_swap`): after any failure or kill the previous site is intact.
    Files a previous export did not write are never deleted: such a folder is refused. Secrets
    are masked first (``redactor``: a :class:`~exporter.redact.Redactor`, True for a default
    one, False for none; see :func:`build_site_files`); ``with_media`` as there. ``memo``
    (a dict the caller keeps between exports of the same runs, ``alertforge view``) holds
    each run's masked form by its content, so an unchanged run is not masked again.

    ``incremental`` (default True): a run that did not change since the export that wrote the
    current site (same files by path, size, mtime and inode, same task folders, same exporter,
    redaction rules and media option) is not read again; its files are hard-linked from the
    current site, as is any other file whose bytes did not change, and the site is the same
    as a full export's. The state that makes this possible is kept outside the site
    (:mod:`exporter.export_state`; a Path: under that folder instead of the user's cache);
    False reads every run and keeps no state.

    ``engine`` (a Ray engine, ``export --ray``): runs are made on its workers
    (:class:`RemoteRuns`), the same bytes as here. None or the local engine: here.

    Returns:
        ``{"runs", "tasks", "files", "bytes", "out_dir", "masked", "renamed_ids",
        "redaction", "skipped", "reused", "linked"}``: ``bytes`` the total size of the site's
        files, ``redaction`` the report line (kinds and counts, never values), ``skipped`` the
        leftover folders left out (``{path, reason}``: an empty folder, an unfinished
        recording; :func:`exporter.run_folders.unfinished`), ``reused`` the runs not read
        again, ``linked`` the files hard-linked from the previous site.

    Raises:
        BadInput: naming the file at fault (run.json, trajectory.json, task.toml,
            tests/checks.json, a template), or ``out_dir`` when it is not a folder or holds
            files no export wrote. Everything is read and checked before the swap.
    """
    out_dir = Path(os.path.realpath(out_dir))  # a link the user made: the site goes behind it
    if out_dir.exists() and not out_dir.is_dir():
        raise BadInput(out_dir, "output path exists and is not a folder")
    _check_output_folder(out_dir, [Path(p) for p in run_dirs])
    staging = Staging(out_dir)  # recovers a killed export's leftovers, refuses foreign files
    if redactor is True:
        redactor = Redactor()
    elif redactor is False:
        redactor = None
    index = task_index if task_index is not None else TaskIndex()
    context = ExportContext(staging, index, Renaming(redactor, memo) if redactor is not None else None, with_media)
    context.engine = engine if engine is not None and engine.name != "local" else None
    if incremental is not False:
        _start_incremental(context, out_dir, None if incremental is True else Path(incremental))
    skipped: list[dict] = []
    try:
        try:
            built = _build([Path(p) for p in run_dirs], SITE_DIR, context, skipped, memo)
        except BaseException:
            staging.abort()
            raise
        manifest = staging.commit(GENERATED_BY)
        if context.saved is not None:
            context.saved.save(manifest)
    finally:
        if context.saved is not None:
            context.saved.release()
    return {
        "skipped": skipped, "runs": built.runs, "tasks": built.tasks,
        "files": len(staging.files), "bytes": staging.bytes, "out_dir": str(out_dir),
        "masked": redactor.masked if redactor is not None else 0, "renamed_ids": built.renamed_ids,
        "redaction": redactor.report() if redactor is not None else "not redacted",
        "reused": built.reused, "linked": staging.linked,
    }


def _start_incremental(context: ExportContext, out_dir: Path, root: Path | None) -> None:
    """Load the state of the site in ``out_dir`` (when it describes the current site) and start
    the new one."""
    options = options_digest(GENERATED_BY, context.redactor, context.with_media)
    context.saved = ExportState.for_site(out_dir, options, root)
    context.saved.hold()
    context.world = task_world(context.index)
    manifest = out_dir / "site-manifest.json"
    if context.sink.previous and manifest.is_file() and not manifest.is_symlink():
        previous = ExportState.for_site(out_dir, options, root)
        previous.load(manifest.read_bytes())
        if previous.runs:
            context.state = previous
