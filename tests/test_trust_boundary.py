"""The trust boundary: untrusted trees are read through contract.untrusted only.

Regular files only (no link anywhere below the root, no FIFO or device), confined under the
root, size-capped; the grader refuses links and FIFOs as syntax errors naming the file, and
Alertmanager ``templates:`` that leave the repo never reach amtool. Faults measured on
b79b4ba (issue 11) are pinned here by name.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from contract.base import dump
from contract.errors import BadInput
from contract.grade import GradeResult
from contract.ids import check_id, id_problem, slug_id
from contract.paths import TASKS_DIR, task_dirs
from contract.untrusted import Tree, UnsafeInput, read_file
from grader.grade import grade_result

TASK = task_dirs(TASKS_DIR)[0]
SECRET_LINE = "-----BEGIN OPENSSH PRIVATE KEY----- b3BlbnNzaC1rZXktdjEAAAAABG5vbmU"


@pytest.fixture
def secret_file(tmp_path) -> Path:
    """A file outside every tree, whose content must never show up anywhere."""
    path = tmp_path / "outside" / "id_ed25519"
    path.parent.mkdir()
    path.write_text(SECRET_LINE + "\n")
    return path


@pytest.fixture
def workspace(tmp_path) -> Path:
    ws = tmp_path / "ws"
    shutil.copytree(TASK / "environment" / "monitoring", ws)
    return ws


# ---------------------------------------------------------------------------------- the helper


def test_tree_refuses_a_link_at_every_depth(tmp_path, secret_file):
    root = tmp_path / "tree"
    (root / "a" / "b").mkdir(parents=True)
    (root / "a" / "b" / "f.txt").write_text("ok")
    assert Tree(root).read_text("a/b/f.txt") == "ok"
    os.symlink(secret_file, root / "link.txt")
    os.symlink(secret_file.parent, root / "a" / "dirlink")
    for rel in ("link.txt", "a/dirlink/id_ed25519"):
        with pytest.raises(UnsafeInput, match="symbolic link"):
            Tree(root).read_bytes(rel)
    assert Tree(root).kind("a/dirlink/id_ed25519") == "symlink"
    assert Tree(root).files() == ["a/b/f.txt"]


def test_tree_refuses_paths_that_leave_it(tmp_path):
    (tmp_path / "t").mkdir()
    for rel in ("../x", "a/../../x", "/etc/passwd", "a\0b"):
        with pytest.raises(UnsafeInput):
            Tree(tmp_path / "t").read_bytes(rel)


def test_tree_never_opens_a_fifo_or_device(tmp_path):
    root = tmp_path / "t"
    root.mkdir()
    os.mkfifo(root / "pipe.yml")
    with pytest.raises(UnsafeInput, match="FIFO"):
        Tree(root).read_bytes("pipe.yml")
    with pytest.raises(UnsafeInput, match="device"):
        Tree("/dev").read_bytes("zero")
    with pytest.raises(UnsafeInput, match="device"):
        read_file("/dev/zero")


def test_tree_caps_what_it_reads(tmp_path):
    root = tmp_path / "t"
    root.mkdir()
    (root / "big").write_bytes(b"x" * 1001)
    with pytest.raises(UnsafeInput, match="over the 1000-byte limit"):
        Tree(root).read_bytes("big", cap=1000)
    assert len(Tree(root).read_bytes("big", cap=1001)) == 1001


def test_copy_into_keeps_regular_files_only(tmp_path, secret_file):
    root = tmp_path / "t"
    (root / "d").mkdir(parents=True)
    (root / "d" / "f").write_text("ok")
    os.symlink(secret_file, root / "d" / "l")
    os.mkfifo(root / "p")
    refused = Tree(root).copy_into(tmp_path / "copy")
    assert sorted(p for p, _ in refused) == ["d/l", "p"]
    assert [p.relative_to(tmp_path / "copy").as_posix()
            for p in (tmp_path / "copy").rglob("*") if p.is_file()] == ["d/f"]


@pytest.mark.parametrize("value", ["", ".", "..", ".hidden", "a/b", "a\\b", "a\0b", "a\nb",
                                   " lead", "trail ", "x" * 161, "bidi\u202eevil", "zero\u200bwidth"])
def test_bad_ids_are_refused(value):
    assert id_problem(value) is not None
    with pytest.raises(BadInput):
        check_id(value, "run_id", "run.json")


def test_slug_id_keeps_distinct_names_distinct():
    assert slug_id("af-001__oracle__s0") == "af-001__oracle__s0"
    assert slug_id("nightly/run 1") != slug_id("nightly/run-1")
    assert id_problem(slug_id("../../etc")) is None
    assert id_problem(slug_id("x" * 500)) is None


# ----------------------------------------------------------------------------------- the grader


def _grade_json(ws: Path) -> tuple[GradeResult, str]:
    result = grade_result(TASK, ws)
    return result, json.dumps(dump(result))


def _syntax_messages(result: GradeResult, prefix: str) -> list[str]:
    return [e.message for e in result.syntax_errors if e.file.startswith(prefix)]


def test_grade_refuses_a_symlinked_alertmanager_yml(workspace, secret_file):
    """b79b4ba followed it: amtool read the private key and quoted it."""
    am = workspace / "alertmanager" / "alertmanager.yml"
    am.unlink()
    os.symlink(secret_file, am)
    result, text = _grade_json(workspace)
    assert "symbolic link" in _syntax_messages(result, "alertmanager/")[0]
    assert "OPENSSH" not in text and result.keys["syntax_ok"] == 0


def test_grade_refuses_a_symlinked_alertmanager_folder(workspace, tmp_path):
    elsewhere = tmp_path / "elsewhere"
    shutil.move(workspace / "alertmanager", elsewhere)
    os.symlink(elsewhere, workspace / "alertmanager")
    result, _ = _grade_json(workspace)
    assert result.keys["syntax_ok"] == 0
    assert _syntax_messages(result, "alertmanager/")


def test_grade_refuses_a_symlinked_rules_folder(workspace, tmp_path):
    elsewhere = tmp_path / "elsewhere-rules"
    shutil.move(workspace / "rules", elsewhere)
    os.symlink(elsewhere, workspace / "rules")
    result, _ = _grade_json(workspace)
    assert "symbolic link" in _syntax_messages(result, "rules")[0]
    assert result.keys["syntax_ok"] == 0


@pytest.mark.parametrize("entry", ["{outside}/*", "../../../../../../..{outside}/*",
                                   "../../outside/*", "/dev/zero"])
def test_templates_outside_the_repo_never_reach_amtool(workspace, secret_file, entry):
    """b79b4ba: a templates glob made amtool load any file, and its error quoted it."""
    am = workspace / "alertmanager" / "alertmanager.yml"
    entry = entry.format(outside=secret_file.parent)
    am.write_text(am.read_text() + f"\ntemplates:\n  - '{entry}'\n")
    result, text = _grade_json(workspace)
    messages = _syntax_messages(result, "alertmanager/")
    assert messages and "templates" in messages[0]
    assert "OPENSSH" not in text


def test_templates_inside_the_repo_still_load(workspace):
    (workspace / "alertmanager" / "custom.tmpl").write_text('{{ define "x" }}ok{{ end }}\n')
    am = workspace / "alertmanager" / "alertmanager.yml"
    am.write_text(am.read_text() + "\ntemplates:\n  - '*.tmpl'\n")
    result, _ = _grade_json(workspace)
    assert not _syntax_messages(result, "alertmanager/")


def _grade_in_subprocess(ws: Path, timeout: float = 120) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "alertforge.cli", "grade", str(TASK),
                           "--workspace", str(ws), "--json"], capture_output=True, text=True,
                          timeout=timeout, check=False)


def test_a_fifo_as_rule_file_does_not_hang(workspace):
    os.mkfifo(workspace / "rules" / "pipe.yml")
    out = _grade_in_subprocess(workspace)
    assert out.returncode == 0, out.stderr
    errors = json.loads(out.stdout)["syntax_errors"]
    assert any(e["file"] == "rules/pipe.yml" and "FIFO" in e["message"] for e in errors)


def test_a_fifo_as_alertmanager_yml_does_not_hang(workspace):
    am = workspace / "alertmanager" / "alertmanager.yml"
    am.unlink()
    os.mkfifo(am)
    out = _grade_in_subprocess(workspace)
    assert out.returncode == 0, out.stderr
    assert any("FIFO" in e["message"] for e in json.loads(out.stdout)["syntax_errors"])


def test_alertmanager_yml_linked_to_dev_zero_is_not_read(workspace):
    am = workspace / "alertmanager" / "alertmanager.yml"
    am.unlink()
    os.symlink("/dev/zero", am)
    out = _grade_in_subprocess(workspace, timeout=60)
    assert out.returncode == 0, out.stderr
    assert any("symbolic link" in e["message"] for e in json.loads(out.stdout)["syntax_errors"])


def test_input_series_shadowing_with_colliding_labels_is_tamper(workspace):
    """b79b4ba: promtool failed on duplicate samples and the grade was a grader error."""
    (workspace / "rules" / "shadow.yml").write_text(
        "groups:\n- name: shadow\n  rules:\n  - record: grpc_server_handled_total\n"
        "    expr: grpc_server_handled_total * 0\n")
    result = grade_result(TASK, workspace)
    assert result.keys["tamper"] == 1 and result.reward == 0
    assert any("grpc_server_handled_total" in t.message for t in result.tamper)


def test_a_group_interval_equal_to_the_evaluation_interval_is_not_tamper(workspace):
    """b79b4ba: a new group with ``interval: 1m`` (a no-op) was tamper and scored 0."""
    pristine = grade_result(TASK, workspace)
    (workspace / "rules" / "extra.yml").write_text(
        "groups:\n- name: extra\n  interval: 1m\n  rules:\n  - record: extra:one\n    expr: vector(1)\n")
    result = grade_result(TASK, workspace)
    assert result.keys["tamper"] == 0
    (workspace / "rules" / "extra.yml").write_text(
        "groups:\n- name: extra\n  interval: 30s\n  rules:\n  - record: extra:one\n    expr: vector(1)\n")
    assert grade_result(TASK, workspace).keys["tamper"] == 1
    assert pristine.keys["tamper"] == 0


def _task_with_catalog(tmp_path: Path, change) -> Path:
    task = tmp_path / "task"
    shutil.copytree(TASK, task)
    path = task / "tests" / "checks.json"
    catalog = json.loads(path.read_text())
    change(catalog)
    path.write_text(json.dumps(catalog))
    return task


@pytest.mark.parametrize("change, problem", [
    (lambda c: c["checks"][0].pop("probe"), "checks.0.probe"),
    (lambda c: c["checks"][0].update(probe="promql"), "checks.0.probe"),
    (lambda c: c["checks"].append(7), "checks."),
    (lambda c: c["requirements"][0].update(weight="heavy"), "requirements.0.weight"),
    (lambda c: c["checks"][0]["probe"].pop("expr", None) if c["checks"][0]["probe"]["type"] == "promql"
     else c["checks"][0].update(probe={"type": "promql"}), "promql probe needs"),
])
def test_a_malformed_catalog_is_bad_input_naming_the_file(tmp_path, change, problem):
    """b79b4ba: a check without probe, or a probe that is a string, gave a traceback."""
    task = _task_with_catalog(tmp_path, change)
    out = subprocess.run([sys.executable, "-m", "alertforge.cli", "grade", str(task)],
                         capture_output=True, text=True, timeout=120, check=False)
    assert out.returncode == 2 and "Traceback" not in out.stderr
    assert "checks.json" in out.stderr and problem in out.stderr, out.stderr
