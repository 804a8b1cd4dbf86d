"""Workflow ``missed-page-postmortem``: an outage paged nobody; fix everything that contributed.

Seed spec (3amBench, missed-page-postmortem): a total outage where the service's series
disappear, so only ``up`` / ``absent()`` can page; a label typo that broke routing; a ``for``
longer than the outage. Requirements:

- A1 (alert): the target service has no ``<Service>Down`` alert, only an error-ratio page
  that goes silent when its series vanish; add one that also pages through ``absent()``.
- R1 (route, repair of a typo): the route of the target's team matches a misspelt team, so
  its pages fall to ``default-slack``; they must reach ``<team>-pager`` (and the audit log).
- P1 (repair): another service's Down alert waits ``for: 30m`` while outages last 25 minutes.
- medium adds I1 (the target's Down alert mutes its error-ratio alerts, same service) and
  P2 (HighErrorRatio ships with a seeded ratio defect, reported by a postmortem);
- hard adds A2 (a second service without a Down alert) and P3 (a Down alert that pages per
  pod); P2 and P3 have no postmortem, and two decoy postmortems sit beside the real ones.
"""

from __future__ import annotations

import random

from tasks.generator import defects
from tasks.generator.repo import (
    CLUSTER_INHIBIT,
    NEIGHBOURS,
    ROUTING_CONVENTIONS,
    RUNBOOK_BASE,
    alertmanager_doc,
    company_repo,
    dump_yaml,
    inhibit_rule,
    neighbour_files,
    no_reference_records,
    requirement,
    rules_file,
    services_table,
    team_receivers,
)
from tasks.generator.world import (
    COMPANIES,
    GRPC_SERVICES,
    HTTP_SERVICES,
    TEAMS,
    Service,
    World,
    burn_threshold,
)

NAME = "missed-page-postmortem"

DOWN_FOR_S = 120
"""The README's ``for`` of a Down alert (2m), the one repairs restore."""
RATIO_DEFECTS = ("per-pod", "missing-for", "threshold-low")
"""Defects HighErrorRatio (P2) may ship with."""
PAGE_RATIO = 0.05
"""Threshold of a service's own paging error-ratio alert ``<Service>ErrorRatioHigh`` (5% for 5m)."""


def typo(team: str, rng: random.Random) -> str:
    """``payments`` -> ``paymnets``: two adjacent, different letters of ``team`` swapped.

    The swap never touches the first letter, so the typo still reads as the team's name.
    """
    spots = [i for i in range(1, len(team) - 1) if team[i] != team[i + 1]]
    i = rng.choice(spots)
    return team[:i] + team[i + 1] + team[i] + team[i + 2:]


def sample(task_id: str, tier: str, seed: int) -> World:
    """Sample a ``missed-page-postmortem`` world (requirements per tier: see the module doc).

    Services: easy 2, medium 4, hard 5, each owned by its own team; the first is the target
    (no Down alert, misspelt route), the second carries the ``for-too-long`` Down alert; on
    hard the third has no Down alert either (A2) and the fourth pages per pod (P3).
    """
    rng = random.Random(f"{NAME}/{tier}/{seed}")
    company = rng.choice(COMPANIES)
    count = {"easy": 2, "medium": 4, "hard": 5}[tier]
    n_grpc = rng.choice([1, 2])
    names = [(n, "grpc") for n in rng.sample(GRPC_SERVICES, n_grpc)]
    names += [(n, "http") for n in rng.sample(HTTP_SERVICES, count - n_grpc)]
    rng.shuffle(names)
    teams = rng.sample(TEAMS, count)
    services = []
    for (name, family), team in zip(names, teams):
        slo = rng.choice([0.99, 0.995, 0.999])
        pods = rng.choice([2, 3])
        services.append(Service(
            name=name, team=team, family=family, pods=pods,
            requests_per_minute=[float(rng.choice([80, 100, 120, 150])) for _ in range(pods)],
            slo=slo, baseline_error_ratio=round(burn_threshold(slo) / 40, 6)))
    target, late = services[0], services[1]
    receivers = {team: f"{team}-pager" for team in teams}
    world = World(
        task_id=task_id, workflow=NAME, tier=tier, seed=seed, company=company,
        services=services, teams=receivers,
        rules_format="PrometheusRule" if tier == "hard" and seed % 2 == 1 else "plain",
    )
    numbers = rng.sample(range(1000, 9999), 3)
    reqs = [
        down_alert("A1", target, rng.choice([120, 180]), f"PM-{numbers[0]}"),
        {
            "id": "R1",
            "kind": "route",
            "weight": 2,
            "team": target.team,
            "receiver": receivers[target.team],
            "service": target.name,
            "typo": typo(target.team, rng),
            "cases": {
                "positives": [
                    {"alertname": f"{target.camel}Down", "service": target.name,
                     "severity": "page", "team": target.team},
                    {"alertname": f"{target.camel}ErrorRatioHigh", "service": target.name,
                     "severity": "page", "team": target.team},
                ],
                "negatives": [{"alertname": f"{s.camel}Down", "service": s.name,
                               "severity": "page", "team": s.team} for s in services[1:]],
            },
            "replaces": {"routes": [2]},  # the audit route is 1; the target's route comes first
            "postmortem": f"PM-{numbers[0]}",
            "title": f"Pages labelled team={target.team} reach {receivers[target.team]} again",
        },
        defects.down_repair("P1", late, "for-too-long", postmortem=f"PM-{numbers[1]}"),
    ]
    if tier in ("medium", "hard"):
        # HighErrorRatio counts http_requests_total: its replay needs an http service
        ratio_svc = next(s for s in reversed(services[1:]) if s.family == "http")
        reqs.append({
            "id": "I1",
            "kind": "inhibit",
            "weight": 2,
            "source": f"{target.camel}Down",
            "targets": [f"{target.camel}ErrorRatioHigh", "HighErrorRatio"],
            "target_severity": {f"{target.camel}ErrorRatioHigh": "page", "HighErrorRatio": "ticket"},
            "equal": ["service"],
            "service": target.name,
            "title": f"While {target.camel}Down fires, mute {target.name}'s error-ratio alerts",
        })
        reqs.append(defects.high_error_ratio_repair("P2", ratio_svc, rng.choice(RATIO_DEFECTS),
                                            f"PM-{numbers[2]}" if tier == "medium" else None))
    if tier == "hard":
        reqs.insert(1, down_alert("A2", services[2], DOWN_FOR_S, None))
        reqs.append(defects.down_repair("P3", services[3], "per-pod", postmortem=None))
    world.requirements = reqs
    return world


def down_alert(rid: str, svc: Service, for_s: int, postmortem: str | None) -> dict:
    """An alert requirement: add ``<Service>Down`` (``up`` == 0 or absent, for ``for_s`` s)."""
    return {
        "id": rid,
        "kind": "alert",
        "weight": 3,
        "alert": f"{svc.camel}Down",
        "service": svc.name,
        "condition": {"type": "down", "absent": True},
        "for_s": for_s,
        "labels": {"severity": "page", "team": svc.team},
        "annotations": {"summary": {"present": True},
                        "runbook_url": {"equals": f"{RUNBOOK_BASE}/down/{svc.name}"}},
        "postmortem": postmortem,
        "title": f"{svc.name} pages {svc.team} when it is down or its targets vanish",
    }


def _reqs(world: World, kind: str) -> list[dict]:
    return [r for r in world.requirements if r["kind"] == kind]


def _page_ratio_rule(svc: Service) -> dict:
    """``<Service>ErrorRatioHigh``: the service's own page, over 5% errors for 5m."""
    return defects.ratio_rule(f"{svc.camel}ErrorRatioHigh", PAGE_RATIO, 300,
                              {"severity": "page", "team": svc.team}, service=svc.name,
                              family=svc.family, summary=f"{svc.name} serves more than 5% errors")


HIGH_ERROR_RATIO = defects.ratio_rule("HighErrorRatio", 0.1, 600, {"severity": "ticket"})
"""The generic ticket alert: a service serving over 10% errors for 10m."""


def service_health(world: World, fixed: bool) -> str:
    """rules/service-health.yml: Down alerts, then error-ratio alerts.

    Pristine (``fixed=False``): the alert requirements' services have no Down alert and the
    repairs ship their defects; fixed: every service has its Down alert (``absent()`` as
    well for the alert requirements' services) and the defects are gone.
    """
    missing = {r["service"]: r for r in _reqs(world, "alert")}
    broken = {} if fixed else {r["alert"]: r["defect"] for r in _reqs(world, "repair")}
    downs = []
    for svc in world.services:
        if svc.name in missing:
            if fixed:
                downs.append(defects.down_rule(svc, absent=True, for_s=missing[svc.name]["for_s"]))
            continue
        downs.append(defects.down_rule(svc, for_s=DOWN_FOR_S))
    ratios = [_page_ratio_rule(world.service(name)) for name in missing]
    if world.tier != "easy":  # easy: a smaller repo (check budget), no generic ticket alert
        ratios.append(HIGH_ERROR_RATIO)
    groups = []
    for name, rules in (("service-down", downs), ("error-ratios", ratios)):
        rules = [defects.apply_defect(r, broken[r["alert"]]) if r["alert"] in broken else r
                 for r in rules]
        groups.append({"name": name, "rules": rules})
    return rules_file(world, groups, "service-health")


def alertmanager_config(world: World, fixed: bool) -> dict:
    """Routes by team (the target's team first: misspelt unless ``fixed``), inhibit rules
    (the oracle adds I1's when the world has one)."""
    route = requirement(world, "route")
    target = world.service(route["service"])
    team = route["team"] if fixed else route["typo"]
    routes = [{"matchers": [f'team="{team}"'], "receiver": route["receiver"]}]
    routes += [{"matchers": [f'team="{s.team}"'], "receiver": world.teams[s.team]}
               for s in world.services if s is not target]
    inhibit = [dict(CLUSTER_INHIBIT)]
    for req in _reqs(world, "inhibit") if fixed else []:
        inhibit.append(inhibit_rule(req))
    return alertmanager_doc(team_receivers(world), routes, inhibit)


def postmortems(world: World) -> dict[str, str]:
    """The postmortems that report defects: ``postmortems/PM-n.md`` -> text.

    The outage's own postmortem (every tier) tells both of its causes' symptoms: the target
    vanished without a page, and its team's pages went to the default channel. P1's (easy,
    medium) and P2's (medium) report their rule's symptom. Symptoms only, never the fix.
    """
    alert, route = requirement(world, "alert"), requirement(world, "route")
    svc = world.service(alert["service"])
    texts = (defects.POSTMORTEMS["missing-down"], defects.POSTMORTEMS["label-typo"])
    number = alert["postmortem"]
    files = {f"postmortems/{number}.md": "\n".join([
        f"# {number}: {svc.name} outage, nobody paged",
        "",
        "## What happened",
        "",
        texts[0][world.seed % 4].format(service=svc.name),
        "",
        texts[1][(world.seed + 1) % 4].format(team=route["team"]),
        "",
        "## Action items",
        "",
        f"- A total outage of {svc.name} must page {route['team']}, however it goes down.",
        f"- Every page for team {route['team']} must reach their pager.",
        "",
    ])}
    for req in _reqs(world, "repair"):
        if not req.get("postmortem"):
            continue
        if req["condition"]["type"] == "down":
            action = f"{req['alert']} must page within a few minutes of a total outage of {req['service']}."
        else:
            action = defects.HIGH_ERROR_RATIO_ACTION
        files[f"postmortems/{req['postmortem']}.md"] = defects.postmortem(
            req["postmortem"], req["alert"], req["defect"], world.seed, action,
            alert=req["alert"], service=req["service"])
    return files


def _neighbours(world: World) -> dict[str, str]:
    """Community neighbour files: :func:`repo.neighbour_files`, except that easy picks its one
    file among the smallest (three rules), which keeps easy within its check budget."""
    if world.tier != "easy":
        return neighbour_files(world)
    pool = [p for p in sorted(NEIGHBOURS.glob("*.yml"))
            if p.read_text(encoding="utf-8").count("- alert:") <= 3]
    chosen = random.Random(f"{world.task_id}/neighbours").choice(pool)
    return {f"rules/{chosen.name}": chosen.read_text(encoding="utf-8")}


def pristine_files(world: World) -> dict[str, str]:
    """The monitoring repo before the change requests: path -> file text."""
    files = {"rules/service-health.yml": service_health(world, fixed=False)}
    files.update(postmortems(world))
    return company_repo(world, files, _neighbours(world),
                        alertmanager_config(world, fixed=False), readme(world))


def solution_files(world: World) -> dict[str, str]:
    """The oracle's version of every file it changes."""
    return {
        "rules/service-health.yml": service_health(world, fixed=True),
        "alertmanager/alertmanager.yml": dump_yaml(alertmanager_config(world, fixed=True)),
    }


def reference_records(world: World) -> str:
    """No burn alerts in this workflow: no reference SLI records."""
    return no_reference_records()


def readme(world: World) -> str:
    """The repo's README: services, alert conventions, routing, on-call policy."""
    alert = requirement(world, "alert")
    lines = [
        f"# {world.company} monitoring",
        "",
        "Prometheus alerting rules (`rules/`) and the Alertmanager configuration",
        "(`alertmanager/alertmanager.yml`) for our production services. Incident reviews live",
        "in `postmortems/`.",
        "",
        *services_table(world),
        "## Conventions",
        "",
        "- Every service has a `<Service>Down` alert that pages its team when the service is",
        "  down: the sum of its targets' `up` is 0 for `2m`, one page per service, never one",
        f"  per pod. Annotations: `summary` and `runbook_url` (`{RUNBOOK_BASE}/down/<service>`).",
        "- `<Service>ErrorRatioHigh` pages when a service serves more than 5% errors for 5m"
        + (";" if world.tier != "easy" else "."),
        *(["  `HighErrorRatio` opens a ticket for any http service over 10% errors for 10m."]
          if world.tier != "easy" else []),
        *ROUTING_CONVENTIONS,
        "",
        "## On-call policy",
        "",
    ]
    if alert["for_s"] != DOWN_FOR_S:
        lines += [(f"- {alert['service']}: its Down alert waits `for: {alert['for_s'] // 60}m` "
                   "(its pods restart slowly)."), "- every other service: `for: 2m`."]
    else:
        lines.append("- every service: Down alerts wait `for: 2m`.")
    return "\n".join(lines) + "\n"


def instruction(world: World) -> str:
    """instruction.md: every name, ``for`` and receiver at easy; intent plus README at
    medium; outcomes only at hard (no alert names, no count of the broken rules)."""
    alert, route, late = (requirement(world, kind) for kind in ("alert", "route", "repair"))
    svc = world.service(alert["service"])
    pm = f"`postmortems/{alert['postmortem']}.md`"
    head = [f"# {world.company}: {svc.name} went down and nobody was paged", "",
            f"The repo is in `monitoring/`. Read {pm} first. Keep every rule, receiver, route",
            "and inhibit rule that a request does not mention exactly as it is.", ""]
    if world.tier == "easy":
        sel = f'up{{service="{svc.name}"}}'
        body = [
            (f"- **A1.** Add `{alert['alert']}` for `{svc.name}`: fire when "
             f"`sum by (service) ({sel}) == 0` or when `absent({sel})` (its pods gone from "
             f"service discovery), `for: {alert['for_s'] // 60}m`, labels "
             + ", ".join(f"`{k}: {v}`" for k, v in sorted(alert["labels"].items()))
             + f", annotations `summary` and `runbook_url: {RUNBOOK_BASE}/down/{svc.name}`."),
            (f"- **R1.** The route meant for team {route['team']} matches `team=\"{route['typo']}\"`, "
             f"a typo. Fix it so alerts with `team=\"{route['team']}\"` reach `{route['receiver']}` "
             "(every page still reaches the audit log too)."),
            (f"- **P1.** `{late['alert']}` never fired during a 25-minute outage of "
             f"`{late['service']}` (see `postmortems/{late['postmortem']}.md`): its `for` is longer "
             "than the outage. Make it page after `for: 2m`, keeping everything else."),
        ]
    elif world.tier == "medium":
        ratio = next(r for r in _reqs(world, "repair") if r["id"] == "P2")
        body = [
            (f"- **A1.** Make sure a total outage of `{svc.name}` pages its team, also when its pods "
             "vanish from service discovery. Follow our conventions (README.md) and the on-call "
             "policy."),
            f"- **R1.** Pages for team {route['team']} must reach their pager again.",
            (f"- **P1.** `{late['alert']}` misbehaves; see `postmortems/{late['postmortem']}.md`. "
             "Fix the rule, keeping its purpose."),
            (f"- **I1.** When `{svc.name}` is down, page once: its Down alert should mute its "
             "error-ratio alerts for that service, and nothing else."),
            (f"- **P2.** HighErrorRatio is misbehaving; see `postmortems/{ratio['postmortem']}.md`. "
             "Fix the rule, keeping its purpose."),
        ]
    else:
        second = next(r for r in _reqs(world, "alert") if r["id"] == "A2")
        body = [
            (f"- **A1.** The next time `{svc.name}` goes down, its owners must be paged within "
             "minutes, even if its pods disappear from service discovery altogether."),
            (f"- **A2.** `{second['service']}` has the same blind spot as `{svc.name}`; close it "
             "the same way."),
            f"- **R1.** Team {route['team']} must receive its pages.",
            (f"- **I1.** When `{svc.name}` is down, on-call should get one page for it, not a page "
             "per symptom; nothing else should be muted."),
            ("- **Repairs.** On-call says some of the existing alerts misbehave (one is in the "
             "postmortems, the others are not). Find them and fix them, keeping their purpose."),
        ]
    return "\n".join(head + body) + "\n"
