"""Mask secrets (API keys, bearer tokens, URL passwords, webhook URLs, e-mail addresses) in every string
before anything is written for publishing."""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from alertforge.errors import BadInput

MASK = "[REDACTED]"


@dataclass(frozen=True)
class SecretPattern:
    """One kind of secret: a compiled regex and what a match becomes (``re.sub`` template)."""

    name: str
    regex: re.Pattern[str]
    replacement: str


def _pattern(name: str, regex: str, replacement: str | None = None) -> SecretPattern:
    return SecretPattern(name, re.compile(regex), replacement or f"[REDACTED:{name}]")


DEFAULT_PATTERNS: tuple[SecretPattern, ...] = (
    _pattern("url-password", r"\b([A-Za-z][A-Za-z0-9+.\-]*://[^/\s:@\"'<>]+:)[^/\s@\"'<>]+@",
             r"\1[REDACTED:url-password]@"),
    _pattern("webhook", r"https?://hooks\.slack\.com/[^\s\"'<>`]+"),
    _pattern("webhook", r"https?://(?:[A-Za-z0-9-]+\.)?discord(?:app)?\.com/api/webhooks/[^\s\"'<>`]+"),
    _pattern("webhook", r"https?://[^\s\"'<>`/]+(?:/[^\s\"'<>`/]+)*/hooks/[A-Za-z0-9_\-]{8,}[^\s\"'<>`]*"),
    _pattern("api-key", r"\bsk-[A-Za-z0-9_\-]{16,}"),
    _pattern("api-key", r"\bhf_[A-Za-z0-9]{20,}"),
    _pattern("api-key", r"\bAKIA[0-9A-Z]{16}\b"),
    _pattern("api-key", r"\bgh[pousr]_[A-Za-z0-9]{20,}"),
    _pattern("bearer", r"(?i)\bbearer\s+[A-Za-z0-9._~+/\-]{8,}=*"),
    _pattern("email", r"\b[A-Za-z0-9._%+\-]+@[A-Za-z0-9\-]+(?:\.[A-Za-z0-9\-]+)*\.[A-Za-z]{2,}\b"),
)
"""The built-in patterns, applied in this order (URL passwords before e-mail addresses)."""


def read_patterns(path: Path) -> list[SecretPattern]:
    """Extra patterns from a file: one regex a line; blank lines and lines starting with ``#`` skipped.

    A match of such a pattern becomes ``[REDACTED]``.

    Raises:
        BadInput: the file cannot be read or a line is not a valid regex (names the line).
    """
    try:
        lines = Path(path).read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as err:
        raise BadInput(path, f"cannot read the redaction patterns: {err}") from None
    patterns = []
    for number, line in enumerate(lines, start=1):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        try:
            patterns.append(SecretPattern("custom", re.compile(line), MASK))
        except re.error as err:
            raise BadInput(path, f"line {number} is not a valid regex: {err}") from None
    return patterns


@dataclass
class Redactor:
    """Masks secrets in strings and nested JSON values, counting the strings it changed.

    ``secrets`` collects every text that was masked (so a search index can drop its tokens).
    """

    patterns: tuple[SecretPattern, ...] = DEFAULT_PATTERNS
    masked: int = 0
    secrets: set[str] = field(default_factory=set)

    @classmethod
    def with_extra(cls, pattern_file: Path | None) -> Redactor:
        """The default patterns plus those of ``pattern_file`` (see :func:`read_patterns`)."""
        extra = read_patterns(pattern_file) if pattern_file is not None else []
        return cls(patterns=(*DEFAULT_PATTERNS, *extra))

    def text(self, value: str) -> str:
        """``value`` with every secret masked; counts it once if anything changed."""
        result = value
        for pattern in self.patterns:
            if pattern.regex.search(result):
                self.secrets.update(match.group(0) for match in pattern.regex.finditer(result))
                result = pattern.regex.sub(pattern.replacement, result)
        if result != value:
            self.masked += 1
        return result

    def value(self, value: Any) -> Any:
        """A JSON-like value (dicts, lists, strings, numbers) with every string masked, keys too."""
        if isinstance(value, str):
            return self.text(value)
        if isinstance(value, dict):
            return {self.text(key) if isinstance(key, str) else key: self.value(item)
                    for key, item in value.items()}
        if isinstance(value, (list, tuple)):
            return [self.value(item) for item in value]
        return value

    def dataclass_fields(self, instance: Any, names: Iterable[str]) -> Any:
        """A copy of dataclass ``instance`` with the fields ``names`` masked (see :meth:`value`)."""
        return dataclasses.replace(instance, **{name: self.value(getattr(instance, name)) for name in names})
