"""grade_result(task, workspace) -> GradeResult: run a task's check catalog against a workspace.

PromQL checks replay the catalog's scenarios through the real ``promtool test rules``;
route checks resolve receivers with the real ``amtool config routes test``; inhibit checks
use the Alertmanager 0.25 inhibition simulator (:mod:`grader.inhibition`); syntax,
preservation and tamper checks read the parsed files. The GradeResult shape is in
docs/formats.md; apart from ``timings`` the same inputs give byte-identical JSON.

One grade is a :class:`grader.grading_pass.GradingPass` (the syntax check), then
:func:`grader.evaluate.evaluate`: the evidence, every check through the probe table
(:mod:`grader.probes`), and the score (:mod:`grader.score`).
"""

from __future__ import annotations

import shutil
import tempfile
import time
from pathlib import Path

from contract.base import parse
from contract.errors import BadInput
from contract.grade import GradeResult, validated
from contract.task import CheckCatalog
from contract.task_roots import task_fingerprint
from contract.untrusted import Tree
from grader.cache import GradeCache
from grader.evaluate import evaluate
from grader.grading_pass import GradingPass
from grader.tool_store import ToolStore
from grader.tools import tool_versions
from grader.workspace import load_workspace


def load_catalog(task_dir: Path) -> dict:
    """``tests/checks.json`` of a task, checked against :class:`contract.task.CheckCatalog`.

    Returns the catalog as read (a dict). Raises BadInput naming the file and the field when
    it is missing or malformed.
    """
    path = task_dir / "tests" / "checks.json"
    data = Tree(task_dir).read_json("tests/checks.json")
    parse(CheckCatalog, data, path, "check catalog")
    return data


class Grader:
    """Grades workspaces against task catalogs, keeping its memos in one :class:`GradeCache`.

    A fresh ``Grader()`` shares nothing with other graders; :data:`DEFAULT_GRADER` is the
    one behind :func:`grade_result` and :func:`pristine_scores`.
    """

    def __init__(self, cache: GradeCache | None = None) -> None:
        self.cache = cache if cache is not None else GradeCache()
        self._tools: dict[str, str] | None = None
        self.graded = 0
        """Grades finished through :func:`grade_result` (the pristine grades a grader makes for
        itself are not counted): what a run engine reports as grades per second."""

    def tools(self) -> dict[str, str]:
        """The tool versions this grader's grades name (asked once, then kept)."""
        if self._tools is None:
            self._tools = tool_versions()
        return dict(self._tools)

    def grade_result(self, task_dir: str | Path, workspace: str | Path | None = None, *,
                     pristine: dict[str, float] | None = None, keep: Path | None = None,
                     causes: bool = True) -> GradeResult:
        """:func:`grade_result` with this grader's cache; ``causes=False`` leaves failing
        checks without a cause (the pristine scores need none)."""
        return validated(self._result(task_dir, workspace, pristine, keep, causes))

    def _result(self, task_dir: str | Path, workspace: str | Path | None,
                pristine: dict[str, float] | None, keep: Path | None, causes: bool) -> dict:
        """The grade as the evaluation builds it, with ``tools`` and ``timings`` (not yet
        checked against :class:`GradeResult`)."""
        started = time.perf_counter()
        task_dir = Path(task_dir).resolve()
        catalog = load_catalog(task_dir)
        root = Path(workspace).resolve() if workspace else task_dir / "environment" / "monitoring"
        if not root.is_dir():
            raise BadInput(root, "workspace is not a directory")
        ws = load_workspace(root)
        fingerprint = task_fingerprint(task_dir)  # once a grade: it reads the pristine repo
        if pristine is None:
            pristine = self.pristine_scores(task_dir, fingerprint)
        with tempfile.TemporaryDirectory(prefix="alertforge-grade-") as tmp:
            grading = GradingPass(task_dir, catalog, ws, Path(tmp), fingerprint=fingerprint,
                                  cache=self.cache)
            grading.check_syntax()
            result = evaluate(grading, pristine, causes=causes)
            if keep is not None:  # the benchmark replays the generated files to measure the floor
                shutil.copytree(tmp, keep, dirs_exist_ok=True)
        result["tools"] = self.tools()
        result["timings"] = {k: round(v, 4) for k, v in grading.timings.items()}
        result["timings"]["total_s"] = round(time.perf_counter() - started, 4)
        return result

    def pristine_scores(self, task_dir: Path, key: str | None = None) -> dict[str, float]:
        """:func:`pristine_scores` with this grader's cache."""
        key = key or task_fingerprint(task_dir)
        return self.cache.pristine_scores(key, lambda: {
            r.id: r.q for r in self.grade_result(task_dir, None, pristine={}, causes=False).requirements})


DEFAULT_GRADER = Grader(GradeCache(store=ToolStore()))
"""The process-wide grader behind :func:`grade_result` and :func:`pristine_scores`, created here and
nowhere else; it keeps promtool replays on disk when ``ALERTFORGE_REPLAY_CACHE`` names a
folder (:mod:`grader.tool_store`). Code that must make the next grades run promtool again (the gate's determinism
check, tests, the benchmark) calls ``DEFAULT_GRADER.cache.clear_replays()``."""


def grade_result(task_dir: str | Path, workspace: str | Path | None = None, *,
                 pristine: dict[str, float] | None = None, keep: Path | None = None) -> GradeResult:
    """Grade ``workspace`` (default: the task's pristine repo) against the task's catalog.

    ``pristine`` maps requirement id -> q of the pristine repo (computed, and cached per
    task content, when not given). ``keep`` copies the grader's temporary files (rule
    files, promtool test files) there before they are removed. Returns the
    :class:`contract.grade.GradeResult`; its file form (what ``alertforge grade --json`` and
    the verifier print, what a Ray worker sends back) is :func:`contract.base.dump` of it.
    Uses :data:`DEFAULT_GRADER`.

    Raises:
        BadInput: the task folder or workspace is missing or the catalog is malformed.
        promtool.GraderError: promtool failed in a way no check explains.
    """
    result = DEFAULT_GRADER.grade_result(task_dir, workspace, pristine=pristine, keep=keep)
    DEFAULT_GRADER.graded += 1
    return result


def pristine_scores(task_dir: Path, key: str | None = None) -> dict[str, float]:
    """q of every requirement on the task's pristine repo (memoized per task content).

    ``key`` is the task's :func:`task_fingerprint` when the caller already has it.
    Uses :data:`DEFAULT_GRADER`.
    """
    return DEFAULT_GRADER.pristine_scores(task_dir, key)


def check_states(result: GradeResult) -> str:
    """The check-state string of a grade: one character per check, 1 pass, 0 fail, - n/a."""
    return "".join("-" if c.passed is None else ("1" if c.passed else "0")
                   for c in result.checks)
