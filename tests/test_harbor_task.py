"""The Harbor side of the bundled tasks, run directly (no Docker engine runs here).

solution/solve.sh and tests/test.sh run as Harbor would run them, with the workspace and
the reward path overridden; task.toml is checked against the Harbor keys we rely on;
registry.json and manifest.jsonl regenerate byte for byte.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from contract.files import read_json
from contract.paths import TASKS_DIR, task_dirs
from contract.version import __version__
from tasks.generator import generate as generate_module
from tasks.generator import harbor

TASKS = task_dirs(TASKS_DIR)
FIRST = TASKS[0]
PYTHON = sys.executable
"""The checkout's Python: it imports grader.verify as the verifier image's venv does."""


def _workspace(tmp_path: Path, task: Path = FIRST) -> Path:
    """A copy of the task's pristine repo, as the agent's container holds it."""
    ws = tmp_path / "app" / "monitoring"
    shutil.copytree(task / "environment" / "monitoring", ws)
    return ws


def _test_sh(task: Path, workspace: Path, reward: Path) -> subprocess.CompletedProcess:
    env = dict(os.environ, ALERTFORGE_WORKSPACE=str(workspace),
               ALERTFORGE_REWARD_PATH=str(reward), ALERTFORGE_PYTHON=PYTHON)
    return subprocess.run(["bash", str(task / "tests" / "test.sh")], env=env, cwd=workspace.parent,
                          check=False, capture_output=True, text=True, timeout=240)


def _reward_file(path: Path) -> dict:
    reward = json.loads(path.read_text(encoding="utf-8"))
    assert sorted(reward) == sorted(harbor.REWARD_KEYS) and len(reward) == 16, reward
    for key, value in reward.items():
        assert type(value) in (int, float), f"{key} = {value!r} is not a number"
    return reward


def test_oracle_solution_through_test_sh_gives_reward_1(tmp_path):
    ws = _workspace(tmp_path)
    solved = subprocess.run(["bash", str(FIRST / "solution" / "solve.sh"), str(ws)],
                            check=False, capture_output=True, text=True, timeout=60)
    assert solved.returncode == 0, solved.stderr
    reward_path = tmp_path / "logs" / "verifier" / "reward.json"
    done = _test_sh(FIRST, ws, reward_path)
    assert done.returncode == 0, done.stderr
    reward = _reward_file(reward_path)
    assert reward["reward"] == 1 and reward["solved"] == 1 and reward["tamper"] == 0, reward
    grade = read_json(reward_path.parent / "grade.json")
    assert sorted(grade["keys"]) == sorted(harbor.REWARD_KEYS)
    assert grade["task_id"] == FIRST.name


def test_pristine_repo_gives_reward_0_and_old_outputs_are_deleted(tmp_path):
    ws = _workspace(tmp_path)
    out = tmp_path / "logs" / "verifier"
    out.mkdir(parents=True)
    (out / "reward.json").write_text('{"reward": 1}\n')  # planted by an agent
    (out / "reward.txt").write_text("1\n")
    done = _test_sh(FIRST, ws, out / "reward.json")
    assert done.returncode == 0, done.stderr
    reward = _reward_file(out / "reward.json")
    assert reward["reward"] == 0 and reward["preservation"] == 1 and reward["syntax_ok"] == 1
    assert not (out / "reward.txt").exists()


@pytest.mark.parametrize("hidden", ["checks.json", "spec.json", "reference_records.yml",
                                    "pristine/alertmanager/alertmanager.yml", "pristine/rules/extra.yml"])
def test_tampered_hidden_file_fails_loudly_before_grading(tmp_path, hidden):
    task = tmp_path / FIRST.name
    shutil.copytree(FIRST, task)
    target = task / "tests" / hidden
    if target.exists():
        target.write_bytes(target.read_bytes().replace(b"1", b"2", 1) + b"\n")
    else:
        target.write_text("groups: []\n")
    ws = _workspace(tmp_path)
    subprocess.run(["bash", str(task / "solution" / "solve.sh"), str(ws)], check=True, timeout=60)
    reward_path = tmp_path / "out" / "reward.json"
    done = _test_sh(task, ws, reward_path)
    assert done.returncode != 0
    assert "checksums.sha256" in done.stderr
    reward = _reward_file(reward_path)
    assert reward["reward"] == 0 and reward["tamper"] == 1
    assert not (reward_path.parent / "grade.json").exists()


def test_a_missing_workspace_or_grader_fails_with_reward_0(tmp_path):
    reward_path = tmp_path / "out" / "reward.json"
    done = _test_sh(FIRST, tmp_path / "no-such-repo", reward_path)
    assert done.returncode != 0 and "workspace" in done.stderr
    assert _reward_file(reward_path)["reward"] == 0
    env = dict(os.environ, ALERTFORGE_WORKSPACE=str(_workspace(tmp_path)),
               ALERTFORGE_REWARD_PATH=str(reward_path), ALERTFORGE_PYTHON=str(tmp_path / "missing"))
    done = subprocess.run(["bash", str(FIRST / "tests" / "test.sh")], env=env,
                          check=False, capture_output=True, text=True, timeout=60)
    assert done.returncode != 0 and "grader failed" in done.stderr
    reward = _reward_file(reward_path)
    assert reward["reward"] == 0 and reward["tamper"] == 0


@pytest.mark.parametrize("task", TASKS, ids=lambda p: p.name)
def test_checksums_cover_the_hidden_files_and_the_pristine_copy(task):
    tests = task / "tests"
    listed = {}
    for line in (tests / "checksums.sha256").read_text().splitlines():
        digest, name = line.split("  ", 1)
        listed[name] = digest
    pristine = task / "environment" / "monitoring"
    expected = set(harbor.HIDDEN_TEST_FILES) | {
        f"pristine/{p.relative_to(pristine).as_posix()}" for p in pristine.rglob("*") if p.is_file()}
    assert set(listed) == expected
    for name, digest in listed.items():
        assert hashlib.sha256((tests / name).read_bytes()).hexdigest() == digest, name
    for path in pristine.rglob("*"):
        if path.is_file():
            assert (tests / "pristine" / path.relative_to(pristine)).read_bytes() == path.read_bytes()


@pytest.mark.parametrize("task", TASKS, ids=lambda p: p.name)
def test_task_toml_has_the_documented_harbor_keys_and_no_seed(task):
    config = tomllib.loads((task / "task.toml").read_text(encoding="utf-8"))
    assert set(config) <= {"version", "artifacts", "metadata", "verifier", "agent", "environment"}
    assert isinstance(config["version"], str)
    assert config["artifacts"] == ["/app/monitoring"]
    meta = config["metadata"]
    spec = read_json(task / "tests" / "spec.json")
    assert meta["workflow"] == spec["workflow"] and meta["tier"] == spec["tier"]
    assert meta["difficulty"] == spec["tier"] and isinstance(meta["tags"], list)
    assert config["agent"]["network_mode"] == "no-network"
    assert config["verifier"]["environment_mode"] == "separate"
    for section in ("agent", "verifier"):
        assert isinstance(config[section]["timeout_sec"], float) and config[section]["timeout_sec"] > 0
    env = config["environment"]
    assert isinstance(env["build_timeout_sec"], float)
    assert isinstance(env["cpus"], int) and isinstance(env["memory_mb"], int)

    def keys(value, path=""):
        if isinstance(value, dict):
            for key, inner in value.items():
                yield f"{path}.{key}"
                yield from keys(inner, f"{path}.{key}")

    assert not [k for k in keys(config) if "seed" in k.lower()]


@pytest.mark.parametrize("task", TASKS, ids=lambda p: p.name)
def test_dockerfiles_build_the_agent_and_verifier_images(task):
    agent = (task / "environment" / "Dockerfile").read_text()
    assert agent.startswith("#") and "FROM debian:" in agent
    assert "prometheus prometheus-alertmanager" in agent
    assert "COPY monitoring /app/monitoring" in agent and "WORKDIR /app" in agent
    verifier = (task / "tests" / "Dockerfile").read_text()
    assert "FROM debian:" in verifier and "python3" in verifier
    wheel = f"alertforge_verifier-{__version__}-py3-none-any.whl"
    assert f"pip install --no-cache-dir --index-url \"$PIP_INDEX_URL\" /tests/{wheel}" in verifier
    assert (task / "tests" / wheel).is_file()
    assert "COPY . /tests/" in verifier and "No Docker engine runs" in verifier
    assert os.access(task / "tests" / "test.sh", os.X_OK)
    assert os.access(task / "solution" / "solve.sh", os.X_OK)


def test_registry_and_manifest_regenerate_byte_for_byte():
    again = harbor.corpus_files(TASKS)
    assert again == harbor.corpus_files(list(reversed(TASKS)))
    assert (TASKS_DIR / "registry.json").read_bytes() == again["registry.json"]
    assert (TASKS_DIR / "manifest.jsonl").read_bytes() == again["manifest.jsonl"]
    datasets = json.loads(again["registry.json"])
    assert [d["name"] for d in datasets] == ["3ambench", "3ambench-mini"]
    assert [t["name"] for t in datasets[0]["tasks"]] == [t.name for t in TASKS]
    assert len(datasets[1]["tasks"]) == min(5, len(TASKS))
    for dataset in datasets:
        assert dataset["version"] == __version__ and dataset["description"]
        for entry in dataset["tasks"]:
            assert set(entry) == {"name", "path"}
            assert (TASKS_DIR.parent / entry["path"] / "task.toml").is_file()
    rows = [json.loads(line) for line in again["manifest.jsonl"].decode().splitlines()]
    assert [r["id"] for r in rows] == [t.name for t in TASKS]
    for row, task in zip(rows, TASKS):
        catalog = read_json(task / "tests" / "checks.json")
        assert set(row) == {"id", "workflow", "tier", "seed", "rules_format",
                            "requirement_ids", "check_count"}
        assert row["check_count"] == len(catalog["checks"])
        assert row["requirement_ids"] == sorted(r["id"] for r in catalog["requirements"])
        assert row["rules_format"] in ("plain", "PrometheusRule")
        assert row["seed"] == read_json(task / "tests" / "spec.json")["seed"]


def test_generate_writes_registry_and_manifest_beside_the_tasks(tmp_path, monkeypatch):
    monkeypatch.setattr(generate_module, "BUNDLED", generate_module.BUNDLED[:1])
    written = generate_module.generate(tmp_path)
    assert [p.name for p in written] == [FIRST.name]
    for name, data in harbor.corpus_files(written).items():
        assert (tmp_path / name).read_bytes() == data
    row = json.loads((tmp_path / "manifest.jsonl").read_text())
    assert row == json.loads((TASKS_DIR / "manifest.jsonl").read_text().splitlines()[0])


def test_mini_set_takes_one_task_per_workflow_across_tiers():
    rows = [{"id": f"af-{i:03d}", "workflow": w, "tier": t}
            for i, (w, t) in enumerate(((w, t) for w in "abcde" for t in ("easy", "medium", "hard")
                                        for _ in (1, 2)), 1)]
    mini = harbor.mini_set(rows)
    picked = [r for r in rows if r["id"] in mini]
    assert len(mini) == 5 and sorted({r["workflow"] for r in picked}) == list("abcde")
    assert {r["tier"] for r in picked} == {"easy", "medium", "hard"}
    assert harbor.mini_set(rows[:3]) == [r["id"] for r in rows[:3]]
    assert len(harbor.mini_set(rows[:8])) == 5


def test_task_toml_keys_are_added_once_and_conflicts_refused():
    text = '[metadata]\ntier = "easy"\n\n[agent]\ntimeout_sec = 1.0\n'
    once = harbor.harbor_task_toml(text)
    assert harbor.harbor_task_toml(once) == once
    config = tomllib.loads(once)
    assert config["agent"] == {"timeout_sec": 1.0, "network_mode": "no-network"}
    assert config["verifier"]["environment_mode"] == "separate"
    with pytest.raises(ValueError, match="network_mode"):
        harbor.harbor_task_toml(text.replace("timeout_sec = 1.0", 'network_mode = "public"'))
