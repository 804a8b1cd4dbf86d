"""The one way to read untrusted trees: workspaces, run folders, job folders, transcripts, sites.

Everything a run, a Harbor job, a transcript, a workspace or a site folder holds was written
by an agent or by someone else (DESIGN.md, "Trust boundary"). Reading goes through
:class:`Tree` (a folder the user named, read only below it) or :func:`read_file` (one file the
user named):

- regular files only: a symbolic link anywhere below the root, a FIFO, a device or a socket
  is refused, never opened (a FIFO would block, ``/dev/zero`` never ends); so is a hard link
  (a file with several names may be one from outside the tree);
- every component is opened relative to its parent with ``O_NOFOLLOW`` (``openat``), so a
  link swapped in while reading is refused too; the file is opened ``O_NONBLOCK`` and must
  still be the regular file that was checked;
- confined: a relative POSIX path with no ``..``, no absolute part, no NUL;
- size-capped: a file over its cap is refused, and never more than cap + 1 bytes are read.

Problems raise :class:`UnsafeInput` (a :class:`~contract.errors.BadInput`: the CLI prints
the path and the problem and exits 2); callers that grade a workspace turn it into a syntax
error naming the file instead.
"""

from __future__ import annotations

import errno
import os
import stat
from collections.abc import Iterator
from pathlib import Path, PurePosixPath
from typing import Any

import orjson

from contract.errors import BadInput

DEFAULT_CAP = 64 * 1024 * 1024
"""Bytes read from one file at most unless the caller says otherwise (64 MiB)."""
MAX_ENTRIES = 200_000
"""Entries a walk visits at most: a tree with more is refused (a monitoring repo has dozens)."""
MAX_DEPTH = 64
"""Folder depth a walk descends at most."""

_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_FILE_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC | os.O_NOCTTY
_KINDS = (
    (stat.S_ISLNK, "symlink"),
    (stat.S_ISDIR, "dir"),
    (stat.S_ISREG, "file"),
    (stat.S_ISFIFO, "fifo"),
    (stat.S_ISCHR, "device"),
    (stat.S_ISBLK, "device"),
    (stat.S_ISSOCK, "socket"),
)
REFUSED = {
    "symlink": "is a symbolic link (links are never followed out of an untrusted tree)",
    "fifo": "is a FIFO, not a regular file",
    "device": "is a device, not a regular file",
    "socket": "is a socket, not a regular file",
    "dir": "is a directory, expected a file",
    "missing": "file not found",
}
"""Why an entry of each kind cannot be read as a file."""


class UnsafeInput(BadInput):
    """A path in an untrusted tree that cannot be read: a link, a FIFO or device, outside the
    tree, over its size cap, or missing. ``path`` names it; ``problem`` says which."""


def _kind(mode: int) -> str:
    for test, name in _KINDS:
        if test(mode):
            return name
    return "other"


def over_cap(size: int, cap: int) -> str:
    """The message for a file of ``size`` bytes over a ``cap``-byte limit."""
    return f"file is {size} bytes, over the {cap}-byte limit"


def split_relative(rel: str | PurePosixPath) -> tuple[str, ...]:
    """The components of a confined relative path (``""`` is the root itself: ``()``).

    Raises:
        ValueError: an absolute path, a ``..`` component, a NUL, or a backslash-free path that
            is not a string (the message says which).
    """
    text = str(rel)
    if "\0" in text:
        raise ValueError("path holds a NUL character")
    if text.startswith("/"):
        raise ValueError(f"absolute path {text!r} (only paths inside the tree are read)")
    parts = tuple(part for part in text.split("/") if part not in ("", "."))
    if ".." in parts:
        raise ValueError(f"path {text!r} leaves the tree ('..')")
    return parts


def _read_fd(fd: int, cap: int, shown: str) -> bytes:
    chunks, total = [], 0
    while total <= cap:
        try:
            chunk = os.read(fd, min(1 << 20, cap + 1 - total))
        except BlockingIOError:
            raise UnsafeInput(shown, "would block (not a regular file)") from None
        if not chunk:
            break
        chunks.append(chunk)
        total += len(chunk)
    if total > cap:
        raise UnsafeInput(shown, over_cap(total, cap) + " (it grew while being read)")
    return b"".join(chunks)


def _open_checked(name: str, dir_fd: int | None, cap: int, shown: str, *,
                  allow_hard_links: bool = False) -> bytes:
    """Read ``name`` (relative to ``dir_fd``) if it is a regular file of at most ``cap`` bytes."""
    try:
        before = os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
    except FileNotFoundError:
        raise UnsafeInput(shown, REFUSED["missing"]) from None
    except NotADirectoryError:
        raise UnsafeInput(shown, "a parent is not a directory") from None
    except OSError as err:
        raise UnsafeInput(shown, f"cannot read: {err.strerror}") from None
    kind = _kind(before.st_mode)
    if kind != "file":
        raise UnsafeInput(shown, REFUSED.get(kind, "is not a regular file"))
    if before.st_nlink > 1 and dir_fd is not None and not allow_hard_links:
        raise UnsafeInput(shown, f"is a hard link (one of {before.st_nlink} names of one file): it "
                          "may be a file from outside the tree")
    if before.st_size > cap:
        raise UnsafeInput(shown, over_cap(before.st_size, cap))
    try:
        fd = os.open(name, _FILE_FLAGS, dir_fd=dir_fd)
    except OSError as err:
        if err.errno == errno.ELOOP:
            raise UnsafeInput(shown, REFUSED["symlink"]) from None
        raise UnsafeInput(shown, f"cannot read: {err.strerror}") from None
    try:
        now = os.fstat(fd)
        if not stat.S_ISREG(now.st_mode) or (now.st_dev, now.st_ino) != (before.st_dev, before.st_ino):
            raise UnsafeInput(shown, "changed while being opened")
        return _read_fd(fd, cap, shown)
    finally:
        os.close(fd)


def read_file(path: str | os.PathLike, *, cap: int = DEFAULT_CAP) -> bytes:
    """The bytes of one file the user named (a transcript, a patterns file, a run.json).

    The folders on the way are the user's (links there are followed); the file itself must be
    a regular file, not a link, FIFO or device, and at most ``cap`` bytes.

    Raises:
        UnsafeInput: naming ``path`` and the problem.
    """
    path = Path(path)
    parent = os.fspath(path.parent) or "."
    try:
        dir_fd = os.open(parent, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    except FileNotFoundError:
        raise UnsafeInput(path, REFUSED["missing"]) from None
    except OSError as err:
        raise UnsafeInput(path, f"cannot read: {err.strerror}") from None
    try:
        return _open_checked(path.name, dir_fd, cap, str(path), allow_hard_links=True)
    finally:
        os.close(dir_fd)


def read_json_file(path: str | os.PathLike, *, cap: int = DEFAULT_CAP) -> Any:
    """:func:`read_file` parsed as JSON (UnsafeInput naming the file when it is not JSON)."""
    data = read_file(path, cap=cap)
    try:
        return checked_depth(orjson.loads(data), path)
    except orjson.JSONDecodeError as err:
        raise UnsafeInput(path, f"not valid JSON: {err}") from None


class Tree:
    """A folder the user named, read only below it and never through a link.

    ``root`` itself may be reached through links (the user chose it); every path given to the
    methods is relative to it (POSIX separators) and every component below the root is opened
    with ``O_NOFOLLOW``. Methods that read raise :class:`UnsafeInput` naming ``root/rel``.
    """

    def __init__(self, root: str | os.PathLike):
        self.root = Path(root)

    def __repr__(self) -> str:
        return f"Tree({str(self.root)!r})"

    def shown(self, rel: str | PurePosixPath = "") -> str:
        """The path a message names: ``root/rel``."""
        text = str(rel)
        return str(self.root / text) if text else str(self.root)

    def _parts(self, rel: str | PurePosixPath) -> tuple[str, ...]:
        try:
            return split_relative(rel)
        except ValueError as err:
            raise UnsafeInput(self.shown(rel), str(err)) from None

    def _open_root(self) -> int:
        try:
            return os.open(self.root, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
        except FileNotFoundError:
            raise UnsafeInput(self.root, "folder not found") from None
        except NotADirectoryError:
            raise UnsafeInput(self.root, "is not a folder") from None
        except OSError as err:
            raise UnsafeInput(self.root, f"cannot read: {err.strerror}") from None

    def _open_dirs(self, parts: tuple[str, ...], rel: str) -> int:
        """A descriptor of the folder ``parts`` below the root, no link followed."""
        fd = self._open_root()
        for index, part in enumerate(parts):
            try:
                next_fd = os.open(part, _DIR_FLAGS, dir_fd=fd)
            except OSError as err:
                where = self.shown("/".join(parts[: index + 1]))
                if err.errno in (errno.ELOOP, errno.ENOTDIR):
                    try:  # O_DIRECTORY | O_NOFOLLOW on a link fails with either
                        mode = os.stat(part, dir_fd=fd, follow_symlinks=False).st_mode
                    except OSError:
                        mode = 0
                    kind = _kind(mode)
                    os.close(fd)
                    raise UnsafeInput(where, REFUSED["symlink"] if kind == "symlink"
                                      else "is not a directory") from None
                os.close(fd)
                if err.errno == errno.ENOENT:
                    raise UnsafeInput(self.shown(rel), REFUSED["missing"]) from None
                raise UnsafeInput(where, f"cannot read: {err.strerror}") from None
            os.close(fd)
            fd = next_fd
        return fd

    def kind(self, rel: str | PurePosixPath) -> str:
        """What ``rel`` is, without following links: ``file``, ``dir``, ``symlink``, ``fifo``,
        ``device``, ``socket``, ``missing`` (also when a parent is a link: then ``symlink``)."""
        parts = self._parts(rel)
        if not parts:
            return "dir" if self.root.is_dir() else "missing"
        try:
            fd = self._open_dirs(parts[:-1], str(rel))
        except UnsafeInput as err:
            return "symlink" if err.problem == REFUSED["symlink"] else "missing"
        try:
            return _kind(os.stat(parts[-1], dir_fd=fd, follow_symlinks=False).st_mode)
        except OSError:
            return "missing"
        finally:
            os.close(fd)

    def is_file(self, rel: str | PurePosixPath) -> bool:
        """True for a regular file reached without a link."""
        return self.kind(rel) == "file"

    def is_dir(self, rel: str | PurePosixPath) -> bool:
        """True for a folder reached without a link."""
        return self.kind(rel) == "dir"

    def read_bytes(self, rel: str | PurePosixPath, *, cap: int = DEFAULT_CAP) -> bytes:
        """The bytes of the regular file ``rel`` (at most ``cap``; UnsafeInput otherwise)."""
        parts = self._parts(rel)
        if not parts:
            raise UnsafeInput(self.shown(), REFUSED["dir"])
        fd = self._open_dirs(parts[:-1], str(rel))
        try:
            return _open_checked(parts[-1], fd, cap, self.shown("/".join(parts)))
        finally:
            os.close(fd)

    def read_text(self, rel: str | PurePosixPath, *, cap: int = DEFAULT_CAP,
                  errors: str = "strict") -> str:
        """``rel`` decoded as UTF-8 (``errors="replace"`` keeps going past bad bytes).

        Raises:
            UnsafeInput: as :meth:`read_bytes`, or not UTF-8 (with ``errors="strict"``).
        """
        data = self.read_bytes(rel, cap=cap)
        try:
            return data.decode("utf-8", errors=errors)
        except UnicodeDecodeError as err:
            raise UnsafeInput(self.shown(rel), f"not valid UTF-8 (byte {err.start})") from None

    def read_json(self, rel: str | PurePosixPath, *, cap: int = DEFAULT_CAP) -> Any:
        """``rel`` parsed as JSON (UnsafeInput naming it when it is not)."""
        data = self.read_bytes(rel, cap=cap)
        try:
            return checked_depth(orjson.loads(data), self.shown(rel))
        except orjson.JSONDecodeError as err:
            raise UnsafeInput(self.shown(rel), f"not valid JSON: {err}") from None

    def entries(self, rel: str | PurePosixPath = "") -> list[tuple[str, str]]:
        """``[(name, kind)]`` of the folder ``rel``, sorted by name, nothing followed."""
        parts = self._parts(rel)
        fd = self._open_dirs(parts, str(rel))
        try:
            with os.scandir(fd) as listing:
                found = []
                for entry in listing:
                    try:
                        mode = entry.stat(follow_symlinks=False).st_mode
                    except OSError:
                        continue
                    found.append((entry.name, _kind(mode)))
        finally:
            os.close(fd)
        return sorted(found)

    def walk(self, rel: str | PurePosixPath = "", *, max_entries: int = MAX_ENTRIES
             ) -> Iterator[tuple[str, str]]:
        """Every entry below ``rel`` as ``(path relative to the root, kind)``, in path order.

        Folders are descended (never through a link); links, FIFOs and devices are listed with
        their kind and not opened. Raises UnsafeInput past ``max_entries`` entries or
        :data:`MAX_DEPTH` levels.
        """
        base = "/".join(self._parts(rel))
        seen = 0

        def visit(prefix: str, depth: int) -> Iterator[tuple[str, str]]:
            nonlocal seen
            if depth > MAX_DEPTH:
                raise UnsafeInput(self.shown(prefix), f"folders nested over {MAX_DEPTH} deep")
            for name, kind in self.entries(prefix):
                seen += 1
                if seen > max_entries:
                    raise UnsafeInput(self.shown(base), f"holds over {max_entries} entries")
                path = f"{prefix}/{name}" if prefix else name
                yield path, kind
                if kind == "dir":
                    yield from visit(path, depth + 1)

        yield from visit(base, 0)

    def files(self, rel: str | PurePosixPath = "") -> list[str]:
        """The regular files below ``rel`` (paths relative to the root), in path order; links,
        FIFOs and devices are left out (see :meth:`walk` to list them)."""
        return [path for path, kind in self.walk(rel) if kind == "file"]

    def copy_into(self, dest: Path, rel: str | PurePosixPath = "", *, cap: int = DEFAULT_CAP,
                  skip: frozenset[str] = frozenset()) -> list[tuple[str, str]]:
        """Copy every regular file below ``rel`` to ``dest`` (same relative paths): a private
        copy that holds no link, FIFO or device. Returns ``[(path, why it was not copied)]``
        for the entries left out (links, FIFOs, devices, files over ``cap``); paths in
        ``skip`` are left out silently."""
        refused = []
        for path, kind in self.walk(rel):
            if path in skip or kind == "dir":
                continue
            if kind != "file":
                refused.append((path, REFUSED.get(kind, "is not a regular file")))
                continue
            try:
                data = self.read_bytes(path, cap=cap)
            except UnsafeInput as err:
                refused.append((path, err.problem))
                continue
            target = dest / path
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(data)
        return refused


MAX_JSON_DEPTH = 128
"""Nesting a JSON value from an untrusted source may have (a run's arguments are a few deep;
hundreds of levels only exhaust recursion in the code that walks them)."""
INT64 = (-(2**63), 2**63 - 1)


def json_depth(value: Any) -> int:
    """How deep ``value`` nests (a scalar: 0), counted without recursion."""
    deepest, stack = 0, [(value, 0)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict):
            stack.extend((child, depth + 1) for child in item.values())
        elif isinstance(item, list):
            stack.extend((child, depth + 1) for child in item)
        else:
            deepest = max(deepest, depth)
            continue
        deepest = max(deepest, depth + 1)
        if deepest > MAX_JSON_DEPTH:
            return deepest
    return deepest


def checked_depth(value: Any, source: object) -> Any:
    """``value`` when it nests at most :data:`MAX_JSON_DEPTH` levels.

    Raises:
        UnsafeInput: naming ``source``.
    """
    if json_depth(value) > MAX_JSON_DEPTH:
        raise UnsafeInput(source, f"nests deeper than {MAX_JSON_DEPTH} levels")
    return value


def json_safe(value: Any, source: object) -> Any:
    """A JSON value another program sent (an environment's answer, a model's reply) made safe
    to store: a lone surrogate in a string becomes U+FFFD, an integer beyond 64 bits its
    decimal text (orjson and the run files hold neither).

    Raises:
        UnsafeInput: the value nests deeper than :data:`MAX_JSON_DEPTH` levels (names ``source``).
    """
    checked_depth(value, source)

    def clean(item: Any) -> Any:
        if isinstance(item, str):
            try:
                item.encode("utf-8")
                return item
            except UnicodeEncodeError:
                return item.encode("utf-8", errors="surrogatepass").decode("utf-8", errors="replace")
        if isinstance(item, bool) or item is None or isinstance(item, float):
            return item
        if isinstance(item, int):
            return item if INT64[0] <= item <= INT64[1] else str(item)
        if isinstance(item, dict):
            return {clean(k) if isinstance(k, str) else str(k): clean(v) for k, v in item.items()}
        if isinstance(item, (list, tuple)):
            return [clean(child) for child in item]
        return item

    return clean(value)
