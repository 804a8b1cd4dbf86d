"""The Codex ``apply_patch`` applier: added, deleted, updated and moved files, hunk search, by table."""

from __future__ import annotations

import pytest

from recorder.importers.shell.effect import UnknownContent
from recorder.importers.shell.patch import apply_codex_patch, apply_hunks, find_lines
from recorder.importers.shell.tracker import FileTracker

FILES = {"a.yml": "a\nb\nc\n", "groups.yml": "f1:\n  v: 1\nf2:\n  v: 1\n", "pad.yml": "a  \nb\n",
         "x.yml": "x\n"}


def read(path):
    if path not in FILES:
        raise UnknownContent(f"content of {path} is unknown")
    return FILES[path]


def patch(*body: str) -> str:
    return "\n".join(("*** Begin Patch", *body, "*** End Patch"))


@pytest.mark.parametrize(("text", "result"), [
    (patch("*** Add File: n.yml", "+a", "+b"), [("n.yml", "a\nb\n")]),
    (patch("*** Add File: n.yml", "+"), [("n.yml", "\n")]),
    (patch("*** Add File: n.yml"), [("n.yml", "\n")]),
    (patch("*** Delete File: old.yml"), [("old.yml", None)]),
    (patch("*** Update File: a.yml", "@@", "-b", "+B"), [("a.yml", "a\nB\nc\n")]),
    (patch("*** Update File: a.yml", "@@", " a", "-b", "+B", " c"), [("a.yml", "a\nB\nc\n")]),
    (patch("*** Update File: a.yml", "-b", "+B"), [("a.yml", "a\nB\nc\n")]),
    (patch("*** Update File: a.yml", "@@", "-b"), [("a.yml", "a\nc\n")]),
    (patch("*** Update File: a.yml", "@@", " b", "+b2"), [("a.yml", "a\nb\nb2\nc\n")]),
    (patch("*** Update File: groups.yml", "@@ f2:", "-  v: 1", "+  v: 2"),
     [("groups.yml", "f1:\n  v: 1\nf2:\n  v: 2\n")]),
    (patch("*** Update File: groups.yml", "@@ nowhere", "-  v: 1", "+  v: 2"),
     [("groups.yml", "f1:\n  v: 2\nf2:\n  v: 1\n")]),
    (patch("*** Update File: a.yml", "@@", "-c", "+C", "@@", "-a", "+A"), [("a.yml", "A\nb\nC\n")]),
    (patch("*** Update File: pad.yml", "@@", "-a", "+A"), [("pad.yml", "A\nb\n")]),
    (patch("*** Update File: a.yml", "@@", "-c", "+C", "*** End of File"), [("a.yml", "a\nb\nC\n")]),
    (patch("*** Update File: x.yml", "*** Move to: y.yml", "@@", "-x", "+y"),
     [("x.yml", None), ("y.yml", "y\n")]),
    (patch("*** Update File: x.yml", "*** Move to: x.yml", "@@", "-x", "+z"), [("x.yml", "z\n")]),
    (patch("*** Add File: n.yml", "+n", "*** Delete File: x.yml", "*** Update File: a.yml", "@@",
           "-a", "+A"), [("n.yml", "n\n"), ("x.yml", None), ("a.yml", "A\nb\nc\n")]),
    (patch("*** Update File: a.yml", "@@", "-b", "+B").replace("\n", "\r\n"), [("a.yml", "a\nB\nc\n")]),
    ("  *** Begin Patch  \n*** Delete File:  spaced.yml \n", [("spaced.yml", None)]),
])
def test_apply_codex_patch(text, result):
    assert apply_codex_patch(text, read) == result


@pytest.mark.parametrize(("text", "message"), [
    ("--- a\n+++ b\n@@ -1 +1 @@\n-a\n+b\n", "not a '\\*\\*\\* Begin Patch' patch"),
    (patch("*** Update File: a.yml", "@@", "-zzz", "+y"), "apply_patch: a hunk does not match a.yml"),
    (patch("*** Update File: unknown.yml", "@@", "-a", "+b"), "content of unknown.yml is unknown"),
])
def test_apply_codex_patch_refuses(text, message):
    with pytest.raises(UnknownContent, match=message):
        apply_codex_patch(text, read)


@pytest.mark.parametrize(("lines", "old", "cursor", "start"), [
    (["a", "b", "c"], ["b"], 0, 1),
    (["a", "b", "a", "b"], ["a", "b"], 1, 2),
    (["a", "b", "c"], ["a"], 2, 0),
    (["a ", "b"], ["a"], 0, 0),
    (["a", "b"], ["b", "", ""], 0, 1),
    (["a", "b"], ["z"], 0, None),
    (["a", "b"], [], 1, 1),
])
def test_find_lines(lines, old, cursor, start):
    assert find_lines(lines, old, cursor) == start


def test_apply_hunks_applies_in_order_from_the_previous_hunk():
    text = "k: 1\nk: 1\nk: 1\n"
    assert apply_hunks(text, [("", ["-k: 1", "+k: 2"]), ("", ["-k: 1", "+k: 3"])], "t") == "k: 2\nk: 3\nk: 1\n"


@pytest.mark.parametrize(("name", "arguments", "edits"), [
    ("apply_patch", {"input": patch("*** Update File: /app/monitoring/rules/a.yml", "@@", "-A", "+Z")},
     [("rules/a.yml", "Z\n")]),
    ("apply_patch", {"patch": patch("*** Add File: rules/new.yml", "+n")}, [("/app/rules/new.yml", "n\n")]),
    ("bash", {"command": "apply_patch <<'EOF'\n" + patch("*** Delete File: /app/monitoring/rules/a.yml")
              + "\nEOF"}, [("rules/a.yml", None)]),
    ("bash", {"command": ["apply_patch", patch("*** Add File: monitoring/x.yml", "+x")]},
     [("x.yml", "x\n")]),
])
def test_apply_patch_tool_and_command(name, arguments, edits):
    tracker = FileTracker({"rules/a.yml": "A\n"}, repo_known=True)
    effect = tracker.apply(name, arguments)
    assert [(e.path, e.content) for e in effect.edits] == edits


def test_a_patch_that_does_not_apply_is_lossy_and_changes_nothing():
    tracker = FileTracker({"rules/a.yml": "A\n"}, repo_known=True)
    effect = tracker.apply("apply_patch", {"input": patch("*** Update File: monitoring/rules/a.yml",
                                                          "@@", "-Q", "+Z")})
    assert effect.edits == [] and effect.lossy == [("apply_patch: apply_patch: a hunk does not match "
                                                   "monitoring/rules/a.yml")]
