"""``alertforge record --env aria``: one episode from a live ARIA-compatible server into a run.

The loop: ``reset(task, seed)``, then the policy's actions one at a time until the
environment says ``done`` (ARIA answers a step after done with ``done: false``, so nothing is
sent after it), the policy has no more actions, or the action limit; then ``/state`` for the
final score and the ground truth. Every step is journaled and the run files rewritten
atomically as it goes (:class:`~recorder.episodes.writer.EpisodeRun`).

Resuming: the same command on an unfinished run resets the environment with the same task
and seed and replays the journaled actions, checking that each gives the recorded reward,
then goes on. A WebSocket connection lost mid-episode takes its environment with it: the
episode is replayed the same way on a new connection and the action retried once.

HTTP shares one environment across clients: HTTP episodes take :func:`client.server_lock`,
and every observation is checked to continue this episode (task id, step counter), so
another client's reset shows up as an EnvironmentFailure instead of a wrong run. The reset
observation carries no episode id, so ``GET /state`` right after ``/reset`` gives it, and it
is checked again after the first step, every :data:`ID_CHECK_EVERY` steps and at the end
(a foreign reset between our reset and our first step leaves the step counter unchanged).
"""

from __future__ import annotations

import contextlib
import hashlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from contract.errors import BadInput, EnvironmentFailure
from contract.untrusted import read_file
from recorder.agents.episode_policies import EpisodePolicy, action_of
from recorder.environments.aria import StepOutcome, open_environment, server_lock
from recorder.episodes.writer import EpisodeFacts, EpisodeRun, episode_run_id
from recorder.policies import make_episode_policy
from recorder.run_store import RunStore, make_identity

DEFAULT_ACTION_LIMIT = 60
ID_CHECK_EVERY = 10


def _action_of(step: dict[str, Any]) -> dict[str, Any]:
    call = step["tool_calls"][0]
    return {"action_type": call["function_name"], **call["arguments"]}


def _replay(env, steps: list[dict[str, Any]], url: str) -> None:
    """Send the actions of recorded agent ``steps`` again, checking each reward and ``done``."""
    for step in steps:
        if step.get("source") != "agent" or not step.get("tool_calls"):
            continue
        recorded = (step.get("extra") or {}).get("env") or {}
        outcome = env.step(_action_of(step))
        if recorded.get("error") is not None or outcome.error is not None:
            if (recorded.get("error") is None) != (outcome.error is None):
                raise EnvironmentFailure(
                    url,
                    f"cannot resume: step {step['step_id'] - 1} "
                    "failed on one run and not on the other",
                )
            continue
        if abs(outcome.reward - recorded.get("reward", 0.0)) > 1e-9 or bool(outcome.done) != bool(
            recorded.get("done")
        ):
            raise EnvironmentFailure(
                url,
                f"cannot resume: replaying step {step['step_id'] - 1} gave reward "
                f"{outcome.reward} (done {outcome.done}), the journal has "
                f"{recorded.get('reward')} (done {recorded.get('done')}); record again with --fresh",
            )


def _check_continues(run: EpisodeRun, outcome: StepOutcome, url: str) -> None:
    """The observation must be the next step of this episode (shared HTTP session guard)."""
    if outcome.error is not None:
        return
    observation = outcome.observation or {}
    expected = int((run.observation or {}).get("step") or 0) + 1
    task = observation.get("task_id", run.task_id)
    if task != run.task_id or observation.get("step") != expected:
        raise EnvironmentFailure(
            url,
            f"the answer belongs to another episode (task {task!r}, step "
            f"{observation.get('step')!r}; expected task {run.task_id!r}, step {expected}): another "
            "client reset or stepped the server's shared HTTP environment. Record over "
            "--transport ws, or one HTTP episode at a time per server",
        )


def episode_id(env, url: str) -> str | None:
    """The episode id ``GET /state`` reports now (None over /ws, whose episode is the
    connection's own, or when the server gives none)."""
    if env.kind != "http":
        return None
    value = env.state().get("episode_id")
    return value if isinstance(value, str) else None


def check_episode_id(expected: str | None, now: str | None, url: str, when: str) -> None:
    """EnvironmentFailure when the episode id changed (another client's ``/reset``)."""
    if expected is not None and now != expected:
        raise EnvironmentFailure(
            url, f"{when}, GET /state reports episode {now!r}, not {expected!r} (the one "
            "our /reset started): another client reset the server's shared HTTP environment. "
            "Record over --transport ws, or one HTTP episode at a time per server")


class ForeignFirstStep(EnvironmentFailure):
    """Our first step went to another client's episode (its ``/reset`` came between ours and
    our first ``/step``): the run holds no step of its own, so its folder was removed."""


def _check_first_step(store: RunStore, expected: str | None, now: str | None, url: str) -> None:
    """After a new run's first step: the step counter cannot show a foreign reset made before
    it (both start at 0), only the episode id can. When it changed, the step was taken in the
    other client's episode: nothing of this run is kept, and the same command starts it again
    (a resume would replay that step against our episode and fail)."""
    try:
        check_episode_id(expected, now, url, "after step 1")
    except EnvironmentFailure as err:
        store.discard()
        raise ForeignFirstStep(url, f"{err.problem} The first step went to that episode, so "
                               "nothing of this run was kept; run the same command again") from None


def _step(env, action: dict[str, Any], run: EpisodeRun, url: str) -> StepOutcome:
    try:
        return env.step(action)
    except EnvironmentFailure as err:
        if env.kind != "ws":
            raise
        lost = str(err)
    env.close()  # its environment is gone: rebuild it on a new connection, then retry once
    env.reset(run.task_id, run.seed)
    _replay(env, run.steps[1:], url)
    outcome = env.step(action)
    outcome.transport["retried_after"] = lost
    return outcome


@dataclass(frozen=True)
class EpisodeRecording:
    """How an episode is recorded (single or dual-agent): ``out`` the runs folder, ``resume``
    (False: a run of the same id is recorded anew, ``--fresh``), ``action_limit`` the most
    actions sent (None: twice the task's ``max_steps``), ``transport`` ``http`` or ``ws``
    (a dual-agent session is HTTP only)."""

    out: str | Path = "runs"
    resume: bool = True
    action_limit: int | None = None
    transport: str = "http"


DEFAULT_RECORDING = EpisodeRecording()
"""``runs/``, resumed, twice ``max_steps`` actions at most, over HTTP."""


def record_episode(
    env_url: str,
    task_id: str,
    seed: int | None,
    policy: str | EpisodePolicy,
    *,
    actions_file: str | Path | None = None,
    options: dict[str, Any] | None = None,
    recording: EpisodeRecording = DEFAULT_RECORDING,
) -> Path:
    """Record one episode of ``policy`` on ARIA task ``task_id`` with ``seed``; returns the run folder.

    ``policy`` is a name (``scripted``, ``random``) or an :class:`EpisodePolicy` instance
    (its ``label``, else ``name``, goes into the run id). ``recording.transport`` is ``http``
    (one episode at a time per server) or ``ws`` (one environment
    per connection; parallel recordings are fine). ``actions_file`` is the scripted policy's
    YAML; ``options`` the ``llm`` policy's (see :func:`~recorder.policies.make_episode_policy`).
    At most ``recording.action_limit`` actions are sent (default: twice the task's ``max_steps``,
    as failed actions do not count against the environment's budget). A complete run of the
    same id is returned as it is unless ``recording.resume`` is False (then it is recorded anew).

    Raises:
        BadInput: unknown policy or transport, bad actions file, a task the server refuses,
            or an output path that is not a folder.
        EnvironmentFailure: the server is unreachable, answers out of shape, another client
            interferes with the HTTP session, or a resume replay diverges. The run folder is
            then left with ``status: "failed"`` and the error in run.json.
    """
    chosen = (
        policy
        if isinstance(policy, EpisodePolicy)
        else make_episode_policy(policy, seed, actions_file, options)
    )
    label = getattr(chosen, "label", chosen.name)
    store = RunStore(Path(recording.out), episode_run_id(task_id, label, seed),
                     make_identity("aria", episode_defining(task_id, seed, label, recording.transport,
                                                            actions_file, options)))
    opened = store.open(fresh=not recording.resume)
    if opened.state == "unchanged":
        return store.dir
    journal = opened.steps
    if journal and (journal[0].get("source") != "user" or "env" not in (journal[0].get("extra") or {})):
        raise BadInput(store.journal, "not the journal of an episode run (use --fresh to start over)")
    env = open_environment(env_url, recording.transport)
    lock = server_lock(env_url) if env.kind == "http" else contextlib.nullcontext()
    with lock:
        try:
            return _record(env, env_url, chosen, store, journal, task_id=task_id, seed=seed,
                           action_limit=recording.action_limit)
        finally:
            env.close()


def episode_defining(task_id: str, seed: int | None, policy: str, transport: str,
                     actions_file: str | Path | None, options: dict[str, Any] | None) -> dict:
    """What defines a live episode run: task, seed, policy, transport, the actions file's
    content (sha256) and the policy's options (docs/formats.md "Run identity")."""
    actions = None
    if actions_file is not None:
        actions = hashlib.sha256(read_file(Path(actions_file), cap=16 * 1024 * 1024)).hexdigest()
    from recorder.record import NOT_DEFINING

    behaviour = {k: v for k, v in sorted((options or {}).items()) if k not in NOT_DEFINING}
    return {"task": task_id, "seed": seed, "policy": policy, "transport": transport,
            "actions": actions, "options": behaviour}


def _record(
    env,
    url: str,
    policy: EpisodePolicy,
    store: RunStore,
    journal: list[dict[str, Any]],
    *,
    task_id: str,
    seed: int | None,
    action_limit: int | None,
) -> Path:
    label = getattr(policy, "label", policy.name)
    run = EpisodeRun(store, EpisodeFacts(
        source="aria", task_id=task_id, seed=seed, policy=label,
        agent_name=f"alertforge-aria-{policy.name}",
        env={"transport": env.kind, "url": url, "source": None}))
    run.summary.model = getattr(policy, "model", None)
    try:
        started_id = _start(env, url, run, store, journal, task_id, seed)
        policy.resume(run.steps)
        run.summary.endpoint = getattr(policy, "endpoint", None)  # policy llm: the server
        max_steps = (run.observation or {}).get("max_steps")
        limit = action_limit or (
            2 * max_steps if isinstance(max_steps, int) else DEFAULT_ACTION_LIMIT
        )
        _act(env, url, policy, run, store, journal, started_id, limit)
        if getattr(policy, "end_note", None):  # policy llm: why the model stopped
            run.summary.notes = [*(run.summary.notes or []), policy.end_note]
        state = _final_state(env, url, started_id, task_id)
    except EnvironmentFailure as err:
        _keep_failed(err, run, store, journal)
        raise
    return run.finish(state)


def _start(env, url: str, run: EpisodeRun, store: RunStore, journal: list[dict[str, Any]],
           task_id: str, seed: int | None) -> Any:
    """Reset the environment and start the run, or replay ``journal`` into it to resume;
    returns the server's episode id at the start."""
    observation, transport = env.reset(task_id, seed)
    started_id = episode_id(env, url)
    if journal:
        _replay(env, journal[1:], url)
        store.start(journal)  # replayed: the journal without a torn tail
        run.resume(journal)
    else:
        store.start([])
        run.start(observation, transport)
    return started_id


def _act(env, url: str, policy: EpisodePolicy, run: EpisodeRun, store: RunStore,
         journal: list[dict[str, Any]], started_id: Any, limit: int) -> None:
    """Send the policy's actions until the episode is done, the policy stops or ``limit``
    actions are taken, checking now and then that the episode is still this run's."""
    index = len(run.steps) - 1
    while not run.done and index < limit:
        decision = policy.decide(run.observation or {}, index)
        if decision is None:
            break
        action = action_of(decision)
        outcome = _step(env, action, run, url)
        _check_continues(run, outcome, url)
        policy.observe(run.add(action, outcome, decision))
        index += 1
        if index == 1 and not journal:
            _check_first_step(store, started_id, episode_id(env, url), url)
        elif index == 1 or index % ID_CHECK_EVERY == 0:
            check_episode_id(started_id, episode_id(env, url), url, f"after step {index}")


def _final_state(env, url: str, started_id: Any, task_id: str) -> dict[str, Any]:
    """The environment's final ``/state``. EnvironmentFailure when another client's episode
    or task replaced this one."""
    state = env.state()
    if env.kind == "http":
        check_episode_id(started_id, state.get("episode_id"), url, "at the end")
    if state.get("task_id", task_id) != task_id:
        raise EnvironmentFailure(
            url,
            f"/state is task {state.get('task_id')!r}, not "
            f"{task_id!r}: another client reset the shared environment",
        )
    return state


def _keep_failed(err: EnvironmentFailure, run: EpisodeRun, store: RunStore,
                 journal: list[dict[str, Any]]) -> None:
    """Leave the run folder failed with ``err`` (every step kept when a resume's replay
    stopped); nothing when the run has no step of its own (no folder is left)."""
    if isinstance(err, ForeignFirstStep) or (not run.steps and not journal):
        return  # no step of its own: no folder is left
    if journal and len(run.steps) < len(journal):  # the replay stopped: keep every step
        store.fail(str(err), run.summary)
    else:
        run.finish(None, status="failed", error=str(err))
