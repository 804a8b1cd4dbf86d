"""The exporter: site data files follow docs/formats.md, exports are deterministic and safe."""

from __future__ import annotations

import json
import shutil
import socket
from pathlib import Path

import atif
import orjson
import pytest
from conftest import fixture_tasks

from contract.errors import BadInput
from contract.paths import SITE_DIR
from exporter.diffs import unified_hunks
from exporter.export import export_site
from exporter.render import template_environment
from exporter.serve import make_server
from exporter.site_data import HEAD_CHECKS, HEAD_STEPS, head_task, panel_groups, run_head_document

FIXTURE_SITE = Path(__file__).parent / "fixtures" / "site"
FIXTURE_RUNS = FIXTURE_SITE / "runs"
RUN_IDS = ["fixture-episode-easy", "fixture-oracle-s1", "fixture-partial-s1", "fixture-xss"]
STEP_KEYS = {
    "n",
    "step_id",
    "source",
    "message",
    "tool",
    "output",
    "diff",
    "graded",
    "reward",
    "total",
    "checks",
    "changed",
    "failed",
    "causes",
    "blame",
}


def load(path: Path):
    return json.loads(path.read_bytes())


def failure_at(steps: list[dict], n: int, check_id: str) -> str:
    """A check's failure detail at step n, as the viewer reads the delta-encoded ``failed``."""
    for step in reversed(steps[: n + 1]):
        if check_id in step["failed"]:
            return step["failed"][check_id]
    return ""


def snapshot(folder: Path) -> dict[str, tuple[bytes, int]]:
    return {
        p.relative_to(folder).as_posix(): (p.read_bytes(), p.stat().st_mtime_ns)
        for p in sorted(folder.rglob("*"))
        if p.is_file()
    }


@pytest.fixture(scope="module")
def exported(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("export")
    export_site([FIXTURE_RUNS], out, task_index=fixture_tasks())
    return out


@pytest.fixture
def runs_copy(tmp_path) -> Path:
    """A writable copy of tests/fixtures/site (runs keep their relative task.dir)."""
    copy = tmp_path / "fixture-site"
    shutil.copytree(FIXTURE_SITE, copy)
    return copy / "runs"


def test_fixture_trajectories_are_valid_atif():
    for run_id in RUN_IDS:
        trajectory = load(FIXTURE_RUNS / run_id / "trajectory.json")
        assert trajectory["schema_version"] == "ATIF-v1.6"
        atif.Trajectory.model_validate(trajectory)


def test_export_writes_the_contract_files(exported):
    files = sorted(p.relative_to(exported).as_posix() for p in exported.rglob("*.json"))
    assert [f for f in files if not f.startswith(("data/search/", "data/runs-index/"))] == [
        "data/aliases.json",
        "data/home.json",
        "data/index.json",
        *[f"data/run-heads/{run_id}.json" for run_id in RUN_IDS],
        *[f"data/runs/{run_id}.json" for run_id in RUN_IDS],
        "data/task-inputs/fixture-checkout.json",
        "data/task-inputs/fixture-episode-easy.json",
        "data/task-inputs/fixture-xss-task.json",
        "data/task-runs/fixture-checkout.json",
        "data/task-runs/fixture-episode-easy.json",
        "data/task-runs/fixture-xss-task.json",
        "data/tasks/fixture-checkout.json",
        "data/tasks/fixture-episode-easy.json",
        "data/tasks/fixture-xss-task.json",
        "site-manifest.json",
    ]
    assert (exported / "index.html").is_file() and (exported / "run.html").is_file()
    assert (exported / "compare.html").is_file()
    assert (exported / "static" / "js" / "pages" / "run.js").is_file()
    assert (exported / "static" / "app.css").is_file()


def test_index_matches_contract_and_run_files(exported):
    index = load(exported / "data" / "index.json")
    assert set(index) == {"version", "generated_by", "tasks", "runs", "leaderboard",
                          "leaderboard_all", "incomplete_runs", "attempts", "jobs"}
    assert index["incomplete_runs"] == 0 and index["leaderboard_all"] == index["leaderboard"]
    assert [row["run_id"] for row in index["runs"]] == RUN_IDS
    for row in index["runs"]:
        assert set(row) == {
            "run_id",
            "kind",
            "task_id",
            "workflow",
            "tier",
            "policy",
            "model",
            "reward",
            "solved",
            "steps",
            "agent",
            "status",
            "incident",
        }
        run_json = load(FIXTURE_RUNS / row["run_id"] / "run.json")
        assert row["incident"] is None  # no generated ARIA incident among the fixtures
        assert row["reward"] == run_json["final"]["reward"]
        assert row["solved"] == run_json["final"]["solved"]
        assert row["steps"] == run_json["steps"]
        assert row["policy"] == run_json["policy"]
    by_policy = {row["policy"]: row for row in index["leaderboard"]}
    assert by_policy["oracle"] == {
        "kind": "alerting",
        "policy": "oracle",
        "runs": 1,
        "mean_reward": 1.0,
        "solved_rate": 1.0,
        "ci_low": None,  # one run: no interval
        "ci_high": None,
        "pass_at": {},  # no task with two attempts
        "no_reward": 0,
    }
    assert by_policy["partial"]["mean_reward"] == 0.126
    assert index["leaderboard"][0]["policy"] == "oracle"
    tasks = {row["id"]: row for row in index["tasks"]}
    assert tasks["fixture-checkout"] == {
        "id": "fixture-checkout",
        "workflow": "create",
        "tier": 1,
        "title": "Page on checkout errors",
        "runs": 2,
    }


def test_task_file_comes_from_the_task_folder(exported):
    task = load(exported / "data" / "tasks" / "fixture-checkout.json")
    assert set(task) == {"id", "workflow", "tier", "title", "instruction", "requirements", "checks", "panel"}
    assert task["panel"] == [{"req": "A1", "checks": [0, 1, 2]}, {"req": "R1", "checks": [3, 4]},
                             {"req": None, "checks": [5, 6]}]
    folder = FIXTURE_SITE / "tasks" / "fixture-checkout"
    assert task["instruction"] == (folder / "instruction.md").read_text()
    catalog = load(folder / "tests" / "checks.json")
    assert [c["id"] for c in task["checks"]] == [c["id"] for c in catalog["checks"]]
    assert set(task["checks"][0]) == {"id", "req", "family", "label", "note", "probe", "plot"}
    assert [c["probe"] for c in task["checks"]] == [c["probe"] for c in catalog["checks"]]
    assert task["requirements"][0] == {
        "id": "A1",
        "kind": "alert",
        "weight": 3,
        "title": catalog["requirements"][0]["title"],
    }
    inputs = load(exported / "data" / "task-inputs" / "fixture-checkout.json")
    assert set(inputs) == {"task_id", "evaluation_interval", "input_series", "scenario_plots"}
    assert inputs["task_id"] == "fixture-checkout" and inputs["evaluation_interval"] == catalog["evaluation_interval"]
    used = {c["probe"]["scenario"] for c in catalog["checks"] if c["probe"].get("scenario")}
    assert inputs["input_series"] == {key: catalog["input_series"][key] for key in sorted(used)} and used
    assert set(inputs["scenario_plots"]) == {"normal|checkout", "outage|checkout"}


def test_task_file_falls_back_to_run_json_when_task_folder_is_gone(exported):
    task = load(exported / "data" / "tasks" / "fixture-xss-task.json")
    run_json = load(FIXTURE_RUNS / "fixture-xss" / "run.json")
    trajectory = load(FIXTURE_RUNS / "fixture-xss" / "trajectory.json")
    assert task["checks"] == [{**c, "probe": None, "plot": None} for c in run_json["checks"]]
    inputs = load(exported / "data" / "task-inputs" / "fixture-xss-task.json")
    assert (inputs["input_series"], inputs["scenario_plots"], inputs["evaluation_interval"]) == ({}, {}, None)
    assert task["requirements"] == run_json["requirements"]
    assert task["instruction"] == trajectory["steps"][0]["message"]
    assert task["workflow"] == run_json["task"]["workflow"]


def test_run_head_holds_the_first_steps_and_what_the_header_needs(exported):
    for run_id in RUN_IDS:
        run = load(exported / "data" / "runs" / f"{run_id}.json")
        head = load(exported / "data" / "run-heads" / f"{run_id}.json")
        task = load(exported / "data" / "tasks" / f"{run['task_id']}.json")
        episode = {"episode"} if run["kind"] == "episode" else set()
        assert set(head) == set(run) | {"step_count", "last_total", "task"} | episode
        assert {key: head[key] for key in run if key != "steps"} == {key: run[key] for key in run if key != "steps"}
        assert head["step_count"] == len(run["steps"]) and head["last_total"] == run["steps"][-1]["total"]
        assert head["task"] == head_task(task)
        assert head["task"]["checks"] == [{"index": i, **{k: task["checks"][i][k] for k in ("id", "req", "family", "label")}}
                                          for group in task["panel"] for i in group["checks"]], "few checks: all of them"
        panel_causes = [{**step, **({"message": ""} if step["n"] == 0 else {}), "blame": {}, "causes": {key: cause and {k: cause[k] for k in ("kind", "summary", "why") if k in cause}
                                                         for key, cause in step["causes"].items()}}
                        for step in run["steps"][:HEAD_STEPS]]
        assert head["steps"] == panel_causes, "the first steps, as in the run file (all its checks are in the head)"
    raw = (exported / "data" / "run-heads" / "fixture-oracle-s1.json").read_bytes()
    assert raw == orjson.dumps(load(exported / "data" / "run-heads" / "fixture-oracle-s1.json"),
                               option=orjson.OPT_SORT_KEYS), "compact, sorted keys"


def test_reexport_removes_stale_run_heads(tmp_path):
    out = tmp_path / "site"
    export_site([FIXTURE_RUNS], out, task_index=fixture_tasks())
    export_site([FIXTURE_RUNS / "fixture-oracle-s1"], out, task_index=fixture_tasks())
    assert sorted(p.name for p in (out / "data" / "run-heads").iterdir()) == ["fixture-oracle-s1.json"]


def test_run_steps_follow_the_trajectory_grades(exported):
    run = load(exported / "data" / "runs" / "fixture-oracle-s1.json")
    assert set(run) == {"run_id", "kind", "task_id", "policy", "model", "seed", "status", "error",
                        "final", "tools", "steps"}
    assert run["status"] == "complete" and run["error"] is None
    trajectory = load(FIXTURE_RUNS / "fixture-oracle-s1" / "trajectory.json")
    steps = run["steps"]
    assert [s["n"] for s in steps] == list(range(len(trajectory["steps"])))
    for step, source in zip(steps, trajectory["steps"]):
        assert set(step) == STEP_KEYS
        assert step["step_id"] == source["step_id"]
        grade = (source.get("extra") or {}).get("grade")
        assert step["graded"] is (grade is not None)
        if source.get("tool_calls"):
            call = source["tool_calls"][0]
            assert step["tool"] == {"name": call["function_name"], "arguments": call["arguments"]}
            assert step["output"] == source["observation"]["results"][0]["content"]
        else:
            assert step["tool"] is None and step["output"] is None
    assert [s["total"] for s in steps] == [0.0, 0.0, 0.0, 0.24, 1.0, 1.0]
    assert [s["reward"] for s in steps] == [0.0, 0.0, 0.0, 0.24, 0.76, 0.0]
    assert [s["checks"] for s in steps] == ["01-0111"] * 3 + ["1110111", "1111111", "1111111"]
    assert [s["changed"] for s in steps] == [[], [], [], [0, 2], [3], []]
    assert steps[0]["failed"] == trajectory["steps"][0]["extra"]["grade"]["failed"]
    assert steps[1]["failed"] == steps[2]["failed"] == {}, "unchanged details are not repeated"
    assert steps[3]["failed"] == {"A1-fire-1": ""}, "a detail that ends is listed as empty"
    assert failure_at(steps, 2, "R1-route-1") == trajectory["steps"][0]["extra"]["grade"]["failed"]["R1-route-1"]
    assert failure_at(steps, 4, "R1-route-1") == ""
    assert [s["diff"] is not None for s in steps] == [False, False, False, True, True, False]


def test_regression_step_has_negative_reward_and_marks_changed_check(exported):
    steps = load(exported / "data" / "runs" / "fixture-partial-s1.json")["steps"]
    assert steps[2]["reward"] == -0.042 and steps[2]["total"] == 0.126
    assert steps[2]["changed"] == [3, 5]
    assert "pres-1" in steps[2]["failed"]


def test_diff_hunks_for_a_known_edit(exported):
    diff = load(exported / "data" / "runs" / "fixture-oracle-s1.json")["steps"][3]["diff"]
    assert diff["path"] == "rules/a.yml" and diff["old_exists"] is True
    assert diff["hunks"] == [
        {
            "header": "@@ -5,3 +5,10 @@",
            "lines": [
                [" ", "        expr: |"],
                [" ", '          sum by (service) (rate(http_requests_total{code=~"5.."}[5m]))'],
                [" ", "          / sum by (service) (rate(http_requests_total[5m]))"],
                ["+", "      - alert: CheckoutHighErrorRate"],
                ["+", '        expr: service:http_errors:ratio_rate5m{service="checkout"} > 0.05'],
                ["+", "        for: 5m"],
                ["+", "        labels:"],
                ["+", "          severity: page"],
                ["+", "        annotations:"],
                ["+", "          summary: checkout error ratio above 5%"],
            ],
        }
    ]


def test_diff_of_a_new_file_starts_from_nothing(exported):
    diff = load(exported / "data" / "runs" / "fixture-partial-s1.json")["steps"][3]["diff"]
    assert diff["path"] == "rules/extra.yml" and diff["old_exists"] is False
    assert diff["hunks"][0]["header"] == "@@ -0,0 +1,5 @@"
    assert {op for op, _ in diff["hunks"][0]["lines"]} == {"+"}


def test_second_write_of_a_file_diffs_against_the_first():
    old = "a\nb\nc\nd\ne\nf\ng\nh\n"
    new = "a\nb\nc\nD\ne\nf\ng\nh\n"
    assert unified_hunks(old, new) == [
        {
            "header": "@@ -1,7 +1,7 @@",
            "lines": [
                [" ", "a"],
                [" ", "b"],
                [" ", "c"],
                ["-", "d"],
                ["+", "D"],
                [" ", "e"],
                [" ", "f"],
                [" ", "g"],
            ],
        }
    ]
    assert unified_hunks(new, new) == []


def test_two_exports_give_identical_bytes(tmp_path):
    first, second = tmp_path / "one", tmp_path / "two"
    export_site([FIXTURE_RUNS], first, task_index=fixture_tasks())
    export_site([FIXTURE_RUNS / run_id for run_id in reversed(RUN_IDS)], second, task_index=fixture_tasks())
    one = {k: v[0] for k, v in snapshot(first).items()}
    two = {k: v[0] for k, v in snapshot(second).items()}
    assert one == two


def test_data_files_are_compact_sorted_json(exported):
    raw = (exported / "data" / "runs" / "fixture-oracle-s1.json").read_bytes()
    value = json.loads(raw)
    assert (
        raw == json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()
    )


def test_malformed_run_json_is_bad_input_and_keeps_previous_export(runs_copy, tmp_path):
    out = tmp_path / "site"
    export_site([runs_copy], out, task_index=fixture_tasks())
    before = snapshot(out)
    broken = runs_copy / "fixture-partial-s1" / "run.json"
    broken.write_text('{"run_id": "fixture-partial-s1", "kind": ')
    with pytest.raises(BadInput) as caught:
        export_site([runs_copy], out, task_index=fixture_tasks())
    assert caught.value.path == str(broken)
    assert "run.json" in str(caught.value)
    assert snapshot(out) == before


@pytest.mark.parametrize(
    ("file_name", "content", "problem"),
    [
        ("run.json", '{"kind": "alerting", "task": {"id": "t"}}', "run summary"),
        ("run.json", "[1, 2]", "object"),
        (
            "trajectory.json",
            '{"schema_version": "ATIF-v1.6", "agent": {"name": "a", "version": "1"}, "steps": [{"step_id": 2, "source": "user", "message": "x"}]}',
            "not sequential",
        ),
        ("trajectory.json", "not json", "not valid JSON"),
    ],
)
def test_bad_run_files_name_the_file(runs_copy, tmp_path, file_name, content, problem):
    target = runs_copy / "fixture-oracle-s1" / file_name
    target.write_text(content)
    with pytest.raises(BadInput) as caught:
        export_site([runs_copy], tmp_path / "site", task_index=fixture_tasks())
    assert caught.value.path == str(target)
    assert problem in str(caught.value)
    assert not (tmp_path / "site").exists()


def test_run_folder_without_its_files_is_bad_input(runs_copy, tmp_path):
    (runs_copy / "fixture-xss" / "trajectory.json").unlink()
    with pytest.raises(BadInput) as caught:
        export_site([runs_copy / "fixture-xss"], tmp_path / "site", task_index=fixture_tasks())
    assert caught.value.path.endswith("trajectory.json")
    with pytest.raises(BadInput):
        export_site([tmp_path / "no-such-runs"], tmp_path / "site", task_index=fixture_tasks())


def test_checks_string_of_wrong_length_is_bad_input(runs_copy, tmp_path):
    path = runs_copy / "fixture-oracle-s1" / "trajectory.json"
    trajectory = load(path)
    trajectory["steps"][3]["extra"]["grade"]["checks"] = "111"
    path.write_text(json.dumps(trajectory))
    with pytest.raises(BadInput) as caught:
        export_site([runs_copy], tmp_path / "site", task_index=fixture_tasks())
    assert caught.value.path == str(path) and "catalog has 7 checks" in str(caught.value)


def test_reexport_removes_stale_run_files_and_keeps_other_files(tmp_path):
    out = tmp_path / "site"
    export_site([FIXTURE_RUNS], out, task_index=fixture_tasks())
    (out / "README.md").write_text("space front matter")
    summary = export_site([FIXTURE_RUNS / "fixture-oracle-s1"], out, task_index=fixture_tasks())
    assert summary["runs"] == 1 and summary["tasks"] == 1
    assert sorted(p.name for p in (out / "data" / "runs").iterdir()) == ["fixture-oracle-s1.json"]
    assert sorted(p.name for p in (out / "data" / "tasks").iterdir()) == ["fixture-checkout.json"]
    assert (out / "README.md").read_text() == "space front matter"
    assert summary["bytes"] == sum(p.stat().st_size for p in out.rglob("*") if p.is_file()) - len(
        "space front matter"
    ) - (out / "site-manifest.json").stat().st_size


def test_episode_run_maps_reward_and_total_from_env(exported):
    run = load(exported / "data" / "runs" / "fixture-episode-easy.json")
    trajectory = load(FIXTURE_RUNS / "fixture-episode-easy" / "trajectory.json")
    envs = [step["extra"]["env"] for step in trajectory["steps"][1:]]
    assert run["kind"] == "episode"
    assert [s["reward"] for s in run["steps"]] == [0.0] + [env["reward"] for env in envs]
    assert [s["total"] for s in run["steps"]] == [0.0] + [env["total"] for env in envs]
    assert [s["graded"] for s in run["steps"]] == [False, True, True, True, True]
    assert {s["checks"] for s in run["steps"]} == {""}
    assert all(s["diff"] is None and s["changed"] == [] and s["failed"] == {} for s in run["steps"])
    task = load(exported / "data" / "tasks" / "fixture-episode-easy.json")
    assert task["instruction"] == trajectory["steps"][0]["message"]
    assert task["checks"] == [] and task["requirements"] == []
    assert task["workflow"] == "incident" and task["tier"] == "easy"


def test_pages_escape_run_text(exported):
    assert template_environment(SITE_DIR / "templates").autoescape is True
    home = (exported / "index.html").read_text()
    assert "<img src=x" not in home and "<script>window" not in home
    assert "&lt;img src=x onerror=" in home


def test_serve_moves_to_the_next_free_port(exported):
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        server = make_server(exported, port=port)
        try:
            assert server.server_address[1] != port
            assert server.server_address[1] > port
        finally:
            server.server_close()


def test_task_runs_file_lists_the_runs_of_one_task(exported):
    listing = load(exported / "data" / "task-runs" / "fixture-checkout.json")
    assert listing == {
        "task_id": "fixture-checkout",
        "runs": [
            {"run_id": "fixture-oracle-s1", "policy": "oracle", "model": None, "reward": 1.0,
             "solved": True, "steps": 5, "status": "complete"},
            {"run_id": "fixture-partial-s1", "policy": "partial", "model": None, "reward": 0.126,
             "solved": False, "steps": 4, "status": "complete"},
        ],
    }


def test_home_json_and_run_shards_list_every_run(exported):
    home = load(exported / "data" / "home.json")
    index = load(exported / "data" / "index.json")
    assert home["runs_total"] == 4 and home["shards"] == [{"file": "data/runs-index/0.json", "count": 4}]
    shard = load(exported / home["shards"][0]["file"])
    rows = [dict(zip(shard["fields"], values)) for values in shard["rows"]]
    assert rows == index["runs"]
    from collections import Counter

    for field in ("policy", "solved", "kind", "workflow"):
        counts = Counter(row[field] for row in index["runs"])
        assert {str(v): c for v, c in home["facets"][field]} == {str(v): c for v, c in counts.items()}


def test_search_shards_hold_tokens_where_crc32_says(exported):
    import zlib

    home = load(exported / "data" / "home.json")
    count = home["search_shards"]
    shard = load(exported / "data" / "search" / f"{zlib.crc32(b'storage') % count}.json")
    run_numbers = {row["run_id"]: n for n, row in enumerate(load(exported / "data" / "index.json")["runs"])}
    postings = {run: steps for run, *steps in shard["tokens"]["storage"]}
    assert postings[run_numbers["fixture-oracle-s1"]] == [4], "the write of alertmanager.yml"


def test_long_texts_move_to_part_files_and_join_back(monkeypatch):
    from exporter import long_text

    monkeypatch.setattr(long_text, "PART_CHARS", 10_000)
    text = "x" * 25_001
    steps = [{"n": 0, "message": "", "output": text, "tool": {"name": "t", "arguments": {"a": text}},
              "diff": None}]
    stored, files = long_text.externalize_long_texts("r", steps)
    assert stored[0]["output"] == text[: long_text.PREVIEW_CHARS] and steps[0]["output"] == text
    lazy = stored[0]["lazy"]
    assert lazy["output"]["chars"] == 25_001 and len(lazy["output"]["parts"]) == 3
    assert "".join(json.loads(files[p]) for p in lazy["output"]["parts"]) == text
    assert json.loads("".join(json.loads(files[p]) for p in lazy["arguments"]["parts"])) == {"a": text}
    assert stored[0]["tool"]["arguments"]["a"].endswith("\u2026")
    assert "lazy" not in long_text.externalize_long_texts("r", [{"n": 0, "output": "short"}])[0][0]


def test_failed_details_are_listed_where_they_start_change_or_end():
    from exporter.long_text import delta_failed

    steps = [{"failed": {"a": "x"}}, {"failed": {"a": "x"}}, {"failed": {"a": "y", "b": "z"}},
             {"failed": {"b": "z"}}, {"failed": {}}]
    assert [s["failed"] for s in delta_failed(steps)] == [
        {"a": "x"}, {}, {"a": "y", "b": "z"}, {"a": ""}, {"b": ""}
    ]


def test_panel_groups_follow_the_requirements_then_unlisted_ones_then_general_checks():
    requirements = [{"id": "B"}, {"id": "A"}, {"id": "empty"}]
    checks = [{"id": "a1", "req": "A"}, {"id": "g1", "req": None}, {"id": "x1", "req": "X"},
              {"id": "b1", "req": "B"}, {"id": "a2", "req": "A"}, {"id": "x2", "req": "X"}]
    assert panel_groups(requirements, checks) == [
        {"req": "B", "checks": [3]}, {"req": "A", "checks": [0, 4]}, {"req": "X", "checks": [2, 5]},
        {"req": None, "checks": [1]}]


def synthetic_task(group_sizes: list[int]) -> dict:
    checks = [{"id": f"R{g}.c{n}", "req": f"R{g}", "family": "Fire", "label": f"check {n} of R{g}", "note": "a note",
               "probe": {"type": "promql", "expr": "up"}, "plot": None}
              for g, size in enumerate(group_sizes) for n in range(size)]
    requirements = [{"id": f"R{g}", "kind": "alert", "weight": 1, "title": f"req {g}"} for g in range(len(group_sizes))]
    return {"id": "t", "workflow": None, "tier": None, "title": "T", "instruction": "do it", "requirements": requirements,
            "checks": checks, "panel": panel_groups(requirements, checks)}


def test_a_head_holds_whole_panel_groups_until_it_has_24_checks_and_only_their_failures():
    task = synthetic_task([15, 5, 30, 50])
    head_checks = head_task(task)
    assert [group["req"] for group in head_checks["panel"]] == ["R0", "R1", "R2"], "15 + 5 < 24 <= 15 + 5 + 30"
    assert len(head_checks["checks"]) == 50 and head_checks["check_count"] == 100 and HEAD_CHECKS == 24
    assert [r["id"] for r in head_checks["requirements"]] == ["R0", "R1", "R2"]
    assert set(head_checks["checks"][0]) == {"index", "id", "req", "family", "label"}, "no note, probe or plot"
    cause = {"kind": "alert-undefined", "summary": "no rule defines X", "facts": {"alert": "X"}}
    failing = {check["id"]: "expected X, got none" for check in task["checks"]}
    step = {"n": 0, "total": 0.0, "checks": "0" * 100, "message": "do it", "failed": failing, "causes": {key: cause for key in failing},
            "blame": {key: None for key in failing}}
    later = {**step, "n": 1, "failed": {"R3.c0": ""}, "causes": {"R0.c0": None, "R3.c0": None}, "blame": {}}
    run = {"run_id": "r", "kind": "alerting", "task_id": "t", "steps": [step, later, {**later, "n": 2}]}
    head = run_head_document(run, task)
    shown = {check["id"] for check in head_checks["checks"]}
    assert set(head["steps"][0]["failed"]) == set(head["steps"][0]["causes"]) == shown
    assert head["steps"][0]["blame"] == {}, "blame is linked once the whole run file is in"
    assert head["steps"][0]["causes"]["R0.c0"] == {"kind": "alert-undefined", "summary": "no rule defines X"}
    assert head["steps"][1]["causes"] == {"R0.c0": None} and head["steps"][1]["failed"] == {}
    assert head["steps"][0]["checks"] == step["checks"] and len(head["steps"]) == HEAD_STEPS
    assert head["steps"][0]["message"] == "" and run["steps"][0]["message"] == "do it", "the view shows a note there"


def test_an_export_with_a_memo_is_the_export_without_one(tmp_path, runs_copy):
    """``alertforge view`` keeps each run's masked form between exports (``memo``): the site
    and the redaction counts are the same as a plain export's, and a changed run is masked anew."""
    trajectory = runs_copy / "fixture-partial-s1" / "trajectory.json"
    doc = json.loads(trajectory.read_text())
    doc["steps"][1]["message"] = "token ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8 here"
    trajectory.write_text(json.dumps(doc))
    plain = export_site([runs_copy], tmp_path / "plain", task_index=fixture_tasks())
    memo: dict = {}
    first = export_site([runs_copy], tmp_path / "memo", task_index=fixture_tasks(), memo=memo)
    again = export_site([runs_copy], tmp_path / "memo", task_index=fixture_tasks(), memo=memo)
    manifest = lambda site: load(site / "site-manifest.json")["files"]
    assert manifest(tmp_path / "plain") == manifest(tmp_path / "memo")
    assert plain["masked"] == first["masked"] == again["masked"] > 0
    assert plain["redaction"] == again["redaction"]
    doc["steps"][1]["message"] = "changed, no secret"
    trajectory.write_text(json.dumps(doc))
    changed = export_site([runs_copy], tmp_path / "memo", task_index=fixture_tasks(), memo=memo)
    assert changed["masked"] < again["masked"]
    assert b"changed, no secret" in (tmp_path / "memo" / "data" / "runs" / "fixture-partial-s1.json").read_bytes()


def test_an_index_past_the_file_cap_points_to_the_run_list_shards(exported, tmp_path, monkeypatch):
    from contract.site import SiteIndex
    from exporter import export_shared, run_index
    from exporter.single_file import build_single_file

    whole = load(exported / "data" / "index.json")
    monkeypatch.setattr(run_index, "SHARD_ROWS", 2)
    monkeypatch.setattr(export_shared, "MAX_FILE_BYTES", len((exported / "data" / "index.json").read_bytes()) - 1)
    out = tmp_path / "site"
    export_site([FIXTURE_RUNS], out, task_index=fixture_tasks())
    index = load(out / "data" / "index.json")
    assert "runs" not in index and index["run_shards"] == 2, "4 runs, 2 a shard"
    SiteIndex.model_validate(index)
    rows = []
    for k in range(index["run_shards"]):
        shard = load(out / "data" / "runs-index" / f"{k}.json")
        rows += [dict(zip(shard["fields"], row)) for row in shard["rows"]]
    assert rows == whole["runs"]
    assert {k: v for k, v in index.items() if k != "run_shards"} == {k: v for k, v in whole.items() if k != "runs"}
    assert (out / "index.html").read_bytes() == (exported / "index.html").read_bytes(), "pages render every row"
    html, runs = build_single_file([FIXTURE_RUNS], task_index=fixture_tasks())
    assert runs == 4 and b"fixture-oracle-s1" in html
    with pytest.raises(ValueError, match="exactly one of runs and run_shards"):
        SiteIndex.model_validate({**index, "runs": whole["runs"]})


def test_the_leaderboard_keeps_each_run_kind_apart():
    """An alerting run's reward (the grader's progress) and an episode's (the environment's
    score) are not on one scale: the same policy gets a row per kind, alerting rows first, and
    pass@k counts only that kind's tasks."""
    from contract.site import RunRow
    from exporter.site_data import leaderboard

    def run(kind, task, reward):
        return RunRow(run_id=f"{task}-{reward}", kind=kind, task_id=task, workflow=None, tier=None, policy="llm",
                      model="m", reward=reward, solved=reward >= 1, steps=1, status="complete")

    rows = leaderboard([run("episode", "aria-easy", 0.9), run("episode", "aria-easy", 0.7),
                        run("alerting", "af-001", 0.2), run("alerting", "af-001", 1.0)])
    assert [(row["kind"], row["policy"], row["runs"]) for row in rows] == [("alerting", "llm", 2), ("episode", "llm", 2)]
    assert rows[0]["mean_reward"] == 0.6 and rows[1]["mean_reward"] == 0.8
    assert rows[0]["pass_at"] == {"1": 0.5, "2": 1.0} and rows[1]["pass_at"] == {"1": 0.0, "2": 0.0}


UNINDENTED_SOURCE = """<ul>
    <li><a href="x">run</a>{{ badge }}{# ends the line #}
      <span>&middot; label</span>
    {% if shown %}
      <b>shown</b>
    {% endif %}
    </li>
    <pre id="a">{{ text }}</pre>
    <pre>kept
      as written</pre>
  <script>
    let a = 1;
  </script>
</ul>"""


def test_template_lines_lose_their_indentation_but_not_the_spaces_the_page_shows(tmp_path):
    from exporter.render import template_environment

    folder = tmp_path
    (folder / "t.html").write_text(UNINDENTED_SOURCE)
    html = template_environment(folder).get_template("t.html").render(badge="", shown=True, text="  two\n   lines")
    # after a line ending in a tag trim_blocks takes the line break of, one space stays
    assert html == ("<ul>\n<li><a href=\"x\">run</a> <span>&middot; label</span>\n <b>shown</b>\n </li>\n"
                    "<pre id=\"a\">  two\n   lines</pre>\n<pre>kept\n      as written</pre>\n"
                    "<script>\n    let a = 1;\n  </script>\n</ul>")
