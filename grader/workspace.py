"""Read a workspace the way the grader sees it: rule files (plain or PrometheusRule), Alertmanager config.

Nothing here runs a binary: files are read, size-capped, decoded and parsed with PyYAML's
safe loader; problems become syntax errors naming the file, never exceptions.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import yaml

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
    """``(text, None)`` or ``(None, problem)``: size cap, directory, UTF-8 decoding."""
    try:
        if path.is_dir():
            return None, "is a directory, expected a file"
        size = path.stat().st_size
        if size > MAX_FILE_BYTES:
            return None, f"file is {size} bytes, over the {MAX_FILE_BYTES}-byte limit"
        return path.read_bytes().decode("utf-8"), None
    except UnicodeDecodeError as err:
        return None, f"not valid UTF-8 (byte {err.start})"
    except OSError as err:
        return None, f"cannot read: {err.strerror}"


def _yaml_problem(err: yaml.YAMLError) -> str:
    mark = getattr(err, "problem_mark", None)
    where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark else ""
    problem = getattr(err, "problem", None) or str(err).splitlines()[0]
    return f"YAML error{where}: {problem}"


def load_rule_file(root: Path, path: Path) -> RuleFile:
    """Parse one rule file; a PrometheusRule manifest is unwrapped to its ``spec``."""
    rel = path.relative_to(root).as_posix()
    text, problem = read_text(path)
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
    """Read every rule file under ``rules/`` and ``alertmanager/alertmanager.yml``."""
    rules_dir = root / RULES_DIR
    rule_files = []
    if rules_dir.is_dir():
        for path in sorted(rules_dir.rglob("*")):
            if path.suffix in (".yml", ".yaml"):
                if path.is_symlink():
                    rule_files.append(RuleFile(path.relative_to(root).as_posix(),
                                               error="is a symlink; rule files must be regular files"))
                elif path.is_dir():
                    rule_files.append(RuleFile(path.relative_to(root).as_posix(),
                                               error="is a directory, expected a rule file"))
                else:
                    rule_files.append(load_rule_file(root, path))
    am_path = root / ALERTMANAGER_PATH
    am, am_text, am_error = None, None, None
    if not am_path.exists():
        am_error = "file not found"
    else:
        am_text, am_error = read_text(am_path)
        if am_text is not None:
            try:
                am = load_yaml_text(am_text)
                if not isinstance(am, dict):
                    am, am_error = None, "expected a mapping"
            except yaml.YAMLError as err:
                am_error = _yaml_problem(err)
    return Workspace(root, rule_files, am, am_text, am_error)
