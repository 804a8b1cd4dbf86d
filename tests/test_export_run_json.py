"""run.json read through its model (exporter.run_folders.RunFolder.summary) without changing
what an export accepts or shows: masking leaves the schema's own words alone, so a masked run
still validates; a value the site shows as written stays as written; a type the exporter refused
before is refused still."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from conftest import FIXTURE_RUNS, fixture_tasks

from contract.errors import BadInput
from contract.run import RunSummary
from exporter.export import export_site
from exporter.redact import Redactor
from exporter.renaming import masked_run_json
from exporter.secret_formats import read_patterns

RUN = "fixture-oracle-s1"


def _copy(tmp_path: Path, change=None) -> Path:
    runs = tmp_path / "runs"
    shutil.copytree(FIXTURE_RUNS / RUN, runs / RUN)
    if change is not None:
        path = runs / RUN / "run.json"
        value = json.loads(path.read_text())
        change(value)
        path.write_text(json.dumps(value))
    return runs


@pytest.mark.parametrize("pattern", ["alerting", "complete", "status", "label", "replay", "exact", "producer"])
def test_a_pattern_matching_the_schemas_own_words_masks_values_and_keeps_the_run_valid(tmp_path, pattern):
    """A --redact-patterns pattern that matches a field name or a fixed-set value (kind, status,
    replay, a check's keys) masks the run's free text and leaves run.json a valid RunSummary."""
    runs = _copy(tmp_path, lambda run: run.update(replay="exact", notes=[f"a note on {pattern}"]))
    (tmp_path / "patterns.txt").write_text(pattern + "\n")
    redactor = Redactor(read_patterns(tmp_path / "patterns.txt"))
    run_json = json.loads((runs / RUN / "run.json").read_text())
    masked = masked_run_json(redactor, run_json)
    RunSummary.model_validate(masked)
    assert masked["notes"] == ["a note on [REDACTED]"]
    assert (masked["kind"], masked["status"], masked["replay"]) == ("alerting", "complete", "exact")
    summary = export_site([runs], tmp_path / "site", task_index=fixture_tasks(), redactor=Redactor(
        read_patterns(tmp_path / "patterns.txt")))
    assert summary["runs"] == 1
    document = json.loads(next((tmp_path / "site" / "data" / "runs").glob("*.json")).read_text())
    assert document["kind"] == "alerting" and document["status"] == "complete"


def test_values_the_site_shows_as_the_run_wrote_them_stay_so(tmp_path):
    runs = _copy(tmp_path, lambda run: run["final"].update(reward=1))
    export_site([runs], tmp_path / "site", task_index=fixture_tasks())
    text = (tmp_path / "site" / "data" / "runs" / f"{RUN}.json").read_text()
    assert '"final":{' in text and '"reward":1,' in text, "the run file shows the reward as written"


@pytest.mark.parametrize("tier", [2.0, True])
def test_a_task_tier_of_the_wrong_type_is_refused_as_before(tmp_path, tier):
    runs = _copy(tmp_path, lambda run: run["task"].update(tier=tier))
    with pytest.raises(BadInput, match="task.tier must be str or int"):
        export_site([runs], tmp_path / "site")
