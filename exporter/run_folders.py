"""Find run folders under the paths given and read each one's run.json and trajectory.json."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Any

import atif
from pydantic import ValidationError

from contract.base import parse
from contract.errors import BadInput
from contract.ids import check_id
from contract.run import RunSummary
from contract.untrusted import Tree

RUN_FILES = ("run.json", "trajectory.json")
RUN_KINDS = ("alerting", "episode")


@dataclass(frozen=True)
class RunFolder:
    """One run as read from disk: its folder, run.json and trajectory.json as JSON values
    (``run``, ``trajectory``: what masking rewrites, string by string) and run.json as its model
    (:attr:`summary`, what the exporter reads of it)."""

    path: Path
    run: dict[str, Any]
    trajectory: dict[str, Any]

    @cached_property
    def summary(self) -> RunSummary:
        """run.json as contract.run.RunSummary: the one :func:`read_run_folder` validated, or, for
        a copy (a masked one), parsed from its own ``run`` at first use.

        Raises:
            BadInput: naming run.json, when ``run`` does not validate (not for a run read here).
        """
        return parse(RunSummary, self.run, self.path / "run.json", "run summary")

    @property
    def run_id(self) -> str:
        """run.json ``run_id``."""
        return self.summary.run_id


RUN_JSON_CAP = 16 * 1024 * 1024
TRAJECTORY_CAP = 256 * 1024 * 1024
"""Largest run.json and trajectory.json read (a 1,000-step run's trajectory is a few MB)."""


def _looks_like_run(folder: Path) -> bool:
    tree = Tree(folder)
    return any(tree.kind(name) != "missing" for name in (*RUN_FILES, "journal.jsonl"))


def unfinished(folder: Path) -> str | None:
    """Why ``folder`` is a leftover rather than a run, or None: an unfinished recording
    (``journal.jsonl`` and no run.json: the command that made it resumes it) or an empty
    folder (an import or record that stopped before writing anything)."""
    tree = Tree(folder)
    entries = tree.entries()
    if not entries:
        return "an empty folder (an import or record stopped before writing a run)"
    if tree.kind("journal.jsonl") != "missing" and tree.kind("run.json") == "missing":
        return "an unfinished recording (journal.jsonl, no run.json): run the same command again to resume it"
    return None


def find_run_folders(paths: list[Path], skipped: list[dict] | None = None) -> list[Path]:
    """The run folders named by ``paths``, in the order given, each folder's runs sorted by name.

    A path is either a run folder (it holds run.json, trajectory.json or journal.jsonl) or a
    folder of run folders (subfolders holding none of those files are skipped). With
    ``skipped`` (a list), leftovers (:func:`unfinished`) are left out and listed there as
    ``{path, reason}`` instead of failing the whole set.

    Raises:
        BadInput: a path does not exist, is not a folder, or holds no run folder at all.
    """
    found: list[Path] = []
    for raw in paths:
        path = Path(raw)
        if not path.exists():
            raise BadInput(path, "runs path not found")
        if not path.is_dir():
            raise BadInput(path, "expected a run folder or a folder of run folders")
        reason = unfinished(path) if skipped is not None else None
        if reason is not None:
            skipped.append({"path": str(path), "reason": reason})
            continue
        if _looks_like_run(path):
            found.append(path)
            continue
        runs = []
        for name, kind in Tree(path).entries():
            if kind == "symlink" and _looks_like_run(path / name):
                raise BadInput(path / name, "is a symbolic link to a run folder; runs are read "
                               "without following links (copy the run folder here instead)")
            if kind == "dir" and _looks_like_run(path / name):
                reason = unfinished(path / name) if skipped is not None else None
                if reason is not None:
                    skipped.append({"path": str(path / name), "reason": reason})
                    continue
                runs.append(path / name)
        if not runs and not (skipped and any(s["path"].startswith(f"{path}/") for s in skipped)):
            raise BadInput(path, "no run folders here (none holds run.json and trajectory.json)")
        found.extend(runs)
    if not found and skipped:
        raise BadInput(Path(skipped[0]["path"]), f"no run to export: {skipped[0]['reason']}")
    return found


def _require(condition: bool, path: Path, problem: str) -> None:
    if not condition:
        raise BadInput(path, problem)


def _check_run_json(path: Path, run: Any) -> RunSummary:
    """run.json as a :class:`contract.run.RunSummary` whose run and task ids can be file names
    (contract.ids). Raises BadInput naming ``path`` otherwise."""
    _require(isinstance(run, dict), path, "expected a JSON object")
    summary = parse(RunSummary, run, path, "run summary")
    check_id(summary.run_id, "run_id", path)
    check_id(summary.task.id, "task.id", path)
    _require(summary.steps >= 0, path, "steps must not be negative")
    return summary


def _check_trajectory(path: Path, trajectory: Any) -> None:
    _require(isinstance(trajectory, dict), path, "expected a JSON object")
    try:
        atif.Trajectory.model_validate(trajectory)
    except ValidationError as err:
        first = err.errors()[0]
        where = ".".join(str(part) for part in first.get("loc", ())) or "(root)"
        raise BadInput(path, f"not a valid ATIF trajectory: {where}: {first.get('msg')}") from None
    _require(len(trajectory["steps"]) > 0, path, "trajectory has no steps")


def read_run_folder(folder: Path) -> RunFolder:
    """Read and validate one run folder.

    run.json must be an object with ``run_id`` and ``task.id`` usable as file names and ``kind``
    "alerting" or "episode"; trajectory.json must validate as ATIF (``atif.Trajectory``) and
    have at least one step.

    Raises:
        BadInput: naming run.json or trajectory.json when it is missing, not JSON, or malformed.
    """
    folder = Path(folder)
    tree = Tree(folder)
    run_path = folder / "run.json"
    trajectory_path = folder / "trajectory.json"
    run = tree.read_json("run.json", cap=RUN_JSON_CAP)
    summary = _check_run_json(run_path, run)
    trajectory = tree.read_json("trajectory.json", cap=TRAJECTORY_CAP)
    _check_trajectory(trajectory_path, trajectory)
    read = RunFolder(path=folder, run=run, trajectory=trajectory)
    read.__dict__["summary"] = summary  # run.json parsed once: RunFolder.summary's cached value
    return read


def read_runs(paths: list[Path], skipped: list[dict] | None = None) -> list[RunFolder]:
    """Every run under ``paths`` (see :func:`find_run_folders`, ``skipped`` as there), sorted
    by run_id.

    Raises:
        BadInput: any run folder is unreadable (see :func:`read_run_folder`), or two run
            folders carry the same run_id (names the second run.json).
    """
    runs: dict[str, RunFolder] = {}
    for folder in find_run_folders(paths, skipped):
        run = read_run_folder(folder)
        if run.run_id in runs:
            raise BadInput(
                folder / "run.json",
                f"run_id {run.run_id!r} already read from {runs[run.run_id].path}",
            )
        runs[run.run_id] = run
    return [runs[key] for key in sorted(runs)]
