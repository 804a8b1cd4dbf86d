"""What an incremental site export remembers between exports: each run's change key and record.

A run folder's *key* is the sorted ``(relative path, size, mtime_ns, inode)`` of its regular
files (:func:`key_of`, the key ``alertforge view`` uses too). Its *record* (built by
:mod:`exporter.export_runs`) holds what the site's shared files need from the run: its summary
row, task, the paths and sha256 of its own files, and by sha256 its heavy parts (head parts,
gallery entries, search tokens), each stored as a record of its own so a reused run's are
read only when needed; only masked text, never a secret. The stored record names its folder
(the sha256 of its real path): a state giving a folder another's record has it read again. Records are stored by their sha256
under the state folder of the site (``records/<sha256>.json``, never rewritten); ``state.json`` maps each run folder
(by the sha256 of its real path) to its key's digest and record, and says which site it
describes: the sha256 of that site's ``site-manifest.json``.

The state is kept outside the site (its bytes stay those of a full export of the same runs,
whatever the files' mtimes and inodes): under ``$ALERTFORGE_EXPORT_CACHE`` (default
``$XDG_CACHE_HOME/alertforge/export``, else ``~/.cache/alertforge/export``), a folder per site
(named by the sha256 of the site's real path); at most :data:`MAX_SITES` are kept. It is
written after the swap; a state whose manifest digest, format, generator or options differ
from the current ones is not used (every run is read again), so a kill anywhere, a lost cache
or a changed exporter costs time, never a wrong site.
"""

from __future__ import annotations

import fcntl
import hashlib
import os
import platform
import shutil
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson

from contract.files import write_atomic
from contract.task_roots import TaskIndex

STATE_VERSION = 3
MAX_SITES = 16
"""State folders kept (the least recently used others are removed)."""
MAX_FILES = 200_000
"""Files looked at under one path for its key; past that the key covers the first ones (in
walk order)."""
RECENT_S = 600
"""A state folder used this recently is never removed (another export may be using it)."""
LOCK = "lock"
STATE = "state.json"
RECORDS = "records"
_ROOT = Path(__file__).resolve().parents[1]


def key_of(path: Path) -> tuple:
    """The change key of ``path`` (a file or a folder; see the module); links are not followed
    and unreadable entries are left out."""
    path = Path(path)
    if path.is_file():
        stat = path.stat()
        return ((path.name, stat.st_size, stat.st_mtime_ns, stat.st_ino),)
    entries = []
    for folder, dirs, files in os.walk(path, followlinks=False):
        dirs.sort()
        for name in sorted(files):
            full = os.path.join(folder, name)
            try:
                stat = os.lstat(full)
            except OSError:
                continue
            if os.path.islink(full):
                continue
            entries.append((os.path.relpath(full, path), stat.st_size, stat.st_mtime_ns, stat.st_ino))
            if len(entries) >= MAX_FILES:
                return tuple(entries)
    return tuple(entries)


def digest_of(value: Any) -> str:
    """sha256 (hex) of ``value`` as canonical JSON (sorted keys; tuples as lists)."""
    return hashlib.sha256(orjson.dumps(value, option=orjson.OPT_SORT_KEYS | orjson.OPT_NON_STR_KEYS)).hexdigest()


def text_digest(text: str) -> str:
    """sha256 (hex) of ``text`` (a path or an id: what the state keeps instead of it)."""
    return hashlib.sha256(text.encode("utf-8", "surrogateescape")).hexdigest()


_GENERATOR: list[str] = []


def generator_digest(generated_by: str) -> str:
    """sha256 over ``generated_by``, the Python version and the source of ``exporter/`` and
    ``contract/``: a record made by other code is never reused."""
    if not _GENERATOR:
        digest = hashlib.sha256(f"{generated_by}\0{platform.python_version()}".encode())
        for folder in ("exporter", "contract"):
            for source in sorted((_ROOT / folder).rglob("*.py")):
                digest.update(source.relative_to(_ROOT).as_posix().encode() + b"\0" + source.read_bytes())
        _GENERATOR.append(digest.hexdigest())
    return _GENERATOR[0]


def options_digest(generated_by: str, redactor: Any, with_media: bool) -> str:
    """The digest of what changes every run's files: the generator (:func:`generator_digest`),
    the redaction rules (None: not redacted) and whether media are written."""
    rules = None if redactor is None else [
        [pattern.name, pattern.regex.pattern, pattern.regex.flags, pattern.group, list(pattern.needles)]
        for pattern in redactor.formats]
    return digest_of([STATE_VERSION, generator_digest(generated_by), rules, with_media])


def task_world(index: TaskIndex) -> dict[str, str]:
    """``{sha256 of a task id: digest of its task folders and their keys}`` for every task id
    the index knows: a run's task is read again when its id's digest changes (a folder
    added, removed or edited)."""
    return {text_digest(task_id): digest_of([[str(folder), key_of(folder)] for folder in folders])
            for task_id, folders in index.by_id().items()}


NO_TASK_FOLDER = digest_of([])
"""The task world digest of a task id no task root holds."""


def _run_entry_shape(entry: Any) -> bool:
    """Whether a saved run entry has the shape :func:`exporter.export_runs.keep_run` writes:
    ``{key, record, id, task_ref, world}`` strings and ``heavy``, a list of strings."""
    return (isinstance(entry, dict) and isinstance(entry.get("heavy", []), list)
            and all(isinstance(digest, str) for digest in entry.get("heavy", []))
            and all(isinstance(value, str) for name, value in entry.items() if name != "heavy")
            and isinstance(entry.get("record"), str))


def state_root() -> Path:
    """The folder that holds every site's state folder (see the module)."""
    if os.environ.get("ALERTFORGE_EXPORT_CACHE"):
        return Path(os.environ["ALERTFORGE_EXPORT_CACHE"])
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "alertforge" / "export"


@dataclass
class ExportState:
    """The state of one site (see the module): ``runs`` maps a run folder's path digest to
    ``{key, record, world, id}`` (its key's digest, its record's sha256, its task id's
    :func:`task_world` digest, the digest of its run_id as read), ``tasks`` a task id to the
    digest of the task the site's task files were made from, ``pages`` a gallery page's file
    the digest of what it was rendered from."""

    folder: Path
    options: str
    runs: dict[str, dict[str, str]] = field(default_factory=dict)
    tasks: dict[str, str] = field(default_factory=dict)
    pages: dict[str, str] = field(default_factory=dict)
    """A gallery page's file -> the digest of what it was rendered from."""
    writable: bool = True
    """False once a record could not be written (a full disk, a read-only cache)."""
    _lock: Any = field(default=None, repr=False)

    @classmethod
    def for_site(cls, out_dir: Path, options: str, root: Path | None = None) -> ExportState:
        """The (empty) state of the site in ``out_dir``, in its folder under ``root``."""
        root = Path(root) if root is not None else state_root()
        return cls(root / text_digest(os.path.realpath(out_dir))[:16], options)

    def load(self, manifest: bytes) -> None:
        """Fill ``runs`` and ``tasks`` from the saved state when it describes the site whose
        manifest is ``manifest`` with the same options; else leave them empty."""
        try:
            saved = orjson.loads((self.folder / STATE).read_bytes())
        except (OSError, orjson.JSONDecodeError):
            return
        if (not isinstance(saved, dict) or saved.get("version") != STATE_VERSION or not manifest
                or saved.get("options") != self.options
                or saved.get("manifest") != hashlib.sha256(manifest).hexdigest()):
            return
        if all(isinstance(saved.get(name), dict) for name in ("runs", "tasks", "pages")):
            # an entry of the wrong shape (a damaged state) is dropped: that run is read again
            self.runs = {key: entry for key, entry in saved["runs"].items() if _run_entry_shape(entry)}
            self.tasks = {key: value for key, value in saved["tasks"].items() if isinstance(value, str)}
            self.pages = {key: value for key, value in saved["pages"].items() if isinstance(value, str)}

    def _stored(self, digest: str) -> bytes | None:
        """The bytes stored as ``digest`` when they are what was stored (their sha256), else None."""
        try:
            data = (self.folder / RECORDS / f"{digest}.json").read_bytes()
        except OSError:
            return None
        return data if hashlib.sha256(data).hexdigest() == digest else None

    def record(self, digest: str) -> dict[str, Any] | None:
        """The record stored as ``digest`` (None when it is missing, not what was stored, or
        not JSON: a file written under the digest of its own damaged bytes)."""
        data = self._stored(digest)
        try:
            return orjson.loads(data) if data is not None else None
        except orjson.JSONDecodeError:
            return None

    def has_record(self, digest: str) -> bool:
        """Whether the record ``digest`` is stored as it was (its bytes are checked)."""
        return self._stored(digest) is not None

    def store_record(self, data: bytes) -> str:
        """Keep a record's bytes; returns their sha256 (its name). Best effort: a state that
        cannot be written only makes the next export read every run; a failed write sets
        :attr:`writable` False (the caller keeps what it needs elsewhere)."""
        digest = hashlib.sha256(data).hexdigest()
        path = self.folder / RECORDS / f"{digest}.json"
        try:
            if not self.has_record(digest):  # missing, or altered since: written again
                write_atomic(path, data)
        except OSError:
            self.writable = False
        return digest

    def save(self, manifest: bytes, keep: int = MAX_SITES) -> None:
        """Write ``state.json`` for the site whose manifest is ``manifest``, remove the records
        it does not name and the least recently used other sites' states beyond ``keep``."""
        state = {"version": STATE_VERSION, "manifest": hashlib.sha256(manifest).hexdigest(),
                 "options": self.options, "runs": self.runs, "tasks": self.tasks, "pages": self.pages}
        try:
            write_atomic(self.folder / STATE, orjson.dumps(state, option=orjson.OPT_SORT_KEYS))
            (self.folder / RECORDS).mkdir(exist_ok=True)
            named = {f"{digest}.json" for entry in self.runs.values()
                     for digest in (entry["record"], *entry.get("heavy", ()))}
            for path in (self.folder / RECORDS).iterdir():
                if path.name not in named:
                    path.unlink(missing_ok=True)
            self._forget_others(keep)
        except OSError:
            pass

    def hold(self) -> None:
        """Hold this state folder for the export now running (an exclusive lock on its
        ``lock`` file, waiting for another export of the same site): no other export removes
        it meanwhile (:meth:`_forget_others`). Best effort: a folder that cannot be made or
        locked is simply not protected."""
        try:
            self.folder.mkdir(parents=True, exist_ok=True)
            self._lock = open(self.folder / LOCK, "a+b")  # noqa: SIM115 - released by release()
            fcntl.flock(self._lock, fcntl.LOCK_EX)
        except OSError:
            self._lock = None

    def release(self) -> None:
        """Let the folder go (see :meth:`hold`)."""
        if self._lock is not None:
            self._lock.close()
            self._lock = None

    def _forget_others(self, keep: int) -> None:
        """Remove the other sites' state folders beyond the ``keep`` most recently used, except
        those used in the last :data:`RECENT_S` seconds or held by a running export."""
        def used(folder: Path) -> float:
            try:
                return (folder / STATE).stat().st_mtime
            except OSError:
                return 0.0

        others = [p for p in self.folder.parent.iterdir() if p.is_dir() and not p.is_symlink()
                  and p != self.folder and len(p.name) == 16 and (p / RECORDS).is_dir()]
        now = time.time()
        for stale in sorted(others, key=used, reverse=True)[keep - 1:]:
            if now - used(stale) < RECENT_S:
                continue
            try:
                with open(stale / LOCK, "a+b") as lock:
                    fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
                    shutil.rmtree(stale, ignore_errors=True)
            except OSError:
                continue  # held by an export running now
