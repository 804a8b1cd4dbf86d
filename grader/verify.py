"""The Harbor verifier's entry point: grade one workspace against one task folder, print JSON.

``python -m grader.verify TASK_DIR --workspace DIR`` prints the whole GradeResult as JSON on
stdout (the bytes ``alertforge grade --json`` prints). It is what a task's ``tests/test.sh``
runs inside the verifier image, where only the verifier wheel (grader + contract, built by
``scripts/build-verifier.py``) is installed, so it imports nothing outside those packages.

Exit codes follow the CLI's (alertforge/cli/exit_codes.py): 0 graded, 2 bad input (a task
folder without its checks, a workspace that is not a folder) or a tool failure (promtool or
amtool missing or crashing), with one line on stderr naming the file and the problem.
"""

from __future__ import annotations

import argparse
import sys

from contract.errors import BadInput, ToolFailure
from contract.files import dump_json


def main(argv: list[str] | None = None) -> int:
    """Grade ``TASK_DIR`` (a task folder: task.toml, tests/, environment/) and print the result.

    Returns the exit code (0, or 2 on :class:`BadInput` / :class:`ToolFailure`).
    """
    parser = argparse.ArgumentParser(prog="python -m grader.verify", description=__doc__.splitlines()[0])
    parser.add_argument("task", help="task folder (holds task.toml and tests/checks.json)")
    parser.add_argument("--workspace", required=True, help="the monitoring repo to grade")
    args = parser.parse_args(argv)
    from contract.base import dump
    from grader.grade import grade_result

    try:
        result = grade_result(args.task, args.workspace)
    except BadInput as err:
        print(f"3ambench verifier: {err.path}: {err.problem}", file=sys.stderr)
        return 2
    except ToolFailure as err:
        print(f"3ambench verifier: grader error: {err}", file=sys.stderr)
        return 2
    sys.stdout.write(dump_json(dump(result)).decode())
    return 0


if __name__ == "__main__":
    sys.exit(main())
