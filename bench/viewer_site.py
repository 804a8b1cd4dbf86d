"""The runs of an exported site the viewer benchmark opens, and their figures over several loads.

A site is what ``alertforge export`` / ``alertforge demo --no-serve`` writes (docs/formats.md
"Site data"). Its runs are read from ``data/index.json``'s ``runs`` or, when the index has
none, from the ``data/runs-index/`` shards home.json names (fields + rows). A run's checks are
its task's catalog (``data/tasks/<task>.json`` ``checks``, else the length of its first step's
check string); its bytes are those of every data file named for the run or its task (the run
file, its head, the task file and any per-task file beside it).
"""

from __future__ import annotations

import json
import statistics
import sys
import urllib.parse
import urllib.request
from pathlib import Path

from viewer_measure import Load, MeasureError, load_page, load_run, switch_times

DATA_FOLDERS = ("runs", "run-heads", "tasks", "task-runs")


def _index_rows(site: Path) -> list[dict]:
    data = site / "data"
    index = data / "index.json"
    if index.is_file():
        runs = json.loads(index.read_text()).get("runs")
        if isinstance(runs, list) and runs:
            return runs
    home = json.loads((data / "home.json").read_text())
    rows = []
    for shard in home.get("shards") or sorted(p.name for p in (data / "runs-index").glob("*.json")):
        name = shard if isinstance(shard, str) else shard.get("file") or shard.get("path")
        document = json.loads((data / "runs-index" / Path(name).name).read_text())
        rows += [dict(zip(document["fields"], row)) for row in document["rows"]]
    return rows


def _named_files(site: Path, name: str) -> list[Path]:
    found = []
    for folder in DATA_FOLDERS:
        base = site / "data" / folder
        found += [p for p in base.glob(f"{name}.*") if p.is_file()]
        if (base / name).is_dir():
            found += [p for p in (base / name).rglob("*") if p.is_file()]
    return found


def _check_count(site: Path, row: dict) -> int:
    task = site / "data" / "tasks" / f"{row['task_id']}.json"
    if task.is_file():
        checks = json.loads(task.read_text()).get("checks")
        if isinstance(checks, list):
            return len(checks)
    run = site / "data" / "runs" / f"{row['run_id']}.json"
    steps = json.loads(run.read_text()).get("steps") if run.is_file() else None
    return len((steps or [{}])[0].get("checks") or "")


def site_runs(site: Path) -> list[dict]:
    """Every run of the site: ``{"run_id", "kind", "task_id", "steps", "checks", "bytes"}``.

    ``bytes`` is the size of the data files named for the run or its task (see the module
    docstring). Raises OSError / ValueError when the site's data files are missing or not JSON.
    """
    rows = []
    task_bytes: dict[str, int] = {}
    for row in _index_rows(site):
        task_id = row["task_id"]
        if task_id not in task_bytes:
            task_bytes[task_id] = sum(p.stat().st_size for p in _named_files(site, task_id))
        own = sum(p.stat().st_size for p in _named_files(site, row["run_id"]))
        rows.append({"run_id": row["run_id"], "kind": row["kind"], "task_id": task_id, "steps": row["steps"],
                     "checks": _check_count(site, row) if row["kind"] != "episode" else 0,
                     "bytes": own + task_bytes[task_id]})
    return rows


def pick_runs(rows: list[dict], named: tuple[str, ...] = ()) -> dict[str, dict]:
    """The runs issue 19 names: the largest alerting runs by steps, by checks and by bytes and
    the largest episode runs (by bytes, by steps), then the ``named`` run ids; label -> row, one
    label per run ("alerting, most steps, most bytes" when one run is both).

    Raises ValueError naming a ``named`` run the site does not have.
    """
    alerting = [r for r in rows if r["kind"] != "episode"]
    episodes = [r for r in rows if r["kind"] == "episode"]
    picks = [("alerting", "steps", alerting, ("steps", "bytes")), ("alerting", "checks", alerting, ("checks", "bytes")),
             ("alerting", "bytes", alerting, ("bytes", "steps")), ("episode", "bytes", episodes, ("bytes", "steps")),
             ("episode", "steps", episodes, ("steps", "bytes"))]
    labels: dict[str, list[str]] = {}
    by_id = {r["run_id"]: r for r in rows}
    for kind, figure, candidates, keys in picks:
        if candidates:
            best = max(candidates, key=lambda r: tuple(r[k] for k in keys) + (r["run_id"],))
            labels.setdefault(best["run_id"], [kind]).append(f"most {figure}")
    for run_id in named:
        if run_id not in by_id:
            raise ValueError(f"--run {run_id}: no such run in the site")
        labels.setdefault(run_id, ["named"])
    return {", ".join(parts): by_id[run_id] for run_id, parts in labels.items()}


def first_write_step(site: Path, run_id: str) -> int:
    """The first step of the run whose diff has a hunk (from ``data/runs/<id>.json``), else 1:
    the deep link that shows the DOM contract a tool call, its output and a diff at once."""
    run = site / "data" / "runs" / f"{run_id}.json"
    steps = json.loads(run.read_text()).get("steps") if run.is_file() else None
    for number, step in enumerate(steps or []):
        diff = step.get("diff") if isinstance(step, dict) else None
        if isinstance(diff, dict) and diff.get("hunks"):
            return number
    return 1


def distribution(values: list[float]) -> dict:
    """``{"min", "median", "p90", "max"}`` of ``values`` (p90 nearest rank); empty: all None."""
    if not values:
        return {"min": None, "median": None, "p90": None, "max": None}
    ordered = sorted(values)
    return {"min": ordered[0], "median": statistics.median(ordered), "p90": ordered[int(0.9 * (len(ordered) - 1))],
            "max": ordered[-1]}


def run_url(base: str, run_id: str, step: int | None = None) -> str:
    """The run view's address for ``run_id`` (at ``step``, when given) on a site served at
    ``base`` (ends with /): the run's own page (``runs/<id>.html``, exporter/run_page.py, what
    the home page links to) when the site has it (asked with a HEAD request), else
    ``run.html?run=<id>`` (a site exported before them)."""
    own = f"{base}runs/{urllib.parse.quote(run_id)}.html"
    try:
        with urllib.request.urlopen(urllib.request.Request(own, method="HEAD"), timeout=10) as answer:
            found = answer.status == 200
    except OSError:
        found = False
    if found:
        return own + ("" if step is None else f"?step={step}")
    return f"{base}run.html?run={run_id}" + ("" if step is None else f"&step={step}")


def measure_run(page, base: str, run_id: str, loads: int, switches: int, step: int | None = None) -> dict:
    """Load one run ``loads`` times (the first until the network is quiet), then switch steps;
    ``step``: open that step (a deep link, ``&step=``) instead of the run's start.

    Returns the figures (ms medians over the loads; bytes/requests of the median load) and
    ``problems``: the DOM contract's failures at the mark, named per load. Raises MeasureError.
    """
    results: list[Load] = []
    problems: list[str] = []
    for number in range(loads):
        load, found = load_run(page, base, run_url(base, run_id, step), quiet=number == 0)
        results.append(load)
        problems += [f"load {number + 1}: {p}" for p in found]
    timed = [r for r in results if r.mark_ms is not None]
    figures: dict = {"run_id": run_id, "loads": loads, "problems": problems}
    if not timed:
        raise MeasureError(f"{run_id}: the mark first-step-rendered was never set ({'; '.join(problems)})")
    middle = sorted(timed, key=lambda r: r.mark_ms)[(len(timed) - 1) // 2]
    figures.update({
        "first_step_ms": statistics.median(r.mark_ms for r in timed),
        "first_step_runs_ms": [r.mark_ms for r in results],
        "first_paint_ms": statistics.median(r.painted_ms for r in timed) if all(r.painted_ms for r in timed) else None,
        "requests_before": middle.requests, "bytes_before": middle.bytes, "decoded_before": middle.decoded,
        "requests_started_before": middle.requests_started, "files_before": middle.files_before,
        "requests_all": results[0].requests_all, "bytes_all": results[0].bytes_all, "phases": middle.phases,
        "contract_checked": middle.checked,
    })
    if switches:
        figures.update(switch_times(page, switches))
    return figures


def measure_pages(page, base: str, site: Path) -> dict:
    """The home page and, when the site has one, the gallery index: :func:`load_page` figures."""
    pages = {"home": load_page(page, base, base)}
    if (site / "gallery" / "index.html").is_file():
        pages["gallery"] = load_page(page, base, f"{base}gallery/index.html")
    return pages


def measure_all(page, base: str, rows: list[dict], loads: int) -> dict:
    """Every run (no step switches): the per-run figures and their distributions.

    Returns ``{"runs": {run_id: figures}, "distribution": {figure: distribution}, "problems"}``;
    a run that cannot be measured is a problem, not an exception.
    """
    runs: dict[str, dict] = {}
    problems: list[str] = []
    for number, row in enumerate(rows, 1):
        try:
            figures = measure_run(page, base, row["run_id"], loads, 0)
        except MeasureError as error:
            problems.append(str(error))
            continue
        runs[row["run_id"]] = {k: figures[k] for k in ("first_step_ms", "first_paint_ms", "requests_before",
                                                        "bytes_before", "requests_all", "bytes_all")}
        runs[row["run_id"]]["kind"] = row["kind"]
        problems += [f"{row['run_id']}: {p}" for p in figures["problems"]]
        if number % 20 == 0:
            print(f"  ... {number}/{len(rows)} runs measured", file=sys.stderr, flush=True)
    spread = {}
    for kind in ("all", "alerting", "episode"):
        chosen = [f for f in runs.values() if kind == "all" or f["kind"] == kind]
        spread[kind] = {name: distribution([f[name] for f in chosen if f[name] is not None])
                        for name in ("bytes_before", "requests_before", "first_step_ms", "bytes_all", "requests_all")}
        spread[kind]["runs"] = len(chosen)
    return {"runs": runs, "distribution": spread, "problems": problems}
