"""Text for where it goes: cut and split on character boundaries, never over a cap (the
utf8-truncation case), and escaped for each output a run's text reaches (terminal,
Markdown; HTML is escaped by jinja2's autoescape and the viewer's DOM building).

Cutting bytes in the middle of a multi-byte UTF-8 character gives U+FFFD replacements and a
result longer than the budget (UKGovernmentBEIS/inspect_ai#4656): these helpers cut before
the character instead.
"""

from __future__ import annotations

import os
import re


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


_INVISIBLE = frozenset(
    [*range(0x200B, 0x2010), *range(0x202A, 0x202F), *range(0x2060, 0x2070), 0xFEFF, 0x061C])
"""Format characters that reorder or hide text on a terminal: zero-width spaces and joiners,
bidirectional embeddings, overrides and isolates (Unicode TR9; the "Trojan Source" kind),
word joiners, the byte order mark, the Arabic letter mark."""


def terminal_text(text: str) -> str:
    """``text`` safe to print on a terminal: every control character but newline and tab
    (C0, DEL, C1: escape sequences, carriage returns, backspaces) and every invisible
    reordering character (:data:`_INVISIBLE`), Unicode tag characters, and the surrogates that
    stand for bytes of a name that is not UTF-8 (a raw 0x9B is a C1 CSI on an 8-bit terminal)
    written as a visible escape (``\\x1b``, ``\\u202e``, ``\\udc9b``); all else unchanged. The one escaping function for terminal output."""
    out = []
    for char in text:
        code = ord(char)
        if char in "\n\t" or (code >= 0x20 and code != 0x7F and not 0x80 <= code <= 0x9F
                              and code not in _INVISIBLE and not 0xD800 <= code <= 0xDFFF
                              and not 0xE0000 <= code <= 0xE007F):
            out.append(char)
        else:
            out.append(f"\\x{code:02x}" if code <= 0xFF else f"\\u{code:04x}" if code <= 0xFFFF
                       else f"\\U{code:08x}")
    return "".join(out)


def markdown_text(text: str) -> str:
    """``text`` as inline Markdown that renders as the same words and nothing else: line
    breaks become spaces (no new block can start), the characters that open markup are
    backslash-escaped (CommonMark, "Backslash escapes": links, images, emphasis, code, raw
    HTML, entities, tables; a leading block marker), and ``://``, ``//``, ``a@b`` and a dot
    between word characters are escaped so GFM's and linkify's autolinks make no link. The one escaping function for Markdown prose; code and
    multi-line text go in a fence instead."""
    flat = " ".join(str(text).split())
    escaped = re.sub(r"([\\`*_\[\]()<>!|~&])", r"\\\1", flat)
    escaped = re.sub(r":(?=//)", r"\\:", escaped)  # scheme://: no URL autolink
    escaped = re.sub(r"(?<=\w)\.(?=\w)", r"\\.", escaped)  # no bare-domain autolink (evil.com)
    escaped = re.sub(r"(?<=\w)@", r"\\@", escaped)  # no e-mail autolink
    escaped = re.sub(r"//", r"\\/\\/", escaped)  # no protocol-relative link
    return "\\" + escaped if escaped.startswith(("#", "+", "-", "=")) else escaped


def markdown_code(text: str) -> str:
    """``text`` as an inline code span (on one line) that nothing inside can close: its
    backtick fence is longer than any backtick run in it (CommonMark, "Code spans")."""
    flat = " ".join(str(text).split())
    longest = max((len(run) for run in re.findall(r"`+", flat)), default=0)
    marks = "`" * (longest + 1)
    pad = " " if flat.startswith("`") or flat.endswith("`") or not flat else ""
    return f"{marks}{pad}{flat}{pad}{marks}"


def counted(count: int, noun: str, plural: str | None = None) -> str:
    """``"1 run"``, ``"2 runs"``: ``count`` and ``noun`` agreeing (``plural`` when it is not
    ``noun + "s"``); thousands separated."""
    return f"{count:,} {noun if count == 1 else (plural or noun + 's')}"


def utf8_name(name: str) -> bool:
    """Whether a file name (as Python decodes it from the system, bytes that are not UTF-8
    kept as surrogates) is valid UTF-8, so it can be written into a JSON file."""
    try:
        name.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def shown_name(name: str) -> str:
    """A file name safe to write anywhere: bytes that are not UTF-8 as ``\\xNN``."""
    return name if utf8_name(name) else os.fsencode(name).decode("utf-8", "backslashreplace")
