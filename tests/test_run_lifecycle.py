"""One run lifecycle for every producer: kill -9 at every step boundary then a rerun gives the
run a clean recording gives (scripted record, ARIA scripted episodes, imports); runs that cannot
be replayed (OpenEnv) are kept, marked and never shrink; identities keep distinct runs apart
(two jobs of one name, HTTP and WebSocket recordings, an edited actions file).

Kills are real SIGKILLs: ``ALERTFORGE_CRASH_AT`` (recorder/run_store.py) makes the process
kill itself right after a given step is journaled or written.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml
from aria_contract_server import ContractServer
from conftest import FIXTURE_RUNS, fixture_tasks, readable

from contract.paths import TASKS_DIR, task_dirs
from exporter.export import export_site

ROOT = Path(__file__).resolve().parents[1]
TASK = task_dirs(TASKS_DIR)[0]
EPISODES = ROOT / "examples" / "aria-episodes" / "episodes"
HARBOR_JOB = Path(__file__).parent / "fixtures" / "harbor-job" / "2026-11-29__09-00-00"
VOLATILE_RUN = ("timings", "started_at", "finished_at")


def cli(*args: str, crash: str | None = None, timeout: float = 600) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k != "ALERTFORGE_CRASH_AT"}
    if crash:
        env["ALERTFORGE_CRASH_AT"] = crash
    return subprocess.run([sys.executable, "-m", "alertforge.cli", *args], capture_output=True,
                          text=True, timeout=timeout, env=env, cwd=ROOT, check=False)


def only_run(out: Path) -> Path:
    runs = [p for p in out.iterdir() if p.is_dir()]
    assert len(runs) == 1, runs
    return runs[0]


def comparable(run_dir: Path) -> tuple[dict, list]:
    """run.json and the trajectory's steps without timestamps and timings."""
    run = json.loads((run_dir / "run.json").read_text())
    for key in VOLATILE_RUN:
        run.pop(key, None)
    steps = json.loads((run_dir / "trajectory.json").read_text())["steps"]
    for step in steps:
        grade = (step.get("extra") or {}).get("grade")
        if grade:
            grade.pop("grade_s", None)
        transport = (step.get("extra") or {}).get("transport")
        if transport:
            transport.pop("latency_ms", None)
    journal = [json.loads(line) for line in (run_dir / "journal.jsonl").read_text().splitlines()]
    assert len(journal) == len(steps)
    return run, steps


SHARDS = 3
"""Each kill-at-every-boundary test is split into this many tests, each taking every third
boundary, so the suite's workers share them; together they cover every boundary."""

RECORD_ARGS = ["record", "--task", str(TASK), "--policy", "oracle"]


@pytest.fixture(scope="module")
def clean_record(tmp_path_factory) -> tuple[dict, list]:
    """The oracle run on TASK recorded without a kill, as :func:`comparable` sees it."""
    out = tmp_path_factory.mktemp("clean-record")
    assert cli(*RECORD_ARGS, "--out", str(out)).returncode == 0
    return comparable(only_run(out))


@pytest.mark.parametrize("shard", range(SHARDS))
def test_record_killed_at_every_step_boundary_resumes_to_the_clean_run(clean_record, tmp_path, shard):
    steps = len(clean_record[1])
    points = [f"append:{k}" for k in range(1, steps)] + [f"write:{k}" for k in (1, steps // 2, steps - 1)]
    for point in points[shard::SHARDS]:
        out = tmp_path / point.replace(":", "-")
        killed = cli(*RECORD_ARGS, "--out", str(out), crash=point)
        assert killed.returncode == -signal.SIGKILL, (point, killed.stderr[-500:])
        run_dir = only_run(out)
        if (run_dir / "run.json").exists():  # journaled before the first files were written
            assert json.loads((run_dir / "run.json").read_text())["status"] == "running"
        rerun = cli(*RECORD_ARGS, "--out", str(out))
        assert rerun.returncode == 0, (point, rerun.stderr[-500:])
        assert comparable(run_dir) == clean_record, point


def _actions_file(tmp_path: Path, name: str) -> Path:
    transcript = json.loads((EPISODES / f"{name}.json").read_text())
    path = tmp_path / f"{name}.yml"
    path.write_text(yaml.safe_dump([step["request"]["json"] for step in transcript["steps"]]))
    return path


@pytest.fixture
def aria():
    server = ContractServer().start()
    yield server
    server.stop()


def _episode_args(aria, actions: Path, out: Path, transport: str = "http") -> list[str]:
    return ["record", "--env", "aria", "--env-url", aria.url, "--task", "easy", "--seed", "42",
            "--policy", "scripted", "--actions", str(actions), "--transport", transport,
            "--out", str(out)]


@pytest.mark.parametrize("shard", range(2))
def test_aria_episode_killed_at_every_step_boundary_resumes_to_the_clean_run(aria, tmp_path, shard):
    actions = _actions_file(tmp_path, "easy-expert")
    assert cli(*_episode_args(aria, actions, tmp_path / "clean")).returncode == 0
    clean = comparable(only_run(tmp_path / "clean"))
    points = [(where, k) for k in range(1, len(clean[1])) for where in ("append", "write")]
    for where, k in points[shard::2]:
        out = tmp_path / f"{where}-{k}"
        killed = cli(*_episode_args(aria, actions, out), crash=f"{where}:{k}")
        assert killed.returncode == -signal.SIGKILL, killed.stderr[-500:]
        rerun = cli(*_episode_args(aria, actions, out))
        assert rerun.returncode == 0, rerun.stderr[-500:]
        assert comparable(only_run(out)) == clean, (where, k)


def test_a_failed_episode_resume_keeps_every_step_byte_identical(aria, tmp_path):
    actions = _actions_file(tmp_path, "easy-expert")
    out = tmp_path / "runs"
    cli(*_episode_args(aria, actions, out), crash="append:4")
    run_dir = only_run(out)
    before = {name: (run_dir / name).read_bytes() for name in ("journal.jsonl", "trajectory.json")}
    aria.stop()  # the environment is gone: the replay cannot even reset
    failed = cli(*_episode_args(aria, actions, out))
    assert failed.returncode == 1 and "environment error" in failed.stderr
    assert {name: (run_dir / name).read_bytes() for name in before} == before
    run = json.loads((run_dir / "run.json").read_text())
    assert run["status"] == "failed" and run["error"]
    assert len((run_dir / "journal.jsonl").read_bytes().splitlines()) == 4  # killed before the
    assert len(json.loads((run_dir / "trajectory.json").read_text())["steps"]) == 3  # 4th write


@pytest.mark.parametrize("command", ["import-harbor", "import-episodes"])
def test_an_import_killed_mid_write_is_redone_to_the_clean_run(tmp_path, command):
    source = HARBOR_JOB if command == "import-harbor" else EPISODES / "easy-poor.json"
    assert cli(command, str(source), "--out", str(tmp_path / "clean")).returncode == 0
    clean = {readable(p.name): comparable(p) for p in (tmp_path / "clean").iterdir() if p.is_dir()}
    out = tmp_path / "killed"
    steps = len(max(clean.items())[1][1])  # the last run written: others come before it
    killed = cli(command, str(source), "--out", str(out), crash=f"journal:{steps}")
    assert killed.returncode == -signal.SIGKILL
    assert cli(command, str(source), "--out", str(out)).returncode == 0
    again = {readable(p.name): comparable(p) for p in out.iterdir() if p.is_dir()}
    assert again == clean


def test_two_jobs_with_one_name_give_every_trial_its_own_run(tmp_path):
    for parent in ("a", "b"):
        shutil.copytree(HARBOR_JOB, tmp_path / parent / "nightly")
    out = tmp_path / "runs"
    result = cli("import-harbor", str(tmp_path / "a" / "nightly"), str(tmp_path / "b" / "nightly"),
                 "--out", str(out))
    assert result.returncode == 0, result.stderr
    summary = json.loads((out / "harbor-import.json").read_text())
    single = cli("import-harbor", str(HARBOR_JOB), "--out", str(tmp_path / "single"))
    per_job = len(json.loads((tmp_path / "single" / "harbor-import.json").read_text())["imported"])
    assert single.returncode == 0 and len(summary["imported"]) == 2 * per_job >= 6
    run_ids = [row["run_id"] for row in summary["imported"]]
    assert len(set(run_ids)) == len(run_ids) == len([p for p in out.iterdir() if p.is_dir()])


def test_http_and_ws_recordings_of_one_episode_are_two_runs_that_export_together(aria, tmp_path):
    actions = _actions_file(tmp_path, "easy-expert")
    out = tmp_path / "runs"
    assert cli(*_episode_args(aria, actions, out, "http")).returncode == 0
    assert cli(*_episode_args(aria, actions, out, "ws")).returncode == 0
    runs = sorted(p.name for p in out.iterdir())
    assert len(runs) == 2 and len({readable(name) for name in runs}) == 1
    export_site([out], tmp_path / "site")
    assert len(json.loads((tmp_path / "site" / "data" / "index.json").read_text())["runs"]) == 2


def test_an_edited_actions_file_is_a_new_run(aria, tmp_path):
    actions = _actions_file(tmp_path, "easy-expert")
    out = tmp_path / "runs"
    assert cli(*_episode_args(aria, actions, out)).returncode == 0
    first = {p.name for p in out.iterdir()}
    again = cli(*_episode_args(aria, actions, out))
    assert again.returncode == 0 and {p.name for p in out.iterdir()} == first  # unchanged
    actions.write_text("# edited: the same actions, another file\n" + actions.read_text())
    assert cli(*_episode_args(aria, actions, out)).returncode == 0
    assert len({p.name for p in out.iterdir()}) == 2


def test_a_folder_holding_another_run_is_refused(tmp_path):
    out = tmp_path / "runs"
    assert cli("record", "--task", str(TASK), "--policy", "nop", "--out", str(out)).returncode == 0
    run_dir = only_run(out)
    run = json.loads((run_dir / "run.json").read_text())
    run["identity"]["defining"]["seed"] = 99
    (run_dir / "run.json").write_text(json.dumps(run))
    before = (run_dir / "run.json").read_bytes()
    refused = cli("record", "--task", str(TASK), "--policy", "nop", "--out", str(out))
    assert refused.returncode == 2 and "holds another run" in refused.stderr
    assert (run_dir / "run.json").read_bytes() == before


def test_fresh_replaces_a_run_and_says_so(tmp_path):
    out = tmp_path / "runs"
    assert cli("record", "--task", str(TASK), "--policy", "nop", "--out", str(out)).returncode == 0
    again = cli("record", "--task", str(TASK), "--policy", "nop", "--out", str(out), "--fresh")
    assert again.returncode == 0 and "--fresh" in again.stderr


def _incomplete_runs(tmp_path: Path) -> Path:
    """The fixture runs plus a failed and an interrupted copy of the oracle run."""
    runs = tmp_path / "runs"
    shutil.copytree(FIXTURE_RUNS, runs)
    for status, error in (("failed", "the model endpoint went away"), ("running", None)):
        target = runs / f"fixture-oracle-{status}"
        shutil.copytree(runs / ("fixture-partial-s1" if status == "failed" else "fixture-oracle-s1"), target)
        run = json.loads((target / "run.json").read_text())
        run.update(run_id=target.name, status=status, error=error)
        (target / "run.json").write_text(json.dumps(run))
    return runs


def test_incomplete_runs_are_left_out_of_the_means_by_default(tmp_path):
    export_site([_incomplete_runs(tmp_path)], tmp_path / "site", task_index=fixture_tasks())
    index = json.loads((tmp_path / "site" / "data" / "index.json").read_text())
    assert index["incomplete_runs"] == 2
    complete = {row["policy"]: row["runs"] for row in index["leaderboard"]}
    every = {row["policy"]: row["runs"] for row in index["leaderboard_all"]}
    assert complete["oracle"] == complete["partial"] == 1 and every["oracle"] == every["partial"] == 2
    statuses = {row["run_id"]: row["status"] for row in index["runs"]}
    assert statuses["fixture-oracle-failed"] == "failed" and statuses["fixture-oracle-running"] == "running"


@pytest.mark.browser
def test_failed_and_interrupted_runs_are_marked_on_every_page(tmp_path, page):
    from exporter.serve import serve_in_background

    export_site([_incomplete_runs(tmp_path)], tmp_path / "site", task_index=fixture_tasks())
    server, url = serve_in_background(tmp_path / "site", port=0, host="127.0.0.1")
    try:
        page.goto(url)
        page.wait_for_selector("body[data-ready='1']")
        badges = page.locator("#runs-table .status-badge")
        assert sorted(badges.all_inner_texts()) == ["failed", "incomplete"]  # running: stopped, or still recording
        page_rows = page.locator("#runs-table tr[data-run-id='fixture-oracle-failed'] td[data-field='run_id']").inner_text()
        page.locator("button.sort-button[data-sort='reward']").click()  # the script draws the rows again
        page.wait_for_function("() => document.querySelector(\"#runs-table th[data-sort='reward']\").getAttribute('aria-sort') !== 'none'")
        script_rows = page.locator("#runs-table tr[data-run-id='fixture-oracle-failed'] td[data-field='run_id']").inner_text()
        assert script_rows == page_rows and page_rows.endswith(" failed"), "the badge's text is not glued to the id"
        assert page.locator("#leaderboard").is_visible() and page.locator("#leaderboard-all").is_hidden()
        page.locator("#leaderboard-include").check()
        assert page.locator("#leaderboard-all").is_visible() and page.locator("#leaderboard").is_hidden()
        page.goto(f"{url}run.html?run=fixture-oracle-failed")
        page.wait_for_selector("body[data-ready='1']")
        banner = page.locator("#run-status")
        assert banner.is_visible() and "the model endpoint went away" in banner.inner_text()
        page.goto(f"{url}run.html?run=fixture-oracle-s1")
        page.wait_for_selector("body[data-ready='1']")
        assert page.locator("#run-status").is_hidden()
        page.goto(f"{url}compare.html?a=fixture-oracle-running&b=fixture-oracle-s1")
        page.wait_for_selector("body[data-ready='1']")
        assert page.locator(".status-badge").first.inner_text() == "incomplete"
        gallery = (tmp_path / "site" / "gallery").glob("*.html")
        assert any('data-status="failed"' in p.read_text() for p in gallery)
    finally:
        server.shutdown()
        server.server_close()


def test_an_interrupted_openenv_run_is_kept_marked_and_never_shrinks(tmp_path):
    """An OpenEnv session cannot be resumed: the rerun refuses and marks the run failed."""
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    server = subprocess.Popen([sys.executable, "-m", "alertforge.cli", "serve-openenv", "--port", str(port)],
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=ROOT)
    try:
        deadline = time.monotonic() + 90
        import urllib.request

        while time.monotonic() < deadline:
            try:
                urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=2)
                break
            except OSError:
                time.sleep(0.3)
        args = ["record-openenv", "--url", f"http://127.0.0.1:{port}", "--task", TASK.name,
                "--policy", "oracle", "--out", str(tmp_path / "runs")]
        killed = cli(*args, crash="write:4")
        assert killed.returncode == -signal.SIGKILL, killed.stderr[-500:]
        run_dir = only_run(tmp_path / "runs")
        before = (run_dir / "trajectory.json").read_bytes()
        refused = cli(*args)
        assert refused.returncode == 2 and "--fresh" in refused.stderr
        assert (run_dir / "trajectory.json").read_bytes() == before
        assert len(json.loads(before)["steps"]) == 4
        run = json.loads((run_dir / "run.json").read_text())
        assert run["status"] == "failed" and "cannot be resumed" in run["error"]
        assert cli(*args, "--fresh").returncode == 0
        assert json.loads((run_dir / "run.json").read_text())["status"] == "complete"
    finally:
        server.terminate()
        server.wait()


def test_a_run_that_stops_before_its_first_step_leaves_no_folder(tmp_path):
    """Against a server that is not there: record-openenv and an ARIA record exit with the
    environment error and leave nothing under --out (no empty folder, no 0-step run.json)."""
    import subprocess
    import sys

    from contract.paths import REPO_ROOT

    actions = REPO_ROOT / "examples" / "aria-actions" / "bonus-seed3.yaml"
    for args in (["record-openenv", "--url", "http://127.0.0.1:9", "--task", "af-001"],
                 ["record", "--env", "aria", "--task", "bonus-seed3", "--env-url", "http://127.0.0.1:9",
                  "--policy", "scripted", "--actions", str(actions)]):
        out = tmp_path / args[0]
        done = subprocess.run([sys.executable, "-m", "alertforge.cli", *args, "--out", str(out)], check=False,
                              capture_output=True, text=True, timeout=120)
        assert done.returncode != 0 and "Traceback" not in done.stderr, done.stderr
        assert not out.exists() or not any(out.iterdir()), sorted(out.rglob("*"))
