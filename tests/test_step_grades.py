"""A graded step's grade is a typed GradeBlock between the recorder's functions: built from a
GradeResult, read back from a step's file bytes unchanged, and refused where a dict is
passed in its place (issue 34)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from contract.base import dump, parse
from contract.errors import BadInput
from contract.files import dump_json
from contract.grade import (
    Cause,
    CheckOutcome,
    Finding,
    GradeBlock,
    GradeResult,
    RequirementScore,
    VersionDifference,
)
from recorder import run_format
from recorder.environments.graded import grade_summary

LLM_RUNS = Path(__file__).resolve().parents[1] / "examples" / "llm-runs"
OLD_RUNS = Path(__file__).resolve().parent / "fixtures" / "site" / "runs"


def _written_grades() -> list[dict]:
    """Every ``extra.grade`` of the committed model runs (causes and findings among them) and
    of the version 1 fixture runs (booleans among their keys, no causes)."""
    grades = []
    paths = sorted(LLM_RUNS.glob("*/trajectory.json")) + sorted(OLD_RUNS.glob("*/trajectory.json"))
    for path in paths:
        steps = json.loads(path.read_text(encoding="utf-8"))["steps"]
        grades += [s["extra"]["grade"] for s in steps if "grade" in (s.get("extra") or {})]
    return grades


def _result(**changes) -> GradeResult:
    """A small GradeResult: one passing and one failing check (with a cause), two keys."""
    checks = [
        CheckOutcome(id="A1.fires", req="A1", family="Fire", label="fires", note="",
                     passed=True, detail="", reproduce=""),
        CheckOutcome(id="A1.silent", req="A1", family="Silent", label="silent", note="",
                     passed=False, detail="exp: none, got: 1 alert", reproduce="promtool ...",
                     cause=Cause(kind="alert-pending", summary="pending for 4m",
                                 facts={"for": "5m", "value": 1})),
    ]
    result = GradeResult(
        version=1, task_id="af-x", reward=0.5, keys={"reward": 0.5, "solved": 0},
        requirements=[RequirementScore(id="A1", kind="alert", weight=1, q=0.5, q_pristine=0.0,
                                       s=0.5)],
        checks=checks, syntax_errors=[], tamper=[], timings={"total_s": 0.25})
    return result.model_copy(update=changes)


def test_every_written_step_grade_reads_back_into_the_same_bytes():
    grades = _written_grades()
    assert len(grades) >= 10 and any(g.get("causes") for g in grades)
    assert any(g.get("findings") for g in grades)
    assert any(value is False for g in grades for value in g["keys"].values())
    for written in grades:
        block = parse(GradeBlock, written, "trajectory.json", "step grade")
        assert all(isinstance(cause, Cause) for cause in block.causes.values())
        assert dump_json(dump(block)) == dump_json(written)  # as a run file writes it


def test_grade_summary_is_typed_and_its_dump_survives_a_json_round_trip():
    result = _result(findings=[Finding(kind="unused-receiver", where="receivers[2]", text="t")],
                     version_differences=[VersionDifference(check="I1.mute", rule=0,
                                                            verdicts={"0.25": True, "0.30": False})])
    block = grade_summary(result, 0.25)
    assert isinstance(block, GradeBlock) and block.delta == 0.25
    assert isinstance(block.causes["A1.silent"], Cause)
    assert isinstance(block.findings[0], Finding)
    written = dump(block)
    assert list(written) == ["reward", "delta", "checks", "keys", "requirements", "failed",
                             "causes", "grade_s", "findings", "version_differences"]
    assert written["requirements"] == {"A1": {"q": 0.5, "s": 0.5}}
    assert written["causes"] == {"A1.silent": dump(result.checks[1].cause)}
    text = dump_json(written)
    assert dump_json(dump(GradeBlock.model_validate_json(text))) == text
    first = dump(grade_summary(result, None))
    assert first["delta"] == 0.0 and "worker" not in first and "findings" in first
    assert "findings" not in dump(grade_summary(_result(), None))


def test_the_final_result_comes_from_the_last_typed_grade_and_a_dict_is_refused():
    first, last = grade_summary(_result(), None), grade_summary(_result(reward=1.0), 0.5)
    final = run_format.final_from_grades([first, last], "grade")
    assert (final.reward, final.solved, final.source) == (1.0, False, "grade")
    assert final.requirements == {"A1": {"q": 0.5, "s": 0.5}}
    assert run_format.final_from_grades([], "grade") is None
    with pytest.raises(TypeError, match="GradeBlock"):
        run_format.final_from_grades([first, dump(last)], "grade")


def test_a_step_grade_is_read_from_a_file_step_and_a_malformed_one_is_bad_input():
    block = grade_summary(_result(), None)
    step = run_format.user_step("do it", block)
    assert step["extra"]["grade"] == dump(block)
    assert run_format.step_grade(step, "journal.jsonl") == block
    assert run_format.step_grade({"step_id": 2, "extra": {}}, "journal.jsonl") is None
    broken = {"step_id": 3, "extra": {"grade": {"reward": 0.5}}}
    with pytest.raises(BadInput, match="grade of step 3"):
        run_format.step_grade(broken, "journal.jsonl")
