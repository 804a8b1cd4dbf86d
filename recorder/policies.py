"""Policy names to agents: the scripted reference policies and the model-backed ``llm`` agent."""

from __future__ import annotations

from pathlib import Path

from contract.errors import BadInput
from recorder.agents.base import Agent, ScriptedAgent
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
