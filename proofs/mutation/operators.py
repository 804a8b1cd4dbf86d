"""What a mutation operator is, and the mutants operators yield from a task's oracle workspace.

An operator is a field mistake (a widened matcher, a dropped ``for``, a doubled threshold)
applied to the oracle's solution over the pristine repo. It declares the requirement kinds
it targets and the check families that must see it; for every applicable site (a
requirement, or a part of one) it yields a full set of workspace files. A mutant whose files
parse to the same YAML as the oracle's is dropped: no operator ever yields a no-op. The
table of every operator is :func:`proofs.mutation.table.operator_table` (the operator
families import this module; this module imports none of them).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass

import yaml

from recorder.reference.context import Context, Files, NotApplicable, load_doc

Site = tuple[str, Files, str]
"""What an operator yields: ``(site, workspace files, targeted requirement id)``."""

Apply = Callable[[Files, Context, dict], Iterator[Site]]


@dataclass(frozen=True)
class Operator:
    """One mutation operator.

    ``name`` (kebab-case, unique), ``kinds``: the requirement kinds whose requirements are
    its sites, ``families``: the check families (docs/formats.md) that must fail on its
    mutants, ``apply(files, ctx, req)``: yields ``(site, files, target id)`` for each site
    within ``req`` (raising or yielding nothing when it does not apply), ``summary``: one line
    naming the mistake.
    """

    name: str
    kinds: tuple[str, ...]
    families: tuple[str, ...]
    apply: Apply
    summary: str


@dataclass(frozen=True)
class Mutant:
    """One mutant: ``name`` is ``<operator>@<site>``; ``files`` the whole workspace
    (``{path relative to monitoring/: text}``); ``target`` the requirement id whose score
    must drop; ``families`` the operator's."""

    name: str
    operator: str
    site: str
    target: str
    families: tuple[str, ...]
    files: Files


def oracle_workspace(ctx: Context) -> Files:
    """The oracle's workspace: the pristine repo with the solution's files written over it."""
    return {**ctx.pristine, **ctx.solution}


def _parsed(text: str | None):
    if text is None:
        return ("missing", None)
    try:
        return ("doc", load_doc(text))
    except yaml.YAMLError:
        return ("broken", text)


def same_config(a: Files, b: Files) -> bool:
    """True when ``a`` and ``b`` hold the same files with the same parsed YAML (or text)."""
    return all(_parsed(a.get(p)) == _parsed(b.get(p)) for p in {*a, *b})


def mutants(ctx: Context, operators: list[Operator]) -> tuple[list[Mutant], dict[str, str]]:
    """The mutants of ``operators`` on the task, and for each operator with none the reason.

    Sites are the spec's requirements of the operator's kinds, in spec order; a mutant equal
    to the oracle (as parsed YAML) is dropped, and so is a second mutant of one operator with
    the same files as an earlier one.
    """
    base = oracle_workspace(ctx)
    found: list[Mutant] = []
    why: dict[str, str] = {}
    for op in operators:
        reasons: list[str] = []
        mine: list[Mutant] = []
        for req in ctx.requirements(*op.kinds):
            try:
                for site, files, target in op.apply(dict(base), ctx, req):
                    if same_config(files, base):
                        reasons.append(f"{site}: would change nothing")
                    elif not any(same_config(files, m.files) for m in mine):
                        mine.append(Mutant(f"{op.name}@{site}", op.name, site, target, op.families, files))
            except NotApplicable as err:
                text = str(err)  # some name their requirement already: never "R1: R1: ..."
                reasons.append(text if text.startswith(f"{req['id']}") else f"{req['id']}: {text}")
        if not ctx.requirements(*op.kinds):
            reasons.append(f"the task has no {'/'.join(op.kinds)} requirement")
        found += mine
        if not mine:
            why[op.name] = "; ".join(reasons) or "no site"
    return found, why
