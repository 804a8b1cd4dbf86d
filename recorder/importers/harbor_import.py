"""Import Harbor job folders (ATIF trajectories, verifier rewards) as runs, re-graded step by step.

``import_harbor(paths, out)`` reads every trial folder under each job folder (a trial folder
or a bare ATIF trajectory file may be given too)::

    <job>/<trial>/result.json              Harbor TrialResult (task_name, agent_info, verifier_result, ...)
    <job>/<trial>/agent/trajectory.json    ATIF v1.0-1.8 (continued_trajectory_ref followed)
    <job>/<trial>/verifier/reward.json     {"reward": r, ...}   or   verifier/reward.txt: "r"

and writes one run folder per readable trial (docs/formats.md, "Imported runs"). File
edits are rebuilt from the tool calls (:mod:`recorder.importers.shell`) and, when the trial's task is
one under ``tasks/``, replayed onto the task's pristine repo and graded after every step
that changed it. Each run is labelled ``exact``, ``approximate`` (the lossy steps named) or
``terminal-only`` (no trajectory: only Harbor's reward is known). A trial that cannot be
read at all is listed with the reason in ``<out>/harbor-import.json``, never dropped
silently. Both rewards are kept: ``harbor.reward`` (the verifier's) and ``regrade``.
"""

from __future__ import annotations

import hashlib
import shutil
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import atif
import orjson
import pydantic

from contract.base import dump, parse
from contract.errors import BadInput
from contract.files import write_json
from contract.ids import slug_id
from contract.paths import TASKS_DIR, task_dirs
from contract.run import AgentRef, Final, RunSummary, TaskRef, Timings
from contract.task import CheckCatalog
from contract.task_roots import task_fingerprint, task_id_of
from contract.untrusted import REFUSED, Tree, UnsafeInput, checked_depth
from recorder import run_format
from recorder.environments.graded import grade_summary
from recorder.importers.shell.files import DEFAULT_CWD
from recorder.importers.shell.tracker import FileTracker, prompt_cwd
from recorder.run_store import RunStore, make_identity, new_summary

SUMMARY_FILE = "harbor-import.json"
IMPORT_VERSION = 1
MAX_VALIDATION_ERRORS = 50
STEP_FIELDS = ("step_id", "timestamp", "source", "model_name", "reasoning_effort", "message",
               "reasoning_content", "tool_calls", "observation", "metrics", "extra",
               "llm_call_count", "is_copied_context")
OPTIONAL_STEP_FIELDS = ("timestamp", "metrics", "reasoning_effort", "model_name",
                        "reasoning_content", "llm_call_count", "is_copied_context")


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

    @property
    def readable(self) -> bool:
        return self.result is not None or self.trajectory is not None or self.rewards is not None


def _safe_name(text: str) -> str:
    return slug_id(text)


JSON_CAP = 64 * 1024 * 1024
"""Largest result.json, reward or trajectory file read from a job (a long trajectory is MBs)."""
IMPORT_BUDGET = 2 * 1024 * 1024 * 1024
"""Bytes one import reads from jobs at most, all files together (many files each under its
cap, or sparse ones that read as gigabytes of zeros, cannot make an import run for hours)."""


@dataclass
class ReadBudget:
    """Bytes an import may still read (shared by the trials of one import)."""

    left: int = IMPORT_BUDGET


class JobFiles:
    """The files of one trial, read inside the folder the user named (an untrusted tree):
    no link is followed, nothing outside ``root`` is read, every read is capped, and all
    reads of one import together stay within its :class:`ReadBudget`."""

    def __init__(self, root: Path, folder: Path, budget: ReadBudget | None = None):
        self.root, self.folder = Path(root), Path(folder)
        self.tree = Tree(self.root)
        self.prefix = self.folder.relative_to(self.root).as_posix() if self.folder != self.root else ""
        self.budget = budget or ReadBudget()

    def _cap(self, name: str) -> int:
        if self.budget.left <= 0:
            raise UnsafeInput(self.tree.shown(self.rel(name)), f"not read: this import already read "
                              f"{IMPORT_BUDGET} bytes, its limit")
        return min(JSON_CAP, self.budget.left)

    def _read(self, rel: str, name: str) -> bytes:
        cap = self._cap(name)
        try:
            data = self.tree.read_bytes(rel, cap=cap)
        except UnsafeInput as err:
            if cap < JSON_CAP and err.problem.startswith("file is "):
                raise UnsafeInput(err.path, f"not read: it is more than this import may still read "
                                  f"(its limit is {IMPORT_BUDGET} bytes in all)") from None
            raise
        self.budget.left -= len(data)
        return data

    def rel(self, name: str) -> str:
        return f"{self.prefix}/{name}" if self.prefix else name

    def kind(self, name: str) -> str:
        return self.tree.kind(self.rel(name))

    def load_json(self, name: str) -> tuple[Any, str | None]:
        """``(value, None)`` or ``(None, problem)`` for the JSON file ``name``."""
        try:
            return checked_depth(orjson.loads(self._read(self.rel(name), name)), self.tree.shown(self.rel(name))), None
        except orjson.JSONDecodeError as err:
            return None, f"{name} is not valid JSON: {err}"
        except UnsafeInput as err:
            if err.problem == REFUSED["missing"]:
                return None, f"{name} not found"
            joiner = " is " if err.problem.startswith("not ") else ": "
            return None, f"{name}{joiner}{err.problem}"

    def read_text(self, name: str) -> str:
        return self._read(self.rel(name), name).decode("utf-8", errors="replace")

    def read_bytes(self, name: str) -> bytes:
        return self._read(self.rel(name), name)

    def names(self, sub: str) -> list[tuple[str, str]]:
        try:
            return self.tree.entries(self.rel(sub))
        except UnsafeInput:
            return []


def _is_trial_folder(path: Path) -> bool:
    tree = Tree(path)
    return any(tree.kind(name) not in ("missing", "symlink") for name in ("result.json", "agent", "verifier"))


def _subfolders(path: Path) -> tuple[list[Path], list[dict]]:
    """Sub-folders of ``path`` (no links) and the links there, listed as skipped."""
    folders, skipped = [], []
    for name, kind in Tree(path).entries():
        if kind == "dir":
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
        path = Path(raw)
        if not path.exists():
            raise BadInput(path, "not found (expected a Harbor job folder, trial folder or "
                           "trajectory file)")
        if path.is_file():
            found.append((path, "atif", path.parent))
            continue
        subfolders, links = _subfolders(path)
        if _is_trial_folder(path) and not any(_is_trial_folder(p) for p in subfolders):
            found.append((path, path.parent.name, path))
            continue
        skipped += links
        trials = [p for p in subfolders if _is_trial_folder(p)
                  and not any(_is_trial_folder(q) for q in _subfolders(p)[0])]
        jobs = [p for p in subfolders if p not in trials
                and any(_is_trial_folder(q) for q in _subfolders(p)[0])]
        if jobs and not trials:  # a folder of job folders: import every job in it
            more, more_skipped = find_trials(jobs)
            found += [(trial, job, path) for trial, job, _ in more]
            skipped += more_skipped
            continue
        if not trials:
            raise BadInput(path, "no trial folders here (none holds result.json, agent/ or "
                           "verifier/)")
        found += [(p, path.name, path) for p in trials]
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
    not is noted in the document's ``extra.import_notes`` and not followed.
    """
    doc, problem = files.load_json(name)
    if problem:
        return None, problem
    if not isinstance(doc, dict) or not isinstance(doc.get("steps"), list):
        return None, f"{name} is not an ATIF trajectory (no steps list)"
    seen = {files.rel(name)}
    current, current_name, notes = doc, name, []
    while isinstance(current.get("continued_trajectory_ref"), str):
        ref = current["continued_trajectory_ref"]
        joined = _join_inside(files.rel(current_name), ref)
        if joined is None:
            notes.append(f"continued_trajectory_ref {ref!r} leaves the job folder: not followed")
            break
        if joined in seen or files.tree.kind(joined) != "file":
            if joined not in seen:
                notes.append(f"continued_trajectory_ref {ref!r}: {files.tree.kind(joined)}, not followed")
            break
        seen.add(joined)
        try:
            current = checked_depth(orjson.loads(files._read(joined, ref)), ref)
        except UnsafeInput as err:
            notes.append(f"continued_trajectory_ref {ref!r}: {err.problem}")
            break
        except orjson.JSONDecodeError:
            notes.append(f"continued_trajectory_ref {ref!r} is not valid JSON: not followed")
            break
        if not isinstance(current, dict) or not isinstance(current.get("steps"), list):
            break
        current_name = joined[len(files.prefix) + 1:] if files.prefix else joined
        doc = dict(doc, steps=doc["steps"] + current["steps"])
    if notes:
        doc = dict(doc, _import_notes=notes)
    return doc, None


def _join_inside(referrer: str, ref: str) -> str | None:
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


def read_trial(path: Path, job: str, root: Path | None = None, budget: ReadBudget | None = None) -> Trial:
    """Everything readable about one trial (a folder, or a bare ATIF file), read inside
    ``root`` (the folder the user named; default the trial folder itself)."""
    if path.is_file():
        trial = Trial(path=path, job=job,
                      name=path.name.removesuffix(".json").removesuffix(".trajectory"))
        files = JobFiles(path.parent, path.parent, budget)
        trial.trajectory, trial.trajectory_problem = _read_trajectory(files, path.name)
        trial.trajectory_path = path
        try:
            trial.fingerprint = hashlib.sha256(files.read_bytes(path.name)).hexdigest()
        except UnsafeInput:
            trial.fingerprint = ""
        return trial
    files = JobFiles(root or path, path, budget)
    trial = Trial(path=path, job=job, name=path.name)
    result, trial.result_problem = files.load_json("result.json")
    if result is not None and not isinstance(result, dict):
        result, trial.result_problem = None, "result.json is not an object"
    trial.result = result
    if isinstance(result, dict) and isinstance(result.get("trial_name"), str):
        trial.name = result["trial_name"]
    agent_files = [name for name, kind in files.names("agent") if kind == "file"]
    candidates = (["trajectory.json"] if "trajectory.json" in agent_files else []) + sorted(
        n for n in agent_files if n.endswith(".json") and "trajectory" in n and n != "trajectory.json")
    if candidates:
        trial.trajectory_path = path / "agent" / candidates[0]
        trial.trajectory, trial.trajectory_problem = _read_trajectory(files, f"agent/{candidates[0]}")
        if isinstance(trial.trajectory, dict) and trial.trajectory.get("_import_notes"):
            trial.notes += trial.trajectory.pop("_import_notes")
    else:
        trial.trajectory_problem = "agent/trajectory.json not found"
        if files.kind("agent/trajectory.json") not in ("missing", "file"):
            trial.trajectory_problem = (f"agent/trajectory.json {REFUSED.get(files.kind('agent/trajectory.json'), 'cannot be read')}")
    trial.rewards, trial.reward_source, reward_problem = _read_rewards(files, result)
    if reward_problem:
        trial.notes.append(reward_problem)
    digest = hashlib.sha256()
    for name in ("result.json", f"agent/{candidates[0]}" if candidates else None,
                 "verifier/reward.json", "verifier/reward.txt"):
        if name is not None and files.kind(name) == "file":
            try:
                digest.update(name.rsplit("/", 1)[-1].encode() + b"\0" + files.read_bytes(name))
            except UnsafeInput:
                continue
    trial.fingerprint = digest.hexdigest()
    return trial


def harbor_reward(rewards: dict | None) -> float | None:
    """The headline reward: ``rewards["reward"]``, or the only value there is."""
    if not rewards:
        return None
    if isinstance(rewards.get("reward"), (int, float)):
        return float(rewards["reward"])
    values = [v for v in rewards.values() if isinstance(v, (int, float))]
    return float(values[0]) if len(values) == 1 else None


# ------------------------------------------------------------------------- ATIF normalizing


def validation_errors(doc: Any) -> list[str]:
    """The ``atif`` package's complaints about a trajectory (``[]`` when it validates)."""
    try:
        atif.Trajectory.model_validate(doc)
    except pydantic.ValidationError as err:
        return [f"{'.'.join(map(str, e['loc'])) or '(root)'}: {e['msg']}"
                for e in err.errors()[:MAX_VALIDATION_ERRORS]]
    return []


def _arguments(raw: Any) -> dict:
    if isinstance(raw, dict):
        return raw
    if isinstance(raw, str):
        try:
            parsed = orjson.loads(raw)
        except orjson.JSONDecodeError:
            return {"raw_arguments": raw}
        return parsed if isinstance(parsed, dict) else {"raw_arguments": raw}
    return {} if raw is None else {"raw_arguments": raw}


def _tool_calls(raw: Any, step_id: int) -> list[dict]:
    calls = []
    for index, call in enumerate(raw if isinstance(raw, list) else []):
        if not isinstance(call, dict):
            continue
        function = call.get("function") if isinstance(call.get("function"), dict) else {}
        name = call.get("function_name") or call.get("name") or function.get("name") or "unknown"
        calls.append({
            "tool_call_id": str(call.get("tool_call_id") or call.get("id")
                                or f"step{step_id}_call{index + 1}"),
            "function_name": str(name),
            "arguments": _arguments(call.get("arguments", function.get("arguments")))})
    return calls


def _call_id(value: Any) -> str | None:
    return value if isinstance(value, str) else (None if value is None else str(value))


def _results(raw: Any) -> list[dict]:
    if raw is None:
        return []
    if isinstance(raw, str):
        return [{"content": raw}]
    items = raw.get("results") if isinstance(raw, dict) else raw
    if isinstance(items, str):
        return [{"content": items}]
    results = []
    for item in items if isinstance(items, list) else []:
        if isinstance(item, str):
            results.append({"content": item})
        elif isinstance(item, dict):
            kept = {k: v for k, v in item.items()
                    if k in ("source_call_id", "content", "subagent_trajectory_ref", "extra")}
            if "source_call_id" in kept:
                kept["source_call_id"] = _call_id(kept["source_call_id"])
            if "extra" in kept and not isinstance(kept["extra"], dict):
                kept["extra"] = {"source_extra": kept["extra"]}
            results.append(kept)
    return results


def _orphan(result: dict) -> dict:
    """A result that names no call of its step (the parallel-tool-results case), kept and
    flagged: ``source_call_id`` None, ``extra.orphan`` true and ``extra.named_call_id`` the
    id it named. The viewer shows it apart, never as the output of a neighbouring call."""
    extra = dict(result.get("extra") or {}) if isinstance(result.get("extra"), dict) else {}
    extra.update(orphan=True, named_call_id=result.get("source_call_id"))
    return {**{k: v for k, v in result.items() if k != "source_call_id"}, "source_call_id": None,
            "extra": extra}


def _valid_step(step: dict) -> dict:
    """``step`` itself when it validates; else with optional fields moved to
    ``extra.source_fields`` until it does (the message is kept as text)."""
    moved = {}
    for name in (None, *OPTIONAL_STEP_FIELDS, "observation", "message"):
        if name == "message":
            step["message"] = _text(step.get("message"))
        elif name is not None and name in step:
            moved[name] = step.pop(name)
        if moved:
            step["extra"] = dict(step.get("extra") or {}, source_fields=moved)
        try:
            atif.Step.model_validate(step)
            return step
        except pydantic.ValidationError:
            continue
    step.pop("extra", None)
    return step


def _text(content: Any) -> str:
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(str(p.get("text", "")) if isinstance(p, dict) else str(p) for p in content)
    return str(content)


def normalize_steps(doc: dict) -> list[dict]:
    """The trajectory's steps as valid ATIF steps, one tool call each.

    A step with several tool calls becomes one step per call (results paired with their call
    by ``source_call_id``, whatever order they came in; a result naming no call of its step
    is kept on the step's last part and flagged as an orphan, see :func:`_orphan`);
    ``extra.source_step_id``
    keeps the original id and ``extra.source_call_index`` the call's position. Fields the
    models refuse are kept under ``extra.source_fields``; unknown fields under
    ``extra.unrecognized``.
    """
    steps: list[dict] = []
    for position, raw in enumerate(doc.get("steps") or []):
        if not isinstance(raw, dict):
            continue
        original_id = raw.get("step_id") if isinstance(raw.get("step_id"), int) else position + 1
        source = raw.get("source") if isinstance(raw.get("source"), str) else None
        source = {"assistant": "agent", "human": "user"}.get(source, source)
        if source not in ("system", "user", "agent"):
            source = "system"
        base = {k: raw[k] for k in OPTIONAL_STEP_FIELDS if raw.get(k) is not None}
        extra = dict(raw["extra"]) if isinstance(raw.get("extra"), dict) else {}
        unknown = {k: v for k, v in raw.items() if k not in STEP_FIELDS}
        if source != "agent" and raw.get("tool_calls"):
            unknown["tool_calls"] = raw["tool_calls"]  # only agent steps may carry calls
        if unknown:
            extra["unrecognized"] = unknown
        extra["source_step_id"] = original_id
        message = raw.get("message")
        if not isinstance(message, (str, list)):
            message = _text(message)
        calls = _tool_calls(raw.get("tool_calls"), original_id) if source == "agent" else []
        results = _results(raw.get("observation"))
        parts = calls or [None]
        for index, call in enumerate(parts):
            step = {"step_id": 0, "source": source, "message": message if index == 0 else ""}
            step.update(base if index == 0 else {})
            if index > 0:
                step["llm_call_count"] = 0
            if call is not None:
                step["tool_calls"] = [call]
                mine = [r for r in results if r.get("source_call_id") == call["tool_call_id"]]
                if len(calls) == 1:  # one call: a result without an id is its result
                    mine += [r for r in results if not r.get("source_call_id")]
                if index == len(parts) - 1:  # results naming no call of the step: orphans
                    ids = {c["tool_call_id"] for c in calls}
                    mine += [_orphan(r) for r in results if r.get("source_call_id") not in ids
                             and (r.get("source_call_id") or len(calls) > 1)]
                mine = [{k: v for k, v in r.items() if v is not None} for r in mine]
            else:
                mine = [_orphan(r) if r.get("source_call_id") else r for r in results]
            if mine:
                step["observation"] = {"results": mine}
            step_extra = dict(extra)
            if len(parts) > 1:
                step_extra["source_call_index"] = index
            step["extra"] = step_extra
            steps.append(step)
    for number, step in enumerate(steps, start=1):
        step["step_id"] = number
    return [_valid_step(step) for step in steps]


# ----------------------------------------------------------------------------- the import


def _task_index(tasks_dir: Path | None) -> dict[str, Path]:
    index = {}
    for folder in task_dirs(tasks_dir or TASKS_DIR):
        index[folder.name] = folder
        index[task_id_of(folder)] = folder
    return index


def _obj(value: Any) -> dict:
    """``value`` when it is an object, else ``{}`` (a trial's files are another program's: a
    field of the wrong type is treated as missing)."""
    return value if isinstance(value, dict) else {}


def _task_names(trial: Trial) -> list[str]:
    result = _obj(trial.result)
    names = [result.get("task_name")]
    config_task = _obj(_obj(result.get("config")).get("task"))
    task_id = result.get("task_id")
    for value in (config_task.get("path"), config_task.get("name"),
                  _obj(task_id).get("path") if isinstance(task_id, dict) else task_id):
        if isinstance(value, str):
            names.append(value.rstrip("/").split("/")[-1])
    if trial.path.is_dir():
        names.append(trial.path.name.split("__")[0])
    return [n for n in names if isinstance(n, str) and n]


def _pristine(task_dir: Path) -> dict[str, str]:
    tree, base = Tree(task_dir), "environment/monitoring"
    return {rel[len(base) + 1:]: tree.read_text(rel, errors="replace") for rel in tree.files(base)}


def _apply_to_workspace(workspace: Path, path: str, content: str | None) -> str | None:
    """Put one rebuilt edit into the graded workspace; a message when it cannot be applied."""
    from recorder.environments.workspace import run_tool

    if content is None:
        target = workspace / path
        if ".." in Path(path).parts or any(
                (workspace / Path(*Path(path).parts[:i + 1])).is_symlink()
                for i in range(len(Path(path).parts))):
            return f"deletion of {path} refused (outside the repo)"
        if target.is_file():
            target.unlink()
        elif target.is_dir():
            shutil.rmtree(target)
        return None
    outcome = run_tool(workspace, "write_file", {"path": path, "content": content})
    return outcome.output if outcome.error else None


def import_trial(trial: Trial, out: Path, tasks: dict[str, Path]) -> dict:
    """Write the run of one readable trial; returns its summary row (see :func:`import_harbor`)."""
    from grader.grade import grade

    started = time.perf_counter()
    names = _task_names(trial)
    task_dir = next((tasks[n] for n in names if n in tasks), None)
    agent_block = _obj(_obj(trial.trajectory).get("agent"))
    result = _obj(trial.result)
    agent_info = _obj(result.get("agent_info"))
    agent_name = str(agent_block.get("name") or agent_info.get("name") or "unknown-agent")
    model = agent_block.get("model_name") or _obj(agent_info.get("model_info")).get("name") or \
        _obj(_obj(result.get("config")).get("agent")).get("model_name")
    model = model if isinstance(model, str) else None
    prefix = "harbor" if trial.path.is_dir() else "atif"
    readable = _safe_name(f"{prefix}__{trial.job}__{trial.name}" if prefix == "harbor"
                          else f"{prefix}__{trial.name}")
    task_fp = task_fingerprint(task_dir) if task_dir else None
    store = RunStore(out, readable, make_identity(
        "harbor" if prefix == "harbor" else "atif-file", {"source": str(Path(trial.path).resolve())}))
    run_id = store.run_id

    def changed(old: RunSummary) -> str | None:
        if (old.harbor or {}).get("fingerprint") != trial.fingerprint:
            return "the trial's files changed since it was imported: imported again"
        if old.task.fingerprint != task_fp:
            return "the matching task changed since the import: imported again"
        return None

    opened = store.open(replace_if=changed)
    if opened.state == "unchanged":
        return _row(dump(opened.summary), trial, unchanged=True, replaced=None)

    if task_dir:
        catalog_path = task_dir / "tests" / "checks.json"
        catalog = parse(CheckCatalog, Tree(task_dir).read_json("tests/checks.json"), catalog_path,
                        "check catalog")
        requirements, checks = catalog.requirement_refs(), catalog.check_refs()
    else:
        requirements, checks = [], []
    meta = {"id": names[0] if names else "unknown", "dir": None, "workflow": None, "tier": None,
            "seed": None, "known": False, "name": names[0] if names else None}
    if task_dir:
        spec = Tree(task_dir).read_json("tests/spec.json")
        meta.update(id=spec.get("task_id", task_dir.name), dir=str(task_dir), known=True,
                    workflow=spec.get("workflow"), tier=spec.get("tier"), seed=spec.get("seed"),
                    fingerprint=task_fp)
    meta["id"] = _safe_name(meta["id"]) if meta["id"] else "unknown"
    if not task_dir and trial.path.is_file():
        meta["id"], meta["name"] = "unknown", None

    errors = validation_errors(trial.trajectory) if trial.trajectory is not None else []
    steps = normalize_steps(trial.trajectory) if trial.trajectory is not None else []
    instruction = Tree(task_dir).read_text("instruction.md", errors="replace") if task_dir else None
    replay = "terminal-only" if not steps else "exact"
    notes = list(trial.notes)
    if not task_dir:
        notes.append(f"task not found under the tasks folder (tried {', '.join(names) or 'no name'})"
                     ": steps not graded")
    if trial.trajectory is not None and not steps:
        trial.trajectory, trial.trajectory_problem = None, "the trajectory has no steps"
    if trial.trajectory is None:
        notes.append(f"no trajectory: {trial.trajectory_problem}; only the verifier's reward is known")
        steps = [{"step_id": 1, "source": "user", "message": (instruction or "") + (
            f"\n\n[import: trial {trial.name} has no readable agent trajectory "
            f"({trial.trajectory_problem}); only Harbor's reward is known]")}]
    elif task_dir and (not steps or steps[0]["source"] == "agent"):
        steps.insert(0, {"step_id": 1, "source": "user", "message": instruction,
                         "extra": {"inserted_by_import": "the task's instruction and the "
                                   "pristine grade (the trajectory starts with an agent step)"}})
        for number, step in enumerate(steps, start=1):
            step["step_id"] = number

    lossy_steps, grade_s, grades, last_reward = [], 0.0, 0, None
    with tempfile.TemporaryDirectory(prefix="alertforge-import-") as tmp:
        workspace = Path(tmp) / "monitoring"
        graded = bool(task_dir) and replay != "terminal-only"
        if graded:
            shutil.copytree(task_dir / "environment" / "monitoring", workspace)
            pristine = grade(task_dir, workspace)
            grade_s += pristine["timings"]["total_s"]
            grades += 1
            steps[0].setdefault("extra", {})["grade"] = grade_summary(pristine, None)
            last_reward = pristine["reward"]
        repo_files = _pristine(task_dir) if task_dir else {}
        tracker = FileTracker(repo_files, repo_known=bool(task_dir),
                              cwd=_starting_directory(steps) or DEFAULT_CWD)
        edited_any = False
        for step in steps[1:] if trial.trajectory is None else steps:
            for call in step.get("tool_calls") or []:
                effect = tracker.apply(call["function_name"], call["arguments"])
                extra = step.setdefault("extra", {})
                if effect.edits:
                    edited_any = True
                    extra["edits"] = [{"path": e.path, "content": e.content} if e.content is not None
                                      else {"path": e.path, "content": None, "deleted": True}
                                      for e in effect.edits]
                if effect.lossy or effect.notes:
                    extra["replay"] = {"lossy": effect.lossy, "notes": effect.notes}
                if effect.lossy:
                    replay = "approximate"
                    lossy_steps.append({"step_id": step["step_id"], "source_step_id":
                                        extra.get("source_step_id"), "tool": call["function_name"],
                                        "reasons": effect.lossy})
                if not graded:
                    continue
                changed = []
                for edit in effect.edits:
                    if edit.path.startswith("/") or edit.path == ".":
                        continue
                    problem = _apply_to_workspace(workspace, edit.path, edit.content)
                    if problem:
                        extra.setdefault("replay", {"lossy": [], "notes": []})["notes"].append(problem)
                    else:
                        changed.append(edit.path)
                if changed:
                    extra["changed_files"] = changed
                    try:
                        result_now = grade(task_dir, workspace)
                    except RuntimeError as err:
                        extra["grade_error"] = str(err)
                        continue
                    grade_s += result_now["timings"]["total_s"]
                    grades += 1
                    extra["grade"] = grade_summary(result_now, last_reward)
                    last_reward = result_now["reward"]
        if trial.trajectory is not None and not edited_any:
            notes.append("no file edit found in the tool calls")
        if task_dir:
            outside = sorted({e["path"] for s in steps for e in (s.get("extra") or {}).get("edits", [])
                              if e["path"].startswith("/") and any(
                                  e["path"].endswith("/" + p) for p in repo_files)})
            if outside:
                notes.append(f"edits of {', '.join(outside[:5])} look like repo files but are not "
                             "under a monitoring/ folder: not graded")

    reward = harbor_reward(trial.rewards)
    last_grade = next((s["extra"]["grade"] for s in reversed(steps)
                       if "grade" in (s.get("extra") or {})), None)
    regrade = {"reward": last_grade["reward"], "solved": bool(last_grade["keys"]["solved"])} \
        if last_grade and replay != "terminal-only" else None
    if regrade:
        final = run_format.final_from_grades(steps, "regrade")
    elif reward is not None:
        final = Final(reward=reward, solved=reward >= 1.0, keys={}, requirements={}, source="harbor")
    else:
        final = None

    doc = _trajectory_doc(trial, run_id, steps, agent_name)
    summary = new_summary(
        store, status="complete", source="harbor" if trial.path.is_dir() else "atif-file",
        kind="alerting", task=TaskRef(**meta), policy=agent_name, seed=None, model=model,
        agent=AgentRef(name=agent_name, version=str(agent_block.get("version")
                                                    or agent_info.get("version") or "unknown")),
        steps=len(steps), final=final, requirements=requirements, checks=checks,
        started_at=result.get("started_at"), finished_at=result.get("finished_at"),
        timings=Timings(wall_s=round(time.perf_counter() - started, 3), grade_s=round(grade_s, 3),
                        grades=grades),
        error=_exception(result), replay=replay, graded=grades > 0, lossy_steps=lossy_steps,
        notes=notes, regrade=regrade, validation_errors=errors, legacy_id=readable,
        harbor={"job": trial.job, "trial": trial.name, "path": str(trial.path),
                "trajectory": str(trial.trajectory_path) if trial.trajectory_path else None,
                "schema_version": (trial.trajectory or {}).get("schema_version"),
                "reward": reward, "rewards": trial.rewards, "reward_source": trial.reward_source,
                "agent_result": result.get("agent_result"), "fingerprint": trial.fingerprint})
    store.write_whole(summary, doc)
    return _row(dump(summary), trial, unchanged=False, replaced=opened.replaced)


def _starting_directory(steps: list[dict]) -> str | None:
    """The working directory a terminal prompt shows before the first command runs: in the
    messages up to the first tool call, or in that call's output (which echoes its prompt)."""
    for step in steps:
        texts = [_text(step.get("message"))]
        if step.get("tool_calls"):
            texts = [_text(r.get("content")) for r in
                     (step.get("observation") or {}).get("results", [])] + texts
        found = next((prompt_cwd(t) for t in texts if prompt_cwd(t)), None)
        if found or step.get("tool_calls"):
            return found
    return None


def _exception(result: dict) -> str | None:
    info = result.get("exception_info")
    if isinstance(info, dict):
        return f"{info.get('exception_type')}: {info.get('exception_message')}"
    return None


def _trajectory_doc(trial: Trial, run_id: str, steps: list[dict], agent_name: str) -> dict:
    """The run's ATIF document: the original agent block and metrics when they validate."""
    source = trial.trajectory or {}
    doc = {"schema_version": run_format.SCHEMA_VERSION,
           "session_id": str(source.get("session_id") or run_id),
           "agent": {"name": agent_name, "version": "unknown"}, "steps": steps,
           "extra": {"imported_from": {"path": str(trial.trajectory_path or trial.path),
                                       "schema_version": source.get("schema_version")}}}
    agent = source.get("agent")
    if isinstance(agent, dict):
        try:
            atif.Agent.model_validate(agent)
            doc["agent"] = agent
        except pydantic.ValidationError:
            doc["extra"]["source_agent"] = agent
    for key in ("final_metrics", "notes"):
        if source.get(key) is not None:
            candidate = dict(doc, **{key: source[key]})
            if not validation_errors(candidate):
                doc = candidate
    run_format.validate(doc)
    return doc


def _row(summary: dict, trial: Trial, *, unchanged: bool, replaced: str | None) -> dict:
    harbor = summary.get("harbor") or {}
    return {"run_id": summary["run_id"], "path": str(trial.path), "task_id": summary["task"]["id"],
            "task_known": summary["task"].get("known", False), "replay": summary.get("replay"),
            "lossy_steps": len(summary.get("lossy_steps") or []),
            "harbor_reward": harbor.get("reward"),
            "regrade_reward": (summary.get("regrade") or {}).get("reward"),
            "validation_errors": len(summary.get("validation_errors") or []),
            "unchanged": unchanged, "replaced": replaced}


def import_harbor(paths: list[Path], out: Path, tasks_dir: Path | None = None) -> dict:
    """Import every trial under ``paths`` into run folders under ``out``.

    Returns (and writes atomically to ``<out>/harbor-import.json``)::

        {version, imported: [{run_id, path, task_id, task_known, replay, lossy_steps,
                              harbor_reward, regrade_reward, validation_errors, unchanged}],
         skipped: [{path, reason}]}

    A trial already imported from the same files (fingerprint) is not graded again
    (``unchanged`` true).

    Raises:
        BadInput: a path is missing or holds no trial, ``out`` is a file, or the tasks
            folder is missing.
    """
    out = Path(out)
    if out.exists() and not out.is_dir():
        raise BadInput(out, "output path exists and is not a folder")
    tasks = _task_index(tasks_dir)
    found, skipped = find_trials([Path(p) for p in paths])
    imported = []
    budget = ReadBudget()
    for path, job, root in found:
        trial = read_trial(path, job, root, budget)
        if not trial.readable:
            reasons = [r for r in (trial.result_problem, trial.trajectory_problem) if r]
            skipped.append({"path": str(path), "reason": "; ".join(reasons) or "nothing readable"})
            continue
        try:
            imported.append(import_trial(trial, out, tasks))
        except run_format.InvalidTrajectory as err:
            skipped.append({"path": str(path), "reason": f"trajectory cannot be normalized: {err}"})
        except (TypeError, ValueError, AttributeError, KeyError, IndexError) as err:
            # a shape no rule above expected: this trial is listed, the others still import
            skipped.append({"path": str(path), "reason": "its files have a shape the importer "
                            f"cannot read ({type(err).__name__}: {str(err)[:200]})"})
    summary = {"version": IMPORT_VERSION, "imported": imported, "skipped": skipped}
    out.mkdir(parents=True, exist_ok=True)
    write_json(out / SUMMARY_FILE, summary)
    return summary
