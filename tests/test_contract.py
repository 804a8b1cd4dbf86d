"""The file contracts: the committed JSON Schemas (docs/schemas/) are what the models give,
every producer's run.json and trajectory validate against them, and the site data files
against theirs."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
from conftest import FIXTURE_RUNS, assert_run_matches_schema, fixture_tasks

from contract.paths import TASKS_DIR, task_dirs
from contract.schemas import SCHEMAS, schema_files
from exporter.export import export_site
from recorder.importers.aria_transcripts import EXAMPLE_EPISODES, import_episodes
from recorder.importers.harbor.importer import import_harbor
from recorder.record import record_run

SCHEMA_DIR = Path(__file__).resolve().parents[1] / "docs" / "schemas"
HARBOR_JOB = Path(__file__).parent / "fixtures" / "harbor-job" / "2026-11-29__09-00-00"
ATIF_REAL = Path(__file__).parent / "fixtures" / "atif-real"


def test_committed_schemas_are_what_the_models_give():
    generated = schema_files()
    committed = {p.name: p.read_bytes() for p in SCHEMA_DIR.glob("*.schema.json")}
    assert sorted(committed) == sorted(generated), "python -m contract.schemas docs/schemas"
    for name, data in generated.items():
        assert committed[name] == data, f"{name} drifted: python -m contract.schemas docs/schemas"
    assert len(SCHEMAS) >= 12


def test_runs_of_record_and_both_importers_match_the_schemas(tmp_path):
    folders = [record_run(task_dirs(TASKS_DIR)[0], "nop", out=tmp_path / "record")]
    imported = import_harbor([HARBOR_JOB, *sorted(ATIF_REAL.glob("*.trajectory.json"))],
                             tmp_path / "harbor")
    folders += [tmp_path / "harbor" / row["run_id"] for row in imported["imported"]]
    folders += import_episodes(sorted(EXAMPLE_EPISODES.glob("*.json"))[:3], tmp_path / "episodes")
    sources = set()
    for folder in folders:
        assert_run_matches_schema(folder)
        sources.add(json.loads((folder / "run.json").read_text())["source"])
    assert sources == {"record", "harbor", "atif-file", "transcript"}


def test_old_runs_of_version_1_still_validate():
    for folder in sorted(FIXTURE_RUNS.iterdir()):
        assert json.loads((folder / "run.json").read_text())["version"] == 1
        assert_run_matches_schema(folder)


def test_site_data_files_match_their_schemas(tmp_path):
    export_site([FIXTURE_RUNS], tmp_path / "site", task_index=fixture_tasks())
    data = tmp_path / "site" / "data"

    def check(path: Path, name: str) -> None:
        jsonschema.validate(json.loads(path.read_bytes()),
                            json.loads((SCHEMA_DIR / f"{name}.schema.json").read_text()))

    check(data / "index.json", "site-index")
    check(data / "home.json", "site-home")
    for path in (data / "runs").glob("*.json"):
        check(path, "site-run")
    for path in (data / "run-heads").glob("*.json"):
        check(path, "site-run-head")
    for path in (data / "tasks").glob("*.json"):
        check(path, "site-task")
    for path in (data / "task-runs").glob("*.json"):
        check(path, "site-task-runs")
