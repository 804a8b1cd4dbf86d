"""The shell's file commands (cd, echo, printf, cat, tee, rm, mv, cp, touch), by table.

Each row runs one command string in a shell whose working directory is the task's repo
(``/app/monitoring``) and whose repo holds ``rules/a.yml`` and ``rules/b.yml``.
"""

from __future__ import annotations

import pytest

from recorder.importers.shell.builtins import backslash_escapes, echo_output, printf_output
from recorder.importers.shell.effect import UnknownContent
from recorder.importers.shell.tracker import FileTracker

REPO = {"rules/a.yml": "A\n", "rules/b.yml": "B\n"}


def run(command: str, files: dict | None = None, cwd: str = "/app/monitoring"):
    tracker = FileTracker(dict(REPO if files is None else files), repo_known=True, cwd=cwd)
    effect = tracker.apply("bash", {"command": command})
    return [(e.path, e.content) for e in effect.edits], effect.lossy, effect.notes


@pytest.mark.parametrize(("args", "output"), [
    (["hi"], "hi\n"),
    (["a", "", "b"], "a  b\n"),
    (["-n", "hi"], "hi"),
    (["-e", "a\\tb"], "a\tb\n"),
    (["-ne", "a\\nb"], "a\nb"),
    (["-eE", "a\\tb"], "a\\tb\n"),
    (["-E", "a\\tb"], "a\\tb\n"),
    (["a\\tb"], "a\\tb\n"),
    (["-x", "y"], "-x y\n"),
    (["-n"], ""),
    ([], "\n"),
])
def test_echo_output(args, output):
    assert echo_output(list(args)) == output


@pytest.mark.parametrize(("args", "output"), [
    (["hi"], "hi"),
    (["%s\\n", "a"], "a\n"),
    (["%s-%s\\n", "a", "b", "c"], "a-b\nc-\n"),
    (["%d items", "3"], "3 items"),
    (["100%%"], "100%"),
    (["%b", "x\\ny"], "x\ny"),
    (["%s", "x\\ny"], "x\\ny"),
    (["no conversions", "a", "b"], "no conversions"),
    (["%s|"], "|"),
])
def test_printf_output(args, output):
    assert printf_output(list(args)) == output


@pytest.mark.parametrize(("args", "message"), [
    ([], "printf without a format"),
    (["%5s", "x"], "printf format '%5s'"),
    (["%x", "3"], "printf format '%x'"),
])
def test_printf_refuses_what_it_cannot_format(args, message):
    with pytest.raises(UnknownContent, match=message):
        printf_output(list(args))


@pytest.mark.parametrize(("text", "expected"), [
    ("a\\nb\\tc", "a\nb\tc"), ("\\\\", "\\"), ("\\q", "\\q"), ("\\'\\\"", "'\""), ("\\0", "\0"),
])
def test_backslash_escapes(text, expected):
    assert backslash_escapes(text) == expected


@pytest.mark.parametrize(("command", "edits"), [
    ("cd rules && echo x > c.yml", [("rules/c.yml", "x\n")]),
    ("cd /tmp; echo x > f", [("/tmp/f", "x\n")]),
    ("cd; echo x > f", [("/root/f", "x\n")]),
    ("cd ~/d; echo x > f", [("/root/d/f", "x\n")]),
    ("cd -; echo x > f", [("f", "x\n")]),
    ("cd ..; echo x > f", [("/app/f", "x\n")]),
    ("cd /srv/monitoring/rules\necho x > f", [("rules/f", "x\n")]),
])
def test_cd_moves_where_relative_paths_land(command, edits):
    assert run(command)[0] == edits


@pytest.mark.parametrize(("command", "edits"), [
    ("echo -n hi > f", [("f", "hi")]),
    ("echo 'a  b' c > f", [("f", "a  b c\n")]),
    ("echo x >> rules/a.yml", [("rules/a.yml", "A\nx\n")]),
    ("echo x >> new.yml", [("new.yml", "x\n")]),
    ("echo x > f; echo y > f", [("f", "y\n")]),
    ("printf '%s\\n' a b > f", [("f", "a\nb\n")]),
    ("printf 'k: %d\\n' 3 >| f", [("f", "k: 3\n")]),
    ("echo x 1> f", [("f", "x\n")]),
    ("echo x > /dev/null", []),
    ("echo x > /dev/stdout > f", [("f", "x\n")]),
])
def test_echo_and_printf_redirected(command, edits):
    assert run(command)[0] == edits


@pytest.mark.parametrize(("command", "lossy"), [
    ("echo $X > f", ["output of `echo '$X'` redirected: content of f unknown"]),
    ("printf '%5s' x > f", ["output of `printf %5s x` redirected: content of f unknown"]),
    ("printf > f", ["output of `printf` redirected: content of f unknown"]),
    ("echo x &> f", ["output of `echo x` redirected: content of f unknown"]),
    ("echo x > $OUT", ["`echo x` writes to '$OUT', a path with $"]),
])
def test_echo_output_that_cannot_be_known_is_lossy(command, lossy):
    edits, got, _ = run(command)
    assert (edits, got) == ([], lossy)


@pytest.mark.parametrize(("command", "notes"), [
    ("echo hi", ["`echo hi` prints to the terminal; no file written"]),
    ("echo x 2> err", ["`echo x` prints to the terminal; no file written"]),
    ("printf x | cat", []),
    ("echo x > f", []),
])
def test_echo_to_the_terminal_is_a_note(command, notes):
    assert run(command)[2] == notes


@pytest.mark.parametrize(("command", "edits"), [
    ("cat rules/a.yml > c.yml", [("c.yml", "A\n")]),
    ("cat rules/a.yml rules/b.yml > c.yml", [("c.yml", "A\nB\n")]),
    ("echo x | cat - rules/a.yml > c", [("c", "x\nA\n")]),
    ("echo x | cat > c", [("c", "x\n")]),
    ("cat -n rules/a.yml > c", [("c", "A\n")]),
    ("cat > c <<'EOF'\nbody\nEOF", [("c", "body\n")]),
    ("cat rules/a.yml | tee c.yml > /dev/null", [("c.yml", "A\n")]),
])
def test_cat(command, edits):
    assert run(command)[0] == edits


@pytest.mark.parametrize(("command", "lossy"), [
    ("cat missing.yml > c", ["output of `cat missing.yml` redirected: content of c unknown"]),
    ("cat /etc/hosts > c", ["output of `cat /etc/hosts` redirected: content of c unknown"]),
])
def test_cat_of_an_unknown_file_is_lossy(command, lossy):
    assert run(command)[:2] == ([], lossy)


@pytest.mark.parametrize(("command", "edits", "lossy"), [
    ("echo x | tee f g > /dev/null", [("f", "x\n"), ("g", "x\n")], []),
    ("echo y | tee -a rules/a.yml", [("rules/a.yml", "A\ny\n")], []),
    ("echo y | tee --append new.yml", [("new.yml", "y\n")], []),
    ("tee f <<'E'\nz\nE", [("f", "z\n")], []),
    ("echo x | sudo tee f", [("f", "x\n")], []),
    ("cat /etc/x | tee f", [], ["tee of unknown input: content of f unknown"]),
    ("tee $F <<< x", [], ["`tee '$F'` uses $ expansion in its arguments"]),
])
def test_tee(command, edits, lossy):
    assert run(command)[:2] == (edits, lossy)


@pytest.mark.parametrize(("command", "edits"), [
    ("rm rules/a.yml", [("rules/a.yml", None)]),
    ("rm -f rules/a.yml rules/b.yml", [("rules/a.yml", None), ("rules/b.yml", None)]),
    ("rm -rf rules", [("rules/a.yml", None), ("rules/b.yml", None)]),
    ("rm -rf rules/", [("rules/a.yml", None), ("rules/b.yml", None)]),
    ("rm rules/*.yml", [("rules/a.yml", None), ("rules/b.yml", None)]),
    ("rm rules/none.yml", []),
    ("rm /tmp/never-seen", [("/tmp/never-seen", None)]),
])
def test_rm(command, edits):
    assert run(command)[0] == edits


@pytest.mark.parametrize(("command", "edits"), [
    ("mv rules/a.yml rules/c.yml", [("rules/c.yml", "A\n"), ("rules/a.yml", None)]),
    ("cp rules/a.yml rules/c.yml", [("rules/c.yml", "A\n")]),
    ("cp rules/a.yml rules/b.yml bak", [("bak/a.yml", "A\n"), ("bak/b.yml", "B\n")]),
    ("cp rules/a.yml /tmp/", [("/tmp/a.yml", "A\n")]),
    ("cp -r rules/*.yml old/", [("old/a.yml", "A\n"), ("old/b.yml", "B\n")]),
    ("cp rules/b.yml rules", [("rules/b.yml", "B\n")]),
    ("mv rules/a.yml", []),
])
def test_mv_and_cp(command, edits):
    assert run(command)[0] == edits


def test_cp_of_an_unknown_file_writes_unknown_content():
    edits, lossy, _ = run("cp /etc/x rules/x.yml")
    assert edits == [] and lossy == ["cp /etc/x: content of /etc/x is unknown: content of rules/x.yml unknown"]


@pytest.mark.parametrize(("command", "edits", "lossy", "notes"), [
    ("touch rules/new.yml", [("rules/new.yml", "")], [], []),
    ("touch rules/a.yml", [], [], []),
    ("touch /tmp/t", [], [], ["touch of a file not seen before: content of /tmp/t unknown"]),
    ("time touch rules/n.yml", [("rules/n.yml", "")], [], []),
])
def test_touch(command, edits, lossy, notes):
    assert run(command) == (edits, lossy, notes)


def test_touch_of_a_file_never_seen_in_an_unknown_task_is_lossy():
    tracker = FileTracker({}, repo_known=False)
    effect = tracker.apply("bash", {"command": "touch /app/x"})
    assert effect.lossy == ["touch of a file not seen before: content of /app/x unknown"]


@pytest.mark.parametrize(("command", "shown"), [
    ("rm $F", "rm '$F'"), ("mv $A b", "mv '$A' b"), ("cp a $B", "cp a '$B'"),
    ("touch $T", "touch '$T'"), ("cd $D; echo x > f", "cd '$D'"),
])
def test_path_commands_with_expansions_are_not_replayed(command, shown):
    edits, lossy, _ = run(command)
    assert lossy[0] == f"`{shown}` uses $ expansion in its arguments"
    assert all(path == "f" for path, _ in edits)


@pytest.mark.parametrize(("command", "edits"), [
    ("FOO=1 echo v > v.txt", [("v.txt", "v\n")]),
    ("A=1 B=2 sudo tee f <<'E'\nq\nE", [("f", "q\n")]),
    ("/bin/echo x > f", [("f", "x\n")]),
    ("exec echo e > f", [("f", "e\n")]),
])
def test_assignments_and_prefixes_are_skipped(command, edits):
    assert run(command)[0] == edits
