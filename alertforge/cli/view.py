"""``alertforge view PATH...``: runs of any kind in the browser at once, updating live."""

from __future__ import annotations

import argparse
import threading
import time
from pathlib import Path

from alertforge.cli.options import add_tasks_option
from contract.errors import BadInput
from contract.text import counted


def add_view(sub) -> None:
    """``view PATH... [--port N] [--open] [--no-regrade]``."""
    view = sub.add_parser("view", help="serve runs, Harbor jobs, ATIF files, ARIA transcripts or an exported "
                          "site on 127.0.0.1 at once; pages update as runs appear or grow")
    view.add_argument("paths", nargs="+", metavar="PATH",
                      help="run folders or folders of them, Harbor job/trial folders, ATIF trajectory "
                      "files, ARIA transcripts, or one exported site")
    view.add_argument("--port", type=int, default=None,
                      help="port (0: any free one); by default 8000 or the next free port, said when it moves")
    view.add_argument("--open", action="store_true", help="open the page in the desktop's browser")
    view.add_argument("--no-regrade", dest="regrade", action="store_false",
                      help="import Harbor trials without grading each step here (0.3-1.3 s a step); "
                      "Harbor's own rewards are shown")
    view.add_argument("--interval", type=float, default=1.0, help="seconds between looks at the inputs (default 1)")
    add_tasks_option(view, help="tasks folder Harbor trials are matched against (default: bundled tasks/)")
    view.set_defaults(func=view_command)


def view_command(args: argparse.Namespace) -> int:
    """Serve at once; import and export in the background until Ctrl-C.

    Raises:
        BadInput: a PATH that is missing, a link or no kind of input; an exported site given
            with other inputs; a --port that is taken.
    """
    from alertforge.view.cache import MAX_VIEWS, view_cache
    from alertforge.view.inputs import classify
    from alertforge.view.live import LiveSite
    from alertforge.view.server import close, start_server
    from exporter.serve import serve, server_url

    inputs = [classify(p) for p in args.paths]
    sites = [i for i in inputs if i.kind == "site"]
    if sites and len(inputs) > 1:
        raise BadInput(sites[0].path, "an exported site is viewed alone (it is not read again); "
                                      "give it by itself, or give the runs it came from")
    port = 8000 if args.port is None else args.port
    if sites:
        serve(sites[0].path, port=port, strict=args.port is not None, open_browser=args.open)
        return 0
    cache = view_cache([i.path for i in inputs])
    live = LiveSite(inputs, cache, regrade=args.regrade, tasks=Path(args.tasks) if args.tasks else None,
                    interval=args.interval)
    server = start_server(live, port, strict=args.port is not None)
    url = server_url(server)
    if port not in (0, server.server_address[1]):
        print(f"port {port} is taken: using {server.server_address[1]}", flush=True)
    print(f"Viewing {len(inputs)} input{'s' if len(inputs) != 1 else ''} at {url} (Ctrl-C to stop)", flush=True)
    print(f"cache: {cache} (imports and the site; the {MAX_VIEWS} most recent views are kept)", flush=True)
    if not args.regrade:
        print("Harbor trials are not graded here (--no-regrade)", flush=True)
    builder = threading.Thread(target=live.run, name="view-builder", daemon=True)
    builder.start()
    if args.open:
        import webbrowser

        webbrowser.open(url)
    reported = (0, "")
    try:
        while builder.is_alive():
            status = live.status()
            now = (status["generation"], status["phase"])
            if now != reported and status["generation"]:
                print(f"{counted(status['runs'], 'run')} in the site ({status['phase']}, {status['found']} found)",
                      flush=True)
                for path, why in status["problems"].items():
                    print(f"  not shown: {path}: {why}", flush=True)
                reported = now
            time.sleep(0.5)
    except KeyboardInterrupt:
        print("stopped", flush=True)
    finally:
        close(live, server)
    return 0
