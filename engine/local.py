"""The engine seam and the local engine: this machine's worker processes, counting grades.

An engine gives a heavy command its executor (:meth:`Engine.pool`), its progress bar
(:meth:`Engine.bar`, naming the workers) and its closing line (:meth:`Engine.summary`,
grades per second). Every job's grades are counted where they run: a job is wrapped in
:func:`counted`, which returns the job's result and how many grades
(:attr:`grader.grade.Grader.graded`) it made.
"""

from __future__ import annotations

import sys
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import Executor, Future
from typing import TYPE_CHECKING, Any, Protocol

from contract.processes import worker_pool
from contract.text import counted as plural_count

if TYPE_CHECKING:  # imported where a bar is made: a command that shows none starts faster
    from tqdm import tqdm

GRADING_ROUTE = threading.local()
"""Where this thread's graded workspaces (recorder.environments.graded) grade:
``GRADING_ROUTE.grade(task_dir, root)`` when set (a Ray engine's driver threads,
:mod:`engine.ray_engine`), else :func:`grader.grade.grade_result` in this process. The route
returns the same :class:`contract.grade.GradeResult`."""


def counted(fn: Callable[..., Any], *args: Any) -> tuple[Any, int]:
    """``(fn(*args), grades made meanwhile in this process)``."""
    from grader.grade import DEFAULT_GRADER

    before = DEFAULT_GRADER.graded
    result = fn(*args)
    return result, DEFAULT_GRADER.graded - before


class Engine(Protocol):
    """Where a heavy command runs its jobs and grades.

    ``workers`` is how many jobs run at once; ``grades`` counts grades per worker name.
    """

    name: str
    workers: int
    grades: Counter

    def pool(self, jobs: int, *, writes: bool = False) -> Executor:
        """An executor for the command's jobs (a context manager; ``jobs`` local processes
        asked for). ``writes``: the jobs write run folders, so they must run in this
        machine's processes (only their grades may go elsewhere)."""

    def bar(self, total: int, desc: str, unit: str, disable: bool = False) -> tqdm:
        """The progress bar, with the number of workers."""

    def summary(self) -> str:
        """The closing line: grades, workers, seconds and grades per second."""


class InlineExecutor(Executor):
    """Runs each job at once in this process (``-j 1``); ``map`` is lazy, so a progress bar
    moves job by job."""

    def submit(self, fn: Callable[..., Any], /, *args: Any, **kwargs: Any) -> Future:
        """Run ``fn`` now; the returned future holds its result or its exception."""
        future: Future = Future()
        try:
            future.set_result(fn(*args, **kwargs))
        except BaseException as err:  # noqa: BLE001 - handed to the caller through the future
            future.set_exception(err)
        return future

    def map(self, fn: Callable[..., Any], *iterables: Iterable[Any], timeout: float | None = None,
            chunksize: int = 1) -> Iterator[Any]:
        """``fn`` over the items, one at a time, in order."""
        return (fn(*items) for items in zip(*iterables, strict=True))


class CountingExecutor(Executor):
    """An executor whose jobs report their grades to an engine (:func:`counted`)."""

    def __init__(self, inner: Executor, engine: LocalEngine):
        self.inner, self.engine = inner, engine

    def submit(self, fn: Callable[..., Any], /, *args: Any, **kwargs: Any) -> Future:
        """``fn(*args)`` on the inner executor; the future resolves to its result."""
        if kwargs:
            raise TypeError("engine jobs take positional arguments only")
        self.engine.started = self.engine.started or time.perf_counter()
        outer: Future = Future()

        def done(inner: Future) -> None:
            if not outer.set_running_or_notify_cancel():
                return  # cancelled (the pool was shut down on another job's error): nothing to hand on
            try:
                result, grades = inner.result()
            except BaseException as err:  # noqa: BLE001 - handed on through the future
                outer.set_exception(err)
                return
            self.engine.grades[self.engine.name] += grades
            self.engine.finished = time.perf_counter()
            outer.set_result(result)

        self.inner.submit(counted, fn, *args).add_done_callback(done)
        return outer

    def map(self, fn: Callable[..., Any], *iterables: Iterable[Any], timeout: float | None = None,
            chunksize: int = 1) -> Iterator[Any]:
        """Like :meth:`Executor.map`, lazily when the inner executor runs jobs inline."""
        if isinstance(self.inner, InlineExecutor):
            return (self.submit(fn, *items).result() for items in zip(*iterables, strict=True))
        return super().map(fn, *iterables, timeout=timeout)

    def shutdown(self, wait: bool = True, *, cancel_futures: bool = False) -> None:
        """Shut the inner executor down."""
        self.inner.shutdown(wait=wait, cancel_futures=cancel_futures)


class LocalEngine:
    """This machine: ``jobs`` worker processes that die with this one
    (:func:`contract.processes.worker_pool`), or this process for ``jobs`` 1."""

    name = "local"

    def __init__(self) -> None:
        self.workers = 1
        self.grades: Counter = Counter()
        self.started: float | None = None
        self.finished: float | None = None

    def pool(self, jobs: int, *, writes: bool = False) -> Executor:
        """A :class:`CountingExecutor` over ``jobs`` processes (inline for 1)."""
        self.workers = max(1, jobs)
        inner = InlineExecutor() if jobs <= 1 else worker_pool(jobs)
        return CountingExecutor(inner, self)

    def bar(self, total: int, desc: str, unit: str, disable: bool = False) -> tqdm:
        """tqdm on stderr, with ``local: N workers`` after the counts."""
        # the program's own text: past the CLI's escaping layer (alertforge/cli/terminal.py),
        # whose `raw` is the real stderr, so the bar's carriage returns stay carriage returns
        from tqdm import tqdm

        return tqdm(total=total, desc=desc, unit=unit, disable=disable,
                    postfix=f"{self.name}: {plural_count(self.workers, 'worker')}", file=getattr(sys.stderr, "raw", sys.stderr))

    def summary(self) -> str:
        """``local: 12 grades on 2 workers in 9.1 s, 1.32 grades/s``."""
        return grades_line(self.name, self.grades, self.workers, self.started, self.finished)


def grades_line(name: str, grades: Counter, workers: int, started: float | None,
                finished: float | None) -> str:
    """``<name>: N grades on W workers in T s, R grades/s`` (wall time from the first job
    submitted to the last one done), then the grades per worker when more than one graded."""
    total = sum(grades.values())
    seconds = (finished or time.perf_counter()) - started if started else 0.0
    rate = total / seconds if seconds > 0 else 0.0
    line = (f"{name}: {plural_count(total, 'grade')} on {plural_count(workers, 'worker')} in {seconds:.1f} s, "
            f"{rate:.2f} grades/s")
    if len(grades) > 1:
        line += " (" + ", ".join(f"{w} {n}" for w, n in sorted(grades.items())) + ")"
    return line
