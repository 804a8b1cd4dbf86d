"""Benchmark: the share of failing checks with a cause, by family, over the gate's mutants, adversaries and partial runs of every task.

Each case's final workspace is built as the gate builds it (:func:`proofs.gate.graded_case`:
the oracle with one mutant applied, an adversary, the partial policy) and graded; every
failing check is counted under its family as *with a cause* (any kind but ``none``) or
*without*, and each ``none`` under its reason (``why``). Prints one row per family, the
total, the reasons, and the count by cause kind. Usage: .venv/bin/python bench/causes.py
[-j 2] [--only af-001-...,af-002-...] [--json FILE]
"""

from __future__ import annotations

import argparse
import tempfile
from collections import Counter
from pathlib import Path

from contract.files import dump_json, write_atomic
from contract.paths import TASKS_DIR, task_dirs
from contract.processes import worker_pool
from proofs.gate import graded_case, why_not
from recorder.reference.context import context_for_task
from recorder.reference.mutations import ADVERSARIES, MUTANTS

CASES = ("partial", *(f"mutant:{m}" for m in sorted(MUTANTS)), *sorted(ADVERSARIES))


def task_counts(task: str) -> dict:
    """``{cases, by_family: {family: [with, without]}, kinds: {kind: n}, reasons: {why: n}}``
    of one task's applicable cases."""
    task_dir = Path(task)
    ctx = context_for_task(task_dir)
    by_family: dict[str, list[int]] = {}
    kinds: Counter = Counter()
    reasons: Counter = Counter()
    cases = 0
    for case in CASES:
        if why_not(case, ctx) is not None:
            continue
        cases += 1
        with tempfile.TemporaryDirectory() as tmp:
            result = graded_case(task_dir, case, ctx, Path(tmp))
        for check in result.checks:
            if check.passed is not False:
                continue
            kind, why = (check.cause.kind, check.cause.why) if check.cause else ("none", "no cause field")
            counts = by_family.setdefault(check.family, [0, 0])
            counts[kind == "none"] += 1
            kinds[kind] += 1
            if kind == "none":
                reasons[f"{check.family}: {why}"] += 1
    return {"cases": cases, "by_family": by_family, "kinds": dict(kinds), "reasons": dict(reasons)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-j", "--jobs", type=int, default=2)
    parser.add_argument("--only", default="", help="comma-separated task ids")
    parser.add_argument("--json", help="also write the counts as JSON here")
    args = parser.parse_args()
    only = {t for t in args.only.split(",") if t}
    tasks = [str(t) for t in task_dirs(TASKS_DIR) if not only or t.name in only]
    with worker_pool(args.jobs) as pool:
        results = list(pool.map(task_counts, tasks))
    families: dict[str, list[int]] = {}
    kinds: Counter = Counter()
    reasons: Counter = Counter()
    for result in results:
        for family, (with_cause, without) in result["by_family"].items():
            families.setdefault(family, [0, 0])
            families[family][0] += with_cause
            families[family][1] += without
        kinds.update(result["kinds"])
        reasons.update(result["reasons"])
    print(f"{len(tasks)} tasks, {sum(r['cases'] for r in results)} graded cases "
          f"(partial, {len(MUTANTS)} mutants, {len(ADVERSARIES)} adversaries where they apply)")
    print(f"{'family':14} {'failing':>8} {'with cause':>10} {'share':>7}")
    for family, (with_cause, without) in sorted(families.items()):
        total = with_cause + without
        print(f"{family:14} {total:8d} {with_cause:10d} {with_cause / total:7.1%}")
    with_all = sum(w for w, _ in families.values())
    total_all = sum(w + n for w, n in families.values())
    print(f"{'all':14} {total_all:8d} {with_all:10d} {with_all / max(1, total_all):7.1%}")
    print("without a cause, by reason:" if reasons else "every failing check has a cause")
    for reason, count in reasons.most_common():
        print(f"  {count:6d}  {reason}")
    print("by cause kind:")
    for kind, count in kinds.most_common():
        print(f"  {count:6d}  {kind}")
    if args.json:
        write_atomic(Path(args.json), dump_json({"families": families, "kinds": dict(kinds),
                                                 "reasons": dict(reasons)}))


if __name__ == "__main__":
    main()
