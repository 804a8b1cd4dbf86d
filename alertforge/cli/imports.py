"""Commands that bring in runs recorded elsewhere or earlier: ``import-harbor``,
``import-episodes`` and ``regrade``."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from alertforge.cli.options import (
    add_engine_option,
    add_tasks_option,
    command_name,
    engine,
    print_engine_summary,
)
from contract.text import counted


def add_import_episodes(sub) -> None:
    """``import-episodes FILE...``: ARIA transcripts into runs."""
    episodes = sub.add_parser("import-episodes",
                              help="recorded action-episode transcripts (ARIA) into runs")
    episodes.add_argument("files", nargs="+", help="transcript JSON files, or folders of them")
    episodes.add_argument("--out", default="runs", help="folder the run folders go into (default: runs)")
    episodes.set_defaults(func=import_episodes_command)


def import_episodes_command(args: argparse.Namespace) -> int:
    """Import the transcripts and print how many runs were written."""
    from recorder.importers.aria_transcripts import import_episodes

    dirs = import_episodes(args.files, Path(args.out))
    print(f"{counted(len(dirs), 'episode run')} in {args.out}")
    print(f"  to see them: {command_name()} view {args.out}")
    return 0


def add_import_harbor(sub) -> None:
    """``import-harbor JOB_DIR...``: Harbor jobs (ATIF trajectories) into re-graded runs."""
    harbor = sub.add_parser("import-harbor", help="Harbor job folders (ATIF trajectories) into "
                            "runs, re-graded step by step")
    harbor.add_argument("jobs", nargs="+", metavar="JOB_DIR",
                        help="job folders, trial folders or ATIF trajectory files")
    harbor.add_argument("--out", default="runs", help="folder the run folders go into (default: runs)")
    add_tasks_option(harbor, help="tasks folder to match trials against (default: bundled tasks/)")
    add_engine_option(harbor)
    harbor.set_defaults(func=import_harbor_command)


def import_harbor_command(args: argparse.Namespace) -> int:
    """Import the trials; print a line per run and, on stderr, what was lossy or skipped."""
    from recorder.importers.harbor.importer import SUMMARY_FILE, import_harbor

    out = Path(args.out)
    chosen = engine(args)
    summary = import_harbor([Path(p) for p in args.jobs], out,
                            Path(args.tasks) if args.tasks else None, engine=chosen)
    for row in summary["imported"]:
        print(run_line(row))
        if row.get("task_note"):
            _warn(row["path"], row["task_note"])
        if row.get("result_problem"):
            _warn(row["path"], f"{row['result_problem']}: imported without the trial's result (see run.json notes)")
        if row.get("exception"):
            _warn(row["path"], f"the trial recorded {row['exception']} (see run.json harbor.exception)")
        if row.get("failed_artifacts"):
            _warn(row["path"], f"artifacts Harbor failed to collect: {', '.join(row['failed_artifacts'])}")
        if row["replay"] == "terminal-only":
            _warn(row["path"], f"imported terminal-only (rewards only): {_terminal_reason(out, row)}")
        if row["validation_errors"]:
            _warn(row["path"], f"trajectory fails ATIF validation ({row['validation_errors']} "
                  "error(s), imported anyway; see run.json validation_errors)")
    for item in summary["skipped"]:
        print(f"alertforge: import-harbor: skipped {item['path']}: {item['reason']}", file=sys.stderr)
    print(f"{counted(summary['trials_in'], 'trial')} in: {counted(len(summary['imported']), 'run')} in {args.out}, "
          f"{len(summary['skipped'])} skipped "
          f"(listed in {out / SUMMARY_FILE})")
    print(f"  to see them: {command_name()} view {args.out}")
    print_engine_summary(chosen)
    return 0


REPLAY_WORDS = {
    "exact": "replayed step by step",
    "approximate": "replayed step by step",
    "terminal-only": "not replayed (no steps to replay): rewards only",
}
"""What each ``replay`` label of recorder.importers.harbor.replay means, for the run's line."""


def _reward(value: object) -> str:
    return f"{value:.4f}" if isinstance(value, (int, float)) and not isinstance(value, bool) else "none"


def run_line(row: dict) -> str:
    """The line import-harbor prints for one imported run (a row of harbor-import.json's
    ``imported``): how it was replayed, how many steps' edits had to be guessed, the verifier's
    reward and ours, the trial's steps when it has several."""
    how = REPLAY_WORDS.get(row.get("replay"), str(row.get("replay")))
    if row.get("lossy_steps"):
        how += f", {row['lossy_steps']} step(s) approximate (their edits could not all be reconstructed)"
    regrade = row.get("regrade_reward")
    ours = f"re-graded here {_reward(regrade)}" if regrade is not None else "not re-graded here"
    steps = f"; trial steps {', '.join(row['multi_step'])}" if row.get("multi_step") else ""
    key, named = row.get("harbor_reward_key"), len(row.get("rewards") or {})
    which = f" ({key}, the first of {named} named rewards)" if key not in (None, "reward") and named > 1 else ""
    return (f"{row['run_id']}: {how}; Harbor's verifier reward {_reward(row.get('harbor_reward'))}{which}, "
            f"{ours}{steps}")


def _terminal_reason(out: Path, row: dict) -> str:
    from contract.files import read_json

    notes = read_json(out / row["run_id"] / "run.json").get("notes") or []
    return "; ".join(str(n) for n in notes) or "no trajectory to replay"


def _warn(path: str, problem: str) -> None:
    print(f"alertforge: import-harbor: {path}: {problem}", file=sys.stderr)


def add_regrade(sub) -> None:
    """``regrade RUN...``: recorded alerting runs graded again against the current tasks."""
    regrade = sub.add_parser("regrade", help="grade recorded alerting runs again, from their recorded "
                             "tool calls, against the tasks as they are now (a newer check catalog)")
    regrade.add_argument("runs", nargs="+", metavar="RUN_DIR", help="run folders (with run.json)")
    regrade.add_argument("--out", default="runs", help="where the re-graded runs go, under their own "
                         "ids (default runs/; the inputs are never written unless --out is their folder)")
    regrade.add_argument("--note", default="", help="kept in run.json regrade.note, e.g. where the "
                         "actions were taken")
    add_tasks_option(regrade, help="tasks folder to find each run's task in (default: bundled tasks/)")
    regrade.set_defaults(func=regrade_command)


def regrade_command(args: argparse.Namespace) -> int:
    """Re-grade each run; print its old and new reward and check count."""
    from contract.errors import BadInput
    from contract.files import read_json
    from contract.paths import resolve_task
    from recorder.regrade import regrade_run

    for run in args.runs:
        before = read_json(Path(run) / "run.json")
        task_id = (before.get("task") or {}).get("id") if isinstance(before, dict) else None
        if isinstance(before, dict) and before.get("kind") != "alerting":
            raise BadInput(Path(run) / "run.json", f"a {before.get('kind')} run has no checks to re-grade")
        if not isinstance(task_id, str):
            raise BadInput(Path(run) / "run.json", "names no task id (task.id)")
        folder = regrade_run(Path(run), resolve_task(str(task_id), args.tasks), Path(args.out), note=args.note)
        after = read_json(folder / "run.json")
        old = (before.get("final") or {}).get("reward")
        print(f"{after['run_id']}: reward {_reward(old)} as recorded, {_reward(after['final']['reward'])} "
              f"re-graded against catalog {after['regrade']['catalog_version']} "
              f"({len(after['checks'])} checks) in {folder}")
    return 0
