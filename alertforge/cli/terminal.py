"""Terminal output of every command goes through one escaping function
(:func:`contract.text.terminal_text`): a name, a path or an error text a run, a trial or a
transcript wrote reaches the terminal as visible escapes, never as control sequences.

Progress bars (tqdm) write to :func:`progress_stream`, the unescaped stream: their text is
the program's own (a fixed description and counts) and their carriage returns are meant.
"""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Iterator
from typing import Any, TextIO

from contract.text import terminal_text


class EscapedStream:
    """A text stream that writes :func:`terminal_text` of what it is given to ``raw`` (every
    other attribute is ``raw``'s)."""

    def __init__(self, raw: TextIO):
        self.raw = raw

    def write(self, text: str) -> int:
        """Write ``text`` escaped; returns ``len(text)`` as a text stream does."""
        self.raw.write(terminal_text(text))
        return len(text)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.raw, name)


@contextlib.contextmanager
def escaped_output() -> Iterator[None]:
    """``sys.stdout`` and ``sys.stderr`` escaped while the block runs, restored after."""
    saved = sys.stdout, sys.stderr
    sys.stdout, sys.stderr = EscapedStream(saved[0]), EscapedStream(saved[1])
    try:
        yield
    finally:
        sys.stdout, sys.stderr = saved


def progress_stream() -> TextIO:
    """The stream progress bars write to: stderr without the escaping layer."""
    return getattr(sys.stderr, "raw", sys.stderr)
