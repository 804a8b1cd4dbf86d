"""What the mutant and adversary policies know about a task, and how they find rules in its files.

A :class:`Context` is built from the task's world spec (``tests/spec.json``), its check
catalog (``tests/checks.json``, optional), the oracle's files (``solution/monitoring``) and
the pristine repo (``environment/monitoring``). Nothing here assumes a workflow or a file
name: a rule is found by name in whatever rule file holds it, the oracle's copy first.

Files are ``{path relative to monitoring/: text}``. Rule files are the ``.yml``/``.yaml``
files under ``rules/`` (plain ``groups:`` files or PrometheusRule manifests).
"""

from __future__ import annotations

import copy
import functools
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import yaml

from contract.errors import BadInput
from contract.files import read_json

Files = dict[str, str]
AM = "alertmanager/alertmanager.yml"
MANIFEST = "__manifest__"
_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


class NotApplicable(Exception):
    """A mutation needs something the task does not have (a route requirement, a rule with a
    ``for``, a service with more than one pod, ...). The message says what is missing."""


@functools.lru_cache(maxsize=512)
def _parse(text: str):
    return yaml.load(text, Loader=_LOADER)


def load_doc(text: str):
    """Parse a YAML file; a PrometheusRule manifest is seen through its spec (``doc["groups"]``
    is the manifest's ``spec.groups`` list itself, so edits land in the manifest).

    Raises yaml.YAMLError for text that does not parse.
    """
    doc = copy.deepcopy(_parse(text))
    if isinstance(doc, dict) and doc.get("kind") == "PrometheusRule":
        return {"groups": doc["spec"]["groups"], MANIFEST: doc}
    return doc


def dump_doc(doc) -> str:
    """YAML text of a document from :func:`load_doc` (the whole manifest for a manifest)."""
    if isinstance(doc, dict) and MANIFEST in doc:
        doc = doc[MANIFEST]
    return yaml.safe_dump(doc, sort_keys=False, default_flow_style=False, width=200)


def is_rule_file(path: str) -> bool:
    """True for a rule file the grader reads: ``rules/**/*.yml`` or ``*.yaml``."""
    return path.startswith("rules/") and path.endswith((".yml", ".yaml"))


def rule_name(rule: dict) -> str | None:
    """The alert or record name of a rule dict."""
    return rule.get("alert") or rule.get("record")


def groups_of(doc) -> list[dict]:
    """The rule groups of a loaded rule file (empty for anything else)."""
    groups = doc.get("groups") if isinstance(doc, dict) else None
    return [g for g in groups or [] if isinstance(g, dict)]


def iter_rules(doc) -> Iterator[tuple[dict, dict]]:
    """``(group, rule)`` for every rule dict of a loaded rule file."""
    for group in groups_of(doc):
        for rule in group.get("rules") or []:
            if isinstance(rule, dict):
                yield group, rule


def read_tree(root: Path) -> Files:
    """Every file under ``root`` as ``{posix relative path: text}``, sorted by path."""
    return {p.relative_to(root).as_posix(): p.read_text(encoding="utf-8")
            for p in sorted(root.rglob("*")) if p.is_file()}


@dataclass
class Context:
    """A task as the mutations see it.

    ``primary`` is the requirement the alert-level mutations target: the first ``alert``
    requirement, else the first ``repair`` (None when the task has neither). ``route``,
    ``inhibit`` and ``recording`` are the first requirement of that kind or None.
    ``reserved`` lists the input series the replay feeds (``ALERTS`` excluded);
    ``preserved_rules`` the ``(file, name)`` of rules a preservation check guards, in catalog
    order; ``preserved_receivers`` the receiver names a preservation check guards.
    """

    spec: dict
    solution: Files
    pristine: Files
    primary: dict | None = None
    route: dict | None = None
    inhibit: dict | None = None
    recording: dict | None = None
    reserved: list[str] = field(default_factory=list)
    preserved_rules: list[tuple[str, str]] = field(default_factory=list)
    preserved_receivers: set[str] = field(default_factory=set)

    def requirements(self, *kinds: str) -> list[dict]:
        """The spec's requirements of the given kinds, in spec order."""
        return [r for r in self.spec.get("requirements", []) if r.get("kind") in kinds]

    def service(self, name: str) -> dict:
        """The spec's service called ``name`` (empty dict when unknown)."""
        return next((s for s in self.spec.get("services", []) if s.get("name") == name), {})

    def named(self) -> set[str]:
        """Every rule name a requirement names: alerts, records, inhibition sources and targets."""
        names: set[str] = set()
        for req in self.spec.get("requirements", []):
            names.update(str(v) for v in [req.get("alert"), req.get("source")] if v)
            names.update(str(v) for v in (req.get("records") or {}).values())
            names.update(str(v) for v in req.get("targets") or [])
        return names

    def need(self, role: str) -> dict:
        """The ``primary``/``route``/``inhibit``/``recording`` requirement (NotApplicable if none)."""
        req = getattr(self, role)
        if req is None:
            what = "alert or repair" if role == "primary" else role
            raise NotApplicable(f"the task has no {what} requirement")
        return req


def _first(reqs: list[dict], *kinds: str) -> dict | None:
    for kind in kinds:
        for req in reqs:
            if req.get("kind") == kind:
                return req
    return None


def build_context(spec: dict, solution: Files, pristine: Files, catalog: dict | None = None) -> Context:
    """A :class:`Context` from the spec, the oracle's and the pristine files, and the catalog.

    Without a catalog the reserved inputs come from the spec (SLI family series and ``up``)
    and the preserved rules are the pristine rules no requirement names.
    Raises KeyError/TypeError only for a spec without a ``requirements`` list.
    """
    reqs = list(spec["requirements"])
    ctx = Context(spec=spec, solution=dict(solution), pristine=dict(pristine),
                  primary=_first(reqs, "alert", "repair"), route=_first(reqs, "route"),
                  inhibit=_first(reqs, "inhibit"), recording=_first(reqs, "recording"))
    _take_catalog(ctx, (catalog or {}).get("checks", []))
    if catalog is None:
        ctx.reserved = _spec_inputs(spec)
        named = ctx.named()
        ctx.preserved_rules = [(path, rule_name(rule)) for path, text in sorted(pristine.items())
                               if is_rule_file(path) for _, rule in iter_rules(load_doc(text))
                               if rule_name(rule) and rule_name(rule) not in named]
        am = load_doc(pristine[AM]) if AM in pristine else None
        ctx.preserved_receivers = {r.get("name") for r in (am or {}).get("receivers") or []}
    return ctx


def _take_catalog(ctx: Context, checks: list[dict]) -> None:
    """Set the context's reserved inputs (the ``T.reserved-series`` check's names but ALERTS),
    preserved rules and preserved receivers from the catalog's checks."""
    for check in checks:
        probe, cid = check.get("probe") or {}, str(check.get("id"))
        if cid == "T.reserved-series":
            ctx.reserved = [n for n in probe.get("names", []) if not n.startswith("ALERTS")]
        elif cid.startswith("P.rule.") and isinstance(probe.get("item"), dict):
            ctx.preserved_rules.append((probe.get("file", ""), rule_name(probe["item"]) or ""))
        elif cid.startswith("P.receiver.") and isinstance(probe.get("item"), dict):
            ctx.preserved_receivers.add(str(probe["item"].get("name")))


def _spec_inputs(spec: dict) -> list[str]:
    """The input series the spec's SLI families read (a histogram's ``_bucket`` and
    ``_count``), and ``up``; sorted."""
    names = {"up"}
    for family in (spec.get("sli_families") or {}).values():
        if family.get("histogram"):
            names |= {f"{family['metric']}_bucket", f"{family['metric']}_count"}
        elif family.get("metric"):
            names.add(family["metric"])
    return sorted(names)


def context_for_task(task_dir: Path) -> Context:
    """The :class:`Context` of a task folder (BadInput when it has no solution/monitoring)."""
    solution_root = task_dir / "solution" / "monitoring"
    if not solution_root.is_dir():
        raise BadInput(solution_root, "task has no solution/monitoring folder (the oracle needs it)")
    catalog_path = task_dir / "tests" / "checks.json"
    spec_path = task_dir / "tests" / "spec.json"
    catalog = read_json(catalog_path) if catalog_path.is_file() else None
    spec = read_json(spec_path)
    if not isinstance(spec, dict) or not isinstance(spec.get("requirements"), list):
        raise BadInput(spec_path, "not a task spec (expected an object with a requirements list)")
    if catalog is not None and not (isinstance(catalog, dict) and isinstance(catalog.get("checks"), list)):
        raise BadInput(catalog_path, "not a check catalog (expected an object with a checks list)")
    try:
        return build_context(spec, read_tree(solution_root),
                             read_tree(task_dir / "environment" / "monitoring"), catalog)
    except (KeyError, TypeError, AttributeError) as err:
        raise BadInput(spec_path, f"a requirement or check has an unexpected shape ({err!r})") from None


# ---- finding and editing rules wherever they live ---------------------------------------

def text_of(files: Files, ctx: Context, path: str) -> str:
    """The current text of ``path``: from ``files``, else the pristine copy (KeyError if neither)."""
    return files[path] if path in files else ctx.pristine[path]


def _defines(text: str, name: str) -> bool:
    return any(rule_name(rule) == name for _, rule in iter_rules(load_doc(text)))


def files_with(files: Files, ctx: Context, name: str) -> list[str]:
    """Rule files defining a rule called ``name``: those in ``files`` if any do, else pristine ones."""
    found = [p for p in sorted(files) if is_rule_file(p) and _defines(files[p], name)]
    return found or [p for p in sorted(ctx.pristine)
                     if is_rule_file(p) and p not in files and _defines(ctx.pristine[p], name)]


def find_rule(files: Files, ctx: Context, name: str) -> tuple[str, dict, dict]:
    """``(path, group, rule)`` of the first rule called ``name``, the oracle's copy first.

    Raises NotApplicable when no rule file defines ``name``.
    """
    for path in files_with(files, ctx, name):
        for group, rule in iter_rules(load_doc(text_of(files, ctx, path))):
            if rule_name(rule) == name:
                return path, group, rule
    raise NotApplicable(f"no rule file defines {name}")


def edit_rules(files: Files, ctx: Context, name: str, change: Callable[[dict], None]) -> Files:
    """Apply ``change`` to every rule called ``name`` in the files holding it; returns new files.

    Raises NotApplicable when no rule file defines ``name``.
    """
    paths = files_with(files, ctx, name)
    if not paths:
        raise NotApplicable(f"no rule file defines {name}")
    out = dict(files)
    for path in paths:
        doc = load_doc(text_of(files, ctx, path))
        for _, rule in iter_rules(doc):
            if rule_name(rule) == name:
                change(rule)
        out[path] = dump_doc(doc)
    return out


def edit_doc(files: Files, ctx: Context, path: str, change: Callable[[object], None]) -> Files:
    """Load ``path`` (``files`` or pristine), apply ``change`` to the document, dump it back."""
    doc = load_doc(text_of(files, ctx, path))
    change(doc)
    return {**files, path: dump_doc(doc)}
