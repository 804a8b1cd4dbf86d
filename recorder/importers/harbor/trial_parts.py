"""What a Harbor 0.26 trial holds besides its trajectory, read for its run's ``harbor`` block.

Per trial (and per step of a multi-step trial, ``steps/<name>/...``): every named reward,
``exception_info`` and ``exception.txt``, the verifier's ``test-stdout.txt`` (Harbor writes
the tests' stdout and stderr there) and any ``test-stderr.txt``, the other files the
verifier wrote, ``artifacts/manifest.json`` (a list of ``{source, destination, type,
status, service}``; Harbor 0.26 harbor/models/trial/artifact_manifest.py), the agent's
log files, and ``lock.json``'s task block. Texts are cut at :data:`TEXT_CAP` characters
(the cut said); every read goes through :class:`~recorder.importers.harbor.job_files.JobFiles`.
"""

from __future__ import annotations

from typing import Any

from contract.text import cut_chars
from contract.untrusted import UnsafeInput
from recorder.importers.harbor.job_files import JobFiles

TEXT_CAP = 20_000
"""Characters of a verifier output or traceback kept in run.json (the rest is cut, said so)."""
MAX_LISTED = 200
"""Files of a folder listed at most (agent logs, verifier files)."""
ARTIFACT_FIELDS = ("source", "destination", "type", "status", "service")


def _obj(value: Any) -> dict:
    return value if isinstance(value, dict) else {}


def _text(files: JobFiles, name: str) -> dict | None:
    """``{text, chars}`` of a text file (``text`` cut at TEXT_CAP), ``{problem}`` when it
    cannot be read, None when it is absent."""
    if files.kind(name) == "missing":
        return None
    try:
        text = files.read_text(name)
    except UnsafeInput as err:
        return {"problem": f"{name}: {err.problem}"}
    shown = text if len(text) <= TEXT_CAP else cut_chars(text, TEXT_CAP) + (
        f"\n[import: {len(text) - TEXT_CAP} more characters not kept]")
    return {"text": shown, "chars": len(text)}


def _listing(files: JobFiles, folder: str, prefix: str = "", depth: int = 0) -> list[dict]:
    """``[{path, kind}]`` of the files below ``folder`` (links named, never followed)."""
    listed: list[dict] = []
    for name, kind in files.names(folder):
        path = f"{prefix}{name}"
        if kind == "dir" and depth < 4:
            listed += _listing(files, f"{folder}/{name}", f"{path}/", depth + 1)
        elif kind != "dir":
            listed.append({"path": path, "kind": kind})
        if len(listed) >= MAX_LISTED:
            break
    return listed[:MAX_LISTED]


def exception_block(info: Any) -> dict | None:
    """A result's ``exception_info`` as ``{type, message, traceback, occurred_at, policy}``
    (the traceback cut at TEXT_CAP), or None."""
    if not isinstance(info, dict):
        return None
    traceback = info.get("exception_traceback")
    return {"type": str(info.get("exception_type") or "unknown"),
            "message": str(info.get("exception_message") or ""),
            "traceback": cut_chars(traceback, TEXT_CAP) if isinstance(traceback, str) else None,
            "occurred_at": info.get("occurred_at") if isinstance(info.get("occurred_at"), str) else None,
            "policy": info.get("policy") if isinstance(info.get("policy"), dict) else None}


def _artifacts(files: JobFiles, base: str) -> dict | None:
    """``{entries: [...], failed: [source...], problem}`` of ``<base>artifacts/manifest.json``."""
    name = f"{base}artifacts/manifest.json"
    if files.kind(name) == "missing":
        return None
    value, problem = files.load_json(name)
    if problem:
        return {"entries": [], "failed": [], "problem": problem}
    if isinstance(value, dict) and isinstance(value.get("entries"), list):
        value = value["entries"]  # ArtifactManifest's model shape, if a writer dumps it whole
    if not isinstance(value, list):
        return {"entries": [], "failed": [], "problem": f"{name} is not a list of entries"}
    entries = [{k: e.get(k) for k in ARTIFACT_FIELDS} for e in value if isinstance(e, dict)]
    return {"entries": entries, "problem": None,
            "failed": [str(e["source"]) for e in entries if e.get("status") == "failed"]}


def _verifier(files: JobFiles, base: str) -> dict:
    folder = f"{base}verifier"
    return {"stdout": _text(files, f"{folder}/test-stdout.txt"),
            "stderr": _text(files, f"{folder}/test-stderr.txt"),
            "files": [f["path"] for f in _listing(files, folder)]}


def part_of(files: JobFiles, base: str, result: dict) -> dict:
    """The parts of one trial (``base`` "") or one step of it (``base`` "steps/<name>/"):
    ``{rewards, exception, verifier, artifacts, agent_logs}``."""
    rewards = _obj(result.get("verifier_result")).get("rewards")
    return {"rewards": rewards if isinstance(rewards, dict) else None,
            "exception": exception_block(result.get("exception_info")),
            "verifier": _verifier(files, base),
            "artifacts": _artifacts(files, base),
            "agent_logs": _listing(files, f"{base}agent")}


def step_results(result: dict) -> list[dict]:
    """``result.json`` ``step_results`` as dicts with a string ``step_name`` (others dropped
    from the list, not from the trial)."""
    steps = result.get("step_results")
    return [s for s in steps if isinstance(s, dict) and isinstance(s.get("step_name"), str)] \
        if isinstance(steps, list) else []


def trial_parts(files: JobFiles, result: dict | None) -> dict:
    """Everything the run's ``harbor`` block shows of a trial besides the trajectory::

        {checksum, lock: {name, digest, type} | None, exception_txt, multi_step,
         rewards, exception, verifier, artifacts, agent_logs,
         steps: [{name, rewards, exception, verifier, artifacts, agent_logs}]}

    For a multi-step trial the trial-level ``verifier``/``artifacts``/``agent_logs`` are
    usually empty (Harbor removes the root mount folders) and ``steps`` holds them.
    """
    result = _obj(result)
    lock, _ = files.load_json("lock.json")
    task_lock = _obj(_obj(lock).get("task"))
    parts = part_of(files, "", result)
    steps = [dict(name=s["step_name"], **part_of(files, f"steps/{s['step_name']}/", s))
             for s in step_results(result)
             if "/" not in s["step_name"] and s["step_name"] not in ("", ".", "..")]
    checksum = result.get("task_checksum")
    return {"checksum": checksum if isinstance(checksum, str) else None,
            "lock": {k: task_lock.get(k) for k in ("name", "digest", "type")} if task_lock else None,
            "exception_txt": _text(files, "exception.txt"),
            "multi_step": bool(steps), **parts, "steps": steps}
