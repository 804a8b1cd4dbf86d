"""Task folders as the stages find them: the user's task roots and the bundled tasks/, each
task known by its id and its content fingerprint.

A run names its task by id and fingerprint (run.json ``task.id``, ``task.fingerprint``);
``task.dir`` is only a hint and is never opened: the exporter and the importers look the
task up in the roots the user named (``--tasks``) and the bundled ``tasks/``, and use a folder
only when its fingerprint matches (DESIGN.md, "Trust boundary"). Task folders are read as
untrusted trees (contract.untrusted).
"""

from __future__ import annotations

import hashlib
from pathlib import Path

from contract.errors import BadInput
from contract.paths import TASKS_DIR
from contract.untrusted import REFUSED, Tree, UnsafeInput

SPEC_CAP = 16 * 1024 * 1024
"""A spec.json larger than this is refused."""


def task_fingerprint(task_dir: Path) -> str:
    """sha256 over the task's spec, catalog, reference records, pristine repo and solution
    files (what grading and the scripted policies read), each as its path and bytes.

    Raises:
        UnsafeInput: a link, FIFO or device among those files (a task folder is read as an
            untrusted tree, contract.untrusted).
    """
    tree = Tree(task_dir)
    digest = hashlib.sha256()
    paths = []
    for folder in ("environment/monitoring", "solution"):
        if tree.is_dir(folder):
            for rel, kind in tree.walk(folder):
                if kind not in ("file", "dir"):
                    raise UnsafeInput(tree.shown(rel), REFUSED.get(kind, "is not a regular file"))
                if kind == "file":
                    paths.append(rel)
    paths += [rel for rel in ("tests/spec.json", "tests/checks.json", "tests/reference_records.yml")
              if tree.is_file(rel)]
    for rel in paths:
        digest.update(rel.encode())
        digest.update(tree.read_bytes(rel))
    return digest.hexdigest()


def task_id_of(folder: Path) -> str:
    """The task id of a task folder: ``tests/spec.json`` ``task_id``, else the folder's name."""
    tree = Tree(folder)
    if tree.is_file("tests/spec.json"):
        try:
            spec = tree.read_json("tests/spec.json", cap=SPEC_CAP)
        except UnsafeInput:
            spec = None
        if isinstance(spec, dict) and isinstance(spec.get("task_id"), str):
            return spec["task_id"]
    return folder.name


class TaskIndex:
    """Task folders under the given roots, then the bundled ``tasks/``, by task id.

    A root is a folder of task folders or a task folder itself (it holds ``task.toml``).
    Roots that do not exist raise BadInput; folders found through a link are left out.
    Fingerprints are computed once per folder.
    """

    def __init__(self, roots: list[Path] | None = None, *, bundled: bool = True):
        self.roots = [Path(r) for r in roots or []] + ([TASKS_DIR] if bundled else [])
        self._by_id: dict[str, list[Path]] | None = None
        self._fingerprints: dict[Path, str | None] = {}
        for root in roots or []:
            if not Path(root).is_dir():
                raise BadInput(root, "tasks folder not found (--tasks)")

    def by_id(self) -> dict[str, list[Path]]:
        """``{task id: [folders]}`` in root order."""
        if self._by_id is None:
            found: dict[str, list[Path]] = {}
            for root in self.roots:
                if not root.is_dir():
                    continue
                tree = Tree(root)
                if tree.is_file("task.toml"):
                    folders = [root]
                else:
                    folders = [root / name for name, kind in tree.entries()
                               if kind == "dir" and Tree(root / name).is_file("task.toml")]
                for folder in folders:
                    found.setdefault(task_id_of(folder), []).append(folder)
            self._by_id = found
        return self._by_id

    def fingerprint(self, folder: Path) -> str | None:
        """:func:`task_fingerprint` of ``folder`` (None when it cannot be read safely)."""
        if folder not in self._fingerprints:
            try:
                self._fingerprints[folder] = task_fingerprint(folder)
            except UnsafeInput:
                self._fingerprints[folder] = None
        return self._fingerprints[folder]

    def find(self, task_id: str, fingerprint: str | None, check_ids: list[str] | None = None
             ) -> Path | None:
        """The folder of ``task_id`` whose fingerprint is ``fingerprint``.

        A run written before fingerprints (``fingerprint`` None) matches a folder of that id
        whose catalog lists exactly ``check_ids`` (in order), when it names any.
        """
        for folder in self.by_id().get(task_id, []):
            if fingerprint:
                if self.fingerprint(folder) == fingerprint:
                    return folder
            elif check_ids and catalog_check_ids(folder) == check_ids:
                return folder
        return None


def catalog_check_ids(folder: Path) -> list[str] | None:
    """The check ids of a task folder's ``tests/checks.json`` in order (None if unreadable)."""
    try:
        catalog = Tree(folder).read_json("tests/checks.json")
    except UnsafeInput:
        return None
    if not isinstance(catalog, dict) or not isinstance(catalog.get("checks"), list):
        return None
    return [c.get("id") for c in catalog["checks"] if isinstance(c, dict)]
