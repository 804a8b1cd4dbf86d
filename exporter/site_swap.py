"""Write a whole site beside its target folder and swap it in: a site export is all or nothing.

The new site is built in a staging folder next to the target (same file system), with the
target's own Space files copied over and a manifest of every file written last; then the two
folders are exchanged atomically (``renameat2(RENAME_EXCHANGE)``, Linux 3.15+) and the old
site removed. A crash or kill -9 at any point leaves the previous site or the new one, never
a mix; leftovers (``.<name>.staging-*``) are cleaned up by the next export. Where the exchange
is not available, the target is renamed aside first (``.<name>.previous-*``) and put back by
the next export if the crash fell between the two renames.

Only files a previous export listed in its manifest (:data:`MANIFEST`) and the Space's own
files (:data:`SPACE_FILES`) may be in the target; anything else is refused with the names,
never deleted.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import hashlib
import os
import shutil
import uuid
from pathlib import Path

from contract.errors import BadInput
from contract.files import dump_json
from contract.untrusted import Tree, UnsafeInput

MANIFEST = "site-manifest.json"
"""The manifest an export writes at the site's root: ``{version, generated_by, files{path:
sha256}}``; the next export may replace exactly these files."""
SPACE_FILES = ("README.md", ".gitattributes", "listing.json")
"""A Hugging Face Space's own files (front matter, LFS rules, the publish listing): kept."""
LEGACY_OWNED = ("data", "static", "gallery", "index.html", "run.html", "compare.html")
"""What a site exported before manifests held (recognized by its data/index.json)."""
RENAME_EXCHANGE = 2
_AT_FDCWD = -100


def _renameat2():
    libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
    function = getattr(libc, "renameat2", None)
    if function is None:
        return None
    function.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p, ctypes.c_uint]
    return function


def exchange(a: Path, b: Path) -> bool:
    """Atomically swap the folders ``a`` and ``b``; False when the system cannot."""
    function = _renameat2()
    if function is None:
        return False
    result = function(_AT_FDCWD, os.fsencode(a), _AT_FDCWD, os.fsencode(b), RENAME_EXCHANGE)
    return result == 0


def read_manifest(out_dir: Path) -> dict | None:
    """The manifest of the site in ``out_dir`` (None when there is none)."""
    tree = Tree(out_dir)
    if not tree.is_file(MANIFEST):
        return None
    try:
        manifest = tree.read_json(MANIFEST, cap=64 * 1024 * 1024)
    except UnsafeInput:
        return None
    if not isinstance(manifest, dict) or not isinstance(manifest.get("files"), dict):
        return None
    return manifest


def _is_legacy_site(out_dir: Path) -> bool:
    tree = Tree(out_dir)
    try:
        index = tree.read_json("data/index.json", cap=64 * 1024 * 1024)
    except UnsafeInput:
        return False
    return isinstance(index, dict) and str(index.get("generated_by", "")).startswith("alertforge ")


def foreign_files(out_dir: Path) -> list[str]:
    """Paths in ``out_dir`` that no previous export wrote and that are not Space files.

    A site exported before manifests (its data/index.json says alertforge wrote it) owns
    everything under :data:`LEGACY_OWNED`.
    """
    if not out_dir.exists():
        return []
    tree = Tree(out_dir)
    manifest = read_manifest(out_dir)
    listed = set((manifest or {}).get("files", {})) | {MANIFEST, *SPACE_FILES}
    legacy = manifest is None and _is_legacy_site(out_dir)
    found = []
    for rel, kind in tree.walk():
        if kind == "dir":
            continue
        if kind != "file":  # a link or FIFO, even named like a Space file: never replaced
            found.append(f"{rel} ({kind})")
        elif rel in listed or (legacy and rel.split("/")[0] in LEGACY_OWNED):
            continue
        else:
            found.append(rel)
    return found


def recover(out_dir: Path) -> None:
    """Clean up after an export that was killed: remove staging folders, and put a previous
    site renamed aside back when the target is missing."""
    parent, name = out_dir.parent, out_dir.name
    if not parent.is_dir():
        return
    for entry in sorted(parent.iterdir()):
        if entry.is_symlink() or not entry.is_dir():
            continue
        if entry.name.startswith(f".{name}.staging-"):
            shutil.rmtree(entry, ignore_errors=True)
        elif entry.name.startswith(f".{name}.previous-"):
            if not out_dir.exists():
                os.rename(entry, out_dir)
            else:
                shutil.rmtree(entry, ignore_errors=True)


def write_site(out_dir: Path, files: dict[str, bytes], generated_by: str) -> None:
    """Write ``files`` (``{relative path: bytes}``) as the whole site in ``out_dir``.

    Raises:
        BadInput: ``out_dir`` holds files no previous export wrote (named), or a path in
            ``files`` would leave the site.
    """
    out_dir = Path(os.path.realpath(out_dir))  # --out may be a link the user made: write behind it
    recover(out_dir)
    foreign = foreign_files(out_dir)
    if foreign:
        shown = ", ".join(foreign[:8]) + (f" and {len(foreign) - 8} more" if len(foreign) > 8 else "")
        raise BadInput(out_dir, f"holds files no previous export wrote: {shown}; they are never "
                       "deleted: move them away or export into a new folder")
    staging = out_dir.parent / f".{out_dir.name}.staging-{os.getpid()}-{uuid.uuid4().hex[:8]}"
    staging.mkdir(parents=True)
    try:
        for relative, data in sorted(files.items()):
            if relative.startswith("/") or ".." in relative.split("/") or relative in (MANIFEST, *SPACE_FILES):
                raise BadInput(relative, "a site file must be a relative path inside the site")
            target = staging / relative
            target.parent.mkdir(parents=True, exist_ok=True)
            with open(target, "wb") as handle:
                handle.write(data)
        if out_dir.exists():
            tree = Tree(out_dir)
            for name in SPACE_FILES:
                if tree.is_file(name):
                    (staging / name).write_bytes(tree.read_bytes(name))
        manifest = {"version": 1, "generated_by": generated_by,
                    "files": {rel: hashlib.sha256(data).hexdigest() for rel, data in sorted(files.items())}}
        (staging / MANIFEST).write_bytes(dump_json(manifest, indent=False))
        os.sync()  # the new site is on disk before it is swapped in
        if not out_dir.exists():
            os.rename(staging, out_dir)
            return
        if not exchange(staging, out_dir):
            previous = out_dir.parent / f".{out_dir.name}.previous-{uuid.uuid4().hex[:8]}"
            os.rename(out_dir, previous)
            os.rename(staging, out_dir)
            staging = previous
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    shutil.rmtree(staging, ignore_errors=True)  # the old site, swapped out


def manifest_files(out_dir: Path) -> dict[str, str]:
    """``{path: sha256}`` of the site in ``out_dir`` per its manifest (``{}`` without one)."""
    manifest = read_manifest(out_dir)
    return dict(manifest["files"]) if manifest else {}


def verify_site(out_dir: Path) -> list[str]:
    """Paths whose bytes differ from the manifest, or that it lists and are missing."""
    tree = Tree(out_dir)
    bad = []
    for rel, digest in manifest_files(out_dir).items():
        try:
            if hashlib.sha256(tree.read_bytes(rel)).hexdigest() != digest:
                bad.append(rel)
        except UnsafeInput:
            bad.append(rel)
    return bad


