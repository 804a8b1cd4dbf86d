"""Unified diffs of the files an agent writes, replayed from the task's pristine repo."""

from __future__ import annotations

import difflib
import posixpath
from typing import Any

CONTEXT_LINES = 3


def split_lines(text: str) -> list[str]:
    """``text`` cut at ``\\n`` into lines without their ending (a final newline adds no line)."""
    if text == "":
        return []
    lines = text.split("\n")
    if lines[-1] == "":
        lines.pop()
    return lines


def unified_hunks(old: str, new: str, context: int = CONTEXT_LINES) -> list[dict[str, Any]]:
    """The hunks of a unified diff from ``old`` to ``new`` (difflib, ``context`` lines around).

    Each hunk is ``{"header": "@@ -a,b +c,d @@", "lines": [[op, text], ...]}`` with ``op`` one
    of ``" "`` (context), ``"-"`` (removed), ``"+"`` (added); ``text`` has no line ending.
    Equal texts give ``[]``.
    """
    hunks: list[dict[str, Any]] = []
    diff = difflib.unified_diff(split_lines(old), split_lines(new), lineterm="", n=context)
    for line in diff:
        if line.startswith("@@"):
            hunks.append({"header": line, "lines": []})
        elif hunks:
            hunks[-1]["lines"].append([line[0], line[1:]])
    return hunks


def normalize_path(path: str) -> str:
    """A written path as a key of the replayed repo: POSIX-normalized, without a leading ``./``."""
    normalized = posixpath.normpath(path.replace("\\", "/"))
    return "" if normalized == "." else normalized


class WorkspaceReplay:
    """The monitoring repo as the agent's ``write_file`` calls leave it, one call at a time.

    Starts from ``pristine`` (``{relative path: text}``); :meth:`write` applies one call and
    returns the site's diff object for it.
    """

    def __init__(self, pristine: dict[str, str]):
        self.files = dict(pristine)

    def write(self, arguments: Any) -> dict[str, Any] | None:
        """Apply a ``write_file`` call's arguments ``{path, content}``; return its diff.

        The diff is ``{path, old_exists, hunks[...]}`` (see :func:`unified_hunks`), ``path``
        as written by the agent. Arguments without a string path and string content give
        None and change nothing.
        """
        if not isinstance(arguments, dict):
            return None
        path, content = arguments.get("path"), arguments.get("content")
        if not isinstance(path, str) or not isinstance(content, str):
            return None
        key = normalize_path(path)
        old = self.files.get(key)
        self.files[key] = content
        return {
            "path": path,
            "old_exists": old is not None,
            "hunks": unified_hunks(old or "", content),
        }
