"""Bad input never crashes the grader: each case is a syntax error naming the file, or exit code 2.

Also: the real rule corpora (tests/fixtures/corpora, 112 plain files and 8 PrometheusRule
manifests written by practitioners) all load, and their preservation form is stable.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from contract.paths import TASKS_DIR, task_dirs
from grader import promtool
from grader.grade import grade_result
from grader.preservation import normalize_rule
from grader.workspace import load_rule_file

TASK = task_dirs(TASKS_DIR)[0]
CORPORA = Path(__file__).parent / "fixtures" / "corpora"


@pytest.fixture
def workspace(tmp_path) -> Path:
    ws = tmp_path / "ws"
    shutil.copytree(TASK / "environment" / "monitoring", ws)
    return ws


def _syntax_error(ws: Path, rel: str) -> str:
    before = {p: p.stat().st_mtime_ns for p in ws.rglob("*") if p.is_file()}
    result = grade_result(TASK, ws)
    assert {p: p.stat().st_mtime_ns for p in ws.rglob("*") if p.is_file()} == before
    assert result.keys["syntax_ok"] == 0
    messages = [e.message for e in result.syntax_errors if e.file == rel]
    assert messages, result.syntax_errors
    return messages[0]


def test_unparsable_yaml(workspace):
    (workspace / "rules" / "bad.yml").write_text("groups:\n  - name: x\n   rules: [\n")
    assert "YAML error at line" in _syntax_error(workspace, "rules/bad.yml")


def test_rule_file_promtool_rejects(workspace):
    (workspace / "rules" / "bad.yml").write_text(
        "groups:\n- name: x\n  rules:\n  - alert: X\n    expr: sum(rate(x[5m]) > \n")
    assert _syntax_error(workspace, "rules/bad.yml")


def test_fifty_megabyte_file(workspace):
    with open(workspace / "rules" / "huge.yml", "wb") as handle:
        handle.truncate(50 * 1024 * 1024)
    assert "over the" in _syntax_error(workspace, "rules/huge.yml")


def test_yaml_alias_bomb(workspace):
    bomb = "a: &a [x, x, x, x, x, x, x, x, x]\n" + "".join(
        f"{chr(98 + i)}: &{chr(98 + i)} [*{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}]\n"
        for i in range(8))
    (workspace / "rules" / "bomb.yml").write_text(bomb)
    assert "aliases are not allowed" in _syntax_error(workspace, "rules/bomb.yml")


def test_non_utf8_bytes(workspace):
    (workspace / "rules" / "latin1.yml").write_bytes(b"groups:\n- name: caf\xe9\n  rules: []\n")
    assert "not valid UTF-8" in _syntax_error(workspace, "rules/latin1.yml")


def test_directory_where_a_file_should_be(workspace):
    (workspace / "rules" / "dir.yml").mkdir()
    assert "directory" in _syntax_error(workspace, "rules/dir.yml")
    shutil.rmtree(workspace / "alertmanager")
    (workspace / "alertmanager" / "alertmanager.yml").mkdir(parents=True)
    assert "directory" in _syntax_error(workspace, "alertmanager/alertmanager.yml")


def test_broken_prometheusrule_manifest_names_the_file(workspace):
    (workspace / "rules" / "m.yaml").write_text(
        "apiVersion: monitoring.coreos.com/v1\nkind: PrometheusRule\nspec: {groups: 7}\n")
    assert "spec.groups" in _syntax_error(workspace, "rules/m.yaml")


def test_query_offset_is_tamper_or_a_syntax_error_by_promtool_version(workspace):
    path = workspace / "rules" / "service-health.yml"
    doc = yaml.safe_load(path.read_text())
    doc["groups"][0]["query_offset"] = "5m"
    path.write_text(yaml.safe_dump(doc, sort_keys=False))
    accepted = promtool.check_rules(path) is None
    result = grade_result(TASK, workspace)
    if accepted:  # Prometheus 3.x knows query_offset: it shifts what the replay sees
        assert result.keys["tamper"] == 1 and result.reward == 0.0
    else:  # 2.42 does not: the file does not load
        assert any(e.file == "rules/service-health.yml" for e in result.syntax_errors)
        assert result.keys["tamper"] == 0


def test_hanging_promtool_is_a_named_error_with_exit_code_2(workspace, tmp_path):
    fake = tmp_path / "promtool"
    fake.write_text("#!/bin/sh\nsleep 30\n")
    fake.chmod(0o755)
    env = dict(os.environ, ALERTFORGE_PROMTOOL=str(fake), ALERTFORGE_PROMTOOL_TIMEOUT="1")
    out = subprocess.run([sys.executable, "-m", "alertforge.cli", "grade", str(TASK), "--workspace",
                          str(workspace)], capture_output=True, text=True, env=env, timeout=120,
                         check=False)
    assert out.returncode == 2, out.stderr
    assert "timed out" in out.stderr and "Traceback" not in out.stderr


LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
DUMPER = getattr(yaml, "CSafeDumper", yaml.SafeDumper)
CORPUS_FILES = sorted(p for p in CORPORA.rglob("*") if p.suffix in (".yml", ".yaml"))


def test_corpora_are_all_there():
    plain = [p for p in CORPUS_FILES if "awesome-prometheus-alerts" in p.parts]
    manifests = [p for p in CORPUS_FILES if "kube-prometheus" in p.parts]
    assert (len(plain), len(manifests)) == (112, 8)


def test_every_corpus_file_loads_and_passes_promtool(tmp_path):
    paths = []
    for index, path in enumerate(CORPUS_FILES):
        rule_file = load_rule_file(CORPORA, path)
        assert rule_file.error is None, (path, rule_file.error)
        assert rule_file.manifest == ("kube-prometheus" in path.parts)
        out = tmp_path / f"{index:03d}.yml"
        out.write_text(rule_file.text)
        paths.append(out)
    problems = promtool.check_rules_many(paths)
    assert [(p, e) for p, e in zip(CORPUS_FILES, problems) if e] == []


def test_corpus_preservation_form_is_stable_under_reserialization():
    for path in CORPUS_FILES:
        rule_file = load_rule_file(CORPORA, path)
        text = yaml.dump(json.loads(json.dumps(rule_file.groups)), Dumper=DUMPER, width=40)
        again = yaml.load(text, Loader=LOADER)
        first = [normalize_rule(r) for g in rule_file.groups for r in g.get("rules") or []]
        second = [normalize_rule(r) for g in again for r in g.get("rules") or []]
        assert first == second, path


def test_bad_input_crosses_a_process_pool_as_itself():
    """A worker's BadInput reaches the driver with its path and problem (it once failed to
    unpickle and hid the real error behind a TypeError)."""
    import pickle

    from contract.errors import BadInput

    err = pickle.loads(pickle.dumps(BadInput("/tasks/x/tests/checks.json", "not JSON")))
    assert isinstance(err, BadInput)
    assert (err.path, err.problem) == ("/tasks/x/tests/checks.json", "not JSON")
    assert str(err) == "/tasks/x/tests/checks.json: not JSON"
