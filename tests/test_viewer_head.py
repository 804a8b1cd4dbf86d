"""The run view's two files: the first step is drawn from the run's head file
(data/run-heads/<id>.json), the timeline, curve, matrix and search once the whole run file is in;
either file broken shows a clear error for that run. The whole run file is held back (or broken)
with Playwright routes, so each state is seen for certain."""

from __future__ import annotations

import json
import re

import pytest

from contract.errors import BadInput
from exporter.bundle import refuse_script_end, transform_module, without_comments
from exporter.render import inline_script

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


def test_first_step_is_drawn_before_the_task_files_are_answered(page, served_site):
    requested: list[str] = []
    page.on("request", lambda request: requested.append(request.url))
    held = hold(page, r"/data/(tasks|task-inputs)/[^/]+\.json$")
    open_run(page, served_site, f"run={RUN}&step=1")
    page.wait_for_function("() => performance.getEntriesByName('first-step-rendered').length === 1")
    head = json.loads((served_site.out_dir / "data" / "run-heads" / f"{RUN}.json").read_bytes())
    step = json.loads(run_file(served_site))["steps"][1]
    assert page.locator("#step-heading").inner_text() == "Step 1"
    assert page.locator("#step-tool").inner_text() == step["tool"]["name"]
    assert json.loads(page.locator("#step-arguments").inner_text()) == step["tool"]["arguments"]
    assert page.locator("#step-output").inner_text().strip() == step["output"].strip()
    assert page.locator("#run-title").inner_text() == head["task"]["title"]
    items = page.locator("#checks-panel li.check")
    assert items.evaluate_all("(items) => items.map((li) => li.dataset.checkId)") == [c["id"] for c in head["task"]["checks"]]
    assert items.locator(".check-label").all_inner_texts() == [c["label"] for c in head["task"]["checks"]]
    assert items.first.locator(".check-label").is_visible()
    wait_held(page, held)
    assert [route.request.url for route in held] == [f"{served_site.url}data/tasks/fixture-checkout.json"], \
        "the task file is asked for after the first step, the scenario data not at all"
    page.wait_for_timeout(300)
    assert page.locator("body[data-ready='1']").count() == 0, "the whole view waits for the task file"

    held[0].continue_()
    page.wait_for_selector("body[data-ready='1']")
    task = json.loads((served_site.out_dir / "data" / "tasks" / "fixture-checkout.json").read_bytes())
    in_panel_order = [task["checks"][index] for group in task["panel"] for index in group["checks"]]
    assert items.evaluate_all("(items) => items.map((li) => [li.dataset.checkId, li.title])") == [
        [c["id"], c["note"] or ""] for c in in_panel_order]
    assert not any("/data/task-inputs/" in url for url in requested)
    assert page.page_errors == []


def test_a_task_file_that_fails_after_the_head_shows_an_error_for_that_run(page, served_site):
    page.route(re.compile(r"/data/tasks/[^/]+\.json$"), lambda route: route.fulfill(status=500, body="no"))
    open_run(page, served_site, f"run={RUN}")
    error = page.locator("#run-error")
    error.wait_for(state="visible")
    assert "Task file" in error.inner_text() and "fixture-checkout" in error.inner_text() and "HTTP 500" in error.inner_text()
    assert page.locator("#run-view").is_hidden()
    assert page.evaluate("() => performance.getEntriesByName('first-step-rendered').length") == 1, \
        "the first step was drawn from the head before the task file answered"
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


def test_a_step_past_the_head_waits_for_the_run_file(page, served_site):
    for query, run_id in ((f"run={RUN}&step=4", RUN), ("run=fixture-episode-easy&step=3", "fixture-episode-easy")):
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
    bundles = served_site.out_dir / "static/bundles"
    first, later, episode, atif = (_registered((bundles / f"run{part}.js").read_text())
                                   for part in ("", ".later", ".episode", ".atif"))
    assert {"pages/run.js", "lib/dom.js", "components/detail.js", "components/checks.js"} <= first
    assert {"components/episode.js", "components/episode-services.js"} <= episode, "an episode's board: its own chunk"
    assert {"components/model-turn.js", "components/atif-parts.js", "components/trial-panel.js"} <= atif
    lazy = {"components/matrix.js", "components/timeline.js", "components/curve.js",
            "components/inspector.js", "components/runsearch.js", "components/markdown.js"}
    assert not lazy & first, "parts drawn after the whole run file is in load lazily"
    assert lazy <= later
    files = [first, later, episode, atif]
    assert all(not a & b for i, a in enumerate(files) for b in files[i + 1:]), "each module is in exactly one file"
    assert html.index("window.__prefetched") < html.index('rel="stylesheet"'), "the data fetch starts first"
    assert re.findall(r'<link rel="stylesheet" href="([^"]+)"', html) == ["static/run.css"]
    assert 'data-episode-styles="static/episode.css"' in html
    assert "static/prefetch-run.js" not in html, "inlined: no request for it"
    assert 'rel="icon" href="data:image/svg+xml;base64,' in html, "the icon costs no request"


def test_the_later_bundle_loads_once_after_the_first_paint(served_site, page):
    requested = []
    page.on("request", lambda request: requested.append(request.url.removeprefix(served_site.url)))
    page.goto(f"{served_site.url}run.html?run={RUN}")
    page.wait_for_selector("body[data-ready='1']")
    scripts = [url for url in requested if url.endswith(".js")]
    assert scripts == ["static/bundles/run.js", "static/bundles/run.later.js"], scripts
    assert [url for url in requested if url.endswith(".css")] == ["static/run.css"], "an alerting run: no episode rules"
    marks = page.evaluate("() => performance.getEntriesByType('resource').filter((e) => e.name.endsWith('run.later.js'))"
                          ".map((e) => e.startTime > performance.getEntriesByName('first-step-rendered')[0].startTime)")
    assert marks == [True], "the later bundle is asked for after the first step is drawn"
    assert page.locator("#matrix-panel").count() == 1


def test_only_an_episode_loads_the_episode_chunk_and_before_its_board_is_drawn(served_site, page):
    """An alerting run's first step needs none of the episode board's modules; an episode's board
    is its first step, its chunk asked for as soon as the head says "episode" (prefetch-run.js)."""
    requested = []
    page.on("request", lambda request: requested.append(request.url.removeprefix(served_site.url)))
    page.goto(f"{served_site.url}run.html?run=fixture-episode-easy")
    page.wait_for_selector("body[data-ready='1']")
    assert "static/bundles/run.episode.js" in requested and "static/bundles/run.atif.js" not in requested
    for name in ("run.episode.js", "episode.css"):
        drawn = page.evaluate(f"() => performance.getEntriesByType('resource').filter((e) => e.name.endsWith('/{name}'))"
                              ".map((e) => e.responseEnd <= performance.getEntriesByName('first-step-rendered')[0].startTime)")
        assert drawn == [True], f"the board's {name} is in before the first step is drawn"
    # the board's rules apply (static/episode.css: the run page's own stylesheet holds none of them)
    assert page.evaluate("() => getComputedStyle(document.querySelector('.episode-grid')).display") == "grid"
    assert page.locator("link#episode-styles").count() == 1
    assert page.locator("#episode-board").is_visible() and page.locator("#episode-result").count() == 1
    assert page.evaluate("() => performance.getEntriesByType('resource').filter((e) => e.name.includes('run.episode.js')).length") == 1


@pytest.mark.parametrize("text", ["a = '</SCRIPT>';", "b = '<!--';", "c = '</script ';"])
def test_a_script_that_would_end_its_element_is_not_inlined(tmp_path, text):
    (tmp_path / "prefetch-run.js").write_text(text)
    with pytest.raises(BadInput, match="prefetch-run.js.*</script or <!--"):
        inline_script(tmp_path, "prefetch-run.js")
    with pytest.raises(BadInput, match="</script or <!--"):
        refuse_script_end(tmp_path, text)
    refuse_script_end(tmp_path, "d = '<\\/script>' + '<' + '!--';")


def test_single_file_bundle_turns_lazy_imports_into_bundled_modules():
    body, exported = transform_module("x.js", 'export async function f() {\n  const m = await import("./matrix.js");\n}\n')
    assert 'import(' not in body and '__lazy("matrix.js")' in body
    assert exported == ["f"]


def test_a_bundle_leaves_out_whole_line_comments_and_keeps_code():
    source = ("// a module's first line\n/**\n * doc\n */\nexport function f() {\n  // inside\n"
              "  return 1; // after code\n}\n/* open */ const a = 2;\n  /* one */\nconst b = '//';\n")
    assert without_comments(source) == ("export function f() {\n  return 1; // after code\n}\n"
                                        "/* open */ const a = 2;\nconst b = '//';\n")
    block_then_code = "/* a\n   b */ const c = 3;\n"
    assert without_comments(block_then_code) == block_then_code


def test_a_module_with_a_template_literal_over_lines_is_bundled_whole():
    source = "// lead\nconst text = `first\n// not a comment\n`;\n"
    assert without_comments(source) == source


@pytest.fixture(scope="module")
def catalog_site(tmp_path_factory):
    """A real run on a task with more checks than a head holds: the no-op policy recorded on
    af-001 (72 checks; real promtool and amtool), exported and served."""
    from contract.paths import TASKS_DIR
    from exporter.export import export_site
    from exporter.serve import serve_in_background
    from recorder.reference_runs import record_reference

    root = tmp_path_factory.mktemp("catalog-site")
    [run_dir] = record_reference([TASKS_DIR / "af-001-slo-onboarding-easy-s1"], root / "runs", jobs=1,
                                 policies=["nop"], progress=False)
    export_site([run_dir], root / "site")
    server, url = serve_in_background(root / "site", port=0, host="127.0.0.1")
    yield root / "site", url, run_dir.name
    server.shutdown()
    server.server_close()


def test_a_large_catalog_draws_the_heads_checks_first_and_the_rest_in_the_task_files_order(page, catalog_site):
    site, url, run_id = catalog_site
    head = json.loads((site / "data" / "run-heads" / f"{run_id}.json").read_bytes())
    task = json.loads((site / "data" / "tasks" / f"{head['task_id']}.json").read_bytes())
    assert 40 <= len(head["task"]["checks"]) < len(task["checks"]) == head["task"]["check_count"]
    held = hold(page, r"/data/tasks/[^/]+\.json$")
    page.goto(f"{url}run.html?run={run_id}", wait_until="domcontentloaded")
    page.wait_for_function("() => performance.getEntriesByName('first-step-rendered').length === 1")
    items = page.locator("#checks-panel li.check")
    drawn = items.evaluate_all("(items) => items.map((li) => [li.dataset.checkId, li.dataset.index, li.dataset.state])")
    state = {"1": "pass", "0": "fail", "-": "na"}
    # the panel's first rows (a window's height of them: more than its first screen, the last one
    # ends below it), in its order; the others wait until in reach
    assert len(drawn) >= 8
    assert items.last.evaluate("(li) => li.getBoundingClientRect().top > window.innerHeight")
    assert drawn == [[c["id"], str(c["index"]), state[head["steps"][0]["checks"][c["index"]]]] for c in head["task"]["checks"]][:len(drawn)]
    failing = [c for c in head["task"]["checks"] if head["steps"][0]["checks"][c["index"]] == "0"]
    assert failing, "the no-op run fails checks from the start"
    first = page.locator(f'#checks-panel li.check[data-check-id="{failing[0]["id"]}"]')
    assert first.locator(".check-detail").inner_text() == head["steps"][0]["failed"].get(failing[0]["id"], "")
    # the filter counts every failing check of the step, not only those of the groups the head holds
    assert page.locator("#checks-fail-count").inner_text() == str(head["steps"][0]["checks"].count("0"))
    assert head["steps"][0]["checks"].count("0") > len(failing), "this run fails checks beyond the head's groups"
    wait_held(page, held)
    held[0].continue_()
    page.wait_for_selector("body[data-ready='1']")
    in_panel_order = [task["checks"][index]["id"] for group in task["panel"] for index in group["checks"]]
    assert in_panel_order[:len(drawn)] == [check_id for check_id, _, _ in drawn]
    ready = items.evaluate_all("(items) => items.map((li) => li.dataset.checkId)")
    assert ready == [check_id for check_id in in_panel_order if check_id in set(ready)]
    for _ in range(len(in_panel_order)):  # scrolled down, every row is drawn, in the panel's order
        # found and scrolled in one step: a placeholder counted first could be drawn (and gone)
        # before a second call reached it
        if not page.evaluate("() => { const more = document.querySelector('#checks-panel li.check-more');"
                             " if (!more) return false; more.scrollIntoView({block: 'nearest'}); return true; }"):
            break
        page.wait_for_timeout(50)
    assert items.evaluate_all("(items) => items.map((li) => li.dataset.checkId)") == in_panel_order
    assert page.locator("#checks-panel section.check-group").evaluate_all(
        "(groups) => groups.map((g) => g.dataset.req)") == [group["req"] or "" for group in task["panel"]]
    assert page.page_errors == []


def test_page_assets_are_kept_in_the_export_cache_and_made_again_when_a_source_changes(tmp_path, monkeypatch):
    import shutil

    from contract.paths import SITE_DIR
    from exporter import bundle

    static = tmp_path / "static"
    shutil.copytree(SITE_DIR / "static", static)
    cache = tmp_path / "cache" / "assets"
    made = bundle.page_assets(static)
    assert bundle.page_assets(static, cache) == made
    assert len(list(cache.glob("*.json"))) == 1

    def refuse(_static):
        raise AssertionError("bundled again although nothing changed")

    monkeypatch.setattr(bundle, "_make_page_assets", refuse)
    assert bundle.page_assets(static, cache) == made
    monkeypatch.undo()
    css = static / "app.css"
    css.write_text(css.read_text(encoding="utf-8") + "\n.added-by-the-test { color: red }\n", encoding="utf-8")
    changed = bundle.page_assets(static, cache)
    assert b"added-by-the-test" in changed["static/app.css"]
    assert len(list(cache.glob("*.json"))) == 1, "only the current set is kept"
    kept = next(cache.glob("*.json"))
    good = kept.read_bytes()
    for damage in (b"{not json", b"{}", b"[1]", b'{"sha256": "x", "files": {}}',
                   good.replace(b"function", b"fUnction", 1)):  # same length, another text
        kept.write_bytes(damage)
        assert bundle.page_assets(static, cache) == changed, f"a damaged cache file ({damage[:20]!r}) is made again"
