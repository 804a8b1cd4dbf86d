"""A one-machine Ray head on 127.0.0.1, started and stopped by process id (tests, bench/ray.py).

``ray start --head --block`` with every port picked free on the loopback, Ray's files in a
private short temporary folder, no dashboard and ``--num-cpus`` worker slots. Stopping
ends that process and the processes it started, by pid (never ``ray stop``, which ends
every Ray process of the machine).
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from engine.ray_worker import CACHE_ENV

PORT_OPTIONS = ("port", "node-manager-port", "object-manager-port", "dashboard-port",
                "dashboard-agent-listen-port", "dashboard-agent-grpc-port", "metrics-export-port",
                "runtime-env-agent-port")
"""The ``ray start`` options that open a port (each given a free loopback port)."""


def free_port() -> int:
    """A TCP port nothing listens on at 127.0.0.1 now."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


WORKER_PORTS = 41
"""Ports in the workers' range (``--min-worker-port`` to ``--max-worker-port``, both included)."""


def pick_ports(names: tuple[str, ...], span: int = WORKER_PORTS, pick=free_port) -> tuple[dict[str, int], int]:
    """A free loopback port per name and the first port of a range of ``span`` ports for the
    workers, all distinct: no named port inside the range, no two names on one port (``ray
    start`` refuses a port two of its parts would use). ``pick()`` gives one free port (the
    kernel's choice: any two picks may repeat, and a later pick may land in the range).

    Returns ``({name: port}, low)``; the range is ``low`` .. ``low + span - 1`` (<= 65535).
    """
    low = pick()
    while low + span - 1 > 65535:
        low = pick()
    taken = set(range(low, low + span))
    ports: dict[str, int] = {}
    for name in names:
        port = pick()
        while port in taken:
            port = pick()
        taken.add(port)
        ports[name] = port
    return ports, low


def descendants(pid: int) -> list[int]:
    """Every live process below ``pid`` (read from /proc), children first."""
    children = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
            except OSError:
                continue
            if int(stat.rsplit(")", 1)[1].split()[1]) == pid:
                children.append(int(entry.name))
    return children + [d for c in children for d in descendants(c)]


@dataclass
class LocalHead:
    """A running head: ``address`` (``127.0.0.1:PORT``), the ``ray start`` process and its
    private folder ``temp`` (Ray's sessions and logs, the workers' task cache)."""

    address: str
    process: subprocess.Popen
    temp: Path

    @classmethod
    def start(cls, cpus: int = 2, timeout_s: float = 180) -> LocalHead:
        """Start a head with ``cpus`` worker slots; returns once its port accepts connections.

        Raises:
            RuntimeError: ``ray start`` exited or did not listen within ``timeout_s``
                (its log's tail in the message).
        """
        temp = Path(tempfile.mkdtemp(prefix="rt", dir="/tmp"))  # Ray's socket paths stay short
        ports, low = pick_ports(PORT_OPTIONS)
        env = dict(os.environ, RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER="0",
                   **{CACHE_ENV: str(temp / "tasks")})
        env.pop("RAY_ADDRESS", None)
        args = [str(Path(sys.executable).with_name("ray")), "start", "--head", "--block",
                "--node-ip-address=127.0.0.1", f"--num-cpus={cpus}", f"--temp-dir={temp}",
                "--disable-usage-stats", "--include-dashboard=false", "--include-log-monitor=false",
                "--object-store-memory=100000000", f"--min-worker-port={low}",
                f"--max-worker-port={low + WORKER_PORTS - 1}",
                *[f"--{name}={port}" for name, port in ports.items()]]
        with open(temp / "start.log", "w") as log:
            process = subprocess.Popen(args, stdout=log, stderr=subprocess.STDOUT, env=env,
                                       stdin=subprocess.DEVNULL, start_new_session=True)
        head = cls(f"127.0.0.1:{ports['port']}", process, temp)
        deadline = time.monotonic() + timeout_s
        while True:
            if process.poll() is not None or time.monotonic() > deadline:
                tail = (temp / "start.log").read_text(errors="replace")[-2000:]
                head.stop()
                raise RuntimeError(f"ray start did not come up: {tail}")
            try:
                socket.create_connection(("127.0.0.1", ports["port"]), timeout=1).close()
                return head
            except OSError:
                time.sleep(0.3)

    def workers(self) -> list[int]:
        """The pids of every process the head started (raylet, GCS, workers...)."""
        return descendants(self.process.pid)

    def stop(self) -> None:
        """End ``ray start`` (it stops what it started) and any process left below it, then
        remove the folder."""
        left = self.workers()
        self.process.terminate()
        try:
            self.process.wait(timeout=60)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait(timeout=30)
        for pid in left:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        shutil.rmtree(self.temp, ignore_errors=True)
