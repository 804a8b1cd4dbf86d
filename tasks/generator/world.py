"""The world spec of a task: a fictional company's services, teams and SLOs, and the change requests.

A world is sampled from a seed (``random.Random``, so the same seed gives the same world on
every machine) and serialized as ``tests/spec.json``. Everything the grader checks is
derived from this spec, never from the oracle's rule text.
"""

from __future__ import annotations

import random
from dataclasses import asdict, dataclass, field

COMPANIES = ["Lumenfield", "Corvid Labs", "Harborline", "Quillstack", "Tidewater Systems"]

# Service name pools per SLI family: http services expose http_requests_total{code},
# grpc services grpc_server_handled_total{grpc_code}.
HTTP_SERVICES = ["search-api", "checkout", "catalog", "profile-api", "media-edge", "billing-api"]
GRPC_SERVICES = ["chat-gw", "ledger-rpc", "notify-rpc", "geo-rpc"]
TEAMS = ["payments", "search", "growth", "platform", "messaging", "storefront"]

SLI_FAMILIES = {
    "http": {
        "metric": "http_requests_total",
        "error_label": "code",
        "ok_value": "200",
        "error_value": "500",
        "error_selector": 'code=~"5.."',
    },
    "grpc": {
        "metric": "grpc_server_handled_total",
        "error_label": "grpc_code",
        "ok_value": "OK",
        "error_value": "Unavailable",
        "error_selector": 'grpc_code!="OK"',
    },
}
"""How each SLI family counts requests and errors (the input series of every scenario)."""

BURN_FACTOR = 14.4
"""Fast-burn factor over 1h and 5m: 2% of a 30-day error budget in 1 hour (SRE Workbook, ch. 5)."""

REPAIR_DEFECTS = ["per-pod", "missing-for", "threshold-low"]
"""What is wrong with the pristine HighErrorRatio (seed spec, repairs): one per task, seeded."""

RECORD_SHORT = "slo:sli_error:ratio_rate5m"
RECORD_LONG = "slo:sli_error:ratio_rate1h"


@dataclass
class Service:
    """A service: its owning team, SLI family, pods and traffic.

    ``requests_per_minute`` is per pod (the scenarios' counters grow by this much each
    minute); ``slo`` is the availability objective as a ratio (0.995 = 99.5%);
    ``baseline_error_ratio`` is the normal fraction of failing requests.
    """

    name: str
    team: str
    family: str
    pods: int
    requests_per_minute: list[float]
    slo: float
    baseline_error_ratio: float

    @property
    def camel(self) -> str:
        """``chat-gw`` -> ``ChatGw``: the prefix of the service's alert names."""
        return "".join(part.capitalize() for part in self.name.split("-"))


@dataclass
class World:
    """The hidden world of one task: company, services, teams and requirements (JSON-able)."""

    task_id: str
    workflow: str
    tier: str
    seed: int
    company: str
    services: list[Service]
    teams: dict[str, str]  # team -> receiver name
    requirements: list[dict] = field(default_factory=list)
    evaluation_interval_s: int = 60
    rules_format: str = "plain"  # or "PrometheusRule" (monitoring.coreos.com/v1 manifests)

    def service(self, name: str) -> Service:
        """The service called ``name`` (KeyError if the world has none)."""
        for svc in self.services:
            if svc.name == name:
                return svc
        raise KeyError(name)

    def to_json(self) -> dict:
        """The spec as written to ``tests/spec.json``."""
        data = asdict(self)
        data["version"] = 1
        data["sli_families"] = SLI_FAMILIES
        return data


def burn_threshold(slo: float) -> float:
    """Error-ratio threshold of a fast-burn alert: 14.4 x (1 - SLO) (SRE Workbook, ch. 5)."""
    return round(BURN_FACTOR * (1 - slo), 10)


def sample_slo_onboarding(task_id: str, tier: str, seed: int) -> World:
    """Sample an ``slo-onboarding`` world: onboard a grpc service onto fast-burn alerting.

    Four requirements (seed spec, 3amBench slo-onboarding): C1 SLI recording rules for the
    target service, A1 a multi-window burn-rate alert on them, R1 route the owning team's
    alerts to its receiver, I1 inhibit the burn and error-ratio alerts while the service's
    Down alert fires for the same service.
    """
    rng = random.Random(f"slo-onboarding/{tier}/{seed}")
    company = rng.choice(COMPANIES)
    target_name = rng.choice(GRPC_SERVICES)
    http_names = rng.sample(HTTP_SERVICES, 3)
    teams = rng.sample(TEAMS, 4)
    target_team = teams[0]
    slo = rng.choice([0.99, 0.995, 0.999])

    def pods_traffic(count: int) -> list[float]:
        return [float(rng.choice([80, 100, 120, 150])) for _ in range(count)]

    target = Service(
        name=target_name,
        team=target_team,
        family="grpc",
        pods=3,
        requests_per_minute=pods_traffic(3),
        slo=slo,
        baseline_error_ratio=round(burn_threshold(slo) / 40, 6),
    )
    services = [target]
    for index, name in enumerate(http_names):
        other_slo = rng.choice([0.99, 0.995, 0.999])
        services.append(
            Service(
                name=name,
                team=teams[1 + index],
                family="http",
                pods=rng.choice([2, 3]),
                requests_per_minute=[],
                slo=other_slo,
                baseline_error_ratio=round(burn_threshold(other_slo) / 40, 6),
            )
        )
    for svc in services[1:]:
        svc.requests_per_minute = pods_traffic(svc.pods)

    receivers = {team: f"{team}-pager" for team in teams}
    repair_service = services[1]
    defect = rng.choice(REPAIR_DEFECTS)
    postmortem = f"PM-{rng.randrange(1000, 9999)}"
    alert_name = f"{target.camel}ErrorBudgetBurnFast"
    down_name = f"{target.camel}Down"
    for_s = rng.choice([240, 300, 360])
    world = World(
        task_id=task_id,
        workflow="slo-onboarding",
        tier=tier,
        seed=seed,
        company=company,
        services=services,
        teams=receivers,
        rules_format="PrometheusRule" if tier == "hard" and seed % 2 == 1 else "plain",
    )
    world.requirements = [
        {
            "id": "C1",
            "kind": "recording",
            "weight": 2,
            "service": target.name,
            "records": {"5m": RECORD_SHORT, "1h": RECORD_LONG},
            "title": f"SLI recording rules for {target.name} (grpc family)",
        },
        {
            "id": "A1",
            "kind": "alert",
            "weight": 3,
            "alert": alert_name,
            "service": target.name,
            "slo": slo,
            "factor": BURN_FACTOR,
            "threshold": burn_threshold(slo),
            "windows": {"long": "1h", "short": "5m"},
            "records": {"short": RECORD_SHORT, "long": RECORD_LONG},
            "for_s": for_s,
            "labels": {"severity": "page", "team": target_team},
            "condition": {"type": "burn"},
            "reference_records": True,
            "annotations": {
                "summary": {"present": True},
                "description": {"contains": target.name},
                "runbook_url": {"equals": f"https://runbooks.example.internal/slo/{target.name}"},
            },
            "title": f"Fast-burn alert {alert_name} for {target.name} (SLO {slo})",
        },
        {
            "id": "P1",
            "kind": "repair",
            "weight": 3,
            "alert": "HighErrorRatio",
            "service": repair_service.name,
            "generic": True,
            "condition": {"type": "ratio", "window_min": 5},
            "threshold": 0.1,
            "for_s": 600,
            "labels": {"severity": "ticket"},
            "annotations": {"summary": {"present": True}},
            "defect": defect,
            "postmortem": postmortem,
            "title": "Repair HighErrorRatio (see the postmortem)",
        },
        {
            "id": "R1",
            "kind": "route",
            "weight": 2,
            "team": target_team,
            "receiver": receivers[target_team],
            "service": target.name,
            "title": f"Route team {target_team}'s alerts to {receivers[target_team]}",
        },
        {
            "id": "I1",
            "kind": "inhibit",
            "weight": 2,
            "source": down_name,
            "targets": [alert_name, "HighErrorRatio"],
            "equal": ["service"],
            "service": target.name,
            "title": f"While {down_name} fires, mute {alert_name} and HighErrorRatio "
            "for the same service",
        },
    ]
    return world


def world_from_json(spec: dict) -> World:
    """Rebuild a :class:`World` from ``tests/spec.json`` content.

    Raises:
        ValueError: a required field is missing or has the wrong type.
    """
    try:
        services = [Service(**svc) for svc in spec["services"]]
        return World(
            task_id=spec["task_id"],
            workflow=spec["workflow"],
            tier=spec["tier"],
            seed=int(spec["seed"]),
            company=spec["company"],
            services=services,
            teams=dict(spec["teams"]),
            requirements=list(spec["requirements"]),
            evaluation_interval_s=int(spec.get("evaluation_interval_s", 60)),
            rules_format=spec.get("rules_format", "plain"),
        )
    except (KeyError, TypeError) as err:
        raise ValueError(f"world spec is missing or has a bad field: {err}") from None
