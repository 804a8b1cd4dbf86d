"""The Ray engine: a heavy command's jobs and grades as Ray tasks, every run written by the driver.

Two kinds of job (:meth:`RayEngine.pool`):

- jobs that only compute (a gate case, the mutation analysis of a task) run whole on a Ray
  worker (:func:`engine.ray_worker.run_job`); their result comes back to the driver.
- jobs that write run folders (``record-reference``'s runs, ``import-harbor``'s trials) run in
  driver threads through the one run lifecycle (:mod:`recorder.run_store`), and each grade
  they ask for is a Ray task (:meth:`RayEngine.grade`, installed as
  :data:`engine.local.GRADING_ROUTE`): workers grade and return results,
  the driver alone writes, and a resume after a driver crash is the local one.

Task folders reach workers through Ray's object store (:func:`ray_worker.bundle`, put once
per folder). A worker lost mid-task is retried on another (Ray's ``max_retries``,
:data:`ATTEMPTS` in all); a task that fails on every attempt raises
:class:`contract.errors.ClusterFailure` naming it. Before any work, every node with CPUs
passes :func:`ray_worker.node_report` or the command stops naming the node.
"""

from __future__ import annotations

import functools
import ipaddress
import os
import socket
import sys
import threading
import time
from collections import Counter
from concurrent.futures import Executor, Future, ThreadPoolExecutor
from pathlib import Path
from typing import Any

from tqdm import tqdm

from contract.errors import ClusterFailure
from contract.grade import GradeResult, validated
from contract.text import counted as plural_count
from engine import ray_worker
from engine.local import GRADING_ROUTE, grades_line

ATTEMPTS = 4
"""Tries of one Ray task when its worker dies (Ray's ``max_retries`` + 1)."""
CHECK_TIMEOUT_S = 120
"""How long every node has to answer the start-up check."""
CONNECT_TIMEOUT_S = 3
"""How long the head's port has to accept a TCP connection before ``--ray`` gives up."""
THREADS_PER_WORKER = 2
"""Driver threads per Ray worker for jobs that write: one grading, one between grades."""


@functools.cache
def _remote_job():
    """:func:`ray_worker.run_job` as a Ray remote function (made once: Ray exports it once)."""
    import ray

    return ray.remote(num_cpus=1, max_retries=ATTEMPTS - 1)(ray_worker.run_job)


def _host_port(address: str) -> tuple[str, int]:
    host, _, port = address.rpartition(":")
    if not host or not port.isdigit():
        raise ClusterFailure(address, "not a Ray head address (HOST:PORT, e.g. 127.0.0.1:6379)")
    return host.strip("[]"), int(port)


def _loopback(host: str) -> bool:
    try:
        return ipaddress.ip_address(socket.gethostbyname(host)).is_loopback
    except (OSError, ValueError):
        return False


def reachable(address: str) -> None:
    """Raise ClusterFailure unless something accepts TCP connections at ``address``."""
    host, port = _host_port(address)
    try:
        with socket.create_connection((host, port), timeout=CONNECT_TIMEOUT_S):
            return
    except OSError as err:
        raise ClusterFailure(address, f"nothing listens there ({err.strerror or err}); start a "
                             "head with `ray start --head` or give its address") from None


class RayEngine:
    """A connected Ray cluster (use :meth:`connect`). ``workers`` the cluster's CPUs (one
    job or grade each at a time); ``grades`` counts grades per worker name."""

    name = "ray"

    def __init__(self, address: str, workers: int):
        self.address, self.workers = address, workers
        self.grades: Counter = Counter()
        self.jobs: Counter = Counter()
        """Jobs done per worker name (``export --ray`` names them in its log)."""
        self.started: float | None = None
        self.finished: float | None = None
        self._bundles: dict[str, tuple[str, Any]] = {}
        self._lock = threading.Lock()

    @classmethod
    def connect(cls, address: str) -> RayEngine:
        """Connect this process to the Ray head at ``address`` and check every node.

        A head on a loopback address is a one-machine cluster: Ray is told to stay on the
        loopback (``RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER=0``; otherwise it swaps 127.0.0.1 for
        the machine's network address).

        Raises:
            ClusterFailure: nothing listens, the address is no Ray head, or a node fails the
                start-up check (:func:`ray_worker.node_report`).
        """
        reachable(address)
        loopback = _loopback(_host_port(address)[0])
        if loopback:
            os.environ["RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER"] = "0"
        import ray
        from ray._private import ray_constants

        if loopback:  # read when Ray resolves an address, so also after an earlier import
            ray_constants.ENABLE_RAY_CLUSTER = False

        if not ray.is_initialized():
            try:
                ray.init(address=address, log_to_driver=False, logging_level="warning",
                         configure_logging=False)
            except Exception as err:  # noqa: BLE001 - Ray raises many kinds; all mean the same
                raise ClusterFailure(address, f"not a Ray head, or it did not answer: "
                                     f"{type(err).__name__}: {str(err)[:300]}") from None
        engine = cls(address, int(ray.cluster_resources().get("CPU", 0)))
        if engine.workers < 1:
            raise ClusterFailure(address, "the cluster has no CPUs to run grades on")
        engine.check_nodes()
        return engine

    def check_nodes(self) -> None:
        """Run the start-up check on every alive node with CPUs, pinned to that node.

        Raises:
            ClusterFailure: naming the first node that fails or does not answer in time.
        """
        import ray
        from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

        from contract.version import __version__
        from grader.tools import tool_versions

        expected = tool_versions()
        check = ray.remote(num_cpus=1, max_retries=0)(ray_worker.node_report)
        nodes = [n for n in ray.nodes() if n.get("Alive") and n.get("Resources", {}).get("CPU")]
        pending = {check.options(scheduling_strategy=NodeAffinitySchedulingStrategy(
            n["NodeID"], soft=False)).remote(expected, __version__): n for n in nodes}
        ready, late = ray.wait(list(pending), num_returns=len(pending), timeout=CHECK_TIMEOUT_S)
        for ref in late:
            raise ClusterFailure(_node(pending[ref]), f"did not answer the start-up check in "
                                 f"{CHECK_TIMEOUT_S} s")
        for ref in ready:
            try:
                problems = ray.get(ref)
            except Exception as err:  # noqa: BLE001 - the check could not even run there
                problems = [f"the check could not run: {type(err).__name__}: {str(err)[:300]}"]
            if problems:
                raise ClusterFailure(_node(pending[ref]), "; ".join(problems))

    # -- task folders ------------------------------------------------------------------------

    def _task_ref(self, folder: str) -> tuple[str, Any]:
        """``(digest, object ref)`` of a task folder's bundle, put once per folder."""
        import ray

        with self._lock:
            if folder not in self._bundles:
                packed = ray_worker.bundle(Path(folder))
                self._bundles[folder] = (packed.digest, ray.put(packed))
            return self._bundles[folder]

    def _tasks_in(self, value: Any) -> dict[str, tuple[str, Any]]:
        """The task folders named by strings in ``value`` (inside tuples and lists too)."""
        if isinstance(value, str):
            path = Path(value)
            return {value: self._task_ref(value)} if (path / "tests" / "checks.json").is_file() \
                and (path / "environment").is_dir() else {}
        found: dict[str, tuple[str, Any]] = {}
        if isinstance(value, tuple | list):
            for item in value:
                found |= self._tasks_in(item)
        return found

    # -- running -----------------------------------------------------------------------------

    def _count(self, worker: str, grades: int) -> None:
        with self._lock:
            self.grades[worker] += grades
            self.finished = time.perf_counter()

    def _start(self) -> None:
        with self._lock:
            self.started = self.started or time.perf_counter()

    def submit_job(self, fn, args: tuple) -> Future:
        """``fn(*args)`` as a Ray task; the future holds its result or its error (the
        worker's exception as raised, or ClusterFailure after :data:`ATTEMPTS` lost workers)."""
        self._start()
        ref = _remote_job().remote(fn, args, self._tasks_in(args))
        outer: Future = Future()

        def done(inner: Future) -> None:
            try:
                status, value, grades, worker = inner.result()
            except Exception as err:  # noqa: BLE001 - every Ray failure ends the same way
                outer.set_exception(_lost(f"{getattr(fn, '__name__', fn)}{args!r}"[:200], err))
                return
            self._count(worker, grades)
            with self._lock:
                self.jobs[worker] += 1
            if status == "raised":
                outer.set_exception(value.rebuild())
            else:
                outer.set_result(value)

        ref.future().add_done_callback(done)
        return outer

    def grade(self, task_dir: Path, workspace: Path) -> GradeResult:
        """Grade ``workspace`` against ``task_dir`` on a Ray worker; the GradeResult (with
        ``worker``) as :func:`grader.grade.grade_result` returns it (it crosses processes as
        its JSON form, :func:`engine.ray_worker.grade_files`), or its exception raised here.

        Raises:
            ClusterFailure: the grade's worker died on every attempt.
        """
        import ray

        from contract.untrusted import Tree

        self._start()
        tree = Tree(workspace)
        files, dirs = {}, []
        for rel, kind in tree.walk(""):
            if kind == "file":
                files[rel] = tree.read_bytes(rel)
            elif kind == "dir":
                dirs.append(rel)
        folder = str(Path(task_dir).resolve())
        try:
            status, value, grades, worker = ray.get(_remote_job().remote(
                ray_worker.grade_files, (folder, files, dirs), {folder: self._task_ref(folder)}))
        except ray.exceptions.RayError as err:
            raise _lost(f"grade of {Path(task_dir).name}", err) from None
        self._count(worker, grades)
        if status == "raised":
            raise value.rebuild()
        return validated(value)

    def pool(self, jobs: int, *, writes: bool = False) -> Executor:
        """Jobs as Ray tasks; with ``writes``, driver threads whose grades are Ray tasks
        (``jobs``, the local process count, is not used: the cluster's CPUs decide)."""
        if writes:
            def route() -> None:
                GRADING_ROUTE.grade = self.grade

            return ThreadPoolExecutor(max_workers=THREADS_PER_WORKER * self.workers,
                                      initializer=route, thread_name_prefix="ray-driver")
        return RayExecutor(self)

    def bar(self, total: int, desc: str, unit: str, disable: bool = False) -> tqdm:
        """tqdm on stderr, with ``ray: N workers`` after the counts."""
        # the program's own text: past the CLI's escaping layer (alertforge/cli/terminal.py),
        # whose `raw` is the real stderr, so the bar's carriage returns stay carriage returns
        return tqdm(total=total, desc=desc, unit=unit, disable=disable,
                    postfix=f"ray: {plural_count(self.workers, 'worker')}", file=getattr(sys.stderr, "raw", sys.stderr))

    def summary(self) -> str:
        """``ray: 12 grades on 2 workers in 9.1 s, 1.32 grades/s (<worker> 6, <worker> 6)``."""
        return grades_line(self.name, self.grades, self.workers, self.started, self.finished)


class RayExecutor(Executor):
    """:meth:`RayEngine.submit_job` as a concurrent.futures Executor (``map``, ``submit``)."""

    def __init__(self, engine: RayEngine):
        self.engine = engine

    def submit(self, fn, /, *args: Any, **kwargs: Any) -> Future:
        """``fn(*args)`` as a Ray task (positional arguments only)."""
        if kwargs:
            raise TypeError("engine jobs take positional arguments only")
        return self.engine.submit_job(fn, args)


def _node(node: dict) -> str:
    return f"ray node {node.get('NodeManagerAddress')} ({str(node.get('NodeID'))[:8]})"


def _lost(what: str, err: BaseException) -> ClusterFailure:
    first = (str(err).splitlines() or [""])[0][:300]
    return ClusterFailure(what, f"failed on {ATTEMPTS} Ray workers in a row, not retried "
                          f"further: {type(err).__name__}: {first}")
