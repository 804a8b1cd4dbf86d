"""The agent protocol: what the recorder asks of any policy, and the scripted agent that
replays a fixed list of tool calls."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

ToolCall = tuple[str, dict]
"""One tool call: ``(tool name, arguments)``."""


@dataclass
class Decision:
    """One step an agent takes: a tool call, and what an LLM agent adds (message, reasoning, metrics).

    For an action episode ``name`` is the Action's ``action_type`` and ``arguments`` its
    other fields. ``llm`` is True when an LLM inference produced the step (ATIF
    ``llm_call_count`` 1, metrics allowed); ``metrics`` follows ATIF ``Metrics``
    (prompt_tokens, completion_tokens, cost_usd, ...); ``extra`` goes into the step's extra.
    """

    name: str
    arguments: dict
    message: str = ""
    reasoning: str | None = None
    metrics: dict | None = None
    model: str | None = None
    extra: dict = field(default_factory=dict)
    llm: bool = False


class Agent:
    """The recorder's view of a policy, for alerting tasks and action episodes alike.

    The recorder calls :meth:`resume` once with the run's steps so far (ATIF dicts; step 1
    is the user step holding the instruction), then :meth:`decide` for each agent step and
    :meth:`observe` with each step once it is recorded. ``model`` names the model of an LLM
    agent (None for scripted ones).
    """

    model: str | None = None

    def resume(self, steps: list[dict]) -> None:
        """Take up the run's recorded steps (step 1 at least) before deciding again."""

    def decide(self, observation: Any, index: int) -> Decision | None:
        """Agent step ``index`` (0-based) given the latest observation (alerting: the previous
        tool call's output text, None before the first; episodes: the environment's
        observation dict); None when the agent is done."""
        raise NotImplementedError

    def observe(self, step: dict) -> None:
        """Called with each recorded step (ATIF dict) after the environment answered."""


class ScriptedAgent(Agent):
    """A fixed list of calls (the reference policies); call ``index`` is the list's, so a
    resumed run takes up where it was."""

    def __init__(self, calls: list[ToolCall]):
        self.calls = calls

    def decide(self, observation: Any, index: int) -> Decision | None:
        """Call ``index`` of the list, None past its end."""
        if index >= len(self.calls):
            return None
        name, arguments = self.calls[index]
        return Decision(name, arguments, message=_describe(name, arguments))


def _describe(name: str, arguments: dict) -> str:
    if name in ("read_file", "write_file"):
        return f"{name} {arguments.get('path')}"
    return name
