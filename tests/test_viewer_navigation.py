"""Keyboard navigation, play/pause with speed, the help overlay and the colour scheme, in Chromium."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.browser


def open_run(page, site, query: str) -> None:
    page.goto(f"{site.url}run.html?{query}")
    page.wait_for_selector("body[data-ready='1']")


def step_index(page) -> str:
    return page.locator("#step-index").inner_text()


def wait_step(page, n: int) -> None:
    page.wait_for_function("(n) => document.querySelector('#step-index').textContent === String(n)", arg=n)


def test_j_and_k_move_like_the_arrows(page, served_site):
    open_run(page, served_site, "run=fixture-oracle-s1")
    page.keyboard.press("j")
    page.keyboard.press("j")
    wait_step(page, 2)
    page.keyboard.press("k")
    wait_step(page, 1)
    page.keyboard.press("End")
    wait_step(page, 5)
    page.keyboard.press("j")
    assert step_index(page) == "5"
    page.keyboard.press("Home")
    wait_step(page, 0)
    page.keyboard.press("k")
    assert step_index(page) == "0"
    page.wait_for_function("() => location.search.includes('step=0')")


def test_space_plays_to_the_end_and_pauses(page, served_site):
    open_run(page, served_site, "run=fixture-oracle-s1&step=2")
    page.select_option("#play-speed", "10")
    page.keyboard.press("Space")
    assert page.locator("#btn-play").get_attribute("aria-pressed") == "true"
    wait_step(page, 5)
    page.wait_for_function("() => document.querySelector('#btn-play').getAttribute('aria-pressed') === 'false'")
    page.locator("#btn-first").click()
    page.locator("#btn-play").click()
    page.keyboard.press("Space")
    assert page.locator("#btn-play").get_attribute("aria-pressed") == "false"
    paused_at = step_index(page)
    page.wait_for_timeout(500)
    assert step_index(page) == paused_at != "5", "no tick after the pause (10 steps/s)"


def test_question_mark_opens_help_and_escape_closes_it(page, served_site):
    open_run(page, served_site, "run=fixture-oracle-s1&step=1")
    overlay = page.locator("#help-overlay")
    assert overlay.is_hidden()
    page.keyboard.press("?")
    assert overlay.is_visible()
    assert page.evaluate("() => document.activeElement.id") == "help-close"
    page.keyboard.press("j")
    assert step_index(page) == "1", "keys do not move steps behind the dialog"
    page.keyboard.press("Escape")
    assert overlay.is_hidden()
    page.click("#btn-help")
    assert overlay.is_visible()
    page.click("#help-close")
    assert overlay.is_hidden()


@pytest.mark.parametrize(("scheme", "dark"), [("light", False), ("dark", True)])
def test_theme_follows_prefers_color_scheme(browser, served_site, scheme, dark):
    context = browser.new_context(color_scheme=scheme)
    try:
        page = context.new_page()
        open_run(page, served_site, "run=fixture-oracle-s1")
        background = page.evaluate("() => getComputedStyle(document.body).backgroundColor")
        channels = [int(v) for v in background[background.index("(") + 1:-1].split(",")[:3]]
        assert (sum(channels) / 3 < 80) is dark, background
    finally:
        context.close()
