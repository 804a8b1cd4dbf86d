"""Shell text into commands: words and quoting, operators, redirections, pipelines, heredocs.

Covers what agents type: single and double quotes, backslash escapes and line
continuations, ``$(...)``/backticks/``$`` kept as text but flagged (``expands``),
comments, ``<<``/``<<-`` heredocs (quoted or not), redirections with a file descriptor
(``2>``), and the operators ``&& || ; & | ( )``. Nothing is expanded or run here.
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass, field

_OPS = ("&&", "||", ";;", "&>>", "&>", ">>", "<<<", "<<-", "<<", ">&", "<&", ">|",
        ";", "&", "|", "<", ">", "(", ")")
_EXPANSION = re.compile(r"(?<!\\)(\$[A-Za-z_{(0-9@*#?$!-]|`)")
SHORT_LIMIT = 80
"""Characters of a command shown in a message at most (longer ones end in ``...``)."""


@dataclass
class Token:
    """A shell token: ``kind`` "word" or "op"; ``value`` after quote removal; ``quoted`` if
    any part was quoted; ``expands`` if it holds an unquoted/double-quoted ``$`` or backtick."""

    kind: str
    value: str
    quoted: bool = False
    expands: bool = False


def _double_quoted(line: str, i: int) -> tuple[str, bool, int]:
    """The text of the double-quoted string whose opening quote is at ``line[i]``:
    ``(text after escapes, whether it holds $ or a backtick, index after the closing
    quote)``; the index is -1 when the quote is still open at the end of ``line``."""
    text, expands, n = [], False, len(line)
    i += 1
    while i < n and line[i] != '"':
        if line[i] == "\\" and i + 1 < n and line[i + 1] in '$`"\\\n':
            text.append(line[i + 1])
            i += 2
            continue
        if line[i] in "$`":
            expands = True
        text.append(line[i])
        i += 1
    return "".join(text), expands, (i + 1 if i < n else -1)


def _substitution_end(line: str, i: int) -> int:
    """Index of the ``)`` closing the ``$(`` at ``line[i]`` (``len(line)`` when open)."""
    depth, j = 0, i + 1
    while j < len(line):
        depth += {"(": 1, ")": -1}.get(line[j], 0)
        if depth == 0:
            break
        j += 1
    return j


class _Words:
    """The tokens of a line so far and the word being read (its parts, whether any part was
    quoted or expands, whether a word is open at all)."""

    def __init__(self) -> None:
        self.tokens: list[Token] = []
        self.word: list[str] = []
        self.quoted = self.expands = self.in_word = False

    def end_word(self) -> None:
        """Close the open word (if any) into a word token."""
        if self.in_word:
            self.tokens.append(Token("word", "".join(self.word), self.quoted, self.expands))
        self.word, self.quoted, self.expands, self.in_word = [], False, False, False

    def append(self, text: str, *, expands: bool = False) -> None:
        """Add ``text`` to the open word (opening one), marking it expanding if ``expands``."""
        self.word.append(text)
        self.in_word = True
        self.expands = self.expands or expands


def tokenize(line: str) -> tuple[list[Token], bool]:
    """Split one logical shell line into tokens; returns (tokens, complete).

    ``complete`` is False when a quote is still open at the end (the line continues).
    Comments (``#`` starting a word) end the line.
    """
    words = _Words()
    i, n = 0, len(line)
    while i < n:
        ch = line[i]
        if ch in " \t\r":
            words.end_word()
            i += 1
        elif ch in "'\"":
            i = _quoted(line, i, words)
            if i < 0:
                return words.tokens, False
        elif ch == "\\":
            if i + 1 < n:
                words.word.append(line[i + 1])
            words.in_word = True
            i += 2
        elif ch == "#" and not words.in_word:
            break
        elif ch == "$" and line.startswith("$(", i):
            j = _substitution_end(line, i)
            words.append(line[i:j + 1], expands=True)
            i = j + 1
        elif ch in "$`":
            words.append(ch, expands=True)
            i += 1
        elif ch in ";&|<>()":
            i = _operator(line, i, words)
        else:
            words.append(ch)
            i += 1
    words.end_word()
    return words.tokens, True


def _quoted(line: str, i: int, words: _Words) -> int:
    """Add the single- or double-quoted string whose opening quote is at ``line[i]`` to the
    open word; the index after its closing quote, or -1 when it is still open at the end."""
    if line[i] == "'":
        close = line.find("'", i + 1)
        text, dollar, after = line[i + 1:close], False, close + 1 if close >= 0 else -1
    else:
        text, dollar, after = _double_quoted(line, i)
    if after < 0:
        return -1
    words.append(text, expands=dollar)
    words.quoted = True
    return after


def _operator(line: str, i: int, words: _Words) -> int:
    """Add the operator at ``line[i]`` as a token (with the file descriptor the open word
    gives it, as in ``2>``); the index after it."""
    ch = line[i]
    fd = "".join(words.word) if words.in_word and not words.quoted and "".join(words.word).isdigit() \
        and ch in "<>" else ""
    if fd:
        words.word, words.in_word = [], False
    else:
        words.end_word()
    op = next(o for o in _OPS if line.startswith(o, i))
    words.tokens.append(Token("op", fd + op))
    return i + len(op)


@dataclass
class Redirect:
    """A redirection: ``op`` as written (``>``, ``>>``, ``2>``, ``&>`` ...) and its target word."""

    op: str
    target: Token


@dataclass
class SimpleCommand:
    """One command of a pipeline: its words, redirects and (at most one used) heredoc."""

    words: list[Token] = field(default_factory=list)
    redirects: list[Redirect] = field(default_factory=list)
    heredoc: tuple[str, bool, bool] | None = None  # (delimiter, strip tabs, quoted)
    body: str | None = None

    @property
    def text(self) -> str:
        """The command as a shell line (quoted where needed), for messages."""
        return shlex.join(w.value for w in self.words)

    @property
    def short(self) -> str:
        """:attr:`text` cut to :data:`SHORT_LIMIT` characters (ending in ``...`` when cut)."""
        return short(self.text)


def short(text: str, limit: int = SHORT_LIMIT) -> str:
    """``text`` when it has at most ``limit`` characters, else its start and ``...``."""
    return text if len(text) <= limit else text[:limit - 3] + "..."


def parse_line(tokens: list[Token]) -> list[list[SimpleCommand]]:
    """Tokens of one logical line into pipelines (lists of simple commands joined by ``|``)."""
    pipelines: list[list[SimpleCommand]] = [[SimpleCommand()]]
    i = 0
    while i < len(tokens):
        token = tokens[i]
        current = pipelines[-1][-1]
        if token.kind == "word":
            current.words.append(token)
        elif token.value in ("&&", "||", ";", "&", ";;", "(", ")"):
            pipelines.append([SimpleCommand()])
        elif token.value == "|":
            pipelines[-1].append(SimpleCommand())
        elif token.value in ("<<", "<<-") and i + 1 < len(tokens):
            target = tokens[i + 1]
            current.heredoc = (target.value, token.value == "<<-", target.quoted)
            i += 1
        elif i + 1 < len(tokens) and tokens[i + 1].kind == "word":
            current.redirects.append(Redirect(token.value, tokens[i + 1]))
            i += 1
        i += 1
    return [[c for c in p if c.words or c.heredoc or c.redirects] for p in pipelines
            if any(c.words or c.heredoc or c.redirects for c in p)]


def heredoc_text(body: str, quoted: bool) -> tuple[str, bool]:
    """The text a heredoc body feeds: (text, exact). An unquoted delimiter makes the shell
    process ``\\$ \\` \\\\`` escapes and expand ``$``/backticks; expansions are not
    evaluated (kept literally), so such a body is not exact."""
    if quoted:
        return body, True
    exact = not _EXPANSION.search(body)
    text = re.sub(r"\\([$`\\])", r"\1", body).replace("\\\n", "")
    return text, exact


def continues(line: str) -> bool:
    """A line ending in an odd number of backslashes continues on the next line."""
    stripped = line.rstrip("\r")
    return (len(stripped) - len(stripped.rstrip("\\"))) % 2 == 1


@dataclass
class Script:
    """A shell text split into what can run now and what must wait for more input.

    ``lines`` holds each complete logical line's pipelines (heredoc bodies filled in);
    ``rest`` the text not yet runnable (a partial last line, an open quote or heredoc);
    ``waiting_for`` the delimiter of the heredoc ``rest`` leaves open, if any.
    """

    lines: list[list[list[SimpleCommand]]] = field(default_factory=list)
    rest: str = ""
    waiting_for: str | None = None


def _read_heredocs(pipelines: list[list[SimpleCommand]], lines: list[str], i: int,
                   final: bool) -> tuple[int, str | None]:
    """Fill the heredoc bodies of ``pipelines`` from ``lines[i:]``; returns the index after
    them and, without ``final``, the delimiter of a heredoc the lines do not close."""
    for command in (c for p in pipelines for c in p if c.heredoc):
        delimiter, strip_tabs, _ = command.heredoc
        body = []
        while i < len(lines):
            line = lines[i].lstrip("\t") if strip_tabs else lines[i]
            i += 1
            if line == delimiter:
                break
            body.append(line)
        else:
            if not final:
                return i, delimiter
        command.body = "\n".join(body) + "\n" if body else ""
    return i, None


def split_script(text: str, *, final: bool) -> Script:
    """Split ``text`` into complete command lines (see :class:`Script`).

    With ``final`` the end of the text ends the last line and any open heredoc (a
    command string); without it (terminal keystrokes) they wait for more input.
    """
    lines = text.split("\n")
    complete, rest = (lines, "") if final else (lines[:-1], lines[-1])
    script = Script(rest=rest)
    i = 0
    while i < len(complete):
        start = i
        logical = complete[i]
        i += 1
        tokens, ok = tokenize(logical)
        while (not ok or continues(logical)) and i < len(complete):
            logical = (logical[:-1] if continues(logical) else logical + "\n") + complete[i]
            i += 1
            tokens, ok = tokenize(logical)
        if (not ok or continues(logical)) and not final:
            script.rest = "\n".join(complete[start:] + [rest])
            return script
        pipelines = parse_line(tokens)
        i, waiting = _read_heredocs(pipelines, complete, i, final)
        if waiting:
            script.rest, script.waiting_for = "\n".join(complete[start:] + [rest]), waiting
            return script
        script.lines.append(pipelines)
    return script
