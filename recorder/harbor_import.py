"""Import Harbor job folders (ATIF trajectories, verifier rewards) as runs, re-graded step by step.

``import_harbor(paths, out)`` reads every trial folder under each job folder (a trial folder
or a bare ATIF trajectory file may be given too)::

    <job>/<trial>/result.json              Harbor TrialResult (task_name, agent_info, verifier_result, ...)
    <job>/<trial>/agent/trajectory.json    ATIF v1.0-1.8 (continued_trajectory_ref followed)
    <job>/<trial>/verifier/reward.json     {"reward": r, ...}   or   verifier/reward.txt: "r"

and writes one run folder per readable trial (docs/formats.md, "Imported runs"). File
edits are rebuilt from the tool calls (:mod:`recorder.edits`) and, when the trial's task is
one under ``tasks/``, replayed onto the task's pristine repo and graded after every step
that changed it. Each run is labelled ``exact``, ``approximate`` (the lossy steps named) or
``terminal-only`` (no trajectory: only Harbor's reward is known). A trial that cannot be
read at all is listed with the reason in ``<out>/harbor-import.json``, never dropped
silently. Both rewards are kept: ``harbor.reward`` (the verifier's) and ``regrade``.
"""

from __future__ import annotations

import hashlib
import re
import shutil
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import atif
import orjson
import pydantic

from alertforge.errors import BadInput
from alertforge.files import read_json, write_json
from alertforge.paths import TASKS_DIR, task_dirs
from recorder import run_format
from recorder.edits import FileTracker, prompt_cwd

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
    return re.sub(r"[^A-Za-z0-9._-]+", "-", text).strip("-.") or "unnamed"


def _load_json(path: Path) -> tuple[Any, str | None]:
    try:
        return orjson.loads(path.read_bytes()), None
    except FileNotFoundError:
        return None, f"{path.name} not found"
    except OSError as err:
        return None, f"{path.name}: cannot read: {err.strerror}"
    except orjson.JSONDecodeError as err:
        return None, f"{path.name} is not valid JSON: {err}"


def _is_trial_folder(path: Path) -> bool:
    return any((path / name).exists() for name in ("result.json", "agent", "verifier"))


def find_trials(paths: list[Path]) -> tuple[list[tuple[Path, str]], list[dict]]:
    """``([(trial folder or trajectory file, job name)], [skipped {path, reason}])``.

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
            found.append((path, "atif"))
            continue
        if _is_trial_folder(path) and not any(
                _is_trial_folder(p) for p in path.iterdir() if p.is_dir()):
            found.append((path, path.parent.name))
            continue
        subfolders = sorted(p for p in path.iterdir() if p.is_dir())
        trials = [p for p in subfolders if _is_trial_folder(p)
                  and not any(_is_trial_folder(q) for q in p.iterdir() if q.is_dir())]
        jobs = [p for p in subfolders if p not in trials
                and any(_is_trial_folder(q) for q in p.iterdir() if q.is_dir())]
        if jobs and not trials:  # a folder of job folders: import every job in it
            more, more_skipped = find_trials(jobs)
            found += more
            skipped += more_skipped
            continue
        if not trials:
            raise BadInput(path, "no trial folders here (none holds result.json, agent/ or "
                           "verifier/)")
        found += [(p, path.name) for p in trials]
        skipped += [{"path": str(p), "reason": "not a trial folder (no result.json, agent/ or "
                     "verifier/)"} for p in subfolders if p not in trials]
    return found, skipped


def _read_rewards(folder: Path, result: dict | None) -> tuple[dict | None, str | None, str | None]:
    """(rewards, where they came from, problem) from result.json or verifier/reward.*."""
    verifier = (result or {}).get("verifier_result") if isinstance(result, dict) else None
    if isinstance(verifier, dict) and isinstance(verifier.get("rewards"), dict):
        return dict(verifier["rewards"]), "result.json verifier_result.rewards", None
    problem = None
    reward_json = folder / "verifier" / "reward.json"
    if reward_json.is_file():
        value, problem = _load_json(reward_json)
        if isinstance(value, dict) and all(isinstance(v, (int, float)) for v in value.values()):
            return value, "verifier/reward.json", None
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            return {"reward": value}, "verifier/reward.json", None
        problem = problem or "verifier/reward.json is not an object of numbers"
    reward_txt = folder / "verifier" / "reward.txt"
    if reward_txt.is_file():
        text = reward_txt.read_text(encoding="utf-8", errors="replace").strip()
        try:
            return {"reward": float(text)}, "verifier/reward.txt", None
        except ValueError:
            problem = f"verifier/reward.txt is not a number: {text[:40]!r}"
    return None, None, problem


def _read_trajectory(path: Path) -> tuple[dict | None, str | None]:
    """An ATIF document, with continuation files (``continued_trajectory_ref``) appended."""
    doc, problem = _load_json(path)
    if problem:
        return None, problem
    if not isinstance(doc, dict) or not isinstance(doc.get("steps"), list):
        return None, f"{path.name} is not an ATIF trajectory (no steps list)"
    seen = {path.resolve()}
    current = doc
    while isinstance(current.get("continued_trajectory_ref"), str):
        nxt = (path.parent / current["continued_trajectory_ref"]).resolve()
        if nxt in seen or not nxt.is_file():
            break
        seen.add(nxt)
        current, problem = _load_json(nxt)
        if problem or not isinstance(current, dict) or not isinstance(current.get("steps"), list):
            break
        doc = dict(doc, steps=doc["steps"] + current["steps"])
    return doc, None


def read_trial(path: Path, job: str) -> Trial:
    """Everything readable about one trial (a folder, or a bare ATIF file)."""
    if path.is_file():
        trial = Trial(path=path, job=job,
                      name=path.name.removesuffix(".json").removesuffix(".trajectory"))
        trial.trajectory, trial.trajectory_problem = _read_trajectory(path)
        trial.trajectory_path = path
        trial.fingerprint = hashlib.sha256(path.read_bytes()).hexdigest()
        return trial
    trial = Trial(path=path, job=job, name=path.name)
    result, trial.result_problem = _load_json(path / "result.json")
    if result is not None and not isinstance(result, dict):
        result, trial.result_problem = None, "result.json is not an object"
    trial.result = result
    if isinstance(result, dict) and isinstance(result.get("trial_name"), str):
        trial.name = result["trial_name"]
    candidates = [path / "agent" / "trajectory.json"] + sorted((path / "agent").glob("*.json")) \
        if (path / "agent").is_dir() else []
    candidates = [c for c in candidates if c.is_file() and "trajectory" in c.name]
    if candidates:
        trial.trajectory_path = candidates[0]
        trial.trajectory, trial.trajectory_problem = _read_trajectory(candidates[0])
    else:
        trial.trajectory_problem = "agent/trajectory.json not found"
    trial.rewards, trial.reward_source, reward_problem = _read_rewards(path, result)
    if reward_problem:
        trial.notes.append(reward_problem)
    digest = hashlib.sha256()
    for part in (path / "result.json", trial.trajectory_path, path / "verifier" / "reward.json",
                 path / "verifier" / "reward.txt"):
        if part is not None and part.is_file():
            digest.update(part.name.encode() + b"\0" + part.read_bytes())
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
            results.append({k: v for k, v in item.items()
                            if k in ("source_call_id", "content", "subagent_trajectory_ref", "extra")})
    return results


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

    A step with several tool calls becomes one step per call (results matched by
    ``source_call_id``; results naming no call go with the last); ``extra.source_step_id``
    keeps the original id and ``extra.source_call_index`` the call's position. Fields the
    models refuse are kept under ``extra.source_fields``; unknown fields under
    ``extra.unrecognized``.
    """
    steps: list[dict] = []
    for position, raw in enumerate(doc.get("steps") or []):
        if not isinstance(raw, dict):
            continue
        original_id = raw.get("step_id") if isinstance(raw.get("step_id"), int) else position + 1
        source = raw.get("source")
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
                if index == len(parts) - 1:
                    ids = {c["tool_call_id"] for c in calls}
                    mine += [dict(r, source_call_id=None) if r.get("source_call_id") else r
                             for r in results if r.get("source_call_id") not in ids]
                    mine = [{k: v for k, v in r.items() if v is not None} for r in mine]
            else:
                mine = results
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
        spec = folder / "tests" / "spec.json"
        if spec.is_file():
            task_id = read_json(spec).get("task_id")
            if isinstance(task_id, str):
                index[task_id] = folder
    return index


def _task_names(trial: Trial) -> list[str]:
    result = trial.result or {}
    names = [result.get("task_name")]
    config_task = ((result.get("config") or {}).get("task") or {}) if isinstance(
        result.get("config"), dict) else {}
    for value in (config_task.get("path"), config_task.get("name"),
                  (result.get("task_id") or {}).get("path") if isinstance(result.get("task_id"), dict)
                  else result.get("task_id")):
        if isinstance(value, str):
            names.append(value.rstrip("/").split("/")[-1])
    if trial.path.is_dir():
        names.append(trial.path.name.split("__")[0])
    return [n for n in names if isinstance(n, str) and n]


def _pristine(task_dir: Path) -> dict[str, str]:
    root = task_dir / "environment" / "monitoring"
    return {p.relative_to(root).as_posix(): p.read_text(encoding="utf-8", errors="replace")
            for p in sorted(root.rglob("*")) if p.is_file()}


def _apply_to_workspace(workspace: Path, path: str, content: str | None) -> str | None:
    """Put one rebuilt edit into the graded workspace; a message when it cannot be applied."""
    from recorder.tools import run_tool

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
    agent_block = (trial.trajectory or {}).get("agent") if isinstance(
        (trial.trajectory or {}).get("agent"), dict) else {}
    result = trial.result or {}
    agent_info = result.get("agent_info") if isinstance(result.get("agent_info"), dict) else {}
    agent_name = str(agent_block.get("name") or agent_info.get("name") or "unknown-agent")
    model = agent_block.get("model_name") or (agent_info.get("model_info") or {}).get("name") or \
        ((result.get("config") or {}).get("agent") or {}).get("model_name")
    prefix = "harbor" if trial.path.is_dir() else "atif"
    run_id = _safe_name(f"{prefix}__{trial.job}__{trial.name}" if prefix == "harbor"
                        else f"{prefix}__{trial.name}")
    run_dir = out / run_id
    previous = run_dir / "run.json"
    if previous.is_file():
        old = read_json(previous)
        if (old.get("harbor") or {}).get("fingerprint") == trial.fingerprint and \
                old.get("status") == "complete" and (old.get("task") or {}).get("dir") == (
                    str(task_dir) if task_dir else None):
            return _row(old, trial, unchanged=True)

    catalog = read_json(task_dir / "tests" / "checks.json") if task_dir else {}
    meta = {"id": names[0] if names else "unknown", "dir": None, "workflow": None, "tier": None,
            "seed": None, "known": False, "name": names[0] if names else None}
    if task_dir:
        spec = read_json(task_dir / "tests" / "spec.json")
        meta.update(id=spec.get("task_id", task_dir.name), dir=str(task_dir), known=True,
                    workflow=spec.get("workflow"), tier=spec.get("tier"), seed=spec.get("seed"))
    meta["id"] = _safe_name(meta["id"]) if meta["id"] else "unknown"
    if not task_dir and trial.path.is_file():
        meta["id"], meta["name"] = "unknown", None

    errors = validation_errors(trial.trajectory) if trial.trajectory is not None else []
    steps = normalize_steps(trial.trajectory) if trial.trajectory is not None else []
    instruction = (task_dir / "instruction.md").read_text(encoding="utf-8") if task_dir else None
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
            steps[0].setdefault("extra", {})["grade"] = run_format.grade_summary(pristine, None)
            last_reward = pristine["reward"]
        repo_files = _pristine(task_dir) if task_dir else {}
        tracker = FileTracker(repo_files, repo_known=bool(task_dir))
        tracker.cwd = _starting_directory(steps) or tracker.cwd
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
                    extra["grade"] = run_format.grade_summary(result_now, last_reward)
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
        final = {"reward": last_grade["reward"], "solved": bool(last_grade["keys"]["solved"]),
                 "keys": last_grade["keys"], "requirements": last_grade["requirements"],
                 "source": "regrade"}
    elif reward is not None:
        final = {"reward": reward, "solved": reward >= 1.0, "keys": {}, "requirements": {},
                 "source": "harbor"}
    else:
        final = None

    doc = _trajectory_doc(trial, run_id, steps, agent_name)
    summary = {
        "version": run_format.RUN_VERSION, "run_id": run_id, "kind": "alerting",
        "status": "complete", "source": "harbor" if trial.path.is_dir() else "atif-file",
        "task": meta, "policy": agent_name, "seed": None, "model": model,
        "agent": {"name": agent_name, "version": str(agent_block.get("version")
                                                     or agent_info.get("version") or "unknown")},
        "steps": len(steps), "final": final,
        "requirements": [{k: r[k] for k in ("id", "kind", "weight", "title")}
                         for r in catalog.get("requirements", [])],
        "checks": [{k: c[k] for k in ("id", "req", "family", "label", "note")}
                   for c in catalog.get("checks", [])],
        "started_at": result.get("started_at"), "finished_at": result.get("finished_at"),
        "timings": {"wall_s": round(time.perf_counter() - started, 3),
                    "grade_s": round(grade_s, 3), "grades": grades},
        "error": _exception(result),
        "replay": replay, "graded": grades > 0, "lossy_steps": lossy_steps, "notes": notes,
        "regrade": regrade, "validation_errors": errors,
        "harbor": {"job": trial.job, "trial": trial.name, "path": str(trial.path),
                   "trajectory": str(trial.trajectory_path) if trial.trajectory_path else None,
                   "schema_version": (trial.trajectory or {}).get("schema_version"),
                   "reward": reward, "rewards": trial.rewards, "reward_source": trial.reward_source,
                   "agent_result": result.get("agent_result"), "fingerprint": trial.fingerprint},
    }
    run_dir.mkdir(parents=True, exist_ok=True)
    write_json(run_dir / "trajectory.json", doc)
    write_json(run_dir / "run.json", summary)
    return _row(summary, trial, unchanged=False)


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


def _row(summary: dict, trial: Trial, *, unchanged: bool) -> dict:
    harbor = summary.get("harbor") or {}
    return {"run_id": summary["run_id"], "path": str(trial.path), "task_id": summary["task"]["id"],
            "task_known": summary["task"].get("known", False), "replay": summary.get("replay"),
            "lossy_steps": len(summary.get("lossy_steps") or []),
            "harbor_reward": harbor.get("reward"),
            "regrade_reward": (summary.get("regrade") or {}).get("reward"),
            "validation_errors": len(summary.get("validation_errors") or []),
            "unchanged": unchanged}


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
    for path, job in found:
        trial = read_trial(path, job)
        if not trial.readable:
            reasons = [r for r in (trial.result_problem, trial.trajectory_problem) if r]
            skipped.append({"path": str(path), "reason": "; ".join(reasons) or "nothing readable"})
            continue
        try:
            imported.append(import_trial(trial, out, tasks))
        except run_format.InvalidTrajectory as err:
            skipped.append({"path": str(path), "reason": f"trajectory cannot be normalized: {err}"})
    summary = {"version": IMPORT_VERSION, "imported": imported, "skipped": skipped}
    out.mkdir(parents=True, exist_ok=True)
    write_json(out / SUMMARY_FILE, summary)
    return summary
