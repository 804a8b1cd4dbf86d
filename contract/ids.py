"""Ids and names that become file names (run ids, task ids, trial names): checked once, before
anything is written.

An id is at most :data:`MAX_ID_CHARS` characters, not empty, not ``.`` or ``..``, does not
start with ``.`` or whitespace nor end with whitespace, and holds no path separator (``/``,
``\\``), no NUL, no control character and no invisible format character (Unicode categories
Cc, Cf, Cs, Co, Zl, Zp: bidi overrides and zero-width characters included).
"""

from __future__ import annotations

import hashlib
import re
import unicodedata

from contract.errors import BadInput

MAX_ID_CHARS = 160
"""Longest id: a file name of the id plus a suffix (``.json``) stays under 255 bytes in UTF-8."""
_REFUSED_CATEGORIES = {"Cc", "Cf", "Cs", "Co", "Zl", "Zp"}


def id_problem(value: object) -> str | None:
    """Why ``value`` cannot be an id, or None when it can (see the module docstring)."""
    if not isinstance(value, str):
        return f"must be a string, got {type(value).__name__}"
    if not value:
        return "is empty"
    if len(value) > MAX_ID_CHARS:
        return f"is {len(value)} characters, over {MAX_ID_CHARS}"
    if len(value.encode("utf-8")) > 200:
        return "is over 200 bytes in UTF-8"
    if value in (".", ".."):
        return "cannot be . or .."
    if value.startswith("."):
        return "starts with '.'"
    if value != value.strip():
        return "starts or ends with whitespace"
    for char in value:
        if char in "/\\":
            return f"holds a path separator {char!r}"
        if unicodedata.category(char) in _REFUSED_CATEGORIES:
            return f"holds the control or format character U+{ord(char):04X}"
    return None


def check_id(value: object, what: str, source: object) -> str:
    """``value`` when it is a valid id.

    Raises:
        BadInput: naming ``source`` (the file the id came from, or the option), saying which
            ``what`` (``run_id``, ``task.id``...) is wrong and why.
    """
    problem = id_problem(value)
    if problem is not None:
        shown = value if isinstance(value, str) and len(value) <= 80 else str(value)[:80] + "..."
        raise BadInput(source, f"{what} {shown!r} {problem}; it becomes a file name")
    return value  # type: ignore[return-value]


_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")


def slug_id(text: str, fallback: str = "unnamed") -> str:
    """A valid id made from any text: runs of other characters become ``-``; a text that had
    to change, or is too long, gets ``-<8 hex of its sha256>`` so distinct texts stay
    distinct (``nightly/run 1`` -> ``nightly-run-1-3f9c0a1b``)."""
    slug = _UNSAFE.sub("-", text).strip("-.") or fallback
    if slug == text and id_problem(slug) is None:
        return slug
    digest = hashlib.sha256(text.encode("utf-8", errors="surrogatepass")).hexdigest()[:8]
    return f"{slug[: MAX_ID_CHARS - 9]}-{digest}"
