"""The agent's tools on a workspace: list_files, read_file, write_file, replace_in_file,
run_checks, route_test, submit.

Paths are relative to the workspace root; anything that would leave it (``..``, an
absolute path, a symlink) or write more than :data:`MAX_WRITE_BYTES` is refused with a tool
error the run records, never an exception. ``run_checks`` and ``route_test`` run the real
``promtool``/``amtool`` on the workspace and change nothing.
"""

from __future__ import annotations

import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

from contract.text import utf8_prefix

MAX_WRITE_BYTES = 256 * 1024
MAX_READ_BYTES = 512 * 1024
TOOL_NAMES = ("list_files", "read_file", "write_file", "replace_in_file", "run_checks",
              "route_test", "submit")
FILE_CHANGING_TOOLS = ("write_file", "replace_in_file")
"""Tools that may change a file: what a resumed run replays onto a fresh workspace."""
EXAMPLE_TEST_TIMEOUT_S = 60.0


@dataclass
class ToolResult:
    """What a tool call gave back: the observation text, the file it changed, whether it failed."""

    output: str
    changed: str | None = None
    error: bool = False
    done: bool = False


def _inside(root: Path, rel: str) -> Path | str:
    """The resolved path of ``rel`` under ``root``, or a message saying why it is refused."""
    if not isinstance(rel, str) or not rel.strip():
        return "path must be a non-empty string"
    candidate = Path(rel)
    if candidate.is_absolute():
        return f"absolute paths are not allowed: {rel}"
    if ".." in candidate.parts:
        return f"paths may not contain '..': {rel}"
    current = root
    for part in candidate.parts:
        current = current / part
        if current.is_symlink():
            return f"symlinks are not followed: {rel}"
    return root / candidate


def _write(root: Path, target: Path, content: str) -> ToolResult:
    """Write ``content`` to ``target`` (size-capped); ``changed`` set when the bytes differ."""
    rel = target.relative_to(root).as_posix()
    size = len(content.encode("utf-8"))
    if size > MAX_WRITE_BYTES:
        return ToolResult(f"error: {size} bytes is over the {MAX_WRITE_BYTES}-byte limit", error=True)
    if target.is_dir():
        return ToolResult(f"error: {rel} is a directory", error=True)
    blocking = next((parent for parent in reversed(Path(rel).parents)
                     if parent != Path(".") and (root / parent).exists() and not (root / parent).is_dir()),
                    None)
    if blocking is not None:
        return ToolResult(f"error: cannot write {rel}: {blocking.as_posix()} is a file, not a folder",
                          error=True)
    before = target.read_bytes() if target.is_file() else None
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(content, encoding="utf-8")
    except OSError as err:  # a name too long, a read-only or full disk: the tool fails, not the run
        return ToolResult(f"error: cannot write {rel}: {err.strerror or type(err).__name__}", error=True)
    changed = rel if before != content.encode("utf-8") else None
    return ToolResult(f"wrote {size} bytes to {rel}", changed=changed)


def _replace(root: Path, target: Path, arguments: dict) -> ToolResult:
    """``replace_in_file {path, old, new, all?}``: replace ``old`` (once, or every time with all)."""
    rel = target.relative_to(root).as_posix()
    old, new = arguments.get("old"), arguments.get("new")
    if not isinstance(old, str) or not old or not isinstance(new, str):
        return ToolResult("error: old must be a non-empty string and new a string", error=True)
    if not target.is_file():
        return ToolResult(f"error: no such file: {rel}", error=True)
    text = target.read_bytes().decode("utf-8", errors="replace")
    count = text.count(old)
    if count == 0:
        return ToolResult(f"error: old text not found in {rel}", error=True)
    replace_all = arguments.get("all") is True
    if count > 1 and not replace_all:
        return ToolResult(f"error: old text occurs {count} times in {rel}; give more context "
                          "or set all to true", error=True)
    result = _write(root, target, text.replace(old, new))
    if not result.error:
        result.output = f"replaced {count if replace_all else 1} occurrence(s) in {rel}"
    return result


def _regular_files(root: Path) -> list[Path]:
    """Every regular file under ``root`` reached without following a symlink."""
    found = []
    for path in sorted(root.rglob("*")):
        relative = path.relative_to(root)
        if any((root / Path(*relative.parts[:i + 1])).is_symlink()
               for i in range(len(relative.parts))):
            continue
        if path.is_file():
            found.append(path)
    return found


def _example_tests(root: Path) -> list[Path]:
    """promtool unit-test files in the workspace: YAML with top-level rule_files and tests."""
    import yaml

    from grader.workspace import load_yaml_text, read_text

    found = []
    for path in _regular_files(root):
        if path.suffix not in (".yml", ".yaml"):
            continue
        text, problem = read_text(path)
        if problem or "rule_files" not in text:
            continue
        try:
            doc = load_yaml_text(text)
        except yaml.YAMLError:
            doc = None  # a file that does not parse is not a test file
        if isinstance(doc, dict) and "rule_files" in doc and "tests" in doc:
            found.append(path)
    return found


def run_checks(root: Path) -> ToolResult:
    """``run_checks {}``: promtool check rules on every rule file, amtool check-config, and
    ``promtool test rules`` on every example test file found in the workspace.

    Runs on a copy of the workspace's regular files (symlinks are not followed). The
    output lists one line per file: ``ok`` or the tool's message. ``error`` is set when
    anything failed, so the run shows a failing check as a tool error.
    """
    from grader import promtool, routing
    from grader.am_syntax import classic_syntax_problems
    from grader.workspace import ALERTMANAGER_PATH, load_workspace

    lines, failed = [], False
    with tempfile.TemporaryDirectory(prefix="alertforge-checks-") as tmp:
        copy = Path(tmp) / "ws"
        for path in _regular_files(root):
            target = copy / path.relative_to(root)
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(path.read_bytes())
        workspace = load_workspace(copy)
        lines.append("promtool check rules:")
        checked = []
        for rule_file in workspace.rule_files:
            if rule_file.error:
                lines.append(f"  {rule_file.rel}: {rule_file.error}")
                failed = True
                continue
            unwrapped = Path(tmp) / "unwrapped" / rule_file.rel
            unwrapped.parent.mkdir(parents=True, exist_ok=True)
            unwrapped.write_text(rule_file.text, encoding="utf-8")
            checked.append((rule_file.rel, unwrapped))
        for (rel, _), problem in zip(checked, promtool.check_rules_many([p for _, p in checked])):
            lines.append(f"  {rel}: {problem or 'ok'}")
            failed = failed or problem is not None
        if not workspace.rule_files:
            lines.append("  (no rule files under rules/)")
        am_path = copy / ALERTMANAGER_PATH
        if am_path.is_file():
            try:
                problem = routing.check_config(am_path)
            except routing.RoutingError as err:
                problem = str(err)
            if problem is None:  # what the grader adds: the syntax every amtool version accepts
                problem = "; ".join(classic_syntax_problems(workspace.alertmanager)) or None
            lines.append(f"amtool check-config {ALERTMANAGER_PATH}: {problem or 'ok'}")
            failed = failed or problem is not None
        else:
            lines.append(f"amtool check-config {ALERTMANAGER_PATH}: file not found")
            failed = True
        tests = _example_tests(copy)
        lines.append("example tests (promtool test rules):")
        for test in tests:
            outcome = _outside_rule_files(copy, test) or _run_example_test(test)
            lines.append(f"  {test.relative_to(copy).as_posix()}: {outcome or 'ok'}")
            failed = failed or outcome is not None
        if not tests:
            lines.append("  (none in the workspace)")
    return ToolResult("\n".join(lines).replace(str(copy) + "/", ""), error=failed)


def _outside_rule_files(root: Path, test: Path) -> str | None:
    """Why an example test may not run: a ``rule_files`` entry that is absolute or leaves the
    repo (promtool would read it from outside the workspace), or None."""
    from pathlib import PurePosixPath

    import yaml

    from grader.workspace import load_yaml_text, path_leaves_repo

    try:
        doc = load_yaml_text(test.read_text(encoding="utf-8"))
    except (yaml.YAMLError, UnicodeDecodeError):
        return None  # promtool reports it
    entries = doc.get("rule_files") if isinstance(doc, dict) else None
    base = PurePosixPath(test.parent.relative_to(root).as_posix())
    for entry in entries if isinstance(entries, list) else [entries]:
        problem = path_leaves_repo(entry, base)
        if problem:
            return f"not run: rule_files {problem}; rule files must be inside the repo"
    return None


def _run_example_test(test: Path) -> str | None:
    """``promtool test rules`` on one file from its own folder: None on SUCCESS, else output."""
    from grader.tools import PROMTOOL

    try:
        out = subprocess.run([PROMTOOL, "test", "rules", test.name], cwd=test.parent,
                             capture_output=True, text=True, timeout=EXAMPLE_TEST_TIMEOUT_S,
                             check=False)
    except subprocess.TimeoutExpired:
        return f"timed out after {EXAMPLE_TEST_TIMEOUT_S:g} s"
    if out.returncode == 0:
        return None
    text = "\n    ".join(ln for ln in (out.stdout + out.stderr).splitlines() if ln.strip())
    return text[:4000] or f"exit status {out.returncode}"


def route_test(root: Path, arguments: dict) -> ToolResult:
    """``route_test {labels: {name: value}}``: the receivers ``amtool config routes test``
    resolves for an alert with these labels on the workspace's alertmanager.yml."""
    from grader import routing
    from grader.workspace import ALERTMANAGER_PATH

    labels = arguments.get("labels")
    if not isinstance(labels, dict) or not labels:
        return ToolResult("error: labels must be a non-empty object of label name -> value",
                          error=True)
    if not all(isinstance(v, str) for v in labels.values()):
        return ToolResult("error: every label value must be a string", error=True)
    target = _inside(root, ALERTMANAGER_PATH)
    if isinstance(target, str):
        return ToolResult(f"error: {target}", error=True)
    if not target.is_file():
        return ToolResult(f"error: no such file: {ALERTMANAGER_PATH}", error=True)
    try:
        receivers = routing.resolve_receivers(target, labels)
    except routing.RoutingError as err:
        return ToolResult(f"error: {str(err).replace(str(root) + '/', '')}", error=True)
    return ToolResult("receivers: " + (", ".join(receivers) or "(none)"))


def run_tool(root: Path, name: str, arguments: dict) -> ToolResult:
    """Execute one tool call on the workspace at ``root``.

    ``list_files {}`` lists every file; ``read_file {path}`` returns its text;
    ``write_file {path, content}`` creates or replaces a file (parents created);
    ``replace_in_file {path, old, new, all?}`` replaces text in a file (``old`` must occur
    exactly once unless ``all`` is true); ``run_checks {}`` runs promtool/amtool checks and
    the workspace's example tests; ``route_test {labels}`` resolves receivers with amtool;
    ``submit {}`` ends the run. Bad arguments are tool errors (``error`` True), never raised.
    """
    if not isinstance(arguments, dict):
        return ToolResult("error: arguments must be an object", error=True)
    if name == "list_files":
        files = sorted(p.relative_to(root).as_posix() for p in root.rglob("*") if p.is_file())
        return ToolResult("\n".join(files))
    if name == "submit":
        return ToolResult("submitted", done=True)
    if name == "run_checks":
        return run_checks(root)
    if name == "route_test":
        return route_test(root, arguments)
    if name not in ("read_file", "write_file", "replace_in_file"):
        return ToolResult(f"error: unknown tool {name!r}", error=True)
    target = _inside(root, arguments.get("path"))
    if isinstance(target, str):
        return ToolResult(f"error: {target}", error=True)
    rel = target.relative_to(root).as_posix()
    if name == "read_file":
        if not target.is_file():
            return ToolResult(f"error: no such file: {rel}", error=True)
        with open(target, "rb") as handle:
            data = handle.read(MAX_READ_BYTES + 4)
        return ToolResult(utf8_prefix(data, MAX_READ_BYTES))
    if name == "replace_in_file":
        return _replace(root, target, arguments)
    content = arguments.get("content")
    if not isinstance(content, str):
        return ToolResult("error: content must be a string", error=True)
    return _write(root, target, content)
