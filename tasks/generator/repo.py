"""Render a world as files: the company's pristine monitoring repo and the oracle's changes.

The repo follows common practice: SLI recording rules named ``level:metric:operations``
(Prometheus docs, "Recording rules" naming), multi-window burn-rate alerts on them (SRE
Workbook ch. 5), one receiver per team, routes by the ``team`` label, inhibit rules.
"""

from __future__ import annotations

import random
from pathlib import Path

import yaml

from tasks.generator.world import SLI_FAMILIES, Service, World

RUNBOOK_BASE = "https://runbooks.example.internal"
AUDIT_RECEIVER = "audit-log"
"""Every page is also copied here by the first route (``continue: true``)."""


def dump_yaml(data: object) -> str:
    """Block-style YAML in insertion order, wide lines (stable bytes for the same data)."""
    return yaml.safe_dump(data, sort_keys=False, default_flow_style=False, width=200,
                          allow_unicode=True)


def sli_records(family: str, service_selector: str) -> list[dict]:
    """SLI error-ratio recording rules over 5m and 1h for one SLI family.

    ``service_selector`` is a PromQL matcher list such as ``service="chat-gw"`` (may be "").
    """
    fam = SLI_FAMILIES[family]
    sep = "," if service_selector else ""
    rules = []
    for window in ("5m", "1h"):
        errors = f'{fam["metric"]}{{{fam["error_selector"]}{sep}{service_selector}}}'
        total = f'{fam["metric"]}{{{service_selector}}}'
        rules.append({
            "record": f"slo:sli_error:ratio_rate{window}",
            "expr": f"sum by (service) (rate({errors}[{window}]))\n/\n"
                    f"sum by (service) (rate({total}[{window}]))\n",
        })
    return rules


def burn_alert(svc: Service, alert: str, slo: float, for_s: int, labels: dict) -> dict:
    """A fast-burn alert on the SLI records: both windows over 14.4 x (1 - SLO) (SRE Workbook)."""
    threshold = f"(14.4 * (1 - {slo}))"
    sel = f'{{service="{svc.name}"}}'
    return {
        "alert": alert,
        "expr": f"slo:sli_error:ratio_rate1h{sel} > {threshold}\n"
                f"and\nslo:sli_error:ratio_rate5m{sel} > {threshold}\n",
        "for": f"{for_s // 60}m",
        "labels": dict(labels),
        "annotations": {
            "summary": f"{svc.name} is burning its error budget fast",
            "description": "{{ $labels.service }} error ratio is over 14.4x its SLO budget "
                           "over 1h and 5m.",
            "runbook_url": f"{RUNBOOK_BASE}/slo/{svc.name}",
        },
    }


def down_alert(svc: Service) -> dict:
    """``<Service>Down``: every target of the service is down (``up == 0``) for 2m."""
    return {
        "alert": f"{svc.camel}Down",
        "expr": f'sum by (service) (up{{service="{svc.name}"}}) == 0',
        "for": "2m",
        "labels": {"severity": "page", "team": svc.team},
        "annotations": {"summary": f"{svc.name} is down",
                        "runbook_url": f"{RUNBOOK_BASE}/down/{svc.name}"},
    }


HIGH_ERROR_RATIO = {
    "alert": "HighErrorRatio",
    "expr": 'sum by (service) (rate(http_requests_total{code=~"5.."}[5m]))\n/\n'
            "sum by (service) (rate(http_requests_total[5m])) > 0.1\n",
    "for": "10m",
    "labels": {"severity": "ticket"},
    "annotations": {"summary": "{{ $labels.service }} serves more than 10% errors"},
}


def high_error_ratio(defect: str | None) -> dict:
    """HighErrorRatio as the repo ships it: correct (``None``) or with one seeded defect.

    ``per-pod`` aggregates by pod as well (one ticket per replica); ``missing-for`` has no
    ``for`` (flaps on every blip); ``threshold-low`` compares against 1% instead of 10%.
    """
    rule = dict(HIGH_ERROR_RATIO, labels=dict(HIGH_ERROR_RATIO["labels"]),
                annotations=dict(HIGH_ERROR_RATIO["annotations"]))
    if defect == "per-pod":
        rule["expr"] = rule["expr"].replace("sum by (service)", "sum by (service, pod)")
    elif defect == "missing-for":
        del rule["for"]
    elif defect == "threshold-low":
        rule["expr"] = rule["expr"].replace("> 0.1", "> 0.01")
    elif defect is not None:
        raise ValueError(f"unknown defect {defect!r}")
    return rule


POSTMORTEMS = {
    "per-pod": [
        ("During the {service} incident on-call got one HighErrorRatio ticket for every replica "
        "and had to close them one by one."),
        ("A single {service} problem opened several identical HighErrorRatio tickets at once; the "
        "only difference between them was which pod they named."),
        ("Ticket volume tripled during the {service} degradation: HighErrorRatio filed the same "
        "problem again and again, once per instance."),
    ],
    "missing-for": [
        ("HighErrorRatio opened and closed a dozen tickets overnight for {service}; each time the "
        "error ratio touched the threshold for a single evaluation."),
        ("The ticket queue filled with HighErrorRatio entries for {service} that resolved a minute "
        "later. Nobody could tell the real incident from the blips."),
        ("{service} had a few seconds of errors during a deploy and HighErrorRatio ticketed it "
        "immediately, then again at the next deploy, and the next."),
    ],
    "threshold-low": [
        ("HighErrorRatio has been firing for days on {service} although the service is healthy; "
        "people have started to ignore it."),
        ("Every HighErrorRatio ticket this month for {service} was closed as 'no action needed': "
        "the error ratio was well within normal."),
        ("On-call muted their HighErrorRatio notifications: it fires for {service} at error ratios "
        "nobody considers a problem."),
    ],
}
"""Symptoms, never the fix, with paraphrases per defect (seed spec, "Repairs and postmortems")."""


def postmortem(world: World) -> str:
    """The postmortem that reports the repair requirement's symptom."""
    req = _req(world, "repair")
    text = POSTMORTEMS[req["defect"]][world.seed % len(POSTMORTEMS[req["defect"]])]
    return "\n".join([
        f"# {req['postmortem']}: HighErrorRatio",
        "",
        "## What happened",
        "",
        text.format(service=req["service"]),
        "",
        "## Action items",
        "",
        ("- Make HighErrorRatio behave; it should still open a ticket when a service serves "
        "more than 10% errors for 10 minutes."),
        "",
    ])


NEIGHBOURS = Path(__file__).parent / "neighbours"
"""Real community rule files (awesome-prometheus-alerts, CC BY 4.0) shipped as untouched neighbours."""

DECOY_POSTMORTEMS = [
    ("Webhook relay outage", ("Pages were delayed by 20 minutes while the chatops webhook relay "
     "was down. The vendor fixed the relay; no alerting change was needed.")),
    ("Certificate expiry", ("An internal certificate expired over the weekend. It was renewed and "
     "automated renewal was turned on; the alerts behaved as intended.")),
    ("Disk pressure on a build agent", ("A build agent ran out of disk. Cleanup jobs were added; "
     "the alert fired on time and reached the right team.")),
]
"""Postmortems about incidents the alerting handled fine: reading them finds nothing to fix."""


def rules_file(world: World, groups: list[dict], name: str) -> str:
    """A rule file in the repo's format: plain ``groups:`` or a PrometheusRule manifest."""
    if world.rules_format == "PrometheusRule":
        return dump_yaml({
            "apiVersion": "monitoring.coreos.com/v1",
            "kind": "PrometheusRule",
            "metadata": {"name": name, "namespace": "monitoring",
                         "labels": {"prometheus": "k8s", "role": "alert-rules"}},
            "spec": {"groups": groups},
        })
    return dump_yaml({"groups": groups})


def rule_groups(text: str) -> list[dict]:
    """The groups of a rule file in either format."""
    doc = yaml.safe_load(text) or {}
    if doc.get("kind") == "PrometheusRule":
        doc = doc.get("spec") or {}
    return list(doc.get("groups") or [])


def pristine_files(world: World) -> dict[str, str]:
    """The monitoring repo before the change requests: path -> file text."""
    target = world.service(_req(world, "alert")["service"])
    http = [s for s in world.services if s.family == "http"]
    sibling = http[0]
    repair = _req(world, "repair")
    files: dict[str, str] = {}
    files["rules/slo-recording.yml"] = rules_file(
        world, [{"name": "sli-http", "rules": sli_records("http", "")}], "slo-recording")
    burn_rules = []
    if world.tier in ("easy", "medium"):  # hard has no healthy sibling to copy
        burn_rules.append(burn_alert(sibling, f"{sibling.camel}ErrorBudgetBurnFast", sibling.slo,
                                     300, {"severity": "page", "team": sibling.team}))
    files["rules/slo-alerts.yml"] = rules_file(world, [{"name": "slo-burn", "rules": burn_rules}],
                                               "slo-alerts")
    files["rules/service-health.yml"] = service_health(world, repair["defect"])
    if world.tier != "hard":  # hard: a defect with no postmortem, among decoys
        files[f"postmortems/{repair['postmortem']}.md"] = postmortem(world)
    if world.tier in ("medium", "hard"):
        rng = random.Random(f"{world.task_id}/decoys")
        count = 1 if world.tier == "medium" else 2
        for title, text in rng.sample(DECOY_POSTMORTEMS, count):
            number = rng.randrange(1000, 9999)
            files[f"postmortems/PM-{number}.md"] = (
                f"# PM-{number}: {title}\n\n## What happened\n\n{text}\n")
    for neighbour in sorted(NEIGHBOURS.glob("*.yml")):
        files[f"rules/{neighbour.name}"] = neighbour.read_text(encoding="utf-8")
    files["alertmanager/alertmanager.yml"] = dump_yaml(alertmanager_config(world, target, routed=False))
    files["README.md"] = readme(world)
    return files


def service_health(world: World, defect: str | None) -> str:
    """rules/service-health.yml: every service's Down alert and HighErrorRatio."""
    return rules_file(world, [{
        "name": "service-health",
        "rules": [down_alert(s) for s in world.services] + [high_error_ratio(defect)],
    }], "service-health")


def alertmanager_config(world: World, target: Service, routed: bool) -> dict:
    """The Alertmanager config: a receiver per team, routes by team, inhibit rules.

    ``routed`` adds the oracle's route for the target's team and its inhibit rule.
    """
    receivers = [{"name": "default-slack",
                  "webhook_configs": [{"url": "http://chatops.example.internal/hooks/alerts"}]},
                 {"name": AUDIT_RECEIVER,
                  "webhook_configs": [{"url": "http://audit.example.internal/v1/pages"}]}]
    for team, receiver in sorted(world.teams.items()):
        receivers.append({"name": receiver, "webhook_configs": [
            {"url": f"http://pager.example.internal/v1/teams/{team}", "send_resolved": True}]})
    routes = [{"matchers": ['severity="page"'], "receiver": AUDIT_RECEIVER, "continue": True}]
    for svc in world.services:
        if svc.team == target.team:
            continue
        routes.append({"matchers": [f'team="{svc.team}"'], "receiver": world.teams[svc.team]})
    inhibit = [{
        "source_matchers": ['alertname="ClusterNetworkPartition"'],
        "target_matchers": ['severity="ticket"'],
        "equal": ["cluster"],
    }]
    if routed:
        inhibit_req = _req(world, "inhibit")
        routes.append({"matchers": [f'team="{target.team}"'], "receiver": world.teams[target.team]})
        inhibit.append({
            "source_matchers": [f'alertname="{inhibit_req["source"]}"'],
            "target_matchers": [f'alertname=~"{"|".join(inhibit_req["targets"])}"'],
            "equal": list(inhibit_req["equal"]),
        })
    return {
        "global": {"resolve_timeout": "5m"},
        "route": {"receiver": "default-slack", "group_by": ["alertname", "service"],
                  "group_wait": "30s", "group_interval": "5m", "repeat_interval": "4h",
                  "routes": routes},
        "receivers": receivers,
        "inhibit_rules": inhibit,
    }


def solution_files(world: World) -> dict[str, str]:
    """The oracle's version of every file it changes (one file per change request group)."""
    pristine = pristine_files(world)
    alert = _req(world, "alert")
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
        "rules/service-health.yml": service_health(world, None),
        "alertmanager/alertmanager.yml": dump_yaml(alertmanager_config(world, target, routed=True)),
    }


def reference_records(world: World) -> str:
    """The reference SLI recording rules (pristine http ones plus the target's grpc ones).

    The grader substitutes these for the agent's records when it scores the burn alert's
    second half (seed spec: q = 1/2 q(agent records) + 1/2 q(reference records)).
    """
    alert = _req(world, "alert")
    return dump_yaml({"groups": [
        {"name": "reference-sli-http", "rules": sli_records("http", "")},
        {"name": "reference-sli-target", "rules": sli_records("grpc", f'service="{alert["service"]}"')},
    ]})


def _req(world: World, kind: str) -> dict:
    return next(r for r in world.requirements if r["kind"] == kind)


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
        "- A service's `<Service>Down` alert inhibits its other alerts for the same service",
        "  only (`equal: [service]`), so an outage pages once.",
        "",
        "## On-call policy",
        "",
    ]
    alert = _req(world, "alert")
    lines.append(f"- {alert['service']}: fast-burn alerts wait `for: {alert['for_s'] // 60}m` "
                 "before paging.")
    lines.append("- other services: `for: 5m`.")
    return "\n".join(lines) + "\n"


def instruction(world: World) -> str:
    """The task's instruction.md: explicit at easy, intent plus README conventions at medium."""
    alert, rec, route, inhibit, repair = (
        _req(world, k) for k in ("alert", "recording", "route", "inhibit", "repair"))
    repair_line = (f"- **P1.** HighErrorRatio is misbehaving; see `postmortems/{repair['postmortem']}.md`. "
                   "Fix the rule, keeping its purpose.")
    svc = world.service(alert["service"])
    head = [f"# {world.company}: change requests for the monitoring repo", "",
            "The repo is in `monitoring/`. Keep every rule, receiver, route and inhibit rule",
            "that a request does not mention exactly as it is.", ""]
    if world.tier == "easy":
        body = [
            (f"- **C1.** Add SLI recording rules `{rec['records']['5m']}` and "
            f"`{rec['records']['1h']}` for `{svc.name}` (grpc family: "
            f"`grpc_server_handled_total`, errors `grpc_code!=\"OK\"`), one series per service."),
            f"- **A1.** Add `{alert['alert']}` for `{svc.name}` (SLO {alert['slo']}): fire when "
            f"both `{alert['records']['long']}` and `{alert['records']['short']}` exceed "
            f"14.4 x (1 - {alert['slo']}), `for: {alert['for_s'] // 60}m`, labels "
            + ", ".join(f"`{k}: {v}`" for k, v in sorted(alert["labels"].items())) + ".",
            (f"- **R1.** Team {route['team']} is now on call for `{svc.name}`, but nothing routes "
            f"to them yet. Route alerts with `team=\"{route['team']}\"` to receiver "
            f"`{route['receiver']}`."),
            f"- **I1.** While `{inhibit['source']}` is firing for a service, suppress "
            + ", ".join(f"`{t}`" for t in inhibit["targets"]) + " for that same service only.",
            repair_line,
        ]
    elif world.tier == "hard":
        repair_line = ("- **P1.** On-call says one of the existing ticket alerts misbehaves. Find it "
                       "and fix it, keeping its purpose.")
        body = [
            (f"- **A1.** Page {route['team']} when `{svc.name}` is burning its error budget fast "
            f"(SLO {alert['slo'] * 100:g}%)."),
            (f"- **C1.** Whatever that alert needs to measure `{svc.name}` belongs in the repo as "
            "recording rules, like the other services have."),
            f"- **R1.** {route['team'].capitalize()} now owns `{svc.name}`.",
            (f"- **I1.** When `{svc.name}` is down, its other alerts should stay quiet; nothing else "
            "should be muted."),
            repair_line,
        ]
    else:
        body = [
            (f"- **C1.** `{svc.name}` has no SLI records yet. Add them following our conventions "
            "(see README.md)."),
            (f"- **A1.** Onboard `{svc.name}` (SLO {alert['slo'] * 100:g}%) onto fast-burn "
            "alerting, named and labelled as our conventions say, with the on-call policy's `for`."),
            f"- **R1.** Team {route['team']} now owns `{svc.name}`; make sure its pages reach them.",
            (f"- **I1.** When `{svc.name}` is down, page once: its Down alert should mute its "
            "burn-rate alert and `HighErrorRatio` for that service, and nothing else."),
            repair_line,
        ]
    return "\n".join(head + body) + "\n"


def task_toml(world: World) -> str:
    """Harbor task metadata (task.toml)."""
    return "\n".join([
        'version = "1.0"',
        "",
        "[metadata]",
        'author_name = "3amBench Replay generator"',
        f'difficulty = "{world.tier}"',
        'category = "sre"',
        f'tags = ["prometheus", "alertmanager", "{world.workflow}"]',
        f'workflow = "{world.workflow}"',
        f'tier = "{world.tier}"',
        "",
        "[verifier]",
        "timeout_sec = 600.0",
        "",
        "[agent]",
        "timeout_sec = 1800.0",
        "",
        "[environment]",
        "build_timeout_sec = 600.0",
        "cpus = 1",
        "memory_mb = 2048",
        "",
    ])


SOLVE_SH = """#!/usr/bin/env bash
# Harbor oracle: copy the solution's files over the workspace's monitoring repo.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
dest="${1:-/app/monitoring}"
cp -R "$here/monitoring/." "$dest/"
"""
