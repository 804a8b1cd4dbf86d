"""Ray as the engine (issue 20): a real local Ray head on 127.0.0.1, two worker processes.

record-reference, gate and import-harbor through the Ray engine give the local run's files
byte for byte (timestamps, timings and the worker a grade names left out); both workers
grade; a worker killed while it holds a grade is retried and the run is the same; a task
that kills every worker it runs on is reported; ``--ray`` to a port where nothing listens
exits 1 at once; a node whose tools differ from the driver's fails the start-up check.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
from collections import Counter
from pathlib import Path

import pytest

from contract.errors import ClusterFailure
from contract.paths import TASKS_DIR, task_dirs
from engine import LocalEngine, ray_worker
from engine.local_head import LocalHead, free_port

ray = pytest.importorskip("ray")

ROOT = Path(__file__).resolve().parents[1]
TASKS = task_dirs(TASKS_DIR)[:2]
HARBOR_JOB = Path(__file__).parent / "fixtures" / "harbor-job" / "2026-11-29__09-00-00"
VOLATILE = {"timings", "started_at", "finished_at", "grade_s", "wall_s", "worker"}


def _title(pid: int) -> str:
    try:
        raw = Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return ""
    return raw.replace(b"\0", b" ").decode(errors="replace")


@pytest.fixture(scope="module")
def head():
    """A Ray head on 127.0.0.1 (free ports, 2 CPUs: two worker processes), stopped by pid."""
    started = LocalHead.start(cpus=2)
    try:
        yield started
    finally:
        try:
            if ray.is_initialized():
                ray.shutdown()
        finally:
            started.stop()


@pytest.fixture(scope="module")
def engine(head):
    from engine.ray_engine import RayEngine

    saved = os.environ.get("RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER")
    connected = RayEngine.connect(head.address)
    yield connected
    if saved is None:
        os.environ.pop("RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER", None)


def _stripped(value):
    if isinstance(value, dict):
        return {k: _stripped(v) for k, v in value.items() if k not in VOLATILE}
    if isinstance(value, list):
        return [_stripped(v) for v in value]
    return value


def folder_text(out: Path) -> dict[str, str]:
    """Every file under ``out`` by relative path: JSON (and JSON lines) re-serialized in the
    file's own key order without the volatile fields; any other file as it is."""
    texts = {}
    for path in sorted(p for p in out.rglob("*") if p.is_file()):
        rel, raw = str(path.relative_to(out)), path.read_text()
        if path.suffix == ".json":
            raw = json.dumps(_stripped(json.loads(raw)))
        elif path.suffix == ".jsonl":
            raw = "\n".join(json.dumps(_stripped(json.loads(line))) for line in raw.splitlines())
        texts[rel] = raw
    return texts


def step_workers(out: Path) -> Counter:
    found: Counter = Counter()
    for trajectory in out.rglob("trajectory.json"):
        for step in json.loads(trajectory.read_text())["steps"]:
            worker = ((step.get("extra") or {}).get("grade") or {}).get("worker")
            if worker:
                found[worker] += 1
    return found


@pytest.fixture(scope="module")
def local_reference(tmp_path_factory):
    from recorder.reference_runs import record_reference

    out = tmp_path_factory.mktemp("local-reference")
    record_reference(TASKS, out, jobs=1, policies=["oracle"], progress=False)
    return out


@pytest.mark.sweep
def test_record_reference_on_ray_writes_the_local_runs_and_both_workers_grade(
        engine, local_reference, tmp_path):
    from recorder.reference_runs import record_reference

    record_reference(TASKS, tmp_path, policies=["oracle"], progress=False, engine=engine)
    assert folder_text(tmp_path) == folder_text(local_reference)
    assert len(folder_text(tmp_path)) == 3 * len(TASKS)
    workers = step_workers(tmp_path)
    assert len(workers) == 2, workers  # each grade names its worker, and both graded
    assert sum(workers.values()) == sum(
        json.loads(p.read_text())["timings"]["grades"] for p in tmp_path.rglob("run.json"))
    assert not step_workers(local_reference)


@pytest.mark.sweep
def test_gate_on_ray_gives_the_local_rows_on_two_tasks(engine):
    from proofs.gate import format_table, run_gate

    cases = ("oracle", "nop", "mutant:missing-for")
    local = run_gate(TASKS, jobs=1, progress=False, cases=cases, engine=LocalEngine())
    before = Counter(engine.grades)
    on_ray = run_gate(TASKS, progress=False, cases=cases, engine=engine)
    assert format_table(on_ray) == format_table(local)
    assert all(row.ok for row in on_ray)
    graded = Counter(engine.grades)
    graded.subtract(before)
    assert sum(graded.values()) == len(cases) * len(TASKS)
    assert len(+graded) == 2, graded


@pytest.mark.sweep
def test_import_harbor_on_ray_writes_the_local_runs(engine, tmp_path):
    from recorder.importers.harbor.importer import import_harbor

    import_harbor([HARBOR_JOB], tmp_path / "local")
    import_harbor([HARBOR_JOB], tmp_path / "ray", engine=engine)
    local, on_ray = folder_text(tmp_path / "local"), folder_text(tmp_path / "ray")
    assert on_ray == local
    assert "harbor-import.json" in on_ray and sum(step_workers(tmp_path / "ray").values()) >= 3
    summary = json.loads((tmp_path / "ray" / "harbor-import.json").read_text())
    assert any(row["regrade_reward"] is not None for row in summary["imported"])


@pytest.mark.sweep
def test_mutation_analysis_on_ray_gives_the_local_results(engine):
    from dataclasses import asdict

    from proofs.mutation.analysis import run_analysis

    local = run_analysis(TASKS, ["drop-for", "change-team"], jobs=1, progress=False)
    on_ray = run_analysis(TASKS, ["drop-for", "change-team"], progress=False, engine=engine)
    assert [_stripped_seconds(asdict(r)) for r in on_ray] == \
        [_stripped_seconds(asdict(r)) for r in local]
    assert sum(len(r.mutants) for r in on_ray) >= 2


def _stripped_seconds(value):
    if isinstance(value, dict):
        return {k: _stripped_seconds(v) for k, v in value.items() if k != "seconds"}
    if isinstance(value, list):
        return [_stripped_seconds(v) for v in value]
    return value


@pytest.mark.sweep
def test_a_worker_killed_holding_a_grade_is_retried_and_the_run_is_the_same(
        engine, head, local_reference, tmp_path):
    from recorder.reference_runs import record_reference

    killed: list[int] = []

    def kill_one_grading_worker() -> None:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and not killed:
            busy = [p for p in head.workers() if _title(p).startswith("ray::run_job")]
            if busy:
                os.kill(busy[0], signal.SIGKILL)
                killed.append(busy[0])
            time.sleep(0.05)

    killer = threading.Thread(target=kill_one_grading_worker)
    killer.start()
    record_reference(TASKS[:1], tmp_path, policies=["oracle"], progress=False, engine=engine)
    killer.join()
    assert killed, "no worker was seen grading"
    expected = {rel: text for rel, text in folder_text(local_reference).items()
                if rel.startswith(TASKS[0].name)}
    assert folder_text(tmp_path) == expected


@pytest.mark.sweep
def test_a_driver_killed_mid_run_resumes_on_ray_to_the_local_run(head, local_reference, tmp_path):
    args = [sys.executable, "-m", "alertforge.cli", "record-reference", "--tasks", str(tmp_path / "tasks"),
            "--policies", "oracle", "--out", str(tmp_path / "runs"), "--ray", head.address]
    shutil.copytree(TASKS[0], tmp_path / "tasks" / TASKS[0].name)
    env = {k: v for k, v in os.environ.items() if k != "RAY_ADDRESS"}
    crashed = subprocess.run(args, capture_output=True, text=True, cwd=ROOT, timeout=300, check=False,
                             env=env | {"ALERTFORGE_CRASH_AT": "append:2"})
    assert crashed.returncode == -signal.SIGKILL, crashed.stderr[-800:]
    resumed = subprocess.run(args, capture_output=True, text=True, cwd=ROOT, timeout=300, check=False,
                             env=env)
    assert resumed.returncode == 0, resumed.stderr[-800:]
    assert "ray: " in resumed.stderr.splitlines()[-1] and "grades/s" in resumed.stderr
    expected = {rel: text for rel, text in folder_text(local_reference).items()
                if rel.startswith(TASKS[0].name)}
    copied = json.dumps(str(tmp_path / "tasks" / TASKS[0].name))[1:-1]
    resumed_text = {rel: text.replace(copied, json.dumps(str(TASKS[0]))[1:-1])
                    for rel, text in folder_text(tmp_path / "runs").items()}
    assert resumed_text == expected


@pytest.mark.sweep
def test_a_job_that_kills_every_worker_it_runs_on_is_reported(engine):
    from engine.ray_engine import ATTEMPTS

    future = engine.submit_job(os._exit, (3,))
    with pytest.raises(ClusterFailure, match=f"failed on {ATTEMPTS} Ray workers in a row"):
        future.result(timeout=300)


@pytest.mark.sweep
def test_a_node_whose_tools_differ_from_the_drivers_fails_the_check_naming_it(engine, monkeypatch):
    from grader import tools

    real = tools.tool_versions()
    monkeypatch.setattr(tools, "tool_versions", lambda: dict(real, promtool="9.9.9"))
    expected = r"ray node 127\.0\.0\.1 \(.*promtool is .*the driver's is 9\.9\.9"
    with pytest.raises(ClusterFailure, match=expected):
        engine.check_nodes()


def test_node_report_names_a_missing_tool(monkeypatch):
    from grader import tools

    monkeypatch.setattr(tools, "PROMTOOL", "/nonexistent/promtool")
    problems = ray_worker.node_report(tools.tool_versions(), "0.2.0")
    missing = "promtool (/nonexistent/promtool) does not run"
    assert any(p.startswith(missing) for p in problems), problems


def test_ray_to_an_address_where_nothing_listens_exits_1_at_once():
    port = free_port()
    started = time.monotonic()
    done = subprocess.run([sys.executable, "-m", "alertforge.cli", "gate", "--only", TASKS[0].name,
                           "--cases", "oracle", "--ray", f"127.0.0.1:{port}"],
                          capture_output=True, text=True, cwd=ROOT, timeout=120, check=False)
    assert done.returncode == 1, done.stderr
    assert f"ray cluster error: 127.0.0.1:{port}: nothing listens there" in done.stderr
    assert "reward" not in done.stdout  # nothing was graded locally instead
    assert time.monotonic() - started < 60


def test_ray_address_variable_chooses_ray_and_a_dead_one_is_an_error(monkeypatch):
    from engine import engine_for

    monkeypatch.delenv("RAY_ADDRESS", raising=False)
    assert isinstance(engine_for(None), LocalEngine)
    port = free_port()
    monkeypatch.setenv("RAY_ADDRESS", f"127.0.0.1:{port}")
    with pytest.raises(ClusterFailure, match="nothing listens there"):
        engine_for(None)
    with pytest.raises(ClusterFailure, match="not a Ray head address"):
        engine_for("no-port-here")


def _site_bytes(folder: Path) -> dict[str, bytes]:
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def test_export_on_ray_is_the_local_site_byte_for_byte(engine, tmp_path):
    """``export --ray``: every run is made on the workers (counted per worker), and the site,
    its redaction report and renamed ids are the local export's."""
    from contract.task_roots import TaskIndex
    from exporter.export import export_site

    fixtures = Path(__file__).parent / "fixtures" / "site"
    index = TaskIndex([fixtures / "tasks"])
    local = export_site([fixtures / "runs"], tmp_path / "local", task_index=index, incremental=False)
    before = sum(engine.jobs.values())
    on_ray = export_site([fixtures / "runs"], tmp_path / "ray", task_index=index, incremental=False, engine=engine)
    assert sum(engine.jobs.values()) - before == local["runs"] > 0
    assert _site_bytes(tmp_path / "ray") == _site_bytes(tmp_path / "local")
    assert {k: on_ray[k] for k in ("masked", "redaction", "renamed_ids", "runs", "tasks", "files", "bytes")} == \
        {k: local[k] for k in ("masked", "redaction", "renamed_ids", "runs", "tasks", "files", "bytes")}


def test_export_ray_command_names_its_workers(head, tmp_path):
    fixtures = Path(__file__).parent / "fixtures" / "site"
    out = subprocess.run([sys.executable, "-m", "alertforge.cli", "export", str(fixtures / "runs"), "--tasks",
                          str(fixtures / "tasks"), "--out", str(tmp_path / "site"), "--ray", head.address],
                         capture_output=True, text=True, cwd=ROOT, timeout=300, check=False)
    assert out.returncode == 0, out.stderr
    assert "ray: made 4 runs on " in out.stderr and "exported 4 runs" in out.stdout
