"""Scenario plot data: promtool's series notation expanded and error ratios computed per window."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from exporter.scenarios import duration_minutes, error_ratio_series, expand_values, scenario_plots

TASKS = Path(__file__).resolve().parent.parent / "tasks"


@pytest.mark.parametrize(
    ("values", "expected"),
    [
        ("0+2x3", [0, 2, 4, 6]),
        ("10-1x2 _ 5", [10, 9, 8, None, 5]),
        ("1x2 _x2 stale", [1, 1, 1, None, None, None]),
        ("1.5e1", [15]),
    ],
)
def test_expand_values_follows_promtool_notation(values, expected):
    assert expand_values(values) == expected


def test_durations_in_minutes():
    assert [duration_minutes(t) for t in ("90m", "1h30m", "60s", "2d", "x", "", None)] == [
        90, 90, 1, 2880, None, None, None
    ]


def test_error_ratio_per_interval_and_window():
    series = [
        {"series": 'http_requests_total{service="a",code="200"}', "values": "0+9x10"},
        {"series": 'http_requests_total{service="a",code="500"}', "values": "0+1x5 5+11x5"},
        {"series": 'http_requests_total{service="b",code="500"}', "values": "0+100x10"},
        {"series": 'up{service="a"}', "values": "1x10"},
    ]
    result = error_ratio_series(series, "a", [2])
    assert result["ratio"][:3] == [None, 0.1, 0.1]
    assert result["ratio"][6:8] == [0.0, 0.55]
    assert result["w2"][7] == pytest.approx((16 - 5) / (16 - 5 + 18), rel=1e-5)
    assert result["ratio"][11] is None, "the 200 series ends at 10"
    assert error_ratio_series(series, "c", [2]) is None


def test_real_task_plot_crosses_the_burn_threshold_where_the_catalog_says():
    task = min(TASKS.glob("af-*"))
    catalog = json.loads((task / "tests" / "checks.json").read_text())
    plots, check_plots = scenario_plots(catalog)
    fire = next(c for c in catalog["checks"] if c["family"] == "Fire" and c["probe"].get("scenario") == "outage")
    ref = check_plots[fire["id"]]
    plot = plots[ref["plot"]]
    long_window = plot["series"][f"w{ref['windows']['long']:g}"]
    crossing = next(t for t, v in enumerate(long_window) if v is not None and v > ref["threshold"])
    assert 60 < crossing < ref["eval_min"], "the long window crosses after the outage starts and before the Fire check"
