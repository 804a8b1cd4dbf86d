"""Grade every mutant of every task and classify it: killed, survived or equivalent.

killed: the targeted requirement's ``s`` < 1 and the reward < 1 (issue 14 part 2).
Otherwise the equivalence probe (:mod:`proofs.mutation.equivalence`) decides:
equivalent when the real tools give the oracle's results on every probe (the number of
probes is the proof), survived when one differs (the first differing probe is the witness).
Tasks run in the engine's workers (:mod:`engine`: local processes or Ray), one
task per job, so each worker keeps the grader's pristine scores and the oracle's probe
readings of the task it grades.
"""

from __future__ import annotations

import tempfile
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

from contract.errors import BadInput, ToolFailure
from contract.grade import GradeResult
from engine import Engine, LocalEngine
from grader.grade import grade_result, load_catalog
from proofs.mutation.equivalence import probe
from proofs.mutation.operators import Mutant, mutants, oracle_workspace
from proofs.mutation.table import operator_table
from recorder.reference.context import Files, context_for_task

KILLED, SURVIVED, EQUIVALENT, ERROR = "killed", "survived", "equivalent", "error"


@dataclass
class MutantResult:
    """One mutant's classification.

    ``status`` is killed, survived, equivalent or error (the grader failed on it); ``s`` the
    targeted requirement's score and ``reward`` the mutant's reward; ``failed`` the check
    families of the target that failed; ``witness`` the first differing probe (survived),
    ``probes`` how many probes agreed (equivalent) or were compared; ``seconds`` wall time.
    """

    task: str
    name: str
    operator: str
    site: str
    target: str
    families: list[str]
    status: str
    s: float | None = None
    reward: float | None = None
    failed: list[str] = field(default_factory=list)
    witness: str | None = None
    probes: int = 0
    seconds: float = 0.0


@dataclass
class TaskResult:
    """Every mutant of one task, the oracle's reward (1 on a sound task) and, per operator
    with no mutant here, why it does not apply."""

    task: str
    oracle_reward: float
    mutants: list[MutantResult]
    not_applicable: dict[str, str]
    seconds: float


def write_workspace(files: Files, root: Path) -> Path:
    """Write ``files`` (``{relative path: text}``) under ``root``; returns ``root``."""
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return root


def _grade_files(task_dir: Path, files: Files) -> GradeResult:
    with tempfile.TemporaryDirectory(prefix="alertforge-mutant-") as tmp:
        return grade_result(task_dir, write_workspace(files, Path(tmp) / "monitoring"))


def classify(task_dir: Path, ctx, catalog: dict, mutant: Mutant, oracle: Files, cache: dict) -> MutantResult:
    """Grade one mutant, then probe it unless the catalog killed it."""
    started = time.perf_counter()
    out = MutantResult(task_dir.name, mutant.name, mutant.operator, mutant.site, mutant.target,
                       list(mutant.families), ERROR)
    try:
        result = _grade_files(task_dir, mutant.files)
    except ToolFailure as err:
        out.witness = f"grader error: {err}"
        out.seconds = round(time.perf_counter() - started, 3)
        return out
    target = next(r for r in result.requirements if r.id == mutant.target)
    out.s, out.reward = target.s, result.reward
    out.failed = sorted({c.family for c in result.checks if c.req == mutant.target and c.passed is False})
    if out.s < 1 and out.reward < 1:
        out.status = KILLED
    else:
        req = next(r for r in ctx.spec["requirements"] if r["id"] == mutant.target)
        verdict = probe(ctx, catalog, req, oracle, mutant.files, cache)
        out.status = EQUIVALENT if verdict.equal else SURVIVED
        out.witness, out.probes = verdict.witness, verdict.probes
    out.seconds = round(time.perf_counter() - started, 3)
    return out


def analyse_task(task_dir: Path, operator_names: list[str] | None = None) -> TaskResult:
    """Every mutant of ``operator_names`` (default: all operators) on one task, classified.

    Raises BadInput for a task without an oracle solution or a catalog, or an unknown operator.
    """
    started = time.perf_counter()
    task_dir = Path(task_dir).resolve()
    table = operator_table()
    unknown = [n for n in operator_names or [] if n not in table]
    if unknown:
        raise BadInput(unknown[0], f"unknown operator; known: {', '.join(table)}")
    ctx = context_for_task(task_dir)
    catalog = load_catalog(task_dir)
    ops = [table[n] for n in operator_names] if operator_names else list(table.values())
    found, why = mutants(ctx, ops)
    oracle = oracle_workspace(ctx)
    oracle_reward = _grade_files(task_dir, oracle).reward
    cache: dict = {}
    results = [classify(task_dir, ctx, catalog, m, oracle, cache) for m in found]
    return TaskResult(task_dir.name, oracle_reward, results, why, round(time.perf_counter() - started, 3))


def _job(args: tuple[str, list[str] | None]) -> dict:
    task, names = args
    return asdict(analyse_task(Path(task), names))


def run_analysis(task_dirs: list[Path], operator_names: list[str] | None = None, *, jobs: int = 2,
                 progress: bool = True, engine: Engine | None = None) -> list[TaskResult]:
    """:func:`analyse_task` on every task, ``jobs`` worker processes of the local ``engine``
    (the default; 1: in this process) or a Ray engine's workers; results in task order.
    Raises the first worker's error."""
    engine = engine or LocalEngine()
    work = [(str(t), operator_names) for t in task_dirs]
    done: dict[str, dict] = {}
    with engine.bar(len(work), "mutating", "task", disable=not progress) as bar, engine.pool(jobs) as pool:
        for job, data in zip(work, pool.map(_job, work), strict=True):
            done[job[0]] = data
            bar.update()
    return [_task_result(done[str(t)]) for t in task_dirs]


def _task_result(data: dict) -> TaskResult:
    return TaskResult(data["task"], data["oracle_reward"], [MutantResult(**m) for m in data["mutants"]],
                      data["not_applicable"], data["seconds"])
