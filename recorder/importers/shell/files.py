"""What is known about the agent's files: their text (None: unknown), path keys, history."""

from __future__ import annotations

import fnmatch
import posixpath

from recorder.importers.shell.effect import CallEffect, FileEdit, UnknownContent

REPO_DIR_NAME = "monitoring"
DEFAULT_CWD = "/app"
HOME = "/root"


class KnownFiles:
    """Every file a replay knows of, keyed as :meth:`key` says, and the shell's directory.

    ``files`` maps keys to text (None: the file exists but its content is unknown; a key
    missing: never seen, or deleted); ``repo_known`` says whether a repo file missing from
    it is known not to exist; ``cwd`` is the shell's working directory (absolute);
    ``history`` keeps every key's earlier contents, oldest first (for ``undo_edit``).
    """

    def __init__(self, repo_files: dict[str, str] | None = None, *, repo_known: bool = False,
                 cwd: str = DEFAULT_CWD):
        self.files: dict[str, str | None] = dict(repo_files or {})
        self.repo_known = repo_known
        self.cwd = cwd
        self.history: dict[str, list[str | None]] = {}

    def key(self, path: str) -> str:
        """The key of a path as the agent wrote it: the path inside the repo when it has a
        ``monitoring`` component (``.`` for the repo itself), else the absolute path
        (resolved against :attr:`cwd`, ``~`` as ``/root``)."""
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
        """A file's text.

        Raises:
            UnknownContent: the file does not exist or its content is not known.
        """
        if key in self.files and self.files[key] is not None:
            return self.files[key]
        if key not in self.files and self.repo_known and not key.startswith("/"):
            raise UnknownContent(f"{key} does not exist")
        raise UnknownContent(f"content of {key} is unknown")

    def exists(self, key: str) -> bool | None:
        """True when the file is known to exist, False when known not to, None when unknown."""
        if key in self.files:
            return True
        if self.repo_known and not key.startswith("/"):
            return False
        return None

    def set(self, effect: CallEffect, key: str, content: str | None) -> None:
        """Give ``key`` new content (None deletes it) and record the edit in ``effect``
        (a later edit of the same key in one call replaces the earlier one)."""
        self.history.setdefault(key, []).append(self.files.get(key))
        if content is None:
            self.files.pop(key, None)
        else:
            self.files[key] = content
        effect.edits = [e for e in effect.edits if e.path != key] + [FileEdit(key, content)]

    def unknown_write(self, effect: CallEffect, key: str, why: str) -> None:
        """``key`` was written with content that cannot be known: lossy when it matters for
        grading (:meth:`relevant`), else a note."""
        self.files[key] = None
        message = f"{why}: content of {key} unknown"
        (effect.lossy if self.relevant(key) else effect.notes).append(message)

    def matching(self, pattern_key: str) -> list[str]:
        """Known files matching a glob key, sorted (the key itself when it has no wildcard)."""
        if not any(ch in pattern_key for ch in "*?["):
            return [pattern_key]
        return sorted(k for k in self.files if fnmatch.fnmatch(k, pattern_key))
