"""Fresh task folders for the OpenEnv server: built by the generator, cached by their inputs.

A fresh task is named by ``(split, workflow, tier, seed)``:

- ``train``: the generator's seed is the client's ``seed`` (``0 <= seed < 2**32``), so a
  client can build the same task itself (``record-openenv`` does, for reference policies);
- ``heldout``: the generator's seed is derived from the client's ``seed`` (an index into the
  held-out set) and the server's master seed with HMAC-SHA256, and lies at or above ``2**32``:
  a client that does not know the master seed cannot rebuild the task, and no held-out task
  is ever a train task.

The task id says the split, workflow, tier and the client's seed
(``af-train-missed-page-postmortem-medium-s7``, ``af-heldout-latency-slo-easy-n3``), never the
generator's seed of a held-out task. A folder is written once (atomically, by the generator's
:func:`~tasks.generator.generate.write_task`) under ``<state dir>/tasks/`` in a folder named
by the digest of its inputs, of :func:`generator_version` and (held-out) of the master seed,
so the same inputs give the same folder and a changed generator or master seed new ones.
The master seed is read from the environment variable :data:`MASTER_SEED_ENV`, else from
``<state dir>/heldout-master-seed`` (created with 256 random bits, mode 0600, on first use).

The cache is bounded: at most ``max_tasks`` folders (:data:`MAX_FRESH_TASKS` by default); a
folder's mtime is set each time it is handed out, and building one past the bound removes the
least recently handed out first, never one a session of this process still holds
(:meth:`FreshTasks.task` holds it, :meth:`FreshTasks.release` lets go).
"""

from __future__ import annotations

import fcntl
import functools
import hashlib
import hmac
import os
import secrets
import shutil
import threading
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from contract.errors import BadInput
from contract.version import __version__


class ResetRefused(ValueError):
    """Reset arguments the environment refuses (an unknown split, workflow, tier, seed,
    task or argument): the client's to fix. The ``/ws`` session reports it as an error
    message; ``POST /reset`` answers HTTP 422 with it (recorder.environments.openenv_server.app)."""

SPLITS = ("train", "heldout")
TRAIN_SEED_LIMIT = 2**32
"""Train seeds are below this; held-out generator seeds are at or above it."""
MASTER_SEED_ENV = "ALERTFORGE_HELDOUT_SEED"
MASTER_SEED_FILE = "heldout-master-seed"
MAX_FRESH_TASKS = 256
"""Fresh task folders the cache keeps by default (about 60-200 kB each)."""
_HELD: Counter = Counter()
"""Folders the sessions of this process hold (a count per path), never evicted."""
_HELD_LOCK = threading.Lock()
ATTEMPTS = 20
"""Generator seeds tried for one task before giving up: a seed whose scenarios admit no safe
check time (the generator's CatalogError, rare) is replaced by the next derived one."""


@dataclass(frozen=True)
class FreshTask:
    """One fresh task: where it is and what names it (``seed`` is the client's seed)."""

    path: Path
    task_id: str
    split: str
    workflow: str
    tier: str
    seed: int


def check_seed(seed: object) -> int:
    """``seed`` when it is an integer from 0 to ``2**32 - 1``.

    Raises:
        ValueError: anything else (a bool, a float, a string, out of range).
    """
    if isinstance(seed, bool) or not isinstance(seed, int) or not 0 <= seed < TRAIN_SEED_LIMIT:
        raise ResetRefused(f"seed must be an integer from 0 to {TRAIN_SEED_LIMIT - 1}, not {seed!r}")
    return seed


def default_state_dir() -> Path:
    """``$XDG_STATE_HOME/alertforge/openenv`` (``~/.local/state/alertforge/openenv``)."""
    base = os.environ.get("XDG_STATE_HOME") or str(Path.home() / ".local" / "state")
    return Path(base) / "alertforge" / "openenv"


@functools.cache
def generator_version() -> str:
    """sha256 (hex) over the package version and every file of ``tasks/generator`` (path and
    bytes, sorted): any change to the generator names new cache folders."""
    import tasks.generator

    root = Path(tasks.generator.__file__).parent
    digest = hashlib.sha256(__version__.encode())
    for path in sorted(p for p in root.rglob("*") if p.is_file() and "__pycache__" not in p.parts):
        digest.update(path.relative_to(root).as_posix().encode() + b"\0")
        digest.update(path.read_bytes())
    return digest.hexdigest()


class FreshTasks:
    """Builds and caches fresh tasks under ``state_dir`` (created on first use).

    Raises (from :meth:`task`):
        ValueError: an unknown split, workflow or tier, a seed out of range, or a seed for
            which the generator finds no task (the server reports it to the client).
    """

    def __init__(self, state_dir: str | Path | None = None, max_tasks: int = MAX_FRESH_TASKS):
        if max_tasks < 1:
            raise BadInput("--max-fresh-tasks", "must be positive")
        self.state_dir = Path(state_dir) if state_dir else default_state_dir()
        self.cache_dir = self.state_dir / "tasks"
        self.max_tasks = max_tasks

    @staticmethod
    def release(path: Path) -> None:
        """Let go of a folder :meth:`task` handed out (a session ended); it may be evicted."""
        with _HELD_LOCK:
            _HELD[path] -= 1
            if _HELD[path] <= 0:
                del _HELD[path]

    def _evict(self) -> None:
        """Remove the least recently handed out folders past ``max_tasks`` (not held ones);
        called with the cache's lock taken."""
        folders = [p for p in self.cache_dir.iterdir()
                   if p.is_dir() and not p.is_symlink() and not p.name.startswith(".")]
        excess = len(folders) - self.max_tasks
        if excess <= 0:
            return
        with _HELD_LOCK:
            held = set(_HELD)
        for folder in sorted(folders, key=lambda p: p.stat().st_mtime_ns):
            if excess <= 0:
                break
            if folder not in held:
                shutil.rmtree(folder, ignore_errors=True)
                excess -= 1

    def task(self, split: str, workflow: str, tier: str, seed: int) -> FreshTask:
        """The task folder of these inputs: from the cache, else generated now (about 0.3 s).
        The folder is held until :meth:`release` is called with its path."""
        from tasks.generator.generate import TIERS
        from tasks.generator.workflows import implemented

        if split not in SPLITS:
            raise ResetRefused(f"split must be one of {', '.join(SPLITS)}, not {split!r}")
        if workflow not in implemented():
            raise ResetRefused(f"unknown workflow {workflow!r}; known: {', '.join(implemented())}")
        if tier not in TIERS:
            raise ResetRefused(f"tier must be one of {', '.join(TIERS)}, not {tier!r}")
        check_seed(seed)
        tid = (f"af-train-{workflow}-{tier}-s{seed}" if split == "train"
               else f"af-heldout-{workflow}-{tier}-n{seed}")
        inputs = f"{generator_version()}\0{tid}"
        if split == "heldout":  # another master seed is another held-out set
            inputs += "\0" + hmac.new(self.master_seed(), b"cache", hashlib.sha256).hexdigest()
        key = hashlib.sha256(inputs.encode()).hexdigest()[:24]
        folder = f"{tid}-{key}"
        self.cache_dir.mkdir(parents=True, exist_ok=True)
        path = self.cache_dir / folder
        with open(self.cache_dir / ".lock", "a") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)  # one writer at a time (sessions, processes)
            if not (path / "task.toml").is_file():
                self._build(path, tid, split, workflow, tier, seed)
            os.utime(path)  # handed out now: the least recently used are evicted first
            with _HELD_LOCK:
                _HELD[path] += 1
            self._evict()
        return FreshTask(path=path, task_id=tid, split=split, workflow=workflow, tier=tier,
                         seed=seed)

    def _build(self, path: Path, tid: str, split: str, workflow: str, tier: str,
               seed: int) -> None:
        from tasks.generator.checks import CatalogError
        from tasks.generator.generate import sample_world, task_files, write_task

        for attempt in range(ATTEMPTS):
            generator_seed = self._generator_seed(split, workflow, tier, seed, attempt)
            try:
                files = task_files(sample_world(tid, workflow, tier, generator_seed))
            except CatalogError:
                continue
            write_task(path.parent, path.name, files)
            return
        raise ResetRefused(f"the generator found no {workflow} {tier} task for seed {seed} "
                         f"({ATTEMPTS} derived seeds tried); use another seed")

    def _generator_seed(self, split: str, workflow: str, tier: str, seed: int,
                        attempt: int) -> int:
        """The generator's seed: the client's (train, first attempt), else derived."""
        if split == "train":
            if attempt == 0:
                return seed
            digest = hashlib.sha256(f"train/{workflow}/{tier}/{seed}/{attempt}".encode())
            return int.from_bytes(digest.digest()[:4], "big")
        message = f"heldout/{workflow}/{tier}/{seed}/{attempt}".encode()
        digest = hmac.new(self.master_seed(), message, hashlib.sha256).digest()
        return TRAIN_SEED_LIMIT + int.from_bytes(digest[:7], "big")

    def master_seed(self) -> bytes:
        """The held-out master seed (bytes): :data:`MASTER_SEED_ENV`, else the state dir's
        file, created on first use.

        Raises:
            BadInput: the file exists but is empty.
        """
        given = os.environ.get(MASTER_SEED_ENV)
        if given:
            return given.encode()
        path = self.state_dir / MASTER_SEED_FILE
        if not path.is_file():
            self.state_dir.mkdir(parents=True, exist_ok=True)
            staged = self.state_dir / f".{MASTER_SEED_FILE}.{os.getpid()}"
            descriptor = os.open(staged, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
            with os.fdopen(descriptor, "w") as handle:
                handle.write(secrets.token_hex(32) + "\n")
            try:
                os.link(staged, path)  # atomic, and never replaces a seed already there
            except FileExistsError:
                pass
            finally:
                staged.unlink()
        value = path.read_text(encoding="utf-8").strip()
        if not value:
            raise BadInput(path, "the held-out master seed file is empty")
        return value.encode()
