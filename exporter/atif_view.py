"""What the viewer shows of ATIF 1.5-1.8 parts and Harbor trials: media, copied context, subagents.

Per site step (added to :func:`exporter.steps.build_steps`'s rows when present):
``copied`` (ATIF ``is_copied_context``), ``section`` (a multi-step Harbor trial's step
name, ``extra.harbor_step``), ``media`` ``[{type, media_type, path, url, duration_sec}]``
(``url`` null when the run folder has no file for it: the viewer names the part) and
``subagents`` (the ``trajectory_id`` of each subagent a result of the step references); a
media part whose file is there but not published also has ``problem`` (why, for the viewer).
Per run document: ``subagents`` (every embedded trajectory, nested ones flattened with
their ``parent``) and ``harbor`` (the trial's facts from run.json, see
:data:`HARBOR_FIELDS`). Media files are read from the run folder (an untrusted tree,
capped), re-encoded by :mod:`exporter.media_clean` and published as
``data/media/<run-id>/<name>``.
"""

from __future__ import annotations

import re
from typing import Any

from contract.site import SiteStep
from contract.untrusted import Tree, UnsafeInput
from exporter.media_clean import MEDIA_CAP, MEDIA_FOLDER, MediaRefused, clean_media
from exporter.redact import Redactor
from exporter.run_folders import RunFolder
from exporter.steps import content_text

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
    for the site as :func:`exporter.media_clean.clean_media` re-encodes them (``files``: site
    path -> bytes); with ``include=False`` none is published (export ``--no-media``); with
    ``redactor``, one whose re-encoded bytes still show a token format (8-bit samples or pixel
    rows can spell one) is not published either."""

    def __init__(self, run: RunFolder, include: bool = True, redactor: Redactor | None = None):
        self.run_id = run.run_id
        self.tree = Tree(run.path)
        self.include = include
        self.redactor = redactor
        self.files: dict[str, bytes] = {}
        self._published: dict[tuple[str, str], tuple[str | None, str | None]] = {}

    def publish(self, path: Any, part_type: str) -> tuple[str | None, str | None]:
        """``(site URL, None)`` for a part's ``source.path`` that names one of the run's media
        files and cleans (``data/media/<run-id>/<name>``, the name ending in ``.png`` or
        ``.wav``: ``001-shot.jpg`` is published as ``001-shot.jpg.png``); ``(None, problem)``
        when the file is not published (the viewer shows the problem); ``(None, None)`` when the
        path names no file of the run (a URL, outside ``media/``, not a site-safe name)."""
        if not isinstance(path, str) or not path.startswith("media/") or path.count("/") != 1:
            return None, None
        name = path.split("/", 1)[1]
        if not SAFE_NAME.fullmatch(name):
            return None, None
        key = (path, part_type)
        if key not in self._published:
            self._published[key] = self._clean(path, name, part_type)
        return self._published[key]

    def _clean(self, path: str, name: str, part_type: str) -> tuple[str | None, str | None]:
        if self.tree.kind(path) == "missing":
            return None, None
        if not self.include:
            return None, "not exported (the site was exported with --no-media)"
        try:
            data = self.tree.read_bytes(path, cap=MEDIA_CAP)
        except UnsafeInput as error:
            return None, f"not published: {error.problem}"
        try:
            cleaned = clean_media(data, part_type)
        except MediaRefused as refused:
            return None, f"not published: {refused.problem}"
        texts = [cleaned.data.decode("latin-1"), *cleaned.payload_texts()]
        kinds = ", ".join(sorted({k for t in texts for k in self.redactor.kinds_in(t).split(", ") if k})) \
            if self.redactor else ""
        if kinds:
            return None, f"not published: its bytes or pixels spell what looks like a secret ({kinds})"
        stem = name if name.endswith(cleaned.suffix) else name + cleaned.suffix
        site_path, number = f"{MEDIA_FOLDER}{self.run_id}/{stem}", 1
        taken = {path.lower(): data for path, data in self.files.items()}  # one file on a case-blind disk
        while site_path.lower() in taken and taken[site_path.lower()] != cleaned.data:
            number += 1
            site_path = f"{MEDIA_FOLDER}{self.run_id}/{stem[:-len(cleaned.suffix)]}-{number}{cleaned.suffix}"
        self.files[site_path] = cleaned.data
        return site_path, None


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
        url, problem = media.publish(source.get("path"), part["type"])
        shown_part = {"type": part["type"], "media_type": source.get("media_type"),
                      "path": source.get("path"), "url": url, "duration_sec": source.get("duration_sec")}
        if problem:
            shown_part["problem"] = problem
        parts.append(shown_part)
    if parts:
        shown["media"] = parts
    refs = [ref.get("trajectory_id") for result in (step.get("observation") or {}).get("results") or []
            for ref in result.get("subagent_trajectory_ref") or [] if isinstance(ref, dict)]
    if any(refs):
        shown["subagents"] = [r for r in refs if r]
    return shown


def attach_atif_parts(steps: list[SiteStep], run: RunFolder, media: MediaFiles) -> None:
    """Set :func:`step_parts` on each site step (site step ``n`` is trajectory step ``n``)."""
    for site_step, step in zip(steps, run.trajectory["steps"]):
        for name, value in step_parts(step, media).items():
            setattr(site_step, name, value)


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
    harbor = run.summary.harbor
    if harbor is None:
        return None
    return {key: harbor.get(key) for key in HARBOR_FIELDS if key in harbor}
