"""A truncated or malformed run data file shows a clear error for that run; the home page and the
other runs keep working."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from conftest import fixture_tasks

from exporter.export import export_site
from exporter.serve import serve_in_background

pytestmark = pytest.mark.browser

FIXTURE_RUNS = Path(__file__).parent / "fixtures" / "site" / "runs"


@pytest.fixture(scope="module")
def broken_site(tmp_path_factory):
    site = tmp_path_factory.mktemp("broken") / "site"
    export_site([FIXTURE_RUNS], site, task_index=fixture_tasks())
    runs = site / "data" / "runs"
    truncated = runs / "fixture-partial-s1.json"
    data = truncated.read_bytes()
    truncated.write_bytes(data[: len(data) // 2])
    shutil.copy(runs / "fixture-oracle-s1.json", runs / "keep.json")
    (runs / "fixture-episode-easy.json").write_text('{"run_id": "fixture-episode-easy", "steps": [null, 3]}')
    server, url = serve_in_background(site, port=0, host="127.0.0.1")
    yield url
    server.shutdown()
    server.server_close()


def run_error(page, url: str, query: str) -> str:
    page.goto(f"{url}run.html?{query}")
    error = page.locator("#run-error")
    error.wait_for(state="visible")
    assert page.locator("#run-view").is_hidden()
    return error.inner_text()


def test_truncated_run_file_names_the_run_and_says_it_is_not_json(page, broken_site):
    message = run_error(page, broken_site, "run=fixture-partial-s1")
    assert "fixture-partial-s1" in message and "not valid JSON" in message
    assert page.locator("#run-error a[href='index.html']").count() == 1


def test_malformed_run_file_shows_a_clear_error(page, broken_site):
    message = run_error(page, broken_site, "run=fixture-episode-easy")
    assert "fixture-episode-easy" in message and "malformed" in message
    assert page.page_errors == []


def test_home_and_other_runs_still_work(page, broken_site):
    page.goto(broken_site)
    page.wait_for_selector("body[data-ready='1']")
    assert page.locator("#runs-table tbody tr[data-run-id]").count() == 4
    page.goto(f"{broken_site}run.html?run=fixture-oracle-s1&step=2")
    page.wait_for_selector("body[data-ready='1']")
    assert page.locator("#step-index").inner_text() == "2"
    page.keyboard.press("ArrowRight")
    page.wait_for_function("() => document.querySelector('#step-index').textContent === '3'")
    assert page.page_errors == []


def test_compare_with_a_broken_run_says_which(page, broken_site):
    page.goto(f"{broken_site}compare.html?a=fixture-oracle-s1&b=fixture-partial-s1")
    error = page.locator("#compare-error")
    error.wait_for(state="visible")
    assert "fixture-partial-s1" in error.inner_text()
