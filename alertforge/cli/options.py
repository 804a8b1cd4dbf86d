"""Option groups and argument types that several commands share, each written once."""

from __future__ import annotations

import argparse
import os
from pathlib import Path
from typing import Any

from contract.errors import BadInput

DEFAULT_JOBS = max(1, (os.cpu_count() or 2) // 2)
"""Worker processes by default: each grade already runs two promtool processes at once, so
one worker per two cores (on 2 cores -j 1 records 1.67 graded steps/s, -j 2 only 1.39)."""

MAX_PER_TIER = 1000
"""Upper bound of ``generate --per-tier`` (15,000 tasks)."""

LLM_OPTIONS = ("base_url", "model", "api_key_env", "price_input", "price_output", "temperature",
               "max_tokens", "timeout", "max_retries")
"""The ``--policy llm`` settings, as argparse destinations (see :func:`add_llm_options`)."""


def positive(text: str) -> int:
    """An integer >= 1 (argparse type)."""
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError("must be >= 1")
    return value


def count(text: str) -> int:
    """An integer >= 0 (argparse type)."""
    value = int(text)
    if value < 0:
        raise argparse.ArgumentTypeError("must be >= 0")
    return value


def per_tier(text: str) -> int:
    """An integer in 1..:data:`MAX_PER_TIER` (argparse type)."""
    value = positive(text)
    if value > MAX_PER_TIER:
        raise argparse.ArgumentTypeError(f"must be <= {MAX_PER_TIER}")
    return value


def seed(text: str) -> int:
    """A seed: an integer in [0, 2**63) (argparse type)."""
    value = int(text)
    if not 0 <= value < 2**63:
        raise argparse.ArgumentTypeError("seed must be >= 0 and < 2**63")
    return value


def add_tasks_option(parser: argparse.ArgumentParser, *, repeatable: bool = False,
                     help: str = "tasks folder (default: bundled tasks/)") -> None:
    """``--tasks DIR``: where task ids are looked up; ``repeatable`` for a list of roots."""
    if repeatable:
        parser.add_argument("--tasks", action="append", metavar="DIR", help=help)
    else:
        parser.add_argument("--tasks", help=help)


def add_jobs_option(parser: argparse.ArgumentParser) -> None:
    """``-j/--jobs N``: worker processes (default :data:`DEFAULT_JOBS`)."""
    parser.add_argument("-j", "--jobs", type=positive, default=DEFAULT_JOBS,
                        help=f"worker processes (default {DEFAULT_JOBS}: one per two cores)")


def add_engine_option(parser: argparse.ArgumentParser) -> None:
    """``--ray ADDRESS``: run the grades on a Ray cluster (default ``$RAY_ADDRESS``)."""
    parser.add_argument("--ray", metavar="ADDRESS",
                        help="grade on the Ray cluster whose head is at ADDRESS (HOST:PORT; "
                             "default $RAY_ADDRESS); without either, local worker processes (-j)")


def engine(args: argparse.Namespace):
    """The engine ``--ray`` / ``$RAY_ADDRESS`` asks for (:func:`engine.engine_for`).

    Raises:
        contract.errors.ClusterFailure: the cluster cannot be reached or fails its check.
    """
    from engine import engine_for

    return engine_for(getattr(args, "ray", None))


def print_engine_summary(chosen) -> None:
    """The engine's closing line (grades, workers, grades per second) on stderr."""
    import sys

    print(chosen.summary(), file=sys.stderr)


def add_run_options(parser: argparse.ArgumentParser) -> None:
    """The options of every command that records one run: seed, out, fresh, step budget."""
    parser.add_argument("--seed", type=seed, default=0)
    parser.add_argument("--out", default="runs", help="folder the run folders go into (default: runs)")
    parser.add_argument("--fresh", action="store_true", help="discard a previous run of the same id")
    parser.add_argument("--max-steps", type=int, default=60, help="agent steps at most")


def add_llm_options(parser: argparse.ArgumentParser) -> None:
    """The ``--policy llm`` options: any OpenAI-compatible chat-completions endpoint."""
    llm = parser.add_argument_group("policy llm (any OpenAI-compatible chat-completions endpoint)")
    llm.add_argument("--base-url", help="endpoint, e.g. http://127.0.0.1:8000/v1 "
                     "(default: $OPENAI_BASE_URL)")
    llm.add_argument("--model", help="model name (default: $ALERTFORGE_MODEL)")
    llm.add_argument("--api-key-env", help="variable holding the API key (default: OPENAI_API_KEY)")
    llm.add_argument("--price-input", type=float, help="USD per million prompt tokens")
    llm.add_argument("--price-output", type=float, help="USD per million completion tokens")
    llm.add_argument("--temperature", type=float)
    llm.add_argument("--max-tokens", type=int, help="completion tokens per model turn at most")
    llm.add_argument("--timeout", type=float, metavar="SECONDS",
                     help="wait this long for each reply (default 120; a slow local model "
                     "on a shared CPU may need more)")
    llm.add_argument("--max-retries", type=int, metavar="N",
                     help="ask again this many times after a timeout or a 5xx (default 2; 0 "
                     "for a one-request-at-a-time local server, which would queue the retry "
                     "behind the abandoned request)")


def llm_options(args: argparse.Namespace, *extra: str) -> dict[str, Any]:
    """The LLM settings given on the command line (plus the ``extra`` destinations), as the
    ``options`` mapping the agents take; options not given are left out."""
    return {key: getattr(args, key) for key in (*LLM_OPTIONS, *extra)
            if getattr(args, key, None) is not None}


def add_redaction_options(parser: argparse.ArgumentParser, what: str) -> None:
    """``--redact/--no-redact`` and ``--redact-patterns FILE``; ``what`` says where secrets
    are masked (shown in the help)."""
    parser.add_argument("--redact", action=argparse.BooleanOptionalAction, default=True,
                        help=f"mask secrets {what} (default: on)")
    parser.add_argument("--redact-patterns", metavar="FILE", help="extra secret regexes, one a line")


def redactor(args: argparse.Namespace):
    """The Redactor the redaction options ask for (built-in patterns plus
    ``--redact-patterns FILE``), or None with ``--no-redact``."""
    if args.redact is False:
        return None
    from exporter.redact import Redactor

    return Redactor.with_extra(Path(args.redact_patterns) if args.redact_patterns else None)


def task_index(args: argparse.Namespace):
    """The task roots a command reads tasks from: its ``--tasks`` folders, then the bundled tasks/."""
    from contract.task_roots import TaskIndex

    roots = args.tasks if isinstance(args.tasks, list) else ([args.tasks] if args.tasks else [])
    return TaskIndex([Path(root) for root in roots])


def csv(values: list[str] | None, option: str = "option") -> list[str] | None:
    """Repeatable comma-separated options, flattened (None when not given).

    Raises:
        BadInput: the option was given but names nothing (``--only ,``).
    """
    if not values:
        return None
    parts = [part.strip() for value in values for part in value.split(",") if part.strip()]
    if not parts:
        raise BadInput(option, "names nothing")
    return parts


def command_name() -> str:
    """How the reader runs this CLI again, for the "to see it: ..." hints: ``alertforge`` when
    that name on PATH is the program running, else the program's path as it was typed (e.g.
    ``.venv/bin/alertforge``, the README's form); ``alertforge`` under ``python -m``."""
    import shutil
    import sys

    typed = sys.argv[0] if sys.argv else ""
    if os.path.basename(typed) != "alertforge":
        return "alertforge"
    on_path = shutil.which("alertforge")
    try:
        if on_path is not None and os.path.samefile(on_path, typed):
            return "alertforge"
    except OSError:
        pass
    return typed
