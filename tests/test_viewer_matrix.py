"""The check x step matrix on the run view: every cell shows its state, a click opens that step and check."""

from __future__ import annotations

import json
from urllib.parse import parse_qs, urlparse

import pytest

pytestmark = pytest.mark.browser

READ_CELLS = """() => {
  const canvas = document.querySelector('#matrix-canvas');
  const w = Number(canvas.dataset.cellWidth), h = Number(canvas.dataset.cellHeight);
  const context = canvas.getContext('2d');
  const cells = [];
  for (let i = 0; i < Number(canvas.dataset.checks); i += 1) {
    const row = [];
    for (let n = 0; n < Number(canvas.dataset.steps); n += 1) {
      const [r, g, b] = context.getImageData(Math.floor(n * w + w / 2), Math.floor(i * h + h / 2), 1, 1).data;
      row.push(`${r},${g},${b}`);
    }
    cells.push(row);
  }
  return cells;
}"""


def run_file(site, run_id: str) -> dict:
    return json.loads((site.out_dir / "data" / "runs" / f"{run_id}.json").read_bytes())


def open_run(page, site, query: str) -> None:
    page.goto(f"{site.url}run.html?{query}")
    page.wait_for_selector("body[data-ready='1']")


def url_state(page) -> dict[str, str]:
    return {key: values[0] for key, values in parse_qs(urlparse(page.url).query).items()}


def click_cell(page, n: int, index: int) -> None:
    canvas = page.locator("#matrix-canvas")
    canvas.scroll_into_view_if_needed()
    width = int(canvas.get_attribute("data-cell-width"))
    height = int(canvas.get_attribute("data-cell-height"))
    canvas.click(position={"x": n * width + width / 2, "y": index * height + height / 2})


@pytest.mark.parametrize("run_id", ["fixture-oracle-s1", "fixture-partial-s1"])
def test_every_cell_has_the_color_of_its_state(page, served_site, run_id):
    open_run(page, served_site, f"run={run_id}")
    run = run_file(served_site, run_id)
    canvas = page.locator("#matrix-canvas")
    checks = len(run["steps"][0]["checks"])
    assert canvas.get_attribute("data-steps") == str(len(run["steps"]))
    assert canvas.get_attribute("data-checks") == str(checks)
    cells = page.evaluate(READ_CELLS)
    color_of: dict[str, str] = {}
    for index in range(checks):
        for n, step in enumerate(run["steps"]):
            state = step["checks"][index]
            assert color_of.setdefault(state, cells[index][n]) == cells[index][n], (index, n)
    assert len(set(color_of.values())) == len(color_of), "each state has its own color"
    labels = page.locator("#matrix-labels li").all_inner_texts()
    task = json.loads((served_site.out_dir / "data" / "tasks" / f"{run['task_id']}.json").read_bytes())
    assert labels == [check["id"] for check in task["checks"]]
    assert page.page_errors == []


def test_clicking_a_cell_opens_that_step_with_that_check(page, served_site):
    open_run(page, served_site, "run=fixture-oracle-s1")
    click_cell(page, 3, 3)
    page.wait_for_function("() => document.querySelector('#step-index').textContent === '3'")
    page.wait_for_function("() => location.search.includes('check=')")
    assert url_state(page) == {"run": "fixture-oracle-s1", "step": "3", "check": "R1-route-1"}
    selected = page.locator("#checks-panel li.check.selected")
    assert selected.count() == 1 and selected.get_attribute("data-check-id") == "R1-route-1"
    assert page.locator("#matrix-cursor").get_attribute("data-step") == "3"
    assert page.locator("#matrix-row").get_attribute("data-check-id") == "R1-route-1"
    click_cell(page, 5, 0)
    page.wait_for_function("() => document.querySelector('#step-index').textContent === '5'")
    assert url_state(page)["check"] == "A1-fire-1"
    assert page.locator('#matrix-labels li.selected').inner_text() == "A1-fire-1"


def test_hovering_a_cell_reads_it_out(page, served_site):
    open_run(page, served_site, "run=fixture-partial-s1")
    canvas = page.locator("#matrix-canvas")
    width = int(canvas.get_attribute("data-cell-width"))
    canvas.hover(position={"x": 2 * width + width / 2, "y": 5 * 14 + 7})
    assert page.locator("#matrix-readout").inner_text() == (
        "Step 2 \u00b7 pres-1: fails (broken at step 2, hunk 1; its check list entry links there)")


def test_deep_link_marks_step_column_and_check_row(page, served_site):
    open_run(page, served_site, "run=fixture-partial-s1&step=2&check=pres-1")
    assert page.locator("#matrix-cursor").get_attribute("data-step") == "2"
    assert page.locator("#matrix-row").get_attribute("data-check-id") == "pres-1"
    assert page.locator("#matrix-row").is_visible()


def test_an_episode_run_shows_no_check_matrix(page, served_site):
    """Episodes have no checks: the matrix panel is left out (components/episode.js), not
    drawn empty with an alerting run's wording."""
    open_run(page, served_site, "run=fixture-episode-easy")
    assert not page.locator("#matrix-panel").is_visible()
    assert not page.locator("#matrix-empty").is_visible()
    assert page.locator("#matrix-canvas").count() == 0
