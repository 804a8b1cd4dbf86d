"""Publish a built site to a Hugging Face static Space: stage it redacted, list it, refuse big files, upload."""

from __future__ import annotations

import hashlib
import html
import re
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import orjson

from contract.errors import BadInput, Refused
from contract.files import dump_json, write_atomic
from contract.text import split_chars
from contract.untrusted import Tree
from exporter.export import MAX_FILE_BYTES
from exporter.long_text import PART_CHARS
from exporter.media_clean import MEDIA_FOLDER, clean_media, published_problem
from exporter.redact import Redactor
from exporter.run_index import tokens
from exporter.site_swap import recover

LISTING = "listing.json"
SPACE_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.\-]*/[A-Za-z0-9][A-Za-z0-9_.\-]*$")
SKIPPED_NAMES = {".git", ".cache", "__pycache__", ".DS_Store"}


class PublishRefused(Refused):
    """The site cannot be published as it is (a file over the Space's limit); names the file."""


def site_files(folder: Path) -> list[Path]:
    """The files under ``folder`` to publish, sorted by relative path (no .git, caches or
    listing.json), read as an untrusted tree: a link, FIFO or device anywhere is refused.

    Raises:
        BadInput: naming the links and special files found (publish follows no link).
    """
    found, refused = [], []
    for rel, kind in Tree(folder).walk():
        parts = rel.split("/")
        if any(part in SKIPPED_NAMES for part in parts) or rel == LISTING:
            continue
        if kind == "file":
            found.append(folder / rel)
        elif kind != "dir":
            refused.append(f"{rel} ({kind})")
    if refused:
        raise BadInput(folder, "holds links or special files, which publish never follows: "
                       + ", ".join(refused[:8]) + (" ..." if len(refused) > 8 else ""))
    return sorted(found, key=lambda path: path.relative_to(folder).as_posix())


def _drop_secret_tokens(stage: Path, secrets: set[str]) -> None:
    """Remove from data/search/ shards the search tokens that come from a masked secret."""
    leaked = set().union(*(tokens(secret) for secret in secrets)) if secrets else set()
    if not leaked:
        return
    for shard_path in sorted((stage / "data" / "search").glob("*.json")):
        shard = orjson.loads(shard_path.read_bytes())
        if not isinstance(shard, dict) or not isinstance(shard.get("tokens", {}), dict):
            raise PublishRefused(shard_path.relative_to(stage).as_posix(), "is not a search shard "
                                 "({version, tokens{}}): export the site again")
        kept = {token: postings for token, postings in shard.get("tokens", {}).items() if token not in leaked}
        if len(kept) != len(shard.get("tokens", {})):
            write_atomic(shard_path, dump_json({**shard, "tokens": kept}, indent=False))


TEXT_PART = re.compile(r"^data/text/[^/]+/(\d+)\.(message|output|arguments|diff)\.(\d+)\.json$")
"""A part of a long text (docs/formats.md, "Long texts"): step, field, part number."""


def _text_part_groups(relatives: list[str]) -> dict[tuple[str, str, str], list[str]]:
    """``{(folder, step, field): [part paths in part order]}`` for the long-text parts."""
    groups: dict[tuple[str, str, str], list[tuple[int, str]]] = {}
    for rel in relatives:
        match = TEXT_PART.match(rel)
        if match:
            key = (rel.rsplit("/", 1)[0], match.group(1), match.group(2))
            groups.setdefault(key, []).append((int(match.group(3)), rel))
    return {key: [rel for _, rel in sorted(parts)] for key, parts in groups.items()}


def _redact_long_text(site: Tree, parts: list[str], field: str, redactor: Redactor) -> list[bytes]:
    """The parts of one long text, redacted as a whole (a secret split across two parts is
    found), split again into as many parts on character boundaries."""
    texts = []
    for rel in parts:
        try:
            texts.append(orjson.loads(site.read_bytes(rel, cap=MAX_FILE_BYTES)))
        except orjson.JSONDecodeError:
            texts.append(None)
    if not all(isinstance(t, str) for t in texts):
        raise PublishRefused(parts[0], "a long-text part is not a JSON string: export the site again")
    whole = "".join(texts)
    if field in ("arguments", "diff"):  # JSON text of a value: redact it as that value
        try:
            redacted = orjson.dumps(redactor.value(orjson.loads(whole)), option=orjson.OPT_SORT_KEYS).decode()
        except orjson.JSONDecodeError:
            redacted = redactor.text(whole)
    else:
        redacted = redactor.text(whole)
    size = max(1, -(-len(redacted) // len(parts)))
    pieces = split_chars(redacted, size)
    pieces += [""] * (len(parts) - len(pieces))
    if size > PART_CHARS:
        raise PublishRefused(parts[0], "redacting this long text made it too long for its parts; "
                             "export the site again (export redacts before splitting)")
    return [orjson.dumps(piece) for piece in pieces]


SITE_SUFFIXES = {".json", ".html", ".md", ".txt", ".js", ".css", ".svg"}
"""The kinds of file a site is made of: publish uploads no other (a .gz or an image could hide
what it cannot read)."""
SITE_NAMES = {".gitattributes"}


def _text(rel: str, data: bytes) -> str:
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise PublishRefused(rel, "is not UTF-8 text, so it cannot be checked for secrets; "
                             "nothing uploaded") from None


def _refuse_if_secret(rel: str, text: str, redactor: Redactor, what: str) -> None:
    kinds = redactor.kinds_in(text)
    if kinds:
        raise PublishRefused(rel, f"holds what looks like a secret ({kinds}) {what}; nothing "
                             "uploaded (export the site again: export redacts before it writes)")


def _stage_file(rel: str, data: bytes, redactor: Redactor) -> bytes:
    """One file of the site, redacted: JSON as values (re-serialized, so a duplicate key cannot
    keep a secret in the original bytes), HTML, Markdown and text as text (HTML then checked
    again with its character references decoded), the viewer's own code only checked."""
    name = Path(rel).name
    suffix = Path(rel).suffix
    if suffix not in SITE_SUFFIXES and name not in SITE_NAMES:
        raise PublishRefused(rel, "is not one of the kinds of file a site is made of "
                             f"({', '.join(sorted(SITE_SUFFIXES))}); nothing uploaded")
    text = _text(rel, data)
    if suffix == ".json":
        try:
            value = orjson.loads(data)
        except orjson.JSONDecodeError as err:
            raise PublishRefused(rel, f"is not valid JSON ({err}), so it cannot be checked for "
                                 "secrets; nothing uploaded") from None
        return dump_json(redactor.value(value), indent=False)
    if suffix in (".html", ".md", ".txt") or name in SITE_NAMES:
        redacted = redactor.text(text)
        if suffix == ".html":
            _refuse_if_secret(rel, html.unescape(redacted), redactor,
                              "behind HTML character references")
        return redacted.encode("utf-8")
    _refuse_if_secret(rel, text, redactor, "in a file publish does not rewrite (the viewer's code)")
    return data


def stage_site(site_dir: Path, stage: Path, redactor: Redactor | None, *, with_media: bool = False) -> None:
    """Copy the site into ``stage``; with ``redactor``, mask secrets in every file (long texts
    joined first, see :func:`_redact_long_text`; each file by :func:`_stage_file`).

    Media files (``data/media/``: images and audio runs' agents saw, as export re-encodes them)
    are copied only with ``with_media`` (no scan reads pixels or sound) and only when each is
    exactly what export writes (:func:`exporter.media_clean.published_problem`), redactor or
    not; with ``redactor``, a token format in a media file's bytes refuses it too.

    Raises:
        PublishRefused: a secret where it cannot be masked (a file name, the viewer's own
            code, an HTML character reference), a file that cannot be checked (not UTF-8, not
            valid JSON, not a kind of file a site holds), a media file without ``with_media``
            or not as export writes it, a file name that is not UTF-8, or a file over 10 MB.
    """
    recover(Path(site_dir))  # a killed export's staging folder holds second names of site files
    site = Tree(site_dir)
    paths = site_files(site_dir)
    relatives = [path.relative_to(site_dir).as_posix() for path in paths]
    _refuse_names(relatives, with_media)
    staged: dict[str, bytes] = {}
    groups = _text_part_groups(relatives) if redactor is not None else {}
    for (_, _, field), parts in groups.items():
        staged.update(zip(parts, _redact_long_text(site, parts, field, redactor)))
    for path, rel in zip(paths, relatives):
        _refuse_if_too_big(path, rel)
        if rel not in staged:
            staged[rel] = _staged_bytes(site, rel, redactor)
    _write_staged(stage, staged)
    if redactor is not None:
        _drop_secret_tokens(stage, redactor.secrets)


def _refuse_names(relatives: list[str], with_media: bool) -> None:
    """Refuse a site whose file names (relative, posix) a Space cannot hold.

    Raises:
        PublishRefused: a name that is not UTF-8, or media files without ``with_media``
            (names the first).
    """
    for rel in relatives:
        try:
            rel.encode("utf-8")
        except UnicodeEncodeError:
            raise PublishRefused(repr(rel)[1:-1], "the file name is not UTF-8, which a Space cannot "
                                 "hold or list; no export writes one; nothing uploaded") from None
    media = [rel for rel in relatives if rel.startswith(MEDIA_FOLDER)]
    if media and not with_media:
        raise PublishRefused(media[0], f"is one of {len(media)} media files (images and audio the "
                             "runs' agents saw) under data/media/: no scan can read pixels or sound "
                             "for secrets; look at them, then publish with --with-media (or export "
                             "again with --no-media); nothing uploaded")


def _refuse_if_too_big(path: Path, rel: str) -> None:
    """Raises PublishRefused when the file at ``path`` (not followed) is over 10 MB."""
    size = path.lstat().st_size
    if size > MAX_FILE_BYTES:
        raise PublishRefused(rel, f"{size:,d} bytes, over the 10 MB limit ({MAX_FILE_BYTES:,d} "
                             "bytes) for a file in a Space; nothing uploaded")


def _refuse_bad_media(rel: str, data: bytes, redactor: Redactor | None) -> None:
    """Refuse a media file that is not exactly what export writes or, with ``redactor``, holds a
    token format in its bytes or in its pixels' or frames' payload texts.

    Raises:
        PublishRefused: either problem, naming the file.
    """
    problem = published_problem(data, Path(rel).suffix)
    if problem:
        raise PublishRefused(rel, f"{problem}: a media file of a site holds only what export "
                             "writes (export the site again); nothing uploaded")
    if redactor is not None:
        _refuse_if_secret(rel, data.decode("latin-1"), redactor, "in its bytes (a media file)")
        for text in clean_media(data, "image" if rel.endswith(".png") else "audio").payload_texts():
            _refuse_if_secret(rel, text, redactor, "in its pixels or frames (a media file)")


def _staged_bytes(site: Tree, rel: str, redactor: Redactor | None) -> bytes:
    """The bytes the stage holds for the site file ``rel``: media checked and copied as is,
    other files masked by :func:`_stage_file` when there is a ``redactor``.

    Raises:
        PublishRefused: as :func:`_refuse_bad_media` and :func:`_stage_file`, or a file name
            that looks like it holds a secret.
    """
    data = site.read_bytes(rel, cap=MAX_FILE_BYTES)
    if rel.startswith(MEDIA_FOLDER):
        _refuse_bad_media(rel, data, redactor)
    if redactor is not None:
        if redactor.find(rel, entropy=False):
            raise PublishRefused(rel, "the file name looks like it holds a secret, which cannot "
                                 "be masked without breaking the site; export it again")
        if not rel.startswith(MEDIA_FOLDER):
            data = _stage_file(rel, data, redactor)
    return data


def _write_staged(stage: Path, staged: dict[str, bytes]) -> None:
    """Write each staged file (relative posix path -> bytes) under ``stage``."""
    for rel, data in staged.items():
        target = stage / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)


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
                 out: Callable[[str], None] = print, with_media: bool = False) -> dict[str, Any]:
    """Publish the built site in ``site_dir`` to the static Space ``space`` (``ORG/NAME``).

    The site is staged in a temporary folder (redacted with ``redactor``), every file listed
    with its size through ``out``. A dry run stops there, having written nothing outside its
    temporary stage; otherwise ``listing.json`` is written into the stage and ``site_dir`` and
    the stage is uploaded (:func:`upload`). A site
    with media files is published only ``with_media`` (see :func:`stage_site`).

    Returns:
        The listing (see :func:`listing`).

    Raises:
        BadInput: ``space`` is not ``ORG/NAME`` or ``site_dir`` holds no built site.
        PublishRefused: a file is over 10 MB, or as :func:`stage_site` (nothing is uploaded;
            names the file).
    """
    site_dir = Path(site_dir)
    if not SPACE_ID.match(space):
        raise BadInput(Path(space), "--space wants ORG/NAME (a Hugging Face Space id)")
    if not (site_dir / "index.html").is_file():
        raise BadInput(site_dir, "no built site here (index.html missing): run alertforge export first")
    with tempfile.TemporaryDirectory(prefix="alertforge-publish-") as temporary:
        stage = Path(temporary)
        stage_site(site_dir, stage, redactor, with_media=with_media)
        manifest = listing(stage, space, redactor.masked if redactor is not None else 0)
        for entry in manifest["files"]:
            out(f"{entry['bytes']:>12,d}  {entry['path']}")
        out(f"{manifest['total_bytes']:>12,d}  total, {len(manifest['files'])} files"
            + ("; not redacted" if redactor is None else ""))
        if redactor is not None:
            out(redactor.report())
        too_big = [entry for entry in manifest["files"] if entry["bytes"] > MAX_FILE_BYTES]
        if too_big:
            entry = too_big[0]
            raise PublishRefused(entry["path"], f"{entry['bytes']:,d} bytes, over the 10 MB limit "
                                 f"({MAX_FILE_BYTES:,d} bytes) for a file in a Space; nothing uploaded")
        data = dump_json(manifest)
        write_atomic(stage / LISTING, data)
        if dry_run:  # writes nothing anywhere: the listing above is the whole answer
            out(f"dry run: nothing uploaded to {space} and nothing written")
        else:
            write_atomic(site_dir / LISTING, data)
            upload(stage, space)
            out(f"uploaded {len(manifest['files'])} files to https://huggingface.co/spaces/{space}")
    return manifest
