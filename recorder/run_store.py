"""One run lifecycle for every producer: identity, an append-only journal, atomic files, a
resume that never shrinks a run, and one set of statuses (docs/formats.md "Run lifecycle").

- **Identity.** A run id is a readable part and 10 hex of the sha256 of what defines the run
  (:class:`contract.run.Identity`: the task, the policy or agent and its options, the seed,
  the transport, an actions file's content, an import's source path). The same inputs again
  find the same folder: a complete run there is *unchanged*; a folder holding a run with
  another identity is refused, never taken over.
- **Writing.** Steps are appended to ``journal.jsonl`` (flushed and fsynced); then
  ``trajectory.json`` (validated ATIF) and ``run.json`` (:class:`contract.run.RunSummary`) are
  rewritten atomically from the steps. An interrupted run loses at most the step in flight.
- **Resume never shrinks.** A producer that replays a journal writes nothing until the
  replay is past it; if the replay diverges or the environment fails, the journal and
  trajectory stay byte-identical and run.json is marked ``failed`` with the reason.
- **Replacing.** Only ``fresh`` (``--fresh``) or a producer's own rule (a scripted run whose
  task changed, an import whose source files changed) replaces a run, and the reason is
  reported (:attr:`Opened.replaced`).
"""

from __future__ import annotations

import hashlib
import os
import shutil
import signal
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson

from contract.base import dump, parse
from contract.errors import BadInput
from contract.files import read_json, write_json
from contract.ids import check_id
from contract.run import RUN_VERSION, Identity, RunSummary, Source
from recorder import run_format
from recorder.journal import append_step, read_journal, rewrite_journal

RUN_FILES = ("run.json", "trajectory.json", "journal.jsonl")
"""What a run folder holds; a folder with anything else is not replaced automatically."""
CRASH_AT = "ALERTFORGE_CRASH_AT"
"""Fault injection for the kill -9 tests: ``append:N``, ``write:N`` or ``journal:N`` makes
the process SIGKILL itself right after journaling step N (``append``), after rewriting the
files at step N (``write``), or, for a run written whole, between its journal and its other
files (``journal``). Unset in normal use."""


def _crash_point(where: str, steps: int) -> None:
    wanted = os.environ.get(CRASH_AT)
    if wanted and wanted == f"{where}:{steps}":
        os.kill(os.getpid(), signal.SIGKILL)


def make_identity(producer: Source, defining: dict[str, Any]) -> Identity:
    """The identity of a run defined by ``defining`` (JSON values; canonical JSON is hashed)."""
    canonical = orjson.dumps(defining, option=orjson.OPT_SORT_KEYS)
    return Identity(producer=producer, defining=defining,
                    digest=hashlib.sha256(canonical).hexdigest()[:10])


def run_id_of(readable: str, identity: Identity) -> str:
    """``<readable>__<digest>``, a valid id (contract.ids); a long readable part is cut."""
    readable = readable[: 160 - len(identity.digest) - 2]
    return f"{readable}__{identity.digest}"


@dataclass
class Opened:
    """What :meth:`RunStore.open` found: ``state`` is ``new``, ``unchanged`` (a complete run of
    this identity: nothing to do), ``resume`` (``steps`` from the journal) or ``replaced``
    (the old run was removed; ``replaced`` says why)."""

    state: str
    steps: list[dict[str, Any]] = field(default_factory=list)
    summary: RunSummary | None = None
    replaced: str | None = None


class RunStore:
    """The folder ``out/<run id>`` of one run and every write to it.

    Args:
        out: the runs folder.
        readable: the readable part of the run id (``af-001__oracle__s0``).
        identity: what defines the run (:func:`make_identity`).
    """

    def __init__(self, out: Path, readable: str, identity: Identity):
        out = Path(out)
        if out.exists() and not out.is_dir():
            raise BadInput(out, "output path exists and is not a folder")
        self.identity = identity
        self.run_id = check_id(run_id_of(readable, identity), "run id", readable)
        self.dir = out / self.run_id
        if self.dir.is_symlink() or (self.dir.exists() and not self.dir.is_dir()):
            raise BadInput(self.dir, "is a link or not a folder; a run is written only into a real "
                           "folder under --out (move it away)")
        self.journal = self.dir / "journal.jsonl"
        self.written = 0
        """Steps on disk (journal lines) as far as this store knows."""

    # -- opening -----------------------------------------------------------------------------

    def read_summary(self) -> RunSummary | None:
        """The run.json in the folder (None when there is none).

        Raises:
            BadInput: run.json is not a regular file, not JSON or not a run summary.
        """
        path = self.dir / "run.json"
        if not path.exists() and not path.is_symlink():
            return None
        return parse(RunSummary, read_json(path), path, "run summary")

    def open(self, *, fresh: bool = False,
             replace_if: Callable[[RunSummary], str | None] | None = None) -> Opened:
        """Look at the folder before anything is written.

        ``replace_if(old summary)`` gives the reason to replace an existing run of this
        identity (None: keep it), e.g. a scripted policy's task changed.

        Raises:
            BadInput: the folder holds a run with another identity, a malformed run.json or
                journal, or files no run writes (when it would have to be replaced).
        """
        if not self.dir.exists():
            return Opened("new")
        links = [name for name in RUN_FILES if (self.dir / name).is_symlink()]
        if links:
            raise BadInput(self.dir / links[0], "is a link; run files are written only as regular "
                           "files (move this run folder away)")
        summary = self.read_summary()
        if summary is not None and summary.identity is not None and \
                summary.identity.defining != self.identity.defining:
            raise BadInput(self.dir / "run.json", "holds another run (its identity differs); "
                           "move it away or record into another --out")
        reason = "--fresh" if fresh else (replace_if(summary) if summary and replace_if else None)
        if reason:
            self._remove()
            return Opened("new", replaced=reason)
        if summary is not None and summary.status == "complete":
            return Opened("unchanged", summary=summary)
        steps = read_journal(self.journal)
        self.written = len(steps)
        return Opened("resume", steps=steps, summary=summary)

    def _remove(self) -> None:
        foreign = sorted(p.name for p in self.dir.iterdir() if p.name not in RUN_FILES)
        if foreign:
            raise BadInput(self.dir, f"holds files no run writes ({', '.join(foreign[:5])}); "
                           "not replacing it: move it away")
        shutil.rmtree(self.dir)

    # -- writing -----------------------------------------------------------------------------

    def start(self, steps: list[dict[str, Any]]) -> None:
        """Make the journal hold exactly ``steps`` (a resume's replayed steps: a torn tail is
        dropped; a new run: none yet). A new run's folder is made with its first step
        (:meth:`append`), so a run that stops before one leaves no folder behind."""
        if steps or self.journal.exists():
            self.dir.mkdir(parents=True, exist_ok=True)
            if len(steps) < self.written:
                raise ValueError("a resume never shrinks a run")
            rewrite_journal(self.journal, steps)
        self.written = len(steps)

    def append(self, step: dict[str, Any]) -> None:
        """Append one finished step to the journal (fsynced)."""
        self.dir.mkdir(parents=True, exist_ok=True)
        append_step(self.journal, step)
        self.written += 1
        _crash_point("append", self.written)

    def write(self, summary: RunSummary, trajectory: dict[str, Any]) -> None:
        """Rewrite trajectory.json (validated ATIF) and run.json atomically, in that order."""
        if len(trajectory["steps"]) < self.written:
            raise ValueError(f"{self.dir}: would write {len(trajectory['steps'])} steps where the "
                             f"journal has {self.written}")
        run_format.validate(trajectory)
        self.dir.mkdir(parents=True, exist_ok=True)
        write_json(self.dir / "trajectory.json", trajectory)
        write_json(self.dir / "run.json", dump(summary))
        _crash_point("write", len(trajectory["steps"]))

    def write_whole(self, summary: RunSummary, trajectory: dict[str, Any]) -> None:
        """Write a run built at once (imports): journal, trajectory and run.json, each atomically."""
        self.dir.mkdir(parents=True, exist_ok=True)
        rewrite_journal(self.journal, trajectory["steps"])
        self.written = len(trajectory["steps"])
        _crash_point("journal", self.written)
        self.write(summary, trajectory)

    def discard(self) -> None:
        """Remove the folder of a run this store started new (its steps turned out not to be
        its own, e.g. taken in another client's episode), as if it had stopped before its first
        step. Files no run writes are never removed (BadInput names them)."""
        if self.dir.is_dir() and not self.dir.is_symlink():
            self._remove()
        self.written = 0

    def fail(self, error: str, summary: RunSummary | None = None) -> None:
        """Mark the run ``failed`` with ``error``, keeping every step on disk: the journal and
        trajectory are left byte-identical; only run.json changes (``status``, ``error``).

        ``summary`` is used when the folder has no run.json yet; a run with no step on disk
        (no journal, no run.json) leaves nothing.
        """
        current = self.read_summary() if (self.dir / "run.json").exists() else None
        base = current or summary
        if base is None or (current is None and not self.journal.exists()):
            return  # nothing was recorded: no folder is left, not even a failed run.json
        failed = base.model_copy(update={"status": "failed", "error": error})
        self.dir.mkdir(parents=True, exist_ok=True)
        write_json(self.dir / "run.json", dump(failed) | {"status": "failed", "error": error})


def new_summary(store: RunStore, **fields: Any) -> RunSummary:
    """A run.json for ``store``'s run: ``version``, ``run_id``, ``identity``, ``status``
    ``running`` and ``steps`` 0 unless given, plus ``fields``."""
    values = {"version": RUN_VERSION, "run_id": store.run_id, "identity": store.identity,
              "status": "running", "steps": 0, **fields}
    return RunSummary(**values)
