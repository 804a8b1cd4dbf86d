"""Workflow ``slo-onboarding``: onboard a grpc service onto SLO alerting (seed spec, 3amBench).

Requirements: C1 SLI recording rules for the target service, A1 a multi-window fast-burn
alert on them, P1 repair of HighErrorRatio (a seeded defect, reported by a postmortem),
R1 route the owning team's alerts to its receiver, I1 inhibit the burn and error-ratio
alerts while the service's Down alert fires. Easy tasks carry C1, A1 and R1 only; hard
tasks add two repairs of Down alerts and carry no postmortem for the defects.
"""

from __future__ import annotations

import random

from tasks.generator import defects
from tasks.generator.repo import (
    AUDIT_RECEIVER,
    CLUSTER_INHIBIT,
    RUNBOOK_BASE,
    alertmanager_doc,
    burn_alert,
    company_repo,
    dump_yaml,
    inhibit_rule,
    neighbour_files,
    requirement,
    rule_groups,
    rules_file,
    sli_records,
    team_receivers,
)
from tasks.generator.world import (
    BURN_FACTOR,
    COMPANIES,
    GRPC_SERVICES,
    HTTP_SERVICES,
    RECORD_LONG,
    RECORD_SHORT,
    REPAIR_DEFECTS,
    TEAMS,
    Service,
    World,
    burn_threshold,
    notification_conventions,
)

NAME = "slo-onboarding"


def sample(task_id: str, tier: str, seed: int) -> World:
    """Sample an ``slo-onboarding`` world: onboard a grpc service onto fast-burn alerting.

    Four requirements (seed spec, 3amBench slo-onboarding): C1 SLI recording rules for the
    target service, A1 a multi-window burn-rate alert on them, R1 route the owning team's
    alerts to its receiver, I1 inhibit the burn and error-ratio alerts while the service's
    Down alert fires for the same service.
    """
    rng = random.Random(f"slo-onboarding/{tier}/{seed}")
    company = rng.choice(COMPANIES)
    services = _services(rng, tier)
    receivers = {svc.team: f"{svc.team}-pager" for svc in services}
    defect = rng.choice(REPAIR_DEFECTS)
    postmortem = f"PM-{rng.randrange(1000, 9999)}"
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
    world.requirements = _requirements(services, receivers, for_s,
                                       defects.high_error_ratio_repair(
                                           "P1", services[1], defect, postmortem,
                                           "Repair HighErrorRatio (see the postmortem)"))
    if tier == "easy":  # the core of the change: records, the alert and its route
        world.requirements = [r for r in world.requirements if r["kind"] in ("recording", "alert", "route")]
    if tier == "hard":  # two more Down alerts misbehave, reported by nobody
        for rid, svc, defect in (("P2", services[2], "per-pod"), ("P3", services[3], "for-too-long")):
            world.requirements.append(defects.down_repair(rid, svc, defect))
    return world


def _services(rng: random.Random, tier: str) -> list[Service]:
    """The grpc target (3 pods) first, then 2-4 http services (by tier), each with its own team."""
    target_name = rng.choice(GRPC_SERVICES)
    n_http = {"easy": 2, "medium": 3, "hard": 4}[tier]
    http_names = rng.sample(HTTP_SERVICES, n_http)
    teams = rng.sample(TEAMS, n_http + 1)
    slo = rng.choice([0.99, 0.995, 0.999])

    def pods_traffic(count: int) -> list[float]:
        return [float(rng.choice([80, 100, 120, 150])) for _ in range(count)]

    target = Service(
        name=target_name,
        team=teams[0],
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
    return services


def _requirements(services: list[Service], receivers: dict[str, str], for_s: int,
                  repair: dict) -> list[dict]:
    """C1, A1, P1 (``repair``), R1 and I1 on the target ``services[0]``, in that order."""
    target = services[0]
    alert_name = f"{target.camel}ErrorBudgetBurnFast"
    down_name = f"{target.camel}Down"
    return [
        {
            "id": "C1",
            "kind": "recording",
            "weight": 2,
            "service": target.name,
            "records": {"5m": RECORD_SHORT, "1h": RECORD_LONG},
            "title": f"SLI recording rules for {target.name} (grpc family)",
        },
        _burn_alert_requirement(target, alert_name, for_s),
        repair,
        {
            "id": "R1",
            "kind": "route",
            "weight": 2,
            "team": target.team,
            "receiver": receivers[target.team],
            "service": target.name,
            "title": f"Route team {target.team}'s alerts to {receivers[target.team]}",
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


def _burn_alert_requirement(target: Service, alert_name: str, for_s: int) -> dict:
    """A1: the target's multi-window fast-burn alert (SRE Workbook ch. 5, factor 14.4)."""
    return {
        "id": "A1",
        "kind": "alert",
        "weight": 3,
        "alert": alert_name,
        "service": target.name,
        "slo": target.slo,
        "factor": BURN_FACTOR,
        "threshold": burn_threshold(target.slo),
        "windows": {"long": "1h", "short": "5m"},
        "records": {"short": RECORD_SHORT, "long": RECORD_LONG},
        "for_s": for_s,
        "labels": {"severity": "page", "team": target.team},
        "condition": {"type": "burn"},
        "reference_records": True,
        "annotations": {
            "summary": {"present": True},
            "description": {"contains": target.name},
            "runbook_url": {"equals": f"https://runbooks.example.internal/slo/{target.name}"},
        },
        "title": f"Fast-burn alert {alert_name} for {target.name} (SLO {target.slo})",
    }


def postmortem(world: World) -> str:
    """The postmortem that reports the HighErrorRatio repair's symptom."""
    req = requirement(world, "repair")
    return defects.high_error_ratio_postmortem(req, world.seed)


def _repairs(world: World) -> list[dict]:
    return [r for r in world.requirements if r["kind"] == "repair"]


def pristine_files(world: World) -> dict[str, str]:
    """The monitoring repo before the change requests: path -> file text."""
    target = world.service(requirement(world, "alert")["service"])
    sibling = next(s for s in world.services if s.family == "http")
    files: dict[str, str] = {}
    files["rules/slo-recording.yml"] = rules_file(
        world, [{"name": "sli-http", "rules": sli_records("http", "")}], "slo-recording")
    burn_rules = []
    if world.tier in ("easy", "medium"):  # hard has no healthy sibling to copy
        burn_rules.append(burn_alert(sibling, f"{sibling.camel}ErrorBudgetBurnFast", sibling.slo,
                                     300, {"severity": "page", "team": sibling.team}))
    files["rules/slo-alerts.yml"] = rules_file(world, [{"name": "slo-burn", "rules": burn_rules}],
                                               "slo-alerts")
    files["rules/service-health.yml"] = service_health(world, fixed=False)
    if world.tier == "medium":  # hard: defects with no postmortem, among decoys
        repair = requirement(world, "repair")
        files[f"postmortems/{repair['postmortem']}.md"] = postmortem(world)
    return company_repo(world, files, neighbour_files(world, max_rules=4 if world.tier == "easy" else None),
                        alertmanager_config(world, target, routed=False), readme(world))


HIGH_ERROR_RATIO = defects.ratio_rule("HighErrorRatio", 0.1, 600, {"severity": "ticket"})
"""The generic ticket alert every company repo ships: a service serving over 10% errors for 10m."""


def service_health(world: World, fixed: bool) -> str:
    """rules/service-health.yml: every service's Down alert and HighErrorRatio, with the
    repair requirements' defects unless ``fixed``."""
    broken = {} if fixed else {r["alert"]: r["defect"] for r in _repairs(world)}
    rules = [defects.down_rule(s) for s in world.services]
    if world.tier != "easy":  # easy keeps the repo small (55-70 checks)
        rules.append(HIGH_ERROR_RATIO)
    rules = [defects.apply_defect(r, broken[r["alert"]]) if r["alert"] in broken else r for r in rules]
    return rules_file(world, [{"name": "service-health", "rules": rules}], "service-health")


def alertmanager_config(world: World, target: Service, routed: bool) -> dict:
    """The Alertmanager config: a receiver per team, routes by team, inhibit rules.

    ``routed`` adds the oracle's route for the target's team and its inhibit rule.
    """
    routes = [{"matchers": [f'team="{svc.team}"'], "receiver": world.teams[svc.team]}
              for svc in world.services if svc.team != target.team]
    inhibit = [dict(CLUSTER_INHIBIT)] if world.tier != "easy" else []
    if routed:
        routes.append({"matchers": [f'team="{target.team}"'], "receiver": world.teams[target.team]})
        inhibit_req = next((r for r in world.requirements if r["kind"] == "inhibit"), None)
        if inhibit_req:
            inhibit.append(inhibit_rule(inhibit_req))
    return alertmanager_doc(team_receivers(world), routes, inhibit)


def solution_files(world: World) -> dict[str, str]:
    """The oracle's version of every file it changes (one file per change request group)."""
    pristine = pristine_files(world)
    alert = requirement(world, "alert")
    target = world.service(alert["service"])
    recording = rule_groups(pristine["rules/slo-recording.yml"])
    recording.append({"name": f"sli-{target.name}",
                      "rules": sli_records("grpc", f'service="{target.name}"')})
    alerts = rule_groups(pristine["rules/slo-alerts.yml"])
    alerts[0]["rules"].append(
        burn_alert(target, alert["alert"], alert["slo"], alert["for_s"], alert["labels"]))
    return {
        "rules/slo-recording.yml": rules_file(world, recording, "slo-recording"),
        "rules/slo-alerts.yml": rules_file(world, alerts, "slo-alerts"),
        "rules/service-health.yml": service_health(world, fixed=True),
        "alertmanager/alertmanager.yml": dump_yaml(alertmanager_config(world, target, routed=True)),
    }


def reference_records(world: World) -> str:
    """The reference SLI recording rules (pristine http ones plus the target's grpc ones).

    The grader substitutes these for the agent's records when it scores the burn alert's
    second half (seed spec: q = 1/2 q(agent records) + 1/2 q(reference records)).
    """
    alert = requirement(world, "alert")
    return dump_yaml({"groups": [
        {"name": "reference-sli-http", "rules": sli_records("http", "")},
        {"name": "reference-sli-target", "rules": sli_records("grpc", f'service="{alert["service"]}"')},
    ]})


def readme(world: World) -> str:
    """The repo's README: naming, label, annotation and routing conventions."""
    lines = [
        f"# {world.company} monitoring",
        "",
        "Prometheus alerting and recording rules (`rules/`) and the Alertmanager",
        "configuration (`alertmanager/alertmanager.yml`) for our production services.",
        "",
        "## Services",
        "",
        "| service | team | SLI family | SLO |",
        "|---|---|---|---|",
    ]
    for svc in world.services:
        lines.append(f"| {svc.name} | {svc.team} | {svc.family} | {svc.slo * 100:g}% |")
    lines += [
        "",
        "SLI families: `http` services count requests in `http_requests_total{code}`",
        "(errors: `code=~\"5..\"`); `grpc` services in `grpc_server_handled_total{grpc_code}`",
        "(errors: `grpc_code!=\"OK\"`). Every series carries `service` and `pod` labels.",
        "",
        "## Conventions",
        "",
        "- SLI recording rules are `slo:sli_error:ratio_rate<window>` (windows `5m` and `1h`),",
        "  one series per service (`sum by (service)`), the ratio of failed to all requests.",
        "- Fast-burn alerts are named `<Service>ErrorBudgetBurnFast` (`chat-gw` -> `ChatGw`):",
        "  both the 1h and the 5m SLI records above 14.4 x (1 - SLO), with a `for` of a few",
        "  minutes (see each service's on-call policy below).",
        "- Every paging alert carries `severity: page` and `team: <owning team>`, and the",
        "  annotations `summary`, `description` and `runbook_url`",
        f"  (`{RUNBOOK_BASE}/slo/<service>` for SLO alerts).",
        "- Alertmanager routes by the `team` label to the team's receiver `<team>-pager`;",
        "  anything unrouted goes to `default-slack`. The first route copies every page",
        f"  (`severity=\"page\"`) to `{AUDIT_RECEIVER}` and continues (`continue: true`), so a page",
        "  reaches both the audit log and its team.",
        "- A service's `<Service>Down` alert pages when the sum of its targets' `up` is 0 for",
        "  `2m` (one page per service, not per pod); it inhibits the service's other alerts for",
        "  the same service only (`equal: [service]`), so an outage pages once.",
        *notification_conventions(world.notification),
        "",
        "## On-call policy",
        "",
    ]
    alert = requirement(world, "alert")
    lines.append(f"- {alert['service']}: fast-burn alerts wait `for: {alert['for_s'] // 60}m` "
                 "before paging.")
    lines.append("- other services: `for: 5m`.")
    return "\n".join(lines) + "\n"


def instruction(world: World) -> str:
    """The task's instruction.md: explicit at easy, intent plus README conventions at medium,
    outcomes only at hard (no names, no windows, no count of the broken alerts)."""
    alert, rec, route = (requirement(world, k) for k in ("alert", "recording", "route"))
    svc = world.service(alert["service"])
    head = [f"# {world.company}: change requests for the monitoring repo", "",
            "The repo is in `monitoring/`. Keep every rule, receiver, route and inhibit rule",
            "that a request does not mention exactly as it is.", ""]
    if world.tier == "easy":
        body = [
            (f"- **C1.** Add SLI recording rules `{rec['records']['5m']}` and "
             f"`{rec['records']['1h']}` for `{svc.name}` (grpc family: "
             f"`grpc_server_handled_total`, errors `grpc_code!=\"OK\"`), one series per service "
             "(`sum by (service)`), the ratio of failed to all requests."),
            f"- **A1.** Add `{alert['alert']}` for `{svc.name}` (SLO {alert['slo']}): fire when "
            f"both `{alert['records']['long']}` and `{alert['records']['short']}` exceed "
            f"14.4 x (1 - {alert['slo']}), `for: {alert['for_s'] // 60}m`, labels "
            + ", ".join(f"`{k}: {v}`" for k, v in sorted(alert["labels"].items()))
            + f", annotations `summary`, `description` (naming the service) and `runbook_url: "
            f"{RUNBOOK_BASE}/slo/{svc.name}`.",
            (f"- **R1.** Team {route['team']} is now on call for `{svc.name}`, but nothing routes "
             f"to them yet. Route alerts with `team=\"{route['team']}\"` to receiver "
             f"`{route['receiver']}`."),
        ]
    elif world.tier == "hard":
        body = [
            (f"- **A1.** Page {route['team']} when `{svc.name}` is burning its error budget fast "
             f"(SLO {alert['slo'] * 100:g}%)."),
            (f"- **C1.** Whatever that alert needs to measure `{svc.name}` belongs in the repo as "
             "recording rules, like the other services have."),
            f"- **R1.** {route['team'].capitalize()} now owns `{svc.name}`.",
            (f"- **I1.** When `{svc.name}` is down, its other alerts should stay quiet; nothing else "
             "should be muted."),
            ("- **Repairs.** On-call says some of the existing alerts misbehave. Find them and fix "
             "them, keeping their purpose."),
        ]
    else:
        repair = requirement(world, "repair")
        body = [
            (f"- **C1.** `{svc.name}` has no SLI records yet. Add them following our conventions "
             "(see README.md)."),
            (f"- **A1.** Onboard `{svc.name}` (SLO {alert['slo'] * 100:g}%) onto fast-burn "
             "alerting, named and labelled as our conventions say, with the on-call policy's `for`."),
            f"- **R1.** Team {route['team']} now owns `{svc.name}`; make sure its pages reach them.",
            (f"- **I1.** When `{svc.name}` is down, page once: its Down alert should mute its "
             "burn-rate alert and `HighErrorRatio` for that service, and nothing else."),
            (f"- **P1.** HighErrorRatio is misbehaving; see `postmortems/{repair['postmortem']}.md`. "
             "Fix the rule, keeping its purpose."),
        ]
    return "\n".join(head + body) + "\n"
