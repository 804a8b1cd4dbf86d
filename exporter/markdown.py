"""A run as Markdown a person can paste into a chat with a model or into an issue (``alertforge export RUN --markdown``).

The task, each step's tool call, output and diff (long parts cut with a note saying where
the full text is), the reward, and the checks failing at the last step with their causes and
blame (:mod:`exporter.blame`). Every text a run or a task wrote is fenced (messages, the
instruction, tool arguments, outputs, diffs) or escaped inline (:func:`contract.text.markdown_text`,
:func:`contract.text.markdown_code`): the Markdown holds no heading, link or image it did not
make. Read through the exporter's own readers (run folders, task
folders, steps); secrets masked with the same :class:`exporter.redact.Redactor` as on
publish, before any text is laid out.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from contract.site import SiteStep
from contract.task_roots import TaskIndex
from contract.text import markdown_code, markdown_text
from exporter.blame import blame_at
from exporter.export import Renaming
from exporter.redact import Redactor
from exporter.run_folders import RunFolder, read_run_folder
from exporter.steps import build_steps
from exporter.task_folder import TaskInfo, read_task

PART_CHARS = {"instruction": 4000, "message": 2000, "arguments": 2000, "output": 2000, "diff": 3000}
"""Characters kept of each long part before it is cut (the note says where the rest is)."""


def fence(text: str, info: str = "") -> str:
    """``text`` in a fenced code block whose fence is longer than any backtick run inside
    (CommonMark, "Fenced code blocks"), so no content can close it."""
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    marks = "`" * max(3, longest + 1)
    return f"{marks}{info}\n{text}\n{marks}"


def cut(text: str, part: str, where: str) -> str:
    """``text`` cut to :data:`PART_CHARS` [part] characters, with a note naming ``where`` the
    full text is when it was cut."""
    limit = PART_CHARS[part]
    if len(text) <= limit:
        return text
    return f"{text[:limit]}\n[... {len(text) - limit} more characters cut; the full text: {where}]"


def _diff_text(diff: dict[str, Any]) -> str:
    lines = [f"--- {diff['path'] if diff.get('old_exists') else '/dev/null'}", f"+++ {diff['path']}"]
    for hunk in diff.get("hunks") or []:
        lines.append(hunk["header"])
        lines += [f"{op}{text}" for op, text in hunk["lines"]]
    return "\n".join(lines)


def _where(run: RunFolder, step_id: int, site_url: str | None, n: int) -> str:
    if site_url:
        return f"{site_url.rstrip('/')}/run.html?run={run.run_id}&step={n}"
    return f"trajectory.json of run {run.run_id}, step_id {step_id}"


def _step_section(run: RunFolder, step: SiteStep, previous: str, task: TaskInfo,
                  site_url: str | None) -> list[str]:
    """The Markdown of one step: heading with reward, message, tool call, output, diff, changes."""
    n, where = step.n, _where(run, step.step_id, site_url, step.n)
    reward = f"reward {step.reward:+.4f}, total {step.total:.4f}" if step.graded else "not graded"
    out = [f"### Step {n} ({markdown_text(step.source)}; {reward})", ""]
    if step.message and step.message == task.instruction:
        out += ["(the task above)", ""]
    elif step.message:
        out += [fence(cut(step.message, "message", where), "text"), ""]
    if step.tool:
        arguments = json.dumps(step.tool["arguments"], indent=1, ensure_ascii=False)
        out += [f"Tool call {markdown_code(step.tool['name'])}:", "", fence(cut(arguments, "arguments", where), "json"), ""]
    if step.output:
        out += ["Output:", "", fence(cut(step.output, "output", where)), ""]
    if step.diff and step.diff.get("hunks"):
        out += ["Diff:", "", fence(cut(_diff_text(step.diff), "diff", where), "diff"), ""]
    ids = [c["id"] for c in task.checks]
    if step.changed and previous:
        red = [ids[i] for i in step.changed if step.checks[i] == "0"]
        green = [ids[i] for i in step.changed if step.checks[i] == "1"]
        for words, names in (("Turned red", red), ("Turned green", green)):
            if names:
                out += [f"{words}: " + ", ".join(markdown_code(c) for c in names), ""]
    return out


def _failing_section(steps: list[SiteStep], task: TaskInfo) -> list[str]:
    """Checks red at the last step: detail, cause and blame."""
    last = steps[-1]
    failing = [(i, c) for i, c in enumerate(task.checks)
               if last.checks and last.checks[i] == "0"]
    out = [f"## Failing checks at the last step ({len(failing)})", ""]
    for _, check in failing:
        cause = (last.causes or {}).get(check["id"])
        blame = blame_at(steps, len(steps) - 1, check["id"])
        out.append(f"- **{markdown_code(check['id'])}** ({markdown_text(check.get('family') or '')}): "
                   f"{markdown_text(check.get('label') or '')}")
        out.append(f"  - detail: {markdown_text(last.failed.get(check['id']) or '(no detail recorded)')}")
        if cause:
            out.append(f"  - cause ({markdown_text(cause['kind'])}): {markdown_text(cause['summary'])}")
        else:
            out.append("  - cause: none recorded (graded before causes existed)")
        if blame is None or blame["step"] == 0:
            out.append("  - blame: failing from the start (the pristine repo); no step fixed it")
        else:
            hunk = f", hunk {blame['hunk'] + 1}" if blame["hunk"] is not None else ""
            out.append(f"  - blame: step {blame['step']}{hunk} turned it red")
    return out + [""]


def run_markdown(folder: Path, *, redactor: Redactor | None, task_index: TaskIndex | None = None,
                 site_url: str | None = None) -> str:
    """The Markdown text of the run in ``folder`` (see the module docstring).

    ``redactor``: secrets masked in every string of the run and its task first (None: not
    masked); ``site_url``: the published viewer, so cut parts link to their step
    (``run.html?run=...&step=n``); without it the note names the trajectory step.

    Raises:
        BadInput: the run folder or its task cannot be read (names the file).
    """
    run = read_run_folder(Path(folder))
    task = read_task(run, task_index or TaskIndex())
    if redactor is not None:
        run, task = Renaming(redactor).redacted(run, task)
    steps = build_steps(run, task)
    summary = run.summary
    reward = summary.final.reward if summary.final is not None else None
    reward = reward if reward is not None else steps[-1].total
    lines = [f"# Run {markdown_code(run.run_id)}", "",
             f"- task: {markdown_code(task.id)} {markdown_text(task.title)}",
             (f"- policy: {markdown_text(summary.policy or '-')}; "
              f"model: {markdown_text(summary.model or '-')}; status: {markdown_text(summary.status)}"),
             f"- reward: {reward:.4f} after {len(steps) - 1} steps", ""]
    lines += ["## Task", "", fence(cut(task.instruction, "instruction", "instruction.md of the task"), "text"), ""]
    lines += ["## Steps", ""]
    previous = ""
    for step in steps:
        lines += _step_section(run, step, previous, task, site_url)
        previous = step.checks
    if summary.kind == "alerting" and task.checks:
        lines += _failing_section(steps, task)
    return "\n".join(lines).rstrip() + "\n"
