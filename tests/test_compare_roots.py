"""The compare view groups knock-on failures under their root, with the count, as the run view's
checks panel does (site/static/js/lib/roots.js, one grouping for both; issue 32). Fixture runs made
from tests/fixtures/site: a run whose rule file stopped loading (a YAML error: its syntax check
and every check of the alert fail) and an adversary run that deleted the alert; real Chromium."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from conftest import fixture_tasks

from exporter.export import export_site
from exporter.serve import serve_in_background

pytestmark = pytest.mark.browser

FIXTURE_RUNS = Path(__file__).parent / "fixtures" / "site" / "runs"
CATALOG = ["A1-fire-1", "A1-silent-1", "A1-label-1", "R1-route-1", "R1-route-2", "pres-1", "syntax-1"]
YAML_ERROR = "rules/a.yml line 4 does not load: yaml: line 4: mapping values are not allowed in this context"
UNDEFINED = "no loadable rule file defines CheckoutErrors"
REMOVED = "rule CheckoutErrors (from rules/a.yml) is gone from the rules the grader loads"


def cause(kind: str, summary: str) -> dict:
    return {"kind": kind, "summary": summary, "facts": {}}


# what fails at the end of each made-up run, and why
YAML_ERROR_RUN = {
    "syntax-1": cause("syntax-error", YAML_ERROR),
    "A1-fire-1": cause("alert-undefined", UNDEFINED),
    "A1-silent-1": cause("alert-undefined", UNDEFINED),
    "A1-label-1": cause("alert-undefined", UNDEFINED),
    "pres-1": cause("preservation-removed", REMOVED),
    "R1-route-1": cause("route-overmatched", "route.routes[0] {} -> pager matched {alertname=X}"),
}
ADVERSARY_RUN = {
    "A1-fire-1": cause("alert-undefined", UNDEFINED),
    "A1-label-1": cause("alert-undefined", "no loadable rule file defines an alerting rule named CheckoutErrors"),
    "pres-1": cause("preservation-removed", REMOVED),
}


def make_run(runs: Path, name: str, failing: dict) -> None:
    """fixture-partial-s1 as run ``name``, its last graded steps failing ``failing`` (id -> cause)."""
    folder = runs / name
    shutil.copytree(FIXTURE_RUNS / "fixture-partial-s1", folder)
    summary = json.loads((folder / "run.json").read_text())
    summary["run_id"] = name
    (folder / "run.json").write_text(json.dumps(summary))
    trajectory = json.loads((folder / "trajectory.json").read_text())
    for step in trajectory["steps"][2:4]:
        grade = step["extra"]["grade"]
        grade["checks"] = "".join("0" if check in failing else "1" for check in CATALOG)
        grade["failed"] = {check: f"expected it to pass; got: {why['summary']}" for check, why in failing.items()}
        grade["causes"] = failing
    (folder / "trajectory.json").write_text(json.dumps(trajectory))


@pytest.fixture(scope="module")
def roots_site(tmp_path_factory):
    root = tmp_path_factory.mktemp("compare-roots")
    runs = root / "runs"
    runs.mkdir()
    shutil.copytree(FIXTURE_RUNS / "fixture-oracle-s1", runs / "fixture-oracle-s1")
    make_run(runs, "fixture-yaml-error", YAML_ERROR_RUN)
    make_run(runs, "fixture-adversary", ADVERSARY_RUN)
    export_site([runs], root / "site", task_index=fixture_tasks())
    server, url = serve_in_background(root / "site", port=0, host="127.0.0.1")
    yield url
    server.shutdown()
    server.server_close()


def open_compare(page, url: str, a: str, b: str) -> None:
    page.goto(f"{url}compare.html?a={a}&b={b}")
    page.wait_for_selector("body[data-ready='1']")


def groups(page) -> list[tuple[str, str, str, list[str]]]:
    return page.eval_on_selector_all("#compare-checks tbody.root-group", """bodies => bodies.map(body => [
        body.dataset.side, body.dataset.root, body.dataset.count,
        [...body.querySelectorAll('tr[data-check-id]')].map(row => row.dataset.checkId)])""")


def panel_roots(page, url: str, run_id: str) -> dict[str, str]:
    """The run view's roots at the run's last step: {root: button text}."""
    page.goto(f"{url}run.html?run={run_id}&step=4")
    page.wait_for_selector("body[data-ready='1']")
    return dict(page.eval_on_selector_all("#checks-roots button[data-root]",
                                          "buttons => buttons.map(b => [b.dataset.root, b.textContent])"))


def test_a_yaml_error_groups_its_knock_on_failures_under_the_file(page, roots_site):
    open_compare(page, roots_site, "fixture-oracle-s1", "fixture-yaml-error")
    assert groups(page) == [["b", "rules/a.yml does not load", "5",
                             ["A1-fire-1", "A1-silent-1", "A1-label-1", "pres-1", "syntax-1"]]]
    heading = page.locator("#compare-checks tbody.root-group tr.root-row")
    assert "Run B fails" in heading.inner_text() and "rules/a.yml does not load" in heading.inner_text()
    assert "5 checks" in heading.inner_text()
    # folded: the root and its count show, its checks after a click; the failure of its own stays out
    assert page.locator("#compare-checks tbody.root-group tr[data-check-id]:visible").count() == 0
    others = page.locator("#compare-checks tbody.root-others tr[data-check-id]")
    assert [others.nth(i).get_attribute("data-check-id") for i in range(others.count())] == ["R1-route-1"]
    toggle = page.locator("#compare-checks button.root-toggle")
    toggle.click()
    assert toggle.get_attribute("aria-expanded") == "true"
    assert page.locator("#compare-checks tbody.root-group tr[data-check-id]:visible").count() == 5
    assert page.locator("#compare-checks-count").inner_text() == "6"
    # the run view's checks panel finds the same root with the same count
    assert panel_roots(page, roots_site, "fixture-yaml-error") == {
        "rules/a.yml does not load": "rules/a.yml does not load \u00b7 5 checks"}
    assert page.page_errors == []


def test_an_adversary_run_groups_the_checks_of_the_alert_it_deleted(page, roots_site):
    open_compare(page, roots_site, "fixture-adversary", "fixture-oracle-s1")
    assert groups(page) == [["a", "no rule defines CheckoutErrors", "2", ["A1-fire-1", "A1-label-1"]]]
    others = page.locator("#compare-checks tbody.root-others tr[data-check-id]")
    assert [others.nth(i).get_attribute("data-check-id") for i in range(others.count())] == ["pres-1"]
    assert panel_roots(page, roots_site, "fixture-adversary") == {
        "no rule defines CheckoutErrors": "no rule defines CheckoutErrors \u00b7 2 checks"}
    assert page.page_errors == []


def test_checks_failing_on_both_sides_are_not_listed_and_no_group_of_one_is_made(page, roots_site):
    open_compare(page, roots_site, "fixture-yaml-error", "fixture-adversary")
    # A1-fire-1, A1-label-1 and pres-1 fail in both runs: the rows are A1-silent-1, syntax-1 (A's
    # YAML error, grouped) and R1-route-1 (A's own); B fails nothing A passes
    assert groups(page) == [["a", "rules/a.yml does not load", "2", ["A1-silent-1", "syntax-1"]]]
    others = page.locator("#compare-checks tbody.root-others tr[data-check-id]")
    assert [others.nth(i).get_attribute("data-check-id") for i in range(others.count())] == ["R1-route-1"]
    assert page.page_errors == []
