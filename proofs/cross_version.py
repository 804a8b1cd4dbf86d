"""The cross-version proof: the same workspaces graded with two tool sets, and what differs.

The gate's workspaces (oracle, no-op, partial, mutants, adversaries) and optionally every
mutant of the mutation analysis are graded with the tools this process's environment names
(``ALERTFORGE_PROMTOOL``, ``ALERTFORGE_AMTOOL``); :func:`compare` lists every check and reward
whose outcome differs between two such gradings. ``bench/cross_version.py`` runs each tool
set in its own process and prints the comparison.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

from contract.base import dump
from contract.grade import GradeResult

CASES_SKIPPED = ("determinism", "delivery")
"""Gate cases that are not a workspace to grade (delivery sends the oracle's pages)."""


def grade_all(tasks: list[Path], jobs: int) -> dict[str, dict]:
    """``{"<task>/<case>": {reward, checks: {id: passed}, syntax_errors, tools}}`` for every
    applicable gate case, graded with the tools this process's environment names."""
    from contract.processes import worker_pool
    from proofs.gate import CASES, why_not
    from recorder.reference.mutations import context_for_task

    work = [(str(task), case) for task in tasks for case in CASES
            if case not in CASES_SKIPPED and why_not(case, context_for_task(task)) is None]
    with worker_pool(jobs) as pool:
        return dict(zip((f"{Path(t).name}/{c}" for t, c in work), pool.map(_grade_one, work),
                        strict=True))


def grade_mutants(tasks: list[Path], jobs: int) -> dict[str, dict]:
    """``{"<task>/<operator>@<site>": ...}`` as :func:`grade_all`, for every mutant of the
    mutation analysis (``alertforge mutate``), one task per worker job."""
    from contract.processes import worker_pool

    graded: dict[str, dict] = {}
    with worker_pool(jobs) as pool:
        for rows in pool.map(_grade_task_mutants, [str(task) for task in tasks]):
            graded.update(rows)
    return graded


def _grade_task_mutants(task: str) -> dict[str, dict]:
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
        rows[f"{task_dir.name}/{mutant.name}"] = _row(result)
    return rows


def _row(result: GradeResult) -> dict:
    """What the comparison keeps of one grade (the JSON the worker writes)."""
    return {"reward": result.reward, "tools": dump(result.tools) if result.tools else None,
            "checks": {c.id: c.passed for c in result.checks},
            "syntax_errors": [e.file for e in result.syntax_errors]}


def _grade_one(job: tuple[str, str]) -> dict:
    from proofs.gate import graded_case
    from recorder.reference.mutations import context_for_task

    task, case = Path(job[0]), job[1]
    with tempfile.TemporaryDirectory(prefix="alertforge-xver-") as tmp:
        result = graded_case(task, case, context_for_task(task), Path(tmp))
    return _row(result)


def compare(a: dict[str, dict], b: dict[str, dict]) -> dict:
    """Checks compared, and every check (and reward) whose outcome differs between the sets."""
    differs, rewards, compared = [], [], 0
    for key in sorted(a):
        checks_a, checks_b = a[key]["checks"], b.get(key, {}).get("checks", {})
        for check_id in sorted(set(checks_a) | set(checks_b)):
            compared += 1
            if checks_a.get(check_id, "absent") != checks_b.get(check_id, "absent"):
                differs.append({"grade": key, "check": check_id, "a": checks_a.get(check_id, "absent"),
                                "b": checks_b.get(check_id, "absent")})
        if a[key]["reward"] != b.get(key, {}).get("reward"):
            rewards.append({"grade": key, "a": a[key]["reward"], "b": b.get(key, {}).get("reward")})
    return {"grades": len(a), "checks_compared": compared, "differences": differs,
            "reward_differences": rewards}
