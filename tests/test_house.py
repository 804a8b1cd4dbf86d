"""The house rules (issue 13): module and function sizes, no package cycles, the CLI on top,
one job per module, and a layout map (docs/layout.md) that matches the tracked files.

Sizes: no module over 500 lines, no function over 80 (Python from ``def`` to its last line,
nested functions counted in their parent; JavaScript a ``function``, method or arrow body,
found by matching braces outside strings and comments), outside tests/.
"""

from __future__ import annotations

import ast
import re
import subprocess
from collections import defaultdict
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
MAX_MODULE_LINES = 500
MAX_FUNCTION_LINES = 80
STAGES = ("contract", "engine", "grader", "recorder", "exporter", "proofs", "tasks")
PACKAGES = ("alertforge", *STAGES)
EXCEPTIONS: dict[str, str] = {}
"""Path (or ``path::function``) -> why it may exceed a limit. Empty: no exception."""


def _tracked(*patterns: str) -> list[Path]:
    """Tracked and not yet tracked source files (git ls-files), outside tests/ and the
    generated task folders."""
    out = subprocess.run(["git", "ls-files", "--cached", "--others", "--exclude-standard", "--",
                          *patterns], cwd=ROOT, capture_output=True, text=True, check=True).stdout
    return [ROOT / name for name in out.split()
            if not name.startswith(("tests/", "space/")) and not re.match(r"tasks/af-", name)
            and (ROOT / name).is_file()]


PYTHON = _tracked("*.py")
JAVASCRIPT = _tracked("site/*.js")


def _rel(path: Path) -> str:
    return path.relative_to(ROOT).as_posix()


def python_function_sizes(path: Path) -> list[tuple[str, int]]:
    """``(qualified name, lines)`` of every function and method in a Python file."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    sizes = []

    def visit(node: ast.AST, prefix: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
                name = f"{prefix}{child.name}"
                sizes.append((name, child.end_lineno - child.lineno + 1))
                visit(child, name + ".")
            elif isinstance(child, ast.ClassDef):
                visit(child, f"{prefix}{child.name}.")
            else:
                visit(child, prefix)

    visit(tree, "")
    return sizes


_CONTROL = {"if", "for", "while", "switch", "catch", "with", "else", "do", "try", "finally"}
_METHOD = re.compile(r"(?:^|[\s;])(?:static\s+)?(?:async\s+)?(?:get\s+|set\s+)?\*?([A-Za-z_$][\w$]*)\s*\([^()]*(?:\([^()]*\)[^()]*)*\)\s*$")


def _code_only(text: str) -> str:
    """JavaScript with comments, strings and template texts blanked (newlines kept), so
    braces can be matched."""
    out, i, n = [], 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            out.append(" " * (j - i))
            i = j
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
        elif c in "'\"`":
            j = i + 1
            while j < n and text[j] != c:
                j += 2 if text[j] == "\\" else 1
            out.append(c + re.sub(r"[^\n]", " ", text[i + 1:j]) + c)
            i = j + 1
        else:
            out.append(c)
            i += 1
    return "".join(out)


def javascript_function_sizes(path: Path) -> list[tuple[str, int]]:
    """``(name, lines)`` of every function, method and arrow body with braces in a JS file."""
    code = _code_only(path.read_text(encoding="utf-8"))
    sizes, stack = [], []
    for match in re.finditer(r"[{}]", code):
        if match.group() == "{":
            head = code[:match.start()]
            header = re.split(r"[;{}]", head)[-1]
            line = head.count("\n") + 1
            name = None
            if re.search(r"=>\s*$", header):
                name = "arrow"
            elif re.search(r"\bfunction\b", header):
                found = re.search(r"function\s*\*?\s*([\w$]*)", header)
                name = found.group(1) or "function"
            else:
                method = _METHOD.search(header)
                if method and method.group(1) not in _CONTROL:
                    name = method.group(1)
            stack.append((name, line))
        elif stack:
            name, line = stack.pop()
            if name is not None:
                sizes.append((f"{name}@{line}", code[:match.start()].count("\n") + 2 - line))
    return sizes


def test_no_module_over_500_lines():
    long = {_rel(p): n for p in PYTHON + JAVASCRIPT
            if (n := len(p.read_text(encoding="utf-8").splitlines())) > MAX_MODULE_LINES
            and _rel(p) not in EXCEPTIONS}
    assert long == {}


@pytest.mark.parametrize("kind", ["python", "javascript"])
def test_no_function_over_80_lines(kind):
    files, sizes_of = ((PYTHON, python_function_sizes) if kind == "python"
                       else (JAVASCRIPT, javascript_function_sizes))
    long = {f"{_rel(p)}::{name}": n for p in files for name, n in sizes_of(p)
            if n > MAX_FUNCTION_LINES and f"{_rel(p)}::{name}" not in EXCEPTIONS}
    assert long == {}


def test_the_size_checks_find_long_functions(tmp_path):
    """The checks above can fail: a long Python function and a long JS method are found."""
    body = "\n".join(f"    x{i} = {i}" for i in range(85))
    (tmp_path / "a.py").write_text(f"def long():\n{body}\n\n\ndef short():\n    return 1\n")
    assert dict(python_function_sizes(tmp_path / "a.py")) == {"long": 86, "short": 2}
    js = "\n".join(f"    const x{i} = '{{';  // }}" for i in range(85))
    (tmp_path / "a.js").write_text(f"class A {{\n  draw(rows) {{\n{js}\n  }}\n}}\n"
                                   "export const f = (a) => {\n  if (a) { return `${a}}`; }\n};\n")
    sizes = dict(javascript_function_sizes(tmp_path / "a.js"))
    assert sizes == {"draw@2": 87, "arrow@90": 3}


MODULES = {_rel(p)[:-3].replace("/", ".").removesuffix(".__init__") for p in PYTHON}


def imported_modules(source: str, module: str, is_package: bool,
                     modules: set[str] = MODULES) -> list[str]:
    """Every module name ``source`` (the text of ``module``) imports, in every form:
    ``import a.b``, ``from a import b`` (``a`` and, when ``a.b`` is a module, ``a.b``),
    relative imports resolved against ``module`` (a package's ``__init__`` is its own base),
    and imports inside functions."""
    names: list[str] = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            names += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = module.split(".") if is_package else module.split(".")[:-1]
                parts = parts[:len(parts) - (node.level - 1)]
                base = ".".join(parts + ([node.module] if node.module else []))
            names.append(base)
            names += [f"{base}.{alias.name}" for alias in node.names if f"{base}.{alias.name}" in modules]
    return [name for name in names if name]


def import_graph(depth: int) -> dict[str, set[str]]:
    """Which unit imports which (every import form, :func:`imported_modules`); a unit is the
    first ``depth`` parts of a module name (``tasks.generator`` counts as one part)."""
    def unit(name: str) -> str:
        parts = name.split(".")
        if parts[:2] == ["tasks", "generator"]:
            parts = ["tasks.generator", *parts[2:]]
        return ".".join(parts[:depth])

    graph: dict[str, set[str]] = defaultdict(set)
    for path in PYTHON:
        module = _rel(path)[:-3].replace("/", ".").removesuffix(".__init__")
        if module.split(".")[0] not in PACKAGES:
            continue
        for name in imported_modules(path.read_text(encoding="utf-8"), module, path.name == "__init__.py"):
            if name.split(".")[0] in PACKAGES and unit(name) != unit(module):
                graph[unit(module)].add(unit(name))
    return graph


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    cycles, state = [], {}

    def walk(node: str, path: list[str]) -> None:
        state[node] = "open"
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == "open":
                cycles.append(path[path.index(nxt):] + [nxt] if nxt in path else [node, nxt])
            elif nxt not in state:
                walk(nxt, path + [nxt])
        state[node] = "done"

    for node in sorted(graph):
        if node not in state:
            walk(node, [node])
    return cycles


@pytest.mark.parametrize("depth", [1, 2, 3, 4])
def test_no_import_cycle_between_packages(depth):
    """Top-level packages (depth 1), their subpackages and modules (2: recorder.agents,
    recorder.record, ...; 3: recorder.environments.aria, ...)."""
    graph = import_graph(depth)
    if depth == 1:
        graph = {unit: deps for unit, deps in graph.items()}
    else:  # within one package: a cycle through a package's __init__ is not one
        graph = {u: {d for d in deps if d.count(".") == u.count(".")} for u, deps in graph.items()}
    assert _cycles(graph) == []


def test_the_cycle_check_finds_a_cycle():
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == [["a", "b", "c", "a"]]


def test_the_import_graph_sees_a_from_package_import_module_cycle():
    """``from pkg import module`` inside a function and a relative ``from . import module``
    are imports of that module (the form a 5-module cycle in proofs/mutation hid behind)."""
    modules = {"pkg", "pkg.table", "pkg.family"}
    table = "def table():\n    from pkg import family\n"
    family = "from . import table\n"
    assert "pkg.family" in imported_modules(table, "pkg.table", False, modules)
    assert "pkg.table" in imported_modules(family, "pkg.family", False, modules)
    graph = {"pkg.table": {"pkg.family"}, "pkg.family": {"pkg.table"}}
    assert _cycles(graph) == [["pkg.family", "pkg.table", "pkg.family"]]
    assert imported_modules("from .. import x\n", "a.b.c", False, {"a.x"}) == ["a", "a.x"]


def test_the_cli_is_the_top_floor_and_contract_the_ground():
    graph = import_graph(1)
    assert {unit for unit, deps in graph.items() if "alertforge" in deps} == set()
    assert graph.get("contract", set()) == set()
    assert graph.get("grader", set()) <= {"contract"}, "the grader knows nothing of runs"
    assert graph.get("exporter", set()) <= {"contract", "engine"}, "the exporter reads files, not recorder code"
    assert graph.get("engine", set()) <= {"contract", "grader"}, "the engine runs work; it knows no stage's files"
    assert {unit for unit, deps in graph.items() if "proofs" in deps} <= {"alertforge", "bench"}, \
        "only the CLI and the benchmarks import the proofs"
    assert graph.get("proofs", set()) <= {"contract", "engine", "grader", "recorder", "tasks.generator"}
    assert "recorder" not in graph.get("grader", set()) and "proofs" not in graph.get("recorder", set())
    assert graph.get("tasks.generator", set()) <= {"contract"}


def test_every_module_says_its_one_job():
    """A module docstring whose first line says what the module does; no grab-bag names."""
    missing = []
    for path in PYTHON:
        text = path.read_text(encoding="utf-8")
        if not text.strip():
            continue
        doc = ast.get_docstring(ast.parse(text))
        if not doc or not doc.splitlines()[0].strip():
            missing.append(_rel(path))
    assert missing == []
    grab_bags = [_rel(p) for p in PYTHON + JAVASCRIPT
                 if re.fullmatch(r"(utils?|misc|common|helpers?|stuff|part\d+)", p.stem)]
    assert grab_bags == []


def _layout_paths() -> set[str]:
    text = (ROOT / "docs" / "layout.md").read_text(encoding="utf-8")
    return {m.rstrip("/") for m in re.findall(r"`([\w./-]+/?)`", text)
            if "/" in m or (ROOT / m.rstrip("/")).exists()}


def test_the_layout_map_names_every_source_folder():
    """docs/layout.md names every folder that holds tracked source (Python packages, site/
    folders, the stages), so a newcomer finds each one."""
    tracked = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True,
                             check=True).stdout.split()
    folders = {str(Path(name).parent) for name in tracked
               if name.endswith((".py", ".js", ".html", ".css"))
               and not name.startswith(("tests/", "tasks/af-", "space/"))} - {"."}
    assert sorted(folders - _layout_paths()) == []


def test_every_path_in_the_layout_map_exists():
    tracked = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True,
                             check=True).stdout.split()
    known = set(tracked) | {str(p) for name in tracked for p in Path(name).parents}
    assert sorted(p for p in _layout_paths() if p not in known) == []


def test_the_readme_is_a_front_door():
    """At most 250 lines (the reference lives in docs/, a MkDocs site); every page it links
    to exists, and every docs page is in mkdocs.yml's nav."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert readme.count("\n") <= 250
    links = re.findall(r"\]\((docs/[^)#]+)", readme)
    assert links and [link for link in links if not (ROOT / link).exists()] == []
    nav = (ROOT / "mkdocs.yml").read_text(encoding="utf-8")
    pages = sorted(p.relative_to(ROOT / "docs").as_posix() for p in (ROOT / "docs").rglob("*.md"))
    assert [page for page in pages if f": {page}" not in nav] == []


MAX_PARAMETERS = 8


def test_no_function_takes_more_than_8_parameters():
    """Past 8, a function takes an option object (a dataclass) instead (issue 34): counted are
    positional and keyword parameters, not ``self``/``cls``, ``*args`` or ``**kwargs``."""
    over = []
    for path in PYTHON:
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                names = [a.arg for a in node.args.posonlyargs + node.args.args + node.args.kwonlyargs]
                count = len([n for n in names if n not in ("self", "cls")])
                if count > MAX_PARAMETERS:
                    over.append(f"{_rel(path)}::{node.name} ({count})")
    assert over == []


def test_the_site_types_match_the_committed_schemas():
    """site/static/js/lib/site-types.js is what scripts/site_types.py writes from
    docs/schemas/site-*.schema.json (CI then type-checks the modules with tsc)."""
    done = subprocess.run(["python3" if not (ROOT / ".venv").exists() else str(ROOT / ".venv" / "bin" / "python"),
                           str(ROOT / "scripts" / "site_types.py"), "--check"],
                          capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
