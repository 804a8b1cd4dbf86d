"""Benchmark: an incremental export (one run added, changed or removed) against a full export.

Copies the run folders under RUNS (the demo's, for example; RUNS is never written; copies, not
hard links, which the exporter's safe read refuses), exports them whole into a new site, then for each change
(``add``: one more run, a distinct copy made by bench/big_site.py's :func:`write_runs`;
``change``: one run's last step message edited; ``remove``: one run folder deleted; ``none``:
nothing) exports into that site again (incremental, the default) and, for the same inputs, into
a new folder (a full export: the denominator). Each export runs as its own ``alertforge export``
process, timed wall-clock, its peak resident memory read from ``os.wait4``; the incremental
site must equal the full one byte for byte (the bench exits 1 naming the first differing file
otherwise). Prints seconds, peak MB, runs reused and the ratio incremental / full per change.
Each change is measured ``--repeat`` times (3; undone and exported back, untimed, between
two), medians and spreads printed: one export's time varies by several percent on an idle
machine. Speed is printed, never asserted. Target (issue 31): ``add`` at most 0.10.

Usage: .venv/bin/python bench/export_incremental.py RUNS [--tasks TASKS] [--changes add,change,remove,none] [--repeat N]
"""

from __future__ import annotations

import argparse
import re
import shutil
import statistics
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

import orjson
from big_site import timed_export, write_runs

from exporter.run_folders import find_run_folders


def tree_difference(left: Path, right: Path) -> str | None:
    """The first relative path whose bytes differ between two sites (or that one lacks), else None."""
    def files(folder: Path) -> dict[str, Path]:
        return {p.relative_to(folder).as_posix(): p for p in folder.rglob("*") if p.is_file()}

    a, b = files(left), files(right)
    for relative in sorted(set(a) | set(b)):
        if relative not in a or relative not in b or a[relative].read_bytes() != b[relative].read_bytes():
            return relative
    return None


def copy_runs(source: Path, target: Path) -> None:
    """Copy every run folder under ``source`` into ``target``."""
    for folder in find_run_folders([source]):
        shutil.copytree(folder, target / folder.name)


def _add(runs: Path, number: int) -> Callable[[], None]:
    before = set(runs.iterdir())
    write_runs(runs, 1, min(runs.iterdir()), seed=number + 1000)
    added = set(runs.iterdir()) - before

    def undo() -> None:
        for folder in added:
            shutil.rmtree(folder)

    return undo


def _change(runs: Path, number: int) -> Callable[[], None]:
    folder = sorted(runs.iterdir())[len(list(runs.iterdir())) // 2]
    path = folder / "trajectory.json"
    original = path.read_bytes()
    trajectory = orjson.loads(original)
    trajectory["steps"][-1]["message"] = f"changed by the bench ({number})"
    path.write_bytes(orjson.dumps(trajectory))

    def undo() -> None:
        path.write_bytes(original)

    return undo


def _remove(runs: Path, number: int) -> Callable[[], None]:
    folder = max(runs.iterdir())
    aside = runs.parent / f"removed-{number}"
    shutil.move(folder, aside)

    def undo() -> None:
        shutil.move(aside, folder)

    return undo


CHANGES: dict[str, Callable[[Path, int], Callable[[], None]]] = {
    "add": _add, "change": _change, "remove": _remove, "none": lambda runs, number: lambda: None}
"""Each change applied to the runs folder; it returns what undoes it (so a change can be
measured again from the same site)."""


def _spread(values: list[float]) -> str:
    return f"{statistics.median(values):.2f} s" + (f" ({min(values):.2f}-{max(values):.2f})" if len(values) > 1 else "")


def measure(change: str, number: int, repeat: int, root: Path, tasks: Path | None) -> str:
    """``repeat`` times: apply ``change``, export incrementally into the site and fully into a
    new folder with a new cache, check the two equal, and (but the last time) undo the change
    and export back, untimed. Returns the line printed for it: medians, spreads and the ratio
    of the medians.

    Exits the bench when an incremental site differs from the full export."""
    runs, site, cache = root / "runs", root / "site", root / "cache"
    incremental, full, ratios = [], [], []
    for rep in range(repeat):
        undo = CHANGES[change](runs, number)
        again, again_peak, stdout = timed_export(runs, site, tasks, cache)
        reused = re.search(r"reused (\d+)", stdout)
        full_site, full_cache = root / f"full-{number}-{rep}", root / f"cache-{number}-{rep}"
        whole, whole_peak, _ = timed_export(runs, full_site, tasks, full_cache)
        differs = tree_difference(site, full_site)
        if differs is not None:
            sys.exit(f"bench: after '{change}' the incremental site differs from a full export at {differs}")
        shutil.rmtree(full_site)
        shutil.rmtree(full_cache)
        incremental.append(again)
        full.append(whole)
        ratios.append(again / whole)
        if rep < repeat - 1:
            undo()
            timed_export(runs, site, tasks, cache)
    return (f"{change:>7}: incremental {_spread(incremental)} (peak {again_peak:.0f} MB, "
            f"{reused.group(1) if reused else '?'} runs reused), full {_spread(full)} (peak {whole_peak:.0f} MB): "
            f"ratio of medians {statistics.median(incremental) / statistics.median(full):.3f} "
            f"(each: {', '.join(f'{r:.3f}' for r in ratios)}); sites identical")


def main() -> None:
    """Measure each change (see the module) and print the figures."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("runs", type=Path, help="folder of run folders (never written)")
    parser.add_argument("--tasks", type=Path, default=None, help="tasks folder (default: the bundled tasks)")
    parser.add_argument("--changes", default="add,change,remove,none")
    parser.add_argument("--repeat", type=int, default=3, help="measurements of each change (medians printed)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-incremental-") as temp:
        root = Path(temp)
        runs, site, cache = root / "runs", root / "site", root / "cache"
        runs.mkdir()
        copy_runs(args.runs, runs)
        took, peak, stdout = timed_export(runs, site, args.tasks, cache)
        print(f"first full export: {stdout.strip().splitlines()[0]} in {took:.1f} s, peak {peak:.0f} MB")
        for number, change in enumerate(args.changes.split(",")):
            print(measure(change, number, max(1, args.repeat), root, args.tasks), flush=True)


if __name__ == "__main__":
    main()
