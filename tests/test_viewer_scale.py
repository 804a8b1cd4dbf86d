"""Scale: a virtual run list in shards with filters, sorting and search across runs; search within a
run; long texts kept whole and loaded on demand. A site of 120 generated runs, shards of 25 rows."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from conftest import fixture_tasks

from exporter import run_index
from exporter.export import export_site
from exporter.long_text import PREVIEW_CHARS
from exporter.serve import serve_in_background

pytestmark = pytest.mark.browser

FIXTURE_SITE = Path(__file__).parent / "fixtures" / "site"
LONG_OUTPUT = "".join(f"line {i:06d} of a very long tool output\n" for i in range(9000)) + "zebrafinch\n"
GENERATED = 120


def make_runs(root: Path) -> Path:
    shutil.copytree(FIXTURE_SITE, root / "fixture-site")
    runs = root / "fixture-site" / "runs"
    for number in range(GENERATED):
        source = runs / ("fixture-oracle-s1" if number % 3 == 0 else "fixture-partial-s1")
        target = runs / f"gen-{number:04d}"
        shutil.copytree(source, target)
        summary = json.loads((target / "run.json").read_text())
        summary["run_id"] = target.name
        summary["policy"] = ["oracle", "partial", "random"][number % 3]
        summary["final"]["reward"] = round(number / GENERATED, 4)
        (target / "run.json").write_text(json.dumps(summary))
    long_run = runs / "fixture-long"
    shutil.copytree(runs / "fixture-oracle-s1", long_run)
    summary = json.loads((long_run / "run.json").read_text())
    summary["run_id"] = "fixture-long"
    (long_run / "run.json").write_text(json.dumps(summary))
    trajectory = json.loads((long_run / "trajectory.json").read_text())
    trajectory["steps"][2]["observation"]["results"][0]["content"] = LONG_OUTPUT
    (long_run / "trajectory.json").write_text(json.dumps(trajectory))
    return runs


@pytest.fixture(scope="module")
def scale_site(tmp_path_factory):
    root = tmp_path_factory.mktemp("scale")
    runs = make_runs(root)
    patch = pytest.MonkeyPatch()
    patch.setattr(run_index, "SHARD_ROWS", 25)
    try:
        export_site([runs], root / "site", task_index=fixture_tasks())
    finally:
        patch.undo()
    server, url = serve_in_background(root / "site", port=0, host="127.0.0.1")
    yield root / "site", url
    server.shutdown()
    server.server_close()


def open_home(page, url: str, query: str = "") -> None:
    page.goto(f"{url}index.html{query}")
    page.wait_for_selector("body[data-ready='1']")


def visible_rows(page) -> list[dict[str, str]]:
    return page.evaluate("""() => [...document.querySelectorAll('#runs-table tbody tr[data-run-id]')].map((tr) => ({
      run: tr.dataset.runId, policy: tr.querySelector('[data-field=policy]').textContent,
      reward: tr.querySelector('[data-field=reward]').textContent }))""")


def test_home_loads_one_shard_and_renders_only_rows_in_view(page, scale_site):
    site, url = scale_site
    home = json.loads((site / "data" / "home.json").read_bytes())
    assert home["runs_total"] == GENERATED + 5
    assert [s["count"] for s in home["shards"]] == [25, 25, 25, 25, 25]
    open_home(page, url)
    table = page.locator("#runs-table")
    assert table.get_attribute("data-total") == str(GENERATED + 5)
    assert int(table.get_attribute("data-rendered")) < 60
    assert table.get_attribute("data-loaded-shards") in ("1", "2")
    page.locator("#runs-scroll").evaluate("(node) => { node.scrollTop = node.scrollHeight; }")
    page.wait_for_function("() => document.querySelector('#runs-table tr[data-run-id=\"gen-0119\"]')")
    assert page.locator("#runs-table").get_attribute("data-loaded-shards") in ("2", "3", "4", "5")
    assert page.page_errors == []


def test_filters_and_sorting_follow_the_address(page, scale_site):
    _, url = scale_site
    open_home(page, url)
    page.select_option("#filter-policy", "random")
    page.wait_for_function("() => document.querySelector('#runs-table').dataset.total === '40'")
    assert {row["policy"] for row in visible_rows(page)} == {"random"}
    page.click('button.sort-button[data-sort="reward"]')
    page.wait_for_function("() => location.search.includes('sort=reward')")
    rewards = [float(row["reward"]) for row in visible_rows(page)]
    assert rewards == sorted(rewards, reverse=True) and rewards[0] == pytest.approx(119 / 120, abs=1e-4)
    assert page.locator('th[data-sort="reward"]').get_attribute("aria-sort") == "descending"
    copied = page.url
    page.goto(copied)
    page.wait_for_selector("body[data-ready='1']")
    assert page.locator("#filter-policy").input_value() == "random"
    assert page.locator("#runs-count").inner_text() == f"40 of {GENERATED + 5}"
    page.fill("#filter-text", "gen-011")
    page.wait_for_function("() => document.querySelector('#runs-table').dataset.total === '4'")
    page.click("#filter-reset")
    page.wait_for_function(f"() => document.querySelector('#runs-table').dataset.total === '{GENERATED + 5}'")


def test_search_across_runs_finds_runs_and_steps(page, scale_site):
    _, url = scale_site
    open_home(page, url)
    page.fill("#search-input", "zebrafinch")
    page.press("#search-input", "Enter")
    page.wait_for_selector("#search-results li")
    hits = page.locator("#search-results li")
    assert hits.count() == 1 and hits.get_attribute("data-run-id") == "fixture-long"
    assert hits.locator("a[data-step]").inner_text() == "2"
    page.fill("#search-input", "storage oncall")
    page.press("#search-input", "Enter")
    page.wait_for_function("() => document.querySelector('#search-status').textContent.includes('and')")
    found = page.locator("#search-results li").evaluate_all("(items) => items.map((li) => li.dataset.runId)")
    oracle_copies = [f"gen-{n:04d}" for n in range(0, GENERATED, 3)]
    assert found == ["fixture-long", "fixture-oracle-s1", *oracle_copies], "the partial runs drop it"


def test_long_output_is_kept_whole_and_loaded_on_demand(page, scale_site):
    site, url = scale_site
    run = json.loads((site / "data" / "runs" / "fixture-long.json").read_bytes())
    step = run["steps"][2]
    assert step["output"] == LONG_OUTPUT[:PREVIEW_CHARS]
    parts = step["lazy"]["output"]["parts"]
    assert "".join(json.loads((site / p).read_bytes()) for p in parts) == LONG_OUTPUT
    page.goto(f"{url}run.html?run=fixture-long&step=2")
    page.wait_for_selector("body[data-ready='1']")
    more = page.locator("#step-output-more")
    assert more.is_visible() and f"{len(LONG_OUTPUT):,}" in more.inner_text()
    assert page.locator("#step-output").text_content() == LONG_OUTPUT[:PREVIEW_CHARS]
    expand = page.locator("#step-output-expand")
    expand.click()
    assert expand.get_attribute("aria-expanded") == "true"
    more.click()
    page.wait_for_function("() => document.querySelector('#step-output-more').dataset.loaded === '1'")
    assert page.locator("#step-output").text_content() == LONG_OUTPUT


def test_search_within_a_run_jumps_between_matches(page, scale_site):
    _, url = scale_site
    page.goto(f"{url}run.html?run=fixture-long&step=0")
    page.wait_for_selector("body[data-ready='1']")
    page.keyboard.press("/")
    assert page.evaluate("() => document.activeElement.id") == "run-search"
    page.keyboard.type("write_file")
    page.wait_for_function("() => document.querySelector('#run-search-count').textContent === '2 steps match'")
    assert page.locator("#timeline button.match").evaluate_all("(b) => b.map((x) => x.dataset.step)") == ["3", "4"]
    page.keyboard.press("Enter")
    page.wait_for_function("() => document.querySelector('#step-index').textContent === '3'")
    page.keyboard.press("Enter")
    page.wait_for_function("() => document.querySelector('#step-index').textContent === '4'")
    page.fill("#run-search", "zebrafinch")
    page.wait_for_function("() => document.querySelector('#run-search-count').textContent === '0 steps match'")
    page.click("#run-search-full")
    page.wait_for_function("() => document.querySelector('#run-search-count').textContent === '1 step match'")
    page.click("#run-search-results li[data-step='2'] button")
    page.wait_for_function("() => document.querySelector('#step-index').textContent === '2'")
