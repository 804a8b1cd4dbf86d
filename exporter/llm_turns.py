"""What the viewer shows of a model's turns: per step the model, tokens, finish reason and
reply quirks with the raw reply; per run the endpoint (server, version, model file sha256)
and the token totals.

Reads what the ``llm`` policies record (docs/formats.md "Policy llm"): ATIF ``metrics`` and
``model_name`` of a step, ``extra.llm`` (``quirks``, ``raw_reply``, ``raw_replies``,
``replies_without_tool_call``, ``stopped``, ``implicit_submit``) and run.json ``endpoint``.
Imported runs with ATIF metrics but no ``extra.llm`` get the token part only.
"""

from __future__ import annotations

from typing import Any

QUIRK_TEXTS = {
    "tool_calls_in_content": "tool calls written in the reply's text, not in tool_calls",
    "invalid_arguments": "arguments that are not a JSON object",
    "tool_call_without_name": "a tool call without a function name (dropped)",
    "truncated": "cut at the token limit (finish_reason length)",
    "refusal": "the model refused",
    "empty_reply": "a reply with neither text nor a tool call",
    "usage_missing": "the endpoint reported no token usage",
    "context_length_exceeded": "the endpoint refused the prompt: longer than its context window",
}
"""Quirk code -> the viewer's words (recorder/agents/llm_replies.py QUIRKS, plus the stop)."""
TOKEN_KEYS = ("prompt_tokens", "completion_tokens", "cached_tokens", "cost_usd")


def _number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _dict_or_empty(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _metrics_fields(metrics: dict[str, Any] | None) -> dict[str, Any]:
    """Token counts (``TOKEN_KEYS``, numbers only), ``finish_reason`` and ``llm_calls`` from
    a step's ATIF ``metrics``; a key is absent when the metrics do not report it."""
    fields: dict[str, Any] = {}
    for key in TOKEN_KEYS:
        if metrics and _number(metrics.get(key)):
            fields[key] = metrics[key]
    metrics_extra = _dict_or_empty((metrics or {}).get("extra"))
    if isinstance(metrics_extra.get("finish_reason"), str):
        fields["finish_reason"] = metrics_extra["finish_reason"]
    if _number(metrics_extra.get("llm_calls")):
        fields["llm_calls"] = metrics_extra["llm_calls"]
    return fields


def _quirks(info: dict[str, Any]) -> list[dict[str, str]]:
    """``[{code, text}]``: the reply's quirk codes, then the stop reason when not among them."""
    codes = [code for code in info.get("quirks") or [] if isinstance(code, str)]
    stopped = info.get("stopped") if isinstance(info.get("stopped"), dict) else None
    if stopped and isinstance(stopped.get("reason"), str) and stopped["reason"] not in codes:
        codes.append(stopped["reason"])
    return [{"code": code, "text": QUIRK_TEXTS.get(code, code)} for code in codes]


def _malformed(step: dict[str, Any]) -> bool:
    """Whether the step's first call's arguments were kept as ``{"invalid_arguments": text}``."""
    calls = step.get("tool_calls") or [{}]
    arguments = calls[0].get("arguments") if isinstance(calls[0], dict) else None
    return isinstance(arguments, dict) and list(arguments) == ["invalid_arguments"]


def _raw_reply_fields(info: dict[str, Any]) -> dict[str, Any]:
    """The non-empty raw-reply fields of ``extra.llm`` under the viewer's names."""
    return {name: info[key] for key, name in (("raw_reply", "raw_reply"),
                                              ("raw_replies", "raw_replies"),
                                              ("replies_without_tool_call", "replies"),
                                              ("stopped", "stopped"))
            if info.get(key)}


def llm_part(step: dict[str, Any]) -> dict[str, Any] | None:
    """A site step's ``llm`` block, or None for a step no model produced.

    ``{model, prompt_tokens?, completion_tokens?, cached_tokens?, cost_usd?, finish_reason?,
    llm_calls, quirks: [{code, text}], malformed, raw_reply?, raw_replies?, replies?, stopped?,
    implicit_submit}``; token counts are ATIF ``metrics`` (absent when not reported);
    ``malformed``: the step's call arguments were not a JSON object (kept as
    ``{"invalid_arguments": text}``).
    """
    extra = _dict_or_empty(step.get("extra"))
    info = extra.get("llm") if isinstance(extra.get("llm"), dict) else None
    metrics = step.get("metrics") if isinstance(step.get("metrics"), dict) else None
    if info is None and metrics is None:
        return None
    info = info or {}
    part: dict[str, Any] = {"model": step.get("model_name") or info.get("model"),
                            "llm_calls": step.get("llm_call_count") or 0,
                            "implicit_submit": info.get("implicit_submit") is True}
    part.update(_metrics_fields(metrics))
    part["quirks"] = _quirks(info)
    part["malformed"] = _malformed(step)
    part.update(_raw_reply_fields(info))
    return part


def run_llm_block(endpoint: Any, steps: list[dict[str, Any]]) -> dict[str, Any] | None:
    """A run file's ``llm`` block from run.json ``endpoint`` and the site steps' ``llm``
    parts, or None when no step came from a model.

    ``{endpoint, turns, prompt_tokens, completion_tokens, cost_usd?, steps_without_usage,
    malformed_calls, quirks: {code: turns}}``: ``turns`` counts steps with an inference,
    ``malformed_calls`` calls whose arguments were not a JSON object plus nameless calls
    dropped, ``quirks`` the turns showing each quirk.
    """
    parts = [step["llm"] for step in steps if step.get("llm")]
    if not parts:
        return None
    block: dict[str, Any] = {"endpoint": endpoint if isinstance(endpoint, dict) else None,
                             "turns": sum(1 for p in parts if p["llm_calls"]),
                             "prompt_tokens": sum(p.get("prompt_tokens", 0) for p in parts),
                             "completion_tokens": sum(p.get("completion_tokens", 0) for p in parts),
                             "steps_without_usage": 0, "malformed_calls": 0, "quirks": {}}
    if any("cost_usd" in p for p in parts):
        block["cost_usd"] = round(sum(p.get("cost_usd", 0) for p in parts), 8)
    for part in parts:
        codes = [quirk["code"] for quirk in part["quirks"]]
        if part["llm_calls"] and "prompt_tokens" not in part and "completion_tokens" not in part:
            block["steps_without_usage"] += 1
        block["malformed_calls"] += int(part["malformed"]) + int("tool_call_without_name" in codes)
        for code in codes:
            block["quirks"][code] = block["quirks"].get(code, 0) + 1
    return block
