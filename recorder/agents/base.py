"""The agent protocol: what the recorder asks of any policy, and the scripted agent that
replays a fixed list of tool calls."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

ToolCall = tuple[str, dict]
"""One tool call: ``(tool name, arguments)``."""


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
