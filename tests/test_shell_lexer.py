"""The shell lexer: words, quoting, operators, redirections, pipelines and heredocs, by table."""

from __future__ import annotations

import pytest

from recorder.importers.shell.lexer import (
    continues,
    heredoc_text,
    parse_line,
    short,
    split_script,
    tokenize,
)

W, Q, X = "word", "quoted", "expands"


def _shape(tokens):
    """Tokens as compact tuples: ("op", value) or (value, flags...)."""
    out = []
    for t in tokens:
        if t.kind == "op":
            out.append(("op", t.value))
        else:
            out.append((t.value, *([Q] if t.quoted else []), *([X] if t.expands else [])))
    return out


@pytest.mark.parametrize(("line", "tokens", "complete"), [
    ("echo hi", [("echo",), ("hi",)], True),
    ("  echo\t hi  ", [("echo",), ("hi",)], True),
    ("echo 'a b'", [("echo",), ("a b", Q)], True),
    ("echo 'a $b'", [("echo",), ("a $b", Q)], True),
    ('echo "x $HOME"', [("echo",), ("x $HOME", Q, X)], True),
    ('echo "a \\"b\\" \\$c \\\\"', [("echo",), ('a "b" $c \\', Q)], True),
    ('echo "a\\nb"', [("echo",), ("a\\nb", Q)], True),
    ("echo a\\ b", [("echo",), ("a b",)], True),
    ("echo pre'mid'\"end\"", [("echo",), ("premidend", Q)], True),
    ("echo ''", [("echo",), ("", Q)], True),
    ("echo 'open", [("echo",)], False),
    ('echo "open', [("echo",)], False),
    ("ls # a comment", [("ls",)], True),
    ("echo a#b", [("echo",), ("a#b",)], True),
    ("echo $(date +%s) x", [("echo",), ("$(date +%s)", X), ("x",)], True),
    ("echo $(a $(b)) c", [("echo",), ("$(a $(b))", X), ("c",)], True),
    ("echo `date`", [("echo",), ("`date`", X)], True),
    ("echo $HOME/x", [("echo",), ("$HOME/x", X)], True),
    ("a&&b||c;d", [("a",), ("op", "&&"), ("b",), ("op", "||"), ("c",), ("op", ";"), ("d",)], True),
    ("a | b & c", [("a",), ("op", "|"), ("b",), ("op", "&"), ("c",)], True),
    ("(cd x)", [("op", "("), ("cd",), ("x",), ("op", ")")], True),
    ("cmd 2>err >>out", [("cmd",), ("op", "2>"), ("err",), ("op", ">>"), ("out",)], True),
    ("cmd 2>&1", [("cmd",), ("op", "2>&"), ("1",)], True),
    ("echo x2>f", [("echo",), ("x2",), ("op", ">"), ("f",)], True),
    ('echo "2">f', [("echo",), ("2", Q), ("op", ">"), ("f",)], True),
    ("cat <<-'EOF'", [("cat",), ("op", "<<-"), ("EOF", Q)], True),
    ("cat <<EOF", [("cat",), ("op", "<<"), ("EOF",)], True),
    ("cat <<<word", [("cat",), ("op", "<<<"), ("word",)], True),
    ("echo &>f", [("echo",), ("op", "&>"), ("f",)], True),
    ("echo >|f", [("echo",), ("op", ">|"), ("f",)], True),
])
def test_tokenize(line, tokens, complete):
    got, ok = tokenize(line)
    assert (_shape(got), ok) == (tokens, complete)


def _commands(line):
    tokens, _ = tokenize(line)
    return [[([w.value for w in c.words], [(r.op, r.target.value) for r in c.redirects], c.heredoc)
             for c in pipeline] for pipeline in parse_line(tokens)]


@pytest.mark.parametrize(("line", "pipelines"), [
    ("cat > f << 'EOF'", [[(["cat"], [(">", "f")], ("EOF", False, True))]]),
    ("cat <<-EOF >> f", [[(["cat"], [(">>", "f")], ("EOF", True, False))]]),
    ("a x | b | c && d", [[(["a", "x"], [], None), (["b"], [], None), (["c"], [], None)],
                          [(["d"], [], None)]]),
    ("(cd x; touch y)", [[(["cd", "x"], [], None)], [(["touch", "y"], [], None)]]),
    ("echo x >", [[(["echo", "x"], [], None)]]),
    ("tee a 2> /dev/null", [[(["tee", "a"], [("2>", "/dev/null")], None)]]),
    ("; ;; &&", []),
    ("> f", [[([], [(">", "f")], None)]]),
])
def test_parse_line(line, pipelines):
    assert _commands(line) == pipelines


@pytest.mark.parametrize(("body", "quoted", "text", "exact"), [
    ("a $X\n", True, "a $X\n", True),
    ("a $X\n", False, "a $X\n", False),
    ("a ${X}\n", False, "a ${X}\n", False),
    ("a `cmd`\n", False, "a `cmd`\n", False),
    ("cost \\$5\n", False, "cost $5\n", True),
    ("a \\\\ b \\` c\n", False, "a \\ b ` c\n", True),
    ("line\\\nnext\n", False, "linenext\n", True),
    ("{{ $labels.x }}\n", True, "{{ $labels.x }}\n", True),
    ("price: $\n", False, "price: $\n", True),
])
def test_heredoc_text(body, quoted, text, exact):
    assert heredoc_text(body, quoted) == (text, exact)


@pytest.mark.parametrize(("line", "expected"), [
    ("a \\", True), ("a \\\\", False), ("a \\\\\\", True), ("a \\\r", True), ("a", False), ("", False),
])
def test_continues(line, expected):
    assert continues(line) is expected


def _script(text, final):
    script = split_script(text, final=final)
    lines = [[[(" ".join(w.value for w in c.words), c.body) for c in p] for p in line]
             for line in script.lines]
    return lines, script.rest, script.waiting_for


@pytest.mark.parametrize(("text", "final", "lines", "rest", "waiting"), [
    ("echo a\necho b", True, [[[("echo a", None)]], [[("echo b", None)]]], "", None),
    ("echo a\necho b", False, [[[("echo a", None)]]], "echo b", None),
    ("echo a\n", False, [[[("echo a", None)]]], "", None),
    ("cat > f <<EOF\nx\n", False, [], "cat > f <<EOF\nx\n", "EOF"),
    ("echo a\ncat > f <<EOF\nx\n", False, [[[("echo a", None)]]], "cat > f <<EOF\nx\n", "EOF"),
    ("cat > f <<EOF\nx\nEOF\n", False, [[[("cat", "x\n")]]], "", None),
    ("cat > f <<EOF\nEOF\n", False, [[[("cat", "")]]], "", None),
    ("cat <<-E\n\tx\n\tE\n", False, [[[("cat", "x\n")]]], "", None),
    ("cat <<E\n\tx\nE\n", False, [[[("cat", "\tx\n")]]], "", None),
    ("cat <<E\nx", True, [[[("cat", "x\n")]]], "", None),
    ("cat <<A; cat <<B\n1\nA\n2\nB\n", False, [[[("cat", "1\n")], [("cat", "2\n")]]], "", None),
    ("echo 'a\nb'\n", False, [[[("echo a\nb", None)]]], "", None),
    ("echo a \\\nb\n", False, [[[("echo a b", None)]]], "", None),
    ("echo 'open\n", False, [], "echo 'open\n", None),
    ("echo 'open\n", True, [[[("echo", None)]]], "", None),
    ("", True, [[]], "", None),
])
def test_split_script(text, final, lines, rest, waiting):
    assert _script(text, final) == (lines, rest, waiting)


@pytest.mark.parametrize(("text", "expected"), [("a" * 80, "a" * 80), ("a" * 81, "a" * 77 + "...")])
def test_short_cuts_long_commands_at_80_characters(text, expected):
    assert short(text) == expected
