"""Secret fields: which keys name a secret and where their values are in structured text.

The second kind of rule of :mod:`exporter.redact` (DESIGN.md, "Secrets"): a value given to a
secret-looking key (``*password*``, ``*token*``, ``api_key``, ``*_key``...) in YAML, JSON, TOML,
INI, ``KEY=value`` and shell text, or as a JSON field; plus the fields exempt from the entropy
rule (digests, ids) and the fields that name files.
"""

from __future__ import annotations

import re

SECRET_KEY_WORDS = (r"password|passwd|passphrase|pwd|secret|token|credentials?|api[_-]?key|apikey|"
                    r"access[_-]?key|private[_-]?key|auth[_-]?key|signing[_-]?key|encryption[_-]?key|"
                    r"[a-z0-9]+_key|cookie|authorization|dsn")
SECRET_KEY = re.compile(rf"(?i)^(?:[A-Za-z0-9_.\-]*[_.\-])?(?:{SECRET_KEY_WORDS})s?$")
"""A key whose value is a secret: routing_key, service_key, api_key, bearer_token, password,
smtp_auth_password, credentials, client_secret, auth_token, DD_API_KEY..."""
ENV_SECRET_KEY = re.compile(r"^[A-Z0-9_]*(?:PASSWORD|PASSWD|PWD|SECRET|TOKEN|APIKEY|API_KEY)S?$")
"""An environment variable named for a secret, words run together (``PGPASSWORD``)."""
NOT_SECRET_KEY = re.compile(r"(?i)(?:_file|_files|_path|_env|_name|_type|_count|_id_file|_tokens|"
                            r"_ttl|_length|_size|_header|_url_file|^max_tokens|^tokens?_used)$")
"""Keys that look secret but name something else: a file holding the secret, token counts."""
EXEMPT_KEYS = frozenset({
    "fingerprint", "task_fingerprint", "sha256", "sha1", "sha", "md5", "checksum", "task_checksum",
    "digest", "content_hash", "hash", "etag", "episode_id", "session_id", "trajectory_id",
    "tool_call_id", "source_call_id", "call_id", "id", "request_id", "commit", "commit_id",
    "source_commit", "git_commit_id", "revision", "run_id", "trial_id", "job_id", "uuid", "uid",
})
"""Fields whose values look random by nature and must reach the site as they are: no entropy
rule applies to them (known token formats still do)."""
EXEMPT_SUFFIXES = ("_id", "_uid", "_sha", "_sha1", "_sha256", "_digest", "_checksum", "_hash")
"""Field name endings with the same meaning as :data:`EXEMPT_KEYS` (``commit_sha``...)."""
PATH_KEYS = frozenset({"path", "file", "filename", "file_name", "changed_files", "paths"})
"""Fields that name files: random-looking runs in them are masked too (:meth:`exporter.redact.Redactor.path`)."""
PLACEHOLDER = re.compile(
    r"^(?:<[^<>]*>|\$\{[^}]*\}|\$[A-Za-z_][A-Za-z0-9_]*|\{\{.*\}\}|%\([^)]*\)s|\*+|x+|X+|"
    r"\[REDACTED[^\]]*\]|REDACTED|redacted|null|none|None|~|true|false|)$", re.DOTALL)
"""Values of secret fields that are not secrets: templates, env references, masks."""

_SECRET_WORD = re.compile(r"(?i)password|passwd|passphrase|pwd|secret|token|credential|"
                          r"api[_-]?key|apikey|_key|authorization|cookie|dsn")
_KEY_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.-")
_OPERATOR = re.compile(r"""(?P<kq>\\?["']?)[ \t]*(?P<op>:=|=>|=~|!=|!~|:|=)[ \t]*""")
_TAGS = re.compile(r"""(?:(?:!![A-Za-z]+|![A-Za-z]*|&[A-Za-z0-9_-]+)[ \t]+)*""")
"""YAML tags and anchors before a value (``!!str``, ``&pdkey``): skipped, the value is after."""
_VALUE = re.compile(
    r'\\"(?P<eq>(?:[^"\\]|\\[^"])*)\\"'  # escaped JSON inside a string: \"value\"
    r'|"""(?P<tq>[\s\S]*?)"""'  # TOML and Python triple quotes
    r"|'''(?P<ts>[\s\S]*?)'''"
    r'|"(?P<dq>(?:[^"\\\n]|\\.)*)"'
    r"|'(?P<sq>[^'\n]*)'"
    r"|\[(?P<flow>[^\]\n]*)\]"  # a flow list: [a, b]
    r"|(?P<block>[|>][+-]?[0-9]?)[ \t]*(?=\n|$)"  # a YAML block scalar: the next lines
    r"""|(?P<bare>[^\s"',;\[\]<>#`|]+)""")
_EXPLICIT_VALUE = re.compile(r"\n[ \t]*(?:#|//)?[ \t]*:[ \t]*(\S[^\n]*)")


def _key_at(text: str, hit: re.Match) -> tuple[int, int]:
    """The whole key around a secret word: word characters, dots and dashes on both sides."""
    start, end = hit.start(), hit.end()
    while start > 0 and text[start - 1] in _KEY_CHARS:
        start -= 1
    while end < len(text) and text[end] in _KEY_CHARS:
        end += 1
    return start, end


def _uncommented(line: str) -> tuple[int, str]:
    """``(offset, rest)``: a line without its leading comment marker (``#``, ``//``), so
    commented-out YAML is read like YAML."""
    stripped = line.lstrip(" \t")
    for marker in ("#", "//"):
        if stripped.startswith(marker):
            offset = len(line) - len(stripped) + len(marker)
            return offset, line[offset:]
    return 0, line


def _line_indent(text: str, position: int) -> int:
    """The indentation of the line holding ``position`` (list markers and ``?`` counted),
    read from at most 256 characters before it (a longer indentation counts as 256)."""
    window = max(0, position - 256)
    found = text.rfind("\n", window, position)
    line_start = found + 1 if found != -1 else window
    _, line = _uncommented(text[line_start:position])
    return len(line) - len(line.lstrip(" ?-"))


def _following_lines(text: str, after: int, indent: int) -> list[tuple[int, int]]:
    """Spans of the lines after ``after`` indented more than ``indent`` (a YAML value that
    continues below its key: a block scalar, a list, a scalar on the next line; commented-out
    lines are read without their ``#``)."""
    spans = []
    position = text.find("\n", after)
    while position != -1 and position + 1 < len(text):
        start = position + 1
        end = text.find("\n", start)
        end = len(text) if end == -1 else end
        offset, line = _uncommented(text[start:end])
        if line.strip():
            if len(line) - len(line.lstrip(" ")) <= indent:
                break
            stripped = line.lstrip(" ")
            value_start = start + offset + len(line) - len(stripped)
            if stripped.startswith("- "):
                value_start += 2
            spans.append((value_start, end))
        position = end if end < len(text) else -1
    return spans


def assignments(text: str):
    """``(key, value start, value end)`` of every value given to a key that names a secret
    (:func:`is_secret_key`, or an environment variable named for one): ``key: value`` and
    ``key=value`` in YAML, JSON (also escaped inside a string), TOML, INI and shell forms, with
    YAML tags and anchors skipped, flow lists, block scalars, values on the next lines and
    ``? key`` / ``: value`` pairs. PromQL label matchers (``{token="x"}``) are not assignments.
    Found from the words, so long texts with none are fast; a word inside a key or a value
    already given is not looked at again, so the work is linear in the text."""
    key_end = covered = 0
    for hit in _SECRET_WORD.finditer(text):
        if hit.start() < key_end or hit.start() < covered:
            continue  # a word inside the key before, or inside a value already given
        start, key_end = _key_at(text, hit)
        key = text[start:key_end]
        if not (is_secret_key(key) or ENV_SECRET_KEY.match(key)):
            continue
        for found in _values(text, key, start, key_end):
            covered = max(covered, found[2])
            yield found


def _before(text: str, position: int) -> str:
    """The character before ``position`` once spaces and tabs are skipped ("" at the start)."""
    while position > 0 and text[position - 1] in " \t":
        position -= 1
    return text[position - 1] if position > 0 else ""


def _values(text: str, key: str, start: int, end: int):
    """The ``(key, value start, value end)`` given to the key at ``text[start:end]`` (see
    :func:`assignments`)."""
    operator = _OPERATOR.match(text, end)
    if operator is None:
        if _before(text, start) == "?":  # YAML explicit key: ": x" below
            below = _EXPLICIT_VALUE.match(text, end)
            if below:
                yield key, below.start(1), below.end(1)
        return
    if operator.group("op") in ("=~", "!=", "!~"):
        return  # a comparison or a PromQL matcher, not an assignment
    if operator.group("op") == "=" and _before(text, start) in ("{", ",") and \
            text[operator.end():operator.end() + 1] in ("'", '"'):
        return  # a PromQL label matcher: {token="expired"}
    value_at = _TAGS.match(text, operator.end()).end()
    value = _VALUE.match(text, value_at)
    if value is None or value.group("block") is not None:
        for span in _following_lines(text, value_at, _line_indent(text, start)):
            yield key, *span
        return
    name = next(n for n in ("eq", "tq", "ts", "dq", "sq", "flow", "bare") if value.group(n) is not None)
    if name == "flow":
        for item in re.finditer(r"[^,\s][^,]*", value.group("flow")):
            yield key, value.start("flow") + item.start(), value.start("flow") + item.end()
        return
    end = value.end(name)
    scheme = _AUTH_SCHEME.match(text, value.start(name)) if name == "bare" else None
    if scheme is not None and scheme.end(1) == end:  # "token: Bearer <the secret>"
        end = scheme.end()
    yield key, value.start(name), end


_AUTH_SCHEME = re.compile(r"(?i)(bearer|basic|token|digest|apikey)[ \t]+[^\s\"',;<>`]+")
"""An HTTP authentication scheme word and the credentials after it (RFC 9110 section 11.4):
a field's value that starts with one is both words."""


def field_value_is_secret(key: str, value: str) -> bool:
    """Whether ``value`` given to ``key`` is masked: the key names a secret (or is an
    environment variable named for one), the value is not a placeholder, a reference to a
    file, a template, or a short word of prose (``password: it expired``)."""
    stripped = value.strip()
    if not (is_secret_key(key) or ENV_SECRET_KEY.match(key)) or PLACEHOLDER.match(stripped):
        return False
    if _is_reference(stripped) or stripped.startswith(("{{", "${", "$(")):
        return False
    return not (stripped.isalpha() and len(stripped) < 6)


def is_secret_key(key: str) -> bool:
    """Whether a field named ``key`` holds a secret (see :data:`SECRET_KEY`)."""
    return bool(SECRET_KEY.match(key)) and not NOT_SECRET_KEY.search(key)


def field_kind(key: str) -> str:
    """The kind a masked field is counted as: ``password-field``, ``token-field``, ... ``secret-field``."""
    lowered = key.lower()
    for word, kind in (("password", "password"), ("passwd", "password"), ("pwd", "password"),
                       ("secret", "secret"), ("token", "token"), ("credential", "credentials"),
                       ("key", "key"), ("authorization", "credentials"), ("cookie", "cookie"),
                       ("dsn", "dsn")):
        if word in lowered:
            return f"{kind}-field"
    return "secret-field"


def _is_reference(value: str) -> bool:
    """A value that points at a secret instead of holding one (a file path)."""
    return value.startswith(("/", "./", "../", "file:"))


