"""The promtool replay of a catalog's promql probes: test files per scenario chunk, the rules
each chunk reads, the reference-records variant, run through ``promtool test rules``.

Each scenario (a catalog ``input_series`` entry) becomes a promtool test group; a failing
check is shown with a witness expression, and every annotation probe's alert is read as an
``alert_rule_test`` expecting nothing (promtool prints what fires). Groups are split into
chunks (:func:`_chunks`) run ``PROMTOOL_WORKERS`` at a time, each with only the rules its
expressions read (:func:`_prune`).
"""

from __future__ import annotations

import copy
import json
import re
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import yaml

from grader import promtool
from grader.grading_pass import GradingPass
from grader.preservation import normalize_rule
from grader.state_witnesses import alert_state_tests
from grader.workspace import RuleFile, load_rule_file

PROMTOOL_WORKERS = 2
"""promtool processes run at once: the scenarios are split between them (one core each)."""

_TOKEN = re.compile(r"[a-zA-Z_:][a-zA-Z0-9_:]*")


def replay_promql_checks(grading: GradingPass) -> dict[str, dict]:
    """Replay every promql probe of the catalog; ``{}`` when it has none.

    Returns variant (``integrated``: the workspace's rules; ``reference``: its recording rules
    of the reference requirements swapped for ``tests/reference_records.yml``, or the
    integrated results when that replay cannot differ) -> check id -> failure kind
    (``check``, ``witness``, ``alert``) -> :class:`grader.promtool.Failure`; a passing check
    has no ``check`` entry. Raises promtool.GraderError when promtool fails unexplained.
    """
    checks, reference_names = _plan(grading)
    results = _replay(grading, checks, reference_names) if checks else {}
    if "reference" not in results:
        results["reference"] = results.get("integrated", {})
    return results


def _plan(grading: GradingPass) -> tuple[list[dict], set[str]]:
    """The promql checks (copies marked ``_reference`` when their requirement is graded on
    the reference records too) and the record names the reference variant swaps (empty
    when that variant cannot differ)."""
    catalog = grading.catalog
    reqs = {r["id"]: r for r in catalog.get("requirements", [])}
    reference_names: set[str] = set()
    reference_reqs = {rid for rid, r in reqs.items() if r.get("targets", {}).get("reference_records")}
    for rid in reference_reqs:
        reference_names |= set(reqs[rid]["targets"].get("records", {}).values())
    promql_checks = []
    for check in catalog["checks"]:
        if check["probe"]["type"] == "promql":
            check = dict(check)
            check["_reference"] = check["req"] in reference_reqs
            promql_checks.append(check)
    if reference_names and not _reference_needed(grading, reqs, reference_reqs, reference_names):
        reference_names = set()
    return promql_checks, reference_names


def _reference_needed(grading: GradingPass, reqs: dict, reference_reqs: set[str], names: set[str]) -> bool:
    """Whether the reference-records replay can differ from the integrated one.

    It cannot when no burn alert under test exists (q is 0 either way) or when the
    workspace's recording rules of those names equal the reference ones as parsed rules.
    """
    rules = [r for _, _, r in grading.rule_entries()]
    alerts = {r.get("alert") for r in rules}
    if not any(reqs[rid]["targets"].get("alert") in alerts for rid in reference_reqs):
        return False
    ref = load_rule_file(grading.task_dir / "tests", grading.task_dir / "tests" / "reference_records.yml")
    theirs = sorted(normalize_rule(r) for r in rules if r.get("record") in names)
    ours = sorted(normalize_rule(r) for g in ref.groups for r in g.get("rules") or []
                  if r.get("record") in names)
    return theirs != ours


def replay_rules(grading: GradingPass) -> list[RuleFile]:
    """The loadable rule files promtool replays: recording rules that write a reserved or
    input series (the catalog's ``reserved_records`` tamper probe) are left out. They are
    tamper, found statically (:func:`grader.preservation.tamper_findings`); replaying them
    would only make promtool fail on duplicate samples, where the grade must say tamper."""
    reserved = {str(name) for check in grading.catalog.get("checks", [])
                if isinstance(check.get("probe"), dict)
                and check["probe"].get("what") == "reserved_records"
                for name in check["probe"].get("names") or []}
    kept = []
    for rule_file in grading.valid_rules:
        if not any(isinstance(r, dict) and r.get("record") in reserved
                   for g in rule_file.groups for r in g.get("rules") or []):
            kept.append(rule_file)
            continue
        groups = [{**g, "rules": [r for r in g.get("rules") or []
                                  if not (isinstance(r, dict) and r.get("record") in reserved)]}
                  for g in rule_file.groups]
        groups = [g for g in groups if g["rules"]]
        kept.append(RuleFile(rule_file.rel, groups=groups,
                             text=json.dumps({"groups": groups}, indent=1)))
    return kept


def _replay(grading: GradingPass, checks: list[dict], reference_names: set[str]) -> dict[str, dict]:
    """Run every promql probe in the integrated and (if asked) reference variants."""
    started = time.perf_counter()
    catalog = grading.catalog
    by_scenario: dict[str, list[dict]] = {}
    for check in checks:
        by_scenario.setdefault(check["probe"]["scenario"], []).append(check)
    alert_witnesses = _alert_witnesses(catalog, by_scenario)
    replayed = replay_rules(grading)
    variants = {"integrated": (replayed, by_scenario)}
    if reference_names:
        variants["reference"] = _reference_variant(grading.task_dir, replayed, by_scenario,
                                                   reference_names)
    jobs: list[tuple[str, Path]] = []
    state_witnesses = alert_state_tests(checks, [r for _, _, r in grading.rule_entries()])
    for variant, (files, selected) in variants.items():
        if not selected:
            continue
        groups = _test_groups(selected, catalog.get("input_series", {}),
                              alert_witnesses if variant == "integrated" else {},
                              state_witnesses if variant == "integrated" else {})
        paths = write_tests(grading.tmp / variant, files, groups,
                             catalog.get("evaluation_interval", "1m"))
        jobs += [(variant, path) for path in paths]
    with ThreadPoolExecutor(max_workers=PROMTOOL_WORKERS) as pool:
        outcomes = list(pool.map(lambda job: grading.cache.replay(job[1]), jobs))
    results: dict[str, dict] = {variant: {} for variant, _ in jobs}
    for (variant, _), failures in zip(jobs, outcomes):
        for failure in failures:
            entry = results[variant].setdefault(failure.check_id, {})
            entry[failure.kind] = failure
    grading.timings["promtool_s"] = time.perf_counter() - started
    return results


def _alert_witnesses(catalog: dict, by_scenario: dict[str, list[dict]]) -> dict[str, set]:
    """Scenario -> (alert, eval_time) of every annotation probe, whose firing alerts promtool
    prints; each such scenario is added to ``by_scenario`` (with no checks if it had none)."""
    alert_witnesses: dict[str, set[tuple[str, str]]] = {}
    for check in catalog["checks"]:
        probe = check["probe"]
        if probe["type"] == "annotation":
            alert_witnesses.setdefault(probe["scenario"], set()).add(
                (probe["alert"], probe["eval_time"]))
            by_scenario.setdefault(probe["scenario"], [])
    return alert_witnesses


def _reference_variant(task_dir: Path, replayed: list[RuleFile], by_scenario: dict[str, list[dict]],
                       reference_names: set[str]) -> tuple[list[RuleFile], dict[str, list[dict]]]:
    """The reference variant: the rule files without the agent's records of
    ``reference_names`` plus ``tests/reference_records.yml``, and the checks marked
    ``_reference`` by scenario."""
    ref_checks = {sid: [c for c in cs if c.get("_reference")] for sid, cs in by_scenario.items()}
    ref_checks = {sid: cs for sid, cs in ref_checks.items() if cs}
    ref_file = load_rule_file(task_dir / "tests", task_dir / "tests" / "reference_records.yml")
    stripped = []
    for rule_file in replayed:
        text = _strip_records(rule_file, reference_names)
        # _prune rebuilds the text from the groups: strip them too, or the
        # agent's records come back beside the reference ones
        stripped.append(RuleFile(rule_file.rel, groups=yaml.safe_load(text)["groups"], text=text))
    return stripped + [ref_file], ref_checks


def _test_groups(selected: dict[str, list[dict]], series: dict, alert_witnesses: dict,
                 state_witnesses: dict[str, list[dict]]) -> list[dict]:
    """promtool test groups, one per scenario in name order: each check's tagged expression,
    its witness when it expects samples, the scenario's alert witnesses and its alert-state
    witnesses (:func:`grader.causes.alert_state.alert_state_tests`)."""
    groups = []
    for scenario_id in sorted(selected):
        witnesses = alert_witnesses.get(scenario_id, ())
        tests = []
        for check in selected[scenario_id]:
            probe = check["probe"]
            tests.append({"expr": promtool.tagged(probe["expr"], "check", check["id"]),
                          "eval_time": probe["eval_time"],
                          "exp_samples": probe["exp_samples"]})
            if probe["exp_samples"]:  # a check expecting nothing shows its own got
                tests.append({"expr": promtool.tagged(witness_expr(probe), "witness", check["id"]),
                              "eval_time": probe["eval_time"], "exp_samples": []})
        tests += state_witnesses.get(scenario_id, [])
        groups.append({"name": scenario_id, "input_series": series.get(scenario_id, []),
                       "promql_expr_test": tests,
                       "alert_rule_test": [
                           {"eval_time": t, "alertname": a, "exp_alerts": []}
                           for a, t in sorted(witnesses)]})
    return groups


def write_tests(folder: Path, files: list[RuleFile], groups: list[dict], interval: str) -> list[Path]:
    """One promtool test file per chunk of ``groups`` under ``folder/part-N/``, beside the
    pruned rule files it reads (``rules/NNN.yml``); returns the test files' paths."""
    paths = []
    for part, chunk in enumerate(_chunks(groups, PROMTOOL_WORKERS)):
        cdir = folder / f"part-{part}"
        (cdir / "rules").mkdir(parents=True, exist_ok=True)
        exprs = [t["expr"] for g in chunk for t in g["promql_expr_test"]]
        exprs += [t["alertname"] for g in chunk for t in g.get("alert_rule_test", [])]
        # a check reading ALERTS{alertname="X"} needs X's group, not every alerting group
        chunk_files = _prune(files, _names_read(exprs) - {"ALERTS", "ALERTS_FOR_STATE"})
        rule_paths = []
        for index, rule_file in enumerate(chunk_files):
            path = cdir / "rules" / f"{index:03d}.yml"
            path.write_text(rule_file.text, encoding="utf-8")
            rule_paths.append(path)
        text = promtool.test_file([p.relative_to(cdir) for p in rule_paths],
                                  group_eval_order(chunk_files), chunk, interval)
        test_path = cdir / "test.yml"
        test_path.write_text(text, encoding="utf-8")
        paths.append(test_path)
    return paths


def group_eval_order(rule_files: list[RuleFile]) -> list[str]:
    """Rule groups ordered so that a group recording a series runs before groups reading it.

    promtool evaluates groups in map order unless told (prometheus/prometheus#5241); the
    order is derived from the files being graded, ties kept in file order. Cycles keep
    file order.
    """
    groups = [(g.get("name"), g) for f in rule_files if not f.error for g in f.groups]
    names = [str(n) for n, _ in groups]
    records: dict[str, set[str]] = {}
    reads: dict[str, set[str]] = {}
    for name, group in groups:
        for rule in group.get("rules") or []:
            if not isinstance(rule, dict):
                continue
            if rule.get("record"):
                records.setdefault(str(name), set()).add(str(rule["record"]))
            reads.setdefault(str(name), set()).update(_TOKEN.findall(str(rule.get("expr") or "")))
    ordered: list[str] = []
    remaining = list(dict.fromkeys(names))
    while remaining:
        for name in remaining:
            deps = {other for other in remaining if other != name
                    and records.get(other, set()) & reads.get(name, set())}
            if not deps:
                break
        else:
            name = remaining[0]
        ordered.append(name)
        remaining.remove(name)
    return ordered


def _names_read(exprs: list[str]) -> set[str]:
    """Series and alert names an expression list reads (alertname="X" counts as alert X)."""
    names: set[str] = set()
    for expr in exprs:
        names |= set(_TOKEN.findall(expr))
        names |= set(re.findall(r'alertname=~?"([^"]+)"', expr))
    return names


def _prune(files: list[RuleFile], wanted: set[str]) -> list[RuleFile]:
    """Keep only the rules the checks can see: those defining a wanted alert or record and,
    transitively, the rules recording what those read (every alerting rule when a kept
    expression reads ALERTS). Rules interact only through recorded series and ALERTS, so
    dropping the others changes no check's result; it only saves promtool's work. Kept rules
    stay in their groups, in their order.
    """
    keep = _rules_to_keep(files, wanted)
    pruned = []
    for fi, rule_file in enumerate(files):
        groups = []
        for gi, group in enumerate(rule_file.groups):
            if not isinstance(group, dict):
                continue
            kept = [r for ri, r in enumerate(group.get("rules") or []) if (fi, gi, ri) in keep]
            if kept:
                groups.append({**group, "rules": kept})
        if groups:
            pruned.append(RuleFile(rule_file.rel, groups=groups,
                                   text=json.dumps({"groups": groups}, indent=1)))
    return pruned


def _rules_to_keep(files: list[RuleFile], wanted: set[str]) -> set[tuple[int, int, int]]:
    """``(file, group, rule)`` indexes of the rules defining a wanted name and, to a fixed
    point, of those recording what kept rules read (every alerting rule once ALERTS is read)."""
    rules = [(fi, gi, ri, r) for fi, f in enumerate(files) for gi, g in enumerate(f.groups)
             if isinstance(g, dict) for ri, r in enumerate(g.get("rules") or []) if isinstance(r, dict)]
    keep: set[tuple[int, int, int]] = set()
    wanted = set(wanted)
    changed = True
    while changed:
        changed = False
        alerts_read = bool(wanted & {"ALERTS", "ALERTS_FOR_STATE"})
        for fi, gi, ri, rule in rules:
            if (fi, gi, ri) in keep:
                continue
            name = str(rule.get("alert") or rule.get("record"))
            if name in wanted or (alerts_read and "alert" in rule):
                keep.add((fi, gi, ri))
                wanted |= _names_read([str(rule.get("expr") or "")])
                changed = True
    return keep


def _strip_records(rule_file: RuleFile, names: set[str]) -> str:
    """The rule file as YAML text without the recording rules of ``names`` (and groups left empty)."""
    doc = {"groups": []}
    for group in rule_file.groups:
        group = copy.deepcopy(group)
        group["rules"] = [r for r in group.get("rules") or []
                          if not (isinstance(r, dict) and r.get("record") in names)]
        if group["rules"]:
            doc["groups"].append(group)
    return yaml.safe_dump(doc, sort_keys=False, width=10_000)


def _balance(groups: list[dict], parts: int) -> list[list[dict]]:
    """Split test groups into up to ``parts`` chunks of similar cost, each in name order."""
    chunks: list[list[dict]] = [[] for _ in range(max(1, parts))]
    loads = [0.0] * len(chunks)
    for group in sorted(groups, key=_group_cost, reverse=True):
        lightest = loads.index(min(loads))
        chunks[lightest].append(group)
        loads[lightest] += _group_cost(group)
    return [sorted(c, key=lambda g: g["name"]) for c in chunks if c]


def _group_cost(group: dict) -> float:
    """Rough promtool cost of a test group: evaluation steps (its horizon) times its tests."""
    horizon = max((promtool.duration_minutes(str(t["eval_time"]))
                   for t in group["promql_expr_test"] + group.get("alert_rule_test", [])), default=0)
    return horizon * (10 + len(group["promql_expr_test"]))


def _chunks(groups: list[dict], parts: int) -> list[list[dict]]:
    """Test groups split into promtool runs, costliest first.

    One run per requirement's scenarios (``P1-outage`` belongs to P1, unprefixed ones to the
    burn alert), so each run loads only the rules its checks read; then the costliest run is
    halved until there are two runs per worker, so ``parts`` workers finish close together.
    """
    buckets: dict[str, list[dict]] = {}
    for group in groups:
        match = re.match(r"([A-Z]+[0-9]+)-", group["name"])
        buckets.setdefault(match.group(1) if match else "", []).append(group)
    chunks = [buckets[key] for key in sorted(buckets)]

    def cost(chunk: list[dict]) -> float:
        return sum(_group_cost(g) for g in chunk)

    while 0 < len(chunks) < 2 * parts:
        splittable = [c for c in chunks if len(c) >= 2]
        if not splittable:
            break
        largest = max(splittable, key=cost)
        chunks.remove(largest)
        chunks += _balance(largest, 2)
    return sorted(chunks, key=cost, reverse=True)


def witness_expr(probe: dict) -> str:
    """An expression whose samples explain a failure: the alert's series, or the record's."""
    if probe.get("witness"):
        return probe["witness"]
    expr = probe["expr"]
    alert = re.search(r'ALERTS\{alertname="([^"]+)"', expr)
    if alert:
        return f'ALERTS{{alertname="{alert.group(1)}"}}'
    record = re.search(r"([a-zA-Z_:][a-zA-Z0-9_:]*\{[^}]*\})", expr.replace("count(", "", 1))
    return record.group(1) if record else expr
