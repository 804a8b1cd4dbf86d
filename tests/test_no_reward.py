"""Runs with no reward (a Harbor trial without a verifier reward, imported without grading):
shown as "no reward", left out of the leaderboard's means, rates, intervals and pass@k
(issue 31 item 2), never counted as 0."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from conftest import FIXTURE_RUNS, fixture_tasks

from exporter.export import export_site
from exporter.serve import serve_in_background


def _unrewarded(source: Path, target: Path, run_id: str, policy: str) -> None:
    """A copy of ``source`` with no final result and no graded step."""
    shutil.copytree(source, target)
    run = json.loads((target / "run.json").read_text())
    run.update(run_id=run_id, policy=policy, final=None)
    (target / "run.json").write_text(json.dumps(run))
    trajectory = json.loads((target / "trajectory.json").read_text())
    for step in trajectory["steps"]:
        (step.get("extra") or {}).pop("grade", None)
    (target / "trajectory.json").write_text(json.dumps(trajectory))
    (target / "journal.jsonl").write_text(
        "".join(json.dumps(step) + "\n" for step in trajectory["steps"]))


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    root = tmp_path_factory.mktemp("no-reward")
    runs = root / "runs"
    for name in ("fixture-oracle-s1", "fixture-partial-s1"):
        shutil.copytree(FIXTURE_RUNS / name, runs / name)
    _unrewarded(FIXTURE_RUNS / "fixture-partial-s1", runs / "partial-unrewarded", "partial-unrewarded", "partial")
    _unrewarded(FIXTURE_RUNS / "fixture-oracle-s1", runs / "only-unrewarded", "only-unrewarded", "harbor-agent")
    export_site([runs], root / "site", task_index=fixture_tasks())
    server, url = serve_in_background(root / "site", port=0, host="127.0.0.1")
    yield root / "site", url
    server.shutdown()
    server.server_close()


def test_a_run_with_no_reward_is_none_and_out_of_every_figure(site):
    index = json.loads((site[0] / "data" / "index.json").read_bytes())
    rewards = {row["run_id"]: row["reward"] for row in index["runs"]}
    assert rewards["partial-unrewarded"] is None and rewards["only-unrewarded"] is None
    board = {row["policy"]: row for row in index["leaderboard"]}
    partial = next(r for r in index["runs"] if r["run_id"] == "fixture-partial-s1")
    assert board["partial"]["runs"] == 1 and board["partial"]["no_reward"] == 1
    assert board["partial"]["mean_reward"] == round(partial["reward"], 6)  # not halved by a 0
    assert "harbor-agent" not in board  # no rewarded run: no row
    assert all(row["agent"] != "harbor-agent" for row in index["attempts"])


def test_the_home_page_says_no_reward_and_sorts_it_last(page, site):
    page.goto(site[1])
    page.wait_for_selector("body[data-ready='1']")
    cell = page.locator('#runs-table tr[data-run-id="partial-unrewarded"] [data-field="reward"]')
    assert cell.inner_text() == "no reward"
    note = page.locator('#leaderboard tr[data-policy="partial"] [data-field="no_reward"]')
    assert note.inner_text() == "+1 with no reward"
    for direction in ("desc", "asc"):
        page.goto(f"{site[1]}?sort=reward&dir={direction}")
        page.wait_for_selector("body[data-ready='1']")
        order = page.locator("#runs-table tbody tr[data-run-id]").evaluate_all("rs => rs.map(r => r.dataset.runId)")
        assert set(order[-2:]) == {"partial-unrewarded", "only-unrewarded"}, (direction, order)
    assert page.page_errors == []
