"""Workflow ``alert-storm-cleanup``: on-call is drowning in notifications (seed spec, 3amBench).

Clean up the alert storm while keeping every alert's purpose. Every service has a Down
page, a per-service error-ratio page (``<Service>HighErrorRatio``) and an error-ratio
ticket (``<Service>ServerErrors``); the company-wide ``HighErrorRatio`` ticket covers them
all. Requirements are repairs of seeded defects plus one inhibition:

- P1 ``HighErrorRatio`` fires once per pod (``per-pod``), it must fire once per service;
- P2 ``<A>HighErrorRatio`` flaps (``missing-for``);
- P3 ``<C>ServerErrors`` is also defined in ``rules/legacy.yml`` (``duplicate``);
- P4 ``<B>ServerErrors`` has no threshold (``no-threshold``: fires on any error);
- P5 ``<D>Down`` pages once per pod (``per-pod``: compares each target's ``up``);
- I1 while ``<A>Down`` fires, mute A's error alerts for the same service only.

Easy carries I1 and one repair as P1: the per-pod ticket (odd seeds) or the ticket with no
threshold (even seeds); medium P1-P3 and I1; hard all six, with no postmortem for P4 and P5, decoy
postmortems and no sibling inhibit rule.
"""

from __future__ import annotations

import random

from tasks.generator import defects
from tasks.generator.repo import (
    CLUSTER_INHIBIT,
    ROUTING_CONVENTIONS,
    alertmanager_doc,
    company_repo,
    decoy_postmortems,
    dump_yaml,
    neighbour_files,
    no_reference_records,
    rules_file,
    services_table,
    team_receivers,
)
from tasks.generator.world import COMPANIES, GRPC_SERVICES, HTTP_SERVICES, TEAMS, Service, World

NAME = "alert-storm-cleanup"

PAGE_RATIO, PAGE_FOR_S = 0.05, 600
"""``<Service>HighErrorRatio``: over 5% errors over 5m for 10m pages the owning team."""
TICKET_RATIO, TICKET_FOR_S = 0.03, 900
"""``<Service>ServerErrors``: over 3% errors over 5m for 15m opens a ticket for the team."""
GENERIC_RATIO, GENERIC_FOR_S = 0.1, 600
"""``HighErrorRatio``: any service over 10% errors over 5m for 10m opens a ticket."""
DOWN_FOR_S = 120
"""``<Service>Down``: the sum of the service's ``up`` is 0 for 2m."""
LEGACY_FILE = "rules/legacy.yml"
"""Where the stale duplicate of P3 lives, among legacy rules that stay."""

LEGACY_RULES = [
    {"alert": "PrometheusConfigReloadFailed",
     "expr": "prometheus_config_last_reload_successful == 0\n",
     "for": "10m", "labels": {"severity": "ticket"},
     "annotations": {"summary": "Prometheus {{ $labels.instance }} cannot reload its configuration"}},
    {"alert": "AlertmanagerNotificationsFailing",
     "expr": "sum by (integration) (rate(alertmanager_notifications_failed_total[5m])) > 0\n",
     "for": "15m", "labels": {"severity": "ticket"},
     "annotations": {"summary": "Alertmanager fails to send notifications via {{ $labels.integration }}"}},
]
"""Old rules of the legacy file that are fine (preserved)."""


def _page_rule(svc: Service) -> dict:
    return defects.ratio_rule(f"{svc.camel}HighErrorRatio", PAGE_RATIO, PAGE_FOR_S,
                              {"severity": "page", "team": svc.team}, service=svc.name,
                              family=svc.family)


def _ticket_rule(svc: Service) -> dict:
    return defects.ratio_rule(f"{svc.camel}ServerErrors", TICKET_RATIO, TICKET_FOR_S,
                              {"severity": "ticket", "team": svc.team}, service=svc.name,
                              family=svc.family)


GENERIC_RULE = defects.ratio_rule("HighErrorRatio", GENERIC_RATIO, GENERIC_FOR_S, {"severity": "ticket"})
"""The generic ticket alert every company repo ships: a service serving over 10% errors for 10m."""


def _ratio_repair(rid: str, rule: dict, svc: Service, threshold: float, for_s: int, defect: str,
                  postmortem: str | None, **extra) -> dict:
    return {
        "id": rid, "kind": "repair", "weight": 3, "alert": rule["alert"], "service": svc.name,
        **extra,
        "condition": {"type": "ratio", "window_min": 5}, "threshold": threshold, "for_s": for_s,
        "labels": dict(rule["labels"]), "annotations": {"summary": {"present": True}},
        "defect": defect, "postmortem": postmortem, "title": f"Repair {rule['alert']}",
    }


def sample(task_id: str, tier: str, seed: int) -> World:
    """Sample an ``alert-storm-cleanup`` world: services, their teams and the requirements.

    Services: easy 2 http, medium 3 http, hard 3 http and 1 grpc, each with 2-3 pods and
    its own team. Requirements (see the module docstring) are repairs of seeded defects,
    kind ``repair`` (weight 3), with a ``postmortem`` number or None, and one inhibit (I1).
    """
    rng = random.Random(f"alert-storm-cleanup/{tier}/{seed}")
    company = rng.choice(COMPANIES)
    n_http = {"easy": 2, "medium": 3, "hard": 3}[tier]
    names = [(name, "http") for name in rng.sample(HTTP_SERVICES, n_http)]
    if tier == "hard":
        names.append((rng.choice(GRPC_SERVICES), "grpc"))
    teams = rng.sample(TEAMS, len(names))
    services = []
    for (name, family), team in zip(names, teams):
        slo = rng.choice([0.99, 0.995, 0.999])
        pods = rng.choice([2, 3])
        services.append(Service(
            name=name, team=team, family=family, pods=pods,
            requests_per_minute=[float(rng.choice([80, 100, 120, 150])) for _ in range(pods)],
            slo=slo, baseline_error_ratio=round(14.4 * (1 - slo) / 40, 6)))
    world = World(task_id=task_id, workflow=NAME, tier=tier, seed=seed, company=company,
                  services=services, teams={team: f"{team}-pager" for team in teams},
                  rules_format="PrometheusRule" if tier == "hard" and seed % 2 == 1 else "plain")
    taken = {path.split("/")[-1][3:7] for path in decoy_postmortems(world)}
    numbers = [f"PM-{n}" for n in rng.sample(range(1000, 9999), 8) if str(n) not in taken]
    a, b = services[0], services[1]
    reqs = [
        _ratio_repair("P1", GENERIC_RULE, b, GENERIC_RATIO, GENERIC_FOR_S, "per-pod", numbers[0],
                      generic=True),
        _ratio_repair("P2", _page_rule(a), a, PAGE_RATIO, PAGE_FOR_S, "missing-for", numbers[1]),
    ]
    if tier != "easy":
        c = services[2]
        reqs.append(_ratio_repair("P3", _ticket_rule(c), c, TICKET_RATIO, TICKET_FOR_S,
                                  "duplicate", numbers[2]))
    if tier == "hard":  # two more, reported by nobody
        d = services[3]
        reqs.append(_ratio_repair("P4", _ticket_rule(b), b, TICKET_RATIO, TICKET_FOR_S,
                                  "no-threshold", None))
        reqs.append({
            "id": "P5", "kind": "repair", "weight": 3, "alert": f"{d.camel}Down",
            "service": d.name, "condition": {"type": "down"}, "for_s": DOWN_FOR_S,
            "labels": {"severity": "page", "team": d.team},
            "annotations": {"summary": {"present": True}}, "defect": "per-pod",
            "postmortem": None, "title": f"Repair {d.camel}Down",
        })
    if tier == "easy":  # one repair: the per-pod ticket or the ticket with no threshold
        reqs = [reqs[0] if seed % 2 == 1 else _ratio_repair(
            "P1", _ticket_rule(b), b, TICKET_RATIO, TICKET_FOR_S, "no-threshold", numbers[3])]
    reqs.append({
        "id": "I1", "kind": "inhibit", "weight": 2, "source": f"{a.camel}Down",
        "targets": _inhibit_targets(a), "equal": ["service"], "service": a.name,
        "target_severity": {f"{a.camel}HighErrorRatio": "page", f"{a.camel}ServerErrors": "ticket",
                            "HighErrorRatio": "ticket"},
        "title": f"While {a.camel}Down fires, mute {a.name}'s error alerts for the same service",
    })
    world.requirements = reqs
    return world


def _inhibit_targets(svc: Service) -> list[str]:
    return [f"{svc.camel}HighErrorRatio", f"{svc.camel}ServerErrors", "HighErrorRatio"]


def _repairs(world: World) -> list[dict]:
    return [r for r in world.requirements if r["kind"] == "repair"]


def _req(world: World, rid: str) -> dict:
    return next(r for r in world.requirements if r["id"] == rid)


def _rule_files(world: World, fixed: bool) -> dict[str, list[dict]]:
    """Rule file path -> the rules of its single group, with the defects unless ``fixed``.

    A ``duplicate`` keeps the correct rule in its file and adds a stale copy (it pages, no
    team: :func:`defects.duplicate_copy`) to the legacy file; other defects are applied in place.
    """
    files = {
        "rules/service-health.yml": [defects.down_rule(s, for_s=DOWN_FOR_S) for s in world.services]
        + [GENERIC_RULE],
        "rules/service-errors.yml": [rule for s in world.services
                                     for rule in (_page_rule(s), _ticket_rule(s))],
        LEGACY_FILE: [dict(rule) for rule in LEGACY_RULES],
    }
    if fixed:
        return files
    broken = {r["alert"]: r["defect"] for r in _repairs(world)}
    copies = []
    for path in ("rules/service-health.yml", "rules/service-errors.yml"):
        rules = files[path]
        for index, rule in enumerate(rules):
            defect = broken.get(rule["alert"])
            if defect == "duplicate":
                copies.append(defects.duplicate_copy(rule))
            elif defect:
                rules[index] = defects.apply_defect(rule, defect)
    files[LEGACY_FILE][1:1] = copies  # between the two legacy rules
    return files


GROUP_NAMES = {"rules/service-health.yml": "service-health",
               "rules/service-errors.yml": "service-errors", LEGACY_FILE: "legacy"}


def _render_rules(world: World, fixed: bool) -> dict[str, str]:
    return {path: rules_file(world, [{"name": GROUP_NAMES[path], "rules": rules}],
                             GROUP_NAMES[path])
            for path, rules in _rule_files(world, fixed).items()}


def _action(req: dict) -> str:
    """A postmortem's action item: the alert's goal, never the fix."""
    alert, service = req["alert"], req["service"]
    if req["condition"]["type"] == "down":
        return f"Make {alert} behave; it should still page when {service} is down for 2 minutes."
    who = "a service" if req.get("generic") else service
    what = "page" if req["labels"]["severity"] == "page" else "open a ticket"
    verb = "notify once" if req["defect"] == "duplicate" else "behave"
    return (f"Make {alert} {verb}; it should still {what} when {who} serves more than "
            f"{req['threshold'] * 100:g}% errors for {req['for_s'] // 60} minutes.")


def postmortems(world: World) -> dict[str, str]:
    """postmortems/<number>.md for every repair that has one (paraphrases vary by seed)."""
    files = {}
    for index, req in enumerate(_repairs(world)):
        if req.get("postmortem"):
            files[f"postmortems/{req['postmortem']}.md"] = defects.postmortem(
                req["postmortem"], f"{req['alert']} notifications", req["defect"],
                world.seed + index, _action(req), alert=req["alert"], service=req["service"])
    return files


def pristine_files(world: World) -> dict[str, str]:
    """The monitoring repo before the change requests: path -> file text."""
    files = _render_rules(world, fixed=False)
    files.update(postmortems(world))
    return company_repo(world, files, neighbour_files(world),
                        alertmanager_config(world, fixed=False), readme(world))


def _inhibit_rule(source: str, targets: list[str]) -> dict:
    return {"source_matchers": [f'alertname="{source}"'],
            "target_matchers": [f'alertname=~"{"|".join(targets)}"'], "equal": ["service"]}


def alertmanager_config(world: World, fixed: bool) -> dict:
    """Receivers and routes for every team, the cluster inhibit rule and (easy and medium)
    one sibling service's Down inhibit rule; ``fixed`` appends the I1 inhibit rule."""
    routes = [{"matchers": [f'team="{svc.team}"'], "receiver": world.teams[svc.team]}
              for svc in world.services]
    inhibit = [dict(CLUSTER_INHIBIT)]
    if world.tier != "hard":  # hard: no sibling to copy
        sibling = world.services[-1]
        inhibit.append(_inhibit_rule(f"{sibling.camel}Down", _inhibit_targets(sibling)))
    if fixed:
        req = _req(world, "I1")
        inhibit.append(_inhibit_rule(req["source"], req["targets"]))
    return alertmanager_doc(team_receivers(world), routes, inhibit)


def solution_files(world: World) -> dict[str, str]:
    """The oracle's version of every file it changes: repaired rules (the duplicate removed
    from the legacy file, which keeps its other rules) and the I1 inhibit rule."""
    pristine = pristine_files(world)
    fixed = _render_rules(world, fixed=True)
    files = {path: text for path, text in fixed.items() if pristine[path] != text}
    files["alertmanager/alertmanager.yml"] = dump_yaml(alertmanager_config(world, fixed=True))
    return files


def reference_records(world: World) -> str:
    """No burn alerts here: no reference SLI records (``groups: []``)."""
    return no_reference_records()


def readme(world: World) -> str:
    """The repo's README: services, alert conventions, routing and inhibition conventions."""
    lines = [
        f"# {world.company} monitoring",
        "",
        "Prometheus alerting rules (`rules/`) and the Alertmanager configuration",
        "(`alertmanager/alertmanager.yml`) for our production services.",
        "",
        *services_table(world),
        "## Alert conventions",
        "",
        "Every service has three alerts of its own and shares one (`chat-gw` -> `ChatGw`):",
        "",
        (f"- `<Service>Down` pages when the sum of the service's `up` is 0 for "
         f"`{DOWN_FOR_S // 60}m`."),
        (f"- `<Service>HighErrorRatio` pages when the service serves more than "
         f"{PAGE_RATIO * 100:g}% errors (failed over all requests, 5m rate) for "
         f"`{PAGE_FOR_S // 60}m`."),
        (f"- `<Service>ServerErrors` opens a ticket for the team when the service serves more "
         f"than {TICKET_RATIO * 100:g}% errors (5m rate) for `{TICKET_FOR_S // 60}m`."),
        (f"- `HighErrorRatio` opens a ticket when any service serves more than "
         f"{GENERIC_RATIO * 100:g}% errors (5m rate) for `{GENERIC_FOR_S // 60}m`."),
        "",
        "Every alert fires once per service (never once per pod) and is defined exactly once.",
        f"`{LEGACY_FILE}` holds rules from the old Prometheus server that nobody has",
        "migrated yet.",
        "",
        "## Routing and inhibition",
        "",
        *ROUTING_CONVENTIONS,
        "  Its error alerts (`<Service>HighErrorRatio`, `<Service>ServerErrors` and",
        "  `HighErrorRatio`) are the ones muted; other alerts keep notifying.",
        "",
    ]
    return "\n".join(lines)


def _easy_line(req: dict, world: World) -> str:
    svc = world.service(req["service"])
    pm = f" (see `postmortems/{req['postmortem']}.md`)" if req.get("postmortem") else ""
    if req["kind"] == "repair" and req["defect"] == "per-pod":
        return (f"- **{req['id']}.** `HighErrorRatio` opens one ticket per pod instead of one per service{pm}. "
                "Make it fire once per service (`sum by (service)`), keeping its "
                f"{GENERIC_RATIO * 100:g}% threshold over a 5m rate, `for: {GENERIC_FOR_S // 60}m` "
                "and `severity: ticket`.")
    if req["kind"] == "repair":  # no-threshold
        return (f"- **{req['id']}.** `{req['alert']}` fires on a single failed request{pm}: its "
                "expression has no threshold. Make it fire when the error ratio of "
                f"`{svc.name}` (failed over all requests, 5m rate) is above "
                f"{TICKET_RATIO * 100:g}%, keeping `for: {TICKET_FOR_S // 60}m` and its labels "
                f"`severity: ticket`, `team: {svc.team}`.")
    a = world.service(req["service"])
    return (f"- **I1.** While `{req['source']}` fires, mute "
            + ", ".join(f"`{t}`" for t in req["targets"])
            + f" for that same service only: add an inhibit rule to `alertmanager/alertmanager.yml` "
            f"with source `alertname=\"{req['source']}\"`, those targets and `equal: [service]`, "
            f"so an outage of `{a.name}` pages once.")


def instruction(world: World) -> str:
    """The task's instruction.md: explicit at easy, intent plus README conventions and
    postmortems at medium, outcomes only at hard (no names, no count of broken alerts)."""
    head = [f"# {world.company}: change requests for the monitoring repo", "",
            "On-call is drowning in notifications. Clean up the alert storm, keeping every",
            "alert's purpose. The repo is in `monitoring/`. Keep every rule, receiver, route and",
            "inhibit rule that a request does not mention exactly as it is.", ""]
    inhibit = _req(world, "I1")
    a = world.service(inhibit["service"])
    if world.tier == "easy":
        body = [_easy_line(r, world) for r in world.requirements]
    elif world.tier == "medium":
        body = [f"- **{r['id']}.** `{r['alert']}` is misbehaving; see "
                f"`postmortems/{r['postmortem']}.md`. Fix it, keeping its purpose and our "
                "conventions (README.md)." for r in _repairs(world)]
        body.append(f"- **I1.** When `{a.name}` is down, page once: its Down alert should mute its "
                    "error alerts for that service, as our conventions say, and nothing else.")
    else:
        body = [
            ("- **Repairs.** On-call reports alerts that fire once "
             "per pod, alerts that flap, alerts that never stop firing and alerts that arrive "
             "twice. Find the misbehaving alerts and fix them, keeping each alert's purpose. "
             "`postmortems/` has what on-call wrote up, but not every problem was written up."),
            (f"- **I1.** When `{a.name}` is down it should page once: its other error alerts "
             "stay quiet for that service; nothing else is muted."),
        ]
    return "\n".join(head + body) + "\n"
