"""A local OpenAI-compatible chat-completions server that replies from a script (protocol tests).

Run as a process: ``python tests/openai_script_server.py --script S.json --log L.jsonl
--api-key K [--port 0]``. It binds 127.0.0.1, prints ``PORT <n>`` on stdout once it
listens, and serves ``POST /v1/chat/completions`` until killed.

The script is a JSON list; each request consumes the next entry:

- ``{"content": "text", "tool_calls": [{"name": "read_file", "arguments": {...}}]}``: a
  completion (``tool_calls`` optional; arguments are sent JSON-encoded, as OpenAI does;
  ``"raw_arguments": "..."`` sends that text instead; ``"id"`` overrides the call id);
- ``{"status": 400, "error": "message"}``: an OpenAI-style error reply (``"code"`` sets
  ``error.code``, e.g. ``context_length_exceeded``).

What real servers do and OpenAI does not, per entry (notes/llama-server-replies.md):
``"omit_usage": true`` sends no ``usage``; ``"finish_reason"`` overrides it (``length``,
``content_filter``); ``"refusal": "text"`` sets ``message.refusal``; ``"delay_s": 3`` answers
that late (a slow model); a tool call's ``"name": ""`` is a nameless call (functionary);
``"content"`` may hold tool calls written as text (``<tool_call>{...}</tool_call>``, ...).
``{"reply_status": 400, "reply_body": ...}`` sends that body exactly (a JSON value, or text
sent as it is): a real server's reply replayed verbatim.

``--llama-cpp`` answers as llama-cpp-python 0.3.36's server does (the quirks measured with
SmolLM2-135M): an assistant message whose ``content`` is null or missing is HTTP 500
``internal_server_error``; a request with ``tools`` but no ``tool_choice`` gets the entry's
text only (the server ignores the tools then); the reply echoes the requested model; call
ids are ``call__<i>_<name>_cmpl-<n>``; one tool call also comes as a legacy
``function_call`` naming another tool with a trailing colon; usage has no ``*_details``;
a prompt of at least ``--n-ctx`` tokens (estimated: 4 characters a token) is HTTP 400
``context_length_exceeded`` with llama-cpp-python's message. ``GET /v1/models`` lists
``--model-file`` (the path, as the real server lists its ``--model``) and ``GET
/openapi.json`` has ``info.version`` ``0.3.36``.

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
import time
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

    def __init__(self, script: list[dict], log_path: str, api_key: str, llama_cpp: bool = False,
                 n_ctx: int | None = None, model_file: str | None = None):
        self.script, self.log_path, self.api_key = script, log_path, api_key
        self.llama_cpp, self.n_ctx, self.model_file = llama_cpp, n_ctx, model_file
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


def completion(entry: dict, body: dict, number: int, llama_cpp: bool = False) -> dict:
    """The chat.completion object for a scripted reply (as llama-cpp-python sends it when
    ``llama_cpp``)."""
    calls = []
    ignored = llama_cpp and body.get("tools") and body.get("tool_choice") in (None, "none")
    for index, call in enumerate([] if ignored else entry.get("tool_calls") or []):
        arguments = call.get("raw_arguments")
        if arguments is None:
            arguments = json.dumps(call.get("arguments") or {})
        default_id = (f"call__{index}_{call['name']}_cmpl-{number}" if llama_cpp
                      else f"call_{number}_{index}")
        calls.append({"id": call.get("id", default_id), "type": "function",
                      "function": {"name": call["name"], "arguments": arguments}})
    message = {"role": "assistant", "content": entry.get("content")}
    if calls:
        message["tool_calls"] = calls
        if llama_cpp and len(calls) == 1:  # quirk 3: the legacy field names another tool
            message["function_call"] = {"name": "read_file:", "arguments": calls[0]["function"]["arguments"]}
    if "refusal" in entry:
        message["refusal"] = entry["refusal"]
    prompt_tokens = len(json.dumps(body["messages"])) // 4
    completion_tokens = max(1, len(json.dumps(message)) // 4)
    reply = {
        "id": f"chatcmpl-{number}", "object": "chat.completion", "created": 1_700_000_000 + number,
        "model": body["model"] if llama_cpp else body["model"] + "-scripted",
        "choices": [{"index": 0, "message": message, "logprobs": None, "finish_reason":
                     entry.get("finish_reason", "tool_calls" if calls else "stop")}],
        "usage": {"prompt_tokens": prompt_tokens, "completion_tokens": completion_tokens,
                  "total_tokens": prompt_tokens + completion_tokens,
                  "prompt_tokens_details": {"cached_tokens": 0}},
    }
    if llama_cpp:
        del reply["usage"]["prompt_tokens_details"]
    if entry.get("omit_usage"):
        del reply["usage"]
    return reply


def llama_cpp_problem(body: dict, n_ctx: int | None) -> tuple[int, str, str | None] | None:
    """``(status, message, code)`` of the error llama-cpp-python 0.3.36 gives a request our
    protocol check lets through, or None."""
    for index, message in enumerate(body["messages"]):
        if message.get("role") == "assistant" and not isinstance(message.get("content"), str):
            return (500, (f"1 validation error: ('body', 'messages', {index}, "
                    "'ChatCompletionRequestAssistantMessage', 'content'): Input should be a "
                    "valid string"), None)
    prompt = len(json.dumps(body["messages"])) // 4 + len(json.dumps(body.get("tools") or [])) // 4
    if n_ctx is not None and prompt >= n_ctx:
        completion = body.get("max_tokens") or 16
        return (400, (f"This model's maximum context length is {n_ctx} tokens. However, you "
                f"requested {prompt + completion} tokens ({prompt} in the messages, {completion} "
                "in the completion). Please reduce the length of the messages or completion."),
                "context_length_exceeded")
    return None


def make_handler(state: ScriptState):
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args) -> None:  # quiet
            pass

        def _reply(self, status: int, payload: dict) -> None:
            self._verbatim(status, payload)

        def _error(self, status: int, message: str, code: str | None = None) -> None:
            kind = "internal_server_error" if status >= 500 else "invalid_request_error"
            self._reply(status, {"error": {"message": message, "type": kind,
                                           "param": "messages" if code else None, "code": code}})

        def _verbatim(self, status: int, body) -> None:
            data = (body if isinstance(body, str) else json.dumps(body)).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def do_GET(self) -> None:  # http.server calls it by this name
            path = self.path.rstrip("/")
            if state.llama_cpp and path == "/v1/models":
                self._reply(200, {"object": "list", "data": [{
                    "id": state.model_file or "model", "object": "model", "owned_by": "me",
                    "permissions": []}]})
            elif state.llama_cpp and path == "/openapi.json":
                self._reply(200, {"openapi": "3.1.0", "info": {
                    "title": "\U0001f999 llama.cpp Python API", "version": "0.3.36"}, "paths": {}})
            else:
                self._reply(404, {"detail": "Not Found"})

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
            quirk = llama_cpp_problem(body, state.n_ctx) if state.llama_cpp else None
            if quirk:
                self._error(*quirk)
                return
            entry = state.next_entry()
            if entry is None:
                self._error(400, "script exhausted")
                return
            if "reply_body" in entry:
                self._verbatim(int(entry.get("reply_status", 200)), entry["reply_body"])
                return
            if "status" in entry:
                self._error(int(entry["status"]), entry.get("error", "scripted error"),
                            entry.get("code"))
                return
            if entry.get("delay_s"):
                time.sleep(float(entry["delay_s"]))
            self._reply(200, completion(entry, body, state.position, state.llama_cpp))

    return Handler


class StandIn:
    """This server as a child process for a test: ``url`` its /v1 base URL; ``flags`` are
    extra command-line flags (``--llama-cpp``, ``--n-ctx N``, ``--model-file PATH``)."""

    def __init__(self, folder, script: list[dict], api_key: str, *flags: str):
        import subprocess
        from pathlib import Path

        folder = Path(folder)
        self.log = folder / "requests.jsonl"
        (folder / "script.json").write_text(json.dumps(script))
        self.process = subprocess.Popen(
            [sys.executable, __file__, "--script", str(folder / "script.json"), "--log",
             str(self.log), "--api-key", api_key, "--port", "0", *flags],
            stdout=subprocess.PIPE, text=True)
        line = self.process.stdout.readline()
        if not line.startswith("PORT "):
            raise RuntimeError(f"the stand-in server did not start: {line!r}")
        self.url = f"http://127.0.0.1:{int(line.split()[1])}/v1"

    def requests(self) -> list[dict]:
        """Every request it got, in order (``{path, authorization, body}``)."""
        return [json.loads(line) for line in self.log.read_text().splitlines()]

    def stop(self) -> None:
        self.process.terminate()
        self.process.wait(timeout=10)
        self.process.stdout.close()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--script", required=True)
    parser.add_argument("--log", required=True)
    parser.add_argument("--api-key", required=True)
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--llama-cpp", action="store_true", help="answer as llama-cpp-python does")
    parser.add_argument("--n-ctx", type=int, help="with --llama-cpp: the context window")
    parser.add_argument("--model-file", help="with --llama-cpp: the model path /v1/models lists")
    args = parser.parse_args(argv)
    with open(args.script, encoding="utf-8") as handle:
        script = json.load(handle)
    server = ThreadingHTTPServer(("127.0.0.1", args.port), make_handler(
        ScriptState(script, args.log, args.api_key, args.llama_cpp, args.n_ctx, args.model_file)))
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
