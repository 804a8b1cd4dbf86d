"""Where pages go and when: hand-written wrong Alertmanager configs, each the oracle's with one
fault of the kind agents make (a receiver copied from a sibling team, a team moved to the new
on-call platform still posting to the old pager, a retired receiver kept, a page held for
hours by a route's own or inherited timing), graded by the real amtool.

Each wrong config must fail a destination, removal or timing check of the requirement it
targets (expected vs got in the detail) and leave every other requirement and preservation
as the oracle's grade has them. Right variants (timings spelt differently or inherited,
reordered receivers and routes, ``match`` for ``matchers``, ``send_resolved`` left to its
default) grade exactly as the oracle does.
"""

from __future__ import annotations

import copy
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest
import yaml

from contract.files import read_json
from contract.grade import GradeResult
from contract.paths import TASKS_DIR, task_dirs
from grader.grade import grade_result

TASKS = {t.name[:6]: t for t in task_dirs(TASKS_DIR)}
AM = Path("alertmanager") / "alertmanager.yml"


def _receiver(doc: dict, name: str) -> dict:
    return next(r for r in doc["receivers"] if r["name"] == name)


def _route(doc: dict, matcher: str) -> dict:
    """The top-level route whose matchers hold ``matcher`` (``team="search"``)."""
    return next(r for r in doc["route"]["routes"] if matcher in (r.get("matchers") or []))


def _url(doc: dict, name: str, url: str) -> None:
    _receiver(doc, name)["webhook_configs"][0]["url"] = url


PAGER = "http://pager.example.internal/v1/teams/"
ONCALL = "http://oncall.example.internal/v1/teams/"


def _copy_sibling(doc: dict, name: str, sibling: str) -> None:
    """The new receiver written by copying a sibling team's block, only the name changed."""
    doc["receivers"] = [{**copy.deepcopy(_receiver(doc, sibling)), "name": name}
                        if r["name"] == name else r for r in doc["receivers"]]


def _keep_old(doc: dict, team: str) -> None:
    doc["receivers"].append({"name": f"{team}-pager", "webhook_configs": [
        {"url": PAGER + team, "send_resolved": True}]})


def _set(route: dict, **values) -> None:
    route.update(values)


# (id, task, edit, the requirements it targets, what the failing check's detail says)
WRONG: list[tuple[str, str, Callable[[dict], None], set[str], str]] = [
    ("sibling-url", "af-025", lambda d: _url(d, "core-services-pager", PAGER + "growth"),
     {"R1"}, "teams/growth"),
    ("oncall-to-old-pager", "af-025", lambda d: _url(d, "payments-oncall", PAGER + "payments"),
     {"R2"}, "oncall.example.internal"),
    ("kind-changed", "af-025", lambda d: _receiver(d, "core-services-pager").update(
        {"slack_configs": [{"api_url": PAGER + "core-services", "channel": "#pages"}]})
     or _receiver(d, "core-services-pager").pop("webhook_configs"), {"R1"}, "unexpected slack"),
    ("second-integration", "af-025", lambda d: _receiver(d, "payments-oncall")["webhook_configs"].append(
        {"url": PAGER + "payments"}), {"R2"}, "unexpected webhook"),
    ("send-resolved-off", "af-025", lambda d: _receiver(d, "core-services-pager")[
        "webhook_configs"][0].update(send_resolved=False), {"R1"}, "send_resolved=false"),
    ("oncall-other-team-path", "af-025", lambda d: _url(d, "payments-oncall", ONCALL + "search"),
     {"R2"}, "teams/search"),
    ("old-receiver-kept", "af-025", lambda d: _keep_old(d, "payments"), {"R2"}, "still defined"),
    ("new-route-group-wait", "af-025", lambda d: _set(_route(d, 'team="core-services"'),
                                                      group_wait="2h"), {"R1"}, "group_wait 2h"),
    ("route-group-interval", "af-025", lambda d: _set(_route(d, 'team="payments"'),
                                                      group_interval="30m"), {"R2"}, "group_interval 30m"),
    ("service-route-repeat-long", "af-025", lambda d: _set(_route(d, 'service="checkout"'),
                                                           repeat_interval="24h"), {"R3"}, "is over 4h"),
    ("service-route-repeat-short", "af-025", lambda d: _set(_route(d, 'service="checkout"'),
                                                            repeat_interval="10m"), {"R3"}, "is under 1h"),
    ("new-route-group-by-team", "af-025", lambda d: _set(_route(d, 'team="core-services"'),
                                                         group_by=["team"]), {"R1"}, "lacks"),
    ("root-group-wait", "af-025", lambda d: _set(d["route"], group_wait="3h"),
     {"R1", "R2", "R3"}, "inherited from the root route"),
    ("root-repeat-interval", "af-025", lambda d: _set(d["route"], repeat_interval="12h"),
     {"R1", "R2", "R3"}, "repeat_interval 12h"),
    ("sibling-block", "af-029", lambda d: _copy_sibling(d, "foundations-pager", "messaging-pager"),
     {"R1"}, "teams/messaging"),
    ("oncall-to-old-pager", "af-029", lambda d: _url(d, "search-oncall", PAGER + "search"),
     {"R2"}, "oncall.example.internal"),
    ("old-receiver-kept", "af-029", lambda d: _keep_old(d, "search"), {"R2"}, "still defined"),
    ("old-receiver-dead-route", "af-029", lambda d: (_keep_old(d, "search"), d["route"]["routes"].append(
        {"matchers": ['team="search"', 'severity="ticket"'], "receiver": "search-pager"})),
     {"R2"}, "still names it"),
    ("merged-route-group-wait", "af-029", lambda d: _set(_route(d, 'team="platform"'),
                                                         group_wait="90m"), {"R4"}, "group_wait 1h30m"),
    ("root-group-by-team", "af-029", lambda d: _set(d["route"], group_by=["team"]),
     {"R1", "R2", "R3", "R4"}, "lacks"),
    ("new-route-group-wait", "af-001", lambda d: _set(_route(d, 'team="messaging"'), group_wait="1h"),
     {"R1"}, "group_wait 1h"),
    ("root-group-interval", "af-001", lambda d: _set(d["route"], group_interval="1h"),
     {"R1"}, "group_interval 1h"),
    ("fixed-route-group-wait", "af-013", lambda d: _set(_route(d, 'team="messaging"'),
                                                        group_wait="2h"), {"R1"}, "group_wait 2h"),
    ("root-repeat-short", "af-013", lambda d: _set(d["route"], repeat_interval="30m"),
     {"R1"}, "is under 1h"),
    ("route-repeat-long", "af-019", lambda d: _set(_route(d, 'team="messaging"'),
                                                   repeat_interval="8h"), {"R1"}, "repeat_interval 8h"),
    ("root-group-wait", "af-019", lambda d: _set(d["route"], group_wait="5m"), {"R1"}, "group_wait 5m"),
    ("root-group-wait", "af-007", lambda d: _set(d["route"], group_wait="2h"), set(), "group_wait 2h"),
    ("root-group-by-all-in-one", "af-007", lambda d: _set(d["route"], group_by=[]), set(), "lacks"),
    ("root-repeat-short", "af-007", lambda d: _set(d["route"], repeat_interval="2m"), set(), "under 1h"),
    ("sibling-url", "af-027", lambda d: _url(d, "core-services-pager", PAGER + "growth"),
     {"R1"}, "teams/growth"),
    ("old-receiver-kept", "af-027", lambda d: _keep_old(d, "platform"), {"R2"}, "still defined"),
    ("route-group-wait", "af-027", lambda d: _set(_route(d, 'team="platform"'), group_wait="10m"),
     {"R2"}, "group_wait 10m"),
]


def _no_send_resolved(doc: dict) -> None:
    for name in ("core-services-pager", "payments-oncall"):
        _receiver(doc, name)["webhook_configs"][0].pop("send_resolved")


def _match_form(doc: dict) -> None:
    route = _route(doc, 'team="core-services"')
    route.pop("matchers")
    route["match"] = {"team": "core-services"}


def _reordered(doc: dict) -> None:
    doc["receivers"].reverse()
    routes = doc["route"]["routes"]
    new = routes.pop(next(i for i, r in enumerate(routes) if 'team="core-services"' in (r.get("matchers") or [])))
    routes.insert(2, new)  # after the audit route and the service route, before the team routes


RIGHT: list[tuple[str, str, Callable[[dict], None]]] = [
    ("send-resolved-default", "af-025", _no_send_resolved),
    ("timings-spelt-otherwise", "af-025", lambda d: _set(d["route"], group_wait="0h0m30s",
                                                         group_interval="300s",
                                                         repeat_interval="240m")),
    ("timing-set-where-inherited", "af-025", lambda d: _set(_route(d, 'team="core-services"'),
                                                            group_wait="30s", group_interval="5m",
                                                            repeat_interval="4h")),
    ("group-by-all", "af-025", lambda d: _set(_route(d, 'team="core-services"'), group_by=["..."])),
    ("reordered", "af-025", _reordered),
    ("match-for-matchers", "af-025", _match_form),
    ("group-by-more", "af-029", lambda d: _set(_route(d, 'team="foundations"'),
                                               group_by=["alertname", "service", "team"])),
    ("shorter-waits", "af-001", lambda d: _set(d["route"], group_wait="10s", group_interval="1m",
                                               repeat_interval="1h")),
]


def _oracle(task: Path, dest: Path) -> Path:
    shutil.copytree(task / "environment" / "monitoring", dest)
    shutil.copytree(task / "solution" / "monitoring", dest, dirs_exist_ok=True)
    return dest


def _edited(task: Path, dest: Path, edit: Callable[[dict], None]) -> Path:
    ws = _oracle(task, dest)
    doc = yaml.safe_load((ws / AM).read_text(encoding="utf-8"))
    edit(doc)
    (ws / AM).write_text(yaml.safe_dump(doc, sort_keys=False), encoding="utf-8")
    return ws


_ORACLE_GRADES: dict[str, GradeResult] = {}


def _oracle_grade(key: str, tmp_path: Path) -> GradeResult:
    if key not in _ORACLE_GRADES:
        _ORACLE_GRADES[key] = grade_result(TASKS[key], _oracle(TASKS[key], tmp_path / "oracle"))
    return _ORACLE_GRADES[key]


def _by_req(result: GradeResult) -> dict[str, float]:
    return {r.id: r.s for r in result.requirements}


@pytest.mark.parametrize("case,key,edit,targets,says", WRONG,
                         ids=[f"{key}-{case}" for case, key, *_ in WRONG])
def test_a_wrong_destination_or_timing_fails_its_check(tmp_path, case, key, edit, targets, says):
    oracle = _oracle_grade(key, tmp_path)
    assert oracle.keys["reward"] == 1.0
    result = grade_result(TASKS[key], _edited(TASKS[key], tmp_path / "ws", edit))
    failing = [c for c in result.checks if c.passed is False]
    new_kinds = [c for c in failing if c.id.split(".")[-1].startswith(("timing", "receiver",
                                                                          "removed-"))
                 or c.id.startswith("P.timing.")]
    assert new_kinds, [c.id for c in failing]
    assert any(says in c.detail for c in new_kinds), [c.detail for c in new_kinds]
    assert all(c.cause and c.cause.kind != "none" for c in new_kinds)
    spec = read_json(TASKS[key] / "tests" / "spec.json")
    route_reqs = {r["id"] for r in spec["requirements"] if r["kind"] == "route"}
    got, want = _by_req(result), _by_req(oracle)
    for rid in got:
        if rid in targets:
            assert got[rid] < 1.0, (rid, got[rid])
        else:
            assert got[rid] == want[rid], (rid, got[rid], want[rid])
    assert {c.req for c in new_kinds} == (targets or {None})
    assert targets <= route_reqs
    if targets:
        assert result.keys["preservation"] == oracle.keys["preservation"]
    else:  # no route requirement: the timings are preserved, and that is what fails
        assert result.keys["preservation"] < oracle.keys["preservation"]
    assert result.keys["solved"] == 0


@pytest.mark.parametrize("case,key,edit", RIGHT, ids=[f"{key}-{case}" for case, key, _ in RIGHT])
def test_a_right_variant_grades_as_the_oracle(tmp_path, case, key, edit):
    oracle = _oracle_grade(key, tmp_path)
    result = grade_result(TASKS[key], _edited(TASKS[key], tmp_path / "ws", edit))
    assert [c.id for c in result.checks if c.passed is False] == []
    assert _by_req(result) == _by_req(oracle)
    assert result.keys["reward"] == oracle.keys["reward"] == 1.0


DELIVERED_WRONG = {"sibling-url", "oncall-to-old-pager", "oncall-other-team-path", "kind-changed",
                   "second-integration", "sibling-block"}
"""The wrong configs whose fault changes where a firing page arrives (send_resolved and a kept
but unused receiver do not)."""


IN_SUITE = {("af-025", "sibling-url"), ("af-025", "kind-changed"), ("af-029", "sibling-block"),
            ("af-025", "reordered")}
"""The end-to-end cases the README's test command runs (each waits on the real server's
notifications); the others run with the sweeps (`bash scripts/test-sweeps.sh`)."""


def _e2e(cases: list[tuple], ids: list[str]) -> list:
    return [pytest.param(*case, id=i, marks=() if (case[1], case[0]) in IN_SUITE else pytest.mark.sweep)
            for case, i in zip(cases, ids, strict=True)]


_ORACLE_DELIVERIES: dict[str, list] = {}


def _oracle_delivery(key: str, tmp_path: Path, pages: list) -> list:
    from recorder.delivery import deliver

    if key not in _ORACLE_DELIVERIES:
        _ORACLE_DELIVERIES[key] = deliver(_oracle(TASKS[key], tmp_path / "oracle") / AM, pages)
    return _ORACLE_DELIVERIES[key]


@pytest.mark.parametrize("case,key,edit,targets,says",
                         _e2e([w for w in WRONG if w[0] in DELIVERED_WRONG],
                              [f"{w[1]}-{w[0]}" for w in WRONG if w[0] in DELIVERED_WRONG]))
def test_the_real_alertmanager_delivers_a_wrong_destination_where_the_check_says(
        tmp_path, case, key, edit, targets, says):
    """End to end (recorder.delivery): every receiver URL rewritten to a sink on 127.0.0.1,
    the real server sends each page; a page of the targeted requirement lands elsewhere than
    the destination check expects, and only there; the oracle's pages all land as expected."""
    from recorder.delivery import deliver, task_pages

    pages = task_pages(TASKS[key])
    oracle = _oracle_delivery(key, tmp_path, pages)
    assert oracle and all(r.agrees for r in oracle), [r for r in oracle if not r.agrees]
    wrong = deliver(_edited(TASKS[key], tmp_path / "ws", edit) / AM, pages)
    off = [r for r in wrong if not r.agrees]
    assert off, wrong
    receivers = {c["probe"].get("name") for c in read_json(TASKS[key] / "tests" / "checks.json")["checks"]
                 if c["req"] in targets and c["probe"]["type"] == "receiver"}
    spec = read_json(TASKS[key] / "tests" / "spec.json")
    wanted = {entry["url"] for r in spec["requirements"] if r.get("receiver") in receivers
              for entry in (r.get("destination") or {}).get("webhook_configs", [])}
    for result in off:  # the spec's URL missed, or something beyond it reached
        assert (set(result.expected) - set(result.reached)) or (set(result.reached) - set(result.expected))
        assert any(url in " ".join(result.expected) for url in wanted), (result, wanted)


@pytest.mark.parametrize("case,key,edit", _e2e(RIGHT, [f"{key}-{case}" for case, key, _ in RIGHT]))
def test_the_real_alertmanager_delivers_a_right_variant_as_expected(tmp_path, case, key, edit):
    from recorder.delivery import deliver, task_pages

    results = deliver(_edited(TASKS[key], tmp_path / "ws", edit) / AM, task_pages(TASKS[key]))
    assert results and all(r.agrees for r in results), [r for r in results if not r.agrees]


def test_config_findings_are_shown_with_the_grade_and_never_scored(tmp_path):
    """Hygiene (grader/hygiene.py): a dead route naming a kept receiver and contradictory
    timings on an otherwise right config: reported under ``findings``, reward still 1."""
    from grader.hygiene import hygiene_findings

    def dead_route(doc):
        _keep_old(doc, "search")
        doc["route"]["routes"].append({"matchers": ['team="search"', 'severity="ticket"'],
                                       "receiver": "search-pager"})
        _receiver(doc, "growth-pager")  # untouched
        _set(_route(doc, 'team="foundations"'), group_wait="1m", group_interval="30s")

    oracle = _oracle_grade("af-029", tmp_path)
    assert oracle.findings is None
    result = grade_result(TASKS["af-029"], _edited(TASKS["af-029"], tmp_path / "ws", dead_route))
    kinds = {f.kind: f for f in result.findings}
    assert set(kinds) == {"unreachable-route", "timing-contradiction"}
    assert "route.routes[6]" in kinds["unreachable-route"].text  # the team="search" route
    assert "group_wait 1m is longer than group_interval 30s" in kinds["timing-contradiction"].text
    # the retired receiver kept is a failing check (the request says it goes away), not a finding
    assert [c.id for c in result.checks if c.passed is False] == ["R2.route.removed-search-pager"]
    unused = hygiene_findings({"route": {"receiver": "a"}, "receivers": [{"name": "a"}, {"name": "b"}]})
    assert unused == [{"kind": "unused-receiver", "where": "receivers[1]",
                       "text": "receiver b is named by no route, so it pages nobody"}]


def test_the_grade_command_prints_the_findings(tmp_path):
    import subprocess
    import sys

    out = subprocess.run([sys.executable, "-m", "alertforge.cli", "grade", str(TASKS["af-001"])],
                         capture_output=True, text=True, check=False)
    assert out.returncode == 0, out.stderr
    assert "config findings (not scored): 1" in out.stdout
    assert "unused-receiver: receiver messaging-pager is named by no route" in out.stdout


def test_delivery_sends_nothing_past_the_sink_whatever_the_config_holds():
    """A stranger's config run end to end: proxies, other integration kinds, URLs read from
    files, templates and the global block are dropped, so every URL left is the sink's."""
    import json

    from recorder.delivery import rewrite

    hostile = {
        "global": {"http_config": {"proxy_url": "http://proxy.example"}, "smtp_smarthost": "x:25"},
        "templates": ["/etc/*"],
        "route": {"receiver": "a", "routes": [{"receiver": "b", "group_wait": "1h"}]},
        "receivers": [
            {"name": "a", "webhook_configs": [{"url": "http://hook.example/1",
                                               "http_config": {"proxy_url": "http://proxy.example"}},
                                              {"url_file": "/etc/hostname"}],
             "pagerduty_configs": [{"routing_key": "k", "url": "http://pd.example"}],
             "email_configs": [{"to": "a@example.org"}]},
            {"name": "b", "slack_configs": [{"api_url_file": "/etc/hostname"},
                                            {"api_url": "http://slack.example/x", "channel": "#a"}]}]}
    doc, paths = rewrite(hostile, "http://127.0.0.1:9")
    text = json.dumps(doc)
    assert "example" not in text and "/etc/" not in text and "global" not in doc
    assert sorted(paths.values()) == ["slack http://slack.example/x", "webhook http://hook.example/1"]
    assert doc["route"]["routes"][0]["group_wait"] == "200ms"
