"""The ``alertforge`` command: one subcommand per pipeline stage of 3amBench Replay.

Exit codes: 0 ok, 1 the thing checked failed, 2 bad input (a message on stderr naming the
file and the problem; never a traceback).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from alertforge import __version__
from alertforge.errors import BadInput
from alertforge.paths import SITE_DIR, SPACE_DIR, resolve_task, task_dirs


def _cmd_grade(args) -> int:
    from alertforge.files import dump_json
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
    from recorder.record import record_run

    task = resolve_task(args.task, args.tasks)
    run_dir = record_run(task, args.policy, seed=args.seed, out=Path(args.out), resume=not args.fresh)
    print(run_dir)
    return 0


def _cmd_record_reference(args) -> int:
    from recorder.reference import record_reference

    dirs = record_reference(task_dirs(args.tasks), Path(args.out), jobs=args.jobs,
                            policies=args.policies.split(","))
    print(f"{len(dirs)} runs in {args.out}")
    return 0


def _cmd_export(args) -> int:
    from exporter.export import export_site

    summary = export_site([Path(p) for p in args.runs], Path(args.out))
    print(f"exported {summary.get('runs')} runs of {summary.get('tasks')} tasks into {args.out}")
    return 0


def _cmd_demo(args) -> int:
    from exporter.export import export_site
    from recorder.reference import record_reference

    started = time.perf_counter()
    runs_dir = Path(args.runs)
    record_reference(task_dirs(args.tasks), runs_dir, jobs=args.jobs,
                     policies=["oracle", "nop", "partial"])
    out = Path(args.out)
    summary = export_site([runs_dir], out, site_dir=SITE_DIR)
    print(f"built {out} from {summary.get('runs')} runs in {time.perf_counter() - started:.1f} s")
    if args.no_serve:
        return 0
    from exporter.serve import serve

    serve(out, port=args.port)
    return 0


def _cmd_generate(args) -> int:
    from tasks.generator.generate import generate

    written = generate(Path(args.out), master_seed=args.master_seed)
    for path in written:
        print(path)
    return 0


def _seed(text: str) -> int:
    value = int(text)
    if value < 0:
        raise argparse.ArgumentTypeError("seed must be >= 0")
    return value


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
    record.add_argument("--policy", required=True, help="oracle, nop or partial")
    record.add_argument("--seed", type=_seed, default=0)
    record.add_argument("--out", default="runs")
    record.add_argument("--tasks", help="tasks folder (default: bundled tasks/)")
    record.add_argument("--fresh", action="store_true", help="discard a previous run of the same id")
    record.set_defaults(func=_cmd_record)

    ref = sub.add_parser("record-reference", help="record the reference policies on every task")
    ref.add_argument("--tasks", help="tasks folder (default: bundled tasks/)")
    ref.add_argument("--out", default="runs")
    ref.add_argument("-j", "--jobs", type=int, default=2)
    ref.add_argument("--policies", default="oracle,nop,partial")
    ref.set_defaults(func=_cmd_record_reference)

    export = sub.add_parser("export", help="export runs into site data and pages")
    export.add_argument("runs", nargs="+", help="run folders, or folders of run folders")
    export.add_argument("--out", required=True)
    export.set_defaults(func=_cmd_export)

    demo = sub.add_parser("demo", help="record reference runs, export them into space/, serve")
    demo.add_argument("--no-serve", action="store_true")
    demo.add_argument("--port", type=int, default=8000)
    demo.add_argument("--tasks", help="tasks folder (default: bundled tasks/)")
    demo.add_argument("--runs", default=str(SPACE_DIR.parent / "runs"))
    demo.add_argument("--out", default=str(SPACE_DIR))
    demo.add_argument("-j", "--jobs", type=int, default=2)
    demo.set_defaults(func=_cmd_demo)

    gen = sub.add_parser("generate", help="(re)generate the task corpus")
    gen.add_argument("--out", required=True)
    gen.add_argument("--master-seed", type=int)
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
        return 1
    except KeyboardInterrupt:
        print("alertforge: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
