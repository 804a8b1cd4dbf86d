"""Record one run: a policy's tool calls on a fresh copy of a task's repo, graded after every change.

Writes ``<out>/<run-id>/`` through the one run lifecycle (:mod:`recorder.run_store`):
``journal.jsonl`` gets one line per finished step, appended and fsynced; ``trajectory.json``
and ``run.json`` are rewritten atomically after every step. An interrupted run loses at most
the step in flight: run the same command again and it resumes from the journal.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from contract.base import dump, parse
from contract.errors import BadInput
from contract.files import read_json
from contract.grade import GradeBlock
from contract.ids import check_id
from contract.run import AgentRef, RunSummary, TaskRef, Timings
from contract.task import CheckCatalog, WorldSpec
from contract.task_roots import task_fingerprint
from contract.untrusted import Tree
from recorder import run_format
from recorder.environments.graded import GradedWorkspace
from recorder.policies import make_agent
from recorder.run_store import RunStore, make_identity, new_summary

SCRIPTED = ("oracle", "nop", "partial", "mutant", "adversary:")
"""Deterministic reference policies: a run of one made on another version of its task is
simply recorded again."""
DEFAULT_MAX_STEPS = 60
NOT_DEFINING = frozenset({"api_key_env", "price_input", "price_output", "base_url", "timeout",
                          "max_retries"})
"""Policy options that are not the agent: the key's variable, prices (what a run reports),
the endpoint's address (where the model is served; a resume may reach it at another port)
and how long and how often to wait for a reply (a resume after a timeout may wait longer)."""


def readable_id(task_id: str, policy: str, seed: int) -> str:
    """``<task-id>__<policy>__s<seed>`` (``:`` in a policy name becomes ``-``): the readable
    part of a recorded run's id, and the whole id before run.json version 2."""
    return f"{task_id}__{policy.replace(':', '-')}__s{seed}"


def run_identity(task_id: str, policy: str, seed: int, options: dict | None = None,
                 max_steps: int = DEFAULT_MAX_STEPS):
    """What defines a recorded run: the task, the policy and its options, the seed, the step
    limit (:func:`recorder.run_store.make_identity`)."""
    behaviour = {k: v for k, v in sorted((options or {}).items()) if k not in NOT_DEFINING}
    return make_identity("record", {"task": task_id, "policy": policy, "seed": seed,
                                    "options": behaviour, "max_steps": max_steps})


def run_id_for(task_id: str, policy: str, seed: int, options: dict | None = None,
               max_steps: int = DEFAULT_MAX_STEPS) -> str:
    """The run id ``record`` gives: ``<readable>__<10 hex of the identity>``."""
    from recorder.run_store import run_id_of

    return run_id_of(readable_id(task_id, policy, seed), run_identity(task_id, policy, seed, options,
                                                                      max_steps))


def task_ref(task_dir: Path) -> tuple[TaskRef, CheckCatalog]:
    """The run's reference to the task at ``task_dir`` (id, fingerprint, catalog release)
    and its check catalog, read through the safe-read path. BadInput when the spec or the
    catalog is missing or malformed."""
    tree = Tree(task_dir)
    spec_path = task_dir / "tests" / "spec.json"
    spec = parse(WorldSpec, tree.read_json("tests/spec.json"), spec_path, "world spec")
    task_id = check_id(spec.task_id, "task_id", spec_path)
    catalog_path = task_dir / "tests" / "checks.json"
    catalog = parse(CheckCatalog, tree.read_json("tests/checks.json"), catalog_path, "check catalog")
    return TaskRef(id=task_id, dir=str(task_dir), workflow=spec.workflow, tier=spec.tier,
                   seed=spec.seed, fingerprint=task_fingerprint(task_dir),
                   catalog_version=catalog.catalog_version), catalog


def _stale_reason(old: RunSummary, task: TaskRef, catalog: CheckCatalog, policy: str) -> str | None:
    """Why an existing run must be recorded again (its task changed), or None.

    Raises:
        BadInput: the task changed under a non-scripted run (an LLM's run cannot be redone).
    """
    recorded = old.task.fingerprint
    changed = (recorded != task.fingerprint) if recorded else (
        [c.id for c in old.checks] != [c.id for c in catalog.checks])
    if not changed:
        return None
    if not policy.startswith(SCRIPTED):
        raise BadInput(Path(old.task.dir or ".") / "tests", f"task {task.id} changed since run "
                       f"{old.run_id} was recorded (its files or checks differ); move that run "
                       "folder away or record into another --out")
    return f"task {task.id} changed since it was recorded: recorded again"


REUSED_SAYS = ": reused the complete run already in "
"""What :func:`record_run` reports (after the run id) when it reuses a complete run."""


def record_run(task_dir: Path, policy: str, *, seed: int = 0, out: Path = Path("runs"),
               resume: bool = True, options: dict | None = None,
               max_steps: int = DEFAULT_MAX_STEPS, report=None) -> Path:
    """Record ``policy`` on the task at ``task_dir``; returns the run folder.

    ``options`` go to an interactive agent's factory (model, base URL, ...) and are part of
    the run's identity; at most ``max_steps`` agent steps are taken. ``report(line)`` is told
    when an old run is replaced or a complete one reused.

    A complete run of the same identity in ``out`` is returned as it is; an interrupted one
    resumes. A run recorded on another version of the task (``task.fingerprint`` differs) is
    recorded again when its policy is a scripted reference policy, and refused otherwise;
    ``resume=False`` (``--fresh``) records anew.

    Raises:
        BadInput: unknown policy, a task folder without its spec/catalog/solution, a run
            folder holding another run, or a non-scripted run recorded on another version of
            the task.
    """
    task_dir = Path(task_dir).resolve()
    agent = make_agent(policy, task_dir, seed, options)
    task, catalog = task_ref(task_dir)
    identity = run_identity(task.id, policy, seed, options, max_steps)
    store = RunStore(Path(out), readable_id(task.id, policy, seed), identity)
    opened = store.open(fresh=not resume,
                        replace_if=lambda old: _stale_reason(old, task, catalog, policy))
    if opened.replaced and report is not None:
        report(f"{store.run_id}: {opened.replaced}")
    if opened.state == "unchanged":
        if report is not None:
            report(f"{store.run_id}{REUSED_SAYS}{store.dir} "
                   "(--fresh records it again)")
        return store.dir
    summary = new_summary(
        store, kind="alerting", source="record", task=task, policy=policy, seed=seed,
        model=agent.model, agent=AgentRef(name=run_format.AGENT_NAME, version=run_format.__version__),
        requirements=catalog.requirement_refs(), checks=catalog.check_refs(),
        started_at=(opened.summary.started_at if opened.summary else None) or run_format.now(),
        finished_at=None, timings=Timings(), error=None, final=None,
        tools=opened.summary.tools if opened.summary else None,
        legacy_id=readable_id(task.id, policy, seed))
    steps = list(opened.steps)
    store.start(steps)
    recording = _Recording(store, summary, steps)
    with GradedWorkspace(task_dir) as workspace:
        recording.workspace = workspace
        recording.replay()
        instruction = Tree(task_dir).read_text("instruction.md")
        if not steps:
            initial = workspace.grade().summary
            recording.add(run_format.user_step(instruction, initial), initial)
        agent.resume(steps)
        if getattr(agent, "endpoint", None):  # policy llm: the server as it described itself
            recording.summary = recording.summary.model_copy(update={"endpoint": agent.endpoint})
        _act(agent, recording, max_steps)
        recording.finish()
    return store.dir


def _act(agent, recording: _Recording, max_steps: int) -> None:
    """Ask the agent for tool calls and run them until it submits, stops or hits ``max_steps``."""
    steps, workspace = recording.steps, recording.workspace
    last_output = steps[-1]["observation"]["results"][0]["content"] if len(steps) > 1 else None
    finished = any(s.get("tool_calls") and s["tool_calls"][0]["function_name"] == "submit"
                   for s in steps)
    while not finished and len(steps) - 1 < max_steps:
        decision = agent.decide(last_output, len(steps) - 1)
        if decision is None:
            break
        outcome = workspace.call(decision.name, decision.arguments)
        tool, extra, grade = outcome.tool, dict(decision.extra), None
        if tool.changed:
            extra["changed_files"] = [tool.changed]
            if decision.name != "write_file":  # the file's new content, for per-step diffs
                extra["edits"] = [{"path": tool.changed, "content": (
                    workspace.root / tool.changed).read_text(encoding="utf-8")}]
            if outcome.graded.error is not None:  # promtool/amtool failed, no check explains it
                extra["grade_error"] = outcome.graded.error
            else:
                grade = outcome.graded.summary
                extra["grade"] = dump(grade)
        if tool.error:
            extra["tool_error"] = True
        recording.add(run_format.agent_step(
            len(steps) + 1, decision.name, decision.arguments, tool.output, decision.message,
            extra, inference=decision if decision.llm else None), grade)
        agent.observe(steps[-1])
        last_output = tool.output
        finished = tool.done


class _Recording:
    """The state of one recording: its steps (as their files hold them), their grades (typed,
    in step order) and graded workspace; writes through the run's store after every step.

    Raises:
        BadInput: a resumed step's ``extra.grade`` in the journal is not a step grade.
    """

    def __init__(self, store: RunStore, summary: RunSummary, steps: list[dict[str, Any]]):
        self.store, self.summary, self.steps = store, summary, steps
        self.grades: list[GradeBlock] = [grade for grade in (
            run_format.step_grade(step, store.journal) for step in steps) if grade is not None]
        self.started = time.perf_counter()
        self.workspace: GradedWorkspace | None = None

    def replay(self) -> None:
        """Put the journal's file changes back onto the fresh workspace (no grading) and take
        up the last graded level."""
        for step in self.steps:
            for call in step.get("tool_calls") or []:
                self.workspace.replay(call["function_name"], call["arguments"])
        if self.grades:
            self.workspace.level = self.grades[-1].reward

    def add(self, step: dict[str, Any], grade: GradeBlock | None = None) -> None:
        """Append ``step`` (its ``extra.grade``, if any, is ``dump(grade)``) and write."""
        if grade is not None:
            self.grades.append(grade)
        self.steps.append(step)
        self.store.append(step)
        self._write()

    def finish(self) -> None:
        self._write(status="complete", finished_at=run_format.now())

    def _write(self, **fields: Any) -> None:
        self.summary = self.summary.model_copy(update={
            "steps": len(self.steps), "final": run_format.final_from_grades(self.grades, "grade"),
            "tools": self.workspace.tools or self.summary.tools,
            "timings": Timings(wall_s=round(time.perf_counter() - self.started, 3),
                               grade_s=round(self.workspace.grade_s, 3),
                               grades=self.workspace.grades),
            **fields})
        self.store.write(self.summary, run_format.trajectory(self.store.run_id, self.steps))


def load_run(run_dir: Path) -> dict:
    """run.json of a run folder as a dict (BadInput when missing or not a run summary)."""
    path = Path(run_dir) / "run.json"
    data = read_json(path)
    parse(RunSummary, data, path, "run summary")
    return data
