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
Speed is printed, never asserted. Target (issue 31): ``add`` at most 0.10.

Usage: .venv/bin/python bench/export_incremental.py RUNS [--tasks TASKS] [--changes add,change,remove,none]
"""

from __future__ import annotations

import argparse
import re
import shutil
import sys
import tempfile
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


def _add(runs: Path, number: int) -> None:
    source = min(runs.iterdir())
    write_runs(runs, 1, source, seed=number + 1000)


def _change(runs: Path, number: int) -> None:
    folder = sorted(runs.iterdir())[len(list(runs.iterdir())) // 2]
    path = folder / "trajectory.json"
    trajectory = orjson.loads(path.read_bytes())
    trajectory["steps"][-1]["message"] = f"changed by the bench ({number})"
    path.write_bytes(orjson.dumps(trajectory))


def _remove(runs: Path, number: int) -> None:
    shutil.rmtree(max(runs.iterdir()))


CHANGES = {"add": _add, "change": _change, "remove": _remove, "none": lambda runs, number: None}


def main() -> None:
    """Measure each change (see the module) and print the figures."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("runs", type=Path, help="folder of run folders (never written)")
    parser.add_argument("--tasks", type=Path, default=None, help="tasks folder (default: the bundled tasks)")
    parser.add_argument("--changes", default="add,change,remove,none")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-incremental-") as temp:
        root = Path(temp)
        runs, site, cache = root / "runs", root / "site", root / "cache"
        runs.mkdir()
        copy_runs(args.runs, runs)
        took, peak, stdout = timed_export(runs, site, args.tasks, cache)
        print(f"first full export: {stdout.strip().splitlines()[0]} in {took:.1f} s, peak {peak:.0f} MB")
        for number, change in enumerate(args.changes.split(",")):
            CHANGES[change](runs, number)
            again, again_peak, stdout = timed_export(runs, site, args.tasks, cache)
            reused = re.search(r"reused (\d+)", stdout)
            full_site = root / f"full-{number}"
            full, full_peak, _ = timed_export(runs, full_site, args.tasks, root / f"cache-{number}")
            differs = tree_difference(site, full_site)
            if differs is not None:
                sys.exit(f"bench: after '{change}' the incremental site differs from a full export at {differs}")
            shutil.rmtree(full_site)
            print(f"{change:>7}: incremental {again:.2f} s (peak {again_peak:.0f} MB, "
                  f"{reused.group(1) if reused else '?'} runs reused), full {full:.2f} s "
                  f"(peak {full_peak:.0f} MB): ratio {again / full:.3f}; sites identical")


if __name__ == "__main__":
    main()
