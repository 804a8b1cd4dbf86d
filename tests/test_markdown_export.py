"""``alertforge export RUN --markdown``: a recorded run as Markdown with causes and blame, secrets masked as on publish."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from exporter.markdown import fence

SECRET = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"


def cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "alertforge.cli", *args], check=False,
                          capture_output=True, text=True, timeout=300)


@pytest.fixture(scope="module")
def partial_run(tmp_path_factory) -> Path:
    """A recorded partial run of af-011 (failing checks with causes), a secret in one output."""
    out = tmp_path_factory.mktemp("runs")
    done = cli("record", "--task", "af-011-alert-storm-cleanup-hard-s1", "--policy", "partial",
               "--out", str(out))
    assert done.returncode == 0, done.stderr
    (run,) = out.iterdir()
    trajectory = json.loads((run / "trajectory.json").read_text())
    step = next(s for s in trajectory["steps"] if s.get("observation"))
    step["observation"]["results"][0]["content"] = f"token={SECRET}\n" + str(
        step["observation"]["results"][0]["content"])
    (run / "trajectory.json").write_text(json.dumps(trajectory))
    return run


def test_markdown_export_lists_failing_checks_with_cause_and_blame_on_stdout(partial_run):
    done = cli("export", str(partial_run), "--markdown")
    assert done.returncode == 0, done.stderr
    text = done.stdout
    assert text.startswith(f"# Run `{partial_run.name}`")
    assert "## Task" in text and "### Step 1 " in text and "Tool call `" in text
    failing = text.split("## Failing checks at the last step", 1)[1]
    assert "- cause (" in failing and "- blame: step " in failing and ", hunk " in failing
    assert "- cause: none recorded" not in failing  # recorded now: every failing check has one
    assert "```diff" in text
    # rewards with 4 decimals, as the site and the CLI show them
    assert re.search(r"^- reward: \d\.\d{4} after \d+ steps$", text, re.MULTILINE)
    assert re.search(r"^### Step \d+ \(\w+; reward [+-]\d\.\d{4}, total \d\.\d{4}\)$", text, re.MULTILINE)


def test_markdown_export_masks_secrets_as_publish_does_and_writes_the_file(partial_run, tmp_path):
    out = tmp_path / "run.md"
    done = cli("export", str(partial_run), "--markdown", "--out", str(out))
    assert done.returncode == 0, done.stderr
    text = out.read_text()
    assert SECRET not in text and "[REDACTED:github-token]" in text
    raw = cli("export", str(partial_run), "--markdown", "--no-redact")
    assert SECRET in raw.stdout


def test_markdown_export_cuts_long_parts_with_a_note_linking_the_step(partial_run):
    done = cli("export", str(partial_run), "--markdown", "--site-url", "https://example.org/space")
    assert "more characters cut; the full text: https://example.org/space/run.html?run=" in done.stdout


def test_markdown_export_takes_exactly_one_run(partial_run):
    done = cli("export", str(partial_run), str(partial_run), "--markdown")
    assert done.returncode == 2 and "exactly one run" in done.stderr


def test_fence_is_longer_than_any_backtick_run_inside():
    text = "a ```` b"
    fenced = fence(text)
    assert fenced.startswith("`````\n") and fenced.endswith("\n`````")
