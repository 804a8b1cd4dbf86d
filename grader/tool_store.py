"""What promtool and amtool printed, kept on disk between processes, keyed by content (opt-in).

``ALERTFORGE_REPLAY_CACHE=DIR`` makes the process-wide grader keep in DIR what the real tools
answered: the failures of ``promtool test rules`` on a generated test file, the message of
``promtool check rules`` on a rule file, the receivers ``amtool config routes test`` gives a
label set. Each entry is keyed by the digest of everything the answer depends on (the files'
bytes, the labels) and of the binaries (resolved path, size and modification time of
promtool and amtool). A later process grading the same files (a resumed recording, a Harbor
job imported again, the test suite's many processes) reads the answer instead of running the
tool again. Only answers the tool completed are kept (a timeout or an unexplained output
raises and is not stored). Without the variable nothing is written anywhere.

The folder holds at most ``ALERTFORGE_REPLAY_CACHE_ENTRIES`` entries (default
:data:`MAX_ENTRIES`, each well under 10 kB): past that, the least recently written are
removed. An entry that cannot be read or is not JSON counts as absent; callers check shapes.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import tempfile
import time
from pathlib import Path
from typing import Any

import orjson

from grader.tools import AMTOOL, PROMTOOL

ENV = "ALERTFORGE_REPLAY_CACHE"
"""The environment variable naming the folder; unset or empty: nothing is kept on disk."""

ENTRIES_ENV = "ALERTFORGE_REPLAY_CACHE_ENTRIES"
"""The environment variable bounding the number of entries (default :data:`MAX_ENTRIES`)."""

MAX_ENTRIES = 20_000
"""Entries kept by default."""

TRIM_EVERY = 256
"""Writes by one process between two counts of the folder's entries."""


def _binary_identity(name: str) -> str | None:
    """``path, size, mtime`` of the binary ``name`` resolves to; None when it is not found."""
    found = shutil.which(name)
    if found is None:
        return None
    real = os.path.realpath(found)
    try:
        stat = os.stat(real)
    except OSError:
        return None
    return f"{real}\0{stat.st_size}\0{stat.st_mtime_ns}"


class ToolStore:
    """A folder of tool answers; ``folder=None`` reads :data:`ENV` when first used.

    :meth:`get` and :meth:`put` take a kind (``replay``, ``check-rules``, ``routes``) and a
    content digest the caller computed; the store adds the binaries to the key. Safe for
    several processes at once: each entry is written whole, then renamed into place.
    """

    def __init__(self, folder: Path | None = None, max_entries: int | None = None) -> None:
        self._folder = folder
        self._max_entries = max_entries
        self._resolved = folder is not None
        self._tools: bytes | None = None
        self._writes = 0

    def _ready(self) -> Path | None:
        if not self._resolved:
            self._resolved = True
            named = os.environ.get(ENV, "").strip()
            self._folder = Path(named) if named else None
        if self._max_entries is None:
            self._max_entries = int(os.environ.get(ENTRIES_ENV) or MAX_ENTRIES)
        if self._folder is not None and self._tools is None:
            identities = [_binary_identity(PROMTOOL), _binary_identity(AMTOOL)]
            if None in identities:
                self._folder = None
            else:
                self._tools = "\0".join(identities).encode()
        return self._folder

    def _path(self, folder: Path, kind: str, digest: str) -> Path:
        key = hashlib.sha256(self._tools + b"\0" + kind.encode() + b"\0" + digest.encode())
        return folder / f"{key.hexdigest()}.json"

    def get(self, kind: str, digest: str) -> Any:
        """The JSON value stored for ``(kind, digest)``, or None when there is none."""
        folder = self._ready()
        if folder is None:
            return None
        try:
            return orjson.loads(self._path(folder, kind, digest).read_bytes())
        except (OSError, orjson.JSONDecodeError):
            return None

    def put(self, kind: str, digest: str, value: Any) -> None:
        """Store ``value`` (JSON) for ``(kind, digest)``; a write that fails is skipped (the
        store only saves time). Then keep the folder within its bound."""
        folder = self._ready()
        if folder is None:
            return
        try:
            folder.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(prefix=".entry.", suffix=".tmp", dir=folder)
            with os.fdopen(fd, "wb") as handle:  # no fsync: a lost entry is only a miss
                handle.write(orjson.dumps(value))
            os.replace(tmp, self._path(folder, kind, digest))
        except OSError:
            return
        self._writes += 1
        if self._writes % TRIM_EVERY == 1:
            self.trim()

    def trim(self) -> None:
        """Remove the least recently written entries past the bound."""
        folder = self._ready()
        if folder is None:
            return
        try:
            listed = list(os.scandir(folder))
        except OSError:
            return
        entries = [e for e in listed if e.name.endswith(".json")]
        for entry in listed:  # left by a process killed mid-write
            if entry.name.endswith(".tmp") and _older_than(entry, 3600):
                _remove(entry)
        excess = len(entries) - self._max_entries
        if excess <= 0:
            return

        def written(entry: os.DirEntry) -> int:
            try:
                return entry.stat().st_mtime_ns
            except OSError:
                return 0

        for entry in sorted(entries, key=written)[:excess]:
            _remove(entry)


def _older_than(entry: os.DirEntry, seconds: float) -> bool:
    try:
        return time.time() - entry.stat().st_mtime > seconds
    except OSError:
        return False


def _remove(entry: os.DirEntry) -> None:
    try:
        os.unlink(entry.path)
    except OSError:
        pass
