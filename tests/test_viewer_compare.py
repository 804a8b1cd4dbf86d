"""The compare view: two runs of one task side by side, in Debian Chromium."""

from __future__ import annotations

import json

import pytest

pytestmark = pytest.mark.browser


def open_compare(page, site, query: str) -> None:
    page.goto(f"{site.url}compare.html?{query}")
    page.wait_for_selector("body[data-ready='1']")


def run_file(site, run_id: str) -> dict:
    return json.loads((site.out_dir / "data" / "runs" / f"{run_id}.json").read_bytes())


def test_oracle_and_partial_diverge_at_step_one(page, served_site):
    open_compare(page, served_site, "a=fixture-oracle-s1&b=fixture-partial-s1")
    divergence = page.locator("#divergence")
    assert divergence.get_attribute("data-step") == "1"
    assert divergence.get_attribute("data-what") == "tool call,check states,reward"
    assert divergence.locator("a.diverge-a").get_attribute("href") == "run.html?run=fixture-oracle-s1&step=1"
    assert divergence.locator("a.diverge-b").get_attribute("href") == "run.html?run=fixture-partial-s1&step=1"
    assert "list_files" in divergence.inner_text() and "write_file" in divergence.inner_text()
    assert page.page_errors == []


def test_both_reward_curves_are_drawn_from_the_run_files(page, served_site):
    open_compare(page, served_site, "a=fixture-oracle-s1&b=fixture-partial-s1")
    for curve, run_id in (("#curve-a", "fixture-oracle-s1"), ("#curve-b", "fixture-partial-s1")):
        totals = [float(v) for v in page.locator(curve).get_attribute("data-totals").split(",")]
        assert totals == [step["total"] for step in run_file(served_site, run_id)["steps"]]
    assert page.locator("#diverge-line").count() == 1


def test_checks_whose_final_state_differs_are_listed_with_details(page, served_site):
    open_compare(page, served_site, "a=fixture-oracle-s1&b=fixture-partial-s1")
    rows = page.locator("#compare-checks tr[data-check-id]")
    assert [rows.nth(i).get_attribute("data-check-id") for i in range(rows.count())] == [
        "A1-label-1",
        "pres-1",
    ]
    pres = page.locator('#compare-checks tr[data-check-id="pres-1"]')
    assert (pres.get_attribute("data-a"), pres.get_attribute("data-b")) == ("pass", "fail")
    partial = run_file(served_site, "fixture-partial-s1")
    detail = next(s["failed"]["pres-1"] for s in reversed(partial["steps"]) if "pres-1" in s["failed"])
    assert detail and detail in pres.inner_text()
    link = pres.locator('td[data-side="b"] a.state-pill').get_attribute("href")
    assert link == "run.html?run=fixture-partial-s1&step=4&check=pres-1"
    # issue 15: the failing side also links to the step and hunk that broke it
    blame = pres.locator('td[data-side="b"] a.blame-link').get_attribute("href")
    assert blame == "run.html?run=fixture-partial-s1&step=2&check=pres-1&hunk=0"
    assert page.locator("#compare-checks-count").inner_text() == "2"


def test_per_requirement_scores_side_by_side(page, served_site):
    open_compare(page, served_site, "a=fixture-oracle-s1&b=fixture-partial-s1")
    a1 = page.locator('#compare-requirements tr[data-req="A1"]')
    assert a1.locator('td[data-side="a"]').get_attribute("data-s") == "1"
    assert a1.locator('td[data-side="b"]').get_attribute("data-s") == "0.7"
    assert a1.get_attribute("data-better") == "a"
    assert page.locator('#compare-requirements tr[data-req="R1"]').get_attribute("data-better") == ""


def test_picker_and_swap_change_the_address(page, served_site):
    open_compare(page, served_site, "a=fixture-oracle-s1")
    assert "b=fixture-partial-s1" in page.url, "B defaults to another run of the task"
    page.click("#compare-swap")
    page.wait_for_url("**/compare.html?a=fixture-partial-s1&b=fixture-oracle-s1")
    page.wait_for_selector("body[data-ready='1']")
    assert page.locator("#pick-a").input_value() == "fixture-partial-s1"
    page.select_option("#pick-b", "fixture-partial-s1")
    page.wait_for_url("**/compare.html?a=fixture-partial-s1&b=fixture-partial-s1")
    page.wait_for_selector("body[data-ready='1']")
    assert page.locator("#divergence").get_attribute("data-step") == ""
    assert page.locator("#compare-checks-empty").is_visible()


def test_runs_of_different_tasks_are_refused_with_a_message(page, served_site):
    page.goto(f"{served_site.url}compare.html?a=fixture-oracle-s1&b=fixture-xss")
    error = page.locator("#compare-error")
    error.wait_for(state="visible")
    assert "only runs of one task" in error.inner_text()


def test_run_view_links_to_compare(page, served_site):
    page.goto(f"{served_site.url}run.html?run=fixture-partial-s1")
    page.wait_for_selector("body[data-ready='1']")
    assert page.locator("#compare-link").get_attribute("href") == "compare.html?a=fixture-partial-s1"
