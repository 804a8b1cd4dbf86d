"""Benchmark: grade time per bundled task, and its ratio to the floor of the external tools.

For each task's oracle workspace: the median wall time of a cold grade (no memoized promtool
replay) over N runs, and the floor measured in the same run: the same generated promtool test
files run by promtool alone (two at a time, as the grader does), promtool check rules on the
same rule files, amtool check-config and the same amtool route calls. Prints both and their
ratio. Usage: .venv/bin/python bench/grade.py [-n 5]
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
from grader.grade import DEFAULT_GRADER, grade, pristine_scores


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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-n", type=int, default=5)
    args = parser.parse_args()
    print(f"{'task':36} {'checks':>6} {'grade_med_s':>11} {'floor_med_s':>11} {'ratio':>6} {'warm_s':>7}")
    for task in task_dirs(TASKS_DIR):
        pristine_scores(task)
        catalog = json.loads((task / "tests" / "checks.json").read_text())
        route_labels = [c["probe"]["labels"] for c in catalog["checks"] if c["probe"]["type"] == "route"]
        with tempfile.TemporaryDirectory() as tmp:
            ws = Path(tmp) / "ws"
            shutil.copytree(task / "environment" / "monitoring", ws)
            shutil.copytree(task / "solution" / "monitoring", ws, dirs_exist_ok=True)
            kept = Path(tmp) / "kept"
            DEFAULT_GRADER.cache.clear_replays()
            result = grade(task, ws, keep=kept)
            walls, floors = [], []
            for _ in range(args.n):
                DEFAULT_GRADER.cache.clear_replays()
                started = time.perf_counter()
                grade(task, ws)
                walls.append(time.perf_counter() - started)
                floors.append(floor_once(kept, ws, route_labels + [{"alertname": "x"}]))
            started = time.perf_counter()
            grade(task, ws)  # unchanged workspace: the promtool replay is memoized
            warm = time.perf_counter() - started
        wall, floor = statistics.median(walls), statistics.median(floors)
        print(f"{task.name:36} {len(result['checks']):6d} {wall:11.3f} {floor:11.3f} "
              f"{wall / floor:6.2f} {warm:7.3f}")


if __name__ == "__main__":
    main()
