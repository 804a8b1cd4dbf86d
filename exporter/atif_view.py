"""What the viewer shows of ATIF 1.5-1.8 parts and Harbor trials: media, copied context, subagents.

Per site step (added to :func:`exporter.steps.build_steps`'s rows when present):
``copied`` (ATIF ``is_copied_context``), ``section`` (a multi-step Harbor trial's step
name, ``extra.harbor_step``), ``media`` ``[{type, media_type, path, url, duration_sec}]``
(``url`` null when the run folder has no file for it: the viewer names the part) and
``subagents`` (the ``trajectory_id`` of each subagent a result of the step references).
Per run document: ``subagents`` (every embedded trajectory, nested ones flattened with
their ``parent``) and ``harbor`` (the trial's facts from run.json, see
:data:`HARBOR_FIELDS`). Media files are read from the run folder (an untrusted tree,
capped) and published as ``data/media/<run-id>/<name>``.
"""

from __future__ import annotations

import re
from typing import Any

from contract.untrusted import Tree, UnsafeInput
from exporter.run_folders import RunFolder
from exporter.steps import content_text

MEDIA_CAP = 8 * 1024 * 1024
"""Largest media file published (bytes; the importer copies no bigger one)."""
SAFE_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,120}")
"""A media file name the site publishes (the importer's names are ``<nnn>-<name>``)."""
HARBOR_FIELDS = ("job", "trial", "schema_version", "reward", "rewards", "reward_source",
                 "task_match", "checksum", "lock", "exception", "exception_txt", "verifier",
                 "artifacts", "agent_logs", "steps", "multi_step", "tokens", "media",
                 "refused_subagents")


def _media_parts(step: dict[str, Any]) -> list[dict[str, Any]]:
    parts = list(step["message"]) if isinstance(step.get("message"), list) else []
    for result in (step.get("observation") or {}).get("results") or []:
        if isinstance(result.get("content"), list):
            parts += result["content"]
    return [p for p in parts if isinstance(p, dict) and p.get("type") in ("image", "audio")]


class MediaFiles:
    """The media of one run: which ``media/<name>`` files its folder holds, and their bytes
    for the site (``files``: site path -> bytes)."""

    def __init__(self, run: RunFolder):
        self.run_id = run.run_id
        self.tree = Tree(run.path)
        self.files: dict[str, bytes] = {}

    def url(self, path: Any) -> str | None:
        """The site URL of a part's ``source.path`` when it is one of the run's media files."""
        if not isinstance(path, str) or not path.startswith("media/") or path.count("/") != 1:
            return None
        name = path.split("/", 1)[1]
        if not SAFE_NAME.fullmatch(name):
            return None
        site_path = f"data/media/{self.run_id}/{name}"
        if site_path not in self.files:
            try:
                self.files[site_path] = self.tree.read_bytes(path, cap=MEDIA_CAP)
            except UnsafeInput:
                return None
        return site_path


def step_parts(step: dict[str, Any], media: MediaFiles) -> dict[str, Any]:
    """The ATIF parts of one trajectory step the viewer shows (only the keys that apply)."""
    shown: dict[str, Any] = {}
    if step.get("is_copied_context"):
        shown["copied"] = True
    section = (step.get("extra") or {}).get("harbor_step")
    if isinstance(section, str):
        shown["section"] = section
    parts = []
    for part in _media_parts(step):
        source = part.get("source") if isinstance(part.get("source"), dict) else {}
        parts.append({"type": part["type"], "media_type": source.get("media_type"),
                      "path": source.get("path"), "url": media.url(source.get("path")),
                      "duration_sec": source.get("duration_sec")})
    if parts:
        shown["media"] = parts
    refs = [ref.get("trajectory_id") for result in (step.get("observation") or {}).get("results") or []
            for ref in result.get("subagent_trajectory_ref") or [] if isinstance(ref, dict)]
    if any(refs):
        shown["subagents"] = [r for r in refs if r]
    return shown


def attach_atif_parts(steps: list[dict[str, Any]], run: RunFolder, media: MediaFiles) -> None:
    """Add :func:`step_parts` to each site step (site step ``n`` is trajectory step ``n``)."""
    for site_step, step in zip(steps, run.trajectory["steps"]):
        site_step.update(step_parts(step, media))


def _subagent_step(step: dict[str, Any], media: MediaFiles) -> dict[str, Any]:
    calls = step.get("tool_calls") or []
    results = (step.get("observation") or {}).get("results") or []
    return {"step_id": step.get("step_id"), "source": step.get("source"),
            "message": content_text(step.get("message")),
            "tools": [{"name": c.get("function_name"), "arguments": c.get("arguments")} for c in calls],
            "outputs": [content_text(r.get("content")) for r in results],
            **step_parts(step, media)}


def subagent_documents(run: RunFolder, media: MediaFiles) -> list[dict[str, Any]]:
    """Every embedded subagent trajectory, depth first: ``[{trajectory_id, parent, agent,
    model, steps: [{step_id, source, message, tools[{name, arguments}], outputs[],
    copied?, media?, subagents?}]}]`` (``parent`` null for the main trajectory's own)."""
    found: list[dict[str, Any]] = []

    def visit(doc: dict[str, Any], parent: str | None) -> None:
        for sub in doc.get("subagent_trajectories") or []:
            agent = sub.get("agent") or {}
            found.append({"trajectory_id": str(sub.get("trajectory_id")), "parent": parent,
                          "agent": agent.get("name"), "model": agent.get("model_name"),
                          "steps": [_subagent_step(s, media) for s in sub.get("steps") or []]})
            visit(sub, str(sub.get("trajectory_id")))

    visit(run.trajectory, None)
    return found


def harbor_view(run: RunFolder) -> dict[str, Any] | None:
    """The trial facts of an imported Harbor run (:data:`HARBOR_FIELDS` of run.json
    ``harbor``), or None for other runs."""
    harbor = run.run.get("harbor")
    if not isinstance(harbor, dict):
        return None
    return {key: harbor.get(key) for key in HARBOR_FIELDS if key in harbor}
