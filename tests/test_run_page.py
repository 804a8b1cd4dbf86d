"""A run's own page, runs/<id>.html (exporter/run_page.py): its first step written in the HTML
is what the run view draws over it (DOM compared element by element), painted before the run
view's bundle is asked for; deep links to other steps, the episode's page, links to it.
Fixture runs made from tests/fixtures/site (a YAML error failing from the start with roots and
config findings, a failed run with hostile texts, the oracle, the partial and the XSS runs),
real Chromium."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from conftest import FIXTURE_TASK_ROOT, fixture_tasks

import exporter.export_shared as shared
from contract.task_roots import TaskIndex
from exporter.export import export_site
from exporter.js_text import clip, encode_uri_component, form_encode, js_string, to_fixed
from exporter.run_page import first_screen, format_delta, format_reward
from exporter.serve import serve_in_background

FIXTURE_RUNS = Path(__file__).parent / "fixtures" / "site" / "runs"
CATALOG = ["A1-fire-1", "A1-silent-1", "A1-label-1", "R1-route-1", "R1-route-2", "pres-1", "syntax-1"]
YAML_ERROR = "rules/a.yml line 4 does not load: yaml: line 4: mapping values are not allowed in this context"
UNDEFINED = "no loadable rule file defines CheckoutErrors"
START_FAILURES = {
    "syntax-1": {"kind": "syntax-error", "summary": YAML_ERROR, "facts": {}},
    "A1-fire-1": {"kind": "alert-undefined", "summary": UNDEFINED, "facts": {}},
    "A1-label-1": {"kind": "alert-undefined", "summary": UNDEFINED, "facts": {}},
    "R1-route-1": {"kind": "route-overmatched", "summary": "route.routes[0] {} -> pager matched {alertname=X}"},
}
HOSTILE = "<img src=x onerror=alert(1)> \U0001F600 " + "\u00e9" * 700
ALERTING = ["fixture-oracle-s1", "fixture-partial-s1", "fixture-xss", "fixture-yaml-start", "fixture-failed-start",
            "fixture-odd-start"]
# texts and numbers the HTML parser or Python would write otherwise than the run view's JS
ODD_FAILURES = {
    "syntax-1": {"kind": "syntax-error", "summary": "rules/a\ufeffb.yml does not load: yaml\r\nline 2", "facts": {}},
    "A1-fire-1": {"kind": "alert-undefined", "summary": "no loadable rule file defines Foo\ufeffBar", "facts": {}},
    "A1-label-1": {"kind": "alert-undefined", "summary": "no loadable rule file defines Foo\ufeffBar", "facts": {}},
    "R1-route-1": {"kind": "rules-unloaded", "summary": "x\x1fy does not load", "facts": {}},
    "R1-route-2": {"kind": "rules-unloaded", "summary": "x\x1fy does not load", "facts": {}},
}

TREE = """(selector) => {
  // an element as [tag, {attributes but style}, children]; text merged, empty text and the
  // template's line breaks between elements left out (neither is drawn)
  const walk = (node) => {
    if (node.nodeType === Node.TEXT_NODE) return node.data === "" ? null : node.data;
    if (node.nodeType !== Node.ELEMENT_NODE) return null;
    const attrs = {};
    for (const a of node.attributes) if (a.name !== "style") attrs[a.name] = a.value;
    const kids = [];
    for (const child of (node.tagName === "TEMPLATE" ? node.content.childNodes : node.childNodes)) {
      const value = walk(child);
      if (value === null) continue;
      if (typeof value === "string" && typeof kids[kids.length - 1] === "string") kids[kids.length - 1] += value;
      else kids.push(value);
    }
    return [node.tagName.toLowerCase(), attrs, kids.filter((k) => typeof k !== "string" || !(k.includes("\\n") && k.trim() === ""))];
  };
  return { view: walk(document.querySelector(selector)), title: document.title, crumb: document.getElementById("crumb-run").textContent };
}"""


def _start_run(runs: Path, name: str, status: str = "complete", error: str | None = None,
               failures: dict | None = None, **fields) -> None:
    """fixture-partial-s1 as run ``name`` (run.json ``fields`` set), failing from its initial
    state with ``failures`` (START_FAILURES: a YAML error, roots), a config finding and a
    hostile detail."""
    failures = START_FAILURES if failures is None else failures
    folder = runs / name
    shutil.copytree(FIXTURE_RUNS / "fixture-partial-s1", folder)
    summary = json.loads((folder / "run.json").read_text())
    summary.update(run_id=name, status=status, error=error, **fields)
    (folder / "run.json").write_text(json.dumps(summary))
    trajectory = json.loads((folder / "trajectory.json").read_text())
    grade = trajectory["steps"][0]["extra"]["grade"]
    grade["checks"] = "".join("0" if check in failures else "1" for check in CATALOG)
    grade["failed"] = {check: f"expected it to pass; got: {why['summary']}" for check, why in failures.items()}
    grade["failed"]["R1-route-1"] = HOSTILE + "\r\nafter a carriage return"
    grade["causes"] = failures
    grade["reward"] = grade["delta"] = -0.0
    grade["findings"] = [{"kind": "unused-receiver", "where": "receivers[3]", "text": "receiver <b>x</b> is named by no route"}]
    grade["version_differences"] = [{"check": "I1-inhibit-1", "rule": 0, "verdicts": {"0.25": True, "0.28": False}}]
    (folder / "trajectory.json").write_text(json.dumps(trajectory))


@pytest.fixture(scope="module")
def own_pages(tmp_path_factory):
    root = tmp_path_factory.mktemp("run-pages")
    runs = root / "runs"
    runs.mkdir()
    for name in ("fixture-oracle-s1", "fixture-partial-s1", "fixture-xss", "fixture-episode-easy"):
        shutil.copytree(FIXTURE_RUNS / name, runs / name)
    _start_run(runs, "fixture-yaml-start")
    _start_run(runs, "fixture-failed-start", status="failed", error=HOSTILE + "\r\n\u2028end")
    _start_run(runs, "fixture-odd-start", failures=ODD_FAILURES, seed=2**62 + 1)
    odd = json.loads((runs / "fixture-odd-start" / "run.json").read_text())
    odd["final"]["reward"] = 1e25  # toFixed writes String() from 1e21 up
    (runs / "fixture-odd-start" / "run.json").write_text(json.dumps(odd))
    export_site([runs], root / "site", task_index=fixture_tasks())
    server, url = serve_in_background(root / "site", port=0, host="127.0.0.1")
    yield root / "site", url
    server.shutdown()
    server.server_close()


def _common_rows(a, b):
    """Both trees with every check list cut to the rows both draw (li.check-more left out): the
    page writes up to 24 rows, the run view as many as a window's height holds."""
    if isinstance(a, str) or isinstance(b, str) or a[0] != b[0] or len(a[2]) != len(b[2]) and a[0] != "ul":
        return a, b
    if a[0] == "ul" and "check-list" in a[1].get("class", ""):
        rows = [[k for k in tree[2] if not (isinstance(k, list) and "check-more" in k[1].get("class", ""))] for tree in (a, b)]
        n = min(len(rows[0]), len(rows[1]))
        return [a[0], a[1], rows[0][:n]], [b[0], b[1], rows[1][:n]]
    pairs = [_common_rows(x, y) for x, y in zip(a[2], b[2])]
    return [a[0], a[1], [p[0] for p in pairs]], [b[0], b[1], [p[1] for p in pairs]]


def _differences(a, b, path="#run-view"):
    if isinstance(a, str) or isinstance(b, str):
        if a != b:
            yield f"{path}: {a!r} != {b!r}"
        return
    where = f"{path}>{a[0]}{'#' + a[1]['id'] if 'id' in a[1] else ''}"
    if a[0] != b[0] or a[1] != b[1]:
        yield f"{where}: <{a[0]} {a[1]}> != <{b[0]} {b[1]}>"
    if len(a[2]) != len(b[2]):
        yield f"{where}: {len(a[2])} children != {len(b[2])}"
        return
    for x, y in zip(a[2], b[2]):
        yield from _differences(x, y, where)


def _page_only(browser, url: str, name: str) -> dict:
    """The run's own page as its HTML draws it (the run view's bundle never arrives)."""
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    page = context.new_page()
    page.route("**/static/bundles/**", lambda route: route.abort())
    page.goto(f"{url}runs/{name}.html")
    tree = page.evaluate(TREE, "#run-view")
    marks = page.evaluate("() => performance.getEntriesByName('first-step-rendered').length")
    context.close()
    return {**tree, "marks": marks}


def _drawn_over(browser, url: str, name: str) -> dict:
    """The same page once the run view has drawn its first step over it from the head (the
    task file and the whole run file held back, so it stays there)."""
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    page.route("**/data/runs/**", lambda route: None)
    page.route("**/data/tasks/**", lambda route: None)
    page.goto(f"{url}runs/{name}.html")
    page.wait_for_selector("#run-view[data-loaded='head']")
    tree = page.evaluate(TREE, "#run-view")
    context.close()
    return {**tree, "errors": errors}


@pytest.mark.browser
@pytest.mark.parametrize("name", ALERTING)
def test_the_first_step_in_the_html_is_what_the_run_view_draws_over_it(browser, own_pages, name):
    _, url = own_pages
    html, drawn = _page_only(browser, url, name), _drawn_over(browser, url, name)
    assert html["marks"] == 1 and drawn["errors"] == []
    assert html["view"][1].pop("data-loaded") == "page" and drawn["view"][1].pop("data-loaded") == "head"
    assert (html["title"], html["crumb"]) == (drawn["title"], drawn["crumb"]) and name in html["title"]
    a, b = _common_rows(html["view"], drawn["view"])
    assert list(_differences(a, b)) == []
    assert len(a[2]) > 3 and "li" in json.dumps(a)  # the trees hold the view, rows included


@pytest.mark.browser
def test_the_page_shows_its_first_step_with_roots_and_findings_without_the_bundle(browser, own_pages):
    _, url = own_pages
    context = browser.new_context(viewport={"width": 1280, "height": 800})
    page = context.new_page()
    requested: list[str] = []
    page.on("request", lambda request: requested.append(request.url))
    page.route("**/static/bundles/**", lambda route: None)  # held: never answered
    page.goto(f"{url}runs/fixture-yaml-start.html", wait_until="domcontentloaded")
    page.wait_for_function("() => performance.getEntriesByName('first-contentful-paint').length > 0"
                           " && performance.getEntriesByType('resource').some((r) => r.name.includes('/data/run-heads/'))")
    assert page.locator("#step-tool").inner_text() == "initial state"
    assert page.locator("#step-diff .no-change").is_visible()
    assert page.locator("#checks-roots-list button").all_inner_texts() == [
        "rules/a.yml does not load \u00b7 3 checks"]
    assert page.locator("#checks-fail-count").inner_text() == "4"
    assert page.locator("li.check[data-check-id='R1-route-1'] .check-detail").inner_text() == clip(HOSTILE, 600)
    assert page.locator("#step-config li").count() == 2 and page.locator("#step-config b").count() == 0
    assert page.locator("img").count() == 0
    # painted with the bundle still on its way; no stylesheet asked for (inlined); the bundle and
    # the head asked for once the step was in the document (after its frame: static/run-page-start.js)
    assert not any(url_.endswith(".css") for url_ in requested)
    assert any("/static/bundles/run.js" in url_ for url_ in requested)
    timing = page.evaluate("""() => ({
      mark: performance.getEntriesByName('first-step-rendered')[0].startTime,
      head: performance.getEntriesByType('resource').find((r) => r.name.includes('/data/run-heads/')).startTime })""")
    assert timing["head"] > timing["mark"]
    # Enter in the run search before the bundle is in: no submission, the page stays
    page.evaluate("() => { window.stayed = true; }")
    page.fill("#run-search", "rules")
    page.press("#run-search", "Enter")
    page.wait_for_timeout(300)
    assert page.evaluate("() => window.stayed === true") and "?" not in page.url
    context.close()


@pytest.mark.browser
def test_the_run_view_takes_over_and_its_addresses_name_the_page(page, own_pages):
    _, url = own_pages
    page.goto(f"{url}runs/fixture-partial-s1.html")
    page.wait_for_selector("body[data-ready='1']")
    assert page.locator("#step-permalink").get_attribute("href") == "fixture-partial-s1.html?step=0"
    assert page.locator("#compare-link").get_attribute("href") == "../compare.html?a=fixture-partial-s1"
    page.click("#btn-next")
    page.wait_for_function("() => location.search === '?step=1'")
    assert page.evaluate("location.pathname").endswith("/runs/fixture-partial-s1.html")
    assert page.page_errors == []


@pytest.mark.browser
def test_a_deep_link_to_another_step_never_shows_the_first(browser, own_pages):
    _, url = own_pages
    context = browser.new_context(viewport={"width": 1280, "height": 800})
    held = context.new_page()
    held.route("**/static/bundles/**", lambda route: route.abort())
    held.goto(f"{url}runs/fixture-partial-s1.html?step=2")
    assert held.evaluate("document.documentElement.classList.contains('prerender-stale')")
    assert not held.locator("#run-view").is_visible() and held.locator("#run-loading").is_visible()
    page = context.new_page()
    page.goto(f"{url}runs/fixture-partial-s1.html?step=2&check=R1-route-1")
    page.wait_for_selector("body[data-ready='1']")
    assert page.locator("#step-index").inner_text() == "2" and page.locator("#run-view").is_visible()
    assert page.locator("li.check.selected").get_attribute("data-check-id") == "R1-route-1"
    context.close()


@pytest.mark.browser
def test_an_episode_page_is_the_run_view_drawing_it(page, own_pages):
    site, url = own_pages
    html = (site / "runs" / "fixture-episode-easy.html").read_text()
    assert "data-prerendered" not in html and 'blocking="render"' in html
    page.goto(f"{url}runs/fixture-episode-easy.html")
    page.wait_for_selector("body[data-ready='1']")
    assert page.locator("#episode-board").is_visible()
    assert page.page_errors == []


@pytest.mark.browser
def test_home_rows_open_the_runs_own_pages(page, own_pages):
    _, url = own_pages
    page.goto(f"{url}index.html")
    page.wait_for_selector("body[data-ready='1']")
    hrefs = page.locator("#runs-table td[data-field='run_id'] a").evaluate_all("(links) => links.map((a) => a.getAttribute('href'))")
    assert "runs/fixture-oracle-s1.html" in hrefs and all(h.startswith("runs/") for h in hrefs)


def test_every_run_has_its_page_and_only_alerting_first_steps_are_written(own_pages):
    site, _ = own_pages
    pages = sorted(path.stem for path in (site / "runs").glob("*.html"))
    assert pages == sorted([*ALERTING, "fixture-episode-easy"])
    for name in ALERTING:
        html = (site / "runs" / f"{name}.html").read_text()
        assert 'data-prerendered="0"' in html and "<style>" in html and "HOSTILE" not in html
    assert "<img src=x" not in (site / "runs" / "fixture-failed-start.html").read_text()


def test_numbers_and_texts_are_written_as_the_run_view_writes_them():
    # Number.prototype.toFixed rounds a tie away from zero on the exact binary value
    assert format_reward(0.03125) == "0.0313" and format_reward(-0.03125) == "-0.0313"
    assert format_reward(1) == "1.0000" and format_reward(None) == "\u2014" and format_reward(True) == "\u2014"
    assert format_delta(-0.042) == "\u22120.0420" and format_delta(0) == "\u00b10.0000" and format_delta(0.5) == "+0.5000"
    assert js_string(2.0) == "2" and js_string(0.5) == "0.5" and js_string(None) == "null"
    # clip counts UTF-16 code units, as String.prototype.slice, and cuts no pair in two
    assert clip("\U0001F600" * 3, 4) == "\U0001F600" * 2 + "\u2026" and clip("abc", 3) == "abc"
    assert clip("a\U0001F600", 2) == "a\u2026"
    # Number::toString and toFixed past their plain ranges, -0, integers past 2**53
    assert [js_string(v) for v in (1e21, 1e-7, 1e-6, 1.5e300, 2**62 + 1, 123.0, -0.0, 0.1 + 0.2)] == [
        "1e+21", "1e-7", "0.000001", "1.5e+300", "4611686018427388000", "123", "0", "0.30000000000000004"]
    assert to_fixed(1e25, 4) == "1e+25" and to_fixed(-0.0, 4) == "0.0000" and to_fixed(-0.00001, 4) == "-0.0000"
    assert to_fixed(1e20, 4) == "100000000000000000000.0000"
    assert encode_uri_component("a b(c)'~*?%") == "a%20b(c)'~*%3F%25" and form_encode("a b~*") == "a+b%7E*"


def test_runs_whose_first_step_the_page_does_not_write():
    head = {"kind": "alerting", "run_id": "r", "task": {"check_count": 1}, "steps": [{"n": 0, "llm": {"x": 1}}]}
    assert first_screen(head) is None
    assert first_screen({**head, "kind": "episode", "steps": [{"n": 0}]}) is None
    assert first_screen({**head, "steps": []}) is None


def test_an_incremental_export_renders_only_the_pages_of_new_or_changed_heads(tmp_path, monkeypatch):
    runs = tmp_path / "runs"
    for name in ("fixture-oracle-s1", "fixture-partial-s1"):
        shutil.copytree(FIXTURE_RUNS / name, runs / name)
    site = tmp_path / "site"
    export_site([runs], site, task_index=TaskIndex([FIXTURE_TASK_ROOT]))
    rendered: list[str] = []
    real = shared.render_run_page
    monkeypatch.setattr(shared, "render_run_page", lambda environment, templates, head, *rest: (
        rendered.append(head["run_id"]), real(environment, templates, head, *rest))[1])
    export_site([runs], site, task_index=TaskIndex([FIXTURE_TASK_ROOT]))
    assert rendered == []
    page = (site / "runs" / "fixture-oracle-s1.html").read_bytes()
    _start_run(runs, "fixture-yaml-start")
    export_site([runs], site, task_index=TaskIndex([FIXTURE_TASK_ROOT]))
    assert rendered == ["fixture-yaml-start"]
    assert (site / "runs" / "fixture-oracle-s1.html").read_bytes() == page
    shutil.rmtree(runs / "fixture-yaml-start")
    export_site([runs], site, task_index=TaskIndex([FIXTURE_TASK_ROOT]))
    assert not (site / "runs" / "fixture-yaml-start.html").exists()


def _head(**step) -> dict:
    """A head of one alerting run with one check (A1-x, failing), its initial state ``step``."""
    return {
        "kind": "alerting", "run_id": "r", "task_id": "t", "policy": "p", "model": None, "seed": 1, "final": None,
        "status": "complete", "error": None, "step_count": 3, "last_total": 0.5,
        "task": {"title": "T", "instruction": "\ndo it", "check_count": 1,
                 "requirements": [{"id": "", "title": "no id", "kind": "alert", "weight": 2.5},
                                  {"id": "A1", "title": "t\ufeff", "kind": None, "weight": None}],
                 "panel": [{"req": "A1", "checks": [0]}],
                 "checks": [{"index": 0, "id": "A1-x", "req": "A1", "family": "Fire", "label": "x"}]},
        "steps": [{"n": 0, "source": "user", "graded": True, "reward": 0.0, "total": 0.0, "checks": "0",
                   "changed": [], "failed": {}, "causes": {}, **step}],
    }


def test_what_the_page_writes_of_odd_first_steps():
    first = first_screen(_head(output="a\n" * 4))
    # checks-filter.js requirements(): the select's "all" option holds the id "" already; trim()
    assert first["checks"]["requirements"] == [("A1", "A1 t")]
    assert first["detail"]["output_long"] is False and first_screen(_head(output="a\n" * 5))["detail"]["output_long"]
    assert first_screen(_head(output="a" * 361))["detail"]["output_long"]
    # a <pre>'s first line break is eaten by the parser: written twice
    assert first["header"]["instruction"] == "\n\ndo it"
    # a carriage return kept as a reference, a NUL (which HTML cannot carry) leaves the page to the view
    assert str(first_screen(_head(output="a\r\nb<"))["detail"]["output"][0]) == "a&#13;\nb&lt;"
    assert first_screen(_head(output="a\x00b")) is None
