"""The shell: runs command strings and terminal keystrokes through the command table.

A script is split into command lines (:mod:`~recorder.importers.shell.lexer`); each
pipeline's commands run in turn, stdout of one the stdin of the next, and redirections
write files. A command is looked up by program name in :data:`COMMANDS`; a program not
there changes no file and its output is unknown. Keystrokes wait (``pending``) until a
line, quote or heredoc they open is complete.
"""

from __future__ import annotations

import re

from recorder.importers.shell.builtins import FILE_COMMANDS
from recorder.importers.shell.effect import CallEffect, UnknownContent
from recorder.importers.shell.files import KnownFiles
from recorder.importers.shell.invocation import Handler, Invocation
from recorder.importers.shell.lexer import SimpleCommand, heredoc_text, short, split_script
from recorder.importers.shell.patch import apply_patch
from recorder.importers.shell.sed import sed
from recorder.importers.shell.unreplayed import UNREPLAYED_COMMANDS

MAX_PENDING = 1_000_000
"""Characters of terminal input kept waiting for the end of a command (an open heredoc or
quote) at most; more is not replayed (the step is lossy)."""
TMUX_KEYS = re.compile(r"^(C-[a-z\\\]\[]|M-.|Escape|Enter|Tab|BSpace|Up|Down|Left|Right)$")
PREFIXES = ("sudo", "command", "builtin", "exec", "time", "nohup")
"""Words that run the command after them (the command is what is replayed)."""
LITERAL_PATHS = ("rm", "mv", "cp", "touch", "tee", "sed", "cd")
"""Commands not replayed when an argument holds ``$`` (the path it names is unknown)."""
_ASSIGNMENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*=.*")
_STDOUT_REDIRECTS = (">", ">>", ">|", "1>", "1>>", "&>", "&>>")


def sub_shell(call: Invocation) -> None:
    """``bash``/``sh``/``zsh``: the ``-c``/``-lc`` text, a known script file, or stdin, run
    as a script of its own (its ``cd`` does not outlive it)."""
    args, files = call.args, call.files
    script = None
    if "-c" in args and args.index("-c") + 1 < len(args):
        script = args[args.index("-c") + 1]
    elif "-lc" in args and args.index("-lc") + 1 < len(args):
        script = args[args.index("-lc") + 1]
    elif args and not args[0].startswith("-"):
        try:
            script = files.read(files.key(args[0]))
        except UnknownContent:
            call.effect.lossy.append(f"`{call.command.short}` runs a script whose text is unknown")
            return
    elif call.command.body is not None or call.stdin:
        script = call.stdin
    if script is None:
        return
    saved = files.cwd
    call.run_script(call.effect, script, final=True)
    files.cwd = saved
    return


COMMANDS: dict[str, Handler] = {
    **FILE_COMMANDS, "sed": sed, "apply_patch": apply_patch,
    "bash": sub_shell, "sh": sub_shell, "zsh": sub_shell, **UNREPLAYED_COMMANDS,
}
"""Program name (basename) to handler: every program the shell knows."""


class Shell:
    """Runs shell text against ``files``; ``pending`` holds keystrokes typed but not yet
    run, ``waiting_for`` the delimiter of a heredoc the pending input opened."""

    def __init__(self, files: KnownFiles):
        self.files = files
        self.pending = ""
        self.waiting_for: str | None = None

    def keystrokes(self, effect: CallEffect, keystrokes: object) -> None:
        """Terminal input (Terminus ``keystrokes``): appended to what is pending, and every
        line it completes run. ``C-c``/``C-d`` abandon the pending line; other tmux keys
        do nothing."""
        if not isinstance(keystrokes, str):
            return
        if TMUX_KEYS.match(keystrokes.strip()):
            if keystrokes.strip() in ("C-c", "C-d"):
                self.pending = ""
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
        script = split_script(text, final=final)
        for pipelines in script.lines:
            for pipeline in pipelines:
                self._pipeline(effect, pipeline)
        self.waiting_for = script.waiting_for
        return script.rest

    def _pipeline(self, effect: CallEffect, pipeline: list[SimpleCommand]) -> None:
        stdin: str | None = ""
        for command in pipeline:
            try:
                output = self._command(effect, command, stdin)
            except UnknownContent:
                output = None
            stdin = self._redirect(effect, command, output)
        last = pipeline[-1]
        program = last.words[0].value.split("/")[-1] if last.words else ""
        if program in ("echo", "printf") and stdin is not None:
            effect.notes.append(f"`{last.short}` prints to the terminal; no file written")

    def _redirect(self, effect: CallEffect, command: SimpleCommand, output: str | None):
        """Write the command's stdout where its redirects send it; returns what reaches the pipe."""
        files, to_pipe = self.files, output
        for redirect in command.redirects:
            op = redirect.op
            if op not in _STDOUT_REDIRECTS:
                continue
            target = redirect.target.value
            if target.startswith(("/dev/", "&")):
                to_pipe = None if target != "/dev/stdout" else to_pipe
                continue
            if redirect.target.expands:
                effect.lossy.append(f"`{command.text}` writes to {target!r}, a path with $")
                continue
            key = files.key(target)
            to_pipe = None
            if output is None or op.startswith("&"):
                files.unknown_write(effect, key, f"output of `{command.short}` redirected")
                continue
            if op.endswith(">>"):
                try:
                    output_all = (files.read(key) if files.exists(key) is not False else "") + output
                except UnknownContent:
                    files.unknown_write(effect, key, f"`{command.short}` appends")
                    continue
                files.set(effect, key, output_all)
            else:
                files.set(effect, key, output)
        return to_pipe

    def _command(self, effect: CallEffect, command: SimpleCommand, stdin: str | None) -> str | None:
        """A simple command's stdout (None: unknown), after its side effects on files."""
        words = [w.value for w in command.words]
        while words and _ASSIGNMENT.fullmatch(words[0]):
            words.pop(0)  # VAR=value prefixes
        if words and words[0] in PREFIXES:
            words = words[1:]
        if command.body is not None:
            text, exact = heredoc_text(command.body, command.heredoc[2])
            if not exact:
                effect.lossy.append(f"heredoc with an unquoted delimiter expands $ or backticks "
                                    f"(`{short(command.text)}`); taken literally")
            stdin = text
        if not words:
            return stdin if command.body is not None else ""
        call = Invocation(program=words[0].split("/")[-1], args=words[1:], stdin=stdin,
                          command=command, files=self.files, effect=effect,
                          run_script=self.run_script)
        if call.expands and call.program in LITERAL_PATHS:
            effect.lossy.append(f"`{command.short}` uses $ expansion in its arguments")
            return None
        handler = COMMANDS.get(call.program)
        return handler(call) if handler else None
