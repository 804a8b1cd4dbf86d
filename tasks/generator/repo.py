"""Render a world as files: the company's pristine monitoring repo and the oracle's changes.

The repo follows common practice: SLI recording rules named ``level:metric:operations``
(Prometheus docs, "Recording rules" naming), multi-window burn-rate alerts on them (SRE
Workbook ch. 5), one receiver per team, routes by the ``team`` label, inhibit rules.
"""

from __future__ import annotations

import random
from pathlib import Path

import yaml

from tasks.generator.world import (
    NOTIFICATION,
    SLI_FAMILIES,
    Service,
    World,
    notification_conventions,
)

RUNBOOK_BASE = "https://runbooks.example.internal"
AUDIT_RECEIVER = "audit-log"
"""Every page is also copied here by the first route (``continue: true``)."""


class _BlockDumper(yaml.SafeDumper):
    """SafeDumper that writes multi-line strings (PromQL expressions) as literal blocks."""


def _str(dumper: yaml.SafeDumper, value: str):
    style = "|" if "\n" in value and not any(line != line.rstrip() for line in value.split("\n")) else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", value, style=style)


_BlockDumper.add_representer(str, _str)


def dump_yaml(data: object) -> str:
    """Block-style YAML in insertion order, wide lines, multi-line expressions as ``|`` blocks
    (stable bytes for the same data)."""
    return yaml.dump(data, Dumper=_BlockDumper, sort_keys=False, default_flow_style=False,
                     width=200, allow_unicode=True)


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


def requirement(world: World, kind: str) -> dict:
    """The first requirement of ``kind`` (StopIteration if the world has none)."""
    return next(r for r in world.requirements if r["kind"] == kind)


NEIGHBOURS_PER_TIER = {"easy": 1, "medium": 2, "hard": 4}
"""How many community rule files sit beside the company's rules, by tier."""


def neighbour_files(world: World, max_rules: int | None = None) -> dict[str, str]:
    """The task's community neighbours: ``rules/<name>`` -> text, a seeded choice from the pool.

    The pool is ``tasks/generator/neighbours/*.yml`` (awesome-prometheus-alerts, CC BY 4.0),
    limited to files of at most ``max_rules`` rules when given (keeps small tiers small).
    """
    pool = sorted(p for p in NEIGHBOURS.glob("*.yml")
                  if max_rules is None or p.read_text(encoding="utf-8").count("- alert:") <= max_rules)
    rng = random.Random(f"{world.task_id}/neighbours")
    chosen = sorted(rng.sample(pool, NEIGHBOURS_PER_TIER[world.tier]))
    return {f"rules/{p.name}": p.read_text(encoding="utf-8") for p in chosen}


def decoy_postmortems(world: World) -> dict[str, str]:
    """Postmortems of incidents the alerting handled fine (medium: one, hard: two)."""
    count = {"easy": 0, "medium": 1, "hard": 2}[world.tier]
    rng = random.Random(f"{world.task_id}/decoys")
    files = {}
    for title, text in rng.sample(DECOY_POSTMORTEMS, count):
        number = rng.randrange(1000, 9999)
        files[f"postmortems/PM-{number}.md"] = f"# PM-{number}: {title}\n\n## What happened\n\n{text}\n"
    return files


def company_repo(world: World, own: dict[str, str], neighbours: dict[str, str],
                 alertmanager: dict, readme: str) -> dict[str, str]:
    """A pristine monitoring repo: path -> file text, in this order: the workflow's ``own``
    files (rules, postmortems), the decoy postmortems, the community ``neighbours``,
    ``alertmanager/alertmanager.yml`` (``alertmanager`` as YAML) and ``README.md``."""
    files = dict(own)
    files.update(decoy_postmortems(world))
    files.update(neighbours)
    files["alertmanager/alertmanager.yml"] = dump_yaml(alertmanager)
    files["README.md"] = readme
    return files


def no_reference_records() -> str:
    """``reference_records.yml`` of a workflow with no burn-rate alert: ``groups: []``."""
    return dump_yaml({"groups": []})


PAGER_URL = "http://pager.example.internal/v1/teams"
ONCALL_URL = "http://oncall.example.internal/v1/teams"
"""Webhook bases of the old pager and of the new on-call platform (``/<team>`` appended)."""


def team_integrations(team: str, receiver: str) -> dict:
    """Where a team's receiver sends (``kind -> entries``): the new on-call platform for a
    ``<team>-oncall`` receiver, else the old pager; the one spec both the repos' receivers
    and the destination checks are written from."""
    base = ONCALL_URL if receiver.endswith("-oncall") else PAGER_URL
    return {"webhook_configs": [{"url": f"{base}/{team}", "send_resolved": True}]}


def team_receivers(world: World, names: dict[str, str] | None = None) -> list[dict]:
    """``default-slack``, the audit log, and one pager receiver per team (``names``: team ->
    receiver name, default ``world.teams``), sending where :func:`team_integrations` says."""
    receivers = [{"name": "default-slack",
                  "webhook_configs": [{"url": "http://chatops.example.internal/hooks/alerts"}]},
                 {"name": AUDIT_RECEIVER,
                  "webhook_configs": [{"url": "http://audit.example.internal/v1/pages"}]}]
    for team, receiver in sorted((names or world.teams).items()):
        receivers.append({"name": receiver, **team_integrations(team, receiver)})
    return receivers


def alertmanager_doc(receivers: list[dict], routes: list[dict], inhibit: list[dict]) -> dict:
    """An Alertmanager config: the audit route first (``continue: true``), then ``routes``,
    default receiver ``default-slack``, grouping by alertname and service."""
    return {
        "global": {"resolve_timeout": "5m"},
        "route": {"receiver": "default-slack", "group_by": ["alertname", "service"],
                  "group_wait": "30s", "group_interval": "5m", "repeat_interval": "4h",
                  "routes": [{"matchers": ['severity="page"'], "receiver": AUDIT_RECEIVER,
                              "continue": True}, *routes]},
        "receivers": receivers,
        "inhibit_rules": inhibit,
    }


def inhibit_rule(req: dict) -> dict:
    """The Alertmanager inhibit rule an inhibit requirement asks for: while ``source`` fires,
    mute ``targets`` when the ``equal`` labels match."""
    return {
        "source_matchers": [f'alertname="{req["source"]}"'],
        "target_matchers": [f'alertname=~"{"|".join(req["targets"])}"'],
        "equal": list(req["equal"]),
    }


CLUSTER_INHIBIT = {
    "source_matchers": ['alertname="ClusterNetworkPartition"'],
    "target_matchers": ['severity="ticket"'],
    "equal": ["cluster"],
}
"""An inhibit rule every company repo ships (preserved)."""


def services_table(world: World) -> list[str]:
    """README lines: the services table and how each SLI family counts requests."""
    lines = ["## Services", "", "| service | team | SLI family | SLO |", "|---|---|---|---|"]
    for svc in world.services:
        lines.append(f"| {svc.name} | {svc.team} | {svc.family} | {svc.slo * 100:g}% |")
    lines += [
        "",
        "SLI families: `http` services count requests in `http_requests_total{code}`",
        "(errors: `code=~\"5..\"`); `grpc` services in `grpc_server_handled_total{grpc_code}`",
        "(errors: `grpc_code!=\"OK\"`); `latency` services expose the histogram",
        "`http_request_duration_seconds_bucket{le}` / `_count`. Every series carries `service`",
        "and `pod` labels; every target's `up` carries `job`, `service` and `pod`.",
        "",
    ]
    return lines


ROUTING_CONVENTIONS = [
    "- Every paging alert carries `severity: page` and `team: <owning team>`; ticket alerts",
    "  carry `severity: ticket`.",
    "- Alertmanager routes by the `team` label to the team's receiver `<team>-pager`;",
    "  anything unrouted goes to `default-slack`. The first route copies every page",
    f"  (`severity=\"page\"`) to `{AUDIT_RECEIVER}` and continues (`continue: true`), so a page",
    "  reaches both the audit log and its team.",
    "- A service's `<Service>Down` alert (`chat-gw` -> `ChatGwDown`) inhibits its other alerts",
    "  for the same service only (`equal: [service]`), so an outage pages once.",
    *notification_conventions(NOTIFICATION),
]
"""README conventions shared by every workflow's company."""
