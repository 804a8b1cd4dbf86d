"""The viewer in real Chromium: home page, stepping through a run, deep links, escaping, CSP."""

from __future__ import annotations

import base64
import hashlib
import json
from pathlib import Path
from urllib.parse import parse_qs, urlparse

import pytest

from exporter.render import run_label

pytestmark = pytest.mark.browser
ROOT = Path(__file__).resolve().parents[1]

CSP = (
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "connect-src 'self'; object-src 'none'; base-uri 'none'"
)
XSS_MARKERS = (
    "<script>window.__pwned=1</script>",
    '<img src=x onerror="window.__pwned=1">',
    "</script>",
)
STATE_NAMES = {"1": "pass", "0": "fail", "-": "na"}

READ_VIEW = """() => ({
  index: document.querySelector('#step-index').textContent,
  reward: document.querySelector('#step-reward').textContent,
  tool: document.querySelector('#step-tool').textContent,
  argumentsText: document.querySelector('#step-arguments').textContent,
  argumentsShown: !document.querySelector('#step-arguments-box').hidden,
  output: document.querySelector('#step-output').textContent,
  outputShown: !document.querySelector('#step-output-box').hidden,
  diffShown: !(document.querySelector('#step-diff-box')?.hidden ?? true),
  noChange: document.querySelector('#step-diff .no-change') !== null,
  diffPath: document.querySelector('#step-diff-path')?.textContent ?? '',
  diffLines: [...document.querySelectorAll('#step-diff tr.diff-line')].map(
    (row) => [row.dataset.op, row.querySelector('.line-text').textContent.slice(1)]),
  marker: (document.querySelector('#curve-marker') ?? document.querySelector('#episode-curve-marker')).dataset.step,
  current: document.querySelector('#timeline [aria-current="step"]').dataset.step,
  checks: [...document.querySelectorAll('#checks-panel li[data-check-id]')].map((li) => ({
    id: li.dataset.checkId, state: li.dataset.state, changed: li.dataset.changed,
    detail: li.querySelector('.check-detail').hidden ? null : li.querySelector('.check-detail').textContent,
  })),
})"""


def failure_at(steps: list[dict], n: int, check_id: str) -> str:
    """A check's detail at step n from the run file's delta-encoded ``failed`` (docs/formats.md)."""
    for step in reversed(steps[: n + 1]):
        if check_id in step["failed"]:
            return step["failed"][check_id]
    return ""


def run_file(site, run_id: str) -> dict:
    return json.loads((site.out_dir / "data" / "runs" / f"{run_id}.json").read_bytes())


def task_file(site, task_id: str) -> dict:
    return json.loads((site.out_dir / "data" / "tasks" / f"{task_id}.json").read_bytes())


def open_run(page, site, query: str) -> None:
    page.goto(f"{site.url}run.html?{query}")
    page.wait_for_selector("body[data-ready='1']")


def url_state(page) -> dict[str, str]:
    return {key: values[0] for key, values in parse_qs(urlparse(page.url).query).items()}


def assert_view_shows_step(page, site, run_id: str, n: int) -> None:
    run = run_file(site, run_id)
    task = task_file(site, run["task_id"])
    step = run["steps"][n]
    view = page.evaluate(READ_VIEW)
    assert view["index"] == str(n)
    assert view["reward"] == f"{step['total']:.4f}"
    assert view["marker"] == str(n) and view["current"] == str(n)
    page.wait_for_function(
        "(n) => new URLSearchParams(location.search).get('step') === String(n)", arg=n
    )
    state = url_state(page)
    assert (state["run"], state["step"]) == (run_id, str(n))
    if step["tool"]:
        assert view["tool"] == step["tool"]["name"]
        assert view["argumentsShown"]
        assert json.loads(view["argumentsText"]) == step["tool"]["arguments"]
    else:
        assert not view["argumentsShown"]
    assert view["outputShown"] is (step["output"] is not None)
    assert view["output"] == (step["output"] or "")
    alerting = run["kind"] == "alerting"  # an alerting step always says what it changed
    assert view["diffShown"] is (alerting or step["diff"] is not None)
    assert view["noChange"] is (alerting and step["diff"] is None)
    if step["diff"]:
        assert view["diffPath"] == step["diff"]["path"]
        expected_lines = [line for hunk in step["diff"]["hunks"] for line in hunk["lines"]]
        assert view["diffLines"] == expected_lines
    expected_checks = [
        {
            "id": check["id"],
            "state": STATE_NAMES[step["checks"][index]],
            "changed": "1" if index in step["changed"] else "0",
            "detail": failure_at(run["steps"], n, check["id"]) if step["checks"][index] == "0" else None,
        }
        for index, check in enumerate(task["checks"])
    ]
    assert sorted(view["checks"], key=lambda c: c["id"]) == sorted(
        expected_checks, key=lambda c: c["id"]
    )


def test_home_lists_every_run_with_its_reward(page, served_site):
    page.goto(served_site.url)
    page.wait_for_selector("body[data-ready='1']")
    rows = page.locator("#runs-table tbody tr[data-run-id]")
    run_ids = sorted(p.stem for p in (served_site.out_dir / "data" / "runs").glob("*.json"))
    assert rows.count() == len(run_ids) == 4
    for run_id in run_ids:
        row = page.locator(f'#runs-table tr[data-run-id="{run_id}"]')
        final = run_file(served_site, run_id)["final"]
        assert row.locator('[data-field="reward"]').inner_text() == f"{final['reward']:.4f}"
        assert row.locator("a").get_attribute("href") == f"runs/{run_id}.html"  # the run's own page
        task_id = run_file(served_site, run_id)["task_id"]
        assert row.locator("a").inner_text() == run_label(run_id, task_id)
        assert row.locator("a").get_attribute("title") == run_id
    oracle = page.locator('#leaderboard tr[data-policy="oracle"]')
    assert oracle.locator('[data-field="mean_reward"]').inner_text().strip() == "1.0000"
    assert oracle.locator('[data-field="solved_rate"]').inner_text() == "100%"
    assert page.page_errors == []


RUN_LABELS = [("af-024-slo__oracle__s0__95cc501749", "af-024-slo", "oracle__s0__95cc501749"),
              ("fixture-oracle-s1", "af-001", "fixture-oracle-s1"), ("t__", "t", "t__"),
              ("t__x", "t_", "t__x"), ("ab__c", "a", "ab__c")]


def test_the_run_column_shows_the_id_after_its_task_alike_in_the_page_and_its_script(page, served_site):
    # a column cut at its end showed the runs of one task and policy as the same text
    page.goto(served_site.url)
    page.wait_for_selector("body[data-ready='1']")
    for run_id, task_id, shown in RUN_LABELS:
        assert run_label(run_id, task_id) == shown
        assert page.evaluate("([r, t]) => import('./static/js/lib/format.js').then((m) => m.runLabel(r, t))",
                             [run_id, task_id]) == shown
    assert page.page_errors == []


def test_buttons_move_between_steps(page, served_site):
    open_run(page, served_site, "run=fixture-oracle-s1")
    assert_view_shows_step(page, served_site, "fixture-oracle-s1", 0)
    assert page.locator("#btn-prev").is_disabled()
    for expected in (1, 2, 3):
        page.click("#btn-next")
        assert_view_shows_step(page, served_site, "fixture-oracle-s1", expected)
    page.click("#btn-last")
    assert_view_shows_step(page, served_site, "fixture-oracle-s1", 5)
    assert page.locator("#btn-next").is_disabled()
    page.click("#btn-prev")
    assert_view_shows_step(page, served_site, "fixture-oracle-s1", 4)
    page.click("#btn-first")
    assert_view_shows_step(page, served_site, "fixture-oracle-s1", 0)
    page.click('#timeline button[data-step="3"]')
    assert_view_shows_step(page, served_site, "fixture-oracle-s1", 3)
    assert page.page_errors == []


def test_arrow_and_home_end_keys_move_between_steps(page, served_site):
    open_run(page, served_site, "run=fixture-partial-s1")
    page.keyboard.press("ArrowRight")
    assert_view_shows_step(page, served_site, "fixture-partial-s1", 1)
    page.keyboard.press("ArrowRight")
    assert_view_shows_step(page, served_site, "fixture-partial-s1", 2)
    page.keyboard.press("End")
    assert_view_shows_step(page, served_site, "fixture-partial-s1", 4)
    page.keyboard.press("ArrowRight")
    assert_view_shows_step(page, served_site, "fixture-partial-s1", 4)
    page.keyboard.press("ArrowLeft")
    assert_view_shows_step(page, served_site, "fixture-partial-s1", 3)
    page.keyboard.press("Home")
    assert_view_shows_step(page, served_site, "fixture-partial-s1", 0)


def test_regression_step_marks_changed_checks_and_failure_detail(page, served_site):
    open_run(page, served_site, "run=fixture-partial-s1&step=2")
    assert_view_shows_step(page, served_site, "fixture-partial-s1", 2)
    assert page.locator("#step-delta").inner_text() == "\u22120.0420"
    assert page.locator('#timeline button[data-step="2"]').get_attribute("data-trend") == "down"
    preservation = page.locator('#checks-panel li[data-check-id="pres-1"]')
    assert preservation.get_attribute("data-state") == "fail"
    assert preservation.get_attribute("data-changed") == "1"
    assert "storage-oncall missing" in preservation.locator(".check-detail").inner_text()
    assert page.locator('#checks-panel li[data-changed="1"]').count() == 2


def test_deep_link_opens_that_step_and_copied_link_reopens_it(browser, page, served_site):
    open_run(page, served_site, "run=fixture-oracle-s1&step=4")
    assert_view_shows_step(page, served_site, "fixture-oracle-s1", 4)
    page.click("#btn-prev")
    copied = page.url
    other = browser.new_context()
    try:
        reopened = other.new_page()
        reopened.goto(copied)
        reopened.wait_for_selector("body[data-ready='1']")
        assert_view_shows_step(reopened, served_site, "fixture-oracle-s1", 3)
    finally:
        other.close()


def test_check_deep_link_selects_the_check(page, served_site):
    open_run(page, served_site, "run=fixture-oracle-s1&step=3&check=R1-route-1")
    check = page.locator('#checks-panel li[data-check-id="R1-route-1"]')
    assert "selected" in check.get_attribute("class")
    assert check.get_attribute("data-state") == "fail"
    page.click("#btn-next")
    page.wait_for_function("() => location.search.includes('step=4')")
    assert url_state(page) == {"run": "fixture-oracle-s1", "step": "4", "check": "R1-route-1"}
    assert check.get_attribute("data-state") == "pass"
    page.click('#checks-panel li[data-check-id="A1-fire-1"]')
    page.wait_for_function("() => location.search.includes('check=A1-fire-1')")


def test_episode_run_steps_through_env_rewards(page, served_site):
    open_run(page, served_site, "run=fixture-episode-easy")
    for n in range(5):
        if n:
            page.click("#btn-next")
        assert_view_shows_step(page, served_site, "fixture-episode-easy", n)
    assert page.locator("#checks-panel").count() == 0  # an episode has no check catalog
    page.click('#timeline button[data-step="2"]')
    assert page.locator("#step-delta").inner_text() == "\u22120.1000"
    assert page.page_errors == []


def test_out_of_range_step_is_clamped(page, served_site):
    open_run(page, served_site, "run=fixture-oracle-s1&step=99")
    assert_view_shows_step(page, served_site, "fixture-oracle-s1", 5)


def test_instruction_is_shown_as_text(page, served_site):
    open_run(page, served_site, "run=fixture-oracle-s1")
    task = task_file(served_site, "fixture-checkout")
    assert page.locator("#instruction").text_content() == task["instruction"]
    assert page.locator("#run-title").inner_text() == task["title"]


def test_missing_run_shows_an_error_message(page, served_site):
    page.goto(f"{served_site.url}run.html?run=no-such-run")
    error = page.locator("#run-error")
    error.wait_for(state="visible")
    assert "no-such-run" in error.inner_text() and "404" in error.inner_text()
    assert page.locator("#run-view").is_hidden()
    page.goto(f"{served_site.url}run.html")
    page.locator("#run-error").wait_for(state="visible")
    assert "No run chosen" in page.locator("#run-error").inner_text()


def _assert_not_executed(page) -> None:
    assert page.evaluate("() => window.__pwned") is None
    assert page.locator("img").count() == 0
    assert page.locator("[onerror]").count() == 0
    scripts = page.evaluate("() => [...document.scripts].map((s) => [s.getAttribute('src'), s.textContent])")
    prefetch, notice = (_inlined(ROOT / "site" / "static" / name) for name in ("prefetch-run.js", "file-notice.js"))
    inline = [text for src, text in scripts if src is None]
    assert inline in ([notice], [prefetch, notice]), (
        "no inline script but the page's own prefetch and file notice (CSP allows only their hashes)")
    assert all(src.startswith("static/") for src, _ in scripts if src is not None), scripts


def test_xss_payloads_show_as_text_and_never_run(page_without_csp, served_site):
    page = page_without_csp
    dialogs = []
    page.on("dialog", lambda dialog: (dialogs.append(dialog.message), dialog.dismiss()))
    page.goto(served_site.url)
    page.wait_for_selector("body[data-ready='1']")
    _assert_not_executed(page)
    home_text = page.locator("body").inner_text()
    assert XSS_MARKERS[1] in home_text and XSS_MARKERS[0] in home_text

    run = run_file(served_site, "fixture-xss")
    open_run(page, served_site, "run=fixture-xss")
    seen = page.locator("body").inner_text() + page.locator("#instruction").text_content()
    for n in range(len(run["steps"])):
        if n:
            page.keyboard.press("ArrowRight")
        assert_view_shows_step(page, served_site, "fixture-xss", n)
        _assert_not_executed(page)
        seen += (
            page.locator("#step-detail").text_content()
            + page.locator("#checks-panel").text_content()
        )
    for marker in XSS_MARKERS:
        assert marker in seen
    assert page.locator("#step-tool").inner_text() == XSS_MARKERS[0]
    page.keyboard.press("Home")
    page.keyboard.press("ArrowRight")
    assert page.locator("#step-diff-path").inner_text() == run["steps"][1]["diff"]["path"]
    assert dialogs == []
    assert page.page_errors == []


def test_every_page_carries_the_csp_meta(page, served_site):
    pages = sorted(p.relative_to(served_site.out_dir).as_posix()
                   for p in served_site.out_dir.rglob("*.html"))
    assert {"index.html", "run.html", "compare.html", "gallery/index.html"} <= set(pages)
    for name in pages:
        page.goto(f"{served_site.url}{name}?run=fixture-oracle-s1")
        meta = page.locator('meta[http-equiv="Content-Security-Policy"]')
        assert meta.count() == 1
        # every page inlines static/file-notice.js, run.html also static/prefetch-run.js, each
        # allowed by its hash and nothing else
        notice = _hash_source(ROOT / "site" / "static" / "file-notice.js")
        if name == "run.html" or name.startswith("runs/"):
            prefetch = _hash_source(ROOT / "site" / "static" / "prefetch-run.js")
            expected = CSP.replace("script-src 'self'", f"script-src 'self' {notice} {prefetch}")
            if "<style>" in (served_site.out_dir / name).read_text():
                # a run's own page with its first step: its start script and stylesheet inlined
                start = _hash_source(ROOT / "site" / "static" / "run-page-start.js")
                styles = (served_site.out_dir / "static" / "run.css").read_text()
                style_hash = "'sha256-" + base64.b64encode(hashlib.sha256(styles.encode()).digest()).decode() + "'"
                expected = expected.replace(f"{prefetch};", f"{prefetch} {start};").replace(
                    "style-src 'self'", f"style-src 'self' {style_hash}")
            assert meta.get_attribute("content") == expected
            assert page.evaluate("() => typeof window.__prefetched") == "object", "the inline script ran"
        else:
            assert meta.get_attribute("content") == CSP.replace("script-src 'self'",
                                                                f"script-src 'self' {notice}")
        assert page.locator(".file-notice").count() == 0  # served over http: no notice
        assert page.page_errors == []


def _inlined(path: Path) -> str:
    """What a page inlines of a script: its minified text (exporter/minified.py)."""
    from exporter.minified import JS, minified

    return minified(path, path.read_text(), JS)


def _hash_source(path: Path) -> str:
    digest = base64.b64encode(hashlib.sha256(_inlined(path).encode()).digest()).decode()
    return f"'sha256-{digest}'"


@pytest.mark.parametrize("name", ["index.html", "run.html?run=fixture-oracle-s1", "gallery/index.html"])
def test_a_site_opened_from_disk_says_to_serve_it_instead_of_showing_nothing(page, served_site, name):
    """file:// blocks the pages' module scripts; the inlined notice names the command."""
    page.goto((served_site.out_dir / name.split("?")[0]).as_uri() + ("?" + name.split("?")[1] if "?" in name else ""))
    notice = page.locator(".file-notice")
    notice.wait_for()
    assert "opened from disk" in notice.inner_text()
    assert notice.locator("code").inner_text() == f"alertforge serve {served_site.out_dir}"


def test_run_view_screenshot(page, served_site, tmp_path_factory):
    open_run(page, served_site, "run=fixture-oracle-s1&step=3")
    target = Path(tmp_path_factory.getbasetemp()) / "run-view.png"
    page.screenshot(path=str(target), full_page=True)
    assert target.stat().st_size > 10_000
