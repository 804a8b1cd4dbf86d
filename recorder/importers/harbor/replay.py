"""A trial's tool calls replayed: edits rebuilt, put onto the pristine repo, graded after each.

The edits come from :class:`~recorder.importers.shell.tracker.FileTracker`; when the
trial's task is known they go into a
:class:`~recorder.environments.graded.GradedWorkspace` (the copy / apply / regrade loop
recording uses too), which is graded once pristine and again after every step that
changed a repo file. What each step did is stored in its ``extra``: ``edits``,
``replay`` (lossy reasons and notes), ``changed_files``, then ``grade`` or, when the
grader failed, ``grade_error`` (docs/formats.md, "Imported runs").
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from contract.base import dump
from contract.grade import GradeBlock
from contract.tool_versions import ToolVersions
from contract.untrusted import Tree
from recorder.environments.graded import GradedWorkspace
from recorder.importers.harbor.normalize import message_text
from recorder.importers.shell.effect import CallEffect
from recorder.importers.shell.files import DEFAULT_CWD
from recorder.importers.shell.tracker import FileTracker, prompt_cwd


@dataclass
class Replayed:
    """What replaying a trial's steps found: ``replay`` ("exact", "approximate" when a step
    was lossy, or "terminal-only" as given), ``lossy_steps`` ``[{step_id, source_step_id,
    tool, reasons}]``, ``notes`` for the run, the grading time (s) and count, and the tool
    versions of the grades (None when nothing was graded); ``step_grades`` the grade each
    graded step stores in ``extra.grade``, by the step's position in ``steps``."""

    replay: str
    lossy_steps: list[dict] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    grade_s: float = 0.0
    grades: int = 0
    tools: ToolVersions | None = None
    step_grades: dict[int, GradeBlock] = field(default_factory=dict)


def pristine_files(task_dir: Path) -> dict[str, str]:
    """The text of every file of the task's pristine repo, by path inside the repo."""
    tree, base = Tree(task_dir), "environment/monitoring"
    return {rel[len(base) + 1:]: tree.read_text(rel, errors="replace") for rel in tree.files(base)}


def starting_directory(steps: list[dict]) -> str | None:
    """The working directory a terminal prompt shows before the first command runs: in the
    messages up to the first tool call, or in that call's output (which echoes its prompt)."""
    for step in steps:
        texts = [message_text(step.get("message"))]
        if step.get("tool_calls"):
            texts = [message_text(r.get("content")) for r in
                     (step.get("observation") or {}).get("results", [])] + texts
        found = next((prompt_cwd(t) for t in texts if prompt_cwd(t)), None)
        if found or step.get("tool_calls"):
            return found
    return None


def replay_steps(steps: list[dict], task_dir: Path | None, replay: str,
                 has_trajectory: bool) -> Replayed:
    """Replay every tool call of ``steps`` (changed in place, see the module docstring).

    ``replay`` is the label so far ("exact", or "terminal-only": nothing is graded then);
    with a ``task_dir`` the first step stores the pristine grade.

    Raises:
        RuntimeError: the pristine repo itself cannot be graded (promtool or amtool failed).
        OSError: the task's repo cannot be copied.
    """
    done = Replayed(replay)
    if task_dir and replay != "terminal-only":
        with GradedWorkspace(task_dir, prefix="alertforge-import-") as workspace:
            done.step_grades[0] = workspace.grade().summary
            steps[0].setdefault("extra", {})["grade"] = dump(done.step_grades[0])
            repo_files = pristine_files(task_dir)
            edited_any = _replay_calls(steps, _tracker(steps, repo_files, True), workspace, done)
            done.grade_s, done.grades = workspace.grade_s, workspace.grades
            done.tools = workspace.tools
    else:
        repo_files = pristine_files(task_dir) if task_dir else {}
        edited_any = _replay_calls(steps, _tracker(steps, repo_files, bool(task_dir)), None, done)
    if has_trajectory and not edited_any:
        done.notes.append("no file edit found in the tool calls")
    if task_dir:
        outside = sorted({e["path"] for s in steps for e in (s.get("extra") or {}).get("edits", [])
                          if e["path"].startswith("/") and any(
                              e["path"].endswith("/" + p) for p in repo_files)})
        if outside:
            done.notes.append(f"edits of {', '.join(outside[:5])} look like repo files but are not "
                              "under a monitoring/ folder: not graded")
    return done


def _tracker(steps: list[dict], repo_files: dict[str, str], repo_known: bool) -> FileTracker:
    return FileTracker(repo_files, repo_known=repo_known,
                       cwd=starting_directory(steps) or DEFAULT_CWD)


def _replay_calls(steps: list[dict], tracker: FileTracker, workspace: GradedWorkspace | None,
                  done: Replayed) -> bool:
    """Every call through ``tracker``, recorded on its step and, with a workspace, graded
    (but those of copied-context steps of a continuation file: they repeat the segment
    before, already replayed); returns whether any call edited a file."""
    edited_any = False
    for position, step in enumerate(steps):
        if (step.get("extra") or {}).get("copied_from_continuation"):
            continue  # its calls were replayed where the earlier segment holds them
        for call in step.get("tool_calls") or []:
            effect = tracker.apply(call["function_name"], call["arguments"])
            extra = step.setdefault("extra", {})
            _record(extra, effect)
            edited_any = edited_any or bool(effect.edits)
            if effect.lossy:
                done.replay = "approximate"
                done.lossy_steps.append({"step_id": step["step_id"], "source_step_id":
                                         extra.get("source_step_id"), "tool": call["function_name"],
                                         "reasons": effect.lossy})
            grade = _grade_edits(workspace, extra, effect) if workspace is not None else None
            if grade is not None:
                done.step_grades[position] = grade
    return edited_any


def _record(extra: dict, effect: CallEffect) -> None:
    """A call's edits and replay reasons, into its step's ``extra``."""
    if effect.edits:
        extra["edits"] = [{"path": e.path, "content": e.content} if e.content is not None
                          else {"path": e.path, "content": None, "deleted": True}
                          for e in effect.edits]
    if effect.lossy or effect.notes:
        extra["replay"] = {"lossy": effect.lossy, "notes": effect.notes}


def _grade_edits(workspace: GradedWorkspace, extra: dict, effect: CallEffect) -> GradeBlock | None:
    """Put the call's repo edits into the workspace and regrade when one landed; an edit the
    workspace refuses is a replay note, a grader failure ``grade_error`` (no grade kept).
    Returns the grade stored in ``extra.grade`` (None when there is no new one)."""
    changed = []
    for edit in effect.edits:
        if edit.path.startswith("/") or edit.path == ".":
            continue
        problem = workspace.put(edit.path, edit.content)
        if problem:
            extra.setdefault("replay", {"lossy": [], "notes": []})["notes"].append(problem)
        else:
            changed.append(edit.path)
    if changed:
        extra["changed_files"] = changed
        graded = workspace.regrade()
        if graded.error is not None:
            extra["grade_error"] = graded.error
        else:
            extra["grade"] = dump(graded.summary)
            return graded.summary
    return None
