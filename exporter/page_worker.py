"""Run one part of a site export in a forked second process while this one writes the rest.

An incremental export of a few hundred runs spends most of its rendering on the failure
gallery's kind pages, which need only the gallery data; the run list, search shards and
top pages need only the records. On a machine with two cores the first can be made beside
the second (:func:`exporter.export_shared.write_shared_files`).

The child writes its files into the same staging folder through its copy of the sink
(:class:`exporter.site_swap.Staging`), then sends the parent, on a pipe, what the parent's
sink and new export state must note (files and digests, bytes, links, the pages' digests);
:meth:`Beside.join` waits for it and adds that. An error in the child is raised by
``join`` as it was raised there. Used only where a fork is safe and its copy-on-write cheap:
``os.fork`` exists, this process runs no other thread (``alertforge view`` does: its server
threads), the sink is a staging folder and the site has at most :data:`MAX_RUNS` runs.
Otherwise the work runs here, at once, and ``join`` has nothing to wait for.
"""

from __future__ import annotations

import os
import pickle
import signal
import threading
import traceback
from collections.abc import Callable
from typing import Any

from contract.errors import BadInput, HelperDied
from contract.processes import die_with_parent
from exporter.site_swap import Staging

MAX_RUNS = 20_000
"""Past this many runs the work is done in this process: the child would copy much of a large
export's memory as it touches it (the 2 GB bound of docs/bounds.md)."""


class Beside:
    """``work()`` (writing into ``sink``; noting page digests in ``pages``, the new export
    state's, when given) run in a forked child when :func:`can_fork` allows, else here at once.

    Raises (from :meth:`join`, or at once when run here): whatever ``work`` raised.
    """

    def __init__(self, work: Callable[[], None], sink: Any, pages: dict[str, str] | None, runs: int) -> None:
        self.sink, self.pages = sink, pages
        self.child: tuple[int, int] | None = None  # (pid, read end of the pipe)
        if not can_fork(sink, runs):
            work()
            return
        read_end, write_end = os.pipe()
        parent = os.getpid()
        pid = os.fork()
        if pid == 0:  # the child: never returns
            os.close(read_end)
            die_with_parent(parent)  # killed with the export (kill -9, the OOM killer): never an orphan
            _child(work, sink, pages, write_end)
        os.close(write_end)
        self.child = (pid, read_end)

    def join(self) -> None:
        """Wait for the child and add what it wrote to the sink and the pages (nothing when
        the work ran here). Interrupted while waiting (Ctrl-C), it ends the child first.

        Raises:
            whatever ``work`` raised in the child; contract.errors.HelperDied when it ended
                without a word (killed), saying how.
        """
        if self.child is None:
            return
        pid, read_end = self.child
        self.child = None
        try:
            with os.fdopen(read_end, "rb") as pipe:
                message = pipe.read()
            _, status = os.waitpid(pid, 0)
        except BaseException:
            _end(pid)
            raise
        if not message:
            raise HelperDied(f"the export's gallery page process {_how_it_ended(status)} before its pages were "
                             "made; the site was not changed: export again")
        outcome = pickle.loads(message)
        if isinstance(outcome, BaseException):
            raise outcome
        for relative, digest in outcome["files"].items():
            self.sink.files[relative] = digest
        self.sink.bytes += outcome["bytes"]
        self.sink.linked += outcome["linked"]
        self.sink.written.extend(outcome["written"])
        if self.pages is not None:
            self.pages.update(outcome["pages"])

    def stop(self) -> None:
        """End the child at once (its work is not wanted: the export fails) and reap it."""
        if self.child is None:
            return
        pid, read_end = self.child
        self.child = None
        os.close(read_end)
        _end(pid)


def _end(pid: int) -> None:
    """SIGKILL the child ``pid`` and reap it (it may have ended already)."""
    try:
        os.kill(pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    try:
        os.waitpid(pid, 0)
    except ChildProcessError:
        pass


def can_fork(sink: Any, runs: int) -> bool:
    """Whether :class:`Beside` may fork: see the module."""
    return (hasattr(os, "fork") and isinstance(sink, Staging) and runs <= MAX_RUNS
            and threading.active_count() == 1)


def _child(work: Callable[[], None], sink: Staging, pages: dict[str, str] | None, write_end: int) -> None:
    """Run ``work`` in the forked child, send its result (or error) on ``write_end`` and end
    the process without running the parent's exit handlers."""
    code = 0
    try:
        files, written = dict(sink.files), len(sink.written)
        size, linked = sink.bytes, sink.linked
        pages_before = dict(pages) if pages is not None else {}
        work()
        outcome: Any = {
            "files": {relative: digest for relative, digest in sink.files.items() if relative not in files},
            "bytes": sink.bytes - size, "linked": sink.linked - linked,
            "written": sink.written[written:],
            "pages": {k: v for k, v in (pages or {}).items() if pages_before.get(k) != v},
        }
    except BaseException as err:  # noqa: BLE001 - every error goes to the parent, which raises it
        if not isinstance(err, (BadInput, KeyboardInterrupt)):  # its traceback goes with it, as a note
            err.add_note("in the gallery's process (exporter/page_worker.py):\n" + traceback.format_exc())
        outcome, code = err, 1
    try:
        data = pickle.dumps(outcome)
    except Exception:  # noqa: BLE001 - an error that does not pickle is sent as its text
        data, code = pickle.dumps(RuntimeError(repr(outcome))), 1
    try:
        with os.fdopen(write_end, "wb") as pipe:
            pipe.write(data)
    finally:
        os._exit(code)


def _how_it_ended(status: int) -> str:
    """A wait status (``os.waitpid``) in words: ``was killed by signal 9 (SIGKILL)``, ``exited
    with status 3``."""
    if os.WIFSIGNALED(status):
        number = os.WTERMSIG(status)
        try:
            name = f" ({signal.Signals(number).name})"
        except ValueError:
            name = ""
        return f"was killed by signal {number}{name}"
    return f"exited with status {os.waitstatus_to_exitcode(status)}"
