"""Alertmanager label matchers: parsing and matching, as Alertmanager 0.25 does it.

Covers the three places a config names matchers:

- the ``matchers`` / ``source_matchers`` / ``target_matchers`` lists of strings
  (``name="value"``, ``name!="v"``, ``name=~"re"``, ``name!~"re"``, unquoted values,
  several comma-separated matchers in one string, optional ``{...}`` braces);
- the legacy maps ``match`` / ``source_match`` / ``target_match`` (equality) and
  ``match_re`` / ``source_match_re`` / ``target_match_re`` (regex).

Semantics (Alertmanager 0.25 ``pkg/labels/matcher.go``, ``pkg/labels/parse.go``,
``config/config.go``): a label missing from an alert has the value ``""``; regexes
are fully anchored (``^(?:re)$``) and use Go RE2 syntax, translated to Python ``re``
by :func:`grader.go_regex.compile_go_regex`.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from grader.go_regex import RegexError, compile_go_regex

__all__ = [
    "EQ",
    "NE",
    "NRE",
    "OPS",
    "RE",
    "Matcher",
    "MatcherError",
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
    try:
        regex = compile_go_regex(value) if op in (RE, NRE) else None
    except RegexError as exc:
        raise MatcherError(str(exc)) from None
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
