"""Bundle the viewer's ES modules (site/static/js) into generated scripts: per page, one file
with every module the first paint needs and one with the modules it loads later; and, for the
single exported file, one script with all of them.

Why a generated bundle and not a preloaded module graph: a static host answers one request per
file, and the run page's first paint needs twelve modules; ``<link rel="modulepreload">`` starts
them together but still costs twelve requests. The bundle is written by the exporter from the
same sources (no build step, no Node), so the modules stay the code that is edited and tested.

A bundle is an ES module script. Each source module becomes a function registered by its id
(its path under static/js/, ``lib/dom.js``) in ``globalThis.__alertforgeModules`` and is
evaluated on its first ``__require`` (dependencies first, as its import lines come first); a
lazy ``import("./x.js")`` becomes ``__lazy("x.js")``: a promise of the module, which loads the
file holding it (one of the page's chunks, :data:`PAGE_CHUNKS`, else its later bundle
``<page>.later.js``, next to the first one) the first time a module not yet registered is asked
for. Each module's registration and the loader are minified (exporter/minified.py, a parsing
minifier: the run page's first bundle went from 69.5 to 42 kB); the modules' whole-line comments
are left out before (:func:`without_comments`), so that no comment line is read as an import.
"""

from __future__ import annotations

import hashlib
import posixpath
import re
from pathlib import Path

import orjson

from contract.errors import BadInput
from contract.files import write_atomic
from exporter.minified import CSS, JS, minified
from exporter.minified import version as minifier_version
from exporter.stylesheets import split_stylesheet

IMPORT_LINE = re.compile(r'^import \{([^}]*)\} from "(\.\.?/[\w./-]+\.js)";\s*$', re.MULTILINE)
EXPORT_DECLARATION = re.compile(r"^export ((?:async )?function\*? |const |let |class )([\w$]+)", re.MULTILINE)
DYNAMIC_IMPORT = re.compile(r'\bimport\(\s*"(\.\.?/[\w./-]+\.js)"\s*\)')
IMPORT_FROM = re.compile(r'^import [^;]*? from "(\.\.?/[\w./-]+\.js)";', re.MULTILINE)
BUNDLE_FOLDER = "static/bundles"
"""Where the page bundles are written in the site (``static/bundles/run.js``, ``run.later.js``)."""

REGISTRY = (
    "const __registry = globalThis.__alertforgeModules || (globalThis.__alertforgeModules = "
    "{ modules: Object.create(null), cache: Object.create(null), loading: Object.create(null) });\n"
)
LOADER = REGISTRY + (
    "function __require(name) {\n"
    "  const cache = __registry.cache;\n"
    "  if (!(name in cache)) {\n"
    "    if (!(name in __registry.modules)) throw new Error(`module ${name} is not in this bundle`);\n"
    "    cache[name] = __registry.modules[name](__require, __lazy);\n"
    "  }\n"
    "  return cache[name];\n"
    "}\n"
)
PAGE_LAZY = (
    "const __chunks = __CHUNKS;\n"
    "function __lazy(name) {\n"
    "  if (name in __registry.modules) return Promise.resolve().then(() => __require(name));\n"
    "  const file = __chunks[name] || __LATER;\n"
    "  __registry.loading[file] = __registry.loading[file] || import(file);\n"
    "  return __registry.loading[file].then(() => __require(name));\n"
    "}\n"
)
SINGLE_LAZY = "function __lazy(name) {\n  return Promise.resolve().then(() => __require(name));\n}\n"


def module_id(importer: str, specifier: str) -> str | None:
    """The id (path under static/js/, ``lib/dom.js``) of the module that module ``importer``
    imports as ``specifier`` (``../lib/dom.js``, ``./scenario.js``); None when it leaves static/js/."""
    resolved = posixpath.normpath(posixpath.join(posixpath.dirname(importer), specifier))
    return None if resolved.startswith("../") or resolved == ".." else resolved


def _reachable(js_dir: Path, starts: list[str], patterns: tuple[re.Pattern[str], ...]) -> set[str]:
    """The ids of ``starts`` and of every module they reach through imports ``patterns`` match
    (each pattern's group 1 is the specifier); paths leaving static/js/ are not followed."""
    seen: set[str] = set()
    pending = list(starts)
    while pending:
        name = pending.pop()
        path = js_dir / name
        if name in seen or not path.is_file():
            continue
        seen.add(name)
        source = path.read_text(encoding="utf-8")
        for pattern in patterns:
            for specifier in pattern.findall(source):
                imported = module_id(name, specifier)
                if imported is not None:
                    pending.append(imported)
    return seen


def module_graph(js_dir: Path, entry: str) -> list[str]:
    """Every module ``entry`` imports statically, directly or not, as ids (:func:`module_id`)
    sorted by name (``entry`` itself excluded): what ``entry``'s page bundle holds."""
    return sorted(_reachable(js_dir, [entry], (IMPORT_FROM,)) - {entry})


def transform_module(name: str, source: str) -> tuple[str, list[str]]:
    """An ES module's source as a function body for a bundle, and the names it exports.

    ``name`` is the module's id, its path under static/js/ (``pages/run.js``). Supports the
    forms the viewer uses: ``import { a, b as c } from "../lib/x.js";``,
    ``export function|async function|const|let|class name`` and ``import("./x.js")`` (a lazy
    import, which becomes ``__lazy(id)``, a promise of the bundled module); a relative path is
    resolved from ``name``'s folder to the imported module's id (:func:`module_id`).

    Raises:
        BadInput: any other ``import`` or ``export`` statement, or a path that leaves
            static/js/ (names the module).
    """
    exported = [match.group(2) for match in EXPORT_DECLARATION.finditer(source)]

    def resolved(specifier: str) -> str:
        imported = module_id(name, specifier)
        if imported is None:
            raise BadInput(Path(name), f"imports a module outside static/js: {specifier}")
        return orjson.dumps(imported).decode()

    def require(match: re.Match[str]) -> str:
        names = [part.strip() for part in match.group(1).split(",") if part.strip()]
        bindings = ", ".join(part.replace(" as ", ": ") for part in names)
        return f"const {{ {bindings} }} = __require({resolved(match.group(2))});"

    body = IMPORT_LINE.sub(require, source)
    body = DYNAMIC_IMPORT.sub(lambda match: f"__lazy({resolved(match.group(1))})", body)
    body = EXPORT_DECLARATION.sub(lambda match: match.group(1) + match.group(2), body)
    leftover = re.search(r"^\s*(import|export)\b.*$|\bimport\(\s*[\"'`].*$", body, re.MULTILINE)
    if leftover:
        raise BadInput(Path(name), f"module syntax the bundle does not support: {leftover.group(0)}")
    return f"{body}\nreturn {{ {', '.join(exported)} }};", exported


COMMENT_LINE = re.compile(r"^\s*//")


def _comment_lines(lines: list[str]) -> set[int]:
    """The indexes of ``lines`` that hold a comment alone: ``//`` lines and ``/* ... */`` blocks
    that open at a line's start and close at a line's end (a block with code after its close is kept)."""
    dropped: set[int] = set()
    index = 0
    while index < len(lines):
        if COMMENT_LINE.match(lines[index]):
            dropped.add(index)
        elif lines[index].lstrip().startswith("/*"):
            end = next((at for at in range(index, len(lines)) if "*/" in lines[at]), None)
            if end is None:
                break
            if lines[end].rstrip().endswith("*/") and lines[end].count("*/") == 1:
                dropped.update(range(index, end + 1))
            index = end
        index += 1
    return dropped


def without_comments(source: str) -> str:
    """A module's source without its whole-line comments (:func:`_comment_lines`), so that
    :func:`transform_module` reads no comment line as an import or export (the minifier drops
    the rest). Code lines stay as they are, a comment after code too. A module with a template
    literal over several lines (a code line with an odd number of backticks) is left whole: a
    line inside it that looks like a comment is text."""
    lines = source.split("\n")
    dropped = _comment_lines(lines)
    if any(line.count("`") % 2 for at, line in enumerate(lines) if at not in dropped):
        return source
    return "\n".join(line for at, line in enumerate(lines) if at not in dropped)


def _registrations(js_dir: Path, names: list[str]) -> str:
    """Each module of ``names`` (ids under ``js_dir``) registered as a function, minified
    (:func:`inlinable_minified`: unminified where minifying would make a script end), a line each.

    Raises:
        BadInput: a module is missing, uses syntax :func:`transform_module` does not support or
            cannot be parsed (names the module, and the line and column in its own file).
    """
    parts = []
    for name in names:
        path = js_dir / name
        if not path.is_file():
            raise BadInput(path, "module not found (imported by the viewer)")
        source = path.read_text(encoding="utf-8")
        body, _ = transform_module(name, without_comments(source))
        registration = (f"__registry.modules[{orjson.dumps(name).decode()}] = "
                        f"function (__require, __lazy) {{\n{body}\n}};")
        parts.append(inlinable_minified(path, source, registration) + "\n")
    return "".join(parts)


def inlinable_minified(path: Path, source: str, text: str | None = None) -> str:
    """``text`` (made from ``source``, the content of ``path``; ``source`` itself when None)
    minified, or as it is when its minified form would hold ``</script`` or ``<!--``
    (:data:`SCRIPT_END`) where ``source`` does not: the minifier writes ``"\\x3c/script>"`` as
    the text it stands for, which would stop the script being inlined.

    Raises:
        BadInput: the minifier cannot parse it; when ``text`` is not ``source``, the position
            given is ``source``'s in its own file when it is ``source`` that does not parse.
    """
    text = source if text is None else text
    try:
        out = minified(path, text, JS)
    except BadInput:
        if text is not source:
            minified(path, source, JS)  # the file as written: the error's line is in it
        raise
    return text if SCRIPT_END.search(out) and not SCRIPT_END.search(source) else out


def _loader(js_dir: Path, text: str) -> str:
    """A bundle's loader code (:data:`LOADER` and the rest), minified, ending in a new line."""
    return minified(js_dir, text, JS) + "\n"


PAGE_CHUNKS: dict[str, dict[str, tuple[str, ...]]] = {
    "run": {
        "episode": ("components/episode.js",),
        "atif": ("components/model-turn.js", "components/atif-parts.js", "components/trial-panel.js"),
    },
}
"""Per page bundle, the modules it imports lazily that only some of its documents need, by chunk
name: each chunk is a file of its own (``static/bundles/run.episode.js``), loaded when the page
asks for one of its modules (pages/run.js: an episode's board once the head says the run is an
episode; a model's turns, ATIF parts and a Harbor trial once the run has any), so an alerting
run's first step loads neither. Every other lazily imported module is in ``<page>.later.js``."""


def _lazy_roots(js_dir: Path, names: list[str]) -> set[str]:
    """The ids ``names``' modules import lazily (``import("./x.js")``), directly."""
    roots: set[str] = set()
    for name in names:
        path = js_dir / name
        if path.is_file():
            roots.update(filter(None, (module_id(name, specifier)
                                       for specifier in DYNAMIC_IMPORT.findall(path.read_text(encoding="utf-8")))))
    return roots


def _chunk_modules(js_dir: Path, page: str, first: list[str]) -> tuple[list[str], dict[str, list[str]]]:
    """The page's later modules and each chunk's (:data:`PAGE_CHUNKS`), every one in exactly
    one file: a chunk holds its roots and what they import statically that the first bundle
    lacks; the later file what the page imports lazily otherwise.

    Raises:
        BadInput: a chunk root is not imported lazily by the first bundle, or a chunk's modules
            reach (statically or lazily) a module of the later file or of another chunk.
    """
    chunks = PAGE_CHUNKS.get(page, {})
    roots = _lazy_roots(js_dir, first)
    held = {root for chunk_roots in chunks.values() for root in chunk_roots}
    for root in sorted(held - roots):
        raise BadInput(js_dir / root, f"is a chunk of the {page} page but no module of its first bundle imports it lazily")
    later = sorted(_reachable(js_dir, sorted(roots - held), (IMPORT_FROM, DYNAMIC_IMPORT)) - set(first))
    taken = set(first) | set(later)
    files: dict[str, list[str]] = {}
    for chunk, chunk_roots in chunks.items():
        modules = _reachable(js_dir, list(chunk_roots), (IMPORT_FROM, DYNAMIC_IMPORT)) - set(first)
        if modules & taken:
            raise BadInput(js_dir / chunk_roots[0], f"the {chunk} chunk would share modules with another bundle file: "
                           + ", ".join(sorted(modules & taken)))
        taken |= modules
        files[chunk] = sorted(modules)
    return later, files


def page_bundles(js_dir: Path, entry: str, page: str) -> dict[str, bytes]:
    """A page's bundle files as ``{site path: bytes}``: ``static/bundles/<page>.js``, its chunks
    (``<page>.<chunk>.js``, :data:`PAGE_CHUNKS`) and ``<page>.later.js`` (only when the page
    imports lazily).

    ``entry`` is the page's entry module id (``pages/run.js``), ``page`` the bundle's name
    (``run``). The first file holds ``entry`` and every module it imports statically
    (:func:`module_graph`) and the map of which file holds each chunk's modules, then runs
    ``entry``; the other files register their modules (:func:`_chunk_modules`) and run nothing.

    Raises:
        BadInput: a module is missing or uses syntax :func:`transform_module` does not support;
            a chunk as :func:`_chunk_modules` refuses it.
    """
    first = [entry, *module_graph(js_dir, entry)]
    later, chunks = _chunk_modules(js_dir, page, first)
    where = {name: f"./{page}.{chunk}.js" for chunk, names in chunks.items() for name in names}
    head = _loader(js_dir, LOADER + (PAGE_LAZY.replace("__LATER", orjson.dumps(f"./{page}.later.js").decode())
                                    .replace("__CHUNKS", orjson.dumps(where, option=orjson.OPT_SORT_KEYS).decode())))
    registry = _loader(js_dir, REGISTRY)
    files = {f"{BUNDLE_FOLDER}/{page}.js":
             head + _registrations(js_dir, first) + f"__require({orjson.dumps(entry).decode()});\n"}
    if later:
        files[f"{BUNDLE_FOLDER}/{page}.later.js"] = registry + _registrations(js_dir, later)
    for chunk, names in chunks.items():
        files[f"{BUNDLE_FOLDER}/{page}.{chunk}.js"] = registry + _registrations(js_dir, names)
    return {path: text.encode("utf-8") for path, text in files.items()}


def bundle_script(js_dir: Path, entry: str) -> str:
    """Every module of ``js_dir`` (its subfolders too, each by its id: ``lib/dom.js``) as one
    script for the single exported file, followed by ``entry`` (source text run as is).

    Modules are evaluated on first ``__require`` (so only the chosen view's module runs its
    main); lazy imports resolve from the same script.

    Raises:
        BadInput: a module uses unsupported syntax, or the script holds ``</script`` or ``<!--``.
    """
    names = [path.relative_to(js_dir).as_posix() for path in sorted(js_dir.rglob("*.js"))]
    script = _loader(js_dir, LOADER + SINGLE_LAZY) + _registrations(js_dir, names) + entry
    refuse_script_end(js_dir, script)
    return script


SCRIPT_END = re.compile(r"</script|<!--", re.IGNORECASE)
"""What would end an inline ``<script>`` element or change how its text is parsed (HTML
Standard, "restrictions for contents of script elements")."""


def refuse_script_end(path: Path, script: str) -> None:
    """Raise BadInput naming ``path`` when ``script`` holds ``</script`` or ``<!--`` (SCRIPT_END),
    so it cannot be inlined into a page as the text of a ``<script>``."""
    if SCRIPT_END.search(script):
        raise BadInput(path, "holds </script or <!--, which would end the inlined script")


PAGE_ENTRIES = {"index.html": "pages/home.js", "run.html": "pages/run.js", "compare.html": "pages/compare.js"}
"""Each page with scripts (exporter.render renders these) and its entry module; the page's
bundle is named for the entry (:func:`bundle_name`)."""


STATIC_PAGE_BUNDLES = {"gallery": "pages/gallery.js"}
"""Bundles of pages rendered whole at export (the failure gallery's), by bundle name: only
live updates under ``alertforge view`` run there."""


def bundle_name(page: str) -> str:
    """The bundle of ``page`` (a :data:`PAGE_ENTRIES` key): its entry module's stem (``run``
    for run.html, so ``static/bundles/run.js``)."""
    return posixpath.splitext(posixpath.basename(PAGE_ENTRIES[page]))[0]


STYLESHEET = "static/app.css"
"""The stylesheet's source; the site gets it whole and cut (exporter/stylesheets.py), minified."""


def page_assets(static_dir: Path, cache: Path | None = None) -> dict[str, bytes]:
    """What the pages load, as ``{site path: bytes}``: every page's bundles
    (:func:`page_bundles`) and the stylesheets cut from :data:`STYLESHEET`
    (exporter/stylesheets.py), all minified (the sources stay as they are; the site's copies
    of static/js/ are kept for anything that imports a module).
    With ``cache`` (a folder, the export cache's), the result is kept there under the sha256
    of everything it is made from (:func:`_assets_key`) and read back while that holds: an
    incremental export does not bundle again.

    Raises:
        BadInput: a module or static file is missing, a module's syntax is not supported or
            the stylesheet's regions are not well formed.
    """
    if cache is None:
        return _make_page_assets(static_dir)
    path = cache / f"{_assets_key(static_dir)}.json"
    kept = _kept_assets(path)
    if kept is not None:
        return kept
    files = _make_page_assets(static_dir)
    try:
        cache.mkdir(parents=True, exist_ok=True)
        texts = {relative: data.decode("utf-8") for relative, data in files.items()}
        write_atomic(path, orjson.dumps({"sha256": _texts_digest(texts), "files": texts}))
        for other in cache.glob("*.json"):  # one set kept: the folder does not grow as the sources change
            if other != path:
                other.unlink(missing_ok=True)
    except OSError:
        pass  # best effort: the next export bundles again
    return files


def _kept_assets(path: Path) -> dict[str, bytes] | None:
    """The page assets kept at ``path`` when the file holds them as written (``{sha256,
    files}``, the digest of the files matching), else None: damage is a miss, never a site
    with a wrong or missing bundle."""
    try:
        kept = orjson.loads(path.read_bytes())
        texts = kept["files"]
        if (isinstance(texts, dict) and texts and all(isinstance(v, str) for v in texts.values())
                and kept["sha256"] == _texts_digest(texts)):
            return {relative: text.encode("utf-8") for relative, text in texts.items()}
    except (OSError, ValueError, TypeError, KeyError):
        pass
    return None


def _texts_digest(texts: dict[str, str]) -> str:
    return hashlib.sha256(orjson.dumps(texts, option=orjson.OPT_SORT_KEYS)).hexdigest()


def _assets_key(static_dir: Path) -> str:
    """sha256 over what :func:`page_assets` reads: this module's, exporter/minified.py's and
    exporter/stylesheets.py's sources, the minifier's version and every file under
    ``static_dir`` (path and bytes)."""
    here = Path(__file__).parent
    digest = hashlib.sha256(b"".join((here / name).read_bytes() for name in ("bundle.py", "minified.py", "stylesheets.py"))
                            + minifier_version().encode())
    for path in sorted(p for p in static_dir.rglob("*") if p.is_file()):
        digest.update(path.relative_to(static_dir).as_posix().encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()


def _make_page_assets(static_dir: Path) -> dict[str, bytes]:
    files: dict[str, bytes] = {}
    for page, entry in PAGE_ENTRIES.items():
        files.update(page_bundles(static_dir / "js", entry, bundle_name(page)))
    for name, entry in STATIC_PAGE_BUNDLES.items():
        files.update(page_bundles(static_dir / "js", entry, name))
    path = static_dir / STYLESHEET.removeprefix("static/")
    if not path.is_file():
        raise BadInput(path, "static file not found")
    for relative, text in split_stylesheet(path, path.read_text(encoding="utf-8")).items():
        files[relative] = minified(path, text, CSS).encode("utf-8")
    return files
