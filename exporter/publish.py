"""Publish a built site to a Hugging Face static Space: stage it redacted, list it, refuse big files, upload."""

from __future__ import annotations

import hashlib
import re
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import orjson

from alertforge.errors import BadInput
from alertforge.files import dump_json, write_atomic
from exporter.export import MAX_FILE_BYTES
from exporter.redact import Redactor
from exporter.run_index import tokens

LISTING = "listing.json"
SPACE_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.\-]*/[A-Za-z0-9][A-Za-z0-9_.\-]*$")
SKIPPED_NAMES = {".git", ".cache", "__pycache__", ".DS_Store"}
REDACTED_SUFFIXES = {".json", ".html", ".md", ".txt"}
"""Files whose text is redacted when staged (static/ code and images are the viewer's own)."""


class PublishRefused(Exception):
    """The site cannot be published as it is (a file over the Space's limit); names the file."""

    def __init__(self, path: str, problem: str) -> None:
        super().__init__(f"{path}: {problem}")
        self.path = path
        self.problem = problem


def site_files(folder: Path) -> list[Path]:
    """The files under ``folder`` to publish, sorted by relative path (no .git, caches or listing.json)."""
    found = []
    for path in sorted(folder.rglob("*"), key=lambda path: path.relative_to(folder).as_posix()):
        relative = path.relative_to(folder)
        if any(part in SKIPPED_NAMES for part in relative.parts) or relative.as_posix() == LISTING:
            continue
        if path.is_file():
            found.append(path)
    return found


def _redact_json(data: bytes, redactor: Redactor) -> bytes:
    try:
        value = orjson.loads(data)
    except orjson.JSONDecodeError:
        return redactor.text(data.decode("utf-8", errors="replace")).encode("utf-8")
    before = redactor.masked
    redacted = redactor.value(value)
    return data if redactor.masked == before else dump_json(redacted, indent=False)


def _drop_secret_tokens(stage: Path, secrets: set[str]) -> None:
    """Remove from data/search/ shards the search tokens that come from a masked secret."""
    leaked = set().union(*(tokens(secret) for secret in secrets)) if secrets else set()
    if not leaked:
        return
    for shard_path in sorted((stage / "data" / "search").glob("*.json")):
        shard = orjson.loads(shard_path.read_bytes())
        kept = {token: postings for token, postings in shard.get("tokens", {}).items() if token not in leaked}
        if len(kept) != len(shard.get("tokens", {})):
            write_atomic(shard_path, dump_json({**shard, "tokens": kept}, indent=False))


def stage_site(site_dir: Path, stage: Path, redactor: Redactor | None) -> None:
    """Copy the site into ``stage``; with ``redactor``, mask secrets in every JSON, HTML and text file."""
    for path in site_files(site_dir):
        relative = path.relative_to(site_dir)
        data = path.read_bytes()
        if redactor is not None and path.suffix in REDACTED_SUFFIXES:
            if path.suffix == ".json":
                data = _redact_json(data, redactor)
            else:
                data = redactor.text(data.decode("utf-8", errors="replace")).encode("utf-8")
        target = stage / relative
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)
    if redactor is not None:
        _drop_secret_tokens(stage, redactor.secrets)


def listing(folder: Path, space: str, masked: int) -> dict[str, Any]:
    """The manifest of a staged site: ``{version, space, files[{path, bytes, sha256}], total_bytes, masked}``."""
    files = [
        {"path": path.relative_to(folder).as_posix(), "bytes": path.stat().st_size,
         "sha256": hashlib.sha256(path.read_bytes()).hexdigest()}
        for path in site_files(folder)
    ]
    return {"version": 1, "space": space, "files": files,
            "total_bytes": sum(entry["bytes"] for entry in files), "masked": masked}


def upload(folder: Path, space: str) -> str:
    """Upload ``folder`` to the Space with ``HfApi.upload_folder`` (token from the usual HF login)."""
    from huggingface_hub import HfApi

    info = HfApi().upload_folder(folder_path=str(folder), repo_id=space, repo_type="space",
                                 commit_message="Publish 3amBench Replay site")
    return str(info)


def publish_site(site_dir: Path, space: str, *, dry_run: bool = False, redactor: Redactor | None = None,
                 out: Callable[[str], None] = print) -> dict[str, Any]:
    """Publish the built site in ``site_dir`` to the static Space ``space`` (``ORG/NAME``).

    The site is staged in a temporary folder (redacted with ``redactor``), every file listed
    with its size through ``out``, and ``listing.json`` written into ``site_dir`` and the
    stage. A dry run stops there; otherwise the stage is uploaded (:func:`upload`).

    Returns:
        The listing (see :func:`listing`).

    Raises:
        BadInput: ``space`` is not ``ORG/NAME`` or ``site_dir`` holds no built site.
        PublishRefused: a file is over 10 MB (nothing is uploaded; names the file).
    """
    site_dir = Path(site_dir)
    if not SPACE_ID.match(space):
        raise BadInput(Path(space), "--space wants ORG/NAME (a Hugging Face Space id)")
    if not (site_dir / "index.html").is_file():
        raise BadInput(site_dir, "no built site here (index.html missing): run alertforge export first")
    with tempfile.TemporaryDirectory(prefix="alertforge-publish-") as temporary:
        stage = Path(temporary)
        stage_site(site_dir, stage, redactor)
        manifest = listing(stage, space, redactor.masked if redactor is not None else 0)
        for entry in manifest["files"]:
            out(f"{entry['bytes']:>12,d}  {entry['path']}")
        out(f"{manifest['total_bytes']:>12,d}  total, {len(manifest['files'])} files"
            + (f"; {manifest['masked']} strings masked" if redactor is not None else "; not redacted"))
        too_big = [entry for entry in manifest["files"] if entry["bytes"] > MAX_FILE_BYTES]
        if too_big:
            entry = too_big[0]
            raise PublishRefused(entry["path"], f"{entry['bytes']:,d} bytes, over the 10 MB limit "
                                 f"({MAX_FILE_BYTES:,d} bytes) for a file in a Space; nothing uploaded")
        data = dump_json(manifest)
        write_atomic(site_dir / LISTING, data)
        write_atomic(stage / LISTING, data)
        if dry_run:
            out(f"dry run: nothing uploaded to {space}; manifest in {site_dir / LISTING}")
        else:
            upload(stage, space)
            out(f"uploaded {len(manifest['files'])} files to https://huggingface.co/spaces/{space}")
    return manifest
