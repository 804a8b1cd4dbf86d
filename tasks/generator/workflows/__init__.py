"""The workflows the generator knows, one module each.

A workflow module provides (all pure functions of the world, so regeneration is byte-identical):

- ``NAME``: the workflow id (``slo-onboarding``);
- ``sample(task_id, tier, seed) -> World``: the hidden world and its requirements;
- ``pristine_files(world) -> {path: text}``: the monitoring repo the agent starts from;
- ``solution_files(world) -> {path: text}``: the oracle's version of every file it changes;
- ``instruction(world) -> str``: instruction.md (explicit at easy, conventions at medium,
  outcomes only at hard);
- ``reference_records(world) -> str``: reference recording rules for burn alerts that are
  scored half on the agent's records and half on these (seed spec); ``groups: []`` if none.
"""

from __future__ import annotations

import importlib
from pathlib import Path
from types import ModuleType

ORDER = ("slo-onboarding", "alert-storm-cleanup", "missed-page-postmortem", "latency-slo",
         "team-reorg-migration")
"""Every workflow of the corpus, in task-id order (af-001..006 are the first, and so on)."""


def module_name(name: str) -> str:
    """``alert-storm-cleanup`` -> ``alert_storm_cleanup`` (the module in this package)."""
    return name.replace("-", "_")


def implemented() -> list[str]:
    """Workflows of :data:`ORDER` whose module exists, in order (nothing is imported)."""
    here = Path(__file__).parent
    return [name for name in ORDER if (here / f"{module_name(name)}.py").is_file()]


def workflow(name: str) -> ModuleType:
    """The module of workflow ``name`` (imported on first use).

    Raises:
        ValueError: the generator does not know that workflow.
    """
    if name not in implemented():
        raise ValueError(f"unknown workflow {name!r}; known: {', '.join(implemented())}")
    return importlib.import_module(f"tasks.generator.workflows.{module_name(name)}")
