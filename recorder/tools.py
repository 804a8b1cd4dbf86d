"""The agent's tools on a workspace: list_files, read_file, write_file, submit.

Paths are relative to the workspace root; anything that would leave it (``..``, an
absolute path, a symlink) or write more than :data:`MAX_WRITE_BYTES` is refused with a tool
error the run records, never an exception.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

MAX_WRITE_BYTES = 256 * 1024
MAX_READ_BYTES = 512 * 1024
TOOL_NAMES = ("list_files", "read_file", "write_file", "submit")


@dataclass
class ToolResult:
    """What a tool call gave back: the observation text, the file it changed, whether it failed."""

    output: str
    changed: str | None = None
    error: bool = False
    done: bool = False


def _inside(root: Path, rel: str) -> Path | str:
    """The resolved path of ``rel`` under ``root``, or a message saying why it is refused."""
    if not isinstance(rel, str) or not rel.strip():
        return "path must be a non-empty string"
    candidate = Path(rel)
    if candidate.is_absolute():
        return f"absolute paths are not allowed: {rel}"
    if ".." in candidate.parts:
        return f"paths may not contain '..': {rel}"
    current = root
    for part in candidate.parts:
        current = current / part
        if current.is_symlink():
            return f"symlinks are not followed: {rel}"
    return root / candidate


def run_tool(root: Path, name: str, arguments: dict) -> ToolResult:
    """Execute one tool call on the workspace at ``root``.

    ``list_files {}`` lists every file; ``read_file {path}`` returns its text;
    ``write_file {path, content}`` creates or replaces a file (parents created);
    ``submit {}`` ends the run.
    """
    if name == "list_files":
        files = sorted(p.relative_to(root).as_posix() for p in root.rglob("*") if p.is_file())
        return ToolResult("\n".join(files))
    if name == "submit":
        return ToolResult("submitted", done=True)
    if name not in ("read_file", "write_file"):
        return ToolResult(f"error: unknown tool {name!r}", error=True)
    target = _inside(root, arguments.get("path"))
    if isinstance(target, str):
        return ToolResult(f"error: {target}", error=True)
    rel = target.relative_to(root).as_posix()
    if name == "read_file":
        if not target.is_file():
            return ToolResult(f"error: no such file: {rel}", error=True)
        data = target.read_bytes()[:MAX_READ_BYTES]
        return ToolResult(data.decode("utf-8", errors="replace"))
    content = arguments.get("content")
    if not isinstance(content, str):
        return ToolResult("error: content must be a string", error=True)
    size = len(content.encode("utf-8"))
    if size > MAX_WRITE_BYTES:
        return ToolResult(f"error: {size} bytes is over the {MAX_WRITE_BYTES}-byte limit", error=True)
    if target.is_dir():
        return ToolResult(f"error: {rel} is a directory", error=True)
    before = target.read_bytes() if target.is_file() else None
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(content, encoding="utf-8")
    changed = rel if before != content.encode("utf-8") else None
    return ToolResult(f"wrote {size} bytes to {rel}", changed=changed)
