"""The 3amBench tasks as an OpenEnv ``Environment``: an action is one tool call, graded on change.

Reset picks a task (``task`` id, else ``seed`` modulo the task count) and copies its
pristine repo into a private temporary workspace; every step runs one tool of
:mod:`recorder.environments.workspace` there. Reward modes (reset ``reward_mode``):

- ``parity`` (default): a step's reward is the grade level after it minus the rewards
  handed out so far (reset included), so the rewards of an episode sum to its final
  grade level, the reward Harbor's verifier gives the same files;
- ``outcome``: 0 on every step, the final level on the step that ends the episode.

The episode ends on ``submit`` or after ``max_steps`` steps. Observations carry the tool
output and, on graded steps, ``grade`` (the recorder's per-step grade summary: reward
level, delta, check-state string, keys, failing checks), so a driven run can be shown like
a recorded one.
"""

from __future__ import annotations

import uuid
from pathlib import Path
from typing import Any

from openenv.core.env_server.interfaces import Environment
from openenv.core.env_server.types import Action, Observation, State
from pydantic import Field

from contract.paths import task_dirs
from recorder.environments.graded import GradedWorkspace

DEFAULT_MAX_STEPS = 60
REWARD_MODES = ("parity", "outcome")


class AlertForgeAction(Action):
    """One tool call: ``tool`` and the arguments that tool takes (recorder/environments/workspace.py)."""

    tool: str = Field(..., description="list_files, read_file, write_file, replace_in_file, "
                      "run_checks, route_test or submit")
    path: str | None = Field(default=None, description="file path relative to the repo root")
    content: str | None = Field(default=None, description="write_file: the whole new file")
    old: str | None = Field(default=None, description="replace_in_file: text to replace")
    new: str | None = Field(default=None, description="replace_in_file: replacement")
    all: bool | None = Field(default=None, description="replace_in_file: every occurrence")
    labels: dict[str, str] | None = Field(default=None, description="route_test: alert labels")

    def arguments(self) -> dict[str, Any]:
        """The tool's arguments (fields that were given, without ``tool`` and ``metadata``)."""
        return {k: v for k, v in self.model_dump(exclude={"tool", "metadata"}).items()
                if v is not None}


class AlertForgeObservation(Observation):
    """What the agent sees after reset or a step."""

    output: str = Field(default="", description="the tool's output (reset: the instruction)")
    tool_error: bool = Field(default=False)
    task_id: str = Field(default="")
    instruction: str = Field(default="", description="set on reset")
    step: int = Field(default=0)
    changed_files: list[str] = Field(default_factory=list)
    level: float = Field(default=0.0, description="grade level of the workspace now")
    grade: dict | None = Field(default=None, description="grade summary on graded steps")


class AlertForgeState(State):
    """Server-side episode state."""

    task_id: str = ""
    reward_mode: str = "parity"
    level: float = 0.0
    paid: float = 0.0
    done: bool = False


class AlertForgeEnvironment(Environment[AlertForgeAction, AlertForgeObservation, AlertForgeState]):
    """One episode at a time on a private copy of a task's repo (sessions do not share files)."""

    SUPPORTS_CONCURRENT_SESSIONS = True

    def __init__(self, tasks_dir: str | Path | None = None):
        super().__init__()
        self.tasks = task_dirs(tasks_dir)
        self.workspace: GradedWorkspace | None = None
        self.task_dir: Path | None = None
        self.max_steps = DEFAULT_MAX_STEPS
        self._state = AlertForgeState(episode_id=None, step_count=0)

    def _pick(self, task: str | None, seed: int | None) -> Path:
        if task:
            for folder in self.tasks:
                if folder.name == task:
                    return folder
            raise ValueError(f"unknown task {task!r}; known: {', '.join(t.name for t in self.tasks)}")
        return self.tasks[(seed or 0) % len(self.tasks)]

    def reset(self, seed: int | None = None, episode_id: str | None = None, task: str | None = None,
              reward_mode: str = "parity", max_steps: int = DEFAULT_MAX_STEPS,
              **kwargs: Any) -> AlertForgeObservation:
        """Start an episode on ``task`` (id) or the task ``seed`` picks.

        Raises ValueError for an unknown task or reward mode (the server reports it).
        """
        if reward_mode not in REWARD_MODES:
            raise ValueError(f"reward_mode must be one of {REWARD_MODES}")
        self.close()
        self.task_dir = self._pick(task, seed)
        self.workspace = GradedWorkspace(self.task_dir, prefix="alertforge-openenv-")
        self.max_steps = max(1, int(max_steps))
        graded = self.workspace.grade()
        summary, level = graded.summary, graded.result["reward"]
        reward = level if reward_mode == "parity" else 0.0
        self._state = AlertForgeState(episode_id=episode_id or str(uuid.uuid4()), step_count=0,
                                      task_id=self.task_dir.name, reward_mode=reward_mode,
                                      level=level, paid=reward)
        instruction = (self.task_dir / "instruction.md").read_text(encoding="utf-8")
        return AlertForgeObservation(output=instruction, instruction=instruction,
                                     task_id=self.task_dir.name, level=level, grade=summary,
                                     reward=reward, done=False)

    def step(self, action: AlertForgeAction, timeout_s: float | None = None,
             **kwargs: Any) -> AlertForgeObservation:
        """Run one tool call; grade when it changed a file; reward per the episode's mode."""
        state = self._state
        if self.workspace is None or state.done:
            return AlertForgeObservation(output="error: no episode running; call reset",
                                         tool_error=True, done=True, reward=0.0,
                                         task_id=state.task_id, level=state.level)
        state.step_count += 1
        called = self.workspace.call(action.tool, action.arguments())
        outcome, summary = called.tool, None
        changed = [outcome.changed] if outcome.changed else []
        output = outcome.output
        if called.graded is not None:
            if called.graded.error is not None:
                output += f"\n(grader error: {called.graded.error})"
            else:
                summary = called.graded.summary
                state.level = called.graded.result["reward"]
        state.done = outcome.done or state.step_count >= self.max_steps
        if state.reward_mode == "parity":
            reward = state.level - state.paid
        else:
            reward = state.level if state.done else 0.0
        state.paid += reward
        return AlertForgeObservation(output=output, tool_error=outcome.error, task_id=state.task_id,
                                     step=state.step_count, changed_files=changed,
                                     level=state.level, grade=summary, reward=reward,
                                     done=state.done)

    @property
    def state(self) -> AlertForgeState:
        return self._state

    def close(self) -> None:
        """Remove the episode's workspace."""
        if self.workspace is not None:
            self.workspace.close()
        self.workspace = None
