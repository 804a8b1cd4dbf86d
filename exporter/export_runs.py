"""One run of a site export: read, masked and made into its own files and a record, or reused.

A run read in this export (:func:`read_entry`) has its own files (``data/runs/<id>.json``, its
long texts, its media) put in the site being built at once and leaves a *record*
(exporter.run_record.RunRecord: its run row, task, Harbor job parts, legacy id, renamed ids
and masking counts) and its heavy parts (search ``tokens``, ``gallery`` entries, ``head``
parts, and ``files`` ``{path: sha256}``), kept as JSON bytes between uses. A run whose folder key, task
folders and files match the previous export's (:mod:`exporter.export_state`) is reused
(:func:`reused_entry`): its files are hard-linked from the current site and its record read
back, so it is neither read nor masked again. Full and incremental exports build the shared
files from records that went through the same JSON bytes, so both give the same site.
"""

from __future__ import annotations

import copy
import hashlib
import os
import tempfile
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson

from contract.errors import BadInput
from contract.files import dump_json
from contract.site import RunDocument, SiteStep
from contract.task_roots import TaskIndex
from exporter.atif_view import MediaFiles, attach_atif_parts, harbor_view, subagent_documents
from exporter.export_state import NO_TASK_FOLDER, ExportState, digest_of, key_of, text_digest
from exporter.gallery import PagePart
from exporter.gallery_checks import run_check_pages
from exporter.gallery_episodes import run_outcome_pages, run_penalty_pages
from exporter.long_text import delta_failed, externalize_long_texts
from exporter.redact import Redactor
from exporter.renaming import Renaming
from exporter.run_folders import RunFolder, read_run_folder
from exporter.run_index import run_tokens
from exporter.run_record import (
    BadRecord,
    HarborTrial,
    MaskCounts,
    RecordTask,
    RedactionCounts,
    RunRecord,
)
from exporter.site_data import (
    head_parts,
    run_document,
    run_summary,
    task_document,
    task_inputs_document,
)
from exporter.steps import build_steps
from exporter.task_folder import TaskInfo, locate_task_folder, read_task

MAX_FILE_BYTES = 10 * 1024 * 1024


class MemorySink:
    """Where a site export puts files when the site is built in memory (``files``)."""

    def __init__(self) -> None:
        self.files: dict[str, bytes] = {}
        self.previous: dict[str, str] = {}

    def write(self, relative: str, data: bytes) -> None:
        """Keep ``data`` as the file ``relative``."""
        self.files[relative] = data

    def reuse(self, relative: str, digest: str) -> bool:
        """Nothing to reuse in memory: always False."""
        return False

    def drop(self, relatives: list[str]) -> None:
        """Forget the files ``relatives``."""
        for relative in relatives:
            self.files.pop(relative, None)


@dataclass
class ExportContext:
    """What the runs of one export share: where files go (``sink``: a
    :class:`exporter.site_swap.Staging` or :class:`MemorySink`), the task index, the masking
    (``renaming``, None when not redacted), ``with_media``, and for an incremental export the
    previous ``state`` (None: read every run), the new one (``saved``) and the task ``world``
    (:func:`exporter.export_state.task_world`)."""

    sink: Any
    index: TaskIndex
    renaming: Renaming | None
    with_media: bool = True
    state: ExportState | None = None
    saved: ExportState | None = None
    world: dict[str, str] = field(default_factory=dict)
    engine: Any = None
    """Where runs read in this export are made (a Ray engine: ``export --ray``), None: here."""
    read_cache: dict[Path, TaskInfo] = field(default_factory=dict)
    task_docs: dict[int, tuple[TaskInfo, str, dict, dict]] = field(default_factory=dict)

    claimed: dict[str, Path] = field(default_factory=dict)
    spool: Spool = field(default_factory=lambda: Spool())

    def claim(self, run_id: str, folder: Path) -> None:
        """Note that ``folder`` holds run ``run_id``, before any of its files is written.

        Raises:
            BadInput: another run folder of this export has that run_id (names run.json).
        """
        if run_id in self.claimed:
            raise BadInput(folder / "run.json", f"run_id {run_id!r} already read from {self.claimed[run_id]}")
        self.claimed[run_id] = folder

    @property
    def redactor(self) -> Redactor | None:
        return self.renaming.redactor if self.renaming is not None else None

    def task_parts(self, task: TaskInfo) -> tuple[str, dict, dict]:
        """:func:`task_parts_of` the masked ``task``, once per task object."""
        known = self.task_docs.get(id(task))
        if known is None or known[0] is not task:
            known = (task, *task_parts_of(task))
            self.task_docs[id(task)] = known
        return known[1], known[2], known[3]


def task_parts_of(task: TaskInfo) -> tuple[str, dict, dict]:
    """The digest (sha256 hex over both files and where the task came from), task file and
    task inputs file of the masked ``task``."""
    document, inputs = task_document(task), task_inputs_document(task)
    digest = hashlib.sha256(dump_json(document, indent=False) + b"\0" + dump_json(inputs, indent=False)
                            + (b"\0folder" if task.from_folder else b"\0run")).hexdigest()
    return digest, document, inputs


HEAVY_PARTS = ("head", "gallery", "tokens")
"""The parts of a record kept on disk (:class:`Spool`) while an export runs: most of its bytes
(the steps of the run's head, its gallery entries, its search tokens), each needed once, at
the end."""


class Spool:
    """The heavy parts of every run's record during one export, in an unnamed temporary file,
    so memory holds only the light rest of each record whatever the number of runs."""

    def __init__(self) -> None:
        # unbuffered, read with pread: a forked child (exporter.page_worker) reads it beside this
        # process, and a shared file offset would mix their reads
        self.file = tempfile.TemporaryFile(prefix="alertforge-export-", buffering=0)  # noqa: SIM115 - closed by close()
        self.end = 0

    def put(self, value: Any) -> tuple[int, int]:
        """Keep ``value`` (JSON); returns its ``(offset, length)``."""
        data = orjson.dumps(value)
        written = 0
        while written < len(data):  # an unbuffered write may write less than asked
            written += os.pwrite(self.file.fileno(), data[written:], self.end + written)
        ref = (self.end, len(data))
        self.end += len(data)
        return ref

    def get(self, ref: tuple[int, int]) -> Any:
        """The value kept at ``ref``."""
        return orjson.loads(os.pread(self.file.fileno(), ref[1], ref[0]))

    def close(self) -> None:
        """Remove the file."""
        self.file.close()


class StateStore:
    """The heavy parts of records kept in an incremental export's state (as records of their
    own, by sha256: :meth:`exporter.export_state.ExportState.store_record`), where a reused run
    finds them without reading them until they are needed."""

    def __init__(self, state: ExportState) -> None:
        self.state = state

    def put(self, value: Any) -> str:
        """Keep ``value`` (JSON); returns its sha256."""
        return self.state.store_record(orjson.dumps(value, option=orjson.OPT_SORT_KEYS))

    def has(self, digest: str) -> bool:
        """Whether the part ``digest`` is kept."""
        return self.state.has_record(digest)

    def get(self, digest: str) -> Any:
        """The value kept as ``digest``.

        Raises:
            BadInput: it is gone or altered (names the state folder; the next export reads
                every run again).
        """
        value = self.state.record(digest)
        if value is None:
            raise BadInput(self.state.folder, f"record part {digest[:12]} is missing or altered mid-export")
        return value


@dataclass
class RunEntry:
    """One run of the site being built: its ``record`` (see the module) without its
    :data:`HEAVY_PARTS`, which :meth:`part` reads back from its ``store`` (the export's spool,
    or the incremental state); its ``task`` (the masked TaskInfo when read in this export,
    None when reused) and whether it was ``reused``. The record (without its ``files``) is held as its JSON bytes
    (``light``: a few hundred bytes a run where the parsed dict takes some kB, for every run
    of the export at once) and parsed at each use of :attr:`record`."""

    folder: Path
    light: bytes
    task: TaskInfo | None = None
    reused: bool = False
    store: Spool | StateStore | None = None
    heavy: dict[str, Any] = field(default_factory=dict)
    """Each of :data:`HEAVY_PARTS` -> where ``store`` keeps it."""

    @property
    def record(self) -> RunRecord:
        """The record (exporter.run_record.RunRecord), parsed from :attr:`light` at each use.

        Raises:
            BadRecord: ``light`` is not a record's JSON (never for what this export wrote).
        """
        return RunRecord.from_json(orjson.loads(self.light))

    def part(self, name: str) -> Any:
        """The record's part ``name`` (one of :data:`HEAVY_PARTS`), read back from the store."""
        return self.store.get(self.heavy[name]) if self.store is not None else orjson.loads(self.light)[name]


def check_sizes(files: dict[str, bytes]) -> None:
    """Raises BadInput naming the first data file over :data:`MAX_FILE_BYTES`."""
    for relative, data in files.items():
        if len(data) > MAX_FILE_BYTES:
            raise BadInput(Path(relative), f"would be {len(data)} bytes (limit {MAX_FILE_BYTES})")


def _counts(redactor: Redactor | None) -> tuple[int, Counter]:
    return (redactor.masked, Counter(redactor.kinds)) if redactor is not None else (0, Counter())


def _atif_fields(run: RunFolder, media: MediaFiles) -> dict[str, Any]:
    """The run document's ``harbor`` and ``subagents`` (exporter.atif_view), when it has them."""
    fields = {"harbor": harbor_view(run), "subagents": subagent_documents(run, media)}
    return {key: value for key, value in fields.items() if value}


def run_files(run: RunFolder, steps: list[SiteStep],
              extra_fields: dict[str, Any] | None = None) -> tuple[dict[str, Any], dict[str, bytes]]:
    """A run's document (with ``extra_fields``; its JSON values, as the data file holds them:
    ``failed`` and ``causes`` as deltas, long texts moved out) and its data file and long texts
    (``{relative path: bytes}``).

    Raises:
        BadInput: the run's data file would be over :data:`MAX_FILE_BYTES` (names its trajectory.json).
    """
    stored_steps, files = externalize_long_texts(run.run_id, delta_failed([_values(step) for step in steps]))
    document = {**run_document(run, stored_steps), **(extra_fields or {})}
    RunDocument.model_validate(document)
    data = dump_json(document, indent=False)
    if len(data) > MAX_FILE_BYTES:
        raise BadInput(run.path / "trajectory.json",
                       f"site data for this run would be {len(data)} bytes (limit {MAX_FILE_BYTES})")
    return document, {f"data/runs/{run.run_id}.json": data, **files}


def _values(step: SiteStep) -> dict[str, Any]:
    """The fields ``step`` has, as the run file holds them (``model_dump(exclude_unset=True)``
    without copying its values: delta_failed and externalize_long_texts make new dicts and lists
    where they change one, so ``step`` is left as it was)."""
    return {name: value for name, value in step.__dict__.items() if name in step.model_fields_set}


@dataclass
class MaskedRun:
    """A run as read (``raw_run_id``, ``raw_task_id``: its ids before masking), masked
    (``run``, ``task``), the ids renamed (``{digest of the old id: new id}``) and its task
    folder (None: the task came from run.json)."""

    run: RunFolder
    task: TaskInfo
    raw_run_id: str
    raw_task_id: str
    renamed: dict[str, str]
    task_folder: Path | None


def read_raw(folder: Path, context: ExportContext) -> MaskedRun:
    """The run in ``folder`` and its task as read, not masked yet (``renamed`` empty).

    Raises:
        BadInput: as :func:`exporter.run_folders.read_run_folder` and
            :func:`exporter.task_folder.read_task`.
    """
    raw = read_run_folder(folder)
    task = read_task(raw, context.index, context.read_cache)
    return MaskedRun(raw, task, raw.run_id, raw.summary.task.id, {}, locate_task_folder(raw, context.index))


def mask(read: MaskedRun, renaming: Renaming | None) -> MaskedRun:
    """``read`` with its run and task masked by ``renaming`` (unchanged when None)."""
    if renaming is not None:
        read.run, read.task = renaming.redacted(read.run, read.task)
        read.renamed = {text_digest(old): new for old, new in
                        zip((read.raw_run_id, read.raw_task_id), (read.run.run_id, read.task.id)) if old != new}
    return read


def read_masked(folder: Path, context: ExportContext) -> MaskedRun:
    """The run in ``folder`` and its task, masked (see :class:`MaskedRun`).

    Raises:
        BadInput: as :func:`read_raw`.
    """
    return mask(read_raw(folder, context), context.renaming)


@dataclass
class MadeRun:
    """What one run makes (:func:`make_run`): its own ``files`` (``{relative path: bytes}``),
    its ``record`` (see the module; as JSON bytes, sorted keys) and its masked ``task``."""

    files: dict[str, bytes]
    record: bytes
    task: TaskInfo
    raw_run_id: str
    raw_task_id: str


def make_run(read: MaskedRun, renaming: Renaming | None, with_media: bool, task_parts=None) -> MadeRun:
    """Mask the run and task of ``read`` (as read: :func:`read_raw`) and make the run's files
    and record. Reads no file and writes none, so it runs anywhere (a Ray worker:
    :func:`make_run_on_worker`). ``task_parts``: the caching
    :meth:`ExportContext.task_parts`, else computed here.

    Raises:
        BadInput: the run's data file, a long text or a media file would be over
            :data:`MAX_FILE_BYTES` (names the file, the data file by the run's trajectory.json).
    """
    redactor = renaming.redactor if renaming is not None else None
    before = _counts(redactor)
    read = mask(read, renaming)
    run, task = read.run, read.task
    steps = build_steps(run, task)
    media = MediaFiles(run, include=with_media, redactor=redactor)
    attach_atif_parts(steps, run, media)
    document, files = run_files(run, steps, _atif_fields(run, media))
    files.update(media.files)
    check_sizes(files)
    summary = run_summary(document, task, run.summary.agent.name)
    episode = document["kind"] == "episode"
    digest, _, _ = (task_parts or task_parts_of)(task)
    record = RunRecord(
        run.run_id, summary, RecordTask(task.id, task.workflow, task.tier, task.title, task.from_folder, digest),
        HarborTrial.of_run(run.summary), run.summary.legacy_id, dict(read.renamed), _redaction(renaming, before, read))
    heavy = {
        "tokens": run_tokens(steps), "head": head_parts(document),
        "files": {relative: hashlib.sha256(data).hexdigest() for relative, data in files.items()},
        "gallery": {"checks": _json_parts(run_check_pages(document, task, steps)),
                    "penalties": _json_parts(run_penalty_pages(document, steps)) if episode else None,
                    "outcomes": _json_parts(run_outcome_pages(document, steps)) if episode else None},
    }
    return MadeRun(files, orjson.dumps({**record.to_json(), **heavy}, option=orjson.OPT_SORT_KEYS), task,
                   read.raw_run_id, read.raw_task_id)


def _json_parts(parts: list[PagePart]) -> list[dict[str, Any]]:
    return [part.to_json() for part in parts]


def make_run_on_worker(read: MaskedRun, redactor: Redactor | None, with_media: bool) -> MadeRun:
    """:func:`make_run` with a masking of its own (``redactor``'s counts start from zero):
    the job ``export --ray`` hands a worker, the same bytes as made in the driver."""
    if redactor is not None:
        redactor = copy.copy(redactor)
        redactor.masked, redactor.kinds, redactor.secrets = 0, Counter(), set()
    return make_run(read, Renaming(redactor) if redactor is not None else None, with_media)


def keep_run(folder: Path, made: MadeRun, context: ExportContext, key: str | None = None) -> RunEntry:
    """Put the files of ``made`` (the run in ``folder``) in the context's sink and keep its
    record in the new state (when incremental; ``key`` its folder's key digest).

    Raises:
        BadInput: another run folder of this export has the same run_id (names run.json).
    """
    record = orjson.loads(made.record)
    context.claim(RunRecord.from_json(record).run_id, folder)
    for relative, data in made.files.items():
        context.sink.write(relative, data)
    parts = {name: record.pop(name) for name in HEAVY_PARTS}
    saved = context.saved if context.saved is not None and context.saved.writable else None
    store = StateStore(saved) if saved is not None else context.spool
    heavy = {name: store.put(part) for name, part in parts.items()}
    if saved is not None and not saved.writable:  # the state's folder refused a part: the spool keeps them
        saved = None
        store = context.spool
        heavy = {name: store.put(part) for name, part in parts.items()}
    if saved is not None:
        where = text_digest(os.path.realpath(folder))  # the record names its folder: given to another, it is not reused
        light = orjson.dumps({**record, "heavy": heavy, "folder": where}, option=orjson.OPT_SORT_KEYS)
        context.saved.runs[where] = {
            "key": key or "", "record": context.saved.store_record(light), "heavy": sorted(heavy.values()),
            "id": text_digest(made.raw_run_id), "task_ref": text_digest(made.raw_task_id),
            "world": context.world.get(text_digest(made.raw_task_id), NO_TASK_FOLDER)}
    return RunEntry(folder, _light(record), made.task, False, store, heavy)


def _light(record: dict[str, Any]) -> bytes:
    """What a :class:`RunEntry` holds of ``record`` (its heavy parts taken out): all but its
    ``files`` (a digest per file the run wrote, many for a run with long texts), which only the
    state keeps, for the next export to link them."""
    return orjson.dumps({key: value for key, value in record.items() if key != "files"})


def read_entry(folder: Path, context: ExportContext, key: str | None = None) -> RunEntry:
    """Read, mask and export the run in ``folder`` in this process (:func:`read_raw`,
    :func:`make_run`, :func:`keep_run`).

    Raises:
        BadInput: the run or its task cannot be read (names the file), its data file
            would be over :data:`MAX_FILE_BYTES`, or its run_id is taken.
    """
    made = make_run(read_raw(folder, context), context.renaming, context.with_media, context.task_parts)
    return keep_run(folder, made, context, key)


def _redaction(renaming: Renaming | None, before: tuple[int, Counter], read: MaskedRun) -> RedactionCounts | None:
    """The run's masking counts (``task_as`` names the task object, which a full export masks
    once; never a value); None when the export masks nothing."""
    if renaming is None:
        return None
    masked, kinds = _counts(renaming.redactor)
    task_masked, task_kinds = renaming.task_counts.get(id(read.task), (0, Counter()))
    run_masked, run_kinds = masked - before[0], kinds - before[1]
    if renaming.task_was_new:
        run_masked, run_kinds = run_masked - task_masked, run_kinds - task_kinds
    task_as = (f"folder:{text_digest(str(read.task_folder))}" if read.task_folder is not None
               else f"run:{text_digest(read.raw_run_id)}")
    return RedactionCounts(MaskCounts(run_masked, dict(run_kinds)), MaskCounts(task_masked, dict(task_kinds)), task_as)


def reused_entry(folder: Path, key: str, context: ExportContext) -> RunEntry | None:
    """The run in ``folder`` as the previous export left it, its files linked into the sink;
    None (nothing staged) when anything differs: its key, its task folders, its record or a
    file of the current site."""
    state = context.state
    if state is None:
        return None
    entry = state.runs.get(text_digest(os.path.realpath(folder)))
    if (entry is None or entry.get("key") != key
            or context.world.get(entry.get("task_ref", ""), NO_TASK_FOLDER) != entry.get("world")):
        return None
    record = state.record(entry["record"])
    store = StateStore(state)
    if not isinstance(record, dict) or not isinstance(record.get("heavy"), dict) or not all(
            isinstance(record["heavy"].get(name), str) and store.has(record["heavy"][name]) for name in HEAVY_PARTS):
        return None
    if record.pop("folder", None) != text_digest(os.path.realpath(folder)) or not isinstance(record.get("files"), dict):
        return None  # a damaged state (another folder's record): the run is read again
    try:
        run_id = RunRecord.from_json(record).run_id
    except BadRecord:
        return None
    heavy = record.pop("heavy")
    context.claim(run_id, folder)
    linked: list[str] = []
    for relative, digest in record["files"].items():
        if not context.sink.reuse(relative, digest):
            context.sink.drop(linked)
            del context.claimed[run_id]
            return None
        linked.append(relative)
    if context.saved is not None:
        context.saved.runs[text_digest(os.path.realpath(folder))] = dict(entry)
    return RunEntry(folder, _light(record), None, True, store, heavy)


def folder_key(folder: Path) -> str:
    """The digest of ``folder``'s change key (:func:`exporter.export_state.key_of`)."""
    return digest_of(key_of(folder))
