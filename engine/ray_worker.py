"""What runs on a Ray worker: task folders from the object store, jobs and grades, errors sent back.

A task folder reaches a worker as a :class:`TaskBundle` (every regular file, read through
:class:`contract.untrusted.Tree`, put once into Ray's object store by the driver) and is
unpacked under :func:`cache_root` in ``<digest>/<task folder name>``, so a grade there gives
the same GradeResult as the driver's folder (the grader reads names and contents, never the
absolute path). A worker already holding the digest does not fetch the bundle again.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from contract.untrusted import Tree, UnsafeInput

CACHE_ENV = "ALERTFORGE_RAY_TASK_CACHE"
"""Where a worker unpacks task folders (default ``<temp dir>/alertforge-ray-tasks``)."""


@dataclass(frozen=True)
class TaskBundle:
    """A task folder as data: ``name`` (the folder's name), ``files`` ``{relative path:
    bytes}``, ``dirs`` (every folder, so empty ones come too) and ``digest`` (sha256 over
    paths and bytes: the cache key)."""

    name: str
    files: dict[str, bytes]
    dirs: tuple[str, ...]
    digest: str


def bundle(folder: Path) -> TaskBundle:
    """Every regular file and folder under ``folder``.

    Raises:
        contract.untrusted.UnsafeInput: a link, FIFO or device in the folder.
    """
    tree = Tree(folder)
    files, dirs, digest = {}, [], hashlib.sha256()
    for rel, kind in sorted(tree.walk("")):
        if kind == "dir":
            dirs.append(rel)
        elif kind == "file":
            files[rel] = tree.read_bytes(rel, cap=64 * 1024 * 1024)
            digest.update(rel.encode() + b"\0" + files[rel])
        else:
            raise UnsafeInput(tree.shown(rel), "is not a regular file or folder "
                              "(not sent to Ray workers)")
    return TaskBundle(Path(folder).name, files, tuple(dirs), digest.hexdigest())


def cache_root() -> Path:
    """Where this worker keeps unpacked task folders (:data:`CACHE_ENV`)."""
    return Path(os.environ.get(CACHE_ENV) or Path(tempfile.gettempdir()) / "alertforge-ray-tasks")


def unpack(task: TaskBundle, root: Path) -> Path:
    """``task`` written under ``root/<digest>/<name>`` (once: a folder already there is kept;
    two workers unpacking at once each write a private copy and one rename wins)."""
    target = root / task.digest[:32] / task.name
    if target.is_dir():
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    scratch = Path(tempfile.mkdtemp(prefix=".unpack-", dir=target.parent))
    write_tree(scratch, task.files, task.dirs)
    try:
        os.rename(scratch, target)
    except OSError:  # another worker's copy landed first
        shutil.rmtree(scratch, ignore_errors=True)
    return target


def write_tree(root: Path, files: dict[str, bytes], dirs: tuple[str, ...] | list[str] = ()) -> Path:
    """Write ``files`` (and the folders ``dirs``) under ``root``; returns ``root``."""
    for rel in dirs:
        (root / rel).mkdir(parents=True, exist_ok=True)
    for rel, data in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
    return root


@dataclass
class RemoteError:
    """An exception raised on a worker, sent back so the driver raises it as it was
    (class, ``args`` and attributes: ``BadInput(path, problem)`` cannot be pickled whole)."""

    kind: type
    args: tuple
    state: dict

    @classmethod
    def of(cls, err: BaseException) -> RemoteError:
        """The parts of ``err`` the driver needs to raise it again."""
        plain = str | int | float | bool | type(None)
        state = {k: v for k, v in vars(err).items() if isinstance(v, plain)}
        return cls(type(err), tuple(a for a in err.args if isinstance(a, str | int | float)), state)

    def rebuild(self) -> BaseException:
        """The exception again, same class, message and attributes."""
        err = self.kind.__new__(self.kind)
        err.args = self.args
        for key, value in self.state.items():
            setattr(err, key, value)
        return err


def worker_name() -> str:
    """``<node ip>/<worker id, 8 hex>`` of the Ray worker running this code."""
    import ray

    return f"{ray.util.get_node_ip_address()}/{ray.get_runtime_context().get_worker_id()[:8]}"


def localize(value: Any, folders: dict[str, str]) -> Any:
    """``value`` with every string naming a driver's task folder (``folders`` maps it to
    this worker's copy) replaced, inside tuples and lists too."""
    if isinstance(value, str):
        return folders.get(value, value)
    if isinstance(value, tuple | list):
        return type(value)(localize(item, folders) for item in value)
    return value


def run_job(fn, args: tuple, tasks: dict[str, tuple[str, Any]]) -> tuple[str, Any, int, str]:
    """Run one job on this worker: ``tasks`` maps each driver task folder in ``args`` to
    ``(digest, bundle or object ref)``; returns ``(ok|raised, result or RemoteError,
    grades made, worker name)``."""
    import ray

    from engine.local import counted

    folders = {}
    for path, (digest, ref) in tasks.items():
        local = cache_root() / digest[:32] / Path(path).name
        if not local.is_dir():
            local = unpack(ray.get(ref) if isinstance(ref, ray.ObjectRef) else ref, cache_root())
        folders[path] = str(local)
    try:
        result, grades = counted(fn, *localize(args, folders))
    except Exception as err:  # noqa: BLE001 - raised again in the driver
        return "raised", RemoteError.of(err), 0, worker_name()
    return "ok", result, grades, worker_name()


def grade_files(task_dir: str, files: dict[str, bytes], dirs: list[str]) -> dict:
    """The GradeResult of the workspace ``files`` (``{path in the repo: bytes}``) against the
    task folder ``task_dir`` (already on this worker), with ``worker`` set, as its JSON form
    (:func:`contract.base.dump` of :func:`grader.grade.grade_result`: what crosses to the
    driver, which reads it back into the model)."""
    from contract.base import dump
    from grader.grade import grade_result

    with tempfile.TemporaryDirectory(prefix="alertforge-ray-ws-") as tmp:
        root = write_tree(Path(tmp) / "monitoring", files, dirs)
        result = dump(grade_result(task_dir, root))
    result["worker"] = worker_name()
    return result


def node_report(expected_tools: dict[str, str], expected_version: str) -> list[str]:
    """The start-up check on this node: promtool and amtool run and are the driver's
    versions, the Alertmanager server runs, alertforge is the driver's version, and task
    folders can be unpacked here. Returns the problems (empty: ready)."""
    from contract.version import __version__
    from grader import tools

    problems = []
    found = tools.tool_versions()
    for name, binary in (("promtool", tools.PROMTOOL), ("amtool", tools.AMTOOL)):
        if found[name].startswith("unknown"):
            problems.append(f"{name} ({binary}) does not run: {found[name]}")
        elif found[name] != expected_tools.get(name):
            problems.append(f"{name} is {found[name]}, the driver's is {expected_tools.get(name)}")
    if tools.tool_version(tools.ALERTMANAGER).startswith("unknown"):
        problems.append(f"the Alertmanager server ({tools.ALERTMANAGER}) does not run")
    if __version__ != expected_version:
        problems.append(f"alertforge is {__version__}, the driver's is {expected_version}")
    try:
        cache_root().mkdir(parents=True, exist_ok=True)
        tempfile.TemporaryDirectory(dir=cache_root()).cleanup()
    except OSError as err:
        problems.append(f"task folders cannot be unpacked under {cache_root()}: {err}")
    return problems
