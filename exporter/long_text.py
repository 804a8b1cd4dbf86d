"""Keep every text whole and the run file small: long step texts move to their own files.

A step's ``message`` or ``output`` longer than ``INLINE_CHARS`` keeps its first
``PREVIEW_CHARS`` characters in the run file; tool ``arguments`` and ``diff`` whose JSON text
is longer keep a shortened copy. The whole text goes to ``data/text/<run-id>/...`` in parts
of at most ``PART_CHARS`` characters (each part a JSON string; the text is the parts joined),
and the step's ``lazy`` names them. The viewer loads them when asked to show everything.
"""

from __future__ import annotations

from typing import Any

import orjson

INLINE_CHARS = 20_000
PREVIEW_CHARS = 4_000
PART_CHARS = 1_000_000
PREVIEW_STRING_CHARS = 2_000
PREVIEW_DIFF_LINES = 200
ELLIPSIS = "\u2026"


def _json_text(value: Any) -> str:
    return orjson.dumps(value, option=orjson.OPT_SORT_KEYS).decode("utf-8")


def _shorten_strings(value: Any) -> Any:
    """``value`` with every string longer than PREVIEW_STRING_CHARS cut there (and an ellipsis)."""
    if isinstance(value, str):
        return value if len(value) <= PREVIEW_STRING_CHARS else value[:PREVIEW_STRING_CHARS] + ELLIPSIS
    if isinstance(value, list):
        return [_shorten_strings(item) for item in value]
    if isinstance(value, dict):
        return {key: _shorten_strings(item) for key, item in value.items()}
    return value


def _shorten_diff(diff: dict[str, Any]) -> dict[str, Any]:
    hunks, kept = [], 0
    for hunk in diff["hunks"]:
        if kept >= PREVIEW_DIFF_LINES:
            break
        lines = [[op, _shorten_strings(text)] for op, text in hunk["lines"][: PREVIEW_DIFF_LINES - kept]]
        kept += len(lines)
        hunks.append({"header": hunk["header"], "lines": lines})
    return {**diff, "hunks": hunks}


def _parts(run_id: str, n: int, field: str, text: str, files: dict[str, bytes]) -> list[str]:
    names = []
    for index, start in enumerate(range(0, len(text), PART_CHARS)):
        name = f"data/text/{run_id}/{n}.{field}.{index}.json"
        files[name] = orjson.dumps(text[start : start + PART_CHARS])
        names.append(name)
    return names


def externalize_long_texts(
    run_id: str, steps: list[dict[str, Any]]
) -> tuple[list[dict[str, Any]], dict[str, bytes]]:
    """``(steps with long texts shortened, {text part path: bytes})``; ``steps`` is not changed.

    A shortened step gets ``lazy: {field: {chars, parts[]}}`` for each of ``message``,
    ``output`` (plain text), ``arguments`` and ``diff`` (JSON text of the whole value) it
    moved; steps with nothing long have no ``lazy`` key.
    """
    files: dict[str, bytes] = {}
    out = []
    for step in steps:
        lazy: dict[str, Any] = {}
        step = dict(step)
        for field in ("message", "output"):
            text = step.get(field)
            if isinstance(text, str) and len(text) > INLINE_CHARS:
                lazy[field] = {"chars": len(text), "parts": _parts(run_id, step["n"], field, text, files)}
                step[field] = text[:PREVIEW_CHARS]
        tool = step.get("tool")
        if tool is not None:
            text = _json_text(tool.get("arguments"))
            if len(text) > INLINE_CHARS:
                lazy["arguments"] = {"chars": len(text), "parts": _parts(run_id, step["n"], "arguments", text, files)}
                step["tool"] = {**tool, "arguments": _shorten_strings(tool.get("arguments"))}
        diff = step.get("diff")
        if diff is not None:
            text = _json_text(diff)
            if len(text) > INLINE_CHARS:
                lazy["diff"] = {"chars": len(text), "parts": _parts(run_id, step["n"], "diff", text, files)}
                step["diff"] = _shorten_diff(diff)
        if lazy:
            step["lazy"] = lazy
        out.append(step)
    return out, files


def delta_failed(steps: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Steps whose ``failed`` holds only the details that are new at that step.

    A check's detail appears at the step where it starts failing or its detail changes, and
    ``""`` where it stops (no detail any more); so the detail of a check at step n is the one
    listed at the latest step at or before n (none listed: ``""``). ``causes`` likewise, with
    null where a cause ends. ``steps`` is not changed.
    """
    previous: dict[str, str] = {}
    previous_causes: dict[str, Any] = {}
    out = []
    for step in steps:
        failed = step.get("failed") or {}
        new = {key: value for key, value in failed.items() if previous.get(key) != value}
        new.update({key: "" for key in previous if key not in failed})
        causes = step.get("causes") or {}
        new_causes = {k: v for k, v in causes.items() if previous_causes.get(k) != v}
        new_causes.update({key: None for key in previous_causes if key not in causes})
        previous, previous_causes = failed, causes
        out.append({**step, "failed": new, "causes": new_causes})
    return out
