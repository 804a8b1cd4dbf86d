"""The site data files (docs/formats.md "Site data") built from read runs and tasks."""

from __future__ import annotations

from collections import Counter, defaultdict
from typing import Any

from contract.site import RunRow
from contract.version import __version__
from exporter.attempts import attempt_rows, policy_attempts, shown_pass_at
from exporter.episodes import episode_head
from exporter.llm_turns import run_llm_block
from exporter.run_folders import RunFolder
from exporter.task_folder import TaskInfo

SITE_DATA_VERSION = 1
GENERATED_BY = f"alertforge {__version__} exporter"


def panel_groups(requirements: list[dict[str, Any]], checks: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The checks panel's groups in the order the viewer draws them: ``[{req, checks[]}]``.

    ``checks`` are catalog indexes. The order is catalog order grouped by requirement: one
    group per ``requirements`` entry (in that order) holding its checks in catalog order, then
    one per requirement id that checks name but ``requirements`` does not list (in order of
    first appearance), then the checks tied to no requirement (``req`` null); groups without
    checks are left out. This is the one place the order is made: the viewer draws the groups
    as listed (site/static/js/components/checks.js) and the run head picks its first groups
    (:func:`head_task`).
    """
    groups: dict[str, list[int]] = {}
    for requirement in requirements:
        groups.setdefault(requirement["id"], [])
    general: list[int] = []
    for index, check in enumerate(checks):
        if check.get("req") is None:
            general.append(index)
        else:
            groups.setdefault(check["req"], []).append(index)
    ordered = [{"req": req, "checks": indexes} for req, indexes in groups.items() if indexes]
    return ordered + ([{"req": None, "checks": general}] if general else [])


def task_document(task: TaskInfo) -> dict[str, Any]:
    """``data/tasks/<task-id>.json``, the catalog shared by every run of the task: ``{id,
    workflow, tier, title, instruction, requirements[], checks[], panel[]}``.

    Each check carries ``probe`` (from tests/checks.json, else null) and ``plot`` (its scenario
    plot reference, else null); ``panel`` is :func:`panel_groups`. The scenario data is in
    :func:`task_inputs_document`'s file; see docs/formats.md "Site data".
    """
    reproduction = task.reproduction
    probes = reproduction.get("probes", {})
    check_plots = reproduction.get("check_plots", {})
    return {
        "id": task.id,
        "workflow": task.workflow,
        "tier": task.tier,
        "title": task.title,
        "instruction": task.instruction,
        "requirements": task.requirements,
        "checks": [
            {**check, "probe": probes.get(check["id"]), "plot": check_plots.get(check["id"])}
            for check in task.checks
        ],
        "panel": panel_groups(task.requirements, task.checks),
    }


def task_inputs_document(task: TaskInfo) -> dict[str, Any]:
    """``data/task-inputs/<task-id>.json``: ``{task_id, evaluation_interval, input_series{},
    scenario_plots{}}``, what only the check inspector's scenario plot and reproduce panel
    read (loaded when a check is opened; the bulk of a task's data).

    ``input_series`` the catalog's ``{scenario: [{series, values}]}`` for the scenarios some
    probe names, ``scenario_plots`` :func:`exporter.scenarios.scenario_plots`' plots, both
    ``{}`` and ``evaluation_interval`` null without tests/checks.json.
    """
    reproduction = task.reproduction
    return {
        "task_id": task.id,
        "evaluation_interval": reproduction.get("evaluation_interval"),
        "input_series": reproduction.get("input_series", {}),
        "scenario_plots": reproduction.get("plots", {}),
    }


def task_runs_document(task: TaskInfo, summaries: list[RunRow]) -> dict[str, Any]:
    """``data/task-runs/<task-id>.json``: ``{task_id, runs[]}``, the runs of one task (compare pickers).

    ``runs[]`` rows are ``{run_id, policy, model, reward, solved, steps, status}`` sorted by run_id.
    """
    rows = [
        summary.model_dump(include={"run_id", "policy", "model", "reward", "solved", "steps", "status"})
        for summary in summaries
        if summary.task_id == task.id
    ]
    return {"task_id": task.id, "runs": sorted(rows, key=lambda row: row["run_id"])}


def run_document(run: RunFolder, steps: list[dict[str, Any]]) -> dict[str, Any]:
    """``data/runs/<run-id>.json``: ``{run_id, kind, task_id, policy, model, seed, status, error,
    final, tools, catalog_version?, llm?, steps[]}`` (``tools``: the promtool/amtool versions that
    graded it, or null; ``catalog_version``: run.json ``task.catalog_version``, the check
    catalog's release it was graded against, when the run names one); ``status`` is run.json's (``complete``, ``running``: interrupted or
    in progress, ``failed``: with ``error``); ``llm``: the model's endpoint and token totals
    (:func:`exporter.llm_turns.run_llm_block`), only when a step came from a model."""
    summary = run.summary
    model_block = run_llm_block(summary.endpoint, steps)
    catalog_version = summary.task.catalog_version
    return {
        "run_id": summary.run_id,
        "kind": summary.kind,
        "task_id": summary.task.id,
        "policy": summary.policy,
        "model": summary.model,
        # what the site shows as the run says it: as written (``1``, not the model's ``1.0``)
        "seed": run.run.get("seed"),
        "status": summary.status,
        "error": summary.error,
        "final": run.run.get("final"),
        "tools": run.run.get("tools"),
        **({"catalog_version": catalog_version} if catalog_version is not None else {}),
        **({"llm": model_block} if model_block else {}),
        "steps": steps,
    }


HEAD_STEPS = 2
"""Steps a run head file carries: the initial state and the first action."""

HEAD_CHECKS = 24
"""Checks (at least; whole panel groups) a run head carries: more than a screenful of the
checks panel, which the viewer draws from the head before the first paint. A row is at least
about 45 px high, so a 900 px screen of the panel shows at most 20 rows (the bench checks that
every check seen at the first step is drawn: ``bench/viewer.py --all-runs``); it was 40."""

HEAD_CHECK_FIELDS = ("id", "req", "family", "label")
"""What the checks panel's row shows of a check (its note, probe and plot wait for the task file)."""

KEYED_STEP_FIELDS = ("failed", "causes")
"""Step fields keyed by check id, which a head keeps for its own checks only (``blame`` it
leaves empty: the run view links a failing check to the step that broke it only once the
whole run file is in)."""

HEAD_CAUSE_FIELDS = ("kind", "summary", "why")
"""What the checks panel shows of a cause (its ``facts`` stay in the run file)."""


def head_task(task_doc: dict[str, Any], head_checks: int = HEAD_CHECKS) -> dict[str, Any]:
    """A run head's ``task``: ``{title, instruction, check_count, requirements[], panel[],
    checks[{index, id, req, family, label}]}``, what the run view's first paint shows of the
    task file ``task_doc`` (:func:`task_document`).

    ``panel`` is the task file's first panel groups (:func:`panel_groups`, in its order) until
    they hold ``head_checks`` checks or more; ``checks`` those groups' checks in the same order
    (``index``: the catalog index), ``requirements`` the ones those groups name.
    """
    panel: list[dict[str, Any]] = []
    count = 0
    for group in task_doc["panel"]:
        if count >= head_checks:
            break
        panel.append(group)
        count += len(group["checks"])
    named = {group["req"] for group in panel}
    checks = task_doc["checks"]
    return {
        "title": task_doc["title"],
        "instruction": task_doc["instruction"],
        "check_count": len(checks),
        "requirements": [requirement for requirement in task_doc["requirements"] if requirement["id"] in named],
        "panel": panel,
        "checks": [{"index": index, **{key: checks[index][key] for key in HEAD_CHECK_FIELDS}}
                   for group in panel for index in group["checks"]],
    }


def run_head_document(run_doc: dict[str, Any], task_doc: dict[str, Any],
                      head_steps: int = HEAD_STEPS) -> dict[str, Any]:
    """``data/run-heads/<run-id>.json``: what the run view needs to draw its first step.

    ``{run_id, kind, task_id, policy, model, seed, final, ..., step_count, last_total, task,
    steps[]}``: the run file's fields but ``steps``, the number of steps, the last step's
    ``total``, :func:`head_task` of the run's task file ``task_doc`` and the first
    ``head_steps`` steps as in the run file but for ``failed`` and ``causes``, which keep only
    the head task's checks, each cause only what the checks panel shows
    (:data:`HEAD_CAUSE_FIELDS`), and ``blame``, which is empty (docs/formats.md "Site data").
    Episode runs add ``episode`` (:func:`exporter.episodes.episode_head`).
    """
    return head_from_parts(head_parts(run_doc, head_steps), task_doc)


def head_parts(run_doc: dict[str, Any], head_steps: int = HEAD_STEPS) -> dict[str, Any]:
    """What a run's head takes from its run file (JSON values): ``{fields, step_count,
    last_total, steps[], episode?}``; :func:`head_from_parts` adds the task's part. A site
    export keeps it per run, so a run's head can be written again when its task file changes
    without reading the run again."""
    steps = run_doc["steps"]
    return {
        "fields": {key: value for key, value in run_doc.items() if key != "steps"},
        "step_count": len(steps),
        "last_total": steps[-1]["total"] if steps else None,
        "steps": steps[:head_steps],
        **({"episode": episode_head(steps)} if run_doc["kind"] == "episode" else {}),
    }


def head_from_parts(parts: dict[str, Any], task_doc: dict[str, Any]) -> dict[str, Any]:
    """:func:`run_head_document` from :func:`head_parts` and the task file ``task_doc``."""
    task = head_task(task_doc)
    shown = {check["id"] for check in task["checks"]}
    return {
        **parts["fields"],
        "step_count": parts["step_count"],
        "last_total": parts["last_total"],
        "task": task,
        "steps": [_head_step(step, shown) for step in parts["steps"]],
        **({"episode": parts["episode"]} if "episode" in parts else {}),
    }


def _head_step(step: dict[str, Any], shown: set[str]) -> dict[str, Any]:
    """A run file step with its check-keyed fields cut to the ``shown`` check ids, each cause
    to :data:`HEAD_CAUSE_FIELDS` (a null cause, one that ends, stays null), no blame; the
    initial state's ``message`` empty (the run view shows a note there, and the instruction,
    which that message is, is the head task's ``instruction``)."""
    cut = {field: {key: value for key, value in step[field].items() if key in shown}
           for field in KEYED_STEP_FIELDS if field in step}
    if step.get("n") == 0 and "message" in step:
        cut["message"] = ""
    if "blame" in step:
        cut["blame"] = {}
    if "causes" in cut:
        cut["causes"] = {key: cause if cause is None else
                         {name: cause[name] for name in HEAD_CAUSE_FIELDS if name in cause}
                         for key, cause in cut["causes"].items()}
    return {**step, **cut}


def run_summary(run_doc: dict[str, Any], task: TaskInfo, agent: str | None = None) -> RunRow:
    """One ``index.json`` ``runs[]`` row (``agent``: run.json's agent name).

    ``reward`` is ``final.reward`` when run.json has a final result, else the last step's
    ``total`` when a step was graded (an episode's steps always carry the environment's
    total), else None (no reward: kept out of means, rates and pass@k); ``solved`` is ``final.solved`` (False without a final result); ``steps`` counts
    the agent steps (the initial state is not one); ``incident`` an episode's generated
    failure mode (``final.episode.failure_mode.mode``), else None.

    Raises:
        pydantic.ValidationError: a value not of RunRow's types (run.json was validated
            before: not for a run the exporter read).
    """
    final = run_doc["final"] or {}
    reward = final.get("reward")
    if isinstance(reward, bool) or not isinstance(reward, (int, float)):
        graded = run_doc["kind"] == "episode" or any(step.get("graded") for step in run_doc["steps"])
        reward = run_doc["steps"][-1]["total"] if graded else None
    episode = final.get("episode") if isinstance(final.get("episode"), dict) else {}
    mode = episode.get("failure_mode") if isinstance(episode.get("failure_mode"), dict) else {}
    return RunRow(
        run_id=run_doc["run_id"],
        kind=run_doc["kind"],
        task_id=run_doc["task_id"],
        workflow=task.workflow,
        tier=task.tier,
        policy=run_doc["policy"],
        agent=agent,
        model=run_doc["model"],
        reward=reward,
        solved=final.get("solved") is True,
        steps=sum(1 for step in run_doc["steps"] if step["source"] == "agent"),
        status=run_doc["status"],
        incident=str(mode["mode"]) if mode.get("mode") else None,
    )


HOME_VERSION = 1
ATTEMPT_PREVIEW_ROWS = 20
"""Attempt rows index.html carries as HTML; the rest come from data/attempts.json on demand."""


def attempts_document(attempts: list[dict[str, Any]]) -> dict[str, Any]:
    """``data/attempts.json``: ``{version, attempts[]}``, the attempts-per-task rows of
    index.json past the first :data:`ATTEMPT_PREVIEW_ROWS` (the home page's "show all"), each
    with ``pass_at`` cut to the k the page shows (:func:`exporter.attempts.shown_pass_at`)."""
    return {
        "version": HOME_VERSION,
        "attempts": [{**row, "pass_at": shown_pass_at(row["pass_at"])}
                     for row in attempts[ATTEMPT_PREVIEW_ROWS:]],
    }


def aliases_document(ids: list[tuple[str | None, str]]) -> dict[str, str]:
    """``data/aliases.json``: ``{legacy id: run id}`` for runs whose id changed (run.json
    version 2 added the identity digest), so deep links of sites published before still open
    the same run. ``ids``: each run's ``(legacy id or None, run id)``. A legacy id two runs
    share, or one that is itself a run id, is left out."""
    taken = {run_id for _, run_id in ids}
    counts = Counter(legacy for legacy, _ in ids if legacy is not None)
    return {legacy: run_id for legacy, run_id in ids
            if legacy is not None and counts[legacy] == 1 and legacy not in taken and legacy != run_id}


def home_document(
    summaries: list[RunRow], shard_counts: list[int], search_shards: int
) -> dict[str, Any]:
    """``data/home.json``: what the home page loads first (see exporter.run_index).

    ``{version, runs_total, fields[], shards[{file, count}], facets{field: [[value, count]]},
    search_shards}``.
    """
    from exporter.run_index import ROW_FIELDS, facets

    return {
        "version": HOME_VERSION,
        "runs_total": len(summaries),
        "fields": list(ROW_FIELDS),
        "shards": [
            {"file": f"data/runs-index/{number}.json", "count": count}
            for number, count in enumerate(shard_counts)
        ],
        "facets": facets(summaries),
        "search_shards": search_shards,
    }


def leaderboard(summaries: list[RunRow], *, complete_only: bool = True) -> list[dict[str, Any]]:
    """Per run kind and policy ``{kind, policy, runs, mean_reward, solved_rate, ci_low, ci_high,
    pass_at}`` (6 decimals): alerting runs first, then episodes (their rewards are not on one
    scale: the grader's progress against the environment's score), each best mean first; the
    interval and pass@k are :func:`exporter.attempts.policy_attempts`'s.

    Only complete runs count unless ``complete_only`` is False (a failed or interrupted run's
    reward is where it stopped, not a result). A run with no reward (``reward`` None) counts in
    ``no_reward`` only; a policy with no rewarded run has no row. Ties are broken by policy
    name; a missing policy counts as the string "unknown".
    """
    by_policy: dict[tuple[str, str], list[RunRow]] = defaultdict(list)
    unrewarded: dict[tuple[str, str], int] = defaultdict(int)
    for summary in summaries:
        if complete_only and summary.status != "complete":
            continue
        key = (summary.kind, str(summary.policy or "unknown"))
        if summary.reward is None:
            unrewarded[key] += 1
        else:
            by_policy[key].append(summary)
    attempts = attempt_rows(summaries)
    rows = [
        {
            "kind": kind,
            "policy": policy,
            "runs": len(rows),
            "mean_reward": round(sum(r.reward for r in rows) / len(rows), 6),
            "solved_rate": round(sum(1 for r in rows if r.solved) / len(rows), 6),
            **policy_attempts(rows, attempts, policy),
            "no_reward": unrewarded[(kind, policy)],
        }
        for (kind, policy), rows in by_policy.items()
    ]
    return sorted(rows, key=lambda row: (row["kind"] != "alerting", row["kind"], -row["mean_reward"], row["policy"]))


def index_document(summaries: list[RunRow], tasks: dict[str, TaskInfo]) -> dict[str, Any]:
    """``data/index.json``: ``{version, generated_by, tasks[], runs[], leaderboard[],
    leaderboard_all[], incomplete_runs, attempts[]}`` (``leaderboard`` counts complete runs
    only, ``leaderboard_all`` every run; ``attempts``: :func:`exporter.attempts.attempt_rows`).

    ``tasks[]`` rows are ``{id, workflow, tier, title, runs}`` sorted by id; ``runs[]`` are
    :func:`run_summary` rows sorted by run_id.
    """
    run_counts: dict[str, int] = defaultdict(int)
    for summary in summaries:
        run_counts[summary.task_id] += 1
    return {
        "version": SITE_DATA_VERSION,
        "generated_by": GENERATED_BY,
        "tasks": [
            {
                "id": task.id,
                "workflow": task.workflow,
                "tier": task.tier,
                "title": task.title,
                "runs": run_counts[task.id],
            }
            for task in sorted(tasks.values(), key=lambda t: t.id)
        ],
        "runs": [summary.model_dump() for summary in sorted(summaries, key=lambda s: s.run_id)],
        "leaderboard": leaderboard(summaries),
        "leaderboard_all": leaderboard(summaries, complete_only=False),
        "incomplete_runs": sum(1 for s in summaries if s.status != "complete"),
        "attempts": attempt_rows(summaries),
    }
