"""GradingPass: one grading of one workspace, its temporary folder and what the syntax check found."""

from __future__ import annotations

import time
from pathlib import Path

from contract.untrusted import Tree
from grader.am_syntax import classic_syntax_problems
from grader.cache import GradeCache
from grader.workspace import ALERTMANAGER_PATH, MAX_FILE_BYTES, RuleFile, Workspace


class GradingPass:
    """One grading: the task, its catalog, the loaded workspace and a private temporary folder.

    ``check_syntax`` fills ``syntax_errors`` (``{"file", "message"}`` dicts), ``valid_rules``
    (the rule files promtool loads), ``am_path`` (the private copy of alertmanager.yml amtool
    reads, None when it does not load) and ``am_error``; ``timings`` collects seconds per
    stage (``syntax_s``, ``promtool_s``, ``amtool_s``). ``fingerprint`` is the task's
    :func:`contract.task_roots.task_fingerprint`, the key of the ``cache`` memos.
    """

    def __init__(self, task_dir: Path, catalog: dict, ws: Workspace, tmp: Path, *,
                 fingerprint: str, cache: GradeCache):
        self.task_dir, self.catalog, self.ws, self.tmp = task_dir, catalog, ws, tmp
        self.fingerprint, self.cache = fingerprint, cache
        self.syntax_errors: list[dict] = []
        self.timings: dict[str, float] = {}
        self.valid_rules: list[RuleFile] = []
        self.am_path: Path | None = None
        self.am_error: str | None = None

    def check_syntax(self) -> None:
        """``promtool check rules`` on every parsed rule file, ``amtool check-config`` on
        alertmanager.yml, each on a copy in the temporary folder. Raises what promtool and
        amtool raise when they cannot run (promtool.GraderError, routing.RoutingError)."""
        started = time.perf_counter()
        self._check_rule_files()
        self._check_alertmanager()
        self.timings["syntax_s"] = time.perf_counter() - started

    def _check_rule_files(self) -> None:
        candidates = []
        for rule_file in self.ws.rule_files:
            if rule_file.error:
                self.syntax_errors.append({"file": rule_file.rel, "message": rule_file.error})
                continue
            path = self.tmp / "ws" / rule_file.rel
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(rule_file.text, encoding="utf-8")
            candidates.append((rule_file, path))
        problems = self.cache.check_rules([p for _, p in candidates])
        for (rule_file, path), problem in zip(candidates, problems):
            if problem:
                self.syntax_errors.append({"file": rule_file.rel, "message": problem})
            else:
                self.valid_rules.append(rule_file)

    def _check_alertmanager(self) -> None:
        if self.ws.alertmanager_error:
            self.am_error = self.ws.alertmanager_error
        else:
            private = self.tmp / "ws"
            if (self.ws.alertmanager or {}).get("templates"):
                # templates (confined to the repo by load_workspace) are read from a private
                # copy of the repo's regular files, never from the workspace itself
                Tree(self.ws.root).copy_into(private, cap=MAX_FILE_BYTES, skip=frozenset(
                    [ALERTMANAGER_PATH, *(f.rel for f in self.ws.rule_files)]))
            self.am_path = private / ALERTMANAGER_PATH
            self.am_path.parent.mkdir(parents=True, exist_ok=True)
            self.am_path.write_text(self.ws.alertmanager_text or "", encoding="utf-8")
            self.am_error = self.cache.check_config(
                self.am_path, has_templates=bool((self.ws.alertmanager or {}).get("templates")))
            if self.am_error is None:
                self.am_error = "; ".join(classic_syntax_problems(self.ws.alertmanager)) or None
        if self.am_error:
            self.syntax_errors.append({"file": ALERTMANAGER_PATH, "message": self.am_error})
            self.am_path = None

    def rule_entries(self) -> list[tuple[str, dict, dict]]:
        """(file, group, rule) of every rule in the loadable rule files, in file order."""
        return [(f.rel, g, r) for f in self.valid_rules for g in f.groups
                for r in g.get("rules") or [] if isinstance(r, dict)]
