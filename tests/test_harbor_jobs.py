"""Harbor's job level on the home page: each imported job's trials, the verifier reward's mean
over the trials that have one (a trial without one counted apart, never as 0), the re-graded
mean, errors by exception type, and token and cost totals from each trial's own result."""

from __future__ import annotations

from pathlib import Path

import pytest

from contract.files import read_json
from exporter.export import export_site
from exporter.harbor_jobs import job_rows
from exporter.run_record import HarborTrial
from recorder.importers.harbor.importer import import_harbor

JOB = Path(__file__).parent / "fixtures" / "harbor-job" / "2026-11-29__09-00-00"


def _run(job, reward=None, regrade=None, exception=None, tokens=None) -> HarborTrial:
    harbor = {"job": job, "reward": reward, "exception": exception, "tokens": {"all": tokens} if tokens else None}
    return HarborTrial(harbor, {"reward": regrade})


def test_job_rows_count_a_trial_without_a_reward_apart_and_sum_tokens():
    rows = job_rows([
        _run("b", 1.0, 0.5, tokens={"prompt_tokens": 10, "completion_tokens": 2, "cost_usd": 0.01}),
        _run("b", None, None, {"type": "AgentTimeoutError"}, {"prompt_tokens": 5, "completion_tokens": 1, "cost_usd": 0.002}),
        _run("b", True, "0.9", {"type": "AgentTimeoutError"}, {"prompt_tokens": "many"}),
        _run("a", 0.25),
    ])
    assert [r["job"] for r in rows] == ["a", "b"]
    b = rows[1]
    assert (b["trials"], b["rewarded"], b["mean_reward"], b["regraded"], b["mean_regrade"]) == (3, 1, 1.0, 1, 0.5)
    assert b["errors"] == 2 and b["error_types"] == {"AgentTimeoutError": 2}
    assert (b["prompt_tokens"], b["completion_tokens"], b["cost_usd"]) == (15, 3, 0.012)
    assert rows[0]["mean_reward"] == 0.25 and rows[0]["errors"] == 0


@pytest.mark.browser
def test_the_home_page_shows_each_imported_job(tmp_path, page):
    from exporter.serve import serve_in_background

    summary = import_harbor([JOB], tmp_path / "runs")
    runs = [read_json(tmp_path / "runs" / row["run_id"] / "run.json") for row in summary["imported"]]
    rewarded = [r["harbor"]["reward"] for r in runs if isinstance(r["harbor"].get("reward"), (int, float))]
    export_site([tmp_path / "runs"], tmp_path / "site")
    row = read_json(tmp_path / "site" / "data" / "index.json")["jobs"][0]
    assert row["trials"] == len(runs) and row["rewarded"] == len(rewarded)
    server, url = serve_in_background(tmp_path / "site", port=0, host="127.0.0.1")
    try:
        page.goto(url)
        cells = page.locator(f'#jobs tr[data-job="{row["job"]}"] td')
        shown = {cells.nth(i).get_attribute("data-field"): cells.nth(i).inner_text() for i in range(cells.count())}
        assert shown["trials"] == str(len(runs))
        assert shown["rewarded"].startswith(str(len(rewarded)))
        if len(rewarded) < len(runs):
            assert f"({len(runs) - len(rewarded)} without)" in shown["rewarded"]
        assert shown["mean_reward"] == f"{sum(rewarded) / len(rewarded):.4f}"
        assert shown["prompt_tokens"] == f"{row['prompt_tokens']:,}"
    finally:
        server.shutdown()
        server.server_close()
