"""Benchmark: the viewer's first paint and step switch on real exported runs and on generated ones.

Serves a site on 127.0.0.1 and drives Debian's Chromium with Playwright (the test suite's flags,
the HTTP cache disabled): see bench/viewer_measure.py for what is counted and how.

Modes (any together):
- ``--site DIR`` an exported site (``alertforge demo --no-serve``'s space/): the largest alerting
  runs by steps, by checks and by bytes and the largest episode runs (bytes and requests before
  the run view's ``first-step-rendered`` mark, time to it: the median of ``--loads`` loads, step
  switch median and p95; "first step settled" (bench/viewer_settle.py); the same load figures opened at the run's first step with a diff too,
  ``&step=K``, so the DOM contract sees a tool call, its output and a diff), the home page and the gallery index (bytes and requests until the
  network is quiet and before their first paint), and each ``--run ID``; ``--all-runs`` also every run of the site
  (min/median/p90/max of those figures over all runs, ``--all-loads`` loads each, no switches).
- ``--generated`` (the default when no other mode is given): a generated 1,000-step run with
  200 checks in a 1,000-run site: home bytes, first step, step switch (today's output).
- ``--big-site N``: N runs copied from ``--sample-from`` (real run folders) with distinct
  content, exported (export time, site size per run) and measured like ``--site``.
- ``--before OLD --site NEW --run ID...`` (alone): each run's step switch on both sites in
  ``--rounds`` alternating pairs (bench/viewer_ab.py), the ratio now / before of each pair and
  their median: the way to compare step switches, which move more between sittings than between
  versions; then "first step settled" (bench/viewer_settle.py: the first frame presented after
  the mark, traced, with its style and layout time) in as many alternating pairs, its ratios'
  medians and spreads, and the settled time net of the navigation floor. With ``--all-runs``: every run of NEW also loaded ``--all-loads`` times on each site,
  alternating, and the distribution of the per-run ratios of first-step times. OLD is a folder
  (served by this checkout) or the URL of a server already serving it (its own version's).
  ``--write-generated DIR`` writes the generated runs (``DIR/runs``) and stops, so two versions
  can export the same ones (then ``--run bench-big``).

At the mark, the step's tool call, arguments, output, diff rows and the visible check labels
(episodes: the action's result and the board) must be in the DOM; a run whose mark fires
without them is named and the bench exits 1. Speed is printed, never asserted. ``--json OUT``
writes every figure; ``--baseline FILE`` (an earlier ``--json``) prints now/before ratios.
Targets (issue 19): before the first step <= 100 kB and <= 6 requests, home <= 300 kB.

Usage: .venv/bin/python bench/viewer.py [--site DIR [--all-runs] [--run ID]...] [--generated] [--big-site N
--sample-from RUNS] [--loads 5] [--all-loads 3] [--switches 300] [--json OUT] [--baseline FILE]
       .venv/bin/python bench/viewer.py --before OLD_SITE|URL --site NEW_SITE [--run ID]... [--rounds 3] [--all-runs]
       .venv/bin/python bench/viewer.py --write-generated DIR
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from contextlib import contextmanager
from pathlib import Path

from big_site import write_runs
from viewer_ab import first_steps_paired, print_pairs, switch_pairs
from viewer_generated import BIG_RUN, generate
from viewer_measure import MeasureError, open_browser, open_page
from viewer_settle import print_settled, print_settled_pairs, settled_figures, settled_pairs
from viewer_site import (
    first_write_step,
    measure_all,
    measure_pages,
    measure_run,
    pick_runs,
    site_runs,
)

from contract.files import dump_json, write_atomic
from exporter.export import export_site
from exporter.serve import serve_in_background

OLD_PHASES = (("head-loaded", "head file loaded"), ("task-loaded", "task file loaded"),
              ("first-step-rendered", "first-step-rendered"), ("first-step-painted", "first step painted"),
              ("run-loaded", "run file loaded"), ("built-views", "views built"), ("built-matrix", "matrix built (ready)"))
RATIO_FIGURES = {"first_step_ms", "first_paint_ms", "switch_median_ms", "switch_p95_ms", "bytes_before",
                 "requests_before", "bytes_all", "requests_all", "min", "median", "p90", "max"}


@contextmanager
def served(site: Path):
    """The site served on 127.0.0.1 (exporter.serve) and a browser page: yields (base, page)."""
    from playwright.sync_api import sync_playwright

    server, base = serve_in_background(site, port=0, host="127.0.0.1")
    try:
        with sync_playwright() as playwright:
            browser, page = open_browser(playwright)
            try:
                yield base, page
            finally:
                browser.close()
    finally:
        server.shutdown()
        server.server_close()


def kb(value: float | None) -> str:
    return "-" if value is None else f"{value / 1000:,.1f} kB"


def ms(value: float | None) -> str:
    return "-" if value is None else f"{value:.0f} ms"


def print_run(label: str, row: dict, figures: dict) -> None:
    """Print one measured run's figures (see viewer_site.measure_run)."""
    print(f"{label}: {row['run_id']} ({row['kind']}, {row['steps']} steps, {row['checks']} checks, "
          f"{kb(row['bytes'])} of data files)")
    print(f"  before first-step-rendered: {kb(figures['bytes_before'])} in {figures['requests_before']} requests "
          f"({figures['requests_started_before']} started), {kb(figures.get('decoded_before'))} decoded   "
          f"target <= 100 kB decoded, <= 6 requests")
    print(f"  until the network is quiet: {kb(figures['bytes_all'])} in {figures['requests_all']} requests")
    print(f"  first step rendered {ms(figures['first_step_ms'])} (median of "
          f"{', '.join(ms(v) for v in figures['first_step_runs_ms'])}), painted {ms(figures['first_paint_ms'])}")
    if "switch_median_ms" in figures:
        print(f"  step switch: median {figures['switch_median_ms']:.2f} ms, p95 {figures['switch_p95_ms']:.2f} ms")
    checked = figures["contract_checked"]
    print(f"  at the mark, as when ready: step {checked['step']}, tool {checked['tool']!r}, output "
          f"{checked['output']} chars, {checked['diff_rows']} diff rows, {checked['visible_checks']} visible check "
          f"labels, episode result {checked['episode_result']} chars, {checked['episode_services']} services")
    print(f"  files before the mark: {', '.join(figures['files_before'])}")
    deep = figures["deep_link"]
    checked = deep["contract_checked"]
    print(f"  opened at step {deep['step']} (&step=, its first diff): first step rendered {ms(deep['first_step_ms'])}, before it "
          f"{kb(deep['bytes_before'])} in {deep['requests_before']} requests; at the mark, as when ready: tool "
          f"{checked['tool']!r}, arguments {checked['arguments']} chars, output {checked['output']} chars, "
          f"{checked['diff_rows']} diff rows, {checked['visible_checks']} visible check labels, episode result "
          f"{checked['episode_result']} chars")


def print_pages(pages: dict) -> None:
    """Print the home page's and the gallery's figures (see viewer_site.measure_pages)."""
    for name, figures in pages.items():
        firsts = "; ".join(f"before {point} ({ms(f['ms'])}): {kb(f['bytes'])} in {f['requests']} requests"
                           for point, f in figures["first_paint"].items())
        print(f"{name}: {kb(figures['bytes_all'])} in {figures['requests_all']} requests until the network is "
              f"quiet{'   target <= 300 kB' if name == 'home' else ''}; {firsts or 'no first paint recorded'}")


def print_distribution(all_runs: dict) -> None:
    """Print min/median/p90/max over every run, for all runs and per kind."""
    for kind, figures in all_runs["distribution"].items():
        print(f"all runs, {kind} ({figures['runs']} runs): min / median / p90 / max")
        for name, unit in (("bytes_before", kb), ("requests_before", str), ("first_step_ms", ms),
                           ("bytes_all", kb), ("requests_all", str)):
            spread = figures[name]
            print(f"  {name:16s} " + " / ".join("-" if spread[k] is None else unit(spread[k])
                                               for k in ("min", "median", "p90", "max")))


def measure_site(site: Path, loads: int, switches: int, all_loads: int, named: tuple[str, ...] = ()) -> dict:
    """Measure an exported site (the ``--site`` mode) and print as it goes; returns the figures.

    ``all_loads`` > 0: every run too, that many loads each. Raises ValueError when a ``named``
    run is not in the site."""
    rows = site_runs(site)
    chosen = pick_runs(rows, named)
    result: dict = {"path": str(site), "run_count": len(rows), "runs": {}, "problems": []}
    with served(site) as (base, page):
        result["pages"] = measure_pages(page, base, site)
        print_pages(result["pages"])
        for label, row in chosen.items():
            try:
                figures = measure_run(page, base, row["run_id"], loads, switches)
            except MeasureError as error:
                result["problems"].append(f"{label}: {error}")
                continue
            figures["row"] = row
            figures["settled"] = settled_figures(page, base, row["run_id"], loads)
            step = first_write_step(site, row["run_id"])
            figures["deep_link"] = {"step": step, **measure_run(page, base, row["run_id"], loads, 0, step=step)}
            result["runs"][label] = figures
            result["problems"] += [f"{row['run_id']}: {p}" for p in figures["problems"]]
            result["problems"] += [f"{row['run_id']} at step {step}: {p}" for p in figures["deep_link"]["problems"]]
            print_run(label, row, figures)
            print_settled(figures["settled"])
        if all_loads:
            started = time.perf_counter()
            result["all_runs"] = measure_all(page, base, rows, all_loads)
            result["all_runs"]["seconds"] = round(time.perf_counter() - started, 1)
            result["problems"] += result["all_runs"]["problems"]
            print_distribution(result["all_runs"])
            print(f"  ({len(rows)} runs x {all_loads} loads in {result['all_runs']['seconds']} s)")
    return result


def measure_generated(steps: int, checks: int, runs: int, switches: int, loads: int) -> dict:
    """The generated 1,000-step run (the default mode): generate, export, serve, measure, print."""
    with tempfile.TemporaryDirectory(prefix="alertforge-bench-viewer-") as temporary:
        root = Path(temporary)
        started = time.perf_counter()
        folder = generate(root, steps, checks, runs)
        generated = time.perf_counter()
        summary = export_site([folder], root / "site")
        exported = time.perf_counter()
        big = (root / "site" / "data" / "runs" / f"{BIG_RUN}.json").stat().st_size
        print(f"generated {runs} runs ({steps} steps x {checks} checks in the big one) "
              f"in {generated - started:.1f} s; exported {summary['files']} files, {summary['bytes']:,d} bytes "
              f"in {exported - generated:.1f} s; big run file {big:,d} bytes")
        with served(root / "site") as (base, page):
            pages = measure_pages(page, base, root / "site")
            figures = measure_run(page, base, BIG_RUN, loads, switches)
    home = pages["home"]
    print(f"home page, first load:  {home['bytes_all']:,d} bytes (encoded bodies, {home['requests_all']} requests)"
          "   target <= 300 kB")
    print(f"first step rendered:    {figures['first_step_ms']:.0f} ms (median of "
          f"{', '.join(f'{v:.0f}' for v in figures['first_step_runs_ms'])})   target <= 200 ms")
    print(f"  before it: {kb(figures['bytes_before'])} in {figures['requests_before']} requests")
    print("  phases of the median load (ms from navigation): " + ", ".join(
        f"{name} {figures['phases'][mark]:.0f}" for mark, name in OLD_PHASES if mark in figures["phases"]))
    print(f"step switch:            median {figures['switch_median_ms']:.2f} ms, p95 {figures['switch_p95_ms']:.2f} ms "
          f"(input event to step detail updated, layout included)   target <= 9 ms median")
    if figures["switch_js_median_ms"] is not None:
        print(f"step switch, JS only:   median {figures['switch_js_median_ms']:.2f} ms (nav.js step-switch measure)")
    return {"export_seconds": round(exported - generated, 1), "site_bytes": summary["bytes"], "home": home,
            "run": figures, "problems": [f"{BIG_RUN}: {p}" for p in figures["problems"]]}


def site_bytes(site: Path) -> tuple[int, int]:
    """``(files, bytes)`` of every file under ``site``."""
    sizes = [p.stat().st_size for p in site.rglob("*") if p.is_file()]
    return len(sizes), sum(sizes)


def measure_big_site(count: int, sample_from: Path, loads: int, switches: int) -> dict:
    """``count`` runs sampled from real ones, exported and measured like ``--site`` (no --all-runs)."""
    with tempfile.TemporaryDirectory(prefix="alertforge-bench-big-site-") as temporary:
        root = Path(temporary)
        started = time.perf_counter()
        write_runs(root / "runs", count, sample_from)  # bench/big_site.py
        written = time.perf_counter()
        export_site([root / "runs"], root / "site")
        exported = time.perf_counter()
        files, total = site_bytes(root / "site")
        print(f"big site: {count} runs written in {written - started:.1f} s (from {sample_from}), exported in "
              f"{exported - written:.1f} s: {files:,d} files, {total / 1e6:,.1f} MB, {kb(total / count)} per run")
        result = measure_site(root / "site", loads, switches, all_loads=0)
    result.update({"count": count, "export_seconds": round(exported - written, 1), "site_bytes": total,
                   "site_files": files, "bytes_per_run": round(total / count)})
    return result


def ratios(now, before, path: str = "") -> list[str]:
    """``path: now / before = ratio`` for every figure in RATIO_FIGURES both JSON trees hold at
    the same place (named runs only when they are the same run)."""
    lines = []
    if isinstance(now, dict) and isinstance(before, dict):
        if "run_id" in now and now.get("run_id") != before.get("run_id"):
            return []
        skipped = {"problems", "row", "first_step_runs_ms", "phases", "contract_checked"}
        if path.endswith("all_runs"):
            skipped.add("runs")  # one ratio per run of the site would bury the distribution's
        for key in now:
            if key in before and key not in skipped:
                lines += ratios(now[key], before[key], f"{path}.{key}" if path else key)
    elif (path.rsplit(".", 1)[-1] in RATIO_FIGURES and isinstance(now, (int, float))
          and isinstance(before, (int, float)) and before):
        lines.append(f"{path}: {now:,.2f} / {before:,.2f} = {now / before:.2f}x")
    return lines


def arguments() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--site", type=Path, help="an exported site folder to measure (e.g. space/)")
    parser.add_argument("--all-runs", action="store_true", help="with --site: every run, as a distribution")
    parser.add_argument("--run", action="append", default=[], metavar="ID", help="with --site: measure this run too")
    parser.add_argument("--generated", action="store_true", help="the generated 1,000-step run (default without --site)")
    parser.add_argument("--big-site", type=int, default=0, metavar="N", help="a site of N runs sampled from --sample-from")
    parser.add_argument("--sample-from", type=Path, help="real run folders the --big-site runs copy")
    parser.add_argument("--steps", type=int, default=1000)
    parser.add_argument("--checks", type=int, default=200)
    parser.add_argument("--runs", type=int, default=1000)
    parser.add_argument("--switches", type=int, default=300)
    parser.add_argument("--loads", type=int, default=5, help="loads of each named run to time (median)")
    parser.add_argument("--all-loads", type=int, default=3, help="with --all-runs: loads of every run (median)")
    parser.add_argument("--json", type=Path, help="write every figure to this JSON file")
    parser.add_argument("--baseline", type=Path, help="an earlier --json file: print ratios against it")
    parser.add_argument("--before", metavar="OLD_SITE|URL",
                        help="with --site and --run/--all-runs: both sites measured in alternating pairs")
    parser.add_argument("--rounds", type=int, default=3, help="with --before: pairs per run")
    parser.add_argument("--write-generated", type=Path, metavar="DIR",
                        help="write the generated runs into DIR/runs (for two versions to export) and stop")
    args = parser.parse_args()
    if args.before and (args.site is None or not (args.run or args.all_runs)):
        parser.error("--before needs --site (the site now) and --run or --all-runs")
    if args.rounds < 1 or args.switches < 1:
        parser.error("--rounds and --switches must be at least 1")
    if args.big_site and args.sample_from is None:
        parser.error("--big-site needs --sample-from (a folder of run folders, e.g. the demo's runs)")
    if (args.all_runs or args.run) and args.site is None:
        parser.error("--all-runs and --run need --site")
    if args.loads < 1 or args.all_loads < 1:
        parser.error("--loads and --all-loads must be at least 1")
    return args


def _settled_pairs(browser, bases: dict, run_id: str, rounds: int) -> dict:
    """viewer_settle.settled_pairs in two fresh pages of ``browser``, with the floor page served."""
    from viewer_ab import floor_server

    opened = {side: open_page(browser) for side in ("before", "now")}
    try:
        with floor_server() as floor_url:
            return settled_pairs({side: page for side, (_, page) in opened.items()}, bases, run_id, rounds, floor_url)
    finally:
        for context, _ in opened.values():
            context.close()


def measure_interleaved(before: str, now: Path, run_ids: list[str], rounds: int, switches: int,
                        all_loads: int) -> dict:
    """--before mode: :func:`viewer_ab.switch_pairs` for each named run and, with ``all_loads``,
    :func:`viewer_ab.first_step_pairs` for every run of ``now``; printed; problems listed, not raised.
    ``before``: a site folder or the base URL of a server serving one."""
    from playwright.sync_api import sync_playwright

    result: dict = {"before_site": before, "site": str(now), "runs": {}, "problems": []}
    servers = [serve_in_background(now, port=0, host="127.0.0.1")]
    if before.startswith(("http://", "https://")):
        before_base = before if before.endswith("/") else f"{before}/"
    else:
        servers.append(serve_in_background(Path(before), port=0, host="127.0.0.1"))
        before_base = servers[1][1]
    bases = {"before": before_base, "now": servers[0][1]}
    try:
        with sync_playwright() as playwright:
            browser, _ = open_browser(playwright)
            try:
                for run_id in run_ids:
                    try:
                        result["runs"][run_id] = switch_pairs(browser, bases["before"], bases["now"], run_id, rounds, switches)
                    except MeasureError as error:
                        result["problems"].append(str(error))
                        continue
                    print_pairs(result["runs"][run_id])
                    result["runs"][run_id]["settled"] = _settled_pairs(browser, bases, run_id, rounds)
                    print_settled_pairs(result["runs"][run_id]["settled"])
                if all_loads:
                    result["first_steps"] = first_steps_paired(browser, bases, site_runs(now), all_loads)
                    result["problems"] += result["first_steps"].pop("problems")
            finally:
                browser.close()
    finally:
        for server, _ in servers:
            server.shutdown()
            server.server_close()
    return result


def main() -> int:
    """Run the chosen modes, print the figures, write --json, print --baseline ratios.

    Returns 1 when a run broke the mark's DOM contract or could not be measured, else 0.
    """
    args = arguments()
    if args.write_generated:
        folder = generate(args.write_generated, args.steps, args.checks, args.runs)
        print(f"wrote {args.runs} generated runs into {folder} (the big one: {BIG_RUN})")
        return 0
    started = time.perf_counter()
    figures: dict = {"load_average_start": os.getloadavg()}
    print(f"load average at start: {' '.join(f'{v:.2f}' for v in figures['load_average_start'])} (2 cores)")
    if args.before:
        figures["interleaved"] = measure_interleaved(args.before, args.site, args.run, args.rounds, args.switches,
                                                     args.all_loads if args.all_runs else 0)
    elif args.site:
        all_loads = args.all_loads if args.all_runs else 0
        figures["site"] = measure_site(args.site, args.loads, args.switches, all_loads, tuple(args.run))
    if args.generated or not (args.site or args.big_site or args.before):
        figures["generated"] = measure_generated(args.steps, args.checks, args.runs, args.switches, args.loads)
    if args.big_site:
        figures["big_site"] = measure_big_site(args.big_site, args.sample_from, args.loads, args.switches)
    figures["load_average_end"] = os.getloadavg()
    figures["seconds"] = round(time.perf_counter() - started, 1)
    print(f"load average at end: {' '.join(f'{v:.2f}' for v in figures['load_average_end'])}; "
          f"{figures['seconds']} s in all")
    if args.json:
        write_atomic(args.json, dump_json(figures))
    if args.baseline:
        print(f"ratios against {args.baseline} (now / before):")
        for line in ratios(figures, json.loads(args.baseline.read_text())):
            print(f"  {line}")
    problems = [p for part in ("site", "generated", "big_site", "interleaved") for p in figures.get(part, {}).get("problems", [])]
    for problem in problems:
        print(f"FAILED: {problem}", file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
