"""ATIF trajectories normalized: every step a valid ATIF step with at most one tool call.

Another program's trajectory is taken as it is wherever it validates (the ``atif``
package's models); what does not is kept, moved under ``extra`` (``source_fields``,
``unrecognized``), never dropped.
"""

from __future__ import annotations

from typing import Any

import atif
import orjson
import pydantic

MAX_VALIDATION_ERRORS = 50
STEP_FIELDS = ("step_id", "timestamp", "source", "model_name", "reasoning_effort", "message",
               "reasoning_content", "tool_calls", "observation", "metrics", "extra",
               "llm_call_count", "is_copied_context")
OPTIONAL_STEP_FIELDS = ("timestamp", "metrics", "reasoning_effort", "model_name",
                        "reasoning_content", "llm_call_count", "is_copied_context")



def validation_errors(doc: Any) -> list[str]:
    """The ``atif`` package's complaints about a trajectory (``[]`` when it validates)."""
    try:
        atif.Trajectory.model_validate(doc)
    except pydantic.ValidationError as err:
        return [f"{'.'.join(map(str, e['loc'])) or '(root)'}: {e['msg']}"
                for e in err.errors()[:MAX_VALIDATION_ERRORS]]
    return []


def take_agent(doc: dict, agent: Any) -> None:
    """Put ``agent`` (a trajectory's agent block) on ``doc`` when it validates as an ATIF
    Agent, else keep it under ``doc["extra"]["source_agent"]`` (never dropped)."""
    if not isinstance(agent, dict):
        return
    try:
        atif.Agent.model_validate(agent)
        doc["agent"] = agent
    except pydantic.ValidationError:
        doc.setdefault("extra", {})["source_agent"] = agent


def _arguments(raw: Any) -> dict:
    if isinstance(raw, dict):
        return raw
    if isinstance(raw, str):
        try:
            parsed = orjson.loads(raw)
        except orjson.JSONDecodeError:
            return {"raw_arguments": raw}
        return parsed if isinstance(parsed, dict) else {"raw_arguments": raw}
    return {} if raw is None else {"raw_arguments": raw}


def _tool_calls(raw: Any, step_id: int) -> list[dict]:
    calls = []
    for index, call in enumerate(raw if isinstance(raw, list) else []):
        if not isinstance(call, dict):
            continue
        function = call.get("function") if isinstance(call.get("function"), dict) else {}
        name = call.get("function_name") or call.get("name") or function.get("name") or "unknown"
        calls.append({
            "tool_call_id": str(call.get("tool_call_id") or call.get("id")
                                or f"step{step_id}_call{index + 1}"),
            "function_name": str(name),
            "arguments": _arguments(call.get("arguments", function.get("arguments"))),
            **({"extra": call["extra"]} if isinstance(call.get("extra"), dict) else {})})
    return calls


def _call_id(value: Any) -> str | None:
    return value if isinstance(value, str) else (None if value is None else str(value))


def _results(raw: Any) -> list[dict]:
    if raw is None:
        return []
    if isinstance(raw, str):
        return [{"content": raw}]
    items = raw.get("results") if isinstance(raw, dict) else raw
    if isinstance(items, str):
        return [{"content": items}]
    results = []
    for item in items if isinstance(items, list) else []:
        if isinstance(item, str):
            results.append({"content": item})
        elif isinstance(item, dict):
            kept = {k: v for k, v in item.items()
                    if k in ("source_call_id", "content", "subagent_trajectory_ref", "extra")}
            if "source_call_id" in kept:
                kept["source_call_id"] = _call_id(kept["source_call_id"])
            if "extra" in kept and not isinstance(kept["extra"], dict):
                kept["extra"] = {"source_extra": kept["extra"]}
            results.append(kept)
    return results


def _orphan(result: dict) -> dict:
    """A result that names no call of its step (the parallel-tool-results case), kept and
    flagged: ``source_call_id`` None, ``extra.orphan`` true and ``extra.named_call_id`` the
    id it named. The viewer shows it apart, never as the output of a neighbouring call."""
    extra = dict(result.get("extra") or {}) if isinstance(result.get("extra"), dict) else {}
    extra.update(orphan=True, named_call_id=result.get("source_call_id"))
    return {**{k: v for k, v in result.items() if k != "source_call_id"}, "source_call_id": None,
            "extra": extra}


def _valid_step(step: dict) -> dict:
    """``step`` itself when it validates; else with optional fields moved to
    ``extra.source_fields`` until it does (the message is kept as text)."""
    moved = {}
    for name in (None, *OPTIONAL_STEP_FIELDS, "observation", "message"):
        if name == "message":
            step["message"] = message_text(step.get("message"))
        elif name is not None and name in step:
            moved[name] = step.pop(name)
        if moved:
            step["extra"] = dict(step.get("extra") or {}, source_fields=moved)
        try:
            atif.Step.model_validate(step)
            return step
        except pydantic.ValidationError:
            continue
    step.pop("extra", None)
    return step


def message_text(content: Any) -> str:
    """A message as text: a string as it is, a list of parts joined by newlines (each part
    its ``text``), None as ""."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(str(p.get("text", "")) if isinstance(p, dict) else str(p) for p in content)
    return str(content)


def normalize_steps(doc: dict) -> list[dict]:
    """The trajectory's steps as valid ATIF steps, one tool call each.

    A step with several tool calls becomes one step per call (results paired with their call
    by ``source_call_id``, whatever order they came in; a result naming no call of its step
    is kept on the step's last part and flagged as an orphan, see :func:`_orphan`);
    ``extra.source_step_id``
    keeps the original id and ``extra.source_call_index`` the call's position. Fields the
    models refuse are kept under ``extra.source_fields``; unknown fields under
    ``extra.unrecognized``.
    """
    steps: list[dict] = []
    for position, raw in enumerate(doc.get("steps") or []):
        if isinstance(raw, dict):
            steps += _step_parts(raw, position)
    for number, step in enumerate(steps, start=1):
        step["step_id"] = number
    return [_valid_step(step) for step in steps]


def _step_parts(raw: dict, position: int) -> list[dict]:
    """One source step (at 0-based ``position``) as one step per tool call, or one step when
    it has none; step ids 0 until :func:`normalize_steps` numbers them."""
    original_id = raw.get("step_id") if isinstance(raw.get("step_id"), int) else position + 1
    source = _step_source(raw)
    base = {k: raw[k] for k in OPTIONAL_STEP_FIELDS if raw.get(k) is not None}
    extra = _step_extra(raw, source, original_id)
    message = raw.get("message")
    if not isinstance(message, (str, list)):
        message = message_text(message)
    calls = _tool_calls(raw.get("tool_calls"), original_id) if source == "agent" else []
    results = _results(raw.get("observation"))
    parts = calls or [None]
    out = []
    for index, call in enumerate(parts):
        step = {"step_id": 0, "source": source, "message": message if index == 0 else ""}
        step.update(base if index == 0 else {})
        if index > 0:
            step["llm_call_count"] = 0
        if call is not None:
            step["tool_calls"] = [call]
            mine = _call_results(call, calls, results, last=index == len(parts) - 1)
        else:
            mine = [_orphan(r) if r.get("source_call_id") else r for r in results]
        if mine:
            step["observation"] = {"results": mine}
        step_extra = dict(extra)
        if len(parts) > 1:
            step_extra["source_call_index"] = index
        step["extra"] = step_extra
        out.append(step)
    return out


def _step_source(raw: dict) -> str:
    """The step's ATIF source: ``system``, ``user`` or ``agent`` (``assistant`` and ``human``
    read as agent and user; anything else as system)."""
    source = raw.get("source") if isinstance(raw.get("source"), str) else None
    source = {"assistant": "agent", "human": "user"}.get(source, source)
    if source not in ("system", "user", "agent"):
        source = "system"
    return source


OWN_STEP_EXTRA = frozenset({
    "grade", "grade_error", "edits", "changed_files", "tool_error", "env", "llm", "llm_calls",
    "finish_reason", "replay", "transport", "orphan", "named_call_id", "unrecognized",
    "source_step_id", "source_call_index", "source_fields", "source_extra",
})
"""Step ``extra`` keys this project writes and the exporter reads (a step's grade, its edits,
an episode's env, LLM turns...). A source trajectory's own value under one of these names is
kept under ``extra.source_extra`` instead: another tool's ``grade`` is never read as this
grader's (its check states would not match the task's catalog, and the export would stop)."""


def _step_extra(raw: dict, source: str, original_id: int) -> dict:
    """The step's ``extra`` with ``unrecognized`` (fields ATIF does not know, and the tool
    calls of a step that is not the agent's) and ``source_step_id``; the source's values under
    :data:`OWN_STEP_EXTRA` names moved to ``source_extra``."""
    given = raw["extra"] if isinstance(raw.get("extra"), dict) else {}
    extra = {key: value for key, value in given.items() if key not in OWN_STEP_EXTRA}
    if aside := {key: value for key, value in given.items() if key in OWN_STEP_EXTRA}:
        extra["source_extra"] = aside
    unknown = {k: v for k, v in raw.items() if k not in STEP_FIELDS}
    if source != "agent" and raw.get("tool_calls"):
        unknown["tool_calls"] = raw["tool_calls"]  # only agent steps may carry calls
    if unknown:
        extra["unrecognized"] = unknown
    extra["source_step_id"] = original_id
    return extra


def _call_results(call: dict, calls: list[dict], results: list[dict], *, last: bool) -> list[dict]:
    """The results of one of a step's ``calls``: those naming it (and, for a step's only call,
    those naming none); on the ``last`` part also the step's orphans; None fields dropped."""
    mine = [r for r in results if r.get("source_call_id") == call["tool_call_id"]]
    if len(calls) == 1:  # one call: a result without an id is its result
        mine += [r for r in results if not r.get("source_call_id")]
    if last:  # results naming no call of the step: orphans
        ids = {c["tool_call_id"] for c in calls}
        mine += [_orphan(r) for r in results if r.get("source_call_id") not in ids
                 and (r.get("source_call_id") or len(calls) > 1)]
    return [{k: v for k, v in r.items() if v is not None} for r in mine]
