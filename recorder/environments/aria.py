"""Talking to a live ARIA-compatible server: an HTTP adapter and a WebSocket adapter.

The API (``examples/aria-episodes/CASE-README.md``): ``POST /reset {task_id, seed}`` gives an
Observation, ``POST /step`` with an Action gives ``{observation, reward, done, info}``,
``GET /state`` the episode state with the final score. ``/ws`` takes ``{"command": "reset",
"task_id", "seed"}``, ``{"command": "step", "action"}`` and ``{"command": "state"}`` and
answers ``{"type": "observation"|"step_result"|"state", "data"}`` or ``{"type": "error",
"message"}``.

Semantics the adapters carry:

- HTTP shares one environment across all clients (each ``/reset`` replaces it), so HTTP
  episodes must run one at a time per server: :func:`server_lock` serializes them across
  threads and processes of this machine. ``/ws`` gives one environment per connection.
- After a 500 the server (uvicorn) drops the keep-alive socket; the next request on it gets
  a connection reset. :class:`HttpEnvironment` retries such a request once on a new
  connection and reports the error in ``transport["retried_after"]``.
- A failed action (HTTP 4xx/5xx on ``/step``, or a WebSocket error message) is not an
  exception: it comes back as a :class:`StepOutcome` with
  ``error`` set, to be recorded as the step's result (a 500 to one action is what ARIA
  does to ``diagnose`` on ``generated``; the episode goes on).
- Except a server that lost the episode: ARIA keeps it in memory only, so a restarted
  server answers every later call 400 "Call /reset before /step" (``server/app.py:1481``).
  That is the environment's failure, not the agent's action: :class:`EpisodeLost`.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import http.client
import json
import socket
import tempfile
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from contract.errors import BadInput, EnvironmentFailure
from contract.untrusted import UnsafeInput, json_safe

TIMEOUT_S = 30.0
LOCK_WAIT_S = 900.0
DROPPED = (
    ConnectionResetError,
    ConnectionAbortedError,
    BrokenPipeError,
    http.client.RemoteDisconnected,
    http.client.BadStatusLine,
)


MAX_ANSWER_BYTES = 32 * 1024 * 1024
"""Largest answer read from an environment (an ARIA observation is a few kB)."""
ANSWER_SECONDS = 60.0
"""Longest one answer may take to arrive whole (a server dripping a byte at a time is cut)."""


def _cut(sock) -> None:
    """Shut a request's socket from the watchdog thread: a blocked read returns."""
    if sock is not None:
        with contextlib.suppress(OSError):
            sock.shutdown(socket.SHUT_RDWR)


def _read_answer(response, started: float, what: str, url: str) -> bytes:
    """An HTTP answer's body, at most :data:`MAX_ANSWER_BYTES`, within :data:`ANSWER_SECONDS`
    of the request. Raises EnvironmentFailure past either."""
    chunks, total = [], 0
    while True:
        chunk = response.read(65536)
        if not chunk:
            return b"".join(chunks)
        chunks.append(chunk)
        total += len(chunk)
        if total > MAX_ANSWER_BYTES:
            raise EnvironmentFailure(url, f"{what}: answer over {MAX_ANSWER_BYTES} bytes")
        if time.perf_counter() - started > ANSWER_SECONDS:
            raise EnvironmentFailure(url, f"{what}: the answer took over {ANSWER_SECONDS:g} s")


LOST_EPISODE = "Call /reset before"


class EpisodeLost(EnvironmentFailure):
    """The server no longer has the episode (ARIA's 400 "Call /reset before ..."): the
    recording ends as an environment failure and can be resumed."""


@dataclass
class StepOutcome:
    """What the environment answered to one action.

    ``observation``/``reward``/``done``/``info`` are the step result as the server sent it
    (``observation`` and ``reward`` are None when the server failed the action). ``error`` is
    ``{"status": int | None, "message": str}`` when it did (HTTP 5xx/4xx, or a WebSocket
    ``{"type": "error"}``); the environment did not advance then. ``transport`` is what the
    run keeps about the exchange: ``{kind: "http"|"ws", status, latency_ms, retried_after}``.
    """

    observation: dict[str, Any] | None
    reward: float | None
    done: bool
    info: dict[str, Any]
    error: dict[str, Any] | None = None
    transport: dict[str, Any] = field(default_factory=dict)


def _parse(url: str) -> tuple[str, str, int, str]:
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise BadInput(url, "--env-url must be an http:// or https:// URL with a host")
    port = parts.port or (443 if parts.scheme == "https" else 80)
    return parts.scheme, parts.hostname, port, parts.path.rstrip("/")


@contextlib.contextmanager
def server_lock(url: str, wait_s: float = LOCK_WAIT_S) -> Iterator[None]:
    """Hold the machine-wide lock for HTTP episodes on the server at ``url``.

    An ``flock`` on a file in the temp folder named by a hash of the URL: other threads and
    processes recording over HTTP on the same server wait here until the episode ends.

    Raises:
        EnvironmentFailure: the lock was not free within ``wait_s`` seconds.
    """
    digest = hashlib.sha256(url.rstrip("/").encode()).hexdigest()[:16]
    path = Path(tempfile.gettempdir()) / f"alertforge-aria-{digest}.lock"
    deadline = time.monotonic() + wait_s
    with open(path, "a+b") as handle:
        while True:
            try:
                fcntl.flock(handle.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() > deadline:
                    raise EnvironmentFailure(
                        url,
                        f"another HTTP episode held the server for over {wait_s:.0f} s "
                        "(HTTP shares one environment; use --transport ws to run in parallel)",
                    ) from None
                time.sleep(0.05)
        try:
            yield
        finally:
            fcntl.flock(handle.fileno(), fcntl.LOCK_UN)


class HttpEnvironment:
    """The HTTP API over one keep-alive connection (stdlib ``http.client``).

    ``reset``/``step``/``state`` as in the module docstring; a dropped connection is retried
    once on a new connection. Not safe for two episodes at once: see :func:`server_lock`.
    """

    kind = "http"

    def __init__(self, url: str, timeout: float = TIMEOUT_S):
        self.url = url.rstrip("/")
        self.scheme, self.host, self.port, self.prefix = _parse(url)
        self.timeout = timeout
        self._connection: http.client.HTTPConnection | None = None

    def _connect(self) -> http.client.HTTPConnection:
        if self._connection is None:
            factory = (
                http.client.HTTPSConnection
                if self.scheme == "https"
                else http.client.HTTPConnection
            )
            self._connection = factory(self.host, self.port, timeout=self.timeout)
        return self._connection

    def close(self) -> None:
        """Close the connection (a new one is opened by the next request)."""
        if self._connection is not None:
            self._connection.close()
            self._connection = None

    def request(
        self, method: str, path: str, body: dict[str, Any] | None = None
    ) -> tuple[int, Any, dict[str, Any]]:
        """One request: ``(status, parsed JSON body or {"_non_json_body": text}, transport)``.

        Raises:
            EnvironmentFailure: the server cannot be reached, or dropped the connection twice.
        """
        payload = None if body is None else json.dumps(body).encode("utf-8")
        headers = {"Accept": "application/json"}
        if payload is not None:
            headers["Content-Type"] = "application/json"
        retried_after = None
        for attempt in (1, 2):
            started = time.perf_counter()
            try:
                connection = self._connect()
                connection.request(method, self.prefix + path, body=payload, headers=headers)
                watchdog = threading.Timer(ANSWER_SECONDS, _cut, (connection.sock,))
                watchdog.start()  # a server that drips its headers too is cut off at the deadline
                try:
                    response = connection.getresponse()
                    data = _read_answer(response, started, f"{method} {path}", self.url)
                finally:
                    watchdog.cancel()
                if time.perf_counter() - started > ANSWER_SECONDS:
                    raise EnvironmentFailure(self.url, f"{method} {path}: the answer took over "
                                             f"{ANSWER_SECONDS:g} s")
            except DROPPED as err:
                self.close()
                if attempt == 2:
                    raise EnvironmentFailure(
                        self.url,
                        f"{method} {path}: connection dropped again after a retry ({err!r})",
                    ) from None
                retried_after = f"{type(err).__name__}: {err}"
                continue
            except OSError as err:
                self.close()
                raise EnvironmentFailure(self.url, f"{method} {path}: {err}") from None
            latency = round((time.perf_counter() - started) * 1000, 3)
            if response.will_close:
                self.close()
            try:
                parsed = json_safe(json.loads(data), self.url) if data else None
            except ValueError:
                parsed = {"_non_json_body": data.decode("utf-8", errors="replace")}
            except UnsafeInput as err:
                raise EnvironmentFailure(self.url, f"{method} {path}: the answer {err.problem}") from None
            transport = {
                "kind": "http",
                "method": method,
                "path": path,
                "status": response.status,
                "latency_ms": latency,
            }
            if retried_after:
                transport["retried_after"] = retried_after
            return response.status, parsed, transport
        raise AssertionError("unreachable")

    def reset(self, task_id: str, seed: int | None) -> tuple[dict[str, Any], dict[str, Any]]:
        """``POST /reset``: ``(observation, transport)``.

        Raises:
            BadInput: the server refused the task (e.g. 400 for an unknown task id).
            EnvironmentFailure: no usable answer.
        """
        status, body, transport = self.request("POST", "/reset", {"task_id": task_id, "seed": seed})
        check_endpoint(self.url, "/reset", status, body)
        if status in (400, 404, 422):
            raise BadInput(task_id, f"the environment refused this task: {answer_message(body)}")
        if status != 200 or not isinstance(body, dict):
            raise EnvironmentFailure(self.url, f"POST /reset answered {status}: {answer_message(body)}")
        return body, transport

    def step(self, action: dict[str, Any]) -> StepOutcome:
        """``POST /step``; a non-200 answer is a StepOutcome with ``error`` set."""
        status, body, transport = self.request("POST", "/step", action)
        if status == 400 and answer_message(body).startswith(LOST_EPISODE):
            raise EpisodeLost(self.url, f"POST /step answered 400 {answer_message(body)!r}: the server "
                              "lost the episode (restarted?); the run is kept, run the same "
                              "command again to resume")
        if status != 200:
            return StepOutcome(
                None,
                None,
                False,
                {},
                error={"status": status, "message": answer_message(body)},
                transport=transport,
            )
        return step_outcome(body, transport, self.url)

    def state(self) -> dict[str, Any]:
        """``GET /state`` (EnvironmentFailure when it does not answer 200 with an object)."""
        status, body, _ = self.request("GET", "/state")
        if status != 200 or not isinstance(body, dict):
            raise EnvironmentFailure(self.url, f"GET /state answered {status}: {answer_message(body)}")
        return body


def check_endpoint(url: str, path: str, status: int, body: Any) -> None:
    """BadInput naming ``url`` when nothing answers ``POST path`` there (404 Not Found or 405
    Method Not Allowed with no ARIA error text: FastAPI's own answers for a route it lacks),
    e.g. an ``--env-url`` with a path of its own; ARIA refuses a task with 400 or 422, and an
    unknown dual-agent session with 404 and its own text."""
    message = answer_message(body)
    if status in (404, 405) and message in ("Not Found", "Method Not Allowed", "null", ""):
        raise BadInput(url, f"nothing answers POST {path} here (HTTP {status} {message}): "
                       "--env-url is the server's base URL, e.g. http://127.0.0.1:8000")


def answer_message(body: Any) -> str:
    """The text of an error answer: its ``detail``, ``message``, ``error`` or non-JSON body,
    else the body as JSON."""
    if isinstance(body, dict):
        for key in ("detail", "message", "error", "_non_json_body"):
            if key in body:
                value = body[key]
                return value if isinstance(value, str) else json.dumps(value)
    return json.dumps(body)


def step_outcome(body: Any, transport: dict[str, Any], url: str) -> StepOutcome:
    """A ``{observation, reward, done, info}`` answer as a StepOutcome (EnvironmentFailure
    when it is not that shape)."""
    if (
        not isinstance(body, dict)
        or not isinstance(body.get("observation"), dict)
        or isinstance(body.get("reward"), bool)
        or not isinstance(body.get("reward"), (int, float))
    ):
        raise EnvironmentFailure(
            url, f"step answer is not {{observation, reward, done, info}}: {json.dumps(body)[:300]}"
        )
    info = body.get("info") if isinstance(body.get("info"), dict) else {}
    return StepOutcome(
        body["observation"], body["reward"], body.get("done") is True, info, transport=transport
    )


class WebSocketEnvironment:
    """The ``/ws`` endpoint: one environment per connection (``websockets`` sync client).

    A dropped connection loses the environment: :meth:`step` raises EnvironmentFailure and
    the recorder replays the episode on a new connection (see :mod:`.live`).
    """

    kind = "ws"

    def __init__(self, url: str, timeout: float = TIMEOUT_S):
        scheme, host, port, prefix = _parse(url)
        self.url = f"{'wss' if scheme == 'https' else 'ws'}://{host}:{port}{prefix}/ws"
        self.timeout = timeout
        self._socket = None

    def _connect(self):
        from websockets.exceptions import WebSocketException
        from websockets.sync.client import connect

        if self._socket is None:
            try:
                opened = connect(self.url, open_timeout=self.timeout, max_size=2**24)
                self._socket = opened.__enter__()  # the connection, on every websockets version
            except (OSError, TimeoutError) as err:
                raise EnvironmentFailure(self.url, f"cannot connect: {err}") from None
            except WebSocketException as err:  # a refused or broken handshake
                raise EnvironmentFailure(self.url, f"WebSocket handshake failed: {err}") from None
        return self._socket

    def close(self) -> None:
        """Close the connection (its environment is gone with it)."""
        if self._socket is not None:
            with contextlib.suppress(Exception):
                self._socket.close()
            self._socket = None

    def exchange(self, message: dict[str, Any]) -> tuple[dict[str, Any], float]:
        """Send one command and read its answer: ``(message, latency_ms)``.

        Raises:
            EnvironmentFailure: the connection closed or the answer is not a JSON object.
        """
        from websockets.exceptions import ConnectionClosed

        socket = self._connect()
        started = time.perf_counter()
        try:
            socket.send(json.dumps(message))
            raw = socket.recv(timeout=self.timeout)
        except (ConnectionClosed, OSError, TimeoutError) as err:
            self.close()
            raise EnvironmentFailure(
                self.url, f"connection lost during {message.get('command')}: {err}"
            ) from None
        latency = round((time.perf_counter() - started) * 1000, 3)
        if len(raw) > MAX_ANSWER_BYTES:
            raise EnvironmentFailure(self.url, f"answer over {MAX_ANSWER_BYTES} bytes")
        try:
            answer = json_safe(json.loads(raw), self.url)
        except ValueError:
            answer = None
        except UnsafeInput as err:
            raise EnvironmentFailure(self.url, f"the answer {err.problem}") from None
        if not isinstance(answer, dict) or not isinstance(answer.get("type"), str):
            raise EnvironmentFailure(self.url, f"answer is not {{type, data}}: {str(raw)[:300]}")
        return answer, latency

    def reset(self, task_id: str, seed: int | None) -> tuple[dict[str, Any], dict[str, Any]]:
        """``{"command": "reset"}``: ``(observation, transport)``; a refused task is BadInput."""
        answer, latency = self.exchange({"command": "reset", "task_id": task_id, "seed": seed})
        transport = {
            "kind": "ws",
            "command": "reset",
            "type": answer["type"],
            "latency_ms": latency,
        }
        if answer["type"] == "error":
            self.close()  # ARIA closes the socket after a refused reset
            raise BadInput(task_id, f"the environment refused this task: {answer.get('message')}")
        if answer["type"] != "observation" or not isinstance(answer.get("data"), dict):
            raise EnvironmentFailure(self.url, f"reset answered type {answer['type']!r}")
        return answer["data"], transport

    def step(self, action: dict[str, Any]) -> StepOutcome:
        """``{"command": "step"}``; an error message is a StepOutcome with ``error`` set."""
        answer, latency = self.exchange({"command": "step", "action": action})
        transport = {"kind": "ws", "command": "step", "type": answer["type"], "latency_ms": latency}
        if answer["type"] == "error":
            return StepOutcome(
                None,
                None,
                False,
                {},
                error={"status": None, "message": str(answer.get("message"))},
                transport=transport,
            )
        if answer["type"] != "step_result":
            raise EnvironmentFailure(self.url, f"step answered type {answer['type']!r}")
        return step_outcome(answer.get("data"), transport, self.url)

    def state(self) -> dict[str, Any]:
        """``{"command": "state"}`` (EnvironmentFailure unless it answers a state object)."""
        answer, _ = self.exchange({"command": "state"})
        if answer["type"] != "state" or not isinstance(answer.get("data"), dict):
            raise EnvironmentFailure(
                self.url, f"state answered type {answer['type']!r}: {answer.get('message')}"
            )
        return answer["data"]


def open_environment(url: str, transport: str) -> HttpEnvironment | WebSocketEnvironment:
    """The adapter for ``transport`` (``http`` or ``ws``); BadInput for anything else."""
    if transport == "http":
        return HttpEnvironment(url)
    if transport == "ws":
        return WebSocketEnvironment(url)
    raise BadInput(transport, "unknown transport; known: http, ws")
