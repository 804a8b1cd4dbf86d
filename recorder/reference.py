"""Record the reference policies on every task, in parallel worker processes, with a progress bar.

Each (task, policy) is an independent run folder, so workers never share files; a run that
is already complete is skipped and an interrupted one resumes (see :mod:`recorder.record`).
"""

from __future__ import annotations

from concurrent.futures import ProcessPoolExecutor, as_completed
from pathlib import Path

from tqdm import tqdm

from alertforge.errors import BadInput
from recorder.record import record_run

DEFAULT_POLICIES = ("oracle", "nop", "partial")


DEMO_ADVERSARIES = ("adversary:always-fire", "adversary:catch-all-route", "adversary:inhibit-all")
"""Adversaries the demo shows beside the reference policies (each fails its own requirement)."""


def _one(job: tuple[str, str, int, str]) -> str:
    task_dir, policy, seed, out = job
    return str(record_run(Path(task_dir), policy, seed=seed, out=Path(out)))


def record_reference(task_dirs: list[Path], out: Path, *, jobs: int = 2,
                     policies: list[str] | tuple[str, ...] = DEFAULT_POLICIES,
                     seed: int = 0, progress: bool = True, mutants: int = 0) -> list[Path]:
    """Record every policy on every task into ``out``; returns the run folders (sorted).

    ``mutants`` adds that many ``mutant`` runs per task (seeds 1..N, each 1-3 seeded
    mistakes). ``jobs`` worker processes (1: in this process). Raises the first worker's error.
    """
    out = Path(out)
    if out.exists() and not out.is_dir():
        raise BadInput(out, "output path exists and is not a folder")
    work = [(str(t), p, seed, str(out)) for t in task_dirs for p in policies]
    work += [(str(t), "mutant", n, str(out)) for t in task_dirs for n in range(1, mutants + 1)]
    bar = tqdm(total=len(work), desc="recording", unit="run", disable=not progress)
    done: list[Path] = []
    try:
        if jobs <= 1:
            for job in work:
                done.append(Path(_one(job)))
                bar.update()
        else:
            with ProcessPoolExecutor(max_workers=jobs) as pool:
                futures = [pool.submit(_one, job) for job in work]
                for future in as_completed(futures):
                    done.append(Path(future.result()))
                    bar.update()
    finally:
        bar.close()
    return sorted(done)
