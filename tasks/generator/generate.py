"""Write Harbor task folders: world spec -> repo files, solution, check catalog, instruction.

``alertforge generate --out DIR [--master-seed N]`` calls :func:`generate`. The same master
seed gives byte-identical folders on every machine.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

from contract.files import dump_json
from tasks.generator import harbor, repo
from tasks.generator.catalog import derive_catalog
from tasks.generator.checks import CatalogError
from tasks.generator.workflows import ORDER, implemented, workflow
from tasks.generator.world import World

TIERS = ("easy", "medium", "hard")
SEEDS = (1, 2)

CORPUS = [(wf, tier, seed) for wf in ORDER for tier in TIERS for seed in SEEDS]
"""The whole corpus: (workflow, tier, seed) in task-id order (5 x 3 x 2 = 30 tasks)."""

BUNDLED = [(index, *item) for index, item in enumerate(CORPUS, 1) if item[0] in implemented()]
"""(task number, workflow, tier, seed) of every task whose workflow is implemented."""


def private_set(master_seed: int, per_tier: int) -> list[tuple[int, str, str, int]]:
    """(task number, workflow, tier, seed) of a private set: ``per_tier`` tasks for each
    workflow and tier, seeds derived from ``master_seed`` (5 x 3 x ``per_tier`` tasks)."""
    rows = []
    index = 0
    for name in implemented():
        for tier in TIERS:
            for _ in range(per_tier):
                index += 1
                rows.append((index, name, tier, (master_seed * 1000 + index) % 1_000_000_007))
    return rows


def task_id(index: int, workflow: str, tier: str, seed: int, master_seed: int | None = None) -> str:
    """``af-001-slo-onboarding-easy-s1``: running number, workflow, tier, seed; a private set's
    ids carry its master seed (``af-m7-001-...``), so none shares a name or a short id
    (``af-001``) with the bundled tasks."""
    prefix = "af" if master_seed is None else f"af-m{master_seed}"
    return f"{prefix}-{index:03d}-{workflow}-{tier}-s{seed}"


def sample_world(tid: str, name: str, tier: str, seed: int) -> World:
    """The world of one task (ValueError for a workflow the generator does not know)."""
    return workflow(name).sample(tid, tier, seed)


def task_files(world: World) -> dict[str, bytes]:
    """Every file of one task folder: relative path -> bytes."""
    files: dict[str, bytes] = {}
    module = workflow(world.workflow)
    pristine = module.pristine_files(world)
    for rel, text in pristine.items():
        files[f"environment/monitoring/{rel}"] = text.encode()
    for rel, text in module.solution_files(world).items():
        files[f"solution/monitoring/{rel}"] = text.encode()
    files["solution/solve.sh"] = repo.SOLVE_SH.encode()
    files["instruction.md"] = module.instruction(world).encode()
    files["task.toml"] = repo.task_toml(world).encode()
    spec = world.to_json()
    files["tests/spec.json"] = dump_json(spec)
    files["tests/reference_records.yml"] = module.reference_records(world).encode()
    with tempfile.TemporaryDirectory() as tmp:
        for rel, text in pristine.items():
            path = Path(tmp) / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8")
        files["tests/checks.json"] = dump_json(derive_catalog(spec, Path(tmp)))
    files.update(harbor.harbor_files(files))  # last: checksums cover the tests files above
    return files


def write_task(out: Path, tid: str, files: dict[str, bytes]) -> Path:
    """Write one task folder atomically: build it beside the target, then swap it in."""
    out.mkdir(parents=True, exist_ok=True)
    for leftover in out.glob(f".{tid}.*"):  # staging or swap folders of a killed run
        if leftover.is_dir():
            shutil.rmtree(leftover)
    staging = Path(tempfile.mkdtemp(prefix=f".{tid}.", dir=out))
    for rel, data in sorted(files.items()):
        path = staging / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
        if rel.endswith(".sh"):
            os.chmod(path, 0o755)
    final = out / tid
    if final.exists():
        old = out / f".{tid}.old"
        shutil.rmtree(old, ignore_errors=True)
        final.rename(old)
        staging.rename(final)
        shutil.rmtree(old)
    else:
        staging.rename(final)
    return final


def generate(out: Path, master_seed: int | None = None,
             workflows: list[str] | None = None, per_tier: int = len(SEEDS)) -> list[Path]:
    """Generate the corpus into ``out``; returns the task folders written.

    Without ``master_seed`` the bundled seeds are used (``per_tier`` is ignored); with one,
    ``per_tier`` tasks per workflow and tier, each seed derived from it (a fresh private set
    of any size). ``workflows`` limits the run to those workflows (task numbers stay those of
    the whole set).
    """
    written = []
    rows = BUNDLED if master_seed is None else private_set(master_seed, per_tier)
    for index, name, tier, seed in rows:
        if workflows is not None and name not in workflows:
            continue
        tid, files = _build(index, name, tier, seed, master_seed)
        written.append(write_task(out, tid, files))
    everything = sorted(p for p in out.iterdir() if (p / "task.toml").is_file()) if out.is_dir() else []
    harbor.write_corpus_files(out, everything or written)  # registry.json, manifest.jsonl
    return written


RETRIES = 20
"""Seeds tried for one task of a private set before giving up (see :func:`_build`)."""


def _build(index: int, name: str, tier: str, seed: int, master_seed: int | None) -> tuple[str, dict[str, bytes]]:
    """One task's id and files. A private set's seed that admits no safe check time (a
    :class:`CatalogError`: some scenario lands too close to a crossing) is replaced by the
    next derived seed, deterministically; the task id names the seed used.

    Raises:
        CatalogError: a bundled seed fails, or :data:`RETRIES` derived seeds all do.
    """
    retry = master_seed is not None
    for attempt in range(RETRIES if retry else 1):
        tid = task_id(index, name, tier, seed, master_seed)
        try:
            return tid, task_files(sample_world(tid, name, tier, seed))
        except CatalogError:
            if attempt + 1 == (RETRIES if retry else 1):
                raise
            seed = (seed * 7919 + 104729) % 1_000_000_007
    raise AssertionError("unreachable")
