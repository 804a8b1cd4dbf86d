"""Commands on the task corpus and its checks: ``grade``, ``gate`` and ``generate``."""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from alertforge.cli.options import (
    add_engine_option,
    add_jobs_option,
    add_tasks_option,
    csv,
    engine,
    per_tier,
    print_engine_summary,
    seed,
)
from contract.errors import BadInput
from contract.paths import resolve_task, task_dirs


def add_grade(sub) -> None:
    """``grade TASK [--workspace DIR]``: grade a workspace against a task's checks."""
    grade = sub.add_parser("grade", help="grade a workspace against a task's checks")
    grade.add_argument("task", help="task folder or task id")
    grade.add_argument("--workspace", metavar="DIR",
                       help="the monitoring repo to grade, as an agent left it: a folder laid out like "
                       "the task's environment/monitoring/ (rules/*.yml, alertmanager/alertmanager.yml); "
                       "default: "
                       "that pristine repo, which scores 0")
    grade.add_argument("--json", action="store_true", help="print the whole GradeResult as JSON")
    add_tasks_option(grade, help="tasks folder to look ids up in (default: bundled tasks/)")
    grade.add_argument("--show-failed", type=int, default=20, metavar="N",
                       help="how many failing checks to list with their details (default 20)")
    grade.set_defaults(func=grade_command)


def grade_command(args: argparse.Namespace) -> int:
    """Print the reward, the score keys, the failed checks, the config findings and any
    inhibition version difference (or the GradeResult as JSON)."""
    from contract.base import dump
    from contract.files import dump_json
    from grader.grade import grade_result

    task = resolve_task(args.task, args.tasks)
    result = grade_result(task, args.workspace)
    if args.json:
        sys.stdout.write(dump_json(dump(result)).decode())
        return 0
    keys = result.keys
    print(f"{result.task_id}: reward {keys['reward']:.4f} "
          f"({'solved' if keys['solved'] else 'not solved'})")
    for name, value in keys.items():
        print(f"  {name:16} {value}")
    failed = [c for c in result.checks if c.passed is False]
    shown = max(0, args.show_failed)
    print(f"  checks failed: {len(failed)} of {len(result.checks)}")
    for check in failed[:shown]:
        print(f"    {check.id}: {check.detail}")
    if len(failed) > shown:
        print(f"    ... and {len(failed) - shown} more (--show-failed N, or --json)")
    findings = result.findings or []
    if findings:
        print(f"  config findings (not scored): {len(findings)}")
        for finding in findings:
            print(f"    {finding.kind}: {finding.text}")
    for difference in result.version_differences or []:
        verdicts = ", ".join(f"{version} {'mutes' if muted else 'does not mute'}"
                             for version, muted in difference.verdicts.items())
        print(f"  version difference: {difference.check} (inhibit rule {difference.rule}): "
              f"{verdicts}")
    return 0


def add_gate(sub) -> None:
    """``gate``: the acceptance gate over the corpus."""
    gate = sub.add_parser("gate", help="acceptance gate: oracle 1, no-op 0, partial band, adversaries, mutants")
    add_tasks_option(gate)
    gate.add_argument("--only", action="append", metavar="IDS",
                      help="gate only these tasks: ids, substrings or globs, comma-separated "
                           "(e.g. --only af-001,'*storm*')")
    gate.add_argument("--cases", action="append", metavar="CASES",
                      help="run only these cases, comma-separated names or globs "
                           "(e.g. --cases oracle,partial,'adversary:*')")
    add_jobs_option(gate)
    add_engine_option(gate)
    gate.set_defaults(func=gate_command)


def gate_command(args: argparse.Namespace) -> int:
    """Print the gate's table and summary; exit 1 when any case fails."""
    from proofs.gate import format_table, run_gate, select_cases, select_tasks, summary

    started = time.perf_counter()
    tasks = select_tasks(task_dirs(args.tasks), csv(args.only, "--only"))
    cases = select_cases(csv(args.cases, "--cases"))
    chosen = engine(args)
    rows = run_gate(tasks, jobs=args.jobs, cases=cases, engine=chosen)
    print(format_table(rows))
    print(summary(rows, time.perf_counter() - started))
    print_engine_summary(chosen)
    return 1 if any(r.ok is False for r in rows) else 0


def add_generate(sub) -> None:
    """``generate --out DIR``: (re)generate the corpus or a private set."""
    gen = sub.add_parser("generate", help="(re)generate the task corpus")
    gen.add_argument("--out", required=True)
    gen.add_argument("--master-seed", type=seed, help="a non-negative integer: a fresh private set")
    gen.add_argument("--per-tier", type=per_tier, metavar="N",
                     help="with --master-seed: N tasks per workflow and tier (default 2)")
    gen.add_argument("--workflow", action="append",
                     help="only this workflow (repeatable; default: every workflow)")
    gen.set_defaults(func=generate_command)


def generate_command(args: argparse.Namespace) -> int:
    """Write the tasks and print each path written.

    Raises:
        BadInput: an unknown workflow, ``--per-tier`` without ``--master-seed``, an output
            folder inside a task folder, or a master seed with no safe check time.
    """
    from tasks.generator.checks import CatalogError
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
    try:
        written = generate(out, master_seed=args.master_seed, workflows=args.workflow,
                           per_tier=args.per_tier or 2)
    except CatalogError as err:
        raise BadInput(f"--master-seed {args.master_seed}", f"no safe check time: {err}") from None
    for path in written:
        print(path)
    return 0
