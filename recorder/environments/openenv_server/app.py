"""The OpenEnv server: ``create_app`` over :class:`AlertForgeEnvironment`, run with uvicorn.

    python -m recorder.environments.openenv_server.app --host 127.0.0.1 --port 8001 [--tasks DIR]
    (or: alertforge serve-openenv ...)

Endpoints are openenv-core's: ``WS /ws`` (sessions, what ``EnvClient`` uses), ``POST
/reset``, ``POST /step``, ``GET /state``, ``GET /schema``, ``GET /health``.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from openenv.core.env_server.http_server import create_app

from recorder.environments.openenv_server.environment import (
    AlertForgeAction,
    AlertForgeEnvironment,
    AlertForgeObservation,
)

MAX_SESSIONS = 4


def build_app(tasks_dir: str | Path | None = None):
    """The FastAPI app serving the tasks under ``tasks_dir`` (default: bundled tasks/)."""
    return create_app(lambda: AlertForgeEnvironment(tasks_dir), AlertForgeAction,
                      AlertForgeObservation, env_name="alertforge",
                      max_concurrent_envs=MAX_SESSIONS)


def serve(host: str = "127.0.0.1", port: int = 8001, tasks_dir: str | Path | None = None) -> None:
    """Serve until interrupted (prints the URL once listening)."""
    import uvicorn

    AlertForgeEnvironment(tasks_dir)  # BadInput now, not on the first session
    print(f"OpenEnv server for alertforge tasks on http://{host}:{port}", flush=True)
    uvicorn.run(build_app(tasks_dir), host=host, port=port, log_level="warning")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8001)
    parser.add_argument("--tasks", help="tasks folder (default: bundled tasks/)")
    args = parser.parse_args(argv)
    serve(args.host, args.port, args.tasks)
    return 0


if __name__ == "__main__":
    sys.exit(main())
