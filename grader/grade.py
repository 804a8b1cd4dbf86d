"""grade(task, workspace) -> GradeResult: run a task's check catalog against a workspace.

PromQL checks replay the catalog's scenarios through the real ``promtool test rules``;
route checks resolve receivers with the real ``amtool config routes test``; inhibit checks
use the Alertmanager 0.25 inhibition simulator (:mod:`grader.inhibition`); syntax,
preservation and tamper checks read the parsed files. The GradeResult shape is in
docs/formats.md; apart from ``timings`` the same inputs give byte-identical JSON.
"""

from __future__ import annotations

import copy
import hashlib
import json
import re
import shutil
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import yaml

from contract.base import parse
from contract.errors import BadInput
from contract.grade import checked
from contract.task import CheckCatalog
from contract.task_roots import task_fingerprint
from contract.untrusted import Tree
from grader import inhibition, promtool, reward, routing
from grader.preservation import normalize_rule, preserved, tamper_findings
from grader.workspace import (
    ALERTMANAGER_PATH,
    MAX_FILE_BYTES,
    RuleFile,
    Workspace,
    load_rule_file,
    load_workspace,
)

RESULT_VERSION = 1
_TOKEN = re.compile(r"[a-zA-Z_:][a-zA-Z0-9_:]*")


def load_catalog(task_dir: Path) -> dict:
    """``tests/checks.json`` of a task, checked against :class:`contract.task.CheckCatalog`.

    Returns the catalog as read (a dict). Raises BadInput naming the file and the field when
    it is missing or malformed.
    """
    path = task_dir / "tests" / "checks.json"
    data = Tree(task_dir).read_json("tests/checks.json")
    parse(CheckCatalog, data, path, "check catalog")
    return data


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


def _strip_records(rule_file: RuleFile, names: set[str]) -> str:
    doc = {"groups": []}
    for group in rule_file.groups:
        group = copy.deepcopy(group)
        group["rules"] = [r for r in group.get("rules") or []
                          if not (isinstance(r, dict) and r.get("record") in names)]
        if group["rules"]:
            doc["groups"].append(group)
    return yaml.safe_dump(doc, sort_keys=False, width=10_000)


class _Run:
    """One grading: the temporary directory and what was found on the way."""

    def __init__(self, task_dir: Path, catalog: dict, ws: Workspace, tmp: Path):
        self.task_dir, self.catalog, self.ws, self.tmp = task_dir, catalog, ws, tmp
        self.syntax_errors: list[dict] = []
        self.timings: dict[str, float] = {}
        self.valid_rules: list[RuleFile] = []
        self.am_path: Path | None = None
        self.am_error: str | None = None
        self.fingerprint = ""

    def check_syntax(self) -> None:
        started = time.perf_counter()
        candidates = []
        for rule_file in self.ws.rule_files:
            if rule_file.error:
                self.syntax_errors.append({"file": rule_file.rel, "message": rule_file.error})
                continue
            path = self.tmp / "ws" / rule_file.rel
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(rule_file.text, encoding="utf-8")
            candidates.append((rule_file, path))
        problems = promtool.check_rules_many([p for _, p in candidates])
        for (rule_file, path), problem in zip(candidates, problems):
            if problem:
                self.syntax_errors.append({"file": rule_file.rel, "message": problem})
            else:
                self.valid_rules.append(rule_file)
        if self.ws.alertmanager_error:
            self.am_error = self.ws.alertmanager_error
        else:
            private = self.tmp / "ws"
            if (self.ws.alertmanager or {}).get("templates"):
                # templates (confined to the repo by load_workspace) are read from a private
                # copy of the repo's regular files, never from the workspace itself
                Tree(self.ws.root).copy_into(private, cap=MAX_FILE_BYTES, skip=frozenset(
                    [ALERTMANAGER_PATH, *(f.rel for f in self.ws.rule_files)]))
            self.am_path = private / ALERTMANAGER_PATH
            self.am_path.parent.mkdir(parents=True, exist_ok=True)
            self.am_path.write_text(self.ws.alertmanager_text or "", encoding="utf-8")
            self.am_error = routing.check_config(self.am_path)
        if self.am_error:
            self.syntax_errors.append({"file": ALERTMANAGER_PATH, "message": self.am_error})
            self.am_path = None
        self.timings["syntax_s"] = time.perf_counter() - started

    def rule_entries(self) -> list[tuple[str, dict, dict]]:
        return [(f.rel, g, r) for f in self.valid_rules for g in f.groups
                for r in g.get("rules") or [] if isinstance(r, dict)]

    def replay_rules(self) -> list[RuleFile]:
        """The loadable rule files promtool replays: recording rules that write a reserved or
        input series (the catalog's ``reserved_records`` tamper probe) are left out. They are
        tamper, found statically (:func:`grader.preservation.tamper_findings`); replaying them
        would only make promtool fail on duplicate samples, where the grade must say tamper."""
        reserved = {str(name) for check in self.catalog.get("checks", [])
                    if isinstance(check.get("probe"), dict)
                    and check["probe"].get("what") == "reserved_records"
                    for name in check["probe"].get("names") or []}
        kept = []
        for rule_file in self.valid_rules:
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

    def run_promql(self, checks: list[dict], reference_names: set[str]) -> dict[str, dict]:
        """Run every promql probe in the integrated and (if asked) reference variants."""
        started = time.perf_counter()
        series = self.catalog.get("input_series", {})
        interval = self.catalog.get("evaluation_interval", "1m")
        by_scenario: dict[str, list[dict]] = {}
        for check in checks:
            by_scenario.setdefault(check["probe"]["scenario"], []).append(check)
        alert_witnesses: dict[str, set[tuple[str, str]]] = {}
        for check in self.catalog["checks"]:
            probe = check["probe"]
            if probe["type"] == "annotation":
                alert_witnesses.setdefault(probe["scenario"], set()).add(
                    (probe["alert"], probe["eval_time"]))
                by_scenario.setdefault(probe["scenario"], [])

        def groups_for(selected, with_alert_witnesses=True):
            groups = []
            for scenario_id in sorted(selected):
                witnesses = alert_witnesses.get(scenario_id, ()) if with_alert_witnesses else ()
                tests = []
                for check in selected[scenario_id]:
                    probe = check["probe"]
                    tests.append({"expr": promtool.tagged(probe["expr"], "check", check["id"]),
                                  "eval_time": probe["eval_time"],
                                  "exp_samples": probe["exp_samples"]})
                    if probe["exp_samples"]:  # a check expecting nothing shows its own got
                        tests.append({"expr": promtool.tagged(_witness(probe), "witness", check["id"]),
                                      "eval_time": probe["eval_time"], "exp_samples": []})
                groups.append({"name": scenario_id, "input_series": series.get(scenario_id, []),
                               "promql_expr_test": tests,
                               "alert_rule_test": [
                                   {"eval_time": t, "alertname": a, "exp_alerts": []}
                                   for a, t in sorted(witnesses)]})
            return groups

        replayed = self.replay_rules()
        variants = {"integrated": (replayed, by_scenario)}
        if reference_names:
            ref_checks = {sid: [c for c in cs if c.get("_reference")] for sid, cs in by_scenario.items()}
            ref_checks = {sid: cs for sid, cs in ref_checks.items() if cs}
            ref_file = load_rule_file(self.task_dir / "tests", self.task_dir / "tests" / "reference_records.yml")
            stripped = []
            for rule_file in replayed:
                text = _strip_records(rule_file, reference_names)
                # _prune rebuilds the text from the groups: strip them too, or the
                # agent's records come back beside the reference ones
                stripped.append(RuleFile(rule_file.rel, groups=yaml.safe_load(text)["groups"],
                                         text=text))
            variants["reference"] = (stripped + [ref_file], ref_checks)

        jobs = []
        for variant, (files, selected) in variants.items():
            if not selected:
                continue
            groups = groups_for(selected, variant == "integrated")
            for part, chunk in enumerate(_chunks(groups, PROMTOOL_WORKERS)):
                cdir = self.tmp / variant / f"part-{part}"
                (cdir / "rules").mkdir(parents=True, exist_ok=True)
                exprs = [t["expr"] for g in chunk for t in g["promql_expr_test"]]
                exprs += [t["alertname"] for g in chunk for t in g.get("alert_rule_test", [])]
                # a check reading ALERTS{alertname="X"} needs X's group, not every alerting group
                chunk_files = _prune(files, _names_read(exprs) - {"ALERTS", "ALERTS_FOR_STATE"})
                paths = []
                for index, rule_file in enumerate(chunk_files):
                    path = cdir / "rules" / f"{index:03d}.yml"
                    path.write_text(rule_file.text, encoding="utf-8")
                    paths.append(path)
                text = promtool.test_file([p.relative_to(cdir) for p in paths],
                                          group_eval_order(chunk_files), chunk, interval)
                test_path = cdir / "test.yml"
                test_path.write_text(text, encoding="utf-8")
                jobs.append((variant, test_path))
        with ThreadPoolExecutor(max_workers=PROMTOOL_WORKERS) as pool:
            outcomes = list(pool.map(lambda job: _cached_run(job[1]), jobs))
        results: dict[str, dict] = {variant: {} for variant, _ in jobs}
        for (variant, _), failures in zip(jobs, outcomes):
            for failure in failures:
                entry = results[variant].setdefault(failure.check_id, {})
                entry[failure.kind] = failure
        self.timings["promtool_s"] = time.perf_counter() - started
        return results


PROMTOOL_WORKERS = 2
"""promtool processes run at once: the scenarios are split between them (one core each)."""


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


_PROMTOOL_CACHE: dict[str, list] = {}
_PROMTOOL_CACHE_SIZE = 256


def _cached_run(test_path: Path) -> list:
    """promtool.run_tests memoized on the content of the test file and its rule files.

    Per-step grading re-grades workspaces whose rules did not change (a step that edits
    only alertmanager.yml): the replay is then served from memory.
    """
    digest = hashlib.sha256()
    text = test_path.read_text(encoding="utf-8")
    digest.update(text.replace(str(test_path.parent), "").encode())
    for path in sorted((test_path.parent / "rules").glob("*.yml")):  # the files it names
        digest.update(path.name.encode() + b"\0" + path.read_bytes() + b"\0")
    key = digest.hexdigest()
    if key not in _PROMTOOL_CACHE:
        if len(_PROMTOOL_CACHE) >= _PROMTOOL_CACHE_SIZE:
            _PROMTOOL_CACHE.pop(next(iter(_PROMTOOL_CACHE)))
        _PROMTOOL_CACHE[key] = promtool.run_tests(test_path)
    return _PROMTOOL_CACHE[key]


def _witness(probe: dict) -> str:
    """An expression whose samples explain a failure: the alert's series, or the record's."""
    if probe.get("witness"):
        return probe["witness"]
    expr = probe["expr"]
    alert = re.search(r'ALERTS\{alertname="([^"]+)"', expr)
    if alert:
        return f'ALERTS{{alertname="{alert.group(1)}"}}'
    record = re.search(r"([a-zA-Z_:][a-zA-Z0-9_:]*\{[^}]*\})", expr.replace("count(", "", 1))
    return record.group(1) if record else expr


def _chain_labels(probe: dict, rules: list[dict]) -> dict[str, str]:
    """The labels an alert of the agent's rule carries: its static labels, alertname, service."""
    rule = next((r for r in rules if r.get("alert") == probe["alert"]), {})
    labels = {str(k): str(v) for k, v in (rule.get("labels") or {}).items()}
    labels["alertname"] = probe["alert"]
    labels.setdefault("service", probe["service"])
    return labels


def _fmt_labels(labels: dict[str, str], drop=("__name__", "alertname", "alertstate")) -> str:
    return "{" + ", ".join(f"{k}={v}" for k, v in sorted(labels.items()) if k not in drop) + "}"


def _promql_detail(check: dict, entry: dict) -> str:
    """Expected vs got, in words, from a failing check and its witness."""
    probe = check["probe"]
    at = f"at {probe['eval_time']} ({probe['scenario']})"
    witness = promtool.parse_samples(entry["witness"].got) if "witness" in entry else []
    firing = [labels for labels, _ in witness if labels.get("alertstate", "firing") == "firing"]
    pending = [labels for labels, _ in witness if labels.get("alertstate") == "pending"]
    family = check["family"]
    alert = re.search(r'alertname="([^"]+)"', probe["expr"])
    name = alert.group(1) if alert else ""
    if family in ("Silent",) or (family == "Timing" and not probe["exp_samples"]):
        got = promtool.parse_samples(entry["check"].got)
        return (f"expected no firing {name} {at}; got {len(got)} firing: "
                + ", ".join(_fmt_labels(lb) for lb, _ in got[:5]))
    if family in ("Fire", "Timing"):
        if firing:
            return (f"expected {name} firing for {_service(probe)} {at}; got it firing only with "
                    + ", ".join(_fmt_labels(lb) for lb in firing[:3]))
        if pending:
            return f"expected {name} firing {at}; got it pending (its for has not elapsed)"
        return f"expected {name} firing for {_service(probe)} {at}; got no firing alert"
    if family == "Dup":
        if not firing:
            return f"expected exactly 1 firing {name} for {_service(probe)} {at}; got none"
        varying = sorted(k for k in set().union(*firing)
                         if len({lb.get(k) for lb in firing}) > 1)
        return (f"expected exactly 1 firing {name} for {_service(probe)} {at}; got {len(firing)}, "
                f"distinct by {', '.join(varying) or 'nothing visible'} "
                f"({'; '.join(_fmt_labels(lb) for lb in firing[:4])})")
    if family == "Label":
        want = dict(re.findall(r'(\w+)="([^"]*)"', probe["expr"]))
        for key in ("alertname", "alertstate", "service"):
            want.pop(key, None)
        if not firing:
            return f"expected {name} firing {at} to read its labels; got no firing alert"
        (key, value), = want.items()
        got = sorted({lb.get(key, "") for lb in firing})
        shown = ", ".join(f"{key}={g}" if g else f"no {key} label" for g in got)
        return f"expected label {key}={value} on the firing {name}; got {shown}"
    if family in ("Value", "Cardinality"):
        values = [f"{_fmt_labels(lb)} = {v}" for lb, v in witness]
        expected = probe.get("expected_value")
        if family == "Cardinality":
            want = "exactly one series"
        elif isinstance(expected, list):
            want = f"a value in [{expected[0]:.6g}, {expected[1]:.6g}]"
        elif isinstance(expected, (int, float)):
            want = f"{expected:.6g}"
        elif expected == "NaN":
            want = "NaN (0/0)"
        else:  # a check without a stated value: show promtool's own exp/got
            return (f"expected {probe['expr']} {at} to give {entry['check'].exp}; "
                    f"got {entry['check'].got}")
        record = _witness(probe)
        return (f"expected {record} for {_service(probe)} {at} to be {want}; got "
                + ("; ".join(values[:5]) if values else "no series"))
    return f"expected {entry['check'].exp} {at}; got {entry['check'].got}"


def _service(probe: dict) -> str:
    match = re.search(r'service="([^"]+)"', probe["expr"])
    return f"service={match.group(1)}" if match else "the service"


def _quote(text: str) -> str:
    return "'" + str(text).replace("'", "''") + "'"


def _reproduce_promql(check: dict, catalog: dict) -> str:
    """A promtool test file that shows this check's result by hand (input series, time, expr)."""
    probe = check["probe"]
    interval = catalog.get("evaluation_interval", "1m")
    lines = ["# promtool test rules repro.yml  (next to the workspace's rules/)",
             "rule_files: ['rules/*.yml']", f"evaluation_interval: {interval}", "tests:",
             f"- interval: {interval}", "  input_series:"]
    for item in catalog.get("input_series", {}).get(probe["scenario"], []):
        lines.append(f"  - series: {_quote(item['series'])}")
        lines.append(f"    values: {_quote(item['values'])}")
    expected = ", ".join(f"{{labels: {_quote(e['labels'])}, value: {e['value']}}}"
                         for e in probe["exp_samples"])
    lines += ["  promql_expr_test:", f"  - expr: {_quote(probe['expr'])}",
              f"    eval_time: {probe['eval_time']}", f"    exp_samples: [{expected}]"]
    return "\n".join(lines) + "\n"


def grade(task_dir: str | Path, workspace: str | Path | None = None, *,
          pristine: dict[str, float] | None = None, keep: Path | None = None) -> dict:
    """Grade ``workspace`` (default: the task's pristine repo) against the task's catalog.

    ``pristine`` maps requirement id -> q of the pristine repo (computed, and cached per
    task content, when not given). ``keep`` copies the grader's temporary files (rule
    files, promtool test files) there before they are removed. Returns the GradeResult dict of docs/formats.md.

    Raises:
        BadInput: the task folder or workspace is missing or the catalog is malformed.
        promtool.GraderError: promtool failed in a way no check explains.
    """
    started = time.perf_counter()
    task_dir = Path(task_dir).resolve()
    catalog = load_catalog(task_dir)
    root = Path(workspace).resolve() if workspace else task_dir / "environment" / "monitoring"
    if not root.is_dir():
        raise BadInput(root, "workspace is not a directory")
    ws = load_workspace(root)
    fingerprint = task_fingerprint(task_dir)  # once a grade: it reads the pristine repo
    if pristine is None:
        pristine = pristine_scores(task_dir, fingerprint)
    with tempfile.TemporaryDirectory(prefix="alertforge-grade-") as tmp:
        run = _Run(task_dir, catalog, ws, Path(tmp))
        run.fingerprint = fingerprint
        run.check_syntax()
        result = _evaluate(run, catalog, pristine)
        if keep is not None:  # the benchmark replays the generated files to measure the floor
            shutil.copytree(tmp, keep, dirs_exist_ok=True)
    result["timings"] = {k: round(v, 4) for k, v in run.timings.items()}
    result["timings"]["total_s"] = round(time.perf_counter() - started, 4)
    return checked(result)


_PRISTINE_CACHE: dict[str, dict[str, float]] = {}


def pristine_scores(task_dir: Path, key: str | None = None) -> dict[str, float]:
    """q of every requirement on the task's pristine repo (memoized per task content).

    ``key`` is the task's :func:`task_fingerprint` when the caller already has it.
    """
    key = key or task_fingerprint(task_dir)
    if key not in _PRISTINE_CACHE:
        result = grade(task_dir, None, pristine={})
        _PRISTINE_CACHE[key] = {r["id"]: r["q"] for r in result["requirements"]}
    return _PRISTINE_CACHE[key]


def _reference_needed(run: _Run, reqs: dict, reference_reqs: set[str], names: set[str]) -> bool:
    """Whether the reference-records replay can differ from the integrated one.

    It cannot when no burn alert under test exists (q is 0 either way) or when the
    workspace's recording rules of those names equal the reference ones as parsed rules.
    """
    rules = [r for _, _, r in run.rule_entries()]
    alerts = {r.get("alert") for r in rules}
    if not any(reqs[rid]["targets"].get("alert") in alerts for rid in reference_reqs):
        return False
    ref = load_rule_file(run.task_dir / "tests", run.task_dir / "tests" / "reference_records.yml")
    theirs = sorted(normalize_rule(r) for r in rules if r.get("record") in names)
    ours = sorted(normalize_rule(r) for g in ref.groups for r in g.get("rules") or []
                  if r.get("record") in names)
    return theirs != ours


_PRISTINE_GROUPS: dict[str, dict] = {}


def _pristine_groups(task_dir: Path, key: str) -> dict:
    """Rule groups of the task's pristine repo by name (memoized per task content ``key``)."""
    if key not in _PRISTINE_GROUPS:
        groups = {}
        for rule_file in load_workspace(task_dir / "environment" / "monitoring").rule_files:
            for group in rule_file.groups:
                groups[group.get("name")] = group
        _PRISTINE_GROUPS[key] = groups
    return _PRISTINE_GROUPS[key]


def _evaluate(run: _Run, catalog: dict, pristine: dict[str, float]) -> dict:
    checks = catalog["checks"]
    reqs = {r["id"]: r for r in catalog.get("requirements", [])}
    reference_names: set[str] = set()
    reference_reqs = {rid for rid, r in reqs.items() if r.get("targets", {}).get("reference_records")}
    for rid in reference_reqs:
        reference_names |= set(reqs[rid]["targets"].get("records", {}).values())
    promql_checks = []
    for check in checks:
        if check["probe"]["type"] == "promql":
            check = dict(check)
            check["_reference"] = check["req"] in reference_reqs
            promql_checks.append(check)
    if reference_names and not _reference_needed(run, reqs, reference_reqs, reference_names):
        reference_names = set()
    promql_results = run.run_promql(promql_checks, reference_names) if promql_checks else {}
    if "reference" not in promql_results:
        promql_results["reference"] = promql_results.get("integrated", {})

    rules = [r for _, _, r in run.rule_entries()]
    alert_names = [r.get("alert") for r in rules if r.get("alert")]
    am = run.ws.alertmanager if run.am_path else None

    route_checks = [c for c in checks if c["probe"]["type"] == "route"
                    or (c["probe"]["type"] == "route_chain"
                        and any(r.get("alert") == c["probe"]["alert"] for r in rules))]
    resolved: list[list[str] | None] = [None] * len(route_checks)
    route_started = time.perf_counter()
    if run.am_path and route_checks:
        label_sets = [c["probe"]["labels"] if c["probe"]["type"] == "route"
                      else _chain_labels(c["probe"], rules) for c in route_checks]
        try:
            resolved = routing.resolve_many(run.am_path, label_sets)
        except routing.RoutingError as err:
            run.am_error = str(err)
    run.timings["amtool_s"] = time.perf_counter() - route_started
    routes = {c["id"]: r for c, r in zip(route_checks, resolved)}

    inhibit_rules, inhibit_error = [], None
    if am is not None:
        try:
            inhibit_rules = inhibition.inhibit_rules_of(am)
        except (inhibition.InhibitConfigError, ValueError) as err:
            inhibit_error = str(err)

    pristine_groups = _pristine_groups(run.task_dir, run.fingerprint)

    results = []
    variant_pass: dict[str, dict[str, float]] = {"integrated": {}, "reference": {}}
    for check in checks:
        probe = check["probe"]
        kind = probe["type"]
        passed: bool | None
        detail, score, reproduce = "", None, ""
        if kind == "promql":
            for variant in ("integrated", "reference"):
                entry = promql_results.get(variant, {}).get(check["id"], {})
                variant_pass[variant][check["id"]] = 0.0 if "check" in entry else 1.0
            entry = promql_results.get("integrated", {}).get(check["id"], {})
            passed = "check" not in entry
            if not passed:
                try:
                    detail = _promql_detail(check, entry)
                except (KeyError, ValueError, TypeError, IndexError):  # an unusual catalog check
                    detail = (f"expected {entry['check'].exp} at {check['probe']['eval_time']}; "
                              f"got {entry['check'].got}")
            reproduce = _reproduce_promql(check, catalog)
        elif kind == "static_label":
            defined = [r for r in rules if r.get("alert") == probe["alert"]]
            got = sorted({str((r.get("labels") or {}).get(probe["name"], "")) for r in defined})
            passed = bool(defined) and got == [probe["value"]]
            if not defined:
                detail = f"expected rule {probe['alert']} with label {probe['name']}: {probe['value']}; got no such rule"
            elif not passed:
                shown = ", ".join(g or "(missing)" for g in got)
                detail = f"expected label {probe['name']}: {probe['value']} on rule {probe['alert']}; got {shown}"
        elif kind == "annotation":
            key = f"{probe['alert']}@{int(probe['eval_time'].rstrip('m'))}m"
            failure = promql_results.get("integrated", {}).get(key, {}).get("alert")
            alerts = promtool.parse_alerts(failure.got) if failure else []
            mine = [ann for labels, ann in alerts if labels.get("service") == probe["service"]]
            at = f"at {probe['eval_time']} ({probe['scenario']})"
            if not mine:
                passed = False
                detail = f"expected {probe['alert']} firing for service={probe['service']} {at} to read its annotations; got none firing"
            else:
                value = mine[0].get(probe["key"])
                expect = probe["expect"]
                if value is None or not value.strip():
                    passed, detail = False, f"expected annotation {probe['key']}; got none"
                elif "equals" in expect:
                    passed = value == expect["equals"]
                    detail = "" if passed else f"expected {probe['key']}={expect['equals']}; got {value}"
                elif "contains" in expect:
                    passed = expect["contains"] in value and "{{" not in value
                    detail = "" if passed else (f"expected {probe['key']} to resolve to text naming "
                                                f"{expect['contains']}; got {value!r}")
                else:
                    passed = True
            reproduce = (f"# promtool alert_rule_test: eval_time {probe['eval_time']}, alertname "
                         f"{probe['alert']}, scenario {probe['scenario']} (prints the annotations)")
        elif kind == "route_chain":
            defined = [r for r in rules if r.get("alert") == probe["alert"]]
            got = routes.get(check["id"])
            if not defined:
                passed, score = False, 0.0
                detail = f"expected rule {probe['alert']} to route its labels; got no such rule"
            elif got is None:
                passed, score = False, 0.0
                detail = f"alertmanager.yml does not load: {run.am_error}"
            else:
                expected, got_set = set(probe["expect"]), set(got)
                score = reward.jaccard(expected, got_set)
                passed = score == 1.0
                if not passed:
                    detail = (f"routing the labels {probe['alert']} carries "
                              f"{_fmt_labels(_chain_labels(probe, rules), drop=())}: expected "
                              f"{sorted(expected)}; got {sorted(got_set)}")
            reproduce = "amtool config routes test --config.file=alertmanager/alertmanager.yml " + \
                " ".join(f"{k}={v}" for k, v in sorted(_chain_labels(probe, rules).items()))
        elif kind == "rule_count":
            count = alert_names.count(probe["name"])
            passed = count == probe["expect"]
            if not passed:
                detail = (f"expected {probe['name']} defined {probe['expect']} time(s) in loadable "
                          f"rule files; got {count}")
        elif kind == "route":
            got = routes.get(check["id"])
            reproduce = "amtool config routes test --config.file=alertmanager/alertmanager.yml " + \
                " ".join(f"{k}={v}" for k, v in sorted(probe["labels"].items()))
            if got is None:
                passed, score = False, 0.0
                detail = f"alertmanager.yml does not load: {run.am_error}"
            elif "expect" in probe:
                expected, got_set = set(probe["expect"]), set(got)
                score = reward.jaccard(expected, got_set)
                passed = score == 1.0
                if not passed:
                    detail = (f"expected receivers {sorted(expected)}; got {sorted(got_set)} "
                              f"(missing {sorted(expected - got_set)}, extra {sorted(got_set - expected)})")
            else:
                bad = sorted(set(probe["forbid"]) & set(got))
                passed = not bad
                score = 1.0 if passed else 0.0
                if bad:
                    detail = f"expected none of {probe['forbid']}; got {sorted(set(got))}"
        elif kind == "receiver":
            name = probe["name"]
            receivers = am.get("receivers") if isinstance(am, dict) else None
            found = [r for r in receivers or [] if isinstance(r, dict) and r.get("name") == name]
            configs = [c for key, value in (found[0].items() if found else [])
                       if key.endswith("_configs") and isinstance(value, list) for c in value if c]
            passed = bool(configs)
            score = 1.0 if passed else 0.0
            reproduce = "amtool check-config alertmanager/alertmanager.yml"
            if am is None:
                detail = f"alertmanager.yml does not load: {run.am_error}"
            elif not found:
                detail = f"expected a receiver named {name}; there is none"
            elif not configs:
                detail = f"expected receiver {name} to have an integration (a *_configs entry); it has none, so its pages go nowhere"
        elif kind == "inhibit":
            if am is None or inhibit_error:
                passed = False
                detail = f"inhibit rules cannot be read: {inhibit_error or run.am_error}"
            else:
                muted = inhibition.inhibited_by(inhibit_rules, probe["alerts"])[probe["target"]]
                passed = (muted is not None) == probe["expect_muted"]
                if not passed:
                    target = probe["alerts"][probe["target"]]
                    if probe["expect_muted"]:
                        detail = (f"expected {target['alertname']} muted while "
                                  f"{probe['alerts'][0]['alertname']} fires; got not muted")
                    else:
                        rule_index, source = muted
                        detail = (f"expected {target['alertname']} {_fmt_labels(target)} not muted; "
                                  f"got muted by inhibit rule {rule_index + 1} "
                                  f"(source {probe['alerts'][source]['alertname']})")
            reproduce = "alerts: " + "; ".join(_fmt_labels(a, drop=()) for a in probe["alerts"])
        elif kind == "syntax":
            files = [e for e in run.syntax_errors
                     if (e["file"] == ALERTMANAGER_PATH) == (probe["what"] == "alertmanager")]
            passed = not files
            detail = "; ".join(f"{e['file']}: {e['message']}" for e in files)
            reproduce = ("amtool check-config alertmanager/alertmanager.yml"
                         if probe["what"] == "alertmanager" else "promtool check rules rules/*.yml")
        elif kind == "preserve":
            passed, detail = preserved(probe["what"], probe["item"], rules, am)
        elif kind == "tamper":
            found = tamper_findings(probe["what"], probe, run.rule_entries(), pristine_groups,
                                    run.ws.alertmanager,
                                    evaluation_interval=catalog.get("evaluation_interval", "1m"))
            passed = not found
            detail = "; ".join(found)
        else:
            raise BadInput(run.task_dir / "tests" / "checks.json", f"unknown probe type {kind!r}")
        item = {key: check[key] for key in ("id", "req", "family", "label", "note")}
        item.update(passed=passed, detail=detail, reproduce=reproduce)
        if score is not None:
            item["score"] = score
        results.append(item)

    return _score(run, catalog, results, variant_pass, alert_names, pristine)


def _score(run: _Run, catalog: dict, results: list[dict], variant_pass: dict,
           alert_names: list[str], pristine: dict[str, float]) -> dict:
    by_req: dict[str, list[dict]] = {}
    for item in results:
        if item["req"]:
            by_req.setdefault(item["req"], []).append(item)

    def values(items, families, variant=None):
        out = []
        for item in items:
            if item["family"] in families and item["passed"] is not None:
                if variant and item["id"] in variant_pass.get(variant, {}):
                    out.append(variant_pass[variant][item["id"]])
                else:
                    out.append(1.0 if item["passed"] else 0.0)
        return out

    requirements = []
    for req in catalog.get("requirements", []):
        items = by_req.get(req["id"], [])
        kind = req["kind"]
        if kind in ("alert", "repair"):
            name = req["targets"].get("alert")
            exists = name in alert_names

            def q_alert(variant, items=items, exists=exists):
                return reward.alert_q(exists, values(items, {"Dup"}, variant),
                                      values(items, {"Fire", "Timing"}, variant),
                                      values(items, {"Silent"}, variant),
                                      values(items, {"Label", "Annotation"}, variant))

            q = q_alert("integrated")
            if req["targets"].get("reference_records"):
                q = 0.5 * q + 0.5 * q_alert("reference")
        elif kind == "recording":
            q = reward.recording_q(values(items, {"Dup"}), values(items, {"Value", "Cardinality"}))
        elif kind == "route":
            pos = [i.get("score", 0.0) for i in items
                   if i["id"].split(".")[-1].startswith(("positive", "chain", "receiver"))]
            neg = [1.0 if i["passed"] else 0.0 for i in items if i["id"].split(".")[-1].startswith("negative")]
            q = reward.route_q(pos, neg)
        elif kind == "inhibit":
            def case(kind, items=items):
                return [1.0 if i["passed"] else 0.0 for i in items if f".{kind}." in i["id"]]

            q = reward.inhibit_q(case("suppressed"), case("not-suppressed"), case("bystander"))
        else:
            raise BadInput(run.task_dir / "tests" / "checks.json", f"unknown requirement kind {kind!r}")
        q = round(q, 6)
        q_p = pristine.get(req["id"], q) if pristine else q
        s = round(reward.normalized_score(q, q_p), 6) if pristine else 0.0
        requirements.append({"id": req["id"], "kind": kind, "weight": req["weight"], "q": q,
                             "q_pristine": q_p, "s": s})

    def rate(families):
        vals = [1.0 if i["passed"] else 0.0 for i in results
                if i["family"] in families and i["passed"] is not None]
        return round(reward.mean(vals), 6)

    preservation = rate({"Preservation"})
    syntax_ok = all(i["passed"] for i in results if i["family"] == "Syntax")
    tamper_found = any(not i["passed"] for i in results if i["family"] == "Tamper")
    scores = [r["s"] for r in requirements]
    progress = round(reward.progress([(r["weight"], r["s"]) for r in requirements], preservation), 6)
    value, solved = reward.reward(scores, preservation, syntax_ok, tamper_found, progress)

    def category(kinds):
        vals = [max(0.0, r["s"]) for r in requirements if r["kind"] in kinds]
        return round(reward.mean(vals), 6)

    keys = {
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
    tamper = [{"file": "", "message": i["detail"]} for i in results
              if i["family"] == "Tamper" and not i["passed"]]
    return {
        "version": RESULT_VERSION,
        "task_id": catalog.get("task_id"),
        "reward": keys["reward"],
        "keys": keys,
        "requirements": requirements,
        "checks": results,
        "syntax_errors": run.syntax_errors,
        "tamper": tamper,
    }


def check_states(result: dict) -> str:
    """The check-state string of a grade: one character per check, 1 pass, 0 fail, - n/a."""
    return "".join("-" if c["passed"] is None else ("1" if c["passed"] else "0")
                   for c in result["checks"])
