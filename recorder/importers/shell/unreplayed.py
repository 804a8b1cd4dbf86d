"""Programs that may change files but are not replayed: each run is named lossy or noted.

In-place editors (vi, nano, patch, ``perl -i``, ``yq -i``, ``awk -i inplace`` ...), ``git``
subcommands that rewrite the work tree, and interpreters whose code looks like it writes
files (:data:`WRITES_FILES`). Their stdout is unknown (None).
"""

from __future__ import annotations

import re

from recorder.importers.shell.invocation import Handler, Invocation

IN_PLACE_EDITORS = {"vi", "vim", "nvim", "nano", "emacs", "ed", "ex", "patch", "truncate", "dd",
                    "install", "ln", "rsync", "tar", "unzip", "gzip", "gunzip", "envsubst"}
GIT_WRITERS = {"checkout", "restore", "reset", "apply", "stash", "am", "merge", "pull", "rebase",
               "cherry-pick", "revert", "clean", "mv", "rm"}
WRITES_FILES = re.compile(r"""open\([^)]*['"][wax+]|\.write\(|write_text|write_bytes|"""
                          r"""shutil\.|os\.(rename|replace|remove|unlink)|yaml\.(safe_)?dump\([^)]*,|"""
                          r"""json\.dump\(|writeFile|File\.write""")
"""Code (Python, Perl, Ruby, JavaScript) that looks like it writes, moves or deletes files."""


def in_place_editor(call: Invocation) -> None:
    """An editor or archiver that may have changed files: lossy."""
    call.effect.lossy.append(f"`{call.command.short}` may change files (not replayed)")


def _edits_in_place(args: list[str]) -> bool:
    return any(re.match(r"^-[a-zA-Z]*i", a) or a == "--inplace" for a in args)


def interpreter(call: Invocation) -> None:
    """Code run by an interpreter (``-c``/``-e`` text, a heredoc, or a known script file):
    lossy when it looks like it writes files, noted when its code is unknown."""
    code = call.stdin if call.command.body is not None else None
    args = call.args
    for flag in ("-c", "-e"):
        if flag in args and args.index(flag) + 1 < len(args):
            code = args[args.index(flag) + 1]
    files = call.files
    if code is None and args and files.exists(files.key(args[-1])):
        code = files.files.get(files.key(args[-1]))
    if code is not None and WRITES_FILES.search(code):
        call.effect.lossy.append(f"`{call.command.short}` runs code that may write files "
                                 "(not replayed)")
    elif code is None:
        call.effect.notes.append(f"`{call.command.short}` not inspected; assumed not to "
                                 "change files")


def perl_or_ruby(call: Invocation) -> None:
    """``perl -i``/``ruby -i`` edit in place (lossy); otherwise :func:`interpreter`."""
    if _edits_in_place(call.args):
        in_place_editor(call)
    else:
        interpreter(call)


def yq(call: Invocation) -> None:
    """``yq -i`` edits in place (lossy); other runs change no file."""
    if _edits_in_place(call.args):
        in_place_editor(call)


def git(call: Invocation) -> None:
    """A git subcommand that rewrites the work tree (:data:`GIT_WRITERS`): lossy."""
    if call.args and call.args[0] in GIT_WRITERS:
        call.effect.lossy.append(f"`{call.command.short}` may change files (not replayed)")


def awk(call: Invocation) -> None:
    """``awk -i inplace`` (gawk's in-place extension): lossy."""
    if "inplace" in " ".join(call.args):
        call.effect.lossy.append(f"`{call.command.short}` edits in place (not replayed)")


UNREPLAYED_COMMANDS: dict[str, Handler] = {
    **dict.fromkeys(IN_PLACE_EDITORS, in_place_editor),
    "perl": perl_or_ruby, "ruby": perl_or_ruby, "yq": yq,
    "python": interpreter, "python3": interpreter, "node": interpreter,
    "git": git, "awk": awk, "gawk": awk,
}
"""Program name to handler, for the programs of this module."""
