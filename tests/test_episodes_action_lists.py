"""The shipped action lists (examples/aria-actions/) record the scores their files name.

Against tests/aria_contract_server.py (real answers of the transcripts each list was taken
from); the expected score is the ``final score`` the file's header names, which is the
transcript's ``/state`` ``info.current_score``.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from aria_contract_server import ContractServer

from recorder.episodes.live import EpisodeRecording, record_episode

ACTIONS = Path(__file__).resolve().parent.parent / "examples" / "aria-actions"
SINGLE = sorted(p for p in ACTIONS.glob("*.yaml") if not p.name.startswith("dual-"))


@pytest.fixture(scope="module")
def server():
    running = ContractServer().start()
    yield running
    running.stop()


def test_every_task_has_an_action_list():
    tasks = {p.stem.split("-seed")[0] for p in SINGLE}
    assert tasks == {"easy", "medium", "hard", "bonus", "security", "database", "failover",
                     "generated"}


@pytest.mark.parametrize("path", SINGLE, ids=[p.stem for p in SINGLE])
def test_a_shipped_action_list_records_its_score(server, tmp_path, path):
    header = path.read_text().splitlines()[:4]
    expected = float(re.search(r"final score ([0-9.]+)\)", "\n".join(header)).group(1))
    task, seed = path.stem.split("-seed")
    run_dir = record_episode(server.url, task, int(seed), "scripted", actions_file=path,
                             recording=EpisodeRecording(out=tmp_path))
    run = json.loads((run_dir / "run.json").read_bytes())
    assert run["status"] == "complete" and run["final"]["reward"] == expected
    assert run["final"]["episode"]["parts"]["parts_match"] is True
