"""The ``alertforge`` command: one subcommand per pipeline stage of 3amBench Replay.

Each command group's module (corpus, recording, imports, site) holds its parsers beside
their handlers; ``exit_codes`` maps every error kind to an exit code in one table. Nothing
imports this package: it is the top floor.
"""

from __future__ import annotations

import argparse
import gc
import sys
from typing import NoReturn

from alertforge.cli import corpus, imports, mutation, recording, site, view
from alertforge.cli.exit_codes import HANDLED, report
from alertforge.cli.terminal import escaped_output
from contract.version import __version__

COMMANDS = (
    corpus.add_grade,
    recording.add_record,
    imports.add_import_episodes,
    recording.add_record_reference,
    site.add_export,
    site.add_publish,
    site.add_serve,
    view.add_view,
    site.add_demo,
    corpus.add_gate,
    imports.add_import_harbor,
    imports.add_regrade,
    recording.add_serve_openenv,
    recording.add_record_openenv,
    corpus.add_generate,
    mutation.add_mutate,
)
"""Each adds one subcommand (its parser, with ``func`` set to its handler), in help order."""


DESCRIPTION = ("3amBench Replay: grade, record, import, export and publish runs on an alerting-as-code "
               "benchmark; one command per pipeline stage.")
"""The top-level --help's description (plain text: argparse prints it as written)."""


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of every subcommand."""
    parser = argparse.ArgumentParser(
        prog="alertforge", description=DESCRIPTION,
        epilog="Run 'alertforge COMMAND --help' for a command's options; README.md walks through them.")
    parser.add_argument("--version", action="version", version=f"alertforge {__version__}")
    sub = parser.add_subparsers(dest="command", required=True)
    for add in COMMANDS:
        add(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    """Entry point of the console script; returns the exit code (see ``exit_codes``)."""
    with escaped_output():
        args = build_parser().parse_args(argv)
        try:
            return args.func(args)
        except HANDLED as err:
            return report(err, getattr(args, "hints", None))


def run() -> NoReturn:
    """The console script and ``python -m alertforge.cli``: :func:`main`, then exit with its
    code. The heap is frozen first (``gc.freeze``) so the interpreter's last collection skips
    it: 50 ms of an incremental export's 0.8 s went to collecting objects the ending process
    frees anyway. (Not in :func:`main`, which tests call in their own process.)"""
    code = main()
    gc.freeze()
    sys.exit(code)
