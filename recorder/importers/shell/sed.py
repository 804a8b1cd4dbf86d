"""``sed -i`` replayed: scripts of ``s///`` commands emulated on the known text of each file.

Only ``s<d>pattern<d>replacement<d>[gI]`` commands (split by ``;`` or newlines) are
emulated, GNU sed's BRE or, with ``-E``/``-r``, ERE syntax mapped onto the ``regex``
package; anything else (addresses, other commands, occurrence numbers, bracket classes)
makes the file's new content unknown. Every emulated edit is named lossy (the real sed
was not run). A pattern is stopped after :data:`SED_SECONDS` on one file.
"""

from __future__ import annotations

import re
import time

import regex

from recorder.importers.shell.effect import UnknownContent
from recorder.importers.shell.invocation import Invocation

SED_SECONDS = 2.0
"""Longest a replayed sed expression may run on one file (the ``regex`` package stops a
pattern that backtracks without end, e.g. ``(a+)+$``)."""


def bre_to_python(pattern: str, extended: bool) -> str:
    """A sed BRE/ERE pattern as a Python regex.

    Raises:
        UnknownContent: an escape or a bracket expression (``[:class:]``) it cannot map.
    """
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
                raise UnknownContent(f"sed escape \\{nxt}")
            i += 2
            continue
        if not extended and ch in "(){}+?|":
            out.append("\\" + ch)
        elif ch == "[":
            close = pattern.find("]", i + 2 if pattern[i + 1:i + 2] in ("]", "^") else i + 1)
            if close < 0 or "[:" in pattern[i:close]:
                raise UnknownContent("sed bracket expression")
            out.append(pattern[i:close + 1])
            i = close + 1
            continue
        else:
            out.append(ch)
        i += 1
    return "".join(out)


def _split_s_command(rest: str) -> tuple[str, str, int]:
    """``(pattern, replacement, index after the closing delimiter)`` of the ``s`` command
    at the start of ``rest`` (an escaped delimiter is the delimiter itself)."""
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
        raise UnknownContent("unterminated sed s command")
    return parts[0], parts[1], i


def _parse_script(script: str, extended: bool) -> list[tuple[regex.Pattern, str, int]]:
    """The script's ``s`` commands as ``(compiled pattern, Python replacement, count)``
    (count 0: every match, ``g``; 1: the first)."""
    commands = []
    rest = script.strip()
    while rest:
        if not rest.startswith("s") or len(rest) < 2:
            raise UnknownContent(f"sed command {rest[:20]!r}")
        pattern, replacement, i = _split_s_command(rest)
        flags = re.match(r"[gI0-9]*", rest[i:]).group(0)
        rest = rest[i + len(flags):].lstrip()
        if rest[:1] in (";", "\n"):
            rest = rest[1:].lstrip()
        elif rest:
            raise UnknownContent(f"sed text after s command: {rest[:20]!r}")
        if re.search(r"[0-9]", flags):
            raise UnknownContent("sed s with an occurrence number")
        replacement = re.sub(r"\\([0-9])", r"\\g<\1>", replacement.replace("\\&", "\0AMP\0"))
        replacement = replacement.replace("&", r"\g<0>").replace("\0AMP\0", "&")
        try:
            compiled = regex.compile(bre_to_python(pattern, extended),
                                     regex.IGNORECASE if "I" in flags else 0)
        except regex.error as err:
            raise UnknownContent(f"sed pattern: {err}") from None
        commands.append((compiled, replacement, 0 if "g" in flags else 1))
    return commands


def sed_substitute(script: str, text: str, extended: bool) -> str:
    """Apply a sed script made only of ``s<d>pattern<d>replacement<d>[g]`` commands (split by
    ``;`` or newlines) to ``text`` line by line.

    Raises:
        UnknownContent: anything but ``s`` commands, a pattern it cannot map, or a run
            over :data:`SED_SECONDS`.
    """
    commands = _parse_script(script, extended)
    lines = text.split("\n")
    deadline = time.monotonic() + SED_SECONDS
    for index, line in enumerate(lines):
        for pattern, replacement, count in commands:
            try:
                line = pattern.sub(replacement, line, count=count,
                                   timeout=max(0.01, deadline - time.monotonic()))
            except TimeoutError:
                raise UnknownContent(f"sed expression took over {SED_SECONDS:g} s on this file "
                                     "(a pattern whose matching explodes): not replayed") from None
            except (regex.error, IndexError) as err:
                raise UnknownContent(f"sed replacement: {err}") from None
        lines[index] = line
    return "\n".join(lines)


UNEMULATED_FLAGS = {"n": "-n (output only what the script prints)", "z": "-z (NUL-separated lines)",
                   "s": "-s (files apart)", "u": "-u", "l": "-l"}
"""Short options after which the file's new text is not what the ``s///`` emulation gives."""


def _options(args: list[str]) -> tuple[list[str], list[str], bool, bool, list[str]]:
    """sed's arguments as ``(scripts, files, extended, in_place, unemulated)``.

    Short options cluster as GNU sed reads them: ``-ri`` is ``-r -i``; ``-i`` takes the rest
    of its word as a backup suffix (``-i.bak``; ``-ir`` is in place with suffix ``r``).
    ``-e SCRIPT`` (also ending a cluster: ``-ne SCRIPT``), ``-E``/``-r`` extended,
    ``--in-place[=SUFFIX]``, ``--expression=SCRIPT``; ``unemulated`` names options under
    which the emulation would give the wrong text (:data:`UNEMULATED_FLAGS`).
    """
    scripts, files, unemulated = [], [], []
    extended = in_place = False
    i = 0
    while i < len(args):
        arg = args[i]
        if arg in ("-e", "--expression") and i + 1 < len(args):
            scripts.append(args[i + 1])
            i += 2
            continue
        if arg.startswith("--expression="):
            scripts.append(arg.split("=", 1)[1])
        elif arg == "--regexp-extended":
            extended = True
        elif arg == "--in-place" or arg.startswith("--in-place="):
            in_place = True
        elif arg.startswith("--"):
            pass
        elif arg.startswith("-") and len(arg) > 1:
            for position, letter in enumerate(arg[1:], start=1):
                if letter == "i":
                    in_place = True
                    break  # the rest of the word is the backup suffix
                if letter in "Er":
                    extended = True
                elif letter == "e":
                    rest = arg[position + 1:]
                    if rest:
                        scripts.append(rest)
                    elif i + 1 < len(args):
                        scripts.append(args[i + 1])
                        i += 1
                    break
                elif letter in UNEMULATED_FLAGS:
                    unemulated.append(UNEMULATED_FLAGS[letter])
        elif not scripts and not files:
            scripts.append(arg)
        else:
            files.append(arg)
        i += 1
    return scripts, files, extended, in_place, unemulated


def sed(call: Invocation) -> str | None:
    """``sed -i``: every named file (globs against known files) rewritten by
    :func:`sed_substitute`, or written with unknown content; other sed runs change no file
    (their output is unknown: None)."""
    scripts, targets, extended, in_place, unemulated = _options(call.args)
    if not in_place:
        return None
    files, effect = call.files, call.effect
    what = f"`{call.command.short}`"
    for target in targets:
        for key in files.matching(files.key(target)):
            if unemulated:
                files.unknown_write(effect, key, f"{what} (sed {', '.join(unemulated)})")
                continue
            try:
                new = sed_substitute("\n".join(scripts), files.read(key), extended)
            except UnknownContent as err:
                files.unknown_write(effect, key, f"{what} ({err})")
                continue
            files.set(effect, key, new)
            effect.lossy.append(f"{what} on {key}: sed emulated (s/// only), not run")
    return ""
