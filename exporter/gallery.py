"""Failure galleries: failures of one kind across runs, grouped by detail, each linked to its step.

One abstraction serves both kinds of run (docs/formats.md "Failure gallery"): a gallery page
is a *failure kind* (a check family or a requirement kind of alerting runs,
:mod:`exporter.gallery_checks`; a penalty kind of action episodes,
:mod:`exporter.gallery_episodes`). Its failures are grouped by their detail with numbers
blanked (``got 0.0421`` and ``got 0.05`` fall in one group), and each example links to
``run.html?run=<run_id>&step=<n>``. The exporter renders the pages under ``gallery/`` with
one page template, one group partial and one table partial; what differs between the kinds
is the wording (:class:`GalleryAxis`) and each example's own line.
"""

from __future__ import annotations

import re
import sys
import zlib
from dataclasses import dataclass, field
from typing import Any

EXAMPLES_PER_GROUP = 12
"""Examples listed under one detail group (the counts cover every failure)."""

_NUMBER = re.compile(r"\d+(?:\.\d+)?(?:e[-+]?\d+)?")
_SPACE = re.compile(r"\s+")


def detail_signature(detail: str) -> str:
    """A failure detail with every number replaced by ``#`` and runs of whitespace collapsed."""
    return _SPACE.sub(" ", _NUMBER.sub("#", detail)).strip()


_LABEL_SET = re.compile(r"\{[^{}]*[=:][^{}]*\}")
_CAMEL = re.compile(r"\b[A-Z][a-z0-9]+(?:[A-Z][A-Za-z0-9]*)+\b")
_RECEIVER = re.compile(r"(-> |\breceivers? |delivers to )([a-z][\w.-]*)")
_QUOTED = re.compile(r"\"[^\"]*\"|'[^']*'")


def root_signature(cause: str) -> str:
    """A cause with what varies between instances of one mistake blanked, so a cause page
    groups by the mistake, not by the alert it hit: a label set that holds a pair becomes
    ``{…}`` (an empty one, a route with no matchers, stays ``{}``), CamelCase alert names
    ``‹alert›``, receiver names ``‹receiver›``, quoted values ``'…'``, numbers ``#``, and the
    amtool path after a route cause is left out."""
    text = cause.split("; amtool path:")[0]
    text = _LABEL_SET.sub("{…}", text)
    text = _CAMEL.sub("\u2039alert\u203a", text)
    text = _RECEIVER.sub(lambda m: m.group(1) + "\u2039receiver\u203a", text)
    text = _QUOTED.sub("'\u2026'", text)
    return detail_signature(text)


def slug(name: str) -> str:
    """A file-name-safe form of ``name``: lowercase ``[a-z0-9-]``; a crc32 suffix when that lost anything."""
    text = re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-")
    if text == name.lower() and text:
        return text
    return f"{text or 'x'}-{zlib.crc32(name.encode('utf-8')):08x}"


@dataclass(frozen=True)
class GalleryAxis:
    """How one axis of failure kinds is named on its pages and in the gallery index table.

    ``source`` picks the example line and the summary sentence (``check`` or ``penalty``,
    the macro ``<source>`` of ``site/templates/_gallery_examples.html`` and ``_gallery_<source>_summary.html``);
    ``hit_field`` and ``count_field`` are the page's keys (and ``data-field`` names) for the
    runs with at least one failure and for the failures counted; ``unit`` is the counted
    failure, singular and plural; ``page_title`` formats the kind's name; ``detail_is_code``
    shows a group's detail as code.
    """

    name: str
    source: str
    heading: str
    column: str
    page_title: str
    empty: str
    detail_is_code: bool
    hit_field: str
    hit_label: str
    with_label: str
    count_field: str
    count_label: str
    unit: tuple[str, str]


_CHECK_COLUMNS = {"source": "check", "hit_field": "runs_failing", "hit_label": "Runs failing",
                  "with_label": "Runs with it", "count_field": "failures", "count_label": "Failures",
                  "unit": ("failing check", "failing checks"),
                  "page_title": "{} failures", "detail_is_code": False}
FAMILY = GalleryAxis("family", heading="Check family", column="Family",
                     empty="No run fails a check of this family.", **_CHECK_COLUMNS)
KIND = GalleryAxis("kind", heading="Requirement kind", column="Kind",
                   empty="No run fails a check of this kind.", **_CHECK_COLUMNS)
CAUSE = GalleryAxis("cause", heading="Cause kind", column="Cause",
                    empty="No run fails a check with this cause.", **_CHECK_COLUMNS)
PENALTY = GalleryAxis(
    "penalty", source="penalty", heading="Penalty kind", column="Penalty kind",
    page_title="{} \u00b7 episode penalties", empty="No episode run hit this penalty.", detail_is_code=True,
    hit_field="runs_hit", hit_label="Runs hitting it", with_label="Episode runs",
    count_field="steps", count_label="Penalized steps", unit=("step", "steps"),
)
"""The four axes: check families, requirement kinds and cause kinds (alerting runs, the
cause as the grader gave it, ``no cause recorded`` for runs graded before causes), penalty
kinds (episodes)."""


@dataclass
class DetailGroup:
    """Failures of one failure kind with the same detail signature."""

    signature: str
    detail: str
    failures: int = 0
    runs: set[str] = field(default_factory=set)
    examples: list[dict[str, Any]] = field(default_factory=list)


@dataclass(frozen=True)
class PagePart:
    """What one run adds to one gallery page (:meth:`FailureKind.part`): the page's ``axis``
    name and ``name``, the run ids it applies to (``runs_with``) and hits (``runs_hit``), its
    ``(task id, check id)`` pairs (``checks``) and its detail groups as ``(signature, detail,
    failures, run ids, examples)`` (``groups``). A site export keeps each run's parts as JSON
    values (:meth:`to_json`, :meth:`from_json`) in its spool and incremental state, so an
    export that reuses the run merges them (:meth:`FailureKind.merge`) instead of reading the
    run again."""

    axis: str
    name: str
    runs_with: list[str]
    runs_hit: list[str]
    checks: list[tuple[str, str]]
    groups: list[tuple[str, str, int, list[str], list[dict[str, Any]]]]

    def to_json(self) -> dict[str, Any]:
        """``{axis, name, runs_with[], runs_hit[], checks[[task id, check id]], groups[[signature,
        detail, failures, runs[], examples[]]]}``."""
        return {"axis": self.axis, "name": self.name, "runs_with": list(self.runs_with),
                "runs_hit": list(self.runs_hit), "checks": [list(pair) for pair in self.checks],
                "groups": [list(group) for group in self.groups]}

    @classmethod
    def from_json(cls, value: dict[str, Any]) -> PagePart:
        """:meth:`to_json`'s values read back (from the export's own spool or state, whose
        records are checked by their digests).

        Raises:
            KeyError, TypeError, ValueError: ``value`` is not of that shape.
        """
        return cls(str(value["axis"]), str(value["name"]), list(value["runs_with"]), list(value["runs_hit"]),
                   [(str(task_id), str(check_id)) for task_id, check_id in value["checks"]],
                   [(signature, detail, int(failures), list(runs), list(examples))
                    for signature, detail, failures, runs, examples in value["groups"]])


@dataclass
class FailureKind:
    """One gallery page: a failure kind on one axis, with its detail groups.

    ``runs_with`` are the runs the kind applies to, ``runs_hit`` those with at least one failure
    of it; ``checks`` (alerting axes only) the distinct ``(task id, check id)`` of the kind.
    """

    axis: GalleryAxis
    name: str
    file: str
    description: str = ""
    runs_with: set[str] = field(default_factory=set)
    runs_hit: set[str] = field(default_factory=set)
    checks: set[tuple[str, str]] = field(default_factory=set)
    groups: dict[str, DetailGroup] = field(default_factory=dict)

    def add_failure(self, run_id: str, detail: str, example: dict[str, Any],
                    signature: str | None = None) -> None:
        """Count one failure of ``run_id`` under its group (``signature``, default
        :func:`detail_signature` of ``detail``); keep ``example`` while the group lists fewer
        than :data:`EXAMPLES_PER_GROUP`."""
        signature = signature if signature is not None else detail_signature(detail)
        self.runs_hit.add(run_id)
        group = self.groups.setdefault(signature, DetailGroup(signature, detail))
        group.failures += 1
        group.runs.add(run_id)
        if len(group.examples) < EXAMPLES_PER_GROUP:
            group.examples.append(example)

    def part(self) -> PagePart:
        """What one run added to this page (a page made from that run alone), sets sorted."""
        return PagePart(self.axis.name, self.name, sorted(self.runs_with), sorted(self.runs_hit),
                        sorted(self.checks),
                        [(g.signature, g.detail, g.failures, sorted(g.runs), g.examples) for g in self.groups.values()])

    def merge(self, part: PagePart) -> None:
        """Add one run's :meth:`part` of this page: the same page as if that run's failures
        were added here with :meth:`add_failure` (runs merged in the order they were added)."""
        # one string per run id in every set (a site's runs are in many pages' sets at once)
        self.runs_with.update(map(sys.intern, part.runs_with))
        self.runs_hit.update(map(sys.intern, part.runs_hit))
        # a task's checks come again with each of its runs: the set keeps one tuple per check
        self.checks.update(part.checks)
        for signature, detail, failures, runs, examples in part.groups:
            group = self.groups.setdefault(signature, DetailGroup(signature, detail))
            group.failures += failures
            group.runs.update(map(sys.intern, runs))
            group.examples.extend(examples[: max(0, EXAMPLES_PER_GROUP - len(group.examples))])

    def as_dict(self) -> dict[str, Any]:
        """The page as plain data for the templates; groups with most runs first, then most failures.

        ``{axis, words, name, description, file, runs_with, <hit_field>, checks, <count_field>,
        groups: [{number, signature, detail, count, runs, examples, more}]}`` (counts as ints,
        ``words`` the :class:`GalleryAxis`).
        """
        groups = sorted(self.groups.values(), key=lambda g: (-len(g.runs), -g.failures, g.signature))
        return {
            "axis": self.axis.name,
            "words": self.axis,
            "name": self.name,
            "description": self.description,
            "file": self.file,
            "runs_with": len(self.runs_with),
            self.axis.hit_field: len(self.runs_hit),
            "checks": len(self.checks),
            self.axis.count_field: sum(g.failures for g in groups),
            "groups": [
                {
                    "number": number,
                    "signature": g.signature,
                    "detail": g.detail,
                    "count": g.failures,
                    "runs": len(g.runs),
                    "examples": g.examples,
                    "more": g.failures - len(g.examples),
                }
                for number, g in enumerate(groups, start=1)
            ],
        }


EXAMPLES_PER_PAGE = 60
"""Examples one gallery page file lists at most (whole groups; a larger group alone): a kind
with more is split over ``<axis>-<slug>.html``, ``<axis>-<slug>.p2.html``, ... so a page's
bytes stay bounded however many runs fail it."""


def paginate(page: dict[str, Any], per_page: int | None = None) -> list[dict[str, Any]]:
    """``page`` (:meth:`FailureKind.as_dict`) as the page files it is rendered into.

    Groups keep their order and numbers; a file takes groups while their examples stay within
    ``per_page`` (default :data:`EXAMPLES_PER_PAGE`; a group is never split). Each part is ``page`` with ``file`` (the first part
    keeps ``page["file"]``, part n is ``<stem>.p<n>.html``: a dot no slug holds), ``groups``
    (its share) and ``pager {number, files[], groups_total}``. A page without groups is one part.
    Only the first part keeps the kind's counts (``runs_with``, the hit and count fields,
    ``checks``; its summary sentence): a later part changes only when its own groups or the
    pager do, so one more run re-renders few of a large kind's parts (issue 31).
    """
    per_page = EXAMPLES_PER_PAGE if per_page is None else per_page
    chunks: list[list[dict[str, Any]]] = [[]]
    count = 0
    for group in page["groups"]:
        if chunks[-1] and count + len(group["examples"]) > per_page:
            chunks.append([])
            count = 0
        chunks[-1].append(group)
        count += len(group["examples"])
    stem = page["file"].removesuffix(".html")
    files = [page["file"], *(f"{stem}.p{n}.html" for n in range(2, len(chunks) + 1))]
    pager = {"files": files, "groups_total": len(page["groups"])}
    words = page["words"]
    counts = {"runs_with", "checks", words.hit_field, words.count_field}
    later = {key: value for key, value in page.items() if key not in counts}
    return [{**(page if number == 0 else later), "file": files[number], "groups": chunk,
             "pager": {**pager, "number": number + 1}}
            for number, chunk in enumerate(chunks)]
