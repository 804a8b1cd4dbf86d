"""Rule operators on what a rule is called and carries: labels, annotations, names, groups.

Labels drive routing and inhibition (Label and Route families), annotations are what
on-call reads (Annotation), the name is what everything else refers to (Fire, Dup). A
``{{ $value }}`` in a label is the field's classic mistake: every new value is a new alert,
so a rule with a ``for`` never fires. Moving an alert to another group and leaving its new
recording rules behind (deleted) is the refactor slip of issue 14.
"""

from __future__ import annotations

from collections.abc import Iterator

from proofs.mutation.operators import Operator, Site
from proofs.mutation.rule_edits import alert_rule, changed_records, edit_alert, edit_records
from recorder.reference.context import (
    Context,
    Files,
    NotApplicable,
    dump_doc,
    find_rule,
    groups_of,
    is_rule_file,
    load_doc,
    rule_name,
)

OTHER_SEVERITY = {"page": "ticket", "ticket": "page", "critical": "warning", "warning": "critical"}


def _set_label(name: str, value: str | None):
    def change(rule: dict) -> None:
        labels = dict(rule.get("labels") or {})
        if value is None:
            labels.pop(name, None)
        else:
            labels[name] = value
        rule["labels"] = labels
    return change


def _change_severity(files: Files, ctx: Context, req: dict) -> Iterator[Site]:
    current = str((alert_rule(files, ctx, req).get("labels") or {}).get("severity", ""))
    yield req["id"], edit_alert(files, ctx, req, _set_label("severity", OTHER_SEVERITY.get(current, "page"))), req["id"]


def _change_team(files: Files, ctx: Context, req: dict) -> Iterator[Site]:
    current = (alert_rule(files, ctx, req).get("labels") or {}).get("team")
    if current is None:
        raise NotApplicable(f"{req['alert']} has no team label")
    other = next((t for t in sorted(ctx.spec.get("teams") or {}) if t != current), None)
    if other is None:
        raise NotApplicable("the spec names no other team")
    yield req["id"], edit_alert(files, ctx, req, _set_label("team", other)), req["id"]


def _drop_label(files: Files, ctx: Context, req: dict) -> Iterator[Site]:
    labels = alert_rule(files, ctx, req).get("labels") or {}
    for name in sorted(set(req.get("labels") or {}) & set(labels)):
        yield f"{req['id']}.{name}", edit_alert(files, ctx, req, _set_label(name, None)), req["id"]


def _value_in_label(files: Files, ctx: Context, req: dict) -> Iterator[Site]:
    yield req["id"], edit_alert(files, ctx, req, _set_label("value", "{{ $value }}")), req["id"]


def _drop_annotation(files: Files, ctx: Context, req: dict) -> Iterator[Site]:
    notes = alert_rule(files, ctx, req).get("annotations") or {}
    for key in sorted(set(req.get("annotations") or {}) & set(notes)):
        def change(rule: dict, key=key) -> None:
            rule["annotations"] = {k: v for k, v in (rule.get("annotations") or {}).items() if k != key}
        yield f"{req['id']}.{key}", edit_alert(files, ctx, req, change), req["id"]


def _rename_alert(files: Files, ctx: Context, req: dict) -> Iterator[Site]:
    new = f"{req['alert']}Alert"
    yield req["id"], edit_alert(files, ctx, req, lambda rule: rule.__setitem__("alert", new)), req["id"]


def _duplicate_rule(files: Files, ctx: Context, req: dict) -> Iterator[Site]:
    path, group, rule = find_rule(files, ctx, req["alert"]) if req.get("alert") else (None, None, None)
    if path is None:
        raise NotApplicable(f"{req['id']} names no alert")
    doc = load_doc(files[path])
    names = {str(g.get("name")) for g in groups_of(doc)}
    copy_name = next(f"{group.get('name')}-copy{n or ''}" for n in range(100)
                     if f"{group.get('name')}-copy{n or ''}" not in names)
    doc["groups"].append({"name": copy_name, "rules": [dict(rule)]})
    yield req["id"], {**files, path: dump_doc(doc)}, req["id"]


def _rename_record(files: Files, ctx: Context, req: dict) -> Iterator[Site]:
    for window, name in sorted((req.get("records") or {}).items()):
        def change(rule: dict, name=name) -> None:
            if rule.get("record") == name:
                rule["record"] = f"{name}_v2"
        yield f"{req['id']}.{window}", edit_records(files, ctx, req, change), req["id"]


def _move_without_records(files: Files, ctx: Context, req: dict) -> Iterator[Site]:
    """The alert moves to a new group in another rule file; the recording rules the oracle
    added for it are deleted (they stayed in the old group, which the refactor dropped)."""
    if not req.get("records"):
        raise NotApplicable(f"{req['id']} reads no recording rules")
    recording = next((r for r in ctx.requirements("recording")
                      if set(r.get("records", {}).values()) & set(req["records"].values())), None)
    if recording is None or not changed_records(files, ctx, recording):
        raise NotApplicable(f"{req['id']}: the oracle adds no recording rule it reads")
    path, _, rule = find_rule(files, ctx, req["alert"])
    out = edit_records(files, ctx, recording, lambda r: r.__setitem__("record", "__moved_away__"))
    for rel in [p for p in out if is_rule_file(p)]:
        doc = load_doc(out[rel])
        for group in groups_of(doc):
            group["rules"] = [r for r in group.get("rules") or []
                              if r.get("record") != "__moved_away__" and rule_name(r) != req["alert"]]
        doc["groups"] = [g for g in groups_of(doc) if g["rules"]]
        out[rel] = dump_doc(doc)
    others = sorted(p for p in out if is_rule_file(p) and p != path) or [path]
    doc = load_doc(out[others[0]])
    doc["groups"].append({"name": "moved-alerts", "rules": [rule]})
    out[others[0]] = dump_doc(doc)
    yield req["id"], out, recording["id"]


RULES = ("alert", "repair")

OPERATORS = (
    Operator("change-severity", RULES, ("Label", "Route"), _change_severity,
             "the severity label names another severity"),
    Operator("change-team", RULES, ("Label", "Route"), _change_team,
             "the team label names another team (defect wrong-team)"),
    Operator("drop-label", RULES, ("Label",), _drop_label, "a label the spec asks for is dropped"),
    Operator("value-in-label", RULES, ("Fire", "Dup"), _value_in_label,
             "a label templated with {{ $value }}: each new value is a new alert"),
    Operator("drop-annotation", RULES, ("Annotation",), _drop_annotation,
             "an annotation the spec asks for is deleted"),
    Operator("rename-alert", RULES, ("Fire", "Dup"), _rename_alert, "the alert under another name"),
    Operator("duplicate-rule", RULES, ("Dup",), _duplicate_rule,
             "the rule pasted into a second group as well: it pages twice"),
    Operator("rename-record", ("recording",), ("Value", "Cardinality"), _rename_record,
             "a recording rule writes another series name"),
    Operator("move-without-records", ("alert",), ("Value", "Cardinality"), _move_without_records,
             "the alert moves to another group; its new recording rules are left behind (deleted)"),
)
