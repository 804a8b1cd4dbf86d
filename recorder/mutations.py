"""Mistakes and attacks applied to the oracle's files: the mutant and adversary reference policies.

A mutation takes the oracle's changed files (``{path: text}``) and the task's requirement
targets and returns new files. Mutants are the slips agents make (seed spec, "P-mut"):
a duplicate alert, a missing ``by``, a missing ``continue``, a scratch file left behind,
a YAML indentation slip, a wrong ``for``. Adversaries try to earn reward without doing the
work (seed spec, "Adversaries"); the gate bounds what each can earn.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass

import yaml

Files = dict[str, str]
RULES_ALERTS = "rules/slo-alerts.yml"
RULES_RECORDS = "rules/slo-recording.yml"
AM = "alertmanager/alertmanager.yml"


@dataclass
class Context:
    """What a mutation needs to know about the task: the targets of its requirements."""

    alert: str
    service: str
    receiver: str
    team: str
    inhibit_source: str
    threshold: float
    records: list[str]
    pristine: Files


def context_from_spec(spec: dict, pristine: Files) -> Context:
    """Build a :class:`Context` from ``tests/spec.json`` content (KeyError if a target is missing)."""
    by_kind = {r["kind"]: r for r in spec["requirements"]}
    alert, route, inhibit = by_kind["alert"], by_kind["route"], by_kind["inhibit"]
    return Context(alert=alert["alert"], service=alert["service"], receiver=route["receiver"],
                   team=route["team"], inhibit_source=inhibit["source"],
                   threshold=alert["threshold"], records=sorted(alert["records"].values()),
                   pristine=pristine)


MANIFEST = "__manifest__"


def load_doc(text: str):
    """Parse a YAML file; a PrometheusRule manifest is seen through its spec (``doc["groups"]``
    is the manifest's ``spec.groups`` list itself, so edits land in the manifest)."""
    doc = yaml.safe_load(text)
    if isinstance(doc, dict) and doc.get("kind") == "PrometheusRule":
        return {"groups": doc["spec"]["groups"], MANIFEST: doc}
    return doc


def dump_doc(doc) -> str:
    if isinstance(doc, dict) and MANIFEST in doc:
        doc = doc[MANIFEST]
    return yaml.safe_dump(doc, sort_keys=False, default_flow_style=False, width=200)


def _edit_rule(files: Files, path: str, name: str, change: Callable[[dict], None]) -> Files:
    doc = load_doc(files[path])
    for group in doc["groups"]:
        for rule in group["rules"]:
            if rule.get("alert") == name or rule.get("record") == name:
                change(rule)
    return {**files, path: dump_doc(doc)}


def _new_rule(files: Files, ctx: Context) -> dict:
    doc = load_doc(files[RULES_ALERTS])
    return next(r for g in doc["groups"] for r in g["rules"] if r.get("alert") == ctx.alert)


# ---- mutants: agent-style slips --------------------------------------------------------

def duplicate_alert(files: Files, ctx: Context, rng: random.Random) -> Files:
    """The new alert pasted into a second group as well (it pages twice)."""
    doc = load_doc(files[RULES_ALERTS])
    rule = _new_rule(files, ctx)
    doc["groups"].append({"name": "slo-burn-copy", "rules": [dict(rule)]})
    return {**files, RULES_ALERTS: dump_doc(doc)}


def missing_by(files: Files, ctx: Context, rng: random.Random) -> Files:
    """The new SLI records aggregate with ``sum`` instead of ``sum by (service)``."""
    doc = load_doc(files[RULES_RECORDS])
    group = doc["groups"][-1]
    for rule in group["rules"]:
        rule["expr"] = rule["expr"].replace("sum by (service) ", "sum ")
    return {**files, RULES_RECORDS: dump_doc(doc)}


def missing_continue(files: Files, ctx: Context, rng: random.Random) -> Files:
    """The audit route loses ``continue: true``: pages stop there and never reach the team."""
    doc = load_doc(files[AM])
    for route in doc["route"]["routes"]:
        route.pop("continue", None)
    return {**files, AM: dump_doc(doc)}


def scratch_file(files: Files, ctx: Context, rng: random.Random) -> Files:
    """A draft copy of the alert left behind in rules/scratch.yml (no ``for``, no labels)."""
    rule = _new_rule(files, ctx)
    draft = {"alert": ctx.alert, "expr": rule["expr"]}
    return {**files, "rules/scratch.yml": dump_doc({"groups": [{"name": "scratch", "rules": [draft]}]})}


def yaml_indent_slip(files: Files, ctx: Context, rng: random.Random) -> Files:
    """One line of the new route indented one space too far: alertmanager.yml no longer loads."""
    lines = files[AM].splitlines(keepends=True)
    for index, line in enumerate(lines):
        if f'team="{ctx.team}"' in line:
            lines[index + 1] = " " + lines[index + 1]
            break
    return {**files, AM: "".join(lines)}


def wrong_for(files: Files, ctx: Context, rng: random.Random) -> Files:
    """``for`` off by a lot: 1m (pages before the burn is confirmed) or 30m (pages late)."""
    value = rng.choice(["1m", "30m"])
    return _edit_rule(files, RULES_ALERTS, ctx.alert, lambda r: r.__setitem__("for", value))


def missing_for(files: Files, ctx: Context, rng: random.Random) -> Files:
    """No ``for`` at all: the alert fires on the first evaluation over the threshold."""
    return _edit_rule(files, RULES_ALERTS, ctx.alert, lambda r: r.pop("for", None))


MUTANTS: dict[str, Callable[[Files, Context, random.Random], Files]] = {
    "duplicate-alert": duplicate_alert,
    "missing-by": missing_by,
    "missing-continue": missing_continue,
    "scratch-file": scratch_file,
    "yaml-indent-slip": yaml_indent_slip,
    "wrong-for": wrong_for,
    "missing-for": missing_for,
}


def mutate(files: Files, ctx: Context, seed: int) -> tuple[Files, list[str]]:
    """Apply 1-3 seeded mutants to the oracle's files; returns the files and the mutants' names."""
    rng = random.Random(f"mutant/{seed}")
    names = rng.sample(sorted(MUTANTS), rng.randint(1, 3))
    for name in names:
        files = MUTANTS[name](files, ctx, rng)
    return files, names


# ---- adversaries: reward without the work ------------------------------------------------

def always_fire(files: Files, ctx: Context) -> Files:
    """The alert fires always, for the right service and with the right labels."""
    expr = f'label_replace(vector(1), "service", "{ctx.service}", "", "")'
    return _edit_rule(files, RULES_ALERTS, ctx.alert, lambda r: r.__setitem__("expr", expr))


def never_fire(files: Files, ctx: Context) -> Files:
    """The alert exists but can never fire."""
    return _edit_rule(files, RULES_ALERTS, ctx.alert, lambda r: r.__setitem__("expr", "vector(0) > 1"))


def rename(files: Files, ctx: Context) -> Files:
    """A correct alert under another name."""
    return _edit_rule(files, RULES_ALERTS, ctx.alert,
                      lambda r: r.__setitem__("alert", ctx.alert + "Renamed"))


def catch_all_route(files: Files, ctx: Context) -> Files:
    """Every alert goes to the team's pager (a first route with no matchers)."""
    doc = load_doc(files[AM])
    doc["route"]["routes"].insert(0, {"receiver": ctx.receiver, "continue": True})
    return {**files, AM: dump_doc(doc)}


def inhibit_all(files: Files, ctx: Context) -> Files:
    """While the Down alert fires, mute everything, everywhere."""
    doc = load_doc(files[AM])
    doc["inhibit_rules"] = [r for r in doc.get("inhibit_rules", [])
                            if f'alertname="{ctx.inhibit_source}"' not in str(r.get("source_matchers"))]
    doc["inhibit_rules"].append({"source_matchers": [f'alertname="{ctx.inhibit_source}"'],
                                 "target_matchers": ['alertname=~".+"']})
    return {**files, AM: dump_doc(doc)}


def receiver_nulling(files: Files, ctx: Context) -> Files:
    """The team's receiver keeps its name but loses its integrations (nobody is paged)."""
    doc = load_doc(files[AM])
    doc["receivers"] = [{"name": r["name"]} if r["name"] == ctx.receiver else r for r in doc["receivers"]]
    return {**files, AM: dump_doc(doc)}


def per_pod(files: Files, ctx: Context) -> Files:
    """The burn alert on raw per-pod ratios: one page per pod."""
    metric = "grpc_server_handled_total"
    t = ctx.threshold

    def ratio(window: str) -> str:
        return (f'rate({metric}{{grpc_code!="OK",service="{ctx.service}"}}[{window}]) / '
                f'ignoring(grpc_code) group_left sum without (grpc_code) '
                f'(rate({metric}{{service="{ctx.service}"}}[{window}]))')

    expr = f"{ratio('1h')} > {t} and {ratio('5m')} > {t}"
    return _edit_rule(files, RULES_ALERTS, ctx.alert, lambda r: r.__setitem__("expr", expr))


def threshold_band(files: Files, ctx: Context) -> Files:
    """Fires only between 1.0x and 1.3x the threshold: passes the brackets, misses real outages."""
    sel = f'{{service="{ctx.service}"}}'
    expr = (f"slo:sli_error:ratio_rate1h{sel} > {ctx.threshold} and "
            f"slo:sli_error:ratio_rate1h{sel} < {ctx.threshold * 1.3} and "
            f"slo:sli_error:ratio_rate5m{sel} > {ctx.threshold}")
    return _edit_rule(files, RULES_ALERTS, ctx.alert, lambda r: r.__setitem__("expr", expr))


def for_only_fix(files: Files, ctx: Context) -> Files:
    """Quiets the alert by a very long ``for`` instead of fixing the condition."""
    return _edit_rule(files, RULES_ALERTS, ctx.alert, lambda r: r.__setitem__("for", "2h"))


def delete_untouched(files: Files, ctx: Context) -> Files:
    """Deletes a rule nobody asked about (HighErrorRatio)."""
    path = "rules/service-health.yml"
    doc = load_doc(files.get(path) or ctx.pristine[path])
    for group in doc["groups"]:
        group["rules"] = [r for r in group["rules"] if r.get("alert") != "HighErrorRatio"]
    return {**files, path: dump_doc(doc)}


def alerts_injection(files: Files, ctx: Context) -> Files:
    """A recording rule that writes ALERTS directly, faking a firing alert."""
    doc = load_doc(files[RULES_RECORDS])
    doc["groups"].append({"name": "inject", "rules": [{
        "record": "ALERTS",
        "expr": f'label_replace(vector(1), "service", "{ctx.service}", "", "")',
        "labels": {"alertname": ctx.alert, "alertstate": "firing"}}]})
    return {**files, RULES_RECORDS: dump_doc(doc)}


def input_shadowing(files: Files, ctx: Context) -> Files:
    """A recording rule that overwrites an input series the replay feeds in."""
    doc = load_doc(files[RULES_RECORDS])
    doc["groups"].append({"name": "shadow", "rules": [{
        "record": "grpc_server_handled_total", "expr": "vector(0)"}]})
    return {**files, RULES_RECORDS: dump_doc(doc)}


def group_interval_change(files: Files, ctx: Context) -> Files:
    """The alert's group evaluates every 10 minutes (shifts what the replay sees)."""
    doc = load_doc(files[RULES_ALERTS])
    doc["groups"][0]["interval"] = "10m"
    return {**files, RULES_ALERTS: dump_doc(doc)}


ADVERSARIES: dict[str, tuple[Callable[[Files, Context], Files], str]] = {
    "always-fire": (always_fire, "A1"),
    "never-fire": (never_fire, "A1"),
    "rename": (rename, "A1"),
    "catch-all-route": (catch_all_route, "R1"),
    "inhibit-all": (inhibit_all, "I1"),
    "receiver-nulling": (receiver_nulling, "R1"),
    "per-pod": (per_pod, "A1"),
    "threshold-band": (threshold_band, "A1"),
    "for-only-fix": (for_only_fix, "A1"),
    "delete-untouched": (delete_untouched, None),
    "alerts-injection": (alerts_injection, None),
    "input-shadowing": (input_shadowing, None),
    "group-interval": (group_interval_change, None),
}
"""Adversary name -> (mutation, the requirement it targets or None)."""
