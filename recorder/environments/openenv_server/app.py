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

MAX_SESSIONS = 4
WEB_ENV = "ENABLE_WEB_INTERFACE"


def web_enabled() -> bool:
    """Whether ``ENABLE_WEB_INTERFACE`` asks for the web interface (openenv's own test)."""
    return os.environ.get(WEB_ENV, "").lower() in ("true", "1", "yes")


def build_app(tasks_dir: str | Path | None = None, state_dir: str | Path | None = None):
    """The FastAPI app serving the bundled tasks under ``tasks_dir`` (default: tasks/) and
    fresh tasks cached under ``state_dir`` (default: fresh_tasks.default_state_dir())."""
    from openenv.core.env_server.http_server import create_app

    from recorder.environments.openenv_server.environment import (
        AlertForgeAction,
        AlertForgeEnvironment,
        AlertForgeObservation,
        AlertForgeState,
    )

    factory = functools.partial(AlertForgeEnvironment, tasks_dir, state_dir)
    return create_app(factory, AlertForgeAction, AlertForgeObservation, env_name="alertforge",
                      max_concurrent_envs=MAX_SESSIONS, state_cls=AlertForgeState,
                      title_override="3amBench alerting tasks")


def serve(host: str = "127.0.0.1", port: int = 8001, tasks_dir: str | Path | None = None,
          state_dir: str | Path | None = None) -> None:
    """Serve until interrupted (prints the URL once the app is built).

    Raises:
        BadInput: ``tasks_dir`` holds no task folder.
    """
    if not web_enabled() and "gradio" not in sys.modules:
        sys.modules["gradio"] = None  # openenv then skips its web interface module
    import uvicorn

    from recorder.environments.openenv_server.environment import AlertForgeEnvironment

    AlertForgeEnvironment(tasks_dir, state_dir).close()  # BadInput now, not on the first session
    app = build_app(tasks_dir, state_dir)
    web = f" (web interface on http://{host}:{port}/web/)" if web_enabled() else ""
    print(f"OpenEnv server for alertforge tasks on http://{host}:{port}{web}", flush=True)
    uvicorn.run(app, host=host, port=port, log_level="warning")


def main(argv: list[str] | None = None) -> int:
    """``python -m recorder.environments.openenv_server.app``: parse the options, serve."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8001)
    parser.add_argument("--tasks", help="bundled tasks folder (default: tasks/)")
    parser.add_argument("--state-dir", help="fresh-task cache and held-out master seed "
                        "(default: $XDG_STATE_HOME/alertforge/openenv)")
    args = parser.parse_args(argv)
    serve(args.host, args.port, args.tasks, args.state_dir)
    return 0


if __name__ == "__main__":
    sys.exit(main())
