"""The ``alertforge`` command: one subcommand per pipeline stage of 3amBench Replay.

Exit codes: 0 ok, 1 the thing checked failed, 2 bad input (a message on stderr naming the
file and the problem; never a traceback).
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

from contract.errors import BadInput
from contract.paths import SITE_DIR, SPACE_DIR, resolve_task, task_dirs
from contract.version import __version__


def _cmd_grade(args) -> int:
    from contract.files import dump_json
    from grader.grade import grade

    task = resolve_task(args.task, args.tasks)
    result = grade(task, args.workspace)
    if args.json:
        sys.stdout.write(dump_json(result).decode())
        return 0
    keys = result["keys"]
    print(f"{result['task_id']}: reward {keys['reward']:.4f} "
          f"({'solved' if keys['solved'] else 'not solved'})")
    for name, value in keys.items():
        print(f"  {name:16} {value}")
    failed = [c for c in result["checks"] if c["passed"] is False]
    print(f"  checks failed: {len(failed)} of {len(result['checks'])}")
    for check in failed[: max(0, args.show_failed)]:
        print(f"    {check['id']}: {check['detail']}")
    if len(failed) > max(0, args.show_failed):
        print(f"    ... and {len(failed) - max(0, args.show_failed)} more (--show-failed N, or --json)")
    return 0


def _cmd_record(args) -> int:
    if args.env == "aria":
        return _cmd_record_episode(args)
    from recorder.agents import llm_alerting as llm_agent
    from recorder.record import record_run

    task = resolve_task(args.task, args.tasks)
    options = {key: getattr(args, key) for key in (
        "base_url", "model", "api_key_env", "price_input", "price_output", "temperature",
        "max_tokens") if getattr(args, key) is not None}
    try:
        run_dir = record_run(task, args.policy, seed=args.seed, out=Path(args.out),
                             resume=not args.fresh, options=options, max_steps=args.max_steps,
                             report=lambda line: print(f"alertforge: {line}", file=sys.stderr))
    except llm_agent.LLMError as err:
        print(f"alertforge: model endpoint error: {err} (the run is kept; run the same command "
              "again to resume it)", file=sys.stderr)
        return 1
    print(run_dir)
    return 0


def _cmd_record_episode(args) -> int:
    """``record --env aria``: one episode from a live ARIA-compatible server."""
    from recorder.agents.llm_alerting import LLMError
    from recorder.environments.aria import EnvironmentFailure
    from recorder.episodes.live import record_episode

    if not args.env_url:
        raise BadInput("--env-url", "record --env aria needs --env-url http://HOST:PORT")
    options = {key: getattr(args, key) for key in (
        "base_url", "model", "api_key_env", "price_input", "price_output", "temperature",
        "max_tokens", "max_steps") if getattr(args, key) is not None}
    try:
        run_dir = record_episode(args.env_url, args.task, args.seed, args.policy,
                                 transport=args.transport, actions_file=args.actions,
                                 out=Path(args.out), resume=not args.fresh, options=options)
    except LLMError as err:
        print(f"alertforge: model endpoint error: {err} (the run is kept; run the same command "
              "again to resume it)", file=sys.stderr)
        return 1
    except EnvironmentFailure as err:
        print(f"alertforge: environment error: {err} (a run already started is kept with "
              "status failed; the same command resumes it)", file=sys.stderr)
        return 1
    print(run_dir)
    return 0


def _cmd_import_episodes(args) -> int:
    from recorder.importers.aria_transcripts import import_episodes

    dirs = import_episodes(args.files, Path(args.out))
    print(f"{len(dirs)} episode runs in {args.out}")
    return 0


def _cmd_import_harbor(args) -> int:
    from recorder.importers.harbor_import import SUMMARY_FILE, import_harbor

    summary = import_harbor([Path(p) for p in args.jobs], Path(args.out),
                            Path(args.tasks) if args.tasks else None)
    for row in summary["imported"]:
        rewards = f"harbor {row['harbor_reward']}, regrade {row['regrade_reward']}"
        lossy = f", {row['lossy_steps']} lossy step(s)" if row["lossy_steps"] else ""
        print(f"{row['run_id']}: {row['replay']}{lossy} ({rewards})")
        if row["replay"] == "terminal-only":
            from contract.files import read_json

            notes = read_json(Path(args.out) / row["run_id"] / "run.json").get("notes") or []
            reason = "; ".join(str(n) for n in notes) or "no trajectory to replay"
            print(f"alertforge: import-harbor: {row['path']}: imported terminal-only (rewards only): "
                  f"{reason}", file=sys.stderr)
        if row["validation_errors"]:
            print(f"alertforge: import-harbor: {row['path']}: trajectory fails ATIF validation "
                  f"({row['validation_errors']} error(s), imported anyway; see run.json "
                  "validation_errors)", file=sys.stderr)
    for item in summary["skipped"]:
        print(f"alertforge: import-harbor: skipped {item['path']}: {item['reason']}", file=sys.stderr)
    print(f"{len(summary['imported'])} runs in {args.out}, {len(summary['skipped'])} skipped "
          f"(listed in {Path(args.out) / SUMMARY_FILE})")
    return 0


def _cmd_serve_openenv(args) -> int:
    from recorder.environments.openenv_server.app import serve

    serve(args.host, args.port, args.tasks)
    return 0


def _cmd_record_openenv(args) -> int:

    import hashlib

    from contract.files import dump_json, read_json
    from recorder.agents import llm_alerting as llm_agent
    from recorder.agents.base import ScriptedAgent
    from recorder.policies import make_agent
    from recorder.record_openenv import record_openenv

    task, defining = None, {}
    if args.actions:
        actions = read_json(args.actions, cap=16 * 1024 * 1024)
        if not isinstance(actions, list) or not all(isinstance(a, dict) for a in actions):
            raise BadInput(args.actions, "expected a JSON list of action objects")
        agent = ScriptedAgent([(str(a.get("tool") or a.get("action_type") or "action"), a)
                               for a in actions])
        policy, to_action = "actions", (lambda decision: decision.arguments)
        defining["actions"] = hashlib.sha256(dump_json(actions)).hexdigest()
    else:
        task = resolve_task(args.task, args.tasks) if args.task else None
        if task is None and args.policy != "llm":
            raise BadInput("--task", f"policy {args.policy} needs the task folder (--task ID)")
        options = {key: getattr(args, key) for key in ("base_url", "model", "api_key_env")
                   if getattr(args, key) is not None}
        agent = make_agent(args.policy, task or Path("."), args.seed, options)
        policy = args.policy
        from recorder.record import NOT_DEFINING

        defining["options"] = {k: v for k, v in sorted(options.items()) if k not in NOT_DEFINING}
        from recorder.record_openenv import default_action as to_action
    reset = {"seed": args.seed}
    if args.task:
        reset["task"] = task.name if task else args.task
    name = f"openenv__{reset.get('task', 'env')}__{policy.replace(':', '-')}__s{args.seed}"
    try:
        run_dir = record_openenv(args.url, agent, out=Path(args.out), readable=name, policy=policy,
                                 reset=reset, task_dir=task, seed=args.seed,
                                 max_steps=args.max_steps, to_action=to_action, defining=defining,
                                 fresh=args.fresh)
    except llm_agent.LLMError as err:
        print(f"alertforge: model endpoint error: {err}", file=sys.stderr)
        return 1
    except ConnectionError as err:
        print(f"alertforge: cannot reach the OpenEnv server: {err}", file=sys.stderr)
        return 1
    print(run_dir)
    return 0


def _cmd_record_reference(args) -> int:
    from recorder.reference_runs import record_reference

    dirs = record_reference(task_dirs(args.tasks), Path(args.out), jobs=args.jobs, mutants=args.mutants,
                            policies=args.policies.split(","))
    print(f"{len(dirs)} runs in {args.out}")
    return 0


def _redactor(enabled: bool, patterns: str | None):
    """A Redactor (built-in patterns plus --redact-patterns FILE) when ``enabled``, else None."""
    from exporter.redact import Redactor

    return Redactor.with_extra(Path(patterns) if patterns else None) if enabled else None


def _task_index(args):
    """The task roots a command reads tasks from: its ``--tasks`` folders, then the bundled tasks/."""
    from contract.task_roots import TaskIndex

    roots = args.tasks if isinstance(args.tasks, list) else ([args.tasks] if args.tasks else [])
    return TaskIndex([Path(root) for root in roots])


def _print_redaction(redactor, renamed: list[str]) -> None:
    print(redactor.report() if redactor is not None else "not redacted (--no-redact)")
    for new_id in renamed:
        print(f"renamed: an id that held a secret is now {new_id}")


def _cmd_export(args) -> int:
    from exporter.export import export_site
    from exporter.single_file import export_single_file

    if not args.out and not args.single_file:
        raise BadInput("--out", "export needs --out DIR or --single-file OUT.html")
    runs = [Path(p) for p in args.runs]
    index = _task_index(args)
    if args.out:
        redactor = _redactor(args.redact is not False, args.redact_patterns)
        summary = export_site(runs, Path(args.out), redactor=redactor, redact=redactor is not None,
                              task_index=index)
        print(f"exported {summary.get('runs')} runs of {summary.get('tasks')} tasks into {args.out}")
        _print_redaction(redactor, summary["renamed_ids"])
    if args.single_file:
        redactor = _redactor(args.redact is not False, args.redact_patterns)
        summary = export_single_file(runs, Path(args.single_file), redactor=redactor, task_index=index)
        print(f"wrote {summary['runs']} runs into {args.single_file} ({summary['bytes']} bytes)")
        _print_redaction(redactor, summary.get("renamed_ids", []))
    return 0


def _cmd_publish(args) -> int:
    from exporter.publish import PublishRefused, publish_site

    try:
        publish_site(Path(args.site), args.space, dry_run=args.dry_run,
                     redactor=_redactor(args.redact is not False, args.redact_patterns))
    except PublishRefused as err:
        print(f"alertforge: refusing to publish: {err}", file=sys.stderr)
        return 1
    return 0


def _demo_import_episodes(runs_dir: Path) -> None:
    """The demo's ARIA episodes: examples/aria-episodes/episodes/*.json imported into runs_dir."""
    from recorder.importers.aria_transcripts import EXAMPLE_EPISODES, import_episodes

    import_episodes(sorted(EXAMPLE_EPISODES.glob("*.json")), runs_dir)


def _cmd_demo(args) -> int:
    from exporter.export import export_site
    from recorder.reference_runs import record_reference

    started = time.perf_counter()
    runs_dir = Path(args.runs)
    from recorder.reference_runs import demo_policies

    record_reference(task_dirs(args.tasks), runs_dir, jobs=args.jobs, policies=demo_policies, mutants=1)
    _demo_import_episodes(runs_dir)
    out = Path(args.out)
    summary = export_site([runs_dir], out, site_dir=SITE_DIR, task_index=_task_index(args))
    print(f"built {out} from {summary.get('runs')} runs in {time.perf_counter() - started:.1f} s")
    if args.no_serve:
        return 0
    from exporter.serve import serve

    serve(out, port=args.port)
    return 0


def _cmd_gate(args) -> int:
    from recorder.gate import format_table, run_gate, select_cases, select_tasks, summary

    started = time.perf_counter()
    tasks = select_tasks(task_dirs(args.tasks), _csv(args.only, "--only"))
    rows = run_gate(tasks, jobs=args.jobs, cases=select_cases(_csv(args.cases, "--cases")))
    print(format_table(rows))
    print(summary(rows, time.perf_counter() - started))
    return 1 if any(r.ok is False for r in rows) else 0


def _csv(values: list[str] | None, option: str = "option") -> list[str] | None:
    """Repeatable comma-separated options, flattened (None when not given).

    Raises:
        BadInput: the option was given but names nothing (``--only ,``).
    """
    if not values:
        return None
    parts = [part.strip() for value in values for part in value.split(",") if part.strip()]
    if not parts:
        raise BadInput(option, "names nothing")
    return parts


def _cmd_generate(args) -> int:
    from tasks.generator.generate import generate
    from tasks.generator.workflows import implemented

    unknown = [w for w in args.workflow or [] if w not in implemented()]
    if unknown:
        raise BadInput(unknown[0], f"unknown workflow; known: {', '.join(implemented())}")
    if args.per_tier is not None and args.master_seed is None:
        raise BadInput("--per-tier", "needs --master-seed (the bundled corpus has seeds 1 and 2)")
    out = Path(args.out)
    if not args.out.strip():
        raise BadInput("--out", "empty path")
    inside = next((p for p in [out.resolve(), *out.resolve().parents] if (p / "task.toml").is_file()), None)
    if inside is not None:
        raise BadInput(out, f"is inside the task folder {inside}; generate into a corpus folder")
    from tasks.generator.checks import CatalogError

    try:
        written = generate(out, master_seed=args.master_seed, workflows=args.workflow,
                           per_tier=args.per_tier or 2)
    except CatalogError as err:
        raise BadInput(f"--master-seed {args.master_seed}", f"no safe check time: {err}") from None
    for path in written:
        print(path)
    return 0


MAX_PER_TIER = 1000
"""Upper bound of ``generate --per-tier`` (15,000 tasks)."""


def _positive(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError("must be >= 1")
    return value


def _count(text: str) -> int:
    value = int(text)
    if value < 0:
        raise argparse.ArgumentTypeError("must be >= 0")
    return value


def _per_tier(text: str) -> int:
    value = _positive(text)
    if value > MAX_PER_TIER:
        raise argparse.ArgumentTypeError(f"must be <= {MAX_PER_TIER}")
    return value


def _seed(text: str) -> int:
    value = int(text)
    if not 0 <= value < 2**63:
        raise argparse.ArgumentTypeError("seed must be >= 0 and < 2**63")
    return value


DEFAULT_JOBS = max(1, (os.cpu_count() or 2) // 2)
"""Worker processes by default: each grade already runs two promtool processes at once, so
one worker per two cores (on 2 cores -j 1 records 1.67 graded steps/s, -j 2 only 1.39)."""


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of every subcommand."""
    parser = argparse.ArgumentParser(prog="alertforge", description=__doc__.splitlines()[0])
    parser.add_argument("--version", action="version", version=f"alertforge {__version__}")
    sub = parser.add_subparsers(dest="command", required=True)

    grade = sub.add_parser("grade", help="grade a workspace against a task's checks")
    grade.add_argument("task", help="task folder or task id")
    grade.add_argument("--workspace", help="monitoring repo to grade (default: the pristine repo)")
    grade.add_argument("--json", action="store_true", help="print the whole GradeResult as JSON")
    grade.add_argument("--tasks", help="tasks folder to look ids up in (default: bundled tasks/)")
    grade.add_argument("--show-failed", type=int, default=20, help="failed checks to list")
    grade.set_defaults(func=_cmd_grade)

    record = sub.add_parser("record", help="record one run of a policy on a task")
    record.add_argument("--task", required=True, help="task folder or task id")
    record.add_argument("--policy", required=True,
                        help="oracle, nop, partial or llm; with --env aria: scripted, random or llm")
    record.add_argument("--seed", type=_seed, default=0)
    record.add_argument("--out", default="runs")
    record.add_argument("--tasks", help="tasks folder (default: bundled tasks/)")
    record.add_argument("--fresh", action="store_true", help="discard a previous run of the same id")
    record.add_argument("--max-steps", type=int, default=60, help="agent steps at most")
    llm = record.add_argument_group("policy llm (any OpenAI-compatible chat-completions endpoint)")
    llm.add_argument("--base-url", help="endpoint, e.g. http://127.0.0.1:8000/v1 "
                     "(default: $OPENAI_BASE_URL)")
    llm.add_argument("--model", help="model name (default: $ALERTFORGE_MODEL)")
    llm.add_argument("--api-key-env", help="variable holding the API key (default: OPENAI_API_KEY)")
    llm.add_argument("--price-input", type=float, help="USD per million prompt tokens")
    llm.add_argument("--price-output", type=float, help="USD per million completion tokens")
    llm.add_argument("--temperature", type=float)
    llm.add_argument("--max-tokens", type=int, help="completion tokens per model turn at most")
    aria = record.add_argument_group(
        "action episodes (--env aria): --task is the environment's task id, e.g. easy")
    aria.add_argument("--env", choices=["aria"], help="record an episode from a live ARIA server")
    aria.add_argument("--env-url", help="the server, e.g. http://127.0.0.1:7860")
    aria.add_argument("--transport", choices=["http", "ws"], default="http",
                      help="http: one episode at a time per server; ws: one env per connection")
    aria.add_argument("--actions", help="YAML action list for --policy scripted")
    record.set_defaults(func=_cmd_record)

    episodes = sub.add_parser("import-episodes",
                              help="recorded action-episode transcripts (ARIA) into runs")
    episodes.add_argument("files", nargs="+", help="transcript JSON files")
    episodes.add_argument("--out", default="runs")
    episodes.set_defaults(func=_cmd_import_episodes)

    ref = sub.add_parser("record-reference", help="record the reference policies on every task")
    ref.add_argument("--tasks", help="tasks folder (default: bundled tasks/)")
    ref.add_argument("--out", default="runs")
    ref.add_argument("-j", "--jobs", type=_positive, default=DEFAULT_JOBS,
                     help=f"worker processes (default {DEFAULT_JOBS}: one per two cores)")
    ref.add_argument("--policies", default="oracle,nop,partial",
                     help="comma-separated: oracle, nop, partial, adversary:<kind>, ...")
    ref.add_argument("--mutants", type=_count, default=0, help="mutant runs per task (seeds 1..N)")
    ref.set_defaults(func=_cmd_record_reference)

    export = sub.add_parser("export", help="export runs into site data and pages")
    export.add_argument("runs", nargs="+", help="run folders, or folders of run folders")
    export.add_argument("--out", help="site folder to write")
    export.add_argument("--single-file", metavar="OUT.html",
                        help="also (or only) write one self-contained HTML file that works via file://")
    export.add_argument("--redact", action=argparse.BooleanOptionalAction, default=True,
                        help="mask secrets (token formats, secret config fields, URL credentials, "
                        "private keys, webhooks, e-mail addresses) in every string (default: on)")
    export.add_argument("--tasks", action="append", metavar="DIR",
                        help="task folders to find the runs' tasks in, by id and fingerprint "
                        "(repeatable; the bundled tasks/ are always searched)")
    export.add_argument("--redact-patterns", metavar="FILE", help="extra secret regexes, one a line")
    export.set_defaults(func=_cmd_export)

    publish = sub.add_parser("publish", help="upload the built site to a Hugging Face static Space")
    publish.add_argument("--space", required=True, metavar="ORG/NAME")
    publish.add_argument("--site", default=str(SPACE_DIR), help="the built site (default: space/)")
    publish.add_argument("--dry-run", action="store_true",
                         help="list files and sizes and write listing.json, upload nothing")
    publish.add_argument("--redact", action=argparse.BooleanOptionalAction, default=True,
                         help="mask secrets in the uploaded copy (default: on)")
    publish.add_argument("--redact-patterns", metavar="FILE", help="extra secret regexes, one a line")
    publish.set_defaults(func=_cmd_publish)

    demo = sub.add_parser("demo", help="record reference runs, export them into space/, serve")
    demo.add_argument("--no-serve", action="store_true")
    demo.add_argument("--port", type=int, default=8000)
    demo.add_argument("--tasks", help="tasks folder (default: bundled tasks/)")
    demo.add_argument("--runs", default=str(SPACE_DIR.parent / "runs"))
    demo.add_argument("--out", default=str(SPACE_DIR))
    demo.add_argument("-j", "--jobs", type=_positive, default=DEFAULT_JOBS)
    demo.set_defaults(func=_cmd_demo)

    gate = sub.add_parser("gate", help="acceptance gate: oracle 1, no-op 0, partial band, adversaries, mutants")
    gate.add_argument("--tasks", help="tasks folder (default: bundled tasks/)")
    gate.add_argument("--only", action="append", metavar="IDS",
                      help="gate only these tasks: ids, substrings or globs, comma-separated "
                           "(e.g. --only af-001,'*storm*')")
    gate.add_argument("--cases", action="append", metavar="CASES",
                      help="run only these cases, comma-separated names or globs "
                           "(e.g. --cases oracle,partial,'adversary:*')")
    gate.add_argument("-j", "--jobs", type=_positive, default=DEFAULT_JOBS)
    gate.set_defaults(func=_cmd_gate)

    harbor = sub.add_parser("import-harbor", help="Harbor job folders (ATIF trajectories) into "
                            "runs, re-graded step by step")
    harbor.add_argument("jobs", nargs="+", metavar="JOB_DIR",
                        help="job folders, trial folders or ATIF trajectory files")
    harbor.add_argument("--out", default="runs")
    harbor.add_argument("--tasks", help="tasks folder to match trials against (default: bundled tasks/)")
    harbor.set_defaults(func=_cmd_import_harbor)

    serve_env = sub.add_parser("serve-openenv", help="serve the tasks as an OpenEnv environment")
    serve_env.add_argument("--host", default="127.0.0.1")
    serve_env.add_argument("--port", type=int, default=8001)
    serve_env.add_argument("--tasks", help="tasks folder (default: bundled tasks/)")
    serve_env.set_defaults(func=_cmd_serve_openenv)

    drive = sub.add_parser("record-openenv", help="record a run by driving an OpenEnv environment")
    drive.add_argument("--url", required=True, help="the environment server, e.g. http://127.0.0.1:8001")
    drive.add_argument("--task", help="task id (reset task=...; reference policies read its folder)")
    drive.add_argument("--tasks", help="tasks folder (default: bundled tasks/)")
    drive.add_argument("--policy", default="nop", help="oracle, nop, partial or llm")
    drive.add_argument("--actions", help="JSON list of action objects to send instead of a policy")
    drive.add_argument("--seed", type=_seed, default=0)
    drive.add_argument("--out", default="runs")
    drive.add_argument("--max-steps", type=int, default=60)
    drive.add_argument("--fresh", action="store_true", help="replace a previous run of the same id")
    drive.add_argument("--base-url", help="policy llm: endpoint (default: $OPENAI_BASE_URL)")
    drive.add_argument("--model", help="policy llm: model (default: $ALERTFORGE_MODEL)")
    drive.add_argument("--api-key-env", help="policy llm: variable holding the key")
    drive.set_defaults(func=_cmd_record_openenv)

    gen = sub.add_parser("generate", help="(re)generate the task corpus")
    gen.add_argument("--out", required=True)
    gen.add_argument("--master-seed", type=_seed, help="a non-negative integer: a fresh private set")
    gen.add_argument("--per-tier", type=_per_tier, metavar="N",
                     help="with --master-seed: N tasks per workflow and tier (default 2)")
    gen.add_argument("--workflow", action="append",
                     help="only this workflow (repeatable; default: every workflow)")
    gen.set_defaults(func=_cmd_generate)
    return parser


def main(argv: list[str] | None = None) -> int:
    """Entry point of the console script; returns the exit code."""
    args = build_parser().parse_args(argv)
    try:
        return args.func(args)
    except BadInput as err:
        print(f"alertforge: {err.path}: {err.problem}", file=sys.stderr)
        return 2
    except RuntimeError as err:  # grader.promtool.GraderError, grader.routing.RoutingError
        print(f"alertforge: grader error: {err}", file=sys.stderr)
        return 2
    except BrokenPipeError:  # output piped into head: stop quietly
        return 0
    except FileExistsError as err:
        print(f"alertforge: {err.filename}: exists and is not a folder (cannot write there)",
              file=sys.stderr)
        return 2
    except OSError as err:  # not a directory, permission, read-only file system, disk full...
        print(f"alertforge: {err.filename or ''}: {err.strerror or err} (cannot write there)",
              file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("alertforge: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
