"""The reward curve's single hit area and the timeline's incremental update."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.browser

STEP_X = """(n) => {
  const svg = document.querySelector('#reward-curve-svg');
  const hit = document.querySelector('#curve-hit').getBoundingClientRect();
  const last = Number(document.querySelector('#step-count').textContent);
  const box = svg.getBoundingClientRect();
  const scale = box.width / svg.viewBox.baseVal.width;
  return { x: box.left + (44 + (n / last) * (1000 - 44 - 14)) * scale, y: hit.top + hit.height / 2 };
}"""


def test_clicking_the_curve_opens_the_step_under_the_pointer(page, served_site):
    page.goto(f"{served_site.url}run.html?run=fixture-oracle-s1")
    page.wait_for_selector("body[data-ready='1']")
    assert page.locator("#reward-curve rect.hit").count() == 1
    page.locator("#reward-curve").scroll_into_view_if_needed()  # below the step, in its own panel
    point = page.evaluate(STEP_X, 3)
    page.mouse.move(point["x"], point["y"])
    assert page.locator("#curve-hit title").text_content().startswith("Step 3:")
    page.mouse.click(point["x"], point["y"])
    page.wait_for_function("() => document.querySelector('#step-index').textContent === '3'")
    assert page.locator("#curve-marker").get_attribute("data-step") == "3"


def test_timeline_marks_exactly_one_current_step_after_moves(page, served_site):
    page.goto(f"{served_site.url}run.html?run=fixture-oracle-s1&step=2")
    page.wait_for_selector("body[data-ready='1']")
    for key in ("ArrowRight", "End", "Home", "ArrowRight", "ArrowRight"):
        page.keyboard.press(key)
    current = page.locator('#timeline [aria-current="step"]')
    assert current.count() == 1 and current.get_attribute("data-step") == "2"
    assert page.locator("#timeline button.current").count() == 1
