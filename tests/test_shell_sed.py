"""The ``sed -i`` emulation: s/// scripts, BRE/ERE patterns, flags, refusals, by table."""

from __future__ import annotations

import pytest

from recorder.importers.shell.effect import UnknownContent
from recorder.importers.shell.sed import bre_to_python, sed_substitute
from recorder.importers.shell.tracker import FileTracker


@pytest.mark.parametrize(("pattern", "extended", "python"), [
    ("a+b", False, "a\\+b"),
    ("a\\+b", False, "a+b"),
    ("a+b", True, "a+b"),
    ("\\(x\\)\\{2\\}", False, "(x){2}"),
    ("(x){2}", False, "\\(x\\)\\{2\\}"),
    ("(x)|y", True, "(x)|y"),
    ("a\\.b\\*", False, "a\\.b\\*"),
    ("\\w\\s\\b", True, "\\w\\s\\b"),
    ("a\\nb", False, "a\\nb"),
    ("\\(a\\)\\1", False, "(a)\\1"),
    ("[]a]", False, "[]a]"),
    ("[^]a]x", False, "[^]a]x"),
    ("a\\/b", False, "a\\/b"),
])
def test_bre_to_python(pattern, extended, python):
    assert bre_to_python(pattern, extended) == python


@pytest.mark.parametrize(("script", "text", "extended", "result"), [
    ("s/a/b/", "aa\na", False, "ba\nb"),
    ("s/a/b/g", "aa\naa", False, "bb\nbb"),
    ("s/A/b/I", "aA", False, "bA"),
    ("s/A/b/gI", "aA", False, "bb"),
    ("s#/#_#g", "a/b/c", False, "a_b_c"),
    ("s|x|y|", "x", False, "y"),
    ("s/\\(x\\)y/\\1\\1/", "xy", False, "xx"),
    ("s/(x)y/\\1-&/", "xy", True, "x-xy"),
    ("s/x/[&]/; s/y/Y/", "xy", False, "[x]Y"),
    ("s/x/a\\&b/", "x", False, "a&b"),
    ("s/a+/b/", "aa+", False, "ab"),
    ("s/a\\+/b/", "aa+", False, "b+"),
    ("s/a\\/b/c/", "a/b", False, "c"),
    ("s/[]a]/x/g", "]a", False, "xx"),
    ("s/[^a]/x/g", "ab", False, "ax"),
    ("s/for: 5m/for: 10m/", "    for: 5m\n", False, "    for: 10m\n"),
    ("s/$/;/", "a\nb", False, "a;\nb;"),
    ("s/^/# /", "a\n", False, "# a\n# "),
    ("  s/a/b/  ", "a", False, "b"),
    ("", "same", False, "same"),
])
def test_sed_substitute(script, text, extended, result):
    assert sed_substitute(script, text, extended) == result


@pytest.mark.parametrize(("script", "extended", "message"), [
    ("s/./X/2", False, "sed s with an occurrence number"),
    ("p", False, "sed command 'p'"),
    ("/x/d", False, "sed command '/x/d'"),
    ("1,3s/a/b/", False, "sed command '1,3s/a/b/'"),
    ("s", False, "sed command 's'"),
    ("s/a/b", False, "unterminated sed s command"),
    ("s/a/b/ x", False, "sed text after s command: 'x'"),
    ("s/a/b/w out", False, "sed text after s command"),
    ("s/[[:space:]]/x/", False, "sed bracket expression"),
    ("s/[a/x/", False, "sed bracket expression"),
    ("s/\\q/x/", False, "sed escape \\\\q"),
    ("s/a/\\2/", False, "sed replacement"),
    # the newline after an s command is stripped before the separator is looked for, so
    # only ";" separates commands (several -e scripts are joined by newlines): pinned as is
    ("s/x/1/\ns/1/2/", False, "sed text after s command: 's/1/2/'"),
    ("s/(/x/", True, "sed pattern"),
])
def test_sed_substitute_refuses_what_it_does_not_emulate(script, extended, message):
    with pytest.raises(UnknownContent, match=message):
        sed_substitute(script, "a(b", extended)


def test_a_pattern_that_backtracks_without_end_is_stopped(monkeypatch):
    from recorder.importers.shell import sed

    monkeypatch.setattr(sed, "SED_SECONDS", 0.05)
    with pytest.raises(UnknownContent, match="took over 0.05 s"):
        sed_substitute("s/(a|a)+$/x/", "a" * 30 + "!", True)


REPO = {"rules/a.yml": "for: 5m\n", "rules/b.yml": "for: 5m\n"}


def run(command):
    tracker = FileTracker(dict(REPO), repo_known=True, cwd="/app/monitoring")
    effect = tracker.apply("bash", {"command": command})
    return [(e.path, e.content) for e in effect.edits], effect.lossy


@pytest.mark.parametrize(("command", "edits"), [
    ("sed -i 's/5m/10m/' rules/a.yml", [("rules/a.yml", "for: 10m\n")]),
    ("sed -i.bak 's/5m/10m/' rules/a.yml", [("rules/a.yml", "for: 10m\n")]),
    ("sed --in-place 's/5m/10m/' rules/a.yml", [("rules/a.yml", "for: 10m\n")]),
    ("sed -i -e 's/5m/6m/; s/6m/7m/' rules/a.yml", [("rules/a.yml", "for: 7m\n")]),
    ("sed -E -i 's/([0-9]+)m/\\1h/' rules/*.yml", [("rules/a.yml", "for: 5h\n"),
                                                   ("rules/b.yml", "for: 5h\n")]),
    ("sed -E -i 's/(for)/\\1_/' rules/b.yml", [("rules/b.yml", "for_: 5m\n")]),
])
def test_sed_in_place_is_emulated_and_named_lossy(command, edits):
    got, lossy = run(command)
    assert got == edits
    assert [m.endswith(": sed emulated (s/// only), not run") for m in lossy] == [True] * len(edits)


@pytest.mark.parametrize(("command", "lossy"), [
    ("sed -i '/for/d' rules/a.yml",
     ["`sed -i /for/d rules/a.yml` (sed command '/for/d'): content of rules/a.yml unknown"]),
    ("sed -i 's/a/b/' rules/none.yml",
     ["`sed -i s/a/b/ rules/none.yml` (rules/none.yml does not exist): content of rules/none.yml unknown"]),
    ("sed -n p rules/a.yml > out.yml", ["output of `sed -n p rules/a.yml` redirected: content of out.yml unknown"]),
    ("sed -i s/a/b/ $F", ["`sed -i s/a/b/ '$F'` uses $ expansion in its arguments"]),
])
def test_sed_that_cannot_be_emulated_is_lossy(command, lossy):
    assert run(command) == ([], lossy)


@pytest.mark.parametrize(("command", "edits"), [
    # short options cluster as GNU sed reads them (a Harbor review: -ri was missed, the run "exact")
    ("sed -ri 's/([0-9]+)m/\\1h/' rules/a.yml", [("rules/a.yml", "for: 5h\n")]),
    ("sed -Ei 's/([0-9]+)m/\\1h/' rules/a.yml", [("rules/a.yml", "for: 5h\n")]),
    ("sed -ie 's/5m/1m/' rules/a.yml", [("rules/a.yml", "for: 1m\n")]),  # -i with suffix "e"
    ("sed -re 's/(5)m/\\1h/' -i rules/a.yml", [("rules/a.yml", "for: 5h\n")]),
    ("sed --in-place=.orig --expression='s/5m/2m/' rules/a.yml", [("rules/a.yml", "for: 2m\n")]),
])
def test_sed_clustered_options_are_read_as_gnu_sed_reads_them(command, edits):
    got, lossy = run(command)
    assert got == edits
    assert [m.endswith(": sed emulated (s/// only), not run") for m in lossy] == [True] * len(edits)


@pytest.mark.parametrize("flag", ["-ni", "-n -i", "-zi", "-si"])
def test_sed_in_place_with_options_it_does_not_emulate_is_unknown_content(flag):
    got, lossy = run(f"sed {flag} 's/5m/1m/p' rules/a.yml")
    assert got == [] and len(lossy) == 1 and lossy[0].endswith("content of rules/a.yml unknown")


@pytest.mark.parametrize("command", [
    "sed 's/5m/1m/' rules/a.yml",
    "sed -r 's/5m/1m/' rules/a.yml",
    "sed -n 's/5m/1m/p' rules/a.yml",
])
def test_sed_without_in_place_changes_no_file(command):
    assert run(command) == ([], [])


def test_several_e_scripts_are_not_emulated():
    _, lossy = run("sed -i -e 's/5m/6m/' -e 's/6m/7m/' rules/a.yml")
    assert lossy == [("`sed -i -e s/5m/6m/ -e s/6m/7m/ rules/a.yml` (sed text after s command: "
                     "'s/6m/7m/'): content of rules/a.yml unknown")]
