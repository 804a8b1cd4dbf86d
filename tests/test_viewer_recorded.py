"""The viewer on runs the recorder just made (not hand-made fixtures), in Debian Chromium."""

from __future__ import annotations

import pytest

from contract.files import read_json
from exporter.export import export_site
from exporter.serve import serve_in_background

pytestmark = pytest.mark.browser


@pytest.fixture(scope="module")
def recorded_site(reference_runs, tmp_path_factory):
    out = tmp_path_factory.mktemp("recorded-site")
    run_root = next(iter(reference_runs.values())).parent
    export_site([run_root], out)
    server, url = serve_in_background(out, port=0, host="127.0.0.1")
    yield url
    server.shutdown()
    server.server_close()


def test_home_lists_every_recorded_run_with_its_reward(page, recorded_site, reference_runs):
    page.goto(recorded_site + "index.html")
    page.wait_for_selector("body[data-ready='1']")
    rows = page.locator("#runs-table tr[data-run-id]")
    assert rows.count() == len(reference_runs)
    for run_dir in reference_runs.values():
        summary = read_json(run_dir / "run.json")
        cell = page.locator(f'#runs-table tr[data-run-id="{summary["run_id"]}"] td[data-field="reward"]')
        assert cell.inner_text().strip() == f"{summary['final']['reward']:.4f}"


def test_oracle_run_steps_match_the_trajectory(page, recorded_site, reference_runs):
    run_dir = next(d for (task, policy), d in sorted(reference_runs.items()) if policy == "oracle")
    summary = read_json(run_dir / "run.json")
    steps = read_json(run_dir / "trajectory.json")["steps"]
    page.goto(f"{recorded_site}run.html?run={summary['run_id']}&step=0")
    page.wait_for_selector('body[data-ready="1"]')
    level = 0.0
    for n, step in enumerate(steps):
        grade = (step.get("extra") or {}).get("grade")
        if grade:
            level = grade["reward"]
        assert page.locator("#step-reward").inner_text().strip() == f"{level:.4f}", n
        if n < len(steps) - 1:
            page.keyboard.press("ArrowRight")
            page.wait_for_function(f"document.querySelector('#step-index').textContent.trim() == '{n + 1}'")
    # the address is written at most every 80 ms (params.js), so wait for the last write to land
    page.wait_for_function("(n) => new URLSearchParams(location.search).get('step') === String(n)",
                           arg=len(steps) - 1)
    states = page.locator("#checks-panel li[data-check-id]")
    assert 0 < states.count() <= len(summary["checks"])  # rows are drawn as they come into reach (issue 32)
    assert page.locator("#checks-fail-count").inner_text() == "0"  # counted over every check
    assert page.locator('#checks-panel li[data-state="fail"]').count() == 0
