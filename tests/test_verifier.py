"""The verifier builds from what we ship: a task folder alone gives a working grader.

Harbor builds a task's verifier image from its tests/ folder. No Docker engine runs here, so
the test runs the install step of tests/Dockerfile (the RUN line that makes /opt/alertforge)
into a fresh venv, with /tests/ pointing at a copy of one task folder's tests/ and nothing
pointing at this checkout, then runs that copy's test.sh with the venv's Python: the oracle
scores 1.0 and the pristine repo 0.0. pip fetches the wheel's dependencies from the package
index (PyPI, or the mirror pip is configured with).
"""

from __future__ import annotations

import ast
import json
import os
import re
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from contract.paths import TASKS_DIR, task_dirs
from contract.version import __version__
from tasks.generator import verifier_wheel

TASKS = task_dirs(TASKS_DIR)
CRD_TASK = next(t for t in TASKS if "kind: PrometheusRule" in "".join(
    p.read_text(encoding="utf-8") for p in (t / "environment" / "monitoring").rglob("*.y*ml")))
"""A hard-tier task whose rules are PrometheusRule CRDs: the install must cover both formats."""


def _clean_env(**extra: str) -> dict[str, str]:
    """The environment without anything that could reach the checkout's packages."""
    env = {k: v for k, v in os.environ.items()
           if k not in ("PYTHONPATH", "VIRTUAL_ENV", "PYTHONHOME")}
    env["PATH"] = ":".join(p for p in env.get("PATH", "").split(":") if ".venv" not in p)
    env.update(extra)
    return env


def _install_line(dockerfile: str) -> str:
    """The RUN instruction of tests/Dockerfile that builds /opt/alertforge (continuations joined)."""
    joined = re.sub(r"\\\n\s*", " ", dockerfile)
    runs = [line[4:] for line in joined.splitlines()
            if line.startswith("RUN ") and "-m venv /opt/alertforge" in line]
    assert len(runs) == 1, runs
    return runs[0]


@pytest.fixture(scope="module")
def verifier(tmp_path_factory) -> tuple[Path, Path]:
    """(the copied task folder, its verifier venv's python) built as the Dockerfile says."""
    root = tmp_path_factory.mktemp("verifier")
    task = root / "task"
    shutil.copytree(CRD_TASK, task)
    venv = root / "opt-alertforge"
    line = _install_line((task / "tests" / "Dockerfile").read_text(encoding="utf-8"))
    line = line.replace("/opt/alertforge", str(venv)).replace("/tests/", f"{task / 'tests'}/")
    index = os.environ.get("PIP_INDEX_URL", "https://pypi.org/simple")
    done = subprocess.run(["bash", "-c", line], cwd=root, env=_clean_env(PIP_INDEX_URL=index),
                          capture_output=True, text=True, timeout=600, check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    return task, venv / "bin" / "python3"


@pytest.mark.sweep
def test_the_install_holds_the_grader_and_nothing_of_the_checkout(verifier):
    task, python = verifier
    code = "import grader.verify, contract; print(grader.verify.__file__); print(contract.__file__)"
    found = subprocess.run([str(python), "-c", code],
                           cwd=task, env=_clean_env(), capture_output=True, text=True, check=True)
    venv = python.parent.parent
    for path in found.stdout.split():
        assert Path(path).is_relative_to(venv), path
    nothing = subprocess.run([str(python), "-c", "import recorder"], cwd=task, env=_clean_env(),
                             capture_output=True, text=True, check=False)
    assert nothing.returncode != 0, "the verifier image must not need the recorder"


@pytest.mark.sweep
@pytest.mark.parametrize("which, reward", [("oracle", 1.0), ("no-op", 0.0)])
def test_the_task_folder_alone_grades_the_oracle_1_and_the_noop_0(verifier, tmp_path, which, reward):
    task, python = verifier
    workspace = tmp_path / "app" / "monitoring"
    shutil.copytree(task / "environment" / "monitoring", workspace)
    if which == "oracle":
        subprocess.run(["bash", str(task / "solution" / "solve.sh"), str(workspace)],
                       check=True, capture_output=True, timeout=60)
    reward_path = tmp_path / "logs" / "verifier" / "reward.json"
    env = _clean_env(ALERTFORGE_WORKSPACE=str(workspace), ALERTFORGE_REWARD_PATH=str(reward_path),
                     ALERTFORGE_PYTHON=str(python))
    env["PATH"] = f"{python.parent}:{env['PATH']}"
    done = subprocess.run(["bash", str(task / "tests" / "test.sh")], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    got = json.loads(reward_path.read_text(encoding="utf-8"))
    assert got["reward"] == reward and got["tamper"] == 0, got
    grade = json.loads((reward_path.parent / "grade.json").read_text(encoding="utf-8"))
    assert grade["task_id"] and grade["keys"]["reward"] == reward


@pytest.mark.sweep
def test_the_verifier_names_a_bad_task_folder_and_exits_2(verifier, tmp_path):
    _, python = verifier
    done = subprocess.run([str(python), "-m", "grader.verify", str(tmp_path / "nothing"),
                           "--workspace", str(tmp_path)], cwd=tmp_path, env=_clean_env(),
                          capture_output=True, text=True, check=False)
    assert done.returncode == 2 and "nothing" in done.stderr and "Traceback" not in done.stderr


def test_every_task_ships_the_release_wheel_of_this_version():
    release = verifier_wheel.release_wheel()
    for task in TASKS:
        assert (task / "tests" / verifier_wheel.WHEEL_NAME).read_bytes() == release, task.name
    with zipfile.ZipFile(verifier_wheel.RELEASE_DIR / verifier_wheel.WHEEL_NAME) as wheel:
        names = set(wheel.namelist())
        meta = wheel.read(f"alertforge_verifier-{__version__}.dist-info/METADATA").decode()
    assert "grader/verify.py" in names and "contract/files.py" in names
    assert not any(n.startswith(("recorder/", "exporter/", "alertforge/")) for n in names)
    assert f"Version: {__version__}\n" in meta
    assert sorted(re.findall(r"^Requires-Dist: (.+)$", meta, re.MULTILINE)) == sorted(verifier_wheel.DEPENDENCIES)


@pytest.mark.sweep
def test_the_wheel_build_is_reproducible(tmp_path):
    first = verifier_wheel.build(tmp_path / "a").read_bytes()
    second = verifier_wheel.build(tmp_path / "b").read_bytes()
    assert first == second
    with zipfile.ZipFile(tmp_path / "a" / verifier_wheel.WHEEL_NAME) as wheel:
        assert {info.date_time for info in wheel.infolist()} == {(1980, 1, 1, 0, 0, 0)}


def test_the_packages_import_nothing_beyond_the_declared_dependencies():
    """grader and contract import only the standard library, each other and DEPENDENCIES."""
    allowed = {"yaml", "orjson", "pydantic", "grader", "contract"} | set(sys.stdlib_module_names)
    root = verifier_wheel.ROOT
    for package in verifier_wheel.PACKAGES:
        for path in (root / package).rglob("*.py"):
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                if isinstance(node, ast.Import):
                    names = [alias.name for alias in node.names]
                elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                    names = [node.module]
                else:
                    continue
                for name in names:
                    top = name.split(".")[0]
                    assert top in allowed, f"{path.relative_to(root)} imports {name}"
