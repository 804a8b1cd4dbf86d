"""Reference policies: fixed sequences of tool calls that show what good and bad runs look like.

- ``oracle``: reads the repo, then writes the solution one file per step (every change
  request done right);
- ``nop``: looks and submits (the pristine repo, reward 0);
- ``partial``: half the change requests plus one plausible mistake (seed spec, "partial").

A reference policy is a function ``(task_dir, seed) -> list[(tool name, arguments)]``; an
interactive one (an LLM agent) is a :class:`recorder.agents.base.Agent` that decides each
call from the last observation; :func:`recorder.policies.make_agent` wraps a reference
policy's calls in a :class:`recorder.agents.base.ScriptedAgent`.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import yaml

from contract.errors import BadInput
from recorder.agents.base import ToolCall
from recorder.reference.context import (
    AM,
    Context,
    NotApplicable,
    context_for_task,
    is_rule_file,
    iter_rules,
    load_doc,
    rule_name,
)
from recorder.reference.mutations import ADVERSARIES, apply, mutate
from recorder.reference.partial import partial_files


def write_order(files: dict[str, str], ctx: Context) -> dict[str, str]:
    """``files`` in the order a person would write them: rule files with new or changed
    recording rules first, then the other rule files, then alertmanager.yml, then anything
    else; within a class, by the first requirement (spec order) whose rule the file defines.
    A file the oracle writes is placed by the oracle's version, so a mutated copy keeps its
    place; a rule file it does not write comes after its rule files."""
    names = [{r.get("alert"), *(r.get("records") or {}).values()} - {None}
             for r in ctx.spec.get("requirements", [])]

    def key(item):
        path, text = item
        if not is_rule_file(path):
            return (2 if path == AM else 3, 0, path)
        try:
            rules = [r for _, r in iter_rules(load_doc(ctx.solution.get(path, text)))]
            before = [r for _, r in iter_rules(load_doc(ctx.pristine[path]))] if path in ctx.pristine else []
        except yaml.YAMLError:
            return (1, len(names), path)
        recording = any("record" in r and r not in before for r in rules)
        defined = {rule_name(r) for r in rules}
        first = next((i for i, wanted in enumerate(names) if wanted & defined and path in ctx.solution),
                     len(names))
        return (0 if recording else 1, first, path)

    return dict(sorted(files.items(), key=key))


def _look(files: dict[str, str], task_dir: Path) -> list[ToolCall]:
    calls: list[ToolCall] = [("list_files", {}), ("read_file", {"path": "README.md"})]
    pristine = task_dir / "environment" / "monitoring"
    for rel in files:
        if (pristine / rel).is_file():
            calls.append(("read_file", {"path": rel}))
    return calls


def _writes(task_dir: Path, files: dict[str, str], ctx: Context,
            read: dict[str, str] | None = None) -> list[ToolCall]:
    """Read the existing ones of ``read`` (default ``files``), write ``files`` one per step
    (in :func:`write_order`), submit."""
    calls = _look(write_order(files if read is None else read, ctx), task_dir)
    calls += [("write_file", {"path": rel, "content": text}) for rel, text in write_order(files, ctx).items()]
    return calls + [("submit", {})]


def oracle(task_dir: Path, seed: int) -> list[ToolCall]:
    """Read, then write every solution file, one per step, then submit."""
    ctx = context_for_task(task_dir)
    return _writes(task_dir, ctx.solution, ctx)


def nop(task_dir: Path, seed: int) -> list[ToolCall]:
    """List the files and submit without changing anything."""
    return [("list_files", {}), ("read_file", {"path": "README.md"}), ("submit", {})]


def partial(task_dir: Path, seed: int) -> list[ToolCall]:
    """Half the change requests plus one plausible mistake (seed spec, "partial"): the primary
    alert with a mistake (seed even: no ``for``; odd: wrong severity) and further requirements
    in spec order until half the remaining weight is done; the rest left as in the pristine
    repo (see :mod:`recorder.reference.partial`). BadInput for a task with no alert or repair."""
    ctx = context_for_task(task_dir)
    try:
        files = partial_files(ctx, seed)
    except NotApplicable as err:
        raise BadInput(task_dir / "tests" / "spec.json", f"no partial policy: {err}") from None
    return _writes(task_dir, files, ctx, read=ctx.solution)


def mutant(task_dir: Path, seed: int) -> list[ToolCall]:
    """The oracle's files with 1-3 seeded agent-style mistakes (recorder.reference.mutations.MUTANTS)."""
    ctx = context_for_task(task_dir)
    try:
        files, _ = mutate(ctx.solution, ctx, seed)
    except NotApplicable as err:
        raise BadInput(task_dir, f"no mutant policy: {err}") from None
    return _writes(task_dir, files, ctx)


def adversary(kind: str) -> Callable[[Path, int], list[ToolCall]]:
    """The policy ``adversary:<kind>``: the oracle's files with one attack applied.

    BadInput for an unknown kind, or (when called) for a task the attack does not apply to.
    """
    if kind not in ADVERSARIES:
        raise BadInput(f"adversary:{kind}", f"unknown adversary; known: {', '.join(ADVERSARIES)}")

    def calls(task_dir: Path, seed: int) -> list[ToolCall]:
        ctx = context_for_task(task_dir)
        try:
            files = apply(kind, ctx.solution, ctx)
        except NotApplicable as err:
            raise BadInput(task_dir, f"adversary:{kind} does not apply: {err}") from None
        return _writes(task_dir, files, ctx)

    return calls


POLICIES: dict[str, Callable[[Path, int], list[ToolCall]]] = {
    "oracle": oracle,
    "nop": nop,
    "partial": partial,
    "mutant": mutant,
}


def policy(name: str) -> Callable[[Path, int], list[ToolCall]]:
    """The policy called ``name`` (BadInput naming the known ones otherwise)."""
    if name not in POLICIES:
        raise BadInput(name, f"unknown policy; known: {', '.join(POLICIES)}")
    return POLICIES[name]
