"""A file a script writes from committed sources: written, or with ``--check`` compared.

Shared by scripts/site_types.py and scripts/episode_markup.py, whose outputs are committed so that
the viewer keeps no build step; CI (or a test) runs each with ``--check``.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path


def write_or_check(out: Path, text: str, root: Path, remake: str, argv: list[str] | None = None,
                   description: str = "") -> int:
    """Write ``text`` to ``out`` (printing its path under ``root``), or with ``--check`` in
    ``argv`` write nothing and return 1 when ``out`` does not hold ``text`` exactly, saying to
    run ``remake``. Returns the exit code."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--check", action="store_true", help="exit 1 when the file is out of date, write nothing")
    args = parser.parse_args(argv)
    if args.check:
        if not out.is_file() or out.read_text(encoding="utf-8") != text:
            print(f"{out.relative_to(root)} is out of date: run {remake}", file=sys.stderr)
            return 1
        return 0
    out.write_text(text, encoding="utf-8")
    print(f"wrote {out.relative_to(root)} ({len(text):,} bytes)")
    return 0
