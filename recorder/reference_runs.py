"""Record the reference policies on every task, in parallel worker processes, with a progress bar.

Each (task, policy) is an independent run folder, so workers never share files; a run that
is already complete is skipped and an interrupted one resumes (see :mod:`recorder.record`).
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Sequence
from pathlib import Path

from contract.errors import BadInput
from engine import Engine, LocalEngine
from recorder.record import REUSED_SAYS, record_run
from recorder.reference.context import context_for_task
from recorder.reference.mutations import ADVERSARIES, applicability, applicable

DEFAULT_POLICIES = ("oracle", "nop", "partial")


DEMO_ADVERSARIES = ("adversary:always-fire", "adversary:catch-all-route", "adversary:inhibit-all",
                    "adversary:per-pod", "adversary:rename", "adversary:threshold-band",
                    "adversary:delete-untouched", "adversary:never-fire", "adversary:input-shadowing")
"""Adversaries the demo may show beside the reference policies, in order of preference: the
first three that apply to a task (:func:`demo_adversaries`)."""
DEMO_ADVERSARY_COUNT = 3


def demo_adversaries(task_dir: Path) -> list[str]:
    """The first :data:`DEMO_ADVERSARY_COUNT` of :data:`DEMO_ADVERSARIES` that apply to the
    task (a task without a route requirement shows another attack instead of catch-all-route)."""
    ctx = context_for_task(Path(task_dir))
    found = [a for a in DEMO_ADVERSARIES if applicable(a.split(":", 1)[1], ctx)]
    return found[:DEMO_ADVERSARY_COUNT]


def demo_policies(task_dir: Path) -> list[str]:
    """What the demo records on a task: oracle, nop, partial (when the task has an alert or
    repair to get half right) and three applicable adversaries."""
    base = ["oracle", "nop"] + (["partial"] if context_for_task(Path(task_dir)).primary else [])
    return base + demo_adversaries(task_dir)


def _applies(task_dir: Path, policy: str) -> bool:
    """False (said on stderr) for an adversary the task gives no place to (a delivery attack
    on a task whose route requirement creates no receiver): the other runs go on."""
    if not policy.startswith("adversary:"):
        return True
    kind = policy.split(":", 1)[1]
    if kind not in ADVERSARIES:
        return True  # record_run names the unknown kind
    why = applicability(kind, context_for_task(task_dir))
    if why is not None:
        print(f"alertforge: skipped {policy} on {task_dir.name}: it does not apply ({why})",
              file=sys.stderr)
    return why is None


def _one(job: tuple[str, str, int, str]) -> tuple[str, bool]:
    """Record one job; (its run folder, whether a complete run recorded before was reused)."""
    task_dir, policy, seed, out = job
    said: list[str] = []
    folder = record_run(Path(task_dir), policy, seed=seed, out=Path(out), report=said.append)
    return str(folder), any(REUSED_SAYS in line for line in said)


def record_reference(task_dirs: list[Path], out: Path, *, jobs: int = 2,
                     policies: Sequence[str] | Callable[[Path], Sequence[str]] = DEFAULT_POLICIES,
                     seed: int = 0, progress: bool = True, mutants: int = 0,
                     engine: Engine | None = None) -> list[Path]:
    """Record every policy on every task into ``out``; returns the run folders (sorted).

    ``policies`` is a list of policy names, or a function giving a task folder's list (e.g.
    :func:`demo_policies`). ``mutants`` adds that many ``mutant`` runs per task (seeds 1..N,
    each 1-3 seeded mistakes). ``jobs`` worker processes (1: in this process) of the local
    ``engine`` (default); a Ray engine records in this process, grading on the cluster
    (:mod:`engine`). An adversary that does not apply to a task is skipped there, said on
    stderr. Raises the first worker's error.
    """
    engine = engine or LocalEngine()
    out = Path(out)
    if out.exists() and not out.is_dir():
        raise BadInput(out, "output path exists and is not a folder")
    chosen = policies if callable(policies) else (lambda _task: policies)
    work = [(str(t), p, seed, str(out)) for t in task_dirs for p in chosen(t)
            if _applies(Path(t), p)]
    work += [(str(t), "mutant", n, str(out)) for t in task_dirs for n in range(1, mutants + 1)]
    done: list[Path] = []
    reused = 0
    with engine.pool(jobs, writes=True) as pool, \
            engine.bar(len(work), "recording", "run", disable=not progress) as bar:
        for run_dir, was_reused in pool.map(_one, work):
            done.append(Path(run_dir))
            if was_reused:  # a second demo says so instead of seeming to record everything again
                reused += 1
                bar.set_description(f"recording ({reused} reused, recorded before)", refresh=False)
            bar.update()
    return sorted(done)
