"""detect-secrets' regex denylists, read from the library once and kept in the export cache.

Importing detect-secrets' plugins imports the requests stack with them (about 45 ms of the
0.7 s an export takes to add one run); the denylists they hold stay the same until the
library's files change. So :func:`denylists` keeps them under the export cache
(``detect-secrets.json``: the patterns, the key of the plugin files they came from (each
file's name, size and mtime) and the sha256 of the patterns) and reads them back while that
key holds; a file that is missing, damaged or stale is a miss: the library is read again.
"""

from __future__ import annotations

import hashlib
import importlib
import importlib.util
from pathlib import Path

import orjson

from contract.files import write_atomic

DETECTORS = (
    ("artifactory", "ArtifactoryDetector"), ("aws", "AWSKeyDetector"),
    ("azure_storage_key", "AzureStorageKeyDetector"), ("discord", "DiscordBotTokenDetector"),
    ("github_token", "GitHubTokenDetector"), ("gitlab_token", "GitLabTokenDetector"),
    ("ibm_cos_hmac", "IbmCosHmacDetector"), ("jwt", "JwtTokenDetector"), ("mailchimp", "MailchimpDetector"),
    ("npm", "NpmDetector"), ("openai", "OpenAIDetector"), ("pypi_token", "PypiTokenDetector"),
    ("sendgrid", "SendGridDetector"), ("slack", "SlackDetector"), ("square_oauth", "SquareOAuthDetector"),
    ("stripe", "StripeDetector"), ("telegram_token", "TelegramBotTokenDetector"), ("twilio", "TwilioKeyDetector"),
)
"""The detect-secrets plugins whose denylists are used, as (module under detect_secrets.plugins,
class): its regex detectors, less the keyword, entropy and public-IP ones (covered by the field
and entropy rules of exporter/secret_fields.py, and an IP is not a secret)."""
CACHE_NAME = "detect-secrets.json"

Denylist = list[tuple[str, str, int]]
"""``[(secret type, regex pattern, regex flags), ...]`` in :data:`DETECTORS` order."""


def denylists(cache_root: Path | None = None) -> Denylist:
    """Every :data:`DETECTORS` detector's denylist, each regex as ``(its detector's
    secret_type, pattern, flags)``; kept in and read from ``cache_root`` (see the module; None:
    read from the library)."""
    key = _key()
    path = cache_root / CACHE_NAME if cache_root is not None and key is not None else None
    if path is not None:
        kept = _kept(path, key)
        if kept is not None:
            return kept
    found = from_library()
    if path is not None:
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            write_atomic(path, orjson.dumps({"key": key, "patterns": found, "sha256": _digest(found)}))
        except OSError:
            pass  # best effort: the next export reads the library again
    return found


def from_library() -> Denylist:
    """The denylists as the installed detect-secrets has them (imports its plugins)."""
    found: Denylist = []
    for module_name, class_name in DETECTORS:
        detector = getattr(importlib.import_module(f"detect_secrets.plugins.{module_name}"), class_name)
        found += [(str(detector.secret_type), regex.pattern, int(regex.flags)) for regex in detector.denylist]
    return found


def _key() -> str | None:
    """The digest of the plugin files' names, sizes and mtimes (None: not found as files)."""
    spec = importlib.util.find_spec("detect_secrets")  # finds the package, runs none of it
    if spec is None or not spec.submodule_search_locations:
        return None
    plugins = Path(next(iter(spec.submodule_search_locations))) / "plugins"
    digest = hashlib.sha256()
    for name in ["base", *(module for module, _ in DETECTORS)]:
        try:
            status = (plugins / f"{name}.py").stat()
        except OSError:
            return None
        digest.update(f"{name}\0{status.st_size}\0{status.st_mtime_ns}\n".encode())
    return digest.hexdigest()


def _kept(path: Path, key: str) -> Denylist | None:
    """The denylists kept at ``path`` when they are as written for ``key``, else None."""
    try:
        kept = orjson.loads(path.read_bytes())
        patterns = [(str(kind), str(pattern), int(flags)) for kind, pattern, flags in kept["patterns"]]
        if kept["key"] == key and kept["sha256"] == _digest(patterns) and patterns:
            return patterns
    except (OSError, ValueError, TypeError, KeyError):
        pass
    return None


def _digest(patterns: Denylist) -> str:
    return hashlib.sha256(orjson.dumps([list(item) for item in patterns])).hexdigest()
