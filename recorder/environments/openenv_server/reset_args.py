"""What a reset's arguments choose: a bundled task or a fresh one, its split and reward mode.

Reset arguments (every one optional; docs in the README, "OpenEnv server"):

- ``task``: a bundled task id (``af-001-slo-onboarding-easy-s1``); then ``workflow`` and
  ``tier`` come from it, ``split`` may only be ``train`` and ``seed`` is not used;
- otherwise a fresh task from the generator (:mod:`.fresh_tasks`): ``split`` (``train``, the
  default, or ``heldout``), ``workflow`` and ``tier`` (default: picked by ``seed`` from the
  implemented workflows and the three tiers, workflow first), ``seed`` (an integer from 0 to
  2**32 - 1; default: a random one, reported back in the observation);
- ``reward_mode``: ``parity`` (train's default) or ``outcome`` (the only mode of
  ``heldout``); ``max_steps`` (default 60).

Any other argument is an error, so a misspelt one is never ignored.
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from recorder.environments.openenv_server.fresh_tasks import (
    TRAIN_SEED_LIMIT,
    FreshTasks,
    ResetRefused,
    check_seed,
)

DEFAULT_MAX_STEPS = 60
REWARD_MODES = ("parity", "outcome")
KNOWN = ("task", "split", "workflow", "tier", "reward_mode", "max_steps")


@dataclass(frozen=True)
class Episode:
    """What one reset chose: the task folder and how the episode is scored and shown.

    ``details`` is whether observations carry grades (train) or only the outcome (heldout).
    """

    task_dir: Path
    task_id: str
    split: str
    workflow: str
    tier: str
    seed: int | None
    reward_mode: str
    max_steps: int

    @property
    def details(self) -> bool:
        """Grades and levels in observations: only on the train split."""
        return self.split == "train"


def choose(bundled: list[Path], fresh: FreshTasks, seed: int | None,
           arguments: dict[str, Any]) -> Episode:
    """The episode a reset with ``seed`` and ``arguments`` (the other reset keywords) starts.

    Raises:
        ValueError: an unknown argument, task, split, workflow, tier or reward mode, a
            bundled task with ``split="heldout"``, or parity reward on ``heldout``.
    """
    unknown = sorted(set(arguments) - set(KNOWN))
    if unknown:
        raise ResetRefused(f"unknown reset argument(s) {', '.join(unknown)}; known: seed, "
                         f"episode_id, {', '.join(KNOWN)}")
    split = arguments.get("split") or "train"
    mode = arguments.get("reward_mode") or ("parity" if split == "train" else "outcome")
    if mode not in REWARD_MODES:
        raise ResetRefused(f"reward_mode must be one of {', '.join(REWARD_MODES)}")
    if split == "heldout" and mode != "outcome":
        raise ResetRefused("the heldout split gives outcome reward only (reward_mode=outcome)")
    max_steps = _max_steps(arguments.get("max_steps", DEFAULT_MAX_STEPS))
    if arguments.get("task"):
        return _bundled(bundled, str(arguments["task"]), split, arguments, mode, max_steps)
    seed = secrets.randbelow(TRAIN_SEED_LIMIT) if seed is None else check_seed(seed)
    workflow, tier = arguments.get("workflow"), arguments.get("tier")
    if workflow is None or tier is None:
        from tasks.generator.generate import TIERS
        from tasks.generator.workflows import implemented

        names = implemented()
        workflow = workflow or names[seed % len(names)]
        tier = tier or TIERS[(seed // len(names)) % len(TIERS)]
    task = fresh.task(split, workflow, tier, seed)
    return Episode(task_dir=task.path, task_id=task.task_id, split=split, workflow=workflow,
                   tier=tier, seed=seed, reward_mode=mode, max_steps=max_steps)


def _max_steps(value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ResetRefused("max_steps must be a positive integer")
    return value


def _bundled(bundled: list[Path], task: str, split: str, arguments: dict, mode: str,
             max_steps: int) -> Episode:
    if split != "train":
        raise ResetRefused("a bundled task is public: only split=train; held-out tasks come "
                         "from the server's master seed (omit task)")
    if arguments.get("workflow") or arguments.get("tier"):
        raise ResetRefused("task names a bundled task: its workflow and tier come with it")
    for folder in bundled:
        if folder.name == task:
            workflow, tier = _workflow_tier(folder)
            return Episode(task_dir=folder, task_id=folder.name, split="train",
                           workflow=workflow, tier=tier, seed=None, reward_mode=mode,
                           max_steps=max_steps)
    raise ResetRefused(f"unknown task {task!r}; known: {', '.join(t.name for t in bundled)}")


def _workflow_tier(folder: Path) -> tuple[str, str]:
    """(workflow, tier) from a bundled task's spec ("" when it does not say)."""
    from contract.untrusted import Tree

    tree = Tree(folder)
    spec = tree.read_json("tests/spec.json") if tree.is_file("tests/spec.json") else {}
    spec = spec if isinstance(spec, dict) else {}
    return str(spec.get("workflow") or ""), str(spec.get("tier") or "")
