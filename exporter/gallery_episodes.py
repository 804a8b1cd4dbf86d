"""Failure gallery of action episodes: penalized steps by ARIA's penalty kind, runs by outcome.

The alerting gallery (:mod:`exporter.gallery_checks`) groups failing checks; an episode has no
checks, so its failures are the steps whose reward holds a penalty component of ARIA's own
(the step's ``penalties``, :mod:`exporter.episodes`, named after the task code by
recorder/episodes/rewards.py: a fix before any diagnosis, a collateral restart, a forbidden
failover, a timed-out restart, an action that does not apply, ...). One page per kind hit
(``gallery/penalty-<slug>.html``) says how many episode runs hit it and lists the steps
grouped by detail: the action as called (``restart_service(service="api-gateway")``) with
every number blanked, so one group collects the same mistake across runs. Each example links
to ``run.html?run=<run_id>&step=<n>``, the step where the penalty happened.

Outcome pages (``gallery/outcome-<slug>.html``) group the episode runs by how the episode
ended in the environment's own terms: resolved (``info.resolution``), max steps reached
(``info.reason``), stopped before done, an environment failure (a failed run), and a foreign
reset (an environment event), each example linked to the run's last step.
"""

from __future__ import annotations

import json
from typing import Any

from contract.site import SiteStep
from exporter.episodes import GUESSED_KINDS, PENALTY_KINDS, episode_failures
from exporter.gallery import PENALTY, FailureKind, GalleryAxis, PagePart, slug

PENALTY_DESCRIPTIONS = {
    "fix before diagnosis": "a remediation before any diagnosis was credited, -0.05 "
                            "(tasks/base.py:322-334; easy, medium and hard only)",
    "collateral restart": "a restart (or rollback) of a service the task lists as healthy, "
                          "-0.10 (easy, medium) or -0.08 (bonus)",
    "red herring": "medium: restarting notification-service, whose CPU is a batch job, -0.05",
    "symptom before cause": "medium: restarting order-service, a downstream victim, before the "
                            "diagnosis, -0.10",
    "wrong fix": "a remediation the task charges for (hard: restart or scale_up -0.15; "
                 "security: restart -0.15, rollback -0.10; database: restart -0.10, scale_up -0.08)",
    "wrong block": "security: a block_ip_range without the attacking 185.x range, -0.10",
    "wrong index": "database: create_index on anything but orders(user_segment), -0.10",
    "forbidden failover": "failover: payment-service or postgres-primary failed over, -0.25 once "
                          "per service (task_failover.py:221-228)",
    "bad region": "failover: a target region other than us-west-2, -0.05",
    "no such failover": "failover: a service that is not configured for failover, -0.05",
    "timed out": "failover: a restart or rollback, which times out in a partition, -0.05",
    "not applicable": "an action type the task does not take (block_ip_range, create_index, "
                      "failover elsewhere), -0.10",
    "late noop": "a noop after the task's free steps (3 to 5), -0.03 or -0.04",
    "unexplained": "a reward no reading of ARIA's rules gives: the difference",
    "server error": "an action the server failed (no reward; the environment did not advance)",
}
"""One line per penalty kind (ARIA's task code at 230f8d5), shown on its page and the index."""

GUESSED_DESCRIPTION = ("guessed from the action and the reward's sign: this run was recorded "
                       "before rewards were split into ARIA's components")

OUTCOME = GalleryAxis(
    "outcome", source="outcome", heading="Outcome", column="Outcome",
    page_title="{} \u00b7 episode outcomes", empty="No episode run ended this way.",
    detail_is_code=False, hit_field="runs_hit", hit_label="Runs", with_label="Episode runs",
    count_field="steps", count_label="Runs", unit=("run", "runs"),
)
"""Episode runs by how they ended, in the environment's terms."""

OUTCOME_DESCRIPTIONS = {
    "resolved": "the environment said done with info.resolution = incident_resolved",
    "max steps reached": "the environment said done with info.reason = max_steps_reached",
    "stopped before done": "the recording ended (policy out of actions, or the action limit) "
                           "before the environment said done",
    "environment failure": "the recording failed in the environment (a server that lost the "
                           "episode, a connection that stayed down): the run is kept",
    "foreign reset": "another client reset the server's shared environment during the episode",
}


def action_text(action: str | None, arguments: Any) -> str:
    """An action as called: ``name(key="value", ...)`` with the arguments in sorted order."""
    if not isinstance(arguments, dict):
        arguments = {}
    fields = ", ".join(
        f"{key}={json.dumps(value, ensure_ascii=False)}" for key, value in sorted(arguments.items())
    )
    return f"{action or '(no action)'}({fields})"


def _said(env: dict[str, Any]) -> str | None:
    """What the environment said about the step: its error, else a non-stale action message."""
    error = env.get("error")
    if isinstance(error, dict):
        return str(error.get("message") or "") or None
    observation = env.get("observation") or {}
    stale = env.get("stale") or {}
    for name in ("last_action_error", "last_action_result"):
        value = observation.get(name)
        if isinstance(value, str) and value and stale.get(name) is None:
            return value
    return None


def _penalty_page(kind: str) -> FailureKind:
    """The gallery page of one penalty kind (``gallery/penalty-<slug>.html``), still empty."""
    description = PENALTY_DESCRIPTIONS.get(kind, "")
    if not description and kind in GUESSED_KINDS:
        description = GUESSED_DESCRIPTION
    return FailureKind(axis=PENALTY, name=kind, description=description,
                       file=f"gallery/penalty-{slug(kind.replace(' ', '-'))}.html")


def _penalty_example(document: dict[str, Any], failure: dict[str, Any], detail: str,
                     said: str | None) -> dict[str, Any]:
    """One penalized step of an episode run as a gallery example."""
    return {
        "run_id": document["run_id"],
        "status": document.get("status", "complete"),
        "task_id": document["task_id"],
        "policy": document.get("policy"),
        "step": failure["step"],
        "action": failure["action"],
        "detail": detail,
        "reward": failure["reward"],
        "said": said,
    }


def run_penalty_pages(document: dict[str, Any], steps: list[SiteStep]) -> list[PagePart]:
    """What one episode run adds to the penalty pages: the parts of the pages it hits
    (:meth:`exporter.gallery.FailureKind.part`; ``document``: the run file's values, for its
    ids; ``steps``: its site steps, carrying ``env``: :func:`exporter.steps.build_steps` of an
    episode run)."""
    pages: dict[str, FailureKind] = {}
    by_n = {step.n: step for step in steps}
    for failure in episode_failures(document, steps):
        page = pages.setdefault(failure["kind"], _penalty_page(failure["kind"]))
        detail = action_text(failure["action"], failure["arguments"])
        said = _said(by_n[failure["step"]].env or {})
        page.add_failure(document["run_id"], detail, _penalty_example(document, failure, detail, said))
    return [page.part() for page in pages.values()]


def penalty_gallery_from_records(runs: list[tuple[str, list[PagePart]]]) -> list[dict[str, Any]]:
    """Penalty-kind pages from ``[(run id, run_penalty_pages), ...]`` of the episode runs in
    run_id order. With at least one episode run, every kind of
    :data:`~exporter.episodes.PENALTY_KINDS` some run hit gets a page (in that order), then any
    other kind the runs show, by name; without episode runs, none. Each page is
    :meth:`exporter.gallery.FailureKind.as_dict`: ``runs_hit`` counts episode runs with at least
    one step of the kind, ``runs_with`` all episode runs, ``steps`` the penalized steps; examples
    are ``{run_id, task_id, policy, step, action, detail, reward, said}`` (up to
    :data:`~exporter.gallery.EXAMPLES_PER_GROUP` a group, the counts cover all)."""
    if not runs:
        return []
    pages = {kind: _penalty_page(kind) for kind in PENALTY_KINDS}
    for _, parts in runs:
        for part in parts:
            pages.setdefault(part.name, _penalty_page(part.name)).merge(part)
    for page in pages.values():
        page.runs_with.update(run_id for run_id, _ in runs)
    known = [pages[kind] for kind in PENALTY_KINDS if pages[kind].runs_hit]
    others = sorted((p for k, p in pages.items() if k not in PENALTY_KINDS), key=lambda p: p.name)
    return [page.as_dict() for page in [*known, *others]]


def outcomes_of(document: dict[str, Any]) -> list[tuple[str, str]]:
    """``[(outcome kind, detail)]`` of one exported episode run (see the module docstring)."""
    final = document.get("final") or {}
    episode = final.get("episode") if isinstance(final.get("episode"), dict) else {}
    found = []
    if document.get("status") == "failed":
        found.append(("environment failure", str(document.get("error") or "")))
    resolution = episode.get("resolution")
    if resolution == "incident_resolved":
        found.append(("resolved", "incident_resolved"))
    elif resolution:
        found.append(("max steps reached" if resolution == "max_steps_reached" else "ended",
                      str(resolution)))
    elif document.get("status") != "failed":
        found.append(("stopped before done", "no done from the environment"))
    for event in episode.get("environment_events") or []:
        if isinstance(event, dict) and event.get("kind") == "foreign reset":
            found.append(("foreign reset", str(event.get("detail") or "")))
    return found


def _outcome_page(kind: str) -> FailureKind:
    """The gallery page of one outcome (``gallery/outcome-<slug>.html``), still empty."""
    return FailureKind(axis=OUTCOME, name=kind, description=OUTCOME_DESCRIPTIONS.get(kind, ""),
                       file=f"gallery/outcome-{slug(kind.replace(' ', '-'))}.html")


def run_outcome_pages(document: dict[str, Any], steps: list[SiteStep]) -> list[PagePart]:
    """What one episode run adds to the outcome pages: their parts
    (:meth:`exporter.gallery.FailureKind.part`; see :func:`outcome_gallery_from_records`)."""
    pages: dict[str, FailureKind] = {}
    last = steps[-1].n if steps else 0
    reward = (document.get("final") or {}).get("reward")
    for kind, detail in outcomes_of(document):
        page = pages.setdefault(kind, _outcome_page(kind))
        example = {"run_id": document["run_id"], "status": document.get("status", "complete"),
                   "task_id": document["task_id"], "policy": document.get("policy"),
                   "step": last, "action": None, "detail": detail,
                   "reward": reward if isinstance(reward, (int, float)) else 0.0, "said": None}
        page.add_failure(document["run_id"], detail, example)
    return [page.part() for page in pages.values()]


def outcome_gallery_from_records(runs: list[tuple[str, list[PagePart]]]) -> list[dict[str, Any]]:
    """Outcome pages (``gallery/outcome-<slug>.html``) from ``[(run id, run_outcome_pages),
    ...]`` of the episode runs in run_id order: one per outcome some episode run had, in
    :data:`OUTCOME_DESCRIPTIONS` order; each example is the run's last step (``{run_id, task_id,
    policy, step, action, detail, reward, said}``, reward the run's final reward). Without
    episode runs, none."""
    pages: dict[str, FailureKind] = {}
    for _, parts in runs:
        for part in parts:
            pages.setdefault(part.name, _outcome_page(part.name)).merge(part)
    for page in pages.values():
        page.runs_with.update(run_id for run_id, _ in runs)
    order = list(OUTCOME_DESCRIPTIONS)
    ranked = sorted(pages.values(), key=lambda p: (order.index(p.name) if p.name in order
                                                   else len(order), p.name))
    return [page.as_dict() for page in ranked]
