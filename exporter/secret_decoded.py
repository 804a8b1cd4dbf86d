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

_BASE64 = re.compile(r"(?<![A-Za-z0-9+/=_-])([A-Za-z0-9+/_-]{24,}={0,2})(?![A-Za-z0-9+/=_-])")
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


def encoded_forms(text: str) -> Iterator[tuple[int, int, str, str]]:
    """``(start, end, decoded text, encoding)`` of every encoded form in ``text`` that decodes
    to text: ``base64``, ``hex``, ``url-encoded``; and ``joined lines`` for the whole text
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
