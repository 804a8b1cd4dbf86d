"""One chat-completion reply read as what it is: native tool calls, tool calls written in the
text, a refusal, a truncated or empty answer, missing token usage.

Real OpenAI-compatible servers differ from OpenAI's own API (measured on llama-cpp-python
0.3.36 with SmolLM2-135M, notes/llama-server-replies.md; the text formats below are the
ones vLLM, Ollama and llama.cpp pass through when their tool parser is off):

- tool calls written in ``content`` instead of ``tool_calls``: Hermes/Qwen
  ``<tool_call>{"name": ..., "arguments": {...}}</tool_call>``, a bare JSON object or list of
  ``{"name", "arguments"|"parameters"}`` (optionally in a ```json fence), Mistral
  ``[TOOL_CALLS][...]``, and llama-cpp-python's own ``functions.NAME:{json}``. Only names of
  offered tools count, so prose that merely mentions JSON stays prose;
- a tool call without a function name (llama-cpp-python's ``functionary`` format);
- ``finish_reason`` ``length`` (arguments cut mid-JSON) and ``content_filter``;
- ``message.refusal`` (OpenAI's refusal field);
- no ``usage`` object;
- an empty reply (``content`` "" and no tool call: llama-cpp-python's
  ``chatml-function-calling`` handler whenever the model chose to answer in text).

Each irregularity is a *quirk* code (:data:`QUIRKS`); a reply with any quirk keeps its raw
message so the viewer can show it as it came.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

QUIRKS = {
    "tool_calls_in_content": "the tool calls were written in the reply's text, not in tool_calls",
    "invalid_arguments": "a tool call's arguments are not a JSON object",
    "tool_call_without_name": "a tool call without a function name was dropped",
    "truncated": "the reply was cut at the token limit (finish_reason length)",
    "refusal": "the model refused",
    "empty_reply": "the reply had neither text nor a tool call",
    "usage_missing": "the endpoint reported no token usage",
}
"""Quirk code -> what it means (shown in the viewer)."""

_HERMES = re.compile(r"<tool_call>\s*(.*?)\s*(?:</tool_call>|$)", re.DOTALL)
_FENCE = re.compile(r"^```(?:json)?\s*(.*?)\s*```$", re.DOTALL)
_FUNCTIONS = re.compile(r"functions\.([A-Za-z0-9_\-]+):\s*")
_MISTRAL = "[TOOL_CALLS]"


@dataclass
class Reply:
    """A reply as read: ``calls`` ``[{"id", "name", "arguments"}]`` (arguments as text, as
    the model sent them), ``text`` the content, ``reasoning``, ``refusal``, ``finish_reason``,
    ``quirks`` (codes of :data:`QUIRKS`, in order found) and ``raw`` (the message as received
    plus ``finish_reason``; None when there is no quirk)."""

    calls: list[dict[str, Any]]
    text: str
    reasoning: str | None = None
    refusal: str | None = None
    finish_reason: str | None = None
    quirks: list[str] = field(default_factory=list)
    raw: dict[str, Any] | None = None


def read_reply(message: dict[str, Any], finish_reason: str | None, usage_reported: bool,
               tool_names: set[str], turn: int) -> Reply:
    """Read ``choices[0].message`` of a completion (a dict, untrusted).

    Calls without an id get ``turn<turn>_call<K>`` (K from 1). ``tool_names`` are the offered
    tools (a text tool call must name one). Never raises on a reply's shape.
    """
    text = message.get("content") if isinstance(message.get("content"), str) else ""
    quirks: list[str] = []
    calls = _reply_calls(message, text, tool_names, turn, quirks)
    refusal = message.get("refusal") if isinstance(message.get("refusal"), str) else None
    if finish_reason == "content_filter" and not refusal:
        refusal = text or "finish_reason content_filter"
    quirks += _ending_quirks(finish_reason, refusal, bool(calls or text.strip()), usage_reported)
    reasoning = message.get("reasoning_content") or message.get("reasoning") or None
    raw = None
    if quirks:
        raw = {k: v for k, v in message.items() if not k.startswith("_") and v is not None}
        raw["finish_reason"] = finish_reason
    return Reply(calls, text, reasoning if isinstance(reasoning, str) else None, refusal,
                 finish_reason, quirks, raw)


def _reply_calls(message: dict[str, Any], text: str, tool_names: set[str], turn: int,
                 quirks: list[str]) -> list[dict[str, Any]]:
    """The reply's tool calls, native or (when it has none) written in its text, each with an
    id; appends the quirks met to ``quirks``."""
    calls = _native_calls(message.get("tool_calls"), quirks)
    if not calls and text:
        calls = calls_in_text(text, tool_names)
        if calls:
            quirks.append("tool_calls_in_content")
    for index, call in enumerate(calls):
        call["id"] = call.get("id") or f"turn{turn}_call{index + 1}"
        if not _is_json_object(call["arguments"]) and "invalid_arguments" not in quirks:
            quirks.append("invalid_arguments")
    return calls


def _ending_quirks(finish_reason: str | None, refusal: str | None, said_something: bool,
                   usage_reported: bool) -> list[str]:
    """The quirks of how a reply ended: truncated, a refusal, nothing said (no call, no text,
    no refusal), no usage reported; in that order."""
    quirks = []
    if finish_reason == "length":
        quirks.append("truncated")
    if refusal:
        quirks.append("refusal")
    if not said_something and not refusal:
        quirks.append("empty_reply")
    if not usage_reported:
        quirks.append("usage_missing")
    return quirks


def _native_calls(tool_calls: Any, quirks: list[str]) -> list[dict[str, Any]]:
    """``message.tool_calls`` as ``[{"id", "name", "arguments"}]``; nameless ones dropped
    (quirk ``tool_call_without_name``). The legacy ``function_call`` is never read: in
    llama-cpp-python it names another tool than ``tool_calls`` (notes, quirk 3)."""
    calls = []
    for call in tool_calls if isinstance(tool_calls, list) else []:
        function = call.get("function") if isinstance(call, dict) else None
        name = function.get("name") if isinstance(function, dict) else None
        if not isinstance(name, str) or not name:
            if "tool_call_without_name" not in quirks:
                quirks.append("tool_call_without_name")
            continue
        arguments = function.get("arguments")
        if not isinstance(arguments, str):
            arguments = json.dumps(arguments) if isinstance(arguments, dict) else str(arguments or "")
        call_id = call.get("id") if isinstance(call.get("id"), str) else None
        calls.append({"id": call_id, "name": name, "arguments": arguments})
    return calls


def calls_in_text(text: str, tool_names: set[str]) -> list[dict[str, Any]]:
    """Tool calls written in a reply's text, in one of the formats of this module's doc.

    Returns ``[{"id": None, "name", "arguments"}]`` (arguments as JSON text, or the raw text
    after ``functions.NAME:`` when it is not JSON); ``[]`` when the text holds no call of an
    offered tool.
    """
    stripped = text.strip()
    candidates: list[Any] = []
    if "<tool_call>" in stripped:
        candidates = [_loads(block) for block in _HERMES.findall(stripped)]
    elif stripped.startswith(_MISTRAL):
        candidates = [_loads(stripped[len(_MISTRAL):])]
    elif _FUNCTIONS.search(stripped):
        return _functions_calls(stripped, tool_names)
    else:
        fenced = _FENCE.match(stripped)
        candidates = [_loads(fenced.group(1) if fenced else stripped)]
    calls = []
    for candidate in candidates:
        for item in candidate if isinstance(candidate, list) else [candidate]:
            call = _call_object(item, tool_names)
            if call is not None:
                calls.append(call)
    return calls


def _functions_calls(text: str, tool_names: set[str]) -> list[dict[str, Any]]:
    """llama-cpp-python's ``functions.NAME:\\n{arguments}`` blocks, one after another."""
    matches = list(_FUNCTIONS.finditer(text))
    calls = []
    for index, match in enumerate(matches):
        end = matches[index + 1].start() if index + 1 < len(matches) else len(text)
        if match.group(1) in tool_names:
            arguments = text[match.end():end].strip() or "{}"
            calls.append({"id": None, "name": match.group(1), "arguments": arguments})
    return calls


def _call_object(item: Any, tool_names: set[str]) -> dict[str, Any] | None:
    if not isinstance(item, dict):
        return None
    if isinstance(item.get("function"), dict):  # {"type": "function", "function": {...}}
        item = item["function"]
    name = item.get("name")
    if not isinstance(name, str) or name not in tool_names:
        return None
    arguments = item.get("arguments", item.get("parameters", {}))
    if not isinstance(arguments, str):
        arguments = json.dumps(arguments)
    return {"id": item.get("id") if isinstance(item.get("id"), str) else None,
            "name": name, "arguments": arguments}


def _loads(text: str) -> Any:
    try:
        return json.loads(text)
    except (json.JSONDecodeError, RecursionError):
        return None


def _is_json_object(arguments: str) -> bool:
    return isinstance(_loads(arguments or "{}"), dict)
