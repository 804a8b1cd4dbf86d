"""ARIA's dual-agent endpoints over HTTP: one session, an observer's findings, a responder's actions.

The API (``server/app.py:1892-2002`` and ``multi_agent/session.py`` at commit 230f8d5, see
notes/aria-scoring.md §4): ``POST /multi-agent/reset {task_id, seed}`` opens a session
(``{session_id, observation_a, observation_b, ...}``; ``generated`` answers 500),
``POST /multi-agent/step/a/{sid} {finding}`` and ``POST /multi-agent/step/b/{sid}`` (an
Action) act, ``GET /multi-agent/state/{sid}`` reads the session. Refusals come back as 200
``{"error": ...}``; an unknown session is 404 (a restarted server lost it:
:class:`~recorder.environments.aria.EpisodeLost`). Sessions are separate, so no server lock.
"""

from __future__ import annotations

from typing import Any

from contract.errors import BadInput, EnvironmentFailure
from recorder.environments.aria import (
    EpisodeLost,
    HttpEnvironment,
    StepOutcome,
    answer_message,
    check_endpoint,
    step_outcome,
)


class DualEnvironment:
    """One dual-agent session on the server at ``url`` (keep-alive HTTP, retried once)."""

    kind = "http"
    mode = "dual"

    def __init__(self, url: str):
        self.http = HttpEnvironment(url)
        self.url = self.http.url
        self.session: str | None = None

    def close(self) -> None:
        """Close the connection (the session stays on the server)."""
        self.http.close()

    def reset(self, task_id: str, seed: int | None) -> tuple[dict, dict, dict]:
        """Open a session: ``(responder view, observer view, transport)``.

        Raises:
            BadInput: the server refused the task (4xx, or ARIA's 500 for ``generated``).
            EnvironmentFailure: no usable answer.
        """
        body: dict[str, Any] = {"task_id": task_id}
        if seed is not None:
            body["seed"] = seed  # ARIA's default is 42; null is refused (422)
        status, answer, transport = self.http.request("POST", "/multi-agent/reset", body)
        check_endpoint(self.url, "/multi-agent/reset", status, answer)
        if status in (400, 404, 422, 500):
            raise BadInput(task_id, f"the environment opened no dual-agent session (HTTP {status}:"
                           f" {answer_message(answer)}); ARIA's dual mode has the 7 curated tasks only")
        if status != 200 or not isinstance(answer, dict) or not isinstance(
                answer.get("session_id"), str):
            raise EnvironmentFailure(self.url, f"POST /multi-agent/reset answered {status}: "
                                     f"{answer_message(answer)}")
        self.session = answer["session_id"]
        transport["session_id"] = self.session
        views = (answer.get("observation_b"), answer.get("observation_a"))
        if not all(isinstance(view, dict) for view in views):
            raise EnvironmentFailure(self.url, "the session has no observation_a / observation_b")
        return views[0], views[1], transport

    def _post(self, agent: str, body: dict[str, Any]) -> tuple[int, Any, dict]:
        if self.session is None:
            raise EnvironmentFailure(self.url, "no session: reset first")
        status, answer, transport = self.http.request(
            "POST", f"/multi-agent/step/{agent}/{self.session}", body)
        if status == 404:
            raise EpisodeLost(self.url, f"step/{agent}: the server has no session {self.session} "
                              "(restarted?); the run is kept, run the same command to resume")
        return status, answer, transport

    def finding(self, text: str) -> tuple[dict[str, Any], dict[str, Any]]:
        """The observer posts ``text``: ``(answer, transport)``; a refusal is in the answer."""
        status, answer, transport = self._post("a", {"finding": text})
        if status != 200 or not isinstance(answer, dict):
            raise EnvironmentFailure(self.url, f"step/a answered {status}: {answer_message(answer)}")
        return answer, transport

    def step(self, action: dict[str, Any]) -> StepOutcome:
        """The responder acts; a refusal or a non-200 is a StepOutcome with ``error``."""
        status, answer, transport = self._post("b", action)
        if status != 200 or (isinstance(answer, dict) and "error" in answer
                             and "observation" not in answer):
            return StepOutcome(None, None, False, {}, transport=transport,
                               error={"status": status, "message": answer_message(answer)})
        transport["findings_seen"] = answer.get("agent_a_findings_count")
        return step_outcome(answer, transport, self.url)

    def state(self) -> dict[str, Any]:
        """``GET /multi-agent/state/{sid}`` (EpisodeLost on 404)."""
        status, answer, _ = self.http.request("GET", f"/multi-agent/state/{self.session}")
        if status == 404:
            raise EpisodeLost(self.url, f"the server has no session {self.session} (restarted?)")
        if status != 200 or not isinstance(answer, dict):
            raise EnvironmentFailure(self.url, f"GET /multi-agent/state answered {status}")
        return answer
