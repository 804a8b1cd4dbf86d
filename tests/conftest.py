"""Shared fixtures: the fixture site (built and served on 127.0.0.1) and Debian Chromium via Playwright."""

from __future__ import annotations

import os
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path

import pytest

REPLAY_CACHE_ENV = "ALERTFORGE_REPLAY_CACHE"
EXPORT_STATE_ENV = "ALERTFORGE_EXPORT_CACHE"


def pytest_configure(config):
    """One store of promtool and amtool answers for the whole session (grader/tool_store.py): the test
    processes, their workers and every CLI they start share it, so each distinct promtool
    input runs once a session. Made by the controlling process; workers inherit the variable.
    A folder named by the caller is used as it is and kept."""
    if not hasattr(config, "workerinput") and not os.environ.get(EXPORT_STATE_ENV):
        # incremental exports keep their state here, not in the user's cache (exporter.export_state)
        os.environ[EXPORT_STATE_ENV] = tempfile.mkdtemp(prefix="alertforge-test-export-state-")
        config.stash[_EXPORT_STATE_FOLDER] = os.environ[EXPORT_STATE_ENV]
    if hasattr(config, "workerinput") or os.environ.get(REPLAY_CACHE_ENV):
        return
    folder = tempfile.mkdtemp(prefix="alertforge-test-replays-")
    os.environ[REPLAY_CACHE_ENV] = folder
    config.stash[_REPLAY_FOLDER] = folder


def pytest_unconfigure(config):
    state = config.stash.get(_EXPORT_STATE_FOLDER, None)
    if state:
        shutil.rmtree(state, ignore_errors=True)
    folder = config.stash.get(_REPLAY_FOLDER, None)
    if folder:
        shutil.rmtree(folder, ignore_errors=True)
        os.environ.pop(REPLAY_CACHE_ENV, None)


_REPLAY_FOLDER = pytest.StashKey[str]()
_EXPORT_STATE_FOLDER = pytest.StashKey[str]()
FIXTURE_SITE = Path(__file__).parent / "fixtures" / "site"
FIXTURE_RUNS = FIXTURE_SITE / "runs"
FIXTURE_TASK_ROOT = FIXTURE_SITE / "tasks"


def fixture_tasks():
    """The task index an export of the fixture runs uses: the fixture task folder, then the
    bundled tasks (runs find their task by id and fingerprint, never by ``task.dir``)."""
    from contract.task_roots import TaskIndex

    return TaskIndex([FIXTURE_TASK_ROOT])
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


@dataclass(frozen=True)
class ServedSite:
    """A site exported from the fixture runs: where it was written and the URL it is served at."""

    out_dir: Path
    url: str


@pytest.fixture(scope="session")
def served_site(tmp_path_factory: pytest.TempPathFactory) -> ServedSite:
    """Export tests/fixtures/site/runs into a temporary folder and serve it on a free port."""
    from exporter.export import export_site
    from exporter.serve import serve_in_background

    out_dir = tmp_path_factory.mktemp("served-site")
    export_site([FIXTURE_RUNS], out_dir, task_index=fixture_tasks())
    server, url = serve_in_background(out_dir, port=0, host="127.0.0.1")
    yield ServedSite(out_dir=out_dir, url=url)
    server.shutdown()
    server.server_close()


@pytest.fixture(scope="session")
def browser():
    """Debian's Chromium driven by Playwright (sync API). Fails, never skips, when it is missing."""
    if shutil.which(CHROMIUM) is None and not Path(CHROMIUM).exists():
        pytest.fail(
            f"{CHROMIUM} not found: install Debian's chromium package (apt-get install chromium)"
        )
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield chromium
        chromium.close()


def _new_page(browser, **context_options):
    context = browser.new_context(viewport={"width": 1280, "height": 900}, **context_options)
    context.set_default_timeout(5000)
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    page.page_errors = errors
    return context, page


@pytest.fixture
def page(browser):
    """A fresh page in its own context, CSP enforced; ``page.page_errors`` collects uncaught errors."""
    context, new_page = _new_page(browser)
    yield new_page
    context.close()


@pytest.fixture
def page_without_csp(browser):
    """A fresh page whose context bypasses CSP, so escaping is tested without CSP's help."""
    context, new_page = _new_page(browser, bypass_csp=True)
    yield new_page
    context.close()


def shared_once(tmp_path_factory, worker_id: str, name: str, build):
    """``build(folder)`` run once for the whole session, even across the suite's parallel
    workers (pytest-xdist): the first worker to take ``name``'s lock builds into a folder
    beside the workers' own; the others wait and get the same folder. Returns the folder.
    What is shared this way is read, never changed, by the tests."""
    import fcntl

    if worker_id == "master":  # one process: nothing to share
        folder = tmp_path_factory.mktemp(name)
        build(folder)
        return folder
    root = tmp_path_factory.getbasetemp().parent  # this session's, shared by its workers
    folder, done = root / name, root / f"{name}.done"
    with open(root / f"{name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not done.exists():
            shutil.rmtree(folder, ignore_errors=True)
            folder.mkdir()
            build(folder)
            done.touch()
    return folder


@pytest.fixture(scope="session")
def reference_runs(tmp_path_factory, worker_id) -> dict[tuple[str, str], Path]:
    """Oracle, nop and partial recorded on the corpus sample (corpus_sample.SAMPLE: one task per
    workflow and the first task; real promtool/amtool), once a session (shared by workers).

    Maps ``(task id, policy)`` to the run folder.
    """
    from corpus_sample import SAMPLE

    from contract.files import read_json
    from recorder.reference_runs import record_reference

    out = shared_once(tmp_path_factory, worker_id, "reference-runs",
                      lambda folder: record_reference(SAMPLE, folder, jobs=2, progress=False))
    runs = {}
    for run_dir in sorted(p for p in out.iterdir() if p.is_dir()):
        summary = read_json(run_dir / "run.json")
        runs[(summary["task"]["id"], summary["policy"])] = run_dir
    return runs


def readable(run_id: str) -> str:
    """The readable part of a run id (``<readable>__<10 hex digest>``), the id before run.json
    version 2: what tests name runs by."""
    head, _, tail = run_id.rpartition("__")
    return head if head and len(tail) == 10 and all(c in "0123456789abcdef" for c in tail) else run_id


def site_run_id(site: Path, name: str) -> str:
    """The run id in an exported site for ``name`` (a run id, or its readable part via the
    site's data/aliases.json)."""
    import json

    if (site / "data" / "runs" / f"{name}.json").is_file():
        return name
    aliases = json.loads((site / "data" / "aliases.json").read_bytes())
    return aliases.get(name, name)


def find_run(out: Path, name: str) -> Path:
    """The run folder under ``out`` whose id is ``name`` or has ``name`` as its readable part."""
    if (out / name).is_dir():
        return out / name
    found = [p for p in out.iterdir() if p.is_dir() and readable(p.name) == name]
    assert len(found) == 1, (name, sorted(p.name for p in out.iterdir()))
    return found[0]


def assert_run_matches_schema(folder: Path) -> None:
    """run.json validates against the committed docs/schemas/run.schema.json (and its step
    blocks against step-extra-*.schema.json), trajectory.json against the atif models."""
    import json

    import atif
    import jsonschema

    schemas = Path(__file__).resolve().parents[1] / "docs" / "schemas"

    def schema(name):
        return json.loads((schemas / f"{name}.schema.json").read_text())

    jsonschema.validate(json.loads((folder / "run.json").read_text()), schema("run"))
    trajectory = json.loads((folder / "trajectory.json").read_text())
    atif.Trajectory.model_validate(trajectory)
    for step in trajectory["steps"]:
        extra = step.get("extra") or {}
        if "grade" in extra:
            jsonschema.validate(extra["grade"], schema("step-extra-grade"))
        if "env" in extra:
            jsonschema.validate(extra["env"], schema("step-extra-env"))
