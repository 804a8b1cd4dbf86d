"""Policy ``llm``: an agent for any OpenAI-compatible chat-completions endpoint (``openai`` package).

The model sees the task's instruction and the tools of :mod:`recorder.environments.workspace` as OpenAI
function definitions (:data:`TOOL_SPECS`); each tool call it makes is one recorded step. The
endpoint, model and key come from options (CLI flags ``--base-url --model --api-key-env``)
or the environment (``OPENAI_BASE_URL``, ``ALERTFORGE_MODEL``, ``OPENAI_API_KEY``).

Per step, ATIF ``metrics`` carry ``prompt_tokens``, ``completion_tokens``, ``cached_tokens``
and ``cost_usd`` (the endpoint's own ``usage.cost`` when it reports one, else the token
counts times ``--price-input``/``--price-output`` USD per million tokens; absent when
neither is known). ``step.extra.llm`` records ``{turn, tool_call_id, model}``: the model
turn a call came from and the endpoint's own call id, which is what :meth:`LLMAgent.resume`
needs to rebuild the conversation of an interrupted run from its recorded steps.

When one model turn asks for several tool calls, each becomes its own step; the first
carries the turn's message, reasoning and metrics (``llm_call_count`` 1), the others are
dispatched without a new inference (``llm_call_count`` 0). A turn with no tool call is
answered with one reminder to use the tools; a second one in a row ends the run with an
implicit ``submit`` (``extra.llm.implicit_submit``).
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from contract.errors import BadInput, EndpointFailure
from contract.untrusted import UnsafeInput, json_safe
from recorder.agents.base import Agent, Decision

DEFAULT_API_KEY_ENV = "OPENAI_API_KEY"
BASE_URL_ENV = "OPENAI_BASE_URL"
MODEL_ENV = "ALERTFORGE_MODEL"
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


def chat_completion(client: Any, settings: Any, messages: list[dict], tools: list[dict],
                    seed: int | None) -> tuple[dict, dict | None]:
    """One OpenAI-compatible chat completion with tools: ``(reply message dict, ATIF metrics)``.

    The message carries the answering model's name under ``_model``; ``settings`` gives the
    model, base URL, temperature, token cap and prices (see :class:`LLMSettings`).

    Raises:
        LLMError: the endpoint failed, or its reply has no ``choices[0].message``.
    """
    import openai

    request: dict[str, Any] = {"model": settings.model, "messages": messages, "tools": tools}
    if seed is not None:
        request["seed"] = seed
    if settings.temperature is not None:
        request["temperature"] = settings.temperature
    if settings.max_tokens is not None:
        request["max_tokens"] = settings.max_tokens
    try:
        response = client.chat.completions.create(**request)
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
    metrics = step_metrics(data.get("usage"), settings, choices[0].get("finish_reason"))
    message = dict(choices[0]["message"])
    message["_model"] = data.get("model")
    return message, metrics


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
    ``temperature``, ``max_tokens``, ``timeout_s``, ``max_retries``.

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
        timeout_s=float(options.get("timeout_s") or 120.0),
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


def _add_metrics(total: dict | None, more: dict | None) -> dict | None:
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


def _arguments(raw: Any) -> dict:
    """A tool call's arguments as an object; text that is not a JSON object is kept as
    ``{"invalid_arguments": raw}`` so the step shows it and the tool reports an error."""
    if isinstance(raw, dict):
        return raw
    try:
        parsed = json_safe(json.loads(raw or "{}"), "tool call arguments")
    except (TypeError, json.JSONDecodeError, UnsafeInput):
        return {"invalid_arguments": str(raw)}
    return parsed if isinstance(parsed, dict) else {"invalid_arguments": str(raw)}


class LLMAgent(Agent):
    """One conversation with a chat-completions endpoint; each tool call it asks for is a step.

    ``client`` is an ``openai.OpenAI`` (made from ``settings`` when not given).
    """

    llm = True

    def __init__(self, settings: LLMSettings, client: Any = None):
        self.settings = settings
        self.model = settings.model
        if client is None:
            import openai

            client = openai.OpenAI(base_url=settings.base_url, api_key=settings.api_key,
                                   timeout=settings.timeout_s, max_retries=settings.max_retries)
        self.client = client
        self.messages: list[dict] = []
        self.queue: list[Decision] = []
        self.awaiting: str | None = None  # the call id whose output goes into the next message
        self.turn = 0
        self.seed = 0

    def begin(self, task_dir: Path, instruction: str, seed: int) -> None:
        """Start the conversation: system prompt and the task's instruction."""
        self.seed = seed
        self.messages = [{"role": "system", "content": SYSTEM_PROMPT},
                         {"role": "user", "content": instruction}]

    def resume(self, steps: list[dict]) -> None:
        """Rebuild the conversation from recorded agent steps (ATIF dicts, in order).

        Steps of one model turn (same ``extra.llm.turn``) become one assistant message with
        all their tool calls, each followed by its recorded observation as the tool result.

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
            for reminder in info.get("replies_without_tool_call") or []:
                self.messages += [{"role": "assistant", "content": reminder},
                                  {"role": "user", "content": REMINDER}]
            call = (step.get("tool_calls") or [{}])[0]
            call_id = info.get("tool_call_id") or call.get("tool_call_id")
            turn = info.get("turn")
            if assistant is None or turn is None or turn != current_turn:
                assistant = {"role": "assistant", "content": _text(step.get("message")) or None,
                             "tool_calls": []}
                self.messages.append(assistant)
                current_turn = turn
            arguments = call.get("arguments") or {}
            raw = arguments.get("invalid_arguments") if list(arguments) == ["invalid_arguments"] \
                else json.dumps(arguments)
            assistant["tool_calls"].append({"id": call_id, "type": "function", "function": {
                "name": call.get("function_name"), "arguments": raw}})
            results = (step.get("observation") or {}).get("results") or [{}]
            self.messages.append({"role": "tool", "tool_call_id": call_id,
                                  "content": _text(results[0].get("content"))})
            if turn is not None:
                self.turn = max(self.turn, int(turn))
        self.awaiting = None

    def decide(self, last_output: str | None) -> Decision | None:
        """The next tool call: a queued call of the current turn, or a new model turn.

        Raises:
            LLMError: the endpoint failed or replied with something that is not a completion.
        """
        if self.awaiting is not None:
            self.messages.append({"role": "tool", "tool_call_id": self.awaiting,
                                  "content": last_output or ""})
            self.awaiting = None
        if not self.queue:
            self.queue = self._next_turn()
        decision = self.queue.pop(0)
        self.llm = decision.metrics is not None or decision.extra["llm"].get("first", False)
        decision.extra["llm"].pop("first", None)
        self.awaiting = decision.extra["llm"]["tool_call_id"]
        return decision

    def _complete(self) -> tuple[dict, dict | None]:
        """One chat completion: (the reply message as a dict, its metrics)."""
        return chat_completion(self.client, self.settings, self.messages, TOOL_SPECS, self.seed)

    def _next_turn(self) -> list[Decision]:
        """Ask the model (reminding it once if it answers without a tool call)."""
        self.turn += 1
        metrics, replies = None, []
        for attempt in range(2):
            message, more = self._complete()
            metrics = _add_metrics(metrics, more)
            calls = message.get("tool_calls") or []
            text = message.get("content") or ""
            if calls:
                break
            replies.append(text)
            if attempt == 0:
                self.messages += [{"role": "assistant", "content": text},
                                  {"role": "user", "content": REMINDER}]
        else:
            info = {"turn": self.turn, "tool_call_id": f"implicit_submit_{self.turn}",
                    "model": self.settings.model, "implicit_submit": True,
                    "replies_without_tool_call": replies[:1]}
            self.messages.append({"role": "assistant", "content": text})
            return [Decision("submit", {}, message=text, metrics=metrics,
                             model=message.get("_model"), extra={"llm": info})]
        reasoning = message.get("reasoning_content") or message.get("reasoning") or None
        for index, call in enumerate(calls):  # some servers send no id: make one
            call["id"] = call.get("id") or f"turn{self.turn}_call{index + 1}"
            if not isinstance(call.get("function"), dict) or not call["function"].get("name"):
                raise LLMError(f"{self.settings.base_url}: tool call without a function name")
        self.messages.append({"role": "assistant", "content": text or None, "tool_calls": [
            {"id": c["id"], "type": "function", "function": {
                "name": c["function"]["name"], "arguments": c["function"].get("arguments") or "{}"}}
            for c in calls]})
        decisions = []
        for index, call in enumerate(calls):
            info = {"turn": self.turn, "tool_call_id": call["id"], "model": self.settings.model}
            if index == 0:
                info["first"] = True
                if replies:
                    info["replies_without_tool_call"] = replies
            decisions.append(Decision(
                call["function"]["name"], _arguments(call["function"].get("arguments")),
                message=text if index == 0 else "",
                reasoning=reasoning if index == 0 else None,
                metrics=metrics if index == 0 else None,
                model=message.get("_model") if index == 0 else None,
                extra={"llm": info}))
        return decisions


def _text(content: Any) -> str:
    """ATIF message/observation content as text (ContentPart texts joined)."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    return "\n".join(part.get("text") or "" for part in content if isinstance(part, dict))


def make_llm_agent(task_dir: Path, seed: int, options: dict) -> LLMAgent:
    """The ``llm`` policy's factory (see :func:`settings_from` for ``options``)."""
    return LLMAgent(settings_from(options))

