"""The benchmark's workspace tools as the FastMCP tools one OpenEnv environment serves on /mcp.

Each tool is one action of the episode, exactly as a ``step`` with ``{"tool": name, ...}``
would be (it counts as a step, is graded when it changes a file, and pays its reward into the
episode's total); it returns the observation as a dict (``output``, ``tool_error``, ``step``,
``done``, ``reward``, and on the train split ``level`` and ``grade``). The tools and their
arguments are those of :func:`recorder.environments.workspace.run_tool`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from fastmcp import FastMCP

Act = Callable[[str, dict], dict]
"""``act(tool name, arguments) -> observation dict``: one action of the environment."""


def tool_server(act: Act) -> FastMCP:
    """A FastMCP server whose seven tools call ``act``; names and arguments as the workspace
    tools (recorder/environments/workspace.py)."""
    mcp = FastMCP("alertforge")

    @mcp.tool
    def list_files() -> dict[str, Any]:
        """Every file of the monitoring repo, one path a line."""
        return act("list_files", {})

    @mcp.tool
    def read_file(path: str) -> dict[str, Any]:
        """The text of one file (path relative to the repo root)."""
        return act("read_file", {"path": path})

    @mcp.tool
    def write_file(path: str, content: str) -> dict[str, Any]:
        """Create or replace a file with ``content`` (parent folders are created)."""
        return act("write_file", {"path": path, "content": content})

    @mcp.tool
    def replace_in_file(path: str, old: str, new: str, all: bool = False) -> dict[str, Any]:
        """Replace ``old`` by ``new`` in a file (``old`` must occur once unless ``all``)."""
        return act("replace_in_file", {"path": path, "old": old, "new": new, "all": all})

    @mcp.tool
    def run_checks() -> dict[str, Any]:
        """promtool check rules, amtool check-config and the repo's example tests."""
        return act("run_checks", {})

    @mcp.tool
    def route_test(labels: dict[str, str]) -> dict[str, Any]:
        """The receivers amtool resolves for an alert with these labels."""
        return act("route_test", {"labels": labels})

    @mcp.tool
    def submit() -> dict[str, Any]:
        """End the episode; its reward is the grade of the repo as it is now."""
        return act("submit", {})

    return mcp
