"""Encoded forms a secret hides in, decoded so the redactor can scan them: base64 (standard and
URL-safe) and hex blocks, URL-encoded words, and lines joined by a shell continuation
(``\\`` at a line end). Each form is a span of the text and the text it stands for; the
redactor masks the whole span when the decoded text holds a secret of a known format
(:meth:`exporter.redact.Redactor.find`).

Decoded bytes count only when they are UTF-8 text, at least 90% printable: random bytes
(digests, ids) decode to binary and are left alone.
"""

from __future__ import annotations

import base64
import binascii
import re
from collections.abc import Iterator
from urllib.parse import unquote_plus

_BASE64 = re.compile(r"(?<![A-Za-z0-9+/_-])([A-Za-z0-9+/_-]{24,}={0,2})(?![A-Za-z0-9+/=_-])")
"""A base64 block (also after ``=``: ``blob=<base64>``), tried only where its run starts."""
_PIECE = re.compile(r"(?<![A-Za-z0-9+/_-])[A-Za-z0-9+/_-]+={0,2}(?![A-Za-z0-9+/=_-])")
"""One line's piece of a wrapped block (tried only where a run starts: linear)."""
_WRAP = re.compile(r"""["']?[ \t]{0,8}(?:[+,.\\]|\\n)?[ \t]{0,8}\r?\n[ \t]{0,64}(?:[+.][ \t]{0,8})?["']?""")
"""What separates two pieces of a wrapped block: a line break and the next line's indentation,
with the quotes and ``+`` of a string concatenation (JSON, JavaScript, Python), a ``\\``
shell continuation or a list comma around it."""
_HEX_DIGITS = re.compile(r"[0-9A-Fa-f]+")
_MIN_PIECE = 16
"""A wrapped block's lines (but its last) are at least this long: MIME wraps at 76, PEM at 64."""
_HEX = re.compile(r"(?<![0-9A-Fa-f])((?:[0-9A-Fa-f]{2}){16,})(?![0-9A-Fa-f])")
_WORD = re.compile(r"[^\s\"'<>`]+")
_PERCENT = re.compile(r"%[0-9A-Fa-f]{2}")
_CONTINUATION = re.compile(r"\\\r?\n[ \t]*")


def _text(data: bytes) -> str | None:
    try:
        decoded = data.decode("utf-8")
    except UnicodeDecodeError:
        return None
    printable = sum(ch.isprintable() or ch in "\n\r\t" for ch in decoded)
    return decoded if decoded and printable >= 0.9 * len(decoded) else None


def _base64(block: str) -> str | None:
    padded = block + "=" * (-len(block) % 4)
    for decode in (base64.b64decode, base64.urlsafe_b64decode):
        try:
            found = _text(decode(padded, validate=True) if decode is base64.b64decode else decode(padded))
        except (binascii.Error, ValueError):
            continue
        if found is not None:
            return found
    return None


def decoded_block(block: str) -> str | None:
    """A block decoded as hex (when it is all hex digits) or base64; None when it is not text."""
    if len(block) % 2 == 0 and _HEX_DIGITS.fullmatch(block):
        found = _text(bytes.fromhex(block))
        if found is not None:
            return found
    return _base64(block)


_WORD_AFTER = frozenset(":=([{<@")
"""Characters after a line's first word that make it a key or a call, not a block's last piece."""


def _continues(text: str, group: list[tuple[int, int]]) -> bool:
    """Whether a wrapped block can go on after its last piece: that piece is long enough, has no
    ``=`` padding and is not shorter than the one before it (a wrapped block's lines have one
    width; a shorter line is its last)."""
    start, end = group[-1]
    if end - start < _MIN_PIECE or text[end - 1] == "=":
        return False
    return len(group) < 2 or end - start >= group[-2][1] - group[-2][0]


def wrapped_blocks(text: str) -> Iterator[list[tuple[int, int]]]:
    """The pieces ``[(start, end)]`` of every base64 or hex block wrapped over several lines
    (76-column MIME, ``\\`` continuations, YAML folded or literal blocks, string
    concatenations, indented lines): two or more pieces joined by :data:`_WRAP`, each but the
    last as :func:`_continues` says. Each piece is looked at once: linear in the text."""
    if "\n" not in text:
        return
    group: list[tuple[int, int]] = []
    for piece in _PIECE.finditer(text):
        if piece.end() - piece.start() < 3 and not piece.group(0).isalnum():
            continue  # the + of a concatenation is read with the separator
        last = group[-1] if group else None
        if last is not None and _continues(text, group) and _WRAP.fullmatch(text, last[1], piece.start()) \
                and text[piece.end():piece.end() + 1] not in _WORD_AFTER:
            group.append(piece.span())
            continue
        if len(group) > 1:
            yield group
        group = [piece.span()]
    if len(group) > 1:
        yield group


def _wrapped_forms(text: str) -> Iterator[tuple[int, int, str, str]]:
    """Wrapped blocks (:func:`wrapped_blocks`) that decode to text, joined; when the whole does
    not decode, the block without its last piece (a word that follows the block on its line)."""
    for pieces in wrapped_blocks(text):
        for used in (pieces, pieces[:-1]):
            block = "".join(text[start:end] for start, end in used)
            decoded = decoded_block(block) if len(used) > 1 or len(block) >= 24 else None
            if decoded is not None:
                yield used[0][0], used[-1][1], decoded, "hex" if _HEX_DIGITS.fullmatch(block) else "base64"
                break


def encoded_forms(text: str) -> Iterator[tuple[int, int, str, str]]:
    """``(start, end, decoded text, encoding)`` of every encoded form in ``text`` that decodes
    to text: ``base64``, ``hex`` (also wrapped over lines, the pieces joined: the span is the
    whole wrapped block), ``url-encoded``; and ``joined lines`` for the whole text
    with its shell continuations joined (start 0, end the text's length: the caller maps a
    secret found there back, see :func:`joined_lines`)."""
    if len(text) >= 24:
        for match in _BASE64.finditer(text):
            block = match.group(1)
            if block.isalpha() or block.isdigit():
                continue  # a word or a number, not an encoding
            decoded = _base64(block)
            if decoded is not None:
                yield match.start(1), match.end(1), decoded, "base64"
        for match in _HEX.finditer(text):
            decoded = _text(bytes.fromhex(match.group(1)))
            if decoded is not None:
                yield match.start(1), match.end(1), decoded, "hex"
    yield from _wrapped_forms(text)
    if "%" in text:  # words first, then the ones holding %XX: linear in the text
        for match in _WORD.finditer(text):
            if "%" not in match.group(0) or not _PERCENT.search(match.group(0)):
                continue
            decoded = unquote_plus(match.group(0))
            if decoded != match.group(0):
                yield match.start(), match.end(), decoded, "url-encoded"


def joined_lines(text: str) -> tuple[str, list[int]] | None:
    """``text`` with every shell continuation (``\\`` then a line break and the next line's
    indentation) removed, and for each character of the result its index in ``text``; None
    when there is no continuation."""
    if "\\" not in text or _CONTINUATION.search(text) is None:
        return None
    joined: list[str] = []
    where: list[int] = []
    position = 0
    for match in _CONTINUATION.finditer(text):
        joined.append(text[position:match.start()])
        where.extend(range(position, match.start()))
        position = match.end()
    joined.append(text[position:])
    where.extend(range(position, len(text)))
    return "".join(joined), where


_ESCAPES = {'"': '"', "\\": "\\", "/": "/", "b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t"}


def json_literal(literal: str) -> tuple[str, list[int]] | None:
    """A JSON string literal (with its quotes, RFC 8259 section 7) decoded, and for each
    character of the result (and one past its end) its index in the literal's content (the
    text between the quotes), so a span found in the decoded text maps back to the literal;
    None when an escape is not valid JSON (a lone surrogate too)."""
    content = literal[1:-1]
    out: list[str] = []
    where: list[int] = []
    position = 0
    while position < len(content):
        char = content[position]
        where.append(position)
        if char != "\\":
            out.append(char)
            position += 1
            continue
        code = content[position + 1:position + 2]
        if code in _ESCAPES:
            out.append(_ESCAPES[code])
            position += 2
            continue
        if code != "u" or not _HEX_DIGITS.fullmatch(content[position + 2:position + 6] or "x"):
            return None
        value = int(content[position + 2:position + 6], 16)
        position += 6
        if 0xD800 <= value < 0xDC00 and content[position:position + 2] == "\\u" \
                and _HEX_DIGITS.fullmatch(content[position + 2:position + 6] or "x"):
            low = int(content[position + 2:position + 6], 16)
            if 0xDC00 <= low < 0xE000:
                value = 0x10000 + ((value - 0xD800) << 10) + (low - 0xDC00)
                position += 6
        if 0xD800 <= value < 0xE000:
            return None
        out.append(chr(value))
    where.append(len(content))
    return "".join(out), where
