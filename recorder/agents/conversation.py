"""The one LLM turn loop: a tool-calling conversation, asked turn by turn and rebuilt from
recorded steps. Both ``llm`` policies (alerting tasks and action episodes) are built on it.

A turn is one chat completion that asks for tool calls. A reply without a tool call is
answered once with a reminder (its metrics are summed into the turn's, the reply kept in
``Turn.replies``); a second in a row ends the turn with no calls. Recorded steps carry
``extra.llm`` ``{turn, tool_call_id, model, replies_without_tool_call?}``, which is what
:meth:`Conversation.replay` needs to rebuild the same messages after an interruption.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from contract.errors import BadInput
from recorder.agents.llm_endpoint import (
    ContextLengthExceeded,
    LLMSettings,
    add_metrics,
    chat_completion,
    content_text,
    open_client,
)
from recorder.agents.llm_replies import read_reply
from recorder.agents.llm_server import describe_endpoint


@dataclass
class Turn:
    """One model turn: the tool calls it asked for (``[]``: it twice answered without one, or
    the endpoint refused the turn: ``stopped``).

    ``calls`` are ``{"id", "name", "arguments"}`` with the arguments as the model sent them
    (usually JSON text); ``metrics`` are ATIF Metrics summed over the turn's inferences;
    ``model`` is the name the endpoint answered with; ``replies`` the texts of replies
    without a tool call that came before. ``quirks`` are the reply quirks of the turn
    (:data:`recorder.agents.llm_replies.QUIRKS`), ``raw`` the raw message of the reply the
    calls came from when it had a quirk, ``raw_replies`` those of the replies without a tool
    call, ``stopped`` ``{reason, status, error}`` when the endpoint refused to go on
    (``context_length_exceeded``: the error object as sent).
    """

    number: int
    calls: list[dict[str, Any]]
    text: str
    reasoning: str | None
    metrics: dict | None
    model: str | None
    replies: list[str] = field(default_factory=list)
    quirks: list[str] = field(default_factory=list)
    raw: dict | None = None
    raw_replies: list[dict] = field(default_factory=list)
    stopped: dict | None = None

    def info(self, call_id: str, settings: LLMSettings, first: bool) -> dict[str, Any]:
        """``extra.llm`` of the step for call ``call_id`` (the turn's quirks and raw replies
        on its first step only)."""
        info: dict[str, Any] = {"turn": self.number, "tool_call_id": call_id, "model": settings.model}
        if first:
            for key, value in (("replies_without_tool_call", self.replies), ("quirks", self.quirks),
                               ("raw_reply", self.raw), ("raw_replies", self.raw_replies),
                               ("stopped", self.stopped)):
                if value:
                    info[key] = value
        return info


class Conversation:
    """The messages of one conversation with a chat-completions endpoint, and its turn count.

    ``tools`` are OpenAI function definitions; ``reminder`` the user message sent after a
    reply without a tool call; ``seed`` is passed to the endpoint. ``client`` is an
    ``openai.OpenAI`` (made from ``settings`` when not given).
    """

    def __init__(self, settings: LLMSettings, tools: list[dict], system_prompt: str, reminder: str,
                 seed: int | None, client: Any = None):
        self.settings = settings
        self.tools = tools
        self.system_prompt = system_prompt
        self.reminder = reminder
        self.seed = seed
        self.client = client if client is not None else open_client(settings)
        self.messages: list[dict[str, Any]] = []
        self.turn = 0
        self.endpoint: dict[str, Any] | None = None

    def describe_endpoint(self) -> dict[str, Any]:
        """Ask the server what it is (:func:`recorder.agents.llm_server.describe_endpoint`);
        kept in ``endpoint``."""
        self.endpoint = describe_endpoint(self.settings.base_url, self.settings.api_key,
                                          min(self.settings.timeout_s, 30.0))
        return self.endpoint

    def start(self, user_text: str) -> None:
        """Begin anew: the system prompt and the first user message (and ask the server
        what it is, :meth:`describe_endpoint`)."""
        self.describe_endpoint()
        self.messages = [{"role": "system", "content": self.system_prompt},
                         {"role": "user", "content": user_text}]

    def answer(self, call_id: str | None, content: str) -> None:
        """The result of tool call ``call_id``, as the next tool message."""
        self.messages.append({"role": "tool", "tool_call_id": call_id, "content": content})

    def replay(self, steps: list[dict[str, Any]], arguments_text: Callable[[dict, dict], str],
               result_text: Callable[[dict], str]) -> None:
        """Rebuild the messages after :meth:`start` from recorded agent steps (ATIF dicts).

        Steps of one model turn (same ``extra.llm.turn``) become one assistant message with
        all their tool calls, each followed by its tool message. ``arguments_text(call,
        info)`` gives a recorded call's arguments as the model sent them; ``result_text(step)``
        the tool message the model read.

        Raises:
            BadInput: the steps were recorded with another model (``extra.llm.model``).
        """
        current_turn, assistant = None, None
        for step in steps:
            info = (step.get("extra") or {}).get("llm") or {}
            recorded = info.get("model")
            if recorded and recorded != self.settings.model:
                raise BadInput("--model", f"this run was recorded with model {recorded!r}, not "
                               f"{self.settings.model!r}: pass --fresh or another --out")
            for reply in info.get("replies_without_tool_call") or []:
                self.messages += [{"role": "assistant", "content": reply},
                                  {"role": "user", "content": self.reminder}]
            call = (step.get("tool_calls") or [{}])[0]
            call_id = info.get("tool_call_id") or call.get("tool_call_id")
            turn = info.get("turn")
            if assistant is None or turn is None or turn != current_turn:
                assistant = {"role": "assistant", "content": content_text(step.get("message")),
                             "tool_calls": []}
                self.messages.append(assistant)
                current_turn = turn
            assistant["tool_calls"].append({"id": call_id, "type": "function", "function": {
                "name": call.get("function_name"), "arguments": arguments_text(call, info)}})
            self.answer(call_id, result_text(step))
            if isinstance(turn, int) and not isinstance(turn, bool):
                self.turn = max(self.turn, turn)

    def ask(self) -> Turn:
        """One model turn (reminding the model once if it answers without a tool call).

        Tool calls written in the reply's text count as calls (quirk
        ``tool_calls_in_content``); calls without an id get ``turn<N>_call<K>``. An endpoint
        that refuses the prompt as too long ends the conversation: the turn has no calls and
        ``stopped`` says why.

        Raises:
            LLMError: the endpoint failed or replied with something that is not a completion.
        """
        self.turn += 1
        turn = Turn(self.turn, [], "", None, None, None)
        names = {tool["function"]["name"] for tool in self.tools}
        for attempt in range(2):
            try:
                message, more = chat_completion(self.client, self.settings, self.messages,
                                                self.tools, self.seed)
            except ContextLengthExceeded as err:
                turn.stopped = {"reason": "context_length_exceeded", "status": err.status,
                                "error": err.error}
                return turn
            turn.metrics = add_metrics(turn.metrics, more)
            turn.model = message.get("_model")
            reply = read_reply(message, message.get("_finish_reason"),
                               message.get("_usage_reported", True), names, self.turn)
            turn.quirks += [quirk for quirk in reply.quirks if quirk not in turn.quirks]
            turn.text, turn.reasoning = reply.text, reply.reasoning
            if reply.calls:
                turn.calls, turn.raw = reply.calls, reply.raw
                break
            turn.replies.append(reply.text)
            if reply.raw:
                turn.raw_replies.append(reply.raw)
            if attempt == 0:
                self.messages += [{"role": "assistant", "content": reply.text},
                                  {"role": "user", "content": self.reminder}]
        else:
            self.messages.append({"role": "assistant", "content": turn.text})
            return turn
        # content "" and not None: llama-cpp-python answers an assistant message whose
        # content is null (what it sends itself with tool calls) with HTTP 500
        self.messages.append({"role": "assistant", "content": turn.text, "tool_calls": [
            {"id": c["id"], "type": "function", "function": {
                "name": c["name"], "arguments": c["arguments"] or "{}"}} for c in turn.calls]})
        return turn
