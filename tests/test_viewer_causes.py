"""The run view's causes, blame links, permalinks and copy-as-Markdown (issue 15), on a freshly recorded partial run in Chromium, with the axe checks the other pages pass."""

from __future__ import annotations

import subprocess
import sys

import pytest
from axe_playwright_python.sync_playwright import Axe

from tests.conftest import CHROMIUM  # noqa: F401  (the browser fixture launches it)
from tests.test_accessibility import serious_violations

pytestmark = pytest.mark.browser
CAUSES_RUNS: list = []  # the runs folder the site fixture recorded


@pytest.fixture(scope="module")
def causes_site(tmp_path_factory):
    """A site of one partial run of af-011 recorded now (its steps carry causes), served."""
    from exporter.export import export_site
    from exporter.serve import serve_in_background

    runs = tmp_path_factory.mktemp("runs")
    for policy in ("partial", "oracle"):
        done = subprocess.run([sys.executable, "-m", "alertforge.cli", "record", "--task",
                               "af-011-alert-storm-cleanup-hard-s1", "--policy", policy, "--out",
                               str(runs)], capture_output=True, text=True, check=False, timeout=300)
        assert done.returncode == 0, done.stderr
    (run,) = [r for r in runs.iterdir() if "__partial__" in r.name]
    out = tmp_path_factory.mktemp("site")
    export_site([runs], out)
    CAUSES_RUNS.append(runs)
    server, url = serve_in_background(out, port=0, host="127.0.0.1")
    yield url, run.name
    server.shutdown()
    server.server_close()


def _open(page, url: str) -> None:
    page.goto(url)
    page.wait_for_selector("body[data-ready='1']")


def test_failing_checks_show_cause_and_a_blame_link_that_opens_the_hunk(page, causes_site):
    url, run_id = causes_site
    _open(page, f"{url}run.html?run={run_id}&step=10")
    causes = page.locator("li.check[data-state='fail'] .check-cause:not([hidden])")
    failing = page.locator("li.check[data-state='fail']")
    assert causes.count() == failing.count() > 0
    kinds = set(page.eval_on_selector_all(
        "li.check[data-state='fail'] .check-cause", "nodes => nodes.map(n => n.dataset.causeKind)"))
    assert "" not in kinds and "none" not in kinds
    link = page.locator("li.check[data-state='fail'] a.blame-link[data-step='7']").first
    hunk = link.get_attribute("data-hunk")
    assert hunk != "" and "hunk=" in link.get_attribute("href")
    link.click()
    page.wait_for_selector(f"#step-diff tr.hunk-highlight[data-hunk='{hunk}']")
    assert page.locator("#step-index").text_content() == "7"
    page.wait_for_timeout(200)  # the address is written at most every 80 ms
    assert "hunk=" in page.url
    assert page.page_errors == []


def test_the_inspector_shows_why_a_check_fails_with_the_graders_facts_and_the_blame(page, causes_site):
    url, run_id = causes_site
    _open(page, f"{url}run.html?run={run_id}&step=10")
    failing = page.locator("li.check[data-state='fail']").first
    check_id = failing.get_attribute("data-check-id")
    panel_kind = failing.locator(".check-cause").get_attribute("data-cause-kind")
    panel_text = failing.locator(".cause-text").text_content()
    failing.click()
    box = page.locator("#inspector-cause")
    assert box.is_visible()
    assert page.locator("#inspector-cause-kind").text_content() == panel_kind
    assert page.locator("#inspector-cause-summary").text_content() == panel_text
    facts = page.locator("#inspector-cause-facts dl.cause-facts > dt")
    assert facts.count() > 0, "the grader's facts are drawn"
    blame = page.locator("#inspector-blame")
    panel_blame = failing.locator("a.blame-link")
    assert blame.text_content() == panel_blame.text_content()
    step = panel_blame.get_attribute("data-step")
    blame.click()
    page.wait_for_function(f"document.getElementById('step-index').textContent === '{step}'")
    assert page.locator("#check-inspector").is_visible()
    assert page.locator("#inspector-check-id").text_content() == check_id
    passing = page.locator("li.check[data-state='pass']").first
    passing.click()
    assert page.locator("#inspector-cause").is_hidden()
    assert page.page_errors == []


def test_permalinks_to_a_cause_and_a_hunk_highlight_them_when_opened(page, causes_site):
    url, run_id = causes_site
    _open(page, f"{url}run.html?run={run_id}&step=10")
    check_id = page.locator("li.check[data-state='fail']").first.get_attribute("data-check-id")
    page.locator(f"li.check[data-check-id='{check_id}']").click()
    cause_link = page.locator("#cause-permalink")
    assert cause_link.is_visible() and "cause=1" in cause_link.get_attribute("href")
    _open(page, url + cause_link.get_attribute("href"))
    assert page.locator(f"li.check[data-check-id='{check_id}'] .check-cause.highlight").is_visible()
    _open(page, f"{url}run.html?run={run_id}&step=7&hunk=0")
    assert page.locator("#step-diff tr.hunk-highlight[data-hunk='0']").count() > 0
    step_link = page.locator("#step-permalink").get_attribute("href")
    assert "step=7" in step_link and "hunk" not in step_link


def test_copy_as_markdown_puts_the_run_with_causes_on_the_clipboard(browser, causes_site):
    url, run_id = causes_site
    context = browser.new_context(permissions=["clipboard-read", "clipboard-write"])
    try:
        page = context.new_page()
        _open(page, f"{url}run.html?run={run_id}&step=10")
        page.click("#copy-markdown")
        page.wait_for_selector("#copy-markdown-status[data-chars]")
        text = page.evaluate("navigator.clipboard.readText()")
        assert text.startswith(f"# Run {run_id}")
        failing = text.split("## Failing checks at the last step", 1)[1]
        assert "- cause (" in failing and "- blame: step 7" in failing
    finally:
        context.close()


@pytest.mark.parametrize(("scheme", "rules"), [("light", None), ("dark", ["color-contrast"])])
def test_cause_and_blame_panels_pass_axe(browser, causes_site, scheme, rules):
    url, run_id = causes_site
    context = browser.new_context(viewport={"width": 1280, "height": 900}, color_scheme=scheme)
    try:
        page = context.new_page()
        _open(page, f"{url}run.html?run={run_id}&step=7&hunk=0&check=P1.silent.outage%4035m&cause=1")
        assert serious_violations(Axe(), page, rules) == []
        page.goto(f"{url}gallery/index.html")
        cause_page = page.locator("a[href*='cause-']").first.get_attribute("href")
        page.goto(f"{url}gallery/{cause_page.split('/')[-1]}")
        assert serious_violations(Axe(), page, rules) == []
    finally:
        context.close()


def test_compare_shows_causes_and_blame_links_of_the_failing_side(page, causes_site):
    url, run_id = causes_site
    (oracle,) = [r.name for r in CAUSES_RUNS[0].iterdir() if "__oracle__" in r.name]
    _open(page, f"{url}compare.html?a={run_id}&b={oracle}")
    rows = page.locator("#compare-checks tr[data-a='fail']")
    assert rows.count() > 0
    assert rows.locator(".check-cause").count() == rows.count()
    hrefs = [link.get_attribute("href") for link in rows.locator("a.blame-link").all()]
    assert any("step=7" in h and "hunk=" in h for h in hrefs)


def test_single_file_export_shows_causes_and_blame(page_without_csp, causes_site, tmp_path):
    from exporter.single_file import export_single_file

    _, run_id = causes_site
    out = tmp_path / "one.html"
    export_single_file(CAUSES_RUNS, out)
    page = page_without_csp
    page.goto(f"{out.as_uri()}?page=run&run={run_id}&step=10")
    page.wait_for_selector("body[data-ready='1']")
    assert page.locator("li.check[data-state='fail'] .check-cause:not([hidden])").count() > 0
    link = page.locator("li.check[data-state='fail'] a.blame-link[data-step='7']").first
    link.click()
    page.wait_for_selector("#step-diff tr.hunk-highlight")


def test_a_hostile_cause_in_a_run_file_is_text_and_cut_and_the_page_stays_quick(page, tmp_path):
    """A stranger's run can hold any cause: markup, a 300,000-character word (laid out whole it
    froze the page for 43 s), 5,000 fact keys (300,000 nodes), a __proto__ key. Found by a
    breaker session; fixture-partial-s1 exported with such a cause written into its run file."""
    import json

    from exporter.export import export_site
    from exporter.serve import serve_in_background
    from tests.conftest import FIXTURE_RUNS, fixture_tasks

    site = tmp_path / "site"
    export_site([FIXTURE_RUNS], site, task_index=fixture_tasks())
    path = site / "data" / "runs" / "fixture-partial-s1.json"
    run = json.loads(path.read_text())
    run["steps"][1]["causes"] = {"A1-label-1": {
        "kind": "<img src=x onerror=window.__pwn=1>", "summary": "x" * 300_000,
        "why": "<script>window.__pwn=2</script>",
        "facts": {"many": {f"key_{i}": i for i in range(5000)}, "path": ["y" * 100_000],
                  "__proto__": {"polluted": 1}, "labels": {"a": "<b>", "c": "z" * 5000}}}}
    path.write_text(json.dumps(run))
    server, url = serve_in_background(site, port=0, host="127.0.0.1")
    try:
        _open(page, f"{url}run.html?run=fixture-partial-s1&step=4&check=A1-label-1")
        assert page.locator("#inspector-cause").is_visible()
        kind = page.locator("#inspector-cause-kind").text_content()
        assert kind.startswith("<img src=x") and len(kind) <= 81
        assert len(page.locator("#inspector-cause-summary").text_content()) <= 4001
        assert len(page.locator("li.check[data-check-id='A1-label-1'] .cause-text").text_content()) <= 601
        many = page.locator("#inspector-cause-facts dl.cause-facts dl.cause-facts").first
        assert many.locator(":scope > dt").count() == 13  # 12 keys and "and 4988 more"
        assert "and 4988 more" in many.text_content()
        assert len(page.locator("#inspector-cause-facts pre.cause-path").text_content()) <= 401
        assert page.evaluate("() => [window.__pwn, ({}).polluted]") == [None, None]
        assert page.page_errors == []
    finally:
        server.shutdown()
        server.server_close()
