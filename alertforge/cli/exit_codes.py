"""The one table from error kind to exit code and message: how every failure leaves the CLI.

Exit codes: 0 ok, 1 the thing checked or asked for failed (a gate case, a model endpoint, an
environment, a Ray cluster, a refused publish, a helper process killed), 2 bad input or a tool failure (a message on
stderr naming the file and the problem; never a traceback), 130 interrupted.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from contract.errors import (
    BadInput,
    ClusterFailure,
    EndpointFailure,
    EnvironmentFailure,
    HelperDied,
    Refused,
    ToolFailure,
)


@dataclass(frozen=True)
class Outcome:
    """How one kind of error ends a command.

    ``code`` is the exit code; ``message`` turns the error into the line printed after
    ``alertforge: `` on stderr, or None to print nothing (a closed pipe).
    """

    kind: type[BaseException]
    code: int
    message: Callable[[BaseException], str] | None


def _cannot_write(err: BaseException) -> str:
    if isinstance(err, FileExistsError):
        return f"{err.filename}: exists and is not a folder (cannot write there)"
    assert isinstance(err, OSError)
    return f"{err.filename or ''}: {err.strerror or err} (cannot write there)"


OUTCOMES: tuple[Outcome, ...] = (
    Outcome(BadInput, 2, lambda err: f"{err.path}: {err.problem}"),
    Outcome(ToolFailure, 2, lambda err: f"grader error: {err}"),
    Outcome(EndpointFailure, 1, lambda err: f"model endpoint error: {err}"),
    Outcome(EnvironmentFailure, 1, lambda err: f"environment error: {err}"),
    Outcome(ClusterFailure, 1, lambda err: f"ray cluster error: {err}"),
    Outcome(Refused, 1, lambda err: f"refusing to publish: {err}"),
    Outcome(HelperDied, 1, str),
    Outcome(BrokenPipeError, 0, None),  # output piped into head: stop quietly
    Outcome(OSError, 2, _cannot_write),  # not a directory, permission, disk full...
    Outcome(KeyboardInterrupt, 130, lambda err: "interrupted"),
)
"""First match wins (``isinstance``), so a subclass is listed before its base class."""

HANDLED: tuple[type[BaseException], ...] = tuple(outcome.kind for outcome in OUTCOMES)
"""The error kinds the CLI reports as a message; any other exception is a bug (traceback)."""


def report(err: BaseException, hints: Mapping[type[BaseException], str] | None = None) -> int:
    """Print ``err`` as one line on stderr and return its exit code.

    ``hints`` (from the command, e.g. ``record``'s "the run is kept ...") add a sentence in
    parentheses after the message of an error kind.

    Raises:
        BaseException: ``err`` itself when its kind is not in :data:`OUTCOMES`.
    """
    for outcome in OUTCOMES:
        if isinstance(err, outcome.kind):
            if outcome.message is not None:
                hint = next((text for kind, text in (hints or {}).items() if isinstance(err, kind)), "")
                line = outcome.message(err) + (f" ({hint})" if hint else "")
                print(f"alertforge: {line}", file=sys.stderr)
            return outcome.code
    raise err
