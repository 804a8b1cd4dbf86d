"""The acceptance gate on one bundled task (real promtool/amtool), and its command line.

The whole corpus is gated by ``alertforge gate`` (minutes); here the cases whose mutations
are built from the spec run on one task, to show they still hold and that rows name the
requirement they target (``alertforge gate --only af-001`` runs every case).
"""

from __future__ import annotations

import subprocess
import sys

from contract.paths import TASKS_DIR, task_dirs
from proofs.gate import run_gate, select_cases, select_tasks
from recorder.reference.context import context_for_task

TASK = task_dirs(TASKS_DIR)[0]
CASES = ("oracle", "nop", "partial", "mutant:missing-for", "mutant:missing-continue", "always-fire",
         "catch-all-route", "per-pod", "delete-untouched", "input-shadowing")


def test_spec_built_cases_hold_on_the_first_task():
    rows = run_gate([TASK], jobs=2, progress=False, cases=CASES)
    failed = [r for r in rows if r.ok is False]
    assert not failed, "\n".join(f"{r.case}: {r.measured} (bound {r.bound})" for r in failed)
    by_case = {r.case: r for r in rows}
    assert by_case["oracle"].ok and by_case["nop"].ok and by_case["partial"].ok
    # the first task's route needs continue: the mutant applies and is caught (never n/a)
    assert by_case["mutant:missing-continue"].ok, by_case["mutant:missing-continue"].measured
    primary = context_for_task(TASK).primary["id"]
    assert by_case["adversary:always-fire"].measured.startswith(f"{primary} s ")
    assert len({r.case for r in rows}) == len(CASES)  # a case that does not apply is an n/a row


def test_cases_and_tasks_can_be_selected_by_glob():
    assert select_cases(["oracle", "adversary:*route*"]) == ("oracle", "catch-all-route")
    assert select_cases(["mutant:*"]) == ("mutant:missing-for", "mutant:missing-continue")
    assert select_tasks(task_dirs(TASKS_DIR), [TASK.name[:6]]) == [TASK]


def _cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "alertforge.cli", "gate", *args], check=False,
                          capture_output=True, text=True, timeout=300)


def test_gate_cli_runs_a_subset_and_prints_counts_and_time():
    out = _cli("--only", TASK.name, "--cases", "oracle,nop", "-j", "1")
    assert out.returncode == 0, out.stderr
    assert out.stdout.count("  ok") == 2
    assert "gate: 2 of 2 hold, 0 fail, 0 n/a on 1 task in " in out.stdout


def test_gate_cli_refuses_an_unknown_case_or_task():
    for args, word in ((["--cases", "wizardry"], "wizardry"), (["--only", "no-such-task"], "no-such-task")):
        out = _cli(*args)
        assert out.returncode == 2 and word in out.stderr and "Traceback" not in out.stderr


def test_delivery_adversaries_keep_every_name_and_fail_where_pages_go_or_when():
    """A receiver copied from a sibling team and a root ``group_wait`` of hours: every receiver
    name is right, and a destination or timing check of the route requirement fails."""
    reorg = next(t for t in task_dirs(TASKS_DIR) if "team-reorg" in t.name)
    rows = run_gate([reorg], jobs=2, progress=False, cases=("sibling-receiver", "late-page"))
    by_case = {r.case: r for r in rows}
    assert all(r.ok for r in rows), [(r.case, r.measured) for r in rows]
    assert "fails ['receiver']" in by_case["adversary:sibling-receiver"].measured
    assert "timing" in by_case["adversary:late-page"].measured
    # a task whose route requirement creates no receiver: the copy is n/a, the late page applies
    first = run_gate([TASK], jobs=1, progress=False, cases=("sibling-receiver",))
    assert first[0].ok is None and "creates no receiver" in first[0].measured
