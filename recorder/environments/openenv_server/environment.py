"""The 3amBench tasks as an OpenEnv 0.10 ``MCPEnvironment``: an action is one tool call, graded on change.

Reset chooses a bundled task or builds a fresh one (:mod:`.reset_args`, :mod:`.fresh_tasks`)
and copies its pristine repo into a private temporary workspace; every step (or /mcp tool
call, :mod:`.mcp_tools`) runs one tool of :mod:`recorder.environments.workspace` there.

Splits and reward modes:

- ``train``, ``parity`` (default): a step's reward is the grade level after it minus the
  rewards handed out so far (reset included), so the rewards of an episode sum to its final
  grade level, the reward Harbor's verifier gives the same files. Observations carry
  ``level`` and, on graded steps, ``grade`` (the recorder's per-step grade summary: reward
  level, delta, check-state string, keys, failing checks with their details);
- ``train``, ``outcome``: as above, but 0 on every step and the final level on the step
  that ends the episode;
- ``heldout``: outcome reward only, and observations carry no ``grade`` and no ``level``
  (``level`` is set on the last observation only, equal to its reward); the episode's
  state hides them too.

The episode ends on ``submit`` or after ``max_steps`` steps.
"""

from __future__ import annotations

import threading
import uuid
from pathlib import Path
from typing import Any

from openenv.core.env_server.mcp_environment import MCPEnvironment
from openenv.core.env_server.types import Action, EnvironmentMetadata, Observation, State
from pydantic import Field

from contract.base import dump
from contract.grade import GradeBlock
from contract.paths import task_dirs
from contract.version import __version__
from recorder.environments.graded import GradedWorkspace
from recorder.environments.openenv_server.fresh_tasks import MAX_FRESH_TASKS, FreshTasks
from recorder.environments.openenv_server.mcp_tools import tool_server
from recorder.environments.openenv_server.reset_args import Episode, choose


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
    split: str = Field(default="", description="train or heldout")
    workflow: str = Field(default="")
    tier: str = Field(default="")
    seed: int | None = Field(default=None, description="the reset's seed (fresh tasks)")
    instruction: str = Field(default="", description="set on reset")
    step: int = Field(default=0)
    changed_files: list[str] = Field(default_factory=list)
    level: float | None = Field(default=None, description="grade level of the workspace now "
                                "(heldout: only on the last observation)")
    grade: dict | None = Field(default=None, description="grade summary on graded train steps")


class AlertForgeState(State):
    """Server-side episode state as clients see it (``level`` None on heldout)."""

    task_id: str = ""
    split: str = ""
    workflow: str = ""
    tier: str = ""
    seed: int | None = None
    reward_mode: str = "parity"
    level: float | None = None
    done: bool = False


class AlertForgeEnvironment(MCPEnvironment):
    """One episode at a time on a private copy of a task's repo (sessions do not share files).

    ``tasks_dir`` holds the bundled tasks (default: tasks/); ``state_dir`` the fresh-task
    cache and the held-out master seed (default: :func:`.fresh_tasks.default_state_dir`).

    Raises:
        BadInput: ``tasks_dir`` holds no task folder.
    """

    SUPPORTS_CONCURRENT_SESSIONS = True

    def __init__(self, tasks_dir: str | Path | None = None, state_dir: str | Path | None = None,
                 max_fresh_tasks: int = MAX_FRESH_TASKS):
        super().__init__(tool_server(self._act_as_tool))
        self.tasks = task_dirs(tasks_dir)
        self.fresh = FreshTasks(state_dir, max_fresh_tasks)
        self._held: Path | None = None
        self.workspace: GradedWorkspace | None = None
        self.episode: Episode | None = None
        self._lock = threading.Lock()
        self._level, self._paid = 0.0, 0.0
        self._state = AlertForgeState(episode_id=None, step_count=0)

    def get_metadata(self) -> EnvironmentMetadata:
        """Name, description and version shown on /metadata and the web interface."""
        return EnvironmentMetadata(
            name="alertforge", version=__version__, author="3amBench Replay",
            description="Alerting-as-code tasks (Prometheus rules, Alertmanager routing) "
                        "graded by the real promtool and amtool; reset with task, or seed, "
                        "split (train, heldout), workflow, tier.")

    def reset(self, seed: int | None = None, episode_id: str | None = None,
              **kwargs: Any) -> AlertForgeObservation:
        """Start an episode on the task the arguments choose (:func:`.reset_args.choose`).

        Raises ValueError for bad arguments (the server reports it to the client).
        """
        with self._lock:
            episode = choose(self.tasks, self.fresh, seed, kwargs)
            self._end_episode()
            if episode.task_dir.parent == self.fresh.cache_dir:  # a fresh task: held until the end
                self._held = episode.task_dir
            self.episode = episode
            self.workspace = GradedWorkspace(episode.task_dir, prefix="alertforge-openenv-")
            graded = self.workspace.grade()
            level, summary = graded.result.reward, graded.summary
            reward = level if episode.reward_mode == "parity" else 0.0
            self._level, self._paid = level, reward
            self._state = AlertForgeState(
                episode_id=episode_id or str(uuid.uuid4()), step_count=0,
                task_id=episode.task_id, split=episode.split, workflow=episode.workflow,
                tier=episode.tier, seed=episode.seed, reward_mode=episode.reward_mode,
                level=level if episode.details else None)
            instruction = (episode.task_dir / "instruction.md").read_text(encoding="utf-8")
            return self._observation(output=instruction, instruction=instruction,
                                     reward=reward, summary=summary)

    def _step_impl(self, action: Action, timeout_s: float | None = None,
                   **kwargs: Any) -> AlertForgeObservation:
        """Run one tool call; grade when it changed a file; reward per the episode's mode."""
        with self._lock:
            return self._act(action.tool, action.arguments())

    def _act_as_tool(self, tool: str, arguments: dict) -> dict:
        """An /mcp tool call: the same action as a step, the observation as a dict."""
        with self._lock:
            observation = self._act(tool, arguments)
        return observation.model_dump(exclude={"instruction", "metadata"})

    def _act(self, tool: str, arguments: dict) -> AlertForgeObservation:
        state, episode = self._state, self.episode
        if self.workspace is None or episode is None or state.done:
            return AlertForgeObservation(output="error: no episode running; call reset",
                                         tool_error=True, done=True, reward=0.0,
                                         task_id=state.task_id, split=state.split)
        state.step_count += 1
        called = self.workspace.call(tool, arguments)
        outcome, summary = called.tool, None
        output = outcome.output
        if called.graded is not None:
            if called.graded.error is not None:
                output += (f"\n(grader error: {called.graded.error})" if episode.details
                           else "\n(the workspace could not be graded)")
            else:
                summary = called.graded.summary
                self._level = called.graded.result.reward
        state.done = outcome.done or state.step_count >= episode.max_steps
        if episode.reward_mode == "parity":
            reward = self._level - self._paid
        else:
            reward = self._level if state.done else 0.0
        self._paid += reward
        if episode.details:
            state.level = self._level
        return self._observation(output=output, tool_error=outcome.error, reward=reward,
                                 summary=summary,
                                 changed_files=[outcome.changed] if outcome.changed else [])

    def _observation(self, *, output: str, reward: float, summary: GradeBlock | None,
                     **fields: Any) -> AlertForgeObservation:
        """The observation of the episode now: grades and levels only where the split shows
        them (``grade`` the step's grade block as a step file holds it)."""
        state, episode = self._state, self.episode
        shown = episode.details or state.done
        return AlertForgeObservation(
            output=output, task_id=state.task_id, split=state.split, workflow=state.workflow,
            tier=state.tier, seed=state.seed, step=state.step_count,
            level=self._level if shown else None,
            grade=dump(summary) if summary is not None and episode.details else None,
            reward=reward, done=state.done, **fields)

    @property
    def state(self) -> AlertForgeState:
        """The episode's public state (no level on heldout)."""
        return self._state

    def _end_episode(self) -> None:
        if self.workspace is not None:
            self.workspace.close()
        self.workspace = None
        if self._held is not None:  # the fresh task's folder may now be evicted
            self.fresh.release(self._held)
            self._held = None

    def close(self) -> None:
        """Remove the episode's workspace and let go of the tool server."""
        self._end_episode()
        super().close()
