"""Harbor 0.26 jobs: trials matched to tasks by content, everything a trial holds, ATIF 1.2-1.8.

Fixtures: tests/fixtures/harbor-026/ (built once with Harbor 0.26.0's own models, see its
SOURCE.md). The af-001 trials carry af-001's checksum of build time; the catalog regenerates
tasks/af-*, so the tests write the live task's checksum and lock digest into a copy.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import atif
import pytest
from conftest import find_run

from contract.files import read_json
from contract.paths import TASKS_DIR
from exporter.run_folders import read_run_folder
from recorder.importers.harbor.importer import import_harbor
from recorder.importers.harbor.task_match import content_digest, task_checksum

FIXTURES = Path(__file__).parent / "fixtures"
HARBOR = FIXTURES / "harbor-026"
JOB = HARBOR / "2026-01-15__09-00-00"
ATIF_FILES = HARBOR / "atif"
TASK = TASKS_DIR / "af-001-slo-onboarding-easy-s1"
SOLVED, FAILED_ARTIFACT, TIMED_OUT, NEWEST = (f"af-001-slo-onboarding-easy-s1__{s}" for s in
                                              ("tGF8vp7", "7xWcGFJ", "3hu2G4F", "eiq6BLm"))
MULTI_STEP = "af-001-slo-onboarding-easy-s1-mu__6BTJpZB"


def live_job(into: Path, task: Path = TASK) -> Path:
    """A copy of the fixture job whose af-001 trials carry ``task``'s checksum and digest as
    Harbor 0.26 computes them now (result.json ``task_checksum``, lock.json ``task.digest``)."""
    job = into / JOB.name
    shutil.copytree(JOB, job)
    checksum, digest = task_checksum(task), content_digest(task)
    for trial in job.iterdir():
        result_path, lock_path = trial / "result.json", trial / "lock.json"
        if not result_path.is_file():
            continue
        result = json.loads(result_path.read_text())
        if result["task_name"] != TASK.name:
            continue
        result["task_checksum"] = checksum
        result_path.write_text(json.dumps(result, indent=4))
        lock = json.loads(lock_path.read_text())
        lock["task"]["digest"] = digest
        lock_path.write_text(json.dumps(lock, indent=4))
    return job


def _run(out: Path, trial: str) -> tuple[dict, dict, Path]:
    folder = find_run(out, f"harbor__{JOB.name}__{trial}")
    return read_json(folder / "run.json"), read_json(folder / "trajectory.json"), folder


@pytest.fixture(scope="module")
def imported(tmp_path_factory) -> tuple[Path, dict]:
    base = tmp_path_factory.mktemp("harbor-026")
    job = live_job(base / "jobs")
    out = base / "runs"
    return out, import_harbor([job, *sorted(ATIF_FILES.glob("*.trajectory.json"))], out)


def test_checksum_and_digest_equal_what_harbor_computed_for_the_committed_task(tmp_path):
    expected = read_json(HARBOR / "checksum-task.expected.json")
    task = tmp_path / "renamed-task"
    shutil.copytree(HARBOR / "checksum-task", task)
    (task / "environment" / "empty-folder").mkdir()  # dirhash skips empty folders
    assert task_checksum(task) == expected["task_checksum"]
    assert content_digest(task) == expected["digest"]
    (task / "tests" / "debug.log").write_text("excluded by tests/.harborignore: no change")
    (task / "steps" / "one" / "tests" / "out" / "y.txt").write_text("excluded folder")
    assert task_checksum(task) == expected["task_checksum"]
    (task / "environment" / "draft.swp").write_text("hashed by task_checksum only")
    assert task_checksum(task) != expected["task_checksum"]
    assert content_digest(task) == expected["digest"]
    (task / "tests" / "keep.log").write_text("re-included by !keep.log: both change")
    assert content_digest(task) != expected["digest"]


def test_unchanged_af001_trial_is_matched_by_checksum_and_regraded(imported):
    out, _ = imported
    run, doc, _ = _run(out, SOLVED)
    assert run["task"]["known"] and run["harbor"]["task_match"]["how"] == "task_checksum"
    # the trial writes af-001's solution files of build time: re-graded here, whatever the
    # regenerated task now gives them
    assert run["regrade"] is not None and run["graded"] is True and run["timings"]["grades"] >= 2
    assert run["final"]["source"] == "regrade" and run["harbor"]["reward"] == 1.0
    assert any("grade" in (s.get("extra") or {}) for s in doc["steps"][1:])


def test_same_name_trial_with_changed_task_content_is_not_regraded(tmp_path):
    tasks = tmp_path / "tasks"
    shutil.copytree(TASK, tasks / TASK.name)
    job = live_job(tmp_path / "jobs")  # checksums of the real af-001
    readme = tasks / TASK.name / "instruction.md"
    readme.write_text(readme.read_text() + "\nOne more sentence: other content, same name.\n")
    summary = import_harbor([job / SOLVED], tmp_path / "runs", tasks_dir=tasks)
    row = summary["imported"][0]
    assert not row["task_known"] and row["task_match"] is None and row["regrade_reward"] is None
    run = read_json(tmp_path / "runs" / row["run_id"] / "run.json")
    assert run["final"]["source"] == "harbor" and run["final"]["reward"] == 1.0
    assert run["graded"] is False and run["task"]["name"] == TASK.name
    assert any("matches no local task" in n and f"has the name {TASK.name}" in n
               for n in run["notes"])


def test_job_report_counts_trials_runs_and_skipped_with_reasons(tmp_path):
    job = live_job(tmp_path / "jobs")
    broken = job / "af-001-slo-onboarding-easy-s1__BROKEN1"
    broken.mkdir()
    (broken / "result.json").write_text('{"task_name": "af-001')
    summary = import_harbor([job], tmp_path / "runs")
    assert (summary["trials_in"], summary["runs_out"]) == (9, 8)
    assert [Path(s["path"]).name for s in summary["skipped"]] == [broken.name]
    assert "result.json is not valid JSON" in summary["skipped"][0]["reason"]
    rows = {Path(r["path"]).name: r for r in summary["imported"]}
    assert rows[MULTI_STEP]["multi_step"] == ["recording-rules", "alerts-and-routing"]
    assert rows[FAILED_ARTIFACT]["failed_artifacts"] == ["/app/monitoring"]
    assert rows[TIMED_OUT]["exception"] == "AgentTimeoutError"
    assert len(rows[SOLVED]["rewards"]) == 16 and rows[SOLVED]["rewards"]["req_routing"] == 1


def test_a_trial_shows_its_exception_verifier_output_artifacts_and_agent_logs(imported):
    out, _ = imported
    run, _, _ = _run(out, TIMED_OUT)
    harbor = run["harbor"]
    assert harbor["exception"]["type"] == "AgentTimeoutError"
    assert "timed out after 1800.0 seconds" in harbor["exception"]["traceback"]
    assert "AgentTimeoutError" in harbor["exception_txt"]["text"]
    assert "3ambench verifier: reward 0.3333" in harbor["verifier"]["stdout"]["text"]
    assert harbor["verifier"]["files"] == ["grade.json", "reward.json", "test-stdout.txt"]
    assert [e["status"] for e in harbor["artifacts"]["entries"]] == ["empty", "ok"]
    assert {"path": "claude-code.txt", "kind": "file"} in harbor["agent_logs"]
    failed, _, _ = _run(out, FAILED_ARTIFACT)
    assert failed["harbor"]["artifacts"]["failed"] == ["/app/monitoring"]
    assert "not a directory" in failed["harbor"]["verifier"]["stdout"]["text"]


def test_multi_step_trial_is_one_run_with_a_section_per_step(imported):
    out, _ = imported
    run, doc, _ = _run(out, MULTI_STEP)
    sections = [(s.get("extra") or {}).get("harbor_step") for s in doc["steps"]]
    assert sections[0] == "recording-rules" and sections[-1] == "alerts-and-routing"
    assert sections == sorted(sections, key=["recording-rules", "alerts-and-routing"].index)
    steps = run["harbor"]["steps"]
    assert [(s["name"], s["rewards"]["reward"]) for s in steps] == [
        ("recording-rules", 0.3333), ("alerts-and-routing", 0.6667)]
    assert "step alerts-and-routing" in steps[1]["verifier"]["stdout"]["text"]
    assert run["harbor"]["reward"] == 0.5 and run["validation_errors"] == []
    assert not run["task"]["known"]  # a derived task: its content is none of ours


def test_atif_18_subagent_copied_context_media_and_orphans(imported):
    out, _ = imported
    folder = find_run(out, "atif__v1.8-field")
    run, doc = read_json(folder / "run.json"), read_json(folder / "trajectory.json")
    atif.Trajectory.model_validate(doc)
    assert doc["schema_version"] == "ATIF-v1.8"
    assert doc["extra"]["imported_from"]["schema_version"] == "ATIF-v1.8"
    sub = doc["subagent_trajectories"][0]
    assert sub["trajectory_id"] == "reviewer-1" and len(sub["steps"]) == 2
    spawner = next(s for s in doc["steps"] if s.get("tool_calls")
                   and s["tool_calls"][0]["function_name"] == "Task")
    result = spawner["observation"]["results"][0]
    assert result["subagent_trajectory_ref"] == [{"trajectory_id": "reviewer-1"}]
    assert spawner["tool_calls"][0]["extra"] == {"subagent_type": "reviewer"}
    assert result["extra"] == {"elapsed_ms": 900}
    assert [s.get("is_copied_context") for s in doc["steps"][:3]] == [True, True, None]
    tokens = run["harbor"]["tokens"]
    assert tokens["main"]["prompt_tokens"] == 1200 + 1500  # not the copied 7000
    assert tokens["main"]["copied_context_steps"] == 2
    assert tokens["subagents"]["prompt_tokens"] == 300 and tokens["all"]["prompt_tokens"] == 3000
    c2 = next(s for s in doc["steps"] if (s.get("tool_calls") or [{}])[0].get("tool_call_id") == "c2")
    assert [r["content"] for r in c2["observation"]["results"]] == [
        "Checking 'alertmanager.yml'  SUCCESS", "(second result for c2: exit 0)"]
    orphans = [r for s in doc["steps"] for r in (s.get("observation") or {}).get("results", [])
               if (r.get("extra") or {}).get("orphan")]
    assert [(o["extra"]["named_call_id"], o["content"]) for o in orphans] == [
        ("c9", "late output of a call from an earlier turn")]
    user_obs = doc["steps"][2]["observation"]["results"]
    assert user_obs == [{"content": "(upload receipt on a user step)"}]
    audio = doc["steps"][2]["message"][1]
    assert audio["source"]["path"] == "media/001-standup.wav"
    assert (folder / "media" / "001-standup.wav").read_bytes() == (
        ATIF_FILES / "media" / "standup.wav").read_bytes()


def test_media_part_whose_file_is_absent_is_named_not_dropped(imported):
    out, _ = imported
    run, _, folder = _run(out, NEWEST)
    media = {m["type"]: m for m in run["harbor"]["media"]}
    assert media["image"]["stored"] == "media/001-alertmanager.png"
    assert (folder / "media" / "001-alertmanager.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert media["audio"]["stored"] is None and media["audio"]["path"] == "media/voice-note.wav"
    assert "not in the job folder" in media["audio"]["problem"]
    assert run["harbor"]["subagents"][0]["steps"] == 2
    assert run["harbor"]["tokens"]["main"]["copied_context_steps"] == 2


@pytest.mark.parametrize("source, version", [
    (FIXTURES / "harbor-job" / "2026-11-29__09-00-00" / "af-001-slo-onboarding-easy-s1__Kp3mZ7c"
     / "agent" / "trajectory.json", "ATIF-v1.2"),
    (FIXTURES / "atif-real" / "openhands__hello-world.trajectory.json", "ATIF-v1.5"),
    (ATIF_FILES / "v1.6-image.trajectory.json", "ATIF-v1.6"),
    (FIXTURES / "cases" / "parallel-tool-results" / "parallel.trajectory.json", "ATIF-v1.7"),
    (ATIF_FILES / "v1.8-field.trajectory.json", "ATIF-v1.8"),
])
def test_every_atif_version_imports_as_a_valid_18_run(tmp_path, source, version):
    copy = tmp_path / "in" / source.name
    shutil.copytree(source.parent, copy.parent)
    summary = import_harbor([copy], tmp_path / "runs")
    assert summary["skipped"] == [] and summary["runs_out"] == 1
    folder = tmp_path / "runs" / summary["imported"][0]["run_id"]
    doc = read_json(folder / "trajectory.json")
    assert doc["schema_version"] == "ATIF-v1.8"
    assert doc["extra"]["imported_from"]["schema_version"] == version
    atif.Trajectory.model_validate(doc)
    read_run_folder(folder)


@pytest.fixture(scope="module")
def served(imported, tmp_path_factory):
    from exporter.export import export_site
    from exporter.serve import serve_in_background

    out, _ = imported
    site = tmp_path_factory.mktemp("harbor-site")
    export_site([out], site)
    server, url = serve_in_background(site, port=0, host="127.0.0.1")
    yield site, url
    server.shutdown()
    server.server_close()


def _site_run(site: Path, trial: str) -> dict:
    return read_json(next((site / "data" / "runs").glob(f"harbor__{JOB.name}__{trial}__*.json")))


@pytest.mark.browser
def test_viewer_opens_a_subagent_and_shows_an_image_part_and_the_trial(served, page):
    from axe_playwright_python.sync_playwright import Axe

    site, url = served
    run = _site_run(site, NEWEST)
    image_step = next(s["n"] for s in run["steps"] if any(m["type"] == "image" for m in s.get("media", [])))
    page.goto(f"{url}run.html?run={run['run_id']}&step={image_step}")
    page.wait_for_selector("body[data-ready='1']")
    image = page.locator("#step-media img")
    assert image.is_visible()
    image.scroll_into_view_if_needed()  # a lazy image loads once near the viewport
    for _ in range(50):
        if page.evaluate("document.querySelector('#step-media img').complete"):
            break
        page.wait_for_timeout(100)
    assert page.evaluate("document.querySelector('#step-media img').naturalWidth") == 8
    assert "alertmanager.png" in page.locator("#step-media figcaption").inner_text()
    panel = page.locator("#trial-panel")
    assert panel.is_visible()
    assert "null" not in page.locator("#trial-body").inner_text()  # an absent part is no text
    assert page.locator("#trial-rewards tr[data-reward]").count() == 16
    assert "2 copied-context steps left out" in page.locator("#trial-tokens caption").inner_text()
    audio_step = next(s["n"] for s in run["steps"] if any(m["type"] == "audio" for m in s.get("media", [])))
    page.locator("#btn-first").click()
    for _ in range(audio_step):
        page.locator("#btn-next").click()
    assert "voice-note.wav" in page.locator("#step-media").inner_text()
    assert "not in the job folder" in page.locator("#step-media").inner_text()
    assert page.locator("#step-copied").is_hidden()
    page.locator("#btn-first").click()
    assert page.locator("#step-copied").is_visible()
    spawn_step = next(s["n"] for s in run["steps"] if s.get("subagents"))
    page.locator("#btn-last").click()
    while page.locator("#step-index").inner_text() != str(spawn_step):
        page.locator("#btn-prev").click()
    page.locator("#step-subagents button.subagent-open").click()
    dialog = page.locator("#subagent-dialog")
    assert dialog.is_visible()
    assert run["subagents"][0]["trajectory_id"] in page.locator("#subagent-heading").inner_text()
    assert "The burn-rate alert looks correct." in page.locator("#subagent-steps").inner_text()
    assert page.locator("#subagent-steps li").count() == 2
    results = Axe().run(page, options={"resultTypes": ["violations"]})
    serious = [v["id"] for v in results.response["violations"] if v["impact"] in ("serious", "critical")]
    assert serious == []
    page.locator("#subagent-close").click()
    assert dialog.is_hidden()
    assert page.page_errors == []


@pytest.mark.browser
def test_viewer_shows_each_step_of_a_multi_step_trial_and_a_failed_artifact(served, page):
    site, url = served
    run = _site_run(site, MULTI_STEP)
    page.goto(f"{url}run.html?run={run['run_id']}&step=1")
    page.wait_for_selector("body[data-ready='1']")
    assert page.locator("#step-section").inner_text() == "Trial step: recording-rules"
    assert page.locator("#trial-steps section.trial-step").count() == 2
    assert "not re-graded" in page.locator("#trial-facts").inner_text()
    assert "null" not in page.locator("#trial-body").inner_text()
    failed = _site_run(site, FAILED_ARTIFACT)
    page.goto(f"{url}run.html?run={failed['run_id']}&step=0")
    page.wait_for_selector("body[data-ready='1']")
    assert page.locator("#trial-artifacts tr[data-status='failed'] code").inner_text() == "/app/monitoring"
    assert page.page_errors == []


# pass@k of n = 4 attempts with c solved, by hand: 1 - C(4 - c, k) / C(4, k) for k = 1..4
PASS_AT_4 = {0: [0, 0, 0, 0], 1: [1 / 4, 1 - 3 / 6, 3 / 4, 1], 2: [1 / 2, 5 / 6, 1, 1],
             3: [3 / 4, 1, 1, 1], 4: [1, 1, 1, 1]}
T_3 = 3.182  # Student t, 97.5% quantile, 3 degrees of freedom


def test_pass_at_k_and_interval_of_four_attempts_equal_a_hand_computation(served):
    site, _ = served
    index = read_json(site / "data" / "index.json")
    groups = {(a["task_id"], a["agent"]): a for a in index["attempts"]}
    af001 = groups[("af-001-slo-onboarding-easy-s1", "claude-code")]
    runs = [r for r in index["runs"] if r["task_id"] == "af-001-slo-onboarding-easy-s1"
            and r["run_id"].startswith("harbor__")]
    assert af001["attempts"] == len(runs) == 4 and af001["model"] == "claude-sonnet-4-5"
    solved = sum(r["solved"] for r in runs)
    assert af001["solved"] == solved
    assert [af001["pass_at"][str(k)] for k in (1, 2, 3, 4)] == pytest.approx(PASS_AT_4[solved], abs=1e-6)
    rewards = [r["reward"] for r in runs]
    mean = sum(rewards) / 4
    half = T_3 * (sum((x - mean) ** 2 for x in rewards) / 3) ** 0.5 / 2
    assert (af001["mean_reward"], af001["ci_low"], af001["ci_high"]) == pytest.approx(
        (mean, max(0, mean - half), min(1, mean + half)), abs=1e-6)
    multi = groups[("af-001-slo-onboarding-easy-s1-multistep", "claude-code")]
    assert (multi["attempts"], multi["solved"]) == (4, 0)
    assert multi["pass_at"] == {"1": 0, "2": 0, "3": 0, "4": 0}
    # the verifier's rewards (task unknown, not re-graded): 0.5, 0.66665, 0.5, 0.66665
    mean = (0.5 + 0.66665 + 0.5 + 0.66665) / 4
    half = T_3 * (0.083325 * (4 / 3) ** 0.5) / 2
    assert (multi["mean_reward"], multi["ci_low"], multi["ci_high"]) == pytest.approx(
        (0.583325, mean - half, mean + half), abs=1e-6)
    board = next(r for r in index["leaderboard"] if r["policy"] == "claude-code")
    assert board["pass_at"]["1"] == pytest.approx((PASS_AT_4[solved][0] + 0) / 2, abs=1e-6)
    home = (site / "index.html").read_text()
    assert 'id="attempts"' in home and f"pass@1 {PASS_AT_4[solved][0] * 100:.0f}%" in home
    assert 'data-field="interval"' in home


def test_media_paths_leaving_the_folder_links_and_urls_are_named_never_read(tmp_path):
    from exporter.atif_view import MediaFiles
    from exporter.run_folders import read_run_folder

    folder = tmp_path / "job" / "inner"
    (folder / "media").mkdir(parents=True)
    (tmp_path / "job" / "outside.png").write_bytes(b"\x89PNG outside")
    (folder / "media" / "link.png").symlink_to("/etc/hostname")

    def image(path):
        return {"type": "image", "source": {"media_type": "image/png", "path": path}}
    doc = {"schema_version": "ATIF-v1.6", "session_id": "s", "agent": {"name": "a", "version": "1"},
           "steps": [{"step_id": 1, "source": "user", "message": [
               {"type": "text", "text": "look"}, image("../outside.png"), image("/etc/hostname"),
               image("http://example.invalid/x.png"), image("media/link.png")]}]}
    (folder / "t.trajectory.json").write_text(json.dumps(doc))
    summary = import_harbor([folder / "t.trajectory.json"], tmp_path / "runs")
    run_dir = tmp_path / "runs" / summary["imported"][0]["run_id"]
    media = read_json(run_dir / "run.json")["harbor"]["media"]
    assert [m["stored"] for m in media] == [None] * 4
    assert "outside the trial folder" in media[0]["problem"] and "URL" in media[2]["problem"]
    assert "outside the trial folder" in media[1]["problem"] and "symlink" in media[3]["problem"]
    assert not (run_dir / "media").exists()
    urls = MediaFiles(read_run_folder(run_dir))
    assert [urls.publish(p, "image") for p in ("media/..", "media/../run.json", "run.json", "media/.x")] == [
        (None, None)] * 4


def test_copied_context_of_a_continuation_file_is_shown_but_not_replayed_twice(tmp_path):
    def bash(step_id, command, **more):
        return {"step_id": step_id, "source": "agent", "message": "", **more,
                "tool_calls": [{"tool_call_id": f"c{step_id}", "function_name": "Bash",
                                "arguments": {"command": command}}]}
    head = {"schema_version": "ATIF-v1.5", "session_id": "s", "agent": {"name": "a", "version": "1"},
            "continued_trajectory_ref": "trajectory.cont-1.json",
            "steps": [{"step_id": 1, "source": "user", "message": "go"},
                      bash(2, "echo a > /app/monitoring/notes.txt"),
                      bash(3, "echo a2 >> /app/monitoring/notes.txt")]}
    cont = {"schema_version": "ATIF-v1.5", "session_id": "s", "agent": {"name": "a", "version": "1"},
            "steps": [{"step_id": 1, "source": "user", "message": "go", "is_copied_context": True},
                      bash(2, "echo a2 >> /app/monitoring/notes.txt", is_copied_context=True),
                      bash(3, "echo b >> /app/monitoring/notes.txt")]}
    trial = tmp_path / "job" / "some-task__abc1234"
    (trial / "agent").mkdir(parents=True)
    (trial / "agent" / "trajectory.json").write_text(json.dumps(head))
    (trial / "agent" / "trajectory.cont-1.json").write_text(json.dumps(cont))
    summary = import_harbor([trial], tmp_path / "runs")
    doc = read_json(tmp_path / "runs" / summary["imported"][0]["run_id"] / "trajectory.json")
    assert [bool(s.get("is_copied_context")) for s in doc["steps"]] == [
        False, False, False, True, True, False]
    edits = [e for s in doc["steps"] for e in (s.get("extra") or {}).get("edits", [])]
    assert [e["content"] for e in edits] == ["a\n", "a\na2\n", "a\na2\nb\n"]


def test_a_continuation_is_validated_as_its_own_file_and_no_reader_key_leaks(tmp_path):
    """Each file of a continued trajectory restarts its step ids (ATIF): no false "step_id is
    not sequential"; a bare file whose continuation is missing says so in the notes, and no
    key of the reader's own (``_import_notes``) reaches the validation errors or the run."""
    head = {"schema_version": "ATIF-v1.5", "session_id": "s", "agent": {"name": "a", "version": "1"},
            "continued_trajectory_ref": "trajectory.cont-1.json",
            "steps": [{"step_id": 1, "source": "user", "message": "go"}]}
    cont = {"schema_version": "ATIF-v1.5", "session_id": "s", "agent": {"name": "a", "version": "1"},
            "steps": [{"step_id": 1, "source": "user", "message": "go on"}]}
    folder = tmp_path / "in"
    folder.mkdir()
    (folder / "trajectory.json").write_text(json.dumps(head))
    (folder / "trajectory.cont-1.json").write_text(json.dumps(cont))
    summary = import_harbor([folder / "trajectory.json"], tmp_path / "runs")
    row = summary["imported"][0]
    assert row["validation_errors"] == 0, read_json(tmp_path / "runs" / row["run_id"] / "run.json")
    (folder / "trajectory.cont-1.json").unlink()
    (folder / "bare.json").write_text(json.dumps(head))
    summary = import_harbor([folder / "bare.json"], tmp_path / "runs2")
    run = read_json(tmp_path / "runs2" / summary["imported"][0]["run_id"] / "run.json")
    text = json.dumps(run) + (tmp_path / "runs2" / summary["imported"][0]["run_id"] / "trajectory.json").read_text()
    assert "_import_notes" not in text and "_validation_errors" not in text
    assert any("trajectory.cont-1.json" in note and "not followed" in note for note in run["notes"]), run["notes"]
    assert not run.get("validation_errors")


def test_a_foreign_steps_extra_under_our_names_is_kept_aside_and_the_run_exports(tmp_path):
    """Another tool's ``extra.grade`` (check states of its own) and ``extra.env`` on ATIF steps
    are kept under ``extra.source_extra``: read as this grader's, the export stopped on
    'checks has 3 states but the catalog has 0 checks'."""
    from exporter.export import export_site

    doc = read_json(ATIF_FILES / "v1.8-field.trajectory.json")
    for step in doc["steps"]:
        step["extra"] = {"grade": {"reward": 1.0, "checks": "111"}, "env": {"reward": "high"}, "note": "theirs"}
    source = tmp_path / "in" / "foreign.trajectory.json"
    source.parent.mkdir()
    source.write_text(json.dumps(doc), encoding="utf-8")
    summary = import_harbor([source], tmp_path / "runs")
    assert summary["runs_out"] == 1, summary["skipped"]
    imported = read_json(tmp_path / "runs" / summary["imported"][0]["run_id"] / "trajectory.json")
    for step in imported["steps"]:
        assert step["extra"]["note"] == "theirs"
        assert step["extra"]["source_extra"] == {"grade": {"reward": 1.0, "checks": "111"}, "env": {"reward": "high"}}
        assert "env" not in step["extra"]
        assert step["extra"].get("grade", {}).get("checks") != "111"
    export_site([tmp_path / "runs"], tmp_path / "site")
    assert (tmp_path / "site" / "index.html").is_file()
