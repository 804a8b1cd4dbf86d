"""Benchmark: ``alertforge view`` on a folder of runs (the demo's ``runs/``), cold and warm cache.

Starts the real command (``--port 0``) on a copy of the runs, drives Debian's Chromium with
Playwright and prints, for a cold cache (empty) and then a warm one (the same inputs again):

- first answer: seconds from the command's start until the server answers ``/``;
- first run listed: until the home page's run list holds a run (the first export is the
  newest runs, then all);
- first step: until that run's page has drawn its first step (``first-step-rendered``);
- all listed: until the home page lists every run;
- copy-in: from copying one more run folder into the watched folder until the open home page
  lists it (no reload);
- new step: from writing one more step into a run being recorded until its open run view shows
  it (no reload).

Speed is printed, never asserted. Targets (issue 31): first step within 5 s cold and 2 s warm,
copy-in within 30 s, a new step within 10 s.

Usage: .venv/bin/python bench/view.py [--runs runs/] [--timeout 600]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from playwright.sync_api import sync_playwright
from viewer_measure import CHROMIUM, CHROMIUM_ARGS

ROOT = Path(__file__).resolve().parents[1]


def _start(watched: Path, cache: Path) -> tuple[subprocess.Popen, str, float]:
    env = {**os.environ, "ALERTFORGE_VIEW_CACHE": str(cache), "PYTHONPATH": str(ROOT)}
    started = time.perf_counter()
    process = subprocess.Popen([sys.executable, "-m", "alertforge.cli", "view", str(watched), "--port", "0"],
                               stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, env=env, cwd=ROOT)
    found = re.search(r"at (http://127\.0\.0\.1:\d+/)", process.stdout.readline())
    if not found:
        raise SystemExit("alertforge view did not print its address")
    return process, found.group(1), started


def _truncated(run: Path, into: Path, steps: int) -> Path:
    target = into / run.name
    shutil.copytree(run, target)
    trajectory = json.loads((run / "trajectory.json").read_text())
    summary = json.loads((run / "run.json").read_text())
    trajectory["steps"] = trajectory["steps"][:steps]
    summary.update(steps=steps, status="running", finished_at=None)
    (target / "trajectory.json").write_text(json.dumps(trajectory))
    (target / "run.json").write_text(json.dumps(summary))
    return target


def measure(watched: Path, spare: Path, growing: Path, cache: Path, page, timeout_ms: int) -> dict[str, float]:
    """One pass of ``alertforge view`` over ``watched``; leaves it as it found it."""
    partial = _truncated(growing, watched, 3)
    total = sum(1 for p in watched.iterdir() if (p / "run.json").is_file())
    process, url, started = _start(watched, cache)
    figures = {}
    try:
        while True:
            try:
                page.goto(url)
                break
            except Exception:  # noqa: BLE001 - not answering yet
                time.sleep(0.05)
        figures["first answer"] = time.perf_counter() - started
        page.wait_for_selector("#runs-table tr[data-run-id] a", timeout=timeout_ms)
        figures["first run listed"] = time.perf_counter() - started
        first = page.locator("#runs-table tr[data-run-id]").first.get_attribute("data-run-id")
        run_page = page.context.new_page()
        run_page.goto(f"{url}run.html?run={first}")
        run_page.wait_for_function("() => performance.getEntriesByName('first-step-rendered').length > 0",
                                   timeout=timeout_ms)
        figures["first step"] = time.perf_counter() - started
        page.wait_for_function("(n) => document.getElementById('runs-table')?.dataset.total === String(n)",
                               arg=total, timeout=timeout_ms)
        figures["all listed"] = time.perf_counter() - started
        copied = time.perf_counter()
        shutil.copytree(spare, watched / spare.name)
        page.wait_for_function("(n) => document.getElementById('runs-table')?.dataset.total === String(n)",
                               arg=total + 1, timeout=timeout_ms)
        figures["copy-in"] = time.perf_counter() - copied
        run_page.goto(f"{url}run.html?run={partial.name}&step=1")
        run_page.wait_for_selector("body[data-ready='1']", timeout=timeout_ms)
        run_page.wait_for_selector("#live-status[data-generation]", timeout=timeout_ms)
        stepped = time.perf_counter()
        trajectory = json.loads((growing / "trajectory.json").read_text())
        summary = json.loads((growing / "run.json").read_text())
        trajectory["steps"] = trajectory["steps"][:4]
        summary.update(steps=4, status="running", finished_at=None)
        (partial / "trajectory.json").write_text(json.dumps(trajectory))
        (partial / "run.json").write_text(json.dumps(summary))
        run_page.wait_for_function("() => document.getElementById('step-count').textContent === '3'",
                                   timeout=timeout_ms)
        figures["new step"] = time.perf_counter() - stepped
        run_page.close()
    finally:
        process.terminate()
        process.wait(timeout=60)
        shutil.rmtree(watched / spare.name, ignore_errors=True)
        shutil.rmtree(partial, ignore_errors=True)
    return figures


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", default=str(ROOT / "runs"), help="a folder of run folders (default runs/)")
    parser.add_argument("--timeout", type=float, default=600.0, help="seconds to wait for each figure")
    args = parser.parse_args()
    runs = sorted(p for p in Path(args.runs).iterdir() if (p / "run.json").is_file())
    alerting = [p for p in runs if json.loads((p / "run.json").read_text()).get("kind") == "alerting"
                and json.loads((p / "run.json").read_text()).get("steps", 0) >= 5]
    if len(runs) < 3 or not alerting:
        raise SystemExit(f"{args.runs}: needs at least 3 runs, one an alerting run of 5 steps or more")
    growing, spare = alerting[0], runs[-1] if runs[-1] != alerting[0] else runs[-2]
    rest = [p for p in runs if p not in (growing, spare)]
    print(f"{len(rest)} runs watched, one copied in, one growing ({growing.name})")
    with tempfile.TemporaryDirectory(prefix="bench-view-") as tmp, sync_playwright() as playwright:
        watched, cache = Path(tmp) / "watched", Path(tmp) / "cache"
        watched.mkdir()
        for run in rest:
            shutil.copytree(run, watched / run.name)
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        for label in ("cold", "warm"):
            context = browser.new_context()
            figures = measure(watched, spare, growing, cache, context.new_page(), int(args.timeout * 1000))
            context.close()
            print(f"{label}: " + ", ".join(f"{name} {value:.2f} s" for name, value in figures.items()), flush=True)
        browser.close()
    print("targets: first step <= 5 s cold, <= 2 s warm; copy-in <= 30 s; new step <= 10 s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
