"""The ``partial`` reference policy's files: half the change requests plus one plausible mistake.

The work is split into units: one per alert, repair and recording requirement, one for all
route requirements (they share the route tree) and one for all inhibitions. The unit of the
primary alert (the first ``alert`` requirement, else the first ``repair``) is always done,
with one mistake: seed even drops its ``for``, seed odd gives it a wrong severity (falling
back to the other, then to a wrong value of another required label). Further units follow in
spec order until half the remaining weight is done, leaving at least one unit undone. An
undone unit keeps its rules (and its part of alertmanager.yml) as in the pristine repo.

With weights alert/repair 3, others 2 and the mistake costing at most 1.25 x 3, the reward
0.4 x progress lands between 0.1 and 0.4 on tasks of three or more units.
"""

from __future__ import annotations

import copy

from recorder.reference.context import (
    AM,
    Context,
    Files,
    NotApplicable,
    dump_doc,
    edit_rules,
    find_rule,
    groups_of,
    is_rule_file,
    load_doc,
    rule_name,
)

WEIGHTS = {"alert": 3, "repair": 3}


def units(ctx: Context) -> list[list[dict]]:
    """The requirements grouped into units of work, in spec order of their first requirement."""
    out: list[list[dict]] = []
    shared: dict[str, list[dict]] = {}
    for req in ctx.spec.get("requirements", []):
        kind = req.get("kind")
        if kind in ("route", "inhibit"):
            if kind not in shared:
                shared[kind] = []
                out.append(shared[kind])
            shared[kind].append(req)
        else:
            out.append([req])
    return out


def weight(unit: list[dict]) -> int:
    """The reward weight of a unit (alert and repair 3, others 2, as in grader.reward)."""
    return sum(int(r.get("weight") or WEIGHTS.get(r.get("kind"), 2)) for r in unit)


def split(ctx: Context) -> tuple[list[list[dict]], list[list[dict]]]:
    """``(done, undone)`` units (NotApplicable when the task has no alert or repair)."""
    primary = ctx.need("primary")
    all_units = units(ctx)
    first = next(u for u in all_units if primary in u)
    others = [u for u in all_units if u is not first]
    done, total, acc = [first], sum(weight(u) for u in others), 0
    for unit in others[:-1]:
        if acc >= total / 2:
            break
        done.append(unit)
        acc += weight(unit)
    return done, [u for u in others if not any(u is d for d in done)]


def _revert_rules(text: str, pristine_text: str | None, names: set[str]) -> str | None:
    """A rule file with the rules called ``names`` as in the pristine file (None: no rules left)."""
    doc = load_doc(text)
    before = load_doc(pristine_text) if pristine_text is not None else {"groups": []}
    original = copy.deepcopy(doc)
    for group in groups_of(doc):
        group["rules"] = [r for r in group.get("rules") or [] if rule_name(r) not in names]
    for old in groups_of(before):
        group = next((g for g in groups_of(doc) if g.get("name") == old.get("name")), None)
        for index, rule in enumerate(old.get("rules") or []):
            if rule_name(rule) not in names:
                continue
            if group is None:
                group = {**old, "rules": []}
                doc["groups"].append(group)
            group["rules"].insert(min(index, len(group["rules"])), rule)
    kept = {g.get("name") for g in groups_of(before)}
    doc["groups"][:] = [g for g in groups_of(doc) if g.get("rules") or g.get("name") in kept]
    if doc == original:
        return text
    return dump_doc(doc) if doc["groups"] or pristine_text is not None else None


def _revert_am(text: str, pristine_text: str | None, kinds: set[str]) -> str:
    doc, before = load_doc(text), load_doc(pristine_text or "{}") or {}
    keys = {"route": ("route", "receivers"), "inhibit": ("inhibit_rules",)}
    original = copy.deepcopy(doc)
    for kind in kinds:
        for key in keys[kind]:
            if key in before:
                doc[key] = before[key]
            else:
                doc.pop(key, None)
    return text if doc == original else dump_doc(doc)


def revert(files: Files, ctx: Context, undone: list[dict]) -> Files:
    """The oracle's files with the work of the ``undone`` requirements left as in the pristine
    repo; files that end up as in the pristine repo are left out."""
    names = {str(r["alert"]) for r in undone if r.get("alert")}
    names |= {str(v) for r in undone if r.get("kind") == "recording" for v in r["records"].values()}
    kinds = {r["kind"] for r in undone if r.get("kind") in ("route", "inhibit")}
    out: Files = {}
    for path, text in files.items():
        before = ctx.pristine.get(path)
        if is_rule_file(path):
            text = _revert_rules(text, before, names)
        elif path == AM and kinds:
            text = _revert_am(text, before, kinds)
        if text is not None and (before is None or load_doc(text) != load_doc(before)):
            out[path] = text
    return out


def _no_for(files: Files, ctx: Context, req: dict) -> Files:
    if find_rule(files, ctx, req["alert"])[2].get("for") in (None, 0, "0s", "0m"):
        raise NotApplicable(f"{req['alert']} has no for")
    return edit_rules(files, ctx, req["alert"], lambda r: r.pop("for", None))


def _wrong_label(key: str):
    def mistake(files: Files, ctx: Context, req: dict) -> Files:
        wanted = (req.get("labels") or {}).get(key)
        if wanted is None:
            raise NotApplicable(f"{req['id']} requires no {key} label")
        wrong = next(v for v in ("warning", "ticket", "info") if v != wanted) if key == "severity" \
            else f"{wanted}-old"

        def change(rule):
            rule["labels"] = {**(rule.get("labels") or {}), key: wrong}
        return edit_rules(files, ctx, req["alert"], change)
    return mistake


def with_mistake(files: Files, ctx: Context, req: dict, seed: int) -> Files:
    """``files`` with one plausible mistake on ``req``'s rule (see the module docstring).

    Raises NotApplicable when the rule has no ``for`` and ``req`` requires no label.
    """
    mistakes = [_no_for, _wrong_label("severity")]
    if seed % 2:
        mistakes.reverse()
    mistakes += [_wrong_label(k) for k in sorted(req.get("labels") or {}) if k != "severity"]
    for mistake in mistakes:
        try:
            return mistake(files, ctx, req)
        except NotApplicable:
            continue
    raise NotApplicable(f"{req['alert']} has no for and no required label to get wrong")


def partial_files(ctx: Context, seed: int) -> Files:
    """The files the partial policy writes (NotApplicable for a task with no alert or repair)."""
    _, undone = split(ctx)
    files = revert(ctx.solution, ctx, [r for unit in undone for r in unit])
    return with_mistake(files, ctx, ctx.need("primary"), seed)

