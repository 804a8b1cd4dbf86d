"""Reference policies: fixed sequences of tool calls that show what good and bad runs look like.

- ``oracle``: reads the repo, then writes the solution one file per step (every change
  request done right);
- ``nop``: looks and submits (the pristine repo, reward 0);
- ``partial``: half the change requests plus one plausible mistake (seed spec, "partial").

A reference policy is a function ``(task_dir, seed) -> list[(tool name, arguments)]``; an
interactive one (an LLM agent) is an :class:`Agent` that decides each call from the last
observation. The recorder drives both through the :class:`Agent` interface.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import yaml

from alertforge.errors import BadInput
from recorder.context import (
    AM,
    Context,
    NotApplicable,
    context_for_task,
    is_rule_file,
    iter_rules,
    load_doc,
    rule_name,
)
from recorder.mutations import ADVERSARIES, apply, mutate
from recorder.partial import partial_files

ToolCall = tuple[str, dict]


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
    repo (see :mod:`recorder.partial`). BadInput for a task with no alert or repair."""
    ctx = context_for_task(task_dir)
    try:
        files = partial_files(ctx, seed)
    except NotApplicable as err:
        raise BadInput(task_dir / "tests" / "spec.json", f"no partial policy: {err}") from None
    return _writes(task_dir, files, ctx, read=ctx.solution)


def mutant(task_dir: Path, seed: int) -> list[ToolCall]:
    """The oracle's files with 1-3 seeded agent-style mistakes (recorder.mutations.MUTANTS)."""
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


@dataclass
class Decision:
    """One step an agent takes: a tool call, and what an LLM agent adds (message, reasoning, metrics).

    ``metrics`` follows ATIF ``Metrics`` (prompt_tokens, completion_tokens, cost_usd, ...).
    """

    name: str
    arguments: dict
    message: str = ""
    reasoning: str | None = None
    metrics: dict | None = None
    model: str | None = None
    extra: dict = field(default_factory=dict)


class Agent:
    """The recorder's view of a policy: it is told the task, then asked for one decision a step.

    Subclasses implement :meth:`decide`; :meth:`resume` rebuilds state from the steps of an
    interrupted run (default: count them). ``llm`` is True for agents whose steps are LLM
    inferences (ATIF ``llm_call_count`` 1 and metrics allowed).
    """

    llm = False
    model: str | None = None

    def begin(self, task_dir: Path, instruction: str, seed: int) -> None:
        """Called once before the first decision."""

    def decide(self, last_output: str | None) -> Decision | None:
        """The next tool call given the previous call's output (None: the run is over)."""
        raise NotImplementedError

    def resume(self, steps: list[dict]) -> None:
        """Catch up with already recorded agent steps (ATIF step dicts) before deciding again."""


class ScriptedAgent(Agent):
    """A fixed list of calls (the reference policies), resumable by position."""

    def __init__(self, calls: list[ToolCall]):
        self.calls = calls
        self.position = 0

    def decide(self, last_output: str | None) -> Decision | None:
        if self.position >= len(self.calls):
            return None
        name, arguments = self.calls[self.position]
        self.position += 1
        return Decision(name, arguments, message=_describe(name, arguments))

    def resume(self, steps: list[dict]) -> None:
        self.position = len(steps)


def _describe(name: str, arguments: dict) -> str:
    if name in ("read_file", "write_file"):
        return f"{name} {arguments.get('path')}"
    return name


AGENT_FACTORIES: dict[str, Callable[[Path, int, dict], Agent]] = {}
"""Interactive policies by name (e.g. ``llm``), registered by their modules: (task, seed, options)."""


def make_agent(name: str, task_dir: Path, seed: int, options: dict | None = None) -> Agent:
    """The agent for policy ``name``: a reference policy's script or a registered factory.

    Raises BadInput naming the known policies for an unknown name.
    """
    if name in POLICIES:
        return ScriptedAgent(POLICIES[name](task_dir, seed))
    if name.startswith("adversary:"):
        return ScriptedAgent(adversary(name.split(":", 1)[1])(task_dir, seed))
    if name in AGENT_FACTORIES:
        return AGENT_FACTORIES[name](task_dir, seed, options or {})
    known = ", ".join([*POLICIES, "adversary:<kind>", *AGENT_FACTORIES])
    raise BadInput(name, f"unknown policy; known: {known}")
