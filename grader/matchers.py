"""Alertmanager label matchers: parsing and matching, as Alertmanager 0.25 does it.

Covers the three places a config names matchers:

- the ``matchers`` / ``source_matchers`` / ``target_matchers`` lists of strings
  (``name="value"``, ``name!="v"``, ``name=~"re"``, ``name!~"re"``, unquoted values,
  several comma-separated matchers in one string, optional ``{...}`` braces);
- the legacy maps ``match`` / ``source_match`` / ``target_match`` (equality) and
  ``match_re`` / ``source_match_re`` / ``target_match_re`` (regex).

Semantics (Alertmanager 0.25 ``pkg/labels/matcher.go``, ``pkg/labels/parse.go``,
``config/config.go``): a label missing from an alert has the value ``""``; regexes
are fully anchored (``^(?:re)$``) and use Go RE2 syntax, which this module
translates to Python ``re`` (see :func:`compile_go_regex`).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

__all__ = [
    "EQ",
    "NE",
    "NRE",
    "OPS",
    "RE",
    "Matcher",
    "MatcherError",
    "compile_go_regex",
    "config_matchers",
    "is_valid_label_name",
    "is_valid_matcher_name",
    "matchers_from_map",
    "matches_all",
    "new_matcher",
    "parse_matcher",
    "parse_matcher_list",
    "parse_matchers",
    "scalar_to_str",
]

EQ, NE, RE, NRE = "=", "!=", "=~", "!~"
OPS = (EQ, NE, RE, NRE)

# Go's \s is ASCII-only: [\t\n\f\r ]; Python's \s would also take Unicode spaces.
_WS = "[\\t\\n\\f\\r ]*"
# '=~' must come before '=' (as in parse.go) or '=' would be taken and '~' left in the value.
_MATCHER_RE = re.compile(
    "^"
    + _WS
    + r"([a-zA-Z_:][a-zA-Z0-9_:]*)"
    + _WS
    + r"(=~|=|!=|!~)"
    + _WS
    + r"(.*?)"
    + _WS
    + r"\Z",
    re.DOTALL,
)
# prometheus/common model.LabelNameRE: used for legacy map keys and `equal` entries.
_MODEL_LABEL_NAME_RE = re.compile(r"[a-zA-Z_][a-zA-Z0-9_]*")
_MATCHER_NAME_RE = re.compile(r"[a-zA-Z_:][a-zA-Z0-9_:]*")


class MatcherError(ValueError):
    """A matcher (or a regex inside one) that Alertmanager would reject, or one this
    module cannot simulate faithfully. The message names the offending text."""


def is_valid_label_name(name: object) -> bool:
    """True if ``name`` is a valid Prometheus label name (``[a-zA-Z_][a-zA-Z0-9_]*``).

    This is the rule Alertmanager 0.25 applies to legacy ``*_match`` keys and to
    ``equal`` entries (prometheus/common ``model.LabelNameRE``). Never raises.
    """
    return isinstance(name, str) and _MODEL_LABEL_NAME_RE.fullmatch(name) is not None


def is_valid_matcher_name(name: object) -> bool:
    """True if ``name`` may appear on the left of a string matcher
    (``[a-zA-Z_:][a-zA-Z0-9_:]*``, Alertmanager 0.25 ``pkg/labels/parse.go``). Never raises."""
    return isinstance(name, str) and _MATCHER_NAME_RE.fullmatch(name) is not None


def scalar_to_str(value: object, *, where: str) -> str:
    """Convert a YAML scalar the way Go's yaml.v2 fills a ``string`` field.

    ``str`` is kept, ``bool`` becomes ``"true"``/``"false"``, numbers their decimal
    text, ``None`` becomes ``""``. Lists and maps raise :class:`MatcherError` naming
    ``where`` (e.g. ``"source_match.severity"``). Floats are rendered by Python, so
    ``1e3`` (Go keeps the text) becomes ``"1000.0"``: quote such values in configs.
    """
    if isinstance(value, str):
        return value
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return str(value)
    if value is None:
        return ""
    raise MatcherError(f"{where}: expected a string, got {type(value).__name__} {value!r}")


# --------------------------------------------------------------------------- regex


_POSIX_CLASSES = {
    "alnum": "0-9A-Za-z",
    "alpha": "A-Za-z",
    "ascii": "\\x00-\\x7f",
    "blank": "\\t ",
    "cntrl": "\\x00-\\x1f\\x7f",
    "digit": "0-9",
    "graph": "!-~",
    "lower": "a-z",
    "print": " -~",
    "punct": "!-/:-@\\[-`{-~",
    "space": "\\t\\n\\v\\f\\r ",
    "upper": "A-Z",
    "word": "0-9A-Za-z_",
    "xdigit": "0-9A-Fa-f",
}
# Escapes Go's regexp/syntax accepts with a letter (others are "invalid escape sequence").
_GO_LETTER_ESCAPES = set("aftnrvxAbBzdDsSwWpPQE")
_REPEAT_RE = re.compile(r"\{(\d+)(,(\d*))?\}")
_ASCII_PERL_CLASSES = {
    "d": "0-9",
    "D": "0-9",
    "w": "0-9A-Za-z_",
    "W": "0-9A-Za-z_",
    "s": "\\t\\n\\f\\r ",
    "S": "\\t\\n\\f\\r ",
}
_W = "[0-9A-Za-z_]"
_ASCII_BOUNDARY = {
    "b": f"(?:(?<={_W})(?!{_W})|(?<!{_W})(?={_W}))",
    "B": f"(?:(?<={_W})(?={_W})|(?<!{_W})(?!{_W}))",
}


def _translate_escape(pattern: str, i: int, in_class: bool) -> tuple[str, int]:
    """Translate the escape at ``pattern[i] == '\\'``; return (python text, next index)."""
    if i + 1 >= len(pattern):
        raise MatcherError(f"regex {pattern!r}: trailing backslash")
    c = pattern[i + 1]
    if not c.isalnum():
        return "\\" + c, i + 2
    if c in "pP":
        raise MatcherError(
            f"regex {pattern!r}: Unicode classes (\\p, \\P) are not supported by the simulator"
        )
    if c == "Q":
        if in_class:
            raise MatcherError(f"regex {pattern!r}: \\Q...\\E inside [...] is not supported")
        end = pattern.find("\\E", i + 2)
        literal = pattern[i + 2 :] if end < 0 else pattern[i + 2 : end]
        return re.escape(literal), (len(pattern) if end < 0 else end + 2)
    if c == "E":
        return "", i + 2  # a stray \E is ignored by RE2
    if c == "z":
        if in_class:
            raise MatcherError(f"regex {pattern!r}: invalid escape \\z inside [...]")
        return "\\Z", i + 2
    if c == "x" and i + 2 < len(pattern) and pattern[i + 2] == "{":
        end = pattern.find("}", i + 3)
        digits = pattern[i + 3 : end] if end > 0 else ""
        if not digits or any(d not in "0123456789abcdefABCDEF" for d in digits):
            raise MatcherError(f"regex {pattern!r}: invalid escape \\x{{...}}")
        return re.escape(chr(int(digits, 16))), end + 1
    if c.isdigit():
        # Go: \0..\7 start an octal escape; \8, \9 and lone \1..\7 (backreferences) fail.
        digits = c
        j = i + 2
        while j < len(pattern) and len(digits) < 3 and pattern[j] in "01234567":
            digits += pattern[j]
            j += 1
        if c in "89" or (c != "0" and len(digits) == 1):
            raise MatcherError(f"regex {pattern!r}: backreferences are not supported (RE2)")
        if any(d not in "01234567" for d in digits):
            raise MatcherError(f"regex {pattern!r}: invalid octal escape")
        return re.escape(chr(int(digits, 8))), j
    if c not in _GO_LETTER_ESCAPES or (in_class and c in "AbBz"):
        raise MatcherError(f"regex {pattern!r}: invalid escape sequence \\{c} (RE2)")
    if c in _ASCII_PERL_CLASSES:  # RE2's \d \w \s are ASCII-only; Python's are Unicode
        body = _ASCII_PERL_CLASSES[c]
        if in_class:
            if c.isupper():
                raise MatcherError(
                    f"regex {pattern!r}: \\{c} inside [...] is not supported by the simulator"
                )
            return body, i + 2
        return ("[^" if c.isupper() else "[") + body + "]", i + 2
    if c in "bB":
        return _ASCII_BOUNDARY[c], i + 2
    return "\\" + c, i + 2


def _translate_class(pattern: str, i: int) -> tuple[str, int]:
    """Translate the bracket expression starting at ``pattern[i] == '['``."""
    out = ["["]
    j = i + 1
    if j < len(pattern) and pattern[j] == "^":
        out.append("^")
        j += 1
    first = True
    while True:
        if j >= len(pattern):
            raise MatcherError(f"regex {pattern!r}: missing closing ]")
        c = pattern[j]
        if c == "]" and not first:
            out.append("]")
            return "".join(out), j + 1
        first = False
        if c == "[" and pattern.startswith("[:", j):
            end = pattern.find(":]", j + 2)
            name = pattern[j + 2 : end] if end > 0 else ""
            if name.startswith("^"):
                raise MatcherError(
                    f"regex {pattern!r}: negated POSIX classes are not supported by the simulator"
                )
            if name not in _POSIX_CLASSES:
                raise MatcherError(f"regex {pattern!r}: invalid character class range [:{name}:]")
            out.append(_POSIX_CLASSES[name])
            j = end + 2
            continue
        if c == "\\":
            text, j = _translate_escape(pattern, j, in_class=True)
            out.append(text)
            continue
        if c in "[&~|]":
            out.append("\\" + c)  # literal in RE2; avoids Python's nested-set warnings
        else:
            out.append(c)
        j += 1


def _starts_repeat(pattern: str, i: int) -> bool:
    """True if a repetition operator starts at ``pattern[i]`` (RE2 forbids stacking them;
    Python would read ``a*+`` as possessive instead of failing)."""
    if i >= len(pattern):
        return False
    return pattern[i] in "*+?" or (pattern[i] == "{" and _REPEAT_RE.match(pattern, i) is not None)


def _go_regex_to_python(pattern: str) -> str:
    """Translate Go RE2 syntax to an equivalent Python ``re`` pattern."""
    out: list[str] = []
    # One entry per open group: how many ')' to add when that group closes, for
    # Go's "(?i)" flag switches, which hold until the end of the enclosing group.
    pending: list[int] = [0]
    multiline = False
    i = 0
    n = len(pattern)
    while i < n:
        c = pattern[i]
        if c == "\\":
            text, i = _translate_escape(pattern, i, in_class=False)
            out.append(text)
        elif c == "[":
            text, i = _translate_class(pattern, i)
            out.append(text)
        elif c == "(":
            if pattern.startswith("(?", i):
                m = re.match(r"\(\?([imsU]*)(?:-([imsU]*))?([:)])", pattern[i:])
                if pattern.startswith("(?P<", i):
                    out.append("(?P<")
                    i += 4
                    pending.append(0)
                    continue
                if m is None:
                    raise MatcherError(
                        f"regex {pattern!r}: invalid or unsupported Perl syntax "
                        f"{pattern[i : i + 3]!r} (RE2)"
                    )
                on, off, end = m.group(1), m.group(2), m.group(3)
                if off == "":
                    raise MatcherError(
                        f"regex {pattern!r}: invalid or unsupported Perl syntax (RE2)"
                    )
                off = off or ""
                if "U" in on + off:
                    raise MatcherError(
                        f"regex {pattern!r}: the U (ungreedy) flag is not supported by the simulator"
                    )
                if "m" in on:
                    multiline = True
                flags = on + ("-" + off if off else "")
                i += m.end()
                if end == ":":
                    out.append(f"(?{flags}:" if flags else "(?:")
                    pending.append(0)
                elif flags:
                    out.append(f"(?{flags}:")
                    pending[-1] += 1
            else:
                out.append("(")
                i += 1
                pending.append(0)
        elif c == ")":
            if len(pending) == 1:
                raise MatcherError(f"regex {pattern!r}: unexpected ) (RE2)")
            out.append(")" * pending.pop())
            out.append(")")
            i += 1
        elif c == "{":
            m = _REPEAT_RE.match(pattern, i)
            if m is None:
                out.append("\\{")  # RE2 reads a '{' that starts no repeat as a literal
                i += 1
                continue
            lo = int(m.group(1))
            hi = m.group(3)
            if lo > 1000 or (hi and int(hi) > 1000) or (hi and int(hi) < lo):
                raise MatcherError(f"regex {pattern!r}: invalid repeat count {m.group(0)}")
            out.append(m.group(0))
            i = m.end()
            if i < n and pattern[i] == "?":
                out.append("?")
                i += 1
            if _starts_repeat(pattern, i):
                raise MatcherError(f"regex {pattern!r}: invalid nested repetition operator")
        elif c in "*+?":
            out.append(c)
            i += 1
            if i < n and pattern[i] == "?":  # lazy form: same truth value
                out.append("?")
                i += 1
            if _starts_repeat(pattern, i):
                raise MatcherError(f"regex {pattern!r}: invalid nested repetition operator")
        elif c == "$":
            out.append("$" if multiline else "\\Z")  # Go's $ without (?m) is end of text
            i += 1
        else:
            out.append(c)
            i += 1
    if len(pending) != 1:
        raise MatcherError(f"regex {pattern!r}: missing closing ) (RE2)")
    out.append(")" * pending[0])
    return "".join(out)


def compile_go_regex(pattern: str) -> re.Pattern[str]:
    """Compile an Alertmanager regex (Go RE2 syntax) for full, anchored matching.

    Returns a Python pattern to use with ``.fullmatch(value)``, equivalent to Go's
    ``regexp.MustCompile("^(?:" + pattern + ")$").MatchString(value)`` as used by
    Alertmanager 0.25 ``pkg/labels/matcher.go`` (NewMatcher) and ``config.Regexp``.
    ``\\d \\w \\s \\b`` are ASCII as in RE2 (written out as explicit classes); POSIX
    ``[[:alpha:]]`` classes, ``\\Q..\\E``, ``\\x{..}``, ``\\z``, RE2's end-of-text ``$``,
    literal ``{`` and mid-pattern ``(?i)`` flag switches are translated.

    Raises :class:`MatcherError` for syntax RE2 rejects (lookaround, backreferences,
    possessive repeats, bad escapes, unbalanced parentheses) and for RE2 features the
    simulator does not model (``\\p`` Unicode classes, negated POSIX classes, the ``U``
    flag, ``\\D \\W \\S`` inside ``[...]``). ``(?i)`` folds case with Python's Unicode
    rules, which agree with RE2's simple folding for practical label values.
    """
    if not isinstance(pattern, str):
        raise MatcherError(f"regex must be a string, got {type(pattern).__name__}")
    try:
        translated = _go_regex_to_python(pattern)
    except MatcherError as exc:
        raise MatcherError(f"error parsing regexp: {exc}") from None
    try:
        return re.compile("(?:" + translated + ")")
    except re.error as exc:
        raise MatcherError(f"error parsing regexp {pattern!r}: {exc}") from None


# ------------------------------------------------------------------------ matchers


def _quote(value: str) -> str:
    return '"' + value.replace("\\", "\\\\").replace("\n", "\\n").replace('"', '\\"') + '"'


@dataclass(frozen=True)
class Matcher:
    """One label matcher: ``name``, ``op`` (one of ``= != =~ !~``) and ``value``.

    Build it with :func:`new_matcher` or the parsers so the regex is compiled and
    checked. ``str(m)`` gives the canonical ``name="value"`` form with OpenMetrics
    escaping (what Alertmanager 0.25 prints).
    """

    name: str
    op: str
    value: str
    regex: re.Pattern[str] | None = field(default=None, compare=False, repr=False)

    def matches_value(self, value: str) -> bool:
        """True if a label value satisfies this matcher (Alertmanager 0.25
        ``labels.Matcher.Matches``). Regexes match the whole value. Never raises."""
        if self.op == EQ:
            return value == self.value
        if self.op == NE:
            return value != self.value
        assert self.regex is not None, "use new_matcher() to build regex matchers"
        found = self.regex.fullmatch(value) is not None
        return found if self.op == RE else not found

    def matches(self, labels: Mapping[str, str]) -> bool:
        """True if the label set satisfies this matcher; a missing label is ``""``
        (Alertmanager 0.25 ``labels.Matchers.Matches``). Never raises."""
        return self.matches_value(labels.get(self.name, "") or "")

    def __str__(self) -> str:
        return f"{self.name}{self.op}{_quote(self.value)}"


def new_matcher(name: str, op: str, value: str) -> Matcher:
    """Build a :class:`Matcher`, compiling the regex for ``=~`` / ``!~``.

    Raises :class:`MatcherError` for an unknown operator or a regex Alertmanager
    0.25 would reject (``pkg/labels/matcher.go`` NewMatcher). The name is not
    checked here: the parsers and map readers check it with the rule that applies.
    """
    if op not in OPS:
        raise MatcherError(f"unknown match operator {op!r} (expected one of {', '.join(OPS)})")
    if not isinstance(name, str) or not isinstance(value, str):
        raise MatcherError(f"matcher name and value must be strings: {name!r} {op} {value!r}")
    regex = compile_go_regex(value) if op in (RE, NRE) else None
    return Matcher(name, op, value, regex)


def parse_matcher(text: str) -> Matcher:
    """Parse one matcher string such as ``severity="critical"``, ``env!=prod``,
    ``node=~"n[0-9]+"`` or ``job!~ "a|b"``.

    Follows Alertmanager 0.25 ``pkg/labels/parse.go`` (ParseMatcher): whitespace
    around the three tokens is dropped; the value may be double-quoted; inside it
    ``\\"``, ``\\\\`` and ``\\n`` are unescaped and any other backslash is literal;
    an unescaped ``"`` inside the value is an error. ``a==b`` is name ``a``, op
    ``=``, value ``=b``, as in Alertmanager.

    Raises :class:`MatcherError` ("bad matcher format", "unescaped double quote",
    or a regex error) with the offending text.
    """
    if not isinstance(text, str):
        raise MatcherError(f"bad matcher format: expected a string, got {text!r}")
    m = _MATCHER_RE.match(text)
    if m is None:
        raise MatcherError(f"bad matcher format: {text!r}")
    name, op, raw = m.group(1), m.group(2), m.group(3)
    expect_trailing_quote = False
    body = raw
    if body.startswith('"'):
        body = body[1:]
        expect_trailing_quote = True
    out: list[str] = []
    escaped = False
    last = len(body) - 1
    for i, ch in enumerate(body):
        if escaped:
            escaped = False
            if ch == "n":
                out.append("\n")
            elif ch in '"\\':
                out.append(ch)
            else:
                out.append("\\" + ch)  # a spurious escape keeps its backslash
            continue
        if ch == "\\":
            if i < last:
                escaped = True
            else:
                out.append("\\")
        elif ch == '"':
            if not expect_trailing_quote or i < last:
                raise MatcherError(f"matcher value contains unescaped double quote: {raw!r}")
            expect_trailing_quote = False
        else:
            out.append(ch)
    if expect_trailing_quote:
        raise MatcherError(f"matcher value contains unescaped double quote: {raw!r}")
    try:
        return new_matcher(name, op, "".join(out))
    except MatcherError as exc:
        raise MatcherError(f"{text.strip()!r}: {exc}") from None


def parse_matchers(text: str) -> list[Matcher]:
    """Parse a comma-separated list of matchers, optionally in braces:
    ``{a="b", c!~"x|y"}``, ``a=b,c!=d``, ``a="x,y"`` (commas inside quotes do not split).

    Follows Alertmanager 0.25 ``pkg/labels/parse.go`` (ParseMatchers): one leading
    ``{`` and one trailing ``}`` are optional; a trailing comma is allowed; an empty
    string (or ``{}``) gives no matchers; an empty item in the middle (``a=b,,c=d``)
    is an error. Raises :class:`MatcherError` for bad syntax.
    """
    if not isinstance(text, str):
        raise MatcherError(f"bad matcher format: expected a string, got {text!r}")
    s = text.removeprefix("{")
    s = s.removesuffix("}")
    tokens: list[str] = []
    token: list[str] = []
    inside_quotes = escaped = False
    for ch in s:
        if ch == "," and not inside_quotes:
            tokens.append("".join(token))
            token = []
            continue
        if ch == '"':
            if not escaped:
                inside_quotes = not inside_quotes
            else:
                escaped = False
        elif ch == "\\":
            escaped = not escaped
        elif ch != ",":
            escaped = False
        token.append(ch)
    tail = "".join(token).strip()
    if tail:
        tokens.append(tail)
    return [parse_matcher(t) for t in tokens]


def parse_matcher_list(items: object, *, field: str = "matchers") -> list[Matcher]:
    """Parse a config ``matchers`` list (``matchers``, ``source_matchers``,
    ``target_matchers``): a list of strings, each parsed by :func:`parse_matchers`.

    ``None`` gives ``[]``. Non-string scalars are stringified as Go's YAML does.
    Raises :class:`MatcherError` naming ``field`` for a non-list or a bad matcher
    (Alertmanager 0.25 ``config.Matchers.UnmarshalYAML``).
    """
    if items is None:
        return []
    if not isinstance(items, list):
        raise MatcherError(f"{field}: expected a list of matcher strings, got {items!r}")
    out: list[Matcher] = []
    for k, item in enumerate(items):
        text = scalar_to_str(item, where=f"{field}[{k}]")
        try:
            out.extend(parse_matchers(text))
        except MatcherError as exc:
            raise MatcherError(f"{field}[{k}]: {exc}") from None
    return out


def matchers_from_map(mapping: object, *, regex: bool, field: str = "match") -> list[Matcher]:
    """Matchers from a legacy map: ``{label: value}`` meaning ``label="value"``, or with
    ``regex=True`` (``*_match_re``) ``label=~"value"``.

    ``None`` gives ``[]``. Keys must be valid label names (``[a-zA-Z_][a-zA-Z0-9_]*``);
    values are YAML scalars. Raises :class:`MatcherError` naming ``field`` for a
    non-map, an invalid label name or a bad regex (Alertmanager 0.25
    ``config/config.go`` InhibitRule/Route UnmarshalYAML, ``config.Regexp``).
    """
    if mapping is None:
        return []
    if not isinstance(mapping, Mapping):
        raise MatcherError(f"{field}: expected a map of label: value, got {mapping!r}")
    out: list[Matcher] = []
    for name, value in mapping.items():
        if not is_valid_label_name(name):
            raise MatcherError(f"{field}: invalid label name {name!r}")
        text = scalar_to_str(value, where=f"{field}.{name}")
        try:
            out.append(new_matcher(name, RE if regex else EQ, text))
        except MatcherError as exc:
            raise MatcherError(f"{field}.{name}: {exc}") from None
    return out


def config_matchers(obj: Mapping[str, object], prefix: str = "") -> list[Matcher]:
    """All matchers one side of a config object declares, legacy and new forms together.

    ``prefix`` is ``""`` for a route (``match``, ``match_re``, ``matchers``),
    ``"source_"`` or ``"target_"`` for an inhibit rule. The result is the AND of
    ``{prefix}match``, ``{prefix}match_re`` and ``{prefix}matchers``, in that order
    (Alertmanager 0.25 ``inhibit/inhibit.go`` NewInhibitRule, ``dispatch/route.go``).
    Raises :class:`MatcherError` as the readers above do.
    """
    return (
        matchers_from_map(obj.get(f"{prefix}match"), regex=False, field=f"{prefix}match")
        + matchers_from_map(obj.get(f"{prefix}match_re"), regex=True, field=f"{prefix}match_re")
        + parse_matcher_list(obj.get(f"{prefix}matchers"), field=f"{prefix}matchers")
    )


def matches_all(matchers: Iterable[Matcher], labels: Mapping[str, str]) -> bool:
    """True if the label set satisfies every matcher (an empty list matches
    everything); missing labels are ``""``. Alertmanager 0.25 ``labels.Matchers.Matches``.
    Never raises."""
    return all(m.matches(labels) for m in matchers)
