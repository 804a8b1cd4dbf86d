"""Generate many run folders copied from real ones, each with distinct content, for sites at scale.

:func:`write_runs` samples source run folders (the demo's, for example) uniformly, so the
generated runs follow the sources' sizes (steps, checks, bytes), and gives every copy its own
run id, seed, final reward and step texts (a copy number and two words of a fixed vocabulary
appended to every tool output), so the search index, the run list and the data files grow as
they would with that many real runs. Only run.json and trajectory.json are written (the
exporter reads nothing else; journal.jsonl is left out).

By hand (prints the export's time, its peak memory and the site's bytes per run; runs already
written under OUT/runs are kept)::

    .venv/bin/python bench/big_site.py /tmp/big --count 10000 --sample-from /work/demo-runs --export
"""

from __future__ import annotations

import argparse
import os
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import orjson

from contract.untrusted import Tree
from exporter.run_folders import RUN_JSON_CAP, TRAJECTORY_CAP, find_run_folders

ROOT = Path(__file__).resolve().parents[1]
VOCABULARY = tuple(f"{a}{b}" for a in ("amber", "basalt", "cobalt", "dune", "ember", "fjord", "garnet", "heron")
                   for b in ("fox", "lynx", "otter", "raven", "stoat", "wren", "yak", "zebu"))
"""64 words, two of which are appended to each copied tool output (searchable across runs)."""


def _load(folder: Path) -> tuple[dict[str, Any], bytes]:
    """A source run's run.json (parsed) and trajectory.json (raw bytes, parsed per copy), read
    as the exporter reads run folders: never through a link, within its size caps
    (contract.untrusted.Tree; UnsafeInput naming the file otherwise)."""
    tree = Tree(folder)
    return tree.read_json("run.json", cap=RUN_JSON_CAP), tree.read_bytes("trajectory.json", cap=TRAJECTORY_CAP)


def copy_id(source_id: str, number: int) -> str:
    """The run id of copy ``number`` of ``source_id``: ``<source id>-g<number, 5 digits>``."""
    return f"{source_id}-g{number:05d}"


def _distinct_run(run: dict[str, Any], run_id: str, number: int, rng: random.Random) -> dict[str, Any]:
    """``run`` (a run.json) as copy ``number``: new run id and seed, no legacy id, the final
    reward scaled by a factor in [0.85, 1] (rounded to 6 decimals; 0 stays 0)."""
    run = {**run, "run_id": run_id, "seed": number}
    run.pop("legacy_id", None)
    identity = run.get("identity")
    if isinstance(identity, dict):
        defining = {**(identity.get("defining") or {}), "seed": number}
        run["identity"] = {**identity, "defining": defining, "digest": f"g{number:09d}"}
    final = run.get("final")
    if isinstance(final, dict) and isinstance(final.get("reward"), (int, float)) and not isinstance(
            final.get("reward"), bool):
        run["final"] = {**final, "reward": round(final["reward"] * rng.uniform(0.85, 1.0), 6)}
    return run


def _distinct_trajectory(raw: bytes, run_id: str, number: int, rng: random.Random) -> dict[str, Any]:
    """The trajectory with ``session_id`` = ``run_id`` and, on every text tool output, one line
    naming the copy and two vocabulary words."""
    trajectory = orjson.loads(raw)
    trajectory["session_id"] = run_id
    for step in trajectory.get("steps") or []:
        for result in (step.get("observation") or {}).get("results") or []:
            if isinstance(result.get("content"), str):
                words = " ".join(rng.sample(VOCABULARY, 2))
                result["content"] += f"\n[replay copy gen{number:05d}: {words}]"
    return trajectory


def write_runs(out: Path, count: int, sample_from: Path | list[Path], seed: int = 0) -> list[Path]:
    """Write ``count`` run folders under ``out`` (created), each a distinct copy of a run
    sampled uniformly (``random.Random(seed)``) from the run folders under ``sample_from``.

    Copy ``n``'s run id is :func:`copy_id` of its source; its seed is ``n``; its final reward
    is the source's times a factor in [0.85, 1]; every text tool output gains a line
    ``[replay copy gen<n>: <word> <word>]`` (:data:`VOCABULARY`). Returns the folders written,
    in copy order.

    Raises:
        contract.errors.BadInput: ``sample_from`` holds no run folder (from
            :func:`exporter.run_folders.find_run_folders`).
    """
    paths = [sample_from] if isinstance(sample_from, (str, Path)) else list(sample_from)
    sources = [_load(folder) for folder in find_run_folders([Path(p) for p in paths])]
    rng = random.Random(seed)
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    written = []
    for number in range(count):
        run, raw = sources[rng.randrange(len(sources))]
        run_id = copy_id(run["run_id"], number)
        folder = out / run_id
        folder.mkdir(exist_ok=True)
        (folder / "run.json").write_bytes(orjson.dumps(_distinct_run(run, run_id, number, rng)))
        (folder / "trajectory.json").write_bytes(orjson.dumps(_distinct_trajectory(raw, run_id, number, rng)))
        written.append(folder)
    return written


def timed_export(runs: Path, site: Path, tasks: Path | None = None, cache: Path | None = None) -> tuple[float, float, str]:
    """Run ``alertforge export RUNS --out SITE`` in its own process (``cache``: its
    ``$ALERTFORGE_EXPORT_CACHE``); (wall seconds, peak resident MB from ``os.wait4``, its
    stdout). Exits the bench naming the command when it fails."""
    command = [sys.executable, "-m", "alertforge.cli", "export", str(runs), "--out", str(site)]
    if tasks is not None:
        command += ["--tasks", str(tasks)]
    env = {**os.environ, **({"ALERTFORGE_EXPORT_CACHE": str(cache)} if cache is not None else {})}
    os.sync()  # the writes of whatever ran before (the last export, the bench's copies) are not timed here
    started = time.perf_counter()
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        process = subprocess.Popen(command, stdout=out, stderr=err, cwd=ROOT, env=env)
        _, status, usage = os.wait4(process.pid, 0)
        took = time.perf_counter() - started
        out.seek(0)
        err.seek(0)
        stdout, stderr = out.read().decode(errors="replace"), err.read().decode(errors="replace")
    if os.waitstatus_to_exitcode(status) != 0:
        sys.exit(f"bench: {' '.join(command)} failed:\n{stderr[-4000:]}")
    return took, usage.ru_maxrss / 1024, stdout


def main() -> None:
    """Generate the runs and, with ``--export``, export them (its own process) and print time,
    peak memory and bytes per run."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", type=Path, help="folder for runs/ (and site/ with --export)")
    parser.add_argument("--count", type=int, default=1000)
    parser.add_argument("--sample-from", type=Path, required=True, help="folder of run folders to copy")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--export", action="store_true", help="also export the runs into OUT/site")
    args = parser.parse_args()
    started = time.perf_counter()
    if not (args.out / "runs").is_dir():
        write_runs(args.out / "runs", args.count, args.sample_from, args.seed)
        print(f"wrote {args.count} runs in {time.perf_counter() - started:.1f} s", flush=True)
    if args.export:
        took, peak, _ = timed_export(args.out / "runs", args.out / "site", cache=args.out / "export-state")
        files = [p for p in (args.out / "site").rglob("*") if p.is_file()]
        size = sum(p.stat().st_size for p in files)
        print(f"exported {args.count} runs in {took:.1f} s ({took / args.count * 1000:.1f} ms per run), "
              f"peak memory {peak:.0f} MB: {len(files)} files, {size / 1e6:.1f} MB "
              f"({size / args.count / 1e3:.1f} kB per run)")


if __name__ == "__main__":
    main()
