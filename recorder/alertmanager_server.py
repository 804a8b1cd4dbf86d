"""Start the real Alertmanager server, post alerts and read their status.

The reference for the inhibition simulator (``grader/inhibition.py``, in the tests) and the
server end-to-end delivery runs against (:mod:`recorder.delivery`)::

    with AlertmanagerServer(config_path) as am:
        am.post_alerts([{"alertname": "A", "severity": "critical"}])
        alerts = am.wait_for_alerts(expected_label_sets)

The process runs on a free loopback port with clustering disabled and a temporary
storage directory, and is always terminated on exit (also when startup fails).
"""

from __future__ import annotations

import json
import shutil
import socket
import subprocess
import tempfile
import time
import urllib.error
import urllib.request
from collections.abc import Iterable, Mapping
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Self

from grader.tools import ALERTMANAGER as BINARY


class AlertmanagerServerError(RuntimeError):
    """The server did not start, exited, or did not answer as expected; the
    message carries the tail of its log."""


def binary_available(binary: str = BINARY) -> bool:
    """True if the Alertmanager server binary is on PATH."""
    return shutil.which(binary) is not None


def free_port() -> int:
    """A TCP port on 127.0.0.1 that was free a moment ago (bind to port 0)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _rfc3339(t: datetime) -> str:
    return t.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def label_key(labels: Mapping[str, str]) -> frozenset[tuple[str, str]]:
    """Hashable identity of an alert's label set (empty values dropped, as missing)."""
    return frozenset((k, v) for k, v in labels.items() if v != "")


class AlertmanagerServer:
    """A ``prometheus-alertmanager`` process serving one config file.

    ``config`` is a path to a YAML file or the YAML text itself. Use as a context
    manager; :meth:`stop` is idempotent and kills the process if it ignores SIGTERM.
    Raises :class:`AlertmanagerServerError` if it is not ready within ``ready_timeout``.
    """

    def __init__(
        self,
        config: str | Path,
        *,
        binary: str = BINARY,
        ready_timeout: float = 15.0,
        attempts: int = 3,
    ) -> None:
        self.binary = binary
        self.ready_timeout = ready_timeout
        self.attempts = attempts
        self._tmp = tempfile.TemporaryDirectory(prefix="am-test-")
        self.workdir = Path(self._tmp.name)
        if isinstance(config, Path):
            self.config_path = config
        else:
            self.config_path = self.workdir / "alertmanager.yml"
            self.config_path.write_text(config)
        self.proc: subprocess.Popen[bytes] | None = None
        self.port = 0
        self.log_path = self.workdir / "alertmanager.log"

    # -- lifecycle -------------------------------------------------------------

    @property
    def url(self) -> str:
        """Base URL of the running server, e.g. ``http://127.0.0.1:40123``."""
        return f"http://127.0.0.1:{self.port}"

    def start(self) -> Self:
        """Start the server and wait for ``/-/ready``; retries on another port if the
        process exits early (e.g. the port was taken in between)."""
        last = ""
        for attempt in range(self.attempts):
            self.port = free_port()
            storage = self.workdir / f"data{attempt}"
            storage.mkdir()
            argv = [
                self.binary,
                f"--config.file={self.config_path}",
                f"--storage.path={storage}",
                f"--web.listen-address=127.0.0.1:{self.port}",
                "--cluster.listen-address=",
                "--log.level=warn",
            ]
            with open(self.log_path, "ab") as log:
                self.proc = subprocess.Popen(
                    argv, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL
                )
            try:
                if self._wait_ready():
                    return self
            except BaseException:
                self.stop()
                raise
            last = self.log_tail()
            self.stop()
        raise AlertmanagerServerError(f"Alertmanager did not become ready:\n{last}")

    def _wait_ready(self) -> bool:
        assert self.proc is not None
        deadline = time.monotonic() + self.ready_timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                return False
            try:
                with urllib.request.urlopen(self.url + "/-/ready", timeout=1) as resp:
                    if resp.status == 200:
                        return True
            except (urllib.error.URLError, ConnectionError, TimeoutError):
                pass
            time.sleep(0.03)
        return False

    def stop(self) -> None:
        """Terminate the process (SIGTERM, then SIGKILL after 5 s). Idempotent."""
        proc, self.proc = self.proc, None
        if proc is None or proc.poll() is not None:
            return
        proc.terminate()
        try:
            proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=5)

    def close(self) -> None:
        """Stop the server and remove its temporary directory."""
        self.stop()
        self._tmp.cleanup()

    def __enter__(self) -> Self:
        try:
            return self.start()
        except BaseException:
            self.close()
            raise

    def __exit__(self, *exc: object) -> None:
        self.close()

    def log_tail(self, lines: int = 30) -> str:
        """Last lines of the server's log (stdout+stderr)."""
        try:
            return "\n".join(self.log_path.read_text(errors="replace").splitlines()[-lines:])
        except OSError:
            return ""

    # -- API -------------------------------------------------------------------

    def _request(self, method: str, path: str, body: object = None) -> object:
        data = None if body is None else json.dumps(body).encode()
        req = urllib.request.Request(
            self.url + path,
            data=data,
            method=method,
            headers={"Content-Type": "application/json"},
        )
        try:
            with urllib.request.urlopen(req, timeout=10) as resp:
                raw = resp.read()
        except urllib.error.HTTPError as exc:
            raise AlertmanagerServerError(
                f"{method} {path}: HTTP {exc.code}: {exc.read().decode(errors='replace')}"
            ) from None
        except (urllib.error.URLError, ConnectionError, TimeoutError) as exc:
            raise AlertmanagerServerError(f"{method} {path}: {exc}\n{self.log_tail()}") from None
        return json.loads(raw) if raw.strip() else None

    def post_alerts(self, label_sets: Iterable[Mapping[str, str]], hours: float = 1.0) -> None:
        """POST alerts to ``/api/v2/alerts``: startsAt now, endsAt in ``hours`` (a negative
        ``hours`` posts them resolved)."""
        now = datetime.now(UTC)
        starts = _rfc3339(now - timedelta(seconds=1 if hours > 0 else 3600))
        ends = _rfc3339(now + timedelta(hours=hours))
        payload = [
            {"labels": dict(ls), "annotations": {}, "startsAt": starts, "endsAt": ends}
            for ls in label_sets
        ]
        self._request("POST", "/api/v2/alerts", payload)

    def get_alerts(self) -> list[dict]:
        """``GET /api/v2/alerts`` (active, silenced, inhibited and unprocessed)."""
        result = self._request("GET", "/api/v2/alerts")
        if not isinstance(result, list):
            raise AlertmanagerServerError(f"GET /api/v2/alerts: expected a list, got {result!r:.200}")
        return result

    def wait_for_alerts(
        self,
        label_sets: Iterable[Mapping[str, str]],
        *,
        timeout: float = 10.0,
        settle: float = 0.5,
        interval: float = 0.1,
    ) -> dict[frozenset[tuple[str, str]], dict]:
        """Poll until every given label set is listed and the status of all alerts
        has stopped changing (inhibition is computed at query time from a cache the
        server fills asynchronously). Returns ``{label_key(labels): alert json}``.

        Waits at least ``settle`` seconds after all alerts are listed and requires two
        identical consecutive answers. Raises :class:`AlertmanagerServerError` if the
        alerts do not all appear within ``timeout``.
        """
        wanted = {label_key(ls) for ls in label_sets}
        deadline = time.monotonic() + timeout
        seen_all_at: float | None = None
        previous: dict | None = None
        while True:
            alerts = {label_key(a["labels"]): a for a in self.get_alerts()}
            now = time.monotonic()
            if wanted <= alerts.keys():
                if seen_all_at is None:
                    seen_all_at = now
                # Not the inhibitedBy fingerprints themselves: Alertmanager 0.25 reports
                # one source picked in Go map order, which may differ between queries.
                snapshot = {
                    k: (a["status"]["state"], bool(a["status"]["inhibitedBy"]))
                    for k, a in alerts.items()
                }
                if now - seen_all_at >= settle and snapshot == previous:
                    return alerts
                previous = snapshot
            elif now > deadline:
                missing = [dict(k) for k in wanted - alerts.keys()]
                raise AlertmanagerServerError(
                    f"alerts not listed after {timeout}s: {missing[:5]}\n{self.log_tail()}"
                )
            if now > deadline + settle + 5:
                raise AlertmanagerServerError("alert status did not settle")
            time.sleep(interval)

