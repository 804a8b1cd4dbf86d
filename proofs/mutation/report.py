"""The mutation report: per-task and per-operator tables, survivors with witnesses, equivalents with proofs, and the JSON.

The mutation score is killed / (killed + survived) (issue 14 part 2): equivalent mutants
are not wrong and grader errors are not measurements, so neither counts. The JSON report
holds every mutant's classification (``proofs.mutation.analysis.MutantResult``), the
operator table and the scores; writing it is atomic (:func:`contract.files.write_json`).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import asdict
from pathlib import Path

from contract.files import write_json
from contract.text import counted
from proofs.mutation.analysis import EQUIVALENT, ERROR, KILLED, SURVIVED, TaskResult
from proofs.mutation.operators import Operator

REPORT_VERSION = 1
STATUSES = (KILLED, SURVIVED, EQUIVALENT, ERROR)


def score(killed: int, survived: int) -> float | None:
    """killed / (killed + survived), None when there is neither."""
    return killed / (killed + survived) if killed + survived else None


def _pct(value: float | None) -> str:
    return "-" if value is None else f"{100 * value:.1f}%"


def operator_counts(results: list[TaskResult], operators: list[Operator]) -> dict[str, dict]:
    """Per operator: the count of each status, the tasks where it does not apply, its score."""
    out = {}
    for op in operators:
        counts = Counter(m.status for r in results for m in r.mutants if m.operator == op.name)
        na = sum(op.name in r.not_applicable for r in results)
        out[op.name] = {**{s: counts.get(s, 0) for s in STATUSES}, "not_applicable_tasks": na,
                        "score": score(counts.get(KILLED, 0), counts.get(SURVIVED, 0))}
    return out


def totals(results: list[TaskResult]) -> dict:
    """The count of each status over every mutant, and the overall score."""
    counts = Counter(m.status for r in results for m in r.mutants)
    return {**{s: counts.get(s, 0) for s in STATUSES}, "mutants": sum(counts.values()),
            "score": score(counts.get(KILLED, 0), counts.get(SURVIVED, 0))}


def task_table(result: TaskResult, operators: list[Operator]) -> list[str]:
    """Lines of one task's table: each operator's killed / survived / equivalent, or n/a."""
    lines = [(f"{result.task}  (oracle reward {result.oracle_reward:g}, {len(result.mutants)} mutants, "
             f"{result.seconds:.0f} s)"),
             f"  {'operator':24} {'killed':>6} {'surv.':>6} {'equiv.':>6} {'error':>6}"]
    for op in operators:
        mine = Counter(m.status for m in result.mutants if m.operator == op.name)
        if not mine:
            reason = result.not_applicable.get(op.name, "not selected")
            lines.append(f"  {op.name:24} {'n/a':>6}  {reason[:90]}")
            continue
        lines.append(f"  {op.name:24} " + " ".join(f"{mine.get(s, 0):>6}" for s in STATUSES))
    return lines


def format_report(results: list[TaskResult], operators: list[Operator], wall_s: float) -> str:
    """The printed report: a table per task, the per-operator table, every survivor with its
    witness, every equivalent with its proof, grader errors, and the mutation score."""
    lines: list[str] = []
    for result in results:
        lines += task_table(result, operators) + [""]
    lines.append(f"{'operator':24} {'killed':>6} {'surv.':>6} {'equiv.':>6} {'error':>6} {'n/a':>5} {'score':>7}")
    for name, row in operator_counts(results, operators).items():
        lines.append(f"{name:24} " + " ".join(f"{row[s]:>6}" for s in STATUSES)
                     + f" {row['not_applicable_tasks']:>5} {_pct(row['score']):>7}")
    everything = [m for r in results for m in r.mutants]
    for title, status, detail in (("Survivors", SURVIVED, lambda m: f"witness: {m.witness}"),
                                  ("Equivalent", EQUIVALENT, lambda m: f"equal on {m.probes} probes"),
                                  ("Grader errors", ERROR, lambda m: m.witness)):
        chosen = [m for m in everything if m.status == status]
        lines += ["", f"{title} ({len(chosen)}):"]
        lines += [f"  {m.task} {m.name} (target {m.target}, s={m.s}, reward={m.reward}): {detail(m)}" for m in chosen]
    total = totals(results)
    lines += ["", (f"mutation score {_pct(total['score'])}: {total[KILLED]} killed, {total[SURVIVED]} survived, "
              f"{total[EQUIVALENT]} equivalent, {total[ERROR]} grader errors; {total['mutants']} mutants on "
              f"{counted(len(results), 'task')} in {wall_s:.0f} s")]
    return "\n".join(lines) + "\n"


def report_json(results: list[TaskResult], operators: list[Operator], wall_s: float) -> dict:
    """The JSON report: version, totals, per-operator counts with each operator's declaration,
    every task's mutants (without their files) and the wall time in seconds."""
    counts = operator_counts(results, operators)
    return {
        "version": REPORT_VERSION,
        "totals": totals(results),
        "operators": [{"name": op.name, "kinds": list(op.kinds), "families": list(op.families),
                       "summary": op.summary, **counts[op.name]} for op in operators],
        "tasks": [asdict(r) for r in results],
        "wall_s": round(wall_s, 1),
    }


def write_report(path: Path, results: list[TaskResult], operators: list[Operator], wall_s: float) -> None:
    """Write :func:`report_json` to ``path`` atomically."""
    write_json(path, report_json(results, operators, wall_s))
