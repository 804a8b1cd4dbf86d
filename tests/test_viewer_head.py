"""The run view's two files: the first step is drawn from the run's head file
(data/run-heads/<id>.json), the timeline, curve, matrix and search once the whole run file is in;
either file broken shows a clear error for that run. The whole run file is held back (or broken)
with Playwright routes, so each state is seen for certain."""

from __future__ import annotations

import json
import re

import pytest

from exporter.bundle import transform_module

pytestmark = pytest.mark.browser

RUN = "fixture-oracle-s1"


def run_file(site, run_id: str = RUN) -> bytes:
    return (site.out_dir / "data" / "runs" / f"{run_id}.json").read_bytes()


def hold(page, pattern: str) -> list:
    """Route requests matching ``pattern`` into a list without answering them (yet)."""
    held: list = []
    page.route(re.compile(pattern), lambda route: held.append(route))
    return held


def wait_held(page, held: list) -> None:
    for _ in range(100):
        if held:
            return
        page.wait_for_timeout(50)
    raise AssertionError("the run file was never requested")


def open_run(page, site, query: str) -> None:
    page.goto(f"{site.url}run.html?{query}", wait_until="domcontentloaded")


def test_first_step_comes_from_the_head_and_the_rest_after_the_run_file(page, served_site):
    held = hold(page, rf"/data/runs/{RUN}\.json$")
    open_run(page, served_site, f"run={RUN}")
    page.wait_for_selector("#run-view[data-loaded='head']")
    wait_held(page, held)
    run = json.loads(run_file(served_site))
    assert page.locator("#step-index").inner_text() == "0"
    assert page.locator("#step-count").inner_text() == str(len(run["steps"]) - 1)
    assert page.locator("#step-heading").inner_text() == "Step 0"
    states = page.locator("#checks-panel li.check").evaluate_all("(items) => items.map((li) => li.dataset.state)")
    assert "".join({"pass": "1", "fail": "0", "na": "-"}[s] for s in states) == run["steps"][0]["checks"]
    assert page.locator("#run-title").inner_text() != "Run", "the header is drawn from the head and the task"
    status = page.locator("#run-rest-status")
    assert status.is_visible() and f"Loading all {len(run['steps'])} steps" in status.inner_text()
    assert page.locator("#timeline button.step-dot").count() == 0
    assert page.locator("#matrix-canvas").count() == 0
    assert page.locator("#reward-curve-svg").count() == 0
    assert page.locator("#btn-next").is_disabled() and page.locator("#btn-last").is_disabled()
    assert page.locator("body[data-ready='1']").count() == 0
    page.keyboard.press("ArrowRight")
    assert page.locator("#step-index").inner_text() == "0", "no step moves before the whole run is in"

    held[0].continue_()
    page.wait_for_selector("body[data-ready='1']")
    assert page.locator("#run-view").get_attribute("data-loaded") == "all"
    assert page.locator("#timeline button.step-dot").count() == len(run["steps"])
    assert page.locator("#matrix-canvas").get_attribute("data-steps") == str(len(run["steps"]))
    assert page.locator("#reward-curve-svg").count() == 1
    assert status.is_hidden()
    assert page.locator("#timeline button[aria-current='step']").get_attribute("data-step") == "0"
    page.keyboard.press("ArrowRight")
    page.wait_for_function("() => document.querySelector('#step-index').textContent === '1'")
    page.keyboard.press("End")
    page.wait_for_function(f"() => document.querySelector('#step-index').textContent === '{len(run['steps']) - 1}'")
    assert page.page_errors == []


def test_truncated_run_file_after_the_head_shows_an_error_for_that_run(page, served_site):
    held = hold(page, rf"/data/runs/{RUN}\.json$")
    open_run(page, served_site, f"run={RUN}")
    page.wait_for_selector("#run-view[data-loaded='head']")
    wait_held(page, held)
    data = run_file(served_site)
    held[0].fulfill(status=200, content_type="application/json", body=data[: len(data) // 2])
    error = page.locator("#run-error")
    error.wait_for(state="visible")
    assert RUN in error.inner_text() and "not valid JSON" in error.inner_text()
    assert page.locator("#run-view").is_hidden()
    assert page.locator("#run-error a[href='index.html']").count() == 1
    assert page.page_errors == []


def test_run_file_of_another_run_is_refused(page, served_site):
    page.route(re.compile(rf"/data/runs/{RUN}\.json$"), lambda route: route.fulfill(
        status=200, content_type="application/json", body=run_file(served_site, "fixture-partial-s1")))
    open_run(page, served_site, f"run={RUN}")
    error = page.locator("#run-error")
    error.wait_for(state="visible")
    assert "do not match" in error.inner_text() and "fixture-partial-s1" in error.inner_text()
    assert page.locator("#run-view").is_hidden()


@pytest.mark.parametrize(("body", "says"), [
    (b'{"run_id": "fixture-oracle-s1", "task_id": "fixture-checkout", "kind": "alerting", "st', "not valid JSON"),
    (b'{"run_id": "fixture-oracle-s1", "task_id": "fixture-checkout", "kind": "alerting", "steps": []}', "malformed"),
])
def test_broken_head_file_shows_an_error_for_that_run(page, served_site, body, says):
    page.route(re.compile(rf"/data/run-heads/{RUN}\.json$"),
               lambda route: route.fulfill(status=200, content_type="application/json", body=body))
    open_run(page, served_site, f"run={RUN}")
    error = page.locator("#run-error")
    error.wait_for(state="visible")
    assert "Run head file" in error.inner_text() and RUN in error.inner_text() and says in error.inner_text()
    assert page.locator("#run-view").is_hidden()
    page.unroute(re.compile(rf"/data/run-heads/{RUN}\.json$"))
    page.goto(f"{served_site.url}run.html?run=fixture-partial-s1&step=2")
    page.wait_for_selector("body[data-ready='1']")
    assert page.locator("#step-index").inner_text() == "2", "other runs still work"


def test_missing_head_file_falls_back_to_the_run_file(page, served_site):
    page.route(re.compile(rf"/data/run-heads/{RUN}\.json$"), lambda route: route.fulfill(status=404, body="no"))
    open_run(page, served_site, f"run={RUN}&step=3")
    page.wait_for_selector("body[data-ready='1']")
    assert page.locator("#step-index").inner_text() == "3"
    assert page.locator("#timeline button.step-dot").count() == len(json.loads(run_file(served_site))["steps"])
    assert page.page_errors == []


def test_a_step_past_the_head_and_episode_runs_wait_for_the_run_file(page, served_site):
    for query, run_id in ((f"run={RUN}&step=4", RUN), ("run=fixture-episode-easy", "fixture-episode-easy")):
        page.unroute_all()
        held = hold(page, rf"/data/runs/{run_id}\.json$")
        open_run(page, served_site, query)
        wait_held(page, held)
        page.wait_for_timeout(200)
        assert page.locator("#run-view").is_hidden() and page.locator("#run-loading").is_visible()
        held[0].continue_()
        page.wait_for_selector("body[data-ready='1']")
        assert page.locator("#run-view").get_attribute("data-loaded") == "all"
        assert page.locator("#crumb-run").inner_text() == run_id
        assert "Final reward" in page.locator("#run-meta").text_content(), "the header is drawn"
    assert page.locator("#run-view.episode-mode").count() == 1
    page.goto(f"{served_site.url}run.html?run={RUN}&step=4")
    page.wait_for_selector("body[data-ready='1']")
    assert page.locator("#step-index").inner_text() == "4"


def _registered(script: str) -> set[str]:
    return set(re.findall(r'__registry\.modules\["([\w/-]+\.js)"\]', script))


def test_run_page_loads_one_bundle_of_the_first_paint_modules(served_site):
    html = (served_site.out_dir / "run.html").read_text()
    assert re.findall(r'<script type="module" src="(static/[\w/.-]+\.js)"', html) == ["static/bundles/run.js"]
    assert "modulepreload" not in html and "static/js/" not in html, "the page asks for one bundle, no module"
    first = _registered((served_site.out_dir / "static/bundles/run.js").read_text())
    later = _registered((served_site.out_dir / "static/bundles/run.later.js").read_text())
    assert {"pages/run.js", "lib/dom.js", "components/detail.js", "components/checks.js"} <= first
    lazy = {"components/matrix.js", "components/timeline.js", "components/curve.js",
            "components/episode.js", "components/runsearch.js", "components/markdown.js"}
    assert not lazy & first, "parts drawn after the whole run file is in load lazily"
    assert lazy <= later and not first & later, "each module is in exactly one of the two bundles"
    assert html.index("static/prefetch-run.js") < html.index('rel="stylesheet"'), "data fetches start first"
    assert 'rel="icon" href="data:image/svg+xml;base64,' in html, "the icon costs no request"


def test_the_later_bundle_loads_once_after_the_first_paint(served_site, page):
    requested = []
    page.on("request", lambda request: requested.append(request.url.removeprefix(served_site.url)))
    page.goto(f"{served_site.url}run.html?run={RUN}")
    page.wait_for_selector("body[data-ready='1']")
    scripts = [url for url in requested if url.endswith(".js")]
    assert scripts == ["static/prefetch-run.js", "static/bundles/run.js", "static/bundles/run.later.js"], scripts
    marks = page.evaluate("() => performance.getEntriesByType('resource').filter((e) => e.name.endsWith('run.later.js'))"
                          ".map((e) => e.startTime > performance.getEntriesByName('first-step-rendered')[0].startTime)")
    assert marks == [True], "the later bundle is asked for after the first step is drawn"
    assert page.locator("#matrix-panel").count() == 1


def test_single_file_bundle_turns_lazy_imports_into_bundled_modules():
    body, exported = transform_module("x.js", 'export async function f() {\n  const m = await import("./matrix.js");\n}\n')
    assert 'import(' not in body and '__lazy("matrix.js")' in body
    assert exported == ["f"]
