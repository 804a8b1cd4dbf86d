"""Write the README's screenshot from an exported site: the run view of an oracle run.

Usage (after ``alertforge demo --no-serve``, which exports the demo into ``space/``)::

    .venv/bin/python scripts/screenshot.py [--site space] [--out docs/img/run-view.png]
        [--run RUN_ID] [--step N]

Serves the site on 127.0.0.1 (exporter.serve), opens the run view in Debian's Chromium at
1280x800 (the viewport the run view is laid out for) and saves a PNG of the first screen.
Without ``--run``, the first oracle run of af-001 in the site's index, at the step
whose change raised the reward most. Exits 2 when the site has no such run.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

CHROMIUM = "/usr/bin/chromium"
ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking",
        "--disable-component-update", "--disable-sync"]


def pick(site: Path, run_id: str | None, step: int | None) -> tuple[str, int]:
    """``(run id, step)``: the given ones, else af-001's first oracle run and its first step
    with a diff. Raises SystemExit(2) naming the site when there is none."""
    index = json.loads((site / "data" / "index.json").read_bytes())
    if run_id is None:
        oracles = sorted(r["run_id"] for r in index["runs"]
                         if r["policy"] == "oracle" and r["task_id"].startswith("af-001"))
        if not oracles:
            raise SystemExit(f"{site}: no oracle run of af-001 in data/index.json (export the demo first)")
        run_id = oracles[0]
    if step is None:
        run = json.loads((site / "data" / "runs" / f"{run_id}.json").read_bytes())
        changed = [s for s in run["steps"] if s.get("diff")]
        step = max(changed, key=lambda s: (s.get("reward") or 0, -s["n"]))["n"] if changed else 1
    return run_id, step


def main(argv: list[str] | None = None) -> int:
    """Parse the options, serve the site, save the screenshot; returns the exit code."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--site", default=str(ROOT / "space"))
    parser.add_argument("--out", default=str(ROOT / "docs" / "img" / "run-view.png"))
    parser.add_argument("--run")
    parser.add_argument("--step", type=int)
    args = parser.parse_args(argv)
    site = Path(args.site)
    if not (site / "data" / "index.json").is_file():
        print(f"screenshot: {site}: no exported site here (run alertforge demo --no-serve)", file=sys.stderr)
        return 2
    run_id, step = pick(site, args.run, args.step)
    from playwright.sync_api import sync_playwright

    from exporter.serve import serve_in_background

    server, url = serve_in_background(site, port=0, host="127.0.0.1")
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    try:
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(executable_path=CHROMIUM, args=ARGS)
            page = browser.new_page(viewport={"width": 1280, "height": 800})
            page.goto(f"{url}run.html?run={run_id}&step={step}")
            page.wait_for_selector("body[data-ready='1']")
            page.wait_for_timeout(300)  # let the last frame settle
            page.screenshot(path=str(out))
            browser.close()
    finally:
        server.shutdown()
        server.server_close()
    print(f"{out}: {run_id} at step {step}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
