"""What an OpenAI-compatible server says about itself: its name and version, the models it
serves, and the sha256 of the model file it names (the ``endpoint`` block of run.json).

Asked once when an ``llm`` recording starts (and again when it resumes):

- ``GET <base>/models``: the model ids (OpenAI ``{"data": [{"id"}]}``). llama-cpp-python's
  server reports the ``--model`` path it loaded as the id (or ``--model_alias``);
- ``GET <root>/openapi.json``: ``info.title`` and ``info.version``, the only place
  llama-cpp-python's server names its version (it has no version endpoint: /version,
  /health and /props are 404; notes/llama-server-replies.md "Endpoints and version");
- when the server is on this machine (loopback) and a model id is the absolute path of a
  regular ``.gguf`` file, that file's size and sha256: the server names the file, the
  recorder hashes what is at that path. No server reports a hash itself.

Every answer is untrusted: read with a size cap and a timeout, kept only when it has the
expected shape; a server that answers none of this gives a block with ``models: []``.
"""

from __future__ import annotations

import hashlib
import ipaddress
import json
import os
import stat
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from contract.untrusted import UnsafeInput, json_safe

MAX_ANSWER_BYTES = 4 * 1024 * 1024
"""The largest /models or /openapi.json answer read (llama-cpp-python's openapi is ~40 kB)."""
MAX_MODEL_BYTES = 64 * 1024**3
"""Model files larger than this are not hashed."""
MODEL_SUFFIXES = (".gguf", ".ggml", ".bin", ".safetensors")


def describe_endpoint(base_url: str, api_key: str, timeout_s: float = 10.0) -> dict[str, Any]:
    """The ``endpoint`` block: ``{base_url, models[], server?, server_version?, model_file?}``.

    ``model_file`` is ``{path, bytes, sha256}`` (see the module doc). Never raises: what
    the server does not answer is left out.
    """
    block: dict[str, Any] = {"base_url": base_url, "models": []}
    models = _get_json(base_url.rstrip("/") + "/models", api_key, timeout_s)
    data = models.get("data") if isinstance(models, dict) else None
    block["models"] = [item["id"] for item in data or []
                       if isinstance(item, dict) and isinstance(item.get("id"), str)][:20]
    info = _get_json(_root(base_url) + "/openapi.json", api_key, timeout_s)
    info = info.get("info") if isinstance(info, dict) else None
    if isinstance(info, dict):
        for key, name in (("title", "server"), ("version", "server_version")):
            if isinstance(info.get(key), str):
                block[name] = info[key][:200]
    if _is_loopback(base_url):
        for model_id in block["models"]:
            model_file = hash_model_file(model_id)
            if model_file is not None:
                block["model_file"] = model_file
                break
    return block


def hash_model_file(path_text: str) -> dict[str, Any] | None:
    """``{path, bytes, sha256}`` of the regular model file at the absolute path
    ``path_text``; None when it is not one (relative, a link, a device, another suffix,
    larger than :data:`MAX_MODEL_BYTES`)."""
    path = Path(path_text)
    if not path.is_absolute() or path.suffix.lower() not in MODEL_SUFFIXES:
        return None
    try:
        info = os.lstat(path)
        if not stat.S_ISREG(info.st_mode) or info.st_size > MAX_MODEL_BYTES:
            return None
        digest = hashlib.sha256()
        with open(path, "rb") as handle:
            for chunk in iter(lambda: handle.read(1 << 20), b""):
                digest.update(chunk)
    except OSError:
        return None
    return {"path": str(path), "bytes": info.st_size, "sha256": digest.hexdigest()}


def _root(base_url: str) -> str:
    """The server root of a base URL (``http://h:p/v1`` -> ``http://h:p``)."""
    parts = urlsplit(base_url)
    path = parts.path.rstrip("/")
    path = path.removesuffix("/v1")
    return urlunsplit((parts.scheme, parts.netloc, path, "", ""))


def _is_loopback(base_url: str) -> bool:
    host = urlsplit(base_url).hostname or ""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def _get_json(url: str, api_key: str, timeout_s: float) -> Any:
    """The JSON at ``url`` (None on any failure, a non-JSON answer or one too large)."""
    if urlsplit(url).scheme not in ("http", "https"):
        return None
    request = urllib.request.Request(url, headers={"Authorization": f"Bearer {api_key}",
                                                   "Accept": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=timeout_s) as answer:
            raw = answer.read(MAX_ANSWER_BYTES + 1)
    except (OSError, urllib.error.URLError, ValueError):
        return None
    if len(raw) > MAX_ANSWER_BYTES:
        return None
    try:
        return json_safe(json.loads(raw), url)
    except (ValueError, UnsafeInput, RecursionError):
        return None
