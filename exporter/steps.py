"""A run's steps as the viewer shows them: tool call, output, diff, reward, checks state."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from contract.errors import BadInput
from contract.site import SiteStep
from exporter.blame import attach_blame
from exporter.diffs import WorkspaceReplay
from exporter.episodes import attach_episode_parts
from exporter.llm_turns import llm_part
from exporter.run_folders import RunFolder
from exporter.task_folder import TaskInfo

MAX_TEXT_CHARS = 200_000
"""Kept for callers of :func:`clip_text`; the exporter no longer cuts texts (see long_text.py)."""

CHECK_STATES = frozenset("10-")


def clip_text(text: str, limit: int = MAX_TEXT_CHARS) -> str:
    """``text`` itself, or its first ``limit`` characters and a note of how much was cut."""
    if len(text) <= limit:
        return text
    return text[:limit] + f"\n[... {len(text) - limit} more characters cut by the exporter]"


def content_text(content: Any) -> str:
    """An ATIF message or observation content as plain text (text parts joined, others named)."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    parts = []
    for part in content:
        if part.get("type") == "text":
            parts.append(part.get("text") or "")
        else:
            source = part.get("source") or {}
            parts.append(f"[{part.get('type')}: {source.get('path', '')}]")
    return "\n".join(parts)


def _number(value: Any, path: Path, where: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise BadInput(path, f"{where} must be a number, got {value!r}")
    return value


def is_orphan(result: dict[str, Any], call_ids: set[str]) -> bool:
    """Whether an observation result names no call of its step: flagged ``extra.orphan`` by an
    importer, or a ``source_call_id`` that is not one of ``call_ids`` (parallel-tool-results)."""
    extra = result.get("extra") if isinstance(result.get("extra"), dict) else {}
    named = result.get("source_call_id")
    return bool(extra.get("orphan")) or (named is not None and named not in call_ids)


def _tool_and_output(step: dict[str, Any]) -> tuple[dict[str, Any] | None, str | None, list[dict]]:
    """The step's tool call, the output paired with it by ``source_call_id`` (a result without
    an id belongs to the step's only call), and its orphaned results ``[{call_id, content}]``."""
    calls = step.get("tool_calls") or []
    tool = None
    if calls:
        tool = {"name": calls[0]["function_name"], "arguments": calls[0]["arguments"]}
    call_ids = {c["tool_call_id"] for c in calls}
    observation = step.get("observation")
    output, orphans = None, []
    if observation is not None:
        mine = []
        for result in observation["results"]:
            if is_orphan(result, call_ids):
                extra = result.get("extra") if isinstance(result.get("extra"), dict) else {}
                orphans.append({"call_id": extra.get("named_call_id", result.get("source_call_id")),
                                "content": content_text(result.get("content"))})
            elif not calls or result.get("source_call_id") in (None, calls[0]["tool_call_id"]):
                mine.append(content_text(result.get("content")))
        output = "\n".join(mine)
    return tool, output, orphans


def changed_indices(previous: str, current: str) -> list[int]:
    """Catalog indices whose state differs between two check-state strings of equal length.

    Returns ``[]`` when there is no previous state (empty string) or the lengths differ.
    """
    if not previous or len(previous) != len(current):
        return []
    return [index for index, (a, b) in enumerate(zip(previous, current)) if a != b]


class _Level:
    """Running state carried from step to step: cumulative reward, checks string, failures."""

    def __init__(self) -> None:
        self.total: float = 0.0
        self.checks = ""
        self.failed: dict[str, str] = {}
        self.causes: dict[str, dict[str, Any]] = {}
        self.config: dict[str, list[dict[str, Any]]] = {}


def _alerting_grade(
    level: _Level, grade: Any, n: int, catalog_size: int, path: Path
) -> tuple[bool, float]:
    """Update ``level`` from a step's ``extra.grade``; return (graded, reward change)."""
    if not isinstance(grade, dict):
        return False, 0.0
    where = f"steps[{n}].extra.grade"
    total = _number(grade.get("reward"), path, f"{where}.reward")
    delta = grade.get("delta", total - level.total)
    reward = 0.0 if n == 0 else _number(delta, path, f"{where}.delta")
    checks = grade.get("checks", level.checks)
    if not isinstance(checks, str) or not set(checks) <= CHECK_STATES:
        raise BadInput(path, f"{where}.checks must be a string of 1, 0 and -")
    if len(checks) != catalog_size:
        raise BadInput(
            path,
            f"{where}.checks has {len(checks)} states but the catalog has {catalog_size} checks",
        )
    failed = grade.get("failed", {})
    if not isinstance(failed, dict):
        raise BadInput(path, f"{where}.failed must be an object")
    level.total, level.checks = total, checks
    level.failed = {str(key): str(value) for key, value in failed.items()}
    level.causes = recorded_causes(grade.get("causes"))
    level.config = recorded_config(grade)
    return True, reward


def recorded_config(grade: dict[str, Any]) -> dict[str, list[dict[str, Any]]]:
    """A step grade's config hygiene ``findings`` and inhibition ``version_differences``
    (untrusted run data; contract/grade.py Finding and VersionDifference) as ``{findings?:
    [{kind, where, text}], version_differences?: [{check, rule, verdicts: {version: bool}}]}``:
    entries of the wrong shape are dropped, empty lists left out (a run graded before 0.4.0
    has neither)."""
    kept: dict[str, list[dict[str, Any]]] = {}
    findings = [{key: str(item[key]) for key in ("kind", "where", "text")}
                for item in grade.get("findings") or [] if isinstance(item, dict)
                and all(isinstance(item.get(key), str) for key in ("kind", "where", "text"))]
    differences = [{"check": item["check"], "rule": item["rule"],
                    "verdicts": {str(k): v for k, v in item["verdicts"].items() if isinstance(v, bool)}}
                   for item in grade.get("version_differences") or [] if isinstance(item, dict)
                   and isinstance(item.get("check"), str) and isinstance(item.get("rule"), int)
                   and not isinstance(item.get("rule"), bool) and isinstance(item.get("verdicts"), dict)]
    if findings:
        kept["findings"] = findings
    if differences:
        kept["version_differences"] = differences
    return kept


def recorded_causes(causes: Any) -> dict[str, dict[str, Any]]:
    """A step grade's ``causes`` (untrusted run data) kept as ``{check id: {kind, summary,
    why?, facts}}``: entries that are not objects with a string kind and summary are dropped
    (a run graded before causes existed has none)."""
    if not isinstance(causes, dict):
        return {}
    kept = {}
    for key, cause in causes.items():
        if isinstance(cause, dict) and isinstance(cause.get("kind"), str) \
                and isinstance(cause.get("summary"), str):
            facts = cause.get("facts") if isinstance(cause.get("facts"), dict) else {}
            kept[str(key)] = {"kind": cause["kind"], "summary": cause["summary"], "facts": facts,
                              **({"why": str(cause["why"])} if cause.get("why") else {})}
    return kept


def _episode_env(level: _Level, env: Any, n: int, path: Path) -> tuple[bool, float]:
    """Update ``level`` from a step's ``extra.env``; return (graded, reward change)."""
    if not isinstance(env, dict):
        return False, 0.0
    where = f"steps[{n}].extra.env"
    reward = _number(env.get("reward", 0), path, f"{where}.reward")
    level.total = _number(env.get("total", level.total + reward), path, f"{where}.total")
    return True, reward


def build_steps(run: RunFolder, task: TaskInfo) -> list[SiteStep]:
    """The site's ``steps[]`` for one run (docs/formats.md "Site data"), as contract.site.SiteStep
    objects (the fields a step has none of are unset: ``model_dump(exclude_unset=True)`` is the
    step of the run file before its long texts are moved out).

    Step ``n`` is trajectory step ``n + 1`` (n = 0 is the user step: the initial state).
    ``reward`` is the step's change (0 on n = 0 and on ungraded steps), ``total`` the level
    after it (carried forward when ungraded), ``checks``/``failed``/``causes`` carried forward
    likewise, ``blame`` (alerting runs, :func:`exporter.blame.attach_blame`) at each step where
    a check turns red,
    ``changed`` the catalog indices whose state differs from step n - 1, ``config`` (only
when there is any) the latest grade's hygiene findings and version differences
(:func:`recorded_config`). Alerting runs read
    ``extra.grade`` and replay ``write_file`` calls over ``task.pristine`` into ``diff``;
    episode runs read ``extra.env`` {reward, total} and have no checks and no diffs; their
    steps also get ``env`` (:func:`exporter.episodes.attach_episode_parts`).

    Raises:
        BadInput: naming trajectory.json when a grade has non-numeric reward/delta, a checks
            string of the wrong alphabet or length for the task's catalog, or ``failed`` not an
            object.
    """
    path = run.path / "trajectory.json"
    alerting = run.summary.kind == "alerting"
    replay = WorkspaceReplay(task.pristine)
    level = _Level()
    steps = []
    for n, step in enumerate(run.trajectory["steps"]):
        extra = step.get("extra") or {}
        previous_checks = level.checks
        if alerting:
            graded, reward = _alerting_grade(level, extra.get("grade"), n, len(task.checks), path)
        else:
            graded, reward = _episode_env(level, extra.get("env"), n, path)
        tool, output, orphans = _tool_and_output(step)
        diff = None
        if alerting and tool is not None and tool["name"] == "write_file":
            diff = replay.write(tool["arguments"])
        elif alerting and isinstance(extra.get("edits"), list):
            # other file-changing tools (replace_in_file, imported shell edits) record the whole
            # new text of each file they changed (docs/formats.md, "File edits on a step")
            for edit in extra["edits"]:
                if isinstance(edit, dict) and isinstance(edit.get("path"), str):
                    content = edit.get("content") if isinstance(edit.get("content"), str) else ""
                    shown = replay.write({"path": edit["path"], "content": content})
                    diff = diff or shown
        # built from values this module checked; the run document they end in is validated
        # whole (contract.site.RunDocument) before it is written
        steps.append(SiteStep.model_construct(
            n=n,
            step_id=step["step_id"],
            source=step["source"],
            message=content_text(step.get("message")),
            tool=tool,
            output=output,
            diff=diff,
            graded=graded,
            reward=reward,
            total=level.total,
            checks=level.checks,
            changed=changed_indices(previous_checks, level.checks) if n else [],
            failed=dict(level.failed),
            causes=dict(level.causes),
            blame={},
            **({"orphans": orphans} if orphans else {}),
            **({"config": level.config} if level.config else {}),
        ))
        model_turn = llm_part(step)
        if model_turn is not None:
            steps[-1].llm = model_turn
    if not alerting:
        attach_episode_parts(steps, run.trajectory["steps"])
    else:
        attach_blame(steps, task.checks)
    return steps
