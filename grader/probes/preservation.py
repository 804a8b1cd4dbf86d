"""Preservation and tamper probes: what the change requests did not mention is still there; nothing reserved was rewritten."""

from __future__ import annotations

from grader.preservation import preserved, tamper_findings
from grader.probes.evidence import Evidence, Outcome


def preserve(check: dict, evidence: Evidence) -> Outcome:
    """Passed when item ``probe.item`` of kind ``probe.what`` is unchanged
    (:func:`grader.preservation.preserved`)."""
    probe = check["probe"]
    passed, detail = preserved(probe["what"], probe["item"], evidence.rules, evidence.alertmanager)
    return Outcome(passed, detail)


def tamper(check: dict, evidence: Evidence) -> Outcome:
    """Passed when :func:`grader.preservation.tamper_findings` finds nothing for
    ``probe.what``; the detail lists what it found."""
    probe = check["probe"]
    grading = evidence.grading
    found = tamper_findings(probe["what"], probe, grading.rule_entries(), evidence.pristine_groups,
                            grading.ws.alertmanager,
                            evaluation_interval=evidence.catalog.get("evaluation_interval", "1m"))
    return Outcome(not found, "; ".join(found))
