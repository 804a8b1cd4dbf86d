"""A run's record in a site export (exporter.run_record): typed in the exporter, JSON values
between processes and exports, read back as it was written, and refused (BadRecord, so the run
is read again) when its parts are not of their types."""

from __future__ import annotations

import orjson
import pytest

from contract.run import RunSummary
from contract.site import RunRow
from exporter.run_record import (
    BadRecord,
    HarborTrial,
    MaskCounts,
    RecordTask,
    RedactionCounts,
    RunRecord,
)


def _record(**changes) -> RunRecord:
    row = RunRow(run_id="r1", kind="alerting", task_id="af-001", workflow="slo", tier="easy", policy="oracle",
                 agent="alertforge-reference", model=None, reward=1.0, solved=True, steps=3, status="complete")
    fields = {"run_id": "r1", "summary": row, "task": RecordTask("af-001", "slo", "easy", "SLO onboarding", True, "ab" * 32),
                  "job": HarborTrial({"job": "j", "reward": 0.5}, {"reward": 1.0}), "legacy_id": "old-r1",
                  "renamed": {"d1": "r1"},
                  "redaction": RedactionCounts(MaskCounts(2, {"aws": 2}), MaskCounts(0, {}), "folder:xyz")}
    return RunRecord(**{**fields, **changes})


@pytest.mark.parametrize("changes", [{}, {"job": None, "redaction": None, "legacy_id": None}])
def test_a_record_reads_back_as_it_was_written_through_its_json_bytes(changes):
    record = _record(**changes)
    data = orjson.dumps(record.to_json(), option=orjson.OPT_SORT_KEYS)
    again = RunRecord.from_json(orjson.loads(data))
    assert again == record
    assert orjson.dumps(again.to_json(), option=orjson.OPT_SORT_KEYS) == data


@pytest.mark.parametrize("damage, says", [
    (lambda v: v.update(run_id=7), "run_id"),
    (lambda v: v["summary"].update(reward="lots"), "summary"),
    (lambda v: v["summary"].pop("status"), "summary"),
    (lambda v: v["task"].pop("digest"), "task"),
    (lambda v: v.update(renamed=["x"]), "renamed"),
    (lambda v: v["redaction"].update(run=[1]), "mask counts"),
    (lambda v: v.update(job={"regrade": {}}), "job"),
    (lambda v: v.update(legacy_id=5), "legacy_id"),
])
def test_a_record_of_the_wrong_shape_is_refused_naming_the_part(damage, says):
    value = _record().to_json()
    damage(value)
    with pytest.raises(BadRecord, match=says):
        RunRecord.from_json(value)


def test_a_harbor_trial_is_only_a_run_imported_from_harbor():
    run = {"version": 2, "run_id": "r", "kind": "alerting", "status": "complete", "task": {"id": "t"},
           "agent": {"name": "a", "version": "1"}, "steps": 0}
    assert HarborTrial.of_run(RunSummary.model_validate(run)) is None
    trial = HarborTrial.of_run(RunSummary.model_validate({**run, "harbor": {"job": "j"}, "regrade": {"reward": 1.0}}))
    assert trial == HarborTrial({"job": "j"}, {"reward": 1.0})
    assert HarborTrial.from_json({"harbor": {"job": "j"}, "regrade": "not an object"}) == HarborTrial({"job": "j"}, None)
