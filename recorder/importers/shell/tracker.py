"""The file tracker the importer calls: one tool call in, its :class:`CallEffect` out.

Dispatches on the tool's name: shell tools and terminal keystrokes go to the
:class:`~recorder.importers.shell.interpreter.Shell`, editor tools (write, str_replace,
insert, undo_edit, MultiEdit, apply_patch) are replayed here, read-only tools change
nothing, and an unknown tool is noted (lossy when it carries a path and content).
"""

from __future__ import annotations

import re
import shlex

from recorder.importers.shell.effect import CallEffect, FileEdit, ToolRefused, UnknownContent
from recorder.importers.shell.files import DEFAULT_CWD, KnownFiles
from recorder.importers.shell.interpreter import Shell
from recorder.importers.shell.patch import patch_files
from recorder.importers.shell.unreplayed import WRITES_FILES

SHELL_TOOLS = {"bash_command", "execute_bash", "bash", "shell", "run_shell_command",
               "exec_command", "terminal", "run_command", "execute_command", "run_terminal_cmd",
               "local_shell"}
WRITE_TOOLS = {"write_file", "create_file", "write", "write_to_file"}
EDIT_TOOLS = {"str_replace_editor", "str_replace_based_edit_tool", "file_editor", "edit_file",
              "edit", "replace_in_file", "str_replace", "multiedit", "apply_patch"}
EDITOR_COMMAND_TOOLS = ("str_replace_editor", "file_editor", "str_replace_based_edit_tool")
"""Editor tools whose ``command`` argument says what they do (OpenHands, Anthropic)."""
READ_ONLY_TOOLS = {"read_file", "list_files", "view", "read", "glob", "grep", "ls", "think",
                   "finish", "task_tracker", "todowrite", "todoread", "submit", "run_checks",
                   "route_test", "webfetch", "websearch", "mark_task_complete", "task"}
_PROMPT = re.compile(r"[\w.-]+@[\w.-]+:(/[^#$\s]*)[#$] ")


def prompt_cwd(observation: str) -> str | None:
    """The working directory a terminal prompt shows (``root@host:/app#``), if any."""
    match = _PROMPT.search(observation or "")
    return match.group(1) if match else None


def _first(args: dict, *names: str):
    for name in names:
        if name in args:
            return args[name]
    return None


def _path_of(args: dict) -> str | None:
    value = _first(args, "path", "file_path", "filename", "file", "target_file")
    return value if isinstance(value, str) and value else None


def _content_of(args: dict) -> str | None:
    value = _first(args, "content", "file_text", "text", "contents", "code_edit")
    return value if isinstance(value, str) else None


def replace_text(text: str, old, new, every: bool, key: str) -> str:
    """``text`` with ``old`` replaced by ``new`` (every occurrence, or the only one).

    Raises:
        UnknownContent: no old text given.
        ToolRefused: ``old`` does not occur, or occurs several times without ``every``
            (the editor tools refuse such an edit).
    """
    if not isinstance(old, str) or not old:
        raise UnknownContent(f"edit of {key} without old text")
    count = text.count(old)
    if count == 0 or (count > 1 and not every):
        raise ToolRefused(f"old text occurs {count} times in {key}: the tool refused, nothing changed")
    return text.replace(old, str(new or "")) if every else text.replace(old, str(new or ""), 1)


class FileTracker:
    """What is known about the agent's files, updated one tool call at a time.

    ``repo_files`` maps repo-relative paths to the pristine repo's text (empty for an
    unknown task); ``repo_known`` says whether a repo file missing from it is known not
    to exist; ``cwd`` is the shell's starting directory. :meth:`apply` returns a call's
    :class:`CallEffect`; ``known`` holds the files, ``shell`` the pending terminal input.
    """

    def __init__(self, repo_files: dict[str, str] | None = None, *, repo_known: bool = False,
                 cwd: str = DEFAULT_CWD):
        self.known = KnownFiles(repo_files, repo_known=repo_known, cwd=cwd)
        self.shell = Shell(self.known)

    def apply(self, name: str, arguments: dict) -> CallEffect:
        """The effect of one tool call (``name`` as the agent called it)."""
        effect = CallEffect()
        lowered = name.lower()
        args = arguments if isinstance(arguments, dict) else {}
        try:
            if lowered == "bash_command" or "keystrokes" in args:
                self.shell.keystrokes(effect, args.get("keystrokes"))
            elif lowered in SHELL_TOOLS:
                self._shell_call(effect, args)
            elif lowered == "execute_ipython_cell":
                code = str(args.get("code") or "")
                if WRITES_FILES.search(code):
                    effect.lossy.append("IPython cell code may write files (not replayed)")
            elif lowered in WRITE_TOOLS:
                self._write_tool(effect, args)
            elif lowered in EDIT_TOOLS:
                self._edit_tool(effect, lowered, args)
            elif lowered in READ_ONLY_TOOLS:
                pass
            elif _path_of(args) and _content_of(args) is not None:
                effect.lossy.append(f"unknown tool {name!r} with a path and content: not replayed")
            else:
                effect.notes.append(f"unknown tool {name!r}: assumed not to change files")
        except ToolRefused as err:
            effect.notes.append(f"{name}: {err}")
        except UnknownContent as err:
            effect.lossy.append(f"{name}: {err}")
        return effect

    def _shell_call(self, effect: CallEffect, args: dict) -> None:
        command = _first(args, "command", "cmd", "script", "code")
        if isinstance(command, list):
            if len(command) >= 3 and command[0].split("/")[-1] in ("bash", "sh", "zsh") \
                    and command[1] in ("-c", "-lc"):
                command = command[2]
            else:
                command = shlex.join(str(c) for c in command)
        if not isinstance(command, str):
            return
        self.shell.run_script(effect, command, final=True)

    def _write_tool(self, effect: CallEffect, args: dict) -> None:
        path, content = _path_of(args), _content_of(args)
        if not path or content is None:
            effect.notes.append("write without a path or content: nothing written")
            return
        self.known.set(effect, self.known.key(path), content)

    def _edit_tool(self, effect: CallEffect, name: str, args: dict) -> None:
        if name == "apply_patch":
            patch_files(self.known, effect, str(args.get("input") or args.get("patch") or ""))
            return
        command = args.get("command") if name in EDITOR_COMMAND_TOOLS else None
        path = _path_of(args)
        if not path:
            effect.notes.append("edit without a path: nothing changed")
            return
        key = self.known.key(path)
        if command in ("view", None) and name in EDITOR_COMMAND_TOOLS:
            return
        if command == "create":
            self.known.set(effect, key, str(args.get("file_text") or ""))
        elif command == "insert":
            self._insert(effect, key, args)
        elif command == "undo_edit":
            self._undo(effect, key)
        elif name == "multiedit":
            self._multi_edit(effect, key, args)
        else:
            old = _first(args, "old_str", "old_string", "old")
            new = _first(args, "new_str", "new_string", "new")
            every = args.get("replace_all") is True or args.get("all") is True
            self.known.set(effect, key, replace_text(self.known.read(key), old, new or "", every, key))

    def _insert(self, effect: CallEffect, key: str, args: dict) -> None:
        """``insert``: ``new_str`` after line ``insert_line`` (0: at the top)."""
        lines = self.known.read(key).split("\n")
        try:
            at = int(args.get("insert_line") or 0)
        except (TypeError, ValueError):
            raise UnknownContent(f"insert_line {args.get('insert_line')!r} is not a line number") from None
        new = str(args.get("new_str") or "")
        trailing = lines[-1] == ""
        body = lines[:-1] if trailing else lines
        body[at:at] = new.split("\n")
        self.known.set(effect, key, "\n".join(body + ([""] if trailing else [])))

    def _undo(self, effect: CallEffect, key: str) -> None:
        """``undo_edit``: the file's content before its last edit."""
        previous = self.known.history.get(key) or []
        if not previous:
            raise UnknownContent(f"undo_edit with no recorded edit of {key}")
        before = previous.pop()
        self.known.files[key] = before
        if before is None:
            self.known.files.pop(key, None)
        effect.edits.append(FileEdit(key, before))

    def _multi_edit(self, effect: CallEffect, key: str, args: dict) -> None:
        """Claude Code's MultiEdit: every ``{old_string, new_string, replace_all}`` in turn."""
        text = self.known.read(key)
        edits = args.get("edits")
        if not isinstance(edits, list) or not all(isinstance(e, dict) for e in edits):
            raise UnknownContent("MultiEdit edits is not a list of {old_string, new_string} objects")
        for edit in edits:
            text = replace_text(text, edit.get("old_string"), edit.get("new_string"),
                                edit.get("replace_all") is True, key)
        self.known.set(effect, key, text)
