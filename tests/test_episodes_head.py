"""The episode run view in real Chromium: its first step (the action, the observation, the
board's first state) is drawn from the run's head file while the whole run file is held back,
and the board updated in place from step to step shows exactly what a fresh load of that step
(?step=N) shows, walking forwards, backwards and jumping, so the incremental update cannot drift
(a closed fold by its summary: its body is built when first opened).

Runs: the demo's largest episode (examples/aria-episodes hard-poor, 26 steps, stale results
and penalties), a failed action whose observation is carried over (generated-diagnose-500), a
dual-agent session (lanes) and an episode with steps after done, from tests/fixtures/aria-2026-12/
(SOURCE.md there)."""

from __future__ import annotations

import json
import re

import pytest

from recorder.importers.aria_transcripts import EXAMPLE_EPISODES, import_episodes

pytestmark = pytest.mark.browser

SET2 = EXAMPLE_EPISODES.parents[2] / "tests" / "fixtures" / "aria-2026-12"
SOURCES = {
    "aria-hard__poor__": EXAMPLE_EPISODES / "hard-poor.json",
    "aria-generated__diagnose-500__": SET2 / "generated-diagnose-500-seed3.json",
    "aria-easy__dual-agent__": SET2 / "easy-dual-agent-seed3.json",
    "aria-easy__after-done__": SET2 / "easy-after-done-seed3.json",
}
"""The start of each run's id -> its transcript."""
BOARD = ("episode-result", "episode-score", "episode-board")
"""What the board is: the action's result, the score aside, the board (observation, lanes)."""

SNAPSHOT = """([ids, skip]) => ids.map((id) => {
  // a closed fold shows its summary alone: its body (built when first opened) is left out, and
  // so is whether it was built (data-drawn)
  const closed = (node) => node.tagName === "DETAILS" && !node.open;
  const walk = (node) => {
    if (node.nodeType === Node.TEXT_NODE) return node.data;
    if (node.nodeType !== Node.ELEMENT_NODE || skip.includes(node.id)) return "";
    const attributes = [...node.attributes].filter((a) => !(closed(node) && a.name === "data-drawn"))
      .map((a) => `${a.name}=${JSON.stringify(a.value)}`).sort().join(" ");
    const open = node.tagName === "DETAILS" ? ` open:${node.open}` : "";
    const children = closed(node) ? [node.querySelector(":scope > summary")].filter(Boolean) : [...node.childNodes];
    return `<${node.tagName} ${attributes}${open}>${children.map(walk).join("")}</${node.tagName}>`;
  };
  return walk(document.getElementById(id));
})"""


@pytest.fixture(scope="module")
def head_site(tmp_path_factory):
    from exporter.export import export_site
    from exporter.serve import serve_in_background

    runs = tmp_path_factory.mktemp("episode-head-runs")
    folders = import_episodes(list(SOURCES.values()), runs)
    out = tmp_path_factory.mktemp("episode-head-site")
    export_site([runs], out)
    server, url = serve_in_background(out, port=0, host="127.0.0.1")
    ids = {name: next(f.name for f in folders if f.name.startswith(name)) for name in SOURCES}
    yield out, url, ids
    server.shutdown()
    server.server_close()


def run_file(site, run_id: str) -> dict:
    return json.loads((site[0] / "data" / "runs" / f"{run_id}.json").read_bytes())


def snapshot(page, skip: tuple[str, ...] = ()) -> list[str]:
    """The board's elements (tag, every attribute, open state) and text, but the ids in ``skip``."""
    return page.evaluate(SNAPSHOT, [list(BOARD), list(skip)])


def same_board(got: list[str], expected: list[str], where: str) -> None:
    """Assert two snapshots are equal, naming the first place they differ."""
    for part, (a, b) in enumerate(zip(got, expected, strict=True)):
        if a != b:
            at = next(i for i, (x, y) in enumerate(zip(a + "\0", b + "\0")) if x != y)
            raise AssertionError(f"{where}: {BOARD[part]} differs at {at}:\n got {a[max(0, at - 300):at + 200]!r}\n"
                                 f" expected {b[max(0, at - 300):at + 200]!r}")


WHOLE_BOARD = {"width": 1280, "height": 4000}
"""A viewport the whole episode board fits in: its panels are drawn once in reach (lib/in-reach.js)."""


def open_step(page, site, run_id: str, n: int) -> None:
    page.set_viewport_size(WHOLE_BOARD)
    page.goto(f"{site[1]}run.html?run={run_id}&step={n}")
    page.wait_for_selector("body[data-ready='1']")


def at_step(page, n: int) -> None:
    page.wait_for_function(f"() => document.querySelector('#step-index').textContent === '{n}'")


@pytest.mark.parametrize(("name", "n"), [
    ("aria-hard__poor__", 0), ("aria-hard__poor__", 1), ("aria-generated__diagnose-500__", 1), ("aria-easy__dual-agent__", 1)])
def test_first_episode_step_is_drawn_from_the_head_before_the_run_file(page, head_site, name, n):
    run_id = head_site[2][name]
    run = run_file(head_site, run_id)
    head = json.loads((head_site[0] / "data" / "run-heads" / f"{run_id}.json").read_bytes())
    assert head["episode"]["done_step"] == next(
        (s["n"] for s in run["steps"] if (s["env"] or {}).get("done")), None)
    held: list = []
    page.route(re.compile(rf"/data/runs/{re.escape(run_id)}\.json$"), lambda route: held.append(route))
    page.set_viewport_size(WHOLE_BOARD)
    page.goto(f"{head_site[1]}run.html?run={run_id}&step={n}", wait_until="domcontentloaded")
    page.wait_for_function("() => performance.getEntriesByName('first-step-rendered').length === 1")
    assert page.locator("#run-view").get_attribute("data-loaded") == "head"
    assert page.locator("#run-view.episode-mode").count() == 1
    step = run["steps"][n]
    assert page.locator("#step-index").inner_text() == str(n)
    if n > 0:
        assert page.locator("#step-tool").inner_text() == step["tool"]["name"]
        arguments = page.locator("#step-arguments").inner_text()
        assert json.loads(arguments) == step["tool"]["arguments"], "the action is in the DOM"
    observation = run["steps"][step["env"]["shown_from"]]["env"]["observation"]
    services = page.locator("#episode-services tbody tr").evaluate_all("(rows) => rows.map((r) => r.dataset.service)")
    assert services == [s["name"] for s in observation["services"]], "the observation is in the DOM"
    assert page.locator("#episode-running-total").inner_text() == f"{step['total']:.4f}"
    assert page.locator("#episode-incident").get_attribute("data-state") == ("start" if n == 0 else "ongoing")
    from_head = snapshot(page, skip=("episode-agents",))
    assert page.locator("#timeline button.step-dot").count() == 0
    assert page.locator("#episode-curve-svg").count() == 0, "the curve comes with the whole run"
    assert page.locator("body[data-ready='1']").count() == 0

    for _ in range(100):
        if held:
            break
        page.wait_for_timeout(50)
    assert held, "the run file is requested after the first step is drawn"
    held[0].continue_()
    page.wait_for_selector("body[data-ready='1']")
    assert page.locator("#run-view").get_attribute("data-loaded") == "all"
    assert page.locator("#episode-curve-svg").count() == 1
    assert snapshot(page, skip=("episode-agents",)) == from_head, \
        "the board drawn from the head is the one the whole run draws"
    assert page.page_errors == []


@pytest.mark.parametrize("name", list(SOURCES))
def test_walking_the_steps_shows_the_board_a_fresh_load_shows(page, head_site, name):
    run_id = head_site[2][name]
    last = len(run_file(head_site, run_id)["steps"]) - 1
    fresh = []
    for n in range(last + 1):
        open_step(page, head_site, run_id, n)
        fresh.append(snapshot(page))
    assert len({tuple(board) for board in fresh}) > 1, "the steps differ, so the comparison can fail"
    open_step(page, head_site, run_id, 0)
    for n in range(1, last + 1):
        page.keyboard.press("ArrowRight")
        at_step(page, n)
        same_board(snapshot(page), fresh[n], f"walking forwards to step {n}")
    for n in range(last - 1, -1, -1):
        page.keyboard.press("ArrowLeft")
        at_step(page, n)
        same_board(snapshot(page), fresh[n], f"walking backwards to step {n}")
    page.keyboard.press("End")
    at_step(page, last)
    same_board(snapshot(page), fresh[last], "jumping to the last step")
    page.keyboard.press("Home")
    at_step(page, 0)
    same_board(snapshot(page), fresh[0], "jumping to the first step")
    assert page.page_errors == []


def test_an_episode_head_without_its_episode_block_waits_for_the_run_file(page, head_site):
    run_id = head_site[2]["aria-hard__poor__"]
    head = json.loads((head_site[0] / "data" / "run-heads" / f"{run_id}.json").read_bytes())
    del head["episode"]
    page.route(re.compile(rf"/data/run-heads/{re.escape(run_id)}\.json$"), lambda route: route.fulfill(
        status=200, content_type="application/json", body=json.dumps(head)))
    held: list = []
    page.route(re.compile(rf"/data/runs/{re.escape(run_id)}\.json$"), lambda route: held.append(route))
    page.goto(f"{head_site[1]}run.html?run={run_id}", wait_until="domcontentloaded")
    for _ in range(100):
        if held:
            break
        page.wait_for_timeout(50)
    assert held
    page.wait_for_timeout(200)
    assert page.locator("#run-view").is_hidden(), "nothing is drawn without the end of the incident"
    held[0].continue_()
    page.wait_for_selector("body[data-ready='1']")
    assert page.locator("#episode-incident").get_attribute("data-state") == "start"
    assert page.page_errors == []
