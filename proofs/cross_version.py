"""The cross-version proof: the same workspaces graded with two tool sets, and what differs.

The gate's workspaces (oracle, no-op, partial, mutants, adversaries) and optionally every
mutant of the mutation analysis are graded with the tools this process's environment names
(``ALERTFORGE_PROMTOOL``, ``ALERTFORGE_AMTOOL``); :func:`compare` lists every check and reward
whose outcome differs between two such gradings. ``bench/cross_version.py`` runs each tool
set in its own process and prints the comparison.
"""

from __future__ import annotations

import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from contract.base import dump
from contract.grade import GradeResult

CASES_SKIPPED = ("determinism", "delivery")
"""Gate cases that are not a workspace to grade (delivery sends the oracle's pages)."""


@dataclass(frozen=True)
class ToolSetGrade:
    """What the comparison keeps of one grade with one tool set: the ``reward``, each check's
    outcome (``checks``: ``{check id: passed}``), the files that did not load
    (``syntax_errors``) and the tool versions that graded it (``tools``, contract.tool_versions
    as JSON values; None when the grade names none). Between a tool set's process and the
    comparison it is JSON values (:meth:`to_json`, :meth:`from_json`)."""

    reward: float
    checks: dict[str, bool]
    syntax_errors: list[str]
    tools: dict[str, Any] | None = None

    @classmethod
    def of(cls, result: GradeResult) -> ToolSetGrade:
        """The grade ``result`` (grader.grade.grade_result) as the comparison keeps it."""
        return cls(result.reward, {c.id: c.passed for c in result.checks},
                   [e.file for e in result.syntax_errors], dump(result.tools) if result.tools else None)

    def to_json(self) -> dict[str, Any]:
        """``{reward, checks, syntax_errors, tools}``."""
        return {"reward": self.reward, "checks": dict(self.checks), "syntax_errors": list(self.syntax_errors),
                "tools": self.tools}

    @classmethod
    def from_json(cls, value: Any) -> ToolSetGrade:
        """:meth:`to_json`'s values read back (a tool set's output file).

        Raises:
            TypeError: ``value`` is not of that shape.
        """
        if not (isinstance(value, dict) and isinstance(value.get("reward"), (int, float))
                and isinstance(value.get("checks"), dict) and isinstance(value.get("syntax_errors"), list)):
            raise TypeError("not a tool set's grade: {reward, checks, syntax_errors, tools}")
        return cls(float(value["reward"]), {str(k): bool(v) for k, v in value["checks"].items()},
                   [str(file) for file in value["syntax_errors"]], value.get("tools"))


def grade_all(tasks: list[Path], jobs: int) -> dict[str, ToolSetGrade]:
    """``{"<task>/<case>": ToolSetGrade}`` for every applicable gate case, graded with the
    tools this process's environment names."""
    from contract.processes import worker_pool
    from proofs.gate import CASES, why_not
    from recorder.reference.mutations import context_for_task

    work = [(str(task), case) for task in tasks for case in CASES
            if case not in CASES_SKIPPED and why_not(case, context_for_task(task)) is None]
    with worker_pool(jobs) as pool:
        return dict(zip((f"{Path(t).name}/{c}" for t, c in work), pool.map(_grade_one, work),
                        strict=True))


def grade_mutants(tasks: list[Path], jobs: int) -> dict[str, ToolSetGrade]:
    """``{"<task>/<operator>@<site>": ...}`` as :func:`grade_all`, for every mutant of the
    mutation analysis (``alertforge mutate``), one task per worker job."""
    from contract.processes import worker_pool

    graded: dict[str, ToolSetGrade] = {}
    with worker_pool(jobs) as pool:
        for rows in pool.map(_grade_task_mutants, [str(task) for task in tasks]):
            graded.update(rows)
    return graded


def _grade_task_mutants(task: str) -> dict[str, ToolSetGrade]:
    from grader.grade import grade_result
    from proofs.mutation.analysis import write_workspace
    from proofs.mutation.operators import mutants
    from proofs.mutation.table import operator_table
    from recorder.reference.mutations import context_for_task

    task_dir = Path(task)
    found, _ = mutants(context_for_task(task_dir), list(operator_table().values()))
    rows = {}
    for mutant in found:
        with tempfile.TemporaryDirectory(prefix="alertforge-xver-") as tmp:
            result = grade_result(task_dir, write_workspace(mutant.files, Path(tmp) / "monitoring"))
        rows[f"{task_dir.name}/{mutant.name}"] = ToolSetGrade.of(result)
    return rows


def _grade_one(job: tuple[str, str]) -> ToolSetGrade:
    from proofs.gate import graded_case
    from recorder.reference.mutations import context_for_task

    task, case = Path(job[0]), job[1]
    with tempfile.TemporaryDirectory(prefix="alertforge-xver-") as tmp:
        result = graded_case(task, case, context_for_task(task), Path(tmp))
    return ToolSetGrade.of(result)


def compare(a: dict[str, ToolSetGrade], b: dict[str, ToolSetGrade]) -> dict[str, Any]:
    """Checks compared, and every check (and reward) whose outcome differs between the sets:
    ``{grades, checks_compared, differences: [{grade, check, a, b}], reward_differences:
    [{grade, a, b}]}`` (``"absent"`` for a check one set did not grade, a reward of None for a
    grade set B lacks)."""
    differs, rewards, compared = [], [], 0
    for key in sorted(a):
        other = b.get(key)
        checks_a, checks_b = a[key].checks, other.checks if other is not None else {}
        for check_id in sorted(set(checks_a) | set(checks_b)):
            compared += 1
            if checks_a.get(check_id, "absent") != checks_b.get(check_id, "absent"):
                differs.append({"grade": key, "check": check_id, "a": checks_a.get(check_id, "absent"),
                                "b": checks_b.get(check_id, "absent")})
        reward_b = other.reward if other is not None else None
        if a[key].reward != reward_b:
            rewards.append({"grade": key, "a": a[key].reward, "b": reward_b})
    return {"grades": len(a), "checks_compared": compared, "differences": differs,
            "reward_differences": rewards}
