"""The causes of failing checks read from the files themselves: syntax, tamper, preservation,
static labels, rule counts, receivers and where they send, notification timing, annotations."""

from __future__ import annotations

import re

from grader.destinations import describe, destination_mismatches, integrations_of
from grader.preservation import normalize_rule
from grader.workspace import ALERTMANAGER_PATH

_LINE = re.compile(r"(?:line |:)(\d+)(?::\d+)?[:,)\s]")
_RULE_FIELDS = ("alert", "record", "expr", "for", "keep_firing_for", "labels", "annotations")


def _cause(kind: str, facts: dict, summary: str) -> dict:
    """A cause dict (contract.grade.Cause)."""
    return {"kind": kind, "facts": facts, "summary": summary}


def _line_of(message: str) -> int | None:
    """The line number a promtool or amtool message names (``line 12``, ``file.yml:12:3:``)."""
    match = _LINE.search(message + " ")
    return int(match.group(1)) if match else None


def syntax_cause(problems: list[dict]) -> dict:
    """A syntax check's cause: ``facts.files = [{file, line, message}]`` as the tools print them."""
    files = [{"file": p["file"], "line": _line_of(p["message"]), "message": p["message"]}
             for p in problems]
    first = files[0]
    where = f"{first['file']}" + (f" line {first['line']}" if first["line"] else "")
    return {"kind": "syntax-error", "facts": {"files": files},
            "summary": f"{where} does not load: {first['message'][:300]}"}


def unloaded_cause(problems: list[dict], what: str) -> dict:
    """The cause of a check that cannot be graded because ``what`` (alertmanager.yml or the
    rule files) does not load: the load error with its file and line."""
    cause = syntax_cause(problems)
    return {**cause, "kind": f"{what}-unloaded"}


def tamper_cause(detail: str) -> dict:
    """A tamper check's cause: every finding (``file: what``) split into file and finding."""
    findings = []
    for item in detail.split("; "):
        file, sep, what = item.partition(": ")
        findings.append({"file": file if sep else "", "finding": what if sep else item})
    return {"kind": "tamper", "facts": {"findings": findings},
            "summary": f"{findings[0]['file'] or 'the workspace'}: {findings[0]['finding']}"}


def preservation_cause(probe: dict, rules: list[dict], am: dict | None) -> dict:
    """A preservation check's cause: the item, and for a rule each changed field before and after."""
    item, what = probe["item"], probe["what"]
    facts: dict = {"what": what, "file": probe.get("file")}
    if what == "rule":
        name = item.get("alert") or item.get("record")
        same = [r for r in rules if (r.get("alert") or r.get("record")) == name]
        facts["item"] = name
        if not same:
            return _cause("preservation-removed", facts, f"rule {name} (from {probe.get('file') or 'the pristine repo'}) "
                               "was removed or renamed")
        changes = [{"field": f, "before": b, "after": a}
                   for f, b, a in zip(_RULE_FIELDS, normalize_rule(item), normalize_rule(same[0]))
                   if b != a]
        facts["changes"] = changes
        shown = "; ".join(f"{c['field']}: {str(c['before'])[:80]!r} -> {str(c['after'])[:80]!r}"
                          for c in changes[:2])
        return _cause("preservation-changed", facts, f"rule {name}, which no change request mentions, changed: {shown}")
    label = item.get("name") or item.get("receiver") or what
    facts["item"] = label
    if am is None:
        return _cause("alertmanager-unloaded", facts, f"{ALERTMANAGER_PATH} does not load, so its {what} cannot be found")
    return _cause("preservation-changed", facts, f"the pristine {what} {label} is changed or gone from {ALERTMANAGER_PATH}")


def static_label_cause(probe: dict, rule_entries: list[tuple[str, dict, dict]]) -> dict:
    """A static-label check's cause: each definition's file and value of the label."""
    defs = [{"file": f, "group": g.get("name"), "value": (r.get("labels") or {}).get(probe["name"])}
            for f, g, r in rule_entries if r.get("alert") == probe["alert"]]
    facts = {"alert": probe["alert"], "label": probe["name"], "expected": probe["value"],
             "definitions": defs}
    if not defs:
        return _cause("alert-undefined", facts, f"no loadable rule file defines {probe['alert']}")
    d = next((d for d in defs if d["value"] != probe["value"]), defs[0])
    got = "no such label" if d["value"] is None else f"{probe['name']}: {d['value']}"
    return _cause("label-static-mismatch", facts, f"{probe['alert']} in {d['file']} (group {d['group']}) has {got}, "
                       f"not {probe['name']}: {probe['value']}")


def rule_count_cause(probe: dict, rule_entries: list[tuple[str, dict, dict]]) -> dict:
    """A rule-count check's cause: where each definition of the alert is."""
    defs = [{"file": f, "group": g.get("name")} for f, g, r in rule_entries
            if r.get("alert") == probe["name"]]
    facts = {"alert": probe["name"], "expected": probe["expect"], "definitions": defs}
    if not defs:
        return _cause("alert-undefined", facts, f"no loadable rule file defines {probe['name']}")
    places = "; ".join(f"{d['file']} group {d['group']}" for d in defs)
    return _cause("rule-count", facts, f"{probe['name']} is defined {len(defs)} times: {places}")


def receiver_cause(probe: dict, am: dict) -> dict:
    """A receiver check's cause: the receivers defined, what the named one holds and, when it
    sends elsewhere than ``probe.integrations`` says, each difference (expected and got,
    URL secrets masked: :func:`grader.destinations.mask_url`)."""
    name = probe["name"]
    receivers = [r for r in am.get("receivers") or [] if isinstance(r, dict)]
    names = [str(r.get("name")) for r in receivers]
    found = next((r for r in receivers if r.get("name") == name), None)
    facts = {"receiver": name, "defined": names,
             "keys": sorted(found) if found else None}
    if found is None:
        return _cause("receiver-absent", facts, f"no receiver named {name}; defined: {', '.join(names) or 'none'}")
    if not integrations_of(found):
        return _cause("receiver-no-integration", facts, f"receiver {name} has keys {', '.join(sorted(found))} but no non-empty "
                           "*_configs entry")
    wrong = destination_mismatches(found, probe.get("integrations") or {})
    facts["expected"] = [describe(kind, entry, list(entry))
                         for kind, entries in (probe.get("integrations") or {}).items()
                         for entry in entries]
    facts["differences"] = wrong
    return _cause("receiver-wrong-destination", facts,
                  f"receiver {name} sends elsewhere than the spec: {'; '.join(wrong)}")


def receiver_kept_cause(name: str, am: dict, detail: str) -> dict:
    """A removal check's cause: the retired receiver is still defined or named by a route."""
    names = [str(r.get("name")) for r in am.get("receivers") or [] if isinstance(r, dict)]
    return _cause("receiver-kept", {"receiver": name, "defined": name in names},
                  detail.removeprefix("expected ") if detail else f"receiver {name} is still there")


def route_timing_cause(detail: str, labels: dict) -> dict:
    """A timing check's cause: each route of the page whose effective timing or grouping
    breaks the task's bounds, with the value and the route it is set on."""
    problems = [p for p in detail.split("; ") if p]
    kind = ("route-walk-disagrees" if "route walk" in detail or "cannot be walked" in detail
            else "route-grouping-late" if all("group_by" in p for p in problems)
            else "route-timing-late")
    return _cause(kind, {"labels": labels, "problems": problems},
                  problems[0] if problems else "the page's routes notify late")


def annotation_cause(probe: dict, rules: list[dict], detail: str) -> dict:
    """An annotation check's cause: the rule's template of the annotation beside what came out."""
    rule = next((r for r in rules if r.get("alert") == probe["alert"]), None)
    template = ((rule or {}).get("annotations") or {}).get(probe["key"]) if rule else None
    facts = {"alert": probe["alert"], "key": probe["key"], "template": template,
             "expect": probe["expect"], "at": probe["eval_time"]}
    if rule is None:
        return _cause("alert-undefined", facts, f"no loadable rule file defines {probe['alert']}")
    if "got none firing" in detail:
        return _cause("alert-inactive", facts, f"{probe['alert']} does not fire for service={probe['service']} at "
                           f"{probe['eval_time']}, so its annotations cannot be read")
    if template is None:
        return _cause("annotation-missing", facts, f"rule {probe['alert']} has no annotation {probe['key']}")
    return _cause("annotation-unresolved", facts, f"rule {probe['alert']}'s {probe['key']} template {template[:120]!r} "
                       "does not give what is expected")
