"""The site data files (exporter -> viewer, under ``<site>/data/``), docs/formats.md "Site data".

The exporter checks every document against its model before writing it; the viewer's
JavaScript reads the same shapes (site/static/js/data.js checks the run files it loads).
"""

from __future__ import annotations

from typing import Any

from pydantic import Field, model_validator

from contract.base import Strict
from contract.run import Kind, Status


class SiteStep(Strict):
    """One step of a run file: ``n`` = ATIF ``step_id`` - 1."""

    n: int
    step_id: int
    source: str
    message: str
    tool: dict[str, Any] | None
    output: str | None
    diff: dict[str, Any] | None
    graded: bool
    reward: float
    total: float
    checks: str
    changed: list[int]
    failed: dict[str, str]
    causes: dict[str, Any] = Field(default_factory=dict)
    """Failing check id -> its cause (contract.grade.Cause), listed like ``failed``: at the
    step where it starts or changes, null where it ends."""
    blame: dict[str, int | None] = Field(default_factory=dict)
    """Check id -> the index of this step's diff hunk that broke it, for every check that
    turns red at this step (null: no hunk, e.g. step 0); a failing check's blame is the
    latest entry at or before the step shown (exporter/blame.py)."""
    env: dict[str, Any] | None = None
    """Episode runs: what the viewer shows of the environment's answer (exporter/episodes.py)."""
    lazy: dict[str, Any] | None = None
    """Long texts kept in ``data/text/`` parts: ``{field: {chars, parts[]}}``."""
    orphans: list[dict[str, Any]] | None = None
    """Observation results naming no call of the step: ``[{call_id, content}]``."""
    llm: dict[str, Any] | None = None
    """A model's step: model, tokens, finish reason, reply quirks and raw reply
    (exporter/llm_turns.py ``llm_part``)."""
    copied: bool | None = None
    """ATIF ``is_copied_context``: copied in from an earlier segment (not counted in totals)."""
    section: str | None = None
    """A multi-step Harbor trial: the name of the trial step this step belongs to."""
    media: list[dict[str, Any]] | None = None
    """Image and audio parts: ``[{type, media_type, path, url, duration_sec, problem?}]`` (url
    null: no file, or not published, then ``problem`` says why)."""
    subagents: list[str] | None = None
    """``trajectory_id`` of each subagent a result of this step references."""
    config: dict[str, list[dict[str, Any]]] | None = None
    """Alerting runs: the latest grade's ``{findings?, version_differences?}`` (only when there
    is any; exporter/steps.py ``recorded_config``)."""


class RunDocument(Strict):
    """``data/runs/<run-id>.json``."""

    run_id: str
    kind: Kind
    task_id: str
    policy: str | None
    model: str | None
    seed: int | None
    status: Status
    error: str | None
    final: dict[str, Any] | None
    tools: dict[str, str] | None = None
    """The tool versions the run was graded with (run.json ``tools``), or null."""
    catalog_version: str | None = None
    """The check catalog's release the run was graded against (run.json ``task.catalog_version``)."""
    llm: dict[str, Any] | None = None
    """Model runs: the endpoint as it described itself and the token totals
    (exporter/llm_turns.py ``run_llm_block``), or null."""
    harbor: dict[str, Any] | None = None
    """Imported Harbor trials: the trial's facts (exporter.atif_view.HARBOR_FIELDS)."""
    subagents: list[dict[str, Any]] | None = None
    """Embedded ATIF subagent trajectories (exporter.atif_view.subagent_documents)."""
    steps: list[SiteStep]


class PanelGroup(Strict):
    """One group of the checks panel, in the order the viewer draws them
    (exporter.site_data.panel_groups: catalog order grouped by requirement)."""

    req: str | None
    """The requirement id, null for the checks tied to no requirement."""
    checks: list[int]
    """Catalog indexes of the group's checks, in catalog order."""


class HeadCheck(Strict):
    """What the checks panel's row shows of a check, and its catalog index."""

    index: int
    id: str
    req: str | None
    family: str
    label: str


class HeadTask(Strict):
    """What a run head carries of its task file: the header's title and instruction, the
    number of checks and the first panel groups (exporter.site_data.head_task)."""

    title: str
    instruction: str
    check_count: int
    requirements: list[dict[str, Any]]
    """The requirements the head's panel groups name."""
    panel: list[PanelGroup]
    """The task file's first ``panel`` groups, until they hold 40 checks or more."""
    checks: list[HeadCheck]
    """The checks of those groups, in their order."""


class EpisodeHead(Strict):
    """A run head's ``episode`` block (episode runs only, exporter.episodes.episode_head): what
    the episode board shows at the first steps that only a later step knows."""

    done_step: int | None
    """``n`` of the first step whose ``env.done`` is true (the end of the incident), or null."""
    resolution: str | None
    """That step's ``env.resolution`` (ARIA's ``info.resolution`` or ``info.reason``), or null."""


class RunHead(Strict):
    """``data/run-heads/<run-id>.json``: the run file's fields but ``steps``, the step count,
    the last total, what the first paint shows of the task (``task``) and the first steps as
    in the run file, their ``failed``, ``causes`` and ``blame`` cut to the head's checks."""

    run_id: str
    kind: Kind
    task_id: str
    policy: str | None
    model: str | None
    seed: int | None
    status: Status
    error: str | None
    final: dict[str, Any] | None
    tools: dict[str, str] | None = None
    catalog_version: str | None = None
    llm: dict[str, Any] | None = None
    harbor: dict[str, Any] | None = None
    subagents: list[dict[str, Any]] | None = None
    step_count: int
    last_total: float | None
    task: HeadTask
    steps: list[SiteStep]
    episode: EpisodeHead | None = None
    """Episode runs: the end of the incident, for the board drawn from the head."""


class RunRow(Strict):
    """One ``index.json`` ``runs[]`` row (and, as arrays in ``fields`` order, a shard row)."""

    run_id: str
    kind: Kind
    task_id: str
    workflow: str | None
    tier: str | int | None
    policy: str | None
    agent: str | None = None
    model: str | None
    reward: float | None
    """``final.reward``, else the last graded step's total; null when the run has neither (a
    Harbor trial with no verifier reward imported without grading): shown as "no reward",
    left out of means, rates and pass@k."""
    solved: bool
    steps: int
    status: Status
    incident: str | None = None
    """Episode runs: the generated incident's failure mode (``security``), else null."""


class LeaderboardRow(Strict):
    """Per run kind and policy: runs counted, mean reward and solved rate (6 decimals), the
    mean's 95% t interval and pass@k averaged over the policy's tasks with several attempts
    (exporter.attempts)."""

    kind: str = "alerting"
    """``alerting`` or ``episode``: the two kinds' rewards are not on one scale."""
    policy: str
    runs: int
    mean_reward: float
    solved_rate: float
    ci_low: float | None = None
    ci_high: float | None = None
    pass_at: dict[str, float] = Field(default_factory=dict)
    """``{k: pass@k}`` for k = 1.. (empty when no task has two attempts)."""
    no_reward: int = 0
    """The policy's runs with no reward (RunRow.reward null): not in ``runs`` or any figure."""


class AttemptRow(Strict):
    """Per task and agent/model with several attempts: pass@k for k in 1..attempts (the
    unbiased estimator) and the mean reward with its 95% t interval (exporter.attempts)."""

    task_id: str
    agent: str
    model: str | None
    attempts: int
    solved: int
    pass_at: dict[str, float]
    mean_reward: float
    ci_low: float | None
    ci_high: float | None


class TaskRow(Strict):
    """One ``index.json`` ``tasks[]`` row."""

    id: str
    workflow: str | None
    tier: str | int | None
    title: str
    runs: int


class JobRow(Strict):
    """One Harbor job of the imported trials (exporter/harbor_jobs.py ``job_rows``): trials,
    the trials with a verifier reward and their mean (None when none has one), the same for
    rewards re-graded here, errors by exception type, token and cost totals."""

    job: str
    trials: int
    rewarded: int
    mean_reward: float | None
    regraded: int
    mean_regrade: float | None
    errors: int
    error_types: dict[str, int]
    prompt_tokens: int
    completion_tokens: int
    cost_usd: float


class SiteIndex(Strict):
    """``data/index.json``: every run row, the tasks, and two leaderboards (complete runs
    only, and every run). A site whose run rows would take the file past the 10 MB a file
    may have (about 29,000 runs) has ``run_shards`` instead of ``runs``: the rows are then
    those of ``data/runs-index/0.json`` .. ``<run_shards - 1>.json`` (arrays in their
    ``fields`` order), in the same order."""

    version: int
    generated_by: str
    tasks: list[TaskRow]
    runs: list[RunRow] | None = None
    run_shards: int | None = Field(default=None, ge=1)
    leaderboard: list[LeaderboardRow]
    leaderboard_all: list[LeaderboardRow]
    incomplete_runs: int
    attempts: list[AttemptRow] = Field(default_factory=list)
    jobs: list[JobRow] = Field(default_factory=list)
    """Harbor's job level (exporter/harbor_jobs.py): one row per job of the imported trials."""

    @model_validator(mode="after")
    def _rows_or_shards(self) -> SiteIndex:
        if (self.runs is None) == (self.run_shards is None):
            raise ValueError("exactly one of runs and run_shards")
        return self


class AttemptsDocument(Strict):
    """``data/attempts.json``: the attempt rows past the home page's preview, ``pass_at``
    holding only the k the page shows (exporter.site_data.attempts_document)."""

    version: int
    attempts: list[AttemptRow]


class HomeDocument(Strict):
    """``data/home.json``: what the home page loads first."""

    version: int
    runs_total: int
    fields: list[str]
    shards: list[dict[str, Any]]
    facets: dict[str, list[list[Any]]]
    search_shards: int


class TaskCheck(Strict):
    """A check in a task file: the catalog fields, its ``probe`` and scenario ``plot``."""

    id: str
    req: str | None
    family: str
    label: str
    note: str | None
    probe: dict[str, Any] | None
    plot: dict[str, Any] | None


class TaskDocument(Strict):
    """``data/tasks/<task-id>.json``: the check catalog every run of the task shares."""

    id: str
    workflow: str | None
    tier: str | int | None
    title: str
    instruction: str
    requirements: list[dict[str, Any]]
    checks: list[TaskCheck]
    panel: list[PanelGroup]
    """Every check in the checks panel's groups, in the order the viewer draws them."""


class TaskInputs(Strict):
    """``data/task-inputs/<task-id>.json``: the scenario data only the check inspector's
    scenario plot and reproduce panel read (loaded when a check is opened)."""

    task_id: str
    evaluation_interval: str | None
    input_series: dict[str, Any] = Field(default_factory=dict)
    """``{scenario: [{series, values}]}``: promtool input series of the scenarios probes name."""
    scenario_plots: dict[str, Any] = Field(default_factory=dict)
    """``{"<scenario>|<service>": plot}`` (exporter.scenarios.scenario_plots)."""


class TaskRunRow(Strict):
    """One run of a task for the compare pickers."""

    run_id: str
    policy: str | None
    model: str | None
    reward: float | None
    """As RunRow's: null when the run has no reward."""
    solved: bool
    steps: int
    status: Status


class TaskRuns(Strict):
    """``data/task-runs/<task-id>.json``."""

    task_id: str
    runs: list[TaskRunRow]
