"""scripts/behaviour_diff.py: recording times aside, every JSON value must match as written,
an integer never equal to a float (what a round trip through a typed model can change)."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parents[1] / "scripts" / "behaviour_diff.py"


def _script():
    spec = importlib.util.spec_from_file_location("behaviour_diff", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _diff(tmp_path: Path, before: str, after: str) -> list[str]:
    for side, text in (("a", before), ("b", after)):
        (tmp_path / side).mkdir()
        (tmp_path / side / "run.json").write_text(text)
    return _script().compare(tmp_path / "a", tmp_path / "b")


@pytest.mark.parametrize(("before", "after", "where"), [
    ('{"reward": 1}', '{"reward": 1.0}', "$.reward"),
    ('{"s": [0.5]}', '{"s": [5e-1]}', "$.s[0]"),
    ('{"s": 0.5}', '{"s": "0.5"}', "$.s"),
    ('{"ok": true}', '{"ok": 1}', "$.ok"),
])
def test_numbers_differ_unless_written_alike(tmp_path, before, after, where):
    assert _diff(tmp_path, before, after) == [f"differs: run.json at {where}"]


def test_recording_times_are_ignored_and_equal_literals_match(tmp_path):
    before = '{"q": 0.25, "n": 3, "timings": {"total_s": 1.5}, "started_at": "x"}'
    after = '{"n": 3, "q": 0.25, "timings": {"total_s": 2}, "started_at": "y"}'
    assert _diff(tmp_path, before, after) == []
