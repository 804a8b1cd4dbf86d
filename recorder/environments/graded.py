"""The graded workspace: a private copy of a task's pristine repo, graded after every change.

The one copy / act / regrade loop behind recording (``alertforge record``), the Harbor
importer (rebuilt edits replayed onto the pristine repo) and the OpenEnv environment. A
change is graded with :func:`grader.grade.grade_result` (a typed
:class:`contract.grade.GradeResult`); what a graded step stores is :func:`grade_summary`, a typed
:class:`contract.grade.GradeBlock` (docs/formats.md, ``step.extra.grade``) that becomes a dict
only where a step is written.
"""

from __future__ import annotations

import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Self

from contract.grade import GradeBlock, GradeResult, RequirementLevel
from contract.tool_versions import ToolVersions
from engine.local import GRADING_ROUTE
from grader.grade import check_states, grade_result
from recorder.environments.workspace import FILE_CHANGING_TOOLS, ToolResult, run_tool


def grade_summary(result: GradeResult, previous_reward: float | None) -> GradeBlock:
    """What a graded step stores: reward level, delta, check states, keys, failing details.

    ``result`` is the grade; ``previous_reward`` the level before this
    step (None for the initial grade, whose delta is 0). Shape (as
    :func:`contract.base.dump` writes it): ``{reward, delta, checks, keys, requirements: {id:
    {q, s}}, failed: {check id: detail}, causes: {check id: cause}, grade_s}`` (``causes``
    only names failing checks that have one), ``findings`` and ``version_differences`` as the
    GradeResult has them when it has any, and ``worker`` when a Ray worker made the grade.
    """
    reward = result.reward
    fields: dict[str, Any] = {
        "reward": reward,
        "delta": round(reward - previous_reward, 6) if previous_reward is not None else 0.0,
        "checks": check_states(result),
        "keys": dict(result.keys),
        "requirements": {r.id: RequirementLevel(q=r.q, s=r.s) for r in result.requirements},
        "failed": {c.id: c.detail for c in result.checks if c.passed is False},
        "causes": {c.id: c.cause for c in result.checks
                   if c.passed is False and c.cause is not None},
        "grade_s": result.timings.get("total_s"),
    }
    if result.findings:
        fields["findings"] = list(result.findings)
    if result.version_differences:
        fields["version_differences"] = list(result.version_differences)
    if result.worker:
        fields["worker"] = result.worker
    return GradeBlock(**fields)


@dataclass
class Graded:
    """The grade after a change: ``summary`` (:func:`grade_summary`, delta against the level
    before) and ``result`` (the GradeResult), or ``error`` when promtool/amtool failed in a
    way no check explains (then the level is unchanged)."""

    summary: GradeBlock | None = None
    result: GradeResult | None = None
    error: str | None = None


@dataclass
class CallOutcome:
    """One tool call on the graded workspace: the tool's result and, when it changed a file,
    the grade after it (``graded`` is None when nothing changed)."""

    tool: ToolResult
    graded: Graded | None = None


class GradedWorkspace:
    """A task's pristine ``environment/monitoring`` copied into a private temporary folder.

    ``root`` is the copy; ``level`` the reward level of its last grade (None before the
    first); ``grade_s`` and ``grades`` total the grading time (seconds) and count; ``tools``
    the tool versions of the last grade (None before the first). Use as a
    context manager, or call :meth:`close`, to remove the copy.

    Raises:
        OSError: the task's repo cannot be copied.
    """

    def __init__(self, task_dir: Path, prefix: str = "alertforge-run-"):
        self.task_dir = Path(task_dir)
        self._tmp = tempfile.TemporaryDirectory(prefix=prefix)
        self.root = Path(self._tmp.name) / "monitoring"
        shutil.copytree(self.task_dir / "environment" / "monitoring", self.root)
        self.level: float | None = None
        self.grade_s, self.grades = 0.0, 0
        self.tools: ToolVersions | None = None

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Remove the copy (idempotent)."""
        self._tmp.cleanup()

    def grade(self) -> Graded:
        """Grade the workspace as it is now and make that the level.

        Raises:
            RuntimeError: promtool or amtool failed in a way no check explains (the
                grader's GraderError/RoutingError).
        """
        result = getattr(GRADING_ROUTE, "grade", grade_result)(self.task_dir, self.root)
        summary = grade_summary(result, self.level)
        self.grade_s += result.timings["total_s"]
        self.grades += 1
        self.level = result.reward
        self.tools = result.tools
        return Graded(summary=summary, result=result)

    def regrade(self) -> Graded:
        """:meth:`grade`, with a grader failure returned as ``Graded(error=...)``."""
        try:
            return self.grade()
        except RuntimeError as err:
            return Graded(error=str(err))

    def call(self, name: str, arguments: Any) -> CallOutcome:
        """Run one tool call (:func:`recorder.environments.workspace.run_tool`); regrade when it
        changed a file. Bad arguments are tool errors, never raised."""
        outcome = run_tool(self.root, name, arguments)
        return CallOutcome(outcome, self.regrade() if outcome.changed else None)

    def replay(self, name: str, arguments: Any) -> None:
        """Apply a recorded file-changing call again without grading (a resumed run); other
        tools change nothing and are skipped."""
        if name in FILE_CHANGING_TOOLS:
            run_tool(self.root, name, arguments)

    def put(self, path: str, content: str | None) -> str | None:
        """Write ``content`` to ``path`` (None deletes it) without grading: an edit rebuilt
        from someone else's trajectory. Returns why it was refused (a path leaving the repo,
        a symlink on the way, over the write cap), or None."""
        parts = Path(path).parts
        if content is not None:
            outcome = run_tool(self.root, "write_file", {"path": path, "content": content})
            return outcome.output if outcome.error else None
        if Path(path).is_absolute() or ".." in parts or any(
                (self.root / Path(*parts[:i + 1])).is_symlink() for i in range(len(parts))):
            return f"deletion of {path} refused (outside the repo)"
        target = self.root / path
        if target.is_file():
            target.unlink()
        elif target.is_dir():
            shutil.rmtree(target)
        return None
