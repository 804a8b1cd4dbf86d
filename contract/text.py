"""Cut and split text on character boundaries, never over a cap (the utf8-truncation case).

Cutting bytes in the middle of a multi-byte UTF-8 character gives U+FFFD replacements and a
result longer than the budget (UKGovernmentBEIS/inspect_ai#4656): these helpers cut before
the character instead.
"""

from __future__ import annotations


def utf8_prefix(data: bytes, limit: int) -> str:
    """The longest prefix of ``data`` of at most ``limit`` bytes that ends on a character
    boundary, decoded (bad bytes inside it become U+FFFD, as ``errors="replace"`` does).

    The result encodes to at most ``limit`` bytes when ``data`` is valid UTF-8.
    """
    if len(data) <= limit:
        return data.decode("utf-8", errors="replace")
    end = limit
    while end > 0 and end > limit - 4 and (data[end] & 0xC0) == 0x80:
        end -= 1  # data[end] continues a character: cut before that character starts
    return data[:end].decode("utf-8", errors="replace")


def cut_chars(text: str, limit: int, marker: str = "\u2026") -> str:
    """``text`` itself, or its first characters and ``marker``, ``limit`` characters in all."""
    if len(text) <= limit:
        return text
    return text[: max(0, limit - len(marker))] + marker


def split_chars(text: str, size: int) -> list[str]:
    """``text`` in parts of at most ``size`` characters (code points: never inside a
    character); joined they give ``text`` back. ``""`` gives ``[""]``."""
    if size < 1:
        raise ValueError("size must be >= 1")
    return [text[start : start + size] for start in range(0, len(text), size)] or [""]
