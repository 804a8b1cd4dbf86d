"""The inhibit probe: is a target alert muted while other alerts fire, per the inhibit rules,
with the semantics of the Alertmanager the grade names (0.25-0.29 or 0.30+)?"""

from __future__ import annotations

from grader import inhibition
from grader.probes.evidence import Evidence, Outcome
from grader.probes.labels import format_labels


def read_inhibit_rules(am: dict | None) -> tuple[list[dict], str | None]:
    """(inhibit rules, None) of a loaded alertmanager.yml, ``([], why)`` when they cannot be
    read, ``([], None)`` when it did not load (:func:`grader.inhibition.inhibit_rules_of`)."""
    if am is None:
        return [], None
    try:
        return inhibition.inhibit_rules_of(am), None
    except (inhibition.InhibitConfigError, ValueError) as err:
        return [], str(err)


def inhibit(check: dict, evidence: Evidence) -> Outcome:
    """With ``probe.alerts`` firing together, passed when ``probe.alerts[probe.target]`` is
    muted exactly when ``probe.expect_muted`` says (:func:`grader.inhibition.inhibited_by`,
    ``evidence.inhibit_semantics``)."""
    probe = check["probe"]
    reproduce = "alerts: " + "; ".join(format_labels(a, drop=()) for a in probe["alerts"])
    if evidence.alertmanager is None or evidence.inhibit_error:
        detail = f"inhibit rules cannot be read: {evidence.inhibit_error or evidence.grading.am_error}"
        return Outcome(False, detail, reproduce=reproduce)
    muted = inhibition.inhibited_by(evidence.inhibit_rules, probe["alerts"],
                                    evidence.inhibit_semantics)[probe["target"]]
    passed = (muted is not None) == probe["expect_muted"]
    detail = ""
    if not passed:
        target = probe["alerts"][probe["target"]]
        if probe["expect_muted"]:
            detail = (f"expected {target['alertname']} muted while "
                      f"{probe['alerts'][0]['alertname']} fires; got not muted")
        else:
            rule_index, source = muted
            detail = (f"expected {target['alertname']} {format_labels(target)} not muted; "
                      f"got muted by inhibit rule {rule_index + 1} "
                      f"(source {probe['alerts'][source]['alertname']})")
    return Outcome(passed, detail, reproduce=reproduce)


def version_differences(evidence: Evidence) -> list[dict]:
    """The inhibit checks whose verdict depends on the Alertmanager version: ``[{check,
    rule, verdicts: {"alertmanager 0.25-0.29": muted?, "alertmanager 0.30+": muted?}}]``
    (``rule`` the 1-based inhibit rule that mutes under one of them), in catalog order; empty
    when the rules cannot be read."""
    if evidence.alertmanager is None or evidence.inhibit_error:
        return []
    out = []
    for check in evidence.catalog["checks"]:
        if check["probe"]["type"] != "inhibit":
            continue
        probe = check["probe"]
        old, new = (inhibition.inhibited_by(evidence.inhibit_rules, probe["alerts"], semantics)
                    [probe["target"]] for semantics in inhibition.SEMANTICS)
        if (old is None) != (new is None):
            out.append({"check": check["id"], "rule": (old or new)[0] + 1,
                        "verdicts": {"alertmanager 0.25-0.29": old is not None,
                                     "alertmanager 0.30+": new is not None}})
    return out
