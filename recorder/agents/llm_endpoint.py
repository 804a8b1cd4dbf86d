"""Talking to an OpenAI-compatible chat-completions endpoint: settings, one completion, metrics.

Shared by every ``llm`` policy (alerting tasks and action episodes). The endpoint, model and
key come from options (CLI flags ``--base-url --model --api-key-env``) or the environment
(``OPENAI_BASE_URL``, ``ALERTFORGE_MODEL``, ``OPENAI_API_KEY``). Per step, ATIF ``metrics``
carry ``prompt_tokens``, ``completion_tokens``, ``cached_tokens`` and ``cost_usd`` (the
endpoint's own ``usage.cost`` when it reports one, else the token counts times
``--price-input``/``--price-output`` USD per million tokens; absent when neither is known).
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from contract.errors import BadInput, EndpointFailure
from contract.untrusted import UnsafeInput, json_safe

DEFAULT_API_KEY_ENV = "OPENAI_API_KEY"
BASE_URL_ENV = "OPENAI_BASE_URL"
MODEL_ENV = "ALERTFORGE_MODEL"


class LLMError(EndpointFailure):
    """The endpoint failed (connection, HTTP status, timeout, malformed reply).

    The run folder is left as it is (status ``running``): running the same command again
    resumes it from its recorded steps.
    """


@dataclass(frozen=True)
class LLMSettings:
    """Where and how to ask the model. Prices are USD per million tokens (None: unknown)."""

    base_url: str
    model: str
    api_key: str
    price_input: float | None = None
    price_output: float | None = None
    temperature: float | None = None
    max_tokens: int | None = None
    timeout_s: float = 120.0
    max_retries: int = 2


def settings_from(options: Mapping[str, Any], environ: Mapping[str, str] = os.environ) -> LLMSettings:
    """Settings from recorder options, falling back to the environment.

    ``options`` keys: ``base_url``, ``model``, ``api_key_env`` (the name of the variable
    holding the key, default ``OPENAI_API_KEY``), ``price_input``, ``price_output``,
    ``temperature``, ``max_tokens``, ``timeout`` (or ``timeout_s``: seconds per request),
    ``max_retries``.

    Raises:
        BadInput: naming the flag or variable when the base URL, model or key is missing.
    """
    base_url = options.get("base_url") or environ.get(BASE_URL_ENV)
    if not base_url:
        raise BadInput("--base-url", f"no endpoint: pass --base-url or set {BASE_URL_ENV}")
    model = options.get("model") or environ.get(MODEL_ENV)
    if not model:
        raise BadInput("--model", f"no model: pass --model or set {MODEL_ENV}")
    key_env = options.get("api_key_env") or DEFAULT_API_KEY_ENV
    api_key = environ.get(key_env)
    if not api_key:
        raise BadInput("--api-key-env", f"environment variable {key_env} is not set "
                       "(any value will do for a local server without authentication)")
    return LLMSettings(
        base_url=str(base_url), model=str(model), api_key=api_key,
        price_input=options.get("price_input"), price_output=options.get("price_output"),
        temperature=options.get("temperature"), max_tokens=options.get("max_tokens"),
        timeout_s=float(options.get("timeout") or options.get("timeout_s") or 120.0),
        max_retries=int(options.get("max_retries", 2)))


def step_metrics(usage: Mapping[str, Any] | None, settings: LLMSettings,
                 finish_reason: str | None = None) -> dict | None:
    """ATIF ``Metrics`` from an OpenAI ``usage`` object (None when the endpoint sent none).

    ``cost_usd`` is ``usage.cost`` when present (OpenRouter and others report it), else
    prompt/completion tokens times the configured prices, else absent.
    """
    if not usage:
        return None
    metrics: dict[str, Any] = {}
    for key in ("prompt_tokens", "completion_tokens"):
        if isinstance(usage.get(key), int):
            metrics[key] = usage[key]
    cached = (usage.get("prompt_tokens_details") or {}).get("cached_tokens")
    if isinstance(cached, int):
        metrics["cached_tokens"] = cached
    if isinstance(usage.get("cost"), (int, float)):
        metrics["cost_usd"] = float(usage["cost"])
    elif settings.price_input is not None and settings.price_output is not None:
        metrics["cost_usd"] = round((metrics.get("prompt_tokens", 0) * settings.price_input
                                     + metrics.get("completion_tokens", 0) * settings.price_output)
                                    / 1_000_000, 8)
    reasoning = (usage.get("completion_tokens_details") or {}).get("reasoning_tokens")
    extra = {k: v for k, v in (("finish_reason", finish_reason), ("reasoning_tokens", reasoning))
             if v is not None}
    if extra:
        metrics["extra"] = extra
    return metrics


def open_client(settings: LLMSettings) -> Any:
    """An ``openai.OpenAI`` client for ``settings`` (its timeout and retries)."""
    import openai

    return openai.OpenAI(base_url=settings.base_url, api_key=settings.api_key,
                         timeout=settings.timeout_s, max_retries=settings.max_retries)


def chat_completion(client: Any, settings: Any, messages: list[dict], tools: list[dict],
                    seed: int | None) -> tuple[dict, dict | None]:
    """One OpenAI-compatible chat completion with tools: ``(reply message dict, ATIF metrics)``.

    ``tool_choice`` is sent as ``"auto"``: OpenAI's default when tools are given, but
    llama-cpp-python's server ignores the tools without it (it answers in prose). The message
    carries the answering model's name under ``_model``, ``choices[0].finish_reason`` under
    ``_finish_reason`` and whether the reply had a ``usage`` object under ``_usage_reported``;
    ``settings`` gives the model, base URL, temperature, token cap and prices (see
    :class:`LLMSettings`).

    Raises:
        ContextLengthExceeded: the endpoint refused the prompt as longer than its context.
        LLMError: the endpoint failed (connection, timeout after ``settings.timeout_s``,
            HTTP status), or its reply has no ``choices[0].message``.
    """
    import openai

    request: dict[str, Any] = {"model": settings.model, "messages": messages, "tools": tools,
                               "tool_choice": "auto"}
    if seed is not None:
        request["seed"] = seed
    if settings.temperature is not None:
        request["temperature"] = settings.temperature
    if settings.max_tokens is not None:
        request["max_tokens"] = settings.max_tokens
    try:
        response = client.chat.completions.create(**request)
    except openai.APITimeoutError:
        raise LLMError(f"{settings.base_url}: no reply within {settings.timeout_s:g} s "
                       f"(--timeout), {settings.max_retries} retries") from None
    except openai.APIStatusError as err:
        raise status_error(settings.base_url, err) from None
    except openai.APIError as err:
        raise LLMError(f"{settings.base_url}: {type(err).__name__}: {err}") from None
    data = response.model_dump() if hasattr(response, "model_dump") else dict(response)
    try:
        data = json_safe(data, settings.base_url)  # a reply is untrusted: surrogates, huge ints
    except UnsafeInput as err:
        raise LLMError(f"{settings.base_url}: the reply {err.problem}") from None
    choices = data.get("choices") or []
    if not choices or not isinstance(choices[0].get("message"), dict):
        raise LLMError(f"{settings.base_url}: reply has no choices[0].message")
    usage = data.get("usage") if isinstance(data.get("usage"), dict) else None
    metrics = step_metrics(usage, settings, choices[0].get("finish_reason"))
    message = dict(choices[0]["message"])
    message["_model"] = data.get("model")
    message["_finish_reason"] = choices[0].get("finish_reason")
    message["_usage_reported"] = bool(usage)
    return message, metrics


class ContextLengthExceeded(LLMError):
    """The endpoint refused the prompt as longer than its context window (OpenAI and
    llama-cpp-python: HTTP 400, ``code`` ``context_length_exceeded``; vLLM and others: a 400
    whose message says "maximum context length"). ``error`` is the reply's error object, as
    sent. Asking again cannot help: the conversation ends here."""

    def __init__(self, message: str, status: int, error: dict[str, Any]):
        super().__init__(message)
        self.status, self.error = status, error


def status_error(base_url: str, err: Any) -> LLMError:
    """The LLMError for an HTTP error reply (``openai.APIStatusError``): a
    :class:`ContextLengthExceeded` when the error says so."""
    body = err.body if isinstance(getattr(err, "body", None), dict) else {}
    error = body.get("error") if isinstance(body.get("error"), dict) else body
    try:
        error = json_safe(error, base_url)
    except UnsafeInput:
        error = {"message": "(the error reply is not safe to keep)"}
    text = f"{base_url}: {type(err).__name__}: {err}"
    code, message = str(error.get("code") or ""), str(error.get("message") or "")
    if code == "context_length_exceeded" or "maximum context length" in message.lower():
        return ContextLengthExceeded(text, err.status_code, error)
    return LLMError(text)


def add_metrics(total: dict | None, more: dict | None) -> dict | None:
    """Token counts and costs of two inferences added (a reminder turn plus the answer)."""
    if not total or not more:
        return more or total
    summed = dict(more)
    for key in ("prompt_tokens", "completion_tokens", "cached_tokens", "cost_usd"):
        if key in total or key in more:
            summed[key] = total.get(key, 0) + more.get(key, 0)
    summed["extra"] = {**(more.get("extra") or {}), "llm_calls":
                       (total.get("extra") or {}).get("llm_calls", 1) + 1}
    return summed


def parse_arguments(raw: Any) -> dict:
    """A tool call's arguments as an object; text that is not a JSON object is kept as
    ``{"invalid_arguments": raw}`` so the step shows it and the tool reports an error."""
    if isinstance(raw, dict):
        return raw
    try:
        parsed = json_safe(json.loads(raw or "{}"), "tool call arguments")
    except (TypeError, json.JSONDecodeError, UnsafeInput):
        return {"invalid_arguments": str(raw)}
    return parsed if isinstance(parsed, dict) else {"invalid_arguments": str(raw)}


def content_text(content: Any) -> str:
    """ATIF message/observation content as text (ContentPart texts joined)."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    return "\n".join(part.get("text") or "" for part in content if isinstance(part, dict))
