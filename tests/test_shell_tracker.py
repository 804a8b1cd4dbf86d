"""The file tracker: tool calls dispatched, editor tools, keystrokes, sub-shells and
programs that are not replayed, path keys and prompts, by table."""

from __future__ import annotations

import pytest

from recorder.importers.shell import interpreter
from recorder.importers.shell.files import KnownFiles
from recorder.importers.shell.tracker import FileTracker, prompt_cwd

REPO = {"rules/a.yml": "A\nA\n", "script.sh": "echo s > s.yml\n", "w.py": "open('x', 'w')\n"}


def tracker(**kw) -> FileTracker:
    return FileTracker(dict(REPO), repo_known=True, cwd="/app/monitoring", **kw)


def outcome(effect):
    return [(e.path, e.content) for e in effect.edits], effect.lossy, effect.notes


@pytest.mark.parametrize(("cwd", "path", "key"), [
    ("/app", "monitoring/rules/a.yml", "rules/a.yml"),
    ("/app", "/app/monitoring/rules/a.yml", "rules/a.yml"),
    ("/app/monitoring", "../x", "/app/x"),
    ("/app/monitoring", "./rules//a.yml", "rules/a.yml"),
    ("/app", "/srv/monitoring", "."),
    ("/app", "~/f", "/root/f"),
    ("/app", "/x/monitoring/a/monitoring/b", "b"),
    ("/app", "hello.txt", "/app/hello.txt"),
])
def test_path_keys(cwd, path, key):
    assert KnownFiles(cwd=cwd).key(path) == key


@pytest.mark.parametrize(("known", "key", "exists"), [
    (True, "rules/a.yml", True), (True, "rules/none.yml", False), (True, "/tmp/x", None),
    (False, "rules/none.yml", None),
])
def test_what_is_known_to_exist(known, key, exists):
    assert KnownFiles({"rules/a.yml": "A"}, repo_known=known).exists(key) is exists


@pytest.mark.parametrize(("text", "cwd"), [
    ("root@abc123:/app/monitoring# ls", "/app/monitoring"),
    ("user@h-1.x:/tmp$ ", "/tmp"),
    ("output\nroot@h:/app# ", "/app"),
    ("root@h:~# ", None),
    ("no prompt", None),
    ("", None),
    (None, None),
])
def test_prompt_cwd(text, cwd):
    assert prompt_cwd(text) == cwd


@pytest.mark.parametrize(("name", "arguments", "edits", "lossy", "notes"), [
    ("write_file", {"path": "rules/n.yml", "content": "n"}, [("rules/n.yml", "n")], [], []),
    ("Write", {"file_path": "/app/monitoring/n.yml", "content": ""}, [("n.yml", "")], [], []),
    ("create_file", {"filename": "/app/hello.txt", "contents": "hi"}, [("/app/hello.txt", "hi")], [], []),
    ("write_file", {"path": "n.yml"}, [], [], ["write without a path or content: nothing written"]),
    ("str_replace_editor", {"command": "create", "path": "c.yml", "file_text": "c\n"}, [("c.yml", "c\n")], [], []),
    ("str_replace_editor", {"command": "view", "path": "rules/a.yml"}, [], [], []),
    ("str_replace_editor", {"path": "rules/a.yml"}, [], [], []),
    ("str_replace_editor", {"command": "create"}, [], [], ["edit without a path: nothing changed"]),
    ("str_replace_editor", {"command": "str_replace", "path": "rules/a.yml", "old_str": "A\nA", "new_str": "B"},
     [("rules/a.yml", "B\n")], [], []),
    ("str_replace_editor", {"command": "str_replace", "path": "rules/a.yml", "old_str": "A", "new_str": "B"},
     [], [], ["str_replace_editor: old text occurs 2 times in rules/a.yml: the tool refused, nothing changed"]),
    ("str_replace_editor", {"command": "str_replace", "path": "rules/a.yml", "old_str": "Z", "new_str": "B"},
     [], [], ["str_replace_editor: old text occurs 0 times in rules/a.yml: the tool refused, nothing changed"]),
    ("str_replace_editor", {"command": "str_replace", "path": "rules/a.yml", "old_str": ""},
     [], ["str_replace_editor: edit of rules/a.yml without old text"], []),
    ("str_replace_editor", {"command": "str_replace", "path": "rules/none.yml", "old_str": "x"},
     [], ["str_replace_editor: rules/none.yml does not exist"], []),
    ("str_replace_editor", {"command": "insert", "path": "rules/a.yml", "insert_line": 1, "new_str": "I"},
     [("rules/a.yml", "A\nI\nA\n")], [], []),
    ("str_replace_editor", {"command": "insert", "path": "rules/a.yml", "insert_line": 0, "new_str": "I\nJ"},
     [("rules/a.yml", "I\nJ\nA\nA\n")], [], []),
    ("str_replace_editor", {"command": "insert", "path": "rules/a.yml", "insert_line": "x", "new_str": "I"},
     [], ["str_replace_editor: insert_line 'x' is not a line number"], []),
    ("str_replace_editor", {"command": "undo_edit", "path": "rules/a.yml"},
     [], ["str_replace_editor: undo_edit with no recorded edit of rules/a.yml"], []),
    ("Edit", {"file_path": "rules/a.yml", "old_string": "A", "new_string": "B", "replace_all": True},
     [("rules/a.yml", "B\nB\n")], [], []),
    ("replace_in_file", {"path": "rules/a.yml", "old": "A\n", "new": "", "all": True}, [("rules/a.yml", "")], [], []),
    ("MultiEdit", {"file_path": "rules/a.yml", "edits": [{"old_string": "A\nA", "new_string": "B\nA"},
                                                         {"old_string": "B", "new_string": "C"}]},
     [("rules/a.yml", "C\nA\n")], [], []),
    ("MultiEdit", {"file_path": "rules/a.yml", "edits": "bad"},
     [], ["MultiEdit: MultiEdit edits is not a list of {old_string, new_string} objects"], []),
    ("execute_ipython_cell", {"code": "open('f', 'w').write('x')"}, [],
     ["IPython cell code may write files (not replayed)"], []),
    ("execute_ipython_cell", {"code": "print(1)"}, [], [], []),
    ("grep", {"pattern": "x"}, [], [], []),
    ("Read", {"file_path": "rules/a.yml"}, [], [], []),
    ("mystery", {"path": "p", "content": "c"}, [], ["unknown tool 'mystery' with a path and content: not replayed"], []),
    ("mystery", {}, [], [], ["unknown tool 'mystery': assumed not to change files"]),
    ("bash", "not an object", [], [], []),
    ("execute_bash", {"command": 3}, [], [], []),
    ("exec_command", {"cmd": ["bash", "-lc", "echo x > f"]}, [("f", "x\n")], [], []),
    ("exec_command", {"cmd": ["/bin/sh", "-c", "echo x > f"]}, [("f", "x\n")], [], []),
    ("local_shell", {"command": ["touch", "new file.yml"]}, [("new file.yml", "")], [], []),
])
def test_tool_calls(name, arguments, edits, lossy, notes):
    assert outcome(tracker().apply(name, arguments)) == (edits, lossy, notes)


def test_undo_edit_restores_the_content_before_the_last_edit():
    t = tracker()
    t.apply("str_replace_editor", {"command": "create", "path": "u.yml", "file_text": "1"})
    t.apply("str_replace_editor", {"command": "create", "path": "u.yml", "file_text": "2"})
    assert outcome(t.apply("str_replace_editor", {"command": "undo_edit", "path": "u.yml"}))[0] == [("u.yml", "1")]
    assert outcome(t.apply("str_replace_editor", {"command": "undo_edit", "path": "u.yml"}))[0] == [("u.yml", None)]
    assert "u.yml" not in t.known.files


@pytest.mark.parametrize(("keystrokes", "edits_per_call"), [
    (["cat > f <<'EOF'\n", "x\n", "EOF\n"], [[], [], [("f", "x\n")]]),
    (["echo x > f"], [[]]),
    (["echo x > f", "\n"], [[], [("f", "x\n")]]),
    (["echo x > f", "C-c", "\n"], [[], [], []]),
    (["cat > f <<'EOF'\n", "C-d", "x\nEOF\n"], [[], [], []]),
    (["echo 'a\n", "b' > f\n"], [[], [("f", "a\nb\n")]]),
    (["echo a \\\n", "b > f\n"], [[], [("f", "a b\n")]]),
    (["cat > f <<E\n1\n", "E", "\n"], [[], [], [("f", "1\n")]]),
    (["Enter", "Escape", "Up"], [[], [], []]),
    (["echo 1 > f\necho 2 > g\n"], [[("f", "1\n"), ("g", "2\n")]]),
])
def test_keystrokes_wait_for_the_end_of_their_command(keystrokes, edits_per_call):
    t = tracker()
    got = [outcome(t.apply("bash_command", {"keystrokes": k}))[0] for k in keystrokes]
    assert got == edits_per_call


def test_pending_input_over_its_limit_is_dropped_as_lossy(monkeypatch):
    monkeypatch.setattr(interpreter, "MAX_PENDING", 10)
    t = tracker()
    effect = t.apply("tmux_send_keys", {"keystrokes": "echo 'never closed\n"})
    assert effect.lossy == [("terminal input of over 10 characters with no end to its command "
                            "(an open heredoc or quote): not replayed")]
    assert t.shell.pending == "" and t.shell.waiting_for is None


@pytest.mark.parametrize(("command", "edits", "lossy", "notes"), [
    ("bash -c 'echo x > f'", [("f", "x\n")], [], []),
    ("bash -lc 'cd rules; echo x > f'; echo y > g", [("rules/f", "x\n"), ("g", "y\n")], [], []),
    ("sh script.sh", [("s.yml", "s\n")], [], []),
    ("bash unknown.sh", [], ["`bash unknown.sh` runs a script whose text is unknown"], []),
    ("bash <<'E'\necho z > h\nE", [("h", "z\n")], [], []),
    ("echo 'echo p > p' | bash", [("p", "p\n")], [], []),
    ("bash -x", [], [], []),
    ("cat > f <<EOF\n$HOME\nEOF", [("f", "$HOME\n")],
     ["heredoc with an unquoted delimiter expands $ or backticks (`cat`); taken literally"], []),
    ("ls > out", [], ["output of `ls` redirected: content of out unknown"], []),
    ("ls > /tmp/out", [], [], ["output of `ls` redirected: content of /tmp/out unknown"]),
    ("echo x >> /etc/unknown", [], [], ["`echo x` appends: content of /etc/unknown unknown"]),
    ("vim rules/a.yml", [], ["`vim rules/a.yml` may change files (not replayed)"], []),
    ("patch -p1 < fix.diff", [], ["`patch -p1` may change files (not replayed)"], []),
    ("perl -pi -e 's/A/B/' rules/a.yml", [], ["`perl -pi -e s/A/B/ rules/a.yml` may change files (not replayed)"], []),
    ("perl -e 'print 1'", [], [], []),
    ("ruby -e 'File.write(\"x\", 1)'", [], [("`ruby -e 'File.write(\"x\", 1)'` runs code that may write files "
                                            "(not replayed)")], []),
    ("python3 -c 'import json; json.dump({}, f)'", [],
     ["`python3 -c 'import json; json.dump({}, f)'` runs code that may write files (not replayed)"], []),
    ("python3 w.py", [], ["`python3 w.py` runs code that may write files (not replayed)"], []),
    ("python3 other.py", [], [], ["`python3 other.py` not inspected; assumed not to change files"]),
    ("python3 - <<'P'\nprint(1)\nP", [], [], []),
    ("node -e 'fs.writeFile(1)'", [], ["`node -e 'fs.writeFile(1)'` runs code that may write files (not replayed)"], []),
    ("yq -i '.a = 1' rules/a.yml", [], ["`yq -i '.a = 1' rules/a.yml` may change files (not replayed)"], []),
    ("yq '.a' rules/a.yml", [], [], []),
    ("git checkout -- rules", [], ["`git checkout -- rules` may change files (not replayed)"], []),
    ("git status", [], [], []),
    ("awk -i inplace '{print}' rules/a.yml", [],
     ["`awk -i inplace '{print}' rules/a.yml` edits in place (not replayed)"], []),
    ("awk '{print}' rules/a.yml", [], [], []),
    ("promtool check rules rules/a.yml", [], [], []),
])
def test_shell_commands(command, edits, lossy, notes):
    assert outcome(tracker().apply("execute_bash", {"command": command})) == (edits, lossy, notes)


def test_a_sub_shell_does_not_change_the_working_directory():
    t = tracker()
    t.apply("bash", {"command": "bash -c 'cd /tmp'"})
    assert t.known.cwd == "/app/monitoring"
    t.apply("bash", {"command": "cd /tmp"})
    assert t.known.cwd == "/tmp"


def test_every_program_in_the_command_table_has_a_handler():
    assert {"cd", "echo", "printf", "cat", "tee", "rm", "mv", "cp", "touch", "sed", "apply_patch",
            "bash", "sh", "zsh", "vim", "perl", "python3", "git", "awk"} <= set(interpreter.COMMANDS)
    assert all(callable(handler) for handler in interpreter.COMMANDS.values())
