"""Read the task a run names: instruction, check catalog and pristine monitoring repo.

The folder is looked up by the run's task id and fingerprint in the task roots the user
named and the bundled ``tasks/`` (run.json ``task.dir`` is never opened), and read as an
untrusted tree. Without a matching folder everything falls back to what the run carries
(run.json ``requirements``/``checks``, the trajectory's first message).
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from contract.base import parse
from contract.errors import BadInput
from contract.task import CheckCatalog
from contract.task_roots import TaskIndex
from contract.untrusted import Tree
from exporter.run_folders import RunFolder
from exporter.scenarios import scenario_plots

REQUIREMENT_FIELDS = ("id", "kind", "weight", "title")
CHECK_FIELDS = ("id", "req", "family", "label", "note")


@dataclass
class TaskInfo:
    """What the site needs about one task.

    ``requirements`` hold ``{id, kind, weight, title}``, ``checks`` ``{id, req, family, label,
    note}`` in catalog order, ``pristine`` maps a repo-relative POSIX path to the file's text,
    ``from_folder`` says whether the task folder was found (False: run.json fallback).
    """

    id: str
    workflow: str | None
    tier: str | int | None
    title: str
    instruction: str
    requirements: list[dict[str, Any]]
    checks: list[dict[str, Any]]
    pristine: dict[str, str] = field(default_factory=dict)
    from_folder: bool = False
    reproduction: dict[str, Any] = field(default_factory=dict)
    """From tests/checks.json when present (see :func:`reproduction_data`), else empty."""


def locate_task_folder(run: RunFolder, index: TaskIndex) -> Path | None:
    """The task folder of ``run`` among the task roots of ``index``, or None.

    run.json ``task.dir`` is never opened: the folder is the one of the run's ``task.id``
    whose fingerprint equals ``task.fingerprint`` (runs from before fingerprints: whose check
    catalog lists the run's check ids), see :class:`contract.task_roots.TaskIndex`.
    """
    summary = run.summary
    return index.find(summary.task.id, summary.task.fingerprint, [check.id for check in summary.checks])


def _pick(items: list[Any], fields: tuple[str, ...], path: Path, what: str) -> list[dict]:
    picked = []
    for index, item in enumerate(items):
        if not isinstance(item, dict) or not isinstance(item.get("id"), str):
            raise BadInput(path, f"{what}[{index}] is not an object with a string id")
        picked.append({name: item.get(name) for name in fields})
    return picked


MONITORING = "environment/monitoring"
TEXT_CAP = 4 * 1024 * 1024
"""A task text (instruction, pristine file, task.toml) larger than this is refused."""
CATALOG_CAP = 64 * 1024 * 1024


def read_pristine_files(tree: Tree) -> dict[str, str]:
    """Every regular file under the task's ``environment/monitoring`` as ``{relative posix
    path: text}`` (UTF-8, bad bytes replaced); links, FIFOs and devices are left out.

    Returns an empty dict when the folder does not exist.
    """
    if not tree.is_dir(MONITORING):
        return {}
    return {rel[len(MONITORING) + 1:]: tree.read_text(rel, cap=TEXT_CAP, errors="replace")
            for rel in tree.files(MONITORING)}


METADATA_TYPES = {"workflow": (str,), "tier": (str, int), "title": (str,)}
"""task.toml ``[metadata]`` fields the site shows, and the types each may have."""


def _check_metadata(metadata: dict[str, Any], path: Path | str, where: str) -> dict[str, Any]:
    for key, types in METADATA_TYPES.items():
        value = metadata.get(key)
        if value is not None and (isinstance(value, bool) or not isinstance(value, types)):
            raise BadInput(path, f"{where}{key} must be {' or '.join(t.__name__ for t in types)}, "
                           f"got {type(value).__name__}")
    return metadata


def _read_task_toml(tree: Tree) -> dict[str, Any]:
    if not tree.is_file("task.toml"):
        return {}
    try:
        data = tomllib.loads(tree.read_text("task.toml", cap=TEXT_CAP))
    except tomllib.TOMLDecodeError as err:
        raise BadInput(tree.shown("task.toml"), f"not valid TOML: {err}") from None
    metadata = data.get("metadata", {})
    if not isinstance(metadata, dict):
        return {}
    return _check_metadata(metadata, tree.shown("task.toml"), "[metadata] ")


TITLE_CHARS = 100


def title_from_instruction(instruction: str, fallback: str) -> str:
    """A short title from ``instruction``: its first Markdown heading, else its first line, else ``fallback``.

    A first line longer than 100 characters is cut after its first sentence, and if still
    too long, at 100 characters with an ellipsis.
    """
    lines = [line.strip() for line in instruction.splitlines() if line.strip()]
    for line in lines:
        if line.startswith("#"):
            return line.lstrip("#").strip() or fallback
    if not lines:
        return fallback
    title = lines[0]
    if len(title) > TITLE_CHARS and ". " in title:
        title = title[: title.index(". ") + 1]
    if len(title) > TITLE_CHARS:
        title = title[: TITLE_CHARS - 1].rstrip() + "\u2026"
    return title


def _message_text(message: Any) -> str:
    if isinstance(message, str):
        return message
    if isinstance(message, list):
        return "\n".join(part.get("text") or "" for part in message if isinstance(part, dict))
    return ""


def reproduction_data(catalog: dict[str, Any]) -> dict[str, Any]:
    """What the viewer needs to draw scenario plots and build reproduce commands for a catalog.

    ``{evaluation_interval, input_series{scenario: [{series, values}]}, probes{check id: probe},
    plots{...}, check_plots{check id: {...}}}``: input series only for scenarios some probe
    uses; plots as :func:`exporter.scenarios.scenario_plots`.
    """
    probes = {
        check["id"]: check["probe"]
        for check in catalog["checks"]
        if isinstance(check, dict) and isinstance(check.get("probe"), dict)
    }
    used = {probe.get("scenario") for probe in probes.values()}
    input_series = catalog.get("input_series") if isinstance(catalog.get("input_series"), dict) else {}
    plots, check_plots = scenario_plots(catalog)
    interval = catalog.get("evaluation_interval")
    return {
        "evaluation_interval": interval if isinstance(interval, str) else None,
        "input_series": {key: input_series[key] for key in sorted(input_series) if key in used},
        "probes": probes,
        "plots": plots,
        "check_plots": check_plots,
    }


def read_task(run: RunFolder, index: TaskIndex, cache: dict[Path, TaskInfo] | None = None) -> TaskInfo:
    """The task of ``run``: from its task folder when present, else from run.json.

    From the folder: instruction.md, tests/checks.json (requirements and checks, trimmed to the
    fields above), task.toml ``[metadata]`` (workflow, tier, title) and environment/monitoring/.
    Each missing piece falls back to run.json (``task.workflow``, ``task.tier``,
    ``requirements``, ``checks``) or the trajectory's first step message (instruction).
    The title is task.toml ``metadata.title``, else the instruction's first heading, else the id.

    ``cache`` (``{folder: TaskInfo}``) reuses what an earlier run of the same folder read.

    Raises:
        BadInput: task.toml or tests/checks.json exists but is malformed (names the file);
            run.json requirements/checks entries are not objects with ids.
    """
    folder = locate_task_folder(run, index)
    if cache is not None and folder is not None and folder in cache:
        return cache[folder]
    info = _read_task(run, folder)
    if cache is not None and folder is not None:
        cache[folder] = info
    return info


def _read_task(run: RunFolder, folder: Path | None) -> TaskInfo:
    run_task = run.summary.task
    task_id = run_task.id
    metadata: dict[str, Any] = {}
    instruction: str | None = None
    catalog: dict[str, Any] | None = None
    pristine: dict[str, str] = {}
    if folder is not None:
        tree = Tree(folder)
        metadata = _read_task_toml(tree)
        if tree.is_file("instruction.md"):
            instruction = tree.read_text("instruction.md", cap=TEXT_CAP, errors="replace")
        checks_path = tree.shown("tests/checks.json")
        if tree.is_file("tests/checks.json"):
            catalog = tree.read_json("tests/checks.json", cap=CATALOG_CAP)
            parse(CheckCatalog, catalog, checks_path, "check catalog")
        pristine = read_pristine_files(tree)
    if catalog is not None:
        source, requirements, checks = checks_path, catalog["requirements"], catalog["checks"]
    else:
        source = run.path / "run.json"
        # as run.json wrote them (validated as RequirementRef and CheckRef): a weight keeps its
        # number's form (3, not the model's 3.0), as in the task files of a found task folder
        requirements, checks = run.run.get("requirements", []), run.run.get("checks", [])
    if instruction is None:
        instruction = _message_text(run.trajectory["steps"][0].get("message"))
    _check_metadata(run.run["task"], run.path / "run.json", "task.")  # as written: 2.0 is no tier
    workflow = metadata.get("workflow", run_task.workflow)
    tier = metadata.get("tier", run_task.tier)
    title = metadata.get("title")
    if not isinstance(title, str) or not title:
        title = title_from_instruction(instruction, task_id)
    return TaskInfo(
        id=task_id,
        workflow=workflow,
        tier=tier,
        title=title,
        instruction=instruction,
        requirements=_pick(requirements, REQUIREMENT_FIELDS, source, "requirements"),
        checks=_pick(checks, CHECK_FIELDS, source, "checks"),
        pristine=pristine,
        from_folder=folder is not None,
        reproduction=reproduction_data(catalog) if catalog is not None else {},
    )
