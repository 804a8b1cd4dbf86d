"""The syntax probe: do the rule files (promtool check rules) or alertmanager.yml (amtool check-config) load?"""

from __future__ import annotations

from grader.probes.evidence import Evidence, Outcome
from grader.workspace import ALERTMANAGER_PATH


def syntax(check: dict, evidence: Evidence) -> Outcome:
    """Passed when the grading pass found no syntax error in the files ``probe.what`` names
    (``alertmanager``: alertmanager.yml; anything else: the rule files)."""
    what = check["probe"]["what"]
    files = [e for e in evidence.grading.syntax_errors
             if (e["file"] == ALERTMANAGER_PATH) == (what == "alertmanager")]
    reproduce = ("amtool check-config alertmanager/alertmanager.yml"
                 if what == "alertmanager" else "promtool check rules rules/*.yml")
    return Outcome(not files, "; ".join(f"{e['file']}: {e['message']}" for e in files),
                   reproduce=reproduce)
