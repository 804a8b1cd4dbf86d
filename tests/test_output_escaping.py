"""What strangers write leaves escaped for where it goes: Markdown (rendered by markdown-it-py,
CommonMark with GFM's tables, strikethrough and autolinks, the way an issue or a chat shows
it) holds no heading, link, image or raw HTML a run made, and the terminal gets no control
sequence from a run's names or a trial's errors. One escaping function per output
(contract/text.py), a test per kind, over a corpus of hostile strings."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from markdown_it import MarkdownIt

from contract.text import markdown_code, markdown_text, terminal_text

HOSTILE = [
    "# Heading from a run", "[click](https://evil.example/x)", "![pixel](https://evil.example/p.png)",
    "<img src=x onerror=alert(1)>", "<script>alert(1)</script>", "https://evil.example/bare",
    "www.evil.example", "mail me: someone@evil.example", "**bold** _em_ ~~strike~~", "a | b |\n|---|---|",
    "line one\n\n# a heading after a blank line", "```\ncode fence\n```", "`` tick `", "&lt;entity&gt; &amp;",
    "[ref]: https://evil.example/ref", "<https://evil.example/auto>", "- list\n+ item", "=====", "> quote",
    "\\[escaped\\](https://evil.example/e)", "[a](javascript:alert(1))", "x\u202eevil\u202c", "tab\there",
]
"""Markup a run could write into a message, a model name, a title, a label or a cause."""


def _render():
    return MarkdownIt("commonmark", {"linkify": True}).enable(["table", "strikethrough", "linkify"])


def _tokens(text: str):
    out = []
    for token in _render().parse(text):
        out.append(token)
        out += token.children or []
    return out


@pytest.mark.parametrize("text", HOSTILE)
def test_inline_markdown_renders_the_same_words_and_no_markup(text):
    for escaped in (markdown_text(text), markdown_code(text)):
        line = f"- detail: {escaped}"
        kinds = {t.type for t in _tokens(line)}
        assert not kinds & {"link_open", "image", "html_inline", "html_block", "heading_open", "fence",
                            "table_open", "s_open", "strong_open", "em_open", "blockquote_open"}, (text, kinds)
        assert "\n" not in escaped
        words = "".join(t.content for t in _tokens(line) if t.type in ("text", "code_inline", "softbreak"))
        assert " ".join(text.split()) in words.replace("- detail: ", "", 1) or text.strip() == "", (text, words)


def test_terminal_text_escapes_control_and_reordering_characters():
    assert terminal_text("a\x1b[2J\x1b]0;title\x07b") == "a\\x1b[2J\\x1b]0;title\\x07b"
    assert terminal_text("ok\rspoof\x08\x7f\x9b") == "ok\\x0dspoof\\x08\\x7f\\x9b"
    assert terminal_text("x\u202eevil\u2066\u200b") == "x\\u202eevil\\u2066\\u200b"
    assert terminal_text("plain\ttext\nnext é 🌍") == "plain\ttext\nnext é 🌍"
    assert terminal_text("\udc9b31m") == "\\udc9b31m"  # a raw 0x9B byte of a name: C1 CSI
    assert terminal_text("a\U000E0041") == "a\\U000e0041"  # an invisible tag character


def _cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "alertforge.cli", *args], check=False,
                          capture_output=True, text=True, timeout=300)


def test_the_cli_prints_no_control_sequence_a_run_wrote(tmp_path):
    """A run folder named with escape sequences, given to a command that names it in its error:
    stderr holds the visible escapes, never the bytes."""
    hostile = tmp_path / "run\x1b[31m\x1b]0;pwned\x07\u202e"
    hostile.mkdir()
    (hostile / "run.json").write_text("{not json")
    for args in (["export", str(hostile), "--out", str(tmp_path / "site")], ["regrade", str(hostile)],
                 ["view", str(hostile / "missing"), "--port", "0"]):
        done = _cli(*args)
        assert done.returncode == 2, (args, done.stderr)
        for stream in (done.stdout, done.stderr):
            assert "\x1b" not in stream and "\x07" not in stream and "\u202e" not in stream, (args, stream)
        assert "\\x1b[31m" in done.stderr, (args, done.stderr)


def test_markdown_export_of_a_hostile_run_makes_no_markup(tmp_path):
    """The hand-made fixture run with hostile text in its message, model, tool output and
    failing-check detail and cause: rendered, the only links, images and headings are the
    export's own (its headings), and no raw HTML."""
    fixture = Path(__file__).parent / "fixtures" / "site" / "runs" / "fixture-partial-s1"
    run = tmp_path / fixture.name
    import shutil

    shutil.copytree(fixture, run)
    summary = json.loads((run / "run.json").read_text())
    summary["model"] = HOSTILE[1]
    (run / "run.json").write_text(json.dumps(summary))
    trajectory = json.loads((run / "trajectory.json").read_text())
    agent = next(s for s in trajectory["steps"] if s["source"] == "agent")
    agent["message"] = "\n".join(HOSTILE)
    last = next(s for s in reversed(trajectory["steps"]) if (s.get("extra") or {}).get("grade"))
    for key in last["extra"]["grade"]["failed"]:
        last["extra"]["grade"]["failed"][key] = " ".join(HOSTILE)
    (run / "trajectory.json").write_text(json.dumps(trajectory))
    tasks = Path(__file__).parent / "fixtures" / "site" / "tasks"
    done = _cli("export", str(run), "--markdown", "--tasks", str(tasks))
    assert done.returncode == 0, done.stderr
    tokens = _tokens(done.stdout)
    kinds = [t.type for t in tokens]
    assert "link_open" not in kinds and "image" not in kinds and "html_block" not in kinds
    assert "html_inline" not in kinds
    headings = [tokens[i + 1].content for i, t in enumerate(tokens) if t.type == "heading_open"]
    assert all(h.startswith(("Run ", "Task", "Steps", "Step ", "Failing checks")) for h in headings), headings
    assert any("Heading from a run" in t.content for t in tokens if t.type == "fence")


@pytest.mark.parametrize("text", ["see evil.com/x", "//evil.com/x", "x-@evil.com", "ftp.evil.com", "ex\u0430mple.com"])
def test_bare_domains_make_no_link(text):
    kinds = {t.type for t in _tokens(f"- model: {markdown_text(text)}")}
    assert "link_open" not in kinds, text
