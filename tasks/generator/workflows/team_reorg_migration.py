"""Workflow ``team-reorg-migration``: carry a reorganization through the alerting config.

A new team takes over a service (P1 relabel its Down alert, R1 a receiver and a route for the
new team), one team moves to a new on-call platform (R2: its receiver is renamed and its route
follows), another team hands a service over without relabelling it (R3: a ``service`` route
placed before the team routes), and the inhibit rule written for the service's old owner stops
working (I1). Everything the reorg does not touch must stay exactly as it is, so preservation
is a large share of the grade. Medium adds a HighErrorRatio repair (with a postmortem) and two
teams merging (P3: relabel the merged team's Down alert); hard adds a misbehaving Down alert
nobody reported (P4), the merged team's leftover routing (R4) and inhibit rule (I2) and more
services, and states outcomes only.
"""

from __future__ import annotations

import random

from tasks.generator import defects
from tasks.generator.repo import (
    AUDIT_RECEIVER,
    CLUSTER_INHIBIT,
    ONCALL_URL,
    PAGER_URL,
    RUNBOOK_BASE,
    alertmanager_doc,
    company_repo,
    dump_yaml,
    neighbour_files,
    no_reference_records,
    rules_file,
    services_table,
    team_integrations,
    team_receivers,
)
from tasks.generator.world import (
    COMPANIES,
    GRPC_SERVICES,
    HTTP_SERVICES,
    REPAIR_DEFECTS,
    TEAMS,
    Service,
    World,
    burn_threshold,
    notification_conventions,
)

NAME = "team-reorg-migration"

NEW_TEAMS = ["reliability", "foundations", "core-services"]
"""Names of the team the reorg creates (never one of :data:`TEAMS`, so it has no route yet)."""


def _service(rng: random.Random, name: str, team: str) -> Service:
    """A service with 2-3 pods; ``grpc`` when its name is from the grpc pool, else ``http``."""
    slo = rng.choice([0.99, 0.995, 0.999])
    pods = rng.choice([2, 3])
    return Service(name=name, team=team, family="grpc" if name in GRPC_SERVICES else "http",
                   pods=pods, requests_per_minute=[float(rng.choice([80, 100, 120, 150]))
                                                   for _ in range(pods)],
                   slo=slo, baseline_error_ratio=round(burn_threshold(slo) / 40, 6))


def _down_req(rid: str, svc: Service, defect: str, **extra) -> dict:
    """A repair of ``svc``'s Down alert (``up`` summed per service == 0 for 2m), shipped with
    ``defect``; ``extra`` adds keys (``old_team`` of a wrong-team defect, ``replaces``...)."""
    return {
        "id": rid, "kind": "repair", "weight": 3, "alert": f"{svc.camel}Down", "service": svc.name,
        "condition": {"type": "down"}, "for_s": 120,
        "labels": {"severity": "page", "team": svc.team},
        "annotations": {"summary": {"present": True},
                        "runbook_url": {"equals": f"{RUNBOOK_BASE}/down/{svc.name}"}},
        "defect": defect, "title": f"Repair {svc.camel}Down", **extra,
    }


def sample(task_id: str, tier: str, seed: int) -> World:
    """Sample a ``team-reorg-migration`` world.

    Roles (teams drawn from :data:`TEAMS`): ``old`` hands service S1 to the new team ``new``;
    ``migrated`` moves to the new on-call platform; ``loser`` hands S2 to ``gainer`` without
    relabelling it; medium and hard add ``merged`` folding into ``into`` (service S7).
    Requirements: P1 (S1Down still labelled ``old``), R1, R2, R3, I1 at every tier; medium
    adds P2 (HighErrorRatio, a seeded defect, with a postmortem) and P3 (S7Down still labelled
    ``merged``); hard adds P4 (a Down alert with a per-pod or too-long ``for`` defect, no
    postmortem), R4 (whatever is still labelled ``merged`` pages ``into``; the merged team's
    receiver is retired), I2 (the merged team's inhibit rule, scoped to ``merged`` like I1's)
    and two more services. Route requirements carry explicit ``cases`` (checks.py); those
    that rename or retire a receiver or route name them in ``replaces``.
    """
    rng = random.Random(f"team-reorg-migration/{tier}/{seed}")
    company = rng.choice(COMPANIES)
    new = rng.choice(NEW_TEAMS)
    bigger = tier != "easy"
    teams = rng.sample(TEAMS, 6 if bigger else 4)
    old, migrated, loser, gainer = teams[:4]
    http = rng.sample(HTTP_SERVICES, 6 if tier == "hard" else 5 if bigger else 3)
    grpc = rng.sample(GRPC_SERVICES, 3 if tier == "hard" else 2 if bigger else 1)
    cast = {"new": new, "old": old, "migrated": migrated, "loser": loser, "gainer": gainer,
            "s1": _service(rng, http[0], new),  # taken over by the new team
            "s2": _service(rng, http[1], loser),  # moved to gainer, keeps loser's label
            "s4": _service(rng, grpc[0], migrated),
            "s5": _service(rng, http[2], loser)}
    services = [cast["s1"], cast["s2"], cast["s4"], cast["s5"]]
    names = {team: f"{team}-pager" for team in teams}
    names[migrated] = f"{migrated}-oncall"
    names[new] = f"{new}-pager"
    order = sorted(teams)  # pristine team routes, after the audit route (index 1)
    world = World(task_id=task_id, workflow=NAME, tier=tier, seed=seed, company=company,
                  services=services, teams=names,
                  rules_format="PrometheusRule" if tier == "hard" and seed % 2 == 1 else "plain")
    reqs = _reorg_requirements(cast, names, order, bigger)
    if bigger:  # the gainer's own service, the merge, a HighErrorRatio defect with a postmortem
        cast.update(merged=teams[4], into=teams[5])
        services += _add_merge(rng, cast, http, grpc, reqs, order)
    if tier == "hard":
        services += _add_hard_requirements(rng, cast, http, grpc, reqs, names, order)
    _complete_route_cases(reqs, services, cast, bigger)
    world.requirements = reqs
    return world


def _reorg_requirements(cast: dict, names: dict[str, str], order: list[str],
                        bigger: bool) -> list[dict]:
    """P1, R1, R2, R3 and I1 (every tier); R1's negatives and R2's positives are completed by
    :func:`_complete_route_cases` once every service is drawn."""
    s1, s2, s4, s5 = (cast[key] for key in ("s1", "s2", "s4", "s5"))
    new, migrated, gainer, loser = (cast[key] for key in ("new", "migrated", "gainer", "loser"))
    s2_pos = {"alertname": f"{s2.camel}Down", "service": s2.name, "severity": "page", "team": loser}
    return [
        _down_req("P1", s1, "wrong-team", old_team=cast["old"]),
        {"id": "R1", "kind": "route", "weight": 2, "team": new, "receiver": names[new],
         "service": s1.name, "chain_alert": f"{s1.camel}Down",
         "destination": team_integrations(new, names[new]), "cases": {
             "positives": [{"alertname": f"{s1.camel}Down", "service": s1.name,
                            "severity": "page", "team": new}],
             "negatives": [  # a catch-all after the team routes still takes these two
                 {"alertname": "BackupJobFailed", "severity": "page", "team": "unassigned"},
                 {"alertname": "HighErrorRatio", "service": s1.name, "severity": "ticket"}]},
         "title": f"Route the new team {new}'s pages to {names[new]}"},
        {"id": "R2", "kind": "route", "weight": 2, "team": migrated, "receiver": names[migrated],
         "service": s4.name, "chain_alert": f"{s4.camel}Down" if bigger else None,
         "old_receiver": f"{migrated}-pager", "removes": [f"{migrated}-pager"],
         "destination": team_integrations(migrated, names[migrated]),
         "replaces": {"receivers": [f"{migrated}-pager"], "routes": [2 + order.index(migrated)]},
         "cases": {"positives": [], "negatives": [
             {"alertname": f"{svc.camel}Down", "service": svc.name, "severity": "page",
              "team": svc.team} for svc in (s5, s1)][:2 if bigger else 1]},
         "title": f"Move {migrated} from {migrated}-pager to {names[migrated]}"},
        {"id": "R3", "kind": "route", "weight": 2, "team": gainer, "receiver": names[gainer],
         "service": s2.name, "chain_alert": f"{s2.camel}Down", "label_team": loser,
         "cases": {"positives": [s2_pos, {**s2_pos, "alertname": f"{s2.camel}LatencyHigh"}],
                   "negatives": [{"alertname": f"{s5.camel}Down", "service": s5.name,
                                  "severity": "page", "team": loser},
                                 {**s2_pos, "service": s5.name, "alertname": f"{s5.camel}LatencyHigh"}
                                 ][:2 if bigger else 1]},
         "title": f"Route {s2.name} to {gainer} by service, before the team routes"},
        _inhibit_req("I1", s1, 2),
    ]


def _inhibit_req(rid: str, svc: Service, rule_index: int) -> dict:
    """An inhibit requirement: ``svc``'s Down alert mutes HighErrorRatio for ``svc`` again, in
    place of pristine inhibit rule ``rule_index`` (1-based), which a reorg broke."""
    return {"id": rid, "kind": "inhibit", "weight": 2, "source": f"{svc.camel}Down",
            "targets": ["HighErrorRatio"], "target_severity": {"HighErrorRatio": "ticket"},
            "equal": ["service"], "service": svc.name, "replaces": {"inhibit_rules": [rule_index]},
            "title": f"While {svc.camel}Down fires, mute HighErrorRatio for {svc.name} again"}


def _add_merge(rng: random.Random, cast: dict, http: list[str], grpc: list[str],
               reqs: list[dict], order: list[str]) -> list[Service]:
    """Medium and hard: services S6 (gainer), S7 and S8 (into) join ``cast``; P2 (a seeded
    HighErrorRatio defect with a postmortem) and P3 (S7Down still labelled ``merged``) go in
    after P1. Returns the new services."""
    merged = cast["merged"]
    s6 = _service(rng, http[3], cast["gainer"])
    s7 = _service(rng, http[4], cast["into"])
    s8 = _service(rng, grpc[1], cast["into"])
    cast.update(s6=s6, s7=s7, s8=s8)
    ratio_svc = rng.choice([cast["s5"], s6])
    reqs.insert(1, defects.high_error_ratio_repair("P2", ratio_svc, rng.choice(REPAIR_DEFECTS),
                                                   f"PM-{rng.randrange(1000, 9999)}"))
    reqs.insert(2, _down_req("P3", s7, "wrong-team", old_team=merged, replaces={
        "receivers": [f"{merged}-pager"], "routes": [2 + order.index(merged)]}))
    return [s6, s7, s8]


def _add_hard_requirements(rng: random.Random, cast: dict, http: list[str], grpc: list[str],
                           reqs: list[dict], names: dict[str, str], order: list[str]) -> list[Service]:
    """Hard: services S3 (old) and S9 (migrated), P4 (S6's Down alert with a per-pod or
    too-long ``for`` defect), R4 (the merged team's leftover alerts page ``into``, whose
    receiver ``names`` now gives the merged team too) and I2. Returns the new services."""
    merged, into, s7, s8 = cast["merged"], cast["into"], cast["s7"], cast["s8"]
    s3 = _service(rng, http[5], cast["old"])
    s9 = _service(rng, grpc[2], cast["migrated"])
    reqs.insert(3, _down_req("P4", cast["s6"], rng.choice(["per-pod", "for-too-long"])))
    reqs.append({  # the merged team's leftover alerts page the team it merged into
        "id": "R4", "kind": "route", "weight": 2, "team": into, "receiver": names[into],
        "service": s7.name, "chain_alert": None, "merged_team": merged,
        "replaces": {"receivers": [f"{merged}-pager"],  # either team's route may be merged
                     "routes": sorted(2 + order.index(t) for t in (merged, into))},
        "cases": {"positives": [{"alertname": f"{s7.camel}Down", "service": s7.name,
                                 "severity": "page", "team": merged},
                                {"alertname": f"{s8.camel}Down", "service": s8.name,
                                 "severity": "page", "team": into},
                                {"alertname": "BackupJobFailed", "severity": "page",
                                 "team": merged}],
                  "negatives": [{"alertname": f"{svc.camel}Down", "service": svc.name,
                                 "severity": "page", "team": svc.team}
                                for svc in (cast["s5"], cast["s4"])]},
        "title": f"Alerts still labelled {merged} page {into}"})
    names[merged] = names[into]
    reqs.append(_inhibit_req("I2", s7, 3))
    return [s3, s9]


def _complete_route_cases(reqs: list[dict], services: list[Service], cast: dict,
                          bigger: bool) -> None:
    """R2's positives: every Down alert of the migrated team; R1's negatives gain, first, the
    Down alerts of every service the new team does not own (easy: S4's only)."""
    r2 = next(r for r in reqs if r["id"] == "R2")
    r2["cases"]["positives"] = [{"alertname": f"{svc.camel}Down", "service": svc.name,
                                 "severity": "page", "team": cast["migrated"]}
                                for svc in services if svc.team == cast["migrated"]]
    others = [svc for svc in services if svc.team != cast["new"]] if bigger else [cast["s4"]]
    reqs[[r["id"] for r in reqs].index("R1")]["cases"]["negatives"][:0] = [
        {"alertname": f"{svc.camel}Down", "service": svc.name, "severity": "page", "team": svc.team}
        for svc in others]


def _req(world: World, rid: str) -> dict | None:
    return next((r for r in world.requirements if r["id"] == rid), None)


def _roles(world: World) -> dict:
    """Teams and services by role, read back from the requirements (see :func:`sample`)."""
    p1, r2, r3, p3 = (_req(world, rid) for rid in ("P1", "R2", "R3", "P3"))
    roles = {"new": _req(world, "R1")["team"], "old": p1["old_team"], "migrated": r2["team"],
             "gainer": r3["team"], "loser": r3["label_team"], "s1": world.service(p1["service"]),
             "s2": world.service(r3["service"])}
    if p3:
        roles.update(merged=p3["old_team"], into=world.service(p3["service"]).team,
                     s7=world.service(p3["service"]))
    return roles


def _pristine_names(world: World) -> dict[str, str]:
    """team -> receiver before the reorg: no new team yet, the migrating team still on its pager."""
    roles = _roles(world)
    names = {team: f"{team}-pager" for team in world.teams if team != roles["new"]}
    return names


def _repairs(world: World) -> list[dict]:
    return [r for r in world.requirements if r["kind"] == "repair"]


HIGH_ERROR_RATIO = defects.ratio_rule("HighErrorRatio", 0.1, 600, {"severity": "ticket"})
"""The generic ticket alert: a service serving over 10% errors for 10 minutes."""


def service_health(world: World, fixed: bool) -> str:
    """rules/service-health.yml: every service's Down alert and HighErrorRatio, each repair
    requirement's rule shipped with its defect unless ``fixed``."""
    rules = [defects.down_rule(s) for s in world.services] + [HIGH_ERROR_RATIO]
    if not fixed:
        broken = {r["alert"]: r for r in _repairs(world)}
        rules = [defects.apply_defect(r, broken[r["alert"]]["defect"],
                                      old_team=broken[r["alert"]].get("old_team"))
                 if r["alert"] in broken else r for r in rules]
    return rules_file(world, [{"name": "service-health", "rules": rules}], "service-health")


def alertmanager_config(world: World, migrated: bool) -> dict:
    """The Alertmanager config before (``migrated=False``) or after the reorg.

    Before: a ``<team>-pager`` receiver and a ``team`` route per team (sorted by team), the
    cluster inhibit rule and an inhibit rule for S1's Down alert scoped to S1's old team.
    After: a ``service`` route for S2 to its new team first, the migrating team's receiver
    renamed (webhook on the on-call platform), the new team's receiver and route last, and the
    inhibit rule for S1 no longer scoped to a team.
    """
    roles = _roles(world)
    s1, s2, s7 = roles["s1"], roles["s2"], roles.get("s7")
    names = dict(world.teams) if migrated else _pristine_names(world)
    receivers = team_receivers(world, {team: receiver for team, receiver in names.items()
                                       if receiver.startswith(f"{team}-")})
    teams = sorted(_pristine_names(world))
    routes = [{"matchers": [f'team="{team}"'], "receiver": names[team]} for team in teams]
    source = [f'alertname="{s1.camel}Down"', f'team="{roles["old"]}"']
    if migrated:
        routes.insert(0, {"matchers": [f'service="{s2.name}"'], "receiver": names[roles["gainer"]]})
        routes.append({"matchers": [f'team="{roles["new"]}"'], "receiver": names[roles["new"]]})
        source = source[:1]
    inhibit = [dict(CLUSTER_INHIBIT),
               {"source_matchers": source, "target_matchers": ['alertname="HighErrorRatio"'],
                "equal": ["service"]}]
    if _req(world, "I2"):  # the merged team's inhibit rule, scoped to the merged team
        source = [f'alertname="{s7.camel}Down"'] + ([] if migrated else [f'team="{roles["merged"]}"'])
        inhibit.append({"source_matchers": source, "target_matchers": ['alertname="HighErrorRatio"'],
                        "equal": ["service"]})
    return alertmanager_doc(receivers, routes, inhibit)


def postmortem(world: World) -> str:
    """The postmortem that reports the HighErrorRatio repair's symptom (medium and hard)."""
    req = _req(world, "P2")
    return defects.high_error_ratio_postmortem(req, world.seed)


def pristine_files(world: World) -> dict[str, str]:
    """The monitoring repo before the reorg: path -> file text."""
    files = {"rules/service-health.yml": service_health(world, fixed=False)}
    if _req(world, "P2"):
        files[f"postmortems/{_req(world, 'P2')['postmortem']}.md"] = postmortem(world)
    return company_repo(world, files, neighbour_files(world, max_rules=4 if world.tier == "easy" else None),
                        alertmanager_config(world, migrated=False), readme(world))


def solution_files(world: World) -> dict[str, str]:
    """The oracle's version of every file it changes."""
    return {
        "rules/service-health.yml": service_health(world, fixed=True),
        "alertmanager/alertmanager.yml": dump_yaml(alertmanager_config(world, migrated=True)),
    }


def reference_records(world: World) -> str:
    """No burn-rate alerts in this workflow, so no reference SLI records: ``groups: []``."""
    return no_reference_records()


def readme(world: World) -> str:
    """The repo's README: the services as labelled before the reorg, and the conventions."""
    roles = _roles(world)
    table = services_table(world)
    for index, line in enumerate(table):  # the table shows the labels the repo carries today
        for svc, team in ((roles["s1"], roles["old"]), (roles.get("s7"), roles.get("merged"))):
            if svc is not None and line.startswith(f"| {svc.name} |"):
                table[index] = line.replace(f"| {svc.team} |", f"| {team} |")
    return "\n".join([
        f"# {world.company} monitoring", "",
        "Prometheus rules (`rules/`) and the Alertmanager configuration",
        "(`alertmanager/alertmanager.yml`) for our production services.", "",
        *table,
        "## Conventions", "",
        "- Every service has a `<Service>Down` alert (`chat-gw` -> `ChatGwDown`): the sum of its",
        "  targets' `up` is 0 for `2m` (one page per service), labels `severity: page` and",
        "  `team: <owning team>`, annotations `summary` and",
        f"  `runbook_url: {RUNBOOK_BASE}/down/<service>`.",
        "- `HighErrorRatio` opens a ticket (`severity: ticket`, no team) for any service serving",
        "  more than 10% errors over 5m for 10 minutes.",
        "- Alertmanager routes by the `team` label, one route per team. Teams on the old pager",
        f"  have the receiver `<team>-pager` (webhook `{PAGER_URL}/<team>`, `send_resolved: true`);",
        "  teams that moved to the new on-call platform have `<team>-oncall` instead (webhook",
        f"  `{ONCALL_URL}/<team>`, `send_resolved: true`), and their old receiver is removed.",
        "  New teams start on the old pager.",
        "- Anything unrouted goes to `default-slack`. The first route copies every page",
        f"  (`severity=\"page\"`) to `{AUDIT_RECEIVER}` and continues (`continue: true`).",
        "- When a team takes over a service whose alerts keep another team's label, the service",
        "  gets its own route (`service=\"<service>\"`) to the new team's receiver, placed after",
        "  the audit route and before the team routes, so only the new team is paged.",
        "- A reorg relabels the alerts (`team`) of services that change owner, unless the",
        "  request says the labels stay.",
        "- A service's Down alert mutes its `HighErrorRatio` ticket for the same service only",
        "  (`equal: [service]`), so an outage pages once.",
        *notification_conventions(world.notification),
        "",
    ])


def instruction(world: World) -> str:
    """instruction.md: explicit at easy, intent plus README conventions at medium, outcomes
    only at hard (no names of alerts, receivers or routes, no count of the broken alerts)."""
    r = _roles(world)
    s1, s2 = r["s1"], r["s2"]
    new, old, mig, gainer, loser = r["new"], r["old"], r["migrated"], r["gainer"], r["loser"]
    head = [f"# {world.company}: the reorg, in the monitoring repo", "",
            "The repo is in `monitoring/`. Keep every rule, receiver, route and inhibit rule",
            "that a request does not mention exactly as it is.", ""]
    if world.tier == "easy":
        body = [
            (f"- **P1.** The new team {new} now owns `{s1.name}`, but `{s1.camel}Down` still "
             f"carries `team: {old}`. Relabel it `team: {new}`; keep everything else."),
            (f"- **R1.** Add the receiver `{new}-pager` (webhook `{PAGER_URL}/{new}`, "
             f"`send_resolved: true`) and a route `team=\"{new}\"` -> `{new}-pager`."),
            (f"- **R2.** Team {mig} moved to the new on-call platform: replace the receiver "
             f"`{mig}-pager` with `{mig}-oncall` (webhook `{ONCALL_URL}/{mig}`, "
             f"`send_resolved: true`) and point the team's route at it. Nothing may reference "
             f"`{mig}-pager` any more."),
            (f"- **R3.** Team {gainer} took over `{s2.name}`, whose alerts keep `team: {loser}`. "
             f"Add a route `service=\"{s2.name}\"` -> `{gainer}-pager` after the audit route and "
             f"before the team routes, so `{s2.name}`'s pages reach {gainer} (and the audit log) "
             f"and not {loser}; {loser}'s other services stay with {loser}."),
            (f"- **I1.** The inhibit rule that mutes `HighErrorRatio` while `{s1.camel}Down` fires "
             f"still only matches `{s1.camel}Down` with `team=\"{old}\"`. Fix it so "
             f"`{s1.camel}Down` mutes `HighErrorRatio` for the same service (`equal: [service]`) "
             "and nothing else."),
        ]
    elif world.tier == "medium":
        p2 = _req(world, "P2")
        body = [
            (f"- **P1.** The new team {new} now owns `{s1.name}`: its alerts must say so "
             "(see README.md)."),
            (f"- **R1.** Team {new} has no receiver or route yet; make sure their pages reach "
             "them."),
            (f"- **R2.** Team {mig} moved to the new on-call platform; its pages must go there, "
             "and its old pager receiver goes away."),
            (f"- **R3.** Team {gainer} took over `{s2.name}`, but its alerts keep the `{loser}` "
             f"label for now. Only {gainer} should be paged for it."),
            (f"- **P3.** Team {r['merged']} merged into {r['into']}: `{r['s7'].name}` belongs to "
             f"{r['into']} now."),
            (f"- **I1.** After the relabel, an outage of `{s1.name}` must still page once: its "
             "Down alert mutes its HighErrorRatio ticket, for that service only."),
            (f"- **P2.** HighErrorRatio is misbehaving; see `postmortems/{p2['postmortem']}.md`. "
             "Fix the rule, keeping its purpose."),
        ]
    else:
        body = [
            f"- **P1, R1.** Team {new} is new, and it now owns `{s1.name}`.",
            f"- **R2.** Team {mig} moved to the new on-call platform.",
            (f"- **R3.** Team {gainer} took over `{s2.name}`; its alerts keep the `{loser}` label "
             "until the dashboards move."),
            (f"- **P3, R4.** The {r['merged']} and {r['into']} teams merged; the merged team is "
             f"{r['into']}, and whatever still says {r['merged']} pages {r['into']}."),
            (f"- **I1, I2.** After the reorg, an outage of `{s1.name}` or `{r['s7'].name}` should "
             "still page once."),
            ("- **Repairs.** On-call says some of the existing alerts misbehave. Find them and fix "
             "them, keeping their purpose."),
        ]
    return "\n".join(head + body) + "\n"
