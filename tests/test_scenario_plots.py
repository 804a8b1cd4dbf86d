"""Scenario plots follow the alert's condition: error ratio, share of slow requests, targets up."""

from __future__ import annotations

from contract.files import read_json
from contract.paths import TASKS_DIR, task_dirs
from exporter.scenarios import scenario_plots


def _catalog(workflow: str) -> dict:
    task = next(t for t in task_dirs(TASKS_DIR) if workflow in t.name)
    return read_json(task / "tests" / "checks.json")


def test_down_alert_checks_plot_the_fraction_of_targets_up_with_the_outage_marked():
    catalog = _catalog("missed-page-postmortem")
    plots, check_plots = scenario_plots(catalog)
    alert = next(r for r in catalog["requirements"] if r["kind"] == "alert")
    fire = next(c for c in catalog["checks"] if c["id"].startswith(f"{alert['id']}.fire.vanish"))
    ref = check_plots[fire["id"]]
    plot = plots[ref["plot"]]
    assert plot["quantity"] == "targets up" and ref["threshold"] is None
    outage = plot["phases"][alert["targets"]["service"]][0]
    assert outage["outage"] == "vanish"
    up = plot["series"]["up"]
    assert up[outage["start"] - 1] == 1.0
    assert all(v is None for v in up[outage["start"]:outage["end"]])  # no up series: vanished
    assert up[outage["end"]] == 1.0


def test_latency_burn_checks_plot_the_share_of_slow_requests_against_the_threshold():
    catalog = _catalog("latency-slo")
    plots, check_plots = scenario_plots(catalog)
    alert = next(r for r in catalog["requirements"] if r["kind"] == "alert")
    check = next(c for c in catalog["checks"] if c["id"].startswith(f"{alert['id']}.fire.over"))
    ref = check_plots[check["id"]]
    plot = plots[ref["plot"]]
    assert plot["quantity"].startswith("share of requests slower than")
    assert ref["threshold"] == alert["targets"]["threshold"]
    long_window = [v for v in plot["series"]["w60"][70:] if v is not None]
    # the "over" scenario holds the slow share at 1.15x the threshold
    assert all(abs(v / ref["threshold"] - 1.15) < 0.05 for v in long_window)
