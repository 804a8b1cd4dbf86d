"""The files of a Harbor job, read as an untrusted tree: no links, nothing outside, capped."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson

from contract.untrusted import REFUSED, Tree, UnsafeInput, checked_depth

JSON_CAP = 64 * 1024 * 1024
"""Largest result.json, reward or trajectory file read from a job (a long trajectory is MBs)."""
IMPORT_BUDGET = 2 * 1024 * 1024 * 1024
"""Bytes one import reads from jobs at most, all files together (many files each under its
cap, or sparse ones that read as gigabytes of zeros, cannot make an import run for hours)."""


@dataclass
class ReadBudget:
    """Bytes an import may still read (shared by the trials of one import)."""

    left: int = IMPORT_BUDGET


class JobFiles:
    """The files of one trial, read inside the folder the user named (an untrusted tree):
    no link is followed, nothing outside ``root`` is read, every read is capped, and all
    reads of one import together stay within its :class:`ReadBudget`."""

    def __init__(self, root: Path, folder: Path, budget: ReadBudget | None = None):
        self.root, self.folder = Path(root), Path(folder)
        self.tree = Tree(self.root)
        self.prefix = self.folder.relative_to(self.root).as_posix() if self.folder != self.root else ""
        self.budget = budget or ReadBudget()

    def _cap(self, name: str) -> int:
        if self.budget.left <= 0:
            raise UnsafeInput(self.tree.shown(self.rel(name)), f"not read: this import already read "
                              f"{IMPORT_BUDGET} bytes, its limit")
        return min(JSON_CAP, self.budget.left)

    def read_at(self, rel: str, name: str) -> bytes:
        """The bytes of ``rel`` (a path below the root), within the caps; ``name`` is how a
        message names it.

        Raises:
            UnsafeInput: missing, a link, not a regular file, over its cap or the budget.
        """
        cap = self._cap(name)
        try:
            data = self.tree.read_bytes(rel, cap=cap)
        except UnsafeInput as err:
            if cap < JSON_CAP and err.problem.startswith("file is "):
                raise UnsafeInput(err.path, f"not read: it is more than this import may still read "
                                  f"(its limit is {IMPORT_BUDGET} bytes in all)") from None
            raise
        self.budget.left -= len(data)
        return data

    def rel(self, name: str) -> str:
        """``name`` (a path inside the trial folder) as a path below the root."""
        return f"{self.prefix}/{name}" if self.prefix else name

    def kind(self, name: str) -> str:
        """What ``name`` is: "file", "dir", "symlink", "missing" or another kind
        (:meth:`contract.untrusted.Tree.kind`)."""
        return self.tree.kind(self.rel(name))

    def load_json(self, name: str) -> tuple[Any, str | None]:
        """``(value, None)`` or ``(None, problem)`` for the JSON file ``name``."""
        try:
            return checked_depth(orjson.loads(self.read_at(self.rel(name), name)), self.tree.shown(self.rel(name))), None
        except orjson.JSONDecodeError as err:
            return None, f"{name} is not valid JSON: {err}"
        except UnsafeInput as err:
            if err.problem == REFUSED["missing"]:
                return None, f"{name} not found"
            joiner = " is " if err.problem.startswith("not ") else ": "
            return None, f"{name}{joiner}{err.problem}"

    def read_text(self, name: str) -> str:
        """The file ``name`` as UTF-8 text (bad bytes replaced). Raises UnsafeInput as
        :meth:`read_at`."""
        return self.read_at(self.rel(name), name).decode("utf-8", errors="replace")

    def read_bytes(self, name: str) -> bytes:
        """The bytes of the file ``name``. Raises UnsafeInput as :meth:`read_at`."""
        return self.read_at(self.rel(name), name)

    def names(self, sub: str) -> list[tuple[str, str]]:
        """``[(name, kind)]`` of the entries of the folder ``sub`` (``[]`` when unreadable)."""
        try:
            return self.tree.entries(self.rel(sub))
        except UnsafeInput:
            return []

