"""Read a workspace the way the grader sees it: rule files (plain or PrometheusRule), Alertmanager config.

Nothing here runs a binary: files are read, size-capped, decoded and parsed with PyYAML's
safe loader; problems become syntax errors naming the file, never exceptions.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

import yaml

from contract.untrusted import REFUSED, Tree, UnsafeInput

MAX_FILE_BYTES = 2 * 1024 * 1024
"""Larger rule or config files are refused as a syntax error (a monitoring repo has no such file)."""

ALERTMANAGER_PATH = "alertmanager/alertmanager.yml"
RULES_DIR = "rules"


@dataclass
class RuleFile:
    """One rule file: its path relative to the workspace, the parsed groups, and the text promtool reads.

    ``text`` is the file as is for plain rule files and the unwrapped ``spec`` for a
    PrometheusRule manifest (``monitoring.coreos.com/v1``), which promtool cannot read.
    ``error`` is set when the file cannot be used at all.
    """

    rel: str
    groups: list[dict] = field(default_factory=list)
    text: str = ""
    manifest: bool = False
    error: str | None = None


@dataclass
class Workspace:
    """What the grader reads from a workspace folder."""

    root: Path
    rule_files: list[RuleFile]
    alertmanager: dict | None
    alertmanager_text: str | None
    alertmanager_error: str | None

    def rules(self):
        """Yield ``(rule_file, group, rule)`` for every rule in every loadable file."""
        for rule_file in self.rule_files:
            if rule_file.error:
                continue
            for group in rule_file.groups:
                for rule in group.get("rules") or []:
                    if isinstance(rule, dict):
                        yield rule_file, group, rule


class _UniqueKeyLoader(yaml.SafeLoader):
    """PyYAML's safe loader, refusing aliases (a YAML alias bomb cannot expand)."""

    def compose_node(self, parent, index):
        if self.check_event(yaml.AliasEvent):
            event = self.peek_event()
            raise yaml.composer.ComposerError(
                None, None, "YAML aliases are not allowed in monitoring files", event.start_mark)
        return super().compose_node(parent, index)


_C_LOADER = getattr(yaml, "CSafeLoader", None)


def load_yaml_text(text: str):
    """Parse YAML with the safe loader, aliases refused (raises yaml.YAMLError).

    With libyaml present, the text is first scanned (in C) for alias tokens, then loaded by
    the C safe loader; otherwise the pure-Python loader refuses aliases as it composes. Either
    way a YAML alias bomb is an error before anything expands.
    """
    if _C_LOADER is None:
        return yaml.load(text, Loader=_UniqueKeyLoader)
    for token in yaml.scan(text, Loader=_C_LOADER):
        if isinstance(token, yaml.AliasToken):
            raise yaml.composer.ComposerError(
                None, None, "YAML aliases are not allowed in monitoring files", token.start_mark)
    return yaml.load(text, Loader=_C_LOADER)




def read_text(path: Path) -> tuple[str | None, str | None]:
    """``(text, None)`` or ``(None, problem)`` for one file the caller named (size cap, regular
    file only, UTF-8); see :meth:`read_tree_text` for files inside a workspace."""
    return read_tree_text(Tree(path.parent), path.name)


def read_tree_text(tree: Tree, rel: str) -> tuple[str | None, str | None]:
    """``(text, None)`` or ``(None, problem)`` for ``rel`` in ``tree``: a regular file reached
    without a link, at most :data:`MAX_FILE_BYTES`, valid UTF-8 (contract.untrusted)."""
    try:
        return tree.read_text(rel, cap=MAX_FILE_BYTES), None
    except UnsafeInput as err:
        return None, err.problem


def _yaml_problem(err: yaml.YAMLError) -> str:
    mark = getattr(err, "problem_mark", None)
    where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark else ""
    problem = getattr(err, "problem", None) or str(err).splitlines()[0]
    return f"YAML error{where}: {problem}"


def load_rule_file(root: Path, path: Path) -> RuleFile:
    """Parse one rule file; a PrometheusRule manifest is unwrapped to its ``spec``."""
    rel = path.relative_to(root).as_posix()
    return parse_rule_file(rel, *read_tree_text(Tree(root), rel))


def parse_rule_file(rel: str, text: str | None, problem: str | None) -> RuleFile:
    """The :class:`RuleFile` of ``rel`` from its text (or the problem reading it)."""
    if problem:
        return RuleFile(rel, error=problem)
    try:
        doc = load_yaml_text(text)
    except yaml.YAMLError as err:
        return RuleFile(rel, text=text, error=_yaml_problem(err))
    manifest = isinstance(doc, dict) and doc.get("kind") == "PrometheusRule"
    if manifest:
        spec = doc.get("spec")
        if not isinstance(spec, dict) or not isinstance(spec.get("groups"), list):
            return RuleFile(rel, manifest=True, error="PrometheusRule manifest has no spec.groups list")
        doc = spec
        text = yaml.safe_dump(spec, sort_keys=False, width=200)
    if doc is None:
        doc = {}
    if not isinstance(doc, dict):
        return RuleFile(rel, text=text, error="expected a mapping with a groups: list")
    groups = doc.get("groups", [])
    if not isinstance(groups, list) or not all(isinstance(g, dict) for g in groups):
        return RuleFile(rel, text=text, error="groups: must be a list of rule groups")
    return RuleFile(rel, groups=groups, text=text, manifest=manifest)


def load_workspace(root: Path) -> Workspace:
    """Read every rule file under ``rules/`` and ``alertmanager/alertmanager.yml``.

    The workspace is an untrusted tree (:class:`contract.untrusted.Tree`): a link, FIFO or
    device where a rule file, the rules or alertmanager folder or alertmanager.yml should be
    is a syntax error naming it, never followed or opened.
    """
    tree = Tree(root)
    rule_files = []
    rules_kind = tree.kind(RULES_DIR)
    if rules_kind == "symlink":
        rule_files.append(RuleFile(RULES_DIR, error=REFUSED["symlink"]))
    elif rules_kind == "dir":
        try:
            entries = list(tree.walk(RULES_DIR))
        except UnsafeInput as err:  # nested too deep, too many entries
            entries = []
            rule_files.append(RuleFile(RULES_DIR, error=err.problem))
        for rel, kind in entries:
            if not rel.endswith((".yml", ".yaml")):
                continue
            if kind == "file":
                rule_files.append(parse_rule_file(rel, *read_tree_text(tree, rel)))
            elif kind == "symlink":
                rule_files.append(RuleFile(rel, error="is a symlink; rule files must be regular files"))
            elif kind == "dir":
                rule_files.append(RuleFile(rel, error="is a directory, expected a rule file"))
            else:
                rule_files.append(RuleFile(rel, error=REFUSED.get(kind, "is not a regular file")))
    am, am_text, am_error = None, None, None
    am_kind = tree.kind(ALERTMANAGER_PATH)
    if am_kind == "missing":
        am_error = "file not found"
    else:
        am_text, am_error = read_tree_text(tree, ALERTMANAGER_PATH)
        if am_text is not None:
            try:
                am = load_yaml_text(am_text)
                if not isinstance(am, dict):
                    am, am_error = None, "expected a mapping"
            except yaml.YAMLError as err:
                am_error = _yaml_problem(err)
    if am is not None:
        am_error = template_problem(am)
        if am_error:
            am = None
    return Workspace(root, rule_files, am, am_text, am_error)


def path_leaves_repo(entry: object, base: PurePosixPath) -> str | None:
    """Why a path or glob a repo file names (relative to ``base``, a folder of the repo) is
    not a file inside the repo: not a string, absolute, or leaving it through ``..``; None
    when it stays inside."""
    if not isinstance(entry, str):
        return f"entry {entry!r} is not a string"
    if entry.startswith(("/", "~")) or "\0" in entry:
        return f"entry {entry!r} is absolute"
    depth = len(base.parts)
    for part in PurePosixPath(entry).parts:
        depth += -1 if part == ".." else (0 if part == "." else 1)
        if depth < 0:
            return f"entry {entry!r} leaves the repo"
    return None


def template_problem(am: dict) -> str | None:
    """Why the config's ``templates:`` cannot be used, or None.

    Alertmanager loads every file a ``templates`` glob matches, relative to the config's
    folder, and amtool's errors quote them: an entry that is absolute or leaves the repo
    (``../../etc/*``) is refused before amtool sees the config.
    """
    templates = am.get("templates")
    if templates is None:
        return None
    if not isinstance(templates, list):
        return "templates: must be a list of file globs"
    for entry in templates:
        problem = path_leaves_repo(entry, PurePosixPath(ALERTMANAGER_PATH).parent)
        if problem:
            return f"templates: {problem}; templates must be files inside the repo"
    return None
