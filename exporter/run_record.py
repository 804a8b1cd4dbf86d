"""A run's record in a site export, typed: what the site's shared files need from one run.

A run read in an export (exporter.export_runs.make_run) leaves a record beside its own files;
the shared files (the index, task files, heads, aliases, the Harbor jobs' rows, the masking
counts) are made from the records alone, so a run reused by an incremental export is not read
again. A record crosses processes (an ``export --ray`` worker) and exports (the incremental
state, exporter.export_state) as JSON values (:meth:`RunRecord.to_json`, keys sorted when
dumped); in this process it is a :class:`RunRecord`, its run row a ``contract.site.RunRow``.
Its heavy parts (the head's steps, gallery entries, search tokens) and its files' digests are
kept apart (exporter.export_runs.HEAVY_PARTS) and are not part of this object.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from pydantic import ValidationError

from contract.run import RunSummary
from contract.site import RunRow


class BadRecord(ValueError):
    """A record's JSON values are not of the shape :meth:`RunRecord.to_json` writes (a
    damaged incremental state): the run is read again."""


def _need(condition: bool, what: str) -> None:
    if not condition:
        raise BadRecord(f"record: {what}")


@dataclass(frozen=True, slots=True)
class RecordTask:
    """The run's task as the index lists it: ``id``, ``workflow``, ``tier``, ``title``; whether
    its task folder was found (``from_folder``; else run.json's copy) and the ``digest`` of its
    masked task files (exporter.export_runs.ExportContext.task_parts)."""

    id: str
    workflow: str | None
    tier: str | int | None
    title: str
    from_folder: bool
    digest: str

    def to_json(self) -> dict[str, Any]:
        """``{id, workflow, tier, title, from_folder, digest}``."""
        return {"id": self.id, "workflow": self.workflow, "tier": self.tier, "title": self.title,
                "from_folder": self.from_folder, "digest": self.digest}

    @classmethod
    def from_json(cls, value: Any) -> RecordTask:
        """Raises BadRecord when ``value`` is not :meth:`to_json`'s shape."""
        _need(isinstance(value, dict) and isinstance(value.get("id"), str) and isinstance(value.get("title"), str)
              and isinstance(value.get("from_folder"), bool) and isinstance(value.get("digest"), str), "task")
        return cls(value["id"], value.get("workflow"), value.get("tier"), value["title"], value["from_folder"],
                   value["digest"])


@dataclass(frozen=True, slots=True)
class MaskCounts:
    """What masking one object counted: ``strings`` masked and matches per secret ``kinds``."""

    strings: int
    kinds: dict[str, int]

    def to_json(self) -> list[Any]:
        """``[strings, {kind: matches}]``."""
        return [self.strings, dict(self.kinds)]

    @classmethod
    def from_json(cls, value: Any) -> MaskCounts:
        """Raises BadRecord when ``value`` is not ``[int, {str: int}]``."""
        _need(isinstance(value, list) and len(value) == 2 and isinstance(value[0], int)
              and isinstance(value[1], dict) and all(isinstance(v, int) for v in value[1].values()), "mask counts")
        return cls(value[0], dict(value[1]))


@dataclass(frozen=True, slots=True)
class RedactionCounts:
    """The run's masking counts (exporter.redact.Redactor): its own (``run``) and its task's
    (``task``), and ``task_as``, which names the task object (a full export masks a task once;
    never a value)."""

    run: MaskCounts
    task: MaskCounts
    task_as: str

    def to_json(self) -> dict[str, Any]:
        """``{run: [strings, {kind: matches}], task: [...], task_as}``."""
        return {"run": self.run.to_json(), "task": self.task.to_json(), "task_as": self.task_as}

    @classmethod
    def from_json(cls, value: Any) -> RedactionCounts:
        """Raises BadRecord when ``value`` is not :meth:`to_json`'s shape."""
        _need(isinstance(value, dict) and isinstance(value.get("task_as"), str), "redaction")
        return cls(MaskCounts.from_json(value.get("run")), MaskCounts.from_json(value.get("task")), value["task_as"])


@dataclass(frozen=True, slots=True)
class HarborTrial:
    """What the Harbor jobs' rows (exporter.harbor_jobs.job_rows) read of an imported trial:
    run.json's ``harbor`` block (Harbor's own result: its fields are Harbor's, read loosely)
    and ``regrade`` (``{reward, ...}`` when it was graded again here, else None)."""

    harbor: dict[str, Any]
    regrade: dict[str, Any] | None = None

    def to_json(self) -> dict[str, Any]:
        """``{harbor, regrade?}``."""
        return {"harbor": self.harbor, **({"regrade": self.regrade} if self.regrade is not None else {})}

    @classmethod
    def from_json(cls, value: Any) -> HarborTrial:
        """Raises BadRecord when ``value`` holds no ``harbor`` object; a ``regrade`` that is not
        an object is None."""
        _need(isinstance(value, dict) and isinstance(value.get("harbor"), dict), "job")
        regrade = value.get("regrade")
        return cls(value["harbor"], regrade if isinstance(regrade, dict) else None)

    @classmethod
    def of_run(cls, summary: RunSummary) -> HarborTrial | None:
        """The trial of run.json ``summary``; None for a run not imported from Harbor."""
        return cls(summary.harbor, summary.regrade) if summary.harbor is not None else None


@dataclass(frozen=True, slots=True)
class RunRecord:
    """One run's record (see the module): its ``run_id``; its ``summary``, the index's run row;
    its ``task``; its Harbor ``job`` parts (None when not imported from Harbor); the
    ``legacy_id`` run.json gives (ids before run ids carried their identity); the ids masking
    ``renamed`` (``{digest of the old id: new id}``); its ``redaction`` counts (None when the
    export masks nothing)."""

    run_id: str
    summary: RunRow
    task: RecordTask
    job: HarborTrial | None
    legacy_id: str | None
    renamed: dict[str, str]
    redaction: RedactionCounts | None

    def to_json(self) -> dict[str, Any]:
        """The record as JSON values: ``{run_id, summary, task, job, legacy_id, renamed,
        redaction}`` (the run row as contract.site.RunRow dumps it)."""
        return {"run_id": self.run_id, "summary": self.summary.model_dump(), "task": self.task.to_json(),
                "job": self.job.to_json() if self.job is not None else None, "legacy_id": self.legacy_id,
                "renamed": dict(self.renamed),
                "redaction": self.redaction.to_json() if self.redaction is not None else None}

    @classmethod
    def from_json(cls, value: Any) -> RunRecord:
        """The record :meth:`to_json` wrote (other keys, such as the heavy parts, ignored).

        Raises:
            BadRecord: a part is missing or of the wrong type (the run row is validated as
                contract.site.RunRow).
        """
        _need(isinstance(value, dict) and isinstance(value.get("run_id"), str), "run_id")
        try:
            summary = RunRow.model_validate(value.get("summary"))
        except ValidationError as err:
            raise BadRecord(f"record: summary: {err.errors()[0].get('msg')}") from None
        renamed = value.get("renamed")
        _need(isinstance(renamed, dict) and all(isinstance(v, str) for v in renamed.values()), "renamed")
        legacy = value.get("legacy_id")
        _need(legacy is None or isinstance(legacy, str), "legacy_id")
        job, redaction = value.get("job"), value.get("redaction")
        return cls(value["run_id"], summary, RecordTask.from_json(value.get("task")),
                   HarborTrial.from_json(job) if job is not None else None, legacy, dict(renamed),
                   RedactionCounts.from_json(redaction) if redaction is not None else None)
