"""What one replayed tool call did to files, and the two ways a replay stops short."""

from __future__ import annotations

from dataclasses import dataclass, field


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


class UnknownContent(Exception):
    """Content that cannot be computed (raised inside the shell evaluator and the editor
    tools; the call is then lossy, with this message)."""


class ToolRefused(Exception):
    """The tool itself would have refused the call (so nothing changed; noted, not lossy)."""
