"""The action-episode view in real Chromium: services, map, alerts, stale results, score parts."""

from __future__ import annotations

import json
from pathlib import Path
from urllib.parse import parse_qs, urlparse

import pytest
from conftest import fixture_tasks, site_run_id

from recorder.importers.aria_transcripts import EXAMPLE_EPISODES, import_episodes

pytestmark = pytest.mark.browser

FIXTURE_EPISODE = Path(__file__).parent / "fixtures" / "site" / "runs" / "fixture-episode-easy"
PAYLOADS = (
    "<script>window.__pwned=1</script>",
    '<img src=x onerror="window.__pwned=1">',
    "</script><svg onload=window.__pwned=1>",
)


def xss_transcript(folder: Path) -> Path:
    """easy-expert with HTML in every kind of text the episode view shows."""
    data = json.loads((EXAMPLE_EPISODES / "easy-expert.json").read_bytes())
    data["variant"] = "xss"
    payload = " ".join(PAYLOADS)
    observations = [data["reset"]["response"]] + [
        c["response"]["observation"] for c in data["steps"]
    ]
    for observation in observations:
        observation["active_alerts"][0]["message"] = payload
        observation["recent_logs"]["user-service"].append(payload)
        observation["sla_status"]["user-service"] = payload
        observation["services"][0]["status"] = payload
        if observation["evidence_log"]:
            observation["evidence_log"][0]["summary"] = payload
            observation["evidence_log"][0]["raw"] = payload
    data["steps"][0]["response"]["observation"]["last_action_result"] = payload
    data["steps"][3]["request"]["json"]["root_cause"] = payload
    data["final_state"]["response"]["ground_truth_fix"] = payload
    data["final_state"]["response"]["info"]["rewards_unlocked"].append(payload)
    path = folder / "easy-xss.json"
    path.write_text(json.dumps(data))
    return path


@pytest.fixture(scope="module")
def episode_site(tmp_path_factory):
    from exporter.export import export_site
    from exporter.serve import serve_in_background

    runs = tmp_path_factory.mktemp("episode-runs")
    sources = sorted(EXAMPLE_EPISODES.glob("*.json")) + [
        xss_transcript(tmp_path_factory.mktemp("x"))
    ]
    import_episodes(sources, runs)
    out = tmp_path_factory.mktemp("episode-site")
    export_site([runs, FIXTURE_EPISODE], out, task_index=fixture_tasks())
    server, url = serve_in_background(out, port=0, host="127.0.0.1")
    yield out, url
    server.shutdown()
    server.server_close()


def run_file(site, run_id: str) -> dict:
    return json.loads((site[0] / "data" / "runs" / f"{site_run_id(site[0], run_id)}.json").read_bytes())


WHOLE_BOARD = {"width": 1280, "height": 4000}
"""A viewport the whole episode board fits in: its panels are drawn once in reach (lib/in-reach.js)."""


def open_step(page, site, run_id: str, n: int) -> None:
    page.set_viewport_size(WHOLE_BOARD)
    page.goto(f"{site[1]}run.html?run={run_id}&step={n}")
    page.wait_for_selector("body[data-ready='1']")


def text(page, selector: str) -> str:
    return page.locator(selector).inner_text()


SERVICES = """() => [...document.querySelectorAll('#episode-services tbody tr')].map((tr) => ({
  service: tr.dataset.service, actedOn: tr.dataset.actedOn,
  cells: Object.fromEntries([...tr.querySelectorAll('td')].map((td) =>
    [td.dataset.field, {text: td.textContent, changed: td.dataset.changed, title: td.title}])),
}))"""


def test_services_table_shows_the_observation_with_changes_and_the_acted_on_service(
    page, episode_site
):
    run = run_file(episode_site, "aria-easy__expert__s42")
    open_step(page, episode_site, "aria-easy__expert__s42", 5)
    step, before = run["steps"][5]["env"], run["steps"][4]["env"]["observation"]
    rows = page.evaluate(SERVICES)
    observation = step["observation"]
    assert [r["service"] for r in rows] == [s["name"] for s in observation["services"]]
    for row, service in zip(rows, observation["services"], strict=True):
        cells = row["cells"]
        assert cells["status"]["text"] == service["status"]
        assert float(cells["cpu_percent"]["text"]) == pytest.approx(
            service["cpu_percent"], abs=0.05
        )
        assert float(cells["error_rate"]["text"]) == pytest.approx(service["error_rate"], abs=5e-4)
        assert (
            cells["replicas"]["text"]
            == f"{service['replicas_running']}/{service['replicas_desired']}"
        )
        assert cells["sla"]["text"] == observation["sla_status"][service["name"]]
        changed = step["changed"].get(service["name"], [])
        assert (cells["memory_percent"]["changed"] == "1") is ("memory_percent" in changed)
        assert (cells["status"]["changed"] == "1") is ("status" in changed)
        assert row["actedOn"] == ("1" if service["name"] == "user-service" else "0")
    user = next(r for r in rows if r["service"] == "user-service")["cells"]
    old = next(s for s in before["services"] if s["name"] == "user-service")
    assert user["status"]["changed"] == "1" and user["status"]["title"] == f"was {old['status']}"
    node = page.locator('#episode-map-svg g.map-node[data-service="user-service"]')
    assert (
        node.get_attribute("data-acted-on") == "1"
        and node.get_attribute("data-status") == "healthy"
    )
    calls = sum(len(d["calls"]) for d in observation["service_dependencies"])
    assert page.locator("#episode-map-svg path.map-edge").count() == calls
    assert (
        page.locator('path.map-edge[data-from="api-gateway"][data-to="user-service"]').count() == 1
    )
    assert text(page, "#episode-step-reward") == "+0.4000"
    assert text(page, "#episode-running-total") == "1.0000"
    assert page.locator("#episode-incident").get_attribute("data-state") == "resolved"
    assert "A001" in text(page, "#episode-alerts-cleared")
    assert page.page_errors == []


def test_a_left_over_result_is_shown_as_stale(page, episode_site):
    open_step(page, episode_site, "aria-bonus__poor__s42", 6)
    result = page.locator("#episode-result-text")
    assert result.get_attribute("data-stale") == "1"
    assert result.inner_text().startswith("ml-inference-service restarted")
    assert "after step 5" in text(page, "#episode-result .stale-note")
    page.keyboard.press("ArrowLeft")
    assert page.locator("#episode-result-text").get_attribute("data-stale") == "0"
    assert page.locator("#episode-result .stale-note").count() == 0
    assert parse_qs(urlparse(page.url).query)["step"] == ["5"]
    page.click('#timeline button[data-step="4"]')
    assert page.locator("#episode-result-text").get_attribute("data-stale") == "1"
    assert "after step 3" in text(page, "#episode-result .stale-note")


def test_a_failed_action_shows_the_error_and_the_state_it_left(page, episode_site):
    run = run_file(episode_site, "aria-generated__expert__s12345")
    open_step(page, episode_site, "aria-generated__expert__s12345", 3)
    assert "HTTP 500" in text(page, "#episode-server-error")
    assert "after step 2" in text(page, "#episode-observation-note")
    assert page.locator("#episode-penalties li").all_inner_texts() == ["server error"]
    shown = run["steps"][2]["env"]["observation"]["services"]
    assert [r["service"] for r in page.evaluate(SERVICES)] == [s["name"] for s in shown]
    assert page.locator("#episode-map-empty").is_visible()  # generated sends no dependency map
    page.click("#btn-next")
    assert page.locator("#episode-observation-note").is_hidden()
    assert "ReadError" in text(page, "#episode-retry")
    assert page.locator("#episode-incident").get_attribute("data-state") == "resolved"


def test_the_end_of_the_incident_comes_from_done_not_from_service_states(page, episode_site):
    run = run_file(episode_site, "aria-security__expert__s42")
    last = len(run["steps"]) - 1
    open_step(page, episode_site, "aria-security__expert__s42", last)
    assert page.locator("#episode-incident").get_attribute("data-state") == "resolved"
    assert "may still look degraded" in text(page, "#episode-score")
    open_step(page, episode_site, "aria-security__expert__s42", 3)
    assert page.locator("#episode-incident").get_attribute("data-state") == "ongoing"
    assert f"ends at step {last}" in text(page, "#episode-incident")
    open_step(page, episode_site, "aria-easy__poor__s42", 15)
    assert page.locator("#episode-incident").get_attribute("data-state") == "ended"
    assert "max_steps_reached" in text(page, "#episode-incident")


def test_final_score_and_its_parts(page, episode_site):
    run = run_file(episode_site, "aria-bonus__expert__s42")
    parts = run["final"]["episode"]["parts"]
    open_step(page, episode_site, "aria-bonus__expert__s42", 0)
    assert text(page, "#episode-final-score") == "0.9040"
    # the grader's parts are folded: the table is in the page once the fold is opened
    assert page.locator("#episode-parts").count() == 0
    page.click("#episode-final-parts summary")
    page.wait_for_selector("#episode-parts tbody tr[data-part]")
    rows = dict(
        zip(
            page.locator("#episode-parts tr[data-part]").evaluate_all("rs => rs.map(r => r.dataset.part)"),
            page.locator("#episode-parts tr[data-part] td.num").all_inner_texts(),
            strict=True,
        )
    )
    assert rows["running total"] == f"{parts['total_reward']:.4f}"
    assert rows["efficiency"] == f"+{parts['efficiency_bonus']:.4f}"
    assert rows["diagnosis"] == "+0.0300"
    assert rows["derived_score"] == "0.9040"
    sources = page.locator("#episode-parts tbody tr").evaluate_all("rs => rs.map(r => r.dataset.source)")
    assert all(source.startswith("graders/grader.py:") for source in sources)
    assert page.locator("#episode-parts-match").is_visible()
    assert page.locator("#episode-parts-mismatch").is_hidden()
    assert (
        page.locator("#episode-unlocked li").all_inner_texts()
        == run["final"]["episode"]["rewards_unlocked"]
    )
    # the ground truth is behind a spoiler until the last step
    assert page.locator("#episode-truth-box").get_attribute("open") is None
    assert page.locator("#episode-ground-truth").count() == 0, "a spoiler is not in the page until opened"
    assert "disk_full_log_aggregator" not in page.locator("#episode-final").text_content()
    assert page.locator("#episode-incident").get_attribute("data-state") == "start"
    open_step(page, episode_site, "aria-bonus__expert__s42", len(run["steps"]) - 1)
    assert page.locator("#episode-truth-box").get_attribute("open") is not None
    assert "disk_full_log_aggregator" in text(page, "#episode-ground-truth")


def test_penalties_are_named_on_their_steps(page, episode_site):
    open_step(page, episode_site, "aria-failover__poor__s42", 1)
    # failover has no blind-fix penalty: the kinds are ARIA's reward components
    assert page.locator("#episode-penalties li").all_inner_texts() == ["forbidden failover"]
    assert page.locator("#episode-components tbody tr").evaluate_all(
        "rs => rs.map(r => r.dataset.part)") == ["forbidden failover"]
    assert "task_failover.py:221-228" in text(page, "#episode-components")
    assert text(page, "#episode-step-reward") == "\u22120.2500"
    assert text(page, "#step-delta") == "\u22120.2500"
    open_step(page, episode_site, "aria-failover__poor__s42", 0)
    assert page.locator("#episode-penalties").count() == 0


def test_run_text_is_shown_as_text_and_never_runs(page, page_without_csp, episode_site):
    for browser_page in (page, page_without_csp):
        for n in range(6):
            open_step(browser_page, episode_site, "aria-easy__xss__s42", n)
            assert browser_page.evaluate("window.__pwned") is None
        body = browser_page.locator("#run-view").inner_text()
        for payload in PAYLOADS:
            assert payload in body
        assert (
            browser_page.locator("#run-view img, #run-view script, #episode-board svg svg").count()
            == 0
        )
        assert browser_page.page_errors == []


def test_an_episode_with_a_partial_observation_still_renders(page, episode_site):
    open_step(page, episode_site, "fixture-episode-easy", 2)
    assert "No services in this observation" in text(page, "#episode-services-panel")
    assert page.locator("#episode-final-score").inner_text() == "0.8000"
    # an episode has no check catalog: no check panels at all
    assert page.locator("#checks-panel").is_hidden() and page.locator("#matrix-panel").is_hidden()
    assert page.page_errors == []
