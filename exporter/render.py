"""Render the site's pages from site/templates with jinja2 (autoescape on for every template)."""

from __future__ import annotations

import base64
import hashlib
import re
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import jinja2
import jinja2.ext
from markupsafe import Markup

from contract.errors import BadInput
from exporter.attempts import shown_k
from exporter.bundle import PAGE_ENTRIES, bundle_name, inlinable_minified, refuse_script_end
from exporter.gallery import paginate
from exporter.minified import version as minifier_version
from exporter.run_page import first_screen
from exporter.site_data import ATTEMPT_PREVIEW_ROWS

PAGES = tuple(PAGE_ENTRIES)
INLINED_SCRIPTS = ("prefetch-run.js", "file-notice.js", "run-page-start.js")
"""The scripts of site/static/ the pages inline (:func:`inline_script`)."""
"""The pages rendered from the index (each loads its bundle, :mod:`exporter.bundle`)."""
FOOTER_FIELDS = ("generated_by", "version")
"""What a failure kind's page shows of the index (its footer)."""
PREVIEW_ROWS = 50
"""Run rows index.html carries as plain HTML (the whole list comes from data/ via home.js)."""


def format_reward(value: Any) -> str:
    """A reward as text with 4 decimals ("0.4215"); anything not a number as an em dash."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return "\u2014"
    return f"{value:.4f}"


def format_rate(value: Any) -> str:
    """A rate in 0..1 as a whole percentage ("67%")."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return "\u2014"
    return f"{value * 100:.0f}%"


def run_label(run_id: str, task_id: str) -> str:
    """What the home page's run column shows of a run id: the id after its task's id and ``__``
    (``oracle__s0__95cc501749``) when it starts so, else the whole id. The task has its own
    column, and a column cut at its end showed rows of one task and policy as the same text;
    the link's title keeps the whole id (site/static/js/lib/format.js ``runLabel`` alike)."""
    prefix = f"{task_id}__"
    return run_id[len(prefix):] if run_id.startswith(prefix) and len(run_id) > len(prefix) else run_id


class _TolerantBytecodeCache(jinja2.FileSystemBytecodeCache):
    """jinja2's FileSystemBytecodeCache, where a damaged or unreadable file is a miss (the
    template is compiled again and the file rewritten), never an error: jinja2 checks the
    file's magic header, then unpickles and unmarshals the rest, which a truncated file fails."""

    def load_bytecode(self, bucket: jinja2.bccache.Bucket) -> None:
        try:
            super().load_bytecode(bucket)
        except Exception:  # noqa: BLE001 - whatever a damaged file raises (pickle, marshal, EOF, OS)
            bucket.reset()


KEPT_AS_WRITTEN = re.compile(r"<(pre|textarea|script|style)\b", re.IGNORECASE)


class UnindentedLines(jinja2.ext.Extension):
    """Drops each template line's indentation before jinja2 compiles it: the pages are the
    templates' markup, and their indentation was 5% of the run page (1.4 of 25.3 kB) and 6.5%
    of the home page. A line break stays, so text and inline elements keep the space between
    them; after a line ending in a tag whose line break ``trim_blocks`` removes (``%}``, ``#}``)
    the indentation was the only space there, and one space is kept. Lines inside an element
    whose whitespace is kept (``pre``, ``textarea``, ``script``, ``style``) opened on an earlier
    line and not yet closed are left as written; values put in by ``{{ }}`` are never touched."""

    def preprocess(self, source: str, name: str | None, filename: str | None = None) -> str:
        out, kept, previous = [], None, ""
        for line in source.split("\n"):
            out.append(line if kept else _unindented(line, previous))
            previous = line
            lower, at = line.lower(), 0
            while True:  # the elements this line opens and closes, in order
                if kept is None:
                    opened = KEPT_AS_WRITTEN.search(line, at)
                    if opened is None:
                        break
                    kept, at = opened.group(1).lower(), opened.end()
                else:
                    closed = lower.find(f"</{kept}", at)
                    if closed < 0:
                        break
                    kept, at = None, closed + 2
        return "\n".join(out)


def _unindented(line: str, previous: str) -> str:
    """``line`` without its indentation (:class:`UnindentedLines`), given the line before it."""
    text = line.lstrip(" \t")
    if text == line or text.startswith(("{%", "{#")):  # lstrip_blocks drops it before a tag anyway
        return text
    return f" {text}" if previous.rstrip().endswith(("%}", "#}")) else text


COMPILED_FORM = "unindented-2"
"""Part of the compiled templates' folder name: jinja2 keys a compiled template by its source
alone, so templates compiled by another form of :class:`UnindentedLines` are kept apart."""


def template_environment(templates_dir: Path, bytecode: Path | None = None) -> jinja2.Environment:
    """A jinja2 environment over ``templates_dir``: autoescape on for all templates, strict
    undefined, each line's indentation dropped (:class:`UnindentedLines`); with ``bytecode`` (a
    folder), compiled templates are kept there between runs (jinja2's FileSystemBytecodeCache,
    keyed by each template's source checksum, under :data:`COMPILED_FORM`)."""
    cache = None
    if bytecode is not None:
        try:
            (bytecode / COMPILED_FORM).mkdir(parents=True, exist_ok=True)
            cache = _TolerantBytecodeCache(str(bytecode / COMPILED_FORM))
        except OSError:
            cache = None
    environment = jinja2.Environment(
        bytecode_cache=cache,
        loader=jinja2.FileSystemLoader(str(templates_dir)),
        autoescape=True,
        extensions=[UnindentedLines],
        undefined=jinja2.StrictUndefined,
        keep_trailing_newline=True,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    environment.filters["reward"] = format_reward
    environment.filters["rate"] = format_rate
    environment.filters["shown_k"] = shown_k
    environment.filters["run_label"] = run_label
    environment.globals["single_file"] = False
    environment.globals["attempt_preview_rows"] = ATTEMPT_PREVIEW_ROWS
    return environment


def templates_digest(templates_dir: Path) -> str:
    """sha256 over every file the pages are rendered from: the templates, the icon and the
    inlined scripts (with the jinja2 and minifier versions): a page made from the same data by
    the same files is the same bytes."""
    digest = hashlib.sha256(jinja2.__version__.encode() + minifier_version().encode())
    static = templates_dir.parent / "static"
    sources = sorted(p for p in templates_dir.rglob("*") if p.is_file())
    for path in [*sources, static / "favicon.svg", *(static / name for name in INLINED_SCRIPTS)]:
        digest.update(str(path.relative_to(templates_dir.parent)).encode() + b"\0")
        digest.update(path.read_bytes() if path.is_file() else b"(missing)")
    return digest.hexdigest()


def favicon_data_url(static_dir: Path) -> str:
    """The site icon (``static_dir/favicon.svg``) as a ``data:`` URL the pages inline.

    Raises:
        BadInput: the icon file is missing.
    """
    path = static_dir / "favicon.svg"
    if not path.is_file():
        raise BadInput(path, "site icon not found")
    return "data:image/svg+xml;base64," + base64.b64encode(path.read_bytes()).decode()


def inline_script(static_dir: Path, name: str) -> tuple[Markup, str]:
    """``static_dir/name``, minified (exporter/minified.py; as written when the minified form
    would end the element where the source did not), as the text of an inline ``<script>`` and
    its CSP source (``'sha256-<base64>'``, CSP Level 2 hash-source), so the page runs it without
    a request.

    Raises:
        BadInput: the file is missing, cannot be parsed or holds ``</script`` or ``<!--`` (it
            would end or change the element).
    """
    path = static_dir / name
    if not path.is_file():
        raise BadInput(path, "script not found")
    text = inlinable_minified(path, path.read_text(encoding="utf-8"))
    refuse_script_end(path, text)
    return Markup(text), csp_hash(text)


def csp_hash(text: str) -> str:
    """The CSP hash-source of an inline script or style's text: ``'sha256-<base64 digest>'``
    (CSP Level 2, section 4.2.4)."""
    return "'sha256-" + base64.b64encode(hashlib.sha256(text.encode("utf-8")).digest()).decode() + "'"


def _render(environment: jinja2.Environment, templates_dir: Path, name: str, **context: Any) -> bytes:
    try:
        html = environment.get_template(name).render(**context)
    except jinja2.TemplateError as err:
        raise BadInput(templates_dir / name, f"template error: {err}") from None
    return html.encode("utf-8")


def page_environment(templates_dir: Path, bytecode: Path | None = None) -> jinja2.Environment:
    """:func:`template_environment` with what every page inlines (the icon, the prefetch and
    file-notice scripts and their CSP hashes) as globals.

    Raises:
        BadInput: the templates folder, the icon or an inlined script is missing.
    """
    if not templates_dir.is_dir():
        raise BadInput(templates_dir, "templates folder not found")
    environment = template_environment(templates_dir, bytecode)
    environment.globals["favicon"] = favicon_data_url(templates_dir.parent / "static")
    environment.globals["prefetch_script"], environment.globals["prefetch_hash"] = inline_script(
        templates_dir.parent / "static", "prefetch-run.js")
    # every page: opened from disk (file://), say to serve the site instead of showing nothing
    environment.globals["file_notice_script"], environment.globals["file_notice_hash"] = inline_script(
        templates_dir.parent / "static", "file-notice.js")
    # a run's own page: the first step's mark and, after the frame that shows it, the bundle
    environment.globals["start_script"], environment.globals["start_hash"] = inline_script(
        templates_dir.parent / "static", "run-page-start.js")
    return environment


def render_pages(
    templates_dir: Path, index: dict[str, Any], gallery: dict[str, Any] | None = None,
    reuse: Callable[[str, dict[str, Any]], bool] | None = None, bytecode: Path | None = None,
) -> Iterator[tuple[str, bytes]]:
    """Every page as ``(relative path, UTF-8 bytes)``, made one at a time as the caller takes
    them (a site's gallery pages grow with its runs: none is held after it is taken).

    index.html (runs, leaderboard), run.html and compare.html get the ``index`` document
    (data/index.json) as ``index``; run.html and compare.html are shells that static/js fills
    from data/ at view time. With ``gallery`` (exporter.export_shared's, from the runs' records), also
    the gallery's pages (:func:`render_gallery_pages`, which gets ``reuse``). ``bytecode``: as
    :func:`template_environment`'s.

    Raises:
        BadInput: the templates folder is missing or a template cannot be loaded or rendered.
    """
    environment = page_environment(templates_dir, bytecode)
    for name in PAGES:
        yield name, _render(
            environment, templates_dir, name, index=index, page=name, root="", preview_rows=PREVIEW_ROWS,
            bundle=bundle_name(name), own=None, first=None,
        )
    if gallery is not None:
        yield from render_gallery_pages(templates_dir, gallery, {key: index[key] for key in FOOTER_FIELDS},
                                        reuse, environment)


def run_page_path(run_id: str) -> str:
    """A run's own page in the site: ``runs/<run id>.html`` (site/static/js/lib/dom.js
    ``runPagePath``; run ids are file names already, as in ``data/runs/``)."""
    return f"runs/{run_id}.html"


def inline_styles(path: Path, stylesheet: bytes) -> dict[str, Any]:
    """``stylesheet`` (the site's copy of ``path``) as the text of an inline ``<style>`` and its
    CSP source: ``{"text", "hash"}`` (``'sha256-<base64>'``, as :func:`csp_hash`).

    Raises:
        BadInput: the text holds ``</style`` (it would end the element).
    """
    text = stylesheet.decode("utf-8")
    if "</style" in text.lower():
        raise BadInput(path, "the stylesheet holds '</style', which would end an inline <style> element")
    return {"text": Markup(text), "hash": csp_hash(text)}


def render_run_page(environment: jinja2.Environment, templates_dir: Path, head: dict[str, Any],
                    footer: dict[str, Any], styles: dict[str, Any]) -> bytes:
    """A run's own page (:func:`run_page_path`) from its head (``contract.site.RunHead`` as JSON
    values) and ``footer`` (the index's :data:`FOOTER_FIELDS`) with ``environment``
    (:func:`page_environment`): run.html with the run named in the page and, when
    :func:`exporter.run_page.first_screen` writes one, its first step in the HTML and its
    stylesheet inlined (``styles``: :func:`inline_styles` of static/run.css).

    Raises:
        BadInput: the template cannot be loaded or rendered.
    """
    return _render(environment, templates_dir, "run.html", index=footer, page=run_page_path(head["run_id"]),
                   root="../", bundle=bundle_name("run.html"), own={"run_id": head["run_id"]},
                   first=first_screen(head), styles=styles)


def render_gallery_pages(
    templates_dir: Path, gallery: dict[str, Any], footer: dict[str, Any],
    reuse: Callable[[str, dict[str, Any]], bool] | None, environment: jinja2.Environment,
) -> Iterator[tuple[str, bytes]]:
    """The failure gallery's pages as ``(relative path, UTF-8 bytes)``, rendered from
    ``gallery`` and ``footer`` (the index's :data:`FOOTER_FIELDS`, all these pages show of it)
    alone with ``environment`` (:func:`page_environment`): ``gallery/index.html``, then
    ``gallery/<axis>-<slug>.html`` (split into ``.p<n>.html`` parts past
    :data:`exporter.gallery.EXAMPLES_PER_PAGE` examples) per family, kind and cause, and per
    penalty kind and outcome of episode runs (``gallery["penalties"]``, ``gallery["outcomes"]``,
    :mod:`exporter.gallery_episodes`), with ``root = "../"`` so their links reach the site's
    top. A kind's page is rendered from its part (:func:`exporter.gallery.paginate`) and
    ``footer``, so ``reuse(file, part)`` (an incremental export) may answer True to leave it
    out: the caller has it already.

    Raises:
        BadInput: a template cannot be loaded or rendered.
    """
    yield "gallery/index.html", _render(
        environment, templates_dir, "gallery_index.html",
        index=footer, page="gallery/index.html", root="../", gallery=gallery,
    )
    kinds = [*gallery["families"], *gallery["kinds"], *(gallery.get("causes") or []),
             *(gallery.get("penalties") or []), *(gallery.get("outcomes") or [])]
    for gallery_page in [part for kind in kinds for part in paginate(kind)]:
        if reuse is not None and reuse(gallery_page["file"], {**gallery_page, "footer": footer}):
            continue
        yield gallery_page["file"], _render(
            environment, templates_dir, "gallery_page.html",
            index=footer, page=gallery_page["file"], root="../", gallery_page=gallery_page,
        )
