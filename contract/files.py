"""Atomic file writes and JSON helpers shared by every stage."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path
from typing import Any

import orjson


def _umask() -> int:
    current = os.umask(0)
    os.umask(current)
    return current


def write_atomic(path: str | os.PathLike, data: bytes | str) -> None:
    """Write ``data`` to ``path`` atomically: a temporary file in the same directory, fsync, rename.

    A reader sees either the old file or the new one, never a torn write; an interrupted
    write leaves the old file in place. Parent directories are created.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(data, str):
        data = data.encode("utf-8")
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        os.fchmod(fd, 0o666 & ~_umask())
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        raise


def dump_json(value: Any, *, indent: bool = True) -> bytes:
    """Serialize with orjson, keys sorted, so the same value always gives the same bytes."""
    option = orjson.OPT_SORT_KEYS
    if indent:
        option |= orjson.OPT_INDENT_2
    return orjson.dumps(value, option=option) + (b"\n" if indent else b"")


def write_json(path: str | os.PathLike, value: Any, *, indent: bool = True) -> None:
    """Atomically write ``value`` as deterministic JSON (see :func:`dump_json`)."""
    write_atomic(path, dump_json(value, indent=indent))


def read_json(path: str | os.PathLike, *, cap: int | None = None) -> Any:
    """Read a JSON file: a regular file (not a link, FIFO or device), at most ``cap`` bytes
    (default :data:`contract.untrusted.DEFAULT_CAP`), read through contract.untrusted.

    Raises:
        BadInput: the file is missing, unreadable, not a regular file, too big or not valid
            JSON (the message names it).
    """
    from contract.untrusted import DEFAULT_CAP, read_json_file

    return read_json_file(path, cap=DEFAULT_CAP if cap is None else cap)
