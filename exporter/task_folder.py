"""Read the task a run names: instruction, check catalog and pristine monitoring repo.

When the task folder named in run.json ``task.dir`` is gone, everything falls back to what
the run carries (run.json ``requirements``/``checks``, the trajectory's first message).
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from alertforge.errors import BadInput
from alertforge.files import read_json
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


def locate_task_folder(run: RunFolder) -> Path | None:
    """The task folder named by run.json ``task.dir``, or None when it is not there.

    A relative ``task.dir`` is tried against the current directory, then against the run
    folder. A folder counts when it exists (task.toml is not required).
    """
    named = run.run["task"].get("dir")
    if not isinstance(named, str) or not named:
        return None
    path = Path(named)
    candidates = [path] if path.is_absolute() else [path, run.path / path]
    for candidate in candidates:
        if candidate.is_dir():
            return candidate
    return None


def _pick(items: list[Any], fields: tuple[str, ...], path: Path, what: str) -> list[dict]:
    picked = []
    for index, item in enumerate(items):
        if not isinstance(item, dict) or not isinstance(item.get("id"), str):
            raise BadInput(path, f"{what}[{index}] is not an object with a string id")
        picked.append({name: item.get(name) for name in fields})
    return picked


def read_pristine_files(monitoring: Path) -> dict[str, str]:
    """Every file under ``monitoring`` as ``{relative posix path: text}`` (UTF-8, bad bytes replaced).

    Returns an empty dict when the folder does not exist.
    """
    if not monitoring.is_dir():
        return {}
    files = {}
    for path in sorted(monitoring.rglob("*")):
        if path.is_file():
            relative = path.relative_to(monitoring).as_posix()
            files[relative] = path.read_bytes().decode("utf-8", errors="replace")
    return files


def _read_task_toml(folder: Path) -> dict[str, Any]:
    path = folder / "task.toml"
    if not path.is_file():
        return {}
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as err:
        raise BadInput(path, f"not valid TOML: {err}") from None
    metadata = data.get("metadata", {})
    return metadata if isinstance(metadata, dict) else {}


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


def read_task(run: RunFolder) -> TaskInfo:
    """The task of ``run``: from its task folder when present, else from run.json.

    From the folder: instruction.md, tests/checks.json (requirements and checks, trimmed to the
    fields above), task.toml ``[metadata]`` (workflow, tier, title) and environment/monitoring/.
    Each missing piece falls back to run.json (``task.workflow``, ``task.tier``,
    ``requirements``, ``checks``) or the trajectory's first step message (instruction).
    The title is task.toml ``metadata.title``, else the instruction's first heading, else the id.

    Raises:
        BadInput: task.toml or tests/checks.json exists but is malformed (names the file);
            run.json requirements/checks entries are not objects with ids.
    """
    run_task = run.run["task"]
    task_id = run_task["id"]
    folder = locate_task_folder(run)
    metadata: dict[str, Any] = {}
    instruction: str | None = None
    catalog: dict[str, Any] | None = None
    pristine: dict[str, str] = {}
    if folder is not None:
        metadata = _read_task_toml(folder)
        instruction_path = folder / "instruction.md"
        if instruction_path.is_file():
            instruction = instruction_path.read_bytes().decode("utf-8", errors="replace")
        checks_path = folder / "tests" / "checks.json"
        if checks_path.is_file():
            catalog = read_json(checks_path)
            if not isinstance(catalog, dict):
                raise BadInput(checks_path, "expected a JSON object")
            for key in ("requirements", "checks"):
                if not isinstance(catalog.get(key), list):
                    raise BadInput(checks_path, f"{key} missing or not a list")
        pristine = read_pristine_files(folder / "environment" / "monitoring")
    if catalog is not None:
        source, requirements, checks = checks_path, catalog["requirements"], catalog["checks"]
    else:
        source = run.path / "run.json"
        requirements, checks = run.run.get("requirements", []), run.run.get("checks", [])
    if instruction is None:
        instruction = _message_text(run.trajectory["steps"][0].get("message"))
    workflow = metadata.get("workflow", run_task.get("workflow"))
    tier = metadata.get("tier", run_task.get("tier"))
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
