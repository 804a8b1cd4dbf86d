"""Imported Harbor trajectories (real ATIF from OpenHands and Terminus-2) export with their file edits as diffs."""

from __future__ import annotations

from pathlib import Path

from conftest import find_run, readable

from contract.files import read_json
from exporter.export import export_site
from recorder.importers.harbor.importer import import_harbor

REAL = Path(__file__).parent / "fixtures" / "atif-real"


def test_real_trajectories_export_every_step_and_what_their_edits_did(tmp_path):
    summary = import_harbor(sorted(REAL.glob("*.trajectory.json")), tmp_path / "runs")
    assert len(summary["imported"]) == 2 and not summary["skipped"]
    export_site([tmp_path / "runs"], tmp_path / "site")
    runs = {readable(row["run_id"]): read_json(tmp_path / "site" / "data" / "runs" / f"{row['run_id']}.json")
            for row in summary["imported"]}

    openhands = runs["atif__openhands__hello-world"]
    diffs = [s["diff"] for s in openhands["steps"] if s.get("diff")]
    assert diffs and diffs[0]["path"].endswith("hello.txt") and not diffs[0]["old_exists"]
    added = [text for hunk in diffs[0]["hunks"] for op, text in hunk["lines"] if op == "+"]
    assert any("hello" in line.lower() for line in added), added

    # Terminus-2 only echoes to the terminal: no file is written, and the step says so
    terminus = runs["atif__terminus_2__hello-world-timeout"]
    assert not [s for s in terminus["steps"] if s.get("diff")]
    trajectory = read_json(find_run(tmp_path / "runs", "atif__terminus_2__hello-world-timeout") / "trajectory.json")
    notes = [n for s in trajectory["steps"] for n in ((s.get("extra") or {}).get("replay") or {}).get("notes", [])]
    assert any("no file written" in n for n in notes), notes
    tools = [s["tool"]["name"] for s in terminus["steps"] if s.get("tool")]
    assert tools == ["bash_command"] * 3
