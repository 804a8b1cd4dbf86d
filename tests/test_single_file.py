"""`alertforge export --single-file`: one self-contained HTML file that works opened via file://."""

from __future__ import annotations

import html as html_lib
import json
import re
from pathlib import Path

import pytest
from conftest import FIXTURE_TASK_ROOT

from alertforge.cli import main

pytestmark = pytest.mark.browser

FIXTURE_RUNS = Path(__file__).parent / "fixtures" / "site" / "runs"


@pytest.fixture(scope="module")
def single_file(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("single") / "replay.html"
    assert main(["export", str(FIXTURE_RUNS), "--tasks", str(FIXTURE_TASK_ROOT), "--single-file", str(out)]) == 0
    return out


def inlined_data(html: str) -> dict:
    match = re.search(r'<script type="application/json" id="site-data">(.*?)</script>', html, re.DOTALL)
    return json.loads(match.group(1))


def test_file_is_self_contained_with_hashed_csp(single_file):
    html = single_file.read_text()
    assert not re.search(r'(src|href)="(static|data)/', html)
    assert '<link rel="stylesheet"' not in html and "<style>" in html
    csp = html_lib.unescape(re.search(r'http-equiv="Content-Security-Policy" content="([^"]+)"', html).group(1))
    assert "default-src 'none'" in csp and "script-src 'sha256-" in csp and "'unsafe-inline'" not in csp
    data = inlined_data(html)
    assert {"data/home.json", "data/runs/fixture-xss.json", "data/tasks/fixture-checkout.json"} <= set(data)


def test_script_end_tag_in_a_run_cannot_end_the_data_element(single_file):
    html = single_file.read_text()
    data_text = re.search(r'id="site-data">(.*?)</script>', html, re.DOTALL).group(1)
    assert "<" not in data_text and "\\u003c/script>" in data_text
    run = inlined_data(html)["data/runs/fixture-xss.json"]
    assert "</script>" in json.dumps(run, ensure_ascii=False)
    assert html.count("</script>") == 2


def test_same_runs_give_the_same_bytes_and_redaction_is_reported(tmp_path, single_file, capsys):
    again = tmp_path / "again.html"
    assert main(["export", str(FIXTURE_RUNS), "--tasks", str(FIXTURE_TASK_ROOT), "--single-file", str(again)]) == 0
    assert "redacted: " in capsys.readouterr().out
    assert again.read_bytes() == single_file.read_bytes()
    assert main(["export", str(FIXTURE_RUNS), "--single-file", str(tmp_path / "x.html"), "--no-redact"]) == 0
    assert "not redacted" in capsys.readouterr().out
    assert main(["export", str(FIXTURE_RUNS)]) == 2


def test_opened_via_file_url_lists_runs_opens_one_and_steps(page, single_file):
    page.goto(single_file.as_uri())
    page.wait_for_selector("body[data-ready='1']")
    assert page.locator("#runs-table tbody tr[data-run-id]").count() == 4
    assert page.evaluate("() => getComputedStyle(document.querySelector('.site-header')).display") != "inline"
    link = page.locator('#runs-table tr[data-run-id="fixture-oracle-s1"] a')
    assert link.get_attribute("href") == "?page=run&run=fixture-oracle-s1"
    link.click()
    page.wait_for_selector("body.page-run[data-ready='1']")
    assert page.url.startswith(single_file.as_uri())
    assert page.locator("#step-index").inner_text() == "0"
    run = json.loads(json.dumps(inlined_data(single_file.read_text())["data/runs/fixture-oracle-s1.json"]))
    for n in (1, 2, 3):
        page.keyboard.press("ArrowRight")
        page.wait_for_function("(n) => document.querySelector('#step-index').textContent === String(n)", arg=n)
    assert page.locator("#step-tool").inner_text() == run["steps"][3]["tool"]["name"]
    assert page.locator("#step-diff tr.diff-line").count() > 0
    page.wait_for_function("() => new URLSearchParams(location.search).get('step') === '3'")
    assert "page=run" in page.url
    page.click("#compare-link")
    page.wait_for_selector("body.page-compare[data-ready='1']")
    assert page.locator("#compare-checks").inner_text() != ""
    page.click(".brand")
    page.wait_for_selector("body.page-home[data-ready='1']")
    assert page.page_errors == []


def test_xss_run_in_the_file_runs_nothing(page_without_csp, single_file):
    page = page_without_csp
    page.goto(single_file.as_uri() + "?page=run&run=fixture-xss")
    page.wait_for_selector("body[data-ready='1']")
    for _ in range(4):
        page.keyboard.press("ArrowRight")
    assert page.evaluate("() => window.__pwned") is None
    assert page.locator("main img, main [onerror]").count() == 0
    assert "<script>window.__pwned=1</script>" in page.locator("body").inner_text()
    assert page.page_errors == []


def test_the_inspector_draws_the_scenario_from_the_inlined_task_inputs(page, single_file):
    assert "data/task-inputs/fixture-checkout.json" in inlined_data(single_file.read_text())
    page.goto(single_file.as_uri() + "?page=run&run=fixture-oracle-s1&step=2&check=A1-fire-1")
    page.wait_for_selector("body[data-ready='1']")
    page.wait_for_function("() => document.querySelector('#check-inspector').dataset.inputs === 'loaded'")
    assert page.locator("#scenario-svg g.eval-mark").count() == 2
    assert page.locator("#reproduce-kind").inner_text() == "promtool"
    assert "input_series:" in page.locator("#reproduce-text").text_content()
    assert page.page_errors == []
