"""Policy names to agents: the scripted reference policies and the model-backed ``llm`` agent
for alerting tasks, and the ``scripted``, ``random`` and ``llm`` policies for action episodes."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from contract.errors import BadInput
from recorder.agents.base import Agent, ScriptedAgent
from recorder.agents.episode_policies import (
    EpisodePolicy,
    RandomPolicy,
    ScriptedPolicy,
    read_actions,
)
from recorder.reference.policies import POLICIES, adversary

INTERACTIVE = ("llm",)
"""Policies that ask a model for every step (the rest are scripted reference policies)."""


def make_agent(name: str, task_dir: Path, seed: int, options: dict | None = None) -> Agent:
    """The agent for policy ``name``: a reference policy's script, or the ``llm`` agent
    (``options`` are its endpoint settings: :func:`recorder.agents.llm_endpoint.settings_from`).

    Raises:
        BadInput: an unknown name (naming the known policies), or ``llm`` without an
            endpoint, model or key.
    """
    if name in POLICIES:
        return ScriptedAgent(POLICIES[name](task_dir, seed))
    if name.startswith("adversary:"):
        return ScriptedAgent(adversary(name.split(":", 1)[1])(task_dir, seed))
    if name == "llm":
        from recorder.agents.llm_alerting import make_llm_agent

        return make_llm_agent(task_dir, seed, options or {})
    known = ", ".join([*POLICIES, "adversary:<kind>", *INTERACTIVE])
    raise BadInput(name, f"unknown policy; known: {known}")


def make_episode_policy(
    name: str,
    seed: int | None,
    actions_file: str | Path | None = None,
    options: dict[str, Any] | None = None,
) -> EpisodePolicy:
    """The policy ``name``: ``scripted`` (needs ``actions_file``), ``random`` or ``llm``.

    ``options`` (``llm``): the endpoint settings of :func:`recorder.agents.llm_endpoint.settings_from`
    and ``max_steps``, the policy's action limit.

    Raises:
        BadInput: unknown name, ``scripted`` without an actions file, a bad actions file, or
            ``llm`` without an endpoint, model or key.
    """
    if name == "llm":
        from recorder.agents.llm_endpoint import settings_from
        from recorder.agents.llm_episode import LLMEpisodePolicy

        options = options or {}
        return LLMEpisodePolicy(settings_from(options), seed, max_actions=options.get("max_steps"))
    if name == "scripted":
        if actions_file is None:
            raise BadInput("scripted", "the scripted policy needs --actions FILE.yaml")
        return ScriptedPolicy(read_actions(actions_file), label=f"scripted-{Path(actions_file).stem}")
    if name == "random":
        return RandomPolicy(seed)
    raise BadInput(name, "unknown episode policy; known: scripted, random, llm")
