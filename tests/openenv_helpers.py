"""OpenEnv servers for the tests: start one on a free 127.0.0.1 port, wait for /health, stop it."""

from __future__ import annotations

import contextlib
import os
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from contract.paths import REPO_ROOT


def free_port() -> int:
    """A TCP port nothing listens on right now."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@contextlib.contextmanager
def running(command: list[str], port: int, env: dict[str, str] | None = None,
            timeout_s: float = 120) -> Iterator[str]:
    """Run ``command`` (a server on ``port``) until the block ends; yields its base URL once
    ``/health`` answers 200 (fails the test with its stderr when it does not start)."""
    log = Path(os.environ.get("TMPDIR", "/tmp")) / f"openenv-server-{port}.log"
    with open(log, "w+") as errors:
        process = subprocess.Popen(command, cwd=REPO_ROOT, stdout=subprocess.DEVNULL,
                                   stderr=errors, env={**os.environ, **(env or {})})
        url = f"http://127.0.0.1:{port}"
        deadline = time.monotonic() + timeout_s
        try:
            while True:
                try:
                    with urllib.request.urlopen(url + "/health", timeout=2) as response:
                        if response.status == 200:
                            break
                except OSError:
                    if process.poll() is not None or time.monotonic() > deadline:
                        errors.seek(0)
                        pytest.fail(f"server did not start: {errors.read()[-2000:]}")
                    time.sleep(0.3)
            yield url
        finally:
            process.terminate()
            try:
                process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
    log.unlink(missing_ok=True)


def alertforge_server(state_dir: Path, env: dict[str, str] | None = None):
    """This project's server (``python -m recorder.environments.openenv_server.app``) with
    its fresh-task cache and master seed in ``state_dir``."""
    port = free_port()
    return running([sys.executable, "-m", "recorder.environments.openenv_server.app",
                    "--host", "127.0.0.1", "--port", str(port), "--state-dir", str(state_dir)],
                   port, env)
