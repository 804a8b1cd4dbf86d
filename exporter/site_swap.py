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
import signal
import uuid
from concurrent.futures import ThreadPoolExecutor
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
    """Clean up after an export that was killed: remove staging folders (not one of an export
    still running: its process id is in the name), and put a previous site renamed aside back
    when the target is missing."""
    parent, name = out_dir.parent, out_dir.name
    if not parent.is_dir():
        return
    for entry in sorted(parent.iterdir()):
        if entry.is_symlink() or not entry.is_dir():
            continue
        if entry.name.startswith(f".{name}.staging-"):
            if not _staging_in_use(entry.name.removeprefix(f".{name}.staging-")):
                shutil.rmtree(entry, ignore_errors=True)
        elif entry.name.startswith(f".{name}.previous-"):
            if not out_dir.exists():
                os.rename(entry, out_dir)
            else:
                shutil.rmtree(entry, ignore_errors=True)


def _staging_in_use(suffix: str) -> bool:
    """Whether the staging folder named ``<pid>-<hex>`` (``suffix``) belongs to another
    export process still running (a second export must not delete a running one's folder)."""
    pid = suffix.split("-", 1)[0]
    if not pid.isdigit() or int(pid) == os.getpid():
        return False
    try:
        os.kill(int(pid), 0)
    except ProcessLookupError:
        return False
    except OSError:
        return True  # another user's process: alive
    return True


CRASH_AT = "ALERTFORGE_CRASH_AT"
"""Fault injection for the kill -9 tests, as recorder/run_store.py's: ``export:<point>`` makes
the process SIGKILL itself at that point of a site export: ``export:run:N`` once the N-th run
(1-based, in the order found) is in the staging folder, ``export:staged`` when every file is
and the manifest is not, ``export:manifest`` after the manifest and before the swap,
``export:swapped`` after the swap and before the old site is removed, ``export:removed``
after that and before the incremental state is saved (exporter.export_state). Unset in
normal use."""


def crash_point(where: str) -> None:
    """SIGKILL this process when :data:`CRASH_AT` names ``where`` (see there)."""
    if os.environ.get(CRASH_AT) == where:
        os.kill(os.getpid(), signal.SIGKILL)


def _refuse_foreign(out_dir: Path) -> None:
    foreign = foreign_files(out_dir)
    if foreign:
        shown = ", ".join(foreign[:8]) + (f" and {len(foreign) - 8} more" if len(foreign) > 8 else "")
        raise BadInput(out_dir, f"holds files no previous export wrote: {shown}; they are never "
                       "deleted: move them away or export into a new folder")


def _check_relative(relative: str) -> None:
    if relative.startswith("/") or ".." in relative.split("/") or relative in (MANIFEST, *SPACE_FILES):
        raise BadInput(relative, "a site file must be a relative path inside the site")


class Staging:
    """A new site being built in a staging folder beside ``out_dir``, swapped in whole by
    :meth:`commit` (see the module).

    A file is either written (:meth:`write`) or, when the current site holds it with the same
    bytes (its manifest's sha256), hard-linked from there (:meth:`reuse`): the current site is
    never written to, so a kill at any point leaves it intact. ``files`` maps each relative path
    to its sha256, ``bytes`` totals their sizes, ``linked`` counts the files linked.

    Raises (on creation):
        BadInput: ``out_dir`` holds files no previous export wrote (named).
    """

    def __init__(self, out_dir: Path) -> None:
        self.out_dir = Path(os.path.realpath(out_dir))  # --out may be a link: write behind it
        recover(self.out_dir)
        _refuse_foreign(self.out_dir)
        self.previous = manifest_files(self.out_dir)
        self.manifest_bytes = b""
        self.files: dict[str, str] = {}
        self.bytes = 0
        self.linked = 0
        self.written: list[str] = []  # relative paths made by this export: flushed before the swap
        self.path = self.out_dir.parent / f".{self.out_dir.name}.staging-{os.getpid()}-{uuid.uuid4().hex[:8]}"
        self.path.mkdir(parents=True)

    def write(self, relative: str, data: bytes) -> None:
        """Put ``data`` at ``relative``: linked from the current site when it holds the same
        bytes there, else written (a new file, never one already staged).

        Raises:
            BadInput: ``relative`` would leave the site or name the manifest or a Space file.
        """
        _check_relative(relative)
        digest = hashlib.sha256(data).hexdigest()
        if self.reuse(relative, digest):
            return
        target = self.path / relative
        target.parent.mkdir(parents=True, exist_ok=True)
        descriptor = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
        with os.fdopen(descriptor, "wb") as handle:
            handle.write(data)
        self.written.append(relative)
        self.files[relative] = digest
        self.bytes += len(data)

    def reuse(self, relative: str, digest: str) -> bool:
        """Hard-link ``relative`` from the current site when its manifest lists it with sha256
        ``digest``; False (nothing staged) when it does not or the link cannot be made."""
        if self.previous.get(relative) != digest or relative in self.files:
            return False
        target = self.path / relative
        try:
            target.parent.mkdir(parents=True, exist_ok=True)
            os.link(self.out_dir / relative, target, follow_symlinks=False)
            size = target.lstat().st_size
        except OSError:
            return False
        self.files[relative] = digest
        self.bytes += size
        self.linked += 1
        return True

    def drop(self, relatives: list[str]) -> None:
        """Remove staged files (a run that could not be reused after all)."""
        for relative in relatives:
            if self.files.pop(relative, None) is not None:
                (self.path / relative).unlink(missing_ok=True)

    def commit(self, generated_by: str) -> bytes:
        """Add the Space files of the current site and the manifest, then swap the staging
        folder in (see the module); returns the manifest's bytes. The staging folder is gone
        after, whatever happens."""
        try:
            if self.out_dir.exists():
                tree = Tree(self.out_dir)
                for name in SPACE_FILES:
                    if tree.is_file(name):
                        (self.path / name).write_bytes(tree.read_bytes(name))
                        self.written.append(name)
            manifest = {"version": 1, "generated_by": generated_by, "files": dict(sorted(self.files.items()))}
            crash_point("export:staged")
            self.manifest_bytes = dump_json(manifest, indent=False)
            (self.path / MANIFEST).write_bytes(self.manifest_bytes)
            self.written.append(MANIFEST)
            crash_point("export:manifest")
            self._flush()  # the new site is on disk before it is swapped in
            if not self.out_dir.exists():
                os.rename(self.path, self.out_dir)
                _fsync(self.out_dir.parent)
                return self.manifest_bytes
            if not exchange(self.path, self.out_dir):
                previous = self.out_dir.parent / f".{self.out_dir.name}.previous-{uuid.uuid4().hex[:8]}"
                os.rename(self.out_dir, previous)
                os.rename(self.path, self.out_dir)
                self.path = previous
            _fsync(self.out_dir.parent)
            crash_point("export:swapped")
        except BaseException:
            self.abort()
            raise
        self.abort()  # the old site, swapped out
        crash_point("export:removed")
        return self.manifest_bytes

    def _flush(self) -> None:
        """fsync each file this export wrote and every folder of the staging tree (their
        entries, linked files' too). Linked files were flushed by the export that wrote them.
        Not ``sync()``: that waits for every program's writes on the machine, and a
        background ``view`` export must not wait for a training job's checkpoints."""
        folders = [Path(folder) for folder, _, _ in os.walk(self.path)]
        # fsync waits on the disk with the GIL released: several at once share journal commits
        with ThreadPoolExecutor(max_workers=8) as pool:
            list(pool.map(_fsync, [*(self.path / relative for relative in self.written), *folders]))

    def abort(self) -> None:
        """Remove the staging folder (a failed export: the current site stays as it was)."""
        shutil.rmtree(self.path, ignore_errors=True)


def _fsync(path: Path) -> None:
    """Flush ``path`` (a file or a folder) to disk (fsync(2) on a read-only descriptor)."""
    descriptor = os.open(path, os.O_RDONLY)
    try:
        os.fsync(descriptor)
    finally:
        os.close(descriptor)


def write_site(out_dir: Path, files: dict[str, bytes], generated_by: str) -> None:
    """Write ``files`` (``{relative path: bytes}``) as the whole site in ``out_dir`` (files the
    current site holds with the same bytes are hard-linked, not copied: :class:`Staging`).

    Raises:
        BadInput: ``out_dir`` holds files no previous export wrote (named), or a path in
            ``files`` would leave the site.
    """
    staging = Staging(out_dir)
    try:
        for relative, data in sorted(files.items()):
            staging.write(relative, data)
    except BaseException:
        staging.abort()
        raise
    staging.commit(generated_by)


def manifest_files(out_dir: Path) -> dict[str, str]:
    """``{path: sha256}`` of the site in ``out_dir`` per its manifest (``{}`` without one)."""
    manifest = read_manifest(out_dir)
    return dict(manifest["files"]) if manifest else {}


def verify_site(out_dir: Path) -> list[str]:
    """Paths whose bytes differ from the manifest, or that it lists and are missing or are not
    regular files (a link anywhere on the way counts as missing). A file may have a second
    name: an export in progress, or one killed before it cleaned up, links unchanged files
    from the site into its staging folder (:class:`Staging`)."""
    kinds = dict(Tree(out_dir).walk())
    bad = []
    for rel, digest in manifest_files(out_dir).items():
        try:
            if kinds.get(rel) != "file":
                raise OSError(rel)
            descriptor = os.open(out_dir / rel, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
            with os.fdopen(descriptor, "rb") as handle:
                if hashlib.sha256(handle.read()).hexdigest() != digest:
                    bad.append(rel)
        except OSError:
            bad.append(rel)
    return bad
