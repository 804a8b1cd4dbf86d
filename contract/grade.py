"""The GradeResult (grader -> recorder; ``alertforge grade --json``): the keys, per-requirement
scores and every check's outcome for one workspace (docs/formats.md "GradeResult"); and the
:class:`GradeBlock`, what a graded step of a run keeps of one (``step.extra.grade``)."""

from __future__ import annotations

from typing import Any

from pydantic import Field

from contract.base import Strict
from contract.task import Family, RequirementKind
from contract.tool_versions import ToolVersions

KEY_NAMES = ("reward", "solved", "outcome", "progress", "preservation", "req_alerts",
             "req_repairs", "req_recording", "req_routing", "req_inhibit", "fire_rate",
             "silent_rate", "label_rate", "check_pass_rate", "syntax_ok", "tamper")
"""The 16 keys every grade reports (seed spec, "Reward")."""


class RequirementScore(Strict):
    """One requirement's score: ``q`` on the workspace, ``q_pristine`` on the pristine repo,
    ``s`` normalized against it (clipped to [-0.25, 1])."""

    id: str
    kind: RequirementKind
    weight: float | int
    """As the check catalog gives it (an integer stays one)."""
    q: float
    q_pristine: float
    s: float


CAUSE_NONE = "none"
"""The cause kind of a failing check no cause could be given for (``why`` says why)."""


class Cause(Strict):
    """Why a check failed, in the field's own terms (issue 15): computed by the grader only
    for failing checks, from what promtool and amtool print where they can say it.

    ``kind`` names the cause (``inhibit-source-unmatched``, ``route-continue-missing``,
    ``alert-pending``, ... or :data:`CAUSE_NONE`); ``summary`` is one short line naming what
    ``detail`` does not (the matcher, the route path, the label, the time, the value);
    ``why`` is set (and only set) for kind :data:`CAUSE_NONE`: the per-family reason no cause
    can be given; ``facts`` holds the structured fields the viewer draws (per family:
    docs/formats.md "Causes")."""

    kind: str
    summary: str
    why: str | None = None
    facts: dict[str, Any] = Field(default_factory=dict)


class CheckOutcome(Strict):
    """One check's outcome: ``passed`` true, false or null (not applicable); ``detail`` says
    why it failed (expected vs got); ``reproduce`` how to see the result by hand; ``score``
    a route check's Jaccard; ``cause`` (failing checks only) why it failed."""

    id: str
    req: str | None
    family: Family
    label: str
    note: str
    passed: bool | None
    detail: str
    reproduce: str
    score: float | None = None
    cause: Cause | None = None


class FileProblem(Strict):
    """A syntax error or tamper finding: the file (repo-relative, or empty) and the message."""

    file: str
    message: str


class Finding(Strict):
    """A config hygiene finding shown with a grade, never scored (grader/hygiene.py):
    ``kind`` (``unused-receiver``, ``unreachable-route``, ``timing-contradiction``), where in
    alertmanager.yml, and what in words."""

    kind: str
    where: str
    text: str


class VersionDifference(Strict):
    """One inhibit check judged differently by Alertmanager versions (grader/probes/inhibition.py)."""

    check: str
    rule: int
    verdicts: dict[str, bool]


class GradeResult(Strict):
    """What ``grade_result(task, workspace)`` returns; apart from ``timings`` the same task and
    workspace give byte-identical JSON."""

    version: int
    task_id: str | None
    reward: float
    keys: dict[str, float | int]
    requirements: list[RequirementScore]
    checks: list[CheckOutcome]
    syntax_errors: list[FileProblem]
    tamper: list[FileProblem]
    catalog_version: str | None = None
    """The check catalog's ``catalog_version`` this grade was computed against (None: a
    catalog before 0.3.0)."""
    tools: ToolVersions | None = None
    """The tool versions that produced this grade (always set by the grader; None in a
    grade stored before it named them)."""
    timings: dict[str, float] = Field(default_factory=dict)
    findings: list[Finding] | None = None
    """Config hygiene findings of alertmanager.yml (absent when there are none)."""
    version_differences: list[VersionDifference] | None = None
    """Inhibit checks whose verdict differs between Alertmanager 0.25-0.29 and 0.30+ (absent
    when none does): the check, the inhibit rule, and whether each mutes the target."""
    worker: str | None = None
    """The Ray worker that made this grade, ``<node ip>/<worker id, 8 hex>`` (set only when
    graded on a Ray cluster, :mod:`engine`); like ``timings``, not part of what the
    same inputs reproduce."""

    def missing_keys(self) -> list[str]:
        """Keys of :data:`KEY_NAMES` the result lacks."""
        return [key for key in KEY_NAMES if key not in self.keys]


def validated(result: dict[str, Any]) -> GradeResult:
    """``result`` as a :class:`GradeResult` with all 16 keys; :func:`contract.base.dump` of it
    gives ``result`` back (the fields it set, numbers of the same type).

    Raises:
        ValueError: the grader produced something else (a bug, never bad input).
    """
    model = GradeResult.model_validate(result)
    if model.missing_keys():
        raise ValueError(f"grade result lacks keys {model.missing_keys()}")
    return model


class RequirementLevel(Strict):
    """One requirement's score as a graded step keeps it: ``q`` on the workspace, ``s``
    normalized (:class:`RequirementScore` without the pristine level)."""

    q: float
    s: float


class GradeBlock(Strict):
    """``step.extra.grade`` of an alerting run's graded step.

    The recorder and the importers build one from a :class:`GradeResult` and pass it typed;
    :func:`contract.base.dump` of it is what the step's file holds, and :func:`contract.base.parse`
    of those bytes gives it back (the fields written, numbers of the same type)."""

    reward: float
    """The reward level after this step (0..1)."""
    delta: float
    """Change from the previous graded step."""
    checks: str
    """One character per catalog check: ``1`` pass, ``0`` fail, ``-`` not applicable."""
    keys: dict[str, Any]
    """The grade's keys as it gave them (runs of version 1 hold booleans among them)."""
    requirements: dict[str, RequirementLevel]
    failed: dict[str, str] = Field(default_factory=dict)
    causes: dict[str, Cause] = Field(default_factory=dict)
    """Failing check id -> its cause; empty in runs graded before causes existed."""
    grade_s: float | None = None
    findings: list[Finding] | None = None
    """Config hygiene findings of the grade, only when there is any (runs recorded with
    0.4.0 on)."""
    version_differences: list[VersionDifference] | None = None
    """Inhibit checks judged differently by Alertmanager versions, only when there is any."""
    worker: str | None = None
    """The Ray worker that made this grade (``--ray``; absent on a local run): like
    ``grade_s``, left out when runs are compared."""
