"""Step switches and first steps of runs on two exported sites ("before" and "now"), alternating.

Two bench runs minutes apart differ by more than a step switch's change (on this 2-core machine a
run's median moved from 4.7 to 6.5 ms between sittings), so a before/after figure for the step
switch is taken as pairs: in each round the run is opened on both sites, one after the other in
fresh pages of the same Chromium, the order swapped every round, warmed with WARM_SWITCHES
switches, then measured with bench/viewer_measure.py's SWITCH_LOOP. Each pair gives a ratio
now / before; the median of the ratios is the figure. The switch is timed after the page is
loaded, so it does not matter which version's server serves the files (both are served by this
checkout's exporter/serve.py, or "before" by its own version's server, given as a URL).

First steps (:func:`first_step_pairs`) are paired the same way, load by load: each run is loaded
``loads`` times on each site, alternating (before, now, before, now, ...; "now" first on odd
runs), in two pages of one browser, and its ratio is the median of now's times over the median
of before's.

Part of every load is the browser's own: a navigation in a reused tab tears down the old
document, commits the new one in a new frame and creates its script contexts before the first
byte of HTML is parsed. The floor page times that part alone: a blank page (no CSS, no module,
an inline script setting the same mark at parse) served by exporter/serve.py from a temporary
folder. :func:`first_steps_paired` loads it once after every run, in the page that showed the
run last (so it leaves a run page, as a run's load does; the sides alternate, and so does the
side whose next load leaves the blank page instead), and prints the ratios also net of its
median, ``(now - floor) / (before - floor)``: what the two versions' own work compares at.
"""

from __future__ import annotations

import statistics
import sys
import tempfile
from contextlib import contextmanager
from pathlib import Path

from viewer_measure import SWITCH_LOOP, MeasureError, load_run, open_page, switch_times
from viewer_site import distribution, run_url

WARM_SWITCHES = 40
"""Switches before the measured ones (first-time compilation and layout of each part)."""
FLOOR_PAGE = ('<!doctype html><html lang="en"><head><meta charset="utf-8"><title>floor</title></head>'
              '<body><p>blank</p><script>performance.mark("first-step-rendered");'
              'document.body.dataset.ready = "1";</script></body></html>')
"""The navigation floor's page: the run view's mark set by the parser, nothing fetched."""


@contextmanager
def floor_server():
    """:data:`FLOOR_PAGE` served by exporter.serve from a temporary folder on 127.0.0.1:
    yields its URL; the server is stopped and the folder removed on exit."""
    from exporter.serve import serve_in_background

    with tempfile.TemporaryDirectory(prefix="bench-floor-") as folder:
        (Path(folder) / "floor.html").write_text(FLOOR_PAGE, encoding="utf-8")
        server, base = serve_in_background(Path(folder), port=0, host="127.0.0.1")
        try:
            yield f"{base}floor.html"
        finally:
            server.shutdown()
            server.server_close()


def floor_load(page, url: str, timeout_ms: int = 60_000) -> float:
    """One load of the floor page at ``url`` (:func:`floor_server`) in ``page``: its
    ``first-step-rendered`` mark, ms from navigation start (as a run's). Raises MeasureError
    when the page does not get ready."""
    from playwright.sync_api import Error as PlaywrightError

    try:
        page.goto(url)
        page.wait_for_selector("body[data-ready='1']", state="attached", timeout=timeout_ms)
        return page.evaluate("() => performance.getEntriesByName('first-step-rendered', 'mark')[0].startTime")
    except PlaywrightError as error:
        raise MeasureError("the navigation floor's blank page did not get ready "
                           f"({str(error).splitlines()[0]})") from error


def navigation_floor(page, loads: int, timeout_ms: int = 60_000) -> dict:
    """The browser's own time of a navigation in ``page``: the floor page loaded ``loads``
    times in a row (:func:`floor_load`). Returns ``{"ms": [...], "median"}``. Raises
    MeasureError when the page does not get ready; ValueError when ``loads`` is below 1."""
    if loads < 1:
        raise ValueError("loads must be at least 1")
    with floor_server() as url:
        times = [floor_load(page, url, timeout_ms) for _ in range(loads)]
    return {"ms": times, "median": statistics.median(times)}


def net_ratio(now_ms: float, before_ms: float, floor_ms: float) -> float | None:
    """``(now_ms - floor_ms) / (before_ms - floor_ms)``: two first steps compared net of the
    navigation floor (ms, :func:`navigation_floor`); None when before is not above the floor."""
    if before_ms <= floor_ms:
        return None
    return max(now_ms - floor_ms, 0.0) / (before_ms - floor_ms)


def _switches_on(browser, base: str, run_id: str, switches: int, timeout_ms: int) -> dict:
    context, page = open_page(browser)
    try:
        load_run(page, base, run_url(base, run_id), quiet=False, timeout_ms=timeout_ms)
        page.evaluate(SWITCH_LOOP, WARM_SWITCHES)
        page.evaluate("() => performance.clearMeasures()")
        return switch_times(page, switches)
    finally:
        context.close()


def switch_pairs(browser, before: str, now: str, run_id: str, rounds: int, switches: int,
                 timeout_ms: int = 60_000) -> dict:
    """``rounds`` pairs of step-switch figures of ``run_id`` on the sites served at ``before`` and
    ``now`` (base URLs ending with /), in swapped order every round; a page not ready within
    ``timeout_ms`` is a MeasureError.

    Returns ``{"run_id", "pairs": [{"before": figures, "now": figures, "ratio"}], "ratio_median",
    "ratio_min", "ratio_max"}``; figures are :func:`viewer_measure.switch_times` answers (ms) and
    a ratio is now's median switch over before's. Raises MeasureError when a page does not get
    ready; ValueError when ``rounds`` or ``switches`` is below 1.
    """
    if rounds < 1 or switches < 1:
        raise ValueError("rounds and switches must be at least 1")
    pairs = []
    for number in range(rounds):
        order = (("before", before), ("now", now)) if number % 2 == 0 else (("now", now), ("before", before))
        pair = {name: _switches_on(browser, base, run_id, switches, timeout_ms) for name, base in order}
        pair["ratio"] = pair["now"]["switch_median_ms"] / pair["before"]["switch_median_ms"]
        pairs.append(pair)
    ratios = [pair["ratio"] for pair in pairs]
    return {"run_id": run_id, "pairs": pairs, "ratio_median": statistics.median(ratios),
            "ratio_min": min(ratios), "ratio_max": max(ratios)}


def print_pairs(result: dict) -> None:
    """One line per pair and the ratios' median, as bench/viewer.py prints them."""
    print(f"step switch, before / now alternating: {result['run_id']}")
    for number, pair in enumerate(result["pairs"], 1):
        before, now = pair["before"], pair["now"]
        js = ""
        if before["switch_js_median_ms"] is not None and now["switch_js_median_ms"] is not None:
            js = f" (JS {before['switch_js_median_ms']:.2f} / {now['switch_js_median_ms']:.2f})"
        print(f"  pair {number}: median {before['switch_median_ms']:.2f} / {now['switch_median_ms']:.2f} ms, "
              f"p95 {before['switch_p95_ms']:.2f} / {now['switch_p95_ms']:.2f} ms{js}: {pair['ratio']:.2f}x")
    print(f"  now / before: median {result['ratio_median']:.2f}x (min {result['ratio_min']:.2f}, "
          f"max {result['ratio_max']:.2f})")


def first_step_pairs(pages: dict, bases: dict, run_id: str, loads: int, swap: bool = False) -> dict:
    """First-step times (``first-step-rendered``, ms from navigation) of ``run_id`` loaded
    ``loads`` times on each of two sites, alternating; ``pages``/``bases`` map "before" and "now"
    to an open page (:func:`viewer_measure.open_page`) and a base URL; ``swap`` starts with now.

    Returns ``{"before_ms": [...], "now_ms": [...], "before_median", "now_median", "ratio",
    "problems"}`` (problems: the DOM contract's, of now's loads only: the version before may
    predate the contract). Raises MeasureError when a page does not get ready or a side never
    sets the mark.
    """
    order = ("now", "before") if swap else ("before", "now")
    times: dict[str, list[float]] = {"before": [], "now": []}
    problems: list[str] = []
    for number in range(loads):
        for side in order:
            load, found = load_run(pages[side], bases[side], run_url(bases[side], run_id), quiet=False)
            if load.mark_ms is None:
                raise MeasureError(f"{run_id} ({side}): the mark first-step-rendered was never set")
            times[side].append(load.mark_ms)
            if side == "now":
                problems += [f"{run_id}: load {number + 1}: {p}" for p in found]
    before, now = statistics.median(times["before"]), statistics.median(times["now"])
    return {"before_ms": times["before"], "now_ms": times["now"], "before_median": before, "now_median": now,
            "ratio": now / before, "problems": problems}


def first_steps_paired(browser, bases: dict, rows: list[dict], loads: int) -> dict:
    """Every run of ``rows`` (viewer_site.site_runs rows) on both sites, alternating
    (:func:`first_step_pairs`, ``bases`` as there): ``{"runs", "distribution", "floor",
    "problems"}``, the distributions of the ratios (and medians) by kind printed, also net of
    the navigation floor (``floor``: :func:`navigation_floor` with ``3 * loads`` loads before
    the runs and as many after, ``{"ms", "median"}``; each run's ``net_ratio``); a run that
    cannot be measured is a problem, not an exception."""
    opened = {side: open_page(browser) for side in ("before", "now")}
    pages = {side: page for side, (_, page) in opened.items()}
    try:
        runs, problems, floor_times = _measure_runs(pages, bases, rows, loads)
    finally:
        for context, _ in opened.values():
            context.close()
    floor = {"ms": floor_times, "median": statistics.median(floor_times) if floor_times else 0.0}
    for figures in runs.values():
        figures["net_ratio"] = net_ratio(figures["now_median"], figures["before_median"], floor["median"])
    spread = {}
    print(f"first step, before / now alternating ({loads} loads each, medians), ratio now / before per run "
          f"(net: both less the navigation floor, a blank page's {floor['median']:.0f} ms):")
    for kind in ("all", "alerting", "episode"):
        chosen = [f for f in runs.values() if kind == "all" or f["kind"] == kind]
        spread[kind] = _spread(chosen)
        if chosen:
            _print_spread(kind, spread[kind])
    return {"runs": runs, "distribution": spread, "floor": floor, "problems": problems}


def _measure_runs(pages: dict, bases: dict, rows: list[dict],
                  loads: int) -> tuple[dict[str, dict], list[str], list[float]]:
    """``(runs, problems, floor times)``: :func:`first_step_pairs` of every run (alternating
    which side loads first), each followed by a navigation floor load."""
    runs: dict[str, dict] = {}
    problems: list[str] = []
    floor_times: list[float] = []
    with floor_server() as floor_url:
        for number, row in enumerate(rows, 1):
            swap = number % 2 == 1  # (now, before) loads: before showed the run last
            try:
                figures = first_step_pairs(pages, bases, row["run_id"], loads, swap=swap)
            except MeasureError as error:
                problems.append(str(error))
                continue
            problems += figures.pop("problems")
            runs[row["run_id"]] = {**figures, "kind": row["kind"]}
            floor_times.append(floor_load(pages["before" if swap else "now"], floor_url))
            if number % 20 == 0:
                print(f"  ... {number}/{len(rows)} runs measured", file=sys.stderr, flush=True)
    return runs, problems, floor_times


def _spread(chosen: list[dict]) -> dict:
    """The distributions of the chosen runs' ratios and medians, their count, and how many
    are at or under half (plain and net of the floor)."""
    spread = {name: distribution([f[name] for f in chosen if f[name] is not None])
              for name in ("ratio", "net_ratio", "before_median", "now_median")}
    spread["runs"] = len(chosen)
    spread["at_most_half"] = sum(f["ratio"] <= 0.5 for f in chosen)
    spread["net_at_most_half"] = sum(f["net_ratio"] is not None and f["net_ratio"] <= 0.5 for f in chosen)
    return spread


def _print_spread(kind: str, spread: dict) -> None:
    """One kind's line of ratios and medians (and one net of the floor when there is one)."""
    r, net, b, n = (spread[name] for name in ("ratio", "net_ratio", "before_median", "now_median"))
    print(f"  {kind} ({spread['runs']} runs): ratio min {r['min']:.2f} / median {r['median']:.2f} / p90 "
          f"{r['p90']:.2f} / max {r['max']:.2f}, {spread['at_most_half']} at or under 0.5; "
          f"median first step {b['median']:.0f} -> {n['median']:.0f} ms")
    if net["median"] is not None:
        print(f"    net of the floor: min {net['min']:.2f} / median {net['median']:.2f} / p90 {net['p90']:.2f}"
              f" / max {net['max']:.2f}, {spread['net_at_most_half']} at or under 0.5")
