"""Field cases from ../shared/cases (copied into tests/fixtures/cases) graded through the real promtool/amtool.

Each case's rules become a one-requirement task whose catalog holds the case's own
assertion as a check, so the grader's machinery (group order, failure attribution,
details) is tested on inputs practitioners reported.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import yaml

from contract.base import dump
from contract.files import dump_json
from grader.grade import DEFAULT_GRADER, grade_result

CASES = Path(__file__).parent / "fixtures" / "cases"
MINIMAL_AM = "route: {receiver: default}\nreceivers: [{name: default}]\n"


def make_task(tmp: Path, rules: str, series: list[dict], checks: list[dict], alert: str,
              am: str = MINIMAL_AM, kind: str = "alert") -> tuple[Path, Path]:
    """A task folder whose pristine repo is empty and a workspace holding ``rules``."""
    task = tmp / "task"
    (task / "environment" / "monitoring" / "rules").mkdir(parents=True)
    (task / "environment" / "monitoring" / "alertmanager").mkdir(parents=True)
    (task / "environment" / "monitoring" / "alertmanager" / "alertmanager.yml").write_text(am)
    (task / "tests").mkdir()
    (task / "tests" / "reference_records.yml").write_text("groups: []\n")
    (task / "task.toml").write_text('version = "1.0"\n')
    catalog = {
        "version": 1, "task_id": "case", "evaluation_interval": "1m",
        "requirements": [{"id": "A1", "kind": kind, "weight": 3, "title": "case",
                          "targets": {"alert": alert}}],
        "scenarios": [{"id": "case"}], "input_series": {"case": series},
        "checks": [dict(c, req="A1", note="from the case") for c in checks],
    }
    (task / "tests" / "checks.json").write_bytes(dump_json(catalog))
    ws = tmp / "ws"
    shutil.copytree(task / "environment" / "monitoring", ws)
    (ws / "rules" / "rules.yml").write_text(rules)
    return task, ws


def case_series(name: str) -> list[dict]:
    return yaml.safe_load((CASES / name / "test.yml").read_text())["tests"][0]["input_series"]


def promql_check(cid, family, expr, t, expect, **extra):
    return {"id": cid, "family": family, "label": cid,
            "probe": {"type": "promql", "scenario": "case", "eval_time": t, "expr": expr,
                      "exp_samples": expect, **extra}}


ONE = [{"labels": "{}", "value": 1}]


def test_group_order_case_grades_identically_20_times_with_fire_passing(tmp_path):
    rules = (CASES / "group-order" / "rules.yml").read_text()
    fire = promql_check(
        "A1.fire", "Fire",
        'count(ALERTS{alertname="CheckoutErrorRatioHigh",alertstate="firing",service="checkout"}) > bool 0',
        "16m", ONE)
    task, ws = make_task(tmp_path, rules, case_series("group-order"), [fire], "CheckoutErrorRatioHigh")
    results = set()
    for _ in range(20):
        DEFAULT_GRADER.cache.clear_replays()  # run promtool every time: no memoized replay
        result = grade_result(task, ws)
        as_json = dump(result)
        as_json.pop("timings")
        results.add(dump_json(as_json))
        assert result.checks[0].passed is True, result.checks[0].detail
    assert len(results) == 1


def test_per_pod_alert_fails_dup_check_and_names_pod(tmp_path):
    rules = (CASES / "per-pod" / "rules.yml").read_text()
    firing = 'ALERTS{alertname="ApiErrorRatioHigh",alertstate="firing",service="api"}'
    dup = promql_check("A1.dup", "Dup", f"count({firing})", "20m", ONE, witness=firing)
    task, ws = make_task(tmp_path, rules, case_series("per-pod"), [dup], "ApiErrorRatioHigh")
    check = grade_result(task, ws).checks[0]
    assert check.passed is False
    assert "got 3" in check.detail and "distinct by pod" in check.detail, check.detail

    aggregated = rules.replace(
        'rate(http_requests_errors_total{service="api"}[5m]) / rate(http_requests_total{service="api"}[5m])',
        'sum by (service) (rate(http_requests_errors_total{service="api"}[5m])) / '
        'sum by (service) (rate(http_requests_total{service="api"}[5m]))')
    assert aggregated != rules
    (ws / "rules" / "rules.yml").write_text(aggregated)
    assert grade_result(task, ws).checks[0].passed is True


def test_alert_without_comparison_fails_silent_check(tmp_path):
    rules = (CASES / "no-comparison" / "rules.yml").read_text()
    silent = promql_check("A1.silent", "Silent", 'ALERTS{alertname="QueueDropsHigh",alertstate="firing"}',
                          "20m", [])
    task, ws = make_task(tmp_path, rules, case_series("no-comparison"), [silent], "QueueDropsHigh")
    result = grade_result(task, ws)
    check = result.checks[0]
    assert check.passed is False
    assert "got 1 firing" in check.detail and "service=ingest" in check.detail
    assert result.requirements[0].q == 0.0


def test_disappearing_series_silences_ratio_alert_but_not_up_alert(tmp_path):
    rules = (CASES / "disappearing-series" / "rules.yml").read_text()
    up_rule = ("  - alert: SearchDown\n    expr: sum by (service) (up{service=\"search\"}) == 0\n"
               "    for: 2m\n")
    fire_ratio = promql_check("A1.fire", "Fire",
                              'count(ALERTS{alertname="SearchErrorRatioHigh",alertstate="firing"}) > bool 0',
                              "45m", ONE)
    fire_up = promql_check("A1.fire-up", "Fire",
                           'count(ALERTS{alertname="SearchDown",alertstate="firing"}) > bool 0', "45m", ONE)
    task, ws = make_task(tmp_path, rules + up_rule, case_series("disappearing-series"),
                         [fire_ratio, fire_up], "SearchErrorRatioHigh")
    checks = {c.id: c for c in grade_result(task, ws).checks}
    assert checks["A1.fire"].passed is False
    assert checks["A1.fire-up"].passed is True


def test_routing_continue_detail_names_missing_and_extra(tmp_path):
    am = (CASES / "routing-continue" / "alertmanager.yml").read_text()
    checks = [
        {"id": "R1.route.positive1", "family": "Route", "label": "chat",
         "probe": {"type": "route", "labels": {"notify": "chat", "notify_team": "data"},
                   "expect": ["chat-oncall", "default-slack"]}},
        {"id": "R1.route.positive2", "family": "Route", "label": "billing",
         "probe": {"type": "route", "labels": {"team": "billing"}, "expect": ["audit-log"]}},
    ]
    task, ws = make_task(tmp_path, "groups: []\n", [], checks, "none", am=am, kind="route")
    (task / "environment" / "monitoring" / "alertmanager" / "alertmanager.yml").write_text(am)
    result = grade_result(task, ws)
    by_id = {c.id: c for c in result.checks}
    first = by_id["R1.route.positive1"]
    assert first.passed is False and first.score == 1 / 3
    assert "missing ['default-slack']" in first.detail and "extra ['chat-data']" in first.detail
    assert by_id["R1.route.positive2"].passed is True


def test_nan_latency_value_is_asserted_through_x_not_equal_x_and_alert_stays_silent(tmp_path):
    rules = (CASES / "nan-latency" / "rules.yml").read_text()
    quantile = ('histogram_quantile(0.99, sum by (service, le) '
                '(rate(http_request_duration_seconds_bucket[5m])))')
    nan = promql_check("A1.value-nan", "Value", f"count({quantile} != {quantile})", "20m", ONE)
    equal = promql_check("A1.value-equal", "Value", f"count({quantile} == {quantile})", "20m", ONE)
    silent = promql_check("A1.silent", "Silent",
                          'ALERTS{alertname="CheckoutLatencyP99High",alertstate="firing"}', "20m", [])
    task, ws = make_task(tmp_path, rules, case_series("nan-latency"), [nan, equal, silent],
                         "CheckoutLatencyP99High")
    checks = {c.id: c for c in grade_result(task, ws).checks}
    assert checks["A1.value-nan"].passed is True  # NaN is asserted as x != x
    assert checks["A1.value-equal"].passed is False  # NaN never equals NaN
    assert checks["A1.silent"].passed is True  # NaN > 0.5 is false: silent at zero traffic
