"""Harbor trials found and read: job, trial and trajectory paths into :class:`Trial` records.

A trial folder as Harbor writes it::

    <job>/<trial>/result.json              Harbor TrialResult (task_name, agent_info, verifier_result, ...)
    <job>/<trial>/agent/trajectory.json    ATIF v1.0-1.8 (continued_trajectory_ref followed)
    <job>/<trial>/verifier/reward.json     {"reward": r, ...}   or   verifier/reward.txt: "r"
    <job>/<trial>/steps/<step>/agent/trajectory.json   multi-step trials (Harbor 0.26 [[steps]])

Every read goes through :class:`~recorder.importers.harbor.job_files.JobFiles`.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from pathlib import Path

import orjson

from contract.errors import BadInput
from contract.text import shown_name, utf8_name
from contract.untrusted import REFUSED, Tree, UnsafeInput, checked_depth
from recorder.importers.harbor.job_files import JobFiles, ReadBudget
from recorder.importers.harbor.normalize import validation_errors
from recorder.importers.harbor.trial_parts import step_results, trial_parts


@dataclass
class Trial:
    """One Harbor trial as read from disk; every ``*_problem`` says why a part is unusable."""

    path: Path
    job: str
    name: str
    result: dict | None = None
    result_problem: str | None = None
    trajectory: dict | None = None
    trajectory_path: Path | None = None
    trajectory_problem: str | None = None
    rewards: dict | None = None
    reward_source: str | None = None
    fingerprint: str = ""
    notes: list[str] = field(default_factory=list)
    validation_errors: list[str] | None = None
    """A multi-step trial's ATIF complaints, per step trajectory (else computed on import)."""
    parts: dict = field(default_factory=dict)
    """Everything else the trial holds (:func:`~recorder.importers.harbor.trial_parts.trial_parts`)."""
    files: JobFiles | None = None
    trajectory_base: str = "agent"
    """The trajectory's folder relative to the trial folder (media paths are relative to it)."""

    @property
    def readable(self) -> bool:
        """Whether any part of the trial could be read (else it is listed as skipped)."""
        return self.result is not None or self.trajectory is not None or self.rewards is not None


def _is_trial_folder(path: Path) -> bool:
    tree = Tree(path)
    return any(tree.kind(name) not in ("missing", "symlink") for name in ("result.json", "agent", "verifier"))


def _subfolders(path: Path) -> tuple[list[Path], list[dict]]:
    """Sub-folders of ``path`` (no links) and the links there, listed as skipped."""
    folders, skipped = [], []
    for name, kind in Tree(path).entries():
        if not utf8_name(name):  # it could be written into no run.json or summary
            skipped.append({"path": shown_name(str(path / name)),
                            "reason": "its name is not UTF-8; rename it to import it"})
        elif kind == "dir":
            folders.append(path / name)
        elif kind == "symlink":
            skipped.append({"path": str(path / name), "reason": "is a symbolic link; a job is read "
                            "without following links"})
    return folders, skipped


def find_trials(paths: list[Path]) -> tuple[list[tuple[Path, str, Path]], list[dict]]:
    """``([(trial folder or trajectory file, job name, root)], [skipped {path, reason}])``;
    ``root`` is the folder the user named, which every read of that trial stays inside.

    A path is a job folder (its sub-folders are trials), a trial folder (it holds
    result.json, agent/ or verifier/) or an ATIF trajectory file.

    Raises:
        BadInput: a path does not exist, or a folder holds no trial at all.
    """
    found, skipped = [], []
    for raw in paths:
        more, more_skipped = _trials_at(Path(raw))
        found += more
        skipped += more_skipped
    return found, skipped


def _trials_at(path: Path) -> tuple[list[tuple[Path, str, Path]], list[dict]]:
    """:func:`find_trials` of one path the user named. BadInput as there."""
    if not utf8_name(str(path)):
        raise BadInput(shown_name(str(path)), "the path is not UTF-8: rename it to import it")
    if not path.exists():
        raise BadInput(path, "not found (expected a Harbor job folder, trial folder or "
                       "trajectory file)")
    if path.is_file():
        return [(path, "atif", path.parent)], []
    subfolders, links = _subfolders(path)
    if _is_trial_folder(path) and not any(_is_trial_folder(p) for p in subfolders):
        return [(path, path.parent.name, path)], []
    return _trials_under(path, subfolders, links)


def _trials_under(path: Path, subfolders: list[Path],
                  links: list[dict]) -> tuple[list[tuple[Path, str, Path]], list[dict]]:
    """The trials in a job folder (or, recursively, in a folder of job folders) with its
    links and other sub-folders skipped. BadInput when it holds no trial at all."""
    skipped = list(links)
    trials = [p for p in subfolders if _is_trial_folder(p)
              and not any(_is_trial_folder(q) for q in _subfolders(p)[0])]
    jobs = [p for p in subfolders if p not in trials
            and any(_is_trial_folder(q) for q in _subfolders(p)[0])]
    if jobs and not trials:  # a folder of job folders: import every job in it
        more, more_skipped = find_trials(jobs)
        return [(trial, job, path) for trial, job, _ in more], skipped + more_skipped
    if not trials:
        raise BadInput(path, "no trial folders here (none holds result.json, agent/ or "
                       "verifier/)")
    found = [(p, path.name, path) for p in trials]
    skipped += [{"path": str(p), "reason": "not a trial folder (no result.json, agent/ or "
                 "verifier/)"} for p in subfolders if p not in trials]
    return found, skipped


def _read_rewards(files: JobFiles, result: dict | None) -> tuple[dict | None, str | None, str | None]:
    """(rewards, where they came from, problem) from result.json or verifier/reward.*."""
    verifier = (result or {}).get("verifier_result") if isinstance(result, dict) else None
    if isinstance(verifier, dict) and isinstance(verifier.get("rewards"), dict):
        return dict(verifier["rewards"]), "result.json verifier_result.rewards", None
    problem = None
    if files.kind("verifier/reward.json") != "missing":
        value, problem = files.load_json("verifier/reward.json")
        if isinstance(value, dict) and all(isinstance(v, (int, float)) for v in value.values()):
            return value, "verifier/reward.json", None
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            return {"reward": value}, "verifier/reward.json", None
        problem = problem or "verifier/reward.json is not an object of numbers"
    if files.kind("verifier/reward.txt") != "missing":
        try:
            text = files.read_text("verifier/reward.txt").strip()
        except UnsafeInput as err:
            return None, None, f"verifier/reward.txt: {err.problem}"
        try:
            return {"reward": float(text)}, "verifier/reward.txt", None
        except ValueError:
            problem = f"verifier/reward.txt is not a number: {text[:40]!r}"
    return None, None, problem


def _read_trajectory(files: JobFiles, name: str) -> tuple[dict | None, str | None]:
    """An ATIF document, with continuation files (``continued_trajectory_ref``) appended.

    A reference is joined to the referring file's folder and read only when it stays inside
    the folder the user named (no ``..`` out of it, no absolute path, no link); one that does
    not is noted in ``_import_notes`` and not followed. ``_validation_errors`` holds the
    ``atif`` package's complaints about each file as written (a continuation's, prefixed with
    its name), not about the joined steps. Both keys are the importer's: callers pop them.
    """
    doc, problem = files.load_json(name)
    if problem:
        return None, problem
    if not isinstance(doc, dict) or not isinstance(doc.get("steps"), list):
        return None, f"{name} is not an ATIF trajectory (no steps list)"
    seen = {files.rel(name)}
    current, current_name, notes = doc, name, []
    problems = validation_errors(doc)  # each file as written: the joined steps restart their ids
    while isinstance(current.get("continued_trajectory_ref"), str):
        ref = current["continued_trajectory_ref"]
        joined = join_inside(files.rel(current_name), ref)
        if joined is None:
            notes.append(f"continued_trajectory_ref {ref!r} leaves the job folder: not followed")
            break
        if joined in seen or files.tree.kind(joined) != "file":
            if joined not in seen:
                notes.append(f"continued_trajectory_ref {ref!r}: {files.tree.kind(joined)}, not followed")
            break
        seen.add(joined)
        try:
            current = checked_depth(orjson.loads(files.read_at(joined, ref)), ref)
        except UnsafeInput as err:
            notes.append(f"continued_trajectory_ref {ref!r}: {err.problem}")
            break
        except orjson.JSONDecodeError:
            notes.append(f"continued_trajectory_ref {ref!r} is not valid JSON: not followed")
            break
        if not isinstance(current, dict) or not isinstance(current.get("steps"), list):
            break
        current_name = joined[len(files.prefix) + 1:] if files.prefix else joined
        problems += [f"{ref}: {e}" for e in validation_errors(current)]
        doc = dict(doc, steps=doc["steps"] + [_continued(s, ref) for s in current["steps"]])
    doc = dict(doc, _validation_errors=problems)
    if notes:
        doc = dict(doc, _import_notes=notes)
    return doc, None


def _continued(step: object, ref: str) -> object:
    """A step of a continuation file; a copied-context one (already in the file it continues)
    is marked ``extra.copied_from_continuation`` so that its calls are not replayed twice."""
    if not isinstance(step, dict) or not step.get("is_copied_context"):
        return step
    extra = step.get("extra") if isinstance(step.get("extra"), dict) else {}
    return dict(step, extra=dict(extra, copied_from_continuation=ref))


def join_inside(referrer: str, ref: str) -> str | None:
    """``ref`` joined to the folder of ``referrer`` (both relative to the root), or None when
    the result would leave the root or ``ref`` is absolute."""
    if ref.startswith("/") or "\0" in ref:
        return None
    parts = referrer.split("/")[:-1]
    for part in ref.split("/"):
        if part in ("", "."):
            continue
        if part == "..":
            if not parts:
                return None
            parts.pop()
        else:
            parts.append(part)
    return "/".join(parts) or None


def _take_import_keys(trial: Trial) -> None:
    """Move the reader's own keys off the trajectory: notes to ``trial.notes``, the per-file
    validation errors to ``trial.validation_errors``."""
    if isinstance(trial.trajectory, dict):
        trial.notes += trial.trajectory.pop("_import_notes", [])
        trial.validation_errors = trial.trajectory.pop("_validation_errors", None)


def read_trial(path: Path, job: str, root: Path | None = None, budget: ReadBudget | None = None) -> Trial:
    """Everything readable about one trial (a folder, or a bare ATIF file), read inside
    ``root`` (the folder the user named; default the trial folder itself)."""
    if path.is_file():
        return _read_atif_file(path, job, budget)
    files = JobFiles(root or path, path, budget)
    trial = Trial(path=path, job=job, name=path.name)
    result = _read_result(trial, files)
    trial.result = result
    trial.files = files
    trial.parts = trial_parts(files, result)
    if isinstance(result, dict) and isinstance(result.get("trial_name"), str):
        trial.name = result["trial_name"]
    agent_files = [name for name, kind in files.names("agent") if kind == "file"]
    candidates = (["trajectory.json"] if "trajectory.json" in agent_files else []) + sorted(
        n for n in agent_files if n.endswith(".json") and "trajectory" in n and n != "trajectory.json")
    _read_trial_trajectory(trial, result, candidates)
    trial.rewards, trial.reward_source, reward_problem = _read_rewards(files, result)
    if reward_problem:
        trial.notes.append(reward_problem)
    trial.fingerprint = _trial_fingerprint(trial, candidates)
    return trial


def _read_atif_file(path: Path, job: str, budget: ReadBudget | None) -> Trial:
    """A trial of a bare ATIF trajectory file (no result, no verifier); its fingerprint the
    file's sha256 ("" when it cannot be read safely)."""
    trial = Trial(path=path, job=job,
                  name=path.name.removesuffix(".json").removesuffix(".trajectory"))
    files = JobFiles(path.parent, path.parent, budget)
    trial.files, trial.trajectory_base = files, ""
    trial.trajectory, trial.trajectory_problem = _read_trajectory(files, path.name)
    _take_import_keys(trial)
    trial.trajectory_path = path
    try:
        trial.fingerprint = hashlib.sha256(files.read_bytes(path.name)).hexdigest()
    except UnsafeInput:
        trial.fingerprint = ""
    return trial


def _read_result(trial: Trial, files: JobFiles) -> dict | None:
    """The trial's result.json as an object (None when missing or unreadable); sets
    ``trial.result_problem`` and notes a result.json that is there but not read."""
    result, trial.result_problem = files.load_json("result.json")
    if result is not None and not isinstance(result, dict):
        result, trial.result_problem = None, "result.json is not an object"
    if trial.result_problem and files.kind("result.json") != "missing":
        trial.notes.append(f"{trial.result_problem}: the trial's result (rewards, timings, exception, "
                           "tokens) is not read from it")
    return result


def _read_trial_trajectory(trial: Trial, result: dict | None, candidates: list[str]) -> None:
    """Set the trial's trajectory (and its path, problem, notes) from the first of the agent's
    trajectory files ``candidates``, else from a multi-step trial's steps."""
    files, path = trial.files, trial.path
    if candidates:
        trial.trajectory_path = path / "agent" / candidates[0]
        trial.trajectory, trial.trajectory_problem = _read_trajectory(files, f"agent/{candidates[0]}")
        _take_import_keys(trial)
    elif trial.parts.get("multi_step"):
        trial.trajectory, trial.trajectory_problem = _step_trajectories(files, result)
        if trial.trajectory is not None:
            trial.trajectory_path = path / "steps"
            trial.notes += trial.trajectory.pop("_import_notes", [])
            trial.validation_errors = trial.trajectory.pop("_validation_errors")
    else:
        trial.trajectory_problem = "agent/trajectory.json not found"
        if files.kind("agent/trajectory.json") not in ("missing", "file"):
            trial.trajectory_problem = (f"agent/trajectory.json {REFUSED.get(files.kind('agent/trajectory.json'), 'cannot be read')}")


def _trial_fingerprint(trial: Trial, candidates: list[str]) -> str:
    """sha256 over the trial's result, trajectory, reward and step trajectory files (each
    as its base name, a NUL and its bytes; files that cannot be read safely left out)."""
    files = trial.files
    digest = hashlib.sha256()
    step_files = [f"steps/{s['name']}/agent/trajectory.json" for s in trial.parts["steps"]]
    for name in ("result.json", f"agent/{candidates[0]}" if candidates else None,
                 "verifier/reward.json", "verifier/reward.txt", *step_files):
        if name is not None and files.kind(name) == "file":
            try:
                digest.update(name.rsplit("/", 1)[-1].encode() + b"\0" + files.read_bytes(name))
            except UnsafeInput:
                continue
    return digest.hexdigest()


def _step_trajectories(files: JobFiles, result: dict | None) -> tuple[dict | None, str | None]:
    """One document of a multi-step trial's per-step trajectories, in step order: steps
    concatenated, each marked ``extra.harbor_step`` (the step's name), subagents gathered.
    A step without a readable trajectory is named in ``_import_notes``."""
    merged: dict | None = None
    notes: list[str] = []
    problems: list[str] = []
    for step in step_results(result or {}):
        name = step["step_name"]
        if "/" in name or name in ("", ".", ".."):
            notes.append(f"step name {name!r} is not a folder name: its trajectory is not read")
            continue
        doc, problem = _read_trajectory(files, f"steps/{name}/agent/trajectory.json")
        if doc is None:
            notes.append(f"step {name}: {problem}")
            continue
        notes += doc.pop("_import_notes", [])
        problems += [f"steps/{name}: {e}" for e in doc.pop("_validation_errors", [])]
        steps = [dict(s, extra=dict(s.get("extra") if isinstance(s.get("extra"), dict) else {},
                                    harbor_step=name)) for s in doc["steps"] if isinstance(s, dict)]
        subs = doc.get("subagent_trajectories") if isinstance(doc.get("subagent_trajectories"), list) else []
        if merged is None:
            merged = dict(doc, steps=steps, subagent_trajectories=list(subs))
            merged.pop("final_metrics", None)
        else:
            merged["steps"] += steps
            merged["subagent_trajectories"] += subs
    if merged is None:
        return None, "; ".join(notes) or "no step of the multi-step trial has a trajectory"
    if not merged["subagent_trajectories"]:
        merged.pop("subagent_trajectories")
    if notes:
        merged["_import_notes"] = notes
    merged["_validation_errors"] = problems
    return merged, None


def harbor_reward_key(rewards: dict | None) -> str | None:
    """The name of the headline reward: ``reward`` when it is a number, else the first named
    reward that is one, in the verifier's order (what ``harbor view`` shows); None for none."""
    if not isinstance(rewards, dict):
        return None
    number = lambda value: isinstance(value, (int, float)) and not isinstance(value, bool)
    if number(rewards.get("reward")):
        return "reward"
    return next((str(key) for key, value in rewards.items() if number(value)), None)


def harbor_reward(rewards: dict | None) -> float | None:
    """The headline reward (:func:`harbor_reward_key`) as a float; None when there is none."""
    key = harbor_reward_key(rewards)
    return float(rewards[key]) if key is not None else None
