"""Failure gallery of action episodes: penalized steps across episode runs, by penalty kind.

The alerting gallery (:mod:`exporter.gallery_checks`) groups failing checks; an episode has no
checks, so its failures are the steps :func:`exporter.episodes.penalty_kinds` marks (a
collateral restart, a fix before any diagnosis, a forbidden failover, a wrong diagnosis, and
the other kinds of :data:`exporter.episodes.PENALTY_KINDS`). One page per kind
(``gallery/penalty-<slug>.html``) says how many episode runs hit it and lists the steps
grouped by detail: the action as called (``restart_service(service="api-gateway")``) with
every number blanked, so one group collects the same mistake across runs. Each example links
to ``run.html?run=<run_id>&step=<n>``, the step where the penalty happened.
"""

from __future__ import annotations

import json
from typing import Any

from exporter.episodes import PENALTY_KINDS, episode_failures
from exporter.gallery import PENALTY, FailureKind, slug

PENALTY_DESCRIPTIONS = {
    "collateral restart": "a restart of a service that was healthy",
    "forbidden failover": "a failover the incident did not allow",
    "wrong fix": "another remediation with a negative reward (it does not apply to the incident)",
    "wrong diagnosis": "a diagnosis that earned nothing while no earlier one had",
    "excess noop": "a noop the environment penalized (late or too many)",
    "other penalty": "any other action with a negative reward",
    "fix before diagnosis": "a remediation with a negative reward before any diagnosis",
    "server error": "an action the server failed (no reward; the environment did not advance)",
}
"""One line per penalty kind, shown on its page and in the gallery index."""


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
    return FailureKind(axis=PENALTY, name=kind, description=PENALTY_DESCRIPTIONS.get(kind, ""),
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


def build_penalty_gallery(documents: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Penalty-kind pages from exported run documents (episode runs count; others skip).

    ``documents`` are run documents whose steps carry ``env`` (:func:`exporter.steps.build_steps`
    of an episode run). With at least one episode run, every kind of
    :data:`~exporter.episodes.PENALTY_KINDS` gets a page (in that order, zero hits included),
    then any other kind the runs show, by name; without episode runs, none. Each page is
    :meth:`exporter.gallery.FailureKind.as_dict`: ``runs_hit`` counts episode runs with at least one step of the
    kind, ``runs_with`` all episode runs, ``steps`` the penalized steps; examples are
    ``{run_id, task_id, policy, step, action, detail, reward, said}`` (up to
    :data:`~exporter.gallery.EXAMPLES_PER_GROUP` a group, the counts cover all).
    """
    episodes = sorted(
        (d for d in documents if d.get("kind") == "episode"), key=lambda d: d["run_id"]
    )
    if not episodes:
        return []
    pages = {kind: _penalty_page(kind) for kind in PENALTY_KINDS}
    for document in episodes:
        steps = {step["n"]: step for step in document.get("steps", [])}
        for failure in episode_failures(document):
            page = pages.setdefault(failure["kind"], _penalty_page(failure["kind"]))
            detail = action_text(failure["action"], failure["arguments"])
            said = _said(steps.get(failure["step"], {}).get("env") or {})
            page.add_failure(document["run_id"], detail, _penalty_example(document, failure, detail, said))
    for page in pages.values():
        page.runs_with.update(d["run_id"] for d in episodes)
    known = [pages[kind] for kind in PENALTY_KINDS]
    others = sorted((p for k, p in pages.items() if k not in PENALTY_KINDS), key=lambda p: p.name)
    return [page.as_dict() for page in [*known, *others]]
