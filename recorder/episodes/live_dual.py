"""``alertforge record --env aria --mode dual``: one dual-agent session from a live ARIA server.

Two policies take turns (:mod:`recorder.episodes.dual` for the run format): before each
responder action the observer reports one finding while it has any (``step/a``), then the
responder acts (``step/b``), until the episode is done, the responder has no more actions
or the action limit; then ``GET /multi-agent/state`` for the findings log, which must hold
every accepted finding (nothing dropped). Every step is journaled as it goes.

Resuming: the same command on an unfinished run opens a new session with the same task and
seed and replays the journal (findings and actions in their order), checking each
responder reward, then goes on. A server that lost the session (404) ends the recording
as an environment failure, the run kept.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from contract.errors import BadInput, EnvironmentFailure
from recorder.agents.episode_policies import EpisodePolicy, action_of
from recorder.environments.aria_dual import DualEnvironment
from recorder.episodes import dual
from recorder.episodes.live import (
    DEFAULT_ACTION_LIMIT,
    DEFAULT_RECORDING,
    EpisodeRecording,
    episode_defining,
)
from recorder.episodes.writer import EpisodeFacts, EpisodeRun, episode_run_id
from recorder.run_store import RunStore, make_identity


def _agent(step: dict[str, Any]) -> str | None:
    return ((step.get("extra") or {}).get("env") or {}).get("agent")


def _replay(env: DualEnvironment, steps: list[dict[str, Any]]) -> None:
    """Send the journal's findings and actions again, checking every responder reward."""
    for step in steps:
        call = (step.get("tool_calls") or [{}])[0]
        recorded = (step.get("extra") or {}).get("env") or {}
        if _agent(step) == dual.OBSERVER:
            env.finding(str((call.get("arguments") or {}).get("finding") or ""))
            continue
        outcome = env.step({"action_type": call.get("function_name"), **(call.get("arguments") or {})})
        same = (outcome.error is None) == (recorded.get("error") is None) and (
            outcome.error is not None or abs(outcome.reward - recorded.get("reward", 0.0)) < 1e-9)
        if not same:
            raise EnvironmentFailure(env.url, f"cannot resume: replaying step {step['step_id'] - 1} "
                                     "gave another answer than the journal's; record again with --fresh")


def record_dual(env_url: str, task_id: str, seed: int | None, observer: EpisodePolicy,
                responder: EpisodePolicy, *, recording: EpisodeRecording = DEFAULT_RECORDING,
                defining: dict[str, Any] | None = None) -> Path:
    """Record one dual-agent session of ``observer`` and ``responder``; returns the run folder.

    The run id is ``aria-<task>__dual-<observer label>+<responder label>__s<seed>``;
    ``defining`` adds to its identity (the actions files' digests, options). At most
    ``recording.action_limit`` responder actions (default twice the task's ``max_steps``);
    ``recording.out`` and ``resume`` as for :func:`~recorder.episodes.live.record_episode`
    (the session is HTTP whatever ``recording.transport`` says).

    Raises:
        BadInput: a task the server opens no session for (``generated``), or a journal that is
            not a dual-agent run's.
        EnvironmentFailure: unreachable server, a lost session (404), a replay that diverges,
            or a findings log missing an accepted finding. The run folder is then kept with
            ``status: "failed"``.
    """
    label = f"dual-{getattr(observer, 'label', observer.name)}+{getattr(responder, 'label', responder.name)}"
    identity = {**episode_defining(task_id, seed, label, "http", None, None), "mode": "dual",
                **(defining or {})}
    store = RunStore(Path(recording.out), episode_run_id(task_id, label, seed),
                     make_identity("aria", identity))
    opened = store.open(fresh=not recording.resume)
    if opened.state == "unchanged":
        return store.dir
    journal = opened.steps
    if journal and "observer_observation" not in ((journal[0].get("extra") or {}).get("env") or {}):
        raise BadInput(store.journal, "not the journal of a dual-agent run (use --fresh)")
    env = DualEnvironment(env_url)
    run = EpisodeRun(store, EpisodeFacts(
        source="aria", task_id=task_id, seed=seed, policy=label, agent_name="alertforge-aria-dual",
        mode="dual", env={"transport": "http", "url": env_url, "source": None, "mode": "dual"}))
    try:
        return _session(env, run, store, journal, observer, responder, recording.action_limit)
    finally:
        env.close()


def _session(env, run: EpisodeRun, store: RunStore, journal: list[dict[str, Any]],
             observer: EpisodePolicy, responder: EpisodePolicy, action_limit: int | None) -> Path:
    try:
        _start_session(env, run, store, journal)
        observer.resume(run.steps)
        responder.resume(run.steps)
        max_steps = (run.observation or {}).get("max_steps")
        limit = action_limit or (2 * max_steps if isinstance(max_steps, int) else DEFAULT_ACTION_LIMIT)
        _take_turns(env, run, observer, responder, limit)
        state = env.state()
        _check_findings(run, state, env.url)
    except EnvironmentFailure as err:
        if not run.steps and not journal:  # stopped before its first step: leave no folder
            raise
        if journal and len(run.steps) < len(journal):
            store.fail(str(err), run.summary)
        else:
            run.finish(None, status="failed", error=str(err))
        raise
    return run.finish(None)


def _start_session(env, run: EpisodeRun, store: RunStore, journal: list[dict[str, Any]]) -> None:
    """Reset the session and start the run, or replay ``journal`` into it to resume."""
    responder_view, observer_view, transport = env.reset(run.task_id, run.seed)
    if journal:
        _replay(env, journal[1:])
        store.start(journal)
        run.resume(journal)
    else:
        store.start([])
        run.start(responder_view, transport, observer_view)


def _take_turns(env, run: EpisodeRun, observer: EpisodePolicy, responder: EpisodePolicy,
                limit: int) -> None:
    """Alternate a finding of the observer (until it stops) and an action of the responder,
    until the episode is done, the responder stops or ``limit`` actions are taken."""
    findings = sum(1 for s in run.steps if _agent(s) == dual.OBSERVER)
    actions = sum(1 for s in run.steps if _agent(s) == dual.RESPONDER)
    observing = True
    while not run.done and actions < limit:
        if observing:
            observing = _observer_turn(env, run, observer, responder, findings)
            if observing:
                findings += 1
        decision = responder.decide(run.observation or {}, actions)
        if decision is None:
            break
        step = run.add(action_of(decision), env.step(action_of(decision)), decision)
        responder.observe(step)
        observer.observe(step)
        actions += 1


def _observer_turn(env, run: EpisodeRun, observer: EpisodePolicy, responder: EpisodePolicy,
                   findings: int) -> bool:
    """Post the observer's next finding (both policies observe the step); False when the
    observer has no more."""
    decision = observer.decide(run.observer_view or {}, findings)
    if decision is None:
        return False
    text = str(decision.arguments.get("finding") or "")
    answer, hop = env.finding(text)
    step = run.add_finding(text, answer, hop, decision)
    observer.observe(step)
    responder.observe(step)
    return True


def _check_findings(run: EpisodeRun, state: dict[str, Any], url: str) -> None:
    """Every accepted finding is in the server's findings log, in order (nothing dropped)."""
    ours = [((s.get("extra") or {}).get("env") or {}).get("finding") for s in run.steps
            if _agent(s) == dual.OBSERVER and ((s.get("extra") or {}).get("env") or {}).get("accepted")]
    log = [entry.get("finding") for entry in state.get("findings_log") or [] if isinstance(entry, dict)]
    if log != ours:
        raise EnvironmentFailure(url, f"the session's findings log has {len(log)} findings, this "
                                 f"run accepted {len(ours)}: another client posted to the session "
                                 "or a finding was dropped")


def dual_policies(responder: str, observer: str, seed: int | None, *,
                  actions_file: str | Path | None = None,
                  observer_actions: str | Path | None = None,
                  options: dict[str, Any] | None = None,
                  observer_options: dict[str, Any] | None = None,
                  ) -> tuple[EpisodePolicy, EpisodePolicy, dict[str, Any]]:
    """``(observer, responder, defining)`` from policy names (``scripted``, ``random``,
    ``llm``) and their options. A scripted observer takes the ``{finding: TEXT}`` entries of
    ``observer_actions`` (default: ``actions_file``), a scripted responder its actions;
    ``defining`` holds the files' sha256 and the options that define the run.

    Raises:
        BadInput: an unknown name, ``scripted`` without a file, a bad file, or ``llm``
            without an endpoint (see :func:`recorder.policies.make_episode_policy`).
    """
    import hashlib

    from contract.untrusted import read_file
    from recorder.agents.episode_policies import (
        RandomObserver,
        ScriptedObserver,
        ScriptedPolicy,
        read_actions,
    )
    from recorder.policies import make_episode_policy

    observer_actions = observer_actions or actions_file
    if responder == "scripted":
        if actions_file is None:
            raise BadInput("scripted", "the scripted responder needs --actions FILE.yaml")
        chosen_responder: EpisodePolicy = ScriptedPolicy(
            read_actions(actions_file, findings=True), label=f"scripted-{Path(actions_file).stem}")
    else:
        chosen_responder = make_episode_policy(responder, seed, None, options)
    if observer == "scripted":
        if observer_actions is None:
            raise BadInput("scripted", "the scripted observer needs --observer-actions FILE.yaml")
        chosen_observer: EpisodePolicy = ScriptedObserver(
            read_actions(observer_actions, findings=True), label="scripted")
    elif observer == "random":
        chosen_observer = RandomObserver(seed)
    elif observer == "llm":
        from recorder.agents.llm_endpoint import settings_from
        from recorder.agents.llm_episode import LLMObserverPolicy

        chosen_observer = LLMObserverPolicy(settings_from(observer_options or options or {}), seed,
                                            max_actions=(observer_options or {}).get("max_steps"))
    else:
        raise BadInput(observer, "unknown observer policy; known: scripted, random, llm")

    def digest(path):
        return None if path is None else hashlib.sha256(
            read_file(Path(path), cap=16 * 1024 * 1024)).hexdigest()

    from recorder.record import NOT_DEFINING

    def behaviour(opts):
        return {k: v for k, v in sorted((opts or {}).items()) if k not in NOT_DEFINING}

    defining = {"actions": digest(actions_file), "observer_actions": digest(observer_actions),
                "options": behaviour(options), "observer_options": behaviour(observer_options)}
    return chosen_observer, chosen_responder, defining
