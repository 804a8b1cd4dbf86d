"""Harbor trials imported as runs: task matched, steps normalized and replayed, run written.

``import_harbor(paths, out)`` reads every trial under each job folder (a trial folder or
a bare ATIF trajectory file may be given too, :func:`~recorder.importers.harbor.trials.find_trials`)
and writes one run folder per readable trial (docs/formats.md, "Imported runs"). File
edits are rebuilt from the tool calls (:mod:`recorder.importers.shell`) and, when the
trial's task is one under ``tasks/``, replayed onto the task's pristine repo and graded
after every step that changed it (:mod:`recorder.importers.harbor.replay`). Each run is
labelled ``exact``, ``approximate`` (the lossy steps named) or ``terminal-only`` (no
trajectory: only Harbor's reward is known). A trial that cannot be read at all is listed
with the reason in ``<out>/harbor-import.json``, never dropped silently. Both rewards are
kept: ``harbor.reward`` (the verifier's) and ``regrade``.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from contract.base import dump, parse
from contract.errors import BadInput
from contract.files import write_atomic, write_json
from contract.ids import slug_id
from contract.paths import TASKS_DIR, task_dirs
from contract.run import AgentRef, Final, RunSummary, TaskRef, Timings
from contract.task import CheckCatalog
from contract.task_roots import task_fingerprint, task_id_of
from contract.untrusted import Tree
from engine import Engine, LocalEngine
from recorder import run_format
from recorder.importers.harbor.job_files import ReadBudget
from recorder.importers.harbor.media import Media, collect_media
from recorder.importers.harbor.normalize import normalize_steps, take_agent, validation_errors
from recorder.importers.harbor.replay import Replayed, replay_steps
from recorder.importers.harbor.subagents import nest
from recorder.importers.harbor.task_match import TaskIndex, TaskMatch
from recorder.importers.harbor.token_totals import token_totals
from recorder.importers.harbor.trials import (
    Trial,
    find_trials,
    harbor_reward,
    harbor_reward_key,
    read_trial,
)
from recorder.run_store import RunStore, make_identity, new_summary

SUMMARY_FILE = "harbor-import.json"
IMPORT_VERSION = 1


def _task_index(tasks_dir: Path | None) -> TaskIndex:
    index = {}
    for folder in task_dirs(tasks_dir or TASKS_DIR):
        index[folder.name] = folder
        index[task_id_of(folder)] = folder
    return TaskIndex(index)


def _match(trial: Trial, names: list[str], tasks: TaskIndex) -> TaskMatch:
    """The local task of ``trial`` by content (docs: recorder.importers.harbor.task_match)."""
    lock = trial.parts.get("lock") or {}
    return tasks.match(names, trial.parts.get("checksum"), lock.get("digest"))


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



@dataclass
class AgentFacts:
    """Who ran the trial: the agent's ``name`` and ``version``, and its ``model`` (or None)."""

    name: str
    version: str
    model: str | None


def _agent(trial: Trial) -> AgentFacts:
    """The agent, from the trajectory's agent block, else Harbor's config and agent_info.

    The model is named as the job configured it (``config.agent.model_name``, Harbor's
    ``provider/name``, as agents write it in their trajectory) before agent_info's
    ``model_info`` (``provider`` and ``name`` joined the same way): a trial that errored before
    writing a trajectory is then counted with the job's other trials, not as another model."""
    agent_block = _obj(_obj(trial.trajectory).get("agent"))
    result = _obj(trial.result)
    agent_info = _obj(result.get("agent_info"))
    model_info = _obj(agent_info.get("model_info"))
    named = model_info.get("name")
    if isinstance(named, str) and isinstance(model_info.get("provider"), str) and "/" not in named:
        named = f"{model_info['provider']}/{named}"
    model = agent_block.get("model_name") or _obj(_obj(result.get("config")).get("agent")).get("model_name") or named
    return AgentFacts(
        name=str(agent_block.get("name") or agent_info.get("name") or "unknown-agent"),
        version=str(agent_block.get("version") or agent_info.get("version") or "unknown"),
        model=model if isinstance(model, str) else None)


def _store(trial: Trial) -> tuple[str, str, dict]:
    """``(readable id, source kind, identity)`` of the trial's run (docs/formats.md, run ids)."""
    prefix = "harbor" if trial.path.is_dir() else "atif"
    readable = slug_id(f"{prefix}__{trial.job}__{trial.name}" if prefix == "harbor"
                       else f"{prefix}__{trial.name}")
    source = "harbor" if prefix == "harbor" else "atif-file"
    return readable, source, make_identity(source, {"source": str(Path(trial.path).resolve())})


@dataclass
class TaskFacts:
    """The task a trial ran, as the run stores it: ``meta`` (TaskRef fields), the catalog's
    ``requirements`` and ``checks`` (empty for an unknown task) and its ``instruction``."""

    meta: dict
    requirements: list
    checks: list
    instruction: str | None = None


def _task(trial: Trial, names: list[str], task_dir: Path | None, task_fp: str | None) -> TaskFacts:
    """What the run records of its task (an unknown one keeps the trial's task name)."""
    if task_dir:
        catalog_path = task_dir / "tests" / "checks.json"
        catalog = parse(CheckCatalog, Tree(task_dir).read_json("tests/checks.json"), catalog_path,
                        "check catalog")
        requirements, checks = catalog.requirement_refs(), catalog.check_refs()
        catalog_version = catalog.catalog_version
    else:
        requirements, checks, catalog_version = [], [], None
    meta = {"id": names[0] if names else "unknown", "dir": None, "workflow": None, "tier": None,
            "seed": None, "known": False, "name": names[0] if names else None}
    if task_dir:
        spec = Tree(task_dir).read_json("tests/spec.json")
        meta.update(id=spec.get("task_id", task_dir.name), dir=str(task_dir), known=True,
                    workflow=spec.get("workflow"), tier=spec.get("tier"), seed=spec.get("seed"),
                    fingerprint=task_fp, catalog_version=catalog_version)
    meta["id"] = slug_id(meta["id"]) if meta["id"] else "unknown"
    if not task_dir and trial.path.is_file():
        meta["id"], meta["name"] = "unknown", None
    return TaskFacts(meta, requirements, checks)


def _steps(trial: Trial, task: TaskFacts, task_dir: Path | None, names: list[str],
           match: TaskMatch) -> tuple[list[dict], str, list[str]]:
    """``(steps, replay label, notes)``: the normalized steps, led by a user step holding the
    task's instruction when the trajectory starts with the agent, or that one step alone
    when there is no trajectory (then ``terminal-only``). Clears an empty trajectory."""
    steps = normalize_steps(trial.trajectory) if trial.trajectory is not None else []
    instruction = Tree(task_dir).read_text("instruction.md", errors="replace") if task_dir else None
    task.instruction = instruction
    replay = "terminal-only" if not steps else "exact"
    notes = list(trial.notes) + ([match.note] if match.note else [])
    if not task_dir and not match.note:
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
    return steps, replay, notes


def _final(trial: Trial, steps: list[dict], replayed: Replayed) -> tuple[Final | None, dict | None]:
    """``(final, regrade)``: the last step grade's when the steps were graded, else
    Harbor's reward (``source`` "harbor"), else None.

    The last step grade is the one the replay made (``replayed.step_grades``) or, on a step
    it did not grade, the one the trial's own trajectory carries.

    Raises:
        BadInput: that trajectory's step grade is not a step grade block.
    """
    reward = harbor_reward(trial.rewards)
    last_grade = None
    if replayed.replay != "terminal-only":
        position = next((i for i in range(len(steps) - 1, -1, -1)
                         if "grade" in (steps[i].get("extra") or {})), None)
        if position is not None:
            last_grade = replayed.step_grades.get(position) or run_format.step_grade(
                steps[position], trial.trajectory_path or trial.path)
    if last_grade is not None:
        regrade = {"reward": last_grade.reward, "solved": bool(last_grade.keys["solved"])}
        return run_format.final_from_grades([last_grade], "regrade"), regrade
    if reward is not None:
        return Final(reward=reward, solved=reward >= 1.0, keys={}, requirements={},
                     source="harbor"), None
    return None, None


def import_trial(trial: Trial, out: Path, tasks: TaskIndex, *, grade: bool = True) -> dict:
    """Write the run of one readable trial; returns its summary row (see :func:`import_harbor`).

    A run already imported from the same trial files and task is left as it is
    (``unchanged``); one whose files or task changed is imported again (``replaced``).
    ``grade`` False: the steps are not re-graded (a trial whose task cannot be graded here).

    Raises:
        run_format.InvalidTrajectory: the normalized trajectory still fails ATIF validation.
        RuntimeError: the task's pristine repo cannot be graded.
    """
    started = time.perf_counter()
    names = _task_names(trial)
    match = _match(trial, names, tasks)
    if not grade and match.task_dir is not None:
        match = TaskMatch(None, None, f"{match.task_dir.name} could not be graded here: "
                          "imported without re-grading")
    task_dir = match.task_dir
    agent = _agent(trial)
    readable, source, identity = _store(trial)
    task_fp = task_fingerprint(task_dir) if task_dir else None
    store = RunStore(out, readable, identity)

    def changed(old: RunSummary) -> str | None:
        if (old.harbor or {}).get("fingerprint") != trial.fingerprint:
            return "the trial's files changed since it was imported: imported again"
        if old.task.fingerprint != task_fp:
            return "the matching task changed since the import: imported again"
        return None

    opened = store.open(replace_if=changed)
    if opened.state == "unchanged":
        return _row(dump(opened.summary), trial, unchanged=True, replaced=None)
    task = _task(trial, names, task_dir, task_fp)
    errors = trial.validation_errors if trial.validation_errors is not None else (
        validation_errors(trial.trajectory) if trial.trajectory is not None else [])
    steps, replay, notes = _steps(trial, task, task_dir, names, match)
    replayed = replay_steps(steps, task_dir, replay, trial.trajectory is not None)
    notes += replayed.notes
    final, regrade = _final(trial, steps, replayed)
    refused: list[dict] = []
    doc = _trajectory_doc(trial, store.run_id, steps, agent.name, refused)
    media = collect_media(doc, trial.files, trial.trajectory_base)
    run_format.validate(doc)
    summary = _summary(store, _Imported(
        trial=trial, source=source, agent=agent, task=task, steps=steps, final=final,
        regrade=regrade, replayed=replayed, notes=notes, errors=errors, legacy_id=readable,
        wall_s=round(time.perf_counter() - started, 3),
        nested=_nested_facts(doc, media, refused, match)))
    _write_media(store.dir, media)
    store.write_whole(summary, doc)
    return _row(dump(summary), trial, unchanged=False, replaced=opened.replaced)


@dataclass(frozen=True)
class _Imported:
    """What one trial's import made, for its run.json: the trial and its source, agent and
    task facts, the normalized steps, the final result and re-grade, the replay, notes and
    validation errors, the legacy id, the wall time (s) and the nested facts."""

    trial: Trial
    source: str
    agent: AgentFacts
    task: TaskFacts
    steps: list[dict]
    final: Final | None
    regrade: dict | None
    replayed: Replayed
    notes: list[str]
    errors: list[str]
    legacy_id: str
    wall_s: float
    nested: dict


def _summary(store: RunStore, imported: _Imported):
    """The run's run.json (a RunSummary), with Harbor's own facts under ``harbor``: the
    trial's parts (:func:`~recorder.importers.harbor.trial_parts.trial_parts`) and
    ``nested`` (:func:`_nested_facts`)."""
    trial, agent, task, replayed = imported.trial, imported.agent, imported.task, imported.replayed
    steps, final, regrade, notes = imported.steps, imported.final, imported.regrade, imported.notes
    source, errors, legacy_id, wall_s = imported.source, imported.errors, imported.legacy_id, imported.wall_s
    nested = imported.nested
    result = _obj(trial.result)
    return new_summary(
        store, status="complete", source=source, kind="alerting", task=TaskRef(**task.meta),
        policy=agent.name, seed=None, model=agent.model,
        agent=AgentRef(name=agent.name, version=agent.version),
        steps=len(steps), final=final, requirements=task.requirements, checks=task.checks,
        started_at=result.get("started_at"), finished_at=result.get("finished_at"),
        timings=Timings(wall_s=wall_s, grade_s=round(replayed.grade_s, 3), grades=replayed.grades),
        tools=replayed.tools,
        error=_exception(result), replay=replayed.replay, graded=replayed.grades > 0,
        lossy_steps=replayed.lossy_steps, notes=notes, regrade=regrade,
        validation_errors=errors, legacy_id=legacy_id,
        harbor={"job": trial.job, "trial": trial.name, "path": str(trial.path),
                "trajectory": str(trial.trajectory_path) if trial.trajectory_path else None,
                "schema_version": (trial.trajectory or {}).get("schema_version"),
                "reward": harbor_reward(trial.rewards), "reward_key": harbor_reward_key(trial.rewards),
                "rewards": trial.rewards,
                "reward_source": trial.reward_source,
                "agent_result": result.get("agent_result"), "fingerprint": trial.fingerprint,
                **trial.parts, **nested})


def _nested_facts(doc: dict, media: Media, refused: list[dict], match: TaskMatch) -> dict:
    """``{task_match: {how, note}, tokens, media, subagents: [{trajectory_id, steps}],
    refused_subagents: [{trajectory_id, reason}]}`` for the run's ``harbor`` block."""
    return {"task_match": {"how": match.how, "note": match.note},
            "tokens": token_totals(doc), "media": media.listed,
            "subagents": [{"trajectory_id": s["trajectory_id"], "steps": len(s["steps"])}
                          for s in doc.get("subagent_trajectories") or []],
            "refused_subagents": [{"trajectory_id": r["trajectory_id"], "reason": r["reason"]}
                                  for r in refused]}


def _write_media(run_dir: Path, media: Media) -> None:
    """The media files of the run into ``<run>/media/`` (each atomically)."""
    for name, data in media.files.items():
        write_atomic(run_dir / "media" / name, data)


def _exception(result: dict) -> str | None:
    info = result.get("exception_info")
    if isinstance(info, dict):
        return f"{info.get('exception_type')}: {info.get('exception_message')}"
    return None


def _trajectory_doc(trial: Trial, run_id: str, steps: list[dict], agent_name: str,
                    refused: list[dict]) -> dict:
    """The run's ATIF document (the newest version the ``atif`` package validates): the
    original agent block and metrics when they validate, and the embedded subagents nested
    (:func:`~recorder.importers.harbor.subagents.nest`; one that cannot be made valid goes
    to ``refused`` and ``extra.source_subagents``)."""
    source = trial.trajectory or {}
    doc = {"schema_version": run_format.SCHEMA_VERSION,
           "session_id": str(source.get("session_id") or run_id),
           "agent": {"name": agent_name, "version": "unknown"}, "steps": steps,
           "extra": {"imported_from": {"path": str(trial.trajectory_path or trial.path),
                                       "schema_version": source.get("schema_version")}}}
    take_agent(doc, source.get("agent"))
    for key in ("final_metrics", "notes", "trajectory_id"):
        if source.get(key) is not None:
            candidate = dict(doc, **{key: source[key]})
            if not validation_errors(candidate):
                doc = candidate
    subagents = nest(source, 0, refused)
    if subagents:
        doc["subagent_trajectories"] = subagents
    if refused:
        doc["extra"]["source_subagents"] = refused
    run_format.validate(doc)
    return doc


def _row(summary: dict, trial: Trial, *, unchanged: bool, replaced: str | None) -> dict:
    harbor = summary.get("harbor") or {}
    return {"run_id": summary["run_id"], "path": str(trial.path), "task_id": summary["task"]["id"],
            "task_known": summary["task"].get("known", False), "replay": summary.get("replay"),
            "lossy_steps": len(summary.get("lossy_steps") or []),
            "harbor_reward": harbor.get("reward"), "harbor_reward_key": harbor.get("reward_key"),
            "rewards": harbor.get("rewards"),
            "task_match": (harbor.get("task_match") or {}).get("how"),
            "task_note": (harbor.get("task_match") or {}).get("note"),
            "exception": (harbor.get("exception") or {}).get("type"),
            "multi_step": [s["name"] for s in harbor.get("steps") or []],
            "failed_artifacts": sorted({a for part in [harbor, *(harbor.get("steps") or [])]
                                        for a in (part.get("artifacts") or {}).get("failed", [])}),
            "regrade_reward": (summary.get("regrade") or {}).get("reward"),
            "validation_errors": len(summary.get("validation_errors") or []),
            "result_problem": trial.result_problem if trial.files and trial.files.kind("result.json") != "missing"
            else None,
            "unchanged": unchanged, "replaced": replaced}


def _import_or_ungraded(trial: Trial, out: Path, tasks: TaskIndex) -> dict:
    """:func:`import_trial`, or, when the trial's task cannot be graded here (a tool or the
    file system failing), the trial imported without re-grading, with the reason noted."""
    try:
        return import_trial(trial, out, tasks)
    except (RuntimeError, OSError) as err:
        trial.notes.append(f"re-grading failed ({type(err).__name__}: {str(err)[:200]})")
        return import_trial(trial, out, tasks, grade=False)


def import_harbor(paths: list[Path], out: Path, tasks_dir: Path | None = None,
                  engine: Engine | None = None, *, regrade: bool = True) -> dict:
    """Import every trial under ``paths`` into run folders under ``out``.

    Trials are imported in this process, one at a time with the local ``engine`` (the
    default), several at once with a Ray engine, whose workers make the per-step grades.

    Returns (and writes atomically to ``<out>/harbor-import.json``)::

        {version, trials_in, runs_out,
         imported: [{run_id, path, task_id, task_known, task_match, task_note, replay, lossy_steps,
                     harbor_reward, harbor_reward_key, regrade_reward, rewards, exception, multi_step,
                     failed_artifacts, validation_errors, unchanged}],
         skipped: [{path, reason}]}

    ``trials_in`` counts the trial folders and trajectory files found (links and folders
    that are no trial are only in ``skipped``); each is a run (``imported``) or skipped.

    A trial already imported from the same files (fingerprint) is not graded again
    (``unchanged`` true). ``regrade`` False matches no local task, so no trial is graded
    (each run says so in its notes; Harbor's own rewards are kept).

    Raises:
        BadInput: a path is missing or holds no trial, ``out`` is a file, or the tasks
            folder is missing.
    """
    out = Path(out)
    if out.exists() and not out.is_dir():
        raise BadInput(out, "output path exists and is not a folder")
    tasks = _task_index(tasks_dir) if regrade else TaskIndex({})
    found, skipped = find_trials([Path(p) for p in paths])
    imported = []
    budget = ReadBudget()
    engine = engine or LocalEngine()
    started = []
    with engine.pool(1, writes=True) as pool:  # in order; several at once on a Ray engine
        for path, job, root in found:
            trial = read_trial(path, job, root, budget)
            started.append((path, [r for r in (trial.result_problem, trial.trajectory_problem) if r],
                            pool.submit(_import_or_ungraded, trial, out, tasks) if trial.readable else None))
    for path, reasons, future in started:
        if future is None:
            skipped.append({"path": str(path), "reason": "; ".join(reasons) or "nothing readable"})
            continue
        try:
            imported.append(future.result())
        except run_format.InvalidTrajectory as err:
            skipped.append({"path": str(path), "reason": f"trajectory cannot be normalized: {err}"})
        except (TypeError, ValueError, AttributeError, KeyError, IndexError) as err:
            # a shape no rule above expected: this trial is listed, the others still import
            skipped.append({"path": str(path), "reason": "its files have a shape the importer "
                            f"cannot read ({type(err).__name__}: {str(err)[:200]})"})
    summary = {"version": IMPORT_VERSION, "trials_in": len(found), "runs_out": len(imported),
               "imported": imported, "skipped": skipped}
    out.mkdir(parents=True, exist_ok=True)
    write_json(out / SUMMARY_FILE, summary)
    return summary
