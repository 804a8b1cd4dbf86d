"""Diff two folders of runs or sites, ignoring only what changes from one recording to the next.

Usage::

    .venv/bin/python scripts/behaviour_diff.py BEFORE AFTER

For a refactor that must not change behaviour (issue 34): record or export the same inputs
with the code before and after, then diff. JSON files (``.json``, ``.jsonl``) are compared
after removing exactly these fields wherever they occur: ``started_at``, ``finished_at``,
``timings`` (run.json), ``timestamp`` (ATIF trajectory steps) and ``grade_s`` (a step's
grading wall time); every other file is compared byte for byte. Numbers are compared as
written: an integer never equals a float (``1`` and ``1.0`` differ) and a float equals only
the same literal (``0.5`` and ``5e-1`` differ), since that is what a round trip through a
typed model can change. Prints each file that is only on one side or differs (with the first
differing JSON path), then a count; exit 0 when nothing differs, 1 otherwise, 2 when a folder
is missing.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

VOLATILE = frozenset({"started_at", "finished_at", "timings", "timestamp", "grade_s"})
"""Keys removed from JSON before comparing: when a run was recorded and how long it took."""


class FloatLiteral(str):
    """A JSON float as its literal text: equal only to the same literal, never to an integer
    or a string (json.loads' ``parse_float`` hook)."""

    __slots__ = ()

    def __eq__(self, other: object) -> bool:
        return type(other) is FloatLiteral and str.__eq__(self, other)

    def __ne__(self, other: object) -> bool:
        return not self == other

    __hash__ = str.__hash__

    def __repr__(self) -> str:
        return f"float {str.__str__(self)}"


def loads(text: str) -> Any:
    """JSON ``text`` with every float kept as its :class:`FloatLiteral` (integers stay int)."""
    return json.loads(text, parse_float=FloatLiteral)


def normalised(value: Any) -> Any:
    """``value`` without the :data:`VOLATILE` keys, at any depth."""
    if isinstance(value, dict):
        return {k: normalised(v) for k, v in value.items() if k not in VOLATILE}
    if isinstance(value, list):
        return [normalised(v) for v in value]
    return value


def _load(path: Path) -> Any:
    text = path.read_text(encoding="utf-8")
    if path.suffix == ".jsonl":
        return [loads(line) for line in text.splitlines() if line.strip()]
    return loads(text)


def first_difference(a: Any, b: Any, where: str = "$") -> str | None:
    """The JSON path of the first place ``a`` and ``b`` differ, or None."""
    if type(a) is not type(b):
        return where
    if isinstance(a, dict):
        for key in sorted(set(a) | set(b)):
            if key not in a or key not in b:
                return f"{where}.{key}"
            found = first_difference(a[key], b[key], f"{where}.{key}")
            if found:
                return found
        return None
    if isinstance(a, list):
        if len(a) != len(b):
            return f"{where}[len {len(a)} != {len(b)}]"
        for index, (x, y) in enumerate(zip(a, b, strict=True)):
            found = first_difference(x, y, f"{where}[{index}]")
            if found:
                return found
        return None
    return None if a == b else where


def compare(before: Path, after: Path) -> list[str]:
    """One line per file that is only on one side or differs."""
    def files(root: Path) -> set[str]:
        return {p.relative_to(root).as_posix() for p in root.rglob("*") if p.is_file() and not p.is_symlink()}

    left, right = files(before), files(after)
    lines = [f"only in {before}: {name}" for name in sorted(left - right)]
    lines += [f"only in {after}: {name}" for name in sorted(right - left)]
    for name in sorted(left & right):
        a, b = before / name, after / name
        if a.suffix in (".json", ".jsonl"):
            try:
                where = first_difference(normalised(_load(a)), normalised(_load(b)))
            except ValueError:
                where = None if a.read_bytes() == b.read_bytes() else "(not JSON)"
            if where:
                lines.append(f"differs: {name} at {where}")
        elif a.read_bytes() != b.read_bytes():
            lines.append(f"differs: {name}")
    return lines


def main(argv: list[str] | None = None) -> int:
    """Print the differences of two folders; returns the exit code (0 same, 1 differ, 2 bad input)."""
    args = sys.argv[1:] if argv is None else argv
    if len(args) != 2:
        print(__doc__.strip().splitlines()[0], "\nusage: behaviour_diff.py BEFORE AFTER", file=sys.stderr)
        return 2
    before, after = Path(args[0]), Path(args[1])
    for folder in (before, after):
        if not folder.is_dir():
            print(f"behaviour_diff: {folder}: not a folder", file=sys.stderr)
            return 2
    lines = compare(before, after)
    for line in lines:
        print(line)
    print(f"{len(lines)} difference(s) between {before} and {after}")
    return 1 if lines else 0


if __name__ == "__main__":
    sys.exit(main())
