"""Codex ``apply_patch`` replayed: ``*** Begin Patch`` envelopes applied to known files.

The format is Codex CLI's (``*** Add File:``, ``*** Delete File:``, ``*** Update File:``
with an optional ``*** Move to:``, hunks opened by ``@@ [anchor line]`` holding `` ``,
``-`` and ``+`` lines). A hunk is found at or after the previous one (then anywhere),
exactly, then ignoring trailing spaces, as Codex's applier does; an ``@@`` anchor moves
the search to the first line equal to it.
"""

from __future__ import annotations

from collections.abc import Callable

from recorder.importers.shell.effect import CallEffect, UnknownContent
from recorder.importers.shell.files import KnownFiles
from recorder.importers.shell.invocation import Invocation

Hunk = tuple[str, list[str]]
"""``(anchor line after @@, or "", the hunk's lines with their " "/"-"/"+" prefix)``."""


def _update_hunks(lines: list[str], i: int) -> tuple[list[Hunk], int]:
    """The hunks of an ``*** Update File:`` section starting at ``lines[i]``; returns them
    and the index of the next ``***`` line (``*** End of File`` markers are skipped)."""
    hunks: list[Hunk] = []
    current = None
    while i < len(lines) and not (lines[i].startswith("*** ") and
                                  not lines[i].startswith("*** End of File")):
        if lines[i].startswith("@@"):
            current = (lines[i][2:].strip(), [])
            hunks.append(current)
        elif lines[i].startswith("*** End of File"):
            pass
        elif current is not None or lines[i][:1] in (" ", "-", "+"):
            if current is None:
                current = ("", [])
                hunks.append(current)
            current[1].append(lines[i])
        i += 1
    return hunks, i


def apply_codex_patch(patch: str, read: Callable[[str], str]) -> list[tuple[str, str | None]]:
    """Apply a Codex ``*** Begin Patch`` patch; ``read(path)`` gives a file's text (raises
    UnknownContent when unknown). Returns ``[(path, new content or None for deleted)]``
    in the patch's order (a move is the old path deleted, then the new one written).

    Raises:
        UnknownContent: not such a patch, a file to update is unknown, or a hunk does
            not match it.
    """
    lines = patch.replace("\r\n", "\n").split("\n")
    if not any(line.strip() == "*** Begin Patch" for line in lines):
        raise UnknownContent("not a '*** Begin Patch' patch")
    results: list[tuple[str, str | None]] = []
    i = 0
    while i < len(lines):
        line = lines[i]
        if line.startswith("*** Add File: "):
            path, body = line[len("*** Add File: "):].strip(), []
            i += 1
            while i < len(lines) and not lines[i].startswith("***"):
                body.append(lines[i].removeprefix("+"))
                i += 1
            results.append((path, "\n".join(body) + "\n"))
            continue
        if line.startswith("*** Delete File: "):
            results.append((line[len("*** Delete File: "):].strip(), None))
        elif line.startswith("*** Update File: "):
            path = line[len("*** Update File: "):].strip()
            i += 1
            target = path
            if i < len(lines) and lines[i].startswith("*** Move to: "):
                target = lines[i][len("*** Move to: "):].strip()
                i += 1
            hunks, i = _update_hunks(lines, i)
            text = apply_hunks(read(path), hunks, path)
            if target != path:
                results.append((path, None))
            results.append((target, text))
            continue
        i += 1
    return results


def apply_hunks(text: str, hunks: list[Hunk], path: str) -> str:
    """``text`` with every hunk replaced, in order (see the module docstring).

    Raises:
        UnknownContent: a hunk's old lines are nowhere in the text.
    """
    lines = text.split("\n")
    cursor = 0
    for header, body in hunks:
        old = [ln[1:] for ln in body if ln[:1] in (" ", "-") or ln == ""]
        new = [ln[1:] for ln in body if ln[:1] in (" ", "+") or ln == ""]
        if header:
            anchor = next((k for k in range(cursor, len(lines)) if lines[k].strip() == header), None)
            if anchor is not None:
                cursor = anchor
        start = find_lines(lines, old, cursor)
        if start is None:
            raise UnknownContent(f"apply_patch: a hunk does not match {path}")
        lines[start:start + len(old)] = new
        cursor = start + len(new)
    return "\n".join(lines)


def find_lines(lines: list[str], old: list[str], cursor: int) -> int | None:
    """Where ``old`` (trailing empty lines dropped) starts in ``lines``: searched from
    ``cursor`` to the end, then from the start; exact first, then ignoring trailing
    whitespace. None when nowhere."""
    while old and old[-1] == "":
        old = old[:-1]
    for same in (lambda a, b: a == b, lambda a, b: a.rstrip() == b.rstrip()):
        for start in list(range(cursor, len(lines) - len(old) + 1)) + list(range(cursor)):
            if all(same(lines[start + k], old[k]) for k in range(len(old))):
                return start
    return None


def patch_files(files: KnownFiles, effect: CallEffect, patch: str) -> None:
    """Apply ``patch`` (:func:`apply_codex_patch`) to the known files, recording each edit."""
    for path, content in apply_codex_patch(patch, lambda p: files.read(files.key(p))):
        files.set(effect, files.key(path), content)


def apply_patch(call: Invocation) -> str:
    """The ``apply_patch`` command: the patch is its stdin, else its first argument."""
    patch_files(call.files, call.effect, call.stdin or (call.args[0] if call.args else ""))
    return ""
