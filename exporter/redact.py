"""Mask secrets in every string before it reaches a site: :class:`Redactor` applies the rules
to texts, JSON values, paths and ids, and counts what it masked.

Three kinds of rule (DESIGN.md, "Secrets"):

- **known formats**: the regex detectors of Yelp's ``detect-secrets`` (AWS, GitHub, GitLab,
  Slack, Stripe, Twilio, SendGrid, npm, PyPI, JWT, Discord, Telegram, Mailchimp, Square,
  Azure storage, Artifactory, OpenAI...) plus provider-documented formats it lacks
  (:data:`exporter.secret_formats.EXTRA_FORMATS`: Anthropic, Hugging Face, GitHub fine-grained,
  Google API keys, Grafana, Vault, DigitalOcean, Shopify, Linear, Doppler, age, Atlassian, Postman, New Relic,
  Databricks, Pulumi, Mailgun...), private key blocks (the whole PEM block, not only its
  header) and credentials in URLs (``user:password@``, keys as the user part, secret query
  parameters, webhook URLs whose path is the credential), in :mod:`exporter.secret_formats`;
- **secret fields**: a value named by a secret-looking key (``*password*``, ``*secret*``,
  ``*token*``, ``credentials``, ``api_key``, ``*_key``: ``routing_key``, ``service_key``,
  ``bearer_token``, ``smtp_auth_password``...) in YAML, JSON, INI or ``KEY=value`` text, or as
  a key of a JSON object the site writes; ``*_file``/``*_path`` keys and placeholders
  (``<secret>``, ``${VAR}``, ``{{ ... }}``) are left alone (:mod:`exporter.secret_fields`);
- **high entropy**: quoted strings that detect-secrets' entropy detectors flag (base64 over
  4.5 bits a character, hex over 3.0). What the site must show is exempt *by field*, never by
  guessing: values of :data:`exporter.secret_fields.EXEMPT_KEYS` (fingerprints, checksums,
  digests, uuids such as episode and session ids, tool call ids, commits), as JSON fields or as ``"key": "value"``
  in text.

A match becomes ``[REDACTED:<kind>]``. :class:`Redactor` counts strings and matches per
kind for the report (kinds and counts, never values).
"""

from __future__ import annotations

import bisect
import itertools
import re
from collections import Counter
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from exporter.secret_decoded import decoded_block, encoded_forms, joined_lines, json_literal
from exporter.secret_fields import (
    EXEMPT_KEYS,
    EXEMPT_SUFFIXES,
    PATH_KEYS,
    assignments,
    field_kind,
    field_value_is_secret,
)
from exporter.secret_formats import SecretPattern, builtin_formats, entropy_detectors, read_patterns

MASK = "[REDACTED]"
CLEAN_TEXTS_KEPT = 16_000_000
"""Characters of the texts found clean a :class:`Redactor` remembers (then it forgets them all
and starts again): tens of MB at most, whatever the number of runs exported."""
_QUOTED = re.compile(r"""(["'])([A-Za-z0-9+/=_\-]{16,})\1""")
_JSON_STRING = re.compile(r'(?<!\\)"(?:[^"\\\n]|\\.)*"')
"""A JSON string literal, tried only at a quote that is not escaped (an escaped one is inside
another literal): each quote starts at most one attempt."""
_KEY_BEFORE = re.compile(r"""([A-Za-z0-9_.\-]+)["']?\s*[:=]?\s*$""")


class Redactor:
    """Masks secrets in strings and JSON values; counts masked strings and matches per kind.

    ``extra`` adds user patterns (``--redact-patterns``): a match becomes ``[REDACTED]``.
    ``secrets`` collects every masked text (a search index can drop its tokens); ``kinds``
    counts matches per kind for :meth:`report`.
    """

    def __init__(self, extra: Iterable[SecretPattern] = ()):
        self.formats: tuple[SecretPattern, ...] = (
            *builtin_formats(), *extra)
        self.masked = 0
        self.secrets: set[str] = set()
        self.kinds: Counter[str] = Counter()
        self._base64, self._hex = entropy_detectors()
        self._cache: dict[str, str] = {}
        """Masked texts under 4 kB by text (a secret found once is counted once per kind)."""
        self._clean: set[str] = set()
        """Texts under 4 kB found clean, of :data:`CLEAN_TEXTS_KEPT` characters at most."""
        self._clean_chars = 0

    @classmethod
    def with_extra(cls, pattern_file: Path | None) -> Redactor:
        """The built-in rules plus those of ``pattern_file`` (see :func:`read_patterns`)."""
        return cls(read_patterns(pattern_file) if pattern_file is not None else ())

    # -- finding -----------------------------------------------------------------------------

    def _spans(self, text: str, entropy: bool) -> list[tuple[int, int, str]]:
        spans = []
        lowered = text.lower() if len(text) > 256 else None
        for pattern in self.formats:
            if lowered is not None and pattern.needles and not any(n in lowered for n in pattern.needles):
                continue
            for match in pattern.regex.finditer(text):
                group = pattern.group if match.group(pattern.group) is not None else 0
                if match.end(group) > match.start(group):
                    spans.append((match.start(group), match.end(group), pattern.name))
        for key, start, end in assignments(text):
            if field_value_is_secret(key, text[start:end]):
                spans.append((start, end, field_kind(key)))
        if entropy:
            for match in _QUOTED.finditer(text):
                if not self._high_entropy(match.group(2)) or _is_encoded_prose(match.group(2)):
                    continue  # encoded prose is judged by what it says (see _decoded_spans)
                before = _KEY_BEFORE.search(text, max(0, match.start() - 80), match.start())
                # an HTML attribute spells the field with hyphens (data-run-id="...")
                key = before.group(1).lower().replace("-", "_") if before else ""
                if key in EXEMPT_KEYS or key.endswith(EXEMPT_SUFFIXES):
                    continue
                spans.append((match.start(2), match.end(2), "high-entropy"))
        return spans

    def _high_entropy(self, value: str) -> bool:
        """detect-secrets' base64 entropy measure over 4.5 bits a character. Hex strings are
        left alone: a quoted hex string in a text is a digest or a commit far more often than a
        key (keys under a secret field are masked by the field rules)."""
        if re.fullmatch(r"[0-9a-fA-F]+", value):
            return False
        return self._base64.calculate_shannon_entropy(value) > 4.5

    def _escaped_spans(self, text: str, entropy: bool, depth: int = 0) -> list[tuple[int, int, str]]:
        """Secrets inside JSON string literals written into the text (``"{\\"password\\": ..."``,
        YAML with ``\\n`` line breaks): each literal holding an escape is decoded, searched (also
        for encoded forms), and what is found is mapped back to the literal's characters (two
        levels deep)."""
        spans: list[tuple[int, int, str]] = []
        if depth > 2 or "\\" not in text:
            return spans
        for literal in _JSON_STRING.finditer(text):
            if "\\" not in literal.group(0):
                continue
            unescaped = json_literal(literal.group(0))
            if unescaped is None:
                continue
            decoded, where = unescaped
            if len(decoded) < 8:
                continue  # too short to hold a secret and its key
            found = (self._spans(decoded, entropy) + self._escaped_spans(decoded, entropy, depth + 1)
                     + self._decoded_spans(decoded, 1))
            offset = literal.start() + 1
            spans += [(offset + where[start], offset + where[end], kind) for start, end, kind in found]
        return spans

    def _decoded_spans(self, text: str, depth: int = 0) -> list[tuple[int, int, str]]:
        """Secrets of a known format in an encoded form of the text (base64, hex, URL
        encoding: :func:`exporter.secret_decoded.encoded_forms`), each masking its whole
        encoded block as ``<kind> in <encoding>``; and the secrets of the text with its shell
        continuations joined (a secret split over two lines is masked across the break, kind
        ``<kind> in joined lines``; one whose key was split is found too). Decoded text
        is searched again (two levels: base64 of a URL-encoded string), never by entropy."""
        if depth > 1:
            return []
        spans = []
        for start, end, decoded, encoding in encoded_forms(text):
            found = self._spans(decoded, False) + self._decoded_spans(decoded, depth + 1)
            if found:
                spans.append((start, end, f"{found[0][2]} in {encoding}"))
        joined = joined_lines(text)
        if joined is not None:
            flat, where = joined
            # every secret of the joined text: one whose key alone crosses the break is new too
            for start, end, kind in self._spans(flat, False) + self._escaped_spans(flat, False):
                crosses = where[end - 1] - where[start] != end - 1 - start
                spans.append((where[start], where[end - 1] + 1, f"{kind} in joined lines" if crosses else kind))
        return spans

    def find(self, text: str, *, entropy: bool = True) -> list[tuple[int, int, str]]:
        """``[(start, end, kind)]`` of the secrets in ``text``, in order, merged where they
        overlap; an e-mail match that overlaps another secret is dropped (in
        ``https://user:pw@host`` the ``pw@host`` part is a URL password, not an address)."""
        spans = self._spans(text, entropy) + self._escaped_spans(text, entropy) + self._decoded_spans(text)
        others = _merged([span for span in spans if span[2] != "email"])
        emails = [span for span in spans if span[2] == "email" and not _overlaps(others, span)]
        return _merged(others + emails)

    def kinds_in(self, text: str) -> str:
        """The kinds of the known-format secrets :meth:`find` sees in ``text`` (no entropy
        rule), sorted and joined with commas (``"aws-access-key, github-token"``); "" for none."""
        return ", ".join(sorted({kind for _, _, kind in self.find(text, entropy=False)}))

    # -- masking -----------------------------------------------------------------------------

    def text(self, value: str, *, entropy: bool = True) -> str:
        """``value`` with every secret masked as ``[REDACTED:<kind>]``; counts it once if
        anything changed."""
        key = value if entropy else "\0" + value
        cached = self._cache.get(key)
        if cached is not None:
            self.masked += 1
            return cached
        if key in self._clean:
            return value
        spans = self.find(value, entropy=entropy)
        for start, end, kind in spans:
            self.secrets.add(value[start:end])
            self.kinds[kind] += 1
        result = _masked(value, spans)
        if len(value) < 4096 and result != value:
            self._cache[key] = result
        elif len(value) < 4096:
            # a clean text is found clean again at no count: forgetting them all bounds the
            # memory of an export of any size (counts and results stay those of keeping them)
            if self._clean_chars + len(key) > CLEAN_TEXTS_KEPT:
                self._clean.clear()
                self._clean_chars = 0
            self._clean.add(key)
            self._clean_chars += len(key)
        if result != value:
            self.masked += 1
        return result

    def field(self, key: str, value: str) -> str:
        """A JSON string value under ``key``: wholly masked when the key names a secret (and
        the value is not a placeholder), entropy rules off for :data:`EXEMPT_KEYS`."""
        if field_value_is_secret(key, value):
            self.secrets.add(value)
            self.kinds[field_kind(key)] += 1
            self.masked += 1
            return f"[REDACTED:{field_kind(key)}]"
        if key.lower() in PATH_KEYS:
            return self.path(value)
        exempt = key.lower() in EXEMPT_KEYS or key.lower().endswith(EXEMPT_SUFFIXES)
        return self.text(value, entropy=not exempt)

    def path(self, value: str) -> str:
        """A file name or path (``path`` fields, diff paths): the text rules, then random-looking
        runs of letters and digits (a token cut apart by ``/`` is in no documented format)."""
        result = self.text(value, entropy=False)
        spans = _random_runs(self, result, strict=True)
        for start, end, kind in spans:
            self.secrets.add(result[start:end])
            self.kinds[kind] += 1
        result = _masked(result, spans)
        if spans and result != value:
            self.masked += 1
        return result

    def value(self, value: Any, key: str | None = None) -> Any:
        """A JSON-like value with every string masked (dict keys too; a string's own key
        decides the field rules, see :meth:`field`)."""
        if isinstance(value, str):
            return self.text(value) if key is None else self.field(key, value)
        if isinstance(value, dict):
            return {self.text(k) if isinstance(k, str) else k: self.value(item, k if isinstance(k, str) else None)
                    for k, item in value.items()}
        if isinstance(value, (list, tuple)):
            return [self.value(item, key) for item in value]
        return value

    def fields(self, row: Any, keep: Iterable[str] = ()) -> Any:
        """An object of a schema's fields (a run.json block, a catalog row) with its values
        masked, each under its own key (:meth:`value`), and its keys kept: they are the schema's
        words, not data (a pattern matching ``label`` must not leave a check without one). The
        values of ``keep`` (fixed-set words, ``identity.producer``) stay as they are; anything
        but a dict is masked whole."""
        if not isinstance(row, dict):
            return self.value(row)
        return {key: item if key in keep else self.value(item, key) for key, item in row.items()}

    def report(self) -> str:
        """One line for the user: strings masked and matches per kind, never the values."""
        if not self.kinds:
            return "redacted: nothing looked like a secret"
        kinds = ", ".join(f"{kind} {count}" for kind, count in sorted(self.kinds.items()))
        return f"redacted: {self.masked} strings masked ({kinds})"


_WORDS = re.compile(r"[A-Za-z][a-z']{0,30}[,.;:!?]?")


def _is_encoded_prose(value: str) -> bool:
    """Whether ``value`` is base64 of ordinary sentences: text of three or more words, nearly
    all of them words of letters (a password or a key decoded has few spaces and many symbols)."""
    decoded = decoded_block(value)
    if decoded is None:
        return False
    words = decoded.split()
    return len(words) >= 3 and sum(bool(_WORDS.fullmatch(word)) for word in words) >= 0.8 * len(words)


def _merged(spans: list[tuple[int, int, str]]) -> list[tuple[int, int, str]]:
    """Spans in order, overlapping ones merged; a merged span keeps the kind of the longest
    span at its start."""
    merged: list[list[Any]] = []
    for start, end, kind in sorted(spans, key=lambda span: (span[0], -span[1], span[2])):
        if merged and start < merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], end)
        else:
            merged.append([start, end, kind])
    return [(s, e, k) for s, e, k in merged]


def _overlaps(merged: list[tuple[int, int, str]], span: tuple[int, int, str]) -> bool:
    """Whether ``span`` overlaps one of ``merged`` (in order, not overlapping each other)."""
    index = bisect.bisect_left(merged, (span[1],)) - 1
    return index >= 0 and merged[index][1] > span[0]


def _masked(value: str, spans: list[tuple[int, int, str]], mark: str = "[REDACTED:{kind}]") -> str:
    """``value`` with each of ``spans`` (in order, not overlapping) replaced by ``mark`` (user
    patterns: :data:`MASK`); built once, so many spans in a long text cost linear time."""
    parts, position = [], 0
    for start, end, kind in spans:
        parts += [value[position:start], MASK if kind == "custom" and "[" in mark else mark.format(kind=kind)]
        position = end
    parts.append(value[position:])
    return "".join(parts)


_ID_RUN = re.compile(r"[A-Za-z0-9+]{20,}")


def _class_changes(run: str) -> float:
    """The share of neighbouring characters of different kinds (upper, lower, digit): near 0.2
    in CamelCase words (``JvmGcPauseAboveBudget``), 0.5-1 in random tokens."""
    kinds = ["u" if c.isupper() else "l" if c.islower() else "d" for c in run]
    return sum(a != b for a, b in itertools.pairwise(kinds)) / max(1, len(kinds) - 1)


def _random_runs(redactor: Redactor, value: str, *, strict: bool = False) -> list[tuple[int, int, str]]:
    """Runs of 20 or more letters and digits that look random: an id or a file name has no
    quotes or keys to say what it holds, and a token cut apart by separators is no longer in
    its documented format. For ids: over 4.2 bits a character, or 32 hex digits and more; with
    ``strict`` (file names, which carry digests and CamelCase words): 24 or more characters,
    over 4.5 bits, mixing character kinds at over 0.6 of their neighbours, never hex."""
    found = []
    for match in _ID_RUN.finditer(value):
        run = match.group(0)
        hexadecimal = re.fullmatch(r"[0-9a-fA-F]+", run) is not None
        entropy = redactor._base64.calculate_shannon_entropy(run)
        if strict:
            random = not hexadecimal and len(run) >= 24 and entropy > 4.5 and _class_changes(run) > 0.6
        else:
            random = (hexadecimal and len(run) >= 32) or (not hexadecimal and entropy > 4.2)
        if random:
            found.append((match.start(), match.end(), "random-token"))
    return found


def redact_id(redactor: Redactor, value: str) -> str:
    """``value`` when it holds no secret (a known format, or a random-looking run of letters
    and digits), else a new id: each masked part becomes
    ``REDACTED-<kind>`` and the id ends in 8 hex of the old id's sha256, so two ids that
    differ only in their secrets stay distinct (a valid id, contract.ids)."""
    import hashlib

    spans = redactor.find(value, entropy=False)
    spans = sorted(spans + [run for run in _random_runs(redactor, value)
                            if not any(s < run[1] and run[0] < e for s, e, _ in spans)])
    if not spans:
        return value
    for start, end, kind in spans:
        redactor.kinds[kind] += 1
        redactor.secrets.add(value[start:end])
    result = _masked(value, spans, "REDACTED-{kind}")
    redactor.masked += 1
    digest = hashlib.sha256(value.encode("utf-8")).hexdigest()[:8]
    from contract.ids import slug_id

    return slug_id(f"{result}-{digest}")
