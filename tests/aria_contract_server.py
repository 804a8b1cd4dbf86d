"""A local ARIA-compatible server that answers from recorded transcripts (for contract tests).

It is not a simulator: every answer is a response recorded from the real ARIA server
(``examples/aria-episodes/``: the 16 episodes and ``endpoint-samples.json``). A request the
recordings do not cover is answered ``409 {"detail": "contract server: ..."}`` (over /ws an
``error`` message saying so), never with a made-up result. What it reproduces, from the
case's README and ``findings``:

- **Shared HTTP session**: one environment for every HTTP client; each ``POST /reset``
  replaces it (``findings.global_session``).
- **Dropped connection after a server error**: after a recorded 500 the keep-alive socket
  stays open, and the next request sent on it is answered with a TCP reset (what uvicorn's
  dropped socket does to the client: ``client_retry_after`` in the transcripts).
  ``ContractServer.dropped`` counts those resets.
- **Step after done**: ``200 {observation, reward: 0.0, done: false, info: {}}``
  (``findings.step_after_done``). Only status, reward and done were recorded: the observation
  sent is the last recorded one with ``step`` counted on, and says so in no field.
- **/ws**: one environment per connection; ``{"command": ...}`` in, ``{"type", "data"}`` or
  ``{"type": "error", "message"}`` out, with the recorded error messages of the ``/ws``
  session log (a step before reset, an unknown command, a bad action type, the crash of
  ``diagnose`` on ``generated``); a refused reset sends its error and closes the socket.
- Unknown task on ``/reset``: the recorded 400; a bad ``action_type``: the recorded 422.
- **Episode ids**: each ``/reset`` takes the episode id of its first transcript's final
  ``/state``; ``GET /state`` before the end answers ``{episode_id, task_id, step}`` only
  (not recorded: ARIA's full state mid-episode is not in the transcripts) and the final
  ``/state`` carries the reset's id, so a foreign reset shows as a changed id.
- **Server restart** (``ContractServer.restart()``): the episode is forgotten, and every
  later ``/step`` and ``/state`` gets ARIA's recorded 400 "Call /reset before /step"
  (``easy-server-restart-seed3.json``).
- **Foreign reset** (``ContractServer.before_step``: a callable run once before the next
  ``/step``, e.g. another client's reset); ``easy-foreign-reset-seed7.json`` is served as
  the seed-7 reset and the seed-1 episode its steps ran in.
- **Set 2** (``tests/fixtures/aria-2026-12/``, SOURCE.md): its single-agent HTTP
  transcripts besides the 16, and its dual-agent sessions (``/multi-agent/...``).

A step is answered from every transcript of the reset (task, seed) whose recorded actions
so far equal the ones received: the transcripts' own responses, in order.
"""

from __future__ import annotations

import contextlib
import json
import socket
import struct
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

EXAMPLES = Path(__file__).resolve().parent.parent / "examples" / "aria-episodes"
SET2 = Path(__file__).resolve().parent / "fixtures" / "aria-2026-12"
ACTION_TYPES = (
    "diagnose",
    "read_logs",
    "read_metrics",
    "read_runbook",
    "restart_service",
    "rollback",
    "scale_up",
    "alert_oncall",
    "acknowledge",
    "noop",
    "search_logs",
    "block_ip_range",
    "create_index",
    "failover",
)


def _no_record(what: str) -> dict[str, Any]:
    return {"detail": f"contract server: no recorded answer for {what}"}


@dataclass
class Recordings:
    """The transcripts by (task_id, seed) and the endpoint samples."""

    transcripts: dict[tuple[str, int | None], list[dict[str, Any]]]
    samples: dict[str, Any]
    dual: dict[tuple[str, int | None], list[dict[str, Any]]] = field(default_factory=dict)

    @classmethod
    def load(cls, folder: Path = EXAMPLES, more: Path | None = SET2) -> Recordings:
        """Read ``folder/episodes/*.json``, ``folder/endpoint-samples.json`` and the
        HTTP transcripts of ``more`` (set 2; /ws sessions are skipped)."""
        by_key: dict[tuple[str, int | None], list[dict[str, Any]]] = {}
        dual: dict[tuple[str, int | None], list[dict[str, Any]]] = {}
        paths = sorted((folder / "episodes").glob("*.json"))
        paths += sorted(more.glob("*seed*.json")) if more else []
        for path in paths:
            data = json.loads(path.read_bytes())
            data["_file"] = path.name
            reset = data.get("reset") or {}
            route = (reset.get("request") or {}).get("path")
            if route == "/multi-agent/reset":
                dual.setdefault((data["task_id"], data["seed"]), []).append(data)
                continue
            if route != "/reset":
                continue  # a /ws session
            calls = data["steps"]
            if calls and calls[0]["request"]["path"] == "/reset":  # the foreign reset case
                foreign = calls[0]["request"]["json"]
                by_key.setdefault((data["task_id"], data["seed"]), []).append(
                    {**data, "steps": [], "final_state": None})
                data = {**data, "seed": foreign["seed"], "reset": calls[0], "steps": calls[1:]}
            by_key.setdefault((data["task_id"], data["seed"]), []).append(data)
        samples = json.loads((folder / "endpoint-samples.json").read_bytes())["samples"]
        return cls(by_key, samples, dual)

    @property
    def task_ids(self) -> set[str]:
        """The task ids ``/reset`` accepts (the recorded ``/tasks`` list and ``generated``)."""
        return {task["id"] for task in self.samples["tasks"]["response"]["tasks"]} | {"generated"}

    def ws_error(self, command: str, action_type: str | None = None) -> str | None:
        """The recorded /ws error message for a command (and action type), if any."""
        for entry in self.samples["ws_session_log"]:
            sent, recv = entry.get("sent") or {}, entry.get("recv") or {}
            if recv.get("type") != "error" or sent.get("command") != command:
                continue
            if action_type is None or (sent.get("action") or {}).get("action_type") == action_type:
                return recv["message"]
        return None


@dataclass
class RecordedEpisode:
    """One environment: which transcripts still agree with the actions received."""

    book: Recordings
    candidates: list[dict[str, Any]] = field(default_factory=list)
    position: int = 0
    done: bool = False
    observation: dict[str, Any] | None = None
    reset_called: bool = False
    episode_id: str | None = None

    def reset(self, task_id: Any, seed: Any) -> tuple[int, Any]:
        """``(status, body)`` of ``/reset``: the recorded observation, 400 or 409."""
        if task_id not in self.book.task_ids:
            body = json.loads(json.dumps(self.book.samples["reset_bad_task"]["response"]))
            body["detail"] = body["detail"].replace("Got: nope", f"Got: {task_id}")
            return 400, body
        matches = self.book.transcripts.get((task_id, seed))
        if not matches:
            return 409, _no_record(f"/reset of task {task_id!r} with seed {seed!r}")
        self.candidates, self.position, self.done = list(matches), 0, False
        self.observation = matches[0]["reset"]["response"]
        self.reset_called = True
        ids = [((t.get("final_state") or {}).get("response") or {}).get("episode_id")
               for t in matches]
        self.episode_id = next((i for i in ids if i), f"contract-{task_id}-{seed}")
        return 200, self.observation

    def step(self, action: Any) -> tuple[int, Any, bool]:
        """``(status, body, recorded 500)`` for one action."""
        if not isinstance(action, dict) or action.get("action_type") not in ACTION_TYPES:
            body = json.loads(json.dumps(self.book.samples["step_bad_action_type"]["response"]))
            given = action.get("action_type") if isinstance(action, dict) else None
            body["detail"][0]["input"] = given
            return 422, body, False
        if not self.reset_called:
            return 400, {"detail": "Call /reset before /step"}, False
        if self.done:  # findings.step_after_done: 200, done false, reward 0.0
            observation = dict(self.observation or {})
            observation["step"] = int(observation.get("step", 0)) + 1
            self.observation = observation
            return (
                200,
                {"observation": observation, "reward": 0.0, "done": False, "info": {}},
                False,
            )
        agreeing = [
            t
            for t in self.candidates
            if self.position < len(t["steps"])
            and t["steps"][self.position]["request"]["json"] == action
        ]
        if not agreeing:
            return (
                409,
                _no_record(f"action {json.dumps(action)} at step {self.position + 1}"),
                False,
            )
        self.candidates = agreeing
        call = agreeing[0]["steps"][self.position]
        self.position += 1
        if call["status"] == 200:
            self.observation = call["response"]["observation"]
            self.done = call["response"]["done"]
        return call["status"], call["response"], call["status"] >= 500

    def state(self) -> tuple[int, Any]:
        """``(status, body)`` of ``/state``: recorded only once a transcript's actions are done."""
        if not self.reset_called:
            return 400, {"detail": "Call /reset before /state"}
        finished = [
            t for t in self.candidates if self.position == len(t["steps"])
            and (t.get("final_state") or {}).get("status") == 200
        ]
        if not finished:
            task = self.candidates[0]["task_id"] if self.candidates else None
            return 200, {"episode_id": self.episode_id, "task_id": task, "step": self.position}
        return 200, {**finished[0]["final_state"]["response"], "episode_id": self.episode_id}


@dataclass
class RecordedSession:
    """One dual-agent session: the transcripts still agreeing with the calls received."""

    candidates: list[dict[str, Any]]
    session_id: str
    position: int = 0

    def call(self, agent: str, body: Any) -> tuple[int, Any]:
        """``(status, body)`` of ``step/a`` or ``step/b``: the recorded answer, or 409."""
        agreeing = []
        for t in self.candidates:
            if self.position < len(t["steps"]):
                recorded = t["steps"][self.position]
                if recorded["request"]["path"].split("/")[3] == agent and \
                        recorded["request"]["json"] == body:
                    agreeing.append(t)
        if not agreeing:
            return 409, _no_record(f"step/{agent} {json.dumps(body)} at call {self.position + 1}")
        self.candidates = agreeing
        recorded = agreeing[0]["steps"][self.position]
        self.position += 1
        return recorded["status"], recorded["response"]

    def state(self) -> tuple[int, Any]:
        """The recorded ``/multi-agent/state`` once a transcript's calls are all made."""
        done = [t for t in self.candidates if self.position == len(t["steps"])]
        if not done:
            return 409, _no_record(f"/multi-agent/state after {self.position} calls")
        return 200, {**done[0]["final_state"]["response"], "session_id": self.session_id}


def multi_agent(server: ContractServer, method: str, path: str, body: Any) -> tuple[int, Any]:
    """The ``/multi-agent/...`` routes: reset, step/a, step/b, state (recorded answers)."""
    parts = path.split("/")
    if method == "POST" and path == "/multi-agent/reset":
        task, seed = (body or {}).get("task_id"), (body or {}).get("seed", 42)
        matches = server.book.dual.get((task, seed))
        if not matches:
            return 409, _no_record(f"/multi-agent/reset of {task!r} seed {seed!r}")
        reset = matches[0]["reset"]
        if reset["status"] != 200:
            return reset["status"], reset["response"]
        sid = f"contract-{len(server.sessions) + 1}"
        server.sessions[sid] = RecordedSession(list(matches), sid)
        return 200, {**reset["response"], "session_id": sid}
    session = server.sessions.get(parts[-1]) if len(parts) >= 4 else None
    if session is None:
        return 404, {"detail": "Session not found"}
    if method == "POST" and len(parts) == 5 and parts[2] == "step" and parts[3] in ("a", "b"):
        return session.call(parts[3], body)
    if method == "GET" and len(parts) == 4 and parts[2] == "state":
        return session.state()
    return 404, {"detail": "Not Found"}


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: ContractServer

    def log_message(self, format: str, *args: Any) -> None:  # quiet
        pass

    def handle(self) -> None:
        """Keep-alive loop; a request after a recorded 500 on this socket gets a TCP reset."""
        with self.server.lock:
            self.server.live.add(self.connection)
        self.poisoned = False
        self.close_connection = True
        self.handle_one_request()
        while not self.close_connection:
            if self.poisoned and self._next_request_arrives():
                self._reset_connection()
                return
            self.handle_one_request()

    def _next_request_arrives(self) -> bool:
        try:
            return bool(self.connection.recv(1, socket.MSG_PEEK))
        except OSError:
            return False

    def _reset_connection(self) -> None:
        with self.server.lock:
            self.server.dropped += 1
        self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        self.close_connection = True
        self.connection.close()

    def _send(self, status: int, body: Any) -> None:
        if isinstance(body, dict) and set(body) == {"_non_json_body"}:
            data, kind = body["_non_json_body"].encode(), "text/plain; charset=utf-8"
        else:
            data, kind = json.dumps(body).encode(), "application/json"
        self.send_response(status)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)
        self.wfile.flush()

    def _body(self) -> Any:
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        return json.loads(raw) if raw else None

    def do_POST(self) -> None:
        """``/reset`` and ``/step`` on the one shared HTTP environment."""
        body = self._body()
        with self.server.lock:
            self.server.requests.append(("POST", self.path, body))
            episode = self.server.http_episode
            if self.path.startswith("/multi-agent/"):
                status, answer = multi_agent(self.server, "POST", self.path, body)
                crashed = False
            elif self.path == "/reset":
                status, answer = episode.reset(
                    *((body or {}).get(k, d) for k, d in (("task_id", "easy"), ("seed", None)))
                )
                crashed = False
            elif self.path == "/step":
                hook, self.server.before_step = self.server.before_step, None
                if hook is not None:
                    hook(self.server)
                    episode = self.server.http_episode
                status, answer, crashed = episode.step(body)
            else:
                status, answer, crashed = 404, {"detail": "Not Found"}, False
        self._send(status, answer)
        self.poisoned = crashed

    def do_GET(self) -> None:
        """``/state``, ``/health`` and the ``/ws`` upgrade."""
        if self.path == "/ws" and self.headers.get("Upgrade", "").lower() == "websocket":
            self._websocket()
            return
        with self.server.lock:
            self.server.requests.append(("GET", self.path, None))
            if self.path.startswith("/multi-agent/"):
                status, answer = multi_agent(self.server, "GET", self.path, None)
            elif self.path == "/state":
                status, answer = self.server.http_episode.state()
            elif self.path == "/health":
                status, answer = 200, self.server.book.samples["health"]["response"]
            else:
                status, answer = 404, {"detail": "Not Found"}
        self._send(status, answer)

    # -- /ws ----------------------------------------------------------------------------------

    def _websocket(self) -> None:
        from websockets.frames import Opcode
        from websockets.http11 import Request
        from websockets.protocol import State
        from websockets.server import ServerProtocol

        protocol = ServerProtocol(max_size=2**24)
        head = self.raw_requestline + b"".join(
            f"{name}: {value}\r\n".encode("latin-1") for name, value in self.headers.items()
        )
        protocol.receive_data(head + b"\r\n")  # the handshake request, as the client sent it
        request = next(e for e in protocol.events_received() if isinstance(e, Request))
        response = protocol.accept(request)
        protocol.send_response(response)
        self._flush(protocol)
        self.close_connection = True
        if response.status_code != 101:
            return
        with self.server.lock:
            self.server.ws_connections += 1
        episode = RecordedEpisode(self.server.book)
        received = 0
        while protocol.state is not State.CLOSED:
            try:
                data = self.connection.recv(65536)
            except OSError:
                break
            if not data:
                protocol.receive_eof()
                break
            protocol.receive_data(data)
            for frame in protocol.events_received():
                if frame.opcode is not Opcode.TEXT:
                    continue
                received += 1
                if self._fault_drops_ws(received):
                    return
                answer, close = self._ws_answer(episode, frame.data.decode("utf-8"))
                protocol.send_text(json.dumps(answer).encode("utf-8"))
                if close:
                    protocol.send_close(1000)
            self._flush(protocol)

    def _fault_drops_ws(self, received: int) -> bool:
        """Fault injection (not ARIA behaviour): drop the connection without an answer once."""
        with self.server.lock:
            if self.server.drop_ws_at_message != received:
                return False
            self.server.drop_ws_at_message = None
            self.server.dropped += 1
        self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        self.connection.close()
        return True

    def _flush(self, protocol) -> None:
        for chunk in protocol.data_to_send():
            if chunk:
                self.connection.sendall(chunk)
            else:  # the protocol's end-of-stream marker: the closing handshake is done
                self.connection.shutdown(socket.SHUT_WR)

    def _ws_answer(self, episode: RecordedEpisode, text: str) -> tuple[dict[str, Any], bool]:
        book = self.server.book
        message = json.loads(text)
        command = message.get("command")
        with self.server.lock:
            self.server.requests.append(("WS", command, message))
        if command == "reset":
            status, body = episode.reset(message.get("task_id", "easy"), message.get("seed"))
            if status == 200:
                return {"type": "observation", "data": body}, False
            recorded = book.ws_error("reset") or ""
            text = recorded.replace("'nope'", repr(message.get("task_id")))
            return {"type": "error", "message": text if status == 400 else body["detail"]}, True
        if command == "step":
            if not episode.reset_called:
                return {"type": "error", "message": book.ws_error("step", "noop")}, False
            action = message.get("action")
            status, body, crashed = episode.step(action)
            if status == 200:
                return {"type": "step_result", "data": body}, False
            if status == 422:
                recorded = book.ws_error("step", "bogus") or ""
                given = (action or {}).get("action_type") if isinstance(action, dict) else None
                return {"type": "error", "message": recorded.replace("'bogus'", repr(given))}, False
            if crashed:
                recorded = book.ws_error("step", (action or {}).get("action_type"))
                return {"type": "error", "message": recorded or body.get("_non_json_body")}, False
            return {"type": "error", "message": body.get("detail")}, False
        if command == "state":
            status, body = episode.state()
            if status == 200:
                return {"type": "state", "data": body}, False
            return {"type": "error", "message": body["detail"]}, False
        return {"type": "error", "message": f"Unrecognized command: {command}"}, False


class ContractServer(ThreadingHTTPServer):
    """The server; ``url`` once started. Counters for tests: ``requests`` (method, path, body),
    ``dropped`` (connections reset: after a 500, or by ``drop_ws_at_message``),
    ``ws_connections``."""

    daemon_threads = True

    def __init__(self, book: Recordings | None = None):
        super().__init__(("127.0.0.1", 0), _Handler)
        self.book = book or Recordings.load()
        self.lock = threading.RLock()
        self.http_episode = RecordedEpisode(self.book)
        self.requests: list[tuple[str, str, Any]] = []
        self.dropped = 0
        self.ws_connections = 0
        self.live: set[socket.socket] = set()
        """Client connections accepted (:meth:`kill` cuts them)."""
        self.sessions: dict[str, RecordedSession] = {}
        """Dual-agent sessions by id; :meth:`restart` forgets them."""
        self.before_step = None
        """Run once (with the server) before the next /step is answered: a foreign reset."""
        self.drop_ws_at_message: int | None = None
        """Fault injection for tests: the next /ws connection to receive its N-th message is
        reset instead of answered (a lost connection; ARIA itself does not do this)."""
        self._thread: threading.Thread | None = None

    def restart(self) -> None:
        """What a restarted ARIA does: the in-memory episode is gone."""
        with self.lock:
            self.http_episode = RecordedEpisode(self.book)
            self.sessions = {}

    def foreign_reset(self, task_id: str, seed: int | None) -> None:
        """Another client's ``POST /reset`` of the shared HTTP environment."""
        self.http_episode.reset(task_id, seed)

    @property
    def url(self) -> str:
        """``http://127.0.0.1:<port>``."""
        host, port = self.server_address[:2]
        return f"http://{host}:{port}"

    def start(self) -> ContractServer:
        """Serve in a daemon thread; returns self."""
        self._thread = threading.Thread(target=self.serve_forever, args=(0.05,), daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop serving and close the listening socket."""
        self.shutdown()
        self.server_close()

    def kill(self) -> None:
        """A server that goes away: stop serving and cut every open client connection (a
        keep-alive connection would otherwise still be answered by its handler thread)."""
        self.stop()
        with self.lock:
            for connection in self.live:
                with contextlib.suppress(OSError):
                    connection.shutdown(socket.SHUT_RDWR)


if __name__ == "__main__":  # manual use: python tests/aria_contract_server.py
    server = ContractServer().start()
    print(f"ARIA contract server on {server.url} (Ctrl-C to stop)")
    try:
        threading.Event().wait()
    except KeyboardInterrupt:
        server.stop()
