"""The run record: an ATIF trajectory plus run.json, one shape for every kind of run.

ATIF (Harbor's Agent Trajectory Interchange Format) carries the steps; our grading lives in
``step.extra.grade`` (docs/formats.md): a :class:`contract.grade.GradeBlock` while a run is
made, its dict only in the step a file holds. Trajectories are validated with the ``atif``
package's pydantic models before they are written.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Protocol

import atif
import pydantic

from contract.base import dump, parse
from contract.grade import GradeBlock
from contract.run import Final
from contract.version import __version__

SCHEMA_VERSION = "ATIF-v1.8"
"""The newest ATIF version the ``atif`` package (1.8.0) validates; every run we write uses it."""
AGENT_NAME = "alertforge-reference"


class InvalidTrajectory(ValueError):
    """The trajectory does not validate against the ATIF models (message lists the errors)."""


def now() -> str:
    """UTC now as ISO 8601 with a Z suffix (ATIF timestamps)."""
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def final_from_grades(grades: Sequence[GradeBlock], source: str) -> Final | None:
    """The final result of an alerting run: the level, keys and requirements of the last of
    its step grades ``grades`` (in step order; None when no step was graded). ``source``
    says who graded (``grade`` while recording, ``regrade`` for an import re-graded here).

    Raises:
        TypeError: an item of ``grades`` is not a :class:`contract.grade.GradeBlock` (a step's
            dict must be read with :func:`step_grade` first).
    """
    if not grades:
        return None
    grade = grades[-1]
    if not isinstance(grade, GradeBlock):
        raise TypeError(f"a step grade is a GradeBlock, not {type(grade).__name__}")
    return Final(reward=grade.reward, solved=bool(grade.keys["solved"]), keys=grade.keys,
                 requirements={rid: dump(level) for rid, level in grade.requirements.items()},
                 source=source)


def step_grade(step: dict, source: Path | str) -> GradeBlock | None:
    """The ``extra.grade`` of a step as written in a file (a journal line, a trajectory), or
    None when the step has none (or an empty one).

    Raises:
        BadInput: naming ``source``, when the step's grade is not a step grade block.
    """
    extra = step.get("extra")
    grade = extra.get("grade") if isinstance(extra, dict) else None
    if not grade:
        return None
    return parse(GradeBlock, grade, source, f"grade of step {step.get('step_id')}")


def user_step(instruction: str, initial_grade: GradeBlock | None) -> dict:
    """Step 1: the instruction, with the grade of the pristine repo in ``extra.grade``."""
    step = {"step_id": 1, "source": "user", "message": instruction}
    if initial_grade is not None:
        step["extra"] = {"grade": dump(initial_grade)}
    return step


class Inference(Protocol):
    """The LLM inference a step came from (a :class:`recorder.agents.base.Decision` of an LLM
    agent): its reasoning text, ATIF metrics and model name, each optional."""

    reasoning: str | None
    metrics: dict | None
    model: str | None


def agent_step(step_id: int, name: str, arguments: dict, output: str, message: str = "",
               extra: dict | None = None, *, inference: Inference | None = None) -> dict:
    """One agent step: exactly one tool call and its observation.

    ``inference`` None marks a deterministic dispatch (ATIF ``llm_call_count`` 0, no metrics);
    else one LLM inference, with its ``reasoning``, ``metrics`` and ``model`` when set.
    """
    llm = inference is not None
    reasoning, metrics, model = ((inference.reasoning, inference.metrics, inference.model)
                                 if llm else (None, None, None))
    call_id = f"call_{step_id:04d}"
    step = {
        "step_id": step_id,
        "source": "agent",
        "message": message,
        "llm_call_count": 1 if llm else 0,
        "tool_calls": [{"tool_call_id": call_id, "function_name": name, "arguments": arguments}],
        "observation": {"results": [{"source_call_id": call_id, "content": output}]},
    }
    if llm:
        if reasoning:
            step["reasoning_content"] = reasoning
        if metrics:
            step["metrics"] = metrics
        if model:
            step["model_name"] = model
    if extra:
        step["extra"] = extra
    return step


def trajectory(session_id: str, steps: list[dict], agent_name: str = AGENT_NAME,
               model: str | None = None, extra: dict | None = None) -> dict:
    """A whole ATIF trajectory document."""
    doc = {
        "schema_version": SCHEMA_VERSION,
        "session_id": session_id,
        "agent": {"name": agent_name, "version": __version__},
        "steps": steps,
    }
    if model:
        doc["agent"]["model_name"] = model
    if extra:
        doc["extra"] = extra
    return doc


def validate(doc: dict) -> None:
    """Validate with the ``atif`` models; raises InvalidTrajectory listing the problems."""
    try:
        atif.Trajectory.model_validate(doc)
    except pydantic.ValidationError as err:
        problems = "; ".join(f"{'.'.join(map(str, e['loc']))}: {e['msg']}" for e in err.errors()[:10])
        raise InvalidTrajectory(problems) from None
