"""Masking a run and its task before anything is built from them: ids holding a secret renamed,
each task masked once, counts kept per run and per task (shared by the site export and the
Markdown export)."""

from __future__ import annotations

import copy
import dataclasses
import hashlib
import pickle
from collections import Counter

import orjson

from exporter.redact import Redactor, redact_id
from exporter.run_folders import RunFolder
from exporter.task_folder import TaskInfo

RUN_FIXED = frozenset({"version", "kind", "status", "steps", "source", "replay", "graded"})
"""run.json fields whose value is a number or one of a fixed set (contract.run.RunSummary): the
schema's words, never masked (a --redact-patterns pattern matching ``harbor`` must not turn
``source: harbor`` into a run.json no reader accepts)."""
RUN_OBJECTS = frozenset({"task", "agent", "timings", "tools", "identity"})
"""run.json fields holding one object of the schema's fields: its values masked, its keys kept."""
RUN_OBJECT_LISTS = frozenset({"requirements", "checks"})
"""run.json fields holding a list of such objects."""
OBJECT_FIXED = {"identity": ("producer",)}
"""Fixed-set values inside those objects."""


def masked_run_json(redactor: Redactor, run_json: dict) -> dict:
    """run.json (``run_json``, validated as contract.run.RunSummary) with every string masked
    (:meth:`exporter.redact.Redactor.value`, each under its own key) except the schema's own
    words: its keys, the keys of its typed objects (:data:`RUN_OBJECTS`,
    :data:`RUN_OBJECT_LISTS`) and the fixed-set values (:data:`RUN_FIXED`,
    :data:`OBJECT_FIXED`); free-form blocks (``final``, ``harbor``, ``endpoint``...) are masked
    whole, keys too. The result still validates as RunSummary."""
    masked = {}
    for name, value in run_json.items():
        if name in RUN_FIXED:
            masked[name] = value
        elif name in RUN_OBJECTS:
            masked[name] = redactor.fields(value, OBJECT_FIXED.get(name, ()))
        elif name in RUN_OBJECT_LISTS and isinstance(value, list):
            masked[name] = [redactor.fields(item) for item in value]
        else:
            masked[name] = redactor.value(value, name)
    return masked


TASK_TEXT_FIELDS = ("workflow", "tier", "title", "instruction", "requirements", "checks", "reproduction")
"""TaskInfo fields a redactor masks as text, in this order (the id is renamed when it holds a
secret; the pristine files' paths go through the same path rule as the runs' file names)."""
TASK_ROWS = frozenset({"requirements", "checks"})
"""TaskInfo fields holding rows of the catalog's fields: their values masked, their keys kept."""


def _masked_task_fields(redactor: Redactor, task: TaskInfo) -> TaskInfo:
    """``task`` with :data:`TASK_TEXT_FIELDS` masked, each under its own name; the rows of
    :data:`TASK_ROWS` keep their keys (``label``, ``id``: the catalog's words, which a
    --redact-patterns pattern must not turn into a check with no label)."""
    masked = {}
    for name in TASK_TEXT_FIELDS:
        value = getattr(task, name)
        if name in TASK_ROWS:
            masked[name] = [redactor.fields(row) for row in value]
        else:
            masked[name] = redactor.value(value)
    return dataclasses.replace(task, **masked)


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
        self.task_counts: dict[int, tuple[int, Counter]] = {}
        """``id(masked task)`` -> (strings masked, matches per kind) of masking that task."""
        self.task_was_new = False
        """Whether the last :meth:`redacted` call masked its task (False: masked before)."""

    def redacted(self, run: RunFolder, task: TaskInfo) -> tuple[RunFolder, TaskInfo]:
        """``run`` and ``task`` with every string masked; ids holding a secret renamed
        (:func:`exporter.redact.redact_id`), the same task object masked only once."""
        redactor = self.redactor
        run_id = redact_id(redactor, run.run_id)
        task_id = redact_id(redactor, run.summary.task.id)
        for old, new in ((run.run_id, run_id), (run.summary.task.id, task_id)):
            if old != new:
                self.renamed[old] = new
        run = self._masked_run(run)  # a new RunFolder: its summary is parsed at first use, after these ids are set
        run.run["run_id"], run.run["task"]["id"] = run_id, task_id
        known = self._tasks.get(id(task))
        self.task_was_new = known is None or known[0] is not task
        if self.task_was_new:
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
            done = _masked_task_fields(redactor, dataclasses.replace(
                task, id=task_id, pristine={redactor.path(rel): redactor.text(text)
                                            for rel, text in task.pristine.items()}))
            hit = (done, redactor.masked - masked, redactor.kinds - kinds, redactor.secrets - secrets)
            if key is not None:
                self.memo[key] = hit
        else:
            redactor.masked += hit[1]
            redactor.kinds.update(hit[2])
            redactor.secrets |= hit[3]
        if key is not None:
            self.used.add(key)
        masked_task = copy.deepcopy(hit[0]) if key is not None else hit[0]
        self.task_counts[id(masked_task)] = (hit[1], hit[2])
        return masked_task


    def _masked_run(self, run: RunFolder) -> RunFolder:
        """``run`` with every string masked; with a ``memo`` (kept by the caller across
        exports: ``alertforge view``), a run whose run.json and trajectory.json are the same
        as before is taken from it, and the redactor's counts grow as if it were masked again."""
        redactor = self.redactor
        if self.memo is None:
            return dataclasses.replace(run, run=masked_run_json(redactor, run.run), trajectory=redactor.value(run.trajectory))
        key = (str(run.path), hashlib.sha256(orjson.dumps([run.run, run.trajectory])).hexdigest())
        self.used.add(key)
        hit = self.memo.get(key)
        if hit is None:
            masked, kinds, secrets = redactor.masked, Counter(redactor.kinds), set(redactor.secrets)
            hit = (orjson.dumps([masked_run_json(redactor, run.run), redactor.value(run.trajectory)]), redactor.masked - masked,
                   redactor.kinds - kinds, redactor.secrets - secrets)
            self.memo[key] = hit
        else:
            redactor.masked += hit[1]
            redactor.kinds.update(hit[2])
            redactor.secrets |= hit[3]
        masked_run, masked_trajectory = orjson.loads(hit[0])
        return dataclasses.replace(run, run=masked_run, trajectory=masked_trajectory)
