"""The acceptance gate: reference policies, adversaries and mutants land where they must on every task.

Bounds (seed spec, "Reward spread" and "Adversaries"; issue 3): oracle = 1 and no-op = 0
(preservation 1); partial in [0.1, 0.4]; always-fire, never-fire, rename, catch-all route and
inhibit-all leave their targeted requirement score s <= 0.05; ALERTS injection, input-series
shadowing and a group interval change are tamper (reward 0); receiver nulling, per-pod
alerts, threshold bands, for-only fixes and deleting untouched rules give outcome 0 and reward
<= 0.4; a missing ``for`` fails Timing, a per-pod alert fails Dup, a missing ``continue`` gives
Jaccard 1/2; grading the same workspace twice gives byte-identical JSON apart from timings;
the real Alertmanager, running the oracle's config, delivers every page of the route checks
to exactly the destinations the checks expect (``delivery``, :mod:`recorder.delivery`).

Cases are chosen per task from what applies (:func:`recorder.reference.mutations.applicability`): a
task without a route requirement has no catch-all-route case, one whose primary alert is a
``down`` condition no threshold band. Such cases are rows marked n/a, never counted as holding.
Rows name the requirement a case targets (``A1``, ``P2``, ...).
"""

from __future__ import annotations

import fnmatch
import random
import re
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path

from contract.base import dump
from contract.errors import BadInput
from contract.files import dump_json, read_json
from contract.grade import GradeResult, RequirementScore
from contract.text import counted
from engine import Engine, LocalEngine
from grader.grade import DEFAULT_GRADER, grade_result
from grader.score import case_role
from recorder import delivery
from recorder.environments.workspace import run_tool
from recorder.policies import make_agent
from recorder.reference.context import Context, NotApplicable, context_for_task
from recorder.reference.mutations import applicability, apply, target_id
from recorder.reference.partial import split

TARGETED = ("always-fire", "never-fire", "rename", "catch-all-route", "inhibit-all")
TAMPER = ("alerts-injection", "input-shadowing", "group-interval")
DELIVERY = ("sibling-receiver", "late-page")
"""Adversaries whose every receiver name is right: the pages go elsewhere, or late."""
OUTCOME_ZERO = ("receiver-nulling", "per-pod", "threshold-band", "for-only-fix", "delete-untouched",
                "inhibit-all")
CASES = ("oracle", "nop", "partial", "determinism", "delivery", "mutant:missing-for",
         "mutant:missing-continue",
         *sorted(set(TARGETED) | set(TAMPER) | set(OUTCOME_ZERO) | set(DELIVERY)))
"""Every case, in row order; adversaries by bare name."""

BOUNDS = {"oracle": "reward = 1", "nop": "reward = 0, preservation = 1", "partial": "0.1 <= reward <= 0.4",
          "determinism": "identical JSON", "delivery": "every page reaches what the checks expect",
          "mutant:missing-for": "fails Timing",
          "mutant:missing-continue": "Jaccard 1/2", **{c: "target s <= 0.05" for c in TARGETED},
          **{c: "tamper, reward 0" for c in TAMPER},
          **{c: "target s < 1: a destination or timing check fails" for c in DELIVERY}, **{c: "outcome 0, reward <= 0.4" for c in OUTCOME_ZERO},
          "inhibit-all": "target s <= 0.05; outcome 0, reward <= 0.4"}
"""What each case must show (per-pod also fails Dup); the bound printed on n/a rows."""


@dataclass
class GateRow:
    """One gate check on one task: what was run, what was measured, whether it holds.

    ``ok`` is None for a case that does not apply to the task (shown as n/a).
    """

    task: str
    case: str
    measured: str
    bound: str
    ok: bool | None

    @property
    def status(self) -> str:
        """``ok``, ``FAIL`` or ``n/a``."""
        return "n/a" if self.ok is None else ("ok" if self.ok else "FAIL")


def _label(case: str) -> str:
    return (case if case in ("oracle", "nop", "partial", "determinism", "delivery") or ":" in case
            else f"adversary:{case}")


def why_not(case: str, ctx: Context) -> str | None:
    """None when ``case`` applies to the task, else the reason it does not."""
    if case in ("oracle", "nop", "determinism", "delivery"):
        return None
    if case == "partial":
        try:
            split(ctx)
        except NotApplicable as err:
            return str(err)
        return None
    return applicability(case, ctx)


def final_workspace(task_dir: Path, policy: str, into: Path, seed: int = 0) -> Path:
    """Apply a scripted policy's calls to a fresh copy of the pristine repo (no per-step grading)."""
    workspace = into / "monitoring"
    shutil.copytree(task_dir / "environment" / "monitoring", workspace)
    agent = make_agent(policy, task_dir, seed)
    index = 0
    while (decision := agent.decide(None, index)) is not None:
        if run_tool(workspace, decision.name, decision.arguments).done:
            break
        index += 1
    return workspace


def _req(result: GradeResult, rid: str) -> RequirementScore:
    return next(r for r in result.requirements if r.id == rid)


def _failed_families(result: GradeResult, rid: str) -> list[str]:
    return sorted({c.family for c in result.checks if c.req == rid and c.passed is False})


def _json_without_timings(result: GradeResult) -> bytes:
    """The grade's JSON form without ``timings`` (what the same inputs must reproduce)."""
    data = dump(result)
    data.pop("timings")
    return dump_json(data)


def _determinism(task_dir: Path, tmp: Path) -> list[GateRow]:
    ws = final_workspace(task_dir, "oracle", tmp)
    DEFAULT_GRADER.cache.clear_replays()
    first = grade_result(task_dir, ws)
    DEFAULT_GRADER.cache.clear_replays()
    second = grade_result(task_dir, ws)
    same = _json_without_timings(first) == _json_without_timings(second)
    return [GateRow(task_dir.name, "determinism", "identical" if same else "differs", BOUNDS["determinism"],
                    same)]


def _delivery(task_dir: Path, tmp: Path) -> list[GateRow]:
    """End to end on the oracle: the real Alertmanager sends every page of the task's route
    checks (:mod:`recorder.delivery`), and where each arrives agrees with the grade's
    destination and route checks (all pass, all pages reach what they expect)."""
    ws = final_workspace(task_dir, "oracle", tmp)
    pages = delivery.task_pages(task_dir)
    results = delivery.deliver(ws / "alertmanager" / "alertmanager.yml", pages)
    wrong = [r for r in results if not r.agrees]
    checks_pass = all(c.passed for c in grade_result(task_dir, ws).checks
                      if c.family == "Route" or c.id.startswith("P.timing."))
    measured = (f"{len(results) - len(wrong)} of {len(results)} pages where expected"
                + (f"; {wrong[0].labels} reached {wrong[0].reached}, expected {wrong[0].expected}"
                   if wrong else ""))
    return [GateRow(task_dir.name, "delivery", measured, BOUNDS["delivery"],
                    bool(results) and not wrong and checks_pass)]


def graded_case(task_dir: Path, case: str, ctx: Context, tmp: Path) -> GradeResult:
    """The GradeResult of one gate case's final workspace (built under ``tmp``): a reference
    policy's, an adversary's (bare name), or the oracle with a ``mutant:<kind>`` applied."""
    if case.startswith("mutant:"):
        ws = final_workspace(task_dir, "oracle", tmp)
        kind = case.split(":", 1)[1]
        files = apply(case, ctx.solution, ctx, random.Random(f"gate/{kind}"))
        for rel, text in files.items():
            run_tool(ws, "write_file", {"path": rel, "content": text})
    else:
        policy = case if case in ("oracle", "nop", "partial") else f"adversary:{case}"
        ws = final_workspace(task_dir, policy, tmp)
    return grade_result(task_dir, ws)


def _continue_scores(task_dir: Path, result: GradeResult, rid: str) -> list[float | None]:
    """Jaccard scores of the route requirement's positive checks expecting two receivers."""
    catalog = read_json(task_dir / "tests" / "checks.json")
    pairs = {c["id"] for c in catalog["checks"] if c["req"] == rid
             and c["probe"].get("type") == "route"
             and case_role(c["id"], "route", c.get("role")) == "positive"
             and len(c["probe"].get("expect") or []) == 2}
    return [c.score for c in result.checks if c.id in pairs]


def _case(job: tuple[str, str]) -> list[GateRow]:
    task_path, case = job
    task_dir = Path(task_path)
    ctx = context_for_task(task_dir)
    with tempfile.TemporaryDirectory(prefix="alertforge-gate-") as tmp:
        if case == "determinism":
            return _determinism(task_dir, Path(tmp))
        if case == "delivery":
            return _delivery(task_dir, Path(tmp))
        result = graded_case(task_dir, case, ctx, Path(tmp))
    rid = target_id(case, ctx) if case not in ("oracle", "nop", "partial") else None
    graded = _GradedCase(task_dir, case, result, rid)
    if case in ("oracle", "nop", "partial") or case.startswith("mutant:"):
        return _reference_rows(graded)
    return _adversary_rows(graded)


@dataclass(frozen=True)
class _GradedCase:
    """One graded gate case: its task folder, case name, GradeResult and target requirement
    id (None for oracle, nop and partial)."""

    task_dir: Path
    case: str
    result: GradeResult
    rid: str | None


def _reference_rows(graded: _GradedCase) -> list[GateRow]:
    """The row of a reference policy's case (oracle, nop, partial) or an oracle mutant's."""
    name, case, result, rid = graded.task_dir.name, graded.case, graded.result, graded.rid
    keys = result.keys
    reward = keys["reward"]
    rows = []
    if case == "oracle":
        rows.append(GateRow(name, case, f"reward {reward:.4f}", BOUNDS[case], reward == 1.0))
    elif case == "nop":
        ok = reward == 0.0 and keys["preservation"] == 1.0
        rows.append(GateRow(name, case, f"reward {reward:.4f}, preservation {keys['preservation']}",
                            BOUNDS[case], ok))
    elif case == "partial":
        rows.append(GateRow(name, case, f"reward {reward:.4f}", BOUNDS[case], 0.1 <= reward <= 0.4))
    elif case == "mutant:missing-for":
        failed = _failed_families(result, rid)
        rows.append(GateRow(name, case, f"{rid} fails {failed}", BOUNDS[case], "Timing" in failed))
    elif case == "mutant:missing-continue":
        scores = _continue_scores(graded.task_dir, result, rid)
        if not scores:
            return [GateRow(name, case, f"n/a: {rid} has no positive check expecting two receivers",
                            BOUNDS[case], None)]
        rows.append(GateRow(name, case, f"{rid} positive Jaccard {scores}", BOUNDS[case],
                            all(s == 0.5 for s in scores)))
    return rows


def _adversary_rows(graded: _GradedCase) -> list[GateRow]:
    """The rows of an adversary's case: its target requirement, tamper, outcome, delivery and
    (per-pod) Dup bounds, each where the adversary is in that family."""
    name, case, result, rid = graded.task_dir.name, graded.case, graded.result, graded.rid
    label = _label(case)
    keys = result.keys
    reward = keys["reward"]
    rows = []
    if case in TARGETED:
        s = _req(result, rid).s
        rows.append(GateRow(name, label, f"{rid} s {s:.4f}", f"{rid} s <= 0.05", s <= 0.05))
    if case in TAMPER:
        rows.append(GateRow(name, label, f"tamper {keys['tamper']}, reward {reward:.4f}", BOUNDS[case],
                            keys["tamper"] == 1 and reward == 0.0))
    if case in OUTCOME_ZERO:
        rows.append(GateRow(name, label, f"outcome {keys['outcome']}, reward {reward:.4f}",
                            "outcome 0, reward <= 0.4", keys["outcome"] == 0 and reward <= 0.4))
    if case in DELIVERY:
        rows.append(_delivery_attack_row(graded))
    if case == "per-pod":
        failed = _failed_families(result, rid)
        rows.append(GateRow(name, label, f"{rid} fails {failed}", "fails Dup", "Dup" in failed))
    return rows


def _delivery_attack_row(graded: _GradedCase) -> GateRow:
    """The row of a delivery adversary: its target requirement below 1 with a destination or
    timing route check failing."""
    result, rid = graded.result, graded.rid
    s = _req(result, rid).s
    failed = sorted(c.id.split(".route.", 1)[1] for c in result.checks if c.req == rid
                    and c.passed is False and re.search(r"\.route\.(receiver|timing)", c.id))
    return GateRow(graded.task_dir.name, _label(graded.case), f"{rid} s {s:.4f}, fails {failed}",
                   BOUNDS[graded.case], s < 1 and bool(failed))


def select_cases(patterns: list[str] | None) -> tuple[str, ...]:
    """The cases matching any of ``patterns`` (case names or fnmatch globs, ``adversary:``
    prefix optional), in row order; every case for None. BadInput if a pattern matches none."""
    if not patterns:
        return CASES
    chosen = set()
    for pattern in patterns:
        bare = pattern.removeprefix("adversary:")
        found = {c for c in CASES if fnmatch.fnmatch(c, bare) or fnmatch.fnmatch(_label(c), pattern)}
        if not found:
            raise BadInput(pattern, f"no gate case matches; cases: {', '.join(_label(c) for c in CASES)}")
        chosen |= found
    return tuple(c for c in CASES if c in chosen)


def select_tasks(task_dirs: list[Path], patterns: list[str] | None) -> list[Path]:
    """The task folders whose id matches any of ``patterns`` (ids or fnmatch globs; a bare
    word matches ids containing it). BadInput if a pattern matches none."""
    if not patterns:
        return task_dirs
    chosen = set()
    for pattern in patterns:
        glob = pattern if any(ch in pattern for ch in "*?[") else f"*{pattern}*"
        found = {t for t in task_dirs if fnmatch.fnmatch(t.name, glob)}
        if not found:
            raise BadInput(pattern, "no task id matches")
        chosen |= found
    return [t for t in task_dirs if t in chosen]


def run_gate(task_dirs: list[Path], jobs: int = 2, progress: bool = True,
             cases: tuple[str, ...] = CASES, engine: Engine | None = None) -> list[GateRow]:
    """The applicable ``cases`` on every task (``jobs`` worker processes of the local
    ``engine``, the default, or a Ray engine's workers), n/a rows for the others; rows in
    task, case order. BadInput from a task folder that cannot be read."""
    engine = engine or LocalEngine()
    plan: list[tuple[str, str, str | None]] = []
    for task_dir in task_dirs:
        ctx = context_for_task(task_dir)
        plan += [(str(task_dir), case, why_not(case, ctx)) for case in cases]
    work = [(task, case) for task, case, reason in plan if reason is None]
    done: dict[tuple[str, str], list[GateRow]] = {}
    with engine.bar(len(work), "gate", "case", disable=not progress) as bar, engine.pool(jobs) as pool:
        for job, rows in zip(work, pool.map(_case, work), strict=True):
            done[job] = rows
            bar.update()
    rows: list[GateRow] = []
    for task, case, reason in plan:
        if reason is None:
            rows += done[(task, case)]
        else:
            rows.append(GateRow(Path(task).name, _label(case), f"n/a: {reason}", BOUNDS[case], None))
    return rows


def format_table(rows: list[GateRow]) -> str:
    """The gate's results as a fixed-width table, failures marked FAIL, cases that do not
    apply marked n/a."""
    if not rows:
        return ""
    widths = [max(len(getattr(r, f)) for r in rows) for f in ("task", "case", "measured", "bound")]
    lines = []
    for r in rows:
        cells = [r.task, r.case, r.measured, r.bound]
        lines.append("  ".join(c.ljust(w) for c, w in zip(cells, widths, strict=True)) + "  " + r.status)
    return "\n".join(lines)


def summary(rows: list[GateRow], seconds: float) -> str:
    """One line: rows holding of rows measured, n/a and failing counts, tasks, wall time."""
    held = sum(r.ok is True for r in rows)
    failed = sum(r.ok is False for r in rows)
    na = sum(r.ok is None for r in rows)
    return (f"gate: {held} of {held + failed} hold, {failed} fail, {na} n/a on "
            f"{counted(len({r.task for r in rows}), 'task')} in {seconds:.1f} s")
