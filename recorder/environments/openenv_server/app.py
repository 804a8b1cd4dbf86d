"""The OpenEnv server: openenv 0.10's ``create_app`` over :class:`AlertForgeEnvironment`, run with uvicorn.

    python -m recorder.environments.openenv_server.app --host 127.0.0.1 --port 8001 \
        [--tasks DIR] [--state-dir DIR]
    (or: alertforge serve-openenv ...)

Endpoints are openenv's: ``WS /ws`` (one environment per connection: episodes, what
``GenericEnvClient`` uses), ``POST /mcp`` and ``WS /mcp`` (JSON-RPC ``tools/list``,
``tools/call``, ``openenv/session/create``), ``GET /health``, ``/schema``, ``/metadata``,
``/state``; ``POST /reset`` and ``/step`` build a fresh environment per request (no episode
spans two requests). With ``ENABLE_WEB_INTERFACE=true`` the Gradio page is served on
``/web/`` (one environment shared by every browser). Without it Gradio is not imported at
all, which starts the server about 3 s sooner.
"""

from __future__ import annotations

import argparse
import functools
import os
import sys
from pathlib import Path

from recorder.environments.openenv_server.fresh_tasks import MAX_FRESH_TASKS

MAX_SESSIONS = 4
"""Environments open at once by default (``--max-sessions``): each holds a private copy of a
task's repo and grades through promtool and amtool; a session past it is refused, with
openenv's capacity error, until one ends."""
SESSION_IDLE_S = 600.0
"""Seconds a session may sit unused before the server closes it (``--session-idle-timeout``;
openenv's idle reaper, which looks every max(timeout / 4, 5) s): a client that never closes
its MCP session cannot hold a slot for good."""
WEB_ENV = "ENABLE_WEB_INTERFACE"


def web_enabled() -> bool:
    """Whether ``ENABLE_WEB_INTERFACE`` asks for the web interface (openenv's own test)."""
    return os.environ.get(WEB_ENV, "").lower() in ("true", "1", "yes")


def build_app(tasks_dir: str | Path | None = None, state_dir: str | Path | None = None, *,
              max_sessions: int = MAX_SESSIONS, idle_s: float | None = SESSION_IDLE_S,
              max_fresh_tasks: int = MAX_FRESH_TASKS):
    """The FastAPI app serving the bundled tasks under ``tasks_dir`` (default: tasks/) and
    fresh tasks cached under ``state_dir`` (default: fresh_tasks.default_state_dir(), at most
    ``max_fresh_tasks`` folders), at most ``max_sessions`` at once, each closed after
    ``idle_s`` seconds unused (None: never)."""
    from openenv.core.env_server.http_server import create_app
    from openenv.core.env_server.types import ConcurrencyConfig

    from recorder.environments.openenv_server.environment import (
        AlertForgeAction,
        AlertForgeEnvironment,
        AlertForgeObservation,
        AlertForgeState,
    )

    factory = functools.partial(AlertForgeEnvironment, tasks_dir, state_dir, max_fresh_tasks)
    limits = ConcurrencyConfig(max_concurrent_envs=max_sessions, session_timeout=idle_s)
    app = create_app(factory, AlertForgeAction, AlertForgeObservation, env_name="alertforge",
                     concurrency_config=limits, state_cls=AlertForgeState,
                     title_override="3amBench alerting tasks")
    _guard(app)
    return app


MAX_BODY_BYTES = 4 << 20
"""The largest request body taken (4 MiB): a tool call writes one config file; more is refused
with HTTP 413 before it is read."""


def _guard(app) -> None:
    """Refused reset arguments answer HTTP 422 with the reason (not 500 and a traceback, as
    on the ``/ws`` path, which already says why); a body over :data:`MAX_BODY_BYTES` (by its
    ``Content-Length``) answers 413 unread, a body without a length (chunked) 411 unread.
    A ``/ws`` message over the same size closes the socket (uvicorn's ``ws_max_size``)."""
    from fastapi.responses import JSONResponse

    from recorder.environments.openenv_server.fresh_tasks import ResetRefused

    @app.exception_handler(ResetRefused)
    async def refused(request, err):
        return JSONResponse(status_code=422, content={"detail": str(err)})

    @app.middleware("http")
    async def bounded(request, call_next):
        if "transfer-encoding" in request.headers and "content-length" not in request.headers:
            return JSONResponse(status_code=411, content={
                "detail": "a request body must say its length (Content-Length); chunked bodies "
                          "are not taken"})
        length = request.headers.get("content-length") or "0"
        if not length.isdigit() or int(length) > MAX_BODY_BYTES:
            return JSONResponse(status_code=413, content={
                "detail": f"request body over {MAX_BODY_BYTES} bytes (or no readable length)"})
        return await call_next(request)


def serve(host: str = "127.0.0.1", port: int = 8001, tasks_dir: str | Path | None = None,
          state_dir: str | Path | None = None, *, max_sessions: int = MAX_SESSIONS,
          max_fresh_tasks: int = MAX_FRESH_TASKS,
          idle_s: float | None = SESSION_IDLE_S) -> None:
    """Serve until interrupted (prints the URL once the app is built); ``max_sessions`` and
    ``idle_s`` as :func:`build_app`.

    Raises:
        BadInput: ``tasks_dir`` holds no task folder, or a limit is not positive.
    """
    from contract.errors import BadInput

    if max_sessions < 1 or max_fresh_tasks < 1 or (idle_s is not None and idle_s <= 0):
        raise BadInput("--max-sessions/--session-idle-timeout/--max-fresh-tasks", "must be positive")
    if not web_enabled() and "gradio" not in sys.modules:
        sys.modules["gradio"] = None  # openenv then skips its web interface module
    import uvicorn

    from recorder.environments.openenv_server.environment import AlertForgeEnvironment

    AlertForgeEnvironment(tasks_dir, state_dir).close()  # BadInput now, not on the first session
    app = build_app(tasks_dir, state_dir, max_sessions=max_sessions, idle_s=idle_s,
                    max_fresh_tasks=max_fresh_tasks)
    web = f" (web interface on http://{host}:{port}/web/)" if web_enabled() else ""
    print(f"OpenEnv server for alertforge tasks on http://{host}:{port}{web}", flush=True)
    uvicorn.run(app, host=host, port=port, log_level="warning", ws_max_size=MAX_BODY_BYTES)


def add_limit_options(parser) -> None:
    """``--max-sessions`` and ``--session-idle-timeout`` (shared with ``alertforge serve-openenv``)."""
    parser.add_argument("--max-sessions", type=int, default=MAX_SESSIONS,
                        help=f"environments open at once (default {MAX_SESSIONS}); more are refused until one ends")
    parser.add_argument("--session-idle-timeout", type=float, default=SESSION_IDLE_S, metavar="SECONDS",
                        help=f"close a session unused this long (default {SESSION_IDLE_S:.0f}; 0: never)")
    parser.add_argument("--max-fresh-tasks", type=int, default=MAX_FRESH_TASKS, metavar="N",
                        help=f"fresh task folders kept in the state dir (default {MAX_FRESH_TASKS}); "
                             "the least recently used go first, never one a session holds")


def main(argv: list[str] | None = None) -> int:
    """``python -m recorder.environments.openenv_server.app``: parse the options, serve."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8001)
    parser.add_argument("--tasks", help="bundled tasks folder (default: tasks/)")
    parser.add_argument("--state-dir", help="fresh-task cache and held-out master seed "
                        "(default: $XDG_STATE_HOME/alertforge/openenv)")
    add_limit_options(parser)
    args = parser.parse_args(argv)
    serve(args.host, args.port, args.tasks, args.state_dir, max_sessions=args.max_sessions,
          max_fresh_tasks=args.max_fresh_tasks,
          idle_s=args.session_idle_timeout or None)
    return 0


if __name__ == "__main__":
    sys.exit(main())
