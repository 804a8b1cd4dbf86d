"""The files a site's runs share, made from the runs' records: task files, run heads and each
run's own page (``runs/<id>.html``, from its head), index, run list and search shards, aliases,
attempts, home, gallery and pages, static files.

Every one is made again at each export from the records (exporter.export_runs), which are
small; the sink links a file whose bytes did not change from the current site instead of
writing it. The exceptions are the task files of a task no run read in this export
(linked when the current site holds the same task's, else read again from one of its runs),
the head of a run that was reused while its task file stayed the same (linked) and a run's own
page made from the same head bytes and templates as the current site's (linked, not rendered).
"""

from __future__ import annotations

import hashlib
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson

from contract.errors import BadInput
from contract.files import dump_json
from contract.site import (
    AttemptsDocument,
    HomeDocument,
    RunHead,
    SiteIndex,
    TaskDocument,
    TaskInputs,
    TaskRuns,
)
from exporter.bundle import page_assets
from exporter.export_runs import MAX_FILE_BYTES, ExportContext, RunEntry, check_sizes, read_masked
from exporter.export_state import digest_of
from exporter.gallery import PagePart
from exporter.gallery_checks import check_gallery_from_records
from exporter.gallery_episodes import outcome_gallery_from_records, penalty_gallery_from_records
from exporter.harbor_jobs import job_rows
from exporter.page_worker import Beside
from exporter.redact import Redactor
from exporter.render import (
    FOOTER_FIELDS,
    inline_styles,
    page_environment,
    render_gallery_pages,
    render_pages,
    render_run_page,
    run_page_path,
    templates_digest,
)
from exporter.run_index import SearchIndex, shard_rows
from exporter.site_data import (
    GENERATED_BY,
    SITE_DATA_VERSION,
    aliases_document,
    attempts_document,
    head_from_parts,
    home_document,
    index_document,
    task_runs_document,
)


def _json_bytes(value: Any) -> bytes:
    return dump_json(value, indent=False)


def _checked(model, document: dict) -> dict:
    """``document`` once it validates as the site file ``model`` (contract.site)."""
    model.model_validate(document)
    return document


@dataclass
class SiteTask:
    """The task behind a task id's files: ``id``, ``workflow``, ``tier``, ``title`` (what the
    index lists), ``digest`` (exporter.export_runs.ExportContext.task_parts), and its task
    and inputs files (None while the current site's are linked and not needed)."""

    id: str
    workflow: Any
    tier: Any
    title: str
    digest: str
    document: dict[str, Any] | None = None
    inputs: dict[str, Any] | None = None
    linked: bool = False


def _winners(entries: list[RunEntry]) -> dict[str, RunEntry]:
    """Per task id, the run whose task the task files are made from: the first run (by run_id)
    whose task folder was found, else the first run of that task."""
    winners: dict[str, RunEntry] = {}
    for entry in entries:
        task = entry.record.task
        known = winners.get(task.id)
        if known is None or (task.from_folder and not known.record.task.from_folder):
            winners[task.id] = entry
    return winners


def site_tasks(entries: list[RunEntry], context: ExportContext) -> dict[str, SiteTask]:
    """The task of every task id (see :func:`_winners`), its files written or linked into the
    sink; a task neither read in this export nor held by the current site is read again from
    its run (exporter.export_runs.read_masked)."""
    previous = context.state.tasks if context.state is not None else {}
    tasks: dict[str, SiteTask] = {}
    for task_id, entry in sorted(_winners(entries).items()):
        fields = entry.record.task
        site_task = SiteTask(task_id, fields.workflow, fields.tier, fields.title, fields.digest)
        files = (f"data/tasks/{task_id}.json", f"data/task-inputs/{task_id}.json")
        if entry.task is None and previous.get(task_id) == site_task.digest and all(
                context.sink.reuse(rel, context.sink.previous.get(rel, "")) for rel in files):
            site_task.linked = True
        else:
            context.sink.drop(list(files))
            task = entry.task if entry.task is not None else read_masked(entry.folder, context).task
            _, document, inputs = context.task_parts(task)
            site_task.document = _checked(TaskDocument, document)
            site_task.inputs = _checked(TaskInputs, inputs)
            context.sink.write(files[0], _json_bytes(site_task.document))
            context.sink.write(files[1], _json_bytes(site_task.inputs))
        tasks[task_id] = site_task
    if context.saved is not None:
        context.saved.tasks = {task_id: task.digest for task_id, task in tasks.items()}
    return tasks


def _task_document(task: SiteTask, context: ExportContext) -> dict[str, Any]:
    """The task file of ``task`` (read back from the current site when it was linked)."""
    if task.document is None:
        task.document = orjson.loads((context.sink.out_dir / f"data/tasks/{task.id}.json").read_bytes())
    return task.document


@dataclass
class RunPages:
    """Writes runs' own pages (:func:`exporter.render.render_run_page`, ``runs/<id>.html``)
    from their heads with ``environment`` (:func:`exporter.render.page_environment` of
    ``templates_dir``); ``footer``: the index's FOOTER_FIELDS. A page made from the same head
    bytes and templates as the current site's is linked from it, not rendered."""

    environment: Any
    templates_dir: Path
    footer: dict[str, Any]
    context: ExportContext
    stylesheet: bytes
    """static/run.css as the site has it (minified): a page with its first step inlines it."""

    def __post_init__(self) -> None:
        self.styles = inline_styles(self.templates_dir.parent / "static" / "run.css", self.stylesheet)
        self.templates = digest_of([templates_digest(self.templates_dir), self.styles["hash"]])

    def write(self, run_id: str, head_digest: str, head: Any) -> None:
        """The page of ``run_id`` whose head file's sha256 is ``head_digest``; ``head()`` gives
        the head's JSON values when the page must be rendered."""
        relative = run_page_path(run_id)
        digest = digest_of([self.templates, head_digest])
        context = self.context
        if context.saved is not None:
            context.saved.pages[relative] = digest
        previous = context.state.pages if context.state is not None else {}
        if previous.get(relative) == digest and context.sink.reuse(relative, context.sink.previous.get(relative, "")):
            return
        context.sink.write(relative, render_run_page(self.environment, self.templates_dir, head(), self.footer,
                                                     self.styles))


def write_heads(entries: list[RunEntry], tasks: dict[str, SiteTask], context: ExportContext,
                pages: RunPages | None = None) -> None:
    """Every run's head file: linked from the current site for a run reused whose task file
    is the same, else made from the record's head parts and the task file; with ``pages``,
    each run's own page beside it."""
    previous = context.state.tasks if context.state is not None else {}
    for entry in entries:
        record = entry.record
        run_id, task = record.run_id, tasks[record.task.id]
        relative = f"data/run-heads/{run_id}.json"
        if entry.reused and previous.get(task.id) == task.digest and context.sink.reuse(
                relative, context.sink.previous.get(relative, "")):
            if pages is not None:
                pages.write(run_id, context.sink.previous[relative],
                            lambda relative=relative: orjson.loads((context.sink.out_dir / relative).read_bytes()))
            continue
        head = _checked(RunHead, head_from_parts(entry.part("head"), _task_document(task, context)))
        data = _json_bytes(head)
        context.sink.write(relative, data)
        if pages is not None:
            pages.write(run_id, hashlib.sha256(data).hexdigest(), lambda head=head: head)


def _put(context: ExportContext, relative: str, data: bytes) -> None:
    """Write the data file ``relative`` into the sink once it is within
    :data:`exporter.export_runs.MAX_FILE_BYTES` (BadInput naming it otherwise)."""
    check_sizes({relative: data})
    context.sink.write(relative, data)


def _index_bytes(index: dict[str, Any], run_shards: int) -> bytes:
    """data/index.json's bytes: with every run row while that keeps it within
    :data:`exporter.export_runs.MAX_FILE_BYTES`, else with ``run_shards`` (the rows are
    those of the run list's shards; contract.site.SiteIndex) instead of ``runs``."""
    data = _json_bytes(index)
    if len(data) <= MAX_FILE_BYTES:
        return data
    rest = {key: value for key, value in index.items() if key != "runs"}
    return _json_bytes(_checked(SiteIndex, {**rest, "run_shards": run_shards}))


def _search_shards(entries: list[RunEntry], context: ExportContext) -> int:
    """Write the search shards (exporter.run_index.SearchIndex: one shard held at a time);
    returns their number."""
    with SearchIndex() as search:
        for number, entry in enumerate(entries):
            search.add_tokens(number, entry.part("tokens"))
        count = search.shard_count()
        for number, shard in enumerate(search.shards(count)):
            _put(context, f"data/search/{number}.json", _json_bytes(shard))
    return count


def _index_files(entries: list[RunEntry], tasks: dict[str, SiteTask], context: ExportContext) -> dict[str, Any]:
    """Write the task run lists, index.json, aliases, run list and search shards, attempts.json
    and home.json; returns the index document (the pages are rendered from it)."""
    records = [entry.record for entry in entries]
    summaries = [record.summary for record in records]
    for task in tasks.values():
        _put(context, f"data/task-runs/{task.id}.json", _json_bytes(_checked(TaskRuns, task_runs_document(task, summaries))))
    jobs = [record.job for record in records if record.job is not None]
    index = _checked(SiteIndex, {**index_document(summaries, tasks), "jobs": job_rows(jobs)})
    ids = [(record.legacy_id, record.run_id) for record in records]
    _put(context, "data/aliases.json", _json_bytes(aliases_document(ids)))
    shard_sizes = []
    for number, shard in enumerate(shard_rows(summaries)):
        _put(context, f"data/runs-index/{number}.json", _json_bytes(shard))
        shard_sizes.append(len(shard["rows"]))
    _put(context, "data/index.json", _index_bytes(index, len(shard_sizes)))
    search_shards = _search_shards(entries, context)
    attempts = attempts_document(index["attempts"])
    if attempts["attempts"]:
        _put(context, "data/attempts.json", _json_bytes(_checked(AttemptsDocument, attempts)))
    _put(context, "data/home.json", _json_bytes(_checked(HomeDocument, home_document(
        summaries, shard_sizes, search_shards))))
    return index


def _gallery(entries: list[RunEntry]) -> dict[str, Any]:
    """The gallery data of :func:`exporter.render.render_pages`, from the records' gallery parts
    (exporter.gallery.PagePart, kept as JSON values)."""
    penalties: list[tuple[str, list[PagePart]]] = []
    outcomes: list[tuple[str, list[PagePart]]] = []

    def checks():  # each run's gallery part read once: its checks merged, an episode's parts kept
        for entry in entries:
            part = entry.part("gallery")
            if part["penalties"] is not None:
                run_id = entry.record.run_id
                penalties.append((run_id, [PagePart.from_json(value) for value in part["penalties"]]))
                outcomes.append((run_id, [PagePart.from_json(value) for value in part["outcomes"]]))
            yield [PagePart.from_json(value) for value in part["checks"]]

    gallery = check_gallery_from_records(checks())
    gallery["penalties"] = penalty_gallery_from_records(penalties)
    gallery["outcomes"] = outcome_gallery_from_records(outcomes)
    return gallery


def _static_files(static_dir: Path) -> dict[str, bytes]:
    if not static_dir.is_dir():
        raise BadInput(static_dir, "static folder not found")
    return {
        "static/" + path.relative_to(static_dir).as_posix(): path.read_bytes()
        for path in sorted(static_dir.rglob("*"))
        if path.is_file() and not path.name.startswith(".")
    }


def _page_reuse(site_dir: Path, context: ExportContext):
    """For an incremental export, :func:`exporter.render.render_pages`' ``reuse``: a gallery page
    rendered from the same data and templates as the current site's is linked from it."""
    if context.saved is None:
        return None
    templates = templates_digest(site_dir / "templates")
    previous = context.state.pages if context.state is not None else {}

    def reuse(relative: str, part: dict[str, Any]) -> bool:
        digest = digest_of([templates, part])
        context.saved.pages[relative] = digest
        return previous.get(relative) == digest and context.sink.reuse(relative, context.sink.previous.get(relative, ""))

    return reuse


def write_shared_files(entries: list[RunEntry], site_dir: Path, context: ExportContext) -> int:
    """Write (or link) every shared file of the site into the context's sink; returns the
    number of tasks.

    Raises:
        BadInput: a file over 10 MB, a missing static folder or a template
            that cannot be rendered.
    """
    cache = context.saved.folder.parent if context.saved is not None else None  # the export cache
    bytecode = cache / "templates" if cache is not None else None
    footer = {"generated_by": GENERATED_BY, "version": SITE_DATA_VERSION}  # the index's FOOTER_FIELDS
    reuse = _page_reuse(site_dir, context)
    static = _static_files(site_dir / "static")
    static.update(page_assets(site_dir / "static", cache / "assets" if cache is not None else None))

    def gallery_pages() -> None:  # from the records' gallery parts alone: beside the rest
        environment = page_environment(site_dir / "templates", bytecode)
        for relative, data in render_gallery_pages(site_dir / "templates", _gallery(entries), footer, reuse, environment):
            context.sink.write(relative, data)

    beside = Beside(gallery_pages, context.sink, context.saved.pages if context.saved is not None else None,
                    len(entries))
    try:
        tasks = site_tasks(entries, context)
        write_heads(entries, tasks, context, RunPages(page_environment(site_dir / "templates", bytecode),
                                                     site_dir / "templates", footer, context, static["static/run.css"]))
        index = _index_files(entries, tasks, context)
        if {key: index[key] for key in FOOTER_FIELDS} != footer:
            raise RuntimeError(f"the kind pages' footer {footer} is not the index's")
        for relative, data in render_pages(site_dir / "templates", index, bytecode=bytecode):
            context.sink.write(relative, data)
        beside.join()
    except BaseException:
        beside.stop()  # this export fails: what the child writes is thrown away with the staging folder
        raise
    for relative, data in sorted(static.items()):
        context.sink.write(relative, data)
    return len(tasks)


def restore_counts(redactor: Redactor, start: tuple[int, Counter], entries: list[RunEntry]) -> None:
    """Set the redactor's counts to ``start`` plus what masking every run and each task once
    counted (from the records), so a reused run counts as if masked again."""
    masked, kinds = start[0], Counter(start[1])
    tasks_counted: set[str] = set()
    for entry in entries:
        counts = entry.record.redaction
        if counts is None:
            continue
        masked += counts.run.strings
        kinds.update(counts.run.kinds)
        if counts.task_as not in tasks_counted:
            tasks_counted.add(counts.task_as)
            masked += counts.task.strings
            kinds.update(counts.task.kinds)
    redactor.masked = masked
    redactor.kinds = kinds
