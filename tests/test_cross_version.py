"""The cross-version proof's comparison (proofs/cross_version.py): each grade kept typed
(ToolSetGrade, JSON values only between a tool set's process and the comparison), every check
and reward whose outcome differs between two tool sets listed."""

from __future__ import annotations

import tempfile
from pathlib import Path

import orjson
import pytest

from contract.paths import TASKS_DIR
from proofs.cross_version import ToolSetGrade, compare
from proofs.gate import graded_case
from recorder.reference.context import context_for_task


def test_a_real_grade_is_kept_and_read_back_through_its_json():
    task = TASKS_DIR / "af-001-slo-onboarding-easy-s1"
    with tempfile.TemporaryDirectory() as tmp:
        grade = ToolSetGrade.of(graded_case(task, "oracle", context_for_task(task), Path(tmp)))
    assert grade.reward == 1.0 and grade.checks and all(grade.checks.values()) and grade.syntax_errors == []
    assert grade.tools and "promtool" in orjson.dumps(grade.tools).decode()
    assert ToolSetGrade.from_json(orjson.loads(orjson.dumps(grade.to_json()))) == grade


def test_compare_lists_each_differing_check_and_reward_and_a_grade_one_set_lacks():
    a = {"t/oracle": ToolSetGrade(1.0, {"c1": True, "c2": True}, []),
         "t/noop": ToolSetGrade(0.0, {"c1": False}, ["rules/a.yml"])}
    b = {"t/oracle": ToolSetGrade(0.5, {"c1": True, "c2": False, "c3": True}, [])}
    report = compare(a, b)
    assert report["grades"] == 2 and report["checks_compared"] == 4
    assert report["differences"] == [
        {"grade": "t/noop", "check": "c1", "a": False, "b": "absent"},
        {"grade": "t/oracle", "check": "c2", "a": True, "b": False},
        {"grade": "t/oracle", "check": "c3", "a": "absent", "b": True}]
    assert report["reward_differences"] == [{"grade": "t/noop", "a": 0.0, "b": None},
                                            {"grade": "t/oracle", "a": 1.0, "b": 0.5}]
    assert compare(a, a)["differences"] == [] and compare(a, a)["reward_differences"] == []


@pytest.mark.parametrize("value", [[], {"reward": "1"}, {"reward": 1.0, "checks": [], "syntax_errors": []}])
def test_a_tool_sets_output_of_the_wrong_shape_is_refused(value):
    with pytest.raises(TypeError, match="tool set"):
        ToolSetGrade.from_json(value)
