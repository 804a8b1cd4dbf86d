"""The alertforge command: exit codes and messages (0 ok, 2 bad input naming the file, no traceback)."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys

from alertforge.paths import TASKS_DIR, task_dirs

TASK = task_dirs(TASKS_DIR)[0]


def cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "alertforge.cli", *args], capture_output=True,
                          text=True, timeout=300)


def test_unknown_task_is_bad_input():
    out = cli("grade", "no-such-task")
    assert out.returncode == 2
    assert "no-such-task" in out.stderr and "Traceback" not in out.stderr


def test_unknown_policy_is_bad_input(tmp_path):
    out = cli("record", "--task", TASK.name, "--policy", "wizard", "--out", str(tmp_path))
    assert out.returncode == 2 and "unknown policy" in out.stderr


def test_export_of_a_missing_path_is_bad_input(tmp_path):
    out = cli("export", str(tmp_path / "nope"), "--out", str(tmp_path / "site"))
    assert out.returncode == 2 and "nope" in out.stderr and "Traceback" not in out.stderr


def test_workspace_that_is_a_file_is_bad_input(tmp_path):
    (tmp_path / "file").write_text("x")
    out = cli("grade", TASK.name, "--workspace", str(tmp_path / "file"))
    assert out.returncode == 2 and "file" in out.stderr


def test_grade_json_of_a_broken_workspace_reports_syntax_not_a_crash(tmp_path):
    ws = tmp_path / "ws"
    shutil.copytree(TASK / "environment" / "monitoring", ws)
    (ws / "rules" / "slo-alerts.yml").write_bytes(b"\xff\xfe groups: [")
    (ws / "alertmanager" / "alertmanager.yml").write_text("route: [\n")
    before = sorted(p.relative_to(ws) for p in ws.rglob("*"))
    out = cli("grade", TASK.name, "--workspace", str(ws), "--json")
    assert out.returncode == 0, out.stderr
    result = json.loads(out.stdout)
    assert result["keys"]["syntax_ok"] == 0
    files = {e["file"] for e in result["syntax_errors"]}
    assert {"rules/slo-alerts.yml", "alertmanager/alertmanager.yml"} <= files
    assert sorted(p.relative_to(ws) for p in ws.rglob("*")) == before
