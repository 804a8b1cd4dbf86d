"""A run's append-only journal (``journal.jsonl``): one finished step a line, flushed and fsynced.

The journal is what a resume replays, so it is read strictly: a torn last line (a crash in the
middle of a write: no newline at the end, not JSON) is the step in flight and is dropped;
any other line that is not a step object, or a step out of order, is bad input naming the
file and the line (never silently dropping the steps after it).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import orjson

from contract.errors import BadInput
from contract.untrusted import read_file

MAX_JOURNAL_BYTES = 256 * 1024 * 1024
"""A journal larger than this is refused (a 1,000-step run is a few MB)."""


def encode_step(step: dict[str, Any]) -> bytes:
    """One journal line: compact JSON, sorted keys, newline."""
    return orjson.dumps(step, option=orjson.OPT_SORT_KEYS) + b"\n"


def read_journal(path: Path) -> list[dict[str, Any]]:
    """The finished steps of ``path`` (``[]`` when there is no journal), in order.

    Raises:
        BadInput: naming ``path`` and the line: a line that is not JSON (but the torn last
            one), not a step object (``step_id`` int, ``source`` string), or whose
            ``step_id`` is not the previous one plus 1 (the first is 1).
    """
    path = Path(path)
    if not path.exists() and not path.is_symlink():
        return []
    data = read_file(path, cap=MAX_JOURNAL_BYTES)
    lines = data.split(b"\n")
    torn_tail = not data.endswith(b"\n")
    steps: list[dict[str, Any]] = []
    for number, line in enumerate(lines, start=1):
        last = number == len(lines)
        if last and not line:
            break
        try:
            step = orjson.loads(line)
        except orjson.JSONDecodeError as err:
            if last and torn_tail:
                break  # the step in flight when the recorder stopped
            raise BadInput(path, f"line {number} is not valid JSON ({err}); the journal is "
                           "damaged, so the run cannot be resumed from it") from None
        if not (isinstance(step, dict) and isinstance(step.get("step_id"), int)
                and not isinstance(step.get("step_id"), bool) and isinstance(step.get("source"), str)):
            raise BadInput(path, f"line {number} is not a step (an object with an integer "
                           "step_id and a source)")
        if step["step_id"] != len(steps) + 1:
            raise BadInput(path, f"line {number} has step_id {step['step_id']}, expected "
                           f"{len(steps) + 1}")
        steps.append(step)
    return steps


def append_step(path: Path, step: dict[str, Any]) -> None:
    """Append one step to the journal and fsync it (the step survives a crash right after)."""
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o666)
    with os.fdopen(fd, "ab") as handle:  # O_NOFOLLOW: a link put in its place is refused
        handle.write(encode_step(step))
        handle.flush()
        os.fsync(handle.fileno())


def rewrite_journal(path: Path, steps: list[dict[str, Any]]) -> None:
    """Replace the journal with exactly ``steps`` (atomically), e.g. without a torn tail."""
    from contract.files import write_atomic

    write_atomic(path, b"".join(encode_step(step) for step in steps))
