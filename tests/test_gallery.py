"""Failure galleries: static pages by check family and requirement kind, linked to the step that broke."""

from __future__ import annotations

import re
from html.parser import HTMLParser
from pathlib import Path

import pytest
from conftest import fixture_tasks

from exporter.export import export_site
from exporter.gallery import detail_signature, slug
from exporter.gallery_checks import last_turned_red
from exporter.minified import JS, minified

FIXTURE_RUNS = Path(__file__).parent / "fixtures" / "site" / "runs"


NOTICE_TEXT = minified(Path("file-notice.js"), (Path(__file__).resolve().parents[1] / "site" / "static" / "file-notice.js").read_text(), JS)
"""The file notice as the pages inline it: minified (exporter/minified.py)."""
"""The one inline script every page carries (allowed by its CSP hash): the file:// notice."""


class ExampleParser(HTMLParser):
    """Collects the attributes of every failure example (li[data-run-id]) and every <script>."""

    def __init__(self) -> None:
        super().__init__()
        self.examples: list[dict[str, str]] = []
        self.scripts: list[dict[str, str]] = []
        self.groups: list[dict[str, str]] = []

    def handle_starttag(self, tag, attrs):
        values = {name: value or "" for name, value in attrs}
        if tag == "li" and "data-run-id" in values:
            self.examples.append(values)
        if tag == "script" and values != {"id": "file-notice", "data-root": "../"}:
            self.scripts.append(values)
        self._in_notice = tag == "script" and values.get("id") == "file-notice"
        if tag == "section" and "data-signature" in values:
            self.groups.append(values)

    def handle_data(self, data):
        if getattr(self, "_in_notice", False):
            self.notice = getattr(self, "notice", "") + data

    def handle_endtag(self, tag):
        if tag == "script":
            self._in_notice = False


def parse(path: Path) -> ExampleParser:
    parser = ExampleParser()
    parser.feed(path.read_text(encoding="utf-8"))
    return parser


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("gallery-site")
    export_site([FIXTURE_RUNS], out, task_index=fixture_tasks())
    return out


def test_numbers_are_blanked_in_detail_signatures():
    assert detail_signature("expected 0.05 at 73m;  got 0.0421") == "expected # at #m; got #"
    assert detail_signature("got 1e-06") == "got #"


def test_slugs_are_file_safe_and_distinct():
    assert slug("Fire") == "fire"
    assert slug("alert") == "alert"
    odd = slug("<script>/../x")
    assert re.fullmatch(r"[a-z0-9-]+", odd) and odd != slug("script-x")
    assert slug("A b") != slug("a-b")


@pytest.mark.parametrize(
    ("states", "expected"),
    [
        (["1", "1", "0", "0"], 2),
        (["0", "1", "0", "1", "0"], 4),
        (["0", "0", "0"], None),
        (["-", "0", "0"], None),
        (["0", "1", "1", "0"], 3),
        (["", "1", "0"], 2),
    ],
)
def test_last_turned_red(states, expected):
    assert last_turned_red(states) == expected


def test_gallery_has_a_page_per_family_and_kind(site):
    pages = sorted(  # penalty-*.html, outcome-*.html: the episode run's pages (tests/test_gallery_episodes.py)
        p.name for p in (site / "gallery").glob("*.html")
        if not p.name.startswith(("penalty-", "outcome-", "cause-"))
    )
    # the fixture runs were graded before causes: their failures share one cause page
    assert [p.name for p in (site / "gallery").glob("cause-*.html")] == [
        "cause-no-cause-recorded-f7cbf521.html"]
    assert pages == [
        "family-fire.html",
        "family-label.html",
        "family-preservation.html",
        "family-route.html",
        "family-silent.html",
        "family-syntax.html",
        "index.html",
        "kind-alert.html",
        "kind-general.html",
        "kind-route.html",
    ]
    index = (site / "gallery" / "index.html").read_text()
    for page in pages[:-1]:
        if page != "index.html":
            assert f'href="{page}"' in index


def test_example_links_to_the_step_where_the_check_last_turned_red(site):
    examples = parse(site / "gallery" / "family-preservation.html").examples
    assert [(e["data-run-id"], e["data-check-id"], e["data-step"], e["data-never-green"])
            for e in examples] == [("fixture-partial-s1", "pres-1", "2", "0")]
    html = (site / "gallery" / "family-preservation.html").read_text()
    # the blamed step, and its diff hunk that broke the check (issue 15)
    assert 'href="../run.html?run=fixture-partial-s1&amp;step=2&amp;check=pres-1&amp;hunk=0"' in html
    assert "turned red at step 2" in html
    assert "1</strong> of <span data-field=\"runs_with\">2</span> runs" in html


def test_a_check_that_never_passed_says_so(site):
    examples = parse(site / "gallery" / "family-label.html").examples
    assert [(e["data-check-id"], e["data-never-green"], e["data-step"]) for e in examples] == [
        ("A1-label-1", "1", "4")
    ]
    assert "never turned green" in (site / "gallery" / "family-label.html").read_text()


def test_requirement_kind_pages_group_checks_without_requirement_as_general(site):
    examples = parse(site / "gallery" / "kind-general.html").examples
    assert sorted((e["data-run-id"], e["data-check-id"]) for e in examples) == [
        ("fixture-partial-s1", "pres-1"),
        ("fixture-xss", "syntax-1"),
    ]


def test_failure_details_are_escaped_and_pages_carry_the_csp(site):
    for path in (site / "gallery").glob("*.html"):
        html = path.read_text()
        assert "<script>window" not in html and "<img src=x" not in html, path.name
        assert 'http-equiv="Content-Security-Policy"' in html
        assert 'href="../static/app.css"' in html
        parsed = parse(path)
        # nothing but the page's own file notice, word for word, and the site's own live-update
        # bundle (a file of the site: no run text can reach it)
        assert parsed.scripts == [{"type": "module", "src": "../static/bundles/gallery.js"}]
        assert parsed.notice == NOTICE_TEXT
    assert "&lt;script&gt;window.__pwned=1&lt;/script&gt;" in (
        site / "gallery" / "family-syntax.html"
    ).read_text()


@pytest.mark.browser
def test_gallery_example_opens_the_run_at_that_step(page, served_site):
    page.goto(f"{served_site.url}index.html")
    page.click(".site-nav a")
    page.click('#gallery-family-table a:text("Preservation")')
    page.click('li[data-check-id="pres-1"] a')
    page.wait_for_selector("body[data-ready='1']")
    assert page.locator("#step-index").inner_text() == "2"
    selected = page.locator("#checks-panel li.check.selected")
    assert selected.get_attribute("data-check-id") == "pres-1"
    assert selected.get_attribute("data-state") == "fail"
    assert page.page_errors == []
