"""The world spec of a task: a fictional company's services, teams and SLOs, and the change requests.

A world is sampled from a seed (``random.Random``, so the same seed gives the same world on
every machine) and serialized as ``tests/spec.json``. Everything the grader checks is
derived from this spec, never from the oracle's rule text.
"""

from __future__ import annotations

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
    "latency": {
        "metric": "http_request_duration_seconds",
        "histogram": True,
    },
}
"""How each SLI family counts requests and errors (the input series of every scenario)."""

BURN_FACTOR = 14.4
"""Fast-burn factor over 1h and 5m: 2% of a 30-day error budget in 1 hour (SRE Workbook, ch. 5)."""

REPAIR_DEFECTS = ["per-pod", "missing-for", "threshold-low"]
"""What is wrong with the pristine HighErrorRatio (seed spec, repairs): one per task, seeded."""

NOTIFICATION = {"group_wait": [None, "1m"], "group_interval": [None, "5m"],
                "repeat_interval": ["1h", "4h"], "group_by": ["alertname", "service"]}
"""When pages go out (every company's README conventions): per timing field ``[min, max]``
(None: no bound) of the effective value on each route a page takes, after inheritance from the
root route and Alertmanager's defaults (30s / 5m / 4h, ``dispatch/route.go``); and the labels
every such route must group by, so an outage starts its own group and is sent after
``group_wait``, not after a running group's ``group_interval``."""

RECORD_SHORT = "slo:sli_error:ratio_rate5m"
RECORD_LONG = "slo:sli_error:ratio_rate1h"


@dataclass
class Service:
    """A service: its owning team, SLI family, pods and traffic.

    ``requests_per_minute`` is per pod (the scenarios' counters grow by this much each
    minute); ``slo`` is the availability objective as a ratio (0.995 = 99.5%);
    ``baseline_error_ratio`` is the normal fraction of failing requests (for a ``latency``
    service: of requests slower than ``latency_le`` seconds, the histogram bucket bound of
    its latency SLO).
    """

    name: str
    team: str
    family: str
    pods: int
    requests_per_minute: list[float]
    slo: float
    baseline_error_ratio: float
    latency_le: str | None = None  # latency SLIs: the bucket bound of a "fast enough" request (s)

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
    notification: dict = field(default_factory=lambda: {k: list(v) for k, v in NOTIFICATION.items()})

    def service(self, name: str) -> Service:
        """The service called ``name`` (KeyError if the world has none)."""
        for svc in self.services:
            if svc.name == name:
                return svc
        raise KeyError(name)

    def to_json(self) -> dict:
        """The spec as written to ``tests/spec.json``."""
        data = asdict(self)
        for svc in data["services"]:
            if svc.get("latency_le") is None:
                svc.pop("latency_le", None)
        data["version"] = 1
        data["sli_families"] = SLI_FAMILIES
        return data


def burn_threshold(slo: float) -> float:
    """Error-ratio threshold of a fast-burn alert: 14.4 x (1 - SLO) (SRE Workbook, ch. 5)."""
    return round(BURN_FACTOR * (1 - slo), 10)


def notification_conventions(notification: dict) -> list[str]:
    """README convention lines stating :data:`NOTIFICATION`-shaped bounds in words."""
    def bound(field: str) -> str:
        low, high = notification[field]
        return (f"between {low} and {high}" if low and high else f"at most {high}" if high
                else f"at least {low}")
    group_by = " and ".join(f"`{label}`" for label in notification["group_by"])
    return [
        "- Pages go out on time: on every route a page takes, after what the route inherits from",
        ("  the root route and Alertmanager's defaults (30s / 5m / 4h), `group_wait` is "
         f"{bound('group_wait')},"),
        (f"  `group_interval` {bound('group_interval')} and `repeat_interval` "
         f"{bound('repeat_interval')}; it groups by"),
        f"  at least {group_by}, so each outage is sent after `group_wait`.",
    ]


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
            notification=dict(spec.get("notification") or NOTIFICATION),
        )
    except (KeyError, TypeError) as err:
        raise ValueError(f"world spec is missing or has a bad field: {err}") from None
