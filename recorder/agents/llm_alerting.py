"""Policy ``llm``: an agent for any OpenAI-compatible chat-completions endpoint (``openai`` package).

The model sees the task's instruction and the tools of :mod:`recorder.environments.workspace` as OpenAI
function definitions (:data:`TOOL_SPECS`); each tool call it makes is one recorded step. The
endpoint, settings and per-step metrics are those of :mod:`recorder.agents.llm_endpoint`;
the turns are :class:`recorder.agents.conversation.Conversation`'s. ``step.extra.llm`` records ``{turn, tool_call_id, model}``: the model
turn a call came from and the endpoint's own call id, which is what :meth:`LLMAgent.resume`
needs to rebuild the conversation of an interrupted run from its recorded steps.

When one model turn asks for several tool calls, each becomes its own step; the first
carries the turn's message, reasoning and metrics (``llm_call_count`` 1), the others are
dispatched without a new inference (``llm_call_count`` 0). A turn with no tool call is
answered with one reminder to use the tools; a second one in a row ends the run with an
implicit ``submit`` (``extra.llm.implicit_submit``), and so does an endpoint that refuses the
prompt as longer than its context (``extra.llm.stopped``: the error as sent). Replies that
are not what OpenAI sends (tool calls written in the text, arguments that are not JSON, no
usage, a refusal, an empty or truncated reply) are recorded as they came: the codes in
``extra.llm.quirks`` and the raw message in ``extra.llm.raw_reply`` / ``raw_replies``
(:mod:`recorder.agents.llm_replies`).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from recorder.agents.base import Agent, Decision
from recorder.agents.conversation import Conversation, Turn
from recorder.agents.llm_endpoint import LLMSettings, content_text, parse_arguments, settings_from

REMINDER = ("Use the tools to work on the repository. Call submit when every change request "
            "is done.")

SYSTEM_PROMPT = """You are an SRE who owns this company's Prometheus alerting rules and \
Alertmanager routing as code. The monitoring repository is your workspace: paths are \
relative to its root (rules/..., alertmanager/alertmanager.yml, README.md).

Work only through the tools. Read the README and the files you change first, keep every \
rule, receiver, route and inhibit rule that a change request does not mention exactly as it \
is, check your work with run_checks and route_test, and call submit when you are done."""


def _function(name: str, description: str, properties: dict, required: list[str]) -> dict:
    return {"type": "function", "function": {
        "name": name, "description": description,
        "parameters": {"type": "object", "properties": properties, "required": required,
                       "additionalProperties": False}}}


_PATH = {"type": "string", "description": "path relative to the repository root"}
TOOL_SPECS: list[dict] = [
    _function("list_files", "List every file in the repository.", {}, []),
    _function("read_file", "Read a file's text.", {"path": _PATH}, ["path"]),
    _function("write_file", "Create or replace a file with the given content.",
              {"path": _PATH, "content": {"type": "string", "description": "the whole new file"}},
              ["path", "content"]),
    _function("replace_in_file",
              "Replace text in a file. `old` must occur exactly once unless `all` is true.",
              {"path": _PATH, "old": {"type": "string"}, "new": {"type": "string"},
               "all": {"type": "boolean", "description": "replace every occurrence"}},
              ["path", "old", "new"]),
    _function("run_checks",
              "Check the repository: promtool check rules on every rule file, amtool "
              "check-config on alertmanager/alertmanager.yml, and promtool test rules on any "
              "example test file in the repository.", {}, []),
    _function("route_test",
              "Which Alertmanager receivers an alert with these labels is routed to "
              "(amtool config routes test).",
              {"labels": {"type": "object", "additionalProperties": {"type": "string"},
                          "description": "label name -> value, e.g. {\"team\": \"payments\"}"}},
              ["labels"]),
    _function("submit", "Finish: the repository is ready to be graded.", {}, []),
]
"""OpenAI function definitions of the tools in :mod:`recorder.environments.workspace`, in the order shown."""


class LLMAgent(Agent):
    """One conversation with a chat-completions endpoint; each tool call it asks for is a step.

    ``client`` is an ``openai.OpenAI`` (made from ``settings`` when not given); ``seed`` is
    passed to the endpoint.
    """

    def __init__(self, settings: LLMSettings, client: Any = None, seed: int | None = 0):
        self.settings = settings
        self.model = settings.model
        self.conversation = Conversation(settings, TOOL_SPECS, SYSTEM_PROMPT, REMINDER, seed, client)
        self.queue: list[Decision] = []
        self.awaiting: str | None = None  # the call id whose output goes into the next message

    @property
    def endpoint(self) -> dict | None:
        """The server as it described itself (run.json ``endpoint``), once resumed."""
        return self.conversation.endpoint

    def resume(self, steps: list[dict]) -> None:
        """Start the conversation from step 1 (the instruction) and rebuild it from the
        recorded agent steps after it (ATIF dicts, in order).

        Raises:
            BadInput: the steps were recorded with another model (``extra.llm.model``).
        """
        self.conversation.start(content_text(steps[0].get("message")))
        self.conversation.replay(steps[1:], _arguments_text,
                                 lambda step: content_text(_first_result(step).get("content")))
        self.queue, self.awaiting = [], None

    def decide(self, observation: str | None, index: int) -> Decision | None:
        """The next tool call: a queued call of the current turn, or a new model turn;
        ``observation`` (the previous call's output) answers the previous call first.

        Raises:
            LLMError: the endpoint failed or replied with something that is not a completion.
        """
        if self.awaiting is not None:
            self.conversation.answer(self.awaiting, observation or "")
            self.awaiting = None
        if not self.queue:
            self.queue = self._decisions(self.conversation.ask())
        decision = self.queue.pop(0)
        self.awaiting = decision.extra["llm"]["tool_call_id"]
        return decision

    def _decisions(self, turn: Turn) -> list[Decision]:
        """One decision per tool call of ``turn``; an implicit ``submit`` when it has none."""
        if not turn.calls:  # twice no tool call, or the endpoint refused to go on
            info = turn.info(f"implicit_submit_{turn.number}", self.settings, True)
            info["implicit_submit"] = True
            if turn.replies:  # the first one was answered with the reminder (replay)
                info["replies_without_tool_call"] = turn.replies[:1]
            return [Decision("submit", {}, message=turn.text, metrics=turn.metrics, model=turn.model,
                             extra={"llm": info}, llm=turn.metrics is not None)]
        decisions = []
        for index, call in enumerate(turn.calls):
            first = index == 0
            decisions.append(Decision(
                call["name"], parse_arguments(call["arguments"]),
                message=turn.text if first else "",
                reasoning=turn.reasoning if first else None,
                metrics=turn.metrics if first else None,
                model=turn.model if first else None,
                extra={"llm": turn.info(call["id"], self.settings, first)}, llm=first))
        return decisions


def _first_result(step: dict) -> dict:
    return ((step.get("observation") or {}).get("results") or [{}])[0]


def _arguments_text(call: dict, info: dict) -> str:
    """A recorded call's arguments as the model sent them (text kept when not a JSON object)."""
    arguments = call.get("arguments") or {}
    if list(arguments) == ["invalid_arguments"]:
        return arguments.get("invalid_arguments")
    return json.dumps(arguments)


def make_llm_agent(task_dir: Path, seed: int, options: dict) -> LLMAgent:
    """The ``llm`` policy's factory (see :func:`recorder.agents.llm_endpoint.settings_from`
    for ``options``)."""
    return LLMAgent(settings_from(options), seed=seed)
