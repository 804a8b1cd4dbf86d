"""Policies for action episodes: ``scripted`` (an action list from YAML), ``random`` and ``llm``
(:mod:`recorder.agents.llm_episode`).

Each is an :class:`recorder.agents.base.Agent`: asked for action ``index`` (0-based) given the
latest observation, it returns a Decision whose name is the ARIA Action's ``action_type`` and
whose arguments are its other fields (:func:`action_of` gives the Action back), or None when
it has nothing more to do. ``scripted`` and ``random`` are stateless in the index, so a
resumed recording asks them again from where it was.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from pathlib import Path
from typing import Any

import yaml

from contract.errors import BadInput
from contract.untrusted import read_file
from recorder.agents.base import Agent, Decision

ACTION_TYPES = (
    "diagnose",
    "read_logs",
    "read_metrics",
    "read_runbook",
    "restart_service",
    "rollback",
    "scale_up",
    "alert_oncall",
    "acknowledge",
    "noop",
    "search_logs",
    "block_ip_range",
    "create_index",
    "failover",
)
"""The 14 ARIA action types (CASE-README "Action")."""

ACTION_FIELDS = (
    "service",
    "root_cause",
    "runbook",
    "version",
    "reason",
    "query",
    "ip_range",
    "table",
    "column",
    "target_region",
)
"""The optional string fields of an Action."""


class EpisodePolicy(Agent):
    """Base class of the episode policies: an Agent whose observations are ARIA observation
    dicts; ``name`` goes into the run's agent name (``alertforge-aria-<name>``)."""

    name = "policy"


def action_decision(action: dict[str, Any]) -> Decision:
    """The Decision for an ARIA Action: ``action_type`` as the name, the other fields as
    arguments (in their order)."""
    return Decision(str(action["action_type"]),
                    {key: value for key, value in action.items() if key != "action_type"})


def action_of(decision: Decision) -> dict[str, Any]:
    """The ARIA Action a Decision stands for: ``{"action_type": name, **arguments}``."""
    return {"action_type": decision.name, **decision.arguments}


class ScriptedPolicy(EpisodePolicy):
    """Plays a fixed list of actions in order (a dual-agent file's findings are skipped:
    they are the observer's, :class:`ScriptedObserver`)."""

    name = "scripted"

    def __init__(self, actions: list[dict[str, Any]], label: str = "scripted"):
        self.actions = [a for a in actions if "finding" not in a]
        self.label = label

    def decide(self, observation: dict[str, Any], index: int) -> Decision | None:
        """The list's action ``index``, None past its end."""
        return action_decision(self.actions[index]) if index < len(self.actions) else None


def _yaml_loader() -> type[yaml.SafeLoader]:
    class NoAliases(yaml.SafeLoader):
        def compose_node(self, parent, index):  # type: ignore[override]
            if self.check_event(yaml.AliasEvent):
                event = self.peek_event()
                raise yaml.MarkedYAMLError(
                    problem="aliases are not allowed", problem_mark=event.start_mark
                )
            return super().compose_node(parent, index)

    return NoAliases


def read_actions(path: str | Path, *, findings: bool = False) -> list[dict[str, Any]]:
    """The action list of a YAML file: a list of actions, or ``{actions: [...]}``.

    Each action is a mapping with ``action_type`` (one of :data:`ACTION_TYPES`) and optional
    string fields from :data:`ACTION_FIELDS`, e.g. ``{action_type: read_logs, service: api}``.
    With ``findings`` (a dual-agent session) an entry may instead be ``{finding: TEXT}``,
    something the observer reports (see :class:`ScriptedObserver`).

    Raises:
        BadInput: naming the file: missing, not YAML (aliases refused), or an action that is
            not a mapping, has an unknown type or field, or a non-string value; a finding
            without ``findings``.
    """
    path = Path(path)
    try:
        text = read_file(path, cap=16 * 1024 * 1024).decode("utf-8")
    except UnicodeDecodeError as err:
        raise BadInput(path, f"cannot read: {err}") from None
    try:
        data = yaml.load(text, Loader=_yaml_loader())  # a SafeLoader that refuses aliases
    except yaml.YAMLError as err:
        raise BadInput(path, f"not valid YAML: {err}") from None
    if isinstance(data, dict) and "actions" in data:
        data = data["actions"]
    if not isinstance(data, list) or not data:
        raise BadInput(path, "expected a non-empty list of actions (or {actions: [...]})")
    actions = []
    for index, item in enumerate(data):
        where = f"action {index + 1}"
        if not isinstance(item, dict):
            raise BadInput(path, f"{where} is not a mapping")
        if "finding" in item:
            if not findings:
                raise BadInput(path, f"{where}: a finding is the observer's, for --mode dual only")
            if set(item) != {"finding"} or not isinstance(item["finding"], str):
                raise BadInput(path, f"{where}: a finding is {{finding: TEXT}} and nothing else")
            actions.append(dict(item))
            continue
        if item.get("action_type") not in ACTION_TYPES:
            raise BadInput(
                path,
                f"{where}: action_type {item.get('action_type')!r} is not one of "
                + ", ".join(ACTION_TYPES),
            )
        for key, value in item.items():
            if key != "action_type" and key not in ACTION_FIELDS:
                raise BadInput(path, f"{where}: unknown field {key!r}")
            if not isinstance(value, str):
                raise BadInput(path, f"{where}: {key} must be a string, got {value!r}")
        actions.append(dict(item))
    return actions


class RandomPolicy(EpisodePolicy):
    """A uniformly random action type, with fields filled from the observation.

    Action ``index`` of seed ``s`` is drawn from ``random.Random(f"{s}:{index}")``, so the
    same seed and observations give the same actions, also after a resume.
    """

    name = "random"

    def __init__(self, seed: int | None, max_actions: int | None = None):
        self.seed = seed
        self.max_actions = max_actions

    def decide(self, observation: dict[str, Any], index: int) -> Decision | None:
        """A random action for step ``index``; None once ``max_actions`` are taken."""
        if self.max_actions is not None and index >= self.max_actions:
            return None
        rng = random.Random(f"aria-random:{self.seed}:{index}")
        services = [
            s.get("name")
            for s in observation.get("services") or []
            if isinstance(s, dict) and isinstance(s.get("name"), str)
        ] or ["api-gateway"]
        service = rng.choice(services)
        action_type = rng.choice(ACTION_TYPES)
        action: dict[str, Any] = {"action_type": action_type}
        if action_type in _SERVICE_ACTIONS:
            action["service"] = service
        fields = _RANDOM_FIELDS.get(action_type)
        if fields is not None:
            action.update(fields(rng, service, observation))
        return action_decision(action)


_SERVICE_ACTIONS = ("read_logs", "read_metrics", "restart_service", "rollback", "scale_up",
                    "failover", "search_logs")
"""The action types :class:`RandomPolicy` gives the drawn service as their ``service``."""


def _random_root_cause(rng: random.Random, service: str, observation: dict[str, Any]) -> dict:
    return {"root_cause": f"{rng.choice(['memory leak', 'bad deployment', 'overload'])} in {service}"}


def _random_runbook(rng: random.Random, service: str, observation: dict[str, Any]) -> dict:
    runbooks = [r for r in observation.get("available_runbooks") or [] if isinstance(r, str)]
    return {"runbook": rng.choice(runbooks) if runbooks else "high_cpu.md"}


def _oncall_reason(rng: random.Random, service: str, observation: dict[str, Any]) -> dict:
    return {"reason": f"{service} needs attention"}


def _random_alert(rng: random.Random, service: str, observation: dict[str, Any]) -> dict:
    alerts = [
        a.get("id")
        for a in observation.get("active_alerts") or []
        if isinstance(a, dict) and isinstance(a.get("id"), str)
    ]
    return {"service": rng.choice(alerts) if alerts else service}


def _random_query(rng: random.Random, service: str, observation: dict[str, Any]) -> dict:
    return {"query": rng.choice(["error", "timeout", "OOM", "5xx"])}


def _random_ip_range(rng: random.Random, service: str, observation: dict[str, Any]) -> dict:
    return {"ip_range": f"{rng.randrange(1, 224)}.{rng.randrange(256)}.0.0/16"}


def _random_index(rng: random.Random, service: str, observation: dict[str, Any]) -> dict:
    table, column = rng.choice([("orders", "user_segment"), ("users", "email")])
    return {"table": table, "column": column}


def _failover_region(rng: random.Random, service: str, observation: dict[str, Any]) -> dict:
    return {"target_region": "us-west-2"}


_RANDOM_FIELDS: dict[str, Callable[[random.Random, str, dict[str, Any]], dict]] = {
    "diagnose": _random_root_cause,
    "read_runbook": _random_runbook,
    "alert_oncall": _oncall_reason,
    "acknowledge": _random_alert,
    "search_logs": _random_query,
    "block_ip_range": _random_ip_range,
    "create_index": _random_index,
    "failover": _failover_region,
}
"""Per action type, the fields :class:`RandomPolicy` fills beyond ``action_type`` and
``service``: ``(rng, drawn service, observation) -> fields``, drawing from ``rng`` in order."""


FINDING_TOOL = "report_finding"
"""The observer's one action in a dual-agent session (ARIA's ``step/a {finding}``)."""


class ScriptedObserver(EpisodePolicy):
    """The observer of a dual-agent session reporting the ``{finding: TEXT}`` entries of an
    actions file in order (:func:`read_actions` with ``findings=True``); ``index`` counts
    the observer's own findings."""

    name = "scripted"

    def __init__(self, entries: list[dict[str, Any]], label: str = "scripted"):
        self.findings = [str(e["finding"]) for e in entries if "finding" in e]
        self.label = label

    def decide(self, observation: dict[str, Any], index: int) -> Decision | None:
        """Finding ``index`` as a ``report_finding`` call, None past the last."""
        if index >= len(self.findings):
            return None
        return Decision(FINDING_TOOL, {"finding": self.findings[index]})


class RandomObserver(EpisodePolicy):
    """An observer reporting what it sees, drawn at random: an active alert's message or a
    recent log line of the observer's view (``observation_a``), from
    ``random.Random(f"{seed}:{index}")``; at most ``max_findings`` (default 3)."""

    name = "random"

    def __init__(self, seed: int | None, max_findings: int | None = None):
        self.seed = seed
        self.max_findings = 3 if max_findings is None else max_findings

    def decide(self, observation: dict[str, Any], index: int) -> Decision | None:
        """A finding for the observer's turn ``index``; None past ``max_findings``."""
        if index >= self.max_findings:
            return None
        rng = random.Random(f"aria-observer:{self.seed}:{index}")
        seen = [f"{a.get('service')}: {a.get('message')}" for a in observation.get("active_alerts") or []
                if isinstance(a, dict) and a.get("message")]
        for service, lines in sorted((observation.get("recent_logs") or {}).items()):
            seen += [f"{service} log: {line}" for line in lines or [] if isinstance(line, str)]
        if not seen:
            return None
        return Decision(FINDING_TOOL, {"finding": rng.choice(seen)})
