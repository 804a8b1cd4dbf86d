"""Serve a built site over HTTP on the loopback interface (http.server, one thread a request),
revalidated and gzip-compressed as a static host serves it."""

from __future__ import annotations

import errno
import functools
import gzip
import io
import os
import threading
from http import HTTPStatus
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import ClassVar

from contract.errors import BadInput

PORT_ATTEMPTS = 50


COMPRESSED_TYPES = ("text/", "application/json", "image/svg+xml")
"""Content types sent gzip-compressed to a client that accepts it (as static hosts do)."""
MIN_COMPRESSED_BYTES = 1024


@functools.lru_cache(maxsize=256)
def _gzipped(path: str, mtime_ns: int, size: int) -> bytes:
    """The file's bytes gzip-compressed (level 6, no name or time in the header); keyed by its
    path, modification time and size, so a file rewritten in place is compressed again."""
    with open(path, "rb") as handle:
        return gzip.compress(handle.read(), compresslevel=6, mtime=0)


class SiteRequestHandler(SimpleHTTPRequestHandler):
    """Static files with the MIME types ES modules and JSON need, revalidated caching, gzip,
    no request log.

    Every response carries ``Cache-Control: no-cache`` (the browser keeps a copy but asks
    again each time: a site exported again is never shown stale) and, for files, an ``ETag``
    from the file's modification time and size; a request whose ``If-None-Match`` names the
    current tag gets ``304 Not Modified`` without a body (RFC 9110 sections 8.8.3, 13.1.2, 15.4.5).
    Text, JSON and SVG over 1 kB go gzip-compressed (``Content-Encoding: gzip``, ``Vary:
    Accept-Encoding``) to clients that send ``Accept-Encoding: gzip``.
    """

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
        self.send_header("Cache-Control", "no-cache")
        self.send_header("X-Content-Type-Options", "nosniff")
        super().end_headers()

    def send_head(self):
        """Headers for a file or a folder's ``index.html`` (tagged, maybe compressed, 304 when
        unchanged); other folders and missing files as :class:`SimpleHTTPRequestHandler`
        answers them."""
        path = self.translate_path(self.path)
        folder_url = self.path.split("?", 1)[0].split("#", 1)[0].endswith("/")
        if folder_url and os.path.isdir(path) and os.path.isfile(os.path.join(path, "index.html")):
            path = os.path.join(path, "index.html")  # a folder's index page, tagged and compressed too
        elif os.path.isdir(path) or not os.path.isfile(path) or folder_url:
            return super().send_head()
        try:
            stat = os.stat(path)
        except OSError:
            return super().send_head()
        content_type = self.guess_type(path)
        gzip_ok = (content_type.startswith(COMPRESSED_TYPES) and stat.st_size >= MIN_COMPRESSED_BYTES
                   and "gzip" in self.headers.get("Accept-Encoding", ""))
        tag = f'"{stat.st_mtime_ns:x}-{stat.st_size:x}{"-gz" if gzip_ok else ""}"'
        if tag in [part.strip() for part in self.headers.get("If-None-Match", "").split(",")]:
            self.send_response(HTTPStatus.NOT_MODIFIED)
            self.send_header("ETag", tag)
            self.end_headers()
            return None
        try:
            body = _gzipped(path, stat.st_mtime_ns, stat.st_size) if gzip_ok else Path(path).read_bytes()
        except OSError:
            self.send_error(HTTPStatus.NOT_FOUND, "File not found")
            return None
        self.send_response(HTTPStatus.OK)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("ETag", tag)
        self.send_header("Last-Modified", self.date_time_string(int(stat.st_mtime)))
        if gzip_ok:
            self.send_header("Content-Encoding", "gzip")
        if content_type.startswith(COMPRESSED_TYPES):
            self.send_header("Vary", "Accept-Encoding")
        self.end_headers()
        return io.BytesIO(body)

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


def make_server(directory: Path, port: int = 8000, host: str = "127.0.0.1", *,
                strict: bool = False) -> ThreadingHTTPServer:
    """A bound (not yet serving) server for ``directory`` on ``host``.

    ``port`` 0 lets the system pick a free port; otherwise ``port`` and up to 49 following
    ports are tried in turn and the first free one is used (only ``port`` itself when
    ``strict``).

    Raises:
        BadInput: ``directory`` is not a folder, or no port in the range is free.
    """
    directory = Path(directory)
    if not directory.is_dir():
        raise BadInput(directory, "site folder not found")
    return bind(functools.partial(SiteRequestHandler, directory=str(directory)), port, host, strict=strict,
                where=str(directory))


def bind(handler, port: int, host: str = "127.0.0.1", *, strict: bool = False,
         server_class: type[ThreadingHTTPServer] = QuietThreadingHTTPServer,
         where: str | None = None) -> ThreadingHTTPServer:
    """A ``server_class`` bound on ``host`` with ``handler`` (a request handler factory), on
    ``port`` or, unless ``strict``, the first free one of the next 49 (``port`` 0: any free
    one). BadInput naming ``where`` (default the address) when none is free."""
    last = port + (1 if strict else PORT_ATTEMPTS)
    candidates = [0] if port == 0 else range(port, min(last, 65536))
    for candidate in candidates:
        try:
            return server_class((host, candidate), handler)
        except OSError as err:
            if err.errno != errno.EADDRINUSE:
                raise
    if strict:
        raise BadInput(f"{host}:{port}", "the port is taken (another server runs there); give "
                       "another --port, or 0 for any free one")
    raise BadInput(where or f"{host}:{port}", f"no free port on {host} from {port} to {port + PORT_ATTEMPTS - 1}")


def server_url(server: ThreadingHTTPServer) -> str:
    """The base URL of a bound server, ending with a slash ("http://127.0.0.1:8000/")."""
    host, port = server.server_address[:2]
    return f"http://{host}:{port}/"


def serve(directory: Path, port: int = 8000, host: str = "127.0.0.1", *, strict: bool = False,
          open_browser: bool = False) -> None:
    """Serve ``directory`` until interrupted (Ctrl-C), printing its URL first.

    Uses the next free port when ``port`` is taken, and says so (only ``port`` when
    ``strict``; see :func:`make_server`); ``open_browser`` opens the URL in the desktop's
    browser (Python's ``webbrowser``).

    Raises:
        BadInput: as :func:`make_server`.
    """
    server = make_server(directory, port, host, strict=strict)
    bound = server.server_address[1]
    if port not in (0, bound):
        print(f"port {port} is taken: using {bound}", flush=True)
    print(f"Serving {directory} at {server_url(server)} (Ctrl-C to stop)", flush=True)
    if open_browser:
        import webbrowser

        webbrowser.open(server_url(server))
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
