"""axe-core (axe-playwright-python) finds no serious or critical violation on the viewer's pages:
every rule in the light colour scheme, colour contrast again in the dark one."""

from __future__ import annotations

import pytest
from axe_playwright_python.sync_playwright import Axe

pytestmark = pytest.mark.browser

PAGES = {
    "home": "index.html",
    "run": "run.html?run=fixture-oracle-s1&step=3&check=A1-fire-1",
    "episode run": "run.html?run=fixture-episode-easy&step=2",
    "run's own page": "runs/fixture-partial-s1.html",  # its first step as its HTML writes it
    "compare": "compare.html?a=fixture-oracle-s1&b=fixture-partial-s1",
    "gallery": "gallery/index.html",
}
READY = {"home", "run", "episode run", "compare"}


@pytest.fixture(scope="module")
def axe():
    return Axe()


def serious_violations(axe, page, rules: list[str] | None = None) -> list[str]:
    options = {"resultTypes": ["violations"]}
    if rules:
        options["runOnly"] = rules
    results = axe.run(page, options=options)
    return [
        f"{violation['id']} ({violation['impact']}): {violation['help']} at "
        + "; ".join(str(node["target"]) for node in violation["nodes"][:5])
        for violation in results.response["violations"]
        if violation["impact"] in ("serious", "critical")
    ]


@pytest.mark.parametrize(("scheme", "rules"), [("light", None), ("dark", ["color-contrast"])])
def test_no_serious_or_critical_axe_violation(browser, served_site, axe, scheme, rules):
    context = browser.new_context(viewport={"width": 1280, "height": 900}, color_scheme=scheme)
    context.set_default_timeout(5000)
    try:
        page = context.new_page()
        found = {}
        for name, path in PAGES.items():
            page.goto(served_site.url + path)
            if name in READY:
                page.wait_for_selector("body[data-ready='1']")
            violations = serious_violations(axe, page, rules)
            if violations:
                found[name] = violations
        gallery_page = min((served_site.out_dir / "gallery").glob("family-*.html"))
        page.goto(served_site.url + "gallery/" + gallery_page.name)
        violations = serious_violations(axe, page, rules)
        if violations:
            found["gallery page"] = violations
        assert found == {}
    finally:
        context.close()
