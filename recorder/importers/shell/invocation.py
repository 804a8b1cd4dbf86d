"""One simple command ready to run: what every command handler of the shell receives."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from recorder.importers.shell.effect import CallEffect
from recorder.importers.shell.files import KnownFiles
from recorder.importers.shell.lexer import SimpleCommand


@dataclass
class Invocation:
    """A command about to run: ``program`` (the basename of its first word after ``sudo``,
    ``VAR=value`` and the like), ``args`` (the words after it, quotes removed), ``stdin``
    (its input: a heredoc body or what the pipe brings; None when unknown), the ``files``
    it acts on, the ``effect`` it adds to, and ``run_script`` (``(effect, text, final=)``,
    for commands that run shell text). ``command`` is the parsed command itself."""

    program: str
    args: list[str]
    stdin: str | None
    command: SimpleCommand
    files: KnownFiles
    effect: CallEffect
    run_script: Callable[..., str]

    @property
    def expands(self) -> bool:
        """Whether an argument holds ``$`` or a backtick (its value is not known)."""
        return any(w.expands for w in self.command.words[1:])

    @property
    def paths(self) -> list[str]:
        """The arguments that are not options (do not start with ``-``)."""
        return [a for a in self.args if not a.startswith("-")]


Handler = Callable[[Invocation], "str | None"]
"""A command: its stdout (None when unknown), after its effects on ``files``; raises
:class:`~recorder.importers.shell.effect.UnknownContent` when its output cannot be known."""
