"""Evidence and Outcome: what every probe reads from one grading pass, and what it returns."""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

from grader.grading_pass import GradingPass


@dataclass(frozen=True)
class Evidence:
    """What the probes of one grading pass read, gathered once before any probe runs.

    ``rules``: every rule (dict) of the loadable rule files, in file order; ``alert_names``:
    their ``alert`` names, repeats kept; ``alertmanager``: the parsed alertmanager.yml, None
    when amtool rejects it; ``promql``: :func:`grader.promql_replay.replay_promql_checks`;
    ``routes``: check id -> receivers amtool resolved (absent when not resolved);
    ``inhibit_rules`` / ``inhibit_error``: :func:`grader.inhibition.inhibit_rules_of` or why it
    failed; ``pristine_groups``: the pristine repo's rule groups by name;
    ``inhibit_semantics``: the simulator's semantics for the machine's Alertmanager
    (``"0.25"`` / ``"0.30"``, :func:`grader.tools.amtool_inhibition`).
    """

    grading: GradingPass
    catalog: dict
    rules: list[dict]
    alert_names: list[str]
    alertmanager: dict | None
    promql: dict[str, dict]
    routes: dict[str, list[str]]
    inhibit_rules: list[dict]
    inhibit_error: str | None
    pristine_groups: dict
    inhibit_semantics: str = "0.25"


class Outcome(NamedTuple):
    """One check's result: ``passed`` (None: not applicable), ``detail`` (expected vs got in
    words, empty when passed), ``score`` (a partial score in [0, 1] for checks that have one,
    else None), ``reproduce`` (a command or file that shows it by hand) and, for promql
    checks, ``variant_pass``: replay variant -> 1.0 passed / 0.0 failed."""

    passed: bool | None
    detail: str = ""
    score: float | None = None
    reproduce: str = ""
    variant_pass: dict[str, float] | None = None
