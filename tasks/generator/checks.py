"""A check and the catalog that collects them: unique ids, the error for an unsafe check, and
the probe pieces every family of check shares.

Checks are claims about the world ("during this outage a correct alert for chat-gw is
firing at 75m"); the families that derive them live beside this module (alert_checks,
recording_checks, routing_checks, preservation_checks) and :mod:`tasks.generator.catalog`
assembles them in order (DESIGN.md, "Deriving checks").
"""

from __future__ import annotations

AUDIT = "audit-log"
"""The receiver every page is copied to (see tasks.generator.repo.AUDIT_RECEIVER)."""

MARGIN = 2
"""Evaluation intervals (minutes) kept between a check and any crossing or edge."""


class CatalogError(ValueError):
    """The spec does not allow a safe check (for example no time far enough from a crossing)."""


def alerts_selector(alert: str, service: str | None = None, **labels: str) -> str:
    """The PromQL selector of ``alert``'s firing ``ALERTS`` series, for ``service`` if given and
    with ``labels`` (sorted by name): ``ALERTS{alertname="X",alertstate="firing",...}``."""
    matchers = [f'alertname="{alert}"', 'alertstate="firing"']
    if service is not None:
        matchers.append(f'service="{service}"')
    matchers += [f'{k}="{v}"' for k, v in sorted(labels.items())]
    return "ALERTS{" + ",".join(matchers) + "}"


ONE = [{"labels": "{}", "value": 1}]
"""``exp_samples`` of a probe whose expression yields one sample of value 1."""
NONE: list = []
"""``exp_samples`` of a probe whose expression yields nothing."""


ROLES = ("requirement", "positive", "negative", "suppressed", "not-suppressed", "bystander",
         "preservation", "syntax", "tamper")
"""What a check is for (``role`` in checks.json): ``requirement`` a check of an alert, repair or
recording requirement (its family picks its term, grader.score); ``positive`` / ``negative``
a route case (Jaccard of receivers / receiver forbidden); ``suppressed`` / ``not-suppressed``
/ ``bystander`` an inhibit case; ``preservation``, ``syntax``, ``tamper`` the whole-repo
checks (no requirement)."""

FAMILY_ROLES = {"Syntax": "syntax", "Preservation": "preservation", "Tamper": "tamper"}
"""The role of a check of these families (they never belong to a requirement)."""


class Catalog:
    """Collects checks in order; ids are unique (``A1.fire.outage@75m``)."""

    def __init__(self) -> None:
        self.checks: list[dict] = []
        self._ids: set[str] = set()

    def add(self, id: str, req: str | None, family: str, label: str, note: str, probe: dict,
            role: str | None = None) -> None:
        """Append a check ``{id, req, family, role, label, note, probe}``.

        ``role`` (:data:`ROLES`): a route case's ``positive`` / ``negative``, an inhibit case's
        ``suppressed`` / ``not-suppressed`` / ``bystander``; by default the family's
        (:data:`FAMILY_ROLES`, else ``requirement``).

        Raises:
            CatalogError: a check with this id is already in the catalog, or ``role`` is not
                one of :data:`ROLES`.
        """
        if id in self._ids:
            raise CatalogError(f"duplicate check id {id}")
        role = role or FAMILY_ROLES.get(family, "requirement")
        if role not in ROLES:
            raise CatalogError(f"check {id}: unknown role {role!r}")
        self._ids.add(id)
        self.checks.append({"id": id, "req": req, "family": family, "role": role, "label": label,
                            "note": note, "probe": probe})
