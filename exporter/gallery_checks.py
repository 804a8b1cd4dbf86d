"""Failure gallery of alerting runs: failing checks across runs, by check family, by requirement kind and by cause kind.

A run *fails* a check when the check's state at the run's last step is ``0``; each failure is
added to the page of the check's family, of its requirement's kind and of its cause's kind
(:class:`exporter.gallery.FailureKind`), and its example links to the step blamed for it
(:mod:`exporter.blame`) with the hunk highlighted (docs/formats.md "Failure gallery").
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from typing import Any

from contract.site import SiteStep
from exporter.blame import blame_at
from exporter.gallery import (
    CAUSE,
    FAMILY,
    KIND,
    FailureKind,
    GalleryAxis,
    PagePart,
    root_signature,
    slug,
)
from exporter.task_folder import TaskInfo

NO_CAUSE_RECORDED = "no cause recorded"
"""The cause kind of a failure in a run graded before causes existed."""
GENERAL_KIND = "general"
"""The requirement kind of checks tied to no requirement (Syntax, Preservation, Tamper)."""


def last_turned_red(states: list[str]) -> int | None:
    """The step where a check last turned red (state ``0`` after a state that was not), or None
    when it never passed: a check that was never ``1`` at any step never turned green.

    ``states`` are the check's states at steps 0..n (``""`` when not graded yet).
    """
    if "1" not in states:
        return None
    turned = None
    for n, state in enumerate(states):
        if state == "0" and (n == 0 or states[n - 1] != "0"):
            turned = n
    return turned


def _page(pages: dict[str, FailureKind], axis: GalleryAxis, name: str) -> FailureKind:
    key = f"{axis.name}:{name}"
    if key not in pages:
        pages[key] = FailureKind(axis=axis, name=name, file=f"gallery/{axis.name}-{slug(name)}.html")
    return pages[key]


def _failure_example(document: dict[str, Any], task: TaskInfo, check: dict[str, Any],
                     detail: str, states: list[str], steps: list[SiteStep]) -> dict[str, Any]:
    """One failing check of a run as a gallery example: the step where it last turned red,
    its cause and the blamed hunk."""
    turned = last_turned_red(states)
    cause = (steps[-1].causes or {}).get(check["id"]) or {}
    blame = blame_at(steps, len(steps) - 1, check["id"]) or {}
    return {
        "cause": cause.get("summary", ""),
        "cause_kind": cause.get("kind", NO_CAUSE_RECORDED),
        "hunk": blame.get("hunk"),
        "run_id": document["run_id"],
        "task_id": task.id,
        "policy": document.get("policy"),
        "check_id": check["id"],
        "label": check.get("label") or check["id"],
        "detail": detail,
        "step": turned if turned is not None else len(states) - 1,
        "never_green": turned is None,
        "status": document.get("status", "complete"),
    }


def _add_run(pages: dict[str, FailureKind], document: dict[str, Any], task: TaskInfo,
             steps: list[SiteStep]) -> None:
    """Every check of one graded alerting run on its family and kind pages, its failures counted."""
    run_id = document["run_id"]
    kinds = {r["id"]: r.get("kind") or GENERAL_KIND for r in task.requirements}
    last = steps[-1]
    for index, check in enumerate(task.checks):
        family = str(check.get("family") or "unknown")
        kind = str(kinds.get(check.get("req"), GENERAL_KIND) if check.get("req") else GENERAL_KIND)
        targets = [_page(pages, FAMILY, family), _page(pages, KIND, kind)]
        for page in targets:
            page.runs_with.add(run_id)
            page.checks.add((task.id, check["id"]))
        if not last.checks or last.checks[index] != "0":
            continue
        states = [step.checks[index] if step.checks else "" for step in steps]
        detail = last.failed.get(check["id"], "") or "(no detail recorded)"
        example = _failure_example(document, task, check, detail, states, steps)
        cause_page = _page(pages, CAUSE, example["cause_kind"])
        cause_page.runs_with.add(run_id)
        cause_page.checks.add((task.id, check["id"]))
        for page in targets:
            page.add_failure(run_id, detail, example)
        cause = example["cause"] or detail  # a cause page groups by the mistake (its root)
        cause_page.add_failure(run_id, cause, example, signature=root_signature(cause))


def run_check_pages(document: dict[str, Any], task: TaskInfo, steps: list[SiteStep]) -> list[PagePart]:
    """What one run adds to the check gallery: its pages' parts
    (:meth:`exporter.gallery.FailureKind.part`; ``[]`` for a run that is not a graded
    alerting run). ``steps``: the run's full steps (each with its ``checks`` string and the
    complete ``failed`` map)."""
    if document["kind"] != "alerting" or not task.checks:
        return []
    pages: dict[str, FailureKind] = {}
    _add_run(pages, document, task, steps)
    return [page.part() for page in pages.values()]


AXES = {axis.name: axis for axis in (FAMILY, KIND, CAUSE)}


def check_gallery_from_records(runs: Iterable[list[PagePart]]) -> dict[str, Any]:
    """The check gallery's data from each run's :func:`run_check_pages`, the runs in run_id
    order (read once: an iterator keeps only one run's entries in memory): ``{"families":
    [page...], "kinds": [page...], "causes": [page...]}``, each page as
    :meth:`exporter.gallery.FailureKind.as_dict`, sorted by name (alerting runs count)."""
    pages: dict[str, FailureKind] = {}
    for parts in runs:
        for part in parts:
            _page(pages, AXES[part.axis], part.name).merge(part)
    by_axis: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for page in sorted(pages.values(), key=lambda p: (p.axis.name, p.name)):
        by_axis[page.axis.name].append(page.as_dict())
    return {"families": by_axis["family"], "kinds": by_axis["kind"], "causes": by_axis["cause"]}
