"""Harbor trials matched to local tasks by content: Harbor 0.26's ``task_checksum`` and lock digest.

Harbor 0.26 records two hashes of the task a trial ran (notes: harbor 0.26.0 source):

- ``result.json`` ``task_checksum``: ``harbor.models.task.task.Task.checksum``, the
  ``dirhash`` package's sha256 of the whole task folder (protocol defaults: every file's
  name and data, empty folders skipped) with Harbor's ``TaskFileFilter``: ``.harborignore``
  files left out at any depth, their gitignore rules applied only inside ``tests/``,
  ``solution/``, ``steps/*/tests/`` and ``steps/*/solution/``.
- ``lock.json`` ``task.digest``: ``harbor.publisher.packager.Packager.compute_content_hash``,
  ``"sha256:" + sha256(concat(f"{relpath}\\0{sha256(file)}\\n"))`` over task.toml,
  instruction.md, README.md, trajectory.json and the files under environment/, tests/,
  solution/ and steps/ (after the same filter), less the task's ``.gitignore`` (or Harbor's
  default ignores).

A trial is re-graded against a local task only when one of its hashes equals that task's;
a trial with a hash that matches no task is an unknown task (never re-graded against a
task of the same name). Only a trial that carries no hash at all (a bare ATIF file, an
older Harbor) falls back to its task name, and its run says so.
"""

from __future__ import annotations

import hashlib
import os
import re
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path

import pathspec
from dirhash import Filter, dirhash_impl
from pathspec import GitIgnoreSpec

IGNORE_FILENAME = ".harborignore"
SCOPES = GitIgnoreSpec.from_lines(("/tests/", "/solution/", "/steps/*/tests/", "/steps/*/solution/"))
"""Where ``.harborignore`` rules apply (harbor/models/task/file_filter.py ``_IGNORE_SCOPES``)."""
DIGEST_SINGLE_FILES = ("task.toml", "instruction.md", "README.md", "trajectory.json")
DIGEST_FOLDERS = ("environment", "tests", "solution", "steps")
DEFAULT_IGNORES = ("__pycache__/", "*.pyc", ".DS_Store", "*.swp", "*.swo", "*~")
"""harbor/publisher/packager.py ``DEFAULT_IGNORES`` (used when the task has no .gitignore)."""
HEX64 = re.compile(r"[0-9a-f]{64}")


class HarborFileFilter:
    """Harbor 0.26's ``TaskFileFilter`` over paths relative to a local task folder.

    ``excluded(rel, is_dir)``: ``rel`` is a POSIX path below the task folder. A
    ``.harborignore`` anywhere is excluded; inside a scope the rules of every
    ``.harborignore`` from the scope's top down to the path's folder apply, the last match
    winning, and an excluded folder excludes everything below it (gitignore semantics,
    ``pathspec.GitIgnoreSpec``).
    """

    def __init__(self, task_dir: Path):
        self.task_dir = Path(task_dir)
        self._rules: dict[str, GitIgnoreSpec | None] = {}

    def rules(self, rel_dir: str) -> GitIgnoreSpec | None:
        """The rules of ``rel_dir``'s own ``.harborignore`` (empty when it has none), or None
        outside the scopes."""
        if not rel_dir or not SCOPES.match_file(rel_dir + "/"):
            return None
        if rel_dir not in self._rules:
            path = self.task_dir / rel_dir / IGNORE_FILENAME
            lines = path.read_text().splitlines() if path.is_file() else []
            self._rules[rel_dir] = GitIgnoreSpec.from_lines(lines)
        return self._rules[rel_dir]

    def excluded(self, rel: str, is_dir: bool) -> bool:
        """Whether Harbor leaves ``rel`` out of the task's hashes."""
        parts = rel.split("/")
        if parts[-1] == IGNORE_FILENAME:
            return True
        if not SCOPES.match_file(rel + ("/" if is_dir else "")):
            return False
        specs: list[tuple[str, GitIgnoreSpec]] = []
        for depth in range(len(parts)):
            folder = "/".join(parts[:depth])
            spec = self.rules(folder)
            if spec is not None:
                specs.append((folder, spec))
            candidate = "/".join(parts[: depth + 1])
            suffix = "/" if depth < len(parts) - 1 or is_dir else ""
            if not SCOPES.match_file(candidate + suffix):
                continue
            excluded = False
            for base, rules in specs:
                match = rules.check_file(candidate[len(base) + 1:] + suffix)
                if match.include is not None:
                    excluded = bool(match.include)
            if excluded:
                return True
        return False


def _links(task_dir: Path) -> list[str]:
    found = []
    for folder, dirs, files in os.walk(task_dir):
        found += [os.path.join(folder, n) for n in dirs + files
                  if os.path.islink(os.path.join(folder, n))]
    return found


def task_checksum(task_dir: Path) -> str:
    """Harbor 0.26's ``task_checksum`` of a local task folder: 64 hex characters.

    Source: harbor/models/task/task.py ``Task.checksum`` (``dirhash_impl(task_dir, "sha256",
    filter_=TaskChecksumFilter())``); only names and data go in, so the folder's own name
    and place do not matter.

    Raises:
        ValueError: the task folder holds a symbolic link (Harbor would follow it; we do not
            hash what a link points to).
    """
    task_dir = Path(task_dir)
    if _links(task_dir):
        raise ValueError(f"{task_dir} holds a symbolic link ({_links(task_dir)[0]})")
    file_filter = HarborFileFilter(task_dir)

    class _Include(Filter):
        def include(self, recursion_path) -> bool:
            return not file_filter.excluded(Path(recursion_path.relative).as_posix(),
                                            recursion_path.is_dir())

    return dirhash_impl(task_dir, "sha256", filter_=_Include())


def _selected(folder: Path, task_dir: Path, file_filter: HarborFileFilter) -> list[str]:
    """Files below ``folder`` Harbor's ``select_files`` keeps (excluded folders pruned)."""
    kept = []
    for path in sorted(folder.iterdir()):
        rel = path.relative_to(task_dir).as_posix()
        if file_filter.excluded(rel, path.is_dir()):
            continue
        if path.is_dir():
            kept += _selected(path, task_dir, file_filter)
        elif path.is_file():
            kept.append(rel)
    return kept


def content_digest(task_dir: Path) -> str:
    """Harbor 0.26's lock.json ``task.digest`` of a local task: ``"sha256:"`` + 64 hex.

    Source: harbor/publisher/packager.py ``Packager.collect_files`` and
    ``compute_content_hash``.

    Raises:
        ValueError: the task folder holds a symbolic link.
    """
    task_dir = Path(task_dir)
    if _links(task_dir):
        raise ValueError(f"{task_dir} holds a symbolic link ({_links(task_dir)[0]})")
    file_filter = HarborFileFilter(task_dir)
    files = [name for name in DIGEST_SINGLE_FILES if (task_dir / name).is_file()]
    for name in DIGEST_FOLDERS:
        if (task_dir / name).is_dir() and not file_filter.excluded(name, True):
            files += _selected(task_dir / name, task_dir, file_filter)
    gitignore = task_dir / ".gitignore"
    lines = gitignore.read_text().splitlines() if gitignore.is_file() else DEFAULT_IGNORES
    spec = pathspec.PathSpec.from_lines("gitignore", lines)
    outer = hashlib.sha256()
    for rel in sorted(f for f in files if not spec.match_file(f)):
        outer.update(f"{rel}\0{hashlib.sha256((task_dir / rel).read_bytes()).hexdigest()}\n".encode())
    return "sha256:" + outer.hexdigest()


@dataclass
class TaskMatch:
    """Which local task a trial ran: ``task_dir`` (None: unknown), ``how`` it was matched
    (``task_checksum``, ``lock digest``, ``name``, or None) and a ``note`` for the run
    (why it was not matched, or that only its name matched)."""

    task_dir: Path | None
    how: str | None
    note: str | None = None


class TaskIndex:
    """The local tasks by name and, computed on first use, by both Harbor hashes.

    ``folders`` maps every name a task goes by (folder name, task id) to its folder.
    """

    def __init__(self, folders: dict[str, Path]):
        self.by_name = folders

    @cached_property
    def _hashes(self) -> dict[str, Path]:
        hashes: dict[str, Path] = {}
        for folder in set(self.by_name.values()):
            try:
                hashes[task_checksum(folder)] = folder
                hashes[content_digest(folder)] = folder
            except (OSError, ValueError):
                continue  # a task we cannot hash is matched by nothing
        return hashes

    def match(self, names: list[str], checksum: object, digest: object) -> TaskMatch:
        """The task of a trial with ``names`` (task names it gives, best first), its
        result.json ``task_checksum`` and its lock.json ``task.digest`` (either may be None
        or not a string: then it is not used)."""
        checksum = checksum.lower() if isinstance(checksum, str) and HEX64.fullmatch(
            checksum.lower()) else None
        digest = digest.lower() if isinstance(digest, str) and HEX64.fullmatch(
            digest.lower().removeprefix("sha256:")) else None
        digest = f"sha256:{digest.removeprefix('sha256:')}" if digest else None
        for value, how in ((checksum, "task_checksum"), (digest, "lock digest")):
            if value and value in self._hashes:
                return TaskMatch(self._hashes[value], how)
        named = next((self.by_name[n] for n in names if n in self.by_name), None)
        if checksum or digest:
            given = ", ".join(f"{label} {v[:19]}..." for label, v in
                              (("task_checksum", checksum), ("lock digest", digest)) if v)
            same_name = f" (a local task has the name {named.name} but other content)" \
                if named else ""
            return TaskMatch(None, None, f"the trial's task content ({given}) matches no local "
                             f"task{same_name}: not re-graded; the verifier's rewards are shown")
        if named:
            return TaskMatch(named, "name", f"matched by name only ({named.name}): the trial "
                             "carries no task_checksum or lock digest to compare content")
        return TaskMatch(None, None)
