"""Grade a recorded alerting run again, against the task as it is now, from its recorded
tool calls: for runs whose actions cannot be taken again (a model's run) when the check
catalog has moved on.

Every tool call of the trajectory is applied in order to a fresh copy of the task's pristine
repo (:class:`recorder.environments.graded.GradedWorkspace`), graded after each change
exactly as recording does; messages, tool calls and the observations the agent saw stay as
recorded. run.json takes the current task reference (fingerprint, catalog release), the
current check list, the new final grade and a ``regrade`` block saying what was re-graded
against what; the old grades are dropped.
"""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

from contract.base import dump, parse
from contract.errors import BadInput
from contract.files import read_json, write_json
from contract.grade import GradeBlock
from contract.run import RunSummary
from recorder import run_format
from recorder.environments.graded import GradedWorkspace
from recorder.record import task_ref


def _regraded_steps(steps: list[dict[str, Any]], workspace: GradedWorkspace
                    ) -> tuple[list[dict[str, Any]], list[GradeBlock]]:
    """The recorded ``steps`` graded again on ``workspace`` (copies; old grades dropped) and
    their new grades, typed, in step order."""
    out, grades = [], []
    for step in copy.deepcopy(steps):
        extra = step.get("extra") if isinstance(step.get("extra"), dict) else {}
        for key in ("grade", "grade_error"):
            extra.pop(key, None)
        if step.get("source") == "user":
            grades.append(workspace.grade().summary)
            extra["grade"] = dump(grades[-1])
        for call in step.get("tool_calls") or []:
            graded = workspace.call(call["function_name"], call["arguments"]).graded
            if graded is not None and graded.error is not None:
                extra["grade_error"] = graded.error
            elif graded is not None:
                grades.append(graded.summary)
                extra["grade"] = dump(grades[-1])
        if extra:
            step["extra"] = extra
        out.append(step)
    return out, grades


def regrade_run(run_dir: Path, task_dir: Path, out_dir: Path, *, note: str = "") -> Path:
    """Re-grade the alerting run in ``run_dir`` against the task at ``task_dir`` into
    ``out_dir/<run id>/`` (run.json and trajectory.json, each written atomically; ``out_dir``
    may be ``run_dir``'s parent, to re-grade in place). ``note`` is kept in ``regrade.note``
    (say where the actions were taken). Returns the written run folder.

    ``regrade``: ``{catalog_version, fingerprint, recorded_fingerprint,
    recorded_catalog_version, reward, solved, note}``; ``final.source`` is ``regrade``.

    Raises:
        BadInput: run.json or trajectory.json missing or malformed, a run that is not an
            alerting run, or a run of another task than ``task_dir``'s.
        RuntimeError: promtool or amtool failed on the pristine repo (no check explains it).
    """
    run_dir, task_dir = Path(run_dir), Path(task_dir).resolve()
    summary = parse(RunSummary, read_json(run_dir / "run.json"), run_dir / "run.json", "run summary")
    if summary.kind != "alerting":
        raise BadInput(run_dir / "run.json", f"a {summary.kind} run has no checks to re-grade")
    trajectory = read_json(run_dir / "trajectory.json")
    if not isinstance(trajectory, dict) or not isinstance(trajectory.get("steps"), list):
        raise BadInput(run_dir / "trajectory.json", "not an ATIF trajectory with steps")
    task, catalog = task_ref(task_dir)
    if task.id != summary.task.id:
        raise BadInput(task_dir, f"this is task {task.id}; the run {summary.run_id} is of {summary.task.id}")
    with GradedWorkspace(task_dir) as workspace:
        steps, grades = _regraded_steps(trajectory["steps"], workspace)
        tools = workspace.tools
    final = run_format.final_from_grades(grades, "regrade")
    regrade = {"catalog_version": task.catalog_version, "fingerprint": task.fingerprint,
               "recorded_fingerprint": summary.task.fingerprint,
               "recorded_catalog_version": summary.task.catalog_version,
               "reward": final.reward if final else None, "solved": final.solved if final else None,
               **({"note": note} if note else {})}
    updated = summary.model_copy(update={
        "task": task.model_copy(update={"dir": summary.task.dir}), "checks": catalog.check_refs(),
        "requirements": catalog.requirement_refs(), "final": final, "regrade": regrade,
        "tools": tools or summary.tools})
    folder = Path(out_dir) / summary.run_id
    folder.mkdir(parents=True, exist_ok=True)
    run_format.validate({**trajectory, "steps": steps})
    write_json(folder / "trajectory.json", {**trajectory, "steps": steps})
    write_json(folder / "run.json", dump(updated))
    return folder
