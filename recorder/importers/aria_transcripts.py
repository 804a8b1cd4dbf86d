"""``alertforge import-episodes``: recorded ARIA transcripts into episode runs, values unchanged.

A transcript (the shape of ``examples/aria-episodes/episodes/*.json``) is a JSON object::

    {task_id, seed, variant?, env?, source_commit?,
     reset{request, status, latency_ms, response: Observation},
     steps[{request{method, path, json: Action}, status, latency_ms, response, client_retry_after?}],
     final_state?{request, status, response: State}}

A step with status 200 carries ``{observation, reward, done, info}``; any other status is a
request the server failed (ARIA's ``diagnose`` on ``generated`` answers 500): it becomes a
step whose result is the error, with no reward, and the environment did not advance. Three
more shapes: a ``/ws`` session (``{send, receive}`` per call), a dual-agent session
(``/multi-agent/reset``, ``step/a`` findings and ``step/b`` actions, :mod:`recorder.episodes.dual`),
and two environment events that are no agent's action: a ``/reset`` among the steps (another
client's, a foreign reset: the steps after it ran in that episode) and a 400 "Call /reset
before ..." (the server lost the episode: the run ends there, failed, as a recording would).
Rewards are copied as recorded; the running total follows ARIA's clamp rule
(:func:`recorder.episodes.score.next_total`) and is checked against ``/state``'s
``total_reward``; the final score is ``/state``'s ``info.current_score``.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson

from contract.errors import BadInput
from contract.files import read_json
from contract.paths import REPO_ROOT
from recorder.environments.aria import StepOutcome
from recorder.episodes import dual
from recorder.episodes.writer import EpisodeFacts, EpisodeRun, episode_run_id
from recorder.run_store import RunStore, make_identity

IMPORT_AGENT = "aria-transcript"
EXAMPLE_EPISODES = REPO_ROOT / "examples" / "aria-episodes" / "episodes"
"""The 16 recorded ARIA episodes the demo imports (see examples/aria-episodes/SOURCE.md)."""


@dataclass
class Transcript:
    """A transcript read and checked: what the run is built from."""

    path: Path
    task_id: str
    seed: int | None
    variant: str
    reset: dict[str, Any]
    reset_transport: dict[str, Any]
    observer_view: dict[str, Any] | None
    steps: list[tuple[str, Any, Any]]
    """``("step", action, StepOutcome)``, ``("finding", text, answer)``,
    ``("foreign reset", observation, note)`` or ``("lost", message, later_calls)``."""
    state: dict[str, Any] | None
    source: dict[str, Any]
    mode: str = "single"
    digest: str = ""
    """sha256 of the transcript's content (canonical JSON): what defines its run."""

    @property
    def readable(self) -> str:
        """``aria-<task>__<variant>__s<seed>`` (see :func:`episode_run_id`)."""
        return episode_run_id(self.task_id, self.variant, self.seed)

    def store(self, out: Path) -> RunStore:
        """The run folder of this transcript under ``out``: its id is the readable part and the
        identity of the transcript's content (an edited transcript is another run)."""
        return RunStore(out, self.readable, make_identity("transcript", {"transcript": self.digest}))


def _require(condition: bool, path: Path, problem: str) -> None:
    if not condition:
        raise BadInput(path, problem)


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _transport(call: dict[str, Any]) -> dict[str, Any]:
    request = call.get("request") if isinstance(call.get("request"), dict) else {}
    transport = {
        "kind": "http",
        "method": request.get("method"),
        "path": request.get("path"),
        "status": call.get("status"),
        "latency_ms": call.get("latency_ms"),
    }
    if call.get("client_retry_after"):
        transport["retried_after"] = str(call["client_retry_after"])
    return transport


def _error_message(response: Any) -> str:
    if isinstance(response, dict):
        for key in ("detail", "error", "_non_json_body", "message"):
            if key in response:
                value = response[key]
                return value if isinstance(value, str) else str(value)
    return str(response)


def _observation(value: Any, path: Path, where: str) -> dict[str, Any]:
    _require(isinstance(value, dict), path, f"{where} must be an observation object")
    _require(isinstance(value.get("step"), int), path, f"{where}.step must be an integer")
    services = value.get("services", [])
    _require(isinstance(services, list), path, f"{where}.services must be a list")
    return value


LOST_EPISODE = "Call /reset before"
"""The start of ARIA's 400 answer once its in-memory episode is gone (``server/app.py:1481``)."""


def _ws_call(call: dict[str, Any]) -> dict[str, Any]:
    """A ``/ws`` call in the HTTP call shape: ``step_result`` is 200, ``error`` a failure."""
    receive = call.get("receive") if isinstance(call.get("receive"), dict) else {}
    send = call.get("send") if isinstance(call.get("send"), dict) else {}
    kind = receive.get("type")
    response = receive.get("data") if kind != "error" else {"message": receive.get("message")}
    return {"request": {"method": "WS", "path": send.get("command"), "json": send.get("action")},
            "status": 200 if kind in ("step_result", "observation", "state") else None,
            "latency_ms": call.get("latency_ms"), "response": response, "_ws": True}


def _entries(calls: list[Any], path: Path) -> list[tuple[str, Any, Any]]:
    """The transcript's calls as run entries (see :attr:`Transcript.steps`)."""
    entries: list[tuple[str, Any, Any]] = []
    for index, call in enumerate(calls):
        where = f"steps[{index}]"
        _require(isinstance(call, dict), path, f"{where} must be an object")
        request = call.get("request") if isinstance(call.get("request"), dict) else {}
        route = str(request.get("path") or "")
        if route == "/reset":
            _require(call.get("status") == 200, path, f"{where}: a /reset among the steps failed")
            observation = _observation(call.get("response"), path, f"{where}.response")
            entries.append(("foreign reset", observation,
                            str(call.get("note") or f"/reset {json.dumps(request.get('json'))}")))
            continue
        if route.startswith("/multi-agent/step/a/"):
            finding = (request.get("json") or {}).get("finding")
            _require(isinstance(finding, str), path, f"{where}.request.json.finding must be text")
            answer = call.get("response")
            _require(isinstance(answer, dict), path, f"{where}.response must be an object")
            entries.append(("finding", finding, (answer, _transport(call))))
            continue
        message = _error_message(call.get("response"))
        if call.get("status") == 400 and message.startswith(LOST_EPISODE):
            lost = f"HTTP 400 {message!r}: the server lost the episode (restarted?)"
            entries.append(("lost", lost, len(calls) - index - 1))
            break
        action, outcome = _step(call, index, path)
        if route.startswith("/multi-agent/step/b/"):
            count = (call.get("response") or {}).get("agent_a_findings_count")
            outcome.transport["findings_seen"] = count
        entries.append(("step", action, outcome))
    return entries


def _step(call: Any, index: int, path: Path) -> tuple[dict[str, Any], StepOutcome]:
    where = f"steps[{index}]"
    _require(isinstance(call, dict), path, f"{where} must be an object")
    request = call.get("request")
    _require(isinstance(request, dict), path, f"{where}.request must be an object")
    action = request.get("json")
    _require(isinstance(action, dict), path, f"{where}.request.json must be an action object")
    _require(
        isinstance(action.get("action_type"), str) and action["action_type"] != "",
        path,
        f"{where}.request.json.action_type must be a non-empty string",
    )
    status = call.get("status")
    response = call.get("response")
    transport = _transport(call)
    if call.get("_ws"):
        transport = {"kind": "ws", "command": "step", "latency_ms": call.get("latency_ms")}
    if status is None and call.get("_ws"):
        error = {"status": None, "message": _error_message(response)}
        return action, StepOutcome(None, None, False, {}, error=error, transport=transport)
    _require(isinstance(status, int), path, f"{where}.status must be an HTTP status code")
    if isinstance(response, dict) and "error" in response and "observation" not in response:
        error = {"status": status, "message": _error_message(response)}  # multi-agent refusal
        return action, StepOutcome(None, None, False, {}, error=error, transport=transport)
    if status != 200:
        error = {"status": status, "message": _error_message(response)}
        return action, StepOutcome(None, None, False, {}, error=error, transport=transport)
    _require(isinstance(response, dict), path, f"{where}.response must be an object")
    observation = _observation(response.get("observation"), path, f"{where}.response.observation")
    reward = response.get("reward")
    _require(_is_number(reward), path, f"{where}.response.reward must be a number, got {reward!r}")
    _require(
        isinstance(response.get("done"), bool), path, f"{where}.response.done must be true or false"
    )
    info = response.get("info", {})
    _require(isinstance(info, dict), path, f"{where}.response.info must be an object")
    return action, StepOutcome(observation, reward, response["done"], info, transport=transport)


def _final_state(final_state: Any, ws: bool, mode: str, path: Path) -> dict[str, Any] | None:
    """The ``/state`` body when recorded with 200 (the multi-agent state has no score: None)."""
    if final_state is None or mode == "dual":
        return None
    _require(isinstance(final_state, dict), path, "final_state must be the recorded /state call")
    if ws:
        final_state = _ws_call(final_state)
    if final_state.get("status") != 200:
        return None
    state = final_state.get("response")
    _require(isinstance(state, dict), path, "final_state.response must be an object")
    _require(_is_number(state.get("total_reward")), path,
             "final_state.response.total_reward must be a number")
    return state


def read_transcript(path: str | Path) -> Transcript:
    """Read and check one transcript file.

    Raises:
        BadInput: naming the file: not JSON, or a field missing or of the wrong type (the
            message gives the field's path, e.g. ``steps[3].response.reward``).
    """
    path = Path(path)
    data = read_json(path)
    _require(isinstance(data, dict), path, "expected a transcript object (task_id, reset, steps)")
    task_id = data.get("task_id")
    _require(isinstance(task_id, str) and task_id != "", path, "task_id must be a non-empty string")
    seed = data.get("seed")
    _require(
        seed is None or (isinstance(seed, int) and not isinstance(seed, bool)),
        path,
        "seed must be an integer or null",
    )
    reset = data.get("reset")
    _require(isinstance(reset, dict), path, "reset must be the recorded /reset call")
    ws = "send" in reset
    if ws:
        reset = _ws_call(reset)
    mode = "dual" if str((reset.get("request") or {}).get("path")).startswith("/multi-agent/") else "single"
    _require(reset.get("status") == 200, path, f"reset.status is {reset.get('status')!r}, not 200"
             + (" (the server opened no session)" if mode == "dual" else ""))
    answer, observer_view = reset.get("response"), None
    if mode == "dual":
        _require(isinstance(answer, dict), path, "reset.response must be an object")
        observer_view = answer.get("observation_a")
        answer = dual.responder_view(answer)
    observation = _observation(answer, path, "reset.response")
    _require(
        observation.get("task_id", task_id) == task_id,
        path,
        f"reset.response.task_id {observation.get('task_id')!r} is not task_id {task_id!r}",
    )
    calls = data.get("steps")
    _require(isinstance(calls, list), path, "steps must be a list")
    steps = _entries([_ws_call(c) if ws and isinstance(c, dict) else c for c in calls], path)
    state = _final_state(data.get("final_state"), ws, mode, path)
    variant = data.get("variant")
    variant = variant if isinstance(variant, str) and variant else "imported"
    source = {
        "file": path.name,
        "env": data.get("env"),
        "source_commit": data.get("source_commit"),
        "variant": variant,
    }
    return Transcript(
        path=path,
        task_id=task_id,
        seed=seed,
        variant=variant,
        reset=observation,
        reset_transport=_transport(reset),
        observer_view=observer_view if isinstance(observer_view, dict) else None,
        steps=steps,
        state=state,
        source=source,
        mode=mode,
        digest=hashlib.sha256(orjson.dumps(data, option=orjson.OPT_SORT_KEYS)).hexdigest(),
    )


def build_run(transcript: Transcript, out: Path) -> EpisodeRun:
    """The episode run of ``transcript`` in memory (nothing written yet)."""
    run = EpisodeRun(
        transcript.store(Path(out)),
        EpisodeFacts(source="transcript", task_id=transcript.task_id, seed=transcript.seed,
                     policy=transcript.variant, agent_name=IMPORT_AGENT,
                     env={"transport": "import", "url": None, "source": transcript.source},
                     mode=transcript.mode),
        live=False,
    )
    run.start(transcript.reset, transcript.reset_transport, transcript.observer_view)
    for kind, first, second in transcript.steps:
        if kind == "step":
            run.add(first, second)
        elif kind == "finding":
            run.add_finding(first, second[0], second[1])
        elif kind == "foreign reset":
            run.foreign_reset(first, second, before_step=len(run.steps) + 1)
        else:
            run.lost = f"{first}; {second} later request(s) got the same answer"
    return run


def transcript_files(paths: list[str | Path]) -> list[Path]:
    """Each path as given when it is a file; a folder as its ``*.json`` files (top level,
    regular files, not links; sorted). BadInput for a folder holding none."""
    files: list[Path] = []
    for raw in paths:
        path = Path(raw)
        if path.is_dir() and not path.is_symlink():
            found = sorted(p for p in path.iterdir() if p.suffix == ".json" and p.is_file() and not p.is_symlink())
            if not found:
                raise BadInput(path, "a folder with no transcript (*.json) in it")
            files += found
        else:
            files.append(path)
    return files


def import_episodes(paths: list[str | Path], out: str | Path = "runs") -> list[Path]:
    """Import every transcript in ``paths`` (files, or folders of ``*.json`` transcripts:
    :func:`transcript_files`) into ``out/<run-id>/``; returns the run folders.

    Every file is read and checked before the first write, so bad input writes nothing.
    A transcript already imported (same content) is left as it is; an edited one is a new run
    (its id holds the content's identity).

    Raises:
        BadInput: a transcript is malformed (see :func:`read_transcript`), or ``out`` exists
            and is not a folder.
    """
    out = Path(out)
    if out.exists() and not out.is_dir():
        raise BadInput(out, "output path exists and is not a folder")
    if not paths:
        raise BadInput(out, "no transcript files given")
    runs: dict[str, tuple[EpisodeRun, Transcript]] = {}
    for raw in transcript_files(paths):
        transcript = read_transcript(raw)
        run = build_run(transcript, out)
        if run.run_id in runs:
            continue  # the same transcript given twice: one run
        runs[run.run_id] = (run, transcript)
    written = []
    for run_id in sorted(runs):
        run, transcript = runs[run_id]
        if run.store.open().state == "unchanged":
            written.append(run.run_dir)
            continue
        lost = getattr(run, "lost", None)
        if lost:
            written.append(run.finish(None, status="failed", error=f"environment failure: {lost}"))
        else:
            written.append(run.finish(transcript.state))
    return written
