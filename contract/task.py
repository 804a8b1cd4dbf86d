"""The parts of a task folder other stages read (tasks -> grader, recorder, exporter):
``tests/checks.json`` (:class:`CheckCatalog`) and ``tests/spec.json`` (:class:`WorldSpec`).

The generator (tasks/generator) writes both; the catalog's fields are the grader's whole
input besides the workspace, the spec's are read by the recorder (ids, workflow, tier, seed)
and by the scripted policies (requirements). Field meanings: docs/formats.md "Task folder".
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field, model_validator

from contract.base import Open, Strict
from contract.run import CheckRef, RequirementRef

RequirementKind = Literal["alert", "repair", "recording", "route", "inhibit"]
Family = Literal["Fire", "Timing", "Silent", "Dup", "Label", "Annotation", "Value", "Cardinality",
                 "Route", "Inhibit", "Preservation", "Syntax", "Tamper"]


class CatalogRequirement(Strict):
    """A requirement: ``kind``, ``weight`` (alert and repair 3, others 2), what it targets."""

    id: str
    kind: RequirementKind
    weight: float
    title: str
    targets: dict[str, Any] = Field(default_factory=dict)


class Probe(Open):
    """What the grader runs for a check; ``type`` decides the rest (``promql``: scenario,
    eval_time, expr, exp_samples; ``route``: labels, expect or forbid; ``inhibit``: alerts,
    target, expect_muted; ...)."""

    type: str

    @model_validator(mode="after")
    def _promql_fields(self) -> Probe:
        if self.type == "promql":
            extra = self.model_extra or {}
            missing = [k for k in ("scenario", "expr", "eval_time") if not isinstance(extra.get(k), str)]
            if missing or not isinstance(extra.get("exp_samples"), list):
                raise ValueError("a promql probe needs string scenario, expr and eval_time and an "
                                 "exp_samples list" + (f" (missing {', '.join(missing)})" if missing else ""))
        return self


class CatalogCheck(Strict):
    """One check in catalog order."""

    id: str
    req: str | None
    family: Family
    label: str
    note: str
    probe: Probe


class CheckCatalog(Strict):
    """``tests/checks.json``: the check catalog derived from the world spec alone."""

    version: int
    task_id: str
    requirements: list[CatalogRequirement]
    scenarios: list[dict[str, Any]] = Field(default_factory=list)
    checks: list[CatalogCheck]
    input_series: dict[str, list[dict[str, str]]] = Field(default_factory=dict)
    evaluation_interval: str = "1m"

    def requirement_refs(self) -> list[RequirementRef]:
        """The requirements as a run carries them."""
        return [RequirementRef(id=r.id, kind=r.kind, weight=r.weight, title=r.title)
                for r in self.requirements]

    def check_refs(self) -> list[CheckRef]:
        """The checks as a run carries them."""
        return [CheckRef(id=c.id, req=c.req, family=c.family, label=c.label, note=c.note)
                for c in self.checks]


class WorldSpec(Open):
    """``tests/spec.json``: the hidden world (services, SLOs, requirements, scenarios); the
    fields other stages read are typed, the rest belongs to the generator."""

    version: int
    task_id: str
    workflow: str
    tier: str
    seed: int
    requirements: list[dict[str, Any]] = Field(default_factory=list)
