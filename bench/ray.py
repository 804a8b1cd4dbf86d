"""Benchmark: graded steps per second of record-reference, local pool and Ray with 1 and 2 workers.

Records the same reference runs (oracle, nop, partial on the first N tasks) four ways, each
into a fresh folder with a cold grader: the local pool with ``-j 1`` and ``-j 2``, and a
local Ray head (127.0.0.1, :class:`engine.local_head.LocalHead`) with 1 and then 2
worker slots. Graded steps are the runs' ``timings.grades``; time is the wall time of
``record_reference`` (Ray: after connecting and the start-up check). Prints graded steps
per second for each, the overhead per grade (Ray 1 worker against the local ``-j 1``, and
the round trip of an empty Ray task), the driver's CPU seconds per grade, the load average
before and after, and a projection for N machines from those measurements:

    grades/s(N machines of W workers) = min(N * W * r_worker, 1 / driver_cpu_per_grade)

where ``r_worker`` is the measured rate of one Ray worker on this 2-core machine (a grade
runs two promtool processes at once, so W workers want 2W cores). It is a model (linear in
workers until the driver's own CPU per grade saturates), not a measurement of N machines.
Usage: .venv/bin/python bench/ray.py [--tasks-n 2]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

# this file is named ray.py: its folder must not shadow the ray package
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != Path(__file__).resolve().parent]

from contract.paths import TASKS_DIR, task_dirs
from engine import LocalEngine
from engine.local_head import LocalHead
from grader.grade import DEFAULT_GRADER
from recorder.reference_runs import record_reference

POLICIES = ["oracle", "nop", "partial"]


def graded_steps(out: Path) -> int:
    """Grades the runs under ``out`` made (their ``timings.grades``)."""
    return sum(json.loads(p.read_text())["timings"]["grades"] for p in out.glob("*/run.json"))


def timed(tasks: list[Path], **options) -> tuple[int, float, float]:
    """``(graded steps, wall seconds, driver CPU seconds)`` of one cold record_reference."""
    DEFAULT_GRADER.cache.clear_replays()
    with tempfile.TemporaryDirectory(prefix="bench-ray-") as tmp:
        cpu, started = time.process_time(), time.perf_counter()
        record_reference(tasks, Path(tmp), policies=POLICIES, progress=False, **options)
        wall, cpu = time.perf_counter() - started, time.process_time() - cpu
        return graded_steps(Path(tmp)), wall, cpu


def on_ray(tasks: list[Path], cpus: int) -> tuple[int, float, float, float]:
    """:func:`timed` on a fresh local head with ``cpus`` workers, plus the median round trip
    (s) of an empty Ray task."""
    import ray

    from engine.ray_engine import RayEngine

    head = LocalHead.start(cpus=cpus)
    try:
        engine = RayEngine.connect(head.address)
        empty = ray.remote(num_cpus=1)(lambda: None)
        ray.get(empty.remote())
        trips = []
        for _ in range(20):
            started = time.perf_counter()
            ray.get(empty.remote())
            trips.append(time.perf_counter() - started)
        steps, wall, cpu = timed(tasks, engine=engine)
        return steps, wall, cpu, sorted(trips)[len(trips) // 2]
    finally:
        try:
            if ray.is_initialized():
                ray.shutdown()
        finally:
            head.stop()


def main() -> None:
    """Run the four configurations and print the figures."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks-n", type=int, default=2, help="first N bundled tasks (default 2)")
    args = parser.parse_args()
    tasks = task_dirs(TASKS_DIR)[: args.tasks_n]
    load_before = os.getloadavg()
    rows = {}
    for jobs in (1, 2):
        rows[f"local -j {jobs}"] = (*timed(tasks, jobs=jobs, engine=LocalEngine()), None)
    for cpus in (1, 2):
        rows[f"ray {cpus} worker{'s' if cpus > 1 else ''}"] = on_ray(tasks, cpus)
    load_after = os.getloadavg()
    print(f"record-reference {','.join(POLICIES)} on {len(tasks)} tasks; load average before "
          f"{load_before[0]:.2f} {load_before[1]:.2f} {load_before[2]:.2f}, after "
          f"{load_after[0]:.2f} {load_after[1]:.2f} {load_after[2]:.2f} (2 cores)")
    for name, (steps, wall, cpu, _trip) in rows.items():
        print(f"  {name:14} {steps:4d} graded steps in {wall:7.1f} s: {steps / wall:6.3f} steps/s; "
              f"driver CPU {cpu / steps * 1000:6.1f} ms/grade")
    local1, ray1, ray2 = rows["local -j 1"], rows["ray 1 worker"], rows["ray 2 workers"]
    overhead = ray1[1] / ray1[0] - local1[1] / local1[0]
    print(f"overhead per grade (ray 1 worker - local -j 1): {overhead * 1000:+.0f} ms; "
          f"empty Ray task round trip {ray1[3] * 1000:.1f} ms")
    r_worker = ray1[0] / ray1[1]
    driver = ray2[2] / ray2[0]
    print(f"model: grades/s(N machines x W workers) = min(N*W*{r_worker:.3f}, "
          f"1/{driver:.4f} s driver CPU per grade = {1 / driver:.0f})")
    for machines, workers in ((1, 1), (4, 8), (16, 8), (64, 8)):  # a worker per 2 cores
        rate = min(machines * workers * r_worker, 1 / driver)
        print(f"  {machines:3d} machines x {workers} workers ({2 * workers} cores each): "
              f"{rate:8.1f} grades/s (48,000 grades in {48000 / rate / 60:6.1f} min)")


if __name__ == "__main__":
    main()
