"""The ``mutate`` command: mutation analysis of every task's check catalog (issue 14)."""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from alertforge.cli.options import (
    add_engine_option,
    add_jobs_option,
    add_tasks_option,
    csv,
    engine,
    print_engine_summary,
)
from contract.errors import BadInput
from contract.paths import task_dirs


def add_mutate(sub) -> None:
    """``mutate``: apply every operator to every task's oracle, grade, classify, report."""
    mutate = sub.add_parser("mutate", help="mutation analysis: grade wrong configs made from each oracle")
    add_tasks_option(mutate)
    mutate.add_argument("--only", action="append", metavar="IDS",
                        help="only these tasks: ids, substrings or globs, comma-separated")
    mutate.add_argument("--operators", action="append", metavar="NAMES",
                        help="only these operators, comma-separated (default: all)")
    add_jobs_option(mutate)
    add_engine_option(mutate)
    mutate.add_argument("--report", default="mutation-report.json", metavar="FILE",
                        help="JSON report to write (default: mutation-report.json)")
    mutate.set_defaults(func=mutate_command)


def mutate_command(args: argparse.Namespace) -> int:
    """Print the tables, survivors, equivalents and the score; write the JSON report.

    Exit 0 when the analysis ran (the score is a measurement, not a failure).

    Raises:
        BadInput: an unknown task pattern or operator, or a task without an oracle.
    """
    from proofs.gate import select_tasks
    from proofs.mutation.analysis import run_analysis
    from proofs.mutation.report import format_report, write_report
    from proofs.mutation.table import operator_table

    table = operator_table()
    names = csv(args.operators, "--operators")
    unknown = [n for n in names or [] if n not in table]
    if unknown:
        raise BadInput(unknown[0], f"unknown operator; known: {', '.join(table)}")
    operators = [table[n] for n in names] if names else list(table.values())
    report = Path(args.report)
    if report.is_dir():
        raise BadInput(report, "is a folder; --report names the JSON file to write")
    started = time.perf_counter()
    tasks = select_tasks(task_dirs(args.tasks), csv(args.only, "--only"))
    chosen = engine(args)
    results = run_analysis(tasks, [op.name for op in operators], jobs=args.jobs, engine=chosen)
    wall = time.perf_counter() - started
    print(format_report(results, operators, wall), end="")
    write_report(report, results, operators, wall)
    print(f"report: {report}")
    print_engine_summary(chosen)
    return 0
