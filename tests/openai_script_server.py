"""A local OpenAI-compatible chat-completions server that replies from a script (protocol tests).

Run as a process: ``python tests/openai_script_server.py --script S.json --log L.jsonl
--api-key K [--port 0]``. It binds 127.0.0.1, prints ``PORT <n>`` on stdout once it
listens, and serves ``POST /v1/chat/completions`` until killed.

The script is a JSON list; each request consumes the next entry:

- ``{"content": "text", "tool_calls": [{"name": "read_file", "arguments": {...}}]}``: a
  completion (``tool_calls`` optional; arguments are sent JSON-encoded, as OpenAI does;
  ``"raw_arguments": "..."`` sends that text instead; ``"id"`` overrides the call id);
- ``{"status": 400, "error": "message"}``: an OpenAI-style error reply.

Every request is appended to the log (one JSON line: headers we check, and the body). The
server is strict where OpenAI is: a wrong bearer key is 401; a body without ``model`` or
``messages``, a ``tool`` message whose ``tool_call_id`` answers no earlier assistant tool
call, or an assistant tool call left unanswered before the next assistant/user message is
400. An exhausted script is 400 ("script exhausted").
"""

from __future__ import annotations

import argparse
import json
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


def protocol_problem(body: dict) -> str | None:
    """Why a chat-completions request body breaks the protocol (None when it does not)."""
    if not isinstance(body.get("model"), str) or not isinstance(body.get("messages"), list):
        return "model and messages are required"
    pending: set[str] = set()
    answered: set[str] = set()
    for index, message in enumerate(body["messages"]):
        role = message.get("role")
        if role == "tool":
            call_id = message.get("tool_call_id")
            if call_id not in pending:
                return f"messages[{index}]: tool_call_id {call_id!r} answers no pending tool call"
            pending.discard(call_id)
            answered.add(call_id)
            if not isinstance(message.get("content"), str):
                return f"messages[{index}]: tool content must be a string"
            continue
        if pending:
            return f"messages[{index}]: tool calls {sorted(pending)} were not answered"
        if role == "assistant":
            for call in message.get("tool_calls") or []:
                function = call.get("function") or {}
                if not isinstance(function.get("arguments"), str) or not function.get("name"):
                    return f"messages[{index}]: a tool call needs a name and string arguments"
                if call.get("id") in answered or call.get("id") in pending:
                    return f"messages[{index}]: duplicate tool call id {call.get('id')!r}"
                pending.add(call.get("id"))
        elif role not in ("system", "user"):
            return f"messages[{index}]: unknown role {role!r}"
    return None


class ScriptState:
    """The script, the position in it, and the log file, shared by the handler threads."""

    def __init__(self, script: list[dict], log_path: str, api_key: str):
        self.script, self.log_path, self.api_key = script, log_path, api_key
        self.position = 0
        self.lock = threading.Lock()

    def next_entry(self) -> dict | None:
        with self.lock:
            if self.position >= len(self.script):
                return None
            entry = self.script[self.position]
            self.position += 1
            return entry

    def log(self, record: dict) -> None:
        with self.lock, open(self.log_path, "a", encoding="utf-8") as handle:
            handle.write(json.dumps(record) + "\n")


def completion(entry: dict, body: dict, number: int) -> dict:
    """The chat.completion object for a scripted reply."""
    calls = []
    for index, call in enumerate(entry.get("tool_calls") or []):
        arguments = call.get("raw_arguments")
        if arguments is None:
            arguments = json.dumps(call.get("arguments") or {})
        calls.append({"id": call.get("id", f"call_{number}_{index}"), "type": "function",
                      "function": {"name": call["name"], "arguments": arguments}})
    message = {"role": "assistant", "content": entry.get("content")}
    if calls:
        message["tool_calls"] = calls
    prompt_tokens = len(json.dumps(body["messages"])) // 4
    completion_tokens = max(1, len(json.dumps(message)) // 4)
    return {
        "id": f"chatcmpl-{number}", "object": "chat.completion", "created": 1_700_000_000 + number,
        "model": body["model"] + "-scripted",
        "choices": [{"index": 0, "message": message, "logprobs": None,
                     "finish_reason": "tool_calls" if calls else "stop"}],
        "usage": {"prompt_tokens": prompt_tokens, "completion_tokens": completion_tokens,
                  "total_tokens": prompt_tokens + completion_tokens,
                  "prompt_tokens_details": {"cached_tokens": 0}},
    }


def make_handler(state: ScriptState):
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args) -> None:  # quiet
            pass

        def _reply(self, status: int, payload: dict) -> None:
            data = json.dumps(payload).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def _error(self, status: int, message: str) -> None:
            self._reply(status, {"error": {"message": message, "type": "invalid_request_error",
                                           "param": None, "code": None}})

        def do_POST(self) -> None:  # http.server calls it by this name
            length = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(length)
            try:
                body = json.loads(raw)
            except json.JSONDecodeError:
                body = None
            state.log({"path": self.path, "authorization": self.headers.get("Authorization"),
                       "body": body})
            if self.path.rstrip("/") not in ("/v1/chat/completions", "/chat/completions"):
                self._error(404, f"no route {self.path}")
                return
            if self.headers.get("Authorization") != f"Bearer {state.api_key}":
                self._error(401, "invalid api key")
                return
            if not isinstance(body, dict):
                self._error(400, "body is not a JSON object")
                return
            problem = protocol_problem(body)
            if problem:
                self._error(400, problem)
                return
            entry = state.next_entry()
            if entry is None:
                self._error(400, "script exhausted")
                return
            if "status" in entry:
                self._error(int(entry["status"]), entry.get("error", "scripted error"))
                return
            self._reply(200, completion(entry, body, state.position))

    return Handler


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--script", required=True)
    parser.add_argument("--log", required=True)
    parser.add_argument("--api-key", required=True)
    parser.add_argument("--port", type=int, default=0)
    args = parser.parse_args(argv)
    with open(args.script, encoding="utf-8") as handle:
        script = json.load(handle)
    server = ThreadingHTTPServer(("127.0.0.1", args.port), make_handler(
        ScriptState(script, args.log, args.api_key)))
    print(f"PORT {server.server_address[1]}", flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
