"""JSON Schemas of every file contract, generated from the models (committed in docs/schemas/).

``python -m contract.schemas docs/schemas`` writes them; tests/test_contract.py fails when the
committed files differ from what the models give (code and schema drifted).
"""

from __future__ import annotations

import sys
from pathlib import Path

from pydantic import BaseModel

from contract import site
from contract.files import dump_json
from contract.grade import GradeBlock, GradeResult
from contract.run import EnvBlock, RunSummary
from contract.task import CheckCatalog, WorldSpec

SCHEMAS: dict[str, type[BaseModel]] = {
    "task-checks": CheckCatalog,
    "task-spec": WorldSpec,
    "grade-result": GradeResult,
    "run": RunSummary,
    "step-extra-grade": GradeBlock,
    "step-extra-env": EnvBlock,
    "site-index": site.SiteIndex,
    "site-home": site.HomeDocument,
    "site-attempts": site.AttemptsDocument,
    "site-run": site.RunDocument,
    "site-run-head": site.RunHead,
    "site-task": site.TaskDocument,
    "site-task-inputs": site.TaskInputs,
    "site-task-runs": site.TaskRuns,
}
"""File name (without ``.schema.json``) -> the model it is generated from."""


def schema_files() -> dict[str, bytes]:
    """``{file name: bytes}`` of every schema (sorted keys, two-space indent)."""
    return {f"{name}.schema.json": dump_json(model.model_json_schema())
            for name, model in SCHEMAS.items()}


def main(argv: list[str]) -> int:
    """Write the schemas into the folder ``argv[0]``."""
    folder = Path(argv[0] if argv else "docs/schemas")
    folder.mkdir(parents=True, exist_ok=True)
    for name, data in schema_files().items():
        (folder / name).write_bytes(data)
    print(f"wrote {len(SCHEMAS)} schemas into {folder}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
