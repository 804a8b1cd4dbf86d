"""The episode-native pages in real Chromium: run view, dual-agent lanes, compare and gallery.

The site is exported from real ARIA transcripts (tests/fixtures/aria-2026-12/, SOURCE.md, and
examples/aria-episodes/episodes/); expected values are the transcripts' own (the server's
rewards, totals and scores, ARIA's step counter in each observation, the findings log).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from axe_playwright_python.sync_playwright import Axe
from conftest import fixture_tasks, site_run_id

from recorder.importers.aria_transcripts import EXAMPLE_EPISODES, import_episodes

pytestmark = pytest.mark.browser

SET2 = Path(__file__).parent / "fixtures" / "aria-2026-12"
SOURCES = [SET2 / f"{name}.json" for name in (
    "failover-expert-seed3", "failover-expert-seed2024", "easy-dual-agent-seed3",
    "generated-diagnose-500-seed3", "easy-foreign-reset-seed7", "easy-server-restart-seed3",
    "easy-expert-seed3", "security-expert-seed3")] + [EXAMPLE_EPISODES / "failover-poor.json"]


def load(path: Path) -> dict:
    return json.loads(path.read_bytes())


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    from exporter.export import export_site
    from exporter.serve import serve_in_background

    runs = tmp_path_factory.mktemp("aria-runs")
    import_episodes(SOURCES, runs)
    out = tmp_path_factory.mktemp("aria-site")
    export_site([runs], out, task_index=fixture_tasks())
    server, url = serve_in_background(out, port=0, host="127.0.0.1")
    yield out, url
    server.shutdown()
    server.server_close()


def rid(site, name: str) -> str:
    return site_run_id(site[0], name)


WHOLE_BOARD = {"width": 1280, "height": 4000}
"""A viewport the whole episode board fits in: its panels are drawn once in reach (lib/in-reach.js)."""


def open_step(page, site, name: str, n: int) -> None:
    page.set_viewport_size(WHOLE_BOARD)
    page.goto(f"{site[1]}run.html?run={rid(site, name)}&step={n}")
    page.wait_for_selector("body[data-ready='1']")


def marks(page) -> list[tuple[str, str]]:
    return page.locator("#timeline button.step-dot").evaluate_all(
        "bs => bs.map(b => [b.dataset.mark, b.dataset.ariaStep])")


def test_an_episode_page_has_no_check_panels_and_an_unclamped_curve(page, site):
    open_step(page, site, "aria-failover__poor__s42", 3)
    for hidden in ("#checks-panel", "#matrix-panel", "#check-inspector", "#reward-curve"):
        assert page.locator(hidden).is_hidden(), hidden
    assert page.locator("#episode-curve").is_visible()
    zero = float(page.locator('#episode-curve line.clamp-line[data-bound="0"]').get_attribute("y1"))
    last = page.locator("#episode-curve circle.point").last
    assert float(last.get_attribute("cy")) > zero + 20  # the sum of the penalties sits below 0
    assert last.get_attribute("data-mark") == "penalty"
    assert page.locator("#episode-curve-marker").get_attribute("data-step") == "3"
    # the strip marks every penalised step (25 of them: two forbidden failovers, a timed-out
    # restart, a bad region and 19 late noops; the diagnose and alert_oncall pay nothing)
    rewards = [c["response"]["reward"] for c in load(EXAMPLE_EPISODES / "failover-poor.json")["steps"]]
    assert [m for m, _ in marks(page)[1:]] == ["penalty" if r < 0 else "" for r in rewards]
    assert "task_failover.py:250-252" in page.locator("#episode-components").inner_text()
    assert page.page_errors == []


def test_failed_actions_are_marked_and_aria_step_numbers_skip_them(page, site):
    open_step(page, site, "aria-generated__diagnose-500__s3", 2)
    transcript = load(SET2 / "generated-diagnose-500-seed3.json")
    aria_steps = [str(c["response"]["observation"]["step"]) if c["status"] == 200 else ""
                  for c in transcript["steps"]]
    assert [a for _, a in marks(page)[1:]] == aria_steps == ["1", "", "2"]
    assert marks(page)[2][0] == "failed"
    assert page.locator("#episode-aria-step").get_attribute("data-counted") == "0"
    assert "Not counted by ARIA" in page.locator("#episode-aria-step").inner_text()
    page.click("#btn-next")
    assert page.locator("#episode-aria-step").inner_text().startswith("ARIA step 2")


def test_the_final_score_and_the_running_total_are_explained_side_by_side(page, site):
    open_step(page, site, "aria-failover__expert-seed3__s3", 8)
    state = load(SET2 / "failover-expert-seed3.json")["final_state"]["response"]
    assert page.locator("#episode-final-total").inner_text() == f"{state['total_reward']:.4f}"
    assert page.locator("#episode-final-score").inner_text() == f"{state['info']['current_score']:.4f}"
    page.click("#episode-final-parts summary")
    row = page.locator('#episode-parts tbody tr[data-part="efficiency"]')
    assert row.locator("td.num").inner_text() == "+0.0300"
    assert row.get_attribute("data-source") == "graders/grader.py:39-42"
    assert "8/20" in row.inner_text()  # the grader's table, not the episode's 25
    assert page.locator("#episode-parts-match").is_visible()
    assert page.locator("#run-meta [data-field='difficulty'] dd").inner_text() == "hard"


def test_the_service_table_shows_versions_deploys_and_minutes_degraded(page, site):
    open_step(page, site, "aria-failover__expert-seed3__s3", 1)
    observation = load(SET2 / "failover-expert-seed3.json")["steps"][0]["response"]["observation"]
    row = page.locator('#episode-services tr[data-service="payment-service"]')
    service = next(s for s in observation["services"] if s["name"] == "payment-service")
    assert row.locator('td[data-field="current_version"]').inner_text() == service["current_version"]
    assert row.locator('td[data-field="last_deployed"]').inner_text() == service["last_deployed"]
    assert row.locator('td[data-field="sla_breach"]').inner_text() == "breach"
    minutes = row.locator('td[data-field="minutes_degraded"]')
    assert minutes.inner_text() == str(service["minutes_degraded"])
    assert minutes.get_attribute("data-changed") == "1"  # +2 a step while down


def test_runbooks_read_say_when_aria_did_not_find_them(page, site):
    transcript = load(SET2 / "security-expert-seed3.json")
    n = next(i for i, c in enumerate(transcript["steps"], 1)
             if c["request"]["json"]["action_type"] == "read_runbook")
    open_step(page, site, "aria-security__expert-seed3__s3", n)
    item = page.locator("#episode-runbooks-read li")
    assert item.count() == 1 and item.get_attribute("data-found") == "0"
    assert "security_incident.md" in item.inner_text() and "+0.0500" in item.inner_text()
    open_step(page, site, "aria-easy__expert-seed3__s3", 3)
    assert page.locator("#episode-runbooks-read li").get_attribute("data-found") == "1"


def test_a_dual_agent_run_shows_two_lanes_with_findings_linked(page, site):
    transcript = load(SET2 / "easy-dual-agent-seed3.json")
    open_step(page, site, "aria-easy__dual-agent__s3", 1)
    rows = page.locator("#episode-lanes tbody tr")
    agents = rows.evaluate_all("rs => rs.map(r => r.dataset.agent)")
    assert agents == ["observer" if "/step/a/" in c["request"]["path"] else "responder"
                      for c in transcript["steps"]]
    findings = [f["finding"] for f in transcript["final_state"]["response"]["findings_log"]]
    observer_text = page.locator('#episode-lanes tr[data-agent="observer"] td.lane-observer > div:first-child').evaluate_all(
        "ds => ds.map(d => d.textContent)")
    assert observer_text == [f"Finding {i}: {f}" for i, f in enumerate(findings, 1)]
    link = page.locator('#episode-lanes td.lane-observer a.finding-link').first
    assert link.get_attribute("data-to-step") == "2"  # the first responder step after it
    link.click()
    assert page.locator("#step-index").inner_text() == "2"
    assert page.locator('#episode-lanes tr[aria-current="step"]').get_attribute("data-step") == "2"
    assert "3 of 3 findings accepted" in page.locator("#episode-agents-rewards").inner_text()
    assert marks(page)[1][0] == "observer"


def test_a_dual_agent_board_shows_what_the_observer_saw_and_the_restated_ground_truth(page, site):
    """The responder's view has no alerts, logs or evidence (ARIA's get_observation_b): the
    board shows the observer's view in force, saying so, never "No active alerts" alone."""
    transcript = load(SET2 / "easy-dual-agent-seed3.json")
    alerts = [a["id"] for a in transcript["reset"]["response"]["observation_a"]["active_alerts"]]
    assert alerts  # the observer saw alerts from the start
    open_step(page, site, "aria-easy__dual-agent__s3", 2)
    assert page.locator("#episode-alerts li").evaluate_all("ls => ls.map(l => l.dataset.alertId)") == alerts
    assert page.locator("#episode-alerts-none").is_hidden()
    assert "As the observer saw them" in page.locator("#episode-feed-note").inner_text()
    assert page.locator("#episode-logs-body .log-service").count() > 0
    last = len(transcript["steps"])
    open_step(page, site, "aria-easy__dual-agent__s3", last)
    assert page.locator("#episode-root-cause").inner_text() == "memory_leak_payment_service"
    assert "restated from ARIA" in page.locator("#episode-truth-summary").inner_text()
    assert "diagnosis is compared with the ground truth" in page.locator("#episode-final-source").inner_text()
    open_step(page, site, "aria-easy__expert-seed3__s3", 1)
    assert page.locator("#episode-feed-note").is_hidden()


def test_environment_events_and_failures_are_shown_as_the_environments(page, site):
    open_step(page, site, "aria-easy__foreign-reset__s7", 1)
    event = page.locator("#episode-events-list li")
    assert event.get_attribute("data-kind") == "foreign reset"
    open_step(page, site, "aria-easy__server-restart__s3", 2)
    assert "Call /reset before /step" in page.locator("#run-status").inner_text()


def test_episode_compare_aligns_the_actions_and_sets_the_parts_side_by_side(page, site):
    a, b = rid(site, "aria-failover__expert-seed3__s3"), rid(site, "aria-failover__expert-seed2024__s2024")
    page.goto(f"{site[1]}compare.html?a={a}&b={b}")
    page.wait_for_selector("body[data-ready='1']")
    assert page.locator("#compare-episode").is_visible()
    assert page.locator("#compare-checks").is_hidden()
    calls = {name: [json.dumps(c["request"]["json"], sort_keys=True)
                    for c in load(SET2 / f"failover-expert-{name}.json")["steps"]]
             for name in ("seed3", "seed2024")}
    rows = page.locator("#compare-actions tbody tr")
    same = rows.evaluate_all("rs => rs.filter(r => r.dataset.align === 'same').length")
    common = [c for c in calls["seed2024"] if c in calls["seed3"]]
    assert same <= len(common) and rows.count() == len(calls["seed3"])  # seed 2024 drops one read
    first = page.locator("#compare-actions tr.first-divergence")
    assert first.get_attribute("data-step-a") == "2" and first.get_attribute("data-step-b") == ""
    scores = page.locator('#compare-parts tr[data-part="final score"] td').evaluate_all(
        "ts => ts.map(t => Number(t.dataset.value))")
    assert scores == [0.95, 0.9025]
    assert page.locator("#compare-sums-svg path#sum-a").get_attribute("data-sums").endswith("0.89")


def test_the_gallery_groups_episodes_by_arias_penalty_and_outcome_kinds(page, site):
    page.goto(f"{site[1]}gallery/index.html")
    outcomes = page.locator("#gallery-outcome-table tr[data-name]").evaluate_all(
        "rs => rs.map(r => r.dataset.name)")
    assert outcomes[:2] == ["resolved", "max steps reached"]
    assert "environment failure" in outcomes and "foreign reset" in outcomes
    page.goto(f"{site[1]}gallery/outcome-environment-failure.html")
    assert page.locator("li[data-run-id]").get_attribute("data-run-id") == rid(
        site, "aria-easy__server-restart__s3")
    penalties = (site[0] / "gallery" / "index.html").read_text()
    assert "timed out" in penalties and "wrong diagnosis" not in penalties


@pytest.mark.parametrize(("scheme", "rules"), [("light", None), ("dark", ["color-contrast"])])
def test_the_episode_pages_pass_axe(browser, site, scheme, rules):
    axe = Axe()
    pages = {
        "failover run": f"run.html?run={rid(site, 'aria-failover__poor__s42')}&step=3",
        "dual run": f"run.html?run={rid(site, 'aria-easy__dual-agent__s3')}&step=4",
        "compare": f"compare.html?a={rid(site, 'aria-failover__expert-seed3__s3')}"
                   f"&b={rid(site, 'aria-failover__expert-seed2024__s2024')}",
    }
    context = browser.new_context(viewport=WHOLE_BOARD, color_scheme=scheme)  # axe sees every board panel
    found = {}
    try:
        page = context.new_page()
        for name, path in {**pages, "gallery outcome": "gallery/outcome-resolved.html",
                           "gallery": "gallery/index.html"}.items():
            page.goto(site[1] + path)
            if name in pages:
                page.wait_for_selector("body[data-ready='1']")
            options = {"resultTypes": ["violations"], **({"runOnly": rules} if rules else {})}
            violations = [f"{v['id']}: {v['help']} at {[n['target'] for n in v['nodes'][:3]]}"
                          for v in axe.run(page, options=options).response["violations"]
                          if v["impact"] in ("serious", "critical")]
            if violations:
                found[name] = violations
    finally:
        context.close()
    assert found == {}


def test_the_home_page_shows_difficulty_and_the_generated_failure_mode(page, site):
    page.goto(f"{site[1]}index.html")
    page.wait_for_selector("body[data-ready='1']")
    row = page.locator(f'#runs-table tr[data-run-id="{rid(site, "aria-generated__diagnose-500__s3")}"]')
    assert row.locator('td[data-field="tier"]').inner_text() == "variable"
    # seed 3 is a security incident (the ARIA preview of seed 3 says failure_mode "security")
    preview = load(SET2 / "endpoint-samples-2.json")["samples"]["generate_preview_seed3"]["response"]
    assert row.locator('td[data-field="task_id"] .tag').inner_text() == preview["failure_mode"]
    failover = page.locator(f'#runs-table tr[data-run-id="{rid(site, "aria-failover__poor__s42")}"]')
    assert failover.locator('td[data-field="tier"]').inner_text() == "hard"
    assert failover.locator('td[data-field="task_id"] .tag').count() == 0
