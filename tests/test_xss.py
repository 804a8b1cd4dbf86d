"""An XSS corpus (HTML/JS payloads in run and task ids, file names, file contents, tool arguments,
outputs, check labels and families, failure details) executes nothing on the home, run, compare
and gallery pages. CSP is bypassed so that escaping is tested on its own."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from urllib.parse import quote

import pytest
from conftest import fixture_tasks

from exporter.export import export_site
from exporter.minified import JS, minified
from exporter.serve import serve_in_background

pytestmark = pytest.mark.browser

FIXTURE_SITE = Path(__file__).parent / "fixtures" / "site"
PAYLOADS = (
    "<script>window.__pwned=1</script>",
    '<img src=x onerror="window.__pwned=1">',
    '"><svg onload=window.__pwned=1>',
    "'><iframe srcdoc='<script>parent.__pwned=1</script>'></iframe>",
    "javascript:window.__pwned=1",
    "</textarea></title></style><script>window.__pwned=1</script>",
    "{{ 7*7 }}${window.__pwned=1}",
)
ALL = " ".join(PAYLOADS)
NOTICE = minified(Path("file-notice.js"), (Path(__file__).resolve().parents[1] / "site" / "static" / "file-notice.js").read_text(), JS)
TASK_ID = 'task"><img src=x onerror=window.__pwned=1>'
RUN_A = "xss-a<svg onload=window.__pwned=1>"
RUN_B = "xss-b'><img src=x onerror=window.__pwned=1>"

CLEAN = """() => ({
  pwned: window.__pwned ?? null,
  handlers: [...document.querySelectorAll('*')].flatMap((node) => [...node.attributes]
    .filter((attribute) => /^on/i.test(attribute.name)).map((attribute) => `${node.tagName} ${attribute.name}`)),
  // the inline scripts allowed, each by its CSP hash: run.html's own first head script
  // (static/prefetch-run.js) and every page's last body script (static/file-notice.js, its
  // text checked below)
  injected: document.querySelectorAll('img, iframe, object, embed, frame').length + [...document.querySelectorAll('script:not([src])')]
    .filter((script) => !(script.id === 'prefetch-run' && script === document.head.querySelector('script'))
      && !(script.id === 'file-notice' && script.parentElement === document.body
           && script === document.querySelectorAll('script#file-notice')[0])).length,
  notices: [...document.querySelectorAll('script#file-notice')].map((script) => script.textContent),
  javascriptUrls: document.querySelectorAll('[href^="javascript:" i], [src^="javascript:" i]').length,
  scripts: [...document.scripts].filter((script) => script.id !== 'prefetch-run' && script.id !== 'file-notice')
    .map((script) => script.getAttribute('src')),
})"""


def corpus_run(runs: Path, run_id: str, payload_offset: int) -> None:
    target = runs / run_id
    shutil.copytree(runs / "fixture-xss", target)
    summary = json.loads((target / "run.json").read_text())
    summary["run_id"] = run_id
    summary["task"]["id"] = TASK_ID
    summary["checks"][0]["family"] = "Fire" + PAYLOADS[2]
    summary["checks"][0]["label"] = ALL
    summary["requirements"][0]["kind"] = "alert" + PAYLOADS[1]
    (target / "run.json").write_text(json.dumps(summary))
    trajectory = json.loads((target / "trajectory.json").read_text())
    steps = trajectory["steps"]
    steps[1]["tool_calls"][0]["arguments"]["content"] = f"groups: []\n# {ALL}\n"
    steps[1]["observation"]["results"][0]["content"] = f"wrote {PAYLOADS[payload_offset]}\n{ALL}"
    steps[3]["tool_calls"][0]["arguments"]["extra"] = list(PAYLOADS)
    (target / "trajectory.json").write_text(json.dumps(trajectory))


@pytest.fixture(scope="module")
def xss_site(tmp_path_factory):
    root = tmp_path_factory.mktemp("xss")
    shutil.copytree(FIXTURE_SITE, root / "fixture-site")
    runs = root / "fixture-site" / "runs"
    corpus_run(runs, RUN_A, 3)
    corpus_run(runs, RUN_B, 5)
    export_site([runs], root / "site", task_index=fixture_tasks())
    server, url = serve_in_background(root / "site", port=0, host="127.0.0.1")
    yield root / "site", url
    server.shutdown()
    server.server_close()


def assert_clean(page, where: str) -> None:
    state = page.evaluate(CLEAN)
    assert state["pwned"] is None, where
    assert state["handlers"] == [], where
    assert state["injected"] == 0, where
    assert state["notices"] == [NOTICE], where  # the page's own, word for word
    assert state["javascriptUrls"] == 0, where
    assert all(src and ("static/" in src) for src in state["scripts"]), (where, state["scripts"])


@pytest.fixture
def watched(page_without_csp):
    dialogs = []
    page_without_csp.on("dialog", lambda dialog: (dialogs.append(dialog.message), dialog.dismiss()))
    page_without_csp.dialogs = dialogs
    yield page_without_csp
    assert dialogs == []
    assert page_without_csp.page_errors == []


def test_home_page_and_search_execute_nothing(watched, xss_site):
    _, url = xss_site
    watched.goto(url)
    watched.wait_for_selector("body[data-ready='1']")
    assert_clean(watched, "home")
    assert RUN_A in watched.locator("#runs-table").inner_text()
    watched.fill("#search-input", "window onerror")
    watched.press("#search-input", "Enter")
    watched.wait_for_function("() => document.querySelectorAll('#search-results li').length > 0")
    assert_clean(watched, "home search")
    watched.goto(url + "index.html?q=pwned&policy=" + quote(PAYLOADS[1]))
    watched.wait_for_selector("body[data-ready='1']")
    assert_clean(watched, "home filters")


def test_run_page_executes_nothing_on_any_step_or_panel(watched, xss_site):
    _, url = xss_site
    watched.goto(f"{url}run.html?run={quote(RUN_A)}&check=X1-fire-1")
    watched.wait_for_selector("body[data-ready='1']")
    last = int(watched.locator("#step-count").inner_text())
    for n in range(last + 1):
        if n:
            watched.keyboard.press("ArrowRight")
        watched.wait_for_function("(n) => document.querySelector('#step-index').textContent === String(n)", arg=n)
        assert_clean(watched, f"run step {n}")
    text = watched.locator("body").inner_text()
    assert PAYLOADS[0] in text and RUN_A in text
    watched.keyboard.press("?")
    watched.keyboard.press("Escape")
    watched.locator("#matrix-panel").scroll_into_view_if_needed()
    assert_clean(watched, "run panels")


def test_compare_page_executes_nothing(watched, xss_site):
    _, url = xss_site
    watched.goto(f"{url}compare.html?a={quote(RUN_A)}&b={quote(RUN_B)}")
    watched.wait_for_selector("body[data-ready='1']")
    assert_clean(watched, "compare")
    assert RUN_B in watched.locator("body").inner_text()


def test_gallery_pages_execute_nothing(watched, xss_site):
    site, url = xss_site
    pages = sorted(path.relative_to(site).as_posix() for path in (site / "gallery").glob("*.html"))
    assert len(pages) >= 3
    for name in pages:
        watched.goto(url + quote(name))
        assert_clean(watched, name)
    assert any(name.startswith("gallery/family-fire-svg-onload") for name in pages)
