"""What a review that tried to break the trust boundary found (25 findings, each a test here):
reads outside a tree, writes through links, unbounded work, tracebacks on odd shapes,
secrets publish could not see, and redaction hiding what the site must show.
"""

from __future__ import annotations

import gzip
import http.server
import json
import os
import shutil
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from conftest import FIXTURE_RUNS, FIXTURE_TASK_ROOT, fixture_tasks

from contract.errors import BadInput
from contract.paths import TASKS_DIR, task_dirs
from exporter.export import export_site
from exporter.publish import PublishRefused, publish_site
from exporter.redact import Redactor
from recorder.environments.workspace import run_tool

ROOT = Path(__file__).resolve().parents[1]
TASK = task_dirs(TASKS_DIR)[0]
HARBOR_JOB = Path(__file__).parent / "fixtures" / "harbor-job" / "2026-11-29__09-00-00"
CANARY = "REVIEW-CANARY-3c7f"
SECRET = "ghp_" + "Zq3vN8xK2mT7pR4sW9yB6cF1hJ5dL0gEXy12"


def cli(*args: str, timeout: float = 180) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "alertforge.cli", *map(str, args)],
                          capture_output=True, text=True, timeout=timeout, cwd=ROOT, check=False)


def edit(path: Path, change) -> None:
    data = json.loads(path.read_text())
    result = change(data)
    path.write_text(json.dumps(data if result is None else result))


def runs_copy(tmp_path: Path) -> Path:
    runs = tmp_path / "runs"
    shutil.copytree(FIXTURE_RUNS, runs)
    return runs


def all_text(folder: Path) -> str:
    return "\n".join(p.read_text(errors="replace") for p in folder.rglob("*") if p.is_file())


# -------------------------------------------------------------------------- reads and writes


def test_run_checks_refuses_an_example_test_naming_rule_files_outside(tmp_path):
    outside = tmp_path / "outside.yml"
    outside.write_text(f"groups:\n- name: g\n  rules:\n  - alert: {CANARY}\n    expr: vector(1)\n")
    ws = tmp_path / "ws"
    shutil.copytree(TASK / "environment" / "monitoring", ws)
    for entry in (str(outside), "../../outside.yml", "../../*/*.yml"):
        (ws / "tests").mkdir(exist_ok=True)
        (ws / "tests" / "smoke.test.yml").write_text(
            f"rule_files:\n  - {entry}\nevaluation_interval: 1m\ntests:\n- interval: 1m\n"
            f"  input_series: []\n  alert_rule_test:\n  - eval_time: 1m\n    alertname: X\n"
            "    exp_alerts: []\n")
        output = run_tool(ws, "run_checks", {}).output
        assert "not run: rule_files" in output and CANARY not in output, output


def test_a_linked_task_folder_or_tests_folder_in_a_tasks_root_is_not_read(tmp_path):
    root = tmp_path / "tasks"
    root.mkdir()
    os.symlink(TASK, root / TASK.name)
    assert cli("import-harbor", HARBOR_JOB, "--out", tmp_path / "o1", "--tasks", root).returncode == 2
    shutil.copytree(TASK, root / "copy")
    shutil.move(root / "copy" / "tests", tmp_path / "tests-elsewhere")
    os.symlink(tmp_path / "tests-elsewhere", root / "copy" / "tests")
    from contract.paths import task_dirs as listed

    assert all(not p.is_symlink() for p in listed(root))


@pytest.mark.parametrize("command", ["record", "import-harbor", "import-episodes"])
def test_a_linked_run_folder_under_out_is_never_written_through(tmp_path, command):
    out, elsewhere = tmp_path / "out", tmp_path / "elsewhere"
    out.mkdir()
    elsewhere.mkdir()
    (elsewhere / "run.json").write_text("mine")
    if command == "record":
        args = ["record", "--task", TASK, "--policy", "nop", "--out", out]
        first = cli(*args)
        run_dir = next(out.iterdir())
    elif command == "import-harbor":
        args = ["import-harbor", HARBOR_JOB, "--out", out]
        first = cli(*args)
        run_dir = next(p for p in out.iterdir() if p.is_dir())
    else:
        args = ["import-episodes", ROOT / "examples" / "aria-episodes" / "episodes" / "easy-poor.json",
                "--out", out]
        first = cli(*args)
        run_dir = next(out.iterdir())
    assert first.returncode == 0, first.stderr
    shutil.rmtree(run_dir)
    os.symlink(elsewhere, run_dir)
    again = cli(*args)
    assert (elsewhere / "run.json").read_text() == "mine"
    assert sorted(p.name for p in elsewhere.iterdir()) == ["run.json"]
    assert "Traceback" not in again.stderr


def test_a_journal_replaced_by_a_link_is_not_appended_through(tmp_path):
    from recorder.journal import append_step

    target = tmp_path / "target"
    target.write_text("mine")
    os.symlink(target, tmp_path / "journal.jsonl")
    with pytest.raises(OSError):
        append_step(tmp_path / "journal.jsonl", {"step_id": 1, "source": "user"})
    assert target.read_text() == "mine"


def test_export_into_a_linked_out_writes_behind_the_link(tmp_path):
    real = tmp_path / "real-site"
    os.symlink(real, tmp_path / "site", target_is_directory=True)
    for _ in range(2):
        export_site([FIXTURE_RUNS], tmp_path / "site", task_index=fixture_tasks())
    assert (tmp_path / "site").is_symlink() and (real / "site-manifest.json").is_file()
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []


def test_a_linked_space_file_in_the_site_is_refused_never_deleted(tmp_path):
    site = tmp_path / "site"
    export_site([FIXTURE_RUNS], site, task_index=fixture_tasks())
    (tmp_path / "readme-elsewhere.md").write_text("front matter")
    os.symlink(tmp_path / "readme-elsewhere.md", site / "README.md")
    with pytest.raises(BadInput, match="README.md"):
        export_site([FIXTURE_RUNS], site, task_index=fixture_tasks())
    assert (site / "README.md").is_symlink()


# ---------------------------------------------------------------------------- unbounded work


def test_a_catastrophic_sed_pattern_in_a_trial_is_lossy_not_a_hang(tmp_path):
    from recorder.importers.shell.tracker import FileTracker

    tracker = FileTracker({"rules/a.yml": "a" * 40 + "!\n"}, repo_known=True)
    started = time.monotonic()
    effect = tracker.apply("bash", {"command": "sed -E -i 's/(a+)+$/x/' /app/monitoring/rules/a.yml"})
    assert time.monotonic() - started < 10
    assert effect.lossy and "sed" in " ".join(effect.lossy)


def test_an_unterminated_heredoc_in_long_keystrokes_is_linear(tmp_path):
    from recorder.importers.shell.tracker import FileTracker

    tracker = FileTracker({}, repo_known=False)
    started = time.monotonic()
    tracker.apply("tmux_send_keys", {"keystrokes": "cat > /app/monitoring/x.yml <<'EOF'\n"})
    for _ in range(3000):
        tracker.apply("tmux_send_keys", {"keystrokes": "line of the heredoc that never ends\n" * 20})
    assert time.monotonic() - started < 20


def test_a_catalog_series_that_expands_to_billions_is_refused(tmp_path):
    root = tmp_path / "tasks"
    shutil.copytree(FIXTURE_TASK_ROOT, root)
    path = root / "fixture-checkout" / "tests" / "checks.json"
    edit(path, lambda c: next(iter(c["input_series"].values()))[0].update(values="0+1x400000000"))
    with pytest.raises(BadInput, match="expands to over"):
        export_site([FIXTURE_RUNS], tmp_path / "site", task_index=__import__(
            "contract.task_roots", fromlist=["TaskIndex"]).TaskIndex([root]))


def test_many_sparse_trials_stop_at_the_import_read_budget(tmp_path, monkeypatch):
    from recorder.importers.harbor import job_files
    from recorder.importers.harbor.trials import read_trial

    job = tmp_path / "job"
    for index in range(6):
        trial = job / f"t__{index}"
        (trial / "agent").mkdir(parents=True)
        (trial / "result.json").write_text("{}")
        with open(trial / "agent" / "trajectory.json", "wb") as handle:
            handle.truncate(3 * 1024 * 1024)
    monkeypatch.setattr(job_files, "IMPORT_BUDGET", 8 * 1024 * 1024)
    budget = job_files.ReadBudget(left=8 * 1024 * 1024)
    problems = [read_trial(p, "job", job, budget).trajectory_problem
                for p in sorted(job.iterdir())]
    assert any("in all" in (p or "") or "already read" in (p or "") for p in problems)


def test_an_environment_that_drips_its_answer_is_cut_off(monkeypatch):
    from recorder.environments import aria as client

    class Drip(http.server.BaseHTTPRequestHandler):
        def log_message(self, *args):
            pass

        def do_POST(self):
            self.send_response(200)
            self.send_header("content-length", "1000")
            self.end_headers()
            for _ in range(1000):
                self.wfile.write(b" ")
                self.wfile.flush()
                time.sleep(0.05)

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Drip)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    monkeypatch.setattr(client, "ANSWER_SECONDS", 1.0)
    try:
        env = client.open_environment(f"http://127.0.0.1:{server.server_address[1]}", "http")
        started = time.monotonic()
        with pytest.raises(client.EnvironmentFailure, match="took over"):
            env.reset("easy", 1)
        assert time.monotonic() - started < 10
    finally:
        server.shutdown()


# ------------------------------------------------------------------------------ odd shapes


@pytest.mark.parametrize("field, value", [("model", ["a"]), ("policy", {"x": 1}), ("seed", "one")])
def test_a_run_json_field_of_the_wrong_type_is_bad_input(tmp_path, field, value):
    runs = runs_copy(tmp_path)
    edit(runs / "fixture-oracle-s1" / "run.json", lambda r: r.update({field: value}))
    out = cli("export", runs, "--tasks", FIXTURE_TASK_ROOT, "--out", tmp_path / "site")
    assert out.returncode == 2 and "Traceback" not in out.stderr and field in out.stderr


def test_nesting_three_hundred_deep_is_bad_input(tmp_path):
    runs = runs_copy(tmp_path)
    deep: object = "bottom"
    for _ in range(300):
        deep = {"a": deep}
    edit(runs / "fixture-oracle-s1" / "trajectory.json",
         lambda t: t["steps"][3]["tool_calls"][0]["arguments"].update(deep=deep))
    out = cli("export", runs, "--tasks", FIXTURE_TASK_ROOT, "--out", tmp_path / "site")
    assert out.returncode == 2 and "deeper than" in out.stderr


@pytest.mark.parametrize("change", [
    lambda c: c["checks"][0]["probe"].update(scenario=["a"]),
    lambda c: c["checks"][0].update(probe="promql"),
    lambda c: c["requirements"][0]["targets"].update(windows=["5m"]),
])
def test_a_crafted_catalog_in_a_tasks_root_is_bad_input(tmp_path, change):
    root = tmp_path / "tasks"
    shutil.copytree(FIXTURE_TASK_ROOT, root)
    edit(root / "fixture-checkout" / "tests" / "checks.json", change)
    out = cli("export", FIXTURE_RUNS, "--tasks", root, "--out", tmp_path / "site")
    assert "Traceback" not in out.stderr
    assert out.returncode in (0, 2)  # refused, or the run matches no task and falls back


@pytest.mark.parametrize("change", [
    lambda r: r.update(config={"task": "af-001"}),
    lambda r: r.update(agent_info={"name": "a", "model_info": "gpt"}),
    lambda r: r.update(config=[1, 2]),
])
def test_harbor_result_fields_of_the_wrong_type_import(tmp_path, change):
    job = tmp_path / "job"
    shutil.copytree(HARBOR_JOB, job)
    trial = min(p for p in job.iterdir() if p.is_dir())
    edit(trial / "result.json", change)
    out = cli("import-harbor", job, "--out", tmp_path / "out")
    assert out.returncode == 0 and "Traceback" not in out.stderr


def test_episode_state_fields_of_the_wrong_type_import(tmp_path):
    source = ROOT / "examples" / "aria-episodes" / "episodes" / "easy-expert.json"
    data = json.loads(source.read_text())
    state = data["final_state"]["response"]
    state["action_history"] = ["restart"] + state.get("action_history", [])
    state.setdefault("info", {})["rewards_unlocked"] = 7
    (tmp_path / "t.json").write_text(json.dumps(data))
    out = cli("import-episodes", tmp_path / "t.json", "--out", tmp_path / "out")
    assert out.returncode == 0 and "Traceback" not in out.stderr


# --------------------------------------------------------------------------------- publish


def _site(tmp_path: Path, redact: bool = False) -> Path:
    site = tmp_path / "site"
    export_site([FIXTURE_RUNS], site, task_index=fixture_tasks(), redactor=redact)
    return site


def _staged(site: Path, tmp_path: Path) -> str:
    from exporter import publish

    captured = {}
    original = publish.listing

    def spy(folder, space, masked):
        captured["text"] = all_text(folder)
        return original(folder, space, masked)

    publish.listing = spy
    try:
        publish_site(site, "org/replay", dry_run=True, redactor=Redactor(), out=lambda line: None)
    finally:
        publish.listing = original
    return captured["text"]


def test_publish_drops_a_secret_a_duplicate_json_key_carried(tmp_path):
    site = _site(tmp_path)
    path = site / "data" / "home.json"
    text = path.read_text()
    path.write_text('{"password": "Dup-Pa55word-Xq9", "password": "ok", ' + text[1:])
    assert "Dup-Pa55word-Xq9" not in _staged(site, tmp_path)


@pytest.mark.parametrize("name, data", [
    ("data/bom.json", "\ufeff".encode() + json.dumps({"note": SECRET}).encode().replace(b"ghp_", b"\\u0067hp_")),
    ("data/packed.json.gz", gzip.compress(SECRET.encode(), mtime=0)),
    ("data/notes.txt", f"token {SECRET}".encode("utf-16")),
    ("about.html", f"<p>ghp&#95;{SECRET[4:]}</p>".encode()),
])
def test_publish_refuses_what_it_cannot_read_for_secrets(tmp_path, name, data):
    site = _site(tmp_path)
    (site / name).write_bytes(data)
    with pytest.raises(PublishRefused):
        _staged(site, tmp_path)


def test_a_secret_in_the_task_workflow_or_tier_is_masked(tmp_path):
    runs = runs_copy(tmp_path)
    edit(runs / "fixture-xss" / "run.json", lambda r: r["task"].update(workflow=SECRET, tier=f"t-{SECRET}"))
    export_site([runs], tmp_path / "site", task_index=fixture_tasks())
    assert SECRET not in all_text(tmp_path / "site")


def test_redaction_keeps_a_renamed_file_an_edit_of_the_existing_file(tmp_path):
    root = tmp_path / "tasks"
    shutil.copytree(FIXTURE_TASK_ROOT, root)
    rules = root / "fixture-checkout" / "environment" / "monitoring" / "rules"
    (rules / "a.yml").rename(rules / "JvmGcPauseP99AboveBudgetQ4.yml")
    runs = runs_copy(tmp_path)
    edit(runs / "fixture-oracle-s1" / "trajectory.json", lambda t: t["steps"][3]["tool_calls"][0][
        "arguments"].update(path="rules/JvmGcPauseP99AboveBudgetQ4.yml"))
    for run in runs.iterdir():
        edit(run / "run.json", lambda r: r["task"].pop("fingerprint", None))
    from contract.task_roots import TaskIndex

    export_site([runs], tmp_path / "site", task_index=TaskIndex([root]))
    run = json.loads((tmp_path / "site" / "data" / "runs" / "fixture-oracle-s1.json").read_text())
    diff = run["steps"][3]["diff"]
    assert diff["path"] == "rules/JvmGcPauseP99AboveBudgetQ4.yml" and diff["old_exists"] is True
