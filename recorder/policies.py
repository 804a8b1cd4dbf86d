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

from alertforge.errors import BadInput
from alertforge.files import read_json

ToolCall = tuple[str, dict]

WRITE_ORDER = ("rules/slo-recording.yml", "rules/slo-alerts.yml", "rules/service-health.yml",
               "alertmanager/alertmanager.yml")


def _solution_files(task_dir: Path) -> dict[str, str]:
    root = task_dir / "solution" / "monitoring"
    if not root.is_dir():
        raise BadInput(root, "task has no solution/monitoring folder (the oracle needs it)")
    files = {p.relative_to(root).as_posix(): p.read_text(encoding="utf-8")
             for p in sorted(root.rglob("*")) if p.is_file()}
    order = {rel: i for i, rel in enumerate(WRITE_ORDER)}
    return dict(sorted(files.items(), key=lambda kv: (order.get(kv[0], len(order)), kv[0])))


def _look(files: dict[str, str], task_dir: Path) -> list[ToolCall]:
    calls: list[ToolCall] = [("list_files", {}), ("read_file", {"path": "README.md"})]
    pristine = task_dir / "environment" / "monitoring"
    for rel in files:
        if (pristine / rel).is_file():
            calls.append(("read_file", {"path": rel}))
    return calls


def oracle(task_dir: Path, seed: int) -> list[ToolCall]:
    """Read, then write every solution file, one per step, then submit."""
    files = _solution_files(task_dir)
    calls = _look(files, task_dir)
    calls += [("write_file", {"path": rel, "content": text}) for rel, text in files.items()]
    return calls + [("submit", {})]


def nop(task_dir: Path, seed: int) -> list[ToolCall]:
    """List the files and submit without changing anything."""
    return [("list_files", {}), ("read_file", {"path": "README.md"}), ("submit", {})]


def _new_alert(task_dir: Path) -> str:
    spec = read_json(task_dir / "tests" / "spec.json")
    for req in spec.get("requirements", []):
        if req.get("kind") == "alert":
            return req["alert"]
    raise BadInput(task_dir / "tests" / "spec.json", "no alert requirement for the partial policy")


def _with_mistake(text: str, alert: str, seed: int) -> str:
    from recorder.mutations import dump_doc, load_doc

    doc = load_doc(text)
    for group in doc.get("groups", []):
        for rule in group.get("rules", []):
            if rule.get("alert") == alert:
                if seed % 2 == 0:
                    rule.pop("for", None)  # pages before the condition has held
                else:
                    rule["labels"]["severity"] = "warning"  # wrong severity
    return dump_doc(doc)


def partial(task_dir: Path, seed: int) -> list[ToolCall]:
    """SLI records right, the burn alert with one mistake (seed even: no ``for``; odd: wrong
    severity), routing and inhibition left undone."""
    files = _solution_files(task_dir)
    alert = _new_alert(task_dir)
    calls = _look(files, task_dir)
    for rel in ("rules/slo-recording.yml", "rules/slo-alerts.yml"):
        if rel in files:
            text = files[rel] if "recording" in rel else _with_mistake(files[rel], alert, seed)
            calls.append(("write_file", {"path": rel, "content": text}))
    return calls + [("submit", {})]


def _mutation_context(task_dir: Path):
    from recorder.mutations import context_from_spec

    pristine_root = task_dir / "environment" / "monitoring"
    pristine = {p.relative_to(pristine_root).as_posix(): p.read_text(encoding="utf-8")
                for p in pristine_root.rglob("*") if p.is_file()}
    return context_from_spec(read_json(task_dir / "tests" / "spec.json"), pristine)


def _writes(task_dir: Path, files: dict[str, str]) -> list[ToolCall]:
    order = {rel: i for i, rel in enumerate(WRITE_ORDER)}
    ordered = sorted(files.items(), key=lambda kv: (order.get(kv[0], len(order)), kv[0]))
    return _look(files, task_dir) + [("write_file", {"path": rel, "content": text})
                                     for rel, text in ordered] + [("submit", {})]


def mutant(task_dir: Path, seed: int) -> list[ToolCall]:
    """The oracle's files with 1-3 seeded agent-style mistakes (recorder.mutations.MUTANTS)."""
    from recorder.mutations import mutate

    files, _ = mutate(_solution_files(task_dir), _mutation_context(task_dir), seed)
    return _writes(task_dir, files)


def adversary(kind: str) -> Callable[[Path, int], list[ToolCall]]:
    """The policy ``adversary:<kind>``: the oracle's files with one attack applied."""
    from recorder.mutations import ADVERSARIES

    if kind not in ADVERSARIES:
        raise BadInput(f"adversary:{kind}", f"unknown adversary; known: {', '.join(ADVERSARIES)}")
    attack, _ = ADVERSARIES[kind]

    def calls(task_dir: Path, seed: int) -> list[ToolCall]:
        return _writes(task_dir, attack(_solution_files(task_dir), _mutation_context(task_dir)))

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
