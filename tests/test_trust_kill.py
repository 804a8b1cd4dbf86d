"""kill -9 against the writers: an export killed at random points leaves the previous site or
the new one, never a mix; pool workers of record-reference die with their parent.
"""

from __future__ import annotations

import hashlib
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

from conftest import FIXTURE_RUNS, FIXTURE_TASK_ROOT

from contract.paths import TASKS_DIR, task_dirs
from exporter.site_swap import verify_site

TASK = task_dirs(TASKS_DIR)[0]


def _runs(root: Path, copies: int, label: str) -> Path:
    """``copies`` renamed copies of the fixture runs, their messages marked with ``label``."""
    runs = root / "runs"
    if runs.exists():
        shutil.rmtree(runs)
    for index in range(copies):
        for source in sorted(FIXTURE_RUNS.iterdir()):
            target = runs / f"{source.name}-{index:03d}"
            shutil.copytree(source, target)
            run = json.loads((target / "run.json").read_text())
            run["run_id"] = target.name
            (target / "run.json").write_text(json.dumps(run))
            trajectory = json.loads((target / "trajectory.json").read_text())
            trajectory["steps"][-1]["message"] = f"{label} {index}"
            (target / "trajectory.json").write_text(json.dumps(trajectory))
    return runs


def _export(runs: Path, out: Path) -> list[str]:
    return [sys.executable, "-m", "alertforge.cli", "export", str(runs), "--tasks",
            str(FIXTURE_TASK_ROOT), "--out", str(out)]


def _snapshot(folder: Path) -> dict[str, str]:
    return {p.relative_to(folder).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(folder.rglob("*")) if p.is_file()}


def test_export_killed_at_random_points_leaves_the_old_or_the_new_site(tmp_path):
    out = tmp_path / "site"
    subprocess.run(_export(_runs(tmp_path / "a", 30, "old"), out), check=True, capture_output=True)
    old = _snapshot(out)
    new_runs = _runs(tmp_path / "b", 30, "new")
    started = time.monotonic()
    subprocess.run(_export(new_runs, tmp_path / "reference"), check=True, capture_output=True)
    duration = time.monotonic() - started
    new = _snapshot(tmp_path / "reference")
    assert old != new
    rng = random.Random(11)
    seen = {"old": 0, "new": 0}
    for round_number in range(10):
        # a full export each round, as the one timed (the suite's shared incremental state would
        # make later rounds reuse the new runs and end before most kills: kills of incremental
        # exports are tests/test_export_incremental.py's)
        env = {**os.environ, "ALERTFORGE_EXPORT_CACHE": str(tmp_path / f"state-{round_number}")}
        proc = subprocess.Popen(_export(new_runs, out), stdout=subprocess.DEVNULL,
                                stderr=subprocess.DEVNULL, env=env)
        time.sleep(rng.uniform(0.05, duration * 1.1))
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        leftovers = [p.name for p in tmp_path.iterdir() if p.name.startswith(".site.")]
        now = _snapshot(out)
        assert now in (old, new), "the site is a mix of two exports"
        assert verify_site(out) == []
        seen["old" if now == old else "new"] += 1
        if now == new:  # start the next round from the old site again
            subprocess.run(_export(_runs(tmp_path / "a", 30, "old"), out), check=True, capture_output=True)
            assert _snapshot(out) == old
        assert all(name.startswith((".site.staging-", ".site.previous-")) for name in leftovers)
    subprocess.run(_export(new_runs, out), check=True, capture_output=True)
    assert _snapshot(out) == new
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".site.")] == []
    assert seen["old"] > 0  # some kills landed before the swap


def _children(pid: int) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if int(fields[1]) == pid:
                found.append(int(entry.name))
    return found


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


def test_record_reference_workers_die_with_their_parent(tmp_path):
    tasks = tmp_path / "tasks"
    tasks.mkdir()
    for task in task_dirs(TASKS_DIR)[:2]:
        shutil.copytree(task, tasks / task.name)
    out = tmp_path / "runs"
    proc = subprocess.Popen([sys.executable, "-m", "alertforge.cli", "record-reference", "--tasks",
                             str(tasks), "--out", str(out), "-j", "2"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    deadline = time.monotonic() + 120
    workers: list[int] = []
    while time.monotonic() < deadline and len(workers) < 2:
        workers = [pid for pid in _children(proc.pid) if "python" in Path(f"/proc/{pid}/cmdline").read_text()]
        time.sleep(0.1)
    assert len(workers) >= 2, "the pool did not start two workers"
    while time.monotonic() < deadline and not list(out.glob("*/journal.jsonl")):
        time.sleep(0.1)
    os.kill(proc.pid, signal.SIGKILL)  # the parent only, not its process group
    proc.wait()
    time.sleep(2)
    assert [pid for pid in workers if _alive(pid)] == []
    before = sorted((p.as_posix(), p.stat().st_size) for p in out.rglob("*") if p.is_file())
    time.sleep(3)
    after = sorted((p.as_posix(), p.stat().st_size) for p in out.rglob("*") if p.is_file())
    assert before == after, "something kept writing after the parent was killed"
    os.killpg(proc.pid, signal.SIGKILL) if _alive(proc.pid) else None
