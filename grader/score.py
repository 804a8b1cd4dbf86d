"""Scoring: checks' results -> requirement q and s, the reward and its keys (the GradeResult body).

The formulas are in :mod:`grader.reward` (docs/formats.md, "Reward"); this module picks
which checks feed which term: by family for alert, repair and recording requirements, by
case role (:func:`case_role`) for route and inhibit requirements.
"""

from __future__ import annotations

from pathlib import Path

from contract.errors import BadInput
from grader import reward

RESULT_VERSION = 1

_ROUTE_ROLES = (("positive", ("positive", "chain", "receiver", "removed", "timing")),
                ("negative", ("negative",)))
_INHIBIT_ROLES = ("suppressed", "not-suppressed", "bystander")


def case_role(check_id: str, requirement_kind: str, role: str | None = None) -> str | None:
    """The role of a check in its route or inhibit requirement, or None when it has none.

    ``role``: the check's ``role`` in the catalog (catalogs from 0.3.0 carry one,
    contract.task.CheckRole); it is the answer for a route case (``positive`` /
    ``negative``) or an inhibit case (``suppressed`` / ``not-suppressed`` / ``bystander``),
    and None for any other role. Without it (an older catalog) the role is read from how the
    task generator spelled check ids; this is the one place that reads roles.

    - ``route``: ``positive`` when the id's last dot-separated part starts with
      ``positive``, ``chain``, ``receiver``, ``removed`` or ``timing`` (its score counts);
      ``negative`` when
      it starts with ``negative`` (pass counts).
    - ``inhibit``: ``suppressed``, ``not-suppressed`` or ``bystander`` when that is an inner
      part of the id (``IN.inhibit.suppressed.X``), the first of them in this order.
    - any other requirement kind: None.
    """
    if role is not None:
        case_roles = {"route": ("positive", "negative"), "inhibit": _INHIBIT_ROLES}
        return role if role in case_roles.get(requirement_kind, ()) else None
    parts = check_id.split(".")
    if requirement_kind == "route":
        return next((role for role, prefixes in _ROUTE_ROLES if parts[-1].startswith(prefixes)),
                    None)
    if requirement_kind == "inhibit":
        return next((role for role in _INHIBIT_ROLES if role in parts[1:-1]), None)
    return None


def score(task_dir: Path, catalog: dict, results: list[dict], variant_pass: dict,
          alert_names: list[str], pristine: dict[str, float], syntax_errors: list[dict]) -> dict:
    """The GradeResult of docs/formats.md (without ``timings``) from the checks' results.

    ``variant_pass``: replay variant -> promql check id -> 1.0/0.0; ``alert_names``: alert
    names defined in loadable rule files; ``pristine``: requirement id -> q of the pristine
    repo (empty: s is 0 and q_pristine is q). Raises BadInput (naming the catalog) for an
    unknown requirement kind.
    """
    roles = {c.get("id"): c.get("role") for c in catalog.get("checks", [])}
    requirements = _requirements(task_dir, catalog, results, variant_pass, alert_names, pristine,
                                 roles)
    keys = _keys(results, requirements)
    tamper = [{"file": "", "message": i["detail"]} for i in results
              if i["family"] == "Tamper" and not i["passed"]]
    return {
        "version": RESULT_VERSION,
        "task_id": catalog.get("task_id"),
        "catalog_version": catalog.get("catalog_version"),
        "reward": keys["reward"],
        "keys": keys,
        "requirements": requirements,
        "checks": results,
        "syntax_errors": syntax_errors,
        "tamper": tamper,
    }


def _values(items: list[dict], families: set[str], variant_pass: dict,
            variant: str | None = None) -> list[float]:
    """1.0/0.0 per applicable check of ``families``; a promql check's pass in ``variant``."""
    out = []
    for item in items:
        if item["family"] in families and item["passed"] is not None:
            if variant and item["id"] in variant_pass.get(variant, {}):
                out.append(variant_pass[variant][item["id"]])
            else:
                out.append(1.0 if item["passed"] else 0.0)
    return out


def _requirements(task_dir: Path, catalog: dict, results: list[dict], variant_pass: dict,
                  alert_names: list[str], pristine: dict[str, float],
                  roles: dict[str, str | None]) -> list[dict]:
    """One ``{id, kind, weight, q, q_pristine, s}`` row per catalog requirement."""
    by_req: dict[str, list[dict]] = {}
    for item in results:
        if item["req"]:
            by_req.setdefault(item["req"], []).append(item)
    requirements = []
    for req in catalog.get("requirements", []):
        items = by_req.get(req["id"], [])
        q = round(_requirement_q(task_dir, req, items, variant_pass, alert_names, roles), 6)
        q_p = pristine.get(req["id"], q) if pristine else q
        s = round(reward.normalized_score(q, q_p), 6) if pristine else 0.0
        requirements.append({"id": req["id"], "kind": req["kind"], "weight": req["weight"], "q": q,
                             "q_pristine": q_p, "s": s})
    return requirements


def _requirement_q(task_dir: Path, req: dict, items: list[dict], variant_pass: dict,
                   alert_names: list[str], roles: dict[str, str | None]) -> float:
    """q of one requirement from its checks (formulas in :mod:`grader.reward`); ``roles``:
    check id -> the catalog's role (None where it carries none)."""
    kind = req["kind"]

    def role_of(item: dict) -> str | None:
        return case_role(item["id"], kind, roles.get(item["id"]))

    if kind in ("alert", "repair"):
        exists = req["targets"].get("alert") in alert_names

        def q_alert(variant):
            return reward.alert_q(exists, _values(items, {"Dup"}, variant_pass, variant),
                                  _values(items, {"Fire", "Timing"}, variant_pass, variant),
                                  _values(items, {"Silent"}, variant_pass, variant),
                                  _values(items, {"Label", "Annotation"}, variant_pass, variant))

        q = q_alert("integrated")
        if req["targets"].get("reference_records"):
            q = 0.5 * q + 0.5 * q_alert("reference")
        return q
    if kind == "recording":
        return reward.recording_q(_values(items, {"Dup"}, variant_pass),
                                  _values(items, {"Value", "Cardinality"}, variant_pass))
    if kind == "route":
        pos = [i.get("score", 0.0) for i in items if role_of(i) == "positive"]
        neg = [1.0 if i["passed"] else 0.0 for i in items if role_of(i) == "negative"]
        return reward.route_q(pos, neg)
    if kind == "inhibit":
        def case(role):
            return [1.0 if i["passed"] else 0.0 for i in items if role_of(i) == role]

        return reward.inhibit_q(case("suppressed"), case("not-suppressed"), case("bystander"))
    raise BadInput(task_dir / "tests" / "checks.json", f"unknown requirement kind {kind!r}")


def _keys(results: list[dict], requirements: list[dict]) -> dict:
    """The GradeResult ``keys``: reward, solved, progress, preservation and the rates."""

    def rate(families):
        vals = [1.0 if i["passed"] else 0.0 for i in results
                if i["family"] in families and i["passed"] is not None]
        return round(reward.mean(vals), 6)

    def category(kinds):
        vals = [max(0.0, r["s"]) for r in requirements if r["kind"] in kinds]
        return round(reward.mean(vals), 6)

    preservation = rate({"Preservation"})
    syntax_ok = all(i["passed"] for i in results if i["family"] == "Syntax")
    tamper_found = any(not i["passed"] for i in results if i["family"] == "Tamper")
    scores = [r["s"] for r in requirements]
    progress = round(reward.progress([(r["weight"], r["s"]) for r in requirements], preservation), 6)
    value, solved = reward.reward(scores, preservation, syntax_ok, tamper_found, progress)
    return {
        "reward": round(value, 6),
        "solved": int(solved),
        "outcome": int(solved),
        "progress": progress,
        "preservation": preservation,
        "req_alerts": category({"alert"}),
        "req_repairs": category({"repair"}),
        "req_recording": category({"recording"}),
        "req_routing": category({"route"}),
        "req_inhibit": category({"inhibit"}),
        "fire_rate": rate({"Fire"}),
        "silent_rate": rate({"Silent"}),
        "label_rate": rate({"Label", "Annotation"}),
        "check_pass_rate": rate({i["family"] for i in results}),
        "syntax_ok": int(syntax_ok),
        "tamper": int(tamper_found),
    }
