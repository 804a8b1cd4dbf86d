"""Write Harbor task folders: world spec -> repo files, solution, check catalog, instruction.

``alertforge generate --out DIR [--master-seed N]`` calls :func:`generate`. The same master
seed gives byte-identical folders on every machine.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

from alertforge.files import dump_json
from tasks.generator import harbor, repo
from tasks.generator.checks import derive_catalog
from tasks.generator.world import World, sample_slo_onboarding

BUNDLED = [
    ("slo-onboarding", "easy", 1),
    ("slo-onboarding", "easy", 2),
    ("slo-onboarding", "medium", 1),
    ("slo-onboarding", "medium", 2),
    ("slo-onboarding", "hard", 1),
    ("slo-onboarding", "hard", 2),
]
"""The bundled corpus: (workflow, tier, seed) in task-id order."""


def task_id(index: int, workflow: str, tier: str, seed: int) -> str:
    """``af-001-slo-onboarding-easy-s1``: running number, workflow, tier, seed."""
    return f"af-{index:03d}-{workflow}-{tier}-s{seed}"


def sample_world(tid: str, workflow: str, tier: str, seed: int) -> World:
    """The world of one task (ValueError for a workflow the generator does not know)."""
    if workflow == "slo-onboarding":
        return sample_slo_onboarding(tid, tier, seed)
    raise ValueError(f"unknown workflow {workflow!r}")


def task_files(world: World) -> dict[str, bytes]:
    """Every file of one task folder: relative path -> bytes."""
    files: dict[str, bytes] = {}
    pristine = repo.pristine_files(world)
    for rel, text in pristine.items():
        files[f"environment/monitoring/{rel}"] = text.encode()
    for rel, text in repo.solution_files(world).items():
        files[f"solution/monitoring/{rel}"] = text.encode()
    files["solution/solve.sh"] = repo.SOLVE_SH.encode()
    files["instruction.md"] = repo.instruction(world).encode()
    files["task.toml"] = repo.task_toml(world).encode()
    spec = world.to_json()
    files["tests/spec.json"] = dump_json(spec)
    files["tests/reference_records.yml"] = repo.reference_records(world).encode()
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


def generate(out: Path, master_seed: int | None = None) -> list[Path]:
    """Generate the corpus into ``out``; returns the task folders written.

    Without ``master_seed`` the bundled seeds are used; with one, each task's seed is
    derived from it (a fresh private set).
    """
    written = []
    for index, (workflow, tier, seed) in enumerate(BUNDLED, 1):
        if master_seed is not None:
            seed = (master_seed * 1000 + index) % 1_000_000_007
        tid = task_id(index, workflow, tier, seed)
        world = sample_world(tid, workflow, tier, seed)
        written.append(write_task(out, tid, task_files(world)))
    harbor.write_corpus_files(out, written)  # registry.json, manifest.jsonl
    return written
