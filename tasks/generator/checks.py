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


class Catalog:
    """Collects checks in order; ids are unique (``A1.fire.outage@75m``)."""

    def __init__(self) -> None:
        self.checks: list[dict] = []
        self._ids: set[str] = set()

    def add(self, id: str, req: str | None, family: str, label: str, note: str, probe: dict) -> None:
        """Append a check ``{id, req, family, label, note, probe}``.

        Raises:
            CatalogError: a check with this id is already in the catalog.
        """
        if id in self._ids:
            raise CatalogError(f"duplicate check id {id}")
        self._ids.add(id)
        self.checks.append(
            {"id": id, "req": req, "family": family, "label": label, "note": note, "probe": probe}
        )
