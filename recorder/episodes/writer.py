"""Build an episode run folder step by step: ATIF trajectory, run.json and journal (docs/formats.md).

Both ways an episode comes in share this writer: a live recording (:mod:`.live`) adds one
step at a time, appending the step to ``journal.jsonl`` (flushed, fsynced) and rewriting
``trajectory.json`` and ``run.json`` atomically, so an interrupted run loses at most the step
in flight; an import (:mod:`.transcript`) builds the whole run and writes each file once,
atomically, ``run.json`` last.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson

from contract.run import AgentRef, Final, RunSummary, TaskRef, Timings
from recorder import run_format
from recorder.agents.base import Decision
from recorder.environments.aria import StepOutcome
from recorder.episodes import dual, incidents
from recorder.episodes.ground_truth import seeded_ground_truth
from recorder.episodes.rewards import Episode, split_step, start_episode
from recorder.episodes.score import next_total, score_parts
from recorder.run_store import RunStore, new_summary

ENV_NAME = "aria"
WORKFLOW = "aria"
"""run.json ``task.workflow`` of ARIA episodes: how the site tells environments apart."""


def observation_text(observation: dict[str, Any]) -> str:
    """The observation as the ATIF observation content: JSON, 2-space indent, server key order."""
    return orjson.dumps(observation, option=orjson.OPT_INDENT_2).decode("utf-8")


def error_text(error: dict[str, Any]) -> str:
    """An environment error as the step's observation content."""
    status = error.get("status")
    where = f"HTTP {status}" if status is not None else "error message"
    return f"The environment failed this action ({where}): {error.get('message', '')}"


def instruction_text(task_id: str, seed: int | None, observation: dict[str, Any]) -> str:
    """The user step's message: a heading naming the task, then the task description.

    ARIA sends an empty ``task_description`` for some tasks; the text then says so.
    """
    description = observation.get("task_description")
    if not isinstance(description, str) or not description.strip():
        description = "(The environment gave no task description for this task.)"
    limit = observation.get("max_steps")
    budget = f"at most {limit} actions" if isinstance(limit, int) else "no step budget given"
    seed_text = "no seed (random incident)" if seed is None else f"seed {seed}"
    return (
        f"# ARIA incident: {task_id}\n\n{description}\n\n"
        f"Environment task `{task_id}`, {seed_text}, {budget}."
    )


def episode_run_id(task_id: str, policy: str, seed: int | None) -> str:
    """``aria-<task>__<policy>__s<seed>`` (``snull`` without a seed): the readable part of an
    episode run's id (and the whole id before run.json version 2)."""
    safe = "".join(c if c.isalnum() or c in "._-" else "-" for c in policy) or "policy"
    task = "".join(c if c.isalnum() or c in "._-" else "-" for c in task_id) or "task"
    return f"aria-{task}__{safe}__s{'null' if seed is None else seed}"


@dataclass(frozen=True)
class EpisodeFacts:
    """What an episode run is: ``source`` ``aria`` (recorded live) or ``transcript``
    (imported); ``task_id`` the environment's task id (``easy``; the run's task id is
    ``aria-<task_id>``); ``seed`` the seed sent with ``/reset`` (the server never echoes it);
    ``policy`` the policy name and ``agent_name`` the agent in the trajectory; ``env`` run.json
    ``env`` (``{name, url, transport, source, source_commit}``); ``mode`` ``single`` or
    ``dual`` (an observer and a responder, :mod:`.dual`)."""

    source: str
    task_id: str
    seed: int | None
    policy: str
    agent_name: str
    env: dict[str, Any]
    mode: str = "single"


class EpisodeRun:
    """One episode run being built from ``facts`` (:class:`EpisodeFacts`) into ``store`` (the
    run's folder and lifecycle, :class:`recorder.run_store.RunStore`). ``live``: written after
    every step, with timestamps and wall time (a live recording); False: written once at the
    end, without them (an import, byte-identical on every import).
    """

    def __init__(self, store: RunStore, facts: EpisodeFacts, *, live: bool = True):
        task_id, seed, policy = facts.task_id, facts.seed, facts.policy
        incremental = timestamps = live
        agent_name, mode = facts.agent_name, facts.mode
        self.store = store
        self.run_dir = store.dir
        self.run_id = store.run_id
        self.task_id = task_id
        self.seed = seed
        self.agent_name = agent_name
        self.incremental = incremental
        self.timestamps = timestamps
        self.steps: list[dict[str, Any]] = []
        self.total = 0.0
        self.done = False
        self.info: dict[str, Any] = {}
        self.observation: dict[str, Any] | None = None
        self.env_seconds = 0.0
        self.mode = mode
        """``single`` or ``dual`` (an observer and a responder, :mod:`.dual`)."""
        self.observer_view: dict[str, Any] | None = None
        self.split: Episode = start_episode(task_id, {})
        self.events: list[dict[str, Any]] = []
        """Environment events that are no agent's action (a foreign reset), for run.json."""
        self._started = time.perf_counter()
        self.summary: RunSummary = new_summary(
            store, source=facts.source, legacy_id=episode_run_id(task_id, policy, seed),
            kind="episode", env={"name": ENV_NAME, **facts.env},
            task=TaskRef(id=f"aria-{task_id}", dir=None, workflow=WORKFLOW,
                         tier=incidents.difficulty(task_id), seed=seed,
                         env_task_id=task_id, max_steps=None),
            policy=policy, seed=seed, model=None,
            agent=AgentRef(name=agent_name, version=run_format.__version__), final=None,
            requirements=[], checks=[], started_at=run_format.now() if timestamps else None,
            finished_at=None, timings=Timings(env_s=0.0), error=None)

    # -- building -------------------------------------------------------------------------

    def start(self, observation: dict[str, Any], transport: dict[str, Any],
              observer_view: dict[str, Any] | None = None) -> dict[str, Any]:
        """Step 1 (``source: user``): the instruction and the ``/reset`` observation (a
        dual-agent session's: the responder's, and ``observer_view`` the observer's)."""
        self.observation = observation
        self.observer_view = observer_view
        self.split = start_episode(self.task_id, observation)
        max_steps = observation.get("max_steps")
        self.summary.task.max_steps = max_steps if isinstance(max_steps, int) else None
        step = run_format.user_step(instruction_text(self.task_id, self.seed, observation), None)
        step["extra"] = {
            "env": {
                "reward": 0.0,
                "total": 0.0,
                "done": False,
                "info": {},
                "observation": observation,
            },
            "transport": transport,
        }
        if observer_view is not None:
            step["extra"]["env"]["observer_observation"] = observer_view
        self._note_latency(transport)
        return self._append(step)

    def add(
        self, action: dict[str, Any], outcome: StepOutcome, agent: Decision | None = None
    ) -> dict[str, Any]:
        """An agent step for ``action`` (``{"action_type": ..., other fields}``) and its outcome.

        The tool call is ``action_type`` with the other fields as arguments; the observation
        content is the observation JSON (or the error text); ``extra.env`` holds ``reward``,
        ``total`` (running, clamped), ``done``, ``info``, ``observation`` and, on a failed
        action, ``error``; ``extra.transport`` the exchange. ``agent`` (the policy's Decision
        for the action) adds ``llm``, ``message``, ``reasoning``, ``metrics``, ``model`` and
        more ``extra`` keys.
        """
        agent = agent or Decision(str(action["action_type"]), {})
        arguments = {key: value for key, value in action.items() if key != "action_type"}
        if outcome.error is not None:
            reward, content = 0.0, error_text(outcome.error)
        else:
            reward, content = float(outcome.reward or 0.0), observation_text(outcome.observation)
            self.total = next_total(self.total, reward)
            self.observation = outcome.observation
            self.done = bool(outcome.done)
            self.info = dict(outcome.info or {})
        env = {
            "reward": reward,
            "total": self.total,
            "done": outcome.done if outcome.error is None else False,
            "info": outcome.info if outcome.error is None else {},
            "observation": outcome.observation if outcome.error is None else None,
        }
        if self.mode == "dual":
            env["agent"] = dual.RESPONDER
            env["findings_seen"] = outcome.transport.pop("findings_seen", None)
        if outcome.error is not None:
            env["error"] = outcome.error
            env["aria_step"] = None  # not a step of ARIA's episode (aria-scoring §2.9)
        else:
            env.update(split_step(self.split, action, reward))
        step = run_format.agent_step(
            len(self.steps) + 1,
            str(action["action_type"]),
            arguments,
            content,
            agent.message or "",
            {**(agent.extra or {}), "env": env, "transport": outcome.transport},
            inference=agent if agent.llm else None,
        )
        self._note_latency(outcome.transport)
        return self._append(step)

    def resume(self, steps: list[dict[str, Any]]) -> None:
        """Take over steps read back from a journal (state: total, done, last observation)."""
        self.steps = []
        for step in steps:
            env = (step.get("extra") or {}).get("env") or {}
            if step.get("source") == "user":
                observation = env.get("observation") or {}
                self.observation = observation
                self.observer_view = env.get("observer_observation")
                self.split = start_episode(self.task_id, observation)
                max_steps = observation.get("max_steps")
                self.summary.task.max_steps = (
                    max_steps if isinstance(max_steps, int) else None
                )
            elif env.get("agent") == dual.OBSERVER:
                self.observer_view = env.get("observer_observation") or self.observer_view
            elif env.get("error") is None:
                call = (step.get("tool_calls") or [{}])[0]
                split_step(self.split, {"action_type": call.get("function_name"),
                                        **(call.get("arguments") or {})}, env.get("reward", 0.0))
                self.total = env.get("total", self.total)
                self.done = bool(env.get("done"))
                self.info = env.get("info") or {}
                self.observation = env.get("observation") or self.observation
            self.steps.append(step)

    def add_finding(self, finding: str, answer: dict[str, Any], transport: dict[str, Any],
                    agent: Decision | None = None) -> dict[str, Any]:
        """An observer step of a dual-agent run: ``finding`` posted, ``answer`` the server's
        ``step/a`` reply (see :func:`recorder.episodes.dual.finding_env`)."""
        agent = agent or Decision(dual.FINDING_TOOL, {"finding": finding})
        index = 1 + sum(1 for s in self.steps
                        if ((s.get("extra") or {}).get("env") or {}).get("finding_index"))
        env = dual.finding_env(finding, answer, self.total, self.done, index)
        if isinstance(answer.get("observation"), dict):
            self.observer_view = answer["observation"]
        env["observer_observation"] = self.observer_view
        content = (f"Finding {index} accepted (observer reward {env['observer_reward']})"
                   if env["accepted"] else f"Finding refused: {env.get('refused')}")
        step = run_format.agent_step(
            len(self.steps) + 1, dual.FINDING_TOOL, {"finding": finding}, content,
            agent.message or "", {**(agent.extra or {}), "env": env, "transport": transport},
            inference=agent if agent.llm else None)
        self._note_latency(transport)
        return self._append(step)

    def foreign_reset(self, observation: dict[str, Any], detail: str, before_step: int) -> None:
        """Another client's ``/reset`` replaced the episode before agent step ``before_step``:
        the steps from there ran in the episode of ``observation`` (the split restarts from
        it); run.json ``final.episode.environment_events`` keeps it."""
        self.split = start_episode(self.task_id, observation)
        self.events.append({"kind": "foreign reset", "before_step": before_step,
                            "detail": detail, "observation": observation})

    def _note_latency(self, transport: dict[str, Any]) -> None:
        latency = transport.get("latency_ms")
        if isinstance(latency, (int, float)):
            self.env_seconds += latency / 1000

    def _append(self, step: dict[str, Any]) -> dict[str, Any]:
        self.steps.append(step)
        if self.incremental:
            self.store.append(step)
            self._write()
        return step

    # -- finishing ------------------------------------------------------------------------

    def finish(
        self, state: dict[str, Any] | None, *, status: str = "complete", error: str | None = None
    ) -> Path:
        """Close the run with the final ``/state`` (None when it could not be read).

        run.json ``final`` becomes ``{reward, solved, keys{}, requirements{}, episode{}}``:
        ``reward`` is the server's final score (``info.current_score``; the running total
        when there is no state), ``solved`` whether the incident was resolved, ``episode`` the
        score parts (:func:`~recorder.episodes.score.score_parts`), ``resolution``,
        ``rewards_unlocked``, ``ground_truth`` and ``analytics``. Writes every file.
        """
        if state is not None and "total_reward" not in state:
            state = None  # a /state without the episode's total is no final state
        if len(self.steps) < self.store.written:  # a resume that did not get past the journal
            self.store.fail(error or "stopped before the journal was replayed")
            return self.run_dir
        self.summary.final = Final.model_validate(self.final_result(state))
        self.summary.status = status
        self.summary.error = error
        if self.timestamps:
            self.summary.finished_at = run_format.now()
        if not self.incremental:
            self._refresh()
            self.store.write_whole(self.summary, self._trajectory())
            return self.run_dir
        self._write()
        return self.run_dir

    def final_result(self, state: dict[str, Any] | None) -> dict[str, Any]:
        """run.json ``final`` for the run so far and ``state`` (see :meth:`finish`)."""
        resolution = (self.info.get("resolution") or self.info.get("reason")) if self.done else None
        episode: dict[str, Any] = {
            "done": self.done,
            "resolution": resolution,
            "running_total": self.total,
            "state": state is not None,
            "environment_events": self.events,
            "steps_explained": self._explained(),
            "mode": self.mode,
            "difficulty": incidents.difficulty(self.task_id),
            "failure_mode": incidents.failure_mode(self.task_id, state),
        }
        if self.mode == "dual":
            return self._dual_result(episode)
        if state is None:
            return {
                "reward": self.total,
                "solved": resolution == "incident_resolved",
                "source": "running-total",
                "keys": {"total_reward": self.total},
                "requirements": {},
                "episode": episode,
            }
        info = state.get("info") if isinstance(state.get("info"), dict) else {}
        parts = score_parts(state, self.task_id)
        score = parts["reported_score"] if parts["reported_score"] is not None else self.total
        resolved = state.get("incident_resolved") is True
        episode.update(
            {
                "score": parts["reported_score"],
                "total_reward": parts["total_reward"],
                "resolved": resolved,
                "parts": parts,
                "rewards_unlocked": [str(item) for item in info.get("rewards_unlocked")]
                if isinstance(info.get("rewards_unlocked"), list) else [],
                "ground_truth": {
                    "root_cause": state.get("ground_truth_root_cause"),
                    "fix": state.get("ground_truth_fix"),
                },
                "analytics": info.get("analytics") or {},
                "episode_id": state.get("episode_id"),
                "totals_agree": parts["total_reward"] is not None
                and abs(parts["total_reward"] - self.total) < 1e-6,
            }
        )
        keys = {
            name: parts[name]
            for name in (
                "total_reward",
                "efficiency_bonus",
                "diagnosis_bonus",
                "noop_penalty",
                "repeat_restart_penalty",
            )
        }
        keys.update({"final_score": score, "resolved": resolved, "env_steps": parts["env_steps"]})
        return {
            "reward": score,
            "solved": resolved,
            "source": "environment",
            "keys": keys,
            "requirements": {},
            "episode": episode,
        }

    def _responder_actions(self) -> list[dict[str, Any]]:
        actions = []
        for step in self.steps[1:]:
            env = (step.get("extra") or {}).get("env") or {}
            if env.get("agent") == dual.OBSERVER or env.get("error") is not None:
                continue
            call = (step.get("tool_calls") or [{}])[0]
            actions.append({"action_type": call.get("function_name"),
                            **(call.get("arguments") or {})})
        return actions

    def _dual_result(self, episode: dict[str, Any]) -> dict[str, Any]:
        """run.json ``final`` of a dual-agent run: the score derived from B's steps (the
        multi-agent state reports none) with the ground truth restated for the task and seed,
        each agent's rewards."""
        resolved = episode["resolution"] == "incident_resolved"
        truth = seeded_ground_truth(self.task_id, self.seed)
        state = dual.derived_state(self._responder_actions(), self.total, resolved, self.task_id,
                                   truth)
        parts = score_parts(state, self.task_id)
        episode.update({"score": None, "derived_score": parts["derived_score"],
                        "total_reward": self.total, "resolved": resolved, "parts": parts,
                        "agents": dual.agent_summary(self.steps), "ground_truth": truth,
                        "totals_agree": True})
        return {"reward": parts["derived_score"], "solved": resolved,
                "source": "derived: the multi-agent state reports no score",
                "keys": {"total_reward": self.total, "derived_score": parts["derived_score"],
                         "resolved": resolved, "env_steps": parts["env_steps"]},
                "requirements": {}, "episode": episode}

    def _explained(self) -> dict[str, int]:
        """How many answered steps the reward split explains: ``{explained, steps}``."""
        envs = [(s.get("extra") or {}).get("env") or {} for s in self.steps[1:]]
        answered = [e for e in envs if e.get("error") is None and e.get("agent") != "observer"]
        return {"explained": sum(1 for e in answered if e.get("explained")),
                "steps": len(answered)}

    def _trajectory(self) -> dict[str, Any]:
        return run_format.trajectory(
            self.run_id, self.steps, agent_name=self.agent_name, model=self.summary.model
        )

    def _refresh(self) -> None:
        self.summary.steps = len(self.steps)
        self.summary.timings = Timings(
            wall_s=round(time.perf_counter() - self._started, 3) if self.timestamps else 0.0,
            grade_s=0.0, grades=0, env_s=round(self.env_seconds, 3))

    def _write(self) -> None:
        self._refresh()
        self.store.write(self.summary, self._trajectory())
