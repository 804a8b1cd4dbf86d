"""Issue 33's sweep: what strangers write, end to end, by kind and its neighbours.

Inputs are generated from kinds, not hand-picked (the count is asserted, at least 250):

- secrets in encoded forms (base64, URL-safe base64, hex, URL encoding, a token continued over
  a shell line break) of recognizable token kinds, each placed in a step's output, message
  and tool argument: none reaches a site file, the single file, a run's Markdown or what
  publish uploads;
- Markdown markup a run writes (headings, links, images, raw HTML, autolinks, bare domains,
  tables, fences...) in a step message, a tool output, the run's model name and a failing
  check's cause: the Markdown export renders no link, image, raw HTML or heading it did not
  make;
- terminal sequences (CSI, OSC titles and hyperlinks, clipboard writes, C1 bytes, carriage
  returns, bidi overrides, tag characters) in the names the CLI prints: no control byte
  reaches stdout or stderr;
- broken run files (truncated JSON, wrong shapes, huge numbers, NaN, deep nesting, bytes that
  are not UTF-8, links): exit 2 naming the file, no traceback, nothing written;
- look-alikes that must survive (destinations, alert names with secret-like words, ids).

Marked ``sweep`` (``bash scripts/test-sweeps.sh``): about a minute.
"""

from __future__ import annotations

import base64
import json
import os
import re
import shutil
import subprocess
import sys
import urllib.parse
from pathlib import Path

import pytest
from conftest import FIXTURE_RUNS, FIXTURE_TASK_ROOT, fixture_tasks
from markdown_it import MarkdownIt
from secret_corpus import SECRETS

from exporter.export import export_site
from exporter.markdown import run_markdown
from exporter.redact import Redactor
from exporter.single_file import export_single_file

pytestmark = pytest.mark.sweep

TOKEN_KINDS = sorted(kind for kind in SECRETS if "\n" not in SECRETS[kind][0]
                     and Redactor().find(SECRETS[kind][0]) and len(SECRETS[kind][1]) >= 16)[:16]
"""Token kinds recognizable on their own (the encoded forms carry only the token)."""


def _continued(token: str) -> str:
    half = len(token) // 2
    return f'curl -H "X-Key: {token[:half]}\\\n{token[half:]}" https://api.example.net'


ENCODINGS = {
    "base64": lambda t: f"config: {base64.b64encode(t.encode()).decode()}",
    "base64url": lambda t: f"blob={base64.urlsafe_b64encode(('key=' + t).encode()).decode()}",
    "hex": lambda t: f"payload 0x{t.encode().hex()}",
    "url": lambda t: "https://app.example.net/cb?state=" + urllib.parse.quote("token=" + t, safe=""),
    "shell": _continued,
}

MARKUP = [
    "# Heading from a run", "## second heading", "[click](https://evil.example/x)",
    "![pixel](https://evil.example/p.png)", "<img src=x onerror=alert(1)>", "<script>alert(1)</script>",
    "https://evil.example/bare", "www.evil.example", "mail: someone@evil.example", "<https://evil.example/a>",
    "[ref]: https://evil.example/ref", "[a](javascript:alert(1))", "a | b |\n|---|---|", "```\nfence\n```",
    "~~~\ntilde fence\n~~~", "line\n\n# after a blank line", "> quote", "<details open>x</details>",
    "[x][ref]\n\n[ref]: https://evil.example/r", "see evil.com/x", "//evil.com/path", "<!-- comment -->",
    "&#x3C;script&#x3E;", "\\[esc\\](https://evil.example/e)",
]
PLACES = ("message", "output", "model", "cause")

TERMINAL = [
    "\x1b[31mred", "\x1b[2J\x1b[H", "\x1b]0;title\x07", "\x1b]8;;https://evil.example\x1b\\link\x1b]8;;\x1b\\",
    "\x1b]52;c;cHduZWQ=\x07", "\x9b31m", "\x07bell", "ok\rspoofed", "back\x08\x08", "\x7fdel",
    "\u202eevil", "\u2066isolate", "tag\U000e0041", "\x1bP+q\x1b\\",
]

LOOK_ALIKES = [
    "receivers: [{name: payments-pager, pagerduty_configs: [{url: https://events.pagerduty.com/v2/enqueue}]}]",
    "alert: TokenRefreshFailing", "alert: SecretRotationOverdue", "alert: PasswordResetErrorsHigh",
    "secret_type: tls", "kubectl create token deploy-bot", "token_bucket_fill_rate: 0.5",
    "route: {receiver: team-secrets-oncall, group_wait: 30s}", "url: https://hooks.slack.com/services",
    "sha256:9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08",
    "expected receiver payments-pager (pagerduty), got checkout-pager (pagerduty)",
    "group_wait 3h from route {team=\"payments\"} (the root sets 30s)", "password_file: /etc/am/pw",
    "credentials_file: /run/secrets/slack", "routing_key_file: /run/secrets/pd", "api_url: https://api.opsgenie.com/",
    "name: secret-store-api, severity: page", "the token endpoint /oauth/token answered 503",
]


def _runs_with(root: Path, fill) -> list[Path]:
    """One copy of the oracle fixture run per input, ``fill(run, trajectory_steps, index)``
    placing it; returns the run folders."""
    folders = []
    for index, item in enumerate(fill.items):
        target = root / f"sweep-{index:03d}"
        shutil.copytree(FIXTURE_RUNS / "fixture-oracle-s1", target)
        run = json.loads((target / "run.json").read_text())
        run["run_id"] = target.name
        trajectory = json.loads((target / "trajectory.json").read_text())
        fill(run, trajectory["steps"], item)
        (target / "run.json").write_text(json.dumps(run))
        (target / "trajectory.json").write_text(json.dumps(trajectory))
        folders.append(target)
    return folders


class _Encoded:
    items = tuple((kind, name) for kind in TOKEN_KINDS for name in ENCODINGS)

    def __call__(self, run, steps, item):
        kind, name = item
        text = ENCODINGS[name](SECRETS[kind][0])
        steps[1]["observation"]["results"][0]["content"] = f"output:\n{text}\n"
        steps[2]["message"] = f"I found {text} in the repo"
        steps[4]["tool_calls"][0]["arguments"]["note"] = text


class _Markup:
    items = tuple((text, place) for text in MARKUP for place in PLACES)

    def __call__(self, run, steps, item):
        text, place = item
        if place == "message":
            steps[2]["message"] = text
        elif place == "output":
            steps[1]["observation"]["results"][0]["content"] = text
        elif place == "model":
            run["model"] = text
        else:
            graded = next(s for s in reversed(steps) if (s.get("extra") or {}).get("grade"))
            failed = graded["extra"]["grade"].setdefault("failed", {})
            failed[next(iter(failed), "R1")] = text


def _forms(secret: str) -> set[str]:
    """How a leaked secret could show: itself and the encoded forms of the token."""
    return {secret, base64.b64encode(secret.encode()).decode()[:24], secret.encode().hex()[:32],
            urllib.parse.quote(secret, safe="")}


def _leaks(text: str) -> list[str]:
    return sorted(kind for kind in TOKEN_KINDS
                  if any(form in text for form in _forms(SECRETS[kind][1]) if len(form) >= 12))


@pytest.fixture(scope="module")
def encoded(tmp_path_factory):
    root = tmp_path_factory.mktemp("encoded")
    folders = _runs_with(root / "runs", _Encoded())
    export_site([root / "runs"], root / "site", task_index=fixture_tasks())
    return root, folders


def test_the_sweep_holds_at_least_250_inputs():
    counts = {"encoded secrets": len(_Encoded.items), "markup": len(_Markup.items),
              "terminal": len(TERMINAL) * 2, "broken run files": len(BROKEN), "look-alikes": len(LOOK_ALIKES)}
    print(counts, sum(counts.values()))
    assert sum(counts.values()) >= 250


def test_no_encoded_secret_reaches_the_site(encoded):
    root, _ = encoded
    text = "\n".join(p.read_text(errors="replace") for p in (root / "site").rglob("*") if p.is_file())
    assert _leaks(text) == []


def test_no_encoded_secret_reaches_the_single_file_or_markdown(encoded, tmp_path):
    root, folders = encoded
    export_single_file([root / "runs"], tmp_path / "one.html", redactor=Redactor(), task_index=fixture_tasks())
    assert _leaks((tmp_path / "one.html").read_text()) == []
    for folder in folders:
        assert _leaks(run_markdown(folder, redactor=Redactor(), task_index=fixture_tasks())) == [], folder.name


def test_no_encoded_secret_is_staged_by_publish(encoded, monkeypatch):
    from exporter import publish

    root, _ = encoded
    staged: list[str] = []
    monkeypatch.setattr(publish, "upload", lambda folder, space: staged.extend(
        p.read_text(errors="replace") for p in folder.rglob("*") if p.is_file()))
    publish.publish_site(root / "site", "org/replay", redactor=Redactor(), out=lambda line: None)
    assert staged and _leaks("\n".join(staged)) == []


def _tokens(text: str):
    out = []
    for token in MarkdownIt("commonmark", {"linkify": True}).enable(
            ["table", "strikethrough", "linkify"]).parse(text):
        out += [token, *(token.children or [])]
    return out


def test_markup_a_run_writes_stays_text_in_the_markdown_export(tmp_path):
    folders = _runs_with(tmp_path / "runs", _Markup())
    for folder, (text, place) in zip(folders, _Markup.items, strict=True):
        tokens = _tokens(run_markdown(folder, redactor=Redactor(), task_index=fixture_tasks()))
        kinds = {t.type for t in tokens}
        assert not kinds & {"link_open", "image", "html_inline", "html_block"}, (text, place, kinds)
        headings = [tokens[i + 1].content for i, t in enumerate(tokens) if t.type == "heading_open"]
        assert all(h.startswith(("Run ", "Task", "Steps", "Step ", "Failing checks")) for h in headings), \
            (text, place, headings)


def _cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "alertforge.cli", *args], check=False,
                          capture_output=True, text=True, timeout=300)


CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069\U000e0000-\U000e007f]")


@pytest.mark.parametrize("sequence", TERMINAL, ids=[f"t{i}" for i in range(len(TERMINAL))])
def test_no_terminal_sequence_reaches_the_cli_output(tmp_path, sequence):
    """In a run folder's name (export names it in its error) and in a run's id and model
    (record of a reused run, regrade print them)."""
    hostile = tmp_path / f"run{sequence}x".replace("/", "_")
    hostile.mkdir()
    (hostile / "run.json").write_text("{not json")
    done = _cli("export", str(hostile), "--out", str(tmp_path / "site"))
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert not CONTROL.search(done.stdout + done.stderr), repr(done.stderr)
    run = tmp_path / "runs" / "r"
    shutil.copytree(FIXTURE_RUNS / "fixture-oracle-s1", run)
    summary = json.loads((run / "run.json").read_text())
    summary["model"] = f"model{sequence}"
    (run / "run.json").write_text(json.dumps(summary))
    done = _cli("export", str(run), "--markdown", "--tasks", str(FIXTURE_TASK_ROOT))
    assert done.returncode == 0, done.stderr
    assert not CONTROL.search(done.stdout.replace("\n", "").replace("\t", "") + done.stderr), repr(done.stdout[:300])


BROKEN = [
    b"", b"{", b"[]", b"null", b"42", b'"run"', b"{not json", b'{"run_id": 1}', b'{"run_id": "x"}',
    b'{"run_id": "x", "status": "complete"}', b"\xff\xfe{}", b"\xef\xbb\xbf{}", b'{"a": NaN}',
    b'{"a": Infinity}', b'{"steps": 1e999}', b"[" * 5000 + b"]" * 5000, b'{"run_id": "' + b"x" * 70000 + b'"}',
    b'{"run_id": "\\ud800"}', b'{"run_id": "../../etc"}', b'{"run_id": "a/b"}', b"\x00\x00\x00",
    b'{"kind": "episode"}', b'{"final": "x"}', b'{"task": []}', b'{"run_id": "r", "task": {"id": 5}}',
    b'{"run_id": "r", "steps": -1}', b'{"run_id": "r", "timings": "fast"}', b"\xc3\x28", b'{"x": 1}{"y": 2}',
    b'{"run_id": "r"}\n\x1b[31m',
]


@pytest.mark.parametrize("content", BROKEN, ids=[f"b{i}" for i in range(len(BROKEN))])
def test_a_broken_run_file_is_bad_input_naming_it(tmp_path, content):
    run = tmp_path / "runs" / "broken"
    shutil.copytree(FIXTURE_RUNS / "fixture-oracle-s1", run)
    (run / "run.json").write_bytes(content)
    out = tmp_path / "site"
    export_site([FIXTURE_RUNS / "fixture-partial-s1"], out, task_index=fixture_tasks())
    before = {p: p.read_bytes() for p in out.rglob("*") if p.is_file()}
    done = _cli("export", str(run), "--out", str(out), "--tasks", str(FIXTURE_TASK_ROOT))
    assert done.returncode == 2, (content[:40], done.stderr)
    assert "Traceback" not in done.stderr and "run.json" in done.stderr
    after = {p: p.read_bytes() for p in out.rglob("*") if p.is_file()}
    assert after == before  # nothing written, nothing lost


def test_look_alikes_reach_the_site_unchanged(tmp_path):
    runs = tmp_path / "runs"
    shutil.copytree(FIXTURE_RUNS / "fixture-partial-s1", runs / "fixture-partial-s1")
    path = runs / "fixture-partial-s1" / "trajectory.json"
    trajectory = json.loads(path.read_text())
    trajectory["steps"][1]["observation"]["results"][0]["content"] = "\n".join(LOOK_ALIKES)
    path.write_text(json.dumps(trajectory))
    export_site([runs], tmp_path / "site", task_index=fixture_tasks())
    site_run = json.loads((tmp_path / "site" / "data" / "runs" / "fixture-partial-s1.json").read_bytes())
    assert site_run["steps"][1]["output"] == "\n".join(LOOK_ALIKES)


def test_a_linked_run_file_is_not_followed(tmp_path):
    outside = tmp_path / "outside.json"
    outside.write_text(json.dumps({"secret": SECRETS["github-classic-pat"][0]}))
    run = tmp_path / "runs" / "linked"
    shutil.copytree(FIXTURE_RUNS / "fixture-oracle-s1", run)
    (run / "run.json").unlink()
    os.symlink(outside, run / "run.json")
    done = _cli("export", str(run), "--out", str(tmp_path / "site"))
    assert done.returncode == 2 and "link" in done.stderr and "Traceback" not in done.stderr
    assert not (tmp_path / "site").exists()
