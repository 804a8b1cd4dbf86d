"""A run's files (recorder -> exporter): ``run.json`` and the ``extra.env`` block of its ATIF steps.

``runs/<run-id>/`` holds ``journal.jsonl`` (one finished step a line), ``trajectory.json``
(ATIF, validated with the ``atif`` package) and ``run.json`` (:class:`RunSummary`). Every
producer (record, record-reference, import-harbor, import-episodes, record --env aria,
record-openenv) writes run.json through :class:`RunSummary`; the exporter reads it through it.
Runs written before version 2 (no ``identity``, ``source`` or ``legacy_id``) still validate.
A graded step's ``extra.grade`` is :class:`contract.grade.GradeBlock`, beside the GradeResult
it is made from.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field

from contract.base import Open, Strict
from contract.tool_versions import ToolVersions

RUN_VERSION = 2
"""run.json ``version``: 2 added ``identity``, ``legacy_id`` and ``source`` on every producer."""
Status = Literal["running", "complete", "failed"]
"""``running``: in progress, or interrupted (resumable); ``complete``; ``failed``: stopped
with ``error`` (the steps on disk are kept)."""
Kind = Literal["alerting", "episode"]
Source = Literal["record", "harbor", "atif-file", "transcript", "aria", "openenv"]
"""Which producer wrote the run: ``record`` (record, record-reference), ``harbor`` and
``atif-file`` (import-harbor), ``transcript`` (import-episodes), ``aria`` (record --env aria),
``openenv`` (record-openenv)."""


class TaskRef(Strict):
    """The task a run was made on. ``dir`` is a hint for people, never opened; the exporter
    finds the task by ``id`` and ``fingerprint`` (contract.task_roots)."""

    id: str
    dir: str | None = None
    workflow: str | None = None
    tier: str | int | None = None
    seed: int | None = None
    fingerprint: str | None = None
    """sha256 of the task's content (contract.task_roots.task_fingerprint)."""
    known: bool | None = None
    """Imports: whether a local task matched the trial."""
    name: str | None = None
    """Imports: the task name the trial gave."""
    env_task_id: str | None = None
    """Episodes: the environment's own task id (``easy``)."""
    catalog_version: str | None = None
    """Alerting runs: the ``catalog_version`` of the check catalog the run was graded against
    (None: a catalog before 0.3.0, or no local task)."""
    max_steps: int | None = None
    """Episodes: the step budget the environment reported."""


class AgentRef(Strict):
    """Who acted: the agent's name and version."""

    name: str
    version: str


class Timings(Strict):
    """Seconds: ``wall_s`` the whole recording, ``grade_s`` in the grader over ``grades``
    grades, ``env_s`` waiting for an environment."""

    wall_s: float = 0.0
    grade_s: float = 0.0
    grades: int = 0
    env_s: float | None = None


class Final(Open):
    """The run's final result: ``reward`` (0..1 for alerting; the environment's score for an
    episode), ``solved``, the grade ``keys`` and ``requirements`` (``{id: {q, s}}``), where it
    came from (``source``: ``regrade``, ``harbor``, ``environment``) and, for episodes, the
    ``episode`` block (score parts, ground truth)."""

    reward: float | None = None
    solved: bool = False
    keys: dict[str, Any] = Field(default_factory=dict)
    requirements: dict[str, Any] = Field(default_factory=dict)
    source: str | None = None
    episode: dict[str, Any] | None = None


class RequirementRef(Strict):
    """A requirement as a run carries it (for when the task folder is not found)."""

    id: str
    kind: str
    weight: float
    title: str | None = None


class CheckRef(Strict):
    """A catalog check as a run carries it."""

    id: str
    req: str | None = None
    family: str
    label: str
    note: str | None = None


class Identity(Strict):
    """What defines a run (docs/formats.md "Run identity"): the producer, and the inputs that
    make two runs the same run. ``digest`` is the first 10 hex of the sha256 of ``defining``
    (canonical JSON); the run id is ``<readable>__<digest>``."""

    producer: Source
    defining: dict[str, Any]
    digest: str


class RunSummary(Strict):
    """``run.json``: the summary of one run, rewritten atomically with every step."""

    version: int
    run_id: str
    kind: Kind
    status: Status
    task: TaskRef
    policy: str | None = None
    seed: int | None = None
    model: str | None = None
    agent: AgentRef
    steps: int
    final: Final | None = None
    requirements: list[RequirementRef] = Field(default_factory=list)
    checks: list[CheckRef] = Field(default_factory=list)
    started_at: str | None = None
    finished_at: str | None = None
    timings: Timings = Field(default_factory=Timings)
    tools: ToolVersions | None = None
    """Alerting runs graded here: the tool versions of their grades (the last grade's)."""
    error: str | None = None
    source: Source | None = None
    identity: Identity | None = None
    legacy_id: str | None = None
    """The id the run would have had before version 2 (deep links of published sites)."""
    # producer blocks
    endpoint: dict[str, Any] | None = None
    """Policy ``llm``: the server as it described itself when the recording started or last
    resumed: ``{base_url, models[], server?, server_version?, model_file?: {path, bytes,
    sha256}}`` (recorder/agents/llm_server.py)."""
    env: dict[str, Any] | None = None
    """Episodes: ``{name, transport, url, source}``."""
    harbor: dict[str, Any] | None = None
    """import-harbor: the trial (job, trial, paths, rewards, fingerprint...)."""
    openenv: dict[str, Any] | None = None
    """record-openenv: ``{reset, reward_sum}``."""
    replay: Literal["exact", "approximate", "terminal-only"] | None = None
    graded: bool | None = None
    lossy_steps: list[dict[str, Any]] | None = None
    notes: list[str] | None = None
    regrade: dict[str, Any] | None = None
    validation_errors: list[str] | None = None


class EnvBlock(Open):
    """``step.extra.env`` of an episode step (the environment's answer)."""

    reward: float = 0.0
    total: float | None = None
    done: bool = False
    info: dict[str, Any] = Field(default_factory=dict)
    observation: dict[str, Any] | None = None
    error: dict[str, Any] | None = None
