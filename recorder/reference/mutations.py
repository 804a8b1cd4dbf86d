"""Mistakes and attacks applied to the oracle's files: the mutant and adversary reference policies.

A mutation takes the oracle's files (``{path: text}``) and the task's :class:`Context` and
returns new files. Mutants are the slips agents make (seed spec, "P-mut"): a duplicate alert,
a missing ``by``, a missing ``continue``, a scratch file left behind, a YAML indentation
slip, a wrong ``for``. Adversaries try to earn reward without doing the work (seed spec,
"Adversaries"); the gate bounds what each can earn.

Each mutation finds its rule wherever it lives (the oracle's files first, then the pristine
repo) and targets a requirement by role: the primary alert (the first ``alert`` requirement,
else the first ``repair``), the first route, or the first inhibition. A mutation that needs
what the task lacks raises :class:`NotApplicable`; :func:`apply` also raises it for a
mutation that would change nothing, so nothing is ever a silent no-op.
"""

from __future__ import annotations

import itertools
import random
import re
from collections.abc import Callable

import yaml

from recorder.reference import exprs
from recorder.reference.context import (
    AM,
    Context,
    Files,
    NotApplicable,
    build_context,
    context_for_task,
    dump_doc,
    edit_doc,
    edit_rules,
    find_rule,
    groups_of,
    is_rule_file,
    iter_rules,
    load_doc,
    rule_name,
    text_of,
)
from recorder.reference.delivery_attacks import am_doc, late_page, sibling_receiver

__all__ = ["ADVERSARIES", "MUTANTS", "Context", "NotApplicable", "applicability", "applicable", "apply",
           "build_context", "context_for_task", "dump_doc", "load_doc", "mutate", "target_id"]


def _primary(ctx: Context) -> dict:
    return ctx.need("primary")


def _set(key: str, value) -> Callable[[dict], None]:
    return lambda rule: rule.__setitem__(key, value)


def _fresh(names: set[str], base: str) -> str:
    candidate, n = base, 2
    while candidate in names:
        candidate, n = f"{base}-{n}", n + 1
    return candidate


def _add_group(files: Files, ctx: Context, path: str, base: str, rules: list[dict]) -> Files:
    def change(doc):
        doc["groups"].append({"name": _fresh({str(g.get("name")) for g in groups_of(doc)}, base),
                              "rules": rules})
    return edit_doc(files, ctx, path, change)


def _changed_records(files: Files, ctx: Context, names: set[str]) -> list[tuple[str, dict]]:
    """``(path, rule)`` of recording rules called one of ``names`` that the oracle added or changed."""
    found = []
    for path in sorted(p for p in files if is_rule_file(p)):
        before = [r for _, r in iter_rules(load_doc(ctx.pristine[path]))] if path in ctx.pristine else []
        found += [(path, r) for _, r in iter_rules(load_doc(files[path]))
                  if r.get("record") in names and r not in before]
    return found


def _home(files: Files, ctx: Context) -> str:
    """A rule file to add a rule to: the recording requirement's, else the primary alert's,
    else the first rule file there is."""
    if ctx.recording:
        changed = _changed_records(files, ctx, set(ctx.recording["records"].values()))
        if changed:
            return changed[0][0]
    if ctx.primary:
        try:
            return find_rule(files, ctx, ctx.primary["alert"])[0]
        except NotApplicable:
            pass
    paths = sorted(p for p in files if is_rule_file(p)) or sorted(p for p in ctx.pristine if is_rule_file(p))
    if not paths:
        raise NotApplicable("the task has no rule file")
    return paths[0]


# ---- mutants: agent-style slips --------------------------------------------------------

def duplicate_alert(files: Files, ctx: Context, rng: random.Random) -> Files:
    """The primary alert pasted into a second group of its file as well (it pages twice)."""
    path, group, rule = find_rule(files, ctx, _primary(ctx)["alert"])
    return _add_group(files, ctx, path, f"{group.get('name')}-copy", [dict(rule)])


_BY = re.compile(r"\s*\bby\s*\([^)]*\)")


def missing_by(files: Files, ctx: Context, rng: random.Random) -> Files:
    """An aggregation loses its ``by`` clause (``sum`` instead of ``sum by (service)``): the new
    SLI records when the task has a recording requirement, else the first alert or repair rule
    (the primary first) whose expression aggregates ``by``."""
    def drop_by(rule):
        rule["expr"] = _BY.sub("", str(rule["expr"]))

    records = set(ctx.recording["records"].values()) if ctx.recording else set()
    changed = _changed_records(files, ctx, records)
    if changed:
        out = dict(files)
        for path in sorted({p for p, _ in changed}):
            doc = load_doc(out[path])
            for _, rule in iter_rules(doc):
                if any(p == path and rule == r for p, r in changed):
                    drop_by(rule)
            out[path] = dump_doc(doc)
        return out
    for req in ([ctx.primary] if ctx.primary else []) + ctx.requirements("alert", "repair"):
        try:
            rule = find_rule(files, ctx, req["alert"])[2]
        except NotApplicable:
            continue
        if _BY.search(str(rule.get("expr"))):
            return edit_rules(files, ctx, req["alert"], drop_by)
    raise NotApplicable("no new SLI record and no requirement's rule aggregates with by (...)")


def _path_to(route: dict, receiver: str) -> list[dict] | None:
    """The routes from ``route`` down to the first child route sending to ``receiver``."""
    for child in route.get("routes") or []:
        if child.get("receiver") == receiver:
            return [route, child]
        below = _path_to(child, receiver)
        if below:
            return [route, *below]
    return None


def missing_continue(files: Files, ctx: Context, rng: random.Random) -> Files:
    """Routes before the team's route lose ``continue: true``: pages stop there (the audit
    route) and never reach the team."""
    receiver = ctx.need("route")["receiver"]
    doc = am_doc(files, ctx)
    path = _path_to(doc["route"], receiver)
    if not path:
        raise NotApplicable(f"no route sends to {receiver}")
    popped = 0
    for parent, child in itertools.pairwise(path):
        for sibling in parent.get("routes") or []:
            if sibling is child:
                break
            popped += bool(sibling.pop("continue", None))
    if not popped:
        raise NotApplicable(f"no route with continue: true precedes the route to {receiver}")
    return {**files, AM: dump_doc(doc)}


def scratch_file(files: Files, ctx: Context, rng: random.Random) -> Files:
    """A draft copy of the primary alert left behind in rules/scratch.yml (no ``for``, no labels)."""
    name = _primary(ctx)["alert"]
    rule = find_rule(files, ctx, name)[2]
    taken = {*files, *ctx.pristine}
    path = next(p for p in (f"rules/scratch{n or ''}.yml" for n in range(100)) if p not in taken)
    draft = {"alert": name, "expr": rule["expr"]}
    return {**files, path: dump_doc({"groups": [{"name": "scratch", "rules": [draft]}]})}


def yaml_indent_slip(files: Files, ctx: Context, rng: random.Random) -> Files:
    """One line of the new route indented one space too far: alertmanager.yml no longer loads."""
    req = ctx.need("route")
    am_doc(files, ctx)
    lines = text_of(files, ctx, AM).splitlines(keepends=True)
    marks = [f'team="{req.get("team")}"', f"receiver: {req['receiver']}"]
    anchors = [i for mark in marks for i, line in enumerate(lines) if mark in line]
    for index in [j for i in anchors for j in (i + 1, i)]:
        if index < len(lines) and lines[index].strip():
            slipped = "".join(lines[:index] + [" " + lines[index]] + lines[index + 1:])
            try:
                yaml.safe_load(slipped)
            except yaml.YAMLError:
                return {**files, AM: slipped}
    raise NotApplicable(f"no one-space slip near the route to {req['receiver']} breaks the YAML")


def _for_of(files: Files, ctx: Context) -> str | None:
    return find_rule(files, ctx, _primary(ctx)["alert"])[2].get("for")


def wrong_for(files: Files, ctx: Context, rng: random.Random) -> Files:
    """``for`` off by a lot: 1m (pages before the condition is confirmed) or 30m (pages late)."""
    value = rng.choice(["1m", "30m"])
    if _for_of(files, ctx) == value:
        value = "30m" if value == "1m" else "1m"
    return edit_rules(files, ctx, _primary(ctx)["alert"], _set("for", value))


def missing_for(files: Files, ctx: Context, rng: random.Random) -> Files:
    """No ``for`` at all: the alert fires on the first evaluation over the threshold."""
    if not _primary(ctx).get("for_s") or _for_of(files, ctx) in (None, 0, "0s", "0m"):
        raise NotApplicable(f"{_primary(ctx)['alert']} has no for to drop")
    return edit_rules(files, ctx, _primary(ctx)["alert"], lambda r: r.pop("for", None))


MUTANTS: dict[str, Callable[[Files, Context, random.Random], Files]] = {
    "duplicate-alert": duplicate_alert,
    "missing-by": missing_by,
    "missing-continue": missing_continue,
    "scratch-file": scratch_file,
    "yaml-indent-slip": yaml_indent_slip,
    "wrong-for": wrong_for,
    "missing-for": missing_for,
}
"""Mutant name -> mutation ``(files, ctx, rng) -> files``."""


# ---- adversaries: reward without the work ------------------------------------------------

def always_fire(files: Files, ctx: Context) -> Files:
    """The primary alert fires always, for the right service and with the right labels."""
    req = _primary(ctx)
    return edit_rules(files, ctx, req["alert"], _set("expr", exprs.always_true(req)))


def never_fire(files: Files, ctx: Context) -> Files:
    """The primary alert exists but can never fire."""
    return edit_rules(files, ctx, _primary(ctx)["alert"], _set("expr", "vector(0) > 1"))


def rename(files: Files, ctx: Context) -> Files:
    """A correct primary alert under another name."""
    name = _primary(ctx)["alert"]
    return edit_rules(files, ctx, name, _set("alert", name + "Renamed"))


def catch_all_route(files: Files, ctx: Context) -> Files:
    """Every alert goes to the team's pager (a first route with no matchers)."""
    receiver = ctx.need("route")["receiver"]
    doc = am_doc(files, ctx)
    doc["route"].setdefault("routes", []).insert(0, {"receiver": receiver, "continue": True})
    return {**files, AM: dump_doc(doc)}


def inhibit_all(files: Files, ctx: Context) -> Files:
    """While the inhibition's source alert fires, mute everything, everywhere."""
    source = ctx.need("inhibit")["source"]
    doc = am_doc(files, ctx)
    doc["inhibit_rules"] = [r for r in doc.get("inhibit_rules") or []
                            if f'alertname="{source}"' not in str(r.get("source_matchers"))]
    doc["inhibit_rules"].append({"source_matchers": [f'alertname="{source}"'],
                                 "target_matchers": ['alertname=~".+"']})
    return {**files, AM: dump_doc(doc)}


def receiver_nulling(files: Files, ctx: Context) -> Files:
    """A team's receiver keeps its name but loses its integrations (nobody is paged).

    Takes the receiver of the first route requirement whose receiver a preservation check
    guards (the grader sees integrations only there; a newly added receiver has none).
    """
    receivers = [r["receiver"] for r in ctx.requirements("route")]
    if not receivers:
        ctx.need("route")
    receiver = next((r for r in receivers if r in ctx.preserved_receivers), None)
    if receiver is None:
        raise NotApplicable(f"no preservation check guards receiver {', '.join(receivers)}")
    doc = am_doc(files, ctx)
    if not any(r.get("name") == receiver for r in doc.get("receivers") or []):
        raise NotApplicable(f"no receiver {receiver} in {AM}")
    doc["receivers"] = [{"name": r["name"]} if r.get("name") == receiver else r for r in doc["receivers"]]
    return {**files, AM: dump_doc(doc)}


def per_pod(files: Files, ctx: Context) -> Files:
    """The primary alert's condition on raw per-pod series: one page per pod."""
    req = _primary(ctx)
    return edit_rules(files, ctx, req["alert"], _set("expr", exprs.per_pod(ctx, req)))


def threshold_band(files: Files, ctx: Context) -> Files:
    """Fires only between 1.0x and 1.3x the threshold: passes the brackets, misses real outages."""
    req = _primary(ctx)
    return edit_rules(files, ctx, req["alert"], _set("expr", exprs.band(ctx, req)))


def for_only_fix(files: Files, ctx: Context) -> Files:
    """Quiets the primary alert by a very long ``for`` instead of fixing the condition."""
    value = "3h" if _for_of(files, ctx) == "2h" else "2h"
    return edit_rules(files, ctx, _primary(ctx)["alert"], _set("for", value))


def delete_untouched(files: Files, ctx: Context) -> Files:
    """Deletes a rule nobody asked about: one a preservation check guards and no requirement
    names (alerting rules in files the oracle changes first)."""
    named = ctx.named()
    candidates = [(path, name) for path, name in ctx.preserved_rules
                  if name not in named and path in {*files, *ctx.pristine}]
    if not candidates:
        raise NotApplicable("no preserved rule that no requirement names")

    def order(item):
        path, name = item
        rule = next((r for _, r in iter_rules(load_doc(text_of(files, ctx, path))) if rule_name(r) == name), {})
        return path not in files, "record" in rule

    path, name = min(candidates, key=order)

    def change(doc):
        for group in groups_of(doc):
            group["rules"] = [r for r in group.get("rules") or [] if rule_name(r) != name]
    return edit_doc(files, ctx, path, change)


def alerts_injection(files: Files, ctx: Context) -> Files:
    """A recording rule that writes ALERTS directly, faking a firing alert."""
    req = ctx.primary or {}
    service = req.get("service") or next((s["name"] for s in ctx.spec.get("services", [])), "")
    rule = {"record": "ALERTS", "expr": exprs.always_true({"service": service}),
            "labels": {"alertname": req.get("alert", "Injected"), "alertstate": "firing"}}
    return _add_group(files, ctx, _home(files, ctx), "inject", [rule])


def input_shadowing(files: Files, ctx: Context) -> Files:
    """A recording rule that overwrites an input series the replay feeds in (one the primary
    alert reads when there is one)."""
    if not ctx.reserved:
        raise NotApplicable("the task names no input series")
    read = exprs.inputs_read(ctx, ctx.primary) if ctx.primary else []
    name = next((n for n in read if n in ctx.reserved), ctx.reserved[0])
    return _add_group(files, ctx, _home(files, ctx), "shadow", [{"record": name, "expr": "vector(0)"}])


def group_interval_change(files: Files, ctx: Context) -> Files:
    """The primary alert's group (else the first group of a rule file) evaluates every 10
    minutes (shifts what the replay sees)."""
    if ctx.primary:
        path, group, _ = find_rule(files, ctx, ctx.primary["alert"])
        name = group.get("name")
    else:
        path, name = _home(files, ctx), None

    def change(doc):
        group = next((g for g in groups_of(doc) if name is None or g.get("name") == name), None)
        if group is None:
            raise NotApplicable(f"{path} has no rule group")
        group["interval"] = "7m" if group.get("interval") == "10m" else "10m"
    return edit_doc(files, ctx, path, change)


ADVERSARIES: dict[str, tuple[Callable[[Files, Context], Files], str | None]] = {
    "always-fire": (always_fire, "primary"),
    "never-fire": (never_fire, "primary"),
    "rename": (rename, "primary"),
    "catch-all-route": (catch_all_route, "route"),
    "inhibit-all": (inhibit_all, "inhibit"),
    "receiver-nulling": (receiver_nulling, "route"),
    "sibling-receiver": (sibling_receiver, "route"),
    "late-page": (late_page, "route"),
    "per-pod": (per_pod, "primary"),
    "threshold-band": (threshold_band, "primary"),
    "for-only-fix": (for_only_fix, "primary"),
    "delete-untouched": (delete_untouched, None),
    "alerts-injection": (alerts_injection, None),
    "input-shadowing": (input_shadowing, None),
    "group-interval": (group_interval_change, None),
}
"""Adversary name -> (mutation, the Context role of the requirement it targets, or None)."""


# ---- applying them ---------------------------------------------------------------------

def target_id(name: str, ctx: Context) -> str | None:
    """The id of the requirement a mutation targets (``"A1"``, ``"P2"``, ...), None for none.

    ``name`` is an adversary name or ``mutant:<name>``; mutants target the primary alert,
    except ``missing-continue``/``yaml-indent-slip`` (the route) and ``missing-by``.
    """
    if name.startswith("mutant:"):
        kind = name.split(":", 1)[1]
        role = {"missing-continue": "route", "yaml-indent-slip": "route", "missing-by": None}.get(kind, "primary")
    else:
        role = ADVERSARIES[name][1]
    req = getattr(ctx, role) if role else None
    return req["id"] if req else None


def _parsed(text: str | None):
    try:
        return ("doc", load_doc(text)) if text is not None else ("missing", None)
    except yaml.YAMLError:
        return ("broken", text)


def apply(name: str, files: Files, ctx: Context, rng: random.Random | None = None) -> Files:
    """Apply the mutant or adversary called ``name`` (``mutant:`` prefix optional for mutants).

    Raises NotApplicable when the task lacks what it needs or when it would change nothing
    (compared as parsed YAML), and KeyError for an unknown name.
    """
    kind = name.split(":", 1)[1] if name.startswith("mutant:") else name
    if kind in MUTANTS:
        out = MUTANTS[kind](files, ctx, rng or random.Random(f"mutant/{kind}"))
    else:
        out = ADVERSARIES[kind][0](files, ctx)
    before = {**ctx.pristine, **files}
    if all(_parsed(out.get(p)) == _parsed(before.get(p)) for p in {*out, *files}):
        raise NotApplicable(f"{kind} would change nothing in this task")
    return out


def applicability(name: str, ctx: Context) -> str | None:
    """None when the mutation applies to the task's oracle files, else why it does not."""
    try:
        apply(name, ctx.solution, ctx)
    except NotApplicable as err:
        return str(err)
    return None


def applicable(name: str, ctx: Context) -> bool:
    """True when :func:`applicability` finds nothing missing."""
    return applicability(name, ctx) is None


def mutate(files: Files, ctx: Context, seed: int) -> tuple[Files, list[str]]:
    """Apply 1-3 seeded applicable mutants to the oracle's files; returns the files and the
    names applied (the YAML slip last, since it leaves alertmanager.yml unparsable).

    Raises NotApplicable when no mutant applies to the task.
    """
    rng = random.Random(f"mutant/{seed}")
    names = [n for n in sorted(MUTANTS) if applicable(f"mutant:{n}", ctx)]
    if not names:
        raise NotApplicable("no mutant applies to this task")
    chosen = rng.sample(names, min(len(names), rng.randint(1, 3)))
    applied = []
    for name in sorted(chosen, key=lambda n: n == "yaml-indent-slip"):
        try:
            files = apply(f"mutant:{name}", files, ctx, rng)
        except NotApplicable:
            continue
        applied.append(name)
    return files, applied
