"""recorder.importers.shell: rebuild the file edits an agent made from its tool calls.

Used by the Harbor importer: a trajectory records tool calls and their output, not the
files. :class:`~recorder.importers.shell.tracker.FileTracker` keeps what is known about
every file (the task's pristine repo to start with) and turns each call into a
:class:`~recorder.importers.shell.effect.CallEffect`: the files it left with new content,
the reasons it could not be replayed exactly (``lossy``), and notes.

Understood exactly: editor tools (``write_file``/``create_file``/``Write``, OpenHands
``str_replace_editor`` create/str_replace/insert/undo_edit, ``Edit``/``MultiEdit``,
``replace_in_file``, Codex ``apply_patch``) and, in shell commands (Terminus
``bash_command`` keystrokes, ``execute_bash``, ``Bash``, ...), heredocs into ``cat``/``tee``,
``echo``/``printf``/``cat`` redirected with ``>``/``>>``, ``tee``, ``rm``, ``mv``, ``cp``,
``touch``, ``cd``, ``bash -c`` and scripts whose text is known. Lossy (replayed as well as
possible, and named): ``sed -i`` (a single ``s///`` is emulated), other in-place editors,
unquoted heredocs that expand ``$``, output of unknown commands redirected into a file,
interpreter code that writes files. Other commands are assumed not to change files.

Paths: a path with a ``monitoring`` component is in the task's repo and is keyed by its
path inside it (``rules/x.yml``, the instruction's "the repo is in monitoring/"); any
other path is keyed absolute (``/app/hello.txt``). Relative paths resolve against the
shell's working directory (``cd`` is followed; the start is ``/app``, Harbor's usual
working directory, or what the first terminal prompt shows).

Modules, in the order a call flows through them: ``tracker`` (tool calls, editor tools),
``interpreter`` (shell scripts and keystrokes, the command table), ``lexer`` (words,
quoting, heredocs, redirections, pipelines), ``builtins`` (cd, echo, printf, cat, tee, rm,
mv, cp, touch), ``sed`` (``sed -i``), ``patch`` (Codex ``apply_patch``), ``unreplayed``
(programs that may change files but are not replayed), ``files`` (what is known about each
file, path keys), ``invocation`` (what a command handler receives), ``effect`` (what a
call did).
"""
