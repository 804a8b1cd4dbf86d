"""Record one run: a policy's tool calls on a fresh copy of a task's repo, graded after every change.

Writes ``<out>/<run-id>/`` as it goes (docs/formats.md): ``journal.jsonl`` gets one line per
finished step, appended and fsynced; ``trajectory.json`` and ``run.json`` are rewritten
atomically after every step. An interrupted run loses at most the step in flight: run the
same command again and it resumes from the journal.
"""

from __future__ import annotations

import shutil
import tempfile
import time
from pathlib import Path

from alertforge.errors import BadInput
from alertforge.files import read_json, write_json
from alertforge.ids import check_id
from alertforge.tasks import task_fingerprint
from grader.grade import grade
from recorder import run_format
from recorder.journal import append_step, read_journal, rewrite_journal
from recorder.policies import make_agent
from recorder.tools import FILE_CHANGING_TOOLS, run_tool


def run_id_for(task_id: str, policy: str, seed: int) -> str:
    """``<task-id>__<policy>__s<seed>`` (``:`` in a policy name becomes ``-``)."""
    return f"{task_id}__{policy.replace(':', '-')}__s{seed}"


def _task_meta(task_dir: Path) -> dict:
    spec_path = task_dir / "tests" / "spec.json"
    spec = read_json(spec_path)
    if not isinstance(spec, dict):
        raise BadInput(spec_path, "expected a JSON object (the task's world spec)")
    task_id = check_id(spec.get("task_id", task_dir.name), "task_id", spec_path)
    return {"id": task_id, "dir": str(task_dir),
            "workflow": spec.get("workflow"), "tier": spec.get("tier"), "seed": spec.get("seed"),
            "fingerprint": task_fingerprint(task_dir)}


SCRIPTED = ("oracle", "nop", "partial", "mutant", "adversary:")
"""Deterministic reference policies: a stale run of one is simply recorded again."""


def _stale(old: dict, meta: dict, catalog: dict) -> bool:
    """Whether an existing run was recorded on another version of the task: its fingerprint
    differs, or (runs from before fingerprints) its check ids differ from the catalog's."""
    recorded = (old.get("task") or {}).get("fingerprint")
    if recorded:
        return recorded != meta["fingerprint"]
    return [c.get("id") for c in old.get("checks") or []] != [c["id"] for c in catalog.get("checks", [])]


def record_run(task_dir: Path, policy: str, *, seed: int = 0, out: Path = Path("runs"),
               resume: bool = True, options: dict | None = None, max_steps: int = 60) -> Path:
    """Record ``policy`` on the task at ``task_dir``; returns the run folder.

    ``options`` go to an interactive agent's factory (model, base URL, ...); at most
    ``max_steps`` agent steps are taken.

    A complete run in ``out`` is returned as it is; an interrupted one resumes. A run recorded
    on another version of the task (``task.fingerprint`` in run.json differs) is recorded
    again when its policy is a scripted reference policy, and refused otherwise.

    Raises:
        BadInput: unknown policy, a task folder without its spec/catalog/solution, or a
            non-scripted run recorded on another version of the task.
    """
    task_dir = Path(task_dir).resolve()
    agent = make_agent(policy, task_dir, seed, options)
    meta = _task_meta(task_dir)
    run_id = check_id(run_id_for(meta["id"], policy, seed), "run id", f"--policy {policy}")
    if Path(out).exists() and not Path(out).is_dir():
        raise BadInput(out, "output path exists and is not a folder")
    run_dir = Path(out) / run_id
    journal = run_dir / "journal.jsonl"
    if run_dir.exists():
        existing = run_dir / "run.json"
        if resume and (existing.exists() or existing.is_symlink()):
            old = read_json(existing)
            if not isinstance(old, dict):
                raise BadInput(existing, "not a run summary (expected a JSON object); move this "
                               "run folder away or record with --fresh")
            if _stale(old, meta, read_json(task_dir / "tests" / "checks.json")):
                if not policy.startswith(SCRIPTED):
                    raise BadInput(existing, f"recorded on another version of task {meta['id']} "
                                   "(its files or checks changed since); move this run folder "
                                   "away or record into another --out")
                shutil.rmtree(run_dir)  # a scripted policy: recording it again gives the same run
            elif old.get("status") == "complete":
                return run_dir
        if not resume and run_dir.exists():
            shutil.rmtree(run_dir)
    run_dir.mkdir(parents=True, exist_ok=True)
    done = read_journal(journal) if resume else []
    if done:  # rewrite without a torn tail
        rewrite_journal(journal, done)

    started = time.perf_counter()
    catalog = read_json(task_dir / "tests" / "checks.json")
    summary = {
        "version": run_format.RUN_VERSION, "run_id": run_id, "kind": "alerting",
        "status": "running", "task": meta, "policy": policy, "seed": seed, "model": agent.model,
        "agent": {"name": run_format.AGENT_NAME, "version": run_format.__version__},
        "steps": 0, "final": None,
        "requirements": [{k: r[k] for k in ("id", "kind", "weight", "title")}
                         for r in catalog.get("requirements", [])],
        "checks": [{k: c[k] for k in ("id", "req", "family", "label", "note")}
                   for c in catalog.get("checks", [])],
        "started_at": run_format.now(), "finished_at": None,
        "timings": {"wall_s": 0.0, "grade_s": 0.0, "grades": 0}, "error": None,
    }
    grade_s, grades = 0.0, 0
    with tempfile.TemporaryDirectory(prefix="alertforge-run-") as tmp:
        workspace = Path(tmp) / "monitoring"
        shutil.copytree(task_dir / "environment" / "monitoring", workspace)
        steps: list[dict] = list(done)
        last_reward = None
        for step in steps:  # replay finished steps onto the workspace
            for call in step.get("tool_calls") or []:
                if call["function_name"] in FILE_CHANGING_TOOLS:
                    run_tool(workspace, call["function_name"], call["arguments"])
            grade_info = (step.get("extra") or {}).get("grade")
            if grade_info:
                last_reward = grade_info["reward"]
        instruction = (task_dir / "instruction.md").read_text(encoding="utf-8")
        agent.begin(task_dir, instruction, seed)
        if not steps:
            result = grade(task_dir, workspace)
            grade_s += result["timings"]["total_s"]
            grades += 1
            initial = run_format.grade_summary(result, None)
            last_reward = initial["reward"]
            steps.append(run_format.user_step(instruction, initial))
            append_step(journal, steps[-1])
        else:
            agent.resume(steps[1:])
        last_output = None
        if len(steps) > 1:
            last_output = steps[-1]["observation"]["results"][0]["content"]
        finished = any(s.get("tool_calls") and s["tool_calls"][0]["function_name"] == "submit"
                       for s in steps)
        while not finished and len(steps) - 1 < max_steps:
            decision = agent.decide(last_output)
            if decision is None:
                break
            step_id = len(steps) + 1
            outcome = run_tool(workspace, decision.name, decision.arguments)
            extra = dict(decision.extra)
            if outcome.changed:
                extra["changed_files"] = [outcome.changed]
                if decision.name != "write_file":  # the file's new content, for per-step diffs
                    extra["edits"] = [{"path": outcome.changed, "content": (
                        workspace / outcome.changed).read_text(encoding="utf-8")}]
                try:
                    result = grade(task_dir, workspace)
                except RuntimeError as err:  # promtool/amtool failed in a way no check explains
                    extra["grade_error"] = str(err)
                else:
                    grade_s += result["timings"]["total_s"]
                    grades += 1
                    extra["grade"] = run_format.grade_summary(result, last_reward)
                    last_reward = result["reward"]
            if outcome.error:
                extra["tool_error"] = True
            steps.append(run_format.agent_step(
                step_id, decision.name, decision.arguments, outcome.output, decision.message, extra,
                llm=agent.llm, reasoning=decision.reasoning, metrics=decision.metrics,
                model=decision.model))
            append_step(journal, steps[-1])
            _write_state(run_dir, run_id, steps, summary, started, grade_s, grades, final=False)
            last_output = outcome.output
            finished = outcome.done
        _write_state(run_dir, run_id, steps, summary, started, grade_s, grades, final=True)
    return run_dir


def _final_grade(steps: list[dict]) -> dict | None:
    for step in reversed(steps):
        grade_info = (step.get("extra") or {}).get("grade")
        if grade_info:
            return grade_info
    return None


def _write_state(run_dir: Path, run_id: str, steps: list[dict], summary: dict, started: float,
                 grade_s: float, grades: int, final: bool) -> None:
    doc = run_format.trajectory(run_id, steps)
    run_format.validate(doc)
    write_json(run_dir / "trajectory.json", doc)
    last = _final_grade(steps)
    summary = dict(summary)
    summary["steps"] = len(steps)
    summary["timings"] = {"wall_s": round(time.perf_counter() - started, 3),
                          "grade_s": round(grade_s, 3), "grades": grades}
    if last is not None:
        summary["final"] = {"reward": last["reward"], "solved": bool(last["keys"]["solved"]),
                            "keys": last["keys"], "requirements": last["requirements"]}
    if final:
        summary["status"] = "complete"
        summary["finished_at"] = run_format.now()
    write_json(run_dir / "run.json", summary)


def load_run(run_dir: Path) -> dict:
    """run.json of a run folder (BadInput when missing or malformed)."""
    path = Path(run_dir) / "run.json"
    data = read_json(path)
    if not isinstance(data, dict) or "run_id" not in data:
        raise BadInput(path, "not a run summary (no run_id)")
    return data
