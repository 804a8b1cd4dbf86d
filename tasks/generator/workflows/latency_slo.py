"""Workflow ``latency-slo``: onboard a service onto a latency SLO (seed spec, 3amBench).

The target serves HTTP and measures its latency with a histogram
(``http_request_duration_seconds_bucket{le}`` / ``_count``); its SLO says what share of
requests must finish within a bucket bound (for example 99.5% within 0.3 s). Requirements:
A1 a multi-window fast-burn alert on the latency SLI (silent at zero traffic, where the SLI
is 0/0 = NaN), C1 the latency SLI recording rules it reads, R1 route the owning team.
Medium adds I1 (the service's Down alert mutes the latency alert for the same service) and
P1, a repair of HighErrorRatio reported by a postmortem; hard adds two Down repairs that
nobody reported, and ships no healthy latency alert to copy.
"""

from __future__ import annotations

import random

from tasks.generator import defects
from tasks.generator.repo import (
    CLUSTER_INHIBIT,
    ROUTING_CONVENTIONS,
    RUNBOOK_BASE,
    alertmanager_doc,
    company_repo,
    dump_yaml,
    inhibit_rule,
    neighbour_files,
    requirement,
    rule_groups,
    rules_file,
    services_table,
    sli_records,
    team_receivers,
)
from tasks.generator.world import (
    BURN_FACTOR,
    COMPANIES,
    HTTP_SERVICES,
    TEAMS,
    Service,
    World,
    burn_threshold,
)

NAME = "latency-slo"

LATENCY_SHORT = "slo:sli_latency:ratio_rate5m"
LATENCY_LONG = "slo:sli_latency:ratio_rate1h"
"""The latency SLI records: the fraction of requests slower than the SLO's bucket bound."""

LATENCY_BOUNDS = ("0.25", "0.3", "0.5")
"""Bucket bounds (seconds) a latency SLO may name; LATENCY_BUCKETS adds the other buckets."""

HISTOGRAM = "http_request_duration_seconds"


def sample(task_id: str, tier: str, seed: int) -> World:
    """Sample a ``latency-slo`` world: a histogram-measured service to onboard, a latency
    sibling already onboarded, and http services (Down alerts, the HighErrorRatio repair).

    Requirements (in this order: the alert first, its scenarios are unprefixed and C1's Value
    checks read them): A1 latency fast-burn alert, C1 latency SLI records, R1 route;
    medium and hard add I1 (inhibit) and P1 (HighErrorRatio repair); hard adds P2 and P3
    (the target's and an http service's Down alerts, shipped broken, no postmortem).
    """
    rng = random.Random(f"latency-slo/{tier}/{seed}")
    company = rng.choice(COMPANIES)
    n_http = {"easy": 0, "medium": 2, "hard": 3}[tier]  # easy: a small repo, two latency services
    target_name, sibling_name, *http_names = rng.sample(HTTP_SERVICES, 2 + n_http)
    teams = rng.sample(TEAMS, 2 + n_http)
    target_le, sibling_le = rng.sample(LATENCY_BOUNDS, 2)

    def service(name: str, team: str, family: str, le: str | None = None) -> Service:
        slo = rng.choice([0.99, 0.995, 0.999])
        pods = 3 if name == target_name else rng.choice([2, 3])
        return Service(name=name, team=team, family=family, pods=pods,
                       requests_per_minute=[float(rng.choice([80, 100, 120, 150])) for _ in range(pods)],
                       slo=slo, baseline_error_ratio=round(burn_threshold(slo) / 40, 6), latency_le=le)

    target = service(target_name, teams[0], "latency", target_le)
    services = [target, service(sibling_name, teams[1], "latency", sibling_le)]
    services += [service(name, team, "http") for name, team in zip(http_names, teams[2:])]
    world = World(
        task_id=task_id, workflow=NAME, tier=tier, seed=seed, company=company, services=services,
        teams={team: f"{team}-pager" for team in teams},
        rules_format="PrometheusRule" if tier == "hard" and seed % 2 == 1 else "plain",
    )
    alert_name = f"{target.camel}LatencyBudgetBurnFast"
    ratio_defect = rng.choice(defects.RATIO_DEFECTS)
    postmortem_id = f"PM-{rng.randrange(1000, 9999)}"
    for_s = rng.choice([180, 240, 300])
    down_defects = rng.sample(["per-pod", "for-too-long"], 2)
    world.requirements = [
        {
            "id": "A1", "kind": "alert", "weight": 3, "alert": alert_name, "service": target.name,
            "slo": target.slo, "factor": BURN_FACTOR, "threshold": burn_threshold(target.slo),
            "latency_le": target.latency_le, "windows": {"long": "1h", "short": "5m"},
            "records": {"short": LATENCY_SHORT, "long": LATENCY_LONG}, "for_s": for_s,
            "labels": {"severity": "page", "team": target.team},
            "condition": {"type": "latency-burn"}, "reference_records": True,
            "annotations": {
                "summary": {"present": True},
                "description": {"contains": target.name},
                "runbook_url": {"equals": f"{RUNBOOK_BASE}/slo/{target.name}"},
            },
            "title": f"Latency fast-burn alert {alert_name} for {target.name} "
                     f"({target.slo * 100:g}% within {target.latency_le}s)",
        },
        {
            "id": "C1", "kind": "recording", "weight": 2, "service": target.name,
            "records": {"5m": LATENCY_SHORT, "1h": LATENCY_LONG},
            "title": f"Latency SLI recording rules for {target.name} (le={target.latency_le})",
        },
        {
            "id": "R1", "kind": "route", "weight": 2, "team": target.team,
            "receiver": world.teams[target.team], "service": target.name,
            "title": f"Route team {target.team}'s alerts to {world.teams[target.team]}",
        },
    ]
    if tier in ("medium", "hard"):
        repair_svc = services[2]
        world.requirements += [
            {
                "id": "I1", "kind": "inhibit", "weight": 2, "source": f"{target.camel}Down",
                "targets": [alert_name], "equal": ["service"], "service": target.name,
                "title": f"While {target.camel}Down fires, mute {alert_name} for the same service",
            },
            defects.high_error_ratio_repair("P1", repair_svc, ratio_defect, postmortem_id,
                                    "Repair HighErrorRatio (see the postmortem)"),
        ]
    if tier == "hard":  # the Down alerts the inhibit rule relies on misbehave, reported by nobody
        world.requirements += [defects.down_repair("P2", target, down_defects[0]),
                               defects.down_repair("P3", services[3], down_defects[1])]
    return world


def latency_records(svc: Service) -> list[dict]:
    """The latency SLI of ``svc`` over 5m and 1h: 1 - (requests within ``le``) / (all requests).

    One series per service (``sum by (service)``). At zero traffic the ratio is 0/0 = NaN,
    so the series stays and nothing comparing it fires.
    """
    sel = f'service="{svc.name}"'
    return [{
        "record": f"slo:sli_latency:ratio_rate{window}",
        "expr": f"1 - (sum by (service) (rate({HISTOGRAM}_bucket{{{sel},le=\"{svc.latency_le}\"}}[{window}]))"
                f" / sum by (service) (rate({HISTOGRAM}_count{{{sel}}}[{window}])))",
    } for window in ("5m", "1h")]


def latency_burn_alert(svc: Service, alert: str, for_s: int, labels: dict) -> dict:
    """A latency fast-burn alert: both latency SLI records over 14.4 x (1 - SLO) (SRE Workbook
    ch. 5, multiwindow, multi-burn-rate alerts), for ``for_s`` seconds."""
    threshold = f"(14.4 * (1 - {svc.slo}))"
    sel = f'{{service="{svc.name}"}}'
    return {
        "alert": alert,
        "expr": f"{LATENCY_LONG}{sel} > {threshold}\nand\n{LATENCY_SHORT}{sel} > {threshold}\n",
        "for": f"{for_s // 60}m",
        "labels": dict(labels),
        "annotations": {
            "summary": f"{svc.name} is burning its latency budget fast",
            "description": "{{ $labels.service }}: requests slower than "
                           f"{svc.latency_le}s are over 14.4x the latency SLO budget over 1h and 5m.",
            "runbook_url": f"{RUNBOOK_BASE}/slo/{svc.name}",
        },
    }


HIGH_ERROR_RATIO = defects.ratio_rule("HighErrorRatio", 0.1, 600, {"severity": "ticket"})
"""The generic ticket alert every company repo ships: a service serving over 10% errors for 10m."""


def _sibling(world: World) -> Service:
    return [s for s in world.services if s.family == "latency"][1]


def _repairs(world: World) -> list[dict]:
    return [r for r in world.requirements if r["kind"] == "repair"]


def postmortem(world: World) -> str:
    """The postmortem that reports the HighErrorRatio repair's symptom (never its fix)."""
    req = next(r for r in _repairs(world) if r["alert"] == "HighErrorRatio")
    return defects.high_error_ratio_postmortem(req, world.seed)


def recording_file(world: World, with_target: bool) -> str:
    """rules/slo-recording.yml: the http error SLIs (if the world has http services), the
    sibling's latency SLI and, with ``with_target``, the target's."""
    groups = []
    if any(s.family == "http" for s in world.services):
        groups.append({"name": "sli-http", "rules": sli_records("http", "")})
    latency = [_sibling(world)] + ([world.services[0]] if with_target else [])
    groups += [{"name": f"sli-latency-{svc.name}", "rules": latency_records(svc)} for svc in latency]
    return rules_file(world, groups, "slo-recording")


def service_health(world: World, fixed: bool) -> str:
    """rules/service-health.yml: every service's Down alert and HighErrorRatio, with the
    repair requirements' defects unless ``fixed``."""
    broken = {} if fixed else {r["alert"]: r["defect"] for r in _repairs(world)}
    rules = [defects.down_rule(s) for s in world.services] + [HIGH_ERROR_RATIO]
    rules = [defects.apply_defect(r, broken[r["alert"]]) if r["alert"] in broken else r for r in rules]
    return rules_file(world, [{"name": "service-health", "rules": rules}], "service-health")


def alertmanager_config(world: World, routed: bool) -> dict:
    """Routes by team for every team but the target's; ``routed`` adds the oracle's route for
    the target's team and (medium, hard) its inhibit rule."""
    target = world.services[0]
    routes = [{"matchers": [f'team="{svc.team}"'], "receiver": world.teams[svc.team]}
              for svc in world.services[1:]]
    inhibit = [dict(CLUSTER_INHIBIT)]
    if routed:
        routes.append({"matchers": [f'team="{target.team}"'], "receiver": world.teams[target.team]})
        for req in (r for r in world.requirements if r["kind"] == "inhibit"):
            inhibit.append(inhibit_rule(req))
    doc = alertmanager_doc(team_receivers(world), routes, inhibit)
    if world.tier == "easy":  # a small repo: Alertmanager's defaults, no global block
        doc.pop("global")
    return doc


def pristine_files(world: World) -> dict[str, str]:
    """The monitoring repo before the change requests: path -> file text."""
    sibling = _sibling(world)
    burn_rules = []
    if world.tier != "hard":  # hard has no healthy latency alert to copy
        burn_rules.append(latency_burn_alert(sibling, f"{sibling.camel}LatencyBudgetBurnFast", 300,
                                             {"severity": "page", "team": sibling.team}))
    files = {
        "rules/slo-recording.yml": recording_file(world, with_target=False),
        "rules/slo-alerts.yml": rules_file(world, [{"name": "slo-latency", "rules": burn_rules}],
                                           "slo-alerts"),
    }
    if world.tier != "easy":  # easy: a small repo with the SLO rules only
        files["rules/service-health.yml"] = service_health(world, fixed=False)
    if world.tier == "medium":  # hard: defects with no postmortem, among decoys
        files[f"postmortems/{requirement(world, 'repair')['postmortem']}.md"] = postmortem(world)
    return company_repo(world, files, neighbour_files(world),
                        alertmanager_config(world, routed=False), readme(world))


def solution_files(world: World) -> dict[str, str]:
    """The oracle's version of every file it changes."""
    alert = requirement(world, "alert")
    target = world.service(alert["service"])
    alerts = rule_groups(pristine_files(world)["rules/slo-alerts.yml"])
    alerts[0]["rules"].append(latency_burn_alert(target, alert["alert"], alert["for_s"], alert["labels"]))
    files = {
        "rules/slo-recording.yml": recording_file(world, with_target=True),
        "rules/slo-alerts.yml": rules_file(world, alerts, "slo-alerts"),
        "alertmanager/alertmanager.yml": dump_yaml(alertmanager_config(world, routed=True)),
    }
    if world.tier != "easy":
        files["rules/service-health.yml"] = service_health(world, fixed=True)
    return files


def reference_records(world: World) -> str:
    """Every ``slo:sli_latency:*`` record a correct repo has: the sibling's and the target's.

    The grader strips the agent's rules of these names and substitutes these when it scores
    the burn alert's second half (seed spec: q = 1/2 q(agent records) + 1/2 q(reference
    records)); the http error records keep other names and are not stripped.
    """
    return dump_yaml({"groups": [
        {"name": f"reference-sli-latency-{svc.name}", "rules": latency_records(svc)}
        for svc in (_sibling(world), world.services[0])
    ]})


def readme(world: World) -> str:
    """The repo's README: services, latency SLOs, naming, label and routing conventions."""
    alert = requirement(world, "alert")
    lines = [f"# {world.company} monitoring", "",
             "Prometheus alerting and recording rules (`rules/`) and the Alertmanager",
             "configuration (`alertmanager/alertmanager.yml`) for our production services.", ""]
    lines += services_table(world)
    lines += ["## Latency SLOs", "",
              "For a `latency` service the SLO column is the share of requests that must finish",
              "within its latency threshold, a bucket bound of the histogram:", ""]
    for svc in (s for s in world.services if s.family == "latency"):
        lines.append(f"- {svc.name}: {svc.slo * 100:g}% of requests within {svc.latency_le} s "
                     f"(`le=\"{svc.latency_le}\"`).")
    http = any(s.family == "http" for s in world.services)
    lines += [
        "",
        "## Conventions",
        "",
        *(["- Error SLI records are `slo:sli_error:ratio_rate<window>` (windows `5m` and `1h`)."]
          if http else []),
        f"- Latency SLI records are `{LATENCY_SHORT}` and `{LATENCY_LONG}`:",
        "  the fraction of requests slower than the service's latency threshold, one series",
        "  per service (`sum by (service)`), one group per service (each has its own `le`).",
        "- Latency fast-burn alerts are named `<Service>LatencyBudgetBurnFast`: both the 1h and",
        "  the 5m latency SLI over 14.4 x (1 - SLO), with the service's on-call `for` (below).",
        "  A service with no traffic has no latency to judge and must not page.",
        "- Annotations: `summary`, `description` (naming the service) and `runbook_url`",
        f"  (`{RUNBOOK_BASE}/slo/<service>` for SLO alerts).",
        *ROUTING_CONVENTIONS,
        "",
        "## On-call policy",
        "",
        f"- {alert['service']}: latency fast-burn alerts wait `for: {alert['for_s'] // 60}m`.",
        "- other services: `for: 5m`" + ("; `<Service>Down` alerts `for: 2m`." if http else "."),
    ]
    return "\n".join(lines) + "\n"


def instruction(world: World) -> str:
    """instruction.md: explicit at easy, intent plus README conventions at medium, outcomes
    only at hard (no names, no windows, no count of the broken alerts)."""
    alert, rec, route = (requirement(world, k) for k in ("alert", "recording", "route"))
    svc = world.service(alert["service"])
    slo = f"{svc.slo * 100:g}% of requests within {svc.latency_le} s"
    head = [f"# {world.company}: change requests for the monitoring repo", "",
            "The repo is in `monitoring/`. Keep every rule, receiver, route and inhibit rule",
            "that a request does not mention exactly as it is.", ""]
    if world.tier == "easy":
        body = [
            (f"- **A1.** Add `{alert['alert']}` for `{svc.name}` (latency SLO: {slo}): fire when "
             f"both `{alert['records']['long']}` and `{alert['records']['short']}` exceed "
             f"14.4 x (1 - {svc.slo}), `for: {alert['for_s'] // 60}m`, labels "
             + ", ".join(f"`{k}: {v}`" for k, v in sorted(alert["labels"].items()))
             + f", annotations `summary`, `description` (naming the service) and `runbook_url: "
             f"{RUNBOOK_BASE}/slo/{svc.name}`. It must stay silent when `{svc.name}` has no traffic."),
            (f"- **C1.** Add latency SLI recording rules `{rec['records']['5m']}` and "
             f"`{rec['records']['1h']}` for `{svc.name}`: the fraction of requests slower than "
             f"{svc.latency_le} s, from `{HISTOGRAM}_bucket{{le=\"{svc.latency_le}\"}}` and "
             f"`{HISTOGRAM}_count`, one series per service (`sum by (service)`)."),
            (f"- **R1.** Team {route['team']} is now on call for `{svc.name}`, but nothing routes "
             f"to them yet. Route alerts with `team=\"{route['team']}\"` to receiver "
             f"`{route['receiver']}`."),
        ]
    elif world.tier == "medium":
        repair = requirement(world, "repair")
        body = [
            (f"- **A1.** Onboard `{svc.name}` onto latency fast-burn alerting (its latency SLO is "
             "in README.md), named, labelled and timed as our conventions and on-call policy say."),
            f"- **C1.** `{svc.name}` has no latency SLI records yet. Add them following our conventions.",
            f"- **R1.** Team {route['team']} now owns `{svc.name}`; make sure its pages reach them.",
            (f"- **I1.** When `{svc.name}` is down, page once: its Down alert should mute its latency "
             "burn alert for that service, and nothing else."),
            (f"- **P1.** HighErrorRatio is misbehaving; see `postmortems/{repair['postmortem']}.md`. "
             "Fix the rule, keeping its purpose."),
        ]
    else:
        body = [
            (f"- **A1.** Page {route['team']} when `{svc.name}` is burning its latency budget fast "
             f"({slo}). A quiet night with no traffic is not an incident."),
            (f"- **C1.** Whatever that alert needs to measure `{svc.name}`'s latency belongs in the "
             "repo as recording rules, like the other services have."),
            f"- **R1.** {route['team'].capitalize()} now owns `{svc.name}`.",
            (f"- **I1.** When `{svc.name}` is down, its latency alert should stay quiet; nothing "
             "else should be muted."),
            ("- **Repairs.** On-call says some of the existing alerts misbehave. Find them and fix "
             "them, keeping their purpose."),
        ]
    return "\n".join(head + body) + "\n"
