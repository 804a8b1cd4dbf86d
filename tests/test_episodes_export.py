"""The exporter's episode part: stale results, service changes, penalties, the end of the incident."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import readable, site_run_id

from contract.site import SiteStep
from exporter.episodes import episode_failures, penalty_kinds, service_changes
from exporter.export import export_site
from recorder.importers.aria_transcripts import EXAMPLE_EPISODES, import_episodes


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Path:
    runs = tmp_path_factory.mktemp("episode-runs")
    import_episodes(sorted(EXAMPLE_EPISODES.glob("*.json")), runs)
    out = tmp_path_factory.mktemp("episode-site")
    export_site([runs], out)
    return out


def run_file(site: Path, run_id: str) -> dict:
    return json.loads((site / "data" / "runs" / f"{site_run_id(site, run_id)}.json").read_bytes())


def test_index_lists_the_episodes_with_their_final_scores(site):
    index = json.loads((site / "data" / "index.json").read_bytes())
    rows = {readable(row["run_id"]): row for row in index["runs"]}
    assert len(rows) == 16
    assert {row["kind"] for row in rows.values()} == {"episode"}
    assert {row["workflow"] for row in rows.values()} == {"aria"}
    assert rows["aria-bonus__expert__s42"]["reward"] == 0.904
    assert rows["aria-hard__poor__s42"]["solved"] is False
    assert rows["aria-generated__expert__s12345"]["steps"] == 4
    assert all(path.stat().st_size < 10 * 1024 * 1024 for path in (site / "data").rglob("*.json"))


def test_a_left_over_result_is_marked_stale_with_the_step_it_is_from(site):
    steps = run_file(site, "aria-bonus__poor__s42")["steps"]
    # step 6 restarts api-gateway; the server still says "ml-inference-service restarted"
    assert steps[6]["tool"] == {"name": "restart_service", "arguments": {"service": "api-gateway"}}
    assert steps[6]["env"]["observation"]["last_action_result"].startswith("ml-inference-service")
    assert steps[6]["env"]["stale"]["last_action_result"] == 5
    assert steps[5]["env"]["stale"]["last_action_result"] is None
    assert steps[7]["env"]["stale"]["last_action_result"] is None


def test_a_left_over_error_is_stale_until_another_error_replaces_it(site):
    steps = run_file(site, "aria-easy__poor__s42")["steps"]
    assert steps[2]["env"]["stale"]["last_action_error"] is None  # a new collateral error
    assert steps[3]["env"]["stale"]["last_action_error"] == 2  # diagnose leaves step 2's error
    assert steps[4]["env"]["stale"]["last_action_error"] is None


def test_a_failed_action_keeps_the_previous_observation_in_force(site):
    steps = run_file(site, "aria-generated__expert__s12345")["steps"]
    failed = steps[3]["env"]
    assert failed["error"]["status"] == 500 and failed["observation"] is None
    assert failed["shown_from"] == 2 and failed["penalties"] == ["server error"]
    assert steps[3]["reward"] == 0.0 and steps[3]["total"] == steps[2]["total"]
    assert steps[4]["env"]["transport"]["retried_after"].startswith("ReadError")
    assert steps[4]["env"]["resolution"] == "incident_resolved"


def test_penalty_kinds_from_real_episodes(site):
    kinds = {
        run_id: [step["env"]["penalties"] for step in run_file(site, run_id)["steps"]]
        for run_id in (
            "aria-easy__poor__s42",
            "aria-failover__poor__s42",
            "aria-medium__poor__s42",
            "aria-easy__expert__s42",
        )
    }
    # the kinds are the penalty components of ARIA's reward split (task_easy.py:212-228 ...)
    assert kinds["aria-easy__poor__s42"][1] == ["fix before diagnosis", "collateral restart"]
    assert kinds["aria-easy__poor__s42"][3] == []  # a diagnosis that earns nothing costs nothing
    # the diagnosis earned no tag, so ARIA still charges the blind fix
    assert kinds["aria-easy__poor__s42"][4] == ["fix before diagnosis", "collateral restart"]
    assert kinds["aria-easy__poor__s42"][5] == ["not applicable"]
    assert kinds["aria-easy__poor__s42"][6] == ["late noop"]
    assert kinds["aria-failover__poor__s42"][1] == ["forbidden failover"]  # no blind fix there
    assert kinds["aria-failover__poor__s42"][3] == ["timed out"]
    assert kinds["aria-medium__poor__s42"][1] == ["red herring", "collateral restart"]
    assert kinds["aria-medium__poor__s42"][4] == ["collateral restart"]
    assert all(k == [] for k in kinds["aria-easy__expert__s42"])
    document = run_file(site, "aria-easy__poor__s42")
    failures = episode_failures(document, [SiteStep.model_validate(step) for step in document["steps"]])
    assert failures[0] == {
        "kind": "fix before diagnosis",
        "run_id": site_run_id(site, "aria-easy__poor__s42"),
        "task_id": "aria-easy",
        "step": 1,
        "action": "restart_service",
        "arguments": {"service": "api-gateway"},
        "reward": -0.15,
    }


def test_penalty_kind_rules():
    assert (
        penalty_kinds("diagnose", 0.0, error=False, diagnosed=True, diagnosis_credited=True) == []
    )  # a repeat of a credited diagnosis
    assert penalty_kinds(
        "read_logs", -0.1, error=False, diagnosed=False, diagnosis_credited=False
    ) == ["other penalty"]
    assert (
        penalty_kinds("rollback", 0.3, error=False, diagnosed=False, diagnosis_credited=False) == []
    )


def test_the_end_comes_from_done_although_services_stay_degraded(site):
    steps = run_file(site, "aria-security__expert__s42")["steps"]
    last = steps[-1]["env"]
    assert last["done"] and last["resolution"] == "incident_resolved"
    statuses = {row["status"] for row in last["observation"]["services"]}
    assert statuses != {"healthy"} or last["observation"]["active_alerts"]
    assert all(step["env"]["resolution"] is None for step in steps[:-1])


def test_changes_and_acted_on_service(site):
    steps = run_file(site, "aria-easy__expert__s42")["steps"]
    fix = steps[5]["env"]
    assert fix["acted_on"] == "user-service"
    assert {"status", "memory_percent", "error_rate", "replicas_running"} <= set(
        fix["changed"]["user-service"]
    )
    assert fix["alerts_cleared"] == ["A001"]
    assert steps[1]["env"]["evidence_new"] == 1
    assert steps[0]["env"]["changed"] == {} and steps[0]["env"]["acted_on"] is None
    assert steps[4]["env"]["acted_on"] is None  # diagnose names no service


def test_service_changes_without_a_previous_observation_are_empty():
    assert service_changes(None, {"services": [{"name": "a", "status": "down"}]}) == ({}, [])
    before = {"services": [{"name": "a", "status": "down"}], "sla_status": {"a": "ok"}}
    after = {
        "services": [{"name": "a", "status": "down"}, {"name": "b"}],
        "sla_status": {"a": "breached"},
    }
    assert service_changes(before, after) == ({"a": ["sla"]}, ["b"])
