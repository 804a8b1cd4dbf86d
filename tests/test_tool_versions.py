"""Grades that name the tools behind them and do not depend on their versions (issue 14):
tool versions in every GradeResult, run and viewer; amtool 0.28's log lines on stdout; the
syntax the grader keeps where Alertmanager versions disagree; promtool's 0-based test clock
(../shared/cases/test-clock-zero, copied into tests/fixtures/cases/)."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml

from contract.base import dump
from grader.am_syntax import classic_syntax_problems
from grader.grade import grade_result
from grader.routing import check_config, resolve_receivers
from grader.tools import (
    AMTOOL,
    PROMTOOL,
    inhibition_judge,
    tool_version,
    tool_versions,
    without_log_lines,
)
from recorder.record import record_run
from tests.conftest import CHROMIUM  # noqa: F401  (the browser fixture launches it)
from tests.corpus_sample import SAMPLE

CLOCK = Path(__file__).parent / "fixtures" / "cases" / "test-clock-zero"
TASK = SAMPLE[0]

# amtool 0.28.1 output, as it prints it (docs: /work/notes/amtool-0.25-vs-0.28.md experiments)
WARN = ('time=2026-12-01T10:29:19.056Z level=WARN source=parse.go:176 msg="Alertmanager is moving '
        'to a new parser for labels and matchers, and this input is incompatible." '
        'input="foo=bar baz" origin=config err="8:11: unexpected baz" suggestion="foo=\\"bar baz\\""')


def _version(binary: str) -> tuple[int, int]:
    found = re.match(r"(\d+)\.(\d+)", tool_version(binary))
    assert found, binary
    return int(found.group(1)), int(found.group(2))


@pytest.mark.parametrize(("text", "kept"), [
    ("team-a,team-b\n", "team-a,team-b\n"),
    (f"{WARN}\n{WARN}\nteam-a\n", "team-a\n"),
    (f"Checking 'am.yml'{WARN}\n{WARN}\n  SUCCESS\nFound:\n", "Checking 'am.yml'\n  SUCCESS\nFound:\n"),
    ("time=noon is not a log line\n", "time=noon is not a log line\n"),
    (f"{WARN}\n", ""),
])
def test_amtool_log_lines_never_count_as_output(text, kept):
    assert without_log_lines(text) == kept


def test_every_grade_names_the_tools_that_produced_it():
    tools = grade_result(TASK).tools
    assert dump(tools) == tool_versions()
    assert tools.promtool in subprocess.run([PROMTOOL, "--version"], capture_output=True,
                                                         text=True, check=False).stdout
    amtool = subprocess.run([AMTOOL, "--version"], capture_output=True, text=True, check=False)
    assert tools.amtool in amtool.stdout + amtool.stderr
    # the Alertmanager of the machine's amtool (one package ships both), major.minor
    assert tools.inhibition == inhibition_judge(tools.amtool)
    assert re.fullmatch(r"alertmanager \d+\.\d+", tools.inhibition)
    assert re.fullmatch(r"\d+\.\d+\.\d+\S*", tools.promtool)


def test_a_recorded_run_names_the_tools_of_its_grades(tmp_path):
    run_dir = record_run(TASK, "nop", seed=0, out=tmp_path)
    run = json.loads((run_dir / "run.json").read_text())
    assert run["tools"] == tool_versions()


def test_a_broken_tool_is_named_not_guessed(tmp_path):
    assert tool_version(str(tmp_path / "no-such-amtool")) == "unknown (FileNotFoundError)"
    fake = tmp_path / "fake"
    fake.write_text("#!/bin/sh\necho hello\n")
    fake.chmod(0o755)
    assert tool_version(str(fake)) == "unknown (no version printed)"


MATCHERS_BY_VERSION = [
    ('1a="b"', "route"), ('a.b="c"', "inhibit"), ('a=~"(?<n>x)"', "inhibit"),
]


@pytest.mark.parametrize(("matcher", "where"), MATCHERS_BY_VERSION)
def test_a_matcher_only_newer_alertmanagers_accept_is_a_syntax_error_on_every_version(
        tmp_path, matcher, where):
    """0.28 accepts these, 0.25 rejects them: the grader rejects them on both, so a grade is
    the same whichever amtool ran."""
    config = {"route": {"receiver": "r"}, "receivers": [{"name": "r"}]}
    if where == "route":
        config["route"]["routes"] = [{"receiver": "r", "matchers": [matcher]}]
    else:
        config["inhibit_rules"] = [{"source_matchers": [matcher], "target_matchers": ['a="b"']}]
    path = tmp_path / "am.yml"
    path.write_text(yaml.safe_dump(config))
    amtool_ok = check_config(path) is None
    assert amtool_ok == (_version(AMTOOL) >= (0, 27))
    assert classic_syntax_problems(config) != []
    workspace = tmp_path / "ws"
    subprocess.run(["cp", "-r", str(TASK / "environment" / "monitoring"), str(workspace)], check=True)
    am = workspace / "alertmanager" / "alertmanager.yml"
    am_config = yaml.safe_load(am.read_text())
    am_config.setdefault("inhibit_rules", []).append(
        {"source_matchers": [matcher], "target_matchers": ['severity="warning"']})
    am.write_text(yaml.safe_dump(am_config))
    result = grade_result(TASK, workspace)
    assert [e.file for e in result.syntax_errors] == ["alertmanager/alertmanager.yml"]


def test_configs_both_versions_accept_are_left_alone():
    config = {"route": {"receiver": "r", "group_by": ["...", "alertname"], "routes": [
        {"receiver": "r", "matchers": ['team=~"a|b"', 'severity!="info"']}]},
        "receivers": [{"name": "r"}],
        "inhibit_rules": [{"source_matchers": ['alertname="Down"'], "target_matchers": ['x="y"'],
                           "equal": ["service"]}]}
    assert classic_syntax_problems(config) == []


def test_routing_reads_receivers_past_amtool_log_lines(tmp_path):
    """A matcher the 0.28 parser only accepts with a fallback makes amtool log on stdout;
    the receivers are still read (0.25 prints no log)."""
    path = tmp_path / "am.yml"
    path.write_text(yaml.safe_dump({"route": {"receiver": "r", "routes": [
        {"receiver": "spaced", "matchers": ["note=a b"]}]}, "receivers": [{"name": "r"}, {"name": "spaced"}]}))
    assert resolve_receivers(path, {"note": "a b"}) == ["spaced"]


# --------------------------------------------------------------- promtool's test clock


def _promtool_test(name: str) -> subprocess.CompletedProcess:
    return subprocess.run([PROMTOOL, "test", "rules", name], cwd=CLOCK, capture_output=True, text=True,
                          timeout=60, check=False)


def test_promtool_test_time_counts_from_zero_not_the_wall_clock():
    """time() at 2m is 120: the series at 1209659 is under 14 days from time(), 1209660 is not."""
    assert _promtool_test("test_1209659.yml").returncode == 0
    later = _promtool_test("test_1209660.yml")
    assert later.returncode != 0 and "got:[]" in later.stdout + later.stderr


def test_start_timestamp_is_a_field_supported_promtool_versions_reject():
    if _version(PROMTOOL) >= (3, 9):
        pytest.skip("promtool 3.9 knows start_timestamp")
    out = _promtool_test("test_start_ts.yml")
    assert out.returncode != 0 and "start_timestamp" in out.stdout + out.stderr


TEST_FILE_FIELDS = {"rule_files", "evaluation_interval", "group_eval_order", "tests"}
TEST_GROUP_FIELDS = {"interval", "input_series", "alert_rule_test", "promql_expr_test",
                     "external_labels", "external_url", "name"}
"""What promtool 2.42 (the oldest supported) reads in a test file; 2.53 reads these too
(fuzzy_compare and start_timestamp are newer and rejected by both)."""


def _test_files(root: Path) -> list[Path]:
    found = []
    for path in sorted(root.rglob("*.yml")):
        try:
            doc = yaml.safe_load(path.read_text())
        except yaml.YAMLError:
            continue
        if isinstance(doc, dict) and "tests" in doc and "rule_files" in doc:
            found.append(path)
    return found


def _unsupported_fields(path: Path) -> list[str]:
    doc = yaml.safe_load(path.read_text())
    bad = [f"{path.name}: {key}" for key in doc if key not in TEST_FILE_FIELDS]
    for group in doc.get("tests") or []:
        bad += [f"{path.name}: tests[].{key}" for key in group if key not in TEST_GROUP_FIELDS]
    return bad


def test_no_generated_test_file_carries_a_field_a_supported_promtool_rejects(tmp_path):
    kept = tmp_path / "kept"
    grade_result(TASK, TASK / "solution" / "monitoring", keep=kept)
    written = _test_files(kept)
    assert written, "the grader wrote promtool test files"
    shipped = [p for task in SAMPLE for p in _test_files(task)]
    assert [bad for path in written + shipped for bad in _unsupported_fields(path)] == []
    assert _unsupported_fields(CLOCK / "test_start_ts.yml") == ["test_start_ts.yml: start_timestamp"]


def test_the_reproduce_panel_names_the_tool_versions(page, served_site):
    page.goto(f"{served_site.url}run.html?run=fixture-oracle-s1&step=2&check=A1-fire-1")
    page.wait_for_selector("body[data-ready='1']")
    line = page.locator("#reproduce-tools").text_content()
    assert line == ("This run does not record which promtool and amtool graded it. "
                    "This run does not name its check catalog's release.")
    tools = {"promtool": "2.53.3+ds1", "amtool": "0.28.1+ds", "inhibition": "alertmanager 0.25"}
    text = page.evaluate("tools => import('./static/js/components/inspector.js')"
                         ".then(m => m.toolsLine(tools, '0.3.0'))", tools)
    assert text == ("Graded with promtool 2.53.3+ds1 and amtool 0.28.1+ds; inhibit checks follow "
                    "alertmanager 0.25 semantics. Checks from catalog 0.3.0.")


def test_the_site_run_names_the_catalog_release_it_was_graded_against(tmp_path):
    """run.json task.catalog_version reaches the site run file (and its head) unchanged."""
    from exporter.run_folders import read_run_folder
    from exporter.site_data import run_document, run_head_document

    source = Path(__file__).parent / "fixtures" / "site" / "runs" / "fixture-oracle-s1"
    run_dir = tmp_path / "fixture-oracle-s1"
    shutil.copytree(source, run_dir)
    run = json.loads((run_dir / "run.json").read_text())
    run["task"]["catalog_version"] = "0.3.0"
    (run_dir / "run.json").write_text(json.dumps(run))
    doc = run_document(read_run_folder(run_dir), [])
    assert doc["catalog_version"] == "0.3.0"
    no_checks = {"title": "t", "instruction": "", "requirements": [], "checks": [], "panel": []}
    assert run_head_document(doc, no_checks)["catalog_version"] == "0.3.0"
