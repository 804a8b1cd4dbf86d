"""Incremental export: exporting into a site this version wrote reuses the runs that did not
change (hard links, no reading) and gives the same bytes as a full export into a new folder;
a kill at any write point leaves the old site, and the next export succeeds."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import FIXTURE_RUNS, FIXTURE_TASK_ROOT

from contract.task_roots import TaskIndex
from exporter.export import export_site
from exporter.site_swap import verify_site

ROOT = Path(__file__).resolve().parents[1]
CHANGED_RUN = "fixture-partial-s1"


def _tree(folder: Path) -> dict[str, bytes]:
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def _copy_runs(root: Path) -> Path:
    runs = root / "runs"
    shutil.copytree(FIXTURE_RUNS, runs)
    return runs


def _add_run(runs: Path, name: str = "fixture-partial-s1-copy") -> None:
    shutil.copytree(runs / CHANGED_RUN, runs / name)
    run = json.loads((runs / name / "run.json").read_text())
    run["run_id"] = name
    (runs / name / "run.json").write_text(json.dumps(run))


def _change_run(runs: Path) -> None:
    path = runs / CHANGED_RUN / "trajectory.json"
    trajectory = json.loads(path.read_text())
    trajectory["steps"][-1]["message"] = "a changed last message"
    path.write_text(json.dumps(trajectory))


def _remove_run(runs: Path) -> None:
    shutil.rmtree(runs / CHANGED_RUN)


def _touch_run(runs: Path) -> None:
    os.utime(runs / CHANGED_RUN / "run.json", ns=(1, 1))


def _rename_folder(runs: Path) -> None:
    (runs / CHANGED_RUN).rename(runs / "renamed-folder")


CHANGES = {"add": (_add_run, 4), "change": (_change_run, 3), "remove": (_remove_run, 3),
           "touch": (_touch_run, 3), "rename": (_rename_folder, 3), "nothing": (lambda runs: None, 4)}
"""A change to the runs, and how many runs the next export reuses."""


@pytest.mark.parametrize("change", sorted(CHANGES))
def test_an_incremental_export_is_a_full_export_byte_for_byte(tmp_path, change):
    runs = _copy_runs(tmp_path)
    site = tmp_path / "site"
    first = export_site([runs], site, task_index=TaskIndex([FIXTURE_TASK_ROOT]))
    assert first["reused"] == 0
    make, reused = CHANGES[change]
    make(runs)
    again = export_site([runs], site, task_index=TaskIndex([FIXTURE_TASK_ROOT]))
    assert again["reused"] == reused and again["linked"] > 0
    full = export_site([runs], tmp_path / "full", task_index=TaskIndex([FIXTURE_TASK_ROOT]), incremental=False)
    assert _tree(site) == _tree(tmp_path / "full")
    assert again["runs"] == full["runs"] and again["bytes"] == full["bytes"] and again["files"] == full["files"]
    assert (again["masked"], again["redaction"]) == (full["masked"], full["redaction"])
    assert verify_site(site) == []


def test_unchanged_files_are_hard_links_to_the_previous_site(tmp_path):
    runs = _copy_runs(tmp_path)
    site = tmp_path / "site"
    export_site([runs], site, task_index=TaskIndex([FIXTURE_TASK_ROOT]))
    inode = lambda rel: (site / rel).stat().st_ino
    kept, changed = "data/runs/fixture-oracle-s1.json", f"data/runs/{CHANGED_RUN}.json"
    before = {rel: inode(rel) for rel in (kept, changed, "static/app.css", "data/index.json")}
    _change_run(runs)
    export_site([runs], site, task_index=TaskIndex([FIXTURE_TASK_ROOT]))
    assert inode(kept) == before[kept] and inode("static/app.css") == before["static/app.css"]
    assert inode(changed) != before[changed]
    assert (site / kept).stat().st_nlink == 1  # the old site is gone: no second name left


def test_other_options_or_an_edited_task_read_the_runs_again(tmp_path):
    runs = _copy_runs(tmp_path)
    tasks = tmp_path / "tasks"
    shutil.copytree(FIXTURE_TASK_ROOT, tasks)
    site = tmp_path / "site"
    export_site([runs], site, task_index=TaskIndex([tasks]))
    assert export_site([runs], site, task_index=TaskIndex([tasks]), redactor=False)["reused"] == 0
    assert export_site([runs], site, task_index=TaskIndex([tasks]), with_media=False)["reused"] == 0
    export_site([runs], site, task_index=TaskIndex([tasks]))
    instruction = tasks / "fixture-checkout" / "instruction.md"
    instruction.write_text(instruction.read_text() + "\nOne more line.\n")
    again = export_site([runs], site, task_index=TaskIndex([tasks]))
    checkout_runs = sum(1 for p in runs.iterdir()
                        if json.loads((p / "run.json").read_text())["task"]["id"] == "fixture-checkout")
    assert again["reused"] == 4 - checkout_runs
    export_site([runs], tmp_path / "full", task_index=TaskIndex([tasks]), incremental=False)
    assert _tree(site) == _tree(tmp_path / "full")


def test_a_site_without_its_state_is_exported_whole(tmp_path, monkeypatch):
    runs = _copy_runs(tmp_path)
    site = tmp_path / "site"
    export_site([runs], site, task_index=TaskIndex([FIXTURE_TASK_ROOT]))
    monkeypatch.setenv("ALERTFORGE_EXPORT_CACHE", str(tmp_path / "another-cache"))
    again = export_site([runs], site, task_index=TaskIndex([FIXTURE_TASK_ROOT]))
    assert again["reused"] == 0 and again["linked"] > 0  # same bytes are still linked, not copied


def _cli_export(runs: Path, out: Path, crash: str | None = None) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k != "ALERTFORGE_CRASH_AT"}
    if crash:
        env["ALERTFORGE_CRASH_AT"] = crash
    return subprocess.run([sys.executable, "-m", "alertforge.cli", "export", str(runs), "--tasks",
                           str(FIXTURE_TASK_ROOT), "--out", str(out)],
                          capture_output=True, text=True, env=env, cwd=ROOT, check=False, timeout=300)


def _killed_export_leaves_a_whole_site(tmp_path: Path, points: list[str]) -> None:
    runs = _copy_runs(tmp_path)
    site = tmp_path / "site"
    assert _cli_export(runs, site).returncode == 0
    old = _tree(site)
    _add_run(runs)
    _change_run(runs)
    export_site([runs], tmp_path / "reference", task_index=TaskIndex([FIXTURE_TASK_ROOT]), incremental=False)
    new = _tree(tmp_path / "reference")
    for point in points:
        done = _cli_export(runs, site, crash=point)
        assert done.returncode == -signal.SIGKILL, (point, done.stderr)
        now = _tree(site)
        assert now == (new if point in ("export:swapped", "export:removed") else old), point
        assert verify_site(site) == []
        if now == new:  # start the next kill from the old site again
            _remove_copy_and_restore(runs)
            assert _cli_export(runs, site).returncode == 0 and _tree(site) == old
            _add_run(runs)
            _change_run(runs)
    assert _cli_export(runs, site).returncode == 0
    assert _tree(site) == new
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".site.")] == []


def _remove_copy_and_restore(runs: Path) -> None:
    shutil.rmtree(runs)
    _copy_runs(runs.parent)


def test_a_killed_incremental_export_leaves_the_old_site(tmp_path):
    _killed_export_leaves_a_whole_site(tmp_path, ["export:run:2", "export:swapped"])


@pytest.mark.sweep
def test_a_kill_at_every_write_point_leaves_a_whole_site(tmp_path):
    _killed_export_leaves_a_whole_site(tmp_path, ["export:run:1", "export:run:3", "export:run:5", "export:staged",
                                                  "export:manifest", "export:swapped", "export:removed"])


def test_other_sites_states_are_bounded_but_never_one_in_use(tmp_path):
    """Past ``keep`` sites, the least recently used states are removed, except one held by a
    running export (its lock) or used in the last RECENT_S seconds."""
    from exporter.export_state import RECENT_S, ExportState

    root = tmp_path / "cache"
    states = [ExportState.for_site(tmp_path / f"site-{n}", "options", root) for n in range(4)]
    for number, state in enumerate(states):
        state.save(b"manifest")
        old = 1_000_000 + number  # long ago, in this order of use
        os.utime(state.folder / "state.json", (old, old))
    states[1].hold()  # an export of site-1 is running
    os.utime(states[2].folder / "state.json")  # site-2 was used just now
    newest = ExportState.for_site(tmp_path / "site-new", "options", root)
    newest.save(b"manifest", keep=2)
    kept = {path.name for path in root.iterdir()}
    assert kept == {states[1].folder.name, states[2].folder.name, newest.folder.name}, RECENT_S
    states[1].release()
    os.utime(states[2].folder / "state.json", (1, 1))
    ExportState.for_site(tmp_path / "site-new", "options", root).save(b"manifest", keep=2)
    assert len(list(root.iterdir())) == 2  # the newest and the most recently used other


@pytest.mark.parametrize("altered", ["every record", "heavy parts", "run rows", "cut records"])
def test_an_altered_state_costs_a_read_never_a_failed_or_wrong_site(tmp_path, altered):
    """Records changed on disk since they were stored are neither reused nor trusted when the
    same bytes are stored again: the runs are read again, the site is a full export's. A run
    row of the wrong type (exporter.run_record.RunRecord reads it as contract.site.RunRow) too."""
    runs = _copy_runs(tmp_path)
    site, cache = tmp_path / "site", tmp_path / "cache"
    export_site([runs], site, task_index=TaskIndex([FIXTURE_TASK_ROOT]), incremental=cache)
    before = _tree(site)
    (state,) = cache.glob("*/state.json")
    heavy = {digest for entry in json.loads(state.read_text())["runs"].values() for digest in entry["heavy"]}
    if altered in ("run rows", "cut records"):  # stored under their new digests: only their content is wrong
        document = json.loads(state.read_text())
        for entry in document["runs"].values():
            value = json.loads((state.parent / "records" / f"{entry['record']}.json").read_text())
            value["summary"]["reward"] = "lots"
            data = json.dumps(value).encode()
            data = data[: len(data) // 2] if altered == "cut records" else data  # not JSON
            entry["record"] = hashlib.sha256(data).hexdigest()
            (state.parent / "records" / f"{entry['record']}.json").write_bytes(data)
        state.write_text(json.dumps(document))
    for record in state.parent.glob("records/*.json"):
        if altered == "every record" or (altered == "heavy parts" and record.stem in heavy):
            record.write_text('{"run_id": "other", "heavy": {}}')
    again = export_site([runs], site, task_index=TaskIndex([FIXTURE_TASK_ROOT]), incremental=cache)
    assert again["reused"] == 0 and _tree(site) == before and verify_site(site) == []
    assert export_site([runs], site, task_index=TaskIndex([FIXTURE_TASK_ROOT]), incremental=cache)["reused"] == 4


@pytest.mark.parametrize("damage", ["run entry not an object", "two folders one record"])
def test_a_state_of_the_wrong_shape_costs_a_read_never_a_failed_site(tmp_path, damage):
    runs = _copy_runs(tmp_path)
    site, cache = tmp_path / "site", tmp_path / "cache"
    export_site([runs], site, task_index=TaskIndex([FIXTURE_TASK_ROOT]), incremental=cache)
    before = _tree(site)
    (state_file,) = cache.glob("*/state.json")
    state = json.loads(state_file.read_text())
    keys = sorted(state["runs"])
    if damage == "run entry not an object":
        state["runs"][keys[0]] = "x"
    else:  # every folder pointed at the first folder's record
        for key in keys[1:]:
            state["runs"][key] = {**state["runs"][key], "record": state["runs"][keys[0]]["record"],
                                  "heavy": state["runs"][keys[0]]["heavy"]}
    state_file.write_text(json.dumps(state))
    again = export_site([runs], site, task_index=TaskIndex([FIXTURE_TASK_ROOT]), incremental=cache)
    assert again["reused"] == (3 if damage == "run entry not an object" else 1)
    assert _tree(site) == before and verify_site(site) == []


def test_a_cache_that_cannot_be_written_costs_time_never_a_failed_site(tmp_path):
    """ALERTFORGE_EXPORT_CACHE naming a file (or a full disk): no record can be kept, so the
    runs' parts stay in the export's own spool; the site is a full export's."""
    runs = _copy_runs(tmp_path)
    export_site([runs], tmp_path / "plain", task_index=TaskIndex([FIXTURE_TASK_ROOT]))
    blocked = tmp_path / "a-file"
    blocked.write_text("not a folder")
    export_site([runs], tmp_path / "site", task_index=TaskIndex([FIXTURE_TASK_ROOT]), incremental=blocked)
    assert _tree(tmp_path / "site") == _tree(tmp_path / "plain")


def test_a_second_export_leaves_a_running_exports_staging_folder(tmp_path):
    from exporter.site_swap import recover

    site = tmp_path / "site"
    site.mkdir()
    sleeper = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        live = tmp_path / f".site.staging-{sleeper.pid}-0123abcd"
        live.mkdir()
        gone = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True,
                              text=True, check=True).stdout.strip()
        dead = tmp_path / f".site.staging-{gone}-4567cdef"
        dead.mkdir()
        recover(site)
        assert live.is_dir(), "an export still running keeps its staging folder"
        assert not dead.exists(), "a killed export's staging folder is removed"
    finally:
        sleeper.kill()
        sleeper.wait()
    recover(site)
    assert not live.exists()
