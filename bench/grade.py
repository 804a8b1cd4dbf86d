"""Benchmark: grade time per bundled task (oracle workspace), cold (no memoized promtool replay).

Prints per task the median wall time of a grade over N runs, the median time spent in the
external tools (promtool check + test, amtool) that it cannot avoid, and their ratio.
Usage: .venv/bin/python bench/grade.py [-n 5]
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import tempfile
import time
from pathlib import Path

from alertforge.paths import TASKS_DIR, task_dirs
from grader import grade as grade_module
from grader.grade import grade, pristine_scores


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-n", type=int, default=5)
    args = parser.parse_args()
    print(f"{'task':40} {'median_s':>9} {'tools_s':>8} {'ratio':>6} {'checks':>6}")
    for task in task_dirs(TASKS_DIR):
        pristine_scores(task)
        with tempfile.TemporaryDirectory() as tmp:
            ws = Path(tmp) / "ws"
            shutil.copytree(task / "environment" / "monitoring", ws)
            shutil.copytree(task / "solution" / "monitoring", ws, dirs_exist_ok=True)
            walls, tools, checks = [], [], 0
            for _ in range(args.n):
                grade_module._PROMTOOL_CACHE.clear()
                started = time.perf_counter()
                result = grade(task, ws)
                walls.append(time.perf_counter() - started)
                t = result["timings"]
                tools.append(t.get("syntax_s", 0) + t.get("promtool_s", 0) + t.get("amtool_s", 0))
                checks = len(result["checks"])
        wall, tool = statistics.median(walls), statistics.median(tools)
        print(f"{task.name:40} {wall:9.3f} {tool:8.3f} {wall / tool:6.2f} {checks:6d}")


if __name__ == "__main__":
    main()
