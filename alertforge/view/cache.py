"""Where ``alertforge view`` keeps what it imports and exports: a folder per set of inputs under
``$ALERTFORGE_VIEW_CACHE`` (default ``$XDG_CACHE_HOME/alertforge/view``, else
``~/.cache/alertforge/view``), never inside the inputs. At most :data:`MAX_VIEWS` folders
are kept: opening another removes the least recently used ones (only folders the cache
made, never a folder holding an input).
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import time
from pathlib import Path

MAX_VIEWS = 8
"""Cache folders kept (each holds one set of inputs' imports and site)."""
USED = ".last-used"


def cache_root() -> Path:
    """The folder that holds every view's cache folder (see the module)."""
    if os.environ.get("ALERTFORGE_VIEW_CACHE"):
        return Path(os.environ["ALERTFORGE_VIEW_CACHE"])
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "alertforge" / "view"


def view_cache(inputs: list[Path], root: Path | None = None, keep: int = MAX_VIEWS) -> Path:
    """The cache folder for ``inputs`` (named by the sha256 of their resolved paths, sorted),
    created and marked used now; the least recently used others beyond ``keep`` are removed."""
    root = Path(root) if root is not None else cache_root()
    digest = hashlib.sha256("\n".join(sorted(str(Path(p).resolve()) for p in inputs)).encode(
        "utf-8", "surrogateescape")).hexdigest()
    folder = root / digest[:16]
    folder.mkdir(parents=True, exist_ok=True)
    (folder / USED).write_text(str(time.time()))
    inputs_here = [Path(p).resolve() for p in inputs]
    # only folders this cache made (a 16-hex name holding its mark), never one an input is in
    others = [p for p in root.iterdir() if p.is_dir() and not p.is_symlink() and p != folder
              and re.fullmatch(r"[0-9a-f]{16}", p.name) and (p / USED).is_file()
              and not any(p.resolve() == i or p.resolve() in i.parents for i in inputs_here)]
    others.sort(key=lambda p: (p / USED).stat().st_mtime if (p / USED).is_file() else 0.0, reverse=True)
    for stale in others[keep - 1:]:
        shutil.rmtree(stale, ignore_errors=True)
    return folder
