"""Record a run by driving any OpenEnv 0.10 environment through openenv's client.

:func:`record_openenv` connects ``GenericEnvClient`` (a ``/ws`` session: one environment for
the whole episode) to ``base_url``,
resets it, then asks a recorder :class:`~recorder.reference.policies.Agent` for one decision a step
and sends it as an action (default: ``{"tool": name, **arguments}``, the shape of
:class:`recorder.environments.openenv_server.environment.AlertForgeAction`). Each step is written as it happens
(trajectory.json and run.json rewritten atomically).

The run's kind follows what the environment returns: when its observations carry a
``grade`` (this project's server) the run is ``alerting`` with ``extra.grade`` per graded
step, exactly like a locally recorded run; otherwise (any other server, or this project's
``heldout`` split, whose observations carry no grades) it is an ``episode`` run with
``extra.env = {reward, total, done, info, observation}`` per step (docs/formats.md). An
environment session cannot be resumed, so an interrupted drive is recorded again from the
start (``status`` stays ``running`` until it completes).
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from contract.base import dump, parse
from contract.errors import BadInput
from contract.grade import GradeBlock
from contract.ids import slug_id
from contract.run import AgentRef, Final, RunSummary, TaskRef, Timings
from contract.task import CheckCatalog
from contract.task_roots import task_fingerprint
from contract.untrusted import Tree
from recorder import run_format
from recorder.agents.base import Agent, Decision
from recorder.run_store import RunStore, make_identity, new_summary

MAX_OBSERVATION_CHARS = 20_000


def default_action(decision: Decision) -> dict:
    """``{"tool": name, **arguments}``: an action for this project's OpenEnv server."""
    return {"tool": decision.name, **decision.arguments}


def observation_text(observation: dict) -> str:
    """What the agent reads: ``output`` when the observation has one, else the JSON."""
    if isinstance(observation.get("output"), str):
        return observation["output"]
    return json.dumps(observation, sort_keys=True)[:MAX_OBSERVATION_CHARS]


def _slim(observation: dict) -> dict:
    """The observation kept in ``extra.env.observation`` (long texts cut)."""
    slim = {}
    for key, value in observation.items():
        if key in ("grade", "instruction", "output"):
            continue
        if isinstance(value, str) and len(value) > 2000:
            value = value[:2000] + f"... [{len(value) - 2000} more characters]"
        slim[key] = value
    return slim


@dataclass(frozen=True)
class OpenEnvRecording:
    """What an OpenEnv recording is and where it goes: ``out`` the runs folder, ``readable``
    the run id's readable part, ``policy`` its name; ``reset`` the reset keyword arguments
    (e.g. ``{"task": "af-001-...", "seed": 0}``); ``task_dir`` the local task folder when there
    is one; ``seed`` the run's seed; ``max_steps`` the most actions; ``defining`` what else
    defines the run (policy options, an actions file's digest) besides the reset arguments
    and the policy; ``fresh`` records anew over an interrupted run."""

    out: Path
    readable: str
    policy: str
    reset: dict | None = None
    task_dir: Path | None = None
    seed: int = 0
    max_steps: int = 60
    defining: dict | None = None
    fresh: bool = False


def record_openenv(base_url: str, agent: Agent, recording: OpenEnvRecording, *,
                   to_action: Callable[[Decision], dict] = default_action) -> Path:
    """Drive the environment at ``base_url`` with ``agent``; returns the run folder.

    ``recording`` says what the run is (:class:`OpenEnvRecording`); ``to_action`` turns a
    decision into the server's action. A complete run of the same identity is returned as it
    is. An environment session cannot be resumed: an interrupted run is kept, marked
    ``failed``, and only ``recording.fresh`` records it anew.

    Raises:
        BadInput: ``out`` is a file, or an interrupted run of this identity is there.
        ConnectionError: the server cannot be reached (openenv's client).
    """
    from openenv.core import GenericEnvClient

    reset, policy, max_steps = dict(recording.reset or {}), recording.policy, recording.max_steps
    store = RunStore(Path(recording.out), recording.readable, make_identity("openenv", {
        "url": base_url, "reset": reset, "policy": policy, "max_steps": max_steps,
        **(recording.defining or {})}))
    opened = store.open(fresh=recording.fresh)
    if opened.state == "unchanged":
        return store.dir
    if opened.state == "resume" and opened.steps:
        store.fail("interrupted: an OpenEnv session cannot be resumed")
        raise BadInput(store.dir, "an interrupted OpenEnv run is here (kept, marked failed); "
                       "record again with --fresh to replace it")
    store.start([])
    started = time.perf_counter()
    with GenericEnvClient(base_url=base_url).sync() as client:
        first = client.reset(**reset)
        observation = first.observation or {}
        alerting = isinstance(observation.get("grade"), dict)
        total = float(first.reward or 0.0)
        instruction = observation.get("instruction") or observation_text(observation)
        grades = [_observed_grade(observation, base_url, 1)] if alerting else []
        if alerting:
            step = run_format.user_step(instruction, grades[0])
        else:
            step = run_format.user_step(instruction, None)
            step["extra"] = {"env": {"reward": total, "total": total, "done": bool(first.done),
                                     "info": {}, "observation": _slim(observation)}}
        steps = [step]
        summary = _summary(store, alerting, observation, reset, recording.task_dir, policy,
                           recording.seed, agent)
        agent.resume(steps)
        done, last_output = bool(first.done), None
        store.append(step)
        _write(store, steps, grades, summary, started, total, final=False)
        while not done and len(steps) - 1 < max_steps:
            decision = agent.decide(last_output, len(steps) - 1)
            if decision is None:
                break
            result = client.step(to_action(decision))
            observation = result.observation or {}
            reward = float(result.reward or 0.0)
            total += reward
            done = bool(result.done)
            grade = (_observed_grade(observation, base_url, len(steps) + 1)
                     if alerting and isinstance(observation.get("grade"), dict) else None)
            if grade is not None:
                grades.append(grade)
            extra = _step_extra(decision, observation, {"reward": reward, "total": total, "done": done},
                                alerting, grade)
            last_output = observation_text(observation)
            steps.append(run_format.agent_step(
                len(steps) + 1, decision.name, decision.arguments, last_output, decision.message,
                extra, inference=decision if decision.llm else None))
            agent.observe(steps[-1])
            store.append(steps[-1])
            _write(store, steps, grades, summary, started, total, final=False)
    _write(store, steps, grades, summary, started, total, final=True)
    return store.dir


def _step_extra(decision: Decision, observation: dict, env: dict, alerting: bool,
                grade: GradeBlock | None) -> dict:
    """An agent step's ``extra``: the decision's, then the step's ``grade`` and changed files (an
    alerting environment's observation that carried a grade), its ``env`` (``{reward, total,
    done}``; an episode's also the environment's ``info`` and its observation, slimmed) and
    ``tool_error`` when the observation says the tool call failed."""
    extra = dict(decision.extra)
    if grade is not None:
        extra["grade"] = dump(grade)
        extra["changed_files"] = observation.get("changed_files") or []
    extra["env"] = env if alerting else {**env, "info": {}, "observation": _slim(observation)}
    if observation.get("tool_error"):
        extra["tool_error"] = True
    return extra


def _summary(store: RunStore, alerting: bool, observation: dict, reset: dict,
             task_dir: Path | None, policy: str, seed: int, agent: Agent) -> RunSummary:
    task_id = observation.get("task_id") or reset.get("task") or "openenv"
    requirements, checks, fingerprint, catalog_version = [], [], None, None
    spec: dict = {}
    if task_dir is not None:
        tree = Tree(task_dir)
        if alerting and tree.is_file("tests/checks.json"):
            catalog = parse(CheckCatalog, tree.read_json("tests/checks.json"),
                            task_dir / "tests" / "checks.json", "check catalog")
            requirements, checks = catalog.requirement_refs(), catalog.check_refs()
            catalog_version = catalog.catalog_version
        if tree.is_file("tests/spec.json"):
            spec = tree.read_json("tests/spec.json")
        fingerprint = task_fingerprint(task_dir)
    return new_summary(
        store, kind="alerting" if alerting else "episode", source="openenv",
        task=TaskRef(id=slug_id(str(task_id)), dir=str(task_dir) if task_dir else None,
                     workflow=spec.get("workflow") or _text(observation.get("workflow")),
                     tier=spec.get("tier") or _text(observation.get("tier")),
                     seed=reset.get("seed"),
                     fingerprint=fingerprint, catalog_version=catalog_version),
        policy=policy, seed=seed, model=agent.model,
        agent=AgentRef(name=run_format.AGENT_NAME, version=run_format.__version__),
        final=None, requirements=requirements, checks=checks, started_at=run_format.now(),
        finished_at=None, timings=Timings(), error=None, openenv={"reset": reset},
        legacy_id=store.run_id.rsplit("__", 1)[0])


def _observed_grade(observation: dict, base_url: str, step_id: int) -> GradeBlock:
    """The ``grade`` an observation carries (this project's server sends a step's grade block
    as a step file holds it), typed.

    Raises:
        BadInput: naming the server, when it is not a step grade block.
    """
    return parse(GradeBlock, observation["grade"], base_url, f"grade of step {step_id}")


def _text(value: object) -> str | None:
    """A non-empty string the environment reported, else None."""
    return value if isinstance(value, str) and value else None


def _write(store: RunStore, steps: list[dict], grades: list[GradeBlock], summary: RunSummary,
           started: float, total: float, *, final: bool) -> None:
    """run.json and trajectory.json of the ``steps`` so far; the final result is the last of
    the step ``grades`` (an alerting run) or the environment's ``total`` reward."""
    result = run_format.final_from_grades(grades, "environment") or Final(
        reward=total, solved=False, keys={}, requirements={}, source="environment")
    update: dict = {"steps": len(steps), "final": result,
                    "timings": summary.timings.model_copy(update={
                        "wall_s": round(time.perf_counter() - started, 3)}),
                    "openenv": {**(summary.openenv or {}), "reward_sum": total}}
    if final:
        update.update(status="complete", finished_at=run_format.now())
    store.write(summary.model_copy(update=update), run_format.trajectory(store.run_id, steps))
