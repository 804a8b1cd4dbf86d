"""``python -m exporter RUNS... --out DIR [--serve] [--port N]``: export (and optionally serve) a site."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from alertforge.errors import BadInput
from exporter.export import export_site
from exporter.serve import serve


def main(argv: list[str] | None = None) -> int:
    """Parse arguments, export, print the summary; exit code 0 ok, 2 bad input."""
    parser = argparse.ArgumentParser(prog="python -m exporter", description=__doc__)
    parser.add_argument("runs", nargs="+", type=Path, help="run folders or folders of run folders")
    parser.add_argument("--out", required=True, type=Path, help="output folder of the site")
    parser.add_argument("--site", type=Path, default=None, help="viewer source (default: site/)")
    parser.add_argument("--serve", action="store_true", help="serve the site after exporting")
    parser.add_argument("--port", type=int, default=8000)
    args = parser.parse_args(argv)
    try:
        summary = export_site(args.runs, args.out, args.site)
        print(
            f"exported {summary['runs']} runs, {summary['tasks']} tasks: "
            f"{summary['files']} files, {summary['bytes']} bytes in {summary['out_dir']}"
        )
        if args.serve:
            serve(args.out, args.port)
    except BadInput as err:
        print(f"alertforge: {err}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
