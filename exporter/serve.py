"""Serve a built site over HTTP on the loopback interface (http.server, one thread a request)."""

from __future__ import annotations

import errno
import functools
import threading
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import ClassVar

from contract.errors import BadInput

PORT_ATTEMPTS = 50


class SiteRequestHandler(SimpleHTTPRequestHandler):
    """Static files with the MIME types ES modules and JSON need, no caching, no request log."""

    extensions_map: ClassVar[dict[str, str]] = {
        **SimpleHTTPRequestHandler.extensions_map,
        ".js": "text/javascript",
        ".mjs": "text/javascript",
        ".json": "application/json",
        ".css": "text/css",
        ".svg": "image/svg+xml",
        ".html": "text/html; charset=utf-8",
    }

    def end_headers(self) -> None:
        self.send_header("Cache-Control", "no-store")
        self.send_header("X-Content-Type-Options", "nosniff")
        super().end_headers()

    def log_message(self, format: str, *args: object) -> None:
        pass


class QuietThreadingHTTPServer(ThreadingHTTPServer):
    """A threading HTTP server that ignores clients going away mid-response (a browser navigating on)."""

    daemon_threads = True

    def handle_error(self, request, client_address) -> None:
        import sys

        if isinstance(sys.exc_info()[1], ConnectionError):
            return
        super().handle_error(request, client_address)


def make_server(directory: Path, port: int = 8000, host: str = "127.0.0.1") -> ThreadingHTTPServer:
    """A bound (not yet serving) server for ``directory`` on ``host``.

    ``port`` 0 lets the system pick a free port; otherwise ``port`` and up to 49 following
    ports are tried in turn and the first free one is used.

    Raises:
        BadInput: ``directory`` is not a folder, or no port in the range is free.
    """
    directory = Path(directory)
    if not directory.is_dir():
        raise BadInput(directory, "site folder not found")
    handler = functools.partial(SiteRequestHandler, directory=str(directory))
    candidates = [0] if port == 0 else range(port, min(port + PORT_ATTEMPTS, 65536))
    for candidate in candidates:
        try:
            return QuietThreadingHTTPServer((host, candidate), handler)
        except OSError as err:
            if err.errno != errno.EADDRINUSE:
                raise
    raise BadInput(directory, f"no free port on {host} from {port} to {port + PORT_ATTEMPTS - 1}")


def server_url(server: ThreadingHTTPServer) -> str:
    """The base URL of a bound server, ending with a slash ("http://127.0.0.1:8000/")."""
    host, port = server.server_address[:2]
    return f"http://{host}:{port}/"


def serve(directory: Path, port: int = 8000, host: str = "127.0.0.1") -> None:
    """Serve ``directory`` until interrupted (Ctrl-C), printing its URL first.

    Uses the next free port when ``port`` is taken (see :func:`make_server`).

    Raises:
        BadInput: as :func:`make_server`.
    """
    server = make_server(directory, port, host)
    print(f"Serving {directory} at {server_url(server)} (Ctrl-C to stop)", flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()


def serve_in_background(
    directory: Path, port: int = 0, host: str = "127.0.0.1"
) -> tuple[ThreadingHTTPServer, str]:
    """Start serving ``directory`` in a daemon thread; return ``(server, url)``.

    ``port`` 0 (the default) picks a free port. Stop with ``server.shutdown(); server.server_close()``.

    Raises:
        BadInput: as :func:`make_server`.
    """
    server = make_server(directory, port, host)
    thread = threading.Thread(target=server.serve_forever, name="site-server", daemon=True)
    thread.start()
    return server, server_url(server)
