"""The "first step settled" figure: the first frame presented after a run view's ``first-step-rendered`` mark, with its style and layout time.

bench/viewer_measure.py's init script sets ``first-step-settled`` in the second
requestAnimationFrame after ``first-step-rendered`` (the first one runs at the start of the next
frame, the second once that frame was produced). A load here is traced (Chromium's
``devtools.timeline`` and ``blink.user_timing`` categories through Playwright's
``browser.start_tracing``): the figure is the settled mark's time from navigation start, the time
from the rendered mark to it, and the durations of the renderer's ``UpdateLayoutTree`` (style
recalculation, CDP's RecalcStyleDuration) and ``Layout`` events (LayoutDuration) that start
between the two marks on the thread that set them. Tracing costs time, so these loads are not
the untraced ones' first-step figures; both sides of a pair are traced alike.

The load waits for the settled mark's console message (viewer_measure.INIT_SCRIPT), not with
``page.wait_for_function``: that call has Playwright evaluate its injected script in the page
(10-20 ms of script on this 2-core machine, seen in traces) as soon as ``goto`` returns at the
load event, which on a page whose load event comes right after the mark landed between the
mark and the settled frame and was counted in the figure. A load returns once its page is
ready (``body[data-ready]``: the whole run file drawn, the matrix built), so the next load, in the
other side's page or the floor's, does not share the CPU with it (each page has its own renderer
process, but this machine has two cores: the side whose later work was heavier slowed the other
side's next load).

Every traced load, a run's or the floor's, starts from a blank page (``about:blank``, then an idle
callback there): a navigation tears the old document down before the new one commits, and
leaving a run page costs 30-40 ms more than leaving the floor's blank page. In alternating pairs
the first load of a pair left the floor's page and the second a run page, so whichever side came
first was the faster (seen in every pair); and the floor, loaded after a run, paid the heavy
teardown that half the run loads did not. From a blank page each load is its own page's work.
"""

from __future__ import annotations

import json
import statistics

from viewer_measure import RENDERED, SETTLED, MeasureError
from viewer_site import run_url

CATEGORIES = ["devtools.timeline", "blink.user_timing"]
STYLE_EVENTS = {"UpdateLayoutTree"}
LAYOUT_EVENTS = {"Layout"}


def _mark_events(events: list[dict], name: str) -> list[dict]:
    return [e for e in events if e.get("name") == name and "blink.user_timing" in str(e.get("cat", ""))]


def frame_costs(trace: dict) -> dict:
    """Style and layout time (ms) between the RENDERED and SETTLED marks of a Chromium trace
    (``{"traceEvents": [...]}``): ``{"frame_ms", "style_ms", "layout_ms"}``. Raises MeasureError
    when either mark is missing."""
    events = trace.get("traceEvents", [])
    rendered, settled = _mark_events(events, RENDERED), _mark_events(events, SETTLED)
    if not rendered or not settled:
        raise MeasureError(f"the trace holds no {RENDERED if not rendered else SETTLED} mark")
    start, end = rendered[0], settled[-1]
    thread = (start.get("pid"), start.get("tid"))

    def total(names: set[str]) -> float:
        return sum(e.get("dur", 0) for e in events
                   if e.get("name") in names and e.get("ph") == "X" and (e.get("pid"), e.get("tid")) == thread
                   and start["ts"] <= e["ts"] <= end["ts"]) / 1000

    return {"frame_ms": (end["ts"] - start["ts"]) / 1000, "style_ms": total(STYLE_EVENTS),
            "layout_ms": total(LAYOUT_EVENTS)}


def leave_for_blank(page) -> None:
    """Navigate ``page`` to ``about:blank`` and wait for an idle callback there: the previous
    document's teardown is over before the next load is timed (see the top)."""
    page.goto("about:blank")
    page.evaluate("() => new Promise((resolve) => requestIdleCallback(() => resolve(), { timeout: 1000 }))")


def settled_load(page, url: str, timeout_ms: int = 60_000) -> dict:
    """One traced load of ``url`` in ``page`` (an :func:`viewer_measure.open_page` page), from a
    blank page (:func:`leave_for_blank`):
    ``{"settled_ms"}`` (the SETTLED mark, ms from navigation start) and :func:`frame_costs`.
    Raises MeasureError when the page never sets the marks."""
    from playwright.sync_api import Error as PlaywrightError

    browser = page.context.browser
    leave_for_blank(page)
    browser.start_tracing(page=page, categories=CATEGORIES)
    try:
        with page.expect_console_message(lambda message: message.text == SETTLED, timeout=timeout_ms):
            page.goto(url)
        settled = page.evaluate(f"() => performance.getEntriesByName('{SETTLED}', 'mark')[0].startTime")
    except PlaywrightError as error:
        raise MeasureError(f"{url}: no {SETTLED} mark ({str(error).splitlines()[0]})") from error
    finally:
        trace = json.loads(browser.stop_tracing())
    try:  # the page's later work ends before the next load, which it would share the CPU with
        page.wait_for_selector("body[data-ready='1']", state="attached", timeout=timeout_ms)
    except PlaywrightError as error:
        raise MeasureError(f"{url}: the view did not get ready ({str(error).splitlines()[0]})") from error
    return {"settled_ms": settled, **frame_costs(trace)}


FIGURES = ("settled_ms", "frame_ms", "style_ms", "layout_ms")


def settled_figures(page, base: str, run_id: str, loads: int) -> dict:
    """``loads`` traced loads of ``run_id`` (:func:`settled_load`): each figure's median and
    ``runs`` (every load's figures)."""
    runs = [settled_load(page, run_url(base, run_id)) for _ in range(loads)]
    return {**{name: statistics.median(r[name] for r in runs) for name in FIGURES}, "runs": runs}


def print_settled(figures: dict) -> None:
    """One line: the settled figure's medians (bench/viewer.py --site)."""
    print(f"  first step settled (traced, median of {len(figures['runs'])}): {figures['settled_ms']:.0f} ms from "
          f"navigation, {figures['frame_ms']:.1f} ms after the mark; style {figures['style_ms']:.1f} ms, layout "
          f"{figures['layout_ms']:.1f} ms")


def _ratio_spread(pairs: list[dict], name: str) -> dict:
    ratios = [p["now"][name] / p["before"][name] for p in pairs if p["before"][name]]
    if not ratios:
        return {"median": None, "min": None, "max": None}
    return {"median": statistics.median(ratios), "min": min(ratios), "max": max(ratios)}


def settled_pairs(pages: dict, bases: dict, run_id: str, rounds: int, floor_url: str) -> dict:
    """``rounds`` pairs of traced loads of ``run_id`` on the "before" and "now" sites (``pages``
    and ``bases`` map each side to an open page and a base URL), the order swapped every round,
    and as many traced loads of the navigation floor's blank page (viewer_ab.floor_server).

    Returns ``{"run_id", "pairs", "floor", "ratio": {figure: {"median", "min", "max"}},
    "net_ratio"}``: each pair's ratio now / before per figure and their spread; ``net_ratio`` is
    the ratio of the settled medians net of the floor's settled median."""
    from viewer_ab import net_ratio

    pairs, floors = [], []
    for number in range(rounds):
        order = ("before", "now") if number % 2 == 0 else ("now", "before")
        pairs.append({side: settled_load(pages[side], run_url(bases[side], run_id)) for side in order})
        floors.append(settled_load(pages[order[-1]], floor_url)["settled_ms"])
    medians = {side: statistics.median(p[side]["settled_ms"] for p in pairs) for side in ("before", "now")}
    floor = statistics.median(floors)
    return {"run_id": run_id, "pairs": pairs, "floor": {"ms": floors, "median": floor}, "medians": medians,
            "ratio": {name: _ratio_spread(pairs, name) for name in FIGURES},
            "net_ratio": net_ratio(medians["now"], medians["before"], floor)}


def print_settled_pairs(result: dict) -> None:
    """Each pair's figures (before / now) and the ratios' medians and spreads."""
    print(f"first step settled, before / now alternating (traced): {result['run_id']}")
    for number, pair in enumerate(result["pairs"], 1):
        b, n = pair["before"], pair["now"]
        print(f"  pair {number}: settled {b['settled_ms']:.0f} / {n['settled_ms']:.0f} ms, frame after the mark "
              f"{b['frame_ms']:.1f} / {n['frame_ms']:.1f} ms, style {b['style_ms']:.1f} / {n['style_ms']:.1f} ms, "
              f"layout {b['layout_ms']:.1f} / {n['layout_ms']:.1f} ms")
    for name in FIGURES:
        r = result["ratio"][name]
        if r["median"] is not None:
            print(f"  {name} now / before: median {r['median']:.2f}x (min {r['min']:.2f}, max {r['max']:.2f})")
    net = result["net_ratio"]
    print(f"  settled, medians {result['medians']['before']:.0f} / {result['medians']['now']:.0f} ms, net of the "
          f"floor ({result['floor']['median']:.0f} ms): {'-' if net is None else f'{net:.2f}x'}")
