"""Config hygiene findings and inhibition version differences travel from the grade to the
run view: the recorder keeps them on the graded step, the exporter carries the latest forward
(shapes checked, the run is untrusted), and the step detail shows them as text.

The real grade runs promtool and amtool on a reorg task's oracle with an unused receiver
left in; the viewer part edits a copy of the hand-made fixture run (tests/fixtures/site).
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from conftest import fixture_tasks

from contract.base import dump
from contract.paths import TASKS_DIR, task_dirs
from exporter.export import export_site
from exporter.steps import recorded_config
from grader.grade import grade_result
from proofs.gate import final_workspace
from recorder.environments.graded import grade_summary

FIXTURE_RUN = Path(__file__).parent / "fixtures" / "site" / "runs" / "fixture-partial-s1"
HOSTILE = '<img src=x onerror="window.__pwned=1">'


def test_a_grade_with_an_unused_receiver_keeps_its_finding_on_the_recorded_step(tmp_path):
    task = next(t for t in task_dirs(TASKS_DIR) if "team-reorg" in t.name)
    workspace = final_workspace(task, "oracle", tmp_path)
    am = workspace / "alertmanager" / "alertmanager.yml"
    am.write_text(am.read_text().replace("receivers:\n", "receivers:\n- name: leftover-pager\n", 1))
    result = grade_result(task, workspace)
    kinds = [(f.kind, f.text) for f in result.findings or []]
    assert any(kind == "unused-receiver" and "leftover-pager" in text for kind, text in kinds), kinds
    summary = dump(grade_summary(result, 0.5))
    assert summary["findings"] == dump(result)["findings"]
    assert "version_differences" not in summary  # none here: left out, as the GradeResult does
    assert "findings" not in dump(grade_summary(result.model_copy(update={"findings": None}), 0.5))


def test_recorded_config_drops_what_has_another_shape():
    grade = {"findings": [{"kind": "unused-receiver", "where": "receivers[3]", "text": "t"},
                          {"kind": 3, "where": "x", "text": "y"}, "junk"],
             "version_differences": [{"check": "I1.x", "rule": 0, "verdicts": {"a": True, "b": "no"}},
                                     {"check": "I1.y", "rule": True, "verdicts": {}}]}
    assert recorded_config(grade) == {
        "findings": [{"kind": "unused-receiver", "where": "receivers[3]", "text": "t"}],
        "version_differences": [{"check": "I1.x", "rule": 0, "verdicts": {"a": True}}]}
    assert recorded_config({}) == {} and recorded_config({"findings": "nope"}) == {}


def _run_with_findings(tmp_path: Path) -> Path:
    """The fixture partial run with findings on its third graded step (step_id 3, site step
    2) and a version difference on its fourth (step_id 4); step_id 5 is not graded."""
    run = tmp_path / "runs" / FIXTURE_RUN.name
    shutil.copytree(FIXTURE_RUN, run)
    path = run / "trajectory.json"
    trajectory = json.loads(path.read_text())
    grades = {s["step_id"]: s["extra"]["grade"] for s in trajectory["steps"] if (s.get("extra") or {}).get("grade")}
    grades[3]["findings"] = [{"kind": "unused-receiver", "where": "receivers[2]",
                              "text": f"receiver {HOSTILE} is named by no route"}]
    grades[4]["version_differences"] = [{"check": "I1.inhibit.both", "rule": 0, "verdicts": {
        "alertmanager 0.25-0.29": True, "alertmanager 0.30+": False}}]
    path.write_text(json.dumps(trajectory))
    return run


def test_the_export_carries_the_latest_grades_config_forward(tmp_path):
    run = _run_with_findings(tmp_path)
    export_site([run], tmp_path / "site", task_index=fixture_tasks())
    steps = json.loads((tmp_path / "site" / "data" / "runs" / f"{run.name}.json").read_bytes())["steps"]
    configs = {s["n"]: s.get("config") for s in steps}
    assert configs[0] is None and configs[1] is None
    assert configs[2]["findings"][0]["kind"] == "unused-receiver"
    assert configs[3] == {"version_differences": [{"check": "I1.inhibit.both", "rule": 0, "verdicts": {
        "alertmanager 0.25-0.29": True, "alertmanager 0.30+": False}}]}  # a new grade replaces it
    assert configs[4] == configs[3]  # an ungraded step keeps the latest


@pytest.mark.browser
def test_the_step_detail_shows_findings_as_text(tmp_path, page):
    from exporter.serve import serve_in_background

    run = _run_with_findings(tmp_path)
    export_site([run], tmp_path / "site", task_index=fixture_tasks())
    server, url = serve_in_background(tmp_path / "site", port=0, host="127.0.0.1")
    try:
        page.goto(f"{url}run.html?run={run.name}&step=2")
        page.wait_for_selector("body[data-ready='1']")
        box = page.locator("#step-config-box")
        assert box.is_visible()
        text = page.locator("#step-config").inner_text()
        assert "unused-receiver" in text and "receivers[2]" in text and HOSTILE in text
        assert page.evaluate("window.__pwned") is None and page.locator("#step-config img").count() == 0
        page.goto(f"{url}run.html?run={run.name}&step=3")
        page.wait_for_selector("body[data-ready='1']")
        text = page.locator("#step-config").inner_text()
        assert "alertmanager 0.25-0.29 mutes the target" in text
        assert "alertmanager 0.30+ does not mute the target" in text and "unused" not in text
        page.goto(f"{url}run.html?run={run.name}&step=1")
        page.wait_for_selector("body[data-ready='1']")
        assert not box.is_visible()
        assert page.page_errors == []
    finally:
        server.shutdown()
        server.server_close()
