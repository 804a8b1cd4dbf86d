"""The file commands the shell replays exactly: cd, echo, printf, cat, tee, rm, mv, cp, touch.

Each handler takes an :class:`~recorder.importers.shell.invocation.Invocation` and returns
the command's stdout (None when unknown), after its effect on the known files. Semantics
are bash's builtins and GNU coreutils' for the options agents use; other options are
ignored (an argument starting with ``-`` is an option).
"""

from __future__ import annotations

import posixpath
import re

from recorder.importers.shell.effect import UnknownContent
from recorder.importers.shell.files import HOME
from recorder.importers.shell.invocation import Handler, Invocation

_ESCAPES = {"n": "\n", "t": "\t", "\\": "\\", "r": "\r", "a": "\a", "0": "\0", "'": "'", '"': '"'}


def backslash_escapes(text: str) -> str:
    """``text`` with ``\\n \\t \\\\ \\r \\a \\0 \\' \\"`` replaced (``echo -e``, printf's format
    and ``%b``); any other backslash pair is kept as it is."""
    return re.sub(r"\\(.)", lambda m: _ESCAPES.get(m.group(1), "\\" + m.group(1)), text)


def echo_output(args: list[str]) -> str:
    """bash's builtin echo: options -n, -e, -E; arguments joined by spaces."""
    newline, escapes = True, False
    while args and re.fullmatch(r"-[neE]+", args[0]):
        flags = args.pop(0)[1:]
        newline = newline and "n" not in flags
        escapes = (escapes or "e" in flags) and not flags.endswith("E")
    text = " ".join(args)
    if escapes:
        text = backslash_escapes(text)
    return text + ("\n" if newline else "")


def printf_output(args: list[str]) -> str:
    """bash's builtin printf for ``%s``, ``%d``, ``%b`` and ``%%``; the format is reused
    while arguments remain, as bash does.

    Raises:
        UnknownContent: no format, or a conversion other than those four.
    """
    if not args:
        raise UnknownContent("printf without a format")
    fmt, rest = args[0], list(args[1:])
    if re.search(r"%[^sdb%]", fmt):
        raise UnknownContent(f"printf format {fmt!r}")
    pieces = re.split(r"(%[sdb%])", backslash_escapes(fmt))
    out = []
    while True:
        consumed = 0
        for piece in pieces:
            if piece == "%%":
                out.append("%")
            elif piece in ("%s", "%d", "%b"):
                value = rest[consumed] if consumed < len(rest) else ""
                consumed += 1
                out.append(backslash_escapes(value) if piece == "%b" else value)
            else:
                out.append(piece)
        rest = rest[consumed:]
        if not rest or consumed == 0:
            return "".join(out)


def cd(call: Invocation) -> str:
    """Change the working directory (``cd`` alone: home; ``cd -`` is not followed)."""
    target = call.args[0] if call.args else HOME
    if target != "-":
        files = call.files
        files.cwd = posixpath.normpath(posixpath.join(files.cwd, target.replace("~", HOME, 1)))
    return ""


def echo(call: Invocation) -> str:
    """:func:`echo_output` of the arguments (unknown when one holds ``$``)."""
    if call.expands:
        raise UnknownContent("echo of $")
    return echo_output(list(call.args))


def printf(call: Invocation) -> str:
    """:func:`printf_output` of the arguments (unknown when one holds ``$``)."""
    if call.expands:
        raise UnknownContent("printf of $")
    return printf_output(list(call.args))


def cat(call: Invocation) -> str | None:
    """The named files (``-`` is stdin) one after the other, or stdin when none is named."""
    names = [a for a in call.args if not a.startswith("-") or a == "-"]
    if not names:
        return call.stdin if call.stdin is not None else None
    files = call.files
    return "".join((call.stdin or "") if f == "-" else files.read(files.key(f)) for f in names)


def tee(call: Invocation) -> str | None:
    """Write stdin to every named file (appended with ``-a``) and pass it on."""
    files, effect, stdin = call.files, call.effect, call.stdin
    append = any(a in ("-a", "--append") for a in call.args)
    for target in call.paths:
        key = files.key(target)
        if stdin is None:
            files.unknown_write(effect, key, "tee of unknown input")
        elif append:
            try:
                files.set(effect, key, (files.read(key) if files.exists(key) else "") + stdin)
            except UnknownContent:
                files.unknown_write(effect, key, "tee -a")
        else:
            files.set(effect, key, stdin)
    return stdin


def rm(call: Invocation) -> str:
    """Delete the named files and folders (every known file under a folder; a file never
    seen is deleted too, in case it was there)."""
    files = call.files
    for target in call.paths:
        for key in files.matching(files.key(target)):
            doomed = [k for k in files.files if k == key or k.startswith(key.rstrip("/") + "/")]
            if not doomed and files.exists(key) is None:
                doomed = [key]
            for k in doomed:
                files.set(call.effect, k, None)
    return ""


def _move_or_copy(call: Invocation) -> str:
    """``mv``/``cp`` sources... destination: into the destination folder when it ends in
    ``/``, there are several sources or known files lie under it; else onto it."""
    paths, files, effect = call.paths, call.files, call.effect
    if len(paths) < 2:
        return ""
    *sources, destination = paths
    dest_key = files.key(destination)
    is_dir = destination.endswith("/") or len(sources) > 1 or any(
        k.startswith(dest_key.rstrip("/") + "/") for k in files.files)
    for source in sources:
        for key in files.matching(files.key(source)):
            target = posixpath.join(dest_key, posixpath.basename(key)) if is_dir else dest_key
            try:
                content = files.read(key)
            except UnknownContent as err:
                files.unknown_write(effect, target, f"{call.program} {key}: {err}")
                continue
            files.set(effect, target, content)
            if call.program == "mv":
                files.set(effect, key, None)
    return ""


def touch(call: Invocation) -> str:
    """Create the named files that are known not to exist (empty); one never seen before
    is written with unknown content."""
    files = call.files
    for target in call.paths:
        key = files.key(target)
        if files.exists(key) is False:
            files.set(call.effect, key, "")
        elif files.exists(key) is None:
            files.unknown_write(call.effect, key, "touch of a file not seen before")
    return ""


FILE_COMMANDS: dict[str, Handler] = {
    "cd": cd, "echo": echo, "printf": printf, "cat": cat, "tee": tee, "rm": rm,
    "mv": _move_or_copy, "cp": _move_or_copy, "touch": touch,
}
"""Program name to handler, for the commands of this module."""
