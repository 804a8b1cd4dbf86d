"""Every page is usable at 390 px (a phone): the page itself never scrolls sideways; a table
wider than the screen scrolls inside its own box. Hand-made fixture runs, real Chromium."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.browser

PAGES = ["index.html", "gallery/index.html", "run.html?run=fixture-oracle-s1&step=3", "runs/fixture-partial-s1.html",
         "run.html?run=fixture-episode-easy&step=2", "compare.html?a=fixture-oracle-s1&b=fixture-partial-s1"]


@pytest.mark.parametrize("address", PAGES)
def test_no_page_scrolls_sideways_on_a_phone(page, served_site, address):
    page.set_viewport_size({"width": 390, "height": 844})
    page.goto(served_site.url + address)
    page.wait_for_load_state("networkidle")
    width = page.evaluate("() => document.documentElement.scrollWidth")
    assert width <= 390, (address, width, page.evaluate(
        "() => [...document.querySelectorAll('body *')].filter(e => e.getBoundingClientRect().right > 391)"
        ".slice(0, 5).map(e => e.tagName + '#' + e.id + '.' + e.className)"))
    assert page.page_errors == []
