"""The run view reads like a transcript: at 1280x800 the step being shown is in the first
screen (its tool, the first lines of its arguments and output, the first diff hunk's header
and lines, or "no change"), the step strip names each step's tool and marks the steps that
changed a check, and the reward curve and the check matrix sit below the step. Hand-made
fixture runs (tests/fixtures/site), real Chromium."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.browser

VIEWPORT = {"width": 1280, "height": 800}

LINES_IN_VIEW = """(selector) => {
  const block = document.querySelector(selector);
  const box = block.getBoundingClientRect();
  const style = getComputedStyle(block);
  const line = parseFloat(style.lineHeight) || 1.4 * parseFloat(style.fontSize);
  const top = box.top + parseFloat(style.paddingTop);
  return Math.floor((Math.min(box.bottom, innerHeight) - top) / line);
}"""


def _open(page, site, query: str) -> None:
    page.set_viewport_size(VIEWPORT)
    page.goto(f"{site.url}run.html?{query}")
    page.wait_for_selector("body[data-ready='1']")


def _bottom(page, selector: str) -> float:
    box = page.locator(selector).first.bounding_box()
    assert box is not None, selector
    return box["y"] + box["height"]


def test_a_step_with_a_diff_is_whole_in_the_first_screen(page, served_site):
    _open(page, served_site, "run=fixture-oracle-s1&step=3")
    assert _bottom(page, "#step-tool") <= 800
    for block in ("#step-arguments", "#step-output"):
        assert page.evaluate(LINES_IN_VIEW, block) >= 1, block
        assert page.locator(block).bounding_box()["y"] < 800 - 40, block
    assert page.evaluate(LINES_IN_VIEW, "#step-arguments") >= 3
    hunk = page.locator("#step-diff tr.hunk-header, #step-diff .hunk-header").first
    assert hunk.count() == 1 and _bottom(page, "#step-diff tr.hunk-header, #step-diff .hunk-header") <= 800
    rows = page.locator("#step-diff tr.diff-line")
    in_view = sum(1 for i in range(min(rows.count(), 5)) if _bottom(page, f"#step-diff tr.diff-line >> nth={i}") <= 800)
    assert in_view == min(rows.count(), 5)
    # the curve and the matrix are below the step
    assert page.locator("#reward-curve").bounding_box()["y"] > _bottom(page, "#step-detail") - 1
    assert page.locator("#matrix-panel").bounding_box()["y"] > page.locator("#reward-curve").bounding_box()["y"]


def test_a_step_without_a_diff_says_no_change_in_the_first_screen(page, served_site):
    _open(page, served_site, "run=fixture-oracle-s1&step=2")
    note = page.locator("#step-diff .no-change")
    assert note.is_visible() and "changed no file" in note.inner_text()
    assert _bottom(page, "#step-diff .no-change") <= 800
    assert page.evaluate(LINES_IN_VIEW, "#step-output") >= 3


def test_the_step_strip_names_tools_and_marks_steps_that_changed_a_check(page, served_site):
    import json

    _open(page, served_site, "run=fixture-oracle-s1&step=0")
    run = json.loads((served_site.out_dir / "data" / "runs" / "fixture-oracle-s1.json").read_bytes())
    buttons = page.locator("#timeline button.step-dot")
    assert buttons.count() == len(run["steps"])
    for step in run["steps"]:
        button = page.locator(f'#timeline button[data-step="{step["n"]}"]')
        label = button.locator(".step-tool-label").inner_text()
        assert label == (step["tool"]["name"] if step["tool"] else "start"), step["n"]
        assert ("flipped" in (button.get_attribute("class") or "")) is bool(step["changed"]), step["n"]
        if step["changed"]:
            assert f"{len(step['changed'])} check" in button.get_attribute("aria-label")
    assert page.page_errors == []


def test_the_checks_panel_filters_to_failing_changed_and_one_requirement(page, served_site):
    import json

    run = json.loads((served_site.out_dir / "data" / "runs" / "fixture-partial-s1.json").read_bytes())
    n = next(s["n"] for s in run["steps"] if s["changed"] and "0" in s["checks"])
    step = run["steps"][n]
    _open(page, served_site, f"run=fixture-partial-s1&step={n}")
    visible = lambda: page.eval_on_selector_all(
        "#checks-groups li.check", "els => els.filter(e => e.offsetParent !== null).map(e => e.dataset.checkId)")
    everything = visible()
    page.click('#checks-filter button[data-show="fail"]')
    failing = visible()
    assert failing and len(failing) == step["checks"].count("0") == int(page.inner_text("#checks-fail-count"))
    assert all(page.get_attribute(f'li.check[data-check-id="{c}"]', "data-state") == "fail" for c in failing)
    page.click('#checks-filter button[data-show="changed"]')
    assert len(visible()) == len(step["changed"]) == int(page.inner_text("#checks-changed-count"))
    flips = page.inner_text("#checks-flips")
    assert flips.startswith("At this step") and ("turned red" in flips or "turned green" in flips)
    page.click('#checks-filter button[data-show="all"]')
    assert visible() == everything
    requirement = page.eval_on_selector("#checks-req option:nth-child(2)", "o => o.value")
    page.select_option("#checks-req", requirement)
    shown = visible()
    assert shown and len(shown) < len(everything)
    assert all(page.eval_on_selector(f'li.check[data-check-id="{c}"]', "e => e.closest('section').dataset.req")
               == requirement for c in shown)
    assert page.page_errors == []


def _run_with_causes(tmp_path, causes: dict) -> tuple:
    """The fixture partial run with ``causes`` on its last two graded steps, exported and served."""
    import json
    import shutil
    from pathlib import Path

    from conftest import fixture_tasks

    from exporter.export import export_site
    from exporter.serve import serve_in_background

    fixture = Path(__file__).parent / "fixtures" / "site" / "runs" / "fixture-partial-s1"
    run = tmp_path / "runs" / fixture.name
    shutil.copytree(fixture, run)
    trajectory = json.loads((run / "trajectory.json").read_text())
    for step in trajectory["steps"][2:4]:
        step["extra"]["grade"]["causes"] = causes
    (run / "trajectory.json").write_text(json.dumps(trajectory))
    export_site([run], tmp_path / "site", task_index=fixture_tasks())
    return serve_in_background(tmp_path / "site", port=0, host="127.0.0.1")


@pytest.mark.parametrize("causes,root", [
    ({"A1-label-1": {"kind": "alertmanager-unloaded", "summary": "alertmanager/alertmanager.yml line 3 does not load: x", "facts": {}},
      "pres-1": {"kind": "syntax-error", "summary": "alertmanager/alertmanager.yml line 3 does not load: x", "facts": {}}},
     "alertmanager/alertmanager.yml does not load"),
    ({"A1-label-1": {"kind": "alert-undefined", "summary": "no loadable rule file defines an alerting rule named CheckoutErrors", "facts": {}},
      "pres-1": {"kind": "alert-undefined", "summary": "no loadable rule file defines CheckoutErrors", "facts": {}}},
     "no rule defines CheckoutErrors"),
])
def test_failures_that_share_a_root_are_grouped_under_it(tmp_path, page, causes, root):
    server, url = _run_with_causes(tmp_path, causes)
    try:
        page.set_viewport_size(VIEWPORT)
        page.goto(f"{url}run.html?run=fixture-partial-s1&step=3")
        page.wait_for_selector("body[data-ready='1']")
        button = page.locator(f'#checks-roots button[data-root="{root}"]')
        assert page.locator("#checks-roots").is_visible() and button.inner_text() == f"{root} \u00b7 2 checks"
        button.click()
        shown = page.eval_on_selector_all(
            "#checks-groups li.check", "els => els.filter(e => e.offsetParent !== null).map(e => e.dataset.checkId)")
        assert sorted(shown) == ["A1-label-1", "pres-1"]
        button.click()  # again: every check
        assert page.locator("#checks-groups li.check:visible").count() == 7
        assert page.page_errors == []
    finally:
        server.shutdown()
        server.server_close()
