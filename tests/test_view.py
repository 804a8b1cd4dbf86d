"""``alertforge view``: the real command serving a watched folder of runs on 127.0.0.1, with
real Chromium. A run copied into the folder appears in the open home page, and a step added
to a run being recorded appears in its open run view, with no reload and the reader's place
kept. Waits are generous and nothing asserts on time (speed lives in bench/view.py)."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from contract.files import write_json

pytestmark = pytest.mark.browser

WAIT_MS = 90_000


@pytest.fixture
def viewer(tmp_path):
    """Start ``alertforge view <tmp>/watched --port 0``; yields (watched folder, base URL)."""
    watched = tmp_path / "watched"
    watched.mkdir()
    processes = []

    def start(*paths: Path, extra: tuple[str, ...] = ()) -> tuple[subprocess.Popen, str]:
        env = {**os.environ, "ALERTFORGE_VIEW_CACHE": str(tmp_path / "cache")}
        process = subprocess.Popen([sys.executable, "-m", "alertforge.cli", "view", *map(str, paths or [watched]),
                                    "--port", "0", "--interval", "0.5", *extra],
                                   stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
        processes.append(process)
        line = process.stdout.readline()
        found = re.search(r"at (http://127\.0\.0\.1:\d+/)", line)
        assert found, (line, process.stderr.read() if process.poll() is not None else "")
        return process, found.group(1)

    yield watched, start
    for process in processes:
        process.terminate()
        process.wait(timeout=30)


def _growing_copy(run: Path, into: Path, steps: int) -> Path:
    """A copy of ``run`` as it stood after its first ``steps`` steps, still being recorded."""
    target = into / run.name
    shutil.copytree(run, target)
    trajectory = json.loads((run / "trajectory.json").read_text())
    summary = json.loads((run / "run.json").read_text())
    trajectory["steps"] = trajectory["steps"][:steps]
    summary.update(steps=steps, status="running", finished_at=None)
    write_json(target / "trajectory.json", trajectory)
    write_json(target / "run.json", summary)
    return target


def test_a_copied_run_and_a_new_step_appear_in_open_pages(viewer, reference_runs, page):
    watched, start = viewer
    first, second = sorted(reference_runs.items())[:2]
    (_, oracle), (_, other) = first, second
    growing = _growing_copy(oracle, watched, 3)
    _, url = start()
    page.goto(url)
    page.wait_for_selector(f"#runs-table tr[data-run-id='{growing.name}']", timeout=WAIT_MS)
    page.wait_for_selector("#live-status[data-generation]", timeout=WAIT_MS)
    page.evaluate("window.__kept = 1")
    assert page.locator("#runs-table tr[data-run-id]").count() == 1

    shutil.copytree(other, watched / other.name)
    page.wait_for_selector(f"#runs-table tr[data-run-id='{other.name}']", timeout=WAIT_MS)
    assert page.evaluate("window.__kept") == 1  # drawn in place, not reloaded
    assert page.locator("#runs-table tr[data-run-id]").count() == 2

    page.goto(f"{url}run.html?run={growing.name}&step=1")
    page.wait_for_selector("body[data-ready='1']", timeout=WAIT_MS)
    page.wait_for_selector("#live-status[data-generation]", timeout=WAIT_MS)
    assert page.inner_text("#step-count") == "2"
    page.evaluate("window.__kept = 1")
    full = json.loads((oracle / "trajectory.json").read_text())
    write_json(growing / "trajectory.json", full)
    write_json(growing / "run.json", json.loads((oracle / "run.json").read_text()))
    last = str(len(full["steps"]) - 1)
    page.wait_for_function("(last) => document.getElementById('step-count').textContent === last", arg=last,
                           timeout=WAIT_MS)
    assert page.evaluate("window.__kept") == 1
    assert page.inner_text("#step-index") == "1"  # the reader's place is kept
    assert page.locator("#timeline button").count() == len(full["steps"])
    assert page.page_errors == []


def test_an_open_episode_takes_its_new_steps_in_place(viewer, page):
    """An episode being recorded (one agent): its open run view draws the steps added since,
    board included, in place (its board was drawn once already; found by a helper: the second
    draw stopped on the lanes table the first had taken out)."""
    watched, start = viewer
    episode = Path(__file__).parent / "fixtures" / "site" / "runs" / "fixture-episode-easy"
    growing = _growing_copy(episode, watched, 2)
    _, url = start()
    page.goto(f"{url}run.html?run={growing.name}")
    page.wait_for_selector("body[data-ready='1']", timeout=WAIT_MS)
    page.wait_for_selector("#live-status[data-generation]", timeout=WAIT_MS)
    assert page.inner_text("#step-count") == "1"
    full = json.loads((episode / "trajectory.json").read_text())
    write_json(growing / "trajectory.json", full)
    write_json(growing / "run.json", json.loads((episode / "run.json").read_text()))
    last = str(len(full["steps"]) - 1)
    page.wait_for_function("(last) => document.getElementById('step-count').textContent === last", arg=last,
                           timeout=WAIT_MS)
    page.keyboard.press("End")
    page.wait_for_function("(last) => document.getElementById('step-index').textContent === last", arg=last)
    assert "could not update" not in page.inner_text("#live-status")
    assert page.locator("#episode-board").is_visible()
    assert page.page_errors == []


def test_an_open_gallery_page_takes_the_new_site_in_place(viewer, reference_runs, page):
    """The failure gallery is static HTML; under view, a new export puts the page's new
    content in place (an episode run copied in fills its penalty section), no reload."""
    watched, start = viewer
    nop = next(path for (task, policy), path in sorted(reference_runs.items()) if policy == "nop")
    shutil.copytree(nop, watched / nop.name)
    _, url = start()
    page.goto(f"{url}gallery/index.html")
    page.wait_for_selector("#live-status[data-generation]", timeout=WAIT_MS)
    penalties = "section[aria-labelledby='gallery-penalty-heading']"
    assert page.locator(f"{penalties} table").count() == 0
    page.evaluate("window.__kept = 1")
    episode = Path(__file__).parent / "fixtures" / "site" / "runs" / "fixture-episode-easy"
    shutil.copytree(episode, watched / episode.name)
    page.wait_for_selector(f"{penalties} table", timeout=WAIT_MS)
    assert page.evaluate("window.__kept") == 1  # put in place, not reloaded
    assert page.locator("#main[data-live-generation]").count() == 1
    assert page.locator("#live-status").count() == 1
    assert page.page_errors == []


def test_an_open_compare_page_draws_a_growing_run_again_in_place(viewer, reference_runs, page):
    watched, start = viewer
    runs = sorted(reference_runs.items())
    task = runs[0][0][0]
    oracle = next(path for (t, policy), path in runs if t == task and policy == "oracle")
    nop = next(path for (t, policy), path in runs if t == task and policy == "nop")
    growing = _growing_copy(oracle, watched, 3)
    shutil.copytree(nop, watched / nop.name)
    _, url = start()
    page.goto(f"{url}compare.html?a={growing.name}&b={nop.name}")
    page.wait_for_selector("body[data-ready='1']", timeout=WAIT_MS)
    page.wait_for_selector("#live-status[data-generation]", timeout=WAIT_MS)
    before = page.get_attribute("#curve-a", "data-totals").split(",")
    page.evaluate("window.__kept = 1")
    full = json.loads((oracle / "trajectory.json").read_text())
    write_json(growing / "trajectory.json", full)
    write_json(growing / "run.json", json.loads((oracle / "run.json").read_text()))
    page.wait_for_selector("#compare-view[data-live-generation]", timeout=WAIT_MS)
    after = page.get_attribute("#curve-a", "data-totals").split(",")
    assert len(before) == 3 and len(after) == len(full["steps"])
    assert page.evaluate("window.__kept") == 1
    assert page.page_errors == []


def test_an_exported_site_on_a_static_host_asks_nothing(tmp_path, reference_runs, page):
    from exporter.export import export_site
    from exporter.serve import serve_in_background

    run = next(iter(reference_runs.values()))
    export_site([run], tmp_path / "site")
    assert not (tmp_path / "site" / "data" / "live.json").exists()
    server, url = serve_in_background(tmp_path / "site", port=0, host="127.0.0.1")
    asked = []
    page.on("request", lambda request: asked.append(request.url) if "live" in request.url else None)
    messages = []
    page.on("console", lambda message: messages.append(message.text) if message.type == "error" else None)
    try:
        for address in (url, f"{url}run.html?run={run.name}", f"{url}gallery/index.html"):
            page.goto(address)
            if "gallery" not in address:
                page.wait_for_selector("body[data-ready='1']")
            page.wait_for_timeout(1500)
            assert asked == [] and page.locator("#live-status").count() == 0
        assert messages == [] and page.page_errors == []
    finally:
        server.shutdown()
        server.server_close()


def test_view_refuses_what_it_cannot_read_and_says_why(tmp_path):
    site = tmp_path / "site"
    (site / "data").mkdir(parents=True)
    (site / "data" / "index.json").write_text("{}")
    (tmp_path / "notes.txt").write_text("hello")
    (tmp_path / "link").symlink_to(tmp_path / "notes.txt")
    for args, word in (([str(tmp_path / "missing")], "not found"), ([str(tmp_path / "notes.txt")], "not a folder"),
                       ([str(tmp_path / "link")], "is a link"), ([str(site), str(tmp_path)], "viewed alone")):
        out = subprocess.run([sys.executable, "-m", "alertforge.cli", "view", *args, "--port", "0"],
                             check=False, capture_output=True, text=True, timeout=60)
        assert out.returncode == 2 and word in out.stderr and "Traceback" not in out.stderr, (args, out.stderr)


def test_a_harbor_job_is_imported_into_the_cache_and_never_written(viewer, page, tmp_path):
    job = Path(__file__).parent / "fixtures" / "harbor-job"
    before = sorted((p.relative_to(job), p.stat().st_mtime_ns) for p in job.rglob("*"))
    _, start = viewer
    process, url = start(job, extra=("--no-regrade",))
    page.goto(url)
    page.wait_for_selector("#runs-table tr[data-run-id]", timeout=WAIT_MS)
    assert sorted((p.relative_to(job), p.stat().st_mtime_ns) for p in job.rglob("*")) == before
    assert any((tmp_path / "cache").rglob("harbor-import.json"))
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline and process.poll() is None:
        time.sleep(0.2)
    assert process.poll() is None  # still serving


def test_demo_and_view_refuse_a_taken_port_before_doing_anything(tmp_path):
    import socket

    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen(1)
        port = str(busy.getsockname()[1])
        runs = tmp_path / "runs"
        for args in (["demo", "--port", port, "--runs", str(runs), "--out", str(tmp_path / "site")],
                     ["view", str(tmp_path), "--port", port]):
            out = subprocess.run([sys.executable, "-m", "alertforge.cli", *args], check=False,
                                 capture_output=True, text=True, timeout=120,
                                 env={**os.environ, "ALERTFORGE_VIEW_CACHE": str(tmp_path / "cache")})
            assert out.returncode == 2 and port in out.stderr and "taken" in out.stderr, (args, out.stderr)
            assert not runs.exists() or not any(runs.iterdir())


def test_the_cache_removes_only_its_own_folders_and_never_an_input(tmp_path):
    from alertforge.view.cache import USED, view_cache

    root = tmp_path / "cache"
    mine = root / "myruns"
    mine.mkdir(parents=True)
    (mine / "run.json").write_text("{}")
    others = [root / f"other{n}" for n in range(12)]
    for folder in others:
        folder.mkdir()
    made = [view_cache([tmp_path / f"in{n}"], root, keep=3) for n in range(6)]
    assert mine.is_dir() and all(folder.is_dir() for folder in others)  # never made by the cache
    assert sum(folder.is_dir() for folder in made) == 3 and made[-1].is_dir() and (made[-1] / USED).is_file()
    inside = view_cache([root / "myruns"], root, keep=1)
    assert mine.is_dir() and inside.is_dir()


def test_the_view_server_answers_head_without_a_body_and_a_null_byte_with_400(viewer):
    import http.client
    from urllib.parse import urlparse

    _, start = viewer
    _, url = start()
    address = urlparse(url)
    for method, path, status, body in (("HEAD", "/data/live.json", 200, b""), ("GET", "/data/live.json%00", 400, None)):
        connection = http.client.HTTPConnection(address.hostname, address.port, timeout=30)
        connection.request(method, path)
        response = connection.getresponse()
        data = response.read()
        assert response.status == status, (method, path, response.status)
        if body is not None:
            assert data == body
        connection.close()


def test_an_empty_folder_is_watched_as_a_folder_of_runs(tmp_path):
    from alertforge.view.inputs import classify

    empty = tmp_path / "runs"
    empty.mkdir()
    assert classify(empty).kind == "runs", "runs recorded into it later must appear, not a Harbor error"
    (empty / "notes").mkdir()
    assert classify(empty).kind == "harbor", "a folder holding something else is still tried as Harbor's"


def test_a_folder_that_cannot_be_listed_is_bad_input_naming_it(tmp_path, monkeypatch):
    from alertforge.view.inputs import classify
    from contract.errors import BadInput

    folder = tmp_path / "runs"
    folder.mkdir()
    real = Path.iterdir

    def refuse(self):
        if self == folder:
            raise PermissionError(13, "Permission denied")
        return real(self)

    monkeypatch.setattr(Path, "iterdir", refuse)
    with pytest.raises(BadInput, match="cannot be read: Permission denied") as caught:
        classify(folder)
    assert caught.value.path == str(folder)


def test_a_slow_pass_over_the_inputs_spaces_out_the_next_ones(tmp_path, monkeypatch):
    # an idle view of a huge folder took its keys every second (40% of a core at 10,000 runs):
    # after a pass of t seconds the next waits until t / WATCH_SHARE after it began
    from alertforge.view import live as live_module
    from alertforge.view.inputs import classify

    runs = tmp_path / "runs"
    runs.mkdir()
    site = live_module.LiveSite([classify(runs)], tmp_path / "cache")
    clock = [100.0]
    monkeypatch.setattr(live_module.time, "monotonic", lambda: clock[0])
    passes = []

    def slow_fingerprint():
        passes.append(clock[0])
        clock[0] += 0.5  # a pass of half a second
        return ()

    monkeypatch.setattr(site, "_fingerprint", slow_fingerprint)
    site._exported, site.generation = (), 1  # nothing changed since the last export
    assert site.refresh() is False and passes == [100.0]
    for second in range(1, 5):  # the loop's next wake-ups, one a second: no pass
        clock[0] = 100.5 + second
        assert site.refresh() is False
    assert passes == [100.0]
    clock[0] = 100.0 + 0.5 / live_module.WATCH_SHARE
    site.refresh()
    assert passes == [100.0, 105.0]
    fast = live_module.LiveSite([classify(runs)], tmp_path / "cache2")  # a quick pass: every wake-up
    fast._exported, fast.generation = fast._fingerprint(), 1
    monkeypatch.setattr(live_module.time, "monotonic", lambda: clock[0])
    assert fast.refresh() is False and fast._quiet_until <= clock[0]
