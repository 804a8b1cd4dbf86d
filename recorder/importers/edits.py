"""Rebuild the file edits an agent made from its tool calls, one call at a time.

Used by the Harbor importer: a trajectory records tool calls and their output, not the
files. :class:`FileTracker` keeps what is known about every file (the task's pristine repo
to start with) and turns each call into a :class:`CallEffect`: the files it left with new
content, the reasons it could not be replayed exactly (``lossy``), and notes.

Understood exactly: editor tools (``write_file``/``create_file``/``Write``, OpenHands
``str_replace_editor`` create/str_replace/insert/undo_edit, ``Edit``/``MultiEdit``,
``replace_in_file``, Codex ``apply_patch``) and, in shell commands (Terminus
``bash_command`` keystrokes, ``execute_bash``, ``Bash``, ...), heredocs into ``cat``/``tee``,
``echo``/``printf``/``cat`` redirected with ``>``/``>>``, ``tee``, ``rm``, ``mv``, ``cp``,
``touch``, ``cd``, ``bash -c`` and scripts whose text is known. Lossy (replayed as well as
possible, and named): ``sed -i`` (a single ``s///`` is emulated), other in-place editors,
unquoted heredocs that expand ``$``, output of unknown commands redirected into a file,
interpreter code that writes files. Other commands are assumed not to change files.

Paths: a path with a ``monitoring`` component is in the task's repo and is keyed by its
path inside it (``rules/x.yml``, the instruction's "the repo is in monitoring/"); any
other path is keyed absolute (``/app/hello.txt``). Relative paths resolve against the
shell's working directory (``cd`` is followed; the start is ``/app``, Harbor's usual
working directory, or what the first terminal prompt shows).
"""

from __future__ import annotations

import fnmatch
import posixpath
import re
import shlex
import time
from dataclasses import dataclass, field

import regex

REPO_DIR_NAME = "monitoring"
DEFAULT_CWD = "/app"
HOME = "/root"

SHELL_TOOLS = {"bash_command", "execute_bash", "bash", "shell", "run_shell_command",
               "exec_command", "terminal", "run_command", "execute_command", "run_terminal_cmd",
               "local_shell"}
WRITE_TOOLS = {"write_file", "create_file", "write", "write_to_file"}
EDIT_TOOLS = {"str_replace_editor", "str_replace_based_edit_tool", "file_editor", "edit_file",
              "edit", "replace_in_file", "str_replace", "multiedit", "apply_patch"}
READ_ONLY_TOOLS = {"read_file", "list_files", "view", "read", "glob", "grep", "ls", "think",
                   "finish", "task_tracker", "todowrite", "todoread", "submit", "run_checks",
                   "route_test", "webfetch", "websearch", "mark_task_complete", "task"}
READ_ONLY_COMMANDS = {"ls", "cat", "grep", "egrep", "fgrep", "rg", "find", "head", "tail", "wc",
                      "diff", "cmp", "less", "more", "pwd", "which", "file", "stat", "tree",
                      "promtool", "amtool", "yamllint", "jq", "sleep", "true", "false", ":",
                      "mkdir", "clear", "history", "whoami", "id", "date", "env", "printenv",
                      "sort", "uniq", "cut", "tr", "awk", "sed", "test", "[", "exit", "export",
                      "set", "unset", "source", ".", "alias", "type", "md5sum", "sha256sum",
                      "chmod", "chown", "du", "df", "ps", "kill", "apt-get", "apt", "pip",
                      "pip3", "git", "curl", "wget", "xargs", "column", "nl", "yq", "basename",
                      "dirname", "realpath", "readlink", "tput", "reset", "echo", "printf",
                      "python", "python3", "perl", "ruby", "node"}
IN_PLACE_EDITORS = {"vi", "vim", "nvim", "nano", "emacs", "ed", "ex", "patch", "truncate", "dd",
                    "install", "ln", "rsync", "tar", "unzip", "gzip", "gunzip", "envsubst"}
GIT_WRITERS = {"checkout", "restore", "reset", "apply", "stash", "am", "merge", "pull", "rebase",
               "cherry-pick", "revert", "clean", "mv", "rm"}
INTERPRETERS = {"python", "python3", "perl", "ruby", "node"}
_WRITES_FILES = re.compile(r"""open\([^)]*['"][wax+]|\.write\(|write_text|write_bytes|"""
                           r"""shutil\.|os\.(rename|replace|remove|unlink)|yaml\.(safe_)?dump\([^)]*,|"""
                           r"""json\.dump\(|writeFile|File\.write""")
_EXPANSION = re.compile(r"(?<!\\)(\$[A-Za-z_{(0-9@*#?$!-]|`)")
_PROMPT = re.compile(r"[\w.-]+@[\w.-]+:(/[^#$\s]*)[#$] ")
TMUX_KEYS = re.compile(r"^(C-[a-z\\\]\[]|M-.|Escape|Enter|Tab|BSpace|Up|Down|Left|Right)$")


@dataclass
class FileEdit:
    """A file after a call: ``content`` the whole new text, None when it was deleted."""

    path: str
    content: str | None


@dataclass
class CallEffect:
    """What one tool call did to files, as far as it can be told from the call."""

    edits: list[FileEdit] = field(default_factory=list)
    lossy: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


class _Unknown(Exception):
    """Content that cannot be computed (raised inside the shell evaluator)."""


class _Refused(Exception):
    """The tool itself would have refused the call (so nothing changed)."""


# ----------------------------------------------------------------------------- shell words


@dataclass
class Token:
    """A shell token: ``kind`` "word" or "op"; ``value`` after quote removal; ``quoted`` if
    any part was quoted; ``expands`` if it holds an unquoted/double-quoted ``$`` or backtick."""

    kind: str
    value: str
    quoted: bool = False
    expands: bool = False


_OPS = ("&&", "||", ";;", "&>>", "&>", ">>", "<<<", "<<-", "<<", ">&", "<&", ">|",
        ";", "&", "|", "<", ">", "(", ")")


def tokenize(line: str) -> tuple[list[Token], bool]:
    """Split one logical shell line into tokens; returns (tokens, complete).

    ``complete`` is False when a quote is still open at the end (the line continues).
    Comments (``#`` starting a word) end the line.
    """
    tokens: list[Token] = []
    word, quoted, expands, in_word = [], False, False, False
    i, n = 0, len(line)

    def end_word():
        nonlocal word, quoted, expands, in_word
        if in_word:
            tokens.append(Token("word", "".join(word), quoted, expands))
        word, quoted, expands, in_word = [], False, False, False

    while i < n:
        ch = line[i]
        if ch in " \t\r":
            end_word()
            i += 1
        elif ch == "'":
            close = line.find("'", i + 1)
            if close < 0:
                return tokens, False
            word.append(line[i + 1:close])
            quoted = in_word = True
            i = close + 1
        elif ch == '"':
            i += 1
            in_word = quoted = True
            while i < n and line[i] != '"':
                if line[i] == "\\" and i + 1 < n and line[i + 1] in '$`"\\\n':
                    word.append(line[i + 1])
                    i += 2
                    continue
                if line[i] in "$`":
                    expands = True
                word.append(line[i])
                i += 1
            if i >= n:
                return tokens, False
            i += 1
        elif ch == "\\":
            if i + 1 < n:
                word.append(line[i + 1])
            in_word = True
            i += 2
        elif ch == "#" and not in_word:
            break
        elif ch == "$" and line.startswith("$(", i):
            depth, j = 0, i + 1
            while j < n:
                depth += {"(": 1, ")": -1}.get(line[j], 0)
                if depth == 0:
                    break
                j += 1
            word.append(line[i:j + 1])
            in_word = expands = True
            i = j + 1
        elif ch in "$`":
            word.append(ch)
            in_word = expands = True
            i += 1
        elif ch in ";&|<>()":
            fd = "".join(word) if in_word and not quoted and "".join(word).isdigit() \
                and ch in "<>" else ""
            if fd:
                word, in_word = [], False
            else:
                end_word()
            op = next(o for o in _OPS if line.startswith(o, i))
            tokens.append(Token("op", fd + op))
            i += len(op)
        else:
            word.append(ch)
            in_word = True
            i += 1
    end_word()
    return tokens, True


@dataclass
class Redirect:
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


def echo_output(args: list[str]) -> str:
    """bash's builtin echo: options -n, -e, -E; arguments joined by spaces."""
    newline, escapes = True, False
    while args and re.fullmatch(r"-[neE]+", args[0]):
        flags = args.pop(0)[1:]
        newline = newline and "n" not in flags
        escapes = (escapes or "e" in flags) and not flags.endswith("E")
    text = " ".join(args)
    if escapes:
        text = _backslash_escapes(text)
    return text + ("\n" if newline else "")


def _backslash_escapes(text: str) -> str:
    table = {"n": "\n", "t": "\t", "\\": "\\", "r": "\r", "a": "\a", "0": "\0", "'": "'",
             '"': '"'}
    return re.sub(r"\\(.)", lambda m: table.get(m.group(1), "\\" + m.group(1)), text)


def printf_output(args: list[str]) -> str:
    """bash's builtin printf for ``%s``, ``%d``, ``%b`` and ``%%`` (others raise _Unknown)."""
    if not args:
        raise _Unknown("printf without a format")
    fmt, rest = args[0], list(args[1:])
    if re.search(r"%[^sdb%]", fmt):
        raise _Unknown(f"printf format {fmt!r}")
    pieces = re.split(r"(%[sdb%])", _backslash_escapes(fmt))
    out = []
    while True:
        consumed = 0
        for piece in pieces:
            if piece == "%%":
                out.append("%")
            elif piece in ("%s", "%d", "%b"):
                value = rest[consumed] if consumed < len(rest) else ""
                consumed += 1
                out.append(_backslash_escapes(value) if piece == "%b" else value)
            else:
                out.append(piece)
        rest = rest[consumed:]
        if not rest or consumed == 0:
            return "".join(out)


# ------------------------------------------------------------------------------- sed -i


def _bre_to_python(pattern: str, extended: bool) -> str:
    """A sed BRE/ERE pattern as a Python regex (raises _Unknown on what it cannot map)."""
    out, i = [], 0
    while i < len(pattern):
        ch = pattern[i]
        if ch == "\\" and i + 1 < len(pattern):
            nxt = pattern[i + 1]
            if not extended and nxt in "(){}+?|":
                out.append(nxt)
            elif nxt in "wWsSbB.*[]^$\\/":
                out.append("\\" + nxt)
            elif nxt == "n":
                out.append("\\n")
            elif nxt.isdigit():
                out.append("\\" + nxt)
            else:
                raise _Unknown(f"sed escape \\{nxt}")
            i += 2
            continue
        if not extended and ch in "(){}+?|":
            out.append("\\" + ch)
        elif ch == "[":
            close = pattern.find("]", i + 2 if pattern[i + 1:i + 2] in ("]", "^") else i + 1)
            if close < 0 or "[:" in pattern[i:close]:
                raise _Unknown("sed bracket expression")
            out.append(pattern[i:close + 1])
            i = close + 1
            continue
        else:
            out.append(ch)
        i += 1
    return "".join(out)


MAX_PENDING = 1_000_000
"""Characters of terminal input kept waiting for the end of a command (an open heredoc or
quote) at most; more is not replayed (the step is lossy)."""
SED_SECONDS = 2.0
"""Longest a replayed sed expression may run on one file (the ``regex`` package stops a
pattern that backtracks without end, e.g. ``(a+)+$``)."""


def sed_substitute(script: str, text: str, extended: bool) -> str:
    """Apply a sed script made only of ``s<d>pattern<d>replacement<d>[g]`` commands (split by
    ``;`` or newlines) to ``text`` line by line. Raises _Unknown for anything else."""
    commands = []
    rest = script.strip()
    while rest:
        if not rest.startswith("s") or len(rest) < 2:
            raise _Unknown(f"sed command {rest[:20]!r}")
        delim = rest[1]
        parts, current, i = [], [], 2
        while i < len(rest) and len(parts) < 2:
            if rest[i] == "\\" and i + 1 < len(rest):
                current.append(rest[i:i + 2] if rest[i + 1] != delim else delim)
                i += 2
                continue
            if rest[i] == delim:
                parts.append("".join(current))
                current = []
            else:
                current.append(rest[i])
            i += 1
        if len(parts) < 2:
            raise _Unknown("unterminated sed s command")
        flags_match = re.match(r"[gI0-9]*", rest[i:])
        flags = flags_match.group(0)
        rest = rest[i + len(flags):].lstrip()
        if rest[:1] in (";", "\n"):
            rest = rest[1:].lstrip()
        elif rest:
            raise _Unknown(f"sed text after s command: {rest[:20]!r}")
        if re.search(r"[0-9]", flags):
            raise _Unknown("sed s with an occurrence number")
        replacement = re.sub(r"\\([0-9])", r"\\g<\1>", parts[1].replace("\\&", "\0AMP\0"))
        replacement = replacement.replace("&", r"\g<0>").replace("\0AMP\0", "&")
        try:
            compiled = regex.compile(_bre_to_python(parts[0], extended),
                                     regex.IGNORECASE if "I" in flags else 0)
        except regex.error as err:
            raise _Unknown(f"sed pattern: {err}") from None
        commands.append((compiled, replacement, 0 if "g" in flags else 1))
    lines = text.split("\n")
    deadline = time.monotonic() + SED_SECONDS
    for index, line in enumerate(lines):
        for pattern, replacement, count in commands:
            try:
                line = pattern.sub(replacement, line, count=count,
                                   timeout=max(0.01, deadline - time.monotonic()))
            except TimeoutError:
                raise _Unknown(f"sed expression took over {SED_SECONDS:g} s on this file (a "
                               "pattern whose matching explodes): not replayed") from None
            except (regex.error, IndexError) as err:
                raise _Unknown(f"sed replacement: {err}") from None
        lines[index] = line
    return "\n".join(lines)


# --------------------------------------------------------------------------- apply_patch


def apply_codex_patch(patch: str, read) -> list[tuple[str, str | None]]:
    """Apply a Codex ``*** Begin Patch`` patch; ``read(path)`` gives a file's text (raises
    _Unknown when unknown). Returns ``[(path, new content or None for deleted)]``."""
    lines = patch.replace("\r\n", "\n").split("\n")
    if not any(line.strip() == "*** Begin Patch" for line in lines):
        raise _Unknown("not a '*** Begin Patch' patch")
    results: list[tuple[str, str | None]] = []
    i = 0
    while i < len(lines):
        line = lines[i]
        if line.startswith("*** Add File: "):
            path, body = line[len("*** Add File: "):].strip(), []
            i += 1
            while i < len(lines) and not lines[i].startswith("***"):
                body.append(lines[i].removeprefix("+"))
                i += 1
            results.append((path, "\n".join(body) + "\n"))
            continue
        if line.startswith("*** Delete File: "):
            results.append((line[len("*** Delete File: "):].strip(), None))
        elif line.startswith("*** Update File: "):
            path = line[len("*** Update File: "):].strip()
            i += 1
            target = path
            if i < len(lines) and lines[i].startswith("*** Move to: "):
                target = lines[i][len("*** Move to: "):].strip()
                i += 1
            hunks, current = [], None
            while i < len(lines) and not (lines[i].startswith("*** ") and
                                          not lines[i].startswith("*** End of File")):
                if lines[i].startswith("@@"):
                    current = (lines[i][2:].strip(), [])
                    hunks.append(current)
                elif lines[i].startswith("*** End of File"):
                    pass
                elif current is not None or lines[i][:1] in (" ", "-", "+"):
                    if current is None:
                        current = ("", [])
                        hunks.append(current)
                    current[1].append(lines[i])
                i += 1
            text = _apply_hunks(read(path), hunks, path)
            if target != path:
                results.append((path, None))
            results.append((target, text))
            continue
        i += 1
    return results


def _apply_hunks(text: str, hunks: list[tuple[str, list[str]]], path: str) -> str:
    lines = text.split("\n")
    cursor = 0
    for header, body in hunks:
        old = [ln[1:] for ln in body if ln[:1] in (" ", "-") or ln == ""]
        new = [ln[1:] for ln in body if ln[:1] in (" ", "+") or ln == ""]
        if header:
            anchor = next((k for k in range(cursor, len(lines)) if lines[k].strip() == header), None)
            if anchor is not None:
                cursor = anchor
        start = _find(lines, old, cursor)
        if start is None:
            raise _Unknown(f"apply_patch: a hunk does not match {path}")
        lines[start:start + len(old)] = new
        cursor = start + len(new)
    return "\n".join(lines)


def _find(lines: list[str], old: list[str], cursor: int) -> int | None:
    while old and old[-1] == "":
        old = old[:-1]
    for same in (lambda a, b: a == b, lambda a, b: a.rstrip() == b.rstrip()):
        for start in list(range(cursor, len(lines) - len(old) + 1)) + list(range(cursor)):
            if all(same(lines[start + k], old[k]) for k in range(len(old))):
                return start
    return None


# ----------------------------------------------------------------------------- the tracker


class FileTracker:
    """What is known about the agent's files, updated one tool call at a time.

    ``repo_files`` maps repo-relative paths to the pristine repo's text (empty for an
    unknown task); ``repo_known`` says whether a repo file missing from it is known not
    to exist. :meth:`apply` returns a call's :class:`CallEffect`.
    """

    def __init__(self, repo_files: dict[str, str] | None = None, *, repo_known: bool = False,
                 cwd: str = DEFAULT_CWD):
        self.files: dict[str, str | None] = dict(repo_files or {})
        self.repo_known = repo_known
        self.cwd = cwd
        self.history: dict[str, list[str | None]] = {}
        self.pending = ""  # terminal keystrokes typed but not yet run (no newline yet)
        self.waiting_for: str | None = None  # the delimiter of a heredoc the pending input opened

    # -- paths and contents

    def key(self, path: str) -> str:
        """The tracker key of a path as the agent wrote it (see the module docstring)."""
        if path.startswith("~"):
            path = HOME + path[1:]
        absolute = posixpath.normpath(posixpath.join(self.cwd, path))
        parts = absolute.split("/")
        if REPO_DIR_NAME in parts:
            index = len(parts) - 1 - parts[::-1].index(REPO_DIR_NAME)
            inside = "/".join(parts[index + 1:])
            return inside or "."
        return absolute

    def relevant(self, key: str) -> bool:
        """Whether a file matters for grading: in the repo, or anything when the task is unknown."""
        return not self.repo_known or not key.startswith("/")

    def read(self, key: str) -> str:
        """A file's text (raises _Unknown when it is not known)."""
        if key in self.files and self.files[key] is not None:
            return self.files[key]
        if key not in self.files and self.repo_known and not key.startswith("/"):
            raise _Unknown(f"{key} does not exist")
        raise _Unknown(f"content of {key} is unknown")

    def exists(self, key: str) -> bool | None:
        if key in self.files:
            return True
        if self.repo_known and not key.startswith("/"):
            return False
        return None

    def _set(self, effect: CallEffect, key: str, content: str | None) -> None:
        self.history.setdefault(key, []).append(self.files.get(key))
        if content is None:
            self.files.pop(key, None)
        else:
            self.files[key] = content
        effect.edits = [e for e in effect.edits if e.path != key] + [FileEdit(key, content)]

    def _unknown_write(self, effect: CallEffect, key: str, why: str) -> None:
        self.files[key] = None
        message = f"{why}: content of {key} unknown"
        (effect.lossy if self.relevant(key) else effect.notes).append(message)

    def matching(self, pattern_key: str) -> list[str]:
        """Known files matching a glob key (the key itself when it has no wildcard)."""
        if not any(ch in pattern_key for ch in "*?["):
            return [pattern_key]
        return sorted(k for k in self.files if fnmatch.fnmatch(k, pattern_key))

    # -- dispatch

    def apply(self, name: str, arguments: dict) -> CallEffect:
        """The effect of one tool call (``name`` as the agent called it)."""
        effect = CallEffect()
        lowered = name.lower()
        args = arguments if isinstance(arguments, dict) else {}
        try:
            if lowered == "bash_command" or "keystrokes" in args:
                self._keystrokes(effect, args.get("keystrokes"))
            elif lowered in SHELL_TOOLS:
                self._shell_call(effect, args)
            elif lowered == "execute_ipython_cell":
                code = str(args.get("code") or "")
                if _WRITES_FILES.search(code):
                    effect.lossy.append("IPython cell code may write files (not replayed)")
            elif lowered in WRITE_TOOLS:
                self._write_tool(effect, args)
            elif lowered in EDIT_TOOLS:
                self._edit_tool(effect, lowered, args)
            elif lowered in READ_ONLY_TOOLS:
                pass
            elif _path_of(args) and _content_of(args) is not None:
                effect.lossy.append(f"unknown tool {name!r} with a path and content: not replayed")
            else:
                effect.notes.append(f"unknown tool {name!r}: assumed not to change files")
        except _Refused as err:
            effect.notes.append(f"{name}: {err}")
        except _Unknown as err:
            effect.lossy.append(f"{name}: {err}")
        return effect

    # -- editor tools

    def _write_tool(self, effect: CallEffect, args: dict) -> None:
        path, content = _path_of(args), _content_of(args)
        if not path or content is None:
            effect.notes.append("write without a path or content: nothing written")
            return
        self._set(effect, self.key(path), content)

    def _edit_tool(self, effect: CallEffect, name: str, args: dict) -> None:
        if name == "apply_patch":
            self._patch(effect, str(args.get("input") or args.get("patch") or ""))
            return
        command = args.get("command") if name in ("str_replace_editor", "file_editor",
                                                  "str_replace_based_edit_tool") else None
        path = _path_of(args)
        if not path:
            effect.notes.append("edit without a path: nothing changed")
            return
        key = self.key(path)
        if command in ("view", None) and name in ("str_replace_editor", "file_editor",
                                                  "str_replace_based_edit_tool"):
            return
        if command == "create":
            self._set(effect, key, str(args.get("file_text") or ""))
        elif command == "insert":
            lines = self.read(key).split("\n")
            try:
                at = int(args.get("insert_line") or 0)
            except (TypeError, ValueError):
                raise _Unknown(f"insert_line {args.get('insert_line')!r} is not a line number") from None
            new = str(args.get("new_str") or "")
            trailing = lines[-1] == ""
            body = lines[:-1] if trailing else lines
            body[at:at] = new.split("\n")
            self._set(effect, key, "\n".join(body + ([""] if trailing else [])))
        elif command == "undo_edit":
            previous = self.history.get(key) or []
            if not previous:
                raise _Unknown(f"undo_edit with no recorded edit of {key}")
            before = previous.pop()
            self.files[key] = before
            if before is None:
                self.files.pop(key, None)
            effect.edits.append(FileEdit(key, before))
        elif name == "multiedit":
            text = self.read(key)
            edits = args.get("edits")
            if not isinstance(edits, list) or not all(isinstance(e, dict) for e in edits):
                raise _Unknown("MultiEdit edits is not a list of {old_string, new_string} objects")
            for edit in edits:
                text = _replace_once(text, edit.get("old_string"), edit.get("new_string"),
                                     edit.get("replace_all") is True, key)
            self._set(effect, key, text)
        else:
            old = _first(args, "old_str", "old_string", "old")
            new = _first(args, "new_str", "new_string", "new")
            every = args.get("replace_all") is True or args.get("all") is True
            self._set(effect, key, _replace_once(self.read(key), old, new or "", every, key))

    def _patch(self, effect: CallEffect, patch: str) -> None:
        for path, content in apply_codex_patch(patch, lambda p: self.read(self.key(p))):
            self._set(effect, self.key(path), content)

    # -- shell

    def _shell_call(self, effect: CallEffect, args: dict) -> None:
        command = _first(args, "command", "cmd", "script", "code")
        if isinstance(command, list):
            if len(command) >= 3 and command[0].split("/")[-1] in ("bash", "sh", "zsh") \
                    and command[1] in ("-c", "-lc"):
                command = command[2]
            else:
                command = shlex.join(str(c) for c in command)
        if not isinstance(command, str):
            return
        self.run_script(effect, command, final=True)

    def _keystrokes(self, effect: CallEffect, keystrokes) -> None:
        if not isinstance(keystrokes, str):
            return
        if TMUX_KEYS.match(keystrokes.strip()):
            if keystrokes.strip() in ("C-c", "C-d"):
                self.pending = ""  # the typed line (or an open heredoc) is abandoned
            return
        waiting_for = self.waiting_for
        self.pending += keystrokes
        if waiting_for and waiting_for not in self.pending[-(len(keystrokes) + len(waiting_for) + 1):]:
            return  # an open heredoc that this input cannot close: nothing new to run
        if len(self.pending) > MAX_PENDING:
            effect.lossy.append(f"terminal input of over {MAX_PENDING} characters with no end to its "
                                "command (an open heredoc or quote): not replayed")
            self.pending, self.waiting_for = "", None
            return
        self.pending = self.run_script(effect, self.pending, final=False)

    def run_script(self, effect: CallEffect, text: str, *, final: bool) -> str:
        """Run every complete command line of ``text``; returns what is left unrun.

        With ``final`` the end of the text ends the last line and any open heredoc (a
        command string); without it (terminal keystrokes) they wait for more input.
        """
        self.waiting_for = None
        lines = text.split("\n")
        complete, rest = (lines, "") if final else (lines[:-1], lines[-1])
        i = 0
        while i < len(complete):
            start = i
            logical = complete[i]
            i += 1
            tokens, ok = tokenize(logical)
            while (not ok or _continues(logical)) and i < len(complete):
                logical = (logical[:-1] if _continues(logical) else logical + "\n") + complete[i]
                i += 1
                tokens, ok = tokenize(logical)
            if (not ok or _continues(logical)) and not final:
                return "\n".join(complete[start:] + [rest])
            pipelines = parse_line(tokens)
            waiting: str | None = None
            for command in (c for p in pipelines for c in p if c.heredoc):
                delimiter, strip_tabs, _ = command.heredoc
                body = []
                while i < len(complete):
                    line = complete[i].lstrip("\t") if strip_tabs else complete[i]
                    i += 1
                    if line == delimiter:
                        break
                    body.append(line)
                else:
                    if not final:
                        waiting = delimiter
                        break
                command.body = "\n".join(body) + "\n" if body else ""
            if waiting:
                self.waiting_for = waiting
                return "\n".join(complete[start:] + [rest])
            for pipeline in pipelines:
                self._pipeline(effect, pipeline)
        return rest

    def _pipeline(self, effect: CallEffect, pipeline: list[SimpleCommand]) -> None:
        stdin: str | None = ""
        for command in pipeline:
            try:
                output = self._command(effect, command, stdin)
            except _Unknown:
                output = None
            stdin = self._redirect(effect, command, output)
        last = pipeline[-1]
        program = last.words[0].value.split("/")[-1] if last.words else ""
        if program in ("echo", "printf") and stdin is not None:
            effect.notes.append(f"`{_short(last.text)}` prints to the terminal; no file written")

    def _redirect(self, effect: CallEffect, command: SimpleCommand, output: str | None):
        """Write the command's stdout where its redirects send it; returns what reaches the pipe."""
        to_pipe = output
        for redirect in command.redirects:
            op = redirect.op
            if op not in (">", ">>", ">|", "1>", "1>>", "&>", "&>>"):
                continue
            target = redirect.target.value
            if target.startswith(("/dev/", "&")):
                to_pipe = None if target != "/dev/stdout" else to_pipe
                continue
            if redirect.target.expands:
                effect.lossy.append(f"`{command.text}` writes to {target!r}, a path with $")
                continue
            key = self.key(target)
            to_pipe = None
            if output is None or op.startswith("&"):
                self._unknown_write(effect, key, f"output of `{_short(command.text)}` redirected")
                continue
            if op.endswith(">>"):
                try:
                    output_all = (self.read(key) if self.exists(key) is not False else "") + output
                except _Unknown:
                    self._unknown_write(effect, key, f"`{_short(command.text)}` appends")
                    continue
                self._set(effect, key, output_all)
            else:
                self._set(effect, key, output)
        return to_pipe

    def _command(self, effect: CallEffect, command: SimpleCommand, stdin: str | None) -> str | None:
        """A simple command's stdout (None: unknown), after its side effects on files."""
        words = [w.value for w in command.words]
        while words and re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*=.*", words[0]):
            words.pop(0)  # VAR=value prefixes
        if words and words[0] in ("sudo", "command", "builtin", "exec", "time", "nohup"):
            words = words[1:]
        if command.body is not None:
            text, exact = heredoc_text(command.body, command.heredoc[2])
            if not exact:
                effect.lossy.append(f"heredoc with an unquoted delimiter expands $ or backticks "
                                    f"(`{_short(command.text)}`); taken literally")
            stdin = text
        if not words:
            return stdin if command.body is not None else ""
        program = words[0].split("/")[-1]
        args = words[1:]
        if any(w.expands for w in command.words[1:]) and program in (
                "rm", "mv", "cp", "touch", "tee", "sed", "cd"):
            effect.lossy.append(f"`{_short(command.text)}` uses $ expansion in its arguments")
            return None
        if program == "cd":
            target = args[0] if args else HOME
            if target != "-":
                self.cwd = posixpath.normpath(posixpath.join(self.cwd, target.replace("~", HOME, 1)))
            return ""
        if program == "echo":
            if any(w.expands for w in command.words[1:]):
                raise _Unknown("echo of $")
            return echo_output(list(args))
        if program == "printf":
            if any(w.expands for w in command.words[1:]):
                raise _Unknown("printf of $")
            return printf_output(list(args))
        if program == "cat":
            files = [a for a in args if not a.startswith("-") or a == "-"]
            if not files:
                return stdin if stdin is not None else None
            return "".join((stdin or "") if f == "-" else self.read(self.key(f)) for f in files)
        if program == "tee":
            append = any(a in ("-a", "--append") for a in args)
            for target in (a for a in args if not a.startswith("-")):
                key = self.key(target)
                if stdin is None:
                    self._unknown_write(effect, key, "tee of unknown input")
                elif append:
                    try:
                        self._set(effect, key, (self.read(key) if self.exists(key) else "") + stdin)
                    except _Unknown:
                        self._unknown_write(effect, key, "tee -a")
                else:
                    self._set(effect, key, stdin)
            return stdin
        if program == "rm":
            for target in (a for a in args if not a.startswith("-")):
                for key in self.matching(self.key(target)):
                    doomed = [k for k in self.files if k == key or k.startswith(key.rstrip("/") + "/")]
                    if not doomed and self.exists(key) is None:
                        doomed = [key]  # a file never seen: deleted if it was there
                    for k in doomed:
                        self._set(effect, k, None)
            return ""
        if program in ("mv", "cp"):
            return self._move_or_copy(effect, program, [a for a in args if not a.startswith("-")])
        if program == "touch":
            for target in (a for a in args if not a.startswith("-")):
                key = self.key(target)
                if self.exists(key) is False:
                    self._set(effect, key, "")
                elif self.exists(key) is None:
                    self._unknown_write(effect, key, "touch of a file not seen before")
            return ""
        if program == "sed" and any(a.startswith(("-i", "--in-place"))
                                    for a in args):
            self._sed_in_place(effect, command, args)
            return ""
        if program == "apply_patch":
            self._patch(effect, stdin or (args[0] if args else ""))
            return ""
        if program in ("bash", "sh", "zsh"):
            return self._sub_shell(effect, args, stdin, command)
        if program in IN_PLACE_EDITORS or (program in ("perl", "ruby", "yq") and any(
                re.match(r"^-[a-zA-Z]*i", a) or a == "--inplace" for a in args)):
            effect.lossy.append(f"`{_short(command.text)}` may change files (not replayed)")
            return None
        if program in INTERPRETERS:
            code = stdin if command.body is not None else None
            for flag in ("-c", "-e"):
                if flag in args and args.index(flag) + 1 < len(args):
                    code = args[args.index(flag) + 1]
            if code is None and args and self.exists(self.key(args[-1])):
                code = self.files.get(self.key(args[-1]))
            if code is not None and _WRITES_FILES.search(code):
                effect.lossy.append(f"`{_short(command.text)}` runs code that may write files "
                                    "(not replayed)")
            elif code is None:
                effect.notes.append(f"`{_short(command.text)}` not inspected; assumed not to "
                                    "change files")
            return None
        if program == "git" and args and args[0] in GIT_WRITERS:
            effect.lossy.append(f"`{_short(command.text)}` may change files (not replayed)")
            return None
        if program in ("awk", "gawk") and "inplace" in " ".join(args):
            effect.lossy.append(f"`{_short(command.text)}` edits in place (not replayed)")
            return None
        return None

    def _move_or_copy(self, effect: CallEffect, program: str, paths: list[str]) -> str:
        if len(paths) < 2:
            return ""
        *sources, destination = paths
        dest_key = self.key(destination)
        is_dir = destination.endswith("/") or len(sources) > 1 or any(
            k.startswith(dest_key.rstrip("/") + "/") for k in self.files)
        for source in sources:
            for key in self.matching(self.key(source)):
                target = posixpath.join(dest_key, posixpath.basename(key)) if is_dir else dest_key
                try:
                    content = self.read(key)
                except _Unknown as err:
                    self._unknown_write(effect, target, f"{program} {key}: {err}")
                    continue
                self._set(effect, target, content)
                if program == "mv":
                    self._set(effect, key, None)
        return ""

    def _sed_in_place(self, effect: CallEffect, command: SimpleCommand, args: list[str]) -> None:
        scripts, files, extended, i = [], [], False, 0
        while i < len(args):
            arg = args[i]
            if arg in ("-e", "--expression") and i + 1 < len(args):
                scripts.append(args[i + 1])
                i += 2
                continue
            if arg in ("-E", "-r", "--regexp-extended"):
                extended = True
            elif arg.startswith("-"):
                pass
            elif not scripts and not files:
                scripts.append(arg)
            else:
                files.append(arg)
            i += 1
        what = f"`{_short(command.text)}`"
        for target in files:
            for key in self.matching(self.key(target)):
                try:
                    new = sed_substitute("\n".join(scripts), self.read(key), extended)
                except _Unknown as err:
                    self._unknown_write(effect, key, f"{what} ({err})")
                    continue
                self._set(effect, key, new)
                effect.lossy.append(f"{what} on {key}: sed emulated (s/// only), not run")

    def _sub_shell(self, effect: CallEffect, args: list[str], stdin: str | None,
                   command: SimpleCommand) -> str | None:
        script = None
        if "-c" in args and args.index("-c") + 1 < len(args):
            script = args[args.index("-c") + 1]
        elif "-lc" in args and args.index("-lc") + 1 < len(args):
            script = args[args.index("-lc") + 1]
        elif args and not args[0].startswith("-"):
            try:
                script = self.read(self.key(args[0]))
            except _Unknown:
                effect.lossy.append(f"`{_short(command.text)}` runs a script whose text is unknown")
                return None
        elif command.body is not None or stdin:
            script = stdin
        if script is None:
            return None
        saved = self.cwd
        self.run_script(effect, script, final=True)
        self.cwd = saved
        return None


def _continues(line: str) -> bool:
    """A line ending in an odd number of backslashes continues on the next line."""
    stripped = line.rstrip("\r")
    return (len(stripped) - len(stripped.rstrip("\\"))) % 2 == 1


def _short(text: str, limit: int = 80) -> str:
    return text if len(text) <= limit else text[:limit - 3] + "..."


def _first(args: dict, *names: str):
    for name in names:
        if name in args:
            return args[name]
    return None


def _path_of(args: dict) -> str | None:
    value = _first(args, "path", "file_path", "filename", "file", "target_file")
    return value if isinstance(value, str) and value else None


def _content_of(args: dict) -> str | None:
    value = _first(args, "content", "file_text", "text", "contents", "code_edit")
    return value if isinstance(value, str) else None


def _replace_once(text: str, old, new, every: bool, key: str) -> str:
    if not isinstance(old, str) or not old:
        raise _Unknown(f"edit of {key} without old text")
    count = text.count(old)
    if count == 0 or (count > 1 and not every):
        raise _Refused(f"old text occurs {count} times in {key}: the tool refused, nothing changed")
    return text.replace(old, str(new or "")) if every else text.replace(old, str(new or ""), 1)


def prompt_cwd(observation: str) -> str | None:
    """The working directory a terminal prompt shows (``root@host:/app#``), if any."""
    match = _PROMPT.search(observation or "")
    return match.group(1) if match else None
