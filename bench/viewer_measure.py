"""Measure one page of an exported site in Chromium: bytes and requests before its first paint, the time to it, step switches.

The browser is Debian's Chromium driven by Playwright with the test suite's flags and the HTTP
cache disabled (CDP ``Network.setCacheDisabled``), so every load fetches every file again.

Bytes are encoded body sizes (what came over the wire before any decoding; without
Content-Encoding the file size): Resource Timing's ``encodedBodySize`` of the navigation entry
(the HTML) and of every resource entry, plus requests the page's Resource Timing does not see
(the favicon, fetched by the browser itself) from Playwright's ``request.sizes()
['responseBodySize']``, placed on the page's clock by ``request.timing`` (W3C Resource Timing
Level 2, https://www.w3.org/TR/resource-timing/; Playwright's Request.sizes / Request.timing).
A request counts as "before the mark" when its response ended at or before the mark's
``startTime``; the HTML is one of them.

The run view's mark ``first-step-rendered`` (site/static/js/pages/run.js) must be set only when
the step is in the DOM (issue 19). An init script wraps ``performance.mark``: when the page sets
``first-step-rendered`` or ``first-step-painted``, it records synchronously what #step-detail
then holds (the tool name, the arguments' and output's lengths, the diff rows, the ids of the
li.check with a non-empty label, the episode's action result and board). Once the page is
ready (``body[data-ready="1"]``, every part built) the same step is recorded again, with the
checks then on the checks panel's first screen (VISIBLE_CHECKS_JS); :func:`dom_problems`
compares the two.
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass, field

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
                 "--disable-sync"]
"""As tests/conftest.py launches it."""
VIEWPORT = {"width": 1280, "height": 900}
RENDERED = "first-step-rendered"
PAINTED = "first-step-painted"
SETTLED = "first-step-settled"
"""Set by INIT_SCRIPT in the second requestAnimationFrame after RENDERED: the first frame presented
after the mark (its style, layout and paint) is done. The script also logs it (``console.debug``
with the mark's name), so a bench can wait for it without evaluating anything in the page."""

SNAPSHOT_JS = """() => {
  const byId = (id) => document.getElementById(id);
  const text = (id) => (byId(id)?.textContent ?? "").trim();
  const shown = (id) => { const node = byId(id); return !!node && !node.hidden && !node.closest("[hidden]"); };
  return {
    step: text("step-index"),
    tool: text("step-tool"),
    arguments: shown("step-arguments-box") ? text("step-arguments").length : 0,
    output: shown("step-output-box") ? text("step-output").length : 0,
    diff_rows: document.querySelectorAll("#step-diff tr.diff-line").length,
    labelled: Array.from(document.querySelectorAll("li.check"))
      .filter((item) => (item.querySelector(".check-label")?.textContent ?? "").trim() !== "")
      .map((item) => item.dataset.checkId),
    episode_result: shown("episode-result") ? text("episode-result-body").length : 0,
    episode_board: shown("episode-board"),
    episode_services: document.querySelectorAll("#episode-services tr[data-service]").length,
    episode_services_waiting: byId("episode-services-panel")?.dataset.drawn === "0",
  };
}"""

INIT_SCRIPT = """(() => {
  performance.setResourceTimingBufferSize(100000);
  const snapshot = (SNAPSHOT);
  const original = performance.mark.bind(performance);
  window.__benchMarks = {};
  performance.mark = function (name, options) {
    const entry = original(name, options);
    if ((name === "RENDERED" || name === "PAINTED") && !(name in window.__benchMarks)) {
      window.__benchMarks[name] = snapshot();
    }
    if (name === "RENDERED") requestAnimationFrame(() => requestAnimationFrame(() => {
      original("SETTLED");
      console.debug("SETTLED");
    }));
    return entry;
  };
})();""".replace("SNAPSHOT", SNAPSHOT_JS).replace("RENDERED", RENDERED).replace("PAINTED", PAINTED).replace("SETTLED", SETTLED)

VISIBLE_CHECKS_JS = """() => {
  const panel = document.getElementById("checks-panel");
  const top = panel ? panel.getBoundingClientRect().top : 0;
  return Array.from(document.querySelectorAll("li.check")).filter((item) => {
    if (item.getClientRects().length === 0) return false;
    const box = item.getBoundingClientRect();
    return (box.bottom > 0 && box.top < innerHeight) || box.top - top < innerHeight;
  }).map((item) => item.dataset.checkId);
}"""
"""The checks a reader sees without scrolling the checks panel: those in the viewport and those
within one viewport height of the panel's top (the panel's first screen; at 1280x900 the panel
starts below the fold of the run view)."""

RESOURCES_JS = """() => {
  const navigation = performance.getEntriesByType("navigation")[0];
  const entry = (r) => ({ url: r.name, start: r.startTime, end: r.responseEnd, body: r.encodedBodySize,
                          decoded: r.decodedBodySize, transfer: r.transferSize });
  return {
    origin: performance.timeOrigin,
    entries: [entry(navigation), ...performance.getEntriesByType("resource").map(entry)],
    marks: Object.fromEntries(performance.getEntriesByType("mark").map((m) => [m.name, m.startTime])),
    paint: Object.fromEntries(performance.getEntriesByType("paint").map((p) => [p.name, p.startTime])),
  };
}"""

SWITCH_LOOP = """async (count) => {
  const detail = document.getElementById("step-detail");
  const last = Number(document.getElementById("step-count").textContent);
  const times = [];
  let forward = true;
  for (let k = 0; k < count; k += 1) {
    const at = Number(document.getElementById("step-index").textContent);
    if (at >= last) forward = false;
    if (at <= 0) forward = true;
    const key = forward ? "ArrowRight" : "ArrowLeft";
    const event = new KeyboardEvent("keydown", { key, bubbles: true, cancelable: true });
    performance.mark("switch-input");
    document.dispatchEvent(event);
    detail.getBoundingClientRect();
    document.body.offsetHeight;
    performance.mark("switch-updated");
    const measure = performance.measure("step-switch-full", "switch-input", "switch-updated");
    times.push(measure.duration);
    if (k % 20 === 19) await new Promise((resolve) => requestAnimationFrame(() => setTimeout(resolve, 0)));
  }
  return times;
}"""
"""bench/viewer.py's step-switch loop (a keydown event's timestamp to the step detail updated,
style and layout included); it turns back at the last step, so short runs can be switched as
often as long ones (on a run longer than the switch count it is the loop it always was)."""


class MeasureError(Exception):
    """A page could not be measured or broke the mark's contract; the message names the page."""


@dataclass
class Load:
    """One load of one page: figures in ms (from navigation start) and bytes.

    ``requests``/``bytes`` count what finished by the mark (or first paint); ``*_all`` what the
    page loaded until the network was quiet (only on loads that waited for it: else None).
    """

    mark_ms: float | None
    painted_ms: float | None
    requests: int | None
    bytes: int | None
    requests_started: int | None
    decoded: int | None = None
    """Bytes by the mark once decoded (gzip undone): what the issue's 100 kB target counts."""
    requests_all: int | None = None
    bytes_all: int | None = None
    files_before: list[str] = field(default_factory=list)
    phases: dict = field(default_factory=dict)
    checked: dict = field(default_factory=dict)
    """What the DOM contract compared: the ready step's parts (sizes) and the visible checks."""


def percentile(values: list[float], fraction: float) -> float:
    """The nearest-rank percentile of ``values`` (fraction in [0, 1]; the existing bench's p95)."""
    ordered = sorted(values)
    return ordered[int(fraction * (len(ordered) - 1))]


def open_page(browser):
    """A new context and page of ``browser`` with the HTTP cache disabled and the mark wrapper
    installed: ``(context, page)``; page errors collect in ``page.bench_errors``."""
    context = browser.new_context(viewport=VIEWPORT)
    context.set_default_timeout(60_000)
    context.add_init_script(INIT_SCRIPT)
    page = context.new_page()
    cdp = context.new_cdp_session(page)
    cdp.send("Network.enable")
    cdp.send("Network.setCacheDisabled", {"cacheDisabled": True})
    page.bench_errors = []
    page.on("pageerror", lambda error: page.bench_errors.append(str(error)))
    return context, page


def open_browser(playwright):
    """Launch Chromium (CHROMIUM, CHROMIUM_ARGS) and :func:`open_page` in it: ``(browser, page)``;
    errors: Playwright's, when Chromium is missing."""
    browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
    return browser, open_page(browser)[1]


def _browser_requests(page):
    finished: list = []

    def collect(request) -> None:
        finished.append(request)

    page.on("requestfinished", collect)
    return finished, lambda: page.remove_listener("requestfinished", collect)


def _short(url: str, base: str) -> str:
    return url.removeprefix(base)


def account(resources: dict, browser_requests: list, at: float | None, base: str) -> dict:
    """Requests, encoded body bytes (``bytes``) and decoded body bytes (``decoded``: after
    gzip is undone, Resource Timing's ``decodedBodySize``) before page time ``at`` (ms; None:
    every one).

    ``resources`` is RESOURCES_JS's answer; ``browser_requests`` Playwright requests, of which
    those absent from Resource Timing (the favicon) are added by their response end.
    """
    entries = [dict(e) for e in resources["entries"]]
    seen = {e["url"] for e in entries}
    for request in browser_requests:
        if request.url in seen or request.url.startswith("data:"):
            continue
        timing = request.timing
        end = timing["startTime"] + max(timing["responseEnd"], 0) - resources["origin"]
        entries.append({"url": request.url, "start": timing["startTime"] - resources["origin"], "end": end,
                        "body": request.sizes()["responseBodySize"], "decoded": request.sizes()["responseBodySize"]})
    done = [e for e in entries if at is None or e["end"] <= at]
    started = [e for e in entries if at is None or e["start"] < at]
    return {"requests": len(done), "bytes": sum(int(e["body"]) for e in done), "started": len(started),
            "decoded": sum(int(e.get("decoded") or 0) for e in done),
            "files": [_short(e["url"], base) for e in done]}


def dom_problems(at_mark: dict | None, at_ready: dict, visible: list[str]) -> list[str]:
    """What the step detail lacked when the mark was set, against the same step once ready.

    ``at_mark``/``at_ready`` are SNAPSHOT_JS answers, ``visible`` the ids of the checks in the
    viewport when ready. Returns one sentence per missing part (empty: the contract held).
    """
    if at_mark is None:
        return ["the mark was never set"]
    problems = []
    if at_mark["step"] != at_ready["step"]:
        problems.append(f"step index {at_mark['step']!r} at the mark, {at_ready['step']!r} when ready")
    if at_mark["tool"] != at_ready["tool"]:
        problems.append(f"tool call {at_mark['tool']!r} at the mark, {at_ready['tool']!r} when ready")
    for part in ("arguments", "output", "episode_result"):
        if at_ready[part] > 0 and at_mark[part] == 0:
            problems.append(f"no {part.replace('_', ' ')} at the mark ({at_ready[part]} characters when ready)")
    if at_mark["diff_rows"] < at_ready["diff_rows"]:
        problems.append(f"{at_mark['diff_rows']} diff rows at the mark, {at_ready['diff_rows']} when ready")
    if at_ready["episode_board"] and not at_mark["episode_board"]:
        problems.append("the episode board (the observation) was hidden at the mark")
    # a board panel out of reach at the mark is drawn once in reach (site/static/js/lib/in-reach.js)
    if at_mark["episode_services"] < at_ready["episode_services"] and not at_mark.get("episode_services_waiting"):
        problems.append(f"{at_mark['episode_services']} service rows at the mark, {at_ready['episode_services']} when ready")
    labelled = set(at_mark["labelled"])
    missing = [check for check in visible if check not in labelled]
    if missing:
        problems.append(f"{len(missing)} of the {len(visible)} visible checks had no label at the mark "
                        f"(first: {missing[0]})")
    return problems


def load_run(page, base: str, url: str, quiet: bool, timeout_ms: int = 60_000) -> tuple[Load, list[str]]:
    """Load a run view; return its figures and the DOM contract's problems (see dom_problems).

    Waits for the mark snapshots and ``body[data-ready="1"]``; ``quiet`` also waits until the
    network is quiet (Playwright's networkidle: 500 ms without requests) for the *_all figures.
    Raises MeasureError when the page does not get ready or throws.
    """
    from playwright.sync_api import Error as PlaywrightError

    finished, stop = _browser_requests(page)
    try:
        page.bench_errors.clear()
        page.goto(url)
        page.wait_for_selector("body[data-ready='1']", state="attached", timeout=timeout_ms)
        if quiet:
            page.wait_for_load_state("networkidle")
        marks = page.evaluate("() => window.__benchMarks")
        at_ready = page.evaluate(SNAPSHOT_JS)
        visible = page.evaluate(VISIBLE_CHECKS_JS)
        resources = page.evaluate(RESOURCES_JS)
    except PlaywrightError as error:  # its TimeoutError too
        raise MeasureError(f"{url}: the page did not get ready ({str(error).splitlines()[0]}); "
                           f"page errors: {page.bench_errors or 'none'}") from error
    finally:
        stop()
    mark_ms = resources["marks"].get(RENDERED)
    before = account(resources, finished, mark_ms, base) if mark_ms is not None else None
    load = Load(mark_ms=mark_ms, painted_ms=resources["marks"].get(PAINTED),
                requests=before and before["requests"], bytes=before and before["bytes"],
                decoded=before and before["decoded"],
                requests_started=before and before["started"], files_before=before["files"] if before else [],
                phases=resources["marks"])
    if quiet:
        everything = account(resources, finished, None, base)
        load.requests_all, load.bytes_all = everything["requests"], everything["bytes"]
    load.checked = {**{k: v for k, v in at_ready.items() if k != "labelled"}, "visible_checks": len(visible)}
    problems = dom_problems(marks.get(RENDERED), at_ready, visible)
    if marks.get(RENDERED) is not None and marks.get(PAINTED) is not None:
        problems += [f"at {PAINTED}: {p}" for p in dom_problems(marks[PAINTED], at_ready, visible)]
    if page.bench_errors:
        problems.append(f"page errors: {page.bench_errors}")
    return load, problems


def load_page(page, base: str, url: str) -> dict:
    """Load a page that is not a run view (home, gallery) until the network is quiet.

    Returns ``{"requests_all", "bytes_all", "first_paint": {name: {"ms", "requests", "bytes"}}}``
    for every first-* mark the page set and the browser's first-contentful-paint.
    """
    finished, stop = _browser_requests(page)
    try:
        page.goto(url)
        page.wait_for_load_state("networkidle")
        resources = page.evaluate(RESOURCES_JS)
    finally:
        stop()
    everything = account(resources, finished, None, base)
    points = {name: at for name, at in resources["marks"].items() if name.startswith("first-")}
    points.update({name: at for name, at in resources["paint"].items() if name == "first-contentful-paint"})
    first = {}
    for name, at in points.items():
        before = account(resources, finished, at, base)
        first[name] = {"ms": at, "requests": before["requests"], "bytes": before["bytes"]}
    return {"requests_all": everything["requests"], "bytes_all": everything["bytes"], "first_paint": first}


def switch_times(page, switches: int) -> dict:
    """Median and p95 (ms) of ``switches`` step switches on the loaded run view (SWITCH_LOOP),
    and the median of the page's own ``step-switch`` measures when it sets them."""
    times = page.evaluate(SWITCH_LOOP, switches)
    js_only = page.evaluate("() => performance.getEntriesByName('step-switch').map((entry) => entry.duration)")
    return {"switch_median_ms": statistics.median(times), "switch_p95_ms": percentile(times, 0.95),
            "switch_js_median_ms": statistics.median(js_only) if js_only else None}
