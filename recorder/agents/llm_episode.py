"""Policy ``llm`` for action episodes: a model behind any OpenAI-compatible chat-completions endpoint.

The model gets the 14 ARIA action types as tools (:data:`ACTION_TOOLS`: function name =
``action_type``, parameters = the Action's optional string fields) and the episode as a
conversation: the user message is the run's instruction (step 1's message) with the
``/reset`` observation; every action it calls is one step, answered with a tool message that
holds the step's reward, running total, ``done`` and the observation JSON (or the server's
error). Endpoint, model, key, prices and retries are those of the alerting ``llm`` policy
(:func:`recorder.agents.llm_endpoint.settings_from`: ``--base-url --model --api-key-env`` or
``OPENAI_BASE_URL``, ``ALERTFORGE_MODEL``, ``OPENAI_API_KEY``), and so are the per-step ATIF
metrics (:func:`recorder.agents.llm_endpoint.step_metrics`: prompt, completion and cached tokens,
cost when known, ``extra.finish_reason``); the turns are
:class:`recorder.agents.conversation.Conversation`'s.

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

from recorder.agents.base import Decision
from recorder.agents.conversation import Conversation, Turn
from recorder.agents.episode_policies import (
    ACTION_FIELDS,
    ACTION_TYPES,
    FINDING_TOOL,
    EpisodePolicy,
)
from recorder.agents.llm_endpoint import LLMSettings, content_text, parse_arguments

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
    return json.dumps(head) + "\n" + content_text(results[0].get("content"))


def first_message(step: dict[str, Any]) -> str:
    """The user message: the run's instruction (step 1) and the ``/reset`` observation."""
    observation = ((step.get("extra") or {}).get("env") or {}).get("observation") or {}
    return (
        content_text(step.get("message"))
        + "\n\nThe current observation (JSON):\n"
        + json.dumps(observation, indent=2)
    )


def action_from_call(name: str, raw_arguments: Any) -> tuple[dict[str, Any], dict[str, Any]]:
    """``(action, dropped)`` from a tool call: the Action to send and the arguments left out.

    Only :data:`ACTION_FIELDS` with string values are sent; anything else (other keys,
    non-strings, arguments that are not a JSON object) goes into ``dropped``.
    """
    arguments = parse_arguments(raw_arguments)
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
    at least) before the first :meth:`decide`, and :meth:`observe` after each step.
    """

    name = "llm"

    def __init__(self, settings: LLMSettings, seed: int | None, *,
                 max_actions: int | None = None, client: Any = None):
        self.settings = settings
        self.model = settings.model
        self.label = "llm"
        self.max_actions = max_actions
        self.conversation = Conversation(settings, ACTION_TOOLS, SYSTEM_PROMPT, REMINDER, seed, client)
        self.queue: list[Decision] = []
        self.started = False
        self.ended_without_action: list[str] = []
        self.end_note: str | None = None
        """Why the model ended the episode (run.json ``notes``), when it did."""

    @property
    def endpoint(self) -> dict[str, Any] | None:
        """The server as it described itself (run.json ``endpoint``), once resumed."""
        return self.conversation.endpoint

    def resume(self, steps: list[dict[str, Any]]) -> None:
        """Rebuild the conversation from the run's steps (ATIF dicts; step 1 the user step).

        Raises:
            BadInput: the steps were recorded with another model (``extra.llm.model``).
        """
        self.conversation.start(first_message(steps[0]))
        own = [s for s in steps[1:] if not _observers(s)]  # a dual session's findings are not its
        self.conversation.replay(own, _arguments_text, tool_result)
        self.queue, self.started = [], True

    def decide(self, observation: dict[str, Any], index: int) -> Decision | None:
        """The next tool call as an Action: a queued call of this turn, or a new model turn.

        None once ``max_actions`` actions are taken or the model twice answered without a
        tool call.

        Raises:
            LLMError: the endpoint failed or its reply is not a completion.
        """
        if self.max_actions is not None and index >= self.max_actions:
            return None
        if not self.started:
            raise RuntimeError("LLMEpisodePolicy.resume(steps) must be called first")
        if not self.queue:
            turn = self.conversation.ask()
            if not turn.calls:
                self.ended_without_action = turn.replies
                self.end_note = _end_note(turn)
                return None
            self.queue = self._decisions(turn)
        return self.queue.pop(0)

    def owns(self, step: dict[str, Any]) -> bool:
        """Whether ``step`` is this policy's (a dual session's findings are the observer's)."""
        return not _observers(step)

    def result_text(self, step: dict[str, Any]) -> str:
        """The tool message the model reads for its recorded ``step``."""
        return tool_result(step)

    def observe(self, step: dict[str, Any]) -> None:
        """Answer the current call with the recorded step's result (the next tool message)."""
        if not self.owns(step):
            return
        info = (step.get("extra") or {}).get("llm") or {}
        self.conversation.answer(info.get("tool_call_id"), self.result_text(step))

    def _decisions(self, turn: Turn) -> list[Decision]:
        """One decision per tool call: the Action's fields as arguments, the rest dropped."""
        decisions = []
        for index, call in enumerate(turn.calls):
            action, dropped = action_from_call(call["name"], call["arguments"])
            info = turn.info(call["id"], self.settings, index == 0)
            if dropped:
                info["dropped_arguments"] = dropped
            decisions.append(_decision(turn, index, action["action_type"],
                                       {k: v for k, v in action.items() if k != "action_type"}, info))
        return decisions


def _end_note(turn: Turn) -> str:
    """Why a turn without calls ends the episode: the endpoint's refusal (its error message,
    as sent) or the model's two replies without a tool call, with their quirks."""
    if turn.stopped:
        error = turn.stopped.get("error") or {}
        return (f"policy llm: the endpoint refused turn {turn.number} "
                f"({turn.stopped['reason']}): {error.get('message', '')}")
    quirks = f" (quirks: {', '.join(turn.quirks)})" if turn.quirks else ""
    return (f"policy llm: turn {turn.number} twice answered without a tool call{quirks}: "
            + json.dumps(turn.replies))
def _decision(turn: Turn, index: int, name: str, arguments: dict[str, Any],
              info: dict[str, Any]) -> Decision:
    """Call ``index`` of ``turn`` as a Decision; the first carries the turn's message,
    reasoning, metrics and model."""
    first = index == 0
    return Decision(name, arguments, message=turn.text if first else "",
                    reasoning=turn.reasoning if first else None,
                    metrics=turn.metrics if first else None, model=turn.model if first else None,
                    extra={"llm": info}, llm=first)


def _observers(step: dict[str, Any]) -> bool:
    return ((step.get("extra") or {}).get("env") or {}).get("agent") == "observer"


def _arguments_text(call: dict[str, Any], info: dict[str, Any]) -> str:
    """What the model sent for a recorded call: its sent fields and the dropped ones."""
    return json.dumps({**(call.get("arguments") or {}), **(info.get("dropped_arguments") or {})})


OBSERVER_PROMPT = """You are the observer in a two-agent incident response. You cannot act \
on the system: you watch the alerts, logs and evidence and report findings to the \
responder, who acts. Each report_finding call is one finding (a sentence or two of what \
you see and what it suggests); the environment answers whether it was accepted, with your \
updated view. Report the most useful findings first; stop calling tools when you have \
nothing new to report."""

FINDING_TOOLS: list[dict[str, Any]] = [{
    "type": "function",
    "function": {
        "name": FINDING_TOOL,
        "description": "Report one finding to the responder (at least 5 characters).",
        "parameters": {"type": "object", "properties": {"finding": {
            "type": "string", "description": "what you observed and what it suggests"}},
            "required": ["finding"], "additionalProperties": False},
    },
}]
"""The observer's one tool (ARIA's ``POST /multi-agent/step/a/{sid} {finding}``)."""


def observer_result(step: dict[str, Any]) -> str:
    """What the observer reads after a finding: accepted, its reward, then its view."""
    env = (step.get("extra") or {}).get("env") or {}
    head = {"accepted": env.get("accepted"), "reward": env.get("observer_reward"),
            "refused": env.get("refused")}
    return json.dumps(head) + "\n" + json.dumps(env.get("observer_observation") or {}, indent=2)


class LLMObserverPolicy(LLMEpisodePolicy):
    """The observer of a dual-agent session as a model: one tool, ``report_finding``.

    Its conversation starts from the run's instruction and the observer's view at reset
    (``extra.env.observer_observation`` of step 1) and holds only its own steps; each tool
    message is :func:`observer_result` (the view as the finding's answer gave it, so what the
    responder did after that is seen at the next answer). A reply without a tool call ends
    its findings; ``max_actions`` caps them.
    """

    name = "llm"

    def __init__(self, settings: LLMSettings, seed: int | None, *,
                 max_actions: int | None = None, client: Any = None):
        super().__init__(settings, seed, max_actions=max_actions, client=client)
        self.label = "llm-observer"
        self.conversation = Conversation(settings, FINDING_TOOLS, OBSERVER_PROMPT,
                                         "Report a finding with report_finding, or stop.", seed,
                                         client if client is not None else self.conversation.client)

    def resume(self, steps: list[dict[str, Any]]) -> None:
        """Rebuild the conversation from the observer's own steps of ``steps``."""
        first = steps[0]
        view = ((first.get("extra") or {}).get("env") or {}).get("observer_observation") or {}
        self.conversation.start(content_text(first.get("message"))
                                + "\n\nWhat you see now (JSON):\n" + json.dumps(view, indent=2))
        own = [s for s in steps[1:] if _observers(s)]
        self.conversation.replay(own, _arguments_text, observer_result)
        self.queue, self.started = [], True

    def owns(self, step: dict[str, Any]) -> bool:
        """Only the observer's own findings (responder steps are not its)."""
        return _observers(step)

    def result_text(self, step: dict[str, Any]) -> str:
        """:func:`observer_result`."""
        return observer_result(step)

    def _decisions(self, turn: Turn) -> list[Decision]:
        decisions = []
        for index, call in enumerate(turn.calls):
            arguments = parse_arguments(call["arguments"])
            finding = arguments.get("finding")
            info = turn.info(call["id"], self.settings, index == 0)
            dropped = {k: v for k, v in arguments.items() if k != "finding"}
            if dropped or not isinstance(finding, str):
                info["dropped_arguments"] = dropped if isinstance(finding, str) else arguments
            decisions.append(_decision(turn, index, FINDING_TOOL,
                                       {"finding": finding if isinstance(finding, str) else ""}, info))
        return decisions
