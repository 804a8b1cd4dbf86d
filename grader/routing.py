"""Resolve Alertmanager receivers for a label set by running the real ``amtool``.

Routing is not simulated: ``amtool config routes test --config.file=F k=v ...``
(Alertmanager 0.25 ``cli/test_routing.go``) walks the configured tree
(``dispatch/route.go``) and prints the matched receivers comma-joined in tree order,
duplicates kept. Every call prints ``Warning: --config.file flag overrides the
--alertmanager.url.`` on stderr; that is not a failure.

Labels are passed as ``name="value"`` with OpenMetrics escaping, which amtool parses
with ``labels.ParseMatcher`` (``pkg/labels/parse.go``), so values with spaces, commas,
quotes or backslashes arrive intact. Receiver names containing a comma cannot be
told apart in amtool's output; Alertmanager configs practically never use them.
"""

from __future__ import annotations

import shlex
import subprocess
from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from contract.errors import ToolFailure
from grader.matchers import is_valid_matcher_name
from grader.tools import AMTOOL, without_log_lines

__all__ = [
    "RoutingError",
    "amtool_argv",
    "amtool_command",
    "check_config",
    "resolve_many",
    "resolve_receivers",
    "route_tree",
]

_WARNING_PREFIX = "Warning:"


class RoutingError(ToolFailure):
    """amtool could not resolve receivers: invalid config, bad label, amtool missing,
    failed or timed out. The message includes amtool's own error text and the
    command line to reproduce it."""


def _quote_value(value: str) -> str:
    return '"' + value.replace("\\", "\\\\").replace("\n", "\\n").replace('"', '\\"') + '"'


def amtool_argv(
    config_file: Path | str, labels: Mapping[str, str], *, amtool: str | None = None
) -> list[str]:
    """The argv list for ``amtool config routes test`` on ``labels`` (in dict order).

    Each label becomes one ``name="value"`` argument (OpenMetrics escaping: ``\\\\``,
    ``\\"``, ``\\n``). Raises :class:`RoutingError` for a label name amtool cannot
    parse (not ``[a-zA-Z_:][a-zA-Z0-9_:]*``) or a non-string value.
    """
    argv = [amtool or AMTOOL, "config", "routes", "test", f"--config.file={config_file}"]
    for name, value in labels.items():
        if not is_valid_matcher_name(name):
            raise RoutingError(f"invalid label name {name!r} (must match [a-zA-Z_:][a-zA-Z0-9_:]*)")
        if not isinstance(value, str):
            raise RoutingError(f"label {name!r}: value must be a string, got {value!r}")
        argv.append(f"{name}={_quote_value(value)}")
    return argv


def amtool_command(
    config_file: Path | str, labels: Mapping[str, str], *, amtool: str | None = None
) -> str:
    """A shell command line (``shlex.join``) a person can paste to reproduce a
    resolution, e.g. ``amtool config routes test --config.file=am.yml 'team="billing"'``.

    Shape as :func:`amtool_argv` (the program is ``amtool`` unless given, whichever binary
    grades); raises :class:`RoutingError` like it.
    """
    return shlex.join(amtool_argv(config_file, labels, amtool=amtool or "amtool"))


def _amtool_message(proc: subprocess.CompletedProcess[str]) -> str:
    """amtool's error text: stderr without the routine --config.file warning, then stdout."""
    lines = [
        ln.strip()
        for ln in (proc.stderr or "").splitlines()
        if ln.strip() and not ln.startswith(_WARNING_PREFIX)
    ]
    lines += [ln.strip() for ln in without_log_lines(proc.stdout or "").splitlines() if ln.strip()]
    text = "; ".join(lines)
    if text.startswith("amtool: error: "):
        text = text.removeprefix("amtool: error: ")
    return text or f"exit status {proc.returncode}, no output"


def _run(argv: list[str], timeout: float) -> subprocess.CompletedProcess[str]:
    try:
        return subprocess.run(
            argv,
            capture_output=True,
            text=True,
            timeout=timeout,
            stdin=subprocess.DEVNULL,
            check=False,
        )
    except FileNotFoundError:
        raise RoutingError(
            f"amtool not found: {argv[0]!r} (Debian package prometheus-alertmanager)"
        ) from None
    except subprocess.TimeoutExpired:
        raise RoutingError(f"amtool timed out after {timeout:g}s: {shlex.join(argv)}") from None
    except OSError as exc:
        raise RoutingError(f"cannot run {argv[0]!r}: {exc}") from None


def _run_routes_test(argv: list[str], config_file: Path | str, timeout: float):
    """``amtool config routes test`` run; RoutingError with amtool's message when it fails."""
    proc = _run(argv, timeout)
    if proc.returncode != 0:
        raise RoutingError(
            f"amtool failed on {config_file}: {_amtool_message(proc)} (command: {shlex.join(argv)})"
        )
    return proc


def resolve_receivers(
    config_file: Path,
    labels: dict[str, str],
    *,
    amtool: str | None = None,
    timeout: float = 10.0,
) -> list[str]:
    """Receivers an alert with ``labels`` is routed to, as ``amtool`` resolves them.

    Returns receiver names in amtool's (routing tree) order with duplicates kept, e.g.
    ``["chat-oncall", "chat-data"]``; compare as sets for grading. Runs
    ``amtool config routes test --config.file=F name="value" ...`` (Alertmanager 0.25
    ``cli/test_routing.go``); the stderr warning about ``--config.file`` is ignored.

    Raises :class:`RoutingError` with amtool's message (e.g. ``undefined receiver
    "x" used in route``) and the reproducing command if the config is missing or
    invalid, a label is invalid, amtool is missing, exits non-zero or exceeds
    ``timeout`` seconds.
    """
    argv = amtool_argv(config_file, labels, amtool=amtool)
    if not Path(config_file).is_file():
        raise RoutingError(f"alertmanager config not found: {config_file}")
    proc = _run_routes_test(argv, config_file, timeout)
    out = [ln for ln in without_log_lines(proc.stdout).splitlines() if ln.strip()]
    if len(out) != 1:
        raise RoutingError(
            f"unexpected amtool output for {config_file}: {proc.stdout!r} "
            f"(command: {shlex.join(argv)})"
        )
    return [r for r in out[0].strip().split(",") if r]


def resolve_many(
    config_file: Path,
    label_sets: Sequence[dict[str, str]],
    *,
    max_workers: int = 4,
    amtool: str | None = None,
    timeout: float = 10.0,
) -> list[list[str]]:
    """:func:`resolve_receivers` for each label set, run in a thread pool of
    ``max_workers`` amtool processes. Results keep the order of ``label_sets``.

    Raises the first :class:`RoutingError` (in input order) if any resolution fails.
    """
    if not label_sets:
        return []
    workers = max(1, min(max_workers, len(label_sets)))
    with ThreadPoolExecutor(max_workers=workers) as pool:
        futures = [
            pool.submit(resolve_receivers, config_file, ls, amtool=amtool, timeout=timeout)
            for ls in label_sets
        ]
        return [f.result() for f in futures]


def check_config(
    config_file: Path | str, *, amtool: str | None = None, timeout: float = 10.0
) -> str | None:
    """Validate an Alertmanager config with ``amtool check-config F``.

    Returns ``None`` if amtool accepts it, else amtool's error text, e.g.
    ``FAILED: undefined receiver "nope" used in route`` (Alertmanager 0.25
    ``cli/check_config.go``; templates referenced by the config are loaded too).
    Raises :class:`RoutingError` only if amtool itself cannot be run or times out.
    """
    argv = [amtool or AMTOOL, "check-config", str(config_file)]
    proc = _run(argv, timeout)
    if proc.returncode == 0:
        return None
    details = []
    for ln in without_log_lines(proc.stdout or "").splitlines():
        if "FAILED:" in ln:
            details.append("FAILED:" + ln.split("FAILED:", 1)[1].rstrip())
        elif details and ln.strip():
            details.append(ln.strip())  # continuation lines of a yaml error
    return "; ".join(details) if details else _amtool_message(proc)


def route_tree(
    config_file: Path,
    labels: dict[str, str],
    *,
    amtool: str | None = None,
    timeout: float = 10.0,
) -> list[str]:
    """The matching routes amtool prints for ``labels`` with ``config routes test --tree``
    (Alertmanager 0.25 ``cli/test_routing.go``): the tree lines under ``Matching routes:``,
    e.g. ``["└── default-route", "    ├── {notify=\"chat\"}  receiver: chat-oncall"]``
    (the ``.`` root line left out), in amtool's order.

    Raises :class:`RoutingError` like :func:`resolve_receivers`.
    """
    argv = amtool_argv(config_file, labels, amtool=amtool)
    argv.insert(4, "--tree")
    proc = _run_routes_test(argv, config_file, timeout)
    lines = without_log_lines(proc.stdout).splitlines()
    if "Matching routes:" not in [ln.strip() for ln in lines]:
        raise RoutingError(f"unexpected amtool --tree output: {proc.stdout!r}")
    start = [ln.strip() for ln in lines].index("Matching routes:") + 1
    tree = []
    for line in lines[start:]:
        if not line.strip():
            break
        if line.strip() != ".":
            tree.append(line.rstrip())
    return tree
