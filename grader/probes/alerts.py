"""Alert definition probes: a rule's static label, an annotation as it fires, how often a rule is defined."""

from __future__ import annotations

from grader import promtool
from grader.probes.evidence import Evidence, Outcome


def static_label(check: dict, evidence: Evidence) -> Outcome:
    """Passed when rule ``probe.alert`` exists and every definition of it carries label
    ``probe.name`` with value ``probe.value``."""
    probe = check["probe"]
    defined = [r for r in evidence.rules if r.get("alert") == probe["alert"]]
    got = sorted({str((r.get("labels") or {}).get(probe["name"], "")) for r in defined})
    passed = bool(defined) and got == [probe["value"]]
    detail = ""
    if not defined:
        detail = f"expected rule {probe['alert']} with label {probe['name']}: {probe['value']}; got no such rule"
    elif not passed:
        shown = ", ".join(g or "(missing)" for g in got)
        detail = f"expected label {probe['name']}: {probe['value']} on rule {probe['alert']}; got {shown}"
    return Outcome(passed, detail)


def annotation(check: dict, evidence: Evidence) -> Outcome:
    """Annotation ``probe.key`` of alert ``probe.alert`` firing for ``probe.service`` at
    ``probe.eval_time`` of ``probe.scenario``, as promtool printed it: present and, per
    ``probe.expect``, equal to ``equals`` or a resolved text containing ``contains``."""
    probe = check["probe"]
    key = f"{probe['alert']}@{int(probe['eval_time'].rstrip('m'))}m"
    failure = evidence.promql.get("integrated", {}).get(key, {}).get("alert")
    alerts = promtool.parse_alerts(failure.got) if failure else []
    mine = [ann for labels, ann in alerts if labels.get("service") == probe["service"]]
    at = f"at {probe['eval_time']} ({probe['scenario']})"
    reproduce = (f"# promtool alert_rule_test: eval_time {probe['eval_time']}, alertname "
                 f"{probe['alert']}, scenario {probe['scenario']} (prints the annotations)")
    if not mine:
        detail = (f"expected {probe['alert']} firing for service={probe['service']} {at} to read "
                  f"its annotations; got none firing")
        return Outcome(False, detail, reproduce=reproduce)
    passed, detail = _annotation_value(probe["key"], mine[0].get(probe["key"]), probe["expect"])
    return Outcome(passed, detail, reproduce=reproduce)


def _annotation_value(key: str, value: str | None, expect: dict) -> tuple[bool, str]:
    """(passed, detail) of one annotation value against ``expect``."""
    if value is None or not value.strip():
        return False, f"expected annotation {key}; got none"
    if "equals" in expect:
        passed = value == expect["equals"]
        return passed, "" if passed else f"expected {key}={expect['equals']}; got {value}"
    if "contains" in expect:
        passed = expect["contains"] in value and "{{" not in value
        return passed, "" if passed else (f"expected {key} to resolve to text naming "
                                          f"{expect['contains']}; got {value!r}")
    return True, ""


def rule_count(check: dict, evidence: Evidence) -> Outcome:
    """Passed when alert ``probe.name`` is defined exactly ``probe.expect`` times in the
    loadable rule files."""
    probe = check["probe"]
    count = evidence.alert_names.count(probe["name"])
    passed = count == probe["expect"]
    detail = ""
    if not passed:
        detail = (f"expected {probe['name']} defined {probe['expect']} time(s) in loadable "
                  f"rule files; got {count}")
    return Outcome(passed, detail)
