"""The equivalence probe: is a mutant the catalog did not kill really wrong? The real tools on a broader probe set than the catalog's.

- rule mutants: :mod:`proofs.mutation.rule_probes` (promtool, more scenarios and times);
- route mutants: ``amtool config routes test`` (:func:`grader.routing.resolve_many`) over
  the product of every service x team x severity the spec names (each also missing), each
  with an alert name of that service, plus every label set of the spec's route cases and
  the catalog's route and inhibit checks, each also missing one label; receivers compared
  as lists;
- inhibit mutants: the grader's Alertmanager 0.25 simulator (:mod:`grader.inhibition`) over
  every ordered pair of alerts from a pool (each alert the spec and the catalog's checks
  name, then each generic name such as HighErrorRatio on every service), and the whole
  pool firing at once.

A :class:`Verdict` says equal (with the number of probes: the proof) or the first probe
that differs (the witness that will close the survivor).
"""

from __future__ import annotations

import itertools
import tempfile
from dataclasses import dataclass
from pathlib import Path

from grader import inhibition, routing
from proofs.mutation.am_edits import labels_seen
from proofs.mutation.rule_probes import probe_series, replay, same_samples
from recorder.reference.context import AM, Context, Files, load_doc

ROUTE_BATCH = 48
"""Label sets resolved per amtool batch; a survivor stops at the first differing batch."""


@dataclass(frozen=True)
class Verdict:
    """``equal``: every probe gave the oracle's result; ``probes``: how many were compared;
    ``witness``: the first differing probe (None when equal)."""

    equal: bool
    probes: int
    witness: str | None = None


def _alert_labels(ctx: Context) -> dict[str, dict[str, str]]:
    """Alert name -> the labels the spec gives it (route cases first, then requirements)."""
    known: dict[str, dict[str, str]] = {}
    for req in ctx.spec.get("requirements", []):
        cases = req.get("cases") or {}
        for case in [*(cases.get("positives") or []), *(cases.get("negatives") or [])]:
            known.setdefault(str(case.get("alertname")), {k: str(v) for k, v in case.items()})
    for req in ctx.requirements("alert", "repair"):
        labels = {"alertname": req["alert"], **{k: str(v) for k, v in (req.get("labels") or {}).items()}}
        if req.get("service") and not req.get("generic"):
            labels["service"] = str(req["service"])
        known.setdefault(req["alert"], labels)
    return known


def catalog_alerts(catalog: dict) -> list[dict[str, str]]:
    """The label sets the catalog's route and inhibit checks use (derived from the spec:
    positives, negatives, bystanders), in catalog order."""
    found = []
    for check in catalog.get("checks", []):
        probe = check.get("probe") or {}
        if probe.get("type") == "route" and isinstance(probe.get("labels"), dict):
            found.append({str(k): str(v) for k, v in probe["labels"].items()})
        elif probe.get("type") == "inhibit":
            found += [{str(k): str(v) for k, v in a.items()} for a in probe.get("alerts") or [] if isinstance(a, dict)]
    return found


def route_label_sets(ctx: Context, catalog: dict) -> list[dict[str, str]]:
    """The route probe's label sets (see the module doc), without duplicates, in a fixed order."""
    services = sorted(labels_seen(ctx, "service"))
    teams = sorted(labels_seen(ctx, "team")) + ["unassigned"]
    severities = sorted(labels_seen(ctx, "severity") | {"page", "ticket"})
    by_service = {}
    for name, labels in sorted(_alert_labels(ctx).items()):
        by_service.setdefault(labels.get("service"), name)
    sets = []
    for service, team, severity in itertools.product([*services, None], [*teams, None], [*severities, None]):
        labels = {"alertname": by_service.get(service) or "ProbeAlert"}
        labels |= {k: v for k, v in (("service", service), ("team", team), ("severity", severity)) if v}
        sets.append(labels)
    for labels in [*_alert_labels(ctx).values(), *catalog_alerts(catalog)]:
        sets.append(dict(labels))
        sets += [{k: v for k, v in labels.items() if k != drop} for drop in labels]
    unique = {tuple(sorted(s.items())): s for s in sets if s}
    return [unique[k] for k in sorted(unique)]


def _resolve(files: Files, label_sets: list[dict[str, str]]) -> list[list[str]] | str:
    with tempfile.TemporaryDirectory(prefix="alertforge-probe-") as tmp:
        path = Path(tmp) / "alertmanager.yml"
        path.write_text(files.get(AM, ""), encoding="utf-8")
        try:
            return routing.resolve_many(path, label_sets)
        except routing.RoutingError as err:
            return str(err)


def probe_routes(ctx: Context, catalog: dict, oracle: Files, mutant: Files, cache: dict) -> Verdict:
    """Route half: receivers of every probe label set, oracle vs mutant (``cache`` keeps the
    oracle's per task)."""
    sets = route_label_sets(ctx, catalog)
    if "routes" not in cache:
        cache["routes"] = _resolve(oracle, sets)
    expected = cache["routes"]
    if isinstance(expected, str):
        return Verdict(False, 0, f"amtool fails on the oracle: {expected}")
    for start in range(0, len(sets), ROUTE_BATCH):
        batch = sets[start:start + ROUTE_BATCH]
        got = _resolve(mutant, batch)
        if isinstance(got, str):
            return Verdict(False, start, f"amtool: {got}")
        for offset, (want, have) in enumerate(zip(expected[start:], got)):
            if want != have:
                labels = ",".join(f'{k}="{v}"' for k, v in batch[offset].items())
                return Verdict(False, start + offset + 1,
                               f"route {{{labels}}}: oracle {','.join(want) or '-'}, mutant {','.join(have) or '-'}")
    return Verdict(True, len(sets))


def alert_pool(ctx: Context, catalog: dict) -> list[dict[str, str]]:
    """The inhibit probe's alerts: first every alert the spec names with its own labels
    (route cases, requirements, the catalog's route and inhibit checks, inhibition sources
    and targets on their service), then each
    of those names on every other service (with that service's team), the services an
    inhibit requirement names first (so a witness shows that service's own alerts). A name
    that starts with a service's alert prefix (``GeoRpcDown``) stays on that service."""
    teams = {s["name"]: s.get("team") for s in ctx.spec.get("services", [])}
    native = [dict(labels) for _, labels in sorted(_alert_labels(ctx).items())] + catalog_alerts(catalog)
    for req in ctx.requirements("inhibit"):
        for name in [req["source"], *req.get("targets", [])]:
            severity = (req.get("target_severity") or {}).get(name, "page")
            native.append({"alertname": str(name), "service": str(req["service"]), "severity": str(severity)})
    moved = []
    inhibited = {str(r["service"]) for r in ctx.requirements("inhibit")}
    owners = {_camel(name): name for name in teams}
    for labels in native:
        owner = next((svc for camel, svc in owners.items() if labels["alertname"].startswith(camel)), None)
        for service in sorted(teams, key=lambda name: (name not in inhibited, name)):
            if owner and service != owner:
                continue  # an alert named for its service fires for that service only
            alert = {**labels, "service": service}
            if "team" in labels and teams[service]:
                alert["team"] = str(teams[service])
            moved.append(alert)
    unique: dict[tuple, dict[str, str]] = {}
    for alert in native + moved:
        unique.setdefault(tuple(sorted(alert.items())), alert)
    return list(unique.values())


def _muted(rules, alerts: list[dict[str, str]]) -> list[bool] | str:
    try:
        return [pair is not None for pair in inhibition.inhibited_by(rules, alerts)]
    except (inhibition.InhibitConfigError, ValueError) as err:
        return str(err)


def _inhibit_rules(files: Files) -> list | str:
    try:
        return inhibition.inhibit_rules_of(load_doc(files.get(AM, "")) or {})
    except (inhibition.InhibitConfigError, ValueError, AttributeError) as err:
        return str(err)
    except Exception as err:  # noqa: BLE001 - YAML that does not parse is a difference, not a crash
        return f"alertmanager.yml does not load: {err}"


def probe_inhibition(ctx: Context, catalog: dict, oracle: Files, mutant: Files) -> Verdict:
    """Inhibit half: which alert of each ordered pair (and of the whole pool) is muted."""
    pool = alert_pool(ctx, catalog)
    ours, theirs = _inhibit_rules(oracle), _inhibit_rules(mutant)
    if isinstance(theirs, str):
        return Verdict(False, 0, f"inhibit rules do not load: {theirs}")
    if isinstance(ours, str):
        return Verdict(False, 0, f"the oracle's inhibit rules do not load: {ours}")
    count = 0
    for source, target in itertools.permutations(pool, 2):
        count += 1
        differs = _difference(ours, theirs, [source, target])
        if differs:
            return Verdict(False, count, differs)
    differs = _difference(ours, theirs, pool, "the whole pool")
    return Verdict(False, count + 1, differs) if differs else Verdict(True, count + 1)


def _difference(ours, theirs, alerts: list[dict[str, str]], others: str | None = None) -> str | None:
    """How muting ``alerts`` differs between the oracle's and the mutant's rules (None: it does not)."""
    want, have = _muted(ours, alerts), _muted(theirs, alerts)
    if isinstance(have, str):
        return f"the simulator refuses the mutant: {have}"
    if want == have:
        return None
    index = next(i for i, (a, b) in enumerate(zip(want, have)) if a != b)
    firing = others or " and ".join(_fmt(a) for k, a in enumerate(alerts) if k != index)
    return (f"{_fmt(alerts[index])} with {firing} firing: oracle {'muted' if want[index] else 'not muted'}, "
            f"mutant {'muted' if have[index] else 'not muted'}")


def _camel(service: str) -> str:
    return "".join(part.capitalize() for part in service.split("-"))


def _fmt(labels: dict[str, str]) -> str:
    return "{" + ",".join(f'{k}="{v}"' for k, v in labels.items()) + "}"


def probe_rules(ctx: Context, catalog: dict, req: dict, oracle: Files, mutant: Files, cache: dict) -> Verdict:
    """Rule half (:mod:`proofs.mutation.rule_probes`): readings at every probe time,
    oracle (cached per requirement) vs mutant; the witness is the first differing one."""
    records = sorted({str(v) for r in ctx.requirements("recording", "alert") for v in (r.get("records") or {}).values()})
    alert = req.get("alert")
    interval = str(catalog.get("evaluation_interval", "60s"))
    series = probe_series(ctx, catalog, req)
    key = ("rules", req["id"])
    if key not in cache:
        cache[key] = replay(oracle, series, records, alert, interval)
    want = cache[key]
    if "*" in want:
        return Verdict(False, 0, f"the oracle's rules do not replay: {want['*'].error}")
    have = replay(mutant, series, records, alert, interval)
    if "*" in have:
        return Verdict(False, 0, have["*"].error)
    times = sorted({(sid, t) for sid, (_, horizon) in series.items() for t in range(1, horizon + 1)})
    for n, (sid, t) in enumerate(times, 1):
        key_t = f"{sid}@{t}m"
        a, b = want.get(key_t), have.get(key_t)
        a_alerts, b_alerts = (a.alerts if a else ()), (b.alerts if b else ())
        a_notes, b_notes = (a.notes if a else ()), (b.notes if b else ())
        if not same_samples(a_alerts, b_alerts):
            return Verdict(False, n, f"{key_t}: {_diff(a_alerts, b_alerts)}")
        if a_notes != b_notes:
            return Verdict(False, n, f"{key_t} {alert} labels and annotations: {_diff(a_notes, b_notes)}")
    return Verdict(True, 2 * len(times))


def _diff(oracle: tuple[str, ...], mutant: tuple[str, ...], limit: int = 3) -> str:
    """What only the oracle and only the mutant show (a record value within tolerance of the
    other side's is the same), at most ``limit`` items each."""
    def listed(items: list[str]) -> str:
        if not items:
            return "nothing"
        return "; ".join(items[:limit]) + (f" (+{len(items) - limit} more)" if len(items) > limit else "")
    ours = [a for a in oracle if not any(same_samples((a,), (b,)) for b in mutant)]
    theirs = [b for b in mutant if not any(same_samples((a,), (b,)) for a in oracle)]
    return f"oracle only {listed(sorted(ours))}, mutant only {listed(sorted(theirs))}"


def probe(ctx: Context, catalog: dict, req: dict, oracle: Files, mutant: Files, cache: dict) -> Verdict:
    """The probe for a mutant targeting ``req``: by requirement kind (route, inhibit, else rules)."""
    if req["kind"] == "route":
        return probe_routes(ctx, catalog, oracle, mutant, cache)
    if req["kind"] == "inhibit":
        return probe_inhibition(ctx, catalog, oracle, mutant)
    return probe_rules(ctx, catalog, req, oracle, mutant, cache)
