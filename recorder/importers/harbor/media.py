"""Image and audio content parts (ATIF v1.6 / v1.8) of an imported trajectory: files copied in.

A part's ``source.path`` is relative to the trajectory file's folder (Harbor's
TrajectoryValidator resolves it so). When that file is in the trial folder (read through
:class:`~recorder.importers.harbor.job_files.JobFiles`: no link, nothing outside, capped)
it is copied into the run folder as ``media/<nnn>-<name>`` and the part points there; when
it is not (absent, a URL, absolute, leaving the trial, too big) the part keeps its path and
the listing says why, so the viewer can name it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from contract.untrusted import UnsafeInput
from recorder.importers.harbor.job_files import JobFiles
from recorder.importers.harbor.subagents import walk
from recorder.importers.harbor.trials import join_inside

MEDIA_CAP = 8 * 1024 * 1024
"""Largest media file copied into a run (bytes)."""
RUN_MEDIA_CAP = 32 * 1024 * 1024
"""Media bytes copied into one run at most."""
SAFE_NAME = re.compile(r"[^A-Za-z0-9._-]+")


@dataclass
class Media:
    """What :func:`collect_media` found: ``files`` (run-folder name -> bytes) and ``listed``
    ``[{trajectory_id, step_id, type, media_type, path, stored, problem}]``."""

    files: dict[str, bytes] = field(default_factory=dict)
    listed: list[dict] = field(default_factory=list)


def _parts(step: dict) -> list[dict]:
    parts = [p for p in step.get("message") or [] if isinstance(p, dict)] \
        if isinstance(step.get("message"), list) else []
    for result in (step.get("observation") or {}).get("results") or []:
        if isinstance(result.get("content"), list):
            parts += [p for p in result["content"] if isinstance(p, dict)]
    return [p for p in parts if p.get("type") in ("image", "audio") and isinstance(p.get("source"), dict)]


def _inside(base: str, path: str) -> str | None:
    """``path`` joined to ``base`` (both relative to the trial folder), or None when it is a
    URL, absolute, or leaves the trial folder."""
    if "://" in path:
        return None
    return join_inside(f"{base}/_" if base else "_", path)


def _copy(files: JobFiles, rel: str, media: Media) -> tuple[str | None, str | None]:
    """``(stored name, None)`` or ``(None, problem)``."""
    kind = files.kind(rel)
    if kind != "file":
        return None, f"{rel}: {'not in the job folder' if kind == 'missing' else kind}"
    try:
        data = files.read_bytes(rel)
    except UnsafeInput as err:
        return None, f"{rel}: {err.problem}"
    used = sum(len(b) for b in media.files.values())
    if len(data) > MEDIA_CAP or used + len(data) > RUN_MEDIA_CAP:
        return None, f"{rel}: {len(data)} bytes, over the media cap"
    name = f"{len(media.files) + 1:03d}-{SAFE_NAME.sub('_', rel.rsplit('/', 1)[-1])[:80]}"
    media.files[name] = data
    return name, None


def collect_media(doc: dict, files: JobFiles | None, base: str) -> Media:
    """Copy the media files of ``doc``'s parts (and its subagents') and point the parts at
    them; ``base`` is the trajectory's folder relative to the trial folder (``agent``; a
    multi-step trial's step ``extra.harbor_step`` ``s`` uses ``steps/<s>/agent``)."""
    media = Media()
    for trajectory in walk(doc):
        for step in trajectory.get("steps") or []:
            section = (step.get("extra") or {}).get("harbor_step")
            step_base = f"steps/{section}/agent" if isinstance(section, str) else base
            for part in _parts(step):
                source = part["source"]
                path = str(source.get("path") or "")
                rel = _inside(step_base, path)
                stored, problem = (None, f"{path}: a URL, not fetched" if "://" in path else
                                   f"{path}: outside the trial folder, not read")
                if rel is not None and files is not None:
                    stored, problem = _copy(files, rel, media)
                if stored:
                    source["path"] = f"media/{stored}"
                media.listed.append({"trajectory_id": trajectory.get("trajectory_id"),
                                     "step_id": step.get("step_id"), "type": part["type"],
                                     "media_type": source.get("media_type"), "path": path,
                                     "stored": f"media/{stored}" if stored else None,
                                     "problem": problem})
    return media
