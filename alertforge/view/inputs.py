"""What ``alertforge view`` was pointed at: each PATH classified once, and the key that says
whether what it holds changed since it was last read.

Kinds: ``site`` (an exported site: served as it is), ``runs`` (a run folder, or a folder
whose sub-folders are run folders: exported in place, never written), ``episodes`` (an ARIA
transcript file, or a folder of them) and ``harbor`` (anything else the Harbor importer takes: a job folder, a
trial folder, a folder of jobs, an ATIF trajectory file). A key is the sorted
``(relative path, size, mtime_ns, inode)`` of every regular file under the path, found
without following a link (:func:`exporter.export_state.key_of`, the key an incremental export
uses too); a run is read again only when its key changes.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from contract.errors import BadInput


@dataclass(frozen=True)
class Input:
    """One PATH of ``alertforge view``: ``kind`` (see the module) and the path as given."""

    kind: str
    path: Path


def _is_site(path: Path) -> bool:
    return (path / "site-manifest.json").is_file() or (path / "data" / "index.json").is_file()


def _peek(path: Path) -> bytes:
    try:
        with open(path, "rb") as handle:
            return handle.read(4096)
    except OSError as err:
        raise BadInput(path, f"cannot read: {err.strerror}") from None


def classify(raw: str | Path) -> Input:
    """The :class:`Input` for one PATH.

    Raises:
        BadInput: the path does not exist, is a link, is a folder that cannot be listed, or is
            a file that is neither an ATIF trajectory nor an ARIA transcript (JSON).
    """
    path = Path(raw)
    if path.is_symlink():
        raise BadInput(path, "is a link: name the folder or file it points to")
    if path.is_dir():
        try:
            return _classify_folder(path)
        except OSError as err:
            raise BadInput(path, f"cannot be read: {err.strerror or err}") from None
    if not path.is_file():
        raise BadInput(path, "not found")
    head = _peek(path)
    if path.suffix != ".json" or not head.lstrip().startswith(b"{"):
        raise BadInput(path, "not a folder of runs, a Harbor job or trial, an ATIF trajectory (.json) "
                             "or an ARIA transcript (.json)")
    return Input("harbor" if _is_atif(head) else "episodes", path)


def _classify_folder(path: Path) -> Input:
    """A folder's :class:`Input` (see :func:`classify`). Raises OSError when it cannot be listed."""
    if _is_site(path):
        return Input("site", path)
    if (path / "run.json").is_file() or any(
            (child / "run.json").is_file() for child in _subfolders(path)) or not any(path.iterdir()):
        return Input("runs", path)  # an empty folder too: runs recorded into it later appear
    jsons = sorted(p for p in path.iterdir() if p.suffix == ".json" and p.is_file())
    if jsons and not _subfolders(path) and not _is_atif(_peek(jsons[0])):
        return Input("episodes", path)  # a folder of ARIA transcripts
    return Input("harbor", path)


def _is_atif(head: bytes) -> bool:
    return b'"schema_version"' in head and b"ATIF" in head


def _subfolders(path: Path) -> list[Path]:
    try:
        return sorted(p for p in path.iterdir() if p.is_dir() and not p.is_symlink())
    except OSError:
        return []


def run_folders(item: Input) -> list[Path]:
    """The run folders of a ``runs`` input (itself, or its sub-folders holding run.json)."""
    if (item.path / "run.json").is_file():
        return [item.path]
    return [p for p in _subfolders(item.path) if (p / "run.json").is_file() and not (p / "run.json").is_symlink()]
