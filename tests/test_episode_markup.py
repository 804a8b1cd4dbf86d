"""The episode board and score aside come with the episode chunk, built from data made of their
partials (scripts/episode_markup.py): run.html holds only their empty roots."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def test_the_markup_module_is_current_with_the_partials():
    done = subprocess.run([sys.executable, str(ROOT / "scripts" / "episode_markup.py"), "--check"],
                          capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr


def test_the_tree_is_the_partial_parsed(tmp_path, monkeypatch):
    sys.path.insert(0, str(ROOT / "scripts"))
    import episode_markup

    (tmp_path / "_p.html").write_text('<aside id="x" class="a" hidden>\n  {# note #}\n  <p>R&rsquo;s <b>t</b></p>\n'
                                      '  <template id="t"><table><tbody></tbody></table></template>\n<br>\n</aside>\n')
    monkeypatch.setattr(episode_markup, "TEMPLATES", tmp_path)
    assert episode_markup.tree("_p.html") == ["aside", {"id": "x", "class": "a", "hidden": ""}, "\n ",
                                              ["p", None, "R\u2019s ", ["b", None, "t"]], "\n",
                                              ["template", {"id": "t"}, ["table", None, ["tbody", None]]], "\n",
                                              ["br", None], "\n"]
    (tmp_path / "_bad.html").write_text("<div><p></div>")
    with pytest.raises(ValueError, match="</div> does not close <p>"):
        episode_markup.tree("_bad.html")


@pytest.mark.browser
def test_an_alerting_page_holds_no_board_and_an_episode_builds_it(served_site, page):
    html = (served_site.out_dir / "run.html").read_text()
    assert '<section id="episode-board" hidden></section>' in html and "episode-services" not in html
    page.goto(f"{served_site.url}run.html?run=fixture-episode-easy")
    page.wait_for_selector("body[data-ready='1']")
    assert page.locator("#episode-board #episode-services-panel").count() == 1
    assert page.locator("#episode-score.panel.episode-score #episode-step-reward").is_visible()
    assert page.locator("#episode-board").count() == page.locator("#episode-score").count() == 1
    assert page.page_errors == []


@pytest.mark.browser
def test_an_episode_whose_stylesheet_fails_still_draws_its_board(served_site, page):
    # a stylesheet that fails (here at once: the inlined script's link errs before the board's
    # modules ask for it) is not waited for
    page.route("**/static/episode.css", lambda route: route.fulfill(status=404, body="gone"))
    page.goto(f"{served_site.url}run.html?run=fixture-episode-easy")
    page.wait_for_selector("body[data-ready='1']", timeout=15_000)
    assert page.locator("#episode-board #episode-services-panel").count() == 1
    assert page.locator("link#episode-styles").get_attribute("data-state") == "done"
