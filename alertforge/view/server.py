"""The front half of ``alertforge view``: the site server, answering at once.

It serves the cache's site as ``alertforge serve`` does (:class:`exporter.serve.SiteRequestHandler`:
gzip, ETags, no-cache revalidation), with a ``Server-Timing: alertforge-live`` header on every
answer and ``data/live.json`` answered from the live site's state (a page polls it only when
its navigation carried that header, so on a static host it asks nothing), and,
until the first export is in, a small page that says what is being read and looks again
every second.
"""

from __future__ import annotations

import functools
import html
import threading
from http import HTTPStatus
from http.server import ThreadingHTTPServer
from pathlib import Path
from typing import ClassVar

import orjson

from alertforge.view.live import LiveSite
from exporter.serve import QuietThreadingHTTPServer, SiteRequestHandler

LIVE_PATH = "/data/live.json"
LIVE_TIMING = 'alertforge-live;desc="alertforge view"'
"""The Server-Timing entry that tells a page it is served live (site/static/js/lib/live.js)."""


class LiveRequestHandler(SiteRequestHandler):
    """:class:`SiteRequestHandler` over a :class:`LiveSite` (set as ``live`` on a subclass)."""

    live: ClassVar[LiveSite]

    def end_headers(self) -> None:
        """Every answer says the site is live (pages read it from their navigation's
        ``serverTiming``, so a static host's pages never ask)."""
        self.send_header("Server-Timing", LIVE_TIMING)
        super().end_headers()

    def _route(self) -> str:
        return self.path.split("?", 1)[0].split("#", 1)[0]

    def _send(self, body: bytes, content_type: str) -> None:
        self.send_response(HTTPStatus.OK)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def _waiting_page(self) -> bytes:
        status = self.live.status()
        problems = "".join(f"<li><code>{html.escape(path)}</code>: {html.escape(why)}</li>"
                           for path, why in status["problems"].items())
        found = status["found"]
        return (
            "<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\">"
            "<meta http-equiv=\"refresh\" content=\"1\"><title>Reading runs \u00b7 3amBench Replay</title>"
            "</head><body><main><h1>Reading runs</h1>"
            f"<p id=\"view-waiting\" role=\"status\">{found} run{'' if found == 1 else 's'} found so far; "
            "the first ones appear here as soon as they are exported.</p>"
            + (f"<p>Inputs that could not be read:</p><ul>{problems}</ul>" if problems else "")
            + "</main></body></html>").encode()

    def do_GET(self) -> None:
        """``data/live.json`` and, before the first export, the waiting page; else files (a
        path the file system cannot take, e.g. with a null byte, answers 400)."""
        route = self._route()
        if route == LIVE_PATH:
            self._send(orjson.dumps(self.live.status()), "application/json")
            return
        if self.live.generation == 0 and (route == "/" or route.endswith(".html")):
            self._send(self._waiting_page(), "text/html; charset=utf-8")
            return
        try:
            super().do_GET() if self.command != "HEAD" else super().do_HEAD()
        except ValueError:
            self.send_error(400, "bad path")

    def do_HEAD(self) -> None:
        """As GET, headers only."""
        self.do_GET()


def start_server(live: LiveSite, port: int, host: str = "127.0.0.1", *,
                 strict: bool = False) -> ThreadingHTTPServer:
    """A server for ``live``'s site on ``host`` (the first free port from ``port``, only
    ``port`` when ``strict``), serving in a daemon thread. BadInput when no port is free."""
    from exporter.serve import bind

    handler_class = type("BoundLiveHandler", (LiveRequestHandler,), {"live": live})
    handler = functools.partial(handler_class, directory=str(live.site))
    server = bind(handler, port, host, strict=strict, server_class=QuietThreadingHTTPServer)
    threading.Thread(target=server.serve_forever, name="view-server", daemon=True).start()
    return server


def close(live: LiveSite, server: ThreadingHTTPServer) -> None:
    """Stop the live site's loop and the server (the end of ``view`` and of a serving ``demo``)."""
    live.stop()
    server.shutdown()
    server.server_close()


def site_path(live: LiveSite) -> Path:
    """Where the served site is (the cache's ``site`` folder)."""
    return live.site
