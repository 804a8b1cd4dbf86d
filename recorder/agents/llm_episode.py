"""Policy ``llm`` for action episodes: a model behind any OpenAI-compatible chat-completions endpoint.

The model gets the 14 ARIA action types as tools (:data:`ACTION_TOOLS`: function name =
``action_type``, parameters = the Action's optional string fields) and the episode as a
conversation: the user message is the run's instruction (step 1's message) with the
``/reset`` observation; every action it calls is one step, answered with a tool message that
holds the step's reward, running total, ``done`` and the observation JSON (or the server's
error). Endpoint, model, key, prices and retries are those of the alerting ``llm`` policy
(:func:`recorder.agents.llm_alerting.settings_from`: ``--base-url --model --api-key-env`` or
``OPENAI_BASE_URL``, ``ALERTFORGE_MODEL``, ``OPENAI_API_KEY``), and so are the per-step ATIF
metrics (:func:`recorder.agents.llm_alerting.step_metrics`: prompt, completion and cached tokens,
cost when known, ``extra.finish_reason``).

A turn with several tool calls gives one step per call (the first carries the turn's message,
reasoning and metrics, ``llm_call_count`` 1; the others ``llm_call_count`` 0). A reply without
a tool call is answered once with a reminder (its metrics summed into the next step's, the
reply kept in ``extra.llm.replies_without_tool_call``); a second in a row ends the episode.
Arguments that are not Action fields or not strings are not sent and are kept in
``extra.llm.dropped_arguments``. The policy stops after ``max_actions`` actions (``--max-steps``);
the recorder's own limit (twice the task's ``max_steps``) and ``done`` apply as for any policy.

Resuming: :meth:`LLMEpisodePolicy.resume` rebuilds the conversation from the recorded steps,
so an interrupted recording (endpoint or environment failure) goes on with the same command.
"""

from __future__ import annotations

import json
from typing import Any

from contract.errors import BadInput
from recorder.agents.episode_policies import ACTION_FIELDS, ACTION_TYPES, EpisodePolicy
from recorder.agents.llm_alerting import (
    LLMError,
    LLMSettings,
    _add_metrics,
    _arguments,
    chat_completion,
)

SYSTEM_PROMPT = """You are the on-call SRE for a production system in the middle of an \
incident. You act on the system only through the tools: each tool call is one action, and \
the environment answers with the new observation (services, alerts, logs, evidence, SLA), \
the action's reward and whether the incident is over.

Investigate first (read_logs, read_metrics, search_logs, read_runbook), state the root cause \
with diagnose, then apply the fix the evidence points to. Rewards are given for the right \
reads, a correct diagnosis and the fix; penalties for restarting healthy services, fixing \
before diagnosing, forbidden failovers, actions that do not apply and idle noops. Call one \
tool at a time."""

REMINDER = "Act through the tools: call one of the actions (diagnose, read_logs, ...)."

ACTION_DESCRIPTIONS = {
    "diagnose": "State the root cause of the incident (root_cause).",
    "read_logs": "Read a service's recent logs (service).",
    "read_metrics": "Read a service's metrics (service).",
    "read_runbook": "Read a runbook (runbook: one of the observation's available_runbooks).",
    "restart_service": "Restart a service (service).",
    "rollback": "Roll a service back to an earlier version (service, version).",
    "scale_up": "Add replicas to a service (service).",
    "alert_oncall": "Page the on-call team (reason).",
    "acknowledge": "Acknowledge an alert (service: the alert's id).",
    "noop": "Do nothing this step.",
    "search_logs": "Search the logs (query, optionally service).",
    "block_ip_range": "Block an IP range at the edge (ip_range, CIDR).",
    "create_index": "Create a database index (table, column).",
    "failover": "Fail a service over to another region (service, target_region).",
}
"""One line per action type: the tool's description."""

FIELD_DESCRIPTIONS = {
    "service": "the service acted on (acknowledge: the alert id)",
    "root_cause": "diagnose: the root cause in a sentence",
    "runbook": "read_runbook: the runbook's name",
    "version": "rollback: the version to roll back to",
    "reason": "why (alert_oncall and others)",
    "query": "search_logs: the text to search for",
    "ip_range": "block_ip_range: a CIDR range",
    "table": "create_index: the table",
    "column": "create_index: the column",
    "target_region": "failover: the region to fail over to",
}


def _tool(action_type: str) -> dict[str, Any]:
    properties = {
        name: {"type": "string", "description": FIELD_DESCRIPTIONS[name]} for name in ACTION_FIELDS
    }
    return {
        "type": "function",
        "function": {
            "name": action_type,
            "description": ACTION_DESCRIPTIONS[action_type],
            "parameters": {
                "type": "object",
                "properties": properties,
                "required": [],
                "additionalProperties": False,
            },
        },
    }


ACTION_TOOLS: list[dict[str, Any]] = [_tool(action_type) for action_type in ACTION_TYPES]
"""OpenAI function definitions of the 14 action types, every Action field an optional string."""


def _text(content: Any) -> str:
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    return "\n".join(part.get("text") or "" for part in content if isinstance(part, dict))


def tool_result(step: dict[str, Any]) -> str:
    """What the model reads after an action: reward, total, done and info, then the observation.

    Built from the recorded ATIF step alone, so a resumed conversation is the same text.
    """
    env = (step.get("extra") or {}).get("env") or {}
    results = (step.get("observation") or {}).get("results") or [{}]
    head = {
        "reward": env.get("reward"),
        "total": env.get("total"),
        "done": env.get("done"),
        "info": env.get("info") or {},
    }
    return json.dumps(head) + "\n" + _text(results[0].get("content"))


def first_message(step: dict[str, Any]) -> str:
    """The user message: the run's instruction (step 1) and the ``/reset`` observation."""
    observation = ((step.get("extra") or {}).get("env") or {}).get("observation") or {}
    return (
        _text(step.get("message"))
        + "\n\nThe current observation (JSON):\n"
        + json.dumps(observation, indent=2)
    )


def action_from_call(name: str, raw_arguments: Any) -> tuple[dict[str, Any], dict[str, Any]]:
    """``(action, dropped)`` from a tool call: the Action to send and the arguments left out.

    Only :data:`ACTION_FIELDS` with string values are sent; anything else (other keys,
    non-strings, arguments that are not a JSON object) goes into ``dropped``.
    """
    arguments = _arguments(raw_arguments)
    action: dict[str, Any] = {"action_type": name}
    dropped: dict[str, Any] = {}
    for key, value in arguments.items():
        if key in ACTION_FIELDS and isinstance(value, str):
            action[key] = value
        else:
            dropped[key] = value
    return action, dropped


class LLMEpisodePolicy(EpisodePolicy):
    """The ``llm`` episode policy: one conversation, each tool call one action.

    ``client`` is an ``openai.OpenAI`` (made from ``settings`` when not given); ``max_actions``
    the policy's step limit. The recorder calls :meth:`resume` with the steps so far (step 1
    at least) before the first :meth:`next_action`, :meth:`step_details` when writing a step
    and :meth:`observe` after it.
    """

    name = "llm"

    def __init__(
        self,
        settings: LLMSettings,
        seed: int | None,
        *,
        max_actions: int | None = None,
        client: Any = None,
    ):
        self.settings = settings
        self.model = settings.model
        self.label = "llm"
        self.seed = seed
        self.max_actions = max_actions
        if client is None:
            import openai

            client = openai.OpenAI(
                base_url=settings.base_url,
                api_key=settings.api_key,
                timeout=settings.timeout_s,
                max_retries=settings.max_retries,
            )
        self.client = client
        self.messages: list[dict[str, Any]] = []
        self.queue: list[dict[str, Any]] = []
        self.current: dict[str, Any] | None = None
        self.turn = 0
        self.ended_without_action: list[str] = []

    # -- conversation from recorded steps ---------------------------------------------------

    def resume(self, steps: list[dict[str, Any]]) -> None:
        """Rebuild the conversation from the run's steps (ATIF dicts; step 1 the user step).

        Raises:
            BadInput: the steps were recorded with another model (``extra.llm.model``).
        """
        self.messages = [
            {"role": "system", "content": SYSTEM_PROMPT},
            {"role": "user", "content": first_message(steps[0])},
        ]
        self.queue, self.current = [], None
        current_turn, assistant = None, None
        for step in steps[1:]:
            info = (step.get("extra") or {}).get("llm") or {}
            if info.get("model") and info["model"] != self.settings.model:
                raise BadInput(
                    "--model",
                    f"this run was recorded with model {info['model']!r}, not "
                    f"{self.settings.model!r}: pass --fresh or another --out",
                )
            for reply in info.get("replies_without_tool_call") or []:
                self.messages += [
                    {"role": "assistant", "content": reply},
                    {"role": "user", "content": REMINDER},
                ]
            call = (step.get("tool_calls") or [{}])[0]
            call_id = info.get("tool_call_id") or call.get("tool_call_id")
            turn = info.get("turn")
            if assistant is None or turn is None or turn != current_turn:
                assistant = {
                    "role": "assistant",
                    "content": _text(step.get("message")) or None,
                    "tool_calls": [],
                }
                self.messages.append(assistant)
                current_turn = turn
            arguments = {**(call.get("arguments") or {}), **(info.get("dropped_arguments") or {})}
            assistant["tool_calls"].append(
                {
                    "id": call_id,
                    "type": "function",
                    "function": {
                        "name": call.get("function_name"),
                        "arguments": json.dumps(arguments),
                    },
                }
            )
            self.messages.append(
                {"role": "tool", "tool_call_id": call_id, "content": tool_result(step)}
            )
            if isinstance(turn, int):
                self.turn = max(self.turn, turn)

    # -- acting -------------------------------------------------------------------------------

    def next_action(self, observation: dict[str, Any], index: int) -> dict[str, Any] | None:
        """The next tool call as an Action: a queued call of this turn, or a new model turn.

        None once ``max_actions`` actions are taken or the model twice answered without a
        tool call.

        Raises:
            LLMError: the endpoint failed or its reply is not a completion.
        """
        if self.max_actions is not None and index >= self.max_actions:
            return None
        if not self.messages:
            raise RuntimeError("LLMEpisodePolicy.resume(steps) must be called first")
        if not self.queue:
            self.queue = self._next_turn()
            if not self.queue:
                return None
        self.current = self.queue.pop(0)
        return dict(self.current["action"])

    def step_details(self) -> dict[str, Any] | None:
        """What the writer records of the current call: llm flag, message, reasoning, metrics,
        model and ``extra.llm`` ``{turn, tool_call_id, model, replies_without_tool_call?,
        dropped_arguments?}``."""
        if self.current is None:
            return None
        return {key: value for key, value in self.current.items() if key != "action"}

    def observe(self, step: dict[str, Any]) -> None:
        """Answer the current call with the recorded step's result (the next tool message)."""
        info = (step.get("extra") or {}).get("llm") or {}
        self.messages.append(
            {"role": "tool", "tool_call_id": info.get("tool_call_id"), "content": tool_result(step)}
        )
        self.current = None

    def _complete(self) -> tuple[dict[str, Any], dict[str, Any] | None]:
        return chat_completion(self.client, self.settings, self.messages, ACTION_TOOLS, self.seed)

    def _next_turn(self) -> list[dict[str, Any]]:
        """Ask the model (one reminder after a reply without a tool call); [] when it gave none."""
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
                self.messages += [
                    {"role": "assistant", "content": text},
                    {"role": "user", "content": REMINDER},
                ]
        else:
            self.messages.append({"role": "assistant", "content": text})
            self.ended_without_action = replies
            return []
        for number, call in enumerate(calls):
            call["id"] = call.get("id") or f"turn{self.turn}_call{number + 1}"
            if not isinstance(call.get("function"), dict) or not call["function"].get("name"):
                raise LLMError(f"{self.settings.base_url}: tool call without a function name")
        self.messages.append(
            {
                "role": "assistant",
                "content": text or None,
                "tool_calls": [
                    {
                        "id": c["id"],
                        "type": "function",
                        "function": {
                            "name": c["function"]["name"],
                            "arguments": c["function"].get("arguments") or "{}",
                        },
                    }
                    for c in calls
                ],
            }
        )
        reasoning = message.get("reasoning_content") or message.get("reasoning") or None
        queued = []
        for number, call in enumerate(calls):
            action, dropped = action_from_call(
                call["function"]["name"], call["function"].get("arguments")
            )
            info: dict[str, Any] = {
                "turn": self.turn,
                "tool_call_id": call["id"],
                "model": self.settings.model,
            }
            if number == 0 and replies:
                info["replies_without_tool_call"] = replies
            if dropped:
                info["dropped_arguments"] = dropped
            first = number == 0
            queued.append(
                {
                    "action": action,
                    "llm": first,
                    "message": text if first else "",
                    "reasoning": reasoning if first else None,
                    "metrics": metrics if first else None,
                    "model": message.get("_model") if first else None,
                    "extra": {"llm": info},
                }
            )
        return queued
