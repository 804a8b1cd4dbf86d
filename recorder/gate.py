"""The acceptance gate: reference policies, adversaries and mutants land where they must on every task.

Bounds (seed spec, "Reward spread" and "Adversaries"; issue 3): oracle = 1 and no-op = 0
(preservation 1); partial in [0.1, 0.4]; always-fire, never-fire, rename, catch-all route and
inhibit-all leave their targeted requirement score s <= 0.05; ALERTS injection, input-series
shadowing and a group interval change are tamper (reward 0); receiver nulling, per-pod
alerts, threshold bands, for-only fixes and deleting untouched rules give outcome 0 and reward
<= 0.4; a missing ``for`` fails Timing, a per-pod alert fails Dup, a missing ``continue`` gives
Jaccard 1/2; grading the same workspace twice gives byte-identical JSON apart from timings.
"""

from __future__ import annotations

import random
import shutil
import tempfile
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from tqdm import tqdm

from alertforge.files import dump_json
from grader import grade as grade_module
from grader.grade import grade
from recorder.policies import make_agent
from recorder.tools import run_tool

TARGETED = ("always-fire", "never-fire", "rename", "catch-all-route", "inhibit-all")
TAMPER = ("alerts-injection", "input-shadowing", "group-interval")
OUTCOME_ZERO = ("receiver-nulling", "per-pod", "threshold-band", "for-only-fix", "delete-untouched",
                "inhibit-all")


@dataclass
class GateRow:
    """One gate check on one task: what was run, what was measured, whether it holds."""

    task: str
    case: str
    measured: str
    bound: str
    ok: bool


def final_workspace(task_dir: Path, policy: str, into: Path, seed: int = 0) -> Path:
    """Apply a scripted policy's calls to a fresh copy of the pristine repo (no per-step grading)."""
    workspace = into / "monitoring"
    shutil.copytree(task_dir / "environment" / "monitoring", workspace)
    agent = make_agent(policy, task_dir, seed)
    while (decision := agent.decide(None)) is not None:
        if run_tool(workspace, decision.name, decision.arguments).done:
            break
    return workspace


def _req(result: dict, rid: str) -> dict:
    return next(r for r in result["requirements"] if r["id"] == rid)


def _case(job: tuple[str, str]) -> list[GateRow]:
    task_path, case = job
    task_dir = Path(task_path)
    name = task_dir.name
    with tempfile.TemporaryDirectory(prefix="alertforge-gate-") as tmp:
        if case == "determinism":
            ws = final_workspace(task_dir, "oracle", Path(tmp))
            grade_module._PROMTOOL_CACHE.clear()
            first = grade(task_dir, ws)
            grade_module._PROMTOOL_CACHE.clear()
            second = grade(task_dir, ws)
            first.pop("timings")
            second.pop("timings")
            same = dump_json(first) == dump_json(second)
            return [GateRow(name, case, "identical" if same else "differs", "identical JSON", same)]
        policy = case if case in ("oracle", "nop", "partial") else None
        if case.startswith("mutant:"):
            policy = "oracle"
        if policy is None:
            policy = f"adversary:{case}"
        ws = final_workspace(task_dir, policy, Path(tmp))
        if case.startswith("mutant:"):
            from recorder.mutations import MUTANTS
            from recorder.policies import _mutation_context, _solution_files

            kind = case.split(":", 1)[1]
            files = MUTANTS[kind](_solution_files(task_dir), _mutation_context(task_dir),
                                  random.Random(f"gate/{kind}"))
            for rel, text in files.items():
                run_tool(ws, "write_file", {"path": rel, "content": text})
        result = grade(task_dir, ws)
    keys = result["keys"]
    reward = keys["reward"]
    rows = []
    if case == "oracle":
        rows.append(GateRow(name, case, f"reward {reward:.4f}", "reward = 1", reward == 1.0))
    elif case == "nop":
        ok = reward == 0.0 and keys["preservation"] == 1.0
        rows.append(GateRow(name, case, f"reward {reward:.4f}, preservation {keys['preservation']}",
                            "reward = 0, preservation = 1", ok))
    elif case == "partial":
        rows.append(GateRow(name, case, f"reward {reward:.4f}", "0.1 <= reward <= 0.4",
                            0.1 <= reward <= 0.4))
    elif case == "mutant:missing-for":
        failed = {c["family"] for c in result["checks"] if c["req"] == "A1" and c["passed"] is False}
        rows.append(GateRow(name, case, f"A1 fails {sorted(failed)}", "fails Timing",
                            "Timing" in failed))
    elif case == "mutant:missing-continue":
        scores = [c.get("score") for c in result["checks"] if c["id"].startswith("R1.route.positive")]
        rows.append(GateRow(name, case, f"positive Jaccard {scores}", "Jaccard 1/2",
                            bool(scores) and all(s == 0.5 for s in scores)))
    else:
        from recorder.mutations import ADVERSARIES

        _, target = ADVERSARIES[case]
        if case in TARGETED:
            s = _req(result, target)["s"]
            rows.append(GateRow(name, f"adversary:{case}", f"{target} s {s:.4f}", f"{target} s <= 0.05",
                                s <= 0.05))
        if case in TAMPER:
            rows.append(GateRow(name, f"adversary:{case}", f"tamper {keys['tamper']}, reward {reward:.4f}",
                                "tamper, reward 0", keys["tamper"] == 1 and reward == 0.0))
        if case in OUTCOME_ZERO:
            rows.append(GateRow(name, f"adversary:{case}", f"outcome {keys['outcome']}, reward {reward:.4f}",
                                "outcome 0, reward <= 0.4", keys["outcome"] == 0 and reward <= 0.4))
        if case == "per-pod":
            failed = {c["family"] for c in result["checks"] if c["req"] == "A1" and c["passed"] is False}
            rows.append(GateRow(name, "adversary:per-pod", f"A1 fails {sorted(failed)}", "fails Dup",
                                "Dup" in failed))
    return rows


CASES = ("oracle", "nop", "partial", "determinism", "mutant:missing-for", "mutant:missing-continue",
         *sorted(set(TARGETED) | set(TAMPER) | set(OUTCOME_ZERO)))


def run_gate(task_dirs: list[Path], jobs: int = 2, progress: bool = True) -> list[GateRow]:
    """Every gate case on every task (``jobs`` worker processes); rows in task, case order."""
    work = [(str(t), case) for t in task_dirs for case in CASES]
    rows: list[GateRow] = []
    with tqdm(total=len(work), desc="gate", unit="case", disable=not progress) as bar:
        if jobs <= 1:
            for job in work:
                rows += _case(job)
                bar.update()
        else:
            with ProcessPoolExecutor(max_workers=jobs) as pool:
                for result in pool.map(_case, work):
                    rows += result
                    bar.update()
    return rows


def format_table(rows: list[GateRow]) -> str:
    """The gate's results as a fixed-width table, failures marked FAIL."""
    if not rows:
        return ""
    widths = [max(len(getattr(r, f)) for r in rows) for f in ("task", "case", "measured", "bound")]
    lines = []
    for r in rows:
        cells = [r.task, r.case, r.measured, r.bound]
        lines.append("  ".join(c.ljust(w) for c, w in zip(cells, widths)) + ("  ok" if r.ok else "  FAIL"))
    return "\n".join(lines)
