"""Benchmark: grade time per bundled task, and its ratio to the floor of the external tools.

For each task's oracle workspace (no failing check) and, with ``--workspace failing`` or
``both``, its pristine repo (a workspace failing most requirements, so every failing check's
cause is computed): the median wall time of a cold grade (no memoized promtool replay) over N
runs, and the floor measured in the same run: the same generated promtool test files run by
promtool alone (two at a time, as the grader does), promtool check rules on the same rule
files, amtool check-config and the same amtool route calls. Prints both, their ratio, the
failing checks and the total grade time per workspace kind (the figure issue 15's cost
budget is stated in). Usage: .venv/bin/python bench/grade.py [-n 5] [--workspace both]
[--only af-a,af-b]
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import subprocess
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from contract.paths import TASKS_DIR, task_dirs
from grader.grade import DEFAULT_GRADER, grade_result, pristine_scores


def floor_once(kept: Path, ws: Path, route_labels: list[dict]) -> float:
    """Wall time of the external tool work of one grade, run directly."""
    tests = sorted(kept.glob("*/part-*/test.yml"))
    rule_files = sorted((kept / "ws" / "rules").rglob("*.yml"))
    started = time.perf_counter()
    with ThreadPoolExecutor(max_workers=4) as pool:
        list(pool.map(lambda p: subprocess.run(["promtool", "check", "rules", str(p)],
                                               capture_output=True, check=False), rule_files))
    subprocess.run(["amtool", "check-config", str(ws / "alertmanager" / "alertmanager.yml")],
                   capture_output=True, check=False)
    with ThreadPoolExecutor(max_workers=2) as pool:
        list(pool.map(lambda p: subprocess.run(["promtool", "test", "rules", p.name], cwd=p.parent,
                                               capture_output=True, check=False), tests))
    config = str(ws / "alertmanager" / "alertmanager.yml")
    with ThreadPoolExecutor(max_workers=4) as pool:
        list(pool.map(lambda labels: subprocess.run(
            ["amtool", "config", "routes", "test", f"--config.file={config}",
             *[f"{k}={v}" for k, v in sorted(labels.items())]], capture_output=True, check=False),
            route_labels))
    return time.perf_counter() - started


def bench_workspace(task: Path, kind: str, runs: int) -> tuple[int, int, float, float, float]:
    """(checks, failing checks, median cold grade s, median floor s, warm grade s) of the
    task's ``oracle`` (pristine repo plus solution) or ``failing`` (pristine repo) workspace."""
    catalog = json.loads((task / "tests" / "checks.json").read_text())
    route_labels = [c["probe"]["labels"] for c in catalog["checks"] if c["probe"]["type"] == "route"]
    with tempfile.TemporaryDirectory() as tmp:
        ws = Path(tmp) / "ws"
        shutil.copytree(task / "environment" / "monitoring", ws)
        if kind == "oracle":
            shutil.copytree(task / "solution" / "monitoring", ws, dirs_exist_ok=True)
        kept = Path(tmp) / "kept"
        DEFAULT_GRADER.cache.clear_replays()
        result = grade_result(task, ws, keep=kept)
        walls, floors = [], []
        for _ in range(runs):
            DEFAULT_GRADER.cache.clear_replays()
            started = time.perf_counter()
            grade_result(task, ws)
            walls.append(time.perf_counter() - started)
            floors.append(floor_once(kept, ws, route_labels + [{"alertname": "x"}]))
        started = time.perf_counter()
        grade_result(task, ws)  # unchanged workspace: the promtool replay is memoized
        warm = time.perf_counter() - started
    failing = sum(1 for c in result.checks if c.passed is False)
    return (len(result.checks), failing, statistics.median(walls), statistics.median(floors),
            warm)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-n", type=int, default=5)
    parser.add_argument("--workspace", choices=("oracle", "failing", "both"), default="oracle")
    parser.add_argument("--only", default="", help="comma-separated task ids")
    args = parser.parse_args()
    kinds = ("oracle", "failing") if args.workspace == "both" else (args.workspace,)
    only = {t for t in args.only.split(",") if t}
    totals = dict.fromkeys(kinds, 0.0)
    print(f"{'task':36} {'kind':8} {'checks':>6} {'failing':>7} {'grade_med_s':>11} "
          f"{'floor_med_s':>11} {'ratio':>6} {'warm_s':>7}")
    for task in task_dirs(TASKS_DIR):
        if only and task.name not in only:
            continue
        pristine_scores(task)
        for kind in kinds:
            checks, failing, wall, floor, warm = bench_workspace(task, kind, args.n)
            totals[kind] += wall
            print(f"{task.name:36} {kind:8} {checks:6d} {failing:7d} {wall:11.3f} {floor:11.3f} "
                  f"{wall / floor:6.2f} {warm:7.3f}")
    for kind, total in totals.items():
        print(f"total median cold grade, {kind}: {total:.3f} s")


if __name__ == "__main__":
    main()
