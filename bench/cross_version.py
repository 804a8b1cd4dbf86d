"""Benchmark: the gate's grades on two tool sets, and every check whose outcome differs.

The same final workspaces (oracle, no-op, partial, the gate's mutants and adversaries, on
every task; with ``--mutants`` also every mutant of ``alertforge mutate``) are graded once
with each tool set: A is the promtool, amtool and Alertmanager
on the PATH (Debian 12: 2.42 / 0.25), B the binaries in ``--tools-b DIR`` (Debian 13's,
unpacked without installing them: promtool 2.53, amtool 0.28; see README "Tool versions").
Each set runs in its own worker processes with ``ALERTFORGE_PROMTOOL`` and
``ALERTFORGE_AMTOOL`` pointed at it. Prints the grades, the checks compared, every check
whose pass/fail differs, rewards that differ, and the wall time of each set; writes the
comparison as JSON with ``--out``. The goal is no difference.

    python bench/cross_version.py --tools-b /opt/trixie-tools/root/usr/bin [-j 2] [--only af-001]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from contract.files import dump_json, read_json, write_atomic
from contract.paths import task_dirs
from proofs.cross_version import ToolSetGrade, compare, grade_all, grade_mutants


def _run_set(name: str, env: dict[str, str], args: argparse.Namespace, out: Path) -> float:
    """Grade everything in a child process with ``env``; returns its wall time (s)."""
    started = time.perf_counter()
    argv = [sys.executable, __file__, "--worker", str(out), "-j", str(args.jobs)]
    if args.mutants:
        argv.append("--mutants")
    for only in args.only or []:
        argv += ["--only", only]
    subprocess.run(argv, env=env, check=True)
    seconds = time.perf_counter() - started
    print(f"set {name}: {read_json(out)['tools']} graded in {seconds:.1f} s")
    return seconds


def main() -> int:
    """Run both sets (or, with ``--worker OUT``, grade with this environment's tools)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tools-b", help="folder with promtool, amtool, prometheus-alertmanager")
    parser.add_argument("--only", action="append", help="task ids, substrings or globs, comma-separated")
    parser.add_argument("-j", "--jobs", type=int, default=2)
    parser.add_argument("--out", help="write the comparison as JSON here")
    parser.add_argument("--mutants", action="store_true",
                        help="also grade every mutant of the mutation analysis (about 2,000 more)")
    parser.add_argument("--worker", help=argparse.SUPPRESS)
    args = parser.parse_args()
    from proofs.gate import select_tasks

    only = [part for value in args.only or [] for part in value.split(",") if part.strip()] or None
    tasks = select_tasks(task_dirs(None), only)
    if args.worker:
        grades = grade_all(tasks, args.jobs)
        if args.mutants:
            grades.update(grade_mutants(tasks, args.jobs))
        tools = next(iter(grades.values())).tools if grades else {}
        write_atomic(Path(args.worker), dump_json({"tools": tools, "grades": {
            key: grade.to_json() for key, grade in grades.items()}}))
        return 0
    if not args.tools_b:
        parser.error("--tools-b DIR is required")
    b_dir = Path(args.tools_b).resolve()
    env_b = {**os.environ, "PATH": f"{b_dir}{os.pathsep}{os.environ.get('PATH', '')}",
             "ALERTFORGE_PROMTOOL": str(b_dir / "promtool"), "ALERTFORGE_AMTOOL": str(b_dir / "amtool"),
             "ALERTFORGE_ALERTMANAGER": str(b_dir / "prometheus-alertmanager")}
    with tempfile.TemporaryDirectory(prefix="alertforge-xver-") as tmp:
        seconds_a = _run_set("A", dict(os.environ), args, Path(tmp) / "a.json")
        seconds_b = _run_set("B", env_b, args, Path(tmp) / "b.json")
        a, b = read_json(Path(tmp) / "a.json"), read_json(Path(tmp) / "b.json")
    report = {"a": {"tools": a["tools"], "wall_s": round(seconds_a, 1)},
              "b": {"tools": b["tools"], "wall_s": round(seconds_b, 1)},
              **compare(*({key: ToolSetGrade.from_json(value) for key, value in side["grades"].items()}
                          for side in (a, b)))}
    print(f"{report['grades']} grades, {report['checks_compared']} check outcomes compared: "
          f"{len(report['differences'])} differ, {len(report['reward_differences'])} rewards differ "
          f"(A {seconds_a:.1f} s, B {seconds_b:.1f} s, ratio B/A {seconds_b / seconds_a:.2f})")
    for row in report["differences"]:
        print(f"  {row['grade']} {row['check']}: A {row['a']}, B {row['b']}")
    if args.out:
        write_atomic(Path(args.out), dump_json(report))
    return 0


if __name__ == "__main__":
    sys.exit(main())
