"""One grading pass's checks: gather the evidence the probes read, run every probe, score."""

from __future__ import annotations

from grader.causes import explain
from grader.grading_pass import GradingPass
from grader.hygiene import hygiene_findings
from grader.probes import run_probes
from grader.probes.evidence import Evidence
from grader.probes.inhibition import read_inhibit_rules, version_differences
from grader.probes.routing import resolve_routes
from grader.promql_replay import replay_promql_checks
from grader.score import score
from grader.tools import AMTOOL, amtool_inhibition


def gather_evidence(grading: GradingPass) -> Evidence:
    """Run the external tools once for all checks (the promtool replay, then amtool routes)
    and read the inhibit rules and pristine rule groups. Call after ``check_syntax``.
    Raises promtool.GraderError when promtool fails in a way no check explains."""
    promql = replay_promql_checks(grading)
    rules = [r for _, _, r in grading.rule_entries()]
    am = grading.ws.alertmanager if grading.am_path else None
    routes = resolve_routes(grading, rules)
    inhibit_rules, inhibit_error = read_inhibit_rules(am)
    return Evidence(
        grading=grading,
        catalog=grading.catalog,
        rules=rules,
        alert_names=[r.get("alert") for r in rules if r.get("alert")],
        alertmanager=am,
        promql=promql,
        routes=routes,
        inhibit_rules=inhibit_rules,
        inhibit_error=inhibit_error,
        pristine_groups=grading.cache.pristine_groups(grading.task_dir, grading.fingerprint),
        inhibit_semantics=amtool_inhibition(AMTOOL)[1],
    )


def evaluate(grading: GradingPass, pristine: dict[str, float], *, causes: bool = True) -> dict:
    """The GradeResult (without ``timings``) of a pass whose syntax check has run; every
    failing check carries its ``cause`` (:func:`grader.causes.explain`) unless ``causes`` is false;
    ``version_differences`` and the config hygiene ``findings`` (:mod:`grader.hygiene`) are
    added when there are any.

    ``pristine``: requirement id -> q of the pristine repo ({} while grading it). Raises
    BadInput for an unknown probe or requirement kind, promtool.GraderError as above.
    """
    evidence = gather_evidence(grading)
    results, variant_pass = run_probes(evidence)
    if causes:
        explain(evidence, results)
    result = score(grading.task_dir, grading.catalog, results, variant_pass, evidence.alert_names,
                   pristine, grading.syntax_errors)
    differences = version_differences(evidence)
    if differences:
        result["version_differences"] = differences
    findings = hygiene_findings(evidence.alertmanager)
    if findings:
        result["findings"] = findings
    return result
