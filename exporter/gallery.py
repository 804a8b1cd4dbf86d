"""Failure galleries: failing checks across runs, by check family and by requirement kind.

The exporter renders them as static pages under ``gallery/`` (docs/formats.md "Failure
gallery"). A run *fails* a check when the check's state at the run's last step is ``0``.
Failures are grouped by their detail with numbers blanked (``got 0.0421`` and ``got 0.05``
fall in one group), and each example links to the step where the check last turned red.
"""

from __future__ import annotations

import re
import zlib
from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any

from exporter.task_folder import TaskInfo

EXAMPLES_PER_GROUP = 12
"""Examples listed under one detail group (the counts cover every failure)."""

GENERAL_KIND = "general"
"""The requirement kind of checks tied to no requirement (Syntax, Preservation, Tamper)."""

_NUMBER = re.compile(r"\d+(?:\.\d+)?(?:e[-+]?\d+)?")
_SPACE = re.compile(r"\s+")


def detail_signature(detail: str) -> str:
    """A failure detail with every number replaced by ``#`` and runs of whitespace collapsed."""
    return _SPACE.sub(" ", _NUMBER.sub("#", detail)).strip()


def slug(name: str) -> str:
    """A file-name-safe form of ``name``: lowercase ``[a-z0-9-]``; a crc32 suffix when that lost anything."""
    text = re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-")
    if text == name.lower() and text:
        return text
    return f"{text or 'x'}-{zlib.crc32(name.encode('utf-8')):08x}"


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


@dataclass
class FailureGroup:
    """Failures of one kind (same detail signature) inside one gallery page."""

    signature: str
    detail: str
    failures: int = 0
    runs: set[str] = field(default_factory=set)
    examples: list[dict[str, Any]] = field(default_factory=list)


@dataclass
class GalleryPage:
    """One gallery page: a check family or a requirement kind, with its failure groups."""

    axis: str
    name: str
    file: str
    runs_with: set[str] = field(default_factory=set)
    runs_failing: set[str] = field(default_factory=set)
    checks: set[tuple[str, str]] = field(default_factory=set)
    groups: dict[str, FailureGroup] = field(default_factory=dict)

    def as_dict(self) -> dict[str, Any]:
        """The page as plain data for the templates; groups by failures, most first."""
        groups = sorted(self.groups.values(), key=lambda g: (-len(g.runs), -g.failures, g.signature))
        return {
            "axis": self.axis,
            "name": self.name,
            "file": self.file,
            "runs_with": len(self.runs_with),
            "runs_failing": len(self.runs_failing),
            "checks": len(self.checks),
            "failures": sum(g.failures for g in groups),
            "groups": [
                {
                    "number": number,
                    "signature": g.signature,
                    "detail": g.detail,
                    "failures": g.failures,
                    "runs": len(g.runs),
                    "examples": g.examples,
                    "more": g.failures - len(g.examples),
                }
                for number, g in enumerate(groups, start=1)
            ],
        }


def _page(pages: dict[str, GalleryPage], axis: str, name: str) -> GalleryPage:
    key = f"{axis}:{name}"
    if key not in pages:
        pages[key] = GalleryPage(axis=axis, name=name, file=f"gallery/{axis}-{slug(name)}.html")
    return pages[key]


def build_gallery(runs: list[tuple[dict[str, Any], TaskInfo, list[dict[str, Any]]]]) -> dict[str, Any]:
    """Gallery data from ``[(run document, task, full steps), ...]`` (alerting runs count; others skip).

    ``full steps`` carry each step's ``checks`` string and the complete ``failed`` map. Returns
    ``{"families": [page...], "kinds": [page...]}``, each page as :meth:`GalleryPage.as_dict`,
    sorted by name.
    """
    pages: dict[str, GalleryPage] = {}
    for document, task, steps in sorted(runs, key=lambda item: item[0]["run_id"]):
        if document["kind"] != "alerting" or not task.checks:
            continue
        run_id = document["run_id"]
        kinds = {r["id"]: r.get("kind") or GENERAL_KIND for r in task.requirements}
        last = steps[-1]
        for index, check in enumerate(task.checks):
            family = str(check.get("family") or "unknown")
            kind = str(kinds.get(check.get("req"), GENERAL_KIND) if check.get("req") else GENERAL_KIND)
            targets = [_page(pages, "family", family), _page(pages, "kind", kind)]
            for page in targets:
                page.runs_with.add(run_id)
                page.checks.add((task.id, check["id"]))
            if not last["checks"] or last["checks"][index] != "0":
                continue
            states = [step["checks"][index] if step["checks"] else "" for step in steps]
            turned = last_turned_red(states)
            detail = last["failed"].get(check["id"], "") or "(no detail recorded)"
            signature = detail_signature(detail)
            example = {
                "run_id": run_id,
                "task_id": task.id,
                "policy": document.get("policy"),
                "check_id": check["id"],
                "label": check.get("label") or check["id"],
                "detail": detail,
                "step": turned if turned is not None else len(steps) - 1,
                "never_green": turned is None,
                "status": document.get("status", "complete"),
            }
            for page in targets:
                page.runs_failing.add(run_id)
                group = page.groups.setdefault(signature, FailureGroup(signature, detail))
                group.failures += 1
                group.runs.add(run_id)
                if len(group.examples) < EXAMPLES_PER_GROUP:
                    group.examples.append(example)
    by_axis: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for page in sorted(pages.values(), key=lambda p: (p.axis, p.name)):
        by_axis[page.axis].append(page.as_dict())
    return {"families": by_axis["family"], "kinds": by_axis["kind"]}
