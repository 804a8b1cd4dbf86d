"""The parts of a task folder other stages read (tasks -> grader, recorder, exporter):
``tests/checks.json`` (:class:`CheckCatalog`) and ``tests/spec.json`` (:class:`WorldSpec`).

The generator (tasks/generator) writes both; the catalog's fields are the grader's whole
input besides the workspace, the spec's are read by the recorder (ids, workflow, tier, seed)
and by the scripted policies (requirements). Field meanings: docs/formats.md "Task folder".
"""

from __future__ import annotations

import re
from typing import Any, Literal

from pydantic import Field, model_validator

from contract.base import Open, Strict
from contract.run import CheckRef, RequirementRef

MAX_SERIES_POINTS = 1_000_000
"""Values one input series may expand to (promtool's ``a+bxN`` notation); the bundled
scenarios have a few hundred, a crafted catalog could ask for billions."""
_REPEATS = re.compile(r"x(\d+)")

RequirementKind = Literal["alert", "repair", "recording", "route", "inhibit"]
Family = Literal["Fire", "Timing", "Silent", "Dup", "Label", "Annotation", "Value", "Cardinality",
                 "Route", "Inhibit", "Preservation", "Syntax", "Tamper"]


CheckRole = Literal["requirement", "positive", "negative", "suppressed", "not-suppressed",
                    "bystander", "preservation", "syntax", "tamper"]
"""What a check is for (tasks.generator.checks.ROLES): a requirement's check, a route case
(``positive`` / ``negative``), an inhibit case (``suppressed`` / ``not-suppressed`` /
``bystander``), or a whole-repo check (``preservation``, ``syntax``, ``tamper``)."""


class CatalogRequirement(Strict):
    """A requirement: ``kind``, ``weight`` (alert and repair 3, others 2), what it targets."""

    id: str
    kind: RequirementKind
    weight: float
    title: str
    targets: dict[str, Any] = Field(default_factory=dict)

    @model_validator(mode="after")
    def _target_types(self) -> CatalogRequirement:
        shapes = {"service": str, "alert": str, "windows": dict, "records": dict, "labels": dict,
                  "threshold": (int, float), "reference_records": (bool, str, dict, list)}
        for key, kind in shapes.items():
            value = self.targets.get(key)
            if value is not None and not isinstance(value, kind):
                raise ValueError(f"targets.{key} has the wrong type ({type(value).__name__})")
        return self


class Probe(Open):
    """What the grader runs for a check; ``type`` decides the rest (``promql``: scenario,
    eval_time, expr, exp_samples; ``route``: labels, expect or forbid; ``inhibit``: alerts,
    target, expect_muted; ``receiver``: name, integrations?; ``receiver_removed``: name;
    ``route_timing``: labels, limits, group_by; ...; docs/formats.md)."""

    type: str

    @model_validator(mode="after")
    def _promql_fields(self) -> Probe:
        extra = self.model_extra or {}
        shapes = {"scenario": str, "eval_time": str, "expr": str, "labels": dict, "alerts": list,
                  "alert": str, "service": str, "what": str, "name": str, "integrations": dict,
                  "limits": dict, "group_by": list}
        for key, kind in shapes.items():
            if key in extra and extra[key] is not None and not isinstance(extra[key], kind):
                raise ValueError(f"probe.{key} has the wrong type ({type(extra[key]).__name__})")
        if self.type == "promql":
            missing = [k for k in ("scenario", "expr", "eval_time") if not isinstance(extra.get(k), str)]
            if missing or not isinstance(extra.get("exp_samples"), list):
                raise ValueError("a promql probe needs string scenario, expr and eval_time and an "
                                 "exp_samples list" + (f" (missing {', '.join(missing)})" if missing else ""))
        if self.type == "route_timing" and not (isinstance(extra.get("labels"), dict)
                                                and isinstance(extra.get("limits"), dict)):
            raise ValueError("a route_timing probe needs a labels and a limits mapping")
        return self


class CatalogCheck(Strict):
    """One check in catalog order."""

    id: str
    req: str | None
    family: Family
    role: CheckRole | None = None
    """Catalogs before 0.3.0 carry none: grader.score.case_role infers it from the id."""
    label: str
    note: str
    probe: Probe


class CheckCatalog(Strict):
    """``tests/checks.json``: the check catalog derived from the world spec alone."""

    version: int
    task_id: str
    catalog_version: str | None = None
    """The dataset version that generated it (contract.version.DATASET_VERSION); None before 0.3.0."""
    requirements: list[CatalogRequirement]
    scenarios: list[dict[str, Any]] = Field(default_factory=list)
    checks: list[CatalogCheck]
    input_series: dict[str, list[dict[str, str]]] = Field(default_factory=dict)
    evaluation_interval: str = "1m"

    @model_validator(mode="after")
    def _series_sizes(self) -> CheckCatalog:
        for scenario, series in self.input_series.items():
            for item in series:
                values = item.get("values", "")
                points = sum(int(n) + 1 for n in _REPEATS.findall(values)) + len(values.split())
                if points > MAX_SERIES_POINTS:
                    raise ValueError(f"input_series.{scenario}: a series expands to over "
                                     f"{MAX_SERIES_POINTS} values")
        return self

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
