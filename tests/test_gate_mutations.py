"""Mutants, adversaries and the partial policy on a synthetic task of another workflow: no route,
no inhibition, no recording requirement, three repairs (a generic ratio rule in a PrometheusRule
manifest, a Down alert, a latency burn), rules spread over nested files. No binary runs here."""

from __future__ import annotations

import json
import random

import pytest
import yaml

from proofs.gate import GateRow, format_table, summary, why_not
from recorder.reference.context import (
    NotApplicable,
    build_context,
    find_rule,
    iter_rules,
    load_doc,
    rule_name,
)
from recorder.reference.mutations import (
    ADVERSARIES,
    MUTANTS,
    applicability,
    apply,
    mutate,
    target_id,
)
from recorder.reference.partial import partial_files, split
from recorder.reference.policies import write_order
from recorder.reference_runs import demo_policies

ERRORS = "rules/k8s/errors.yaml"
HEALTH = "rules/health.yml"
LATENCY = "rules/latency.yml"
AM = "alertmanager/alertmanager.yml"

RATIO = ('sum by (service) (rate(http_requests_total{code=~"5.."}[5m])) / '
         'sum by (service) (rate(http_requests_total[5m])) > 0.1')
SLOW = ('1 - (sum by (service) (rate(http_request_duration_seconds_bucket{le="0.3",service="svc-a"}[{w}])) / '
        'sum by (service) (rate(http_request_duration_seconds_count{service="svc-a"}[{w}])))')


def _rules(*groups: tuple[str, list[dict]]) -> str:
    return yaml.safe_dump({"groups": [{"name": n, "rules": r} for n, r in groups]}, sort_keys=False)


def _manifest(rules: list[dict]) -> str:
    return yaml.safe_dump({"apiVersion": "monitoring.coreos.com/v1", "kind": "PrometheusRule",
                           "metadata": {"name": "errors"},
                           "spec": {"groups": [{"name": "errors", "rules": rules}]}}, sort_keys=False)


def _down(service: str, expr: str, for_="2m") -> dict:
    camel = "".join(p.title() for p in service.split("-"))
    return {"alert": f"{camel}Down", "expr": expr, "for": for_,
            "labels": {"severity": "page", "team": "core"}, "annotations": {"summary": "down"}}


def _high(for_: str | None) -> dict:
    rule = {"alert": "HighErrorRatio", "expr": RATIO}
    if for_:
        rule["for"] = for_
    return {**rule, "labels": {"severity": "ticket"}, "annotations": {"summary": "errors"}}


def _latency(threshold: str) -> list[dict]:
    records = [{"record": f"slo:sli_slow:ratio_rate{w}", "expr": SLOW.replace("{w}", w)} for w in ("1h", "5m")]
    alert = {"alert": "SvcALatencyBurn", "expr": f'slo:sli_slow:ratio_rate1h{{service="svc-a"}} > {threshold} and '
             f'slo:sli_slow:ratio_rate5m{{service="svc-a"}} > {threshold}', "for": "5m",
             "labels": {"severity": "page", "team": "core"}}
    return [*records, alert]


SPEC = {
    "workflow": "alert-storm-cleanup",
    "services": [{"name": "svc-a", "family": "latency", "latency_le": "0.3", "pods": 3, "team": "core"},
                 {"name": "svc-b", "family": "http", "pods": 2, "team": "core"},
                 {"name": "svc-c", "family": "http", "pods": 1, "team": "core"}],
    "sli_families": {"http": {"metric": "http_requests_total", "error_selector": 'code=~"5.."'},
                     "latency": {"metric": "http_request_duration_seconds", "histogram": True}},
    "requirements": [
        {"id": "P1", "kind": "repair", "alert": "HighErrorRatio", "service": "svc-b", "generic": True,
         "condition": {"type": "ratio", "window_min": 5}, "threshold": 0.1, "for_s": 600,
         "labels": {"severity": "ticket"}, "defect": "missing-for", "weight": 3},
        {"id": "P2", "kind": "repair", "alert": "SvcADown", "service": "svc-a",
         "condition": {"type": "down"}, "threshold": None, "for_s": 120,
         "labels": {"severity": "page", "team": "core"}, "defect": "per-pod", "weight": 3},
        {"id": "P3", "kind": "repair", "alert": "SvcALatencyBurn", "service": "svc-a",
         "condition": {"type": "latency-burn"}, "threshold": 0.05, "for_s": 300,
         "records": {"long": "slo:sli_slow:ratio_rate1h", "short": "slo:sli_slow:ratio_rate5m"},
         "labels": {"severity": "page", "team": "core"}, "defect": "threshold-low", "weight": 3},
        {"id": "P4", "kind": "repair", "alert": "SvcCDown", "service": "svc-c",
         "condition": {"type": "down"}, "for_s": 120, "labels": {"severity": "page", "team": "core"},
         "defect": "for-too-long", "weight": 3},
    ],
}
PRISTINE = {
    "README.md": "# monitoring\n",
    ERRORS: _manifest([_high(None)]),
    HEALTH: _rules(("health", [_down("svc-a", 'up{service="svc-a"} == 0'),
                               _down("svc-b", 'sum by (service) (up{service="svc-b"}) == 0'),
                               _down("svc-c", 'sum by (service) (up{service="svc-c"}) == 0', "30m")])),
    LATENCY: _rules(("latency", _latency("0.005"))),
    AM: yaml.safe_dump({"route": {"receiver": "default", "routes": [
        {"matchers": ['severity="page"'], "receiver": "audit", "continue": True},
        {"matchers": ['team="core"'], "receiver": "core-pager"}]},
        "receivers": [{"name": "default"}, {"name": "audit"}, {"name": "core-pager"}]}),
}
SOLUTION = {
    ERRORS: _manifest([_high("10m")]),
    HEALTH: _rules(("health", [_down("svc-a", 'sum by (service) (up{service="svc-a"}) == 0'),
                               _down("svc-b", 'sum by (service) (up{service="svc-b"}) == 0'),
                               _down("svc-c", 'sum by (service) (up{service="svc-c"}) == 0')])),
    LATENCY: _rules(("latency", _latency("0.05"))),
}


def _ctx(first: str | None = None):
    spec = dict(SPEC)
    if first:  # put another repair first: it becomes the primary
        reqs = spec["requirements"]
        spec = {**spec, "requirements": [r for r in reqs if r["id"] == first] +
                [r for r in reqs if r["id"] != first]}
    return build_context(spec, SOLUTION, PRISTINE)


def _rule(files: dict, path: str, name: str) -> dict:
    return next(r for _, r in iter_rules(load_doc(files[path])) if rule_name(r) == name)


def _changed_paths(out: dict) -> set[str]:
    return {p for p in out if out[p] != SOLUTION.get(p)}


def test_context_roles_come_from_the_spec():
    ctx = _ctx()
    assert ctx.primary["id"] == "P1" and ctx.route is None and ctx.inhibit is None and ctx.recording is None
    assert ctx.reserved == ["http_request_duration_seconds_bucket", "http_request_duration_seconds_count",
                            "http_requests_total", "up"]
    assert ("rules/health.yml", "SvcBDown") in ctx.preserved_rules
    assert find_rule(ctx.solution, ctx, "HighErrorRatio")[0] == ERRORS


@pytest.mark.parametrize("name", ["mutant:missing-continue", "mutant:yaml-indent-slip", "catch-all-route",
                                  "receiver-nulling", "inhibit-all", "sibling-receiver", "late-page"])
def test_route_and_inhibit_attacks_do_not_apply_without_those_requirements(name):
    reason = applicability(name, _ctx())
    assert reason and ("route" in reason or "inhibit" in reason)
    with pytest.raises(NotApplicable):
        apply(name, SOLUTION, _ctx())


def test_every_other_mutation_applies_and_changes_files():
    ctx = _ctx()
    skip = {"missing-continue", "yaml-indent-slip", "catch-all-route", "receiver-nulling", "inhibit-all",
            "sibling-receiver", "late-page"}
    names = [f"mutant:{m}" for m in MUTANTS if m not in skip] + [a for a in ADVERSARIES if a not in skip]
    for name in names:
        assert applicability(name, ctx) is None, name
        assert _changed_paths(apply(name, SOLUTION, ctx, random.Random(0))), name


def test_primary_attacks_edit_the_rule_in_the_manifest_it_lives_in():
    ctx = _ctx()
    for name in ("always-fire", "never-fire", "per-pod", "threshold-band", "for-only-fix",
                 "mutant:missing-for", "mutant:wrong-for"):
        out = apply(name, SOLUTION, ctx, random.Random(0))
        assert _changed_paths(out) == {ERRORS}, name
        assert load_doc(out[ERRORS])["__manifest__"]["kind"] == "PrometheusRule"
    per_pod = _rule(apply("per-pod", SOLUTION, ctx), ERRORS, "HighErrorRatio")["expr"]
    assert per_pod.count("sum by (service, pod)") == 2 and 'service="' not in per_pod  # generic rule
    band = _rule(apply("threshold-band", SOLUTION, ctx), ERRORS, "HighErrorRatio")["expr"]
    assert "> 0.1 and" in band and "< 0.13" in band
    assert "for" not in _rule(apply("mutant:missing-for", SOLUTION, ctx), ERRORS, "HighErrorRatio")
    assert target_id("always-fire", ctx) == "P1" and target_id("mutant:missing-for", ctx) == "P1"
    renamed = apply("rename", SOLUTION, ctx)
    assert _rule(renamed, ERRORS, "HighErrorRatioRenamed")
    copied = load_doc(apply("mutant:duplicate-alert", SOLUTION, ctx)[ERRORS])
    assert [g["name"] for g in copied["groups"]] == ["errors", "errors-copy"]
    scratch = apply("mutant:scratch-file", SOLUTION, ctx)
    assert _changed_paths(scratch) == {"rules/scratch.yml"}
    assert _rule(scratch, "rules/scratch.yml", "HighErrorRatio")["expr"] == RATIO


def test_down_primary_gets_an_unaggregated_per_pod_alert_and_no_band():
    ctx = _ctx("P2")
    assert ctx.primary["id"] == "P2"
    out = apply("per-pod", SOLUTION, ctx)
    assert _rule(out, HEALTH, "SvcADown")["expr"] == 'up{service="svc-a"} == 0'
    assert _rule(out, HEALTH, "SvcBDown") == _rule(SOLUTION, HEALTH, "SvcBDown")
    assert "threshold" in applicability("threshold-band", ctx)
    assert applicability("always-fire", ctx) is None
    assert "up" in _rule(apply("input-shadowing", SOLUTION, ctx), HEALTH, "up")["record"]


def test_single_pod_service_has_no_per_pod_case():
    assert "pod" in applicability("per-pod", _ctx("P4"))


def test_latency_burn_attacks_read_the_histogram_bucket_from_the_records():
    ctx = _ctx("P3")
    per_pod = _rule(apply("per-pod", SOLUTION, ctx), LATENCY, "SvcALatencyBurn")["expr"]
    assert 'le="0.3"' in per_pod and "by (service, pod)" in per_pod
    assert "http_request_duration_seconds_bucket" in per_pod
    band = _rule(apply("threshold-band", SOLUTION, ctx), LATENCY, "SvcALatencyBurn")["expr"]
    assert band.startswith('slo:sli_slow:ratio_rate1h{service="svc-a"} > 0.05 and')
    shadow = apply("input-shadowing", SOLUTION, ctx)
    assert _rule(shadow, LATENCY, "http_request_duration_seconds_bucket")["expr"] == "vector(0)"
    services = [{k: v for k, v in s.items() if k != "latency_le"} for s in SPEC["services"]]
    bare = build_context({**ctx.spec, "services": services}, SOLUTION, PRISTINE)
    assert 'le="0.3"' in apply("per-pod", SOLUTION, bare)[LATENCY]  # found in the SLI records


def test_without_recording_the_injected_rules_go_to_the_primary_rule_file():
    ctx = _ctx()
    out = apply("alerts-injection", SOLUTION, ctx)
    assert _changed_paths(out) == {ERRORS}
    assert _rule(out, ERRORS, "ALERTS")["labels"]["alertname"] == "HighErrorRatio"
    dropped = apply("mutant:missing-by", SOLUTION, ctx)
    assert "by (" not in _rule(dropped, ERRORS, "HighErrorRatio")["expr"]
    interval = apply("group-interval", SOLUTION, ctx)
    assert load_doc(interval[ERRORS])["groups"][0]["interval"] == "10m"


def test_delete_untouched_deletes_a_rule_no_requirement_names():
    out = apply("delete-untouched", SOLUTION, _ctx())
    assert _changed_paths(out) == {HEALTH}
    names = [rule_name(r) for _, r in iter_rules(load_doc(out[HEALTH]))]
    assert names == ["SvcADown", "SvcCDown"]


def test_a_mutation_that_changes_nothing_is_not_applicable():
    ctx = _ctx()
    once = apply("never-fire", SOLUTION, ctx)
    with pytest.raises(NotApplicable, match="change nothing"):
        apply("never-fire", once, ctx)


def test_mutate_picks_only_applicable_mutants_deterministically():
    ctx = _ctx()
    for seed in range(1, 8):
        files, names = mutate(SOLUTION, ctx, seed)
        assert names and not {"missing-continue", "yaml-indent-slip"} & set(names)
        assert mutate(SOLUTION, ctx, seed) == (files, names)


def test_partial_does_half_the_repairs_with_one_mistake_and_leaves_the_rest_pristine():
    ctx = _ctx()
    done, undone = split(ctx)  # the primary, then others until half their weight (4.5 of 9)
    assert [[r["id"] for r in u] for u in done] == [["P1"], ["P2"], ["P3"]]
    assert [[r["id"] for r in u] for u in undone] == [["P4"]]
    files = partial_files(ctx, 0)
    assert set(files) == {ERRORS, HEALTH, LATENCY}
    assert "for" not in _rule(files, ERRORS, "HighErrorRatio")  # the mistake (seed even)
    assert _rule(files, LATENCY, "SvcALatencyBurn") == _rule(SOLUTION, LATENCY, "SvcALatencyBurn")
    assert _rule(files, HEALTH, "SvcADown") == _rule(SOLUTION, HEALTH, "SvcADown")
    assert _rule(files, HEALTH, "SvcCDown") == _rule(PRISTINE, HEALTH, "SvcCDown")
    first_two = partial_files(_ctx("P2"), 0)  # P2 primary: P1 and P3 done, P4 not
    assert "for" not in _rule(first_two, HEALTH, "SvcADown")
    odd = partial_files(ctx, 1)
    assert _rule(odd, ERRORS, "HighErrorRatio")["labels"]["severity"] != "ticket"


def test_write_order_puts_new_records_first_and_alertmanager_last():
    ctx = _ctx()
    files = {AM: "route: {}\n", HEALTH: SOLUTION[HEALTH], LATENCY: SOLUTION[LATENCY], ERRORS: SOLUTION[ERRORS]}
    assert list(write_order(files, ctx)) == [ERRORS, HEALTH, LATENCY, AM]
    scratch = "rules/a-scratch.yml"  # a rule file the oracle does not write: after its rule files
    assert list(write_order({**files, scratch: SOLUTION[HEALTH]}, ctx)) == [ERRORS, HEALTH, LATENCY, scratch, AM]
    records = "rules/z-records.yml"
    with_records = {**files, records: _rules(("new", [{"record": "extra:ratio", "expr": "vector(1)"}]))}
    assert next(iter(write_order(with_records, ctx))) == records


def test_gate_marks_cases_that_do_not_apply_as_na():
    ctx = _ctx()
    assert why_not("oracle", ctx) is None and why_not("partial", ctx) is None
    assert why_not("catch-all-route", ctx)
    rows = [GateRow("t", "oracle", "reward 1.0000", "reward = 1", True),
            GateRow("t", "adversary:catch-all-route", "n/a: no route", "target s <= 0.05", None),
            GateRow("t", "partial", "reward 0.5000", "0.1 <= reward <= 0.4", False)]
    table = format_table(rows).splitlines()
    assert table[0].endswith("  ok") and table[1].endswith("  n/a") and table[2].endswith("  FAIL")
    assert summary(rows, 1.25) == "gate: 1 of 2 hold, 1 fail, 1 n/a on 1 task in 1.2 s"


def test_demo_shows_three_adversaries_that_apply(tmp_path):
    for root, files in (("environment/monitoring", PRISTINE), ("solution/monitoring", SOLUTION),
                        ("tests", {"spec.json": json.dumps(SPEC)})):
        for rel, text in files.items():
            (tmp_path / root / rel).parent.mkdir(parents=True, exist_ok=True)
            (tmp_path / root / rel).write_text(text)
    assert demo_policies(tmp_path) == ["oracle", "nop", "partial", "adversary:always-fire",
                                       "adversary:per-pod", "adversary:rename"]
