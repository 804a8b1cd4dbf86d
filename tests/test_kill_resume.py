"""Recording survives kill -9: run record-reference, kill the whole process group mid-run, run it
again; every run completes with no lost or duplicated step (docs/formats.md, "Run")."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

from contract.files import read_json
from contract.paths import TASKS_DIR, task_dirs
from recorder.record import record_run, run_id_for

TASK = task_dirs(TASKS_DIR)[0]


def _command(tasks: Path, out: Path) -> list[str]:
    return [sys.executable, "-m", "alertforge.cli", "record-reference", "--tasks", str(tasks),
            "--out", str(out), "-j", "1", "--policies", "oracle,partial"]


def test_kill_9_mid_recording_then_rerun_completes_every_run_exactly(tmp_path):
    tasks = tmp_path / "tasks"
    tasks.mkdir()
    shutil.copytree(TASK, tasks / TASK.name)
    out = tmp_path / "runs"
    proc = subprocess.Popen(_command(tasks, out), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            start_new_session=True)
    deadline = time.monotonic() + 240
    oracle_journal = out / run_id_for(TASK.name, "oracle", 0) / "journal.jsonl"
    while time.monotonic() < deadline:  # kill once the oracle run is part-way through
        if oracle_journal.exists() and len(oracle_journal.read_bytes().splitlines()) >= 7:
            break
        time.sleep(0.05)
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    summary = read_json(out / run_id_for(TASK.name, "oracle", 0) / "run.json")
    assert summary["status"] == "running"  # really interrupted

    rerun = subprocess.run(_command(tasks, out), capture_output=True, text=True, timeout=600, check=False)
    assert rerun.returncode == 0, rerun.stderr

    for policy in ("oracle", "partial"):
        clean = record_run(TASK, policy, out=tmp_path / "clean")
        expected = read_json(clean / "trajectory.json")["steps"]
        run_dir = out / run_id_for(TASK.name, policy, 0)
        got = read_json(run_dir / "trajectory.json")["steps"]
        assert read_json(run_dir / "run.json")["status"] == "complete"
        assert [s["step_id"] for s in got] == list(range(1, len(expected) + 1))
        assert [s.get("tool_calls") for s in got] == [s.get("tool_calls") for s in expected]
        rewards = [((s.get("extra") or {}).get("grade") or {}).get("reward") for s in got]
        assert rewards == [((s.get("extra") or {}).get("grade") or {}).get("reward") for s in expected]
        assert len((run_dir / "journal.jsonl").read_bytes().splitlines()) == len(expected)
