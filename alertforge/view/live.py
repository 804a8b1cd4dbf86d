"""The background half of ``alertforge view``: read the inputs, import what needs importing
into the cache, export the site, and do it again whenever an input changes.

One thread (:meth:`LiveSite.run`) loops: every ``interval`` seconds (less often when a pass is
slow: :data:`WATCH_SHARE`) it takes each input's
key (:func:`exporter.export_state.key_of`; for a folder of runs, one key per run), imports
the Harbor and ARIA inputs whose key changed (into the cache; the importer skips trials it
already graded from the same files), and exports every current run into the cache's site,
all or nothing (:func:`exporter.export.export_site`, which redacts as any export does). The
first export of many runs is done in two passes: the newest :data:`FIRST_BATCH` runs, then
all, so a page is there early; a site the cache already holds (the same inputs viewed
before) is served at once while it is brought up to date. Each export that changes the site raises ``generation``; the
server answers ``data/live.json`` from :meth:`LiveSite.status`, and open pages poll it.
"""

from __future__ import annotations

import hashlib
import threading
import time
from pathlib import Path
from typing import Any

from alertforge.view.inputs import Input, run_folders
from contract.errors import BadInput
from contract.files import read_json
from contract.text import shown_name
from exporter.export_state import key_of

FIRST_BATCH = 24
"""Runs in the first export when there are more (the newest by run.json mtime)."""
SETTLE_S = 0.3
"""After a change is seen, the inputs must stay the same this long before an export."""
QUIET_SHARE = 0.5
"""After an export of d seconds, the next waits at least QUIET_SHARE x d."""
WATCH_SHARE = 0.1
"""While nothing changes, at most this share of the time goes to taking the inputs' keys: after
a pass of t seconds the next starts no sooner than t / WATCH_SHARE after this one began. A
folder of 233 runs (699 files) takes about 10 ms a pass, so it is still looked at every
``interval``; one of 10,000 runs took a core's 40% at one pass a second, and is now looked at
about every 4 s."""


def _slot(path: Path) -> str:
    return hashlib.sha256(str(path.resolve()).encode()).hexdigest()[:16]


class LiveSite:
    """The site built from ``inputs`` into ``cache / "site"``, kept up to date.

    ``regrade`` False imports Harbor trials without grading them (Harbor's own rewards only);
    ``tasks`` is a tasks folder for the Harbor importer (None: the bundled tasks). State read
    by the server: ``generation`` (0 until the first export), ``phase`` (``reading``,
    ``exporting``, ``ready``), ``runs`` (runs in the site), ``found`` (runs found so far),
    ``changed`` (run ids whose site file changed in the last export), ``problems`` (inputs
    that could not be read, with why).
    """

    def __init__(self, inputs: list[Input], cache: Path, *, regrade: bool = True,
                 tasks: Path | None = None, interval: float = 1.0, site: Path | None = None,
                 task_index=None):
        self.inputs, self.cache, self.regrade, self.tasks = inputs, Path(cache), regrade, tasks
        self.interval, self.task_index = interval, task_index
        self.site = Path(site) if site is not None else self.cache / "site"
        self._quiet_until = 0.0
        self._exported: tuple = ()
        self.memo: dict = {}
        self.site.mkdir(parents=True, exist_ok=True)
        self.generation, self.phase, self.runs, self.found = 0, "reading", 0, 0
        self.changed: list[str] = []
        self.problems: dict[str, str] = {}
        self._keys: dict[str, tuple] = {}
        if (self.site / "site-manifest.json").is_file():  # a warm cache: served while it is checked
            self.generation, self.runs = 1, len(self._run_files())
        self._imported: dict[str, list[Path]] = {}
        self._skipped: dict[str, list[dict]] = {}
        self._lock = threading.Lock()
        self._stop = threading.Event()

    def status(self) -> dict[str, Any]:
        """``data/live.json`` as the server answers it: ``{live: true, generation, phase, runs,
        found, changed[], problems{path: why}}``."""
        with self._lock:
            return {"live": True, "generation": self.generation, "phase": self.phase, "runs": self.runs,
                    "found": self.found, "changed": list(self.changed), "problems": dict(self.problems)}

    def up_to_date(self) -> bool:
        """Whether the site holds what the inputs hold now: an export was made, none is under
        way, and the inputs are as the last export (or look) saw them."""
        return self.generation > 0 and self.phase == "ready" and self._exported == self._fingerprint()

    def stop(self) -> None:
        """Ask the loop to end after the step it is in."""
        self._stop.set()

    def run(self) -> None:
        """Build, then rebuild on every change until :meth:`stop` (meant for a daemon thread)."""
        while not self._stop.is_set():
            try:
                self.refresh()
            except Exception as err:  # noqa: BLE001 - the loop must outlive one bad pass; it is reported
                with self._lock:
                    self.problems["(export)"] = f"{type(err).__name__}: {err}"
                    self.phase = "ready"
            self._stop.wait(self.interval)

    def _fingerprint(self) -> tuple:
        """Every input's key, taken together (a change anywhere changes it)."""
        return tuple(key_of(item.path) for item in self.inputs)

    def _set(self, **fields: Any) -> None:
        with self._lock:
            for name, value in fields.items():
                setattr(self, name, value)

    def _import(self, item: Input) -> list[Path]:
        """The run folders of one Harbor or ARIA input, imported into the cache."""
        out = self.cache / "imports" / _slot(item.path)
        if item.kind == "episodes":  # each transcript alone: one bad file hides no other
            from recorder.importers.aria_transcripts import import_episodes, transcript_files

            folders, skipped = [], []
            for transcript in transcript_files([item.path]):
                try:
                    folders += import_episodes([transcript], out)
                except BadInput as err:
                    skipped.append({"path": str(transcript), "reason": err.problem})
            self._skipped[str(item.path)] = skipped
            return folders
        from recorder.importers.harbor.importer import import_harbor

        summary = import_harbor([item.path], out, self.tasks, regrade=self.regrade)
        self._skipped[str(item.path)] = summary["skipped"]
        return [out / row["run_id"] for row in summary["imported"]]

    def _current_runs(self) -> tuple[list[Path], bool]:
        """Every run folder the inputs hold now, and whether anything changed since last time."""
        changed = False
        folders: list[Path] = []
        problems: dict[str, str] = {}
        for item in self.inputs:
            name = str(item.path)
            if item.kind == "runs":
                for folder in run_folders(item):
                    key = key_of(folder)
                    changed |= self._keys.get(str(folder)) != key
                    self._keys[str(folder)] = key
                    folders.append(folder)
                continue
            key = key_of(item.path)
            if self._keys.get(name) != key:
                changed = True
                try:
                    self._imported[name] = self._import(item)
                except BadInput as err:
                    problems[shown_name(name)] = err.problem
                    self._imported[name] = []
                self._keys[name] = key
            elif shown_name(name) in self.problems:
                problems[shown_name(name)] = self.problems[shown_name(name)]
            for skipped in self._skipped.get(name, []):  # a trial the importer could not read
                problems[shown_name(str(skipped.get("path")))] = str(skipped.get("reason"))
            folders += self._imported.get(name, [])
        gone = set(self._keys) - {str(f) for f in folders} - {str(i.path) for i in self.inputs}
        for name in gone:  # a run folder removed from a watched folder
            del self._keys[name]
            changed = True
        self._set(problems=problems, found=len(folders))
        return folders, changed

    def refresh(self) -> bool:
        """One pass: export when the inputs changed (or nothing was exported yet). Returns
        whether the site changed."""
        started = time.monotonic()
        if started < self._quiet_until:
            return False
        now = self._fingerprint()
        took = time.monotonic() - started
        self._quiet_until = max(self._quiet_until, started + took / WATCH_SHARE)
        if now == self._exported and self.generation:
            return False
        for _ in range(10):  # let a writer finish: a recorder writes trajectory.json, then run.json
            time.sleep(SETTLE_S)
            again = self._fingerprint()
            if again == now:
                break
            now = again
        self._exported = now
        folders, changed = self._current_runs()
        if not changed and self.generation:
            return False
        if not folders:
            self._set(phase="ready")
            return False
        first = self.generation == 0 and len(folders) > FIRST_BATCH
        if first:
            newest = sorted(folders, key=lambda f: (f / "run.json").stat().st_mtime_ns, reverse=True)
            self._export(newest[:FIRST_BATCH], partial=True)
        self._export(folders, partial=False)
        return True

    def _export(self, folders: list[Path], *, partial: bool) -> None:
        from exporter.export import export_site

        self._set(phase="exporting")
        before = self._run_files()
        folders = sorted(folders)
        started = time.monotonic()
        while True:
            try:
                summary = export_site(folders, self.site, task_index=self.task_index, memo=self.memo)
                break
            except BadInput as err:  # one bad run must not hide the others: leave it out, say why
                bad = next((f for f in folders if Path(err.path) == f or f in Path(err.path).parents), None)
                if bad is None:
                    raise
                folders.remove(bad)
                with self._lock:
                    self.problems[shown_name(str(bad))] = err.problem
                if not folders:
                    self._set(phase="ready")
                    return
        self._quiet_until = time.monotonic() + QUIET_SHARE * (time.monotonic() - started)
        after = self._run_files()
        changed = sorted(run for run, digest in after.items() if before.get(run) != digest)
        with self._lock:
            self.generation += 1
            self.changed = changed
            self.runs = int(summary.get("runs") or len(after))
            self.phase = "reading" if partial else "ready"

    def _run_files(self) -> dict[str, str]:
        """Run id -> digest of its site run file, from the site's manifest."""
        manifest = self.site / "site-manifest.json"
        if not manifest.is_file():
            return {}
        files = (read_json(manifest) or {}).get("files") or {}
        prefix = "data/runs/"
        return {path[len(prefix):-len(".json")]: digest for path, digest in files.items()
                if path.startswith(prefix) and path.endswith(".json")}
