"""A failing alert check's cause names the rule the change actually edited when it is not the
alert's own: a rename (the alert gone, another name added) and an edit that went to an
unrelated rule (the alert's rule left as the pristine repo had it). Real promtool and amtool.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from contract.grade import GradeResult
from contract.paths import TASKS_DIR
from grader.causes.edits import edit_note, edited_rules
from grader.grade import grade_result

STORM = TASKS_DIR / "af-007-alert-storm-cleanup-easy-s1"
ONBOARDING = TASKS_DIR / "af-001-slo-onboarding-easy-s1"


def _graded(task: Path, tmp_path: Path, path: str, old: str, new: str) -> GradeResult:
    workspace = tmp_path / "monitoring"
    shutil.copytree(task / "environment" / "monitoring", workspace)
    target = workspace / path
    assert old in target.read_text()
    target.write_text(target.read_text().replace(old, new, 1))
    return grade_result(task, workspace)


def _summaries(result: GradeResult, req: str) -> list[str]:
    return [c.cause.summary for c in result.checks
            if c.req == req and c.passed is False and c.cause]


def test_an_edit_to_an_unrelated_rule_is_named_beside_the_untouched_alert(tmp_path):
    result = _graded(STORM, tmp_path, "rules/blackbox-exporter.yml", "probe_duration_seconds > 1",
                     "probe_duration_seconds > 2")
    summaries = _summaries(result, "P1")
    assert summaries and all("this rule is as the pristine repo had it; the change edited BlackboxSlowProbe"
                             in s for s in summaries if "HighErrorRatio" in s), summaries
    facts = next(c.cause.facts for c in result.checks if c.req == "P1" and c.passed is False)
    assert facts["edited"] == ["BlackboxSlowProbe"]


def test_a_renamed_alert_names_what_the_change_added_instead(tmp_path):
    result = _graded(ONBOARDING, tmp_path, "rules/service-health.yml", "alert: ChatGwDown",
                     "alert: ChatGwErrorBudgetBurnFst")
    summaries = _summaries(result, "A1")
    assert summaries and all("the change added or edited ChatGwErrorBudgetBurnFst instead "
                             "(ChatGwErrorBudgetBurnFst is the closest name)" in s for s in summaries), summaries


def test_no_note_when_the_change_edited_the_alert_itself_or_nothing():
    groups = {"g": {"name": "g", "rules": [{"alert": "A", "expr": "x > 1"}, {"record": "r", "expr": "y"}]}}
    same = [{"alert": "A", "expr": "x > 1"}, {"record": "r", "expr": "y"}]
    assert edited_rules(same, groups) == [] and edit_note("A", same[0], same, groups) == ([], "")
    changed = [{"alert": "A", "expr": "x > 2"}, {"record": "r", "expr": "y"}]
    assert edit_note("A", changed[0], changed, groups) == (["A"], "")
    both = [{"alert": "A", "expr": "x > 2"}, {"record": "r", "expr": "z"}]
    assert edit_note("A", both[0], both, groups) == (["A", "r"], "")  # its own rule changed too
    gone = [{"record": "r", "expr": "y"}]
    assert edit_note("A", None, gone, groups) == ([], "")  # deleted, nothing added: no note
