"""Causes of failing checks (issue 15) pinned on the field cases and on a misspelt inhibit matcher for every inhibit requirement of all 30 tasks."""

from __future__ import annotations

import copy
import json
import shutil
from pathlib import Path

import pytest
import yaml

import tests.test_cases as cases
from contract.grade import CheckOutcome
from contract.paths import TASKS_DIR, task_dirs
from grader.causes.inhibit import inhibit_cause
from grader.grade import grade_result
from grader.promql_split import split_comparison
from grader.score import case_role

CASES = cases.CASES
ONE = cases.ONE
EQUAL_MISSING = [  # the seven alerts of inhibit-equal-missing/EXPECT.md
    {"alertname": "CritA", "severity": "critical", "cluster": "eu1"},
    {"alertname": "WarnSame", "severity": "warning", "cluster": "eu1"},
    {"alertname": "WarnOther", "severity": "warning", "cluster": "us2"},
    {"alertname": "CritNoCluster", "severity": "critical"},
    {"alertname": "WarnNoCluster", "severity": "warning"},
    {"alertname": "NodeDown", "node": "n1"},
    {"alertname": "DiskFull", "node": "n1"},
]


def _grade_one(tmp_path, case, checks, alert, **kw) -> dict[str, CheckOutcome]:
    rules = (CASES / case / "rules.yml").read_text()
    task, ws = cases.make_task(tmp_path, rules, cases.case_series(case), checks, alert, **kw)
    return {c.id: c for c in grade_result(task, ws).checks}


def test_per_pod_dup_cause_names_the_pod_label_and_each_series(tmp_path):
    firing = 'ALERTS{alertname="ApiErrorRatioHigh",alertstate="firing",service="api"}'
    dup = cases.promql_check("A1.dup", "Dup", f"count({firing})", "20m", ONE, witness=firing)
    cause = _grade_one(tmp_path, "per-pod", [dup], "ApiErrorRatioHigh")["A1.dup"].cause
    assert cause.kind == "alert-duplicate-series"
    assert cause.facts["firing"] == 3 and cause.facts["distinct_by"] == ["pod"]
    assert "one per pod" in cause.summary
    assert all(s["active_since"] for s in cause.facts["series"])  # the time, not in the detail


def test_no_comparison_silent_cause_says_the_expression_has_no_comparison(tmp_path):
    silent = cases.promql_check("A1.silent", "Silent",
                                'ALERTS{alertname="QueueDropsHigh",alertstate="firing"}', "20m", [])
    check = _grade_one(tmp_path, "no-comparison", [silent], "QueueDropsHigh")["A1.silent"]
    cause = check.cause
    assert cause.kind == "alert-no-comparison"
    assert cause.facts["comparison"] is None and "no comparison" in cause.summary
    assert "firing since" in cause.summary and "firing since" not in check.detail
    assert cause.facts["value"] and cause.facts["value"][0]["value"].startswith("0")


def test_nan_latency_fire_cause_shows_the_nan_value_against_the_threshold(tmp_path):
    fire = cases.promql_check(
        "A1.fire", "Fire",
        'count(ALERTS{alertname="CheckoutLatencyP99High",alertstate="firing"}) > bool 0', "20m", ONE)
    cause = _grade_one(tmp_path, "nan-latency", [fire], "CheckoutLatencyP99High")["A1.fire"].cause
    assert cause.kind == "alert-inactive"
    assert cause.facts["comparison"] == "> 0.5"
    assert cause.facts["value"][0]["value"] == "NaN", cause
    assert "NaN" in cause.summary


def test_disappearing_series_fire_cause_says_the_expression_gives_no_series(tmp_path):
    fire = cases.promql_check("A1.fire", "Fire",
                              'count(ALERTS{alertname="SearchErrorRatioHigh",alertstate="firing"}) > bool 0',
                              "45m", ONE)
    cause = _grade_one(tmp_path, "disappearing-series", [fire], "SearchErrorRatioHigh")["A1.fire"].cause
    assert cause.kind == "alert-inactive" and cause.facts["value"] == []
    assert "absent or stale" in cause.summary


def test_group_order_fire_before_for_elapsed_is_pending_since_a_time(tmp_path):
    fire = cases.promql_check(
        "A1.fire", "Fire",
        'count(ALERTS{alertname="CheckoutErrorRatioHigh",alertstate="firing",service="checkout"}) > bool 0',
        "15m", ONE)
    cause = _grade_one(tmp_path, "group-order", [fire], "CheckoutErrorRatioHigh")["A1.fire"].cause
    assert cause.kind == "alert-pending"
    assert cause.facts["series"][0]["active_since"] == "14m"
    assert "active since 14m" in cause.summary and "fires at 16m" in cause.summary


def _route_task(tmp_path, am: str, checks: list[dict]) -> dict[str, CheckOutcome]:
    task, ws = cases.make_task(tmp_path, "groups: []\n", [], checks, "none", am=am, kind="route")
    return {c.id: c for c in grade_result(task, ws).checks}


def test_routing_continue_cause_gives_amtool_path_and_the_child_that_replaced_the_root(tmp_path):
    am = (CASES / "routing-continue" / "alertmanager.yml").read_text()
    checks = [{"id": "R1.route.positive1", "family": "Route", "label": "chat",
               "probe": {"type": "route", "labels": {"notify": "chat", "notify_team": "data"},
                         "expect": ["chat-oncall", "default-slack"]}}]
    cause = _route_task(tmp_path, am, checks)["R1.route.positive1"].cause
    assert cause.kind == "route-child-matched"
    assert any('{notify="chat"}' in line for line in cause.facts["path"])  # amtool --tree
    assert cause.facts["missing"][0]["child"] == "route.routes[0]"
    assert cause.facts["extra"][0]["receiver"] == "chat-data"


def test_missing_continue_cause_names_the_sibling_that_stopped_the_walk(tmp_path):
    am = (CASES / "routing-continue" / "alertmanager.yml").read_text().replace(
        "receiver: chat-oncall, continue: true", "receiver: chat-oncall")
    checks = [{"id": "R1.route.positive1", "family": "Route", "label": "chat",
               "probe": {"type": "route", "labels": {"notify": "chat", "notify_team": "data"},
                         "expect": ["chat-oncall", "chat-data"]}}]
    cause = _route_task(tmp_path, am, checks)["R1.route.positive1"].cause
    assert cause.kind == "route-continue-missing"
    assert cause.facts["missing"][0]["route"] == "route.routes[0]"
    assert "no continue: true" in cause.summary


@pytest.mark.parametrize("config", ["am.yml", "am_legacy.yml"])
def test_regex_matching_missing_label_cause_says_the_matcher_matches_without_the_label(tmp_path, config):
    am = (CASES / "regex-matches-missing-label" / config).read_text()
    checks = [{"id": "R1.route.negative1", "family": "Route", "label": "no notify",
               "probe": {"type": "route", "labels": {"alertname": "DiskFull", "severity": "warning"},
                         "forbid": ["zulip"]}}]
    cause = _route_task(tmp_path, am, checks)["R1.route.negative1"].cause
    assert cause.kind == "route-matches-missing-label"
    assert cause.facts["extra"][0]["matched_on_absent"] == ['notify=~".*"']
    assert "also matches alerts without" in cause.summary


def test_anchored_regex_cause_names_the_matcher_and_the_value_it_refused(tmp_path):
    am = (CASES / "regex-matches-missing-label" / "am_anchor.yml").read_text()
    checks = [{"id": "R1.route.positive1", "family": "Route", "label": "db",
               "probe": {"type": "route", "labels": {"team": "db-oncall"}, "expect": ["dba"]}}]
    cause = _route_task(tmp_path, am, checks)["R1.route.positive1"].cause
    assert cause.kind == "route-matcher-stopped"
    assert cause.facts["missing"][0]["matcher"] == 'team=~"db"'
    assert "'db-oncall'" in cause.summary


def _inhibit_check(alerts, target, expect_muted):
    return {"id": "I1.inhibit.x.y", "family": "Inhibit", "label": "",
            "probe": {"type": "inhibit", "alerts": alerts, "target": target,
                      "expect_muted": expect_muted}}


def test_inhibit_equal_missing_on_both_sides_cause_says_it_counts_as_equal():
    rules = yaml.safe_load((CASES / "inhibit-equal-missing" / "alertmanager.yml").read_text())
    pair = [EQUAL_MISSING[3], EQUAL_MISSING[4]]  # CritNoCluster, WarnNoCluster
    cause = inhibit_cause(_inhibit_check(pair, 1, False), rules["inhibit_rules"])
    assert cause["kind"] == "inhibit-overmatched"
    assert "equal label cluster is missing on both sides" in cause["summary"]


def test_inhibit_alert_matching_both_sides_cause_says_it_never_mutes_itself():
    rules = yaml.safe_load((CASES / "inhibit-equal-missing" / "alertmanager.yml").read_text())
    cause = inhibit_cause(_inhibit_check(EQUAL_MISSING[5:], 0, True), rules["inhibit_rules"])
    assert cause["kind"] == "inhibit-self-excluded", cause
    assert "never mutes itself" in cause["summary"]
    rule2 = cause["facts"]["rules"][1]
    assert rule2["target_matched"] and not any(s["matched"] and not s["self_excluded"]
                                               for s in rule2["sources"])


def _misspelt(am: dict, source: str) -> tuple[dict, int]:
    """The config with every inhibit rule sourced on ``source`` rewritten to
    ``source_match: {alert: source}`` (a label no alert has), and how many were."""
    am = copy.deepcopy(am)
    count = 0
    for rule in am.get("inhibit_rules") or []:
        if f'alertname="{source}"' in (rule.get("source_matchers") or []):
            rule["source_matchers"].remove(f'alertname="{source}"')
            rule["source_match"] = {"alert": source}
            count += 1
    return am, count


INHIBIT_TASKS = [t for t in task_dirs(TASKS_DIR)
                 if any(r["kind"] == "inhibit" for r in
                        json.loads((t / "tests" / "checks.json").read_text())["requirements"])]


@pytest.mark.parametrize("task", INHIBIT_TASKS, ids=lambda t: t.name[:6])
def test_misspelt_inhibit_source_label_cause_names_the_label_on_every_suppressed_check(task: Path):
    catalog = json.loads((task / "tests" / "checks.json").read_text())
    am = yaml.safe_load((task / "solution" / "monitoring" / "alertmanager" / "alertmanager.yml").read_text())
    for req in (r for r in catalog["requirements"] if r["kind"] == "inhibit"):
        source = req["targets"]["source"]
        broken, count = _misspelt(am, source)
        assert count >= 1, f"{task.name} {req['id']}: no oracle inhibit rule sources {source}"
        suppressed = [c for c in catalog["checks"] if c["req"] == req["id"]
                      and case_role(c["id"], "inhibit") == "suppressed"]
        assert suppressed
        for check in suppressed:
            cause = inhibit_cause(check, broken["inhibit_rules"])
            assert cause["kind"] == "inhibit-matcher-absent-label", (check["id"], cause)
            assert f'alert="{source}"' in cause["summary"] and "did you mean alertname" in cause["summary"]


def test_misspelt_inhibit_matcher_cause_through_the_real_grade(tmp_path):
    task = next(t for t in INHIBIT_TASKS if t.name.startswith("af-011"))
    ws = tmp_path / "ws"
    import shutil
    shutil.copytree(task / "environment" / "monitoring", ws)
    shutil.copytree(task / "solution" / "monitoring", ws, dirs_exist_ok=True)
    am_path = ws / "alertmanager" / "alertmanager.yml"
    broken, _ = _misspelt(yaml.safe_load(am_path.read_text()), "SearchApiDown")
    am_path.write_text(yaml.safe_dump(broken))
    failing = [c for c in grade_result(task, ws).checks if c.passed is False]
    assert failing and all(c.family == "Inhibit" for c in failing)
    for check in failing:
        assert check.cause.kind == "inhibit-matcher-absent-label"
        assert check.cause.summary not in check.detail


def test_oracle_grade_has_no_cause_and_failing_checks_all_have_one():
    task = INHIBIT_TASKS[0]
    result = grade_result(task)  # the pristine repo fails most checks
    failing = [c for c in result.checks if c.passed is False]
    assert failing and all(c.cause for c in failing)
    assert all(c.cause is None for c in result.checks if c.passed is not False)
    for check in failing:
        cause = check.cause
        assert (cause.kind == "none") == bool(cause.why), cause


@pytest.mark.parametrize(("expr", "split"), [
    ('sum(rate(a{x="b>c"}[5m])) / sum(rate(b[5m])) > 0.05',
     ('sum(rate(a{x="b>c"}[5m])) / sum(rate(b[5m]))', ">", "0.05")),
    ("up == 0", ("up", "==", "0")),
    ("x > bool 3", ("x", ">", "3")),
    ("a > 1 and b < 2", ("a", ">", "1")),
    ("rate(x[5m])", None),
    ('x{a!="1"}', None),
])
def test_split_comparison_finds_the_top_level_comparison(expr, split):
    assert split_comparison(expr) == split


def test_inhibit_without_any_rule_for_the_source_says_so():
    alerts = [{"alertname": "SearchApiDown", "service": "search-api"},
              {"alertname": "SearchApiHighErrorRatio", "service": "search-api"}]
    rules = [{"source_matchers": ['alertname="ClusterNetworkPartition"'],
              "target_matchers": ['severity="ticket"'], "equal": ["cluster"]}]
    cause = inhibit_cause(_inhibit_check(alerts, 1, True), rules)
    assert cause["kind"] == "inhibit-no-matching-rule"
    assert "SearchApiDown {service=search-api}" in cause["summary"]
    assert cause["summary"].startswith("the only inhibit rule's source side matches no other alert")


def test_hostile_recorded_causes_are_dropped_or_kept_as_text():
    from contract.site import SiteStep
    from exporter.blame import attach_blame, blame_at
    from exporter.steps import recorded_causes

    causes = recorded_causes({"a": {"kind": "k", "summary": "<img src=x onerror=alert(1)>",
                                    "facts": {"missing": "not a list", "extra": [1, None]}},
                              "b": "not an object", "c": {"kind": 3, "summary": "x"}})
    assert list(causes) == ["a"] and causes["a"]["summary"].startswith("<img")
    steps = [SiteStep.model_construct(**step) for step in (
        {"checks": "1", "causes": {}, "diff": None},
        {"checks": "0", "causes": causes, "diff": {"hunks": [{"header": "@@", "lines": [["+", "x"]]}]}})]
    attach_blame(steps, [{"id": "a", "label": "A"}])
    assert blame_at(steps, 1, "a") == {"step": 1, "hunk": 0}
    assert recorded_causes(["not", "a", "map"]) == {}


def test_blame_follows_the_step_that_gave_a_red_check_its_current_cause():
    """Red in the pristine repo for one reason and red later for another (a catch-all route
    added where a route was missing): blamed on the step that brought the current cause, with
    the hunk naming it; a step that leaves the cause's kind alone or changes no file is not."""
    from contract.site import SiteStep
    from exporter.blame import attach_blame, blame_at

    missing = {"kind": "route-receiver-unrouted", "summary": "no route delivers to pager", "facts": {}}
    catch_all = {"kind": "route-overmatched", "summary": "route.routes[0] {} matched",
                 "facts": {"receiver": "core-services-pager"}}
    hunks = {"hunks": [{"header": "@@ -1 +1 @@", "lines": [["-", "platform-pager"], ["+", "platform-oncall"]]},
                       {"header": "@@ -9 +9 @@", "lines": [["+", "- receiver: core-services-pager"]]}]}
    steps = [SiteStep.model_construct(**step) for step in (
        {"checks": "0", "causes": {"r": missing}, "diff": None},
        {"checks": "0", "causes": {"r": missing}, "diff": {"hunks": [{"header": "@@", "lines": [["+", "x"]]}]}},
        {"checks": "0", "causes": {"r": catch_all}, "diff": hunks},
        {"checks": "0", "causes": {"r": catch_all}, "diff": {"hunks": [{"header": "@@", "lines": [["+", "y"]]}]}})]
    attach_blame(steps, [{"id": "r", "label": "R1 route"}])
    assert blame_at(steps, 1, "r") == {"step": 0, "hunk": None}
    assert blame_at(steps, 2, "r") == {"step": 2, "hunk": 1}
    assert blame_at(steps, 3, "r") == {"step": 2, "hunk": 1}


@pytest.mark.parametrize(("rule", "constructs"), [
    ({"expr": "sum(rate(x[5m])) > bool 0.1"}, ["bool"]),
    ({"expr": "(sum by (service) (up) == 0) or absent(up{job=\"api\"})"}, ["or"]),
    ({"expr": "sum(rate(x[5m])) > 0.1", "labels": {"value": "{{ $value }}", "team": "a"}},
     ["template-label"]),
    ({"expr": "sum(rate(x[5m])) > 0.1", "keep_firing_for": "10m"}, ["keep_firing_for"]),
    ({"expr": 'sum(rate(x{code=~"5..|or"}[5m])) > 0.1 and on (service) y'}, []),  # `or` in a string, `and`
])
def test_rule_constructs_names_bool_or_templated_labels_and_keep_firing_for(rule, constructs):
    from grader.causes.constructs import rule_constructs
    assert [c["construct"] for c in rule_constructs(rule)] == constructs


@pytest.mark.parametrize(("expr", "extra", "says"), [
    ("sum by (service) (rate(queue_dropped_messages_total[5m])) > bool 1000", {},
     "uses bool"),
    (("(sum by (service) (rate(queue_dropped_messages_total[5m])) > 1000)"
      " or absent(queue_dropped_messages_total{service=\"none\"})"), {}, "union (or)"),
    ("sum by (service) (rate(queue_dropped_messages_total[5m])) >= 0",
     {"keep_firing_for": "30m"}, "keep_firing_for: 30m"),
])
def test_a_firing_cause_names_the_construct_that_makes_it_fire(tmp_path, expr, extra, says):
    """Through the real promtool: the rule fires on a healthy service, and the cause names
    the construct (bool, the or-absent union, keep_firing_for), not only the value."""
    rule = {"alert": "QueueDropsHigh", "expr": expr, "for": "5m",
            "labels": {"severity": "warning"}, **extra}
    rules = yaml.safe_dump({"groups": [{"name": "queue", "rules": [rule]}]}, sort_keys=False)
    silent = cases.promql_check("A1.silent", "Silent",
                                'ALERTS{alertname="QueueDropsHigh",alertstate="firing"}', "20m", [])
    task, ws = cases.make_task(tmp_path, rules, cases.case_series("no-comparison"), [silent],
                               "QueueDropsHigh")
    check = {c.id: c for c in grade_result(task, ws).checks}["A1.silent"]
    assert check.passed is False
    assert says in check.cause.summary, check.cause
    assert "the expression has no comparison" not in check.cause.summary


def test_a_route_cause_explains_the_route_that_caught_the_alert_ahead_of_the_intended_one(tmp_path):
    """Two routes name the expected receiver (the service route and the team route): with the
    service route moved after the team routes, the cause names the team route that caught the
    page first (continue missing), not the first route naming the receiver in tree order."""
    task = next(t for t in task_dirs(TASKS_DIR) if t.name.startswith("af-029"))
    ws = tmp_path / "ws"
    shutil.copytree(task / "environment" / "monitoring", ws)
    shutil.copytree(task / "solution" / "monitoring", ws, dirs_exist_ok=True)
    path = ws / "alertmanager" / "alertmanager.yml"
    doc = yaml.safe_load(path.read_text())
    routes = doc["route"]["routes"]
    service = next(r for r in routes if 'service="search-api"' in (r.get("matchers") or []))
    routes.remove(service)
    routes.append(service)
    path.write_text(yaml.safe_dump(doc, sort_keys=False))
    check = {c.id: c for c in grade_result(task, ws).checks}["R3.route.positive1"]
    cause = check.cause
    assert cause.kind == "route-continue-missing"
    missing = cause.facts["missing"][0]
    assert missing["receiver"] == "payments-pager"
    assert 'team="storefront"' in missing["sibling"]
    assert any('team="storefront"' in c["describe"] for c in cause.facts["caught_by"])
