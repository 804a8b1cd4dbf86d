"""bench/viewer.py's measuring on a two-run exported site in Chromium: figures present and sane,
and the mark's DOM contract caught when a page marks before the step is drawn."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import pytest
from conftest import FIXTURE_RUNS, fixture_tasks

BENCH = str(Path(__file__).resolve().parents[1] / "bench")
# bench/ is on the path only while its modules are imported: it also holds bench/ray.py, which
# would shadow the ray package for every later test (tests/test_ray_engine.py)
sys.path.insert(0, BENCH)
try:
    from viewer_ab import (
        first_step_pairs,
        first_steps_paired,
        navigation_floor,
        net_ratio,
        switch_pairs,
    )
    from viewer_measure import MeasureError, dom_problems, open_page
    from viewer_site import first_write_step, measure_pages, measure_run, pick_runs, site_runs
finally:
    sys.path.remove(BENCH)

pytestmark = pytest.mark.browser

RUNS = ("fixture-oracle-s1", "fixture-episode-easy")
EARLY_MARK = 'performance.mark("first-step-rendered");\n'
"""A script that sets the mark before run.js has drawn anything (a page breaking the contract)."""


@pytest.fixture(scope="module")
def two_run_site(tmp_path_factory):
    """The fixture's oracle run and episode run exported, then served: ``(site, base URL)``."""
    from exporter.export import export_site
    from exporter.serve import serve_in_background

    root = tmp_path_factory.mktemp("bench-viewer")
    for run in RUNS:
        shutil.copytree(FIXTURE_RUNS / run, root / "runs" / run)
    export_site([root / "runs"], root / "site", task_index=fixture_tasks())
    server, url = serve_in_background(root / "site", port=0, host="127.0.0.1")
    yield root / "site", url
    server.shutdown()
    server.server_close()


@pytest.fixture
def bench_page(browser):
    context, page = open_page(browser)
    yield page
    context.close()


def test_site_runs_and_picks_name_both_kinds(two_run_site):
    site, _ = two_run_site
    rows = {row["run_id"]: row for row in site_runs(site)}
    assert set(rows) == set(RUNS)
    assert rows["fixture-oracle-s1"]["checks"] > 0 and rows["fixture-episode-easy"]["checks"] == 0
    assert all(row["bytes"] > 0 and row["steps"] > 0 for row in rows.values())
    picked = pick_runs(list(rows.values()))
    assert sorted(row["run_id"] for row in picked.values()) == sorted(RUNS)
    assert any(label.startswith("episode") for label in picked)
    assert first_write_step(site, "fixture-oracle-s1") == 3  # its first write_file
    assert first_write_step(site, "fixture-episode-easy") == 1  # no diffs: the first action


@pytest.mark.parametrize("run_id", RUNS)
def test_run_figures_are_present_and_sane(two_run_site, bench_page, run_id):
    site, base = two_run_site
    figures = measure_run(bench_page, base, run_id, loads=2, switches=12)
    assert figures["problems"] == []
    assert 0 < figures["first_step_ms"] < 60_000 and len(figures["first_step_runs_ms"]) == 2
    assert figures["first_paint_ms"] >= figures["first_step_ms"]
    assert 1 <= figures["requests_before"] <= figures["requests_all"]
    # the bench loads a run's own page (runs/<id>.html): an alerting run's first step is in its
    # HTML, an episode's is drawn from its head
    html = len((site / "runs" / f"{run_id}.html").read_bytes())
    assert html <= figures["decoded_before"] and figures["bytes_before"] <= figures["bytes_all"]
    assert figures["files_before"][0] == f"runs/{run_id}.html"
    if run_id == "fixture-episode-easy":
        assert any(name.endswith(f"{run_id}.json") for name in figures["files_before"])
    else:
        assert figures["files_before"] == [f"runs/{run_id}.html"]
    assert 0 < figures["switch_median_ms"] <= figures["switch_p95_ms"]
    checked = figures["contract_checked"]
    if run_id == "fixture-episode-easy":
        assert checked["episode_board"] and checked["episode_result"] > 0
    else:
        assert checked["visible_checks"] > 0 and checked["tool"] == "initial state"


def test_a_deep_link_to_a_write_checks_its_tool_call_output_and_diff(two_run_site, bench_page):
    _, base = two_run_site
    figures = measure_run(bench_page, base, "fixture-oracle-s1", loads=1, switches=0, step=3)
    assert figures["problems"] == []
    checked = figures["contract_checked"]
    assert checked["step"] == "3" and checked["tool"] == "write_file"
    assert checked["arguments"] > 0 and checked["output"] > 0 and checked["diff_rows"] > 0


def test_home_and_gallery_have_bytes_and_a_first_paint(two_run_site, bench_page):
    site, base = two_run_site
    pages = measure_pages(bench_page, base, site)
    assert "home" in pages
    for figures in pages.values():
        assert figures["bytes_all"] > 0 and figures["requests_all"] >= 1
        paint = figures["first_paint"]["first-contentful-paint"]
        assert 1 <= paint["requests"] <= figures["requests_all"] and 0 < paint["bytes"] <= figures["bytes_all"]


def test_a_mark_set_before_the_step_is_drawn_is_caught(two_run_site, bench_page, tmp_path):
    site, _ = two_run_site
    from exporter.serve import serve_in_background

    broken = tmp_path / "site"
    shutil.copytree(site, broken)
    (broken / "static" / "mark-early.js").write_text(EARLY_MARK)
    page_file = broken / "runs" / "fixture-oracle-s1.html"
    html = page_file.read_text()
    assert "</title>" in html
    page_file.unlink()  # linked from the site copied
    page_file.write_text(html.replace("</title>", '</title>\n<script src="../static/mark-early.js"></script>', 1))
    server, url = serve_in_background(broken, port=0, host="127.0.0.1")
    try:
        figures = measure_run(bench_page, url, "fixture-oracle-s1", loads=1, switches=0)
    finally:
        server.shutdown()
        server.server_close()
    problems = " | ".join(figures["problems"])
    assert "tool call '' at the mark, 'initial state' when ready" in problems
    assert "visible checks had no label at the mark" in problems


def test_dom_problems_names_each_missing_part():
    ready = {"step": "3", "tool": "write_file", "arguments": 40, "output": 12, "diff_rows": 5,
             "labelled": ["a", "b"], "episode_result": 0, "episode_board": False, "episode_services": 0}
    assert dom_problems(dict(ready), ready, ["a", "b"]) == []
    empty = {"step": "3", "tool": "write_file", "arguments": 40, "output": 0, "diff_rows": 2,
             "labelled": ["a"], "episode_result": 0, "episode_board": False, "episode_services": 0}
    problems = dom_problems(empty, ready, ["a", "b"])
    assert problems == ["no output at the mark (12 characters when ready)", "2 diff rows at the mark, 5 when ready",
                        "1 of the 2 visible checks had no label at the mark (first: b)"]
    assert dom_problems(None, ready, []) == ["the mark was never set"]



def test_alternating_switch_pairs_give_a_ratio_per_pair(two_run_site, browser):
    _, url = two_run_site
    result = switch_pairs(browser, url, url, "fixture-oracle-s1", rounds=2, switches=12)
    assert len(result["pairs"]) == 2
    for pair in result["pairs"]:
        for side in ("before", "now"):
            assert 0 < pair[side]["switch_median_ms"] <= pair[side]["switch_p95_ms"] < 10_000
        assert pair["ratio"] == pair["now"]["switch_median_ms"] / pair["before"]["switch_median_ms"]
    assert result["ratio_min"] <= result["ratio_median"] <= result["ratio_max"]


def test_alternating_switch_pairs_name_a_run_that_does_not_load(two_run_site, browser):
    _, url = two_run_site
    with pytest.raises(MeasureError, match="no-such-run"):
        switch_pairs(browser, url, url, "no-such-run", rounds=1, switches=5, timeout_ms=3_000)


def test_first_step_pairs_alternate_the_sites_and_give_a_ratio(two_run_site, browser):
    _, url = two_run_site
    pages = {side: open_page(browser)[1] for side in ("before", "now")}
    seen = []
    for side, page in pages.items():
        page.on("request", lambda request, side=side: seen.append(side) if "/runs/fixture-episode-easy.html" in request.url else None)
    result = first_step_pairs(pages, {"before": url, "now": url}, "fixture-episode-easy", loads=2, swap=True)
    assert seen == ["now", "before", "now", "before"]
    assert len(result["before_ms"]) == len(result["now_ms"]) == 2
    assert all(0 < ms < 60_000 for ms in result["before_ms"] + result["now_ms"])
    assert result["ratio"] == result["now_median"] / result["before_median"]
    assert result["problems"] == []
    for page in pages.values():
        page.context.close()


def test_the_navigation_floor_is_a_blank_pages_mark_and_ratios_net_of_it(two_run_site, browser):
    context, page = open_page(browser)
    floor = navigation_floor(page, loads=3)
    context.close()
    assert len(floor["ms"]) == 3 and all(0 < ms < 60_000 for ms in floor["ms"])
    assert floor["median"] == sorted(floor["ms"])[1]
    assert net_ratio(110, 210, 60) == pytest.approx(50 / 150)
    assert net_ratio(50, 210, 60) == 0.0  # faster than the floor: counted as none of its own
    assert net_ratio(110, 60, 60) is None
    with pytest.raises(ValueError):
        navigation_floor(page, loads=0)


def test_every_run_paired_gives_distributions_plain_and_net_of_the_floor(two_run_site, browser):
    site, url = two_run_site
    result = first_steps_paired(browser, {"before": url, "now": url}, site_runs(site), loads=1)
    assert result["problems"] == []
    assert set(result["runs"]) == set(RUNS)
    assert len(result["floor"]["ms"]) == 2  # one after each run
    for figures in result["runs"].values():
        expected = net_ratio(figures["now_median"], figures["before_median"], result["floor"]["median"])
        assert figures["net_ratio"] == expected
    alerting = result["distribution"]["alerting"]
    assert alerting["runs"] == 1 and alerting["net_ratio"]["median"] == result["runs"][RUNS[0]]["net_ratio"]
