"""The failure gallery's pages made in a forked second process (exporter.page_worker): the
site is the same bytes as when made in one process; what the child wrote reaches the
parent's sink and state; its errors are raised in the parent; a failed export stops it."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from conftest import FIXTURE_RUNS, FIXTURE_TASK_ROOT, fixture_tasks

from contract.errors import BadInput, HelperDied
from exporter import page_worker
from exporter.export import export_site
from exporter.page_worker import Beside
from exporter.site_swap import Staging

ROOT = Path(__file__).resolve().parent.parent


def files_of(folder: Path) -> dict[str, bytes]:
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def test_a_cli_export_equals_an_export_made_in_one_process(tmp_path, monkeypatch):
    """The CLI (one thread) renders the gallery in a forked child beside the rest; here the
    fork is refused, so this export_site makes every page in this process."""
    assert page_worker.can_fork(Staging(tmp_path / "probe"), 1) == (threading.active_count() == 1)
    monkeypatch.setattr(page_worker, "can_fork", lambda sink, runs: False)
    export_site([FIXTURE_RUNS], tmp_path / "one", task_index=fixture_tasks())
    monkeypatch.undo()
    env = {**os.environ, "ALERTFORGE_EXPORT_CACHE": str(tmp_path / "cache")}
    done = subprocess.run([sys.executable, "-m", "alertforge.cli", "export", str(FIXTURE_RUNS), "--out",
                           str(tmp_path / "two"), "--tasks", str(FIXTURE_TASK_ROOT)],
                          check=False, cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    one, two = files_of(tmp_path / "one"), files_of(tmp_path / "two")
    assert any(name.startswith("gallery/") and name != "gallery/index.html" for name in two)
    assert one == two


@pytest.fixture
def forking(monkeypatch):
    """Let Beside fork in this process (its other threads do not run in the child, which
    only writes a file and ends)."""
    monkeypatch.setattr(page_worker.threading, "active_count", lambda: 1)


def test_what_the_child_writes_reaches_the_parents_sink_and_pages(tmp_path, forking):
    sink = Staging(tmp_path / "site")
    pages: dict[str, str] = {"gallery/old.html": "kept"}
    parent = os.getpid()

    def work():
        assert os.getpid() != parent, "ran in a child"
        sink.write("gallery/a.html", b"<p>a</p>")
        pages["gallery/a.html"] = "digest-a"

    beside = Beside(work, sink, pages, runs=3)
    sink.write("index.html", b"<p>index</p>")
    beside.join()
    assert set(sink.files) == {"gallery/a.html", "index.html"}
    assert sorted(sink.written) == ["gallery/a.html", "index.html"]
    assert sink.bytes == len(b"<p>a</p>") + len(b"<p>index</p>")
    assert pages == {"gallery/old.html": "kept", "gallery/a.html": "digest-a"}
    assert (sink.path / "gallery" / "a.html").read_bytes() == b"<p>a</p>"
    sink.abort()


def test_an_error_in_the_child_is_raised_by_join(tmp_path, forking):
    sink = Staging(tmp_path / "site")

    def work():
        raise BadInput(tmp_path / "templates" / "gallery_page.html", "template error: boom")

    beside = Beside(work, sink, None, runs=3)
    with pytest.raises(BadInput, match="template error: boom") as caught:
        beside.join()
    assert caught.value.path == str(tmp_path / "templates" / "gallery_page.html")
    sink.abort()


def test_a_killed_child_is_a_one_line_error_naming_the_signal(tmp_path, forking):
    """The gallery's process killed alone (the OOM killer, a kill): join raises HelperDied,
    which the CLI prints as one line (exit 1), not a traceback."""
    from alertforge.cli.exit_codes import report

    sink = Staging(tmp_path / "site")
    beside = Beside(lambda: os.kill(os.getpid(), signal.SIGKILL), sink, None, runs=3)
    with pytest.raises(HelperDied, match=r"killed by signal 9 \(SIGKILL\).*site was not changed") as caught:
        beside.join()
    sink.abort()
    assert report(caught.value) == 1


def test_stop_ends_the_child_at_once(tmp_path, forking):
    sink = Staging(tmp_path / "site")
    beside = Beside(lambda: time.sleep(60), sink, None, runs=3)
    started = time.monotonic()
    beside.stop()
    assert time.monotonic() - started < 30
    beside.join()  # nothing left to wait for
    sink.abort()


def test_past_max_runs_or_with_threads_the_work_runs_here(tmp_path, forking, monkeypatch):
    sink = Staging(tmp_path / "site")
    ran_in: list[int] = []
    Beside(lambda: ran_in.append(os.getpid()), sink, None, runs=page_worker.MAX_RUNS + 1).join()
    monkeypatch.setattr(page_worker.threading, "active_count", lambda: 2)
    Beside(lambda: ran_in.append(os.getpid()), sink, None, runs=3).join()
    assert ran_in == [os.getpid(), os.getpid()]
    sink.abort()


SCRIPT = """
import sys, time
sys.path.insert(0, {root!r})
from pathlib import Path
from exporter import page_worker
from exporter.site_swap import Staging
page_worker.threading.active_count = lambda: 1
beside = page_worker.Beside(lambda: time.sleep(60), Staging(Path({site!r})), None, 3)
print(beside.child[0], flush=True)
if sys.argv[1] == "join":
    try:
        beside.join()
    except KeyboardInterrupt:
        print("interrupted", flush=True)
time.sleep(60)
"""


def _gone(pid: int, within: float = 20.0) -> bool:
    """Whether process ``pid`` ends (or is a zombie nobody reaped) within ``within`` seconds."""
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        try:
            state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except (FileNotFoundError, ProcessLookupError):
            return True
        if state in ("Z", "X"):
            return True
        time.sleep(0.05)
    return False


@pytest.mark.parametrize("how", ["parent killed", "join interrupted"])
def test_the_child_never_outlives_its_export(tmp_path, how):
    """kill -9 of the export process alone (the OOM killer, systemd) or Ctrl-C while it waits
    in join: the child ends too, never left writing into a staging folder nobody swaps in."""
    script = SCRIPT.format(root=str(ROOT), site=str(tmp_path / "site"))
    mode = "join" if how == "join interrupted" else "sleep"
    process = subprocess.Popen([sys.executable, "-c", script, mode], stdout=subprocess.PIPE, text=True)
    try:
        child = int(process.stdout.readline())
        assert not _gone(child, within=0.3), "the child runs its work"
        if how == "parent killed":
            process.kill()
        else:
            process.send_signal(signal.SIGINT)
            assert process.stdout.readline().strip() == "interrupted"
        assert _gone(child), "the child ended with its export"
    finally:
        process.kill()
        process.wait()


def test_a_damaged_template_bytecode_cache_is_compiled_again(tmp_path):
    from contract.paths import SITE_DIR
    from exporter.render import template_environment

    bytecode = tmp_path / "templates"
    first = template_environment(SITE_DIR / "templates", bytecode).get_template("_pass_at.html")
    compiled = [path for path in bytecode.rglob("*") if path.is_file()]
    assert compiled
    for cached in compiled:
        cached.write_bytes(cached.read_bytes()[:20])  # the magic header survives, the rest does not
    again = template_environment(SITE_DIR / "templates", bytecode).get_template("_pass_at.html")
    row = {"pass_at": {"1": 0.5, "2": 0.75}}
    assert again.render(row=row) == first.render(row=row)
