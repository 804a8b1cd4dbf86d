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
    LLMError,
    LLMSettings,
    add_metrics,
    chat_completion,
    content_text,
    open_client,
)


@dataclass
class Turn:
    """One model turn: the tool calls it asked for (``[]``: it twice answered without one).

    ``calls`` are ``{"id", "name", "arguments"}`` with the arguments as the model sent them
    (usually JSON text); ``metrics`` are ATIF Metrics summed over the turn's inferences;
    ``model`` is the name the endpoint answered with; ``replies`` the texts of replies
    without a tool call that came before.
    """

    number: int
    calls: list[dict[str, Any]]
    text: str
    reasoning: str | None
    metrics: dict | None
    model: str | None
    replies: list[str] = field(default_factory=list)

    def info(self, call_id: str, settings: LLMSettings, first: bool) -> dict[str, Any]:
        """``extra.llm`` of the step for call ``call_id``."""
        info: dict[str, Any] = {"turn": self.number, "tool_call_id": call_id, "model": settings.model}
        if first and self.replies:
            info["replies_without_tool_call"] = self.replies
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

    def start(self, user_text: str) -> None:
        """Begin anew: the system prompt and the first user message."""
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
                assistant = {"role": "assistant", "content": content_text(step.get("message")) or None,
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

        Calls without an id get ``turn<N>_call<K>``.

        Raises:
            LLMError: the endpoint failed, replied with something that is not a completion,
                or asked for a tool call without a function name.
        """
        self.turn += 1
        metrics, replies = None, []
        for attempt in range(2):
            message, more = chat_completion(self.client, self.settings, self.messages, self.tools,
                                            self.seed)
            metrics = add_metrics(metrics, more)
            calls = message.get("tool_calls") or []
            text = message.get("content") or ""
            if calls:
                break
            replies.append(text)
            if attempt == 0:
                self.messages += [{"role": "assistant", "content": text},
                                  {"role": "user", "content": self.reminder}]
        else:
            self.messages.append({"role": "assistant", "content": text})
            return Turn(self.turn, [], text, None, metrics, message.get("_model"), replies)
        requests = []
        for index, call in enumerate(calls):
            function = call.get("function")
            if not isinstance(function, dict) or not function.get("name"):
                raise LLMError(f"{self.settings.base_url}: tool call without a function name")
            requests.append({"id": call.get("id") or f"turn{self.turn}_call{index + 1}",
                             "name": function["name"], "arguments": function.get("arguments")})
        self.messages.append({"role": "assistant", "content": text or None, "tool_calls": [
            {"id": c["id"], "type": "function", "function": {
                "name": c["name"], "arguments": c["arguments"] or "{}"}} for c in requests]})
        reasoning = message.get("reasoning_content") or message.get("reasoning") or None
        return Turn(self.turn, requests, text, reasoning, metrics, message.get("_model"), replies)
