"""One self-contained HTML file of a whole export (CSS, JS modules and data inlined) that works via file://."""

from __future__ import annotations

import base64
import re
from pathlib import Path

import orjson
from markupsafe import Markup

from contract.errors import BadInput
from contract.files import write_atomic
from contract.paths import SITE_DIR
from contract.task_roots import TaskIndex
from exporter.bundle import bundle_script
from exporter.export import build_site_files
from exporter.media_clean import MEDIA_FOLDER, MEDIA_SUFFIXES
from exporter.redact import Redactor
from exporter.render import PREVIEW_ROWS, csp_hash, favicon_data_url, template_environment

SKIPPED_DATA = {"data/index.json"}
"""Data files the pages never load (index.json is rendered into the pages themselves)."""
SKIPPED_DATA_FOLDERS = ("data/run-heads/",)
"""Data the single file leaves out: run heads only speed up the first paint over http, and the
file already holds every run whole (data.js loads no head when the data is inlined)."""


def inline_data(files: dict[str, bytes]) -> str:
    """The site's data files as one JSON object ``{path: value}`` with ``<`` written as ``\\u003c``.

    Media files (``data/media/``, as exporter/media_clean.py wrote them) are there as their
    ``data:<type>;base64,...`` URL (a JSON string; the viewer's lib/data.js mediaAddress).
    The values are the files' own bytes (already compact JSON), so the text is deterministic, and
    no ``</script>`` or ``<!--`` from a run can end or change the script element holding it;
    U+2028 and U+2029 are escaped too (the utf8-truncation case), so the JSON parses the same.
    """
    entries = []
    for path, data in sorted(files.items()):
        suffix = Path(path).suffix
        if path.startswith(MEDIA_FOLDER) and suffix in MEDIA_SUFFIXES:
            url = f"data:{MEDIA_SUFFIXES[suffix]};base64,{base64.b64encode(data).decode('ascii')}"
            entries.append(orjson.dumps(path) + b":" + orjson.dumps(url))
        elif (path.startswith("data/") and suffix == ".json" and path not in SKIPPED_DATA
              and not path.startswith(SKIPPED_DATA_FOLDERS)):
            entries.append(orjson.dumps(path) + b":" + data)
    text = (b"{" + b",".join(entries) + b"}").replace(b"<", b"\\u003c").decode("utf-8")
    return text.replace("\u2028", "\\u2028").replace("\u2029", "\\u2029")


def single_file_csp(script: str, css: str) -> str:
    """The file's CSP: nothing from anywhere, but the one inline script and style (by hash) and
    data: images and audio (the icon, the runs' media)."""
    return (f"default-src 'none'; script-src {csp_hash(script)}; style-src {csp_hash(css)}; "
            "img-src data:; media-src data:; connect-src 'none'; object-src 'none'; base-uri 'none'; "
            "form-action 'none'")


def build_single_file(run_dirs: list[Path], site_dir: Path | None = None,
                      redactor: Redactor | None = None,
                      task_index: TaskIndex | None = None, *, with_media: bool = True) -> tuple[bytes, int]:
    """The single HTML file's bytes for ``run_dirs`` and the number of runs in it.

    Home list, run view and compare view are ``<template>``s the inlined boot script picks by
    ``?page=`` (``run``, ``compare``; none: home); links between them stay inside the file.

    Raises:
        BadInput: as :func:`exporter.export.build_site_files`, or a template or module problem.
    """
    site_dir = Path(site_dir) if site_dir is not None else SITE_DIR
    site = build_site_files([Path(p) for p in run_dirs], site_dir, redactor, task_index,
                            with_media=with_media)
    files, run_count = site.files, site.runs
    index = orjson.loads(files["data/index.json"])
    if index.get("runs") is None:   # rows past 10 MB are in the run list's shards (contract.site.SiteIndex)
        shards = [orjson.loads(files[f"data/runs-index/{k}.json"]) for k in range(index["run_shards"])]
        index["runs"] = [dict(zip(shard["fields"], row)) for shard in shards for row in shard["rows"]]
    css = (site_dir / "static" / "app.css").read_text(encoding="utf-8")
    if re.search(r"</style", css, re.IGNORECASE):
        raise BadInput(site_dir / "static" / "app.css", "holds </style, which would end the inlined style")
    favicon = favicon_data_url(site_dir / "static")
    script = bundle_script(site_dir / "static" / "js",
                           (site_dir / "single" / "boot.js").read_text(encoding="utf-8"))
    environment = template_environment(site_dir / "templates")
    environment.globals["single_file"] = True
    html = environment.get_template("single_file.html").render(
        index=index, page="single_file.html", root="", preview_rows=PREVIEW_ROWS, own=None, first=None,
        csp=single_file_csp(script, css), css=Markup(css), favicon=favicon,
        data=Markup(inline_data(files)), script=Markup(script),
    )
    return html.encode("utf-8"), run_count


def export_single_file(run_dirs: list[Path], out_file: Path, site_dir: Path | None = None,
                       redactor: Redactor | None = None,
                       task_index: TaskIndex | None = None, *, with_media: bool = True) -> dict:
    """Write the single self-contained HTML file (see :func:`build_single_file`) atomically.

    Returns:
        ``{"runs": int, "bytes": int, "out_file": str, "masked": int}``.

    Raises:
        BadInput: as :func:`build_single_file`, or ``out_file`` is a folder.
    """
    out_file = Path(out_file)
    if out_file.is_dir():
        raise BadInput(out_file, "--single-file wants a file path, this is a folder")
    data, run_count = build_single_file(run_dirs, site_dir, redactor, task_index, with_media=with_media)
    write_atomic(out_file, data)
    return {"runs": run_count, "bytes": len(data), "out_file": str(out_file),
            "masked": redactor.masked if redactor is not None else 0}
