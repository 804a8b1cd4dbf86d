"""Go RE2 regexes as Python ``re`` patterns: the translation Alertmanager regex matchers need.

Alertmanager 0.25 compiles matcher and ``*_match_re`` regexes with Go's ``regexp`` (RE2
syntax, fully anchored). :func:`compile_go_regex` gives a Python pattern with the same
meaning, or :class:`RegexError` for a pattern RE2 rejects or the translation does not model.
"""

from __future__ import annotations

import re

__all__ = ["RegexError", "compile_go_regex"]


class RegexError(ValueError):
    """A regex Go's ``regexp/syntax`` rejects, or an RE2 feature this translation does not
    model. The message names the pattern and the offending part."""


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
        raise RegexError(f"regex {pattern!r}: trailing backslash")
    c = pattern[i + 1]
    if not c.isalnum():
        return "\\" + c, i + 2
    if c in "pP":
        raise RegexError(
            f"regex {pattern!r}: Unicode classes (\\p, \\P) are not supported by the simulator"
        )
    if c == "Q":
        return _quoted_literal(pattern, i, in_class)
    if c == "E":
        return "", i + 2  # a stray \E is ignored by RE2
    if c == "z":
        if in_class:
            raise RegexError(f"regex {pattern!r}: invalid escape \\z inside [...]")
        return "\\Z", i + 2
    if c == "x" and i + 2 < len(pattern) and pattern[i + 2] == "{":
        return _hex_escape(pattern, i)
    if c.isdigit():
        return _octal_escape(pattern, i)
    return _letter_escape(pattern, i, in_class)


def _quoted_literal(pattern: str, i: int, in_class: bool) -> tuple[str, int]:
    """``\\Q...\\E`` at ``pattern[i]``: the text up to ``\\E`` (or the end) as a literal."""
    if in_class:
        raise RegexError(f"regex {pattern!r}: \\Q...\\E inside [...] is not supported")
    end = pattern.find("\\E", i + 2)
    literal = pattern[i + 2 :] if end < 0 else pattern[i + 2 : end]
    return re.escape(literal), (len(pattern) if end < 0 else end + 2)


def _hex_escape(pattern: str, i: int) -> tuple[str, int]:
    """``\\x{HEX}`` at ``pattern[i]``: the character it names, escaped."""
    end = pattern.find("}", i + 3)
    digits = pattern[i + 3 : end] if end > 0 else ""
    if not digits or any(d not in "0123456789abcdefABCDEF" for d in digits):
        raise RegexError(f"regex {pattern!r}: invalid escape \\x{{...}}")
    return re.escape(chr(int(digits, 16))), end + 1


def _octal_escape(pattern: str, i: int) -> tuple[str, int]:
    """A backslash and a digit at ``pattern[i]``: Go's octal escape \\0..\\7 (up to three
    digits); \\8, \\9 and lone \\1..\\7 (backreferences) fail."""
    c = pattern[i + 1]
    digits = c
    j = i + 2
    while j < len(pattern) and len(digits) < 3 and pattern[j] in "01234567":
        digits += pattern[j]
        j += 1
    if c in "89" or (c != "0" and len(digits) == 1):
        raise RegexError(f"regex {pattern!r}: backreferences are not supported (RE2)")
    if any(d not in "01234567" for d in digits):
        raise RegexError(f"regex {pattern!r}: invalid octal escape")
    return re.escape(chr(int(digits, 8))), j


def _letter_escape(pattern: str, i: int, in_class: bool) -> tuple[str, int]:
    """A backslash and a letter Go knows (``\\d``, ``\\b``, ``\\n``...) at ``pattern[i]``."""
    c = pattern[i + 1]
    if c not in _GO_LETTER_ESCAPES or (in_class and c in "AbBz"):
        raise RegexError(f"regex {pattern!r}: invalid escape sequence \\{c} (RE2)")
    if c in _ASCII_PERL_CLASSES:  # RE2's \d \w \s are ASCII-only; Python's are Unicode
        body = _ASCII_PERL_CLASSES[c]
        if in_class:
            if c.isupper():
                raise RegexError(
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
            raise RegexError(f"regex {pattern!r}: missing closing ]")
        c = pattern[j]
        if c == "]" and not first:
            out.append("]")
            return "".join(out), j + 1
        first = False
        if c == "[" and pattern.startswith("[:", j):
            end = pattern.find(":]", j + 2)
            name = pattern[j + 2 : end] if end > 0 else ""
            if name.startswith("^"):
                raise RegexError(
                    f"regex {pattern!r}: negated POSIX classes are not supported by the simulator"
                )
            if name not in _POSIX_CLASSES:
                raise RegexError(f"regex {pattern!r}: invalid character class range [:{name}:]")
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


_FLAG_GROUP_RE = re.compile(r"\(\?([imsU]*)(?:-([imsU]*))?([:)])")


class _Translation:
    """One left-to-right pass over a Go pattern, writing the Python pattern in ``out``."""

    def __init__(self, pattern: str):
        self.pattern = pattern
        self.out: list[str] = []
        # One entry per open group: how many ')' to add when that group closes, for
        # Go's "(?i)" flag switches, which hold until the end of the enclosing group.
        self.pending: list[int] = [0]
        self.multiline = False
        self.i = 0

    def run(self) -> str:
        """The whole Python pattern; RegexError for syntax RE2 rejects."""
        pattern = self.pattern
        while self.i < len(pattern):
            c = pattern[self.i]
            if c == "\\":
                self._emit(*_translate_escape(pattern, self.i, in_class=False))
            elif c == "[":
                self._emit(*_translate_class(pattern, self.i))
            elif c == "(":
                self._open_group()
            elif c == ")":
                self._close_group()
            elif c == "{":
                self._brace()
            elif c in "*+?":
                self._repeat(c, self.i + 1)
            elif c == "$":  # Go's $ without (?m) is end of text
                self._emit("$" if self.multiline else "\\Z", self.i + 1)
            else:
                self._emit(c, self.i + 1)
        if len(self.pending) != 1:
            raise RegexError(f"regex {pattern!r}: missing closing ) (RE2)")
        self.out.append(")" * self.pending[0])
        return "".join(self.out)

    def _emit(self, text: str, next_index: int) -> None:
        self.out.append(text)
        self.i = next_index

    def _open_group(self) -> None:
        """``(``, ``(?P<name>``, or a flag group ``(?flags:`` / ``(?flags)``."""
        if not self.pattern.startswith("(?", self.i):
            self._emit("(", self.i + 1)
            self.pending.append(0)
        elif self.pattern.startswith("(?P<", self.i):
            self._emit("(?P<", self.i + 4)
            self.pending.append(0)
        else:
            self._flag_group()

    def _flag_group(self) -> None:
        """``(?i:...)`` opens a group; a bare ``(?i)`` holds to the end of the enclosing
        group, so it opens one that the enclosing group's ``)`` closes."""
        pattern, i = self.pattern, self.i
        m = _FLAG_GROUP_RE.match(pattern, i)
        if m is None:
            raise RegexError(
                f"regex {pattern!r}: invalid or unsupported Perl syntax "
                f"{pattern[i : i + 3]!r} (RE2)"
            )
        on, off, end = m.group(1), m.group(2), m.group(3)
        if off == "":
            raise RegexError(f"regex {pattern!r}: invalid or unsupported Perl syntax (RE2)")
        off = off or ""
        if "U" in on + off:
            raise RegexError(
                f"regex {pattern!r}: the U (ungreedy) flag is not supported by the simulator"
            )
        if "m" in on:
            self.multiline = True
        flags = on + ("-" + off if off else "")
        self.i = m.end()
        if end == ":":
            self.out.append(f"(?{flags}:" if flags else "(?:")
            self.pending.append(0)
        elif flags:
            self.out.append(f"(?{flags}:")
            self.pending[-1] += 1

    def _close_group(self) -> None:
        if len(self.pending) == 1:
            raise RegexError(f"regex {self.pattern!r}: unexpected ) (RE2)")
        self.out.append(")" * self.pending.pop())
        self._emit(")", self.i + 1)

    def _brace(self) -> None:
        """``{n}``, ``{n,}``, ``{n,m}`` (counts up to 1000), or a literal ``{``."""
        m = _REPEAT_RE.match(self.pattern, self.i)
        if m is None:
            self._emit("\\{", self.i + 1)  # RE2 reads a '{' that starts no repeat as a literal
            return
        lo = int(m.group(1))
        hi = m.group(3)
        if lo > 1000 or (hi and int(hi) > 1000) or (hi and int(hi) < lo):
            raise RegexError(f"regex {self.pattern!r}: invalid repeat count {m.group(0)}")
        self._repeat(m.group(0), m.end())

    def _repeat(self, operator: str, next_index: int) -> None:
        """A repetition operator and its lazy ``?``; RE2 refuses a second one stacked on it."""
        self._emit(operator, next_index)
        if self.i < len(self.pattern) and self.pattern[self.i] == "?":  # lazy: same truth value
            self._emit("?", self.i + 1)
        if _starts_repeat(self.pattern, self.i):
            raise RegexError(f"regex {self.pattern!r}: invalid nested repetition operator")


def _go_regex_to_python(pattern: str) -> str:
    """Translate Go RE2 syntax to an equivalent Python ``re`` pattern."""
    return _Translation(pattern).run()


def compile_go_regex(pattern: str) -> re.Pattern[str]:
    """Compile an Alertmanager regex (Go RE2 syntax) for full, anchored matching.

    Returns a Python pattern to use with ``.fullmatch(value)``, equivalent to Go's
    ``regexp.MustCompile("^(?:" + pattern + ")$").MatchString(value)`` as used by
    Alertmanager 0.25 ``pkg/labels/matcher.go`` (NewMatcher) and ``config.Regexp``.
    ``\\d \\w \\s \\b`` are ASCII as in RE2 (written out as explicit classes); POSIX
    ``[[:alpha:]]`` classes, ``\\Q..\\E``, ``\\x{..}``, ``\\z``, RE2's end-of-text ``$``,
    literal ``{`` and mid-pattern ``(?i)`` flag switches are translated.

    Raises :class:`RegexError` for syntax RE2 rejects (lookaround, backreferences,
    possessive repeats, bad escapes, unbalanced parentheses) and for RE2 features the
    simulator does not model (``\\p`` Unicode classes, negated POSIX classes, the ``U``
    flag, ``\\D \\W \\S`` inside ``[...]``). ``(?i)`` folds case with Python's Unicode
    rules, which agree with RE2's simple folding for practical label values.
    """
    if not isinstance(pattern, str):
        raise RegexError(f"regex must be a string, got {type(pattern).__name__}")
    try:
        translated = _go_regex_to_python(pattern)
    except RegexError as exc:
        raise RegexError(f"error parsing regexp: {exc}") from None
    try:
        return re.compile("(?:" + translated + ")")
    except re.error as exc:
        raise RegexError(f"error parsing regexp {pattern!r}: {exc}") from None
