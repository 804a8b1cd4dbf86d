"""Record a run by driving any OpenEnv environment through openenv-core's client.

:func:`record_openenv` connects ``GenericEnvClient`` (WebSocket session) to ``base_url``,
resets it, then asks a recorder :class:`~recorder.policies.Agent` for one decision a step
and sends it as an action (default: ``{"tool": name, **arguments}``, the shape of
:class:`openenv_server.environment.AlertForgeAction`). Each step is written as it happens
(trajectory.json and run.json rewritten atomically).

The run's kind follows what the environment returns: when its observations carry a
``grade`` (this project's server) the run is ``alerting`` with ``extra.grade`` per graded
step, exactly like a locally recorded run; otherwise it is an ``episode`` run with
``extra.env = {reward, total, done, info, observation}`` per step (docs/formats.md). An
environment session cannot be resumed, so an interrupted drive is recorded again from the
start (``status`` stays ``running`` until it completes).
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from alertforge.errors import BadInput
from alertforge.files import write_json
from recorder import run_format
from recorder.policies import Agent, Decision

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


def record_openenv(base_url: str, agent: Agent, *, out: Path, run_id: str, policy: str,
                   reset: dict | None = None, task_dir: Path | None = None, seed: int = 0,
                   max_steps: int = 60,
                   to_action: Callable[[Decision], dict] = default_action) -> Path:
    """Drive the environment at ``base_url`` with ``agent``; returns the run folder.

    ``reset`` are the reset keyword arguments (e.g. ``{"task": "af-001-...", "seed": 0}``);
    ``task_dir`` the local task folder when there is one (the viewer reads it).

    Raises:
        BadInput: ``out`` is a file.
        ConnectionError: the server cannot be reached (openenv-core's client).
    """
    from openenv.core import GenericEnvClient

    out = Path(out)
    if out.exists() and not out.is_dir():
        raise BadInput(out, "output path exists and is not a folder")
    run_dir = out / run_id
    started = time.perf_counter()
    reset = dict(reset or {})
    with GenericEnvClient(base_url=base_url).sync() as client:
        first = client.reset(**reset)
        observation = first.observation or {}
        alerting = isinstance(observation.get("grade"), dict)
        total = float(first.reward or 0.0)
        instruction = observation.get("instruction") or observation_text(observation)
        if alerting:
            step = run_format.user_step(instruction, observation["grade"])
        else:
            step = run_format.user_step(instruction, None)
            step["extra"] = {"env": {"reward": total, "total": total, "done": bool(first.done),
                                     "info": {}, "observation": _slim(observation)}}
        steps = [step]
        summary = _summary(run_id, alerting, observation, reset, task_dir, policy, seed, agent)
        agent.begin(task_dir or Path("."), instruction, seed)
        done, last_output = bool(first.done), None
        _write(run_dir, steps, summary, started, total, final=False)
        while not done and len(steps) - 1 < max_steps:
            decision = agent.decide(last_output)
            if decision is None:
                break
            result = client.step(to_action(decision))
            observation = result.observation or {}
            reward = float(result.reward or 0.0)
            total += reward
            done = bool(result.done)
            extra = dict(decision.extra)
            if alerting:
                if isinstance(observation.get("grade"), dict):
                    extra["grade"] = observation["grade"]
                    extra["changed_files"] = observation.get("changed_files") or []
                extra["env"] = {"reward": reward, "total": total, "done": done}
            else:
                extra["env"] = {"reward": reward, "total": total, "done": done, "info": {},
                                "observation": _slim(observation)}
            if observation.get("tool_error"):
                extra["tool_error"] = True
            last_output = observation_text(observation)
            steps.append(run_format.agent_step(
                len(steps) + 1, decision.name, decision.arguments, last_output, decision.message,
                extra, llm=agent.llm, reasoning=decision.reasoning, metrics=decision.metrics,
                model=decision.model))
            _write(run_dir, steps, summary, started, total, final=False)
    _write(run_dir, steps, summary, started, total, final=True)
    return run_dir


def _summary(run_id: str, alerting: bool, observation: dict, reset: dict, task_dir: Path | None,
             policy: str, seed: int, agent: Agent) -> dict:
    task_id = observation.get("task_id") or reset.get("task") or "openenv"
    requirements, checks = [], []
    if alerting and task_dir is not None and (task_dir / "tests" / "checks.json").is_file():
        from alertforge.files import read_json

        catalog = read_json(task_dir / "tests" / "checks.json")
        requirements = [{k: r[k] for k in ("id", "kind", "weight", "title")}
                        for r in catalog.get("requirements", [])]
        checks = [{k: c[k] for k in ("id", "req", "family", "label", "note")}
                  for c in catalog.get("checks", [])]
    spec = {}
    if task_dir is not None and (task_dir / "tests" / "spec.json").is_file():
        from alertforge.files import read_json

        spec = read_json(task_dir / "tests" / "spec.json")
    return {
        "version": run_format.RUN_VERSION, "run_id": run_id,
        "kind": "alerting" if alerting else "episode", "status": "running",
        "task": {"id": str(task_id), "dir": str(task_dir) if task_dir else None,
                 "workflow": spec.get("workflow"), "tier": spec.get("tier"),
                 "seed": reset.get("seed")},
        "policy": policy, "seed": seed, "model": agent.model,
        "agent": {"name": run_format.AGENT_NAME, "version": run_format.__version__},
        "steps": 0, "final": None, "requirements": requirements, "checks": checks,
        "started_at": run_format.now(), "finished_at": None,
        "timings": {"wall_s": 0.0, "grade_s": 0.0, "grades": 0}, "error": None,
        "source": "openenv", "openenv": {"reset": reset},
    }


def _write(run_dir: Path, steps: list[dict], summary: dict, started: float, total: float,
           *, final: bool) -> None:
    doc = run_format.trajectory(summary["run_id"], steps)
    run_format.validate(doc)
    write_json(run_dir / "trajectory.json", doc)
    summary = dict(summary, steps=len(steps))
    summary["timings"] = dict(summary["timings"], wall_s=round(time.perf_counter() - started, 3))
    last: dict[str, Any] | None = next((s["extra"]["grade"] for s in reversed(steps)
                                        if "grade" in (s.get("extra") or {})), None)
    if last is not None:
        summary["final"] = {"reward": last["reward"], "solved": bool(last["keys"]["solved"]),
                            "keys": last["keys"], "requirements": last["requirements"]}
    else:
        summary["final"] = {"reward": total, "solved": None, "keys": {}, "requirements": {}}
    summary["openenv"] = dict(summary["openenv"], reward_sum=total)
    if final:
        summary["status"] = "complete"
        summary["finished_at"] = run_format.now()
    write_json(run_dir / "run.json", summary)
