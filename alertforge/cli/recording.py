"""Commands that record runs: ``record`` (alerting tasks and ``--env aria`` episodes),
``record-reference``, ``record-openenv`` and the OpenEnv server they can drive,
``serve-openenv``."""

from __future__ import annotations

import argparse
import hashlib
from pathlib import Path

from alertforge.cli.options import (
    add_engine_option,
    add_jobs_option,
    add_llm_options,
    add_run_options,
    add_tasks_option,
    command_name,
    count,
    engine,
    llm_options,
    print_engine_summary,
)
from contract.errors import BadInput, EndpointFailure, EnvironmentFailure
from contract.paths import resolve_task, task_dirs
from contract.text import counted

RESUME_HINTS = {
    EndpointFailure: "the run is kept; run the same command again to resume it",
    EnvironmentFailure: "a run already started is kept with status failed; the same command resumes it",
}
"""What ``record`` adds to an endpoint or environment error: the run can be resumed."""


def add_record(sub) -> None:
    """``record --task T --policy P``: one run of a policy on a task or an ARIA episode."""
    record = sub.add_parser("record", help="record one run of a policy on a task")
    record.add_argument("--task", required=True, help="task folder or task id")
    from recorder.reference.mutations import ADVERSARIES

    record.add_argument("--policy", required=True,
                        help="oracle, nop, partial, mutant (a seeded wrong fix), llm, or "
                             "adversary:KIND with KIND one of " + ", ".join(sorted(ADVERSARIES))
                             + "; with --env aria: scripted, random or llm")
    add_run_options(record)
    add_tasks_option(record)
    add_llm_options(record)
    aria = record.add_argument_group(
        "action episodes (--env aria): --task is the environment's task id, e.g. easy")
    aria.add_argument("--env", choices=["aria"], help="record an episode from a live ARIA server")
    aria.add_argument("--env-url", help="the server, e.g. http://127.0.0.1:7860")
    aria.add_argument("--transport", choices=["http", "ws"], default="http",
                      help="http: one episode at a time per server; ws: one env per connection")
    aria.add_argument("--actions", help="YAML action list for --policy scripted "
                      "(examples/aria-actions/<task>.yaml)")
    aria.add_argument("--mode", choices=["single", "dual"], default="single",
                      help="dual: ARIA's dual-agent session, an observer reporting findings and "
                      "the responder (--policy) acting")
    aria.add_argument("--observer-policy", choices=["scripted", "random", "llm"],
                      help="--mode dual: the observer's policy (default: --policy)")
    aria.add_argument("--observer-actions",
                      help="--mode dual: YAML with the scripted observer's {finding: TEXT} "
                      "entries (default: --actions)")
    aria.add_argument("--observer-model", help="--mode dual, llm observer: its model (default: --model)")
    record.set_defaults(func=record_command, hints=RESUME_HINTS)


def record_command(args: argparse.Namespace) -> int:
    """Record (or resume, or reuse) the run; print its folder, reward and steps, and how to
    see it."""
    if args.env == "aria":
        return _record_episode(args)
    from recorder.record import record_run

    task = resolve_task(args.task, args.tasks)
    run_dir = record_run(task, args.policy, seed=args.seed, out=Path(args.out),
                         resume=not args.fresh, options=llm_options(args), max_steps=args.max_steps,
                         report=_report)
    print(run_dir)
    _print_outcome(run_dir, Path(args.out))
    return 0


def _print_outcome(run_dir: Path, out: Path) -> None:
    """The run's reward and steps from its run.json, and how to look at it."""
    from contract.files import read_json

    summary = read_json(run_dir / "run.json")
    final = summary.get("final") or {}
    reward = final.get("reward")
    shown = "no reward" if reward is None else (
        f"reward {reward:.4f} ({'solved' if final.get('solved') else 'not solved'})")
    trajectory = read_json(run_dir / "trajectory.json")
    actions = sum(1 for step in trajectory.get("steps") or [] if step.get("source") == "agent")
    # the agent's steps, as the viewer and export --markdown count them (not the instruction)
    print(f"  {shown}, {counted(actions, 'step')}, {summary.get('status')}")
    print(f"  to see it: {command_name()} view {out}")


def _report(line: str) -> None:
    import sys

    print(f"alertforge: {line}", file=sys.stderr)


def _record_episode(args: argparse.Namespace) -> int:
    """``record --env aria``: one episode from a live ARIA-compatible server."""
    from recorder.episodes.live import EpisodeRecording, record_episode

    if not args.env_url:
        raise BadInput("--env-url", "record --env aria needs --env-url http://HOST:PORT")
    if args.mode == "dual":
        return _record_dual(args)
    run_dir = record_episode(args.env_url, args.task, args.seed, args.policy,
                             actions_file=args.actions, options=llm_options(args, "max_steps"),
                             recording=EpisodeRecording(out=Path(args.out), resume=not args.fresh,
                                                        transport=args.transport))
    print(run_dir)
    return 0


def _record_dual(args: argparse.Namespace) -> int:
    """``record --env aria --mode dual``: one dual-agent session (HTTP only)."""
    from recorder.episodes.live import EpisodeRecording
    from recorder.episodes.live_dual import dual_policies, record_dual

    if args.transport != "http":
        raise BadInput("--transport", "ARIA's dual-agent session is HTTP only (--transport http)")
    options = llm_options(args, "max_steps")
    observer_options = {**options, **({"model": args.observer_model} if args.observer_model else {})}
    observer, responder, defining = dual_policies(
        args.policy, args.observer_policy or args.policy, args.seed, actions_file=args.actions,
        observer_actions=args.observer_actions, options=options, observer_options=observer_options)
    run_dir = record_dual(args.env_url, args.task, args.seed, observer, responder,
                          recording=EpisodeRecording(out=Path(args.out), resume=not args.fresh),
                          defining=defining)
    print(run_dir)
    return 0


def add_record_reference(sub) -> None:
    """``record-reference``: the reference policies (and mutants) on every task."""
    ref = sub.add_parser("record-reference", help="record the reference policies on every task")
    add_tasks_option(ref)
    ref.add_argument("--out", default="runs", help="folder the run folders go into (default: runs)")
    add_jobs_option(ref)
    add_engine_option(ref)
    ref.add_argument("--policies", default="oracle,nop,partial",
                     help="comma-separated: oracle, nop, partial, adversary:<kind>, ...")
    ref.add_argument("--mutants", type=count, default=0, help="mutant runs per task (seeds 1..N)")
    ref.set_defaults(func=record_reference_command)


def record_reference_command(args: argparse.Namespace) -> int:
    """Record the runs and print how many there are."""
    from recorder.reference_runs import record_reference

    tasks = task_dirs(args.tasks)
    chosen = engine(args)
    dirs = record_reference(tasks, Path(args.out), jobs=args.jobs, mutants=args.mutants,
                            policies=args.policies.split(","), engine=chosen)
    print(f"{counted(len(dirs), 'run')} in {args.out}")
    print_engine_summary(chosen)
    return 0


def add_serve_openenv(sub) -> None:
    """``serve-openenv``: the tasks as an OpenEnv 0.10 environment server on 127.0.0.1."""
    serve_env = sub.add_parser("serve-openenv", help="serve the tasks as an OpenEnv environment")
    serve_env.add_argument("--host", default="127.0.0.1")
    serve_env.add_argument("--port", type=int, default=8001)
    add_tasks_option(serve_env)
    serve_env.add_argument("--state-dir", help="fresh-task cache and the held-out master seed "
                           "(default: $XDG_STATE_HOME/alertforge/openenv)")
    serve_env.add_argument("--web", action="store_true",
                           help="also serve the web interface on /web/ (ENABLE_WEB_INTERFACE=true)")
    from recorder.environments.openenv_server.app import add_limit_options

    add_limit_options(serve_env)
    serve_env.set_defaults(func=serve_openenv_command)


def serve_openenv_command(args: argparse.Namespace) -> int:
    """Serve until interrupted."""
    import os

    from recorder.environments.openenv_server.app import WEB_ENV, serve

    if args.web:
        os.environ[WEB_ENV] = "true"
    serve(args.host, args.port, args.tasks, args.state_dir, max_sessions=args.max_sessions,
          max_fresh_tasks=args.max_fresh_tasks,
          idle_s=args.session_idle_timeout or None)
    return 0


def add_record_openenv(sub) -> None:
    """``record-openenv --url URL``: a run recorded by driving an OpenEnv 0.10 environment."""
    drive = sub.add_parser("record-openenv", help="record a run by driving an OpenEnv environment")
    drive.add_argument("--url", required=True, help="the environment server, e.g. http://127.0.0.1:8001")
    drive.add_argument("--task", help="bundled task id (reset task=...; reference policies read its folder)")
    add_tasks_option(drive)
    fresh = drive.add_argument_group("fresh tasks of this project's server (reset split, workflow, tier)")
    fresh.add_argument("--split", choices=["train", "heldout"],
                       help="train (its tasks can be built here too) or heldout (hidden tasks)")
    fresh.add_argument("--workflow", help="e.g. missed-page-postmortem")
    fresh.add_argument("--tier", choices=["easy", "medium", "hard"])
    drive.add_argument("--reset-json", help="more reset arguments, a JSON object (any server)")
    drive.add_argument("--policy", default="nop", help="oracle, nop, partial or llm")
    drive.add_argument("--actions", help="JSON list of action objects to send instead of a policy")
    add_run_options(drive)
    add_llm_options(drive)
    drive.set_defaults(func=record_openenv_command)


def record_openenv_command(args: argparse.Namespace) -> int:
    """Drive the server with a policy (or a fixed action list) and print the run folder.

    Raises:
        BadInput: a malformed ``--actions`` file or ``--reset-json``, a reference policy
            without a task folder (a held-out task never has one here).
        EnvironmentFailure: the server cannot be reached.
    """
    from recorder.record_openenv import OpenEnvRecording, record_openenv

    reset = _openenv_reset(args)
    task = _openenv_task_dir(args, reset) if not args.actions else None
    agent, policy, to_action, defining = _openenv_agent(args, task)
    named = reset.get("task") or "-".join(
        str(reset[k]) for k in ("split", "workflow", "tier") if k in reset) or "env"
    name = f"openenv__{named}__{policy.replace(':', '-')}__s{args.seed}"
    try:
        run_dir = record_openenv(args.url, agent, OpenEnvRecording(
            out=Path(args.out), readable=name, policy=policy, reset=reset, task_dir=task,
            seed=args.seed, max_steps=args.max_steps, defining=defining, fresh=args.fresh),
            to_action=to_action)
    except ConnectionError as err:
        raise EnvironmentFailure(args.url, f"cannot reach the OpenEnv server: {err}") from None
    print(run_dir)
    return 0


def _openenv_reset(args: argparse.Namespace) -> dict:
    """The reset arguments: ``seed``, the task or split/workflow/tier given, ``--reset-json``."""
    import json

    reset: dict = {"seed": args.seed}
    if args.task:
        task = resolve_task(args.task, args.tasks) if not args.actions else None
        reset["task"] = task.name if task else args.task
    for key in ("split", "workflow", "tier"):
        if getattr(args, key):
            reset[key] = getattr(args, key)
    if args.reset_json:
        try:
            more = json.loads(args.reset_json)
        except ValueError as err:
            raise BadInput("--reset-json", f"not JSON: {err}") from None
        if not isinstance(more, dict):
            raise BadInput("--reset-json", "expected a JSON object of reset arguments")
        reset.update(more)
    return reset


def _openenv_task_dir(args: argparse.Namespace, reset: dict) -> Path | None:
    """The local folder of the task the reset names: a bundled task, or a fresh train task
    built here by the same generator as the server's (None when there is none)."""
    if args.task:
        return resolve_task(args.task, args.tasks)
    if reset.get("split") == "heldout" or not (args.workflow and args.tier):
        return None
    from recorder.environments.openenv_server.fresh_tasks import FreshTasks

    try:
        return FreshTasks().task("train", args.workflow, args.tier, args.seed).path
    except ValueError as err:
        raise BadInput("--workflow", str(err)) from None


def _openenv_agent(args: argparse.Namespace, task: Path | None):
    """(agent, policy name, decision -> action, defining fields) for ``record-openenv``."""
    from contract.files import dump_json, read_json
    from recorder.agents.base import ScriptedAgent
    from recorder.policies import make_agent
    from recorder.record import NOT_DEFINING
    from recorder.record_openenv import default_action

    if args.actions:
        actions = read_json(args.actions, cap=16 * 1024 * 1024)
        if not isinstance(actions, list) or not all(isinstance(a, dict) for a in actions):
            raise BadInput(args.actions, "expected a JSON list of action objects")
        agent = ScriptedAgent([(str(a.get("tool") or a.get("action_type") or "action"), a)
                               for a in actions])
        digest = hashlib.sha256(dump_json(actions)).hexdigest()
        return agent, "actions", (lambda decision: decision.arguments), {"actions": digest}
    if task is None and args.policy != "llm":
        raise BadInput("--task", f"policy {args.policy} needs the task folder (--task ID, or "
                       "--workflow and --tier of a train task); held-out tasks are hidden: "
                       "--policy llm or --actions")
    options = llm_options(args)
    agent = make_agent(args.policy, task or Path("."), args.seed, options)
    defining = {"options": {k: v for k, v in sorted(options.items()) if k not in NOT_DEFINING}}
    return agent, args.policy, default_action, defining
