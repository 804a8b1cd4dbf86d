"""The check inspector: scenario plot for alert checks and the reproduce panel (real promtool)."""

from __future__ import annotations

import json
import re
import subprocess

import pytest
import yaml

from tests.conftest import CHROMIUM  # noqa: F401  (the browser fixture launches it)

pytestmark = pytest.mark.browser


def task_file(site, task_id: str = "fixture-checkout") -> dict:
    return json.loads((site.out_dir / "data" / "tasks" / f"{task_id}.json").read_bytes())


def inputs_file(site, task_id: str = "fixture-checkout") -> dict:
    return json.loads((site.out_dir / "data" / "task-inputs" / f"{task_id}.json").read_bytes())


def inputs_in(page) -> None:
    """Wait until the inspector is not waiting for the task's scenario data file any more."""
    page.wait_for_function("() => document.querySelector('#check-inspector').dataset.inputs !== 'loading'")


def open_run(page, site, query: str) -> None:
    page.goto(f"{site.url}run.html?{query}")
    page.wait_for_selector("body[data-ready='1']")
    inputs_in(page)


def marks(page) -> dict[str, tuple[str, str, str]]:
    return {
        m.get_attribute("data-check-id"): (
            m.get_attribute("data-min"), m.get_attribute("data-state"), m.get_attribute("data-selected")
        )
        for m in page.locator("#scenario-svg g.eval-mark").all()
    }


def test_alert_check_shows_scenario_plot_with_threshold_window_and_eval_marks(page, served_site):
    open_run(page, served_site, "run=fixture-oracle-s1&step=2&check=A1-fire-1")
    assert page.locator("#check-inspector").is_visible()
    assert page.locator("#inspector-scenario").inner_text() == "outage"
    assert page.locator("#threshold-line").get_attribute("data-threshold") == "0.05"
    phase = page.locator("#scenario-svg rect.phase")
    assert phase.count() == 1
    assert [phase.get_attribute(n) for n in ("data-service", "data-start", "data-end", "data-own")] == [
        "checkout", "60", "100", "1"
    ]
    assert marks(page) == {"A1-fire-1": ("73", "fail", "1"), "A1-label-1": ("80", "na", "0")}
    assert sorted(p.get_attribute("data-series") for p in page.locator("#scenario-svg path.series-line").all()) == ["ratio", "w5"]
    page.keyboard.press("ArrowRight")
    page.wait_for_function("() => document.querySelector('#step-index').textContent === '3'")
    assert marks(page) == {"A1-fire-1": ("73", "pass", "1"), "A1-label-1": ("80", "pass", "0")}
    assert page.locator("#inspector-state").get_attribute("data-state") == "pass"
    plot = inputs_file(served_site)["scenario_plots"]["outage|checkout"]
    assert plot["series"]["ratio"][59:62] == [0.01, 0.01, 1.0]
    assert page.page_errors == []


def test_promtool_fragment_is_built_from_probe_and_input_series(page, served_site):
    open_run(page, served_site, "run=fixture-oracle-s1&step=5&check=A1-fire-1")
    assert page.locator("#reproduce-kind").inner_text() == "promtool"
    fragment = yaml.safe_load(page.locator("#reproduce-text").text_content())
    probe = task_file(served_site)["checks"][0]["probe"]
    assert fragment["rule_files"] == ["rules/*.yml"]
    test = fragment["tests"][0]
    assert test["interval"] == "1m"
    assert test["input_series"] == inputs_file(served_site)["input_series"]["outage"]
    assert test["promql_expr_test"] == [
        {"expr": probe["expr"], "eval_time": "73m", "exp_samples": probe["exp_samples"]}
    ]


def test_reproduce_fragment_runs_in_real_promtool_against_the_oracle_rules(page, served_site, tmp_path):
    run = json.loads((served_site.out_dir / "data" / "runs" / "fixture-oracle-s1.json").read_bytes())
    rules = run["steps"][3]["tool"]["arguments"]["content"]
    (tmp_path / "rules").mkdir()
    (tmp_path / "rules" / "a.yml").write_text(rules)
    for check_id in ("A1-fire-1", "A1-silent-1"):
        open_run(page, served_site, f"run=fixture-oracle-s1&step=5&check={check_id}")
        (tmp_path / "reproduce.yml").write_text(page.locator("#reproduce-text").text_content())
        result = subprocess.run(["promtool", "test", "rules", "reproduce.yml"], cwd=tmp_path,
                                capture_output=True, text=True, timeout=60, check=False)
        assert result.returncode == 0, (check_id, result.stdout, result.stderr)
    (tmp_path / "rules" / "a.yml").write_text(rules.replace("> 0.05", "> 5"))
    open_run(page, served_site, "run=fixture-oracle-s1&step=5&check=A1-fire-1")
    (tmp_path / "reproduce.yml").write_text(page.locator("#reproduce-text").text_content())
    result = subprocess.run(["promtool", "test", "rules", "reproduce.yml"], cwd=tmp_path,
                            capture_output=True, text=True, timeout=60, check=False)
    assert result.returncode == 1 and "FAILED" in result.stdout + result.stderr


def test_route_check_gives_the_amtool_command_and_copy_button_copies_it(browser, served_site):
    context = browser.new_context(permissions=["clipboard-read", "clipboard-write"])
    try:
        page = context.new_page()
        open_run(page, served_site, "run=fixture-oracle-s1&step=5&check=R1-route-1")
        assert page.locator("#inspector-plot-box").is_hidden()
        assert page.locator("#reproduce-kind").inner_text() == "amtool"
        text = page.locator("#reproduce-text").text_content()
        assert ("amtool config routes test --config.file=alertmanager/alertmanager.yml "
                "service=checkout severity=page") in text
        page.click("#reproduce-copy")
        page.locator("#reproduce-copied").filter(has_text="Copied.").wait_for()
        assert page.evaluate("() => navigator.clipboard.readText()") == text
    finally:
        context.close()


def test_inspector_follows_the_selected_check_and_closes(page, served_site):
    open_run(page, served_site, "run=fixture-partial-s1&step=2")
    assert page.locator("#check-inspector").is_hidden()
    page.click('#checks-panel li[data-check-id="pres-1"]')
    assert page.locator("#inspector-check-id").inner_text() == "pres-1"
    assert page.locator("#reproduce-kind").inner_text() == "none"
    assert "storage-oncall missing" in page.locator("#inspector-state").inner_text()
    page.click("#inspector-close")
    assert page.locator("#check-inspector").is_hidden()
    page.wait_for_function("() => !location.search.includes('check=')")


INPUTS = re.compile(r"/data/task-inputs/[^/]+\.json$")


def test_scenario_data_is_fetched_when_a_check_needing_it_opens_and_only_once(page, served_site):
    requested: list[str] = []
    page.on("request", lambda request: requested.append(request.url) if INPUTS.search(request.url) else None)
    held: list = []
    page.route(INPUTS, lambda route: held.append(route))
    open_run(page, served_site, "run=fixture-oracle-s1&step=2")
    page.click('#checks-panel li[data-check-id="R1-route-1"]')
    assert page.locator("#check-inspector").get_attribute("data-inputs") == "none"
    assert page.locator("#reproduce-kind").inner_text() == "amtool"
    assert requested == [], "neither the page nor a route check loads the scenario data"

    page.click('#checks-panel li[data-check-id="A1-fire-1"]')
    for _ in range(100):
        if held:
            break
        page.wait_for_timeout(50)
    assert [route.request.url for route in held] == [f"{served_site.url}data/task-inputs/fixture-checkout.json"]
    assert page.locator("#check-inspector").get_attribute("data-inputs") == "loading"
    status = page.locator("#inspector-inputs-status")
    assert status.is_visible() and "Loading" in status.inner_text()
    assert page.locator("#reproduce-copy").is_disabled()
    assert page.locator("#scenario-svg").count() == 0

    held[0].continue_()
    inputs_in(page)
    assert page.locator("#check-inspector").get_attribute("data-inputs") == "loaded"
    assert status.is_hidden() and not page.locator("#reproduce-copy").is_disabled()
    assert page.locator("#inspector-scenario").inner_text() == "outage"
    assert marks(page) == {"A1-fire-1": ("73", "fail", "1"), "A1-label-1": ("80", "na", "0")}
    test = yaml.safe_load(page.locator("#reproduce-text").text_content())["tests"][0]
    assert test["input_series"] == inputs_file(served_site)["input_series"]["outage"]

    page.click('#checks-panel li[data-check-id="A1-silent-1"]')
    assert page.locator("#check-inspector").get_attribute("data-inputs") == "loaded"
    assert page.locator("#inspector-check-id").inner_text() == "A1-silent-1"
    assert page.locator("#reproduce-kind").inner_text() == "promtool"
    assert len(requested) == 1, "the scenario data is fetched once a page"
    assert page.page_errors == []


def test_scenario_data_that_cannot_be_loaded_is_said_in_the_inspector(page, served_site):
    page.route(INPUTS, lambda route: route.fulfill(status=500, body="no"))
    open_run(page, served_site, "run=fixture-oracle-s1&step=2&check=A1-fire-1")
    assert page.locator("#check-inspector").get_attribute("data-inputs") == "error"
    status = page.locator("#inspector-inputs-status")
    assert "could not be loaded" in status.inner_text() and "HTTP 500" in status.inner_text()
    assert page.locator("#inspector-plot-box").is_hidden() and page.locator("#reproduce-copy").is_disabled()
    assert page.locator("#run-error").is_hidden() and page.locator("#run-view").is_visible()
    assert page.page_errors == []

    page.unroute(INPUTS)
    page.click('#checks-panel li[data-check-id="A1-silent-1"]')
    inputs_in(page)
    assert page.locator("#check-inspector").get_attribute("data-inputs") == "loaded", "a failed load is tried again"
    assert page.locator("#reproduce-kind").inner_text() == "promtool"
    assert status.is_hidden()
